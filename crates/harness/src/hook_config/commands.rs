//! The command lines roster's hooks run, and how roster recognises its own
//! hooks among others. Harnesses run a hook command with `sh -c` (or `bash
//! -c`), so every path in it is quoted for a POSIX shell.

use std::borrow::Cow;
use std::path::Path;

use super::types::{HookConfigError, HookEvent, HookHarness};

/// The commands install writes: one for session start, one for session
/// end, and one per state event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookCommands {
    /// `<bin>/roster-register --hook <harness> [--dir DIR]`
    pub session_start: String,
    /// `<bin>/roster-prune --current --hook <harness> [--dir DIR]`
    pub session_end: String,
    /// `<bin>/roster-state --hook <harness>`, to which `--event <name>
    /// [--dir DIR]` is added per event (`for_event`).
    state: String,
    /// ` --dir DIR`, or nothing.
    dir_suffix: String,
}

/// Which roster call a hook command makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RosterHookCall {
    /// `roster-register --hook …`, a session-start hook.
    Register,
    /// `roster-prune --current --hook …`, a session-end hook.
    Prune,
    /// `roster-state --hook …`, a state hook.
    State,
}

impl HookCommands {
    /// Builds the commands for `harness`. `bin_dir` is the absolute directory
    /// holding `roster-register` and `roster-prune`, or `None` to call them by
    /// bare name through `PATH`. `roster_dir`, when given, is passed on as
    /// `--dir` so the hooks use the same roster directory as this call.
    pub fn new(
        harness: HookHarness,
        bin_dir: Option<&Path>,
        roster_dir: Option<&Path>,
    ) -> Result<Self, HookConfigError> {
        let program = |name: &str| -> Result<String, HookConfigError> {
            match bin_dir {
                None => Ok(name.to_owned()),
                Some(dir) => {
                    Ok(shell_quote(&absolute_utf8("--bin-dir", dir)?.join(name).to_string_lossy())
                        .into_owned())
                }
            }
        };
        let dir_suffix = match roster_dir {
            None => String::new(),
            Some(dir) => format!(" --dir {}", shell_quote(&absolute_utf8("--dir", dir)?.to_string_lossy())),
        };
        Ok(HookCommands {
            session_start: format!("{} --hook {harness}{dir_suffix}", program("roster-register")?),
            session_end: format!("{} --current --hook {harness}{dir_suffix}", program("roster-prune")?),
            state: format!("{} --hook {harness}", program("roster-state")?),
            dir_suffix,
        })
    }

    /// The state hook's command without `--event`: for a plugin, which
    /// pipes events that name themselves (their `type`).
    pub fn state_for_any_event(&self) -> String {
        format!("{}{}", self.state, self.dir_suffix)
    }

    /// The command for `event`.
    pub fn for_event(&self, event: HookEvent) -> Cow<'_, str> {
        match event {
            HookEvent::SessionStart => Cow::Borrowed(&self.session_start),
            HookEvent::SessionEnd => Cow::Borrowed(&self.session_end),
            HookEvent::State(name) => Cow::Owned(format!("{} --event {name}{}", self.state, self.dir_suffix)),
        }
    }
}

/// Which roster call `command` makes, if it is one of roster's hooks: it runs
/// `roster-register --hook` or `roster-prune --current --hook`, whatever the
/// directory, quoting or extra flags around it. This is how install finds the
/// entries to replace and uninstall the entries to remove; a command that
/// merely mentions roster (`my-roster-register --hook`) is not roster's.
pub(crate) fn roster_hook_call(command: &str) -> Option<RosterHookCall> {
    // Quotes and backslashes only group or escape words for the shell; with
    // them gone and blanks collapsed, `'/opt/my bin/roster-register' --hook`
    // reads like the unquoted form.
    let unquoted: String =
        command.chars().filter(|character| !matches!(character, '\'' | '"' | '\\')).collect();
    let normalised = unquoted.split_whitespace().collect::<Vec<_>>().join(" ");
    let calls = [
        ("roster-register --hook ", RosterHookCall::Register),
        ("roster-prune --current --hook ", RosterHookCall::Prune),
        ("roster-state --hook ", RosterHookCall::State),
    ];
    calls.into_iter().find_map(|(needle, call)| {
        normalised
            .match_indices(needle)
            .any(|(start, _)| {
                normalised[..start]
                    .chars()
                    .next_back()
                    .is_none_or(|before| !(before.is_alphanumeric() || matches!(before, '-' | '_' | '.')))
            })
            .then_some(call)
    })
}

