//! Hostile entries in `sessions/` (docs/contract.md §2, §3, §10): symlinks, a FIFO, a
//! device node, a socket, a directory, a hard link, a 1 GiB file, files
//! with the wrong owner or mode, garbage, truncated JSON, `{}`, bad names.
//! Each must be listed as a problem of the right kind, promptly, with
//! nothing followed, nothing blocking, at most 64 KiB read from any file,
//! and never believed (no `alive`, no consent). Prune and register walk
//! past them the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use tests::{Owner, Sandbox, ago, names_in, require_tool, row_named, set_mtime, write_file_0600};

const MAX_ENTRY_BYTES: u64 = 64 * 1024;

/// One planted entry and what the listing must say about it.
struct Planted {
    name: String,
    problem: Option<&'static str>,
    pid: Option<u32>,
}

struct Field {
    sandbox: Sandbox,
    /// The file the symlinked record points at, in another roster.
    sentinel: PathBuf,
    /// The second name of the hard-linked record, outside `sessions/`.
    outside_link: PathBuf,
    planted: Vec<Planted>,
    good: u32,
    _owners: Vec<Owner>,
    _other: Sandbox,
}

/// Plants every hostile entry; `with_directory` adds a directory named
/// like a record, which prune cannot simply unlink.
fn plant(with_directory: bool) -> Field {
    let sandbox = Sandbox::new();
    let sessions = sandbox.sessions();
    let owners: Vec<Owner> = (0..5).map(|_| Owner::spawn()).collect();
    let [good, linked, group_writable, foreign, symlinked] = [0, 1, 2, 3, 4].map(|index| owners[index].pid());
    for pid in [good, linked, group_writable, foreign] {
        sandbox.register(pid, &[]);
    }
    let valid = std::fs::read(sandbox.record_path(good)).unwrap();
    let record_with_pid = |pid: u32| {
        let mut value: Value = serde_json::from_slice(&valid).unwrap();
        value["session_pid"] = Value::from(pid);
        serde_json::to_vec_pretty(&value).unwrap()
    };
    let mut planted = Vec::new();
    let mut add = |name: &str, problem: Option<&'static str>, pid: Option<u32>| {
        planted.push(Planted { name: name.to_owned(), problem, pid });
    };
    add(&tests::record_file_name_here(good), None, Some(good));

    // A live owner's real record in another roster, reached by a symlink.
    let other = Sandbox::new();
    other.register(symlinked, &[]);
    let sentinel = other.record_path(symlinked);
    std::os::unix::fs::symlink(&sentinel, sessions.join(tests::record_file_name_here(symlinked))).unwrap();
    add(&tests::record_file_name_here(symlinked), Some("untrusted"), Some(symlinked));
    std::os::unix::fs::symlink("/etc/passwd", sessions.join("31002.json")).unwrap();
    add("31002.json", Some("untrusted"), Some(31002));

    nix::unistd::mkfifo(&sessions.join("31003.json"), nix::sys::stat::Mode::from_bits_truncate(0o600))
        .expect("mkfifo");
    add("31003.json", Some("untrusted"), Some(31003));

    let null_device = std::fs::metadata("/dev/null").unwrap().rdev();
    nix::sys::stat::mknod(
        &sessions.join("31004.json"),
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::from_bits_truncate(0o600),
        null_device,
    )
    .unwrap_or_else(|error| panic!("mknod a character device (needs root / CAP_MKNOD): {error}"));
    add("31004.json", Some("untrusted"), Some(31004));

    // A valid record with a second name outside: two links, not believed.
    let outside_link = sandbox.base().join("second-name-of-a-record");
    std::fs::hard_link(sandbox.record_path(linked), &outside_link).unwrap();
    add(&tests::record_file_name_here(linked), Some("untrusted"), Some(linked));

    let sparse = std::fs::File::create(sessions.join("31006.json")).unwrap();
    sparse.set_len(1 << 30).unwrap();
    std::fs::set_permissions(sessions.join("31006.json"), std::fs::Permissions::from_mode(0o600)).unwrap();
    add("31006.json", Some("untrusted"), Some(31006));

    std::fs::set_permissions(sandbox.record_path(group_writable), std::fs::Permissions::from_mode(0o620))
        .unwrap();
    add(&tests::record_file_name_here(group_writable), Some("untrusted"), Some(group_writable));
    std::os::unix::fs::chown(sandbox.record_path(foreign), Some(65534), Some(65534))
        .expect("chown to uid 65534 (this test needs root)");
    add(&tests::record_file_name_here(foreign), Some("untrusted"), Some(foreign));

    write_file_0600(&sessions.join("31009.json"), b"\x00\xff\x1b[31m garbage \xfe\n");
    add("31009.json", Some("malformed"), Some(31009));
    write_file_0600(&sessions.join("31010.json"), &record_with_pid(31010)[..valid.len() / 2]);
    add("31010.json", Some("malformed"), Some(31010));
    write_file_0600(&sessions.join("31011.json"), b"{}");
    add("31011.json", Some("malformed"), Some(31011));
    if with_directory {
        std::fs::create_dir(sessions.join("31012.json")).unwrap();
        add("31012.json", Some("untrusted"), Some(31012));
    }
    let mut newer: Value = serde_json::from_slice(&record_with_pid(31013)).unwrap();
    newer["format"] = Value::from(3);
    write_file_0600(&sessions.join("31013.json"), &serde_json::to_vec(&newer).unwrap());
    add("31013.json", Some("unsupported-format"), Some(31013));
    let _socket = std::os::unix::net::UnixListener::bind(sessions.join("31014.json")).unwrap();
    add("31014.json", Some("untrusted"), Some(31014));

    write_file_0600(&sessions.join("007.json"), &record_with_pid(7));
    add("007.json", Some("malformed"), None);
    write_file_0600(&sessions.join("12.json"), &record_with_pid(13));
    add("12.json", Some("malformed"), Some(12));
    write_file_0600(&sessions.join("notes.txt"), b"remember the milk\n");
    add("notes.txt", Some("malformed"), None);

    // Roster's own dotfiles are never listed.
    write_file_0600(&sessions.join(".hidden"), b"garbage");
    write_file_0600(&sessions.join(".tmp-half-written"), b"{\"format\": 1,");

    Field { sandbox, sentinel, outside_link, planted, good, _owners: owners, _other: other }
}

