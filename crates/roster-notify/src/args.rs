//! `roster-notify`'s flags, below every part that reads them (the
//! settings, the stream, the main loop), so that none imports the crate's
//! root.

use clap::Parser;
use cli_support::CommonArgs;

pub(crate) const TOOL: &str = "roster-notify";

/// Tell you once when an agent session starts waiting for you
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "Tell you once when an agent session starts waiting for you: on the desktop, in the terminal, on the phone",
    long_about = "Tell you once when an agent session starts waiting for you: on the desktop, in the terminal, on the phone\n\n\
        roster-notify follows the sessions as roster-list --watch does (this machine's, or with --host other \
        machines' through your ssh) and sends a notice when a session starts waiting for your permission or an \
        answer, when a turn that ran a while finished, and when a session died without its session end. One \
        notice per moment: a session that flaps (waiting, working, waiting again within the flap window) gives \
        one, and its notice is withdrawn once it stops waiting. No notice is sent for the session whose pane is \
        in front of you. Notices go to the desktop (freedesktop notifications, with an action that runs \
        roster-focus), the terminal (OSC 777 or OSC 9), ntfy (your phone), a webhook or a command; each on a \
        worker of its own, so one that fails or hangs delays no other. It runs until SIGINT or SIGTERM; a \
        systemd user unit ships with it.",
)]
pub struct NotifyArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Where notices go, a comma list of desktop, terminal, ntfy, webhook, exec (beats [notify] backends; default desktop)
    #[arg(short, long, value_name = "BACKEND[,BACKEND...]", value_delimiter = ',', value_parser = crate::backends::BACKEND_NAMES)]
    pub backend: Vec<String>,

    /// Which moments to tell of, a comma list of waiting, turn-finished, crashed; the others are off (beats [notify])
    #[arg(short, long, value_name = "TRIGGER[,TRIGGER...]", value_delimiter = ',', value_parser = ["waiting", "turn-finished", "crashed"])]
    pub triggers: Vec<String>,

    /// The shortest turn whose end is told, in seconds (default 30)
    #[arg(long, value_name = "SECONDS")]
    pub turn_finished_after: Option<u64>,

    /// Seconds a session must stay out of waiting before its notice is withdrawn; a flap within it keeps one notice (default 3)
    #[arg(long, value_name = "SECONDS")]
    pub flap_window: Option<u64>,

    /// Leave paths and names (directory, project, branch, agent, session id, host) out of notices that leave the machine (ntfy, webhook, exec)
    #[arg(long)]
    pub redact: bool,

    /// The longest one attempt of a backend may take, in seconds (default 10)
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,

    /// The ntfy topic URL to publish to (beats [notify.ntfy] url)
    #[arg(long, value_name = "URL")]
    pub ntfy_url: Option<String>,

    /// The environment variable that holds the ntfy access token (never the token itself)
    #[arg(long, value_name = "NAME")]
    pub ntfy_token_env: Option<String>,

    /// The URL the webhook backend posts each notice to as JSON (beats [notify.webhook] url)
    #[arg(long, value_name = "URL")]
    pub webhook_url: Option<String>,

    /// A PEM file of the certificate authority to trust for ntfy and the webhook (a server of your own)
    #[arg(long, value_name = "FILE")]
    pub ca_certificate: Option<std::path::PathBuf>,

    /// The program the exec backend runs for each notice, with the notice as JSON on its stdin (beats [notify.exec] command)
    #[arg(long, value_name = "PROGRAM")]
    pub exec: Option<String>,

    /// The escape sequence of the terminal backend
    #[arg(long, value_enum, value_name = "SEQUENCE")]
    pub terminal_sequence: Option<crate::backends::terminal::TerminalSequence>,

    /// Follow the sessions of another machine through your ssh: [USER@]HOST[:PORT]; repeatable; `local` is this one
    #[arg(long, value_name = "HOST")]
    pub host: Vec<String>,

    /// Follow the machines listed in FILE (one a line), as --host does
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<std::path::PathBuf>,
}
