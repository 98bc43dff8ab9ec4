//! Harness detection (docs/contract.md §8.1): which agent harness, if any, a process of
//! the caller's ancestry belongs to, judged from its comm, its first argv
//! entries and its exe basename. Every name roster recognises lives in the
//! tables at the top of this file, so there is one place to extend.

use std::fmt;

use owner_liveness::{AncestorStep, HarnessPatterns, PidExport};

use crate::suggest::edit_distance;

/// The agent harnesses roster knows. `as_str` is the record's `harness`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Harness {
    ClaudeCode,
    Codex,
    GeminiCli,
    CursorAgent,
    Copilot,
    Goose,
    Opencode,
    Aider,
    Amp,
}

/// The pattern table `owner_liveness::resolve_owner` consults. A unit
/// struct because the patterns are constants; it only adapts this module's
/// functions to the trait that lets owner-liveness stay below this crate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HarnessTable;

/// Process names (argv[0] basename, comm, exe basename, or an
/// interpreter's script basename) that name a harness. Matching is on the
/// whole name, so `codex-hook.sh` and `claude-helper` never match.
const HARNESS_PROCESS_NAMES: [(&str, Harness); 9] = [
    ("claude", Harness::ClaudeCode),
    ("codex", Harness::Codex),
    ("gemini", Harness::GeminiCli),
    ("cursor-agent", Harness::CursorAgent),
    ("copilot", Harness::Copilot),
    ("goose", Harness::Goose),
    ("opencode", Harness::Opencode),
    ("aider", Harness::Aider),
    ("amp", Harness::Amp),
];

/// Extensions a harness's file may carry and still name it: the opencode
/// npm package installs its native binary as `bin/opencode.exe` even on
/// Linux, and npm packages ship their entry points as `gemini.js` or
/// `codex.js`, which appear as the script argument of `node` when the
/// entry point is run directly rather than through `node_modules/.bin`.
const HARNESS_NAME_EXTENSIONS: [&str; 5] = [".exe", ".js", ".mjs", ".cjs", ".py"];

/// Interpreters whose script argument is examined. Versioned Python names
/// (`python3.12`, `pypy3.10`) are recognised by `is_interpreter_name`.
const INTERPRETER_NAMES: [&str; 8] = ["node", "nodejs", "bun", "deno", "python", "python3", "pypy", "pypy3"];

/// Interpreter flags that take the next argv entry as their value, so the
/// value is not mistaken for the script (`node -r ts-node/register x.js`,
/// `python3 -W ignore script`).
const INTERPRETER_FLAGS_WITH_VALUE: [&str; 11] = [
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-C",
    "--conditions",
    "--title",
    "-W",
    "-X",
    "--config",
];

/// Interpreter flags after which no script file follows: the code comes
/// from the command line, so nothing names a harness.
const INTERPRETER_FLAGS_WITH_INLINE_CODE: [&str; 5] = ["-e", "--eval", "-p", "--print", "-c"];

/// Interpreters that take a subcommand before the script
/// (`deno run -A script`, `bun run script`), and that subcommand.
const INTERPRETERS_WITH_RUN_SUBCOMMAND: [&str; 2] = ["bun", "deno"];
const INTERPRETER_RUN_SUBCOMMAND: &str = "run";

/// Cursor's agent may rename itself so that its comm reads `agent`, a name
/// far too common to trust alone. It counts as Cursor only when one of
/// its argv paths has one of these directory components (the CLI installs
/// under `~/.local/share/cursor-agent/versions/…`, its state under
/// `~/.cursor/`).
const CURSOR_AGENT_SHORT_NAME: &str = "agent";
const CURSOR_PATH_COMPONENTS: [&str; 2] = ["cursor-agent", ".cursor"];

/// The install layout of Cursor's agent (`…/share/cursor-agent/…`): a
/// script under it run by an interpreter is Cursor's agent whatever its
/// basename (`index.js`). Narrower than `CURSOR_PATH_COMPONENTS` because
/// here no `agent` name backs the path up.
const CURSOR_INSTALL_PATH_COMPONENTS: [&str; 2] = ["share", "cursor-agent"];

