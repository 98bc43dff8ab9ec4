//! What a session-start hook reads of `/proc`, seen by strace: the ancestry
//! walk reads each ancestor once (its stat, argv and exe together, so that
//! a process that exits or execs meanwhile cannot change what it was; for an
//! owner named by `--pid`, the argv and exe of the ancestors up to it); the
//! boot id and the hook's own namespaces are read once. (They were read
//! twice, once for the owner's identity and once to judge the registry's
//! records.) An owner named by `--pid` is read once; what only a wait needs
//! (the hook's own start) is not read when nothing waits, by the
//! session-start hook or by the state hook that runs on every tool call.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tests::{Owner, Sandbox, StdinFeed, require_tool};

/// Runs `program` under `strace -f` with every file-related call traced,
/// `payload` on its stdin, and returns the trace.
fn traced(strace: &Path, sandbox: &Sandbox, program: &Path, arguments: &[&str], payload: &[u8]) -> String {
    let log = sandbox.base().join("strace.log");
    let mut command = Command::new(strace);
    command.args(["-f", "-qq", "-e", "trace=%file", "-o"]).arg(&log).arg(program).args(arguments);
    tests::clean_environment(&mut command, sandbox.home()).current_dir(sandbox.home());
    let finished =
        tests::run_to_completion(command, StdinFeed::Bytes(payload.to_vec()), tests::COMMAND_DEADLINE);
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr_text());
    assert!(finished.stdout.is_empty(), "a hook printed on stdout: {:?}", finished.stdout_text());
    assert!(finished.stderr.is_empty(), "the hook complained: {}", finished.stderr_text());
    std::fs::read_to_string(&log).expect("strace wrote its log")
}

fn payload(sandbox: &Sandbox, session_id: &str) -> Vec<u8> {
    let payload = serde_json::json!({
        "session_id": session_id,
        "cwd": sandbox.home(),
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    payload.to_string().into_bytes()
}

/// The lines of `trace` that name `path` as a whole quoted string.
fn lines_naming<'a>(trace: &'a str, path: &str) -> Vec<&'a str> {
    let quoted = format!("\"{path}\"");
    trace.lines().filter(|line| line.contains(&quoted)).collect()
}

fn record(sandbox: &Sandbox, pid: u32) -> Value {
    let text = std::fs::read_to_string(sandbox.record_path(pid))
        .unwrap_or_else(|error| panic!("no record for pid {pid}: {error}"));
    serde_json::from_str(&text).expect("the record is JSON")
}

#[test]
fn a_hook_that_names_its_owner_reads_each_ancestor_and_the_boot_id_once() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let payload = payload(&sandbox, "named-owner");
    let root = sandbox.root().to_str().expect("a UTF-8 path").to_owned();
    let pid = owner.pid().to_string();
    let register = tests::binary("roster-register");
    let trace = traced(
        &strace,
        &sandbox,
        &register,
        &["--hook", "claude-code", "--dir", &root, "--pid", &pid],
        &payload,
    );
    assert_eq!(record(&sandbox, owner.pid())["session_id"], "named-owner");

    // The owner is no ancestor of the hook: the walk reads the ancestors'
    // stats up to the first that started before the owner (this test, which
    // spawned it, or one above it), each once, and goes no further; and no
    // ancestor's argv
    // or exe, which only an owner among them would be asked about.
    let own_stat = format!("/proc/{}/stat", std::process::id());
    assert_eq!(lines_naming(&trace, &own_stat).len(), 1, "{own_stat} not read once:\n{trace}");
    for file in ["cmdline", "exe"] {
        let own = format!("/proc/{}/{file}", std::process::id());
        assert_eq!(lines_naming(&trace, &own).len(), 0, "{own} read:\n{trace}");
    }
    // Where the walk ends: at the first of this test and its ancestors that
    // started before the owner did (in the kernel's ticks of 10 ms, so the
    // test itself when it is older by a tick, else one above it).
    let started = |pid: u32| {
        owner_liveness::read_proc_stat(owner_liveness::Pid::new(pid).expect("a pid")).expect("a stat")
    };
    let owner_started = started(owner.pid()).start_ticks;
    let mut last = std::process::id();
    while started(last).start_ticks >= owner_started {
        last = started(last).ppid;
    }
    let last_stat = format!("/proc/{last}/stat");
    assert_eq!(lines_naming(&trace, &last_stat).len(), 1, "{last_stat} not read once:\n{trace}");
    let above = format!("/proc/{}/stat", started(last).ppid);
    assert_eq!(lines_naming(&trace, &above).len(), 0, "the walk went on past {last}:\n{trace}");

    for once in ["/proc/sys/kernel/random/boot_id", "/proc/self/ns"] {
        let reads = lines_naming(&trace, once);
        assert_eq!(reads.len(), 1, "{once} read {} times:\n{}", reads.len(), reads.join("\n"));
    }
    // Each namespace link is read once, through the one handle on
    // /proc/self/ns.
    for kind in ["pid", "time", "user"] {
        let reads: Vec<&str> = trace
            .lines()
            .filter(|line| line.contains("readlinkat(") && line.contains(&format!(", \"{kind}\"")))
            .collect();
        assert_eq!(reads.len(), 1, "the {kind} namespace read {} times:\n{trace}", reads.len());
    }

    // The owner the flag names is read once, for the walk, the kernel
    // thread check and its identity alike.
    let owner_stat = format!("/proc/{}/stat", owner.pid());
    assert_eq!(lines_naming(&trace, &owner_stat).len(), 1, "{owner_stat} not read once:\n{trace}");
    // A payload there at once and a free lock leave nothing to wait for:
    // the hook's own start (its late start) is never read.
    assert_eq!(lines_naming(&trace, "/proc/self/stat"), Vec::<&str>::new(), "its own stat read:\n{trace}");
    // In the initial user namespace, which maps every uid, neither is the
    // uid map (a hook in another one reads it to tell its files).
    let in_initial_user_namespace = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self/ns/user").expect("a user namespace link").ino()
            == owner_liveness::INITIAL_USER_NAMESPACE
    };
    if in_initial_user_namespace {
        let reads = lines_naming(&trace, "/proc/self/uid_map");
        assert_eq!(reads, Vec::<&str>::new(), "the uid map read:\n{trace}");
    }
}

