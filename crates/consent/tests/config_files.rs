//! The configuration files read from disk: the resolution table again,
//! this time through real files (including a directory and a FIFO where a
//! file should be), the upward search for `.roster.toml`, the trust and
//! size limits, and `repo_agent_name` for `roster-register`.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use consent::{
    ConfigOutcome, Error, load_auto_arm_inputs, load_repo_input, load_user_input, repo_agent_name,
    user_config_path,
};

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
fn a_dangling_symlink_is_found_and_unreadable() {
    let scene = scene();
    std::os::unix::fs::symlink(scene.repo.join("missing"), scene.repo.join(".roster.toml")).unwrap();
    std::fs::create_dir_all(scene.user_file().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(scene.repo.join("missing"), scene.user_file()).unwrap();
    let inputs = load_auto_arm_inputs(&scene.session_directory, &scene.env());
    assert_eq!(inputs.repo.outcome, ConfigOutcome::Unreadable("is a dangling symlink".into()));
    // The user meant to have a file there: fail closed, a veto.
    assert_eq!(inputs.user.outcome, ConfigOutcome::Unreadable("is a dangling symlink".into()));
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
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (input, _) = load_repo_input(&scene.session_directory);
    assert_eq!(input.outcome, ConfigOutcome::Unreadable("is writable by anyone (mode 0666)".into()));

    // Group write is common (umask 002) and allowed.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
    assert_eq!(load_repo_input(&scene.session_directory).0.outcome, ConfigOutcome::AutoArm(true));

    if nix::unistd::geteuid().is_root() {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        let (input, _) = load_repo_input(&scene.session_directory);
        let ConfigOutcome::Unreadable(why) = &input.outcome else { panic!("{input:?}") };
        assert!(why.starts_with("is owned by uid 65534"), "{why}");
    }
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
    assert_eq!(repo_agent_name(&scene.session_directory).unwrap(), None);
    std::fs::write(scene.repo.join(".roster.toml"), "agent_name = \"wren\"\n").unwrap();
    assert_eq!(
        repo_agent_name(&scene.session_directory).unwrap(),
        Some(("wren".to_owned(), scene.repo.join(".roster.toml")))
    );

    std::fs::write(scene.repo.join(".roster.toml"), "agent_name = \"wren\"\nagent = \"x\"\n").unwrap();
    let error = repo_agent_name(&scene.session_directory).unwrap_err();
    assert!(matches!(error, Error::RepoConfigInvalid { .. }), "{error}");
    assert_eq!(error.exit_code(), 2);
    assert!(error.to_string().contains("unknown key `agent`"), "{error}");
    assert!(error.to_string().contains(&scene.repo.join(".roster.toml").display().to_string()), "{error}");

    std::fs::write(scene.repo.join(".roster.toml"), "agent_name = \"\\u001b[31m\"\n").unwrap();
    let error = repo_agent_name(&scene.session_directory).unwrap_err();
    assert!(error.to_string().contains("control character"), "{error}");

    std::fs::remove_file(scene.repo.join(".roster.toml")).unwrap();
    std::fs::create_dir(scene.repo.join(".roster.toml")).unwrap();
    let error = repo_agent_name(&scene.session_directory).unwrap_err();
    assert!(matches!(error, Error::RepoConfigUnreadable { .. }), "{error}");
    assert_eq!(error.exit_code(), 1);
}
