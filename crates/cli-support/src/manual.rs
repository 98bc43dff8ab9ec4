//! What a binary's `--help` and its man page say beyond flags: examples,
//! notes, environment variables, files and exit statuses, written once as
//! data next to each clap `Command`. `--help` gets them through
//! [`Manual::render_help`] (the command's `after_long_help`, attached by
//! `help::with_manual` only when help is shown); xtask renders
//! the same data into the man page, so the two cannot drift apart.

use crate::exit::ExitStatus;

/// Everything a command's long help and man page carry besides its flags.
#[derive(Clone, Debug, Default)]
pub struct Manual {
    pub examples: &'static [Example],
    /// Paragraphs of prose, blank-line separated in `--help`; in the man page
    /// the ones starting with `Events` make the EVENTS section, the rest NOTES.
    pub notes: Vec<String>,
    pub environment: Vec<EnvVar>,
    /// A paragraph after the environment variables, for rules they all share.
    pub environment_note: Option<&'static str>,
    pub files: &'static [FileEntry],
    pub exit_statuses: &'static [ExitStatusDoc],
    /// A paragraph after the exit statuses, for rules that override them.
    pub exit_status_note: Option<&'static str>,
    /// The manuals of the subcommands, by name (examples, mostly).
    pub subcommands: Vec<(&'static str, Manual)>,
}

/// One example: what it does, the commands, and optionally what they print.
#[derive(Clone, Copy, Debug)]
pub struct Example {
    pub description: &'static str,
    pub commands: &'static [&'static str],
    pub output: &'static [&'static str],
}

/// One environment variable (or several that mean the same, comma-separated).
#[derive(Clone, Copy, Debug)]
pub struct EnvVar {
    pub name: &'static str,
    pub meaning: &'static str,
}

/// One file a tool reads or writes.
#[derive(Clone, Copy, Debug)]
pub struct FileEntry {
    pub path: &'static str,
    pub meaning: &'static str,
}

/// What one exit status means for one tool.
#[derive(Clone, Copy, Debug)]
pub struct ExitStatusDoc {
    pub status: ExitStatus,
    pub meaning: &'static str,
}

/// The heading lines `--help` gives each section; the man page has its own.
pub const EXAMPLES_HEADING: &str = "Examples:";
pub const ENVIRONMENT_HEADING: &str = "Environment:";
pub const FILES_HEADING: &str = "Files:";
pub const EXIT_STATUS_HEADING: &str = "Exit status:";

/// Help text is laid out to fit this many columns, clap's default width.
const HELP_WIDTH: usize = 100;

/// The widest name that still shares its line with the meaning.
const NAME_COLUMN_LIMIT: usize = 22;

impl Manual {
    /// The manual of one subcommand, if it has one.
    pub fn subcommand(&self, name: &str) -> Option<&Manual> {
        self.subcommands.iter().find(|(subcommand, _)| *subcommand == name).map(|(_, manual)| manual)
    }

    /// The `after_long_help` of the command: examples, notes, environment,
    /// files and exit status, each section only when it has entries.
    pub fn render_help(&self) -> String {
        let mut sections: Vec<String> = Vec::new();
        if !self.examples.is_empty() {
            let mut text = format!("{EXAMPLES_HEADING}\n");
            for example in self.examples {
                for line in wrap(example.description, HELP_WIDTH - 2) {
                    text.push_str(&format!("  {line}\n"));
                }
                let prompt = if example.output.is_empty() { "" } else { "$ " };
                for command in example.commands {
                    text.push_str(&format!("    {prompt}{command}\n"));
                }
                for line in example.output {
                    text.push_str(&format!("    {line}\n"));
                }
            }
            sections.push(text);
        }
        sections.extend(self.notes.iter().cloned());
        let environment = self.environment.iter().map(|variable| (variable.name, variable.meaning));
        sections.extend(render_entries(ENVIRONMENT_HEADING, environment, self.environment_note));
        let files = self.files.iter().map(|file| (file.path, file.meaning));
        sections.extend(render_entries(FILES_HEADING, files, None));
        let codes: Vec<String> = self.exit_statuses.iter().map(|doc| doc.status.code().to_string()).collect();
        let statuses = codes.iter().zip(self.exit_statuses).map(|(code, doc)| (code.as_str(), doc.meaning));
        sections.extend(render_entries(EXIT_STATUS_HEADING, statuses, self.exit_status_note));
        sections.iter().map(|section| section.trim_end()).collect::<Vec<_>>().join("\n\n")
    }
}