#[test]
fn hostile_entries_are_listed_as_problems_promptly() {
    let field = plant(true);
    let started = Instant::now();
    let outcome = field.sandbox.run("roster-list", &["--json"]);
    let elapsed = started.elapsed();
    let rows = outcome.rows();
    assert!(elapsed < Duration::from_secs(1), "roster-list took {elapsed:?} over the hostile entries");
    let mut failures = Vec::new();
    for planted in &field.planted {
        let Some(row) = row_named(&rows, &planted.name) else {
            failures.push(format!("{} is not listed", planted.name));
            continue;
        };
        let problem = planted.problem.map_or(Value::Null, Value::from);
        if row["problem"] != problem {
            failures.push(format!("{}: problem {} instead of {problem}", planted.name, row["problem"]));
        }
        let expected_liveness = if planted.problem.is_some() { "unknown" } else { "alive" };
        if row["liveness"] != expected_liveness {
            failures.push(format!(
                "{}: liveness {} instead of {expected_liveness}",
                planted.name, row["liveness"]
            ));
        }
        if row["consent"] != "none" {
            failures.push(format!("{}: consent {}", planted.name, row["consent"]));
        }
        let pid = planted.pid.map_or(Value::Null, Value::from);
        if row["session_pid"] != pid {
            failures.push(format!("{}: session_pid {} instead of {pid}", planted.name, row["session_pid"]));
        }
        let missing = tests::missing_row_keys(row);
        if !missing.is_empty() {
            failures.push(format!("{}: row lacks {missing:?}", planted.name));
        }
    }
    if rows.len() != field.planted.len() {
        failures.push(format!("{} rows for {} entries (a dotfile listed?)", rows.len(), field.planted.len()));
    }
    assert!(failures.is_empty(), "{}\nrows: {rows:#?}", failures.join("\n"));
}

