//! Hook payload parsing and hook-harness detection: every captured payload
//! yields what its harness meant, each dialect's keys are understood, every
//! malformed payload is refused with a message naming the problem, and no
//! input makes the parser panic.

use crate::detect_support;

use std::path::PathBuf;

use detect_support::{CAPTURES, parse_ancestry, parse_env, read_capture, step};
use harness::{Harness, HookPayload, HookTarget, PayloadError, detect_hook_harness, parse_payload};
use proptest::prelude::*;

/// What a payload should parse to; `None` fields must be absent.
struct Expect {
    harness: Option<Harness>,
    session_id: Option<&'static str>,
    cwd: Option<&'static str>,
    transcript_path: Option<&'static str>,
    event: Option<&'static str>,
    source: Option<&'static str>,
    reason: Option<&'static str>,
    harness_version: Option<&'static str>,
}

const CLAUDE_ID: &str = "7c660e54-2e19-4577-b46a-16f46484eaf4";
const CLAUDE_TRANSCRIPT: &str =
    "/home/dev/.claude/projects/-home-dev-src-app/7c660e54-2e19-4577-b46a-16f46484eaf4.jsonl";
const CODEX_ID: &str = "01a22a04-20f4-7bc2-b913-caa989ffac0e";
const CODEX_TRANSCRIPT: &str = "/home/dev/.codex/sessions/2026/11/30/rollout-2026-11-30T01-14-03-01a22a04-20f4-7bc2-b913-caa989ffac0e.jsonl";
const GEMINI_ID: &str = "b5fad091-5cf2-4aa6-96be-689a62dc8d6e";
const GEMINI_TRANSCRIPT: &str =
    "/home/dev/.gemini/home/dev/src/app/chats/session-2026-11-30T01-14-b5fad091.jsonl";
const COPILOT_ID: &str = "06d83167-e077-4cfa-9650-e8ca7134f0af";
const OPENCODE_ID: &str = "ses_dd5fa19f0ffeombvWEpSihx3CJ";
const APP: Option<&str> = Some("/home/dev/src/app");

const NOTHING: Expect = Expect {
    harness: None,
    session_id: None,
    cwd: None,
    transcript_path: None,
    event: None,
    source: None,
    reason: None,
    harness_version: None,
};

fn claude(event: &'static str) -> Expect {
    Expect {
        session_id: Some(CLAUDE_ID),
        cwd: APP,
        transcript_path: Some(CLAUDE_TRANSCRIPT),
        event: Some(event),
        ..NOTHING
    }
}

fn codex(event: &'static str) -> Expect {
    Expect {
        session_id: Some(CODEX_ID),
        cwd: APP,
        transcript_path: Some(CODEX_TRANSCRIPT),
        event: Some(event),
        ..NOTHING
    }
}

fn gemini(event: &'static str) -> Expect {
    Expect {
        session_id: Some(GEMINI_ID),
        cwd: APP,
        transcript_path: Some(GEMINI_TRANSCRIPT),
        event: Some(event),
        ..NOTHING
    }
}

fn copilot() -> Expect {
    Expect { harness: Some(Harness::Copilot), session_id: Some(COPILOT_ID), cwd: APP, ..NOTHING }
}

