//! The `[notify]` table of the user's `config.toml` (docs/contract.md
//! §7): which moments `roster-notify` tells of and where its notices go.
//! Read here, with the rest of the file, so that one reader knows every
//! key the file may hold: a `[notify]` table is no unknown key for the
//! consent veto, and a typo inside it is refused naming the key.

use serde::Deserialize;

/// `[notify]`: every key optional; `roster-notify`'s flags beat it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyConfig {
    /// Tell when a session starts waiting for its user (default on).
    pub waiting: Option<bool>,
    /// Tell when a turn that ran a while finished (default on).
    pub turn_finished: Option<bool>,
    /// Tell when a session's owner died without its session end (default on).
    pub crashed: Option<bool>,
    /// The shortest turn, in seconds, whose end is told (default 30).
    pub turn_finished_after: Option<u64>,
    /// Seconds a session must stay out of waiting before its notice is
    /// withdrawn (default 3).
    pub flap_window: Option<u64>,
    /// Where notices go: `desktop`, `terminal`, `ntfy`, `webhook`, `exec`
    /// (default `["desktop"]`).
    pub backends: Option<Vec<String>>,
    /// Leave paths and names out of what leaves the machine.
    pub redact: Option<bool>,
    /// Seconds one attempt of a backend may take (default 10).
    pub timeout: Option<u64>,
    pub terminal: Option<NotifyTerminalConfig>,
    pub ntfy: Option<NotifyNtfyConfig>,
    pub webhook: Option<NotifyWebhookConfig>,
    pub exec: Option<NotifyExecConfig>,
}

/// `[notify.terminal]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyTerminalConfig {
    /// `osc777` (default) or `osc9`.
    pub sequence: Option<String>,
}

/// `[notify.ntfy]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyNtfyConfig {
    /// The topic's URL.
    pub url: String,
    /// The environment variable holding the access token (never the token
    /// itself: the file may be shared, the command line is seen by all).
    pub token_env: Option<String>,
    pub tags: Option<Vec<String>>,
    /// Where a tap on the notice goes.
    pub click: Option<String>,
    /// A PEM file of the certificate authority of a server of one's own.
    pub ca_certificate: Option<std::path::PathBuf>,
}

/// `[notify.webhook]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyWebhookConfig {
    pub url: String,
    pub ca_certificate: Option<std::path::PathBuf>,
}

/// `[notify.exec]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyExecConfig {
    /// The program and its arguments; no shell.
    pub command: Vec<String>,
}

/// Reads the `notify` value of a parsed user file.
pub(crate) fn notify_config(value: Option<&toml::Value>) -> Result<Option<NotifyConfig>, String> {
    let Some(value) = value else { return Ok(None) };
    if !value.is_table() {
        return Err("`notify` is not a table; write [notify] on a line of its own".to_owned());
    }
    value.clone().try_into::<NotifyConfig>().map(Some).map_err(|error| {
        let message = error.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
        format!("[notify]: {message}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Option<NotifyConfig>, String> {
        let table: toml::Table = text.parse().unwrap();
        notify_config(table.get("notify"))
    }

    #[test]
    fn the_notify_table_is_read_and_typos_in_it_are_refused() {
        let config = parse(
            "[notify]\nwaiting = false\nbackends = [\"desktop\", \"ntfy\"]\n[notify.ntfy]\nurl = \"https://ntfy.sh/x\"\ntoken_env = \"NTFY_TOKEN\"\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.waiting, Some(false));
        assert_eq!(config.ntfy.unwrap().token_env.as_deref(), Some("NTFY_TOKEN"));
        let typo = parse("[notify]\nwaitng = false\n").unwrap_err();
        assert!(typo.contains("waitng"), "{typo}");
        assert!(parse("notify = 1").is_err());
        assert_eq!(parse("").unwrap(), None);
    }
}
