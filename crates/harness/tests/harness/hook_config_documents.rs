//! Table tests of hook-config merging over parsed documents (no disk): what
//! install writes for each harness, what it keeps, what it refuses, and that
//! uninstall undoes it exactly. Starting documents include the real
//! configuration files the harness captures were taken with.

use harness::hook_config::{
    HookCommands, HookEvent, HookHarness, HookPaths, Scope, find_installed_hooks, hook_snippet,
    parse_hook_document, with_hooks_installed, with_hooks_removed,
};
use serde_json::{Value, json};
use std::path::Path;

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/harness-captures");

fn capture(relative: &str) -> String {
    std::fs::read_to_string(Path::new(CAPTURES).join(relative)).expect("capture file is readable")
}

fn commands(harness: HookHarness) -> HookCommands {
    HookCommands::new(harness, Some(Path::new("/opt/roster/bin")), None).unwrap()
}

fn parse(harness: HookHarness, text: &str) -> Value {
    parse_hook_document(harness, text.as_bytes()).unwrap_or_else(|reason| panic!("{harness}: {reason}"))
}

/// A file of each harness's own shape that holds other hooks and settings.
fn file_with_other_hooks(harness: HookHarness) -> String {
    match harness {
        HookHarness::ClaudeCode => r#"{
            "model": "opus",
            "env": {"FOO": "1"},
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
                "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "greet.sh"}]}]
            },
            "permissions": {"allow": ["Bash(ls:*)"]}
        }"#
        .to_owned(),
        HookHarness::Codex => capture("codex/hooks.json.example"),
        HookHarness::GeminiCli => capture("gemini/settings.json.example"),
        HookHarness::CursorAgent => r#"{
            "version": 1,
            "hooks": {
                "beforeShellExecution": [{"command": "./audit.sh"}],
                "sessionStart": [{"command": "./greet.sh"}]
            }
        }"#
        .to_owned(),
        HookHarness::Copilot => capture("copilot/github-hooks.json.example"),
        HookHarness::Opencode | HookHarness::Amp => unreachable!("{harness} gets a plugin file, not settings"),
    }
}

#[test]
fn snippets_have_each_harness_shape() {
    let cases = [
        (
            HookHarness::ClaudeCode,
            json!({"hooks": {
                "SessionStart": [{"hooks": [{"type": "command", "command": "/opt/roster/bin/roster-register --hook claude-code", "timeout": 10}]}],
                "SessionEnd": [{"hooks": [{"type": "command", "command": "/opt/roster/bin/roster-prune --current --hook claude-code"}]}]
            }}),
        ),
        (
            HookHarness::Codex,
            json!({"hooks": {
                "SessionStart": [{"hooks": [{"type": "command", "command": "/opt/roster/bin/roster-register --hook codex", "timeout": 10}]}],
                "SessionEnd": [{"hooks": [{"type": "command", "command": "/opt/roster/bin/roster-prune --current --hook codex"}]}]
            }}),
        ),
        (
            HookHarness::GeminiCli,
            json!({"hooks": {
                "SessionStart": [{"hooks": [{"type": "command", "command": "/opt/roster/bin/roster-register --hook gemini-cli", "name": "roster-register", "timeout": 10000}]}],
                "SessionEnd": [{"hooks": [{"type": "command", "command": "/opt/roster/bin/roster-prune --current --hook gemini-cli", "name": "roster-prune"}]}]
            }}),
        ),
        (
            HookHarness::CursorAgent,
            json!({"version": 1, "hooks": {
                "sessionStart": [{"command": "/opt/roster/bin/roster-register --hook cursor-agent"}],
                "sessionEnd": [{"command": "/opt/roster/bin/roster-prune --current --hook cursor-agent"}]
            }}),
        ),
        (
            HookHarness::Copilot,
            json!({"version": 1, "hooks": {
                "sessionStart": [{"type": "command", "bash": "/opt/roster/bin/roster-register --hook copilot", "timeoutSec": 10}],
                "sessionEnd": [{"type": "command", "bash": "/opt/roster/bin/roster-prune --current --hook copilot"}]
            }}),
        ),
    ];
    for (harness, expect) in cases {
        let mut snippet = hook_snippet(harness, &commands(harness));
        // The state hooks: one per state event, each in the harness's shape.
        let hooks = snippet["hooks"].as_object_mut().unwrap();
        for event in harness.state_events() {
            let name = harness.event_name(event);
            let command = format!("/opt/roster/bin/roster-state --hook {harness} --event {name}");
            let state_entry = match harness {
                HookHarness::ClaudeCode if name == "Notification" => json!({
                    "matcher": "permission_prompt|elicitation_dialog|elicitation_url_dialog|idle_prompt",
                    "hooks": [{"type": "command", "command": command}]
                }),
                HookHarness::ClaudeCode | HookHarness::Codex => {
                    json!({"hooks": [{"type": "command", "command": command}]})
                }
                HookHarness::GeminiCli => {
                    json!({"hooks": [{"type": "command", "command": command, "name": "roster-state"}]})
                }
                HookHarness::CursorAgent => json!({"command": command}),
                HookHarness::Copilot => json!({"type": "command", "bash": command}),
                HookHarness::Opencode | HookHarness::Amp => unreachable!(),
            };
            assert_eq!(hooks.shift_remove(name), Some(json!([state_entry])), "{harness} {name}");
        }
        assert_eq!(snippet, expect, "{harness}");
    }
}

