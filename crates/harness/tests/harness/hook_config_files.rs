//! Hook-config editing on a real disk, in a temporary home and project:
//! created files and directories, backups, byte-exact restores, refusals that
//! leave a file untouched, symbolic links, and the status of each harness.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use harness::hook_config::{
    HookCommands, HookConfigFile, HookEvent, HookHarness, HookPaths, HookState, Scope, backup_path_for,
    codex_trust_key, install, status, uninstall,
};
use serde_json::Value;

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/harness-captures");

struct Sandbox {
    _root: tempfile::TempDir,
    paths: HookPaths,
    bin: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = root.path().join("project");
        let bin = root.path().join("bin");
        for directory in [&home, &project, &bin] {
            fs::create_dir(directory).unwrap();
        }
        for name in ["roster-register", "roster-prune", "roster-state"] {
            fs::write(bin.join(name), "#!/bin/sh\n").unwrap();
            fs::set_permissions(bin.join(name), fs::Permissions::from_mode(0o755)).unwrap();
        }
        Sandbox { paths: HookPaths::new(&home, &project), bin, _root: root }
    }

    fn target(&self, harness: HookHarness) -> HookConfigFile {
        self.paths.target(harness, None).unwrap()
    }

    fn commands(&self, harness: HookHarness) -> HookCommands {
        HookCommands::new(harness, Some(&self.bin), None).unwrap()
    }

    fn write(&self, target: &HookConfigFile, bytes: &[u8]) {
        fs::create_dir_all(target.path.parent().unwrap()).unwrap();
        fs::write(&target.path, bytes).unwrap();
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn mode_of(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// No temporary file of an atomic write is left beside the target.
fn assert_no_temporaries(target: &HookConfigFile) {
    let directory = target.path.parent().unwrap();
    let Ok(entries) = fs::read_dir(directory) else { return };
    for entry in entries {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".roster-tmp-"), "temporary left behind: {name}");
    }
}

/// A file of each harness's shape with other hooks and settings, written in
/// a layout roster would not produce (four-space indent, no final newline),
/// so a byte-exact restore is visible.
fn hand_written_file(harness: HookHarness) -> Vec<u8> {
    let text = match harness {
        HookHarness::ClaudeCode => r#"{
    "model": "opus",
    "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "greet.sh"}]}]}
}"#
        .to_owned(),
        HookHarness::Codex => {
            fs::read_to_string(Path::new(CAPTURES).join("codex/hooks.json.example")).unwrap()
        }
        HookHarness::GeminiCli => {
            fs::read_to_string(Path::new(CAPTURES).join("gemini/settings.json.example")).unwrap()
        }
        HookHarness::CursorAgent => {
            r#"{"version": 1, "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}]}}"#.to_owned()
        }
        HookHarness::Copilot => {
            fs::read_to_string(Path::new(CAPTURES).join("copilot/github-hooks.json.example")).unwrap()
        }
        HookHarness::Opencode | HookHarness::Amp => {
            unreachable!("{harness} gets a plugin file, not settings")
        }
    };
    text.into_bytes()
}

#[test]
fn install_on_no_file_creates_it_and_uninstall_removes_it() {
    for harness in HookHarness::WITH_SETTINGS_FILES {
        let sandbox = Sandbox::new();
        let target = sandbox.target(harness);
        let outcome = install(&target, &sandbox.commands(harness)).unwrap();
        assert!(outcome.changed && outcome.created, "{harness}");
        assert_eq!(outcome.backup, None, "{harness}: nothing to back up");
        let expected_mode = if target.scope == Scope::User { 0o600 } else { 0o644 };
        assert_eq!(mode_of(&target.path), expected_mode, "{harness}");
        assert_eq!(mode_of(target.path.parent().unwrap()), 0o700, "{harness}: created directory");
        let written = fs::read_to_string(&target.path).unwrap();
        assert!(written.ends_with("}\n"), "{harness}: {written}");

        let again = install(&target, &sandbox.commands(harness)).unwrap();
        assert!(!again.changed, "{harness}: second install changes nothing");
        assert_eq!(fs::read_to_string(&target.path).unwrap(), written);
        assert!(!backup_path_for(&target.path).exists(), "{harness}: an unchanged file needs no backup");

        let removed = uninstall(&target, &sandbox.paths).unwrap();
        assert!(removed.changed && removed.removed_file, "{harness}: {removed:?}");
        assert!(!target.path.exists(), "{harness}: install created it, uninstall removes it");
        assert!(!target.path.parent().unwrap().exists(), "{harness}: the directory install made stays");
        assert!(!removed.removed_directories.is_empty(), "{harness}: {removed:?}");
        assert_no_temporaries(&target);
    }
}

