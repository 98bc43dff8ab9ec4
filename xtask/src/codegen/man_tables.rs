//! The man page sections clap cannot know: per binary, its examples, exit
//! statuses, environment variables, files and related pages. They are data
//! so that every page renders them the same way and a reviewer can read
//! them side by side; the renderers live in `man_pages` and `overview`.

/// Everything a binary's man page needs besides its clap definition.
pub struct BinaryManual {
    pub binary: &'static str,
    pub command: fn() -> clap::Command,
    pub sections: PageSections,
}

/// The sections every roster page carries after the generated ones.
pub struct PageSections {
    pub examples: &'static [Example],
    pub exit_statuses: &'static [ExitStatus],
    /// A paragraph after the exit status list, for rules that override it.
    pub exit_status_note: Option<&'static str>,
    pub environment: &'static [EnvironmentVariable],
    pub files: &'static [FileEntry],
    /// Related pages as `name(section)`.
    pub see_also: &'static [&'static str],
}

/// One example: what it does, the commands, and optionally what they print.
pub struct Example {
    pub description: &'static str,
    pub commands: &'static [&'static str],
    pub output: &'static [&'static str],
}

pub struct ExitStatus {
    pub code: &'static str,
    pub meaning: &'static str,
}

#[derive(Clone, Copy)]
pub struct EnvironmentVariable {
    pub name: &'static str,
    pub meaning: &'static str,
}

#[derive(Clone, Copy)]
pub struct FileEntry {
    pub path: &'static str,
    pub meaning: &'static str,
}

/// The five binaries, in the order pages and completions are generated.
pub const BINARY_NAMES: [&str; 5] =
    ["roster-register", "roster-list", "roster-prune", "roster-consent", "roster-hooks"];

/// One entry per binary, in the order of [`BINARY_NAMES`].
pub const BINARY_MANUALS: [BinaryManual; 5] = [
    BinaryManual {
        binary: "roster-register",
        command: roster_register::command,
        sections: REGISTER_SECTIONS,
    },
    BinaryManual { binary: "roster-list", command: roster_list::command, sections: LIST_SECTIONS },
    BinaryManual { binary: "roster-prune", command: roster_prune::command, sections: PRUNE_SECTIONS },
    BinaryManual { binary: "roster-consent", command: roster_consent::command, sections: CONSENT_SECTIONS },
    BinaryManual { binary: "roster-hooks", command: roster_hooks::command, sections: HOOKS_SECTIONS },
];

const SEE_ALSO_ALL: [&str; 6] = [
    "roster(7)",
    "roster-register(1)",
    "roster-list(1)",
    "roster-prune(1)",
    "roster-consent(1)",
    "roster-hooks(1)",
];

// Exit statuses shared by the tools (docs/contract.md §6).

const EXIT_DONE: ExitStatus = ExitStatus { code: "0", meaning: "Done." };
const EXIT_FAILED: ExitStatus = ExitStatus {
    code: "1",
    meaning: "Failed: an I/O error, or the registry stayed locked for 5 seconds (\"registry busy\").",
};
const EXIT_BAD_INPUT: ExitStatus = ExitStatus {
    code: "2",
    meaning: "Bad input or usage: an invalid flag or flag value, an invalid environment value, \
              an unreadable hook payload.",
};
const EXIT_REFUSED_UNTRUSTED: ExitStatus = ExitStatus {
    code: "3",
    meaning: "Refused by rule: the roster directory is untrusted (a symlink, owned by another user, \
              or writable by group or others); the message names the path and the fix.",
};
const HOOK_MODE_EXIT_NOTE: &str = "With --hook the command always exits 0, whatever happened: a failure is \
    one line on stderr and one line appended to hook-errors.log, so that a harness never blocks or \
    reports a session because of roster.";

// Environment variables shared by the tools.

const ROSTER_DIR_VARIABLE: EnvironmentVariable =
    EnvironmentVariable { name: "ROSTER_DIR", meaning: "The roster directory, when --dir is not given." };