/// Every captured payload and what it must parse to.
fn captured_payloads() -> Vec<(&'static str, Expect)> {
    vec![
        (
            "claude-code-2.1.328/session-start.json",
            Expect { source: Some("startup"), ..claude("SessionStart") },
        ),
        ("claude-code-2.1.328/user-prompt-submit.json", claude("UserPromptSubmit")),
        ("claude-code-2.1.328/session-end.json", Expect { reason: Some("other"), ..claude("SessionEnd") }),
        ("codex/session-start.json", Expect { source: Some("startup"), ..codex("SessionStart") }),
        ("codex/user-prompt-submit.json", codex("UserPromptSubmit")),
        ("codex/stop.json", codex("Stop")),
        ("codex/session-end.json", Expect { reason: Some("other"), ..codex("SessionEnd") }),
        ("gemini/session-start.json", Expect { source: Some("startup"), ..gemini("SessionStart") }),
        ("gemini/before-agent.json", gemini("BeforeAgent")),
        ("gemini/before-model.json", gemini("BeforeModel")),
        ("gemini/after-model.json", gemini("AfterModel")),
        ("gemini/after-agent.json", gemini("AfterAgent")),
        ("gemini/session-end.json", Expect { reason: Some("exit"), ..gemini("SessionEnd") }),
        (
            "gemini/session-end-offline-sigterm.json",
            Expect {
                session_id: Some("ded2a687-3074-4f99-be40-74530f619489"),
                transcript_path: Some(
                    "/home/dev/.gemini/home/dev/src/app/chats/session-2026-11-30T01-10-ded2a687.jsonl",
                ),
                reason: Some("exit"),
                ..gemini("SessionEnd")
            },
        ),
        ("copilot/session-start.json", Expect { source: Some("new"), ..copilot() }),
        ("copilot/user-prompt-submitted.json", copilot()),
        (
            "copilot/agent-stop.json",
            Expect {
                transcript_path: Some(
                    "/home/dev/.copilot/session-state/06d83167-e077-4cfa-9650-e8ca7134f0af/events.jsonl",
                ),
                ..copilot()
            },
        ),
        ("copilot/session-end.json", Expect { reason: Some("complete"), ..copilot() }),
        (
            "opencode/plugin-session-created.json",
            Expect {
                harness: Some(Harness::Opencode),
                session_id: Some(OPENCODE_ID),
                cwd: APP,
                event: Some("session.created"),
                harness_version: Some("1.18.33"),
                ..NOTHING
            },
        ),
        (
            "opencode/plugin-session-idle.json",
            Expect {
                harness: Some(Harness::Opencode),
                session_id: Some(OPENCODE_ID),
                event: Some("session.idle"),
                ..NOTHING
            },
        ),
    ]
}

fn check(label: &str, payload: &HookPayload, expect: &Expect) {
    assert_eq!(payload.harness, expect.harness, "{label}: harness");
    assert_eq!(payload.session_id.as_deref(), expect.session_id, "{label}: session_id");
    assert_eq!(payload.cwd, expect.cwd.map(PathBuf::from), "{label}: cwd");
    assert_eq!(payload.transcript_path.as_deref(), expect.transcript_path, "{label}: transcript_path");
    assert_eq!(payload.event.as_deref(), expect.event, "{label}: event");
    assert_eq!(payload.source.as_deref(), expect.source, "{label}: source");
    assert_eq!(payload.reason.as_deref(), expect.reason, "{label}: reason");
    assert_eq!(payload.harness_version.as_deref(), expect.harness_version, "{label}: harness_version");
}

fn check_text(text: &str, expect: &Expect) {
    let payload = parse_payload(text.as_bytes()).unwrap_or_else(|error| panic!("{text}: {error}"));
    check(text, &payload, expect);
}

fn check_error(bytes: &[u8], expect: PayloadError) {
    assert_eq!(parse_payload(bytes), Err(expect), "{:?}", String::from_utf8_lossy(bytes));
}

#[test]
fn every_captured_payload_parses_to_what_its_harness_meant() {
    for (capture, expect) in captured_payloads() {
        let payload = parse_payload(read_capture(capture).as_bytes())
            .unwrap_or_else(|error| panic!("{capture}: {error}"));
        check(capture, &payload, &expect);
    }
}

#[test]
fn no_captured_payload_is_left_out_of_the_table() {
    let listed: Vec<&str> = captured_payloads().into_iter().map(|(capture, _)| capture).collect();
    let mut found = 0;
    for folder in std::fs::read_dir(CAPTURES).expect("captures folder") {
        let folder = folder.expect("captures entry").path();
        if !folder.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&folder).expect("capture folder") {
            let path = file.expect("capture file").path();
            if path.extension().is_some_and(|extension| extension == "json") {
                let relative = path.strip_prefix(CAPTURES).unwrap().to_str().unwrap().trim_start_matches('/');
                assert!(listed.contains(&relative), "{relative} has no expectation");
                found += 1;
            }
        }
    }
    assert_eq!(found, listed.len());
}

