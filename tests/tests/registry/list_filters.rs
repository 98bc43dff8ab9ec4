//! What `roster-list`'s filters and text table say. Regressions: `--agent ""` printed
//! nothing with exit 0 although anonymous sessions existed; a filter that matched nothing
//! said `no sessions registered`; the table did not mark an owner whose pid was never
//! verified, and a problem row did not say why it was not believed.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;
use tests::{Owner, Sandbox, row_pids};

fn pids(rows: &[Value]) -> Vec<u64> {
    row_pids(rows).into_iter().collect()
}

fn text(sandbox: &Sandbox, args: &[&str]) -> String {
    let outcome = sandbox.run("roster-list", args);
    outcome.expect_code(0);
    String::from_utf8_lossy(&outcome.stdout).into_owned()
}

/// What roster-list says on stderr beside the table: why it is empty, what
/// its marks mean, notes.
fn remarks(sandbox: &Sandbox, args: &[&str]) -> String {
    let outcome = sandbox.run("roster-list", args);
    outcome.expect_code(0);
    outcome.stderr.clone()
}

#[test]
fn an_empty_filter_value_selects_the_sessions_without_that_value() {
    let sandbox = Sandbox::new();
    let (anonymous, named) = (Owner::spawn(), Owner::spawn());
    sandbox.register(anonymous.pid(), &["--agent", ""]);
    sandbox.register(named.pid(), &["--agent", "wren", "--session-id", "s-1", "--harness", "codex"]);
    let (anonymous_pid, named_pid) = (u64::from(anonymous.pid()), u64::from(named.pid()));

    assert_eq!(pids(&sandbox.list(&["--agent", ""])), vec![anonymous_pid]);
    assert_eq!(pids(&sandbox.list(&["--agent", "wren"])), vec![named_pid]);
    assert_eq!(pids(&sandbox.list(&["--session-id", ""])), vec![anonymous_pid]);
    assert_eq!(pids(&sandbox.list(&["--session-id", "s-1"])), vec![named_pid]);
    assert_eq!(pids(&sandbox.list(&["--harness", ""])), vec![anonymous_pid]);
    assert_eq!(pids(&sandbox.list(&["--harness", "codex"])), vec![named_pid]);
    assert!(text(&sandbox, &["--agent", ""]).contains(&anonymous.pid().to_string()));

    let help = sandbox.run("roster-list", &["--help"]);
    help.expect_code(0);
    assert!(help.stdout_text().contains("\"\" for the anonymous ones"), "{}", help.stdout_text());
}

#[test]
fn a_filter_that_matches_nothing_says_so_and_names_the_filter() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--agent", "wren"]);

    let listed = remarks(&sandbox, &["--agent", "robin"]);
    assert!(listed.contains("no sessions match --agent robin"), "{listed}");
    assert!(!listed.contains("no sessions registered"), "{listed}");
    let listed = remarks(&sandbox, &["--agent", "wren", "--session-id", ""]);
    assert!(!listed.contains("no sessions match"), "{listed}");
    let listed = remarks(&sandbox, &["--agent", "robin", "--session-id", "two words"]);
    assert!(listed.contains("no sessions match --agent robin --session-id \"two words\""), "{listed}");

    std::fs::remove_file(sandbox.record_path(owner.pid())).unwrap();
    let listed = remarks(&sandbox, &["--agent", "robin"]);
    assert!(listed.contains("no sessions registered"), "an empty registry: {listed}");
    assert!(!listed.contains("no sessions match"), "{listed}");
}

#[test]
fn the_table_marks_an_unverified_owner_and_says_why_a_problem_row_is_not_believed() {
    let sandbox = Sandbox::new();
    // `--pid 4242` names an unrelated process: unverified. `--pid parent` names the caller's
    // parent (this test process): verified.
    let unrelated = Owner::spawn();
    sandbox.register(unrelated.pid(), &["--agent", "unverified"]);
    let verified =
        sandbox.run("roster-register", &["--json", "--pid", "parent", "--agent", "verified"]).json();
    assert_eq!(verified["session_pid_verified"], true, "{verified:#}");

    let copy = sandbox.sessions().join("99.json");
    std::fs::copy(sandbox.record_path(unrelated.pid()), &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o660)).unwrap();
    sandbox.write_entry("98.json", b"garbage");

    // The mark's meaning is said once, with the first listing that shows it.
    let first = sandbox.run("roster-list", &[]);
    first.expect_code(0);
    let said = first.stderr.clone();
    let listed = first.stdout_text();
    let line_of = |needle: &str| {
        listed
            .lines()
            .find(|line| line.contains(needle))
            .unwrap_or_else(|| panic!("no {needle} row:\n{listed}"))
    };
    assert!(line_of(" unverified ").starts_with(&format!("{}?", unrelated.pid())), "{listed}");
    assert!(line_of(" verified ").starts_with(&format!("{} ", std::process::id())), "{listed}");
    assert!(said.contains("unverified owner, marked ? after the pid"), "nothing explains the mark:\n{said}");
    assert!(!listed.contains("unverified owner"), "a remark on stdout, among the rows:\n{listed}");
    assert!(line_of("untrusted:").contains("writable by group or others"), "{listed}");
    assert!(line_of("malformed:").contains("not a JSON object"), "{listed}");

    // JSON keeps its shape: the pid is a number, the detail is the liveness reason.
    let rows = sandbox.list(&[]);
    assert!(rows.iter().all(|row| row["session_pid"].is_u64()), "{rows:#?}");
}