const XDG_STATE_HOME_VARIABLE: EnvironmentVariable = EnvironmentVariable {
    name: "XDG_STATE_HOME",
    meaning: "When neither --dir nor ROSTER_DIR is given, the roster directory is $XDG_STATE_HOME/roster.",
};
const HOME_VARIABLE: EnvironmentVariable = EnvironmentVariable {
    name: "HOME",
    meaning: "Without --dir, ROSTER_DIR and XDG_STATE_HOME, the roster directory is \
              ~/.local/state/roster. Text output shows paths below it as ~.",
};
const NO_COLOR_VARIABLE: EnvironmentVariable = EnvironmentVariable {
    name: "NO_COLOR",
    meaning: "When set and not empty, text output is never coloured. Without it, colour is used only \
              when standard output is a terminal.",
};
const ROSTER_SESSION_PID_VARIABLE: EnvironmentVariable = EnvironmentVariable {
    name: "ROSTER_SESSION_PID",
    meaning: "The session's owner pid, when --pid is not given. Must be a canonical positive decimal \
              pid; any other value is an error (exit 2), never ignored.",
};
const CLAUDE_PID_VARIABLE: EnvironmentVariable = EnvironmentVariable {
    name: "CLAUDE_PID",
    meaning: "Claude Code's own export of its pid. Believed only when it names an ancestor of the \
              caller with no other harness process in between, so a value leaked from an outer \
              harness loses.",
};
const OPENCODE_PID_VARIABLE: EnvironmentVariable = EnvironmentVariable {
    name: "OPENCODE_PID",
    meaning: "opencode's own export of its pid, believed under the same rule as CLAUDE_PID.",
};
const XDG_CONFIG_HOME_VARIABLE: EnvironmentVariable = EnvironmentVariable {
    name: "XDG_CONFIG_HOME",
    meaning: "The user configuration is $XDG_CONFIG_HOME/roster/config.toml (default \
              ~/.config/roster/config.toml).",
};

// Files shared by the tools; paths below the roster directory are relative to it.

const SESSIONS_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/sessions/<pid>.json",
    meaning: "One record per session, named after the owner pid, mode 0600.",
};
const CONSENT_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/consent/<pid>.json",
    meaning: "One consent marker per session (armed or disarmed), mode 0600. It counts only while its \
              owner is alive.",
};
const LOCK_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/.lock",
    meaning: "The advisory lock every change to the registry takes; never removed.",
};
const HOOK_ERRORS_FILE: FileEntry = FileEntry {
    path: "$ROSTER_DIR/hook-errors.log",
    meaning: "Failures of hook-mode calls, one line each, the last 100 kept.",
};
const REPOSITORY_CONFIG_FILE: FileEntry = FileEntry {
    path: ".roster.toml",
    meaning: "Repository configuration, the nearest one from the session's working directory upward: \
              agent_name = \"NAME\" and, under [consent], auto_arm = true. Believed only as a regular \
              file (not a symlink) owned by you or root and writable by nobody else; any other is \
              ignored with a warning.",
};
const USER_CONFIG_FILE: FileEntry = FileEntry {
    path: "~/.config/roster/config.toml",
    meaning: "User configuration: under [consent], auto_arm = false vetoes auto-arm in every repository. \
              A file that cannot be read or parsed counts as a veto.",
};

const REGISTER_SECTIONS: PageSections = PageSections {
    examples: &[
        Example {
            description: "Register the current shell as a session, working as agent wren:",
            commands: &["roster-register --pid parent --agent wren"],
            output: &[],
        },
        Example {
            description: "From a wrapper script that then execs the harness, so the wrapper's pid \
                          becomes the harness's:",
            commands: &["roster-register --pid $$ --harness aider && exec aider"],
            output: &[],
        },
        Example {
            description: "As Claude Code's SessionStart hook, which is what roster-hooks install \
                          claude-code writes; the payload arrives on standard input:",
            commands: &["roster-register --hook claude-code"],
            output: &[],
        },
        Example {
            description: "Register and print the record as roster-list shows it:",
            commands: &["roster-register --pid parent --format json"],
            output: &[],
        },
    ],
    exit_statuses: &[
        ExitStatus { code: "0", meaning: "The session was registered or its record refreshed." },
        EXIT_FAILED,
        ExitStatus {
            code: "2",
            meaning: "Bad input or usage: an invalid flag or flag value, an invalid ROSTER_SESSION_PID, \
                      ROSTER_AGENT or ROSTER_SESSION_ID, an unreadable hook payload, or no owner found.",
        },
        ExitStatus {
            code: "3",
            meaning: "Refused by rule: the roster directory is untrusted, another live session holds the \
                      session id (the message names its pid), or the owner is not running.",
        },
    ],
    exit_status_note: Some(HOOK_MODE_EXIT_NOTE),
    environment: &[
        ROSTER_DIR_VARIABLE,
        XDG_STATE_HOME_VARIABLE,
        HOME_VARIABLE,
        ROSTER_SESSION_PID_VARIABLE,
        CLAUDE_PID_VARIABLE,
        OPENCODE_PID_VARIABLE,
        EnvironmentVariable {
            name: "ROSTER_AGENT",
            meaning: "The agent name, when --agent is not given; beats agent_name in .roster.toml.",
        },
        EnvironmentVariable {
            name: "ROSTER_SESSION_ID",
            meaning: "The session id, when neither --session-id nor the hook payload gives one.",
        },
        EnvironmentVariable {
            name: "CLAUDE_CODE_SESSION_ID, GEMINI_SESSION_ID, CODEX_THREAD_ID, AGENT_SESSION_ID",
            meaning: "The harnesses' own session id exports, the last resort for the session id.",
        },
        EnvironmentVariable {
            name: "CLAUDE_CODE_MESSAGING_SOCKET",
            meaning: "Claude Code's messaging socket, recorded when --socket is not given and the socket \
                      exists; a session whose socket disappears is dead.",
        },
    ],
    files: &[SESSIONS_FILE, LOCK_FILE, HOOK_ERRORS_FILE, REPOSITORY_CONFIG_FILE],
    see_also: &SEE_ALSO_ALL,
};

