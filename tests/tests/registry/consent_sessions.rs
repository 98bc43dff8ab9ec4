//! `roster-consent` driven as a real process against real session owners:
//! a long-lived shell plays the session and runs the commands a session
//! would (so `--pid parent` names it and it is verified), while the test
//! asks `should-arm` and `status` from outside. Exit codes, what is written
//! and that `should-arm` never prints a byte are what only a process shows.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use tests::{Finished, run_to_end};

use tests::shell_quote;

/// The built `roster-consent`.
fn consent_binary() -> PathBuf {
    tests::binary("roster-consent")
}

/// An edit made to a marker file's JSON object.
type MarkerEdit = fn(&mut serde_json::Map<String, serde_json::Value>);
/// Something done to a file, for a table of cases.
type Tamper<'a> = Box<dyn Fn() + 'a>;
type MakeFile<'a> = &'a dyn Fn(&Path);

/// A home, a user config directory, a roster directory, a repository that
/// opted in to auto-arm and one that did not.
struct Scene {
    root: tempfile::TempDir,
    home: PathBuf,
    config_home: PathBuf,
    roster: PathBuf,
    plain_repo: PathBuf,
    opted_in_repo: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let home = base.join("home");
        let plain_repo = home.join("src/plain");
        let opted_in_repo = home.join("src/app");
        std::fs::create_dir_all(&plain_repo).unwrap();
        std::fs::create_dir_all(&opted_in_repo).unwrap();
        std::fs::write(
            opted_in_repo.join(".roster.toml"),
            "agent_name = \"wren\"\n[consent]\nauto_arm = true\n",
        )
        .unwrap();
        let config_home = base.join("config");
        std::fs::create_dir_all(config_home.join("roster")).unwrap();
        Scene { home, config_home, roster: base.join("roster"), plain_repo, opted_in_repo, root }
    }

    fn user_config(&self) -> PathBuf {
        self.config_home.join("roster/config.toml")
    }

    fn marker(&self, pid: u32) -> PathBuf {
        self.roster.join(format!("consent/{}", tests::record_file_name_here(pid)))
    }

    fn consent_files(&self) -> Vec<String> {
        match std::fs::read_dir(self.roster.join("consent")) {
            Ok(entries) => {
                entries.map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect()
            }
            Err(_) => Vec::new(),
        }
    }

    /// The environment every call gets: nothing leaks in from the test's
    /// own (a `CLAUDE_PID` or `ROSTER_DIR` of whoever runs the tests).
    fn environment(&self, command: &mut Command) {
        tests::clean_environment(command, &self.home).env("XDG_CONFIG_HOME", &self.config_home);
    }

    /// Runs `roster-consent ARGS --dir ROSTER` from the test process.
    fn run(&self, args: &[&str]) -> Finished {
        let mut command = Command::new(consent_binary());
        self.environment(&mut command);
        command.args(args).arg("--dir").arg(&self.roster);
        run_to_end(&mut command)
    }

    /// `should-arm` for `pid` working in `directory`; asserts the silence.
    fn should_arm(&self, pid: u32, directory: &Path) -> i32 {
        let output = self.run(&["should-arm", "--pid", &pid.to_string(), "--cwd", path_str(directory)]);
        assert_silent(&output);
        output.status.code().unwrap()
    }

    fn status_json(&self, pid: u32, directory: &Path) -> serde_json::Value {
        let output = self.run(&["status", "--json", "--pid", &pid.to_string(), "--cwd", path_str(directory)]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "status failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }

    fn status_text(&self, pid: u32, directory: &Path) -> String {
        let output = self.run(&["status", "--pid", &pid.to_string(), "--cwd", path_str(directory)]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "status failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn assert_silent(output: &Finished) {
    assert!(
        output.stdout.is_empty() && output.stderr.is_empty(),
        "should-arm printed: stdout {:?}, stderr {:?}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// What a command run inside a session printed and how it exited.
struct SessionOutput {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A session: a long-lived shell that runs one command per line it reads
/// and reports the exit code, so the commands' parent (`--pid parent`) is
/// the session's owner, as a harness's shell would be.
struct Session<'a> {
    scene: &'a Scene,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    runs: usize,
}

impl<'a> Session<'a> {
    fn start(scene: &'a Scene) -> Session<'a> {
        let mut command = Command::new("sh");
        scene.environment(&mut command);
        command
            .arg("-c")
            .arg("while IFS= read -r line; do eval \"$line\"; echo \"exit=$?\"; done")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Session { scene, child, stdin, stdout, runs: 0 }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs `roster-consent SUBCOMMAND --pid parent --cwd DIRECTORY` in the
    /// session and waits for it to finish.
    fn consent(&mut self, subcommand: &str, directory: &Path) -> SessionOutput {
        self.runs += 1;
        let out = self.scene.root.path().join(format!("session-{}-{}.out", self.pid(), self.runs));
        let err = out.with_extension("err");
        let line = format!(
            "{} {subcommand} --pid parent --cwd {} --dir {} >{} 2>{}\n",
            shell_quote(path_str(&consent_binary())),
            shell_quote(path_str(directory)),
            shell_quote(path_str(&self.scene.roster)),
            shell_quote(path_str(&out)),
            shell_quote(path_str(&err)),
        );
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).unwrap();
        let code = reply.trim().strip_prefix("exit=").unwrap_or_else(|| panic!("session said {reply:?}"));
        SessionOutput {
            code: code.parse().unwrap(),
            stdout: std::fs::read_to_string(&out).unwrap(),
            stderr: std::fs::read_to_string(&err).unwrap(),
        }
    }

    /// `arm` or `disarm` inside the session, which must succeed.
    fn set(&mut self, subcommand: &str, directory: &Path) {
        let output = self.consent(subcommand, directory);
        assert_eq!(output.code, 0, "{subcommand} failed: {}", output.stderr);
        let expected_prefix = format!("{subcommand}ed pid {} (~/src/", self.pid());
        assert!(output.stdout.starts_with(&expected_prefix), "{subcommand} printed {:?}", output.stdout);
    }

    /// Ends the session and reaps its shell, so its pid is gone.
    fn end(mut self) -> u32 {
        let pid = self.pid();
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        pid
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn edit_marker(path: &Path, edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
    let mut value: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(value.as_object_mut().unwrap());
    // Rewritten in place, so the file keeps its owner and mode 0600.
    std::fs::write(path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

#[test]
fn arm_then_disarm() {
    let scene = Scene::new();
    let mut session = Session::start(&scene);
    let pid = session.pid();
    assert_eq!(scene.should_arm(pid, &scene.plain_repo), 1, "nothing armed yet");

    session.set("arm", &scene.plain_repo);
    assert_eq!(scene.should_arm(pid, &scene.plain_repo), 0);
    let inside = session.consent("should-arm", &scene.plain_repo);
    assert_eq!((inside.code, inside.stdout.as_str(), inside.stderr.as_str()), (0, "", ""));
    let marker: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scene.marker(pid)).unwrap()).unwrap();
    assert_eq!(marker["state"], "armed");
    assert_eq!(marker["session_pid"], pid);
    assert_eq!(marker["cwd"], path_str(&scene.plain_repo));
    let mode = std::fs::metadata(scene.marker(pid)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    session.set("disarm", &scene.plain_repo);
    assert_eq!(scene.should_arm(pid, &scene.plain_repo), 1);
    let inside = session.consent("should-arm", &scene.plain_repo);
    assert_eq!((inside.code, inside.stdout.as_str(), inside.stderr.as_str()), (1, "", ""));
}

#[test]
fn disarm_beats_auto_arm_and_a_new_session_auto_arms() {
    let scene = Scene::new();
    let mut first = Session::start(&scene);
    assert_eq!(scene.should_arm(first.pid(), &scene.opted_in_repo), 0, "auto-arm with no marker");
    first.set("disarm", &scene.opted_in_repo);
    assert_eq!(scene.should_arm(first.pid(), &scene.opted_in_repo), 1, "an explicit disarm beats auto_arm");
    let status = scene.status_json(first.pid(), &scene.opted_in_repo);
    assert_eq!(status["auto_arm"], true);
    assert_eq!(status["should_arm"], false);
    assert_eq!(status["marker"]["state"], "disarmed");

    let second = Session::start(&scene);
    assert_eq!(scene.should_arm(second.pid(), &scene.opted_in_repo), 0, "a new session in the repository");
    // A subdirectory of the repository is in the repository.
    let deeper = scene.opted_in_repo.join("src");
    std::fs::create_dir(&deeper).unwrap();
    assert_eq!(scene.should_arm(second.pid(), &deeper), 0);

    first.set("arm", &scene.opted_in_repo);
    assert_eq!(scene.should_arm(first.pid(), &scene.opted_in_repo), 0);
}

#[test]
fn the_user_veto_beats_any_repository() {
    let scene = Scene::new();
    std::fs::write(scene.user_config(), "[consent]\nauto_arm = false\n").unwrap();
    let mut session = Session::start(&scene);
    assert_eq!(scene.should_arm(session.pid(), &scene.opted_in_repo), 1);
    assert_eq!(scene.should_arm(session.pid(), &scene.plain_repo), 1);
    let status = scene.status_json(session.pid(), &scene.opted_in_repo);
    assert_eq!(status["repo"]["auto_arm"], true);
    assert_eq!(status["user"]["auto_arm"], false);
    assert_eq!(status["user"]["veto"], true);
    assert_eq!(status["auto_arm"], false);
    let reasons = status["reasons"].to_string();
    assert!(reasons.contains("veto beats the repository"), "{reasons}");

    // The veto is about auto-arm; a session that arms itself by hand is armed.
    session.set("arm", &scene.opted_in_repo);
    assert_eq!(scene.should_arm(session.pid(), &scene.opted_in_repo), 0);

    // A user `true` enables nothing by itself.
    std::fs::write(scene.user_config(), "[consent]\nauto_arm = true\n").unwrap();
    let other = Session::start(&scene);
    assert_eq!(scene.should_arm(other.pid(), &scene.plain_repo), 1);
    assert_eq!(scene.should_arm(other.pid(), &scene.opted_in_repo), 0);
}

#[test]
fn an_unusable_user_config_vetoes() {
    let scene = Scene::new();
    let session = Session::start(&scene);
    let cases: [(&str, MakeFile); 3] = [
        ("torn", &|path| std::fs::write(path, "[consent]\nauto_arm = tr").unwrap()),
        ("unknown key", &|path| std::fs::write(path, "[consent]\nauto_arm = true\nloud = 1\n").unwrap()),
        ("a directory", &|path| std::fs::create_dir(path).unwrap()),
    ];
    for (name, make) in cases {
        let path = scene.user_config();
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir(&path);
        make(&path);
        assert_eq!(scene.should_arm(session.pid(), &scene.opted_in_repo), 1, "{name}");
        let status = scene.status_json(session.pid(), &scene.opted_in_repo);
        assert_eq!(status["user"]["veto"], true, "{name}: {status}");
        assert!(status["user"]["error"].is_string(), "{name}: {status}");
        assert_eq!(status["warnings"].as_array().unwrap().len(), 1, "{name}: {status}");
        let text = scene.status_text(session.pid(), &scene.opted_in_repo);
        assert!(text.contains("(veto)"), "{name}: {text}");
        assert!(text.contains("warning"), "{name}: {text}");
    }
    let status = scene.status_json(session.pid(), &scene.opted_in_repo);
    assert_eq!(status["user"]["error"], "unreadable: is a directory, not a regular file");
}

#[test]
fn an_unparseable_repository_file_is_not_opted_in() {
    let scene = Scene::new();
    std::fs::write(scene.opted_in_repo.join(".roster.toml"), "[consent]\nauto_arm = true\nauto_arm = true\n")
        .unwrap();
    let session = Session::start(&scene);
    assert_eq!(scene.should_arm(session.pid(), &scene.opted_in_repo), 1);
    let status = scene.status_json(session.pid(), &scene.opted_in_repo);
    assert_eq!(status["repo"]["auto_arm"], serde_json::Value::Null);
    assert!(status["repo"]["error"].as_str().unwrap().starts_with("does not parse: line 3"), "{status}");
    assert_eq!(status["user"]["veto"], false);
}

#[test]
fn a_marker_of_an_exited_owner_is_ignored_then_reaped() {
    let scene = Scene::new();
    let mut departed = Session::start(&scene);
    departed.set("arm", &scene.plain_repo);
    let departed_pid = departed.end();
    assert_eq!(scene.should_arm(departed_pid, &scene.plain_repo), 1);
    // A session that ended is refused like any owner that is not running,
    // and described all the same.
    let output = scene.run(&[
        "status",
        "--json",
        "--pid",
        &departed_pid.to_string(),
        "--cwd",
        path_str(&scene.plain_repo),
    ]);
    assert_eq!(output.status.code(), Some(3), "{}", String::from_utf8_lossy(&output.stderr));
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(status["owner_running"], false);
    assert_eq!(status["session_ended"], true);
    assert_eq!(status["marker"]["state"], "none");
    assert_eq!(status["marker"]["written_state"], "armed");
    assert_eq!(status["marker"]["liveness"], "dead");
    assert!(status["marker"]["reason"].as_str().unwrap().contains("its owner is dead"), "{status}");
    assert!(scene.marker(departed_pid).exists(), "reading reaps nothing");

    let mut next = Session::start(&scene);
    next.set("arm", &scene.plain_repo);
    assert!(!scene.marker(departed_pid).exists(), "the next write reaps the dead marker");
    assert_eq!(scene.consent_files(), [tests::record_file_name_here(next.pid())]);
}

#[test]
fn a_marker_from_another_boot_or_a_reused_pid_is_dead() {
    let scene = Scene::new();
    let mut session = Session::start(&scene);
    let pid = session.pid();
    let cases: [(&str, MarkerEdit, &str); 3] = [
        (
            "another boot",
            |map| {
                map.insert("boot_id".into(), "00000000-0000-4000-8000-000000000000".into());
            },
            "earlier boot",
        ),
        (
            // The start time witnesses reuse where no pidfs inode names the
            // process (an agreeing one proves it without /proc).
            "reused pid, other start time",
            |map| {
                let ticks = map["start_ticks"].as_u64().unwrap();
                map.insert("start_ticks".into(), (ticks + 7).into());
                map.remove("pidfs_ino");
            },
            "started at tick",
        ),
        (
            // Without pidfs (kernels before 6.9) no inode is recorded, and
            // the start time carries the check.
            "reused pid, other pidfs inode",
            |map| match map.get("pidfs_ino").and_then(serde_json::Value::as_u64) {
                Some(inode) => {
                    map.insert("pidfs_ino".into(), (inode + 1).into());
                }
                None => {
                    map.insert("start_ticks".into(), 1.into());
                }
            },
            "now names",
        ),
    ];
    for (name, edit, reason) in cases {
        session.set("arm", &scene.plain_repo);
        assert_eq!(scene.should_arm(pid, &scene.plain_repo), 0, "{name}: armed before the edit");
        edit_marker(&scene.marker(pid), edit);
        assert_eq!(scene.should_arm(pid, &scene.plain_repo), 1, "{name}");
        let status = scene.status_json(pid, &scene.plain_repo);
        assert_eq!(status["marker"]["liveness"], "dead", "{name}: {status}");
        assert!(status["marker"]["reason"].as_str().unwrap().contains(reason), "{name}: {status}");
        // In an opted-in repository such a marker is as good as none.
        assert_eq!(scene.should_arm(pid, &scene.opted_in_repo), 0, "{name}");
    }
}

#[test]
fn untrusted_and_malformed_markers_do_not_count() {
    let scene = Scene::new();
    let mut session = Session::start(&scene);
    let pid = session.pid();
    let marker = scene.marker(pid);
    let elsewhere = scene.root.path().join("elsewhere.json");
    let mut cases: Vec<(&str, Tamper, &str, &str)> = vec![
        (
            "symlink",
            Box::new(|| {
                std::fs::copy(&marker, &elsewhere).unwrap();
                std::fs::remove_file(&marker).unwrap();
                std::os::unix::fs::symlink(&elsewhere, &marker).unwrap();
            }),
            "untrusted",
            "is a symlink",
        ),
        (
            "group-writable",
            Box::new(|| std::fs::set_permissions(&marker, std::fs::Permissions::from_mode(0o620)).unwrap()),
            "untrusted",
            "is writable by group or others",
        ),
        (
            "malformed",
            Box::new(|| std::fs::write(&marker, "{\"format\": 1, \"state\": ").unwrap()),
            "malformed",
            "not a JSON object",
        ),
        (
            "unknown state",
            Box::new(|| edit_marker(&marker, |map| drop(map.insert("state".into(), "ARMED".into())))),
            "malformed",
            "unknown variant",
        ),
    ];
    if nix::unistd::geteuid().is_root() {
        cases.push((
            "foreign-owned",
            Box::new(|| nix::unistd::chown(&marker, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap()),
            "untrusted",
            "is owned by uid 65534",
        ));
    }
    for (name, tamper, problem, reason) in &cases {
        session.set("arm", &scene.plain_repo);
        assert_eq!(scene.should_arm(pid, &scene.plain_repo), 0, "{name}: armed before tampering");
        tamper();
        assert_eq!(scene.should_arm(pid, &scene.plain_repo), 1, "{name}");
        // Fail closed: it might have been a disarm, so auto-arm is held off.
        assert_eq!(scene.should_arm(pid, &scene.opted_in_repo), 1, "{name} in an opted-in repository");
        let status = scene.status_json(pid, &scene.plain_repo);
        assert_eq!(status["marker"]["problem"], *problem, "{name}: {status}");
        assert_eq!(status["marker"]["counts"], false, "{name}: {status}");
        assert!(status["marker"]["reason"].as_str().unwrap().contains(reason), "{name}: {status}");
        let text = scene.status_text(pid, &scene.plain_repo);
        assert!(text.contains(reason), "{name}: {text}");
    }
    // Arming again replaces whatever is there (a symlink itself, never its target).
    session.set("arm", &scene.plain_repo);
    assert!(std::fs::symlink_metadata(&marker).unwrap().file_type().is_file());
    assert!(elsewhere.exists(), "the symlink's target was left alone");
}

#[test]
fn arm_refuses_an_unrelated_process() {
    let scene = Scene::new();
    let mut unrelated = Command::new("sleep").arg("300").spawn().unwrap();
    let pid = unrelated.id().to_string();
    let output = scene.run(&["arm", "--pid", &pid, "--cwd", path_str(&scene.opted_in_repo)]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.starts_with(&format!("roster-consent: cannot arm pid {pid}")), "{stderr}");
    assert!(stderr.contains("neither this command nor one of its ancestors"), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(scene.consent_files().is_empty(), "nothing written: {:?}", scene.consent_files());

    // Disarming grants nothing, so it is allowed for any running owner.
    let output = scene.run(&["disarm", "--pid", &pid, "--cwd", path_str(&scene.opted_in_repo)]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(scene.should_arm(unrelated.id(), &scene.opted_in_repo), 1);

    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
    let output = scene.run(&["disarm", "--pid", &pid, "--cwd", path_str(&scene.opted_in_repo)]);
    assert_eq!(output.status.code(), Some(3), "an owner that is not running is refused");
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not running"));
}

#[test]
fn should_arm_fails_closed_and_silent_on_every_error() {
    let scene = Scene::new();
    let session = Session::start(&scene);
    let pid = session.pid().to_string();
    let repo = path_str(&scene.opted_in_repo);
    assert_eq!(scene.should_arm(session.pid(), &scene.opted_in_repo), 0, "the baseline answer is yes");
    assert!(!scene.roster.exists(), "should-arm never creates the roster directory");

    let world_writable = scene.root.path().join("world-writable");
    std::fs::create_dir(&world_writable).unwrap();
    std::fs::set_permissions(&world_writable, std::fs::Permissions::from_mode(0o777)).unwrap();
    let symlinked = scene.root.path().join("symlinked");
    std::os::unix::fs::symlink(&scene.home, &symlinked).unwrap();

    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("unknown flag", vec!["should-arm", "--pid", &pid, "--cwd", repo, "--bogus"]),
        ("pid zero", vec!["should-arm", "--pid", "0", "--cwd", repo]),
        ("pid not a number", vec!["should-arm", "--pid", "12abc", "--cwd", repo]),
        ("missing flag value", vec!["should-arm", "--cwd", repo, "--pid"]),
        ("bad format", vec!["should-arm", "--pid", &pid, "--cwd", repo, "--format", "yaml"]),
        ("missing directory", vec!["should-arm", "--pid", &pid, "--cwd", "/nonexistent/roster-test"]),
        (
            "untrusted roster",
            vec!["should-arm", "--pid", &pid, "--cwd", repo, "--dir", path_str(&world_writable)],
        ),
        ("symlinked roster", vec!["should-arm", "--pid", &pid, "--cwd", repo, "--dir", path_str(&symlinked)]),
        ("flags before the subcommand", vec!["--bogus", "should-arm", "--pid", &pid]),
    ];
    for (name, args) in cases {
        let mut command = Command::new(consent_binary());
        scene.environment(&mut command);
        if !args.contains(&"--dir") {
            command.arg("--dir").arg(&scene.roster);
        }
        let output = run_to_end(command.args(&args));
        assert_silent(&output);
        assert_eq!(output.status.code(), Some(1), "{name}");
    }

    let mut command = Command::new(consent_binary());
    scene.environment(&mut command);
    let output = run_to_end(command.env("ROSTER_SESSION_PID", "-1").args(["should-arm", "--cwd", repo]));
    assert_silent(&output);
    assert_eq!(output.status.code(), Some(1), "invalid ROSTER_SESSION_PID");
}

#[test]
fn status_and_arm_report_errors_with_the_documented_codes() {
    let scene = Scene::new();
    let output = scene.run(&["status", "--pid", "0"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("roster-consent: --pid \"0\""), "{stderr}");
    assert!(!stderr.trim_end().ends_with('.'), "{stderr}");

    let mut session = Session::start(&scene);
    let missing = scene.root.path().join("missing");
    let output = session.consent("arm", &missing);
    assert_eq!(output.code, 2, "{}", output.stderr);
    assert!(output.stderr.contains("pass an existing directory with --cwd"), "{}", output.stderr);
    assert!(scene.consent_files().is_empty());

    let output = scene.run(&["status", "--bogus"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(!output.stderr.is_empty());
}

#[test]
fn status_text_for_an_armed_session_in_an_opted_in_repository() {
    let scene = Scene::new();
    let mut session = Session::start(&scene);
    session.set("arm", &scene.opted_in_repo);
    let text = scene.status_text(session.pid(), &scene.opted_in_repo);
    let labels: Vec<&str> = text.lines().map(|line| line.split("  ").next().unwrap().trim_end()).collect();
    assert_eq!(
        labels,
        [
            "session",
            "directory",
            "local",
            "marker",
            "repo file",
            "user file",
            "auto-arm",
            "should arm",
            "why",
            "",
            "",
            ""
        ],
        "{text}"
    );
    // Values start in one column, after the longest label and two spaces.
    let column = "should arm".len() + 2;
    for line in text.lines() {
        assert!(line[..column].ends_with("  ") && !line[column..].starts_with(' '), "{line:?} in\n{text}");
    }
    assert!(text.contains("directory   ~/src/app (from --cwd)"), "{text}");
    assert!(text.contains("local       armed; the marker counts: its owner is alive"), "{text}");
    assert!(text.contains("repo file   ~/src/app/.roster.toml: [consent] auto_arm = true"), "{text}");
    assert!(text.contains("should arm  yes"), "{text}");
    assert!(text.contains("why         the session is armed"), "{text}");

    let quiet = scene.run(&[
        "status",
        "-q",
        "--pid",
        &session.pid().to_string(),
        "--cwd",
        path_str(&scene.opted_in_repo),
    ]);
    assert_eq!(quiet.status.code(), Some(0));
    assert!(quiet.stdout.is_empty());
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let scene = Scene::new();
    let hostile = scene.home.join("src/evil\u{1b}[31mdir");
    std::fs::create_dir_all(&hostile).unwrap();
    std::fs::write(hostile.join(".roster.toml"), "agent_name = \"a\\u001bb\"\n").unwrap();
    let mut session = Session::start(&scene);
    let output = session.consent("arm", &hostile);
    assert_eq!(output.code, 0, "{}", output.stderr);
    assert!(!output.stdout.contains('\u{1b}'), "{:?}", output.stdout);
    assert!(output.stdout.contains("evil\\e[31mdir"), "{:?}", output.stdout);
    let text = scene.status_text(session.pid(), &hostile);
    assert!(!text.contains('\u{1b}'), "{text:?}");
}

/// Regression: `roster-consent status` run inside a shell registered by
/// hand said "no session owner found" unless given `--pid parent`. It now
/// finds the session as `roster-send` finds its sender: the nearest
/// ancestor with a live record (here the shell, two processes up).
#[test]
fn status_and_arm_inside_a_registered_shell_find_its_session_without_pid() {
    let sandbox = tests::Sandbox::new();
    let mut shell = tests::SessionShell::spawn();
    sandbox.register(shell.pid(), &["--agent", "wren"]);
    let inside = |shell: &mut tests::SessionShell, words: &[&str]| {
        // Through `sh -c`, so that the session is not the command's parent.
        let mut line = vec![shell_quote(&consent_binary().to_string_lossy()).into_owned()];
        line.extend(
            ["--dir", &sandbox.root().to_string_lossy()].iter().map(|word| shell_quote(word).into_owned()),
        );
        line.extend(words.iter().map(|word| shell_quote(word).into_owned()));
        let mut command = Command::new("sh");
        command.args(["-c", &line.join(" ")]);
        shell.run(&command, b"", tests::COMMAND_DEADLINE)
    };
    let status = inside(&mut shell, &["status", "--json"]);
    assert_eq!(status.code(), Some(0), "{}", status.stderr_text());
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(json["pid"], shell.pid(), "{json}");
    assert_eq!(json["pid_source"], "ancestor", "{json}");
    assert_eq!(json["pid_verified"], true, "{json}");
    let armed = inside(&mut shell, &["arm"]);
    assert_eq!(armed.code(), Some(0), "{}", armed.stderr_text());
    assert!(
        armed.stdout_text().starts_with(&format!("armed pid {}", shell.pid())),
        "{}",
        armed.stdout_text()
    );
    // Outside any session, nothing is found still.
    let outside = sandbox.run("roster-consent", &["status"]);
    outside.expect_code(2);
    assert!(outside.stderr.contains("no session owner found"), "{outside}");
}