/// Regression: `--cwd` naming a file listed nothing, said "no sessions
/// match" and exited 0, as if the file were a directory no session worked in.
#[test]
fn a_cwd_naming_a_file_is_bad_input_naming_the_path() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let file = sandbox.project().join("notes.txt");
    std::fs::create_dir_all(sandbox.project()).unwrap();
    std::fs::write(&file, b"not a directory").unwrap();
    let outcome = sandbox.run("roster-list", &["--cwd", file.to_str().unwrap()]);
    outcome.expect_code(2);
    assert!(
        outcome.stderr.contains(&format!("--cwd {}: not a directory", file.display())),
        "{}",
        outcome.stderr
    );
    assert!(outcome.stdout.is_empty(), "{}", outcome.stdout_text());
}

/// Regression: `--state waiting,idle` was refused with "did you mean
/// waiting"; a comma list is now the sessions in any of those states, and a
/// single unknown value still gets its suggestion.
#[test]
fn state_takes_a_comma_list_and_still_suggests_for_an_unknown_value() {
    use crate::watch::state_event;
    let sandbox = Sandbox::new();
    let [waiting, idle, working] = [Owner::spawn(), Owner::spawn(), Owner::spawn()];
    for (owner, session, event) in [
        (&waiting, "s-waiting", "PermissionRequest"),
        (&idle, "s-idle", "Stop"),
        (&working, "s-working", "UserPromptSubmit"),
    ] {
        sandbox.register(owner.pid(), &["--harness", "claude-code", "--session-id", session]);
        state_event(&sandbox, "claude-code", event, format!(r#"{{"session_id":"{session}"}}"#).as_bytes());
    }
    let mut both = pids(&sandbox.list(&["--state", "waiting,idle"]));
    both.sort();
    let mut expected = vec![u64::from(waiting.pid()), u64::from(idle.pid())];
    expected.sort();
    assert_eq!(both, expected);
    let mut repeated = pids(&sandbox.list(&["-s", "idle", "-s", "waiting"]));
    repeated.sort();
    assert_eq!(repeated, expected, "repeated, and by its short flag");
    let words = remarks(&sandbox, &["--agent", "nobody", "--state", "waiting,idle"]);
    assert!(words.contains("no sessions match --agent nobody --state waiting,idle"), "{words}");

    let typo = sandbox.run("roster-list", &["--state", "waitin"]);
    typo.expect_code(2);
    assert!(typo.stderr.contains("'waiting'"), "no suggestion:\n{}", typo.stderr);
    let typo_in_list = sandbox.run("roster-list", &["--state", "idle,workin"]);
    typo_in_list.expect_code(2);
    assert!(typo_in_list.stderr.contains("'working'"), "no suggestion:\n{}", typo_in_list.stderr);
}

/// The common options have short flags: `-a` (`--all`), `-A` (`--agent`),
/// `-H` (`--harness`), `-i` (`--session-id`), `-C` (`--cwd`), `-s`
/// (`--state`), `-w` (`--watch`) for roster-list; `-n` (`--dry-run`) and
/// `-o` (`--older-than`) for roster-prune. Each selects what its long form does.
#[test]
fn the_common_options_have_short_flags() {
    let sandbox = Sandbox::new();
    let [wren, robin, gone] = [Owner::spawn(), Owner::spawn(), Owner::spawn()];
    sandbox.register(wren.pid(), &["--agent", "wren", "--harness", "codex", "--session-id", "s-wren"]);
    sandbox.register(robin.pid(), &["--agent", "robin"]);
    sandbox.register(gone.pid(), &["--agent", "gone"]);
    gone.kill();
    let project = sandbox.home().to_string_lossy().into_owned();
    for (short, long) in [
        (vec!["-a"], vec!["--all"]),
        (vec!["-A", "wren"], vec!["--agent", "wren"]),
        (vec!["-H", "codex"], vec!["--harness", "codex"]),
        (vec!["-i", "s-wren"], vec!["--session-id", "s-wren"]),
        (vec!["-C", &project], vec!["--cwd", &project]),
        (vec!["-s", "unknown"], vec!["--state", "unknown"]),
    ] {
        let by_short = pids(&sandbox.list(&short));
        assert_eq!(by_short, pids(&sandbox.list(&long)), "{short:?} and {long:?} differ");
        assert!(!by_short.is_empty(), "{short:?} selects nothing to compare");
    }
    assert_eq!(pids(&sandbox.list(&["-a"])).len(), 3);

    let dry = sandbox.run("roster-prune", &["-n", "-o", "1d"]);
    dry.expect_code(0);
    assert!(dry.stdout_text().contains("would remove 1 dead"), "{}", dry.stdout_text());
    assert_eq!(pids(&sandbox.list(&["-a"])).len(), 3, "-n removed something");
}
