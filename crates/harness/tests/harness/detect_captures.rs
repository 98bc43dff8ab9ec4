//! Detection against the real captured process trees: every harness process
//! in them is recognised, nothing else is, and owner resolution with this
//! crate's pattern table names the process each harness's session lives in.

use crate::detect_support;

use std::collections::HashMap;

use detect_support::{parse_ancestry, parse_env, read_capture};
use harness::{Harness, HarnessTable, harness_of, nearest_harness};
use owner_liveness::{AncestorStep, OwnerQuery, OwnerSource, Pid, ResolvedOwner, resolve_owner};

const PID_MAX: u32 = 4_194_304;

fn ancestry(relative_path: &str) -> Vec<AncestorStep> {
    let steps = parse_ancestry(&read_capture(relative_path));
    assert!(steps.len() >= 3, "{relative_path}: too few steps: {steps:?}");
    steps
}

/// `harness_of` for every step, hook first.
fn harnesses_along(steps: &[AncestorStep]) -> Vec<Option<Harness>> {
    steps.iter().map(harness_of).collect()
}

fn resolve(steps: &[AncestorStep], env: &HashMap<String, String>) -> ResolvedOwner {
    let lookup = |name: &str| env.get(name).cloned();
    let query =
        OwnerQuery { flag: None, env: &lookup, parent: steps[1].pid, ancestry: steps, pid_max: PID_MAX };
    resolve_owner(&query, &HarnessTable).unwrap_or_else(|error| panic!("no owner for {steps:?}: {error}"))
}

fn check_owner(
    steps: &[AncestorStep],
    env: &HashMap<String, String>,
    expect_pid: u32,
    expect_source: OwnerSource,
    expect_harness: Harness,
) {
    let owner = resolve(steps, env);
    assert_eq!(owner.pid, Pid::new(expect_pid).unwrap(), "owner of {steps:#?}");
    assert_eq!(owner.source, expect_source);
    assert!(owner.verified);
    assert_eq!(owner.harness, Some(expect_harness.as_str()));
}

/// The chain below the owner: the native process under a loader, the
/// relaunched copy, which keep the session alive after the owner is gone.
fn check_chain(steps: &[AncestorStep], expect: &[u32]) {
    let chain: Vec<u32> = resolve(steps, &HashMap::new()).chain.iter().map(|pid| pid.get()).collect();
    assert_eq!(chain, expect, "chain of {steps:#?}");
}

#[test]
fn the_ancestry_parser_reads_both_capture_formats() {
    let claude = ancestry("claude-code-2.1.328/ancestry.txt");
    let pids: Vec<u32> = claude.iter().map(|step| step.pid.get()).collect();
    assert_eq!(pids, [6778, 6777, 6753, 6751]);
    let parents: Vec<Option<u32>> = claude.iter().map(|step| step.parent.map(Pid::get)).collect();
    assert_eq!(parents, [Some(6777), Some(6753), Some(6751), None]);
    assert_eq!(claude[2].comm, "claude");
    assert_eq!(claude[2].argv(), ["/home/dev/.local/bin/claude", "-p", "hi"]);
    assert_eq!(claude[2].exe_basename(), None);

    let codex = ancestry("codex/ancestry-session-start.txt");
    assert_eq!(codex[1].parent, Pid::new(15045));
    assert_eq!(codex[1].exe_basename(), Some("codex"));
    assert_eq!(
        codex[2].argv(),
        ["node", "/home/dev/.npm/lib/node_modules/.bin/codex", "exec", "--skip-git-repo-check"]
    );
    assert_eq!(codex[3].comm, "timeout");
    assert!(codex[3].argv().is_empty());
    assert_eq!(codex[3].parent, None);
}

#[test]
fn claude_code_native_binary_is_the_owner() {
    let steps = ancestry("claude-code-2.1.328/ancestry.txt");
    // The `timeout 60 …/claude` above claude is not claude: only argv[0],
    // comm and exe count, never a later argument of a non-interpreter.
    assert_eq!(harnesses_along(&steps), [None, None, Some(Harness::ClaudeCode), None]);
    check_owner(&steps, &HashMap::new(), 6753, OwnerSource::Ancestor, Harness::ClaudeCode);
}

#[test]
fn claude_code_owner_via_claude_pid_export() {
    let steps = ancestry("claude-code-2.1.328/ancestry.txt");
    let env = parse_env(&read_capture("claude-code-2.1.328/env.txt"));
    check_owner(&steps, &env, 6753, OwnerSource::HarnessExport("CLAUDE_PID"), Harness::ClaudeCode);
}

