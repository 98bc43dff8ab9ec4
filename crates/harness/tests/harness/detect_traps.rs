//! Detection on hand-built processes and trees: each known disguise of a
//! harness process (docs/contract.md §8.1), each interpreter form, and the lookalikes
//! that must not count.

use crate::detect_support;

use detect_support::step;
use harness::{Harness, HarnessTable, harness_of};
use owner_liveness::{AncestorStep, HarnessPatterns, OwnerQuery, OwnerSource, Pid, PidExport, resolve_owner};

/// One process: comm, argv, exe basename → expected harness.
fn check(comm: &str, argv: &[&str], exe_basename: Option<&str>, expect: Option<Harness>) {
    let process = step(100, 1, comm, argv, exe_basename);
    assert_eq!(harness_of(&process), expect, "comm {comm:?} argv {argv:?} exe {exe_basename:?}");
    assert_eq!(HarnessTable.harness_of(&process), expect.map(Harness::as_str));
}

fn owner_of(steps: &[AncestorStep]) -> (u32, Option<&'static str>) {
    let no_env = |_: &str| None;
    let query =
        OwnerQuery { flag: None, env: &no_env, parent: steps[1].pid, ancestry: steps, pid_max: 4_194_304 };
    let owner = resolve_owner(&query, &HarnessTable).expect("an owner");
    assert_eq!(owner.source, OwnerSource::Ancestor);
    (owner.pid.get(), owner.harness)
}

#[test]
fn native_claude_whose_comm_and_exe_are_its_version() {
    let versioned = Some("2.1.128");
    check("2.1.128", &["/home/dev/.local/bin/claude", "--resume"], versioned, Some(Harness::ClaudeCode));
    check("2.1.128", &["claude"], versioned, Some(Harness::ClaudeCode));
    // argv unreadable and only the version left: nothing names claude.
    check("2.1.128", &[], versioned, None);
}

#[test]
fn claude_code_as_a_node_script() {
    // Older npm installs: node runs the `claude` link, or the process has
    // retitled itself so argv[0] and comm read `claude`.
    check("node", &["node", "/usr/local/bin/claude"], Some("node"), Some(Harness::ClaudeCode));
    check("claude", &["claude"], Some("node"), Some(Harness::ClaudeCode));
}

#[test]
fn gemini_relaunch_is_two_node_processes_of_one_harness() {
    let gemini = "/home/dev/.npm/lib/node_modules/.bin/gemini";
    let inner = ["/usr/bin/node", "--max-old-space-size=12052", gemini, "-p"];
    check("node", &inner, Some("node"), Some(Harness::GeminiCli));
    check("node", &["node", gemini], Some("node"), Some(Harness::GeminiCli));
    // The package's entry point run directly.
    check("node", &["node", "/opt/gemini-cli/bundle/gemini.js"], Some("node"), Some(Harness::GeminiCli));

    let tree = [
        step(
            40,
            30,
            "roster-register",
            &["/usr/bin/roster-register", "--hook", "auto"],
            Some("roster-register"),
        ),
        step(30, 20, "bash", &["/bin/bash", "-c", "roster-register --hook auto"], Some("bash")),
        step(20, 10, "node", &inner, Some("node")),
        step(10, 5, "node", &["node", gemini, "-p", "hi"], Some("node")),
        step(5, 1, "zsh", &["-zsh"], Some("zsh")),
    ];
    assert_eq!(owner_of(&tree), (10, Some("gemini-cli")));
}

#[test]
fn node_loaders_above_native_codex_and_copilot() {
    let codex_native = "/x/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";
    check("codex", &[codex_native, "exec"], Some("codex"), Some(Harness::Codex));
    check("node", &["node", "/x/node_modules/.bin/codex", "exec"], Some("node"), Some(Harness::Codex));
    check("node", &["node", "/x/@openai/codex/bin/codex.js"], Some("node"), Some(Harness::Codex));
    check("node", &["node", "/x/node_modules/.bin/copilot"], Some("node"), Some(Harness::Copilot));

    let tree = [
        step(40, 30, "roster-register", &["roster-register"], Some("roster-register")),
        step(30, 20, "bash", &["/bin/bash", "-c", "roster-register"], Some("bash")),
        step(20, 10, "codex", &[codex_native, "exec"], Some("codex")),
        step(10, 5, "node", &["node", "/x/node_modules/.bin/codex", "exec"], Some("node")),
        step(5, 1, "bash", &["-bash"], Some("bash")),
    ];
    assert_eq!(owner_of(&tree), (10, Some("codex")));
}

