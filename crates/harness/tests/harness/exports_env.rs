//! The environment rules as tables: session-id exports, versions, the
//! messaging socket and harness hints, on hand-written environments and on
//! the environments real harnesses handed their hooks.

use crate::detect_support;

use std::collections::HashMap;
use std::path::PathBuf;

use detect_support::{parse_env, read_capture};
use harness::{
    Harness, harness_from_env, harness_version_from_env, messaging_socket_from_env, session_id_from_env,
};

/// One `NAME=value` of a hand-written environment.
type EnvPair<'a> = (&'a str, &'a str);

fn env_of(pairs: &[EnvPair]) -> HashMap<String, String> {
    pairs.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
}

fn captured_env(relative_path: &str) -> HashMap<String, String> {
    parse_env(&read_capture(relative_path))
}

fn session_id(harness: Option<Harness>, env: &HashMap<String, String>) -> Option<(&'static str, String)> {
    session_id_from_env(harness, &|name| env.get(name).cloned())
}

fn version(harness: Option<Harness>, env: &HashMap<String, String>) -> Option<String> {
    harness_version_from_env(harness, &|name| env.get(name).cloned())
}

fn hint(env: &HashMap<String, String>) -> Option<Harness> {
    harness_from_env(&|name| env.get(name).cloned())
}

fn socket(env: &HashMap<String, String>) -> Option<PathBuf> {
    messaging_socket_from_env(&|name| env.get(name).cloned())
}

#[test]
fn session_id_exports() {
    let all = env_of(&[
        ("CLAUDE_CODE_SESSION_ID", "claude-id"),
        ("GEMINI_SESSION_ID", "gemini-id"),
        ("CODEX_THREAD_ID", "codex-id"),
        ("AGENT_SESSION_ID", "generic-id"),
    ]);
    let expect = |variable: &'static str, value: &str| Some((variable, value.to_owned()));
    let cases = [
        (Some(Harness::ClaudeCode), &all, expect("CLAUDE_CODE_SESSION_ID", "claude-id")),
        (Some(Harness::GeminiCli), &all, expect("GEMINI_SESSION_ID", "gemini-id")),
        (Some(Harness::Codex), &all, expect("CODEX_THREAD_ID", "codex-id")),
        // No own variable: only the harness-neutral one.
        (Some(Harness::Copilot), &all, expect("AGENT_SESSION_ID", "generic-id")),
        (Some(Harness::Opencode), &all, expect("AGENT_SESSION_ID", "generic-id")),
        // Unknown harness: the fixed order.
        (None, &all, expect("CLAUDE_CODE_SESSION_ID", "claude-id")),
    ];
    for (harness, env, expect) in cases {
        assert_eq!(session_id(harness, env), expect, "{harness:?}");
    }

    let only_generic = env_of(&[("AGENT_SESSION_ID", "generic-id")]);
    assert_eq!(
        session_id(Some(Harness::ClaudeCode), &only_generic),
        expect("AGENT_SESSION_ID", "generic-id")
    );
    assert_eq!(session_id(None, &only_generic), expect("AGENT_SESSION_ID", "generic-id"));
    let codex_only = env_of(&[("CODEX_THREAD_ID", "codex-id")]);
    assert_eq!(session_id(None, &codex_only), expect("CODEX_THREAD_ID", "codex-id"));
    assert_eq!(session_id(None, &HashMap::new()), None);
    // Empty counts as unset.
    let empty = env_of(&[("CLAUDE_CODE_SESSION_ID", ""), ("GEMINI_SESSION_ID", "gemini-id")]);
    assert_eq!(session_id(None, &empty), expect("GEMINI_SESSION_ID", "gemini-id"));
    assert_eq!(session_id(Some(Harness::ClaudeCode), &empty), None);
}

#[test]
fn a_session_id_leaked_from_an_outer_harness_is_not_taken() {
    // Codex started from Claude Code's shell inherits its session id; the
    // codex record must not carry the claude session's id.
    let env = env_of(&[("CLAUDE_CODE_SESSION_ID", "claude-id"), ("CLAUDECODE", "1")]);
    assert_eq!(session_id(Some(Harness::Codex), &env), None);
}

#[test]
fn session_ids_of_the_captures() {
    let claude = captured_env("claude-code-2.1.328/env.txt");
    let claude_id = Some(("CLAUDE_CODE_SESSION_ID", "7c660e54-2e19-4577-b46a-16f46484eaf4".to_owned()));
    assert_eq!(session_id(Some(Harness::ClaudeCode), &claude), claude_id);
    assert_eq!(session_id(None, &claude), claude_id);

    let gemini = captured_env("gemini/env.txt");
    let gemini_id = Some(("GEMINI_SESSION_ID", "b5fad091-5cf2-4aa6-96be-689a62dc8d6e".to_owned()));
    assert_eq!(session_id(Some(Harness::GeminiCli), &gemini), gemini_id);
    assert_eq!(session_id(None, &gemini), gemini_id);

    for (capture, harness) in [
        ("codex/env.txt", Harness::Codex),
        ("copilot/env.txt", Harness::Copilot),
        ("opencode/env-bash-tool.txt", Harness::Opencode),
    ] {
        assert_eq!(session_id(Some(harness), &captured_env(capture)), None, "{capture}");
    }
}