#[test]
fn codex_owner_is_the_node_wrapper_above_the_native_binary() {
    let env = parse_env(&read_capture("codex/env.txt"));
    for capture in ["codex/ancestry-session-start.txt", "codex/ancestry-session-end.txt"] {
        let steps = ancestry(capture);
        // `codex-hook.sh` contains `codex` but does not name it.
        assert_eq!(
            harnesses_along(&steps),
            [None, Some(Harness::Codex), Some(Harness::Codex), None],
            "{capture}"
        );
        check_owner(&steps, &HashMap::new(), 15045, OwnerSource::Ancestor, Harness::Codex);
        check_owner(&steps, &env, 15045, OwnerSource::Ancestor, Harness::Codex);
        check_chain(&steps, &[15056]);
    }
}

#[test]
fn gemini_owner_is_the_outer_node_of_the_relaunch() {
    let env = parse_env(&read_capture("gemini/env.txt"));
    for capture in ["gemini/ancestry-session-start.txt", "gemini/ancestry-session-end.txt"] {
        let steps = ancestry(capture);
        // The inner node runs `--max-old-space-size=12052` before the script.
        assert_eq!(
            harnesses_along(&steps),
            [None, Some(Harness::GeminiCli), Some(Harness::GeminiCli), None],
            "{capture}"
        );
        check_owner(&steps, &HashMap::new(), 15532, OwnerSource::Ancestor, Harness::GeminiCli);
        check_owner(&steps, &env, 15532, OwnerSource::Ancestor, Harness::GeminiCli);
        check_chain(&steps, &[steps[1].pid.get()]);
    }
}

#[test]
fn copilot_owner_is_the_node_loader_above_main_thread() {
    let env = parse_env(&read_capture("copilot/env.txt"));
    for capture in ["copilot/ancestry-session-start.txt", "copilot/ancestry-session-end.txt"] {
        let steps = ancestry(capture);
        assert_eq!(steps[1].comm, "MainThread");
        assert_eq!(
            harnesses_along(&steps),
            [None, Some(Harness::Copilot), Some(Harness::Copilot), None],
            "{capture}"
        );
        check_owner(&steps, &HashMap::new(), 16099, OwnerSource::Ancestor, Harness::Copilot);
        // Copilot sets CLAUDE_PROJECT_DIR but no CLAUDE_PID: still copilot.
        check_owner(&steps, &env, 16099, OwnerSource::Ancestor, Harness::Copilot);
        check_chain(&steps, &[16110]);
    }
}

#[test]
fn opencode_owner_via_walk_and_via_opencode_pid() {
    let steps = ancestry("opencode/ancestry-bash-tool.txt");
    assert_eq!(steps[2].exe_basename(), Some("opencode.exe"));
    // `opencode-hook.s` (comm cut to 15 bytes) and `bash -c …` are not opencode.
    assert_eq!(harnesses_along(&steps), [None, None, Some(Harness::Opencode), None]);
    check_owner(&steps, &HashMap::new(), 17605, OwnerSource::Ancestor, Harness::Opencode);
    let env = parse_env(&read_capture("opencode/env-bash-tool.txt"));
    check_owner(&steps, &env, 17605, OwnerSource::HarnessExport("OPENCODE_PID"), Harness::Opencode);
}

#[test]
fn nearest_harness_of_each_capture() {
    let cases = [
        ("claude-code-2.1.328/ancestry.txt", Harness::ClaudeCode),
        ("codex/ancestry-session-end.txt", Harness::Codex),
        ("gemini/ancestry-session-end.txt", Harness::GeminiCli),
        ("copilot/ancestry-session-end.txt", Harness::Copilot),
        ("opencode/ancestry-bash-tool.txt", Harness::Opencode),
    ];
    for (capture, expect) in cases {
        assert_eq!(nearest_harness(&ancestry(capture)), Some(expect), "{capture}");
        // Without the harness processes nothing is left to find.
        let without_harness: Vec<AncestorStep> =
            ancestry(capture).into_iter().filter(|step| harness_of(step).is_none()).collect();
        assert_eq!(nearest_harness(&without_harness), None, "{capture}");
    }
}

#[test]
fn a_claude_pid_leaked_into_a_codex_session_loses_to_the_codex_walk() {
    // Codex started from Claude Code's shell inherits CLAUDE_PID; the codex
    // processes between the hook and that claude make the export untrusted.
    let mut steps = ancestry("codex/ancestry-session-start.txt");
    steps.pop();
    steps[2].parent = Pid::new(6753);
    steps.extend(ancestry("claude-code-2.1.328/ancestry.txt").into_iter().skip(2));
    let env = parse_env(&read_capture("claude-code-2.1.328/env.txt"));
    check_owner(&steps, &env, 15045, OwnerSource::Ancestor, Harness::Codex);
}