#[test]
fn install_on_every_kind_of_start_and_uninstall_undoes_it() {
    for harness in HookHarness::WITH_SETTINGS_FILES {
        let starts = [
            ("empty file", String::new()),
            ("{}", "{}".to_owned()),
            ("other hooks", file_with_other_hooks(harness)),
        ];
        for (label, text) in starts {
            let before = parse(harness, &text);
            let installed = with_hooks_installed(harness, &before, &commands(harness));
            let found = find_installed_hooks(harness, &installed);
            assert_eq!(found.session_start.len(), 1, "{harness} {label}: one SessionStart hook");
            assert_eq!(found.session_end.len(), 1, "{harness} {label}: one SessionEnd hook");
            assert_eq!(found.session_start[0].command, commands(harness).session_start);

            let again = with_hooks_installed(harness, &installed, &commands(harness));
            assert_eq!(again, installed, "{harness} {label}: a second install changes nothing");

            let removed = with_hooks_removed(harness, &installed);
            if label == "other hooks" {
                assert_eq!(removed, before, "{harness} {label}: uninstall leaves the file as it was");
            } else {
                // Nothing of the user's was there: only scaffolding install
                // added may remain (the version key of the flat shapes).
                let leftover = removed.as_object().unwrap();
                assert!(leftover.keys().all(|key| key == "version"), "{harness} {label}: left {removed}");
            }
        }
    }
}

#[test]
fn install_keeps_every_other_key_and_hook_in_place() {
    for harness in HookHarness::WITH_SETTINGS_FILES {
        let before = parse(harness, &file_with_other_hooks(harness));
        let installed = with_hooks_installed(harness, &before, &commands(harness));
        let before_keys: Vec<&String> = before.as_object().unwrap().keys().collect();
        let after_keys: Vec<&String> = installed.as_object().unwrap().keys().collect();
        assert_eq!(before_keys, after_keys, "{harness}: top-level keys keep their order");
        let before_events: Vec<&String> = before["hooks"].as_object().unwrap().keys().collect();
        let after_events: Vec<&String> = installed["hooks"].as_object().unwrap().keys().collect();
        assert_eq!(
            &after_events[..before_events.len()],
            &before_events[..],
            "{harness}: events keep their order"
        );
        let start = harness.event_name(HookEvent::SessionStart);
        let before_start = before["hooks"][start].as_array().cloned().unwrap_or_default();
        let after_start = installed["hooks"][start].as_array().unwrap();
        assert_eq!(
            &after_start[..before_start.len()],
            &before_start[..],
            "{harness}: others' hooks come first, untouched"
        );
        assert_eq!(after_start.len(), before_start.len() + 1, "{harness}: roster's entry goes last");
    }
}

#[test]
fn reinstall_replaces_an_old_roster_entry_where_it_stands() {
    let harness = HookHarness::ClaudeCode;
    let before = parse(
        harness,
        r#"{"hooks": {"SessionStart": [
            {"hooks": [{"type": "command", "command": "first.sh"}]},
            {"hooks": [{"type": "command", "command": "/old/bin/roster-register --hook claude-code"}]},
            {"hooks": [{"type": "command", "command": "last.sh"}]}
        ]}}"#,
    );
    let installed = with_hooks_installed(harness, &before, &commands(harness));
    let start = installed["hooks"]["SessionStart"].as_array().unwrap();
    let start_commands: Vec<&str> =
        start.iter().map(|group| group["hooks"][0]["command"].as_str().unwrap()).collect();
    assert_eq!(start_commands, ["first.sh", "/opt/roster/bin/roster-register --hook claude-code", "last.sh"]);
    assert_eq!(find_installed_hooks(harness, &installed).session_start[0].group_index, 1);
}

#[test]
fn a_group_shared_with_other_hooks_keeps_them() {
    let harness = HookHarness::GeminiCli;
    let before = parse(
        harness,
        r#"{"hooks": {"SessionEnd": [{"matcher": "exit", "hooks": [
            {"type": "command", "command": "roster-prune --current --hook gemini-cli"},
            {"type": "command", "command": "save-notes.sh"}
        ]}]}}"#,
    );
    let installed = with_hooks_installed(harness, &before, &commands(harness));
    let end = installed["hooks"]["SessionEnd"].as_array().unwrap();
    assert_eq!(end.len(), 2, "{end:?}");
    assert_eq!(
        end[1],
        json!({"matcher": "exit", "hooks": [{"type": "command", "command": "save-notes.sh"}]})
    );
    let removed = with_hooks_removed(harness, &installed);
    assert_eq!(removed["hooks"]["SessionEnd"], json!([end[1]]));
}