/// Quotes `word` for a POSIX shell when it needs it: single quotes around it,
/// each `'` inside written as `'\''`. Words made only of characters no shell
/// treats specially are returned as they are, so common paths stay readable.
pub fn shell_quote(word: &str) -> Cow<'_, str> {
    let plain = |character: char| {
        character.is_ascii_alphanumeric()
            || matches!(character, '/' | '.' | '_' | '-' | '+' | ',' | ':' | '@' | '%' | '=')
    };
    if !word.is_empty() && word.chars().all(plain) {
        return Cow::Borrowed(word);
    }
    Cow::Owned(format!("'{}'", word.replace('\'', "'\\''")))
}

/// `path` itself, which must be absolute (a hook runs in whatever directory
/// the harness chose) and valid UTF-8 (configuration files are JSON text).
fn absolute_utf8<'a>(flag: &str, path: &'a Path) -> Result<&'a Path, HookConfigError> {
    if !path.is_absolute() {
        return Err(HookConfigError::BadInput(format!(
            "{flag} {:?} is not an absolute path; hooks run in the harness's directory, so name it from /",
            path.display().to_string()
        )));
    }
    if path.to_str().is_none() {
        return Err(HookConfigError::BadInput(format!(
            "{flag} {:?} is not valid UTF-8 and cannot be written into a JSON configuration file",
            path.display().to_string()
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_quoting() {
        let cases = [
            ("/usr/local/bin/roster-register", "/usr/local/bin/roster-register"),
            ("/opt/my tools/roster-register", "'/opt/my tools/roster-register'"),
            ("/opt/it's/x", "'/opt/it'\\''s/x'"),
            ("/opt/$HOME/x", "'/opt/$HOME/x'"),
            ("", "''"),
        ];
        for (word, expect) in cases {
            assert_eq!(shell_quote(word), expect, "word {word:?}");
        }
    }

    #[test]
    fn recognises_roster_hooks_and_nothing_else() {
        let cases = [
            ("/usr/bin/roster-register --hook claude-code", Some(RosterHookCall::Register)),
            ("roster-register --hook auto", Some(RosterHookCall::Register)),
            ("'/opt/my tools/roster-register' --hook codex --dir '/x y'", Some(RosterHookCall::Register)),
            ("/usr/bin/roster-prune --current --hook codex", Some(RosterHookCall::Prune)),
            ("roster-prune  --current   --hook gemini-cli", Some(RosterHookCall::Prune)),
            ("cd /x && roster-prune --current --hook copilot", Some(RosterHookCall::Prune)),
            ("/home/dev/hook.sh", None),
            ("roster-register --agent wren", None),
            ("roster-prune --older-than 7d", None),
            ("my-roster-register --hook claude-code", None),
            ("roster-register --hook", None),
            ("/usr/bin/roster-state --hook claude-code --event Stop", Some(RosterHookCall::State)),
            ("roster-state --event Stop", None),
        ];
        for (command, expect) in cases {
            assert_eq!(roster_hook_call(command), expect, "command {command:?}");
        }
    }

    #[test]
    fn commands_name_the_binaries_and_pass_the_directory_on() {
        let commands = HookCommands::new(HookHarness::Codex, Some(Path::new("/opt/my tools")), None).unwrap();
        assert_eq!(commands.session_start, "'/opt/my tools/roster-register' --hook codex");
        assert_eq!(commands.session_end, "'/opt/my tools/roster-prune' --current --hook codex");
        let bare = HookCommands::new(HookHarness::Copilot, None, Some(Path::new("/run/roster"))).unwrap();
        assert_eq!(bare.session_start, "roster-register --hook copilot --dir /run/roster");
        assert_eq!(bare.session_end, "roster-prune --current --hook copilot --dir /run/roster");
        assert_eq!(
            bare.for_event(HookEvent::State("postToolUse")),
            "roster-state --hook copilot --event postToolUse --dir /run/roster"
        );
        for commands in [commands, bare] {
            assert_eq!(roster_hook_call(&commands.session_start), Some(RosterHookCall::Register));
            assert_eq!(roster_hook_call(&commands.session_end), Some(RosterHookCall::Prune));
            let state = commands.for_event(HookEvent::State("Stop"));
            assert_eq!(roster_hook_call(&state), Some(RosterHookCall::State));
        }
        let relative = HookCommands::new(HookHarness::Codex, Some(Path::new("bin")), None);
        assert!(matches!(relative, Err(HookConfigError::BadInput(_))));
    }
}