#[test]
fn cursor_payloads() {
    // Cursor's own hook shape.
    check_text(
        r#"{"conversation_id":"conv-1","generation_id":"gen-1","hook_event_name":"sessionStart",
            "cursor_version":"1.7.52","workspace_roots":["/home/dev/src/app","/home/dev/src/lib"],
            "user_email":null,"transcript_path":"/home/dev/.cursor/t.jsonl"}"#,
        &Expect {
            harness: Some(Harness::CursorAgent),
            session_id: Some("conv-1"),
            cwd: APP,
            transcript_path: Some("/home/dev/.cursor/t.jsonl"),
            event: Some("sessionStart"),
            harness_version: Some("1.7.52"),
            ..NOTHING
        },
    );
    // Cursor running Claude Code's hooks: Claude's keys plus `cursor_version`.
    check_text(
        r#"{"session_id":"sess-1","conversation_id":"sess-1","cwd":"/home/dev/src/app",
            "hook_event_name":"SessionStart","source":"startup","cursor_version":"2.0.1"}"#,
        &Expect {
            harness: Some(Harness::CursorAgent),
            session_id: Some("sess-1"),
            cwd: APP,
            event: Some("SessionStart"),
            source: Some("startup"),
            harness_version: Some("2.0.1"),
            ..NOTHING
        },
    );
    check_text(r#"{"workspace_roots":[]}"#, &Expect { harness: Some(Harness::CursorAgent), ..NOTHING });
}

#[test]
fn other_dialects() {
    check_text(
        r#"{"session_id":"g-1","working_dir":"/home/dev/src/app","hookEventName":"SessionStart"}"#,
        &Expect {
            harness: Some(Harness::Goose),
            session_id: Some("g-1"),
            cwd: APP,
            event: Some("SessionStart"),
            ..NOTHING
        },
    );
    // `cwd` beats the other directory keys.
    check_text(
        r#"{"cwd":"/a","working_dir":"/b","workspace_roots":["/c"]}"#,
        &Expect { harness: Some(Harness::CursorAgent), cwd: Some("/a"), ..NOTHING },
    );
    // An event named `session.…` with Claude's keys is not an opencode event.
    check_text(
        r#"{"type":"session.created","properties":{},"hook_event_name":"SessionStart","session_id":"c"}"#,
        &Expect { session_id: Some("c"), event: Some("SessionStart"), ..NOTHING },
    );
}