#[test]
fn uninstall_restores_a_hand_written_file_byte_for_byte() {
    for harness in HookHarness::WITH_SETTINGS_FILES {
        let sandbox = Sandbox::new();
        let target = sandbox.target(harness);
        let original = hand_written_file(harness);
        sandbox.write(&target, &original);
        fs::set_permissions(&target.path, fs::Permissions::from_mode(0o640)).unwrap();

        let outcome = install(&target, &sandbox.commands(harness)).unwrap();
        assert!(outcome.changed && !outcome.created, "{harness}");
        let backup = outcome.backup.expect("a backup of the previous file");
        assert_eq!(fs::read(&backup).unwrap(), original, "{harness}: backup is the previous file");
        assert_eq!(mode_of(&target.path), 0o640, "{harness}: the file keeps its mode");

        let removed = uninstall(&target, &sandbox.paths).unwrap();
        assert!(removed.restored_backup, "{harness}: {removed:?}");
        assert_eq!(fs::read(&target.path).unwrap(), original, "{harness}: byte for byte");
        assert_eq!(removed.removed_backup, Some(backup.clone()), "{harness}");
        assert!(!backup.exists(), "{harness}: uninstall leaves install's backup behind");
        assert!(removed.removed_directories.is_empty(), "{harness}: the file stays, so does its directory");
        assert_no_temporaries(&target);
    }
}

#[test]
fn uninstall_after_other_edits_cuts_out_only_roster_hooks() {
    for harness in HookHarness::WITH_SETTINGS_FILES {
        let sandbox = Sandbox::new();
        let target = sandbox.target(harness);
        sandbox.write(&target, &hand_written_file(harness));
        let original = read_json(&target.path);
        install(&target, &sandbox.commands(harness)).unwrap();

        // The user edits the file after install: uninstall must keep the edit.
        let mut edited = read_json(&target.path);
        edited["editedLater"] = Value::Bool(true);
        fs::write(&target.path, serde_json::to_vec(&edited).unwrap()).unwrap();

        let removed = uninstall(&target, &sandbox.paths).unwrap();
        assert!(
            removed.changed && !removed.restored_backup && !removed.removed_file,
            "{harness}: {removed:?}"
        );
        let mut expect = original.clone();
        expect["editedLater"] = Value::Bool(true);
        assert_eq!(read_json(&target.path), expect, "{harness}");
    }
}

#[test]
fn an_empty_file_reads_as_an_empty_object_and_comes_back_empty() {
    for harness in HookHarness::WITH_SETTINGS_FILES {
        let sandbox = Sandbox::new();
        let target = sandbox.target(harness);
        sandbox.write(&target, b"");
        let outcome = install(&target, &sandbox.commands(harness)).unwrap();
        assert!(outcome.changed && !outcome.created, "{harness}");
        assert_eq!(fs::read(outcome.backup.unwrap()).unwrap(), b"");
        uninstall(&target, &sandbox.paths).unwrap();
        assert_eq!(fs::read(&target.path).unwrap(), b"", "{harness}");
    }
}

