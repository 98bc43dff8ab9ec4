//! What roster-notify runs with: its flags over the `[notify]` table of
//! the user config over the defaults, resolved once at start, and the
//! backends they call for, set up (a backend that cannot be set up stops
//! the start with why).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cli_support::BadInput;
use consent::NotifyConfig;

use crate::args::NotifyArgs;
use crate::backends::Backend;
use crate::backends::desktop::DesktopBackend;
use crate::backends::exec::ExecBackend;
use crate::backends::http::{NtfyBackend, NtfySettings, WebhookBackend};
use crate::backends::terminal::{TerminalBackend, TerminalSequence};
use crate::triggers::TriggerSettings;
use crate::workers::Log;

/// Everything resolved.
#[derive(Clone, Debug)]
pub struct Settings {
    pub triggers: TriggerSettings,
    pub backends: Vec<String>,
    pub redact: bool,
    pub timeout: Duration,
    pub terminal_sequence: TerminalSequence,
    pub ntfy: Option<NtfySettings>,
    pub webhook_url: Option<String>,
    pub webhook_ca_certificate: Option<PathBuf>,
    pub exec: Option<Vec<String>>,
    pub hosts: Vec<String>,
    pub hosts_file: Option<PathBuf>,
}

/// Resolves the flags over the file's `[notify]`.
pub fn resolve(args: &NotifyArgs, file: &NotifyConfig) -> anyhow::Result<Settings> {
    let mut triggers = TriggerSettings::default();
    if args.triggers.is_empty() {
        triggers.waiting = file.waiting.unwrap_or(true);
        triggers.turn_finished = file.turn_finished.unwrap_or(true);
        triggers.crashed = file.crashed.unwrap_or(true);
    } else {
        let on = |name: &str| args.triggers.iter().any(|trigger| trigger == name);
        triggers.waiting = on("waiting");
        triggers.turn_finished = on("turn-finished");
        triggers.crashed = on("crashed");
    }
    let seconds = |flag: Option<u64>, key: Option<u64>, default: u64| -> i64 {
        i64::try_from(flag.or(key).unwrap_or(default)).unwrap_or(i64::MAX / 1000).saturating_mul(1000)
    };
    triggers.turn_finished_after_ms = seconds(args.turn_finished_after, file.turn_finished_after, 30);
    triggers.flap_window_ms = seconds(args.flap_window, file.flap_window, 3);
    let timeout = Duration::from_secs(args.timeout.or(file.timeout).unwrap_or(10).max(1));
    let mut backends: Vec<String> = if !args.backend.is_empty() {
        args.backend.clone()
    } else if let Some(listed) = &file.backends {
        listed.clone()
    } else {
        vec!["desktop".to_owned()]
    };
    if let Some(unknown) =
        backends.iter().find(|name| !crate::backends::BACKEND_NAMES.contains(&name.as_str()))
    {
        return Err(BadInput(format!(
            "[notify] backends names {unknown:?}, which is no backend; the backends are {}",
            crate::backends::BACKEND_NAMES.join(", ")
        ))
        .into());
    }
    backends.dedup();
    let terminal_sequence =
        match (args.terminal_sequence, file.terminal.as_ref().and_then(|t| t.sequence.as_deref())) {
            (Some(sequence), _) => sequence,
            (None, None | Some("osc777")) => TerminalSequence::Osc777,
            (None, Some("osc9")) => TerminalSequence::Osc9,
            (None, Some(other)) => {
                return Err(BadInput(format!(
                    "[notify.terminal] sequence = {other:?}: write \"osc777\" or \"osc9\""
                ))
                .into());
            }
        };
    let file_ntfy = file.ntfy.clone().unwrap_or_default();
    let ntfy_url = args.ntfy_url.clone().or(file.ntfy.as_ref().map(|ntfy| ntfy.url.clone()));
    let ntfy = ntfy_url.map(|url| NtfySettings {
        url,
        tags: file_ntfy.tags.clone().unwrap_or_default(),
        click: file_ntfy.click.clone(),
        token_variable: args.ntfy_token_env.clone().or(file_ntfy.token_env.clone()),
        ca_certificate: args.ca_certificate.clone().or(file_ntfy.ca_certificate.clone()),
    });
    let webhook_url = args.webhook_url.clone().or(file.webhook.as_ref().map(|webhook| webhook.url.clone()));
    let webhook_ca_certificate = args
        .ca_certificate
        .clone()
        .or(file.webhook.as_ref().and_then(|webhook| webhook.ca_certificate.clone()));
    let exec = args
        .exec
        .clone()
        .map(|program| vec![program])
        .or(file.exec.as_ref().map(|exec| exec.command.clone()));
    Ok(Settings {
        triggers,
        backends,
        redact: args.redact || file.redact.unwrap_or(false),
        timeout,
        terminal_sequence,
        ntfy,
        webhook_url,
        webhook_ca_certificate,
        exec,
        hosts: args.host.clone(),
        hosts_file: args.hosts_file.clone(),
    })
}

/// Sets up each backend `settings` names.
pub fn make_backends(settings: &Settings, log: &Log) -> anyhow::Result<Vec<Arc<dyn Backend>>> {
    let mut made: Vec<Arc<dyn Backend>> = Vec::new();
    for name in &settings.backends {
        let backend: Arc<dyn Backend> = match name.as_str() {
            "desktop" => {
                let log = log.clone();
                Arc::new(DesktopBackend::new(
                    cli_support::sibling_tool("roster-focus"),
                    Arc::new(move |line: &str| log(line)),
                ))
            }
            "terminal" => Arc::new(
                TerminalBackend::open(
                    None,
                    settings.terminal_sequence,
                    cli_support::process_env_os("TMUX").is_some(),
                )
                .map_err(anyhow::Error::msg)?,
            ),
            "ntfy" => {
                let ntfy = settings.ntfy.clone().ok_or_else(|| {
                    BadInput(
                        "the ntfy backend needs a topic URL: --ntfy-url URL, or [notify.ntfy] url".to_owned(),
                    )
                })?;
                let environment = |name: &str| cli_support::process_env(name);
                Arc::new(NtfyBackend::new(ntfy, &environment, settings.timeout).map_err(anyhow::Error::msg)?)
            }
            "webhook" => {
                let url = settings.webhook_url.as_deref().ok_or_else(|| {
                    BadInput(
                        "the webhook backend needs a URL: --webhook-url URL, or [notify.webhook] url"
                            .to_owned(),
                    )
                })?;
                Arc::new(
                    WebhookBackend::new(url, settings.webhook_ca_certificate.as_deref(), settings.timeout)
                        .map_err(anyhow::Error::msg)?,
                )
            }
            "exec" => Arc::new(
                ExecBackend::new(settings.exec.clone().unwrap_or_default(), settings.timeout)
                    .map_err(|why| anyhow::Error::new(BadInput(why)))?,
            ),
            other => return Err(BadInput(format!("{other} is no backend")).into()),
        };
        made.push(backend);
    }
    Ok(made)
}