/// The pid exports `resolve_owner` may trust (docs/contract.md §4.1 rule 3).
const HARNESS_PID_EXPORTS: [PidExport; 2] = [
    PidExport { variable: "CLAUDE_PID", harness: "claude-code" },
    PidExport { variable: "OPENCODE_PID", harness: "opencode" },
];

impl Harness {
    /// Every harness, in the order of the record's documentation.
    pub const ALL: [Harness; 9] = [
        Harness::ClaudeCode,
        Harness::Codex,
        Harness::GeminiCli,
        Harness::CursorAgent,
        Harness::Copilot,
        Harness::Goose,
        Harness::Opencode,
        Harness::Aider,
        Harness::Amp,
    ];

    /// The name written to a record's `harness` key and accepted by
    /// `--harness`.
    pub fn as_str(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::GeminiCli => "gemini-cli",
            Harness::CursorAgent => "cursor-agent",
            Harness::Copilot => "copilot",
            Harness::Goose => "goose",
            Harness::Opencode => "opencode",
            Harness::Aider => "aider",
            Harness::Amp => "amp",
        }
    }

    /// The harness's own name for people, as its makers spell it: what the
    /// README, the man page and the package description list.
    pub fn display_name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "Claude Code",
            Harness::Codex => "Codex CLI",
            Harness::GeminiCli => "Gemini CLI",
            Harness::CursorAgent => "Cursor's agent",
            Harness::Copilot => "Copilot CLI",
            Harness::Goose => "Goose",
            Harness::Opencode => "opencode",
            Harness::Aider => "Aider",
            Harness::Amp => "Amp",
        }
    }

    /// The harness a record's `harness` value names; exact names only, so
    /// what is written always reads back as the same harness.
    pub fn parse(name: &str) -> Option<Harness> {
        Harness::ALL.into_iter().find(|harness| harness.as_str() == name)
    }
}

/// The name in `known` a mistyped `name` most likely meant: a harness's
/// process name (`claude` for `claude-code`), or the known name within a
/// small edit distance (a third of the longer name, at least 1, at most 3).
/// `None` when nothing is close.
fn closest_harness_name<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let lowered = name.to_ascii_lowercase();
    if let Some(harness) = harness_named(&lowered)
        && let Some(found) = known.iter().find(|known| **known == harness.as_str())
    {
        return Some(found);
    }
    known
        .iter()
        .map(|candidate| (edit_distance(&lowered, candidate), *candidate))
        .filter(|(distance, candidate)| {
            let allowed = (lowered.len().max(candidate.len()) / 3).clamp(1, 3);
            *distance <= allowed
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// The message for a harness name that is not in `known`, said the same way
/// wherever a harness name is parsed: `<what> is not <kind>; did you mean
/// claude-code? (known: …)` for a typo, else `…; use one of …`.
pub fn unknown_harness_message(what: &str, kind: &str, name: &str, known: &[&str]) -> String {
    match closest_harness_name(name, known) {
        Some(found) => format!("{what} is not {kind}; did you mean {found}? (known: {})", known.join(", ")),
        None => format!("{what} is not {kind}; use one of {}", known.join(", ")),
    }
}

/// The names of every harness roster knows, in [`Harness::ALL`] order.
pub fn harness_names() -> Vec<&'static str> {
    Harness::ALL.iter().map(|harness| harness.as_str()).collect()
}

/// The display names of `harnesses`, listed for prose: `Claude Code, Codex
/// CLI, …, Aider and Amp`.
pub fn display_names_in_prose(harnesses: &[Harness]) -> String {
    let names: Vec<&str> = harnesses.iter().map(|harness| harness.display_name()).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, others)) => format!("{} and {last}", others.join(", ")),
    }
}

impl fmt::Display for Harness {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl HarnessPatterns for HarnessTable {
    fn harness_of(&self, step: &AncestorStep) -> Option<&'static str> {
        harness_of(step).map(Harness::as_str)
    }

    fn pid_exports(&self) -> &[PidExport] {
        &HARNESS_PID_EXPORTS
    }
}

