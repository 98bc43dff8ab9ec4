//! Whether Codex trusts roster's hooks. Codex skips, silently, every hook in
//! `hooks.json` that the user has not trusted; it records trust in its
//! `config.toml` as `[hooks.state."<hooks file>:<event>:<i>:<j>"]` with a
//! `trusted_hash` of the hook's definition. roster only reads these entries:
//! it cannot compute the hash the way Codex does, so it never writes one, and
//! an entry present for roster's key counts as trusted without checking its
//! hash (Codex re-asks when the hook changed).

use std::collections::BTreeSet;
use std::path::Path;

use super::types::HookEvent;

/// The trust keys found in Codex's `config.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CodexTrust {
    trusted_keys: BTreeSet<String>,
}

impl CodexTrust {
    /// Parses the text of `config.toml`; the reason when it is not TOML.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let table: toml::Table = text.parse().map_err(|error: toml::de::Error| match error.span() {
            Some(span) => {
                let line = text.as_bytes().iter().take(span.start).filter(|byte| **byte == b'\n').count() + 1;
                format!("{} at line {line}", error.message())
            }
            None => error.message().to_owned(),
        })?;
        let trusted_keys = table
            .get("hooks")
            .and_then(|hooks| hooks.get("state"))
            .and_then(toml::Value::as_table)
            .map(|states| {
                states
                    .iter()
                    .filter(|(_, state)| state.get("trusted_hash").and_then(toml::Value::as_str).is_some())
                    .map(|(key, _)| key.clone())
                    .collect()
            })
            .unwrap_or_default();
        Ok(CodexTrust { trusted_keys })
    }

    /// Whether Codex holds a trust entry under `key`.
    pub(crate) fn is_trusted(&self, key: &str) -> bool {
        self.trusted_keys.contains(key)
    }
}

/// Reads Codex's `config.toml`; a missing file trusts nothing. The reason
/// when it cannot be read or parsed.
pub(crate) fn read_codex_trust(config_toml: &Path) -> Result<CodexTrust, String> {
    match std::fs::read_to_string(config_toml) {
        Ok(text) => CodexTrust::parse(&text).map_err(|reason| format!("{}: {reason}", config_toml.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(CodexTrust::default()),
        Err(error) => Err(format!("{}: {error}", config_toml.display())),
    }
}

/// The key Codex files the trust of one hook under: the hooks file, the
/// event in snake case, the group's index and the hook's index in it.
pub fn codex_trust_key(hooks_file: &Path, event: HookEvent, group_index: usize, hook_index: usize) -> String {
    format!("{}:{}:{group_index}:{hook_index}", hooks_file.display(), event.codex_trust_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_keys_codex_writes() {
        let text = r#"
model = "o4"
[hooks.state."/home/dev/.codex/hooks.json:session_start:0:0"]
trusted_hash = "sha256:e587"
[hooks.state."/home/dev/.codex/hooks.json:session_end:1:0"]
enabled = false
"#;
        let trust = CodexTrust::parse(text).unwrap();
        let file = Path::new("/home/dev/.codex/hooks.json");
        assert!(trust.is_trusted(&codex_trust_key(file, HookEvent::SessionStart, 0, 0)));
        assert!(!trust.is_trusted(&codex_trust_key(file, HookEvent::SessionEnd, 1, 0)));
        assert!(!trust.is_trusted(&codex_trust_key(file, HookEvent::SessionEnd, 0, 0)));
        assert_eq!(CodexTrust::parse("").unwrap(), CodexTrust::default());
        assert!(CodexTrust::parse("[hooks").is_err());
    }
}
