//! `roster-hooks`' manual: the examples, notes, environment, files and
//! exit statuses `--help` and the man page render.

use cli_support::ExitStatus;
use cli_support::manual::{self, EnvVar, Example, ExitStatusDoc, FileEntry, Manual};
use harness::hook_config::{CODEX_TRUST_HINT, HookHarness};

/// Examples, notes, environment, files and exit statuses, the subcommands'
/// examples among them: `--help` and the man page both render this.
pub fn manual() -> Manual {
    Manual {
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
        notes: vec![
            state_events_note(),
            "Every change to a settings file leaves every byte that is not roster's as it was (comments, \
             key order, number spelling, line ends); install keeps the previous file as \
             <file>.roster-backup; uninstall removes roster's hooks, that backup, and a file and \
             directories left holding nothing else, so nothing of roster's stays behind. The plugin files \
             of opencode and amp are roster's own, written whole and removed whole."
                .to_owned(),
            "User-scope hooks call roster-register, roster-prune and roster-state by absolute path: the directory \
             roster-hooks runs from, or --bin-dir. Project-scope hooks (.claude/settings.json, \
             .github/hooks/roster.json, the project plugin files) are committed and shared, so they call \
             them by name through PATH unless --bin-dir is given; install and status warn when they are \
             not on PATH. With --dir DIR the hooks carry --dir DIR as well; without it they use \
             ROSTER_DIR or the default when they run. Hooks that would call the binaries in a cargo build \
             directory (target/debug, target/release, target/<triple>/release) are installed with a \
             warning: `cargo clean` breaks them; install roster first (cargo xtask install, or the Debian \
             package) and run the installed roster-hooks."
                .to_owned(),
            "status says, per harness and scope: installed, partly-installed, not-installed, untrusted \
             (Codex has not trusted them), broken (a program a hook runs is missing or not executable, so \
             every run fails), unparseable or unreadable, with a detail naming the fix."
                .to_owned(),
            format!(
                "Codex runs a hook only once you trust it ({CODEX_TRUST_HINT}); roster-hooks cannot compute \
                 Codex's trust hash, so it never writes trust entries, and status reports hooks Codex has \
                 not trusted. Copilot CLI runs project hooks only in a folder you trust."
            ),
        ],
        environment: vec![
            EnvVar { name: "HOME", meaning: "Where the user-scope configuration files are found." },
            EnvVar {
                name: "CLAUDE_CONFIG_DIR",
                meaning: "Claude Code's configuration directory, instead of ~/.claude.",
            },
            EnvVar { name: "CODEX_HOME", meaning: "Codex's home directory, instead of ~/.codex." },
            EnvVar {
                name: "XDG_CONFIG_HOME",
                meaning: "Where opencode's user plugin goes, instead of ~/.config: \
                          $XDG_CONFIG_HOME/opencode/plugins/roster.js.",
            },
            EnvVar {
                name: "ROSTER_DIR",
                meaning: "Not read by roster-hooks: the installed hooks read it when they run. Give --dir \
                          to have the hooks carry --dir instead.",
            },
            manual::NO_COLOR_VARIABLE,
            manual::TERM_VARIABLE,
        ],
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            FileEntry {
                path: "~/.claude/settings.json",
                meaning: "The claude-code hooks: Claude Code's user settings (--scope project: \
                          .claude/settings.json in the current directory).",
            },
            FileEntry { path: "~/.codex/hooks.json", meaning: "The codex hooks: Codex's hooks file." },
            FileEntry {
                path: "~/.codex/config.toml",
                meaning: "Read only: where Codex keeps the hashes of the hooks the user trusts.",
            },
            FileEntry {
                path: "~/.gemini/settings.json",
                meaning: "The gemini-cli hooks: Gemini CLI's settings.",
            },
            FileEntry {
                path: "~/.cursor/hooks.json",
                meaning: "The cursor-agent hooks: Cursor agent's hooks file.",
            },
            FileEntry {
                path: ".github/hooks/roster.json",
                meaning: "The copilot hooks: Copilot CLI's project hooks, in the current directory.",
            },
            FileEntry {
                path: "~/.config/opencode/plugins/roster.js",
                meaning: "The opencode plugin, roster's own file (--scope project: \
                          .opencode/plugins/roster.js in the current directory).",
            },
            FileEntry {
                path: "~/.config/amp/plugins/roster.ts",
                meaning: "The amp plugin, roster's own file (--scope project: .amp/plugins/roster.ts in \
                          the current directory).",
            },
            FileEntry {
                path: "<file>.roster-backup",
                meaning: "The previous version of each configuration file roster-hooks changed.",
            },
        ],
        exit_statuses: &[
            manual::EXIT_DONE,
            ExitStatusDoc { status: ExitStatus::Failure, meaning: "Failed: an I/O error." },
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage: an unknown harness, a scope the harness has no file for, \
                          HOME unset.",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "Refused by rule: a configuration file roster-hooks cannot parse; nothing is \
                          written.",
            },
        ],
        subcommands: vec![
            (
                "print",
                Manual {
                    examples: &[Example {
                        description: "Save Codex's entries to merge them by hand:",
                        commands: &["roster-hooks print codex > roster-hooks.json"],
                        output: &[],
                    }],
                    ..Manual::default()
                },
            ),
            (
                "install",
                Manual {
                    examples: &[
                        Example {
                            description: "Into Claude Code's user settings:",
                            commands: &["roster-hooks install claude-code"],
                            output: &[],
                        },
                        Example {
                            description: "Into the current project's .claude/settings.json:",
                            commands: &["roster-hooks install claude-code --scope project"],
                            output: &[],
                        },
                        Example {
                            description: "Hooks that call the binaries in /usr/local/bin:",
                            commands: &["roster-hooks install codex --bin-dir /usr/local/bin"],
                            output: &[],
                        },
                    ],
                    ..Manual::default()
                },
            ),
            (
                "uninstall",
                Manual {
                    examples: &[Example {
                        description: "Remove what install added to Gemini CLI's settings:",
                        commands: &["roster-hooks uninstall gemini-cli"],
                        output: &[],
                    }],
                    ..Manual::default()
                },
            ),
            (
                "status",
                Manual {
                    examples: &[
                        Example {
                            description: "Every harness, every scope:",
                            commands: &["roster-hooks status"],
                            output: &[],
                        },
                        Example {
                            description: "Codex only, for a script:",
                            commands: &["roster-hooks status codex --format json"],
                            output: &[],
                        },
                    ],
                    ..Manual::default()
                },
            ),
        ],
        ..Manual::default()
    }
}

/// What install wires, with every state event of every harness named from
/// the one table of them (`harness::ACTIVITY_EVENTS`).
fn state_events_note() -> String {
    let per_harness: Vec<String> = HookHarness::ALL
        .into_iter()
        .map(|harness| {
            let events: Vec<String> = harness
                .state_events()
                .into_iter()
                .map(|event| {
                    let name = harness.event_name(event);
                    let kinds = harness::activity_event_kinds(harness.into(), name);
                    if kinds.is_empty() { name.to_owned() } else { format!("{name} ({})", kinds.join(", ")) }
                })
                .collect();
            format!("{harness} {}", events.join(", "))
        })
        .collect();
    format!(
        "What install wires: the session's start (roster-register --hook HARNESS), its end (roster-prune \
         --current --hook HARNESS), and one roster-state --hook HARNESS --event EVENT hook per event that \
         says what the session is doing (a prompt submitted, a tool about to run or run, a permission \
         asked, the turn ended), which roster-list shows as working, idle or waiting; opencode's and amp's \
         plugins pass those events on themselves. The events: {}. A file installed by an older roster, \
         without the state hooks, is partly-installed until install runs again.",
        per_harness.join("; ")
    )
}
