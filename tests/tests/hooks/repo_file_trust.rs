//! The repository file (`.roster.toml`, docs/contract.md §7) as another user or a
//! careless setup leaves it. A file the user did not write (a symlink,
//! another user's file, a file its group or anyone may rewrite) enables
//! nothing and names no agent, with a warning; and no repository file,
//! however broken, keeps a session out of the registry. Regressions: a
//! symlink to an opted-in file armed consent; another user's
//! `.roster.toml` above the cwd, invalid TOML or a misspelt key made
//! `roster-register` exit 1 or 2.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tests::{Outcome, Owner, Sandbox};

const OPTED_IN_AS_WREN: &str = "agent_name = \"wren\"\n[consent]\nauto_arm = true\n";

/// Another user: no account needed, only a uid that is neither root nor us.
const OTHER_UID: u32 = 4242;

struct Scene {
    sandbox: Sandbox,
    /// The session's directory: a repository below `home/src`.
    repo: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let sandbox = Sandbox::new();
        let repo = sandbox.home().join("src/app");
        std::fs::create_dir_all(&repo).unwrap();
        Scene { sandbox, repo }
    }

    fn repo_file(&self) -> PathBuf {
        self.repo.join(".roster.toml")
    }

    /// `roster-register --pid OWNER --cwd REPO`, and the record it wrote.
    fn register(&self, owner: &Owner) -> (Outcome, Value) {
        let outcome = self.sandbox.run(
            "roster-register",
            &["--pid", &owner.pid().to_string(), "--cwd", self.repo.to_str().unwrap(), "--quiet"],
        );
        outcome.expect_code(0);
        assert!(outcome.stdout.is_empty(), "{outcome}");
        (outcome, self.sandbox.record(owner.pid()))
    }

    fn should_arm(&self, owner: &Owner) -> i32 {
        let pid = owner.pid().to_string();
        let outcome = self
            .sandbox
            .run("roster-consent", &["should-arm", "--pid", &pid, "--cwd", self.repo.to_str().unwrap()]);
        assert!(outcome.stdout.is_empty() && outcome.stderr.is_empty(), "should-arm printed\n{outcome}");
        outcome.code()
    }

    fn status(&self, owner: &Owner) -> Value {
        let pid = owner.pid().to_string();
        self.sandbox
            .run("roster-consent", &["status", "--json", "--pid", &pid, "--cwd", self.repo.to_str().unwrap()])
            .json()
    }

    fn status_text(&self, owner: &Owner) -> String {
        let pid = owner.pid().to_string();
        let outcome = self
            .sandbox
            .run("roster-consent", &["status", "--pid", &pid, "--cwd", self.repo.to_str().unwrap()]);
        outcome.expect_code(0).stdout_text()
    }
}