#[test]
fn refused_files_stay_untouched_byte_for_byte() {
    let contents: [&[u8]; 5] = [
        b"{\"hooks\": ",
        b"{\"hooks\": \"x\"}",
        b"[1, 2]",
        b"\xff\xfe",
        b"{\"hooks\": {\"SessionStart\": 1, \"sessionStart\": 1}}",
    ];
    for harness in HookHarness::WITH_SETTINGS_FILES {
        for bytes in contents {
            let sandbox = Sandbox::new();
            let target = sandbox.target(harness);
            sandbox.write(&target, bytes);
            let error = install(&target, &sandbox.commands(harness)).unwrap_err();
            assert_eq!(error.exit_code(), 3, "{harness} {bytes:?}: {error}");
            assert!(error.to_string().contains(&target.path.display().to_string()), "{error}");
            let error = uninstall(&target, &sandbox.paths).unwrap_err();
            assert_eq!(error.exit_code(), 3, "{harness} {bytes:?}: {error}");
            assert_eq!(fs::read(&target.path).unwrap(), bytes, "{harness}");
            assert!(!backup_path_for(&target.path).exists(), "{harness}: no backup of a refused file");
            assert_eq!(status(&target, &sandbox.paths).state, HookState::Unparseable, "{harness} {bytes:?}");
            assert_no_temporaries(&target);
        }
    }
}

#[test]
fn a_directory_where_the_file_should_be_is_refused() {
    let sandbox = Sandbox::new();
    let target = sandbox.target(HookHarness::ClaudeCode);
    fs::create_dir_all(&target.path).unwrap();
    let error = install(&target, &sandbox.commands(HookHarness::ClaudeCode)).unwrap_err();
    assert_eq!(error.exit_code(), 3, "{error}");
    assert!(error.to_string().contains("not a regular file"), "{error}");
}

