//! The directories above the roster directory are checked too: another
//! user who may write to one of them (without the sticky bit) could rename
//! the roster directory away and put their own in its place. Every tool
//! refuses such a registry like an untrusted roster directory, exit 3,
//! naming the path and the fix; a sticky shared directory like `/tmp` is
//! fine.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tests::{Owner, Sandbox, run_with_deadline};

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|error| panic!("chmod {mode:o} {}: {error}", path.display()));
}

fn chown(path: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))
        .unwrap_or_else(|error| panic!("chown {uid} {} (the tests run as root): {error}", path.display()));
}

/// A sandbox with a roster directory of yours in `common/`, whose mode
/// each test sets: (the sandbox, `common/`, the roster directory).
fn roster_under_shared() -> (Sandbox, PathBuf, PathBuf) {
    let sandbox = Sandbox::new();
    let shared = sandbox.base().join("common");
    let roster = shared.join("roster");
    std::fs::create_dir_all(&roster).expect("create the roster directory");
    set_mode(&roster, 0o700);
    (sandbox, shared, roster)
}

/// Runs each tool against `roster` and checks it is refused, naming `culprit`.
fn assert_refused(sandbox: &Sandbox, roster: &Path, culprit: &Path, says: &str) {
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let runs: [(&str, &[&str]); 5] = [
        ("roster-register", &["--pid", &pid]),
        ("roster-list", &[]),
        ("roster-prune", &[]),
        ("roster-consent", &["disarm", "--pid", &pid, "--cwd", "/"]),
        ("roster-consent", &["status", "--pid", &pid, "--cwd", "/"]),
    ];
    for (tool, args) in runs {
        let mut command = sandbox.command(tool);
        command.arg("--dir").arg(roster).args(args);
        let outcome = run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
        assert_eq!(outcome.code(), 3, "{tool} with {}: {outcome}", culprit.display());
        outcome.expect_error_line(tool);
        assert!(
            outcome.stderr.contains(&culprit.display().to_string()),
            "{tool} names the path: {}",
            outcome.stderr
        );
        assert!(outcome.stderr.contains(says), "{tool}: {}", outcome.stderr);
    }
    assert!(
        !roster.join("sessions").join(tests::record_file_name_here(owner.pid())).exists(),
        "a record was written under an untrusted parent"
    );
}

#[test]
fn a_parent_others_may_write_to_without_the_sticky_bit_is_refused() {
    let (sandbox, shared, roster) = roster_under_shared();

    set_mode(&shared, 0o777);
    assert_refused(&sandbox, &roster, &shared, "writable by anyone without the sticky bit");
    set_mode(&shared, 0o757);
    assert_refused(&sandbox, &roster, &shared, "chmod go-w");
    // Group write for a group that is not yours alone.
    chown(&shared, 0, 4242);
    set_mode(&shared, 0o775);
    assert_refused(&sandbox, &roster, &shared, "writable by its group without the sticky bit");

    // The sticky bit, as on /tmp, stops renames of what is not yours.
    set_mode(&shared, 0o1777);
    let owner = Owner::spawn();
    let mut command = sandbox.command("roster-register");
    command.arg("--dir").arg(&roster).args(["--pid", &owner.pid().to_string()]);
    run_with_deadline(&mut command, tests::COMMAND_DEADLINE).expect_code(0);
}

#[test]
fn a_parent_or_a_symlink_above_owned_by_another_user_is_refused() {
    let sandbox = Sandbox::new();
    let theirs = sandbox.base().join("theirs");
    let roster = theirs.join("roster");
    std::fs::create_dir_all(&roster).expect("create the roster directory");
    set_mode(&roster, 0o700);
    chown(&theirs, 4242, 4242);
    assert_refused(&sandbox, &roster, &theirs, "owned by uid 4242");

    // A symlink on the way that another user owns (and so may repoint).
    let mine = sandbox.base().join("mine");
    std::fs::create_dir_all(mine.join("roster")).expect("create the roster directory");
    set_mode(&mine.join("roster"), 0o700);
    let link = sandbox.base().join("link");
    std::os::unix::fs::symlink(&mine, &link).expect("symlink");
    chown(&link, 4242, 4242);
    assert_refused(&sandbox, &link.join("roster"), &link, "is a symlink owned by uid 4242");
}