/// A heading and one entry per line (`  NAME  meaning`, the meaning wrapped
/// under itself; a long name gets a line of its own), then `note` as a
/// paragraph. Nothing when there are no entries.
fn render_entries<'a>(
    heading: &str,
    entries: impl Iterator<Item = (&'a str, &'a str)>,
    note: Option<&str>,
) -> Option<String> {
    let entries: Vec<(&str, &str)> = entries.collect();
    if entries.is_empty() {
        return None;
    }
    let widest = entries
        .iter()
        .map(|(name, _)| name.chars().count())
        .filter(|width| *width <= NAME_COLUMN_LIMIT)
        .max()
        .unwrap_or(0);
    let column = 2 + widest + 2;
    let mut text = format!("{heading}\n");
    for (name, meaning) in entries {
        let lines = wrap(meaning, HELP_WIDTH - column);
        let name_width = name.chars().count();
        let mut lines = lines.iter();
        if name_width <= NAME_COLUMN_LIMIT {
            let first = lines.next().map(String::as_str).unwrap_or("");
            text.push_str(&format!("  {name}{}{first}\n", " ".repeat(column - 2 - name_width)));
        } else {
            text.push_str(&format!("  {name}\n"));
        }
        for line in lines {
            text.push_str(&format!("{}{line}\n", " ".repeat(column)));
        }
    }
    if let Some(note) = note {
        text.push('\n');
        for line in wrap(note, HELP_WIDTH) {
            text.push_str(&format!("{line}\n"));
        }
    }
    Some(text)
}

/// Splits `text` into lines of at most `width` characters at spaces (a
/// longer word stands alone on its line).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

// Entries several tools share (docs/contract.md §2, §6, §7).

/// Every tool reads its variables the same way (`process_env_os`).
pub const EMPTY_VARIABLE_NOTE: &str = "A variable set to the empty string counts as unset.";

/// The variables of every tool that opens the registry and finds a
/// session's owner, in the order the pages list them.
pub const SESSION_VARIABLES: [EnvVar; 6] = [
    ROSTER_DIR_VARIABLE,
    XDG_STATE_HOME_VARIABLE,
    HOME_VARIABLE,
    ROSTER_SESSION_PID_VARIABLE,
    CLAUDE_PID_VARIABLE,
    OPENCODE_PID_VARIABLE,
];

/// `SESSION_VARIABLES`, then a tool's own.
pub fn session_variables_and(own: &[EnvVar]) -> Vec<EnvVar> {
    [SESSION_VARIABLES.as_slice(), own].concat()
}

pub const ROSTER_DIR_VARIABLE: EnvVar =
    EnvVar { name: "ROSTER_DIR", meaning: "The roster directory, when --dir is not given." };
pub const XDG_STATE_HOME_VARIABLE: EnvVar = EnvVar {
    name: "XDG_STATE_HOME",
    meaning: "When neither --dir nor ROSTER_DIR is given, the roster directory is $XDG_STATE_HOME/roster.",
};
pub const HOME_VARIABLE: EnvVar = EnvVar {
    name: "HOME",
    meaning: "Without --dir, ROSTER_DIR and XDG_STATE_HOME, the roster directory is \
              ~/.local/state/roster. Text output shows paths below it as ~.",
};
pub const NO_COLOR_VARIABLE: EnvVar = EnvVar {
    name: "NO_COLOR",
    meaning: "When set and not empty, text output is never coloured. Without it, colour is used only \
              when standard output is a terminal (and TERM is not dumb).",
};
pub const TERM_VARIABLE: EnvVar = EnvVar {
    name: "TERM",
    meaning: "When dumb, text output is not coloured, even on a terminal: a dumb terminal shows colour \
              codes as garbage. --color always still colours.",
};
pub const ROSTER_SESSION_PID_VARIABLE: EnvVar = EnvVar {
    name: "ROSTER_SESSION_PID",
    meaning: "The session's owner pid, when --pid is not given. Must be a canonical positive decimal \
              pid; any other value is an error (exit 2), never ignored.",
};
pub const CLAUDE_PID_VARIABLE: EnvVar = EnvVar {
    name: "CLAUDE_PID",
    meaning: "Claude Code's own export of its pid. Believed only when it names an ancestor of the \
              caller with no other harness process in between, so a value leaked from an outer \
              harness loses.",
};
pub const OPENCODE_PID_VARIABLE: EnvVar = EnvVar {
    name: "OPENCODE_PID",
    meaning: "opencode's own export of its pid, believed under the same rule as CLAUDE_PID.",
};
pub const XDG_CONFIG_HOME_VARIABLE: EnvVar = EnvVar {
    name: "XDG_CONFIG_HOME",
    meaning: "The user configuration is $XDG_CONFIG_HOME/roster/config.toml (default \
              ~/.config/roster/config.toml).",
};