#[test]
fn the_ancestor_walk_finds_the_harness_reading_each_ancestor_once() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    let payload = payload(&sandbox, "walked-owner");
    // A stand-in harness: a shell started as `claude`, which runs the hook
    // as its child (the `; :` keeps it from exec'ing the hook in its place).
    let claude = sandbox.base().join("claude");
    std::os::unix::fs::symlink(tests::find_on_path("sh").expect("sh is on PATH"), &claude)
        .expect("link claude to sh");
    let register = tests::binary("roster-register");
    let root = sandbox.root().to_str().expect("a UTF-8 path").to_owned();
    let script = "\"$1\" --hook claude-code --dir \"$2\"; :";
    let register_path = register.to_str().expect("a UTF-8 path");
    let trace = traced(&strace, &sandbox, &claude, &["-c", script, "claude", register_path, &root], &payload);

    let records = sandbox.visible_session_entries();
    assert_eq!(records.len(), 1, "{records:?}");
    let owner_pid: u32 =
        records[0].split('@').next().and_then(|pid| pid.parse().ok()).expect("a record name");
    let owner = record(&sandbox, owner_pid);
    assert_eq!(owner["session_pid_source"], "ancestor", "{owner}");
    assert_eq!(owner["harness"], "claude-code", "{owner}");

    // Each process of the chain is read once, the harness included.
    let cmdline_of = |pid: u32| lines_naming(&trace, &format!("/proc/{pid}/cmdline"));
    assert_eq!(cmdline_of(owner_pid).len(), 1, "the harness's argv is read once:\n{trace}");
    let own_stat = format!("/proc/{}/stat", std::process::id());
    assert_eq!(lines_naming(&trace, &own_stat).len(), 1, "{own_stat} not read once:\n{trace}");
}

/// The state hook, on every tool call, finds the session by the payload's
/// session id and records its state without reading its own start from
/// `/proc` (the payload was there, the state's lock free: nothing waited)
/// and without the user's configuration, which only a delivery consults.
#[test]
fn a_state_hook_with_nothing_to_wait_for_reads_neither_its_own_start_nor_the_configuration() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let cwd = sandbox.home().to_str().expect("a UTF-8 path").to_owned();
    sandbox
        .register(owner.pid(), &["--harness", "claude-code", "--session-id", "state-reads", "--cwd", &cwd]);
    let payload = serde_json::json!({
        "session_id": "state-reads",
        "cwd": sandbox.home(),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_response": {"stdout": "x".repeat(3000)},
    });
    let root = sandbox.root().to_str().expect("a UTF-8 path").to_owned();
    let state = tests::binary("roster-state");
    let trace = traced(
        &strace,
        &sandbox,
        &state,
        &["--hook", "claude-code", "--event", "PostToolUse", "--dir", &root],
        payload.to_string().as_bytes(),
    );
    let state_file = sandbox.root().join("states").join(tests::record_file_name_here(owner.pid()));
    let written = std::fs::read_to_string(&state_file).expect("the state was recorded");
    assert!(written.contains("\"working\""), "{written}");
    assert_eq!(lines_naming(&trace, "/proc/self/stat"), Vec::<&str>::new(), "its own stat read:\n{trace}");
    let configuration: Vec<&str> = trace.lines().filter(|line| line.contains("config.toml")).collect();
    assert_eq!(configuration, Vec::<&str>::new(), "the configuration read:\n{trace}");
}
