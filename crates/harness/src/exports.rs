//! What harnesses export in their children's environment: their session id,
//! their version, Claude Code's messaging socket, and weak hints of which
//! harness runs at all. Every lookup takes the environment as a function so
//! the rules are pure and table-tested.

use std::path::PathBuf;

use crate::detect::Harness;

/// An environment lookup: `Some(value)` for a set variable. Callers pass
/// `&|name| std::env::var(name).ok()` or a table in tests.
pub(crate) type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Claude Code's messaging socket (a Unix socket per session).
pub const CLAUDE_CODE_MESSAGING_SOCKET: &str = "CLAUDE_CODE_MESSAGING_SOCKET";

/// Session-id exports in the order they are tried when the harness is not
/// known (docs/contract.md §6.1). `AGENT_SESSION_ID` is not tied to one harness: no
/// harness captured so far sets it, and its name is generic, so it is only
/// ever a fallback.
const SESSION_ID_EXPORTS: [(&str, Option<Harness>); 4] = [
    ("CLAUDE_CODE_SESSION_ID", Some(Harness::ClaudeCode)),
    ("GEMINI_SESSION_ID", Some(Harness::GeminiCli)),
    ("CODEX_THREAD_ID", Some(Harness::Codex)),
    ("AGENT_SESSION_ID", None),
];

/// `AI_AGENT=<harness>_<version with dashes>_<kind>`, as Claude Code sets
/// it (`claude-code_2-1-328_harness`).
const AI_AGENT: &str = "AI_AGENT";

/// Copilot CLI's version of its native binary (`1.0.102`).
const COPILOT_CLI_BINARY_VERSION: &str = "COPILOT_CLI_BINARY_VERSION";

/// Variables whose presence hints at a harness, most specific first. A
/// child inherits every ancestor's variables, so these are hints only:
/// detection believes the hook payload and the ancestry first. Claude
/// Code's own variables come last because Claude Code is the harness most
/// often found around another one, leaking `CLAUDECODE=1` into it.
/// `CLAUDE_PROJECT_DIR` is deliberately absent: Gemini CLI and Copilot CLI
/// set it too, for compatibility with Claude Code's hooks.
const HARNESS_HINT_VARIABLES: [(&str, Harness); 9] = [
    ("GEMINI_SESSION_ID", Harness::GeminiCli),
    ("GEMINI_CLI", Harness::GeminiCli),
    ("COPILOT_CLI", Harness::Copilot),
    ("OPENCODE", Harness::Opencode),
    ("CURSOR_AGENT", Harness::CursorAgent),
    ("CODEX_THREAD_ID", Harness::Codex),
    ("CODEX_MANAGED_BY_NPM", Harness::Codex),
    ("CLAUDECODE", Harness::ClaudeCode),
    ("CLAUDE_CODE_SESSION_ID", Harness::ClaudeCode),
];

/// The longest version text accepted; anything longer is not a version.
const MAX_VERSION_LENGTH: usize = 64;

/// The harness's own session-id export, as `(variable, value)`.
///
/// With a known harness only its own variable (or the harness-neutral
/// `AGENT_SESSION_ID`) counts: a codex session started from Claude Code's
/// shell inherits `CLAUDE_CODE_SESSION_ID`, and taking it would give the
/// codex record the claude session's id. With no known harness the first
/// variable present in a fixed order wins. Empty values count as unset.
pub fn session_id_from_env(harness: Option<Harness>, env: EnvLookup<'_>) -> Option<(&'static str, String)> {
    let lookup = |variable: &'static str| non_empty(env, variable).map(|value| (variable, value));
    match harness {
        Some(harness) => SESSION_ID_EXPORTS
            .iter()
            .filter(|(_, owner)| *owner == Some(harness) || owner.is_none())
            .find_map(|(variable, _)| lookup(variable)),
        None => SESSION_ID_EXPORTS.iter().find_map(|(variable, _)| lookup(variable)),
    }
}