pub const SESSIONS_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/sessions/<pid>@<world>.json",
    meaning: "One record per session, named after the owner pid and its world (the pid namespace and \
              boot it is a pid in), mode 0600. An older roster's <pid>.json is still read.",
};
pub const CONSENT_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/consent/<pid>@<world>.json",
    meaning: "One consent marker per session (armed or disarmed), named as its record, mode 0600. It \
              counts only while its owner is alive.",
};
pub const STATES_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/states/<pid>@<world>.json",
    meaning: "What each session is doing (working, idle, waiting), written by its state hook, named as \
              its record, mode 0600. Believed only for the owner its record names, and only while that \
              owner is alive.",
};
pub const MESSAGES_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/messages/<pid>@<world>/",
    meaning: "The messages queued for each session, named as its record: one file per message, mode \
              0600, <seq>-<id>.json while pending and <seq>-<id>.done.json once delivered, expired or \
              refused. Removed with the session's record. Each change is made under an flock on the \
              directory, which a send waits for 1 s at most.",
};
pub const LOCK_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/.lock",
    meaning: "The advisory lock every change to the registry takes, but for a disarm, which waits for \
              it 250 ms at most and is written without it then; never removed.",
};
pub const HOOK_ERRORS_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/hook-errors.log",
    meaning: "Failures of hook-mode calls, one line each, the last 100 kept.",
};
pub const REPOSITORY_CONFIG_FILE: FileEntry = FileEntry {
    path: ".roster.toml",
    meaning: "Repository configuration, the nearest one from the session's working directory upward: \
              agent_name = \"NAME\" and, under [consent], auto_arm = true. Believed only as a regular \
              file (not a symlink) owned by you or root and writable by nobody else; any other is \
              ignored with a warning.",
};
pub const USER_CONFIG_FILE: FileEntry = FileEntry {
    path: "~/.config/roster/config.toml",
    meaning: "User configuration ($XDG_CONFIG_HOME/roster/config.toml when that is set): under \
              [consent], auto_arm = false vetoes auto-arm in every repository. A file that cannot be \
              read or parsed counts as a veto.",
};

pub const EXIT_DONE: ExitStatusDoc = ExitStatusDoc { status: ExitStatus::Success, meaning: "Done." };
pub const EXIT_FAILED: ExitStatusDoc = ExitStatusDoc {
    status: ExitStatus::Failure,
    meaning: "Failed: an I/O error, or the registry stayed locked for 5 seconds (\"registry busy\").",
};
pub const EXIT_BAD_INPUT: ExitStatusDoc = ExitStatusDoc {
    status: ExitStatus::BadInput,
    meaning: "Bad input or usage: an invalid flag or flag value, an invalid environment value, \
              an unreadable hook payload.",
};
pub const EXIT_REFUSED_UNTRUSTED: ExitStatusDoc = ExitStatusDoc {
    status: ExitStatus::Refused,
    meaning: "Refused by rule: the roster directory is untrusted (a symlink, owned by another user, \
              or writable by group or others); the message names the path and the fix.",
};
pub const HOOK_MODE_EXIT_NOTE: &str = "With --hook the command always exits 0, whatever happened: a \
    failure is one line on stderr and one line appended to hook-errors.log, so that a harness never \
    blocks or reports a session because of roster.";

