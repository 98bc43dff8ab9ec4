//! A full disk (docs/contract.md §2, §10 "Full disk"): register on a tiny tmpfs that
//! has filled up must fail with exit 1 and a clear one-line message, leave
//! the previous record byte for byte intact, and leave no temporary behind.
//!
//! The tmpfs is mounted in a private mount namespace (`unshare -m`), so
//! nothing outside the test ever sees it. Where that is impossible the test
//! fails and says so: a skipped full-disk test would prove nothing.

use std::path::Path;
use std::process::Command;

use tests::{Owner, Sandbox, binary, require_tool, run_with_deadline};

/// Runs inside the namespace. Results go to `$OUT`, which is on the real
/// file system, so they outlive the mount.
const SCRIPT: &str = r#"
set -u
mount -t tmpfs -o size=64k,mode=0700 roster-full-disk "$MNT" || exit 90
"$REGISTER" --dir "$MNT/roster" --pid "$OWNER" --agent first --json >"$OUT/first.out" 2>"$OUT/first.err"
echo $? >"$OUT/first.code"
cp "$MNT/roster/sessions/$OWNER"@*.json "$OUT/before.json"
# Fill every remaining page; the last write fails with ENOSPC.
head -c 1048576 /dev/zero >"$MNT/filler" 2>/dev/null
df -k "$MNT" >"$OUT/df" 2>&1
"$REGISTER" --dir "$MNT/roster" --pid "$OWNER" --agent second --session-id new-id >"$OUT/second.out" 2>"$OUT/second.err"
echo $? >"$OUT/second.code"
cp "$MNT/roster/sessions/$OWNER"@*.json "$OUT/after.json"
ls -A "$MNT/roster" "$MNT/roster/sessions" "$MNT/roster/consent" >"$OUT/listing" 2>&1
"$LIST" --dir "$MNT/roster" --json --all >"$OUT/list.json" 2>"$OUT/list.err"
echo $? >"$OUT/list.code"
"#;

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|error| panic!("the script wrote no {name}: {error}"))
}

/// Regression: the message printed the OS error twice ("write …: No space
/// left on device (os error 28): No space left on device (os error 28)").
#[test]
fn register_on_a_full_disk_fails_cleanly_and_keeps_the_old_record() {
    let unshare = require_tool("unshare");
    require_tool("mount");
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let mount_point = sandbox.base().join("mnt");
    let out = sandbox.base().join("out");
    std::fs::create_dir(&mount_point).unwrap();
    std::fs::create_dir(&out).unwrap();

    let mut command = Command::new(unshare);
    command
        .args(["--mount", "--propagation", "private", "sh", "-c", SCRIPT])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sandbox.home())
        .env("MNT", &mount_point)
        .env("OUT", &out)
        .env("OWNER", owner.pid().to_string())
        .env("REGISTER", binary("roster-register"))
        .env("LIST", binary("roster-list"));
    let outcome = run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
    assert!(
        outcome.status.code() == Some(0),
        "cannot mount a tmpfs in a private mount namespace here (needs root or CAP_SYS_ADMIN); \
         this test cannot pass without one\n{outcome}"
    );

    assert_eq!(
        read(&out, "first.code").trim(),
        "0",
        "the first register failed: {}",
        read(&out, "first.err")
    );
    let code = read(&out, "second.code");
    let stderr = read(&out, "second.err");
    let df = read(&out, "df");
    assert_eq!(code.trim(), "1", "register on a full disk must exit 1; stderr {stderr:?}\n{df}");
    let problems = tests::error_report_problems(&stderr, "roster-register");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].contains("No space left on device"),
        "the message does not say the disk is full: {stderr:?}"
    );
    assert!(
        lines[0].contains(mount_point.to_str().unwrap()),
        "the message does not name the path: {stderr:?}"
    );
    // It says what was being done to the path, in words: `writing <path>: No space left on device`.
    let before_path = lines[0].split(mount_point.to_str().unwrap()).next().unwrap_or("");
    assert!(
        before_path.starts_with("roster-register: ") && before_path.trim_end().ends_with("ing"),
        "the message does not say what failed: {stderr:?}"
    );
    assert!(!lines[0].contains("(os error"), "errno noise in the message: {stderr:?}");
    assert!(read(&out, "second.out").is_empty(), "a failed register printed to stdout");

    assert_eq!(read(&out, "after.json"), read(&out, "before.json"), "the previous record changed");
    let listing = read(&out, "listing");
    assert!(!listing.contains(".tmp-"), "a temporary was left behind:\n{listing}");

    assert_eq!(read(&out, "list.code").trim(), "0", "{}", read(&out, "list.err"));
    let rows: serde_json::Value = serde_json::from_str(&read(&out, "list.json")).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["agent"], "first");
    assert_eq!(rows[0]["liveness"], "alive");
    assert!(rows[0]["problem"].is_null());
}