/// One system call from an strace log: its name, the path argument (for
/// opens), the fd's path (for reads, from `-y`), the flags and the result.
#[derive(Debug)]
struct Call {
    name: String,
    arguments: String,
    result: String,
}

fn parse_strace(log: &str) -> Vec<Call> {
    let mut unfinished: BTreeMap<String, String> = BTreeMap::new();
    let mut calls = Vec::new();
    for line in log.lines() {
        let (pid, rest) = line.split_once(char::is_whitespace).unwrap_or(("", line));
        let rest = rest.trim_start();
        let full = if let Some(prefix) = rest.strip_suffix(" <unfinished ...>") {
            unfinished.insert(pid.to_owned(), prefix.to_owned());
            continue;
        } else if let Some(resumed) = rest.strip_prefix("<... ") {
            let Some((_, tail)) = resumed.split_once(" resumed>") else { continue };
            format!("{}{tail}", unfinished.remove(pid).unwrap_or_default())
        } else {
            rest.to_owned()
        };
        let Some((name, after)) = full.split_once('(') else { continue };
        let Some((arguments, result)) = after.rsplit_once(") = ") else { continue };
        calls.push(Call {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            result: result.to_owned(),
        });
    }
    calls
}

/// The first quoted string of an argument list (the path of an open).
fn quoted(arguments: &str) -> Option<&str> {
    let start = arguments.find('"')? + 1;
    let end = start + arguments[start..].find('"')?;
    Some(&arguments[start..end])
}

/// The path `-y` shows for the first fd argument: `5</path/to/file>`.
fn fd_path(arguments: &str) -> Option<&str> {
    let start = arguments.find('<')? + 1;
    let end = start + arguments[start..].find(">,").or_else(|| arguments[start..].find('>'))?;
    Some(&arguments[start..end])
}

