//! `roster-notify`: tells its user once when a session starts needing
//! them (docs/contract.md §6.11): it follows the watch's events, feeds each
//! session's state changes to the trigger machine (`triggers.rs`), skips
//! the session whose pane is in front of its user (`location::in_front`),
//! makes the notice (`notice.rs`) and hands it to every backend chosen,
//! each on a worker of its own (`workers.rs`). The clap `Command` lives
//! here so xtask renders man pages and completions from the definition
//! users run.

#![forbid(unsafe_code)]

mod args;
pub mod backends;
mod follow;
pub mod notice;
mod settings;
mod stream;
pub mod triggers;
pub mod workers;

use std::process::ExitCode;

use clap::CommandFactory;
use cli_support::ExitStatus;
use cli_support::manual::{self, EnvVar, Example, ExitStatusDoc, Manual};

pub use args::NotifyArgs;
use args::TOOL;
pub use settings::Settings;

/// Examples, notes and exit statuses: `--help` and the man page both
/// render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Desktop notices for the sessions of this machine, until Ctrl-C:",
                commands: &["roster-notify"],
                output: &[],
            },
            Example {
                description: "Run it as a systemd user service (the package ships the unit):",
                commands: &["systemctl --user enable --now roster-notify"],
                output: &[],
            },
            Example {
                description: "To your phone through ntfy, the token in an environment variable (add --redact to leave \
                              paths and names out):",
                commands: &[
                    "export NTFY_TOKEN=tk_...",
                    "roster-notify -b ntfy --ntfy-url https://ntfy.sh/agents --ntfy-token-env NTFY_TOKEN",
                ],
                output: &[],
            },
            Example {
                description: "In the terminal you work in, for the sessions of two machines:",
                commands: &["roster-notify --backend terminal --host local --host build1"],
                output: &[],
            },
        ],
        notes: vec![
            "Triggers: waiting (a session starts waiting for your permission or an answer; waiting for something \
             else replaces its notice), turn-finished (a turn that ran at least --turn-finished-after seconds \
             ended), crashed (the session's owner died while its record was still there: no session end ran). A \
             waiting notice is withdrawn (closed on the desktop) once the session has been out of waiting for \
             the flap window; a turn-finished notice when the next turn starts. Sessions already waiting when \
             roster-notify starts are told of once."
                .to_owned(),
            "In front of you: no notice is sent for a session of this machine whose pane you are looking at. tmux: \
             its pane is the active pane of the current window of an attached client whose flags say focused \
             (tmux knows the outer terminal lost the focus only with `set -g focus-events on`; without it any \
             attached client showing the pane counts). kitty: its window has the focus in the focused OS window \
             (kitty @ ls, which needs allow_remote_control). GNU screen, WezTerm, Zellij and a plain terminal \
             cannot tell from outside which pane has the focus: their sessions are always told of. The location \
             is checked first (the pane must still run the session)."
                .to_owned(),
            "What a notice says: the harness and agent name, what the session waits for, the project (the last \
             part of its directory, and the git branch read from .git/HEAD), the host under --host, and for how \
             long; never a message's text. --redact leaves the directory, project, branch, agent name, session id \
             and host out of what ntfy, the webhook and the exec command are handed."
                .to_owned(),
            "Backends. desktop: org.freedesktop.Notifications on the D-Bus session bus (DBUS_SESSION_BUS_ADDRESS); \
             the notice's action \"Go to session\" (its default action: a click, or dunstctl action) runs \
             roster-focus for the session; urgency low for a finished turn, normal for waiting, critical for a \
             crash. terminal: OSC 777 (or OSC 9) and the bell on the controlling terminal, wrapped for tmux's \
             passthrough inside tmux. ntfy: a POST to the topic URL with Title, Priority, Tags and Click headers; \
             the token, from the environment variable named, as a bearer. webhook: a POST of \
             {\"schema\":1,\"action\":\"show\"|\"replace\"|\"withdraw\",\"notice\":{...}}. exec: the program run \
             with that JSON on its stdin, for each notice and each withdrawal. Each backend has a worker of its \
             own with a queue of 64: an attempt is given --timeout seconds, a failed one is tried again after \
             0.5, 1 and 2 s and logged on stderr; one that fails or hangs never delays the others."
                .to_owned(),
            "Configuration: the [notify] table of the user config (docs/contract.md §7): waiting, turn_finished, \
             crashed (true or false), turn_finished_after, flap_window, timeout (seconds), backends (a list), \
             redact, and the tables [notify.terminal] sequence, [notify.ntfy] url, token_env, tags, click, \
             ca_certificate, [notify.webhook] url, ca_certificate, [notify.exec] command (a list of words). Flags \
             beat the file. A file that cannot be read or parsed stops roster-notify with the reason."
                .to_owned(),
            "Output: one line per notice handed to the backends (show, replace, withdraw) or kept back (in-front) \
             on stdout: local time, what, the trigger, title and body; with --format json one JSON object a line, \
             {\"at\",\"action\",\"reason\",\"notice\"}. Once this machine's watch is up (the sessions present \
             handed over), a line says so: {\"at\",\"action\":\"watching\",\"sessions\"}. Failures of backends \
             go to stderr."
                .to_owned(),
        ],
        environment: manual::session_variables_and(&[
            EnvVar {
                name: "DBUS_SESSION_BUS_ADDRESS",
                meaning: "The session bus the desktop backend sends notices on.",
            },
            EnvVar {
                name: "ROSTER_SSH_COMMAND",
                meaning: "Replaces ssh for --host, as for roster-list.",
            },
        ]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[manual::SESSIONS_FILE, manual::STATES_FILE, manual::USER_CONFIG_FILE],
        exit_statuses: &[
            ExitStatusDoc { status: ExitStatus::Success, meaning: "Stopped by SIGINT or SIGTERM." },
            ExitStatusDoc {
                status: ExitStatus::Failure,
                meaning: "The watch could not be started, or a backend could not be set up (the reason said).",
            },
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage; a user config whose [notify] cannot be read or parsed.",
            },
        ],
        ..Manual::default()
    }
}

pub fn command() -> clap::Command {
    cli_support::with_manual(NotifyArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::complete_when_asked(command);
    let arguments = cli_support::process_arguments();
    match cli_support::parse_with_manual_on_help::<NotifyArgs>(command, &arguments) {
        Ok(args) => cli_support::run_tool(TOOL, || follow::run(args)),
        Err(error) => cli_support::run_tool(TOOL, || Err(error.into())),
    }
}