/// The harness's version when its environment tells it:
/// `AI_AGENT=claude-code_2-1-328_harness` → `2.1.328`,
/// `COPILOT_CLI_BINARY_VERSION=1.0.102` → `1.0.102`. A value naming another
/// harness than the one given is ignored (it leaked from an outer one);
/// anything malformed is `None`, never a guess.
pub fn harness_version_from_env(harness: Option<Harness>, env: EnvLookup<'_>) -> Option<String> {
    let matches = |named: Harness| harness.is_none_or(|harness| harness == named);
    let from_ai_agent = non_empty(env, AI_AGENT)
        .and_then(|value| parse_ai_agent(&value))
        .filter(|(named, _)| matches(*named))
        .map(|(_, version)| version);
    let from_copilot = || {
        non_empty(env, COPILOT_CLI_BINARY_VERSION)
            .filter(|version| matches(Harness::Copilot) && is_plausible_version(version))
    };
    from_ai_agent.or_else(from_copilot)
}

/// Claude Code's messaging socket, when set to an absolute path (a
/// relative one would resolve against whatever directory roster runs in).
pub fn messaging_socket_from_env(env: EnvLookup<'_>) -> Option<PathBuf> {
    non_empty(env, CLAUDE_CODE_MESSAGING_SOCKET).map(PathBuf::from).filter(|path| path.is_absolute())
}

/// A weak hint of the harness from the environment alone, for when neither
/// a hook payload nor the ancestry says. See `HARNESS_HINT_VARIABLES` for
/// why the order is what it is.
pub fn harness_from_env(env: EnvLookup<'_>) -> Option<Harness> {
    HARNESS_HINT_VARIABLES
        .iter()
        .find(|(variable, _)| non_empty(env, variable).is_some_and(|value| value != "0"))
        .map(|(_, harness)| *harness)
        .or_else(|| {
            non_empty(env, AI_AGENT).and_then(|value| parse_ai_agent(&value)).map(|(harness, _)| harness)
        })
}

/// Splits `claude-code_2-1-328_harness` into the harness and `2.1.328`.
/// The version part is dash-separated decimal groups, so that dots could
/// not appear in an environment-variable-safe token.
fn parse_ai_agent(value: &str) -> Option<(Harness, String)> {
    let mut parts = value.split('_');
    let (name, version, kind) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || kind.is_empty() {
        return None;
    }
    let harness = Harness::parse(name)?;
    let groups: Vec<&str> = version.split('-').collect();
    let well_formed = groups.iter().all(|group| {
        !group.is_empty() && group.len() <= 9 && group.bytes().all(|byte| byte.is_ascii_digit())
    });
    if !well_formed || version.len() > MAX_VERSION_LENGTH {
        return None;
    }
    Some((harness, groups.join(".")))
}

/// A version as harnesses print it: starts with a digit, then digits,
/// letters, `.`, `-`, `+` (`1.0.102`, `0.61.0-preview.1`), no empty
/// dot-separated part, at most `MAX_VERSION_LENGTH` characters.
fn is_plausible_version(text: &str) -> bool {
    text.len() <= MAX_VERSION_LENGTH
        && text.starts_with(|character: char| character.is_ascii_digit())
        && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'+'))
        && text.split('.').all(|part| !part.is_empty())
}

fn non_empty(env: EnvLookup<'_>, variable: &str) -> Option<String> {
    env(variable).filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ai_agent_values() {
        let check = |value: &str, expect: Option<(Harness, &str)>| {
            assert_eq!(
                parse_ai_agent(value),
                expect.map(|(harness, version)| (harness, version.to_owned())),
                "{value:?}"
            );
        };
        check("claude-code_2-1-328_harness", Some((Harness::ClaudeCode, "2.1.328")));
        check("codex_0-169-0_harness", Some((Harness::Codex, "0.169.0")));
        check("claude-code_7_harness", Some((Harness::ClaudeCode, "7")));
        check("claude-code_2-1-328", None);
        check("claude-code_2-1-328_", None);
        check("claude-code_2-1-328_harness_extra", None);
        check("claude-code_2--328_harness", None);
        check("claude-code_2-1-x_harness", None);
        check("claude-code__harness", None);
        check("claude_2-1-328_harness", None);
        check("", None);
    }

    #[test]
    fn plausible_versions() {
        for version in ["1.0.102", "0.61.0-preview.1", "2", "1.2.3+build.4"] {
            assert!(is_plausible_version(version), "{version}");
        }
        for version in ["", "v1.0", "1..2", "1.0.", "1.0 ", "1/2", "-1", &"9".repeat(65)] {
            assert!(!is_plausible_version(version), "{version}");
        }
    }
}
