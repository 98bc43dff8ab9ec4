//! `roster-consent`'s manual: the examples (each subcommand's among
//! them), notes, environment and exit statuses `--help` and the man page
//! render.

use cli_support::ExitStatus;
use cli_support::manual::{self, Example, ExitStatusDoc, Manual};

/// Examples, environment, files and exit statuses, the subcommands'
/// examples among them: `--help` and the man page both render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Accept pushes in this session, from a shell the harness runs (its parent is \
                              the session):",
                commands: &["roster-consent arm"],
                output: &[],
            },
            Example {
                description: "Refuse them again, even where the repository's .roster.toml sets auto_arm:",
                commands: &["roster-consent disarm"],
                output: &[],
            },
            Example {
                description: "Why the session does or does not accept pushes:",
                commands: &["roster-consent status"],
                output: &[],
            },
            Example {
                description: "In a script, start listening for pushes only when the session consents:",
                commands: &["roster-consent should-arm && start-listening"],
                output: &[],
            },
            Example {
                description: "From an orchestrator, in any directory: may it push to the registered session \
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
        environment: manual::session_variables_and(&[
            manual::XDG_CONFIG_HOME_VARIABLE,
            manual::NO_COLOR_VARIABLE,
            manual::TERM_VARIABLE,
        ]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            manual::CONSENT_FILE,
            manual::SESSIONS_FILE,
            manual::LOCK_FILE,
            manual::REPOSITORY_CONFIG_FILE,
            manual::USER_CONFIG_FILE,
        ],
        exit_statuses: &[
            manual::EXIT_DONE,
            manual::EXIT_FAILED,
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage: an invalid flag or flag value, an invalid owner variable, no \
                          owner found, or (status) a running session with no record of its directory and \
                          no --cwd.",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "Refused by rule: the roster directory is untrusted, the owner is not running \
                          (status: the session has ended; it still prints what the session left), or, \
                          for arm, the owner is not verified (neither the caller nor one of its ancestors).",
            },
        ],
        exit_status_note: Some(
            "should-arm exits 0 when the session should accept pushes now and 1 otherwise, including on \
             every error (fail closed); it never exits 2 or 3.",
        ),
        subcommands: vec![
            ("arm", Manual { examples: ARM_EXAMPLES, ..Manual::default() }),
            ("disarm", Manual { examples: DISARM_EXAMPLES, ..Manual::default() }),
            ("status", Manual { examples: STATUS_EXAMPLES, ..Manual::default() }),
            ("should-arm", Manual { examples: SHOULD_ARM_EXAMPLES, ..Manual::default() }),
        ],
        ..Manual::default()
    }
}

const ARM_EXAMPLES: &[Example] = &[
    Example {
        description: "From a shell inside the session:",
        commands: &["roster-consent arm"],
        output: &[],
    },
    Example {
        description: "Naming the shell that runs this command as the session's owner:",
        commands: &["roster-consent arm --pid parent"],
        output: &[],
    },
    Example {
        description: "Print the written marker for a script:",
        commands: &["roster-consent arm --json"],
        output: &[],
    },
];

const DISARM_EXAMPLES: &[Example] = &[
    Example {
        description: "From a shell inside the session:",
        commands: &["roster-consent disarm"],
        output: &[],
    },
    Example {
        description: "Disarm a session by its owner's pid (from roster-list):",
        commands: &["roster-consent disarm --pid 5854"],
        output: &[],
    },
];

const STATUS_EXAMPLES: &[Example] = &[
    Example {
        description: "Why the calling session does or does not accept pushes:",
        commands: &["roster-consent status"],
        output: &[],
    },
    Example {
        description: "The same for the session whose owner is pid 5854:",
        commands: &["roster-consent status --pid 5854"],
        output: &[],
    },
    Example {
        description: "Judged from another directory than the one the session registered with:",
        commands: &["roster-consent status --pid 5854 --cwd ~/src/app"],
        output: &[],
    },
    Example {
        description: "Only the decision, for a script:",
        commands: &["roster-consent status --json | jq .should_arm"],
        output: &[],
    },
];

const SHOULD_ARM_EXAMPLES: &[Example] = &[
    Example {
        description: "In the session's own shell:",
        commands: &["if roster-consent should-arm; then echo accepting pushes; fi"],
        output: &[],
    },
    Example {
        description: "From an orchestrator: may it push to the session whose owner is pid 6120?",
        commands: &["roster-consent should-arm --pid 6120 && echo \"may push to 6120\""],
        output: &[],
    },
    Example {
        description: "In a hook: go on quietly unless Claude Code's session accepts pushes:",
        commands: &["roster-consent should-arm --pid \"$CLAUDE_PID\" --cwd \"$PWD\" || exit 0"],
        output: &[],
    },
];
