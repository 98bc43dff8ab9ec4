//! Every `roster-list` row carries the consent decision itself, the one
//! `roster-consent should-arm --pid` gives, decided from the session's own
//! recorded directory: JSON `should_arm` and `consent_reason`, and the text
//! CONSENT column shows the decision, not the raw marker, and explains on
//! stderr each label it shows.

use std::path::Path;

use tests::{ArmedOwner, Owner, Sandbox};

fn repository(sandbox: &Sandbox, name: &str, roster_toml: Option<&str>) -> String {
    let directory = sandbox.base().join(name);
    std::fs::create_dir_all(&directory).expect("create a repository");
    if let Some(text) = roster_toml {
        std::fs::write(directory.join(".roster.toml"), text).expect("write .roster.toml");
    }
    directory.to_string_lossy().into_owned()
}

fn should_arm_exit(sandbox: &Sandbox, pid: u32) -> i32 {
    let mut command = sandbox.command_in_root("roster-consent", &["should-arm", "--pid", &pid.to_string()]);
    command.current_dir("/");
    tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE).code()
}

#[test]
fn each_row_shows_the_decision_should_arm_gives_from_the_sessions_own_directory() {
    let sandbox = Sandbox::new();
    let opted_in = repository(&sandbox, "opted-in", Some("[consent]\nauto_arm = true\n"));
    let plain = repository(&sandbox, "plain", None);

    let auto = Owner::spawn();
    sandbox.register(auto.pid(), &["--cwd", &opted_in]);
    let off = Owner::spawn();
    sandbox.register(off.pid(), &["--cwd", &plain]);
    let armed = ArmedOwner::spawn(sandbox.root(), sandbox.home(), Path::new("/"));
    sandbox.register(armed.pid(), &["--cwd", &plain]);
    let disarmed = Owner::spawn();
    sandbox.register(disarmed.pid(), &["--cwd", &opted_in]);
    sandbox.run("roster-consent", &["disarm", "--pid", &disarmed.pid().to_string()]).expect_code(0);
    let dead = Owner::spawn();
    sandbox.register(dead.pid(), &["--cwd", &opted_in]);
    let dead_pid = dead.kill();

    let expected: [(u32, bool, &str, &str); 5] = [
        (auto.pid(), true, "armed (repo)", "auto-arms"),
        (off.pid(), false, "off (repo)", "auto-arm is off"),
        (armed.pid(), true, "armed", "armed"),
        (disarmed.pid(), false, "off (disarmed)", "disarmed"),
        (dead_pid, false, "-", "accepts nothing"),
    ];
    // From `/`, so nothing of the caller's directory can leak in.
    let mut command = sandbox.command_in_root("roster-list", &["--json", "--all"]);
    command.current_dir("/");
    let rows = tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE).rows();
    let mut text_command = sandbox.command_in_root("roster-list", &["--all"]);
    text_command.current_dir("/");
    let text = tests::run_with_deadline(&mut text_command, tests::COMMAND_DEADLINE).stdout_text();
    for (pid, should_arm, label, reason_says) in expected {
        let row = rows.iter().find(|row| row["session_pid"] == pid).expect("a row per session");
        assert_eq!(row["should_arm"], should_arm, "pid {pid}: {row:#}");
        let reason = row["consent_reason"].as_str().unwrap_or_default();
        assert!(reason.contains(reason_says), "pid {pid}: {reason:?}");
        let line =
            text.lines().find(|line| line.starts_with(&pid.to_string())).expect("a text line per session");
        assert!(line.contains(&format!("  {label}  ")), "pid {pid}: {line:?} should show {label:?}");
        if pid != dead_pid {
            assert_eq!(
                should_arm_exit(&sandbox, pid) == 0,
                should_arm,
                "pid {pid}: should-arm disagrees with the row"
            );
        }
    }
    let header = text.lines().next().unwrap_or_default();
    assert!(header.contains("CONSENT"), "{header}");
}

#[test]
fn a_user_veto_shows_as_denied_in_every_row_it_turns_off() {
    let sandbox = Sandbox::new();
    let opted_in = repository(&sandbox, "opted-in", Some("[consent]\nauto_arm = true\n"));
    let config = sandbox.home().join(".config/roster");
    std::fs::create_dir_all(&config).expect("create the user config directory");
    std::fs::write(config.join("config.toml"), "[consent]\nauto_arm = false\n").expect("write the veto");
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--cwd", &opted_in]);
    let row = sandbox.list(&[]).into_iter().find(|row| row["session_pid"] == owner.pid()).expect("the row");
    assert_eq!(row["should_arm"], false, "{row:#}");
    let text = sandbox.run("roster-list", &[]).stdout_text();
    assert!(text.contains("denied (user)"), "{text}");
    assert_eq!(should_arm_exit(&sandbox, owner.pid()), 1);
}

