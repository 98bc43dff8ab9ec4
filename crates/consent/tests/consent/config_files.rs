//! The configuration files read from disk: the resolution table again,
//! this time through real files (including a directory and a FIFO where a
//! file should be), the upward search for `.roster.toml`, the trust and
//! size limits, and `repo_agent_name` for `roster-register`.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use consent::{
    ConfigOutcome, load_auto_arm_inputs, load_repo_input, load_user_input, repo_agent_name,
    repo_file_distrust, user_config_path,
};
use registry_core::AgentName;

/// What to put where a configuration file goes.
#[derive(Clone, Copy, Debug)]
enum Fixture {
    Absent,
    Unset,
    False,
    True,
    Directory,
    Fifo,
    Unparseable,
    UnknownKey,
}

const ALL: [Fixture; 8] = [
    Fixture::Absent,
    Fixture::Unset,
    Fixture::False,
    Fixture::True,
    Fixture::Directory,
    Fixture::Fifo,
    Fixture::Unparseable,
    Fixture::UnknownKey,
];

fn place(path: &Path, fixture: Fixture) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text = match fixture {
        Fixture::Absent => return,
        Fixture::Directory => return std::fs::create_dir(path).unwrap(),
        Fixture::Fifo => return nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap(),
        Fixture::Unset => "# nothing set\n",
        Fixture::False => "[consent]\nauto_arm = false\n",
        Fixture::True => "[consent]\nauto_arm = true\n",
        Fixture::Unparseable => "[consent]\nauto_arm = tr",
        Fixture::UnknownKey => "[consent]\nauto_arm = true\nshout = true\n",
    };
    std::fs::write(path, text).unwrap();
}

fn expected_outcome(fixture: Fixture) -> &'static str {
    match fixture {
        Fixture::Absent => "absent",
        Fixture::Unset => "unset",
        Fixture::False => "false",
        Fixture::True => "true",
        Fixture::Directory | Fixture::Fifo => "unreadable",
        Fixture::Unparseable => "unparseable",
        Fixture::UnknownKey => "unknown-key",
    }
}

fn outcome_name(outcome: &ConfigOutcome) -> &'static str {
    match outcome {
        ConfigOutcome::Absent => "absent",
        ConfigOutcome::AutoArmUnset => "unset",
        ConfigOutcome::AutoArm(false) => "false",
        ConfigOutcome::AutoArm(true) => "true",
        ConfigOutcome::Unreadable(_) => "unreadable",
        ConfigOutcome::Untrusted(_) => "untrusted",
        ConfigOutcome::Unparseable(_) => "unparseable",
        ConfigOutcome::UnknownKey(_) => "unknown-key",
    }
}

fn env_with(pairs: Vec<(&'static str, PathBuf)>) -> impl Fn(&str) -> Option<OsString> {
    move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.clone().into_os_string())
}

struct Scene {
    _root: tempfile::TempDir,
    repo: PathBuf,
    session_directory: PathBuf,
    config_home: PathBuf,
}

fn scene() -> Scene {
    let root = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(root.path()).unwrap();
    let repo = base.join("repo");
    let session_directory = repo.join("src/deep");
    std::fs::create_dir_all(&session_directory).unwrap();
    let config_home = base.join("config");
    std::fs::create_dir_all(&config_home).unwrap();
    Scene { _root: root, repo, session_directory, config_home }
}

impl Scene {
    fn env(&self) -> impl Fn(&str) -> Option<OsString> + use<> {
        env_with(vec![("XDG_CONFIG_HOME", self.config_home.clone())])
    }

    fn user_file(&self) -> PathBuf {
        self.config_home.join("roster/config.toml")
    }
}

#[test]
fn every_pair_of_files_on_disk() {
    for repo_fixture in ALL {
        for user_fixture in ALL {
            let scene = scene();
            place(&scene.repo.join(".roster.toml"), repo_fixture);
            place(&scene.user_file(), user_fixture);
            let inputs = load_auto_arm_inputs(&scene.session_directory, &scene.env());
            let case = format!("repo {repo_fixture:?}, user {user_fixture:?}: {inputs:#?}");
            assert_eq!(outcome_name(&inputs.repo.outcome), expected_outcome(repo_fixture), "{case}");
            assert_eq!(outcome_name(&inputs.user.outcome), expected_outcome(user_fixture), "{case}");
            let enabled = matches!(repo_fixture, Fixture::True)
                && matches!(user_fixture, Fixture::Absent | Fixture::Unset | Fixture::True);
            assert_eq!(inputs.decision.auto_arm, enabled, "{case}");
            assert_eq!(inputs.user.path.as_deref(), Some(scene.user_file().as_path()), "{case}");
            match repo_fixture {
                Fixture::Absent => assert_eq!(inputs.repo.path, None, "{case}"),
                _ => assert_eq!(inputs.repo.path, Some(scene.repo.join(".roster.toml")), "{case}"),
            }
        }
    }
}