/// The sections of `roster(7)`, the overview page: every tool's files,
/// variables and statuses, and a worked example.
pub fn overview() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "A worked example with Claude Code. Wire roster into it once; from then on its \
                              SessionStart hook runs roster-register --hook claude-code, which registers \
                              the session, and its SessionEnd hook runs roster-prune --current --hook \
                              claude-code, which removes the session's record:",
                commands: &["roster-hooks install claude-code"],
                output: &["installed roster hooks for claude-code: created ~/.claude/settings.json", "  ..."],
            },
            Example {
                description: "Name the agent that works in the repository, and let its sessions accept \
                              messages:",
                commands: &["cat ~/src/app/.roster.toml"],
                output: &["agent_name = \"wren\"", "[consent]", "auto_arm = true"],
            },
            Example {
                description: "Start claude in ~/src/app. The hook registers the session and prints nothing; \
                              any terminal now sees it:",
                commands: &["roster-list"],
                output: &[
                    "PID   HARNESS      AGENT  LIVENESS  STATE      CONSENT  AGE  CWD        SESSION",
                    "5854  claude-code  wren   alive     working 5s  none     2m   ~/src/app  3f1c9a2e",
                ],
            },
            Example {
                description: "Inside the session, for instance from the agent's shell tool, the repository's \
                              auto_arm makes the session accept messages:",
                commands: &["roster-consent should-arm && echo accepts messages"],
                output: &["accepts messages"],
            },
            Example {
                description: "When the session ends, the SessionEnd hook removes its record. Had it crashed \
                              instead, its verdict would be dead and the next prune would remove it:",
                commands: &["roster-prune"],
                output: &[
                    "removed pid 5854 (dead: pid 5854 is gone) ~/src/app",
                    "removed 1 dead, 0 unknown, 0 consent markers, 0 temporaries; kept 0",
                ],
            },
        ],
        environment: session_variables_and(&[
            EnvVar {
                name: "ROSTER_AGENT",
                meaning: "The agent name roster-register records, when --agent is not given.",
            },
            EnvVar {
                name: "ROSTER_SESSION_ID",
                meaning: "The session id roster-register records, when neither --session-id nor the hook \
                          payload gives one.",
            },
            XDG_CONFIG_HOME_VARIABLE,
            NO_COLOR_VARIABLE,
            TERM_VARIABLE,
        ]),
        environment_note: Some(EMPTY_VARIABLE_NOTE),
        files: &[
            SESSIONS_FILE,
            CONSENT_FILE,
            MESSAGES_FILE,
            LOCK_FILE,
            HOOK_ERRORS_FILE,
            REPOSITORY_CONFIG_FILE,
            USER_CONFIG_FILE,
        ],
        exit_statuses: &[
            EXIT_DONE,
            EXIT_FAILED,
            EXIT_BAD_INPUT,
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "Refused by rule: untrusted roster directory, session-id conflict, owner not \
                          running, unverified owner for consent.",
            },
        ],
        exit_status_note: Some(
            "Hook mode (--hook) always exits 0. roster-consent should-arm exits only 0 (accept messages) \
             or 1 (do not, including on every error). roster-send exits 1 when the session does not \
             accept messages, and with --wait 4 when the message expired and 5 when it was still pending \
             as the wait ran out.",
        ),
        ..Manual::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_within_the_width() {
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert_eq!(wrap("a verylongword b", 4), ["a", "verylongword", "b"]);
        assert!(wrap("", 10).is_empty());
    }

    #[test]
    fn help_lists_each_section_under_its_heading() {
        let manual = Manual {
            examples: &[Example { description: "List:", commands: &["tool"], output: &[] }],
            notes: vec!["Prose.".to_owned()],
            environment: vec![ROSTER_DIR_VARIABLE],
            files: &[LOCK_FILE],
            exit_statuses: &[EXIT_DONE],
            exit_status_note: Some("Always."),
            ..Manual::default()
        };
        assert_eq!(
            manual.render_help(),
            "Examples:\n  List:\n    tool\n\nProse.\n\n\
             Environment:\n  ROSTER_DIR  The roster directory, when --dir is not given.\n\n\
             Files:\n  $ROSTER_DIR/.lock  The advisory lock every change to the registry takes, but for a disarm, which\n\
             \x20                    waits for it 250 ms at most and is written without it then; never removed.\n\n\
             Exit status:\n  0  Done.\n\nAlways."
        );
    }

    #[test]
    fn a_long_name_gets_a_line_of_its_own() {
        let manual = Manual {
            environment: vec![
                EnvVar { name: "A_VERY_LONG_VARIABLE_NAME, ANOTHER", meaning: "Both." },
                EnvVar { name: "SHORT", meaning: "One." },
            ],
            ..Manual::default()
        };
        assert_eq!(
            manual.render_help(),
            "Environment:\n  A_VERY_LONG_VARIABLE_NAME, ANOTHER\n         Both.\n  SHORT  One."
        );
    }
}