/// Regression: the table showed `off (repo)` and its kin with no word of
/// what they mean (only `--help` said it). Under the table, stderr now
/// explains each label the rows show, once per label, and no other; stdout
/// and JSON are as they were.
#[test]
fn the_table_explains_each_consent_label_it_shows_on_stderr() {
    let sandbox = Sandbox::new();
    let opted_in = repository(&sandbox, "opted-in", Some("[consent]\nauto_arm = true\n"));
    let plain = repository(&sandbox, "plain", None);
    let owners: Vec<Owner> = (0..3).map(|_| Owner::spawn()).collect();
    sandbox.register(owners[0].pid(), &["--cwd", &plain]);
    sandbox.register(owners[1].pid(), &["--cwd", &plain]);
    sandbox.register(owners[2].pid(), &["--cwd", &opted_in]);

    let listing = sandbox.run("roster-list", &[]);
    listing.expect_code(0);
    let footnotes: Vec<&str> = listing.stderr.lines().filter(|line| line.starts_with("CONSENT ")).collect();
    assert_eq!(footnotes.len(), 2, "one line per label shown: {}", listing.stderr);
    assert!(
        footnotes
            .iter()
            .any(|line| line.starts_with("CONSENT off (repo): accepts none")
                && line.contains("auto_arm = true")),
        "{footnotes:?}"
    );
    assert!(
        footnotes.iter().any(|line| line.starts_with("CONSENT armed (repo): accepts messages")),
        "{footnotes:?}"
    );
    assert!(
        !listing.stdout_text().contains("accepts"),
        "stdout is the table alone:\n{}",
        listing.stdout_text()
    );

    let json = sandbox.run("roster-list", &["--json"]);
    json.expect_code(0);
    assert!(!json.stderr.contains("CONSENT"), "JSON output gets no footnotes: {}", json.stderr);
    let quiet = sandbox.run("roster-list", &["-q"]);
    assert!(quiet.stderr.is_empty(), "{quiet}");
}

/// Regression: every `roster-list` on a terminal printed one `CONSENT …`
/// line per label shown and the `?` mark's meaning, 4 to 6 lines of stderr
/// under a short table, while every other note was said once. The legend
/// is now said once per label (a label not yet explained is said when it
/// first shows, and one explained stays explained while listings without
/// it come in between), and `--no-legend` leaves it out.
#[test]
fn the_consent_legend_is_said_once_per_label_and_no_legend_leaves_it_out() {
    let sandbox = Sandbox::new();
    let opted_in = repository(&sandbox, "opted-in", Some("[consent]\nauto_arm = true\n"));
    let plain = repository(&sandbox, "plain", None);
    let legend_lines = |args: &[&str]| -> Vec<String> {
        let listing = sandbox.run("roster-list", args);
        listing.expect_code(0);
        listing
            .stderr
            .lines()
            .filter(|line| line.starts_with("CONSENT ") || line.contains("unverified owner"))
            .map(str::to_owned)
            .collect()
    };
    let first = Owner::spawn();
    sandbox.register(first.pid(), &["--cwd", &plain]);
    assert_eq!(legend_lines(&["--no-legend"]), Vec::<String>::new(), "--no-legend said it");
    let said = legend_lines(&[]);
    assert_eq!(said.len(), 2, "the label and the mark, said the first time: {said:?}");
    assert!(said[0].starts_with("CONSENT off (repo): "), "{said:?}");
    assert!(said[1].contains("1 unverified owner, marked ? after the pid"), "{said:?}");
    assert_eq!(legend_lines(&[]), Vec::<String>::new(), "said again");

    let second = Owner::spawn();
    sandbox.register(second.pid(), &["--cwd", &opted_in]);
    let new_label = legend_lines(&["--agent", ""]);
    assert_eq!(new_label.len(), 1, "only the label not explained yet: {new_label:?}");
    assert!(new_label[0].starts_with("CONSENT armed (repo): "), "{new_label:?}");
    // A listing showing only one label, then both again: neither repeats.
    assert_eq!(legend_lines(&["--cwd", &opted_in]), Vec::<String>::new());
    assert_eq!(legend_lines(&[]), Vec::<String>::new(), "a label explained before was said again");
}