#[test]
fn unreadable_files_say_why() {
    let scene = scene();
    place(&scene.repo.join(".roster.toml"), Fixture::Fifo);
    place(&scene.user_file(), Fixture::Directory);
    let inputs = load_auto_arm_inputs(&scene.session_directory, &scene.env());
    assert_eq!(inputs.repo.outcome, ConfigOutcome::Unreadable("is a FIFO, not a regular file".into()));
    assert_eq!(inputs.user.outcome, ConfigOutcome::Unreadable("is a directory, not a regular file".into()));
    assert!(inputs.decision.warnings.iter().any(|warning| warning.contains("FIFO")), "{inputs:?}");
}

#[test]
fn the_nearest_repository_file_speaks_even_when_broken() {
    let scene = scene();
    place(&scene.repo.join(".roster.toml"), Fixture::True);
    place(&scene.repo.join("src/.roster.toml"), Fixture::Unparseable);
    let inputs = load_auto_arm_inputs(&scene.session_directory, &scene.env());
    assert_eq!(inputs.repo.path, Some(scene.repo.join("src/.roster.toml")));
    assert!(matches!(inputs.repo.outcome, ConfigOutcome::Unparseable(_)), "{inputs:?}");
    assert!(!inputs.decision.auto_arm);

    // From the repository's root, the root's file is the nearest.
    let inputs = load_auto_arm_inputs(&scene.repo, &scene.env());
    assert_eq!(inputs.repo.path, Some(scene.repo.join(".roster.toml")));
    assert!(inputs.decision.auto_arm, "{inputs:?}");
}