/// Writes a file as its owner would: regular, mode 0644.
fn write_0644(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

/// Gives `path` to another user; needs root, and fails loudly without it.
fn give_to_another_user(path: &Path) {
    nix::unistd::chown(path, Some(nix::unistd::Uid::from_raw(OTHER_UID)), None).unwrap_or_else(|error| {
        panic!("chown {} to uid {OTHER_UID} failed ({error}); this test must run as root", path.display())
    });
}

/// The one warning line register printed about `path`.
fn warning_about(outcome: &Outcome, path: &Path) -> String {
    let prefix = format!("roster-register: warning: {}: ", path.display());
    let lines: Vec<&str> = outcome.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one warning line\n{outcome}");
    assert!(lines[0].starts_with(&prefix), "expected {prefix:?}\n{outcome}");
    lines[0].to_owned()
}

#[test]
fn a_repository_file_the_user_did_not_write_enables_nothing() {
    type Plant = fn(&Scene);
    let cases: [(&str, Plant, &str); 5] = [
        (
            "a symlink to a valid opted-in file",
            |scene| {
                let target = scene.sandbox.base().join("opted-in.toml");
                write_0644(&target, OPTED_IN_AS_WREN);
                std::os::unix::fs::symlink(&target, scene.repo_file()).unwrap();
            },
            "untrusted: is a symlink",
        ),
        (
            "another user's file",
            |scene| {
                write_0644(&scene.repo_file(), OPTED_IN_AS_WREN);
                give_to_another_user(&scene.repo_file());
            },
            "untrusted: is owned by uid 4242",
        ),
        (
            "a group-writable file",
            |scene| {
                write_0644(&scene.repo_file(), OPTED_IN_AS_WREN);
                std::fs::set_permissions(scene.repo_file(), std::fs::Permissions::from_mode(0o664)).unwrap();
            },
            "untrusted: is writable by its group (mode 0664)",
        ),
        (
            "a world-writable file",
            |scene| {
                write_0644(&scene.repo_file(), OPTED_IN_AS_WREN);
                std::fs::set_permissions(scene.repo_file(), std::fs::Permissions::from_mode(0o646)).unwrap();
            },
            "untrusted: is writable by anyone (mode 0646)",
        ),
        (
            // The nearest entry ends the search: an untrusted one must not
            // let a farther, trusted one speak.
            "an untrusted nearest file above a trusted one",
            |scene| {
                write_0644(&scene.sandbox.home().join("src/.roster.toml"), OPTED_IN_AS_WREN);
                write_0644(&scene.repo_file(), OPTED_IN_AS_WREN);
                std::fs::set_permissions(scene.repo_file(), std::fs::Permissions::from_mode(0o664)).unwrap();
            },
            "untrusted: is writable by its group",
        ),
    ];
    for (name, plant, reason) in cases {
        let scene = Scene::new();
        plant(&scene);
        let owner = Owner::spawn();
        assert_eq!(scene.should_arm(&owner), 1, "{name}: an untrusted file armed consent");

        let status = scene.status(&owner);
        assert_eq!(status["repo"]["path"], scene.repo_file().to_str().unwrap(), "{name}: {status:#}");
        let error = status["repo"]["error"].as_str().unwrap_or_else(|| panic!("{name}: {status:#}"));
        assert!(error.starts_with(reason), "{name}: {status:#}");
        assert_eq!(status["auto_arm"], false, "{name}: {status:#}");
        let warnings = status["warnings"].to_string();
        assert!(warnings.contains(scene.repo_file().to_str().unwrap()), "{name}: {warnings}");
        assert!(warnings.contains(reason), "{name}: {warnings}");
        let text = scene.status_text(&owner);
        assert!(text.contains(reason), "{name}: {text}");

        let (outcome, record) = scene.register(&owner);
        assert_eq!(record["agent"], Value::Null, "{name}: the untrusted file named the agent");
        let warning = warning_about(&outcome, &scene.repo_file());
        assert!(warning.contains(reason), "{name}: {warning}");
    }
}

#[test]
fn a_repository_file_of_yours_or_roots_is_believed() {
    // The control case for the test above: the same file, regular, 0644,
    // owned by whoever runs the test (root on the machines that run it, so
    // also "root's").
    let scene = Scene::new();
    write_0644(&scene.repo_file(), OPTED_IN_AS_WREN);
    let owner = Owner::spawn();
    assert_eq!(scene.should_arm(&owner), 0);
    let (outcome, record) = scene.register(&owner);
    assert_eq!(record["agent"], "wren");
    assert!(outcome.stderr.is_empty(), "{outcome}");
}

#[test]
fn a_bad_repository_file_never_stops_registration() {
    type Plant = fn(&Scene) -> PathBuf;
    let cases: [(&str, Plant, &[&str]); 5] = [
        (
            "invalid TOML",
            |scene| {
                write_0644(&scene.repo_file(), "agent_name = \"wren\"\n[consent\nauto_arm = true\n");
                scene.repo_file()
            },
            &["does not parse: line 2"],
        ),
        (
            "a misspelt key",
            |scene| {
                write_0644(&scene.repo_file(), "agent_nmae = \"wren\"\n");
                scene.repo_file()
            },
            &["unknown key `agent_nmae`", "did you mean agent_name?"],
        ),
        (
            "an invalid agent name",
            |scene| {
                write_0644(&scene.repo_file(), "agent_name = \" wren\"\n");
                scene.repo_file()
            },
            &["does not parse", "white space"],
        ),
        (
            "another user's file above the cwd",
            |scene| {
                let path = scene.sandbox.home().join("src/.roster.toml");
                write_0644(&path, OPTED_IN_AS_WREN);
                give_to_another_user(&path);
                path
            },
            &["untrusted: is owned by uid 4242"],
        ),
        (
            "an unreadable file (a directory)",
            |scene| {
                std::fs::create_dir(scene.repo_file()).unwrap();
                scene.repo_file()
            },
            &["unreadable: is a directory"],
        ),
    ];
    for (name, plant, mentions) in cases {
        let scene = Scene::new();
        let path = plant(&scene);
        let owner = Owner::spawn();
        let (outcome, record) = scene.register(&owner);
        assert_eq!(record["agent"], Value::Null, "{name}");
        assert_eq!(record["cwd"], scene.repo.to_str().unwrap(), "{name}");
        let warning = warning_about(&outcome, &path);
        for mention in mentions {
            assert!(warning.contains(mention), "{name}: {mention:?} missing from {warning}");
        }
        assert!(warning.ends_with("its agent_name is not used"), "{name}: {warning}");

        // Consent stays closed, and status says why.
        assert_eq!(scene.should_arm(&owner), 1, "{name}");
        let status = scene.status(&owner);
        let error = status["repo"]["error"].as_str().unwrap_or_else(|| panic!("{name}: {status:#}"));
        assert!(error.contains(mentions[0]), "{name}: {status:#}");
    }
}

#[test]
fn a_bad_explicit_agent_name_is_still_an_error() {
    let scene = Scene::new();
    write_0644(&scene.repo_file(), "agent_nmae = \"wren\"\n");
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let cwd = scene.repo.to_str().unwrap();
    let outcome = scene.sandbox.run("roster-register", &["--pid", &pid, "--cwd", cwd, "--agent", " wren"]);
    outcome.expect_code(2).expect_error_line("roster-register");
    assert!(outcome.stderr.starts_with("roster-register: --agent: "), "{outcome}");
    let outcome = scene.sandbox.run_with_env(
        "roster-register",
        &["--pid", &pid, "--cwd", cwd],
        &[("ROSTER_AGENT", " wren")],
    );
    outcome.expect_code(2).expect_error_line("roster-register");
    assert!(!scene.sandbox.record_path(owner.pid()).exists(), "nothing is written on bad input");

    // An explicit name wins without reading the repository file at all.
    let outcome =
        scene.sandbox.run("roster-register", &["--pid", &pid, "--cwd", cwd, "--agent", "kite", "--quiet"]);
    outcome.expect_code(0);
    assert!(outcome.stderr.is_empty(), "{outcome}");
    assert_eq!(scene.sandbox.record(owner.pid())["agent"], "kite");
}
