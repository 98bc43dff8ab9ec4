//! A roster or harness variable set to the empty string behaves exactly as if it were
//! unset. Regression: `ROSTER_AGENT=""`, `ROSTER_SESSION_ID=""`, `ROSTER_SESSION_PID=""`,
//! `CLAUDE_PID=""` and `OPENCODE_PID=""` were errors (exit 2), and an empty `HOME` printed
//! every path as `~//…`. Each variable is checked against a run without it, for every tool
//! that reads the environment, with the registry in its default place (no `--dir`), so the
//! directory variables count too.

use std::process::Command;

use serde_json::Value;
use tests::{COMMAND_DEADLINE, Outcome, Owner, Sandbox, run_with_deadline};

/// Every variable roster reads, its own and the harnesses' exports.
const VARIABLES: [&str; 25] = [
    "ROSTER_DIR",
    "ROSTER_AGENT",
    "ROSTER_SESSION_ID",
    "ROSTER_SESSION_PID",
    "CLAUDE_PID",
    "OPENCODE_PID",
    "CLAUDE_CODE_SESSION_ID",
    "GEMINI_SESSION_ID",
    "CODEX_THREAD_ID",
    "AGENT_SESSION_ID",
    "AI_AGENT",
    "COPILOT_CLI_BINARY_VERSION",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "XDG_STATE_HOME",
    "XDG_CONFIG_HOME",
    "GEMINI_CLI",
    "COPILOT_CLI",
    "OPENCODE",
    "CURSOR_AGENT",
    "CODEX_MANAGED_BY_NPM",
    "CLAUDECODE",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "NO_COLOR",
    "HOME",
];

/// What a run showed, with what changes between two runs of the same command removed.
fn comparable(outcome: &Outcome) -> (i32, Value, String) {
    let mut json = serde_json::from_slice::<Value>(&outcome.stdout).unwrap_or(Value::Null);
    let strip = |row: &mut Value| {
        if let Some(row) = row.as_object_mut() {
            row.remove("refreshed_at");
            row.remove("registrar_pid");
        }
    };
    match &mut json {
        Value::Array(rows) => rows.iter_mut().for_each(strip),
        row => strip(row),
    }
    // A listing's AGE column ticks while the commands run (a second passes
    // between the two runs on a busy machine): ages and the padding they
    // set are not what is compared.
    let text = if json.is_null() {
        String::from_utf8_lossy(&outcome.stdout)
            .lines()
            .map(|line| {
                line.split_whitespace()
                    .map(|word| {
                        let is_age = word.len() > 1
                            && word[..word.len() - 1].bytes().all(|byte| byte.is_ascii_digit())
                            && word.ends_with(['s', 'm', 'h', 'd']);
                        if is_age { "<age>" } else { word }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        String::new()
    };
    (outcome.code(), json, format!("{text}{}", outcome.stderr))
}

/// Runs `args` in the sandbox's clean environment with `variable` unset (`None`) or set to
/// `value`.
fn run(sandbox: &Sandbox, args: &[&str], variable: &str, value: Option<&str>) -> Outcome {
    let mut command: Command = sandbox.command(args[0]);
    command.args(&args[1..]);
    match value {
        Some(value) => command.env(variable, value),
        None => command.env_remove(variable),
    };
    run_with_deadline(&mut command, COMMAND_DEADLINE)
}

#[test]
fn an_empty_variable_is_an_unset_one() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    // A record to list, refresh and ask about.
    run(&sandbox, &["roster-register", "--pid", &pid, "--agent", "wren"], "ROSTER_DIR", None).expect_code(0);
    let commands: Vec<Vec<&str>> = vec![
        vec!["roster-register", "--json", "--pid", &pid],
        vec!["roster-register", "--json"],
        vec!["roster-register", "--pid", &pid, "--quiet"],
        vec!["roster-list", "--json"],
        // The legend is said once, on the first of the two runs compared:
        // left out, the two print the same when the variable is read alike.
        vec!["roster-list", "--no-legend"],
        vec!["roster-consent", "status", "--json", "--pid", &pid],
        vec!["roster-consent", "status", "--json"],
        vec!["roster-prune", "--json", "--dry-run"],
        vec!["roster-hooks", "status", "--json"],
    ];
    let mut differences = Vec::new();
    for args in &commands {
        for variable in VARIABLES {
            let unset = comparable(&run(&sandbox, args, variable, None));
            let empty = comparable(&run(&sandbox, args, variable, Some("")));
            if empty != unset {
                differences.push(format!(
                    "{variable}=\"\" {}:\n  unset: {unset:?}\n  empty: {empty:?}",
                    args.join(" ")
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