/// The harness a process belongs to (docs/contract.md §8.1), or `None` for any other
/// process (a shell, `timeout`, roster's own commands, an unrelated script).
///
/// A process is a harness process when its argv[0] basename, its comm or
/// its exe basename names a harness. Checking all three covers the known
/// disguises: the native Claude Code binary's comm and exe are its version
/// (`2.1.128`) while argv[0] is `…/claude`; the native Copilot process's
/// comm is `MainThread` while its exe is `copilot`. An interpreter
/// (`node`, `bun`, `deno`, `python3.12`, …) is a harness process when its
/// script argument names one, which covers the npm loaders above the
/// native Codex and Copilot binaries and both processes of Gemini's
/// relaunch.
pub fn harness_of(step: &AncestorStep) -> Option<Harness> {
    let argv0_basename = step.argv().first().map(|argv0| basename(argv0));
    let own_names = [argv0_basename, Some(step.comm.as_str()), step.exe_basename()];

    if let Some(harness) = own_names.iter().flatten().find_map(|name| harness_named(name)) {
        return Some(harness);
    }
    if own_names.iter().flatten().any(|name| *name == CURSOR_AGENT_SHORT_NAME)
        && step.argv().iter().any(|entry| path_has_any_component(entry, &CURSOR_PATH_COMPONENTS))
    {
        return Some(Harness::CursorAgent);
    }

    // Only argv[0] and the exe say what program runs; a comm of `node` may
    // be a renamed process whose argv no longer starts with the interpreter.
    let interpreter =
        [argv0_basename, step.exe_basename()].into_iter().flatten().find(|name| is_interpreter_name(name))?;
    let takes_run_subcommand = INTERPRETERS_WITH_RUN_SUBCOMMAND.contains(&interpreter);
    match interpreter_target(step.argv(), takes_run_subcommand)? {
        InterpreterTarget::Script(script) => {
            if path_has_component_sequence(script, &CURSOR_INSTALL_PATH_COMPONENTS) {
                return Some(Harness::CursorAgent);
            }
            harness_named(basename(script))
        }
        // `python3 -m aider` or `python3 -m aider.main`: the top package
        // names the harness.
        InterpreterTarget::Module(module) => harness_named(module.split('.').next().unwrap_or(module)),
    }
}

/// The nearest harness process in an ancestry (caller first), as the
/// ancestor walk of docs/contract.md §4.1 would find it.
pub fn nearest_harness(ancestry: &[AncestorStep]) -> Option<Harness> {
    ancestry.iter().find_map(harness_of)
}

/// What an interpreter was asked to run.
enum InterpreterTarget<'a> {
    Script(&'a str),
    Module(&'a str),
}

/// The first non-flag argument after the interpreter, skipping flag
/// values and, where the interpreter takes one, the `run` subcommand;
/// `None` for inline code (`node -e`, `python3 -c`), a script read from
/// stdin (`-`), or no script at all.
fn interpreter_target(argv: &[String], takes_run_subcommand: bool) -> Option<InterpreterTarget<'_>> {
    let mut arguments = argv.iter().skip(1).map(String::as_str);
    let mut subcommand_allowed = takes_run_subcommand;
    while let Some(argument) = arguments.next() {
        if argument == "--" {
            return arguments.next().filter(|script| *script != "-").map(InterpreterTarget::Script);
        }
        if argument == "-m" {
            return arguments.next().map(InterpreterTarget::Module);
        }
        if INTERPRETER_FLAGS_WITH_INLINE_CODE.contains(&argument) {
            return None;
        }
        if INTERPRETER_FLAGS_WITH_VALUE.contains(&argument) {
            arguments.next();
            continue;
        }
        if argument.starts_with('-') {
            // `-` alone is "read the script from stdin"; anything else is a
            // flag whose value, if any, is joined with `=`.
            if argument == "-" {
                return None;
            }
            continue;
        }
        if subcommand_allowed && argument == INTERPRETER_RUN_SUBCOMMAND {
            subcommand_allowed = false;
            continue;
        }
        return Some(InterpreterTarget::Script(argument));
    }
    None
}

/// The harness a single file or process name names, if any: the whole
/// name, or the name less one known extension.
fn harness_named(name: &str) -> Option<Harness> {
    let stem =
        HARNESS_NAME_EXTENSIONS.iter().find_map(|extension| name.strip_suffix(extension)).unwrap_or(name);
    HARNESS_PROCESS_NAMES
        .iter()
        .find(|(known, _)| *known == name || *known == stem)
        .map(|(_, harness)| *harness)
}