const LIST_SECTIONS: PageSections = PageSections {
    examples: &[
        Example { description: "What runs right now:", commands: &["roster-list"], output: &[] },
        Example {
            description: "Everything, dead sessions included, for a script:",
            commands: &["roster-list --all --format json"],
            output: &[],
        },
        Example {
            description: "Pids of the live claude-code sessions working in this repository:",
            commands: &[
                "roster-list --harness claude-code --cwd . --json |",
                "    jq '.[] | select(.liveness == \"alive\") | .session_pid'",
            ],
            output: &[],
        },
        Example {
            description: "The sessions working as agent wren:",
            commands: &["roster-list --agent wren"],
            output: &[],
        },
        Example {
            description: "Follow the registry live, one JSON event per line (see EVENTS):",
            commands: &["roster-list --watch --json"],
            output: &[],
        },
        Example {
            description: "Wait until session 5854 has ended, like tail --pid:",
            commands: &["roster-list --until-gone 5854 && echo finished"],
            output: &[],
        },
    ],
    exit_statuses: &[
        ExitStatus {
            code: "0",
            meaning: "Listed, even when some entries are problems (malformed, untrusted, \
                      unsupported-format): one bad file never fails the command. With --watch, \
                      also on SIGINT, SIGTERM or a reader that went away; with --until-gone, \
                      once the session is gone.",
        },
        ExitStatus { code: "1", meaning: "Failed: an I/O error." },
        ExitStatus { code: "2", meaning: "Bad input or usage: an invalid flag or flag value." },
        EXIT_REFUSED_UNTRUSTED,
    ],
    exit_status_note: None,
    environment: &[ROSTER_DIR_VARIABLE, XDG_STATE_HOME_VARIABLE, HOME_VARIABLE, NO_COLOR_VARIABLE],
    files: &[SESSIONS_FILE, CONSENT_FILE, HOOK_ERRORS_FILE],
    see_also: &SEE_ALSO_ALL,
};

const PRUNE_SECTIONS: PageSections = PageSections {
    examples: &[
        Example { description: "Remove what is provably gone:", commands: &["roster-prune"], output: &[] },
        Example {
            description: "See what would go, including entries nobody could examine for a week:",
            commands: &["roster-prune --older-than 7d --dry-run"],
            output: &[],
        },
        Example {
            description: "As Claude Code's SessionEnd hook, which is what roster-hooks install claude-code \
                          writes:",
            commands: &["roster-prune --current --hook claude-code"],
            output: &[],
        },
        Example {
            description: "A crontab line that prunes every hour, quietly:",
            commands: &["0 * * * * roster-prune --quiet"],
            output: &[],
        },
    ],
    exit_statuses: &[
        ExitStatus { code: "0", meaning: "Done, also when nothing was removed or with --dry-run." },
        EXIT_FAILED,
        ExitStatus {
            code: "2",
            meaning: "Bad input or usage: an invalid --older-than duration, an invalid owner variable, no \
                      owner found for --current, an unreadable hook payload.",
        },
        EXIT_REFUSED_UNTRUSTED,
    ],
    exit_status_note: Some(HOOK_MODE_EXIT_NOTE),
    environment: &[
        ROSTER_DIR_VARIABLE,
        XDG_STATE_HOME_VARIABLE,
        HOME_VARIABLE,
        ROSTER_SESSION_PID_VARIABLE,
        CLAUDE_PID_VARIABLE,
        OPENCODE_PID_VARIABLE,
    ],
    files: &[
        SESSIONS_FILE,
        CONSENT_FILE,
        LOCK_FILE,
        HOOK_ERRORS_FILE,
        FileEntry {
            path: "$ROSTER_DIR/sessions/.tmp-*",
            meaning: "Temporaries of interrupted writes, removed once older than an hour.",
        },
    ],
    see_also: &SEE_ALSO_ALL,
};

