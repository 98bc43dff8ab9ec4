//! Install then uninstall over real-world settings files gives back the very
//! bytes the user had, for every harness roster-hooks edits: comments (Gemini
//! CLI reads JSONC), key order, number spelling (`1.0`, `1e3`, integers past
//! `u64`), string escapes, tabs, CRLF line ends, a missing final newline. The
//! files are written to a temporary home and edited through the same `install`
//! and `uninstall` the command line uses.

use std::fs;
use std::path::PathBuf;

use harness::hook_config::{
    HookCommands, HookConfigFile, HookHarness, HookPaths, backup_path_for, find_installed_hooks, install,
    parse_hook_document, uninstall,
};

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/harness-captures");

/// A Claude Code user's settings: schema, big and oddly spelled numbers,
/// escapes, permissions, unrelated hooks and a SessionStart hook of their own.
const CLAUDE_SETTINGS: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "cleanupPeriodDays": 12345678901234567890,
  "env": {
    "RATIO": 1.0,
    "BUDGET": 1e3,
    "NEGATIVE": -0.5E-7,
    "WINDOWS_PATH": "C:\\Users\\d\u00e9v\\tmp",
    "QUOTE": "say \"hi\"\t\/"
  },
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
    "deny": []
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          { "type": "command", "command": "~/bin/guard.sh", "timeout": 5 }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [{"type": "command", "command": "echo started >> ~/log"}]
      }
    ]
  }
}
"#;

/// Gemini CLI's settings with comments of both kinds, trailing commas and
/// hooks of the user's own in the session events.
const GEMINI_SETTINGS_JSONC: &str = r#"// Gemini CLI settings, kept by hand.
{
  /* look and feel */
  "ui": { "theme": "GitHub", "hideBanner": true }, // the banner is noise
  "general": {
    "vimMode": true,
    "checkpointing": { "enabled": false },
  },
  "model": { "maxSessionTurns": 1e2, "compressionThreshold": 0.70 },
  "telemetry": { "target": "local", "otlpEndpoint": "http://127.0.0.1:4317" },
  "hooks": {
    // audit every tool
    "BeforeTool": [
      { "matcher": "*", "hooks": [ { "type": "command", "command": "audit.sh", "timeout": 60000 } ] }
    ],
    "SessionEnd": [
      {
        "hooks": [
          { "type": "command", "command": "notify-send bye", "name": "bye" }, // desktop note
        ]
      }
    ],
  },
}
"#;

/// Cursor's hooks file, written on one line by a tool, no final newline.
const CURSOR_HOOKS: &str = r#"{"version":1,"hooks":{"afterFileEdit":[{"command":"./hooks/format.sh"}],"sessionStart":[{"command":"./hooks/warm.sh"}]}}"#;

/// Settings with no hooks at all, tab-indented.
const PLAIN_SETTINGS_TABS: &str = "{\n\t\"theme\": \"dark\",\n\t\"n\": 10000000000000000000000\n}\n";

fn capture(relative: &str) -> String {
    fs::read_to_string(PathBuf::from(CAPTURES).join(relative)).expect("capture file is readable")
}

/// Every starting file of the table for `harness`, before the line-end and
/// final-newline variants.
fn base_files(harness: HookHarness) -> Vec<(String, String)> {
    let mut files = vec![("plain settings, tabs".to_owned(), PLAIN_SETTINGS_TABS.to_owned())];
    match harness {
        HookHarness::ClaudeCode => files.push(("claude settings".to_owned(), CLAUDE_SETTINGS.to_owned())),
        HookHarness::Codex => {
            files.push(("codex capture".to_owned(), capture("codex/hooks.json.example")));
            files.push(("claude-shaped settings".to_owned(), CLAUDE_SETTINGS.to_owned()));
        }
        HookHarness::GeminiCli => {
            files.push(("gemini jsonc".to_owned(), GEMINI_SETTINGS_JSONC.to_owned()));
            files.push(("gemini capture".to_owned(), capture("gemini/settings.json.example")));
        }
        HookHarness::CursorAgent => files.push(("cursor one line".to_owned(), CURSOR_HOOKS.to_owned())),
        HookHarness::Copilot => {
            files.push(("copilot capture".to_owned(), capture("copilot/github-hooks.json.example")))
        }
        HookHarness::Opencode | HookHarness::Amp => {
            unreachable!("{harness} gets a plugin file, not settings")
        }
    }
    files
}