#[test]
fn a_dangling_symlink_is_found_and_not_used() {
    let scene = scene();
    std::os::unix::fs::symlink(scene.repo.join("missing"), scene.repo.join(".roster.toml")).unwrap();
    std::fs::create_dir_all(scene.user_file().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(scene.repo.join("missing"), scene.user_file()).unwrap();
    let inputs = load_auto_arm_inputs(&scene.session_directory, &scene.env());
    let ConfigOutcome::Untrusted(why) = &inputs.repo.outcome else { panic!("{inputs:?}") };
    assert!(why.starts_with("is a symlink"), "{why}");
    // The user meant to have a file there: fail closed, a veto.
    assert_eq!(inputs.user.outcome, ConfigOutcome::Unreadable("is a dangling symlink".into()));
}

/// A symlink planted by someone else used to be followed and armed
/// consent: a repository file is believed only as a regular file, and the
/// nearest entry still ends the upward search.
#[test]
fn a_symlinked_repository_file_is_not_followed() {
    let scene = scene();
    let target = scene.config_home.join("opted-in.toml");
    place(&target, Fixture::True);
    place(&scene.repo.join(".roster.toml"), Fixture::True);
    std::os::unix::fs::symlink(&target, scene.repo.join("src/.roster.toml")).unwrap();
    let inputs = load_auto_arm_inputs(&scene.session_directory, &scene.env());
    assert_eq!(inputs.repo.path, Some(scene.repo.join("src/.roster.toml")), "{inputs:?}");
    assert!(matches!(&inputs.repo.outcome, ConfigOutcome::Untrusted(why) if why.starts_with("is a symlink")));
    assert!(!inputs.decision.auto_arm, "{inputs:?}");
    let warning = &inputs.decision.warnings[0];
    assert!(warning.contains(&scene.repo.join("src/.roster.toml").display().to_string()), "{warning}");
    assert!(warning.contains("untrusted: is a symlink"), "{warning}");
}

#[test]
fn a_symlinked_user_file_is_followed() {
    let scene = scene();
    let dotfiles = scene.config_home.join("dotfiles.toml");
    std::fs::write(&dotfiles, "[consent]\nauto_arm = false\n").unwrap();
    std::fs::create_dir_all(scene.user_file().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&dotfiles, scene.user_file()).unwrap();
    assert_eq!(load_user_input(&scene.env()).outcome, ConfigOutcome::AutoArm(false));
}

#[test]
fn oversized_files_are_not_read() {
    let scene = scene();
    let mut text = String::from("[consent]\nauto_arm = true\n");
    text.push_str(&"# padding\n".repeat(7000));
    std::fs::write(scene.repo.join(".roster.toml"), &text).unwrap();
    let (input, _) = load_repo_input(&scene.session_directory);
    let ConfigOutcome::Unreadable(why) = &input.outcome else { panic!("{input:?}") };
    assert!(why.contains("over the 64 KiB limit"), "{why}");
}

#[test]
fn a_repository_file_someone_else_could_write_is_not_believed() {
    let scene = scene();
    let path = scene.repo.join(".roster.toml");
    place(&path, Fixture::True);
    for (mode, why) in [
        (0o666, "is writable by its group and anyone (mode 0666); run chmod go-w on it"),
        (0o646, "is writable by anyone (mode 0646); run chmod go-w on it"),
        // Group write was allowed once (umask 002); a group is other people.
        (0o664, "is writable by its group (mode 0664); run chmod go-w on it"),
    ] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let (input, _) = load_repo_input(&scene.session_directory);
        assert_eq!(input.outcome, ConfigOutcome::Untrusted(why.into()), "{mode:o}");
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(load_repo_input(&scene.session_directory).0.outcome, ConfigOutcome::AutoArm(true));
}

#[test]
fn whose_repository_files_are_believed() {
    let check = |owner: u32, mode: u32, euid: u32, expect: Option<&str>| {
        let found = repo_file_distrust(owner, mode, euid);
        match expect {
            None => assert_eq!(found, None, "owner {owner}, mode {mode:o}, you {euid}"),
            Some(start) => {
                let found =
                    found.unwrap_or_else(|| panic!("owner {owner}, mode {mode:o}, you {euid}: believed"));
                assert!(found.starts_with(start), "{found}");
            }
        }
    };
    check(1000, 0o100644, 1000, None);
    check(1000, 0o100600, 1000, None);
    check(0, 0o100644, 1000, None);
    check(0, 0o100644, 0, None);
    check(4242, 0o100644, 1000, Some("is owned by uid 4242, neither you (uid 1000) nor root"));
    check(4242, 0o100644, 0, Some("is owned by uid 4242, neither you (uid 0) nor root"));
    check(1000, 0o100664, 1000, Some("is writable by its group (mode 0664)"));
    check(0, 0o100666, 1000, Some("is writable by its group and anyone (mode 0666)"));
    check(1000, 0o100602, 1000, Some("is writable by anyone (mode 0602)"));
}

#[test]
fn the_user_file_location() {
    let home = PathBuf::from("/home/dev");
    assert_eq!(
        user_config_path(&env_with(vec![("HOME", home.clone())])),
        Some(PathBuf::from("/home/dev/.config/roster/config.toml"))
    );
    assert_eq!(
        user_config_path(&env_with(vec![("HOME", home.clone()), ("XDG_CONFIG_HOME", "/etc/xdg-dev".into())])),
        Some(PathBuf::from("/etc/xdg-dev/roster/config.toml"))
    );
    // A relative XDG_CONFIG_HOME is ignored, as the XDG specification says.
    assert_eq!(
        user_config_path(&env_with(vec![("HOME", home), ("XDG_CONFIG_HOME", "relative".into())])),
        Some(PathBuf::from("/home/dev/.config/roster/config.toml"))
    );
    // Nowhere to look: fail closed, a veto.
    let input = load_user_input(&env_with(vec![]));
    assert_eq!(input.path, None);
    assert!(matches!(input.outcome, ConfigOutcome::Unreadable(_)), "{input:?}");
}

#[test]
fn the_agent_name_for_register() {
    let scene = scene();
    let path = scene.repo.join(".roster.toml");
    assert_eq!(repo_agent_name(&scene.session_directory), Ok(None));
    std::fs::write(&path, "agent_name = \"wren\"\n").unwrap();
    assert_eq!(
        repo_agent_name(&scene.session_directory),
        Ok(Some((AgentName::parse("wren").unwrap(), path.clone())))
    );

    // A file that cannot be used is a warning naming it, never an error.
    let warning = |text: &str| {
        std::fs::write(&path, text).unwrap();
        let warning = repo_agent_name(&scene.session_directory).unwrap_err();
        assert_eq!(warning.path, path);
        let shown = warning.to_string();
        assert!(shown.starts_with(&format!("{}: ", path.display())), "{shown}");
        assert!(shown.ends_with("; its agent_name is not used"), "{shown}");
        shown
    };
    let shown = warning("agent_nmae = \"x\"\n");
    assert!(shown.contains("unknown key `agent_nmae` (did you mean agent_name?)"), "{shown}");
    let shown = warning("agent_name = \"wren\"\nagent_name = \"x\"\n");
    assert!(shown.contains("does not parse: line 2, column 1: "), "{shown}");
    let shown = warning("agent_name = \"\\u001b[31m\"\n");
    assert!(shown.contains("control character"), "{shown}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o660)).unwrap();
    let shown = warning("agent_name = \"wren\"\n");
    assert!(shown.contains("untrusted: is writable by its group"), "{shown}");

    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let warning = repo_agent_name(&scene.session_directory).unwrap_err();
    assert!(warning.problem.starts_with("unreadable: is a directory"), "{warning}");
}