const CONSENT_SECTIONS: PageSections = PageSections {
    examples: &[
        Example {
            description: "Accept messages in this session, from a shell the harness runs (its parent is the \
                          session):",
            commands: &["roster-consent arm"],
            output: &[],
        },
        Example {
            description: "Refuse them again, even where the repository's .roster.toml sets auto_arm:",
            commands: &["roster-consent disarm"],
            output: &[],
        },
        Example {
            description: "Why the session does or does not accept messages:",
            commands: &["roster-consent status"],
            output: &[],
        },
        Example {
            description: "In a script, start listening for messages only when the session consents:",
            commands: &["roster-consent should-arm && start-listening"],
            output: &[],
        },
        Example {
            description: "From an orchestrator, in any directory: may it message the registered session \
                          6120? The answer comes from the directory that session registered with:",
            commands: &["roster-consent should-arm --pid 6120 && echo \"may push to 6120\""],
            output: &[],
        },
        Example {
            description: "Opt a repository in to auto-arm, in the .roster.toml committed at its root:",
            commands: &["cat .roster.toml"],
            output: &["agent_name = \"wren\"", "[consent]", "auto_arm = true"],
        },
        Example {
            description: "Veto auto-arm in every repository:",
            commands: &["cat ~/.config/roster/config.toml"],
            output: &["[consent]", "auto_arm = false"],
        },
    ],
    exit_statuses: &[
        EXIT_DONE,
        EXIT_FAILED,
        ExitStatus {
            code: "2",
            meaning: "Bad input or usage: an invalid flag or flag value, an invalid owner variable, no \
                      owner found, or (status) a session with no record of its directory and no --cwd.",
        },
        ExitStatus {
            code: "3",
            meaning: "Refused by rule: the roster directory is untrusted, the owner is not running, or, \
                      for arm, the owner is not verified (neither the caller nor one of its ancestors).",
        },
    ],
    exit_status_note: Some(
        "should-arm exits 0 when the session should accept messages now and 1 otherwise, including on \
         every error (fail closed); it never exits 2 or 3.",
    ),
    environment: &[
        ROSTER_DIR_VARIABLE,
        XDG_STATE_HOME_VARIABLE,
        HOME_VARIABLE,
        ROSTER_SESSION_PID_VARIABLE,
        CLAUDE_PID_VARIABLE,
        OPENCODE_PID_VARIABLE,
        XDG_CONFIG_HOME_VARIABLE,
        NO_COLOR_VARIABLE,
    ],
    files: &[CONSENT_FILE, SESSIONS_FILE, LOCK_FILE, REPOSITORY_CONFIG_FILE, USER_CONFIG_FILE],
    see_also: &SEE_ALSO_ALL,
};