#[test]
fn a_symbolic_link_is_written_through_and_kept() {
    let sandbox = Sandbox::new();
    let harness = HookHarness::ClaudeCode;
    let target = sandbox.target(harness);
    let dotfiles = sandbox.paths.home.join("dotfiles");
    fs::create_dir(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    fs::write(&real, b"{\"model\": \"opus\"}").unwrap();
    fs::create_dir_all(target.path.parent().unwrap()).unwrap();
    symlink(&real, &target.path).unwrap();

    let outcome = install(&target, &sandbox.commands(harness)).unwrap();
    assert_eq!(outcome.written_path, real);
    assert!(fs::symlink_metadata(&target.path).unwrap().file_type().is_symlink(), "the link stays a link");
    assert_eq!(outcome.backup, Some(backup_path_for(&real)));
    assert_eq!(read_json(&real)["model"], "opus");
    assert_eq!(status(&target, &sandbox.paths).state, HookState::Installed);
    uninstall(&target, &sandbox.paths).unwrap();
    assert_eq!(fs::read(&real).unwrap(), b"{\"model\": \"opus\"}");
}

#[test]
fn status_tells_each_state() {
    let sandbox = Sandbox::new();
    let harness = HookHarness::GeminiCli;
    let target = sandbox.target(harness);
    assert_eq!(status(&target, &sandbox.paths).state, HookState::NotInstalled);
    sandbox.write(&target, &hand_written_file(harness));
    assert_eq!(status(&target, &sandbox.paths).state, HookState::NotInstalled);

    install(&target, &sandbox.commands(harness)).unwrap();
    let installed = status(&target, &sandbox.paths);
    assert_eq!(installed.state, HookState::Installed, "{installed:?}");

    let mut document = read_json(&target.path);
    let end = document["hooks"]["SessionEnd"].as_array_mut().unwrap();
    end.pop();
    fs::write(&target.path, serde_json::to_vec(&document).unwrap()).unwrap();
    let partly = status(&target, &sandbox.paths);
    assert_eq!(partly.state, HookState::PartlyInstalled);
    assert!(partly.detail.contains("SessionEnd"), "{}", partly.detail);

    // Installed, but pointing at binaries that cannot run: every hook run
    // fails, which the harness does not show (regression: status said
    // `installed` of a hook whose binary was gone).
    install(&target, &sandbox.commands(harness)).unwrap();
    fs::set_permissions(sandbox.bin.join("roster-register"), fs::Permissions::from_mode(0o644)).unwrap();
    let unexecutable = status(&target, &sandbox.paths);
    assert_eq!(unexecutable.state, HookState::Broken, "{unexecutable:?}");
    assert!(unexecutable.detail.contains("roster-register is not executable"), "{}", unexecutable.detail);
    fs::remove_file(sandbox.bin.join("roster-prune")).unwrap();
    let stale = status(&target, &sandbox.paths);
    assert_eq!(stale.state, HookState::Broken);
    assert!(stale.detail.contains("roster-prune does not exist"), "{}", stale.detail);
    assert!(stale.detail.contains("roster-register is not executable"), "{}", stale.detail);
}

/// A plugin file's commands are checked like a settings file's hooks.
#[test]
fn a_plugin_whose_program_is_gone_is_broken() {
    for harness in [HookHarness::Opencode, HookHarness::Amp] {
        let sandbox = Sandbox::new();
        let target = sandbox.target(harness);
        install(&target, &sandbox.commands(harness)).unwrap();
        assert_eq!(status(&target, &sandbox.paths).state, HookState::Installed, "{harness}");
        fs::remove_file(sandbox.bin.join("roster-register")).unwrap();
        let broken = status(&target, &sandbox.paths);
        assert_eq!(broken.state, HookState::Broken, "{harness}: {broken:?}");
        assert!(broken.detail.contains("roster-register does not exist"), "{harness}: {}", broken.detail);
    }
}

/// Hooks installed from a cargo build directory run, and status says that
/// `cargo clean` would break them.
#[test]
fn hooks_running_from_a_cargo_build_directory_are_noted() {
    let sandbox = Sandbox::new();
    let build = sandbox.paths.home.join("src/roster/target/debug");
    fs::create_dir_all(&build).unwrap();
    for name in ["roster-register", "roster-prune", "roster-state"] {
        fs::copy(sandbox.bin.join(name), build.join(name)).unwrap();
    }
    let target = sandbox.target(HookHarness::GeminiCli);
    install(&target, &HookCommands::new(HookHarness::GeminiCli, Some(&build), None).unwrap()).unwrap();
    let noted = status(&target, &sandbox.paths);
    assert_eq!(noted.state, HookState::Installed, "{noted:?}");
    assert!(
        noted.detail.contains("cargo's build directory") && noted.detail.contains("cargo clean"),
        "{noted:?}"
    );
}

#[test]
fn codex_status_reads_trust_entries() {
    let sandbox = Sandbox::new();
    let harness = HookHarness::Codex;
    let target = sandbox.target(harness);
    sandbox.write(&target, &hand_written_file(harness));
    install(&target, &sandbox.commands(harness)).unwrap();
    let untrusted = status(&target, &sandbox.paths);
    assert_eq!(untrusted.state, HookState::Untrusted, "{untrusted:?}");
    assert!(untrusted.detail.contains("SessionStart, SessionEnd, UserPromptSubmit"), "{}", untrusted.detail);
    assert!(untrusted.detail.contains("Stop and Interrupt hooks"), "{}", untrusted.detail);

    // Each trust key names the hook's place in the file: where install put
    // it, after the capture's own hooks of the same event.
    let config_toml = sandbox.paths.codex_config_toml();
    let installed: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&target.path).unwrap()).unwrap();
    let found = harness::hook_config::find_installed_hooks(harness, &installed);
    let entry = |event: HookEvent| {
        let hook = found.for_event(event)[0];
        format!(
            "[hooks.state.\"{}\"]\ntrusted_hash = \"sha256:00\"\n",
            codex_trust_key(&target.path, event, hook.group_index, hook.hook_index)
        )
    };
    fs::write(&config_toml, entry(HookEvent::SessionStart)).unwrap();
    let half = status(&target, &sandbox.paths);
    assert_eq!(half.state, HookState::Untrusted);
    assert!(half.detail.contains("for the SessionEnd, UserPromptSubmit"), "{}", half.detail);

    let all_but_one: String =
        harness.events().into_iter().filter(|event| *event != HookEvent::State("Stop")).map(entry).collect();
    fs::write(&config_toml, &all_but_one).unwrap();
    let one_left = status(&target, &sandbox.paths);
    assert!(one_left.detail.contains("for the Stop hook,"), "{}", one_left.detail);

    let all: String = harness.events().into_iter().map(entry).collect();
    fs::write(&config_toml, all).unwrap();
    assert_eq!(status(&target, &sandbox.paths).state, HookState::Installed);

    fs::write(&config_toml, "[hooks").unwrap();
    let broken = status(&target, &sandbox.paths);
    assert_eq!(broken.state, HookState::Untrusted);
    assert!(broken.detail.contains("cannot read"), "{}", broken.detail);
}