#[test]
fn native_copilot_shows_comm_main_thread() {
    let native = "/x/@github/copilot-linux-x64/copilot";
    check("MainThread", &[native, "-p", "hi"], Some("copilot"), Some(Harness::Copilot));
    // argv unreadable: the exe alone still says copilot.
    check("MainThread", &[], Some("copilot"), Some(Harness::Copilot));
    // Neither argv nor exe: a thread name is no evidence.
    check("MainThread", &[], None, None);
}

#[test]
fn cursor_agent_counts_under_its_own_name_or_as_agent_with_a_cursor_path() {
    let install = "/home/dev/.local/share/cursor-agent/versions/2026.01.01-abc1234";
    let node = format!("{install}/node");
    let index = format!("{install}/index.js");
    check("cursor-agent", &["cursor-agent"], None, Some(Harness::CursorAgent));
    check("node", &["/home/dev/.local/bin/cursor-agent", "-p"], Some("node"), Some(Harness::CursorAgent));
    // Renamed to `agent`, argv still showing the install.
    check("agent", &[&node, "--use-system-ca", &index], Some("node"), Some(Harness::CursorAgent));
    check("agent", &["/home/dev/.cursor/bin/agent", "-p"], Some("agent"), Some(Harness::CursorAgent));
    // The bundled node running the agent's script, not yet renamed.
    check("node", &[&node, "--use-system-ca", &index], Some("node"), Some(Harness::CursorAgent));
}

#[test]
fn a_bare_agent_is_not_cursor() {
    check("agent", &["agent"], Some("agent"), None);
    check("agent", &["/opt/buildkite/bin/agent", "start"], Some("agent"), None);
    check("agent", &[], None, None);
    // A cursor path without the `agent` name, outside the install layout.
    check("node", &["node", "/home/dev/src/cursor-agent/index.js"], Some("node"), None);
    check("node", &["node", "/home/dev/.cursor/extensions/x/server.js"], Some("node"), None);
    // Substrings of the marker are not the marker.
    check("agent", &["/home/dev/my-cursor-agent-tools/agent"], Some("agent"), None);
}

#[test]
fn opencode_native_binary_named_dot_exe() {
    check(
        "opencode",
        &["/x/node_modules/.bin/opencode", "run"],
        Some("opencode.exe"),
        Some(Harness::Opencode),
    );
    check("bun", &[], Some("opencode.exe"), Some(Harness::Opencode));
    check("bun", &["bun", "run", "/x/opencode/src/index.ts"], Some("bun"), None);
    check("bun", &["bun", "run", "/x/bin/opencode"], Some("bun"), Some(Harness::Opencode));
}