#[test]
fn versions() {
    let claude = env_of(&[("AI_AGENT", "claude-code_2-1-328_harness")]);
    assert_eq!(version(Some(Harness::ClaudeCode), &claude).as_deref(), Some("2.1.328"));
    assert_eq!(version(None, &claude).as_deref(), Some("2.1.328"));
    // Leaked from an outer Claude Code into a codex session.
    assert_eq!(version(Some(Harness::Codex), &claude), None);

    let copilot = env_of(&[("COPILOT_CLI_BINARY_VERSION", "1.0.102")]);
    assert_eq!(version(Some(Harness::Copilot), &copilot).as_deref(), Some("1.0.102"));
    assert_eq!(version(None, &copilot).as_deref(), Some("1.0.102"));
    assert_eq!(version(Some(Harness::GeminiCli), &copilot), None);

    let both =
        env_of(&[("AI_AGENT", "claude-code_2-1-328_harness"), ("COPILOT_CLI_BINARY_VERSION", "1.0.102")]);
    assert_eq!(version(Some(Harness::Copilot), &both).as_deref(), Some("1.0.102"));
    assert_eq!(version(Some(Harness::ClaudeCode), &both).as_deref(), Some("2.1.328"));

    let malformed = [
        ("AI_AGENT", "claude-code_2.1.328_harness"),
        ("AI_AGENT", "claude-code_2-1-328"),
        ("AI_AGENT", "claude-code"),
        ("AI_AGENT", "unknown-agent_1-0_harness"),
        ("AI_AGENT", ""),
        ("COPILOT_CLI_BINARY_VERSION", "latest"),
        ("COPILOT_CLI_BINARY_VERSION", "1.0.102\n"),
        ("COPILOT_CLI_BINARY_VERSION", "1..0"),
        ("COPILOT_CLI_BINARY_VERSION", ""),
    ];
    for (variable, value) in malformed {
        let env = env_of(&[(variable, value)]);
        assert_eq!(version(None, &env), None, "{variable}={value:?}");
        assert_eq!(version(Some(Harness::ClaudeCode), &env), None, "{variable}={value:?}");
        assert_eq!(version(Some(Harness::Copilot), &env), None, "{variable}={value:?}");
    }
}

#[test]
fn versions_of_the_captures() {
    let cases = [
        ("claude-code-2.1.328/env.txt", Harness::ClaudeCode, Some("2.1.328")),
        ("copilot/env.txt", Harness::Copilot, Some("1.0.102")),
        ("codex/env.txt", Harness::Codex, None),
        ("gemini/env.txt", Harness::GeminiCli, None),
        ("opencode/env-bash-tool.txt", Harness::Opencode, None),
    ];
    for (capture, harness, expect) in cases {
        assert_eq!(version(Some(harness), &captured_env(capture)).as_deref(), expect, "{capture}");
    }
}

#[test]
fn messaging_socket() {
    let claude = captured_env("claude-code-2.1.328/env.txt");
    assert_eq!(socket(&claude), Some(PathBuf::from("/tmp/cc-socks/6753.sock")));
    assert_eq!(socket(&env_of(&[("CLAUDE_CODE_MESSAGING_SOCKET", "")])), None);
    assert_eq!(socket(&env_of(&[("CLAUDE_CODE_MESSAGING_SOCKET", "relative.sock")])), None);
    assert_eq!(socket(&HashMap::new()), None);
    for capture in ["codex/env.txt", "gemini/env.txt", "copilot/env.txt", "opencode/env-bash-tool.txt"] {
        assert_eq!(socket(&captured_env(capture)), None, "{capture}");
    }
}

#[test]
fn harness_hints_of_the_captures() {
    let cases = [
        ("claude-code-2.1.328/env.txt", Harness::ClaudeCode),
        ("codex/env.txt", Harness::Codex),
        // Both set CLAUDE_PROJECT_DIR, which is no evidence of Claude Code.
        ("gemini/env.txt", Harness::GeminiCli),
        ("copilot/env.txt", Harness::Copilot),
        ("opencode/env-bash-tool.txt", Harness::Opencode),
    ];
    for (capture, expect) in cases {
        assert_eq!(hint(&captured_env(capture)), Some(expect), "{capture}");
    }
}

#[test]
fn harness_hints() {
    let cases: [(&[EnvPair], Option<Harness>); 10] = [
        (&[], None),
        (&[("CLAUDE_PROJECT_DIR", "/home/dev/src/app")], None),
        (&[("CLAUDECODE", "1")], Some(Harness::ClaudeCode)),
        (&[("CLAUDECODE", "0")], None),
        (&[("CLAUDECODE", "")], None),
        (&[("CURSOR_AGENT", "1")], Some(Harness::CursorAgent)),
        (&[("CODEX_THREAD_ID", "t")], Some(Harness::Codex)),
        (&[("AI_AGENT", "gemini-cli_0-61-0_harness")], Some(Harness::GeminiCli)),
        (&[("AGENT", "1")], None),
        // Claude Code's variables leak into everything it starts, so an
        // inner harness's own variable wins.
        (&[("CLAUDECODE", "1"), ("GEMINI_SESSION_ID", "g")], Some(Harness::GeminiCli)),
    ];
    for (pairs, expect) in cases {
        assert_eq!(hint(&env_of(pairs)), expect, "{pairs:?}");
    }
}