const HOOKS_SECTIONS: PageSections = PageSections {
    examples: &[
        Example {
            description: "Add roster's hooks to Claude Code's user settings:",
            commands: &["roster-hooks install claude-code"],
            output: &[],
        },
        Example {
            description: "Only for the current project:",
            commands: &["roster-hooks install claude-code --scope project"],
            output: &[],
        },
        Example {
            description: "Show where roster's hooks are installed, for a script:",
            commands: &["roster-hooks status --format json"],
            output: &[],
        },
        Example {
            description: "Show the entries to merge by hand into Codex's hooks.json:",
            commands: &["roster-hooks print codex"],
            output: &[],
        },
        Example {
            description: "Remove exactly what install added:",
            commands: &["roster-hooks uninstall claude-code"],
            output: &[],
        },
    ],
    exit_statuses: &[
        EXIT_DONE,
        ExitStatus { code: "1", meaning: "Failed: an I/O error." },
        ExitStatus {
            code: "2",
            meaning: "Bad input or usage: an unknown harness, a scope the harness has no file for, HOME \
                      unset.",
        },
        ExitStatus {
            code: "3",
            meaning: "Refused by rule: a configuration file roster-hooks cannot parse; nothing is written.",
        },
    ],
    exit_status_note: None,
    environment: &[
        EnvironmentVariable { name: "HOME", meaning: "Where the user-scope configuration files are found." },
        EnvironmentVariable {
            name: "CLAUDE_CONFIG_DIR",
            meaning: "Claude Code's configuration directory, instead of ~/.claude.",
        },
        EnvironmentVariable { name: "CODEX_HOME", meaning: "Codex's home directory, instead of ~/.codex." },
        EnvironmentVariable {
            name: "ROSTER_DIR",
            meaning: "Not read by roster-hooks: the installed hooks read it when they run. Give --dir to \
                      have the hooks carry --dir instead.",
        },
        NO_COLOR_VARIABLE,
    ],
    files: &[
        FileEntry {
            path: "~/.claude/settings.json",
            meaning: "Claude Code's user settings (--scope project: .claude/settings.json in the current \
                      directory).",
        },
        FileEntry { path: "~/.codex/hooks.json", meaning: "Codex's hooks." },
        FileEntry {
            path: "~/.codex/config.toml",
            meaning: "Read only: where Codex keeps the hashes of the hooks the user trusts.",
        },
        FileEntry { path: "~/.gemini/settings.json", meaning: "Gemini CLI's settings." },
        FileEntry { path: "~/.cursor/hooks.json", meaning: "Cursor agent's hooks." },
        FileEntry {
            path: ".github/hooks/roster.json",
            meaning: "Copilot CLI's project hooks, in the current directory.",
        },
        FileEntry {
            path: "<file>.roster-backup",
            meaning: "The previous version of each configuration file roster-hooks changed.",
        },
    ],
    see_also: &SEE_ALSO_ALL,
};

/// The sections of `roster(7)`: every tool's files, variables and statuses.
pub const OVERVIEW_SECTIONS: PageSections = PageSections {
    examples: &[
        Example {
            description: "A worked example with Claude Code. Wire roster into it once; from then on its \
                          SessionStart hook runs roster-register --hook claude-code, which registers the \
                          session, and its SessionEnd hook runs roster-prune --current --hook claude-code, \
                          which removes the session's record:",
            commands: &["roster-hooks install claude-code"],
            output: &["installed roster hooks for claude-code: created ~/.claude/settings.json", "  ..."],
        },
        Example {
            description: "Name the agent that works in the repository, and let its sessions accept messages:",
            commands: &["cat ~/src/app/.roster.toml"],
            output: &["agent_name = \"wren\"", "[consent]", "auto_arm = true"],
        },
        Example {
            description: "Start claude in ~/src/app. The hook registers the session and prints nothing; any \
                          terminal now sees it:",
            commands: &["roster-list"],
            output: &[
                "PID   HARNESS      AGENT  STATE  CONSENT  AGE  CWD        SESSION",
                "5854  claude-code  wren   alive  none     2m   ~/src/app  3f1c9a2e",
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
    exit_statuses: &[
        EXIT_DONE,
        EXIT_FAILED,
        EXIT_BAD_INPUT,
        ExitStatus {
            code: "3",
            meaning: "Refused by rule: untrusted roster directory, session-id conflict, owner not \
                      running, unverified owner for consent.",
        },
    ],
    exit_status_note: Some(
        "Hook mode (--hook) always exits 0. roster-consent should-arm exits only 0 (accept messages) or 1 \
         (do not, including on every error).",
    ),
    environment: &[
        ROSTER_DIR_VARIABLE,
        XDG_STATE_HOME_VARIABLE,
        HOME_VARIABLE,
        ROSTER_SESSION_PID_VARIABLE,
        CLAUDE_PID_VARIABLE,
        OPENCODE_PID_VARIABLE,
        EnvironmentVariable {
            name: "ROSTER_AGENT",
            meaning: "The agent name roster-register records, when --agent is not given.",
        },
        EnvironmentVariable {
            name: "ROSTER_SESSION_ID",
            meaning: "The session id roster-register records, when neither --session-id nor the hook \
                      payload gives one.",
        },
        XDG_CONFIG_HOME_VARIABLE,
        NO_COLOR_VARIABLE,
    ],
    files: &[
        SESSIONS_FILE,
        CONSENT_FILE,
        LOCK_FILE,
        HOOK_ERRORS_FILE,
        REPOSITORY_CONFIG_FILE,
        USER_CONFIG_FILE,
    ],
    see_also: &[
        "roster-register(1)",
        "roster-list(1)",
        "roster-prune(1)",
        "roster-consent(1)",
        "roster-hooks(1)",
    ],
};