/// `node`, `nodejs`, `bun`, `deno`, `python`, `python3`, `pypy3`, and the
/// versioned forms `python3.12` / `pypy3.10` that a resolved exe shows.
fn is_interpreter_name(name: &str) -> bool {
    if INTERPRETER_NAMES.contains(&name) {
        return true;
    }
    ["python", "pypy"].iter().any(|family| {
        name.strip_prefix(family).is_some_and(|version| {
            version.starts_with(|character: char| character.is_ascii_digit())
                && version.chars().all(|character| character.is_ascii_digit() || character == '.')
        })
    })
}

/// The last `/`-separated component; the whole text when there is none.
fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn path_has_any_component(path: &str, components: &[&str]) -> bool {
    path.contains('/') && path.split('/').any(|component| components.contains(&component))
}

fn path_has_component_sequence(path: &str, sequence: &[&str]) -> bool {
    let components: Vec<&str> = path.split('/').collect();
    components.windows(sequence.len()).any(|window| window == sequence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_round_trips_through_its_name() {
        for harness in Harness::ALL {
            assert_eq!(Harness::parse(harness.as_str()), Some(harness));
            assert_eq!(harness.to_string(), harness.as_str());
        }
        assert_eq!(Harness::parse("claude"), None);
        assert_eq!(Harness::parse("Claude-Code"), None);
        assert_eq!(Harness::parse(""), None);
    }

    #[test]
    fn harness_names_match_whole_names_or_known_extensions_only() {
        assert_eq!(harness_named("opencode.exe"), Some(Harness::Opencode));
        assert_eq!(harness_named("gemini.js"), Some(Harness::GeminiCli));
        assert_eq!(harness_named("codex-hook.sh"), None);
        assert_eq!(harness_named("claude-helper"), None);
        assert_eq!(harness_named("xclaude"), None);
        assert_eq!(harness_named(".exe"), None);
    }

    #[test]
    fn interpreter_names() {
        for name in
            ["node", "nodejs", "bun", "deno", "python", "python3", "python3.12", "python2.7", "pypy3.10"]
        {
            assert!(is_interpreter_name(name), "{name}");
        }
        for name in ["bash", "sh", "timeout", "python-config", "python3-x", "nodemon", "pythonista", ""] {
            assert!(!is_interpreter_name(name), "{name}");
        }
    }

    #[test]
    fn typos_suggest_the_harness_meant() {
        let known: Vec<&str> = Harness::ALL.iter().map(|harness| harness.as_str()).collect();
        let cases = [
            ("claude-cod", Some("claude-code")),
            ("claud-code", Some("claude-code")),
            ("claude", Some("claude-code")),
            ("Claude-Code", Some("claude-code")),
            ("gemini", Some("gemini-cli")),
            ("gemni-cli", Some("gemini-cli")),
            ("copliot", Some("copilot")),
            ("opencod", Some("opencode")),
            ("ampp", Some("amp")),
            ("vim", None),
            ("", None),
            ("zzzzzzzzzzzz", None),
        ];
        for (typo, expect) in cases {
            assert_eq!(closest_harness_name(typo, &known), expect, "{typo:?}");
        }
        assert_eq!(
            unknown_harness_message("--harness \"codx\"", "a harness", "codx", &["codex", "amp"]),
            "--harness \"codx\" is not a harness; did you mean codex? (known: codex, amp)"
        );
        assert_eq!(
            unknown_harness_message("--harness \"vim\"", "a harness", "vim", &["codex", "amp"]),
            "--harness \"vim\" is not a harness; use one of codex, amp"
        );
    }

    /// Detection and the harness list agree: every harness roster names is
    /// recognised by at least one process name.
    #[test]
    fn every_harness_is_detected_by_a_process_name() {
        for harness in Harness::ALL {
            assert!(HARNESS_PROCESS_NAMES.iter().any(|(_, detected)| *detected == harness), "{harness}");
        }
    }

    #[test]
    fn every_pattern_name_is_unique() {
        for (index, (name, _)) in HARNESS_PROCESS_NAMES.iter().enumerate() {
            assert!(HARNESS_PROCESS_NAMES[index + 1..].iter().all(|(other, _)| other != name), "{name}");
        }
    }
}