#[test]
fn duplicates_collapse_to_one_entry() {
    let harness = HookHarness::CursorAgent;
    let before = parse(
        harness,
        r#"{"version": 1, "hooks": {"sessionStart": [
            {"command": "roster-register --hook cursor-agent"},
            {"command": "./mine.sh"},
            {"command": "/usr/bin/roster-register --hook cursor-agent"}
        ]}}"#,
    );
    let installed = with_hooks_installed(harness, &before, &commands(harness));
    assert_eq!(
        installed["hooks"]["sessionStart"],
        json!([{"command": "/opt/roster/bin/roster-register --hook cursor-agent"}, {"command": "./mine.sh"}])
    );
}

#[test]
fn refuses_what_it_cannot_merge_into() {
    let cases = [
        ("{\"hooks\": ", "not valid JSON"),
        ("{\"hooks\": \"x\"}", "\"hooks\" is a string"),
        ("{\"hooks\": []}", "\"hooks\" is an array"),
        ("[]", "top level is an array"),
        ("null", "top level is null"),
        ("{\"hooks\": {\"SessionStart\": {}}}", "\"SessionStart\" is an object"),
        ("/* a comment that never ends\n{}", "not valid JSON"),
    ];
    for (text, expect) in cases {
        let reason = parse_hook_document(HookHarness::ClaudeCode, text.as_bytes()).unwrap_err();
        assert!(reason.contains(expect), "{text:?}: {reason}");
    }
    let reason = parse_hook_document(HookHarness::Copilot, b"{\"hooks\": {\"sessionEnd\": 3}}").unwrap_err();
    assert!(reason.contains("\"sessionEnd\" is a number"), "{reason}");
    assert!(parse_hook_document(HookHarness::Codex, b"\xff{}").unwrap_err().contains("UTF-8"));
    // A state event roster hooks into is refused in the same way.
    let reason =
        parse_hook_document(HookHarness::ClaudeCode, br#"{"hooks": {"Stop": "whatever"}}"#).unwrap_err();
    assert!(reason.contains("\"Stop\" is a string"), "{reason}");
    // Events roster does not manage may hold anything: they are not its business.
    parse(HookHarness::ClaudeCode, r#"{"hooks": {"PreCompact": "whatever"}}"#);
    parse(HookHarness::ClaudeCode, " \n\t");
}

#[test]
fn codex_positions_are_those_of_its_trust_keys() {
    let harness = HookHarness::Codex;
    let before = parse(harness, &capture("codex/hooks.json.example"));
    let installed = with_hooks_installed(harness, &before, &commands(harness));
    let found = find_installed_hooks(harness, &installed);
    assert_eq!((found.session_start[0].group_index, found.session_start[0].hook_index), (1, 0));
    assert_eq!((found.session_end[0].group_index, found.session_end[0].hook_index), (1, 0));
    assert!(find_installed_hooks(harness, &before).is_empty(), "the capture's own hooks are not roster's");
}

#[test]
fn configuration_files_per_harness_and_scope() {
    let mut paths = HookPaths::new(Path::new("/home/dev"), Path::new("/home/dev/src/app"));
    let cases = [
        (HookHarness::ClaudeCode, Scope::User, "/home/dev/.claude/settings.json"),
        (HookHarness::ClaudeCode, Scope::Project, "/home/dev/src/app/.claude/settings.json"),
        (HookHarness::Codex, Scope::User, "/home/dev/.codex/hooks.json"),
        (HookHarness::GeminiCli, Scope::User, "/home/dev/.gemini/settings.json"),
        (HookHarness::CursorAgent, Scope::User, "/home/dev/.cursor/hooks.json"),
        (HookHarness::Copilot, Scope::Project, "/home/dev/src/app/.github/hooks/roster.json"),
    ];
    for (harness, scope, expect) in cases {
        assert_eq!(paths.config_file(harness, scope).unwrap(), Path::new(expect), "{harness} {scope}");
    }
    for (harness, scope) in [(HookHarness::Codex, Scope::Project), (HookHarness::Copilot, Scope::User)] {
        let error = paths.config_file(harness, scope).unwrap_err();
        assert_eq!(error.exit_code(), 2, "{harness} {scope}: {error}");
    }
    assert_eq!(paths.target(HookHarness::Copilot, None).unwrap().scope, Scope::Project);
    paths.codex_home = Some("/srv/codex".into());
    paths.claude_config_dir = Some("/srv/claude".into());
    assert_eq!(
        paths.config_file(HookHarness::Codex, Scope::User).unwrap(),
        Path::new("/srv/codex/hooks.json")
    );
    assert_eq!(paths.codex_config_toml(), Path::new("/srv/codex/config.toml"));
    assert_eq!(
        paths.config_file(HookHarness::ClaudeCode, Scope::User).unwrap(),
        Path::new("/srv/claude/settings.json")
    );
}

#[test]
fn harness_names_round_trip() {
    for harness in HookHarness::ALL {
        assert_eq!(HookHarness::parse(harness.as_str()), Some(harness));
        assert_eq!(harness::Harness::from(harness).as_str(), harness.as_str());
    }
    for other in ["goose", "aider", "", "Claude-Code"] {
        assert_eq!(HookHarness::parse(other), None, "{other:?}");
    }
}