#[test]
fn nothing_is_followed_blocked_on_or_read_past_64_kib() {
    let strace = require_tool("strace");
    let field = plant(true);
    let log = field.sandbox.base().join("strace.log");
    let mut command = std::process::Command::new(strace);
    command
        .args(["-f", "-qq", "-y", "-s", "0", "-o"])
        .arg(&log)
        .args(["-e", "trace=open,openat,openat2,read,pread64,readv,preadv,preadv2"])
        .arg(tests::binary("roster-list"))
        .arg("--dir")
        .arg(field.sandbox.root())
        .arg("--json");
    command.env_clear().env("HOME", field.sandbox.home()).current_dir(field.sandbox.home());
    let outcome = tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
    assert!(!outcome.stderr.contains("PTRACE"), "strace cannot trace here: {}", outcome.stderr);
    outcome.expect_code(0);
    let calls = parse_strace(&std::fs::read_to_string(&log).expect("strace wrote its log"));
    assert!(
        calls.iter().any(|call| call.name.starts_with("open")),
        "the strace log holds no opens: is it empty?"
    );

    let sessions = field.sandbox.sessions();
    let sessions_text = sessions.to_str().unwrap();
    let sentinel = field.sentinel.to_str().unwrap();
    let entry_names: BTreeSet<&str> = field.planted.iter().map(|planted| planted.name.as_str()).collect();
    let mut failures = Vec::new();
    let mut read_bytes: BTreeMap<String, u64> = BTreeMap::new();
    for call in &calls {
        if call.arguments.contains(sentinel) {
            failures.push(format!(
                "the symlink's target was reached: {}({}) = {}",
                call.name, call.arguments, call.result
            ));
        }
        if call.name.starts_with("open") {
            let Some(path) = quoted(&call.arguments) else { continue };
            let name = Path::new(path).file_name().and_then(|name| name.to_str()).unwrap_or("");
            let in_sessions =
                path.starts_with(sessions_text) || call.arguments.contains(&format!("<{sessions_text}>"));
            if !in_sessions || !entry_names.contains(name) || call.arguments.contains("O_PATH") {
                continue;
            }
            for flag in ["O_NOFOLLOW", "O_NONBLOCK"] {
                if !call.arguments.contains(flag) {
                    failures.push(format!("{name} opened without {flag}: {}({})", call.name, call.arguments));
                }
            }
        } else if let Some(path) = fd_path(&call.arguments)
            && path.starts_with(sessions_text)
            && let Ok(bytes) = call.result.split_whitespace().next().unwrap_or("").parse::<u64>()
        {
            *read_bytes.entry(path.to_owned()).or_default() += bytes;
        }
    }
    for (path, bytes) in &read_bytes {
        if *bytes > MAX_ENTRY_BYTES {
            failures.push(format!("{bytes} bytes read from {path}, more than 64 KiB"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn prune_and_register_walk_past_hostile_entries() {
    let field = plant(false);
    let sandbox = &field.sandbox;
    let passwd_before = std::fs::read("/etc/passwd").unwrap();
    let sentinel_before = std::fs::read(&field.sentinel).unwrap();

    // Register reaps a bounded batch on every call: walk it over all of them.
    for _ in 0..field.planted.len() {
        let outcome = sandbox.run("roster-register", &["--pid", &field.good.to_string(), "--quiet"]);
        outcome.expect_code(0);
        assert!(outcome.elapsed < Duration::from_secs(2), "register took {:?}", outcome.elapsed);
    }
    let all_names = names_in(&sandbox.sessions());
    let report = sandbox.run("roster-prune", &["--json"]).json();
    assert!(
        report["removed"].as_array().unwrap().is_empty(),
        "a default prune removed an unknown entry: {report:#}"
    );
    assert_eq!(names_in(&sandbox.sessions()), all_names, "a default prune changed sessions/");

    for name in names_in(&sandbox.sessions()) {
        set_mtime(&sandbox.sessions().join(name), ago(Duration::from_secs(2 * 86400)));
    }
    let outcome = sandbox.run("roster-prune", &["--json", "--older-than", "1d"]);
    let report = outcome.json();
    let left = sandbox.visible_session_entries();
    assert_eq!(
        left,
        [tests::record_file_name_here(field.good)],
        "prune --older-than left more than the live record\n{report:#}"
    );
    assert!(sandbox.record_path(field.good).exists(), "the live record was removed");
    assert_eq!(std::fs::read("/etc/passwd").unwrap(), passwd_before);
    assert_eq!(std::fs::read(&field.sentinel).unwrap(), sentinel_before, "a symlink's target was touched");
    assert!(field.outside_link.exists(), "the other name of the hard link was touched");
}

/// A directory named like a record is listed as untrusted; it must not
/// make prune fail, nor stop it before the entries after it. Regression:
/// `prune --older-than` exited 1 ("remove …/31012.json: Is a directory")
/// and removed nothing after it.
#[test]
fn a_directory_in_sessions_does_not_stop_prune() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let directory = sandbox.sessions().join("31012.json");
    std::fs::create_dir(&directory).unwrap();
    std::fs::write(directory.join("inside"), b"x").unwrap();
    let garbage = sandbox.sessions().join("31013.json");
    write_file_0600(&garbage, b"garbage");
    for path in [&directory, &garbage] {
        set_mtime(path, ago(Duration::from_secs(2 * 86400)));
    }
    let default = sandbox.run("roster-prune", &["--json"]);
    default.expect_code(0);
    let outcome = sandbox.run("roster-prune", &["--json", "--older-than", "1d"]);
    outcome.expect_code(0);
    assert!(!garbage.exists(), "an old malformed entry survived next to a directory\n{outcome}");
    assert!(
        directory.join("inside").exists() || !directory.exists(),
        "prune emptied a directory instead of leaving or removing it"
    );
    assert!(sandbox.record_path(owner.pid()).exists());
}