#[test]
fn a_project_scope_file_lives_in_the_project() {
    let sandbox = Sandbox::new();
    let target = sandbox.paths.target(HookHarness::ClaudeCode, Some(Scope::Project)).unwrap();
    install(&target, &sandbox.commands(HookHarness::ClaudeCode)).unwrap();
    assert!(sandbox.paths.project.join(".claude/settings.json").is_file());
    assert!(!sandbox.paths.home.join(".claude").exists());
}

/// opencode and Amp get a plugin file of roster's own: install writes it,
/// status finds it, uninstall removes exactly it, and a file of the same name
/// that roster did not write is refused and left alone.
#[test]
fn plugin_files_are_written_found_and_removed_whole() {
    for harness in [HookHarness::Opencode, HookHarness::Amp] {
        for scope in [Scope::User, Scope::Project] {
            let sandbox = Sandbox::new();
            let target = sandbox.paths.target(harness, Some(scope)).unwrap();
            let commands = sandbox.commands(harness);
            let outcome = install(&target, &commands).unwrap();
            assert!(outcome.changed && outcome.created, "{harness} {scope}");
            let text = fs::read_to_string(&target.path).unwrap();
            assert!(text.starts_with(harness::hook_config::PLUGIN_MARKER), "{harness}");
            assert!(text.contains(&commands.session_start), "{harness}: {text}");
            assert!(text.contains("--pid"), "{harness}: the owner is passed explicitly");
            assert!(!install(&target, &commands).unwrap().changed, "{harness}: install twice");
            assert_eq!(status(&target, &sandbox.paths).state, HookState::Installed, "{harness}");
            let removed = uninstall(&target, &sandbox.paths).unwrap();
            assert!(removed.removed_file, "{harness}");
            assert!(!target.path.exists(), "{harness}");
            assert_eq!(status(&target, &sandbox.paths).state, HookState::NotInstalled, "{harness}");

            fs::create_dir_all(target.path.parent().unwrap()).unwrap();
            fs::write(&target.path, "export const Mine = async () => ({});\n").unwrap();
            let error = install(&target, &commands).unwrap_err();
            assert_eq!(error.exit_code(), 3, "{harness}: {error}");
            assert!(uninstall(&target, &sandbox.paths).is_err(), "{harness}");
            assert_eq!(fs::read_to_string(&target.path).unwrap(), "export const Mine = async () => ({});\n");
        }
    }
    let paths = HookPaths::new(Path::new("/home/dev"), Path::new("/home/dev/src/app"));
    let file = |harness, scope| paths.target(harness, Some(scope)).unwrap().path;
    assert_eq!(
        file(HookHarness::Opencode, Scope::User),
        Path::new("/home/dev/.config/opencode/plugins/roster.js")
    );
    assert_eq!(
        file(HookHarness::Opencode, Scope::Project),
        Path::new("/home/dev/src/app/.opencode/plugins/roster.js")
    );
    assert_eq!(file(HookHarness::Amp, Scope::User), Path::new("/home/dev/.config/amp/plugins/roster.ts"));
    assert_eq!(file(HookHarness::Amp, Scope::Project), Path::new("/home/dev/src/app/.amp/plugins/roster.ts"));
}