#[test]
fn missing_null_and_unknown_keys_are_fine() {
    check_text("{}", &NOTHING);
    check_text(" \n{ } \n", &NOTHING);
    check_text(r#"{"session_id":null,"cwd":null,"workspace_roots":null}"#, &NOTHING);
    check_text(
        r#"{"future_key":{"nested":[1,2,{"x":null}]},"prompt":"hi","timestamp":1796001253227,"cwd":"/x"}"#,
        &Expect { cwd: Some("/x"), ..NOTHING },
    );
}

#[test]
fn malformed_payloads_are_refused_with_what_was_wrong() {
    check_error(b"", PayloadError::Empty);
    check_error(b" \n\t", PayloadError::Empty);
    check_error(b"[]", PayloadError::NotObject { found: "an array" });
    check_error(b"null", PayloadError::NotObject { found: "null" });
    check_error(b"\"session\"", PayloadError::NotObject { found: "a string" });
    check_error(b"42", PayloadError::NotObject { found: "a number" });
    check_error(b"{\"session_id\":\"\xff\"}", PayloadError::NotUtf8 { valid_up_to: 15 });

    let wrong_type = |key: &str, expected: &'static str, found: &'static str| PayloadError::WrongType {
        key: key.to_owned(),
        expected,
        found,
    };
    check_error(br#"{"cwd":5}"#, wrong_type("cwd", "a string", "a number"));
    check_error(br#"{"session_id":true}"#, wrong_type("session_id", "a string", "a boolean"));
    check_error(br#"{"sessionId":{"id":"x"}}"#, wrong_type("sessionId", "a string", "an object"));
    check_error(
        br#"{"hook_event_name":["SessionStart"]}"#,
        wrong_type("hook_event_name", "a string", "an array"),
    );
    check_error(
        br#"{"workspace_roots":"/x"}"#,
        wrong_type("workspace_roots", "an array of strings", "a string"),
    );
    check_error(br#"{"workspace_roots":[5]}"#, wrong_type("workspace_roots[0]", "a string", "a number"));
    // A wrongly typed alternative is refused even beside a good key.
    check_error(br#"{"session_id":"a","sessionId":7}"#, wrong_type("sessionId", "a string", "a number"));
    check_error(
        br#"{"type":"session.created","properties":{"sessionID":5}}"#,
        wrong_type("properties.sessionID", "a string", "a number"),
    );
    check_error(
        br#"{"type":"session.created","properties":{"info":{"directory":["/x"]}}}"#,
        wrong_type("properties.info.directory", "a string", "an array"),
    );
}

#[test]
fn truncated_json_is_refused() {
    let whole = read_capture("claude-code-2.1.328/session-start.json");
    for cut in [1, 10, whole.len() / 2, whole.trim_end().len() - 1] {
        let error = parse_payload(&whole.as_bytes()[..cut]).expect_err("a truncated payload");
        assert!(matches!(error, PayloadError::NotJson { .. }), "cut at {cut}: {error:?}");
        assert!(error.to_string().starts_with("hook payload is not valid JSON: "), "{error}");
    }
    // Trailing garbage after the object is not JSON either.
    let error = parse_payload(b"{} {}").expect_err("two objects");
    assert!(matches!(error, PayloadError::NotJson { .. }), "{error:?}");
}

#[test]
fn error_messages_are_one_line_and_say_what_was_wrong() {
    let cases = [
        (PayloadError::Empty, "hook payload is empty, expected a JSON object"),
        (PayloadError::NotObject { found: "an array" }, "hook payload is not a JSON object but an array"),
        (
            PayloadError::WrongType { key: "cwd".into(), expected: "a string", found: "a number" },
            "hook payload key `cwd` is a number, expected a string",
        ),
        (PayloadError::NotUtf8 { valid_up_to: 3 }, "hook payload is not valid UTF-8 (byte 3)"),
    ];
    for (error, expect) in cases {
        assert_eq!(error.to_string(), expect);
        assert_eq!(error.exit_code(), 2);
    }
    let not_json = parse_payload(b"{\"a\":\n\n").unwrap_err().to_string();
    assert!(!not_json.contains('\n'), "{not_json:?}");
}

#[test]
fn hook_targets() {
    let cases = [
        ("auto", Some(HookTarget::Auto)),
        ("claude-code", Some(HookTarget::Named(Harness::ClaudeCode))),
        ("claude", Some(HookTarget::Named(Harness::ClaudeCode))),
        ("gemini-cli", Some(HookTarget::Named(Harness::GeminiCli))),
        ("gemini", Some(HookTarget::Named(Harness::GeminiCli))),
        ("cursor-agent", Some(HookTarget::Named(Harness::CursorAgent))),
        ("cursor", Some(HookTarget::Named(Harness::CursorAgent))),
        ("codex", Some(HookTarget::Named(Harness::Codex))),
        ("copilot", Some(HookTarget::Named(Harness::Copilot))),
        ("goose", Some(HookTarget::Named(Harness::Goose))),
        ("opencode", Some(HookTarget::Named(Harness::Opencode))),
        ("aider", Some(HookTarget::Named(Harness::Aider))),
        ("Auto", None),
        ("", None),
        ("claude code", None),
        (" codex", None),
    ];
    for (text, expect) in cases {
        assert_eq!(HookTarget::parse(text), expect, "{text:?}");
    }
}

#[test]
fn hook_harness_detection() {
    let no_env = |_: &str| None;
    let parse = |capture: &str| parse_payload(read_capture(capture).as_bytes()).unwrap();
    let ancestry = |capture: &str| parse_ancestry(&read_capture(capture));

    // Each capture, auto: payload and ancestry agree on the harness.
    let cases = [
        ("claude-code-2.1.328/session-start.json", "claude-code-2.1.328/ancestry.txt", Harness::ClaudeCode),
        ("codex/session-start.json", "codex/ancestry-session-start.txt", Harness::Codex),
        ("gemini/session-end.json", "gemini/ancestry-session-end.txt", Harness::GeminiCli),
        ("copilot/session-start.json", "copilot/ancestry-session-start.txt", Harness::Copilot),
    ];
    for (payload, tree, expect) in cases {
        let detected = detect_hook_harness(HookTarget::Auto, &parse(payload), &ancestry(tree), &no_env);
        assert_eq!(detected, Some(expect), "{payload}");
    }

    // Named wins over everything.
    let claude_payload = parse("claude-code-2.1.328/session-start.json");
    let claude_tree = ancestry("claude-code-2.1.328/ancestry.txt");
    let named = HookTarget::Named(Harness::Goose);
    assert_eq!(detect_hook_harness(named, &claude_payload, &claude_tree, &no_env), Some(Harness::Goose));

    // Cursor runs Claude Code's hooks: its payload's `cursor_version` beats
    // whatever `claude` the ancestry shows.
    let cursor_payload = parse_payload(br#"{"session_id":"s","cursor_version":"2.0.1"}"#).unwrap();
    let detected = detect_hook_harness(HookTarget::Auto, &cursor_payload, &claude_tree, &no_env);
    assert_eq!(detected, Some(Harness::CursorAgent));

    // No harness in the payload nor the ancestry: the environment's hint.
    let plain_tree =
        [step(30, 20, "bash", &["/bin/bash", "-c", "x"], Some("bash")), step(20, 1, "sh", &["sh"], None)];
    let gemini_env = parse_env(&read_capture("gemini/env.txt"));
    let gemini_lookup = |name: &str| gemini_env.get(name).cloned();
    let detected = detect_hook_harness(HookTarget::Auto, &claude_payload, &plain_tree, &gemini_lookup);
    assert_eq!(detected, Some(Harness::GeminiCli));
    // The ancestry beats the environment.
    let detected = detect_hook_harness(HookTarget::Auto, &claude_payload, &claude_tree, &gemini_lookup);
    assert_eq!(detected, Some(Harness::ClaudeCode));
    // Nothing anywhere.
    assert_eq!(detect_hook_harness(HookTarget::Auto, &claude_payload, &plain_tree, &no_env), None);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_payload(&bytes);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[{}\\[\\]\":, a-z0-9_.\\\\]{0,64}") {
        let _ = parse_payload(text.as_bytes());
    }

    #[test]
    fn session_id_and_cwd_round_trip(
        session_id in any::<String>(),
        cwd in "/[^\u{0}]{0,40}",
        noise in any::<String>(),
        copilot_dialect in any::<bool>(),
    ) {
        let session_key = if copilot_dialect { "sessionId" } else { "session_id" };
        let payload = serde_json::json!({
            session_key: session_id,
            "cwd": cwd,
            "hook_event_name": "SessionStart",
            "unknown_key": noise,
        });
        let parsed = parse_payload(payload.to_string().as_bytes()).unwrap();
        prop_assert_eq!(parsed.session_id.as_deref(), Some(session_id.as_str()));
        prop_assert_eq!(parsed.cwd, Some(PathBuf::from(&cwd)));
        prop_assert_eq!(parsed.harness, copilot_dialect.then_some(Harness::Copilot));
    }
}

// Regression: Cursor also runs Claude Code's hooks, so a session with both
// hook sets installed called `--hook claude-code` with Cursor's payload and
// its record flip-flopped between the two harness names.
#[test]
fn a_claude_code_hook_carrying_cursor_keys_is_cursor() {
    let payload =
        parse_payload(br#"{"conversation_id":"c1","cursor_version":"1.7.2","workspace_roots":["/w"]}"#)
            .unwrap();
    let env = |_: &str| None;
    let named = HookTarget::Named(Harness::ClaudeCode);
    assert_eq!(detect_hook_harness(named, &payload, &[], &env), Some(Harness::CursorAgent));
    let plain = parse_payload(br#"{"session_id":"s1","cwd":"/w"}"#).unwrap();
    assert_eq!(detect_hook_harness(named, &plain, &[], &env), Some(Harness::ClaudeCode));
    let codex = HookTarget::Named(Harness::Codex);
    assert_eq!(detect_hook_harness(codex, &payload, &[], &env), Some(Harness::Codex));
}