/// Group write on a parent is harmless only when the group is the user's
/// own private group: named as the user, no other member, and no other
/// account's primary group. Run with a private /etc/passwd (bind-mounted
/// in a mount namespace) that either has such an account or not.
#[test]
fn a_group_writable_parent_is_trusted_only_for_a_group_nobody_else_is_in() {
    let unshare = tests::require_tool("unshare");
    let (sandbox, shared, roster) = roster_under_shared();
    chown(&shared, 0, 0);
    set_mode(&shared, 0o775);
    let only_root = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n";
    let with_another = format!("{only_root}intruder:x:1235:0:in root's group:/:/bin/sh\n");
    for (passwd, trusted) in [(only_root.to_owned(), true), (with_another, false)] {
        let passwd_file = sandbox.base().join("passwd");
        std::fs::write(&passwd_file, &passwd).expect("write a passwd file");
        let owner = Owner::spawn();
        let script =
            format!("mount --bind \"$0\" /etc/passwd && exec \"$1\" --dir \"$2\" --pid {}", owner.pid());
        let mut command = std::process::Command::new(&unshare);
        command
            .args(["-m", "--propagation", "private", "--", "sh", "-c", &script])
            .arg(&passwd_file)
            .arg(tests::binary("roster-register"))
            .arg(&roster);
        let outcome = run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
        if trusted {
            assert_eq!(outcome.code(), 0, "root's private group: {outcome}");
        } else {
            assert_eq!(outcome.code(), 3, "an account whose primary group is root's: {outcome}");
            assert!(outcome.stderr.contains("writable by its group"), "{outcome}");
        }
    }
}

/// A path through a symlink of your own is checked where it really leads:
/// the directories above the real roster directory, not those of the path
/// as given. A path with `..` in it likewise.
#[test]
fn the_real_path_is_checked_through_your_own_symlink_and_dot_dot() {
    let (sandbox, shared, _roster) = roster_under_shared();
    set_mode(&shared, 0o777);
    let link = sandbox.base().join("my-link");
    std::os::unix::fs::symlink(&shared, &link).expect("symlink");
    assert_refused(&sandbox, &link.join("roster"), &shared, "writable by anyone without the sticky bit");
    let dotted = sandbox.base().join("elsewhere");
    std::fs::create_dir_all(&dotted).expect("create a sibling");
    assert_refused(
        &sandbox,
        &dotted.join("../common/roster"),
        &shared,
        "writable by anyone without the sticky bit",
    );
}

/// Regression: `roster-list` of a registry not made yet under a parent
/// roster refuses (group-writable, no sticky bit) said "nothing was ever
/// registered here (roster-register adds one)", and `roster-register` then
/// refused with exit 3. The listing says the registry would be refused,
/// and why, in register's own words.
#[test]
fn a_listing_of_a_registry_not_made_yet_says_register_would_refuse_it() {
    let sandbox = Sandbox::new();
    let shared = sandbox.base().join("common");
    std::fs::create_dir(&shared).expect("create the shared directory");
    chown(&shared, 0, 4242);
    set_mode(&shared, 0o775);
    let roster = shared.join("not-yet").join("roster");
    let run = |tool: &str, args: &[&str]| {
        let mut command = sandbox.command(tool);
        command.arg("--dir").arg(&roster).args(args);
        run_with_deadline(&mut command, tests::COMMAND_DEADLINE)
    };

    let listing = run("roster-list", &[]);
    listing.expect_code(0);
    assert_eq!(listing.stdout, b"", "{listing}");
    assert!(!listing.stderr.contains("roster-register adds one"), "a hint into a refusal: {listing}");

    let owner = Owner::spawn();
    let register = run("roster-register", &["--pid", &owner.pid().to_string()]);
    register.expect_code(3).expect_error_line("roster-register");
    let why = register.stderr.trim_end().strip_prefix("roster-register: ").expect("the error line");
    assert!(why.contains("writable by its group without the sticky bit"), "{register}");
    assert_eq!(
        listing.stderr,
        format!(
            "no sessions: nothing was ever registered here, and roster-register would refuse it: {why}\n"
        ),
        "the listing says why in register's words"
    );
    assert!(!roster.exists(), "the listing or the refused register made the registry");

    // Once the parent is fixed, the hint to register is the right one.
    set_mode(&shared, 0o755);
    let listing = run("roster-list", &[]);
    assert!(listing.stderr.contains("roster-register adds one"), "{listing}");
}