#[test]
fn interpreter_forms() {
    let python_cases: [(&[&str], Option<Harness>); 7] = [
        (&["/usr/bin/python3.12", "/home/dev/.local/bin/aider", "--model"], Some(Harness::Aider)),
        (&["python3", "-m", "aider"], Some(Harness::Aider)),
        (&["python", "-m", "aider.main"], Some(Harness::Aider)),
        (&["python3", "-W", "ignore", "/x/bin/aider"], Some(Harness::Aider)),
        (&["python3", "-I", "-X", "utf8", "/x/bin/aider"], None), // fifth entry cut by the walk
        (&["python3", "-c", "import aider"], None),
        (&["python3", "-m", "aider_helper"], None),
    ];
    for (argv, expect) in python_cases {
        check("python3", argv, Some("python3.12"), expect);
    }
    let node_cases: [(&[&str], Option<Harness>); 8] = [
        (&["node", "-r", "ts-node/register", "/x/.bin/codex"], Some(Harness::Codex)),
        (&["node", "--inspect", "/x/.bin/gemini"], Some(Harness::GeminiCli)),
        (&["node", "--", "/x/.bin/claude"], Some(Harness::ClaudeCode)),
        (&["node", "-e", "require('/x/.bin/codex')"], None),
        (&["node", "-p", "1"], None),
        (&["node", "-"], None),
        (&["node"], None),
        // `run` is a script file to node, which has no subcommands.
        (&["node", "run", "/x/.bin/codex"], None),
    ];
    for (argv, expect) in node_cases {
        check("node", argv, Some("node"), expect);
    }
    check("deno", &["deno", "run", "-A", "/x/gemini.js"], Some("deno"), Some(Harness::GeminiCli));
    check("nodejs", &["nodejs", "/x/.bin/codex"], Some("nodejs"), Some(Harness::Codex));
    // The exe alone says "interpreter" when argv[0] was rewritten.
    check("MainThread", &["/x/wrapper", "/x/.bin/gemini"], Some("node"), Some(Harness::GeminiCli));
}

#[test]
fn other_harnesses_by_their_own_names() {
    check("goose", &["/usr/local/bin/goose", "session"], Some("goose"), Some(Harness::Goose));
    check("aider", &["/home/dev/.local/bin/aider"], Some("python3.12"), Some(Harness::Aider));
    check("codex", &["codex"], None, Some(Harness::Codex));
}

#[test]
fn lookalikes_are_not_harnesses() {
    let cases: [(&str, &[&str], Option<&str>); 14] = [
        ("roster-register", &["/usr/bin/roster-register", "--hook", "auto"], Some("roster-register")),
        ("bash", &["/bin/bash", "/home/dev/hook.sh"], Some("bash")),
        ("sh", &["/bin/sh", "-c", "claude -p hi"], Some("dash")),
        ("timeout", &["timeout", "60", "/home/dev/.local/bin/claude", "-p"], Some("timeout")),
        ("node", &["node", "/home/dev/some-other-script.js"], Some("node")),
        ("node", &["node", "/x/claude-helper"], Some("node")),
        ("node", &["node", "/x/gemini.json"], Some("node")),
        ("codex-hook.sh", &["/bin/bash", "/home/dev/codex-hook.sh"], Some("bash")),
        ("claude-helper", &["/usr/bin/claude-helper"], Some("claude-helper")),
        ("xclaude", &["xclaude"], None),
        ("nodemon", &["nodemon", "/x/.bin/codex"], Some("nodemon")),
        ("python3", &["python3", "/x/codex-hook.py"], Some("python3.12")),
        ("env", &["/usr/bin/env", "codex"], Some("env")),
        ("", &[], None),
    ];
    for (comm, argv, exe) in cases {
        check(comm, argv, exe, None);
    }
}

#[test]
fn the_pattern_table_exports_the_two_pid_variables() {
    assert_eq!(
        HarnessTable.pid_exports(),
        [
            PidExport { variable: "CLAUDE_PID", harness: "claude-code" },
            PidExport { variable: "OPENCODE_PID", harness: "opencode" },
        ]
    );
    for export in HarnessTable.pid_exports() {
        assert!(Harness::parse(export.harness).is_some(), "{export:?}");
    }
}

#[test]
fn an_inner_harness_beats_an_outer_one() {
    // Claude Code's shell runs codex; a hook of codex must find codex.
    let tree = [
        step(50, 40, "bash", &["/bin/bash", "-c", "roster-register"], Some("bash")),
        step(40, 30, "codex", &["codex"], Some("codex")),
        step(30, 20, "bash", &["/bin/bash", "-c", "codex"], Some("bash")),
        step(20, 10, "2.1.128", &["claude"], Some("2.1.128")),
        step(10, 1, "zsh", &["-zsh"], Some("zsh")),
    ];
    assert_eq!(owner_of(&tree), (40, Some("codex")));
    assert_eq!(harness::nearest_harness(&tree), Some(Harness::Codex));
    assert_eq!(tree[0].parent, Pid::new(40));
}