/// Each base file as it is, with CRLF line ends, and without its final
/// newline (or with one added when it had none).
fn variants(name: &str, text: &str) -> Vec<(String, String)> {
    let crlf = text.replace("\r\n", "\n").replace('\n', "\r\n");
    let other_ending = match text.strip_suffix('\n') {
        Some(without) => without.to_owned(),
        None => format!("{text}\n"),
    };
    vec![
        (name.to_owned(), text.to_owned()),
        (format!("{name}, CRLF"), crlf),
        (format!("{name}, other final newline"), other_ending),
    ]
}

struct Home {
    _root: tempfile::TempDir,
    paths: HookPaths,
    commands_bin: PathBuf,
}

impl Home {
    fn new() -> Home {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = root.path().join("project");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&project).unwrap();
        Home { paths: HookPaths::new(&home, &project), commands_bin: root.path().join("bin"), _root: root }
    }

    fn target(&self, harness: HookHarness) -> HookConfigFile {
        self.paths.target(harness, None).unwrap()
    }
}

/// Whether every byte of `original` appears in `edited` in order: install
/// only adds text when no roster hook was there before.
fn is_subsequence(original: &[u8], edited: &[u8]) -> bool {
    let mut edited = edited.iter();
    original.iter().all(|byte| edited.any(|other| other == byte))
}

#[test]
fn install_then_uninstall_gives_back_the_bytes_for_every_harness() {
    for harness in HookHarness::WITH_SETTINGS_FILES {
        for (base_name, base) in base_files(harness) {
            for (name, original) in variants(&base_name, &base) {
                let home = Home::new();
                let target = home.target(harness);
                fs::create_dir_all(target.path.parent().unwrap()).unwrap();
                fs::write(&target.path, &original).unwrap();
                let commands = HookCommands::new(harness, Some(&home.commands_bin), None).unwrap();

                let outcome =
                    install(&target, &commands).unwrap_or_else(|error| panic!("{harness} {name}: {error}"));
                assert!(outcome.changed, "{harness} {name}");
                let installed = fs::read(&target.path).unwrap();
                assert!(
                    is_subsequence(original.as_bytes(), &installed),
                    "{harness} {name}: install changed bytes it does not own:\n{}",
                    String::from_utf8_lossy(&installed)
                );
                let document = parse_hook_document(harness, &installed).unwrap();
                let found = find_installed_hooks(harness, &document);
                assert_eq!((found.session_start.len(), found.session_end.len()), (1, 1), "{harness} {name}");
                if original.contains("\r\n") {
                    let installed = String::from_utf8(installed.clone()).unwrap();
                    assert_eq!(
                        installed.matches('\n').count(),
                        installed.matches("\r\n").count(),
                        "{harness} {name}: a bare LF"
                    );
                }

                // Pure splicing: without the backup to fall back on.
                fs::remove_file(backup_path_for(&target.path)).unwrap();
                uninstall(&target, &home.paths).unwrap();
                assert_eq!(
                    String::from_utf8(fs::read(&target.path).unwrap()).unwrap(),
                    original,
                    "{harness} {name}: uninstall did not give back the original bytes"
                );

                // Installing twice changes nothing the second time.
                install(&target, &commands).unwrap();
                let once = fs::read(&target.path).unwrap();
                assert!(!install(&target, &commands).unwrap().changed, "{harness} {name}");
                assert_eq!(fs::read(&target.path).unwrap(), once, "{harness} {name}");
                uninstall(&target, &home.paths).unwrap();
                assert_eq!(
                    fs::read_to_string(&target.path).unwrap(),
                    original,
                    "{harness} {name}: second round"
                );
            }
        }
    }
}

/// A re-install after the binaries moved replaces roster's entries in place,
/// and uninstall still gives back the original bytes.
#[test]
fn reinstall_with_other_binaries_then_uninstall_gives_back_the_bytes() {
    for harness in HookHarness::WITH_SETTINGS_FILES {
        for (name, original) in base_files(harness) {
            let home = Home::new();
            let target = home.target(harness);
            fs::create_dir_all(target.path.parent().unwrap()).unwrap();
            fs::write(&target.path, &original).unwrap();
            install(&target, &HookCommands::new(harness, Some(&home.commands_bin), None).unwrap()).unwrap();
            let moved = HookCommands::new(harness, Some(&home.commands_bin.join("moved")), None).unwrap();
            assert!(install(&target, &moved).unwrap().changed);
            let text = fs::read_to_string(&target.path).unwrap();
            assert!(
                text.contains("moved/roster-register") && !text.contains("bin/roster-register "),
                "{harness} {name}"
            );
            fs::remove_file(backup_path_for(&target.path)).unwrap();
            uninstall(&target, &home.paths).unwrap();
            assert_eq!(fs::read_to_string(&target.path).unwrap(), original, "{harness} {name}");
        }
    }
}
