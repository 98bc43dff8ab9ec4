//! The real harnesses the e2e run (`tests/e2e`) drives: which npm package and pinned version each
//! comes from (the one place versions are pinned), how it is run offline against the fake
//! model server with a fake API key, and what it needs in its home directory first. The
//! recipes follow how the harness captures were made.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::CODEX_BYPASS_HOOK_TRUST;
use super::fake_model_server::ModelApi;

/// One harness as installed from npm and run in print mode.
#[derive(Clone, Copy, Debug)]
pub struct RealHarness {
    /// The harness's name in roster (records, `roster-hooks install`, `--hook`).
    pub name: &'static str,
    pub package: &'static str,
    /// The exact version installed; a run never falls back to another silently.
    pub pinned_version: &'static str,
    /// The command the package puts in `node_modules/.bin/`.
    pub command: &'static str,
    /// The model API it speaks; `None` for Amp, whose sessions need ampcode.com: the run
    /// drives its plugin with `amp plugins exec` instead.
    pub api: Option<ModelApi>,
    /// Whether the record must carry the installed version as `harness_version` (the
    /// harness exports it: Claude Code's `AI_AGENT`, Copilot's `COPILOT_CLI_BINARY_VERSION`).
    pub exports_its_version: bool,
}

/// Every harness the e2e run knows, in the order it runs them.
pub const REAL_HARNESSES: [RealHarness; 6] = [
    RealHarness {
        name: "claude-code",
        pinned_version: "2.1.332",
        package: "@anthropic-ai/claude-code",
        command: "claude",
        api: Some(ModelApi::AnthropicMessages),
        exports_its_version: true,
    },
    RealHarness {
        name: "codex",
        pinned_version: "0.171.0",
        package: "@openai/codex",
        command: "codex",
        api: Some(ModelApi::OpenAiResponses),
        exports_its_version: false,
    },
    RealHarness {
        name: "gemini-cli",
        pinned_version: "0.61.0",
        package: "@google/gemini-cli",
        command: "gemini",
        api: Some(ModelApi::GeminiGenerateContent),
        exports_its_version: false,
    },
    RealHarness {
        name: "copilot",
        pinned_version: "1.0.102",
        package: "@github/copilot",
        command: "copilot",
        api: Some(ModelApi::OpenAiChatCompletions),
        exports_its_version: true,
    },
    RealHarness {
        name: "opencode",
        pinned_version: "1.18.33",
        package: "opencode-ai",
        command: "opencode",
        api: Some(ModelApi::OpenAiChatCompletions),
        exports_its_version: false,
    },
    RealHarness {
        name: "amp",
        pinned_version: "0.0.1790142911-g7618fb",
        package: "@sourcegraph/amp",
        command: "amp",
        api: None,
        exports_its_version: false,
    },
];

/// Amp's project plugin as `roster-hooks install amp --scope project` writes it.
pub const AMP_PLUGIN: &str = ".amp/plugins/roster.ts";

/// The thread id the run hands Amp's `session.start` event.
pub const AMP_THREAD_ID: &str = "T-roster-e2e";

/// The event data of Amp's `session.start` (a thread starts or is switched to).
pub const AMP_EVENT: &str = r#"{"thread":{"id":"T-roster-e2e"}}"#;

/// A harness installed under an npm prefix.
#[derive(Clone, Debug)]
pub struct InstalledHarness {
    pub harness: RealHarness,
    /// `<prefix>/node_modules/.bin/<command>`.
    pub executable: PathBuf,
    /// The npm prefix it is installed under; every process of the harness runs a file
    /// below it (or below the session's HOME, where Copilot unpacks its native binary).
    pub prefix: PathBuf,
    /// The version the harness itself reports with `--version`: the one that ran (the
    /// installed package.json must say the pinned one, or the install fails).
    pub running_version: String,
    /// Set when the package's `engines.node` excludes the node on PATH: what was asked for,
    /// what is here, and what ran anyway.
    pub engine_warning: Option<String>,
    /// The command's own help text, to see which flags this release has.
    pub help: String,
}

impl RealHarness {
    /// Finds a harness by its roster name, or by the command people type for it.
    pub fn named(name: &str) -> Option<RealHarness> {
        REAL_HARNESSES.into_iter().find(|harness| harness.name == name || harness.command == name)
    }

    /// Writes what the harness needs in its home before roster's hooks are installed (which
    /// merge into the same files and must keep these settings).
    pub fn prepare_home(&self, home: &Path, model_base_url: &str) -> anyhow::Result<()> {
        match self.name {
            "codex" => {
                let codex = home.join(".codex");
                fs::create_dir_all(&codex)?;
                let config = format!("openai_base_url = \"{model_base_url}/v1\"\n");
                fs::write(codex.join("config.toml"), config).context("writing ~/.codex/config.toml")?;
            }
            "gemini-cli" => {
                let gemini = home.join(".gemini");
                fs::create_dir_all(&gemini)?;
                let settings = serde_json::json!({"security": {"auth": {"selectedType": "gemini-api-key"}}});
                fs::write(gemini.join("settings.json"), format!("{settings:#}\n"))
                    .context("writing ~/.gemini/settings.json")?;
            }
            "opencode" => {
                // A custom OpenAI-compatible provider at the fake server, chosen as the model.
                let opencode = home.join(".config").join("opencode");
                fs::create_dir_all(&opencode)?;
                let config = serde_json::json!({
                    "$schema": "https://opencode.ai/config.json",
                    "provider": {"fake": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Fake",
                        "options": {"baseURL": format!("{model_base_url}/v1"), "apiKey": "fake"},
                        "models": {"fake-model": {"name": "Fake"}},
                    }},
                    "model": "fake/fake-model",
                    "autoupdate": false,
                    "share": "disabled",
                });
                fs::write(opencode.join("opencode.json"), format!("{config:#}\n"))
                    .context("writing ~/.config/opencode/opencode.json")?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The harness's arguments for one print-mode turn saying "hi". `help` is its help
    /// text: trust-skipping flags are used where this release has them.
    pub fn arguments(&self, help: &str) -> Vec<String> {
        let words: &[&str] = match self.name {
            "claude-code" => &["-p", "hi"],
            "codex" => {
                // Codex runs only hooks the user trusted; roster-hooks does not write trust
                // entries, so the run asks Codex to skip the check for this invocation.
                if help.contains(CODEX_BYPASS_HOOK_TRUST) {
                    &["exec", "--skip-git-repo-check", CODEX_BYPASS_HOOK_TRUST, "hi"]
                } else {
                    &["exec", "--skip-git-repo-check", "hi"]
                }
            }
            "gemini-cli" => {
                if help.contains("--skip-trust") {
                    &["--skip-trust", "-p", "hi"]
                } else {
                    &["-p", "hi"]
                }
            }
            "copilot" => &["--trust-folder", "--allow-all-tools", "-p", "hi"],
            "opencode" => &["run", "hi"],
            "amp" => &["plugins", "exec", AMP_PLUGIN, "session.start", "--data", AMP_EVENT],
            other => unreachable!("no arguments for {other}"),
        };
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    /// The environment that points the harness at the fake model server with a fake key.
    pub fn environment(&self, model_base_url: &str) -> Vec<(String, String)> {
        let pairs: Vec<(&str, String)> = match self.name {
            "claude-code" => vec![
                ("ANTHROPIC_API_KEY", "sk-ant-fake".to_owned()),
                ("ANTHROPIC_BASE_URL", model_base_url.to_owned()),
                ("DISABLE_AUTOUPDATER", "1".to_owned()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
            ],
            "codex" => vec![("OPENAI_API_KEY", "sk-fake".to_owned())],
            "gemini-cli" => vec![
                ("GEMINI_API_KEY", "fake-gemini-key".to_owned()),
                ("GOOGLE_GEMINI_BASE_URL", model_base_url.to_owned()),
                ("GEMINI_CLI_TRUST_WORKSPACE", "true".to_owned()),
            ],
            "copilot" => vec![
                ("COPILOT_OFFLINE", "true".to_owned()),
                ("COPILOT_PROVIDER_BASE_URL", format!("{model_base_url}/v1")),
                ("COPILOT_MODEL", "fake-model".to_owned()),
            ],
            "opencode" => vec![("OPENCODE_DISABLE_MODELS_FETCH", "1".to_owned())],
            "amp" => vec![],
            other => unreachable!("no environment for {other}"),
        };
        pairs.into_iter().map(|(key, value)| (key.to_owned(), value)).collect()
    }

    /// The scope `roster-hooks install` is run with: Amp's plugin is run by path from the
    /// project, the others use their default.
    pub fn install_scope(&self) -> Option<&'static str> {
        (self.name == "amp").then_some("project")
    }

    /// The session id and cwd the harness's hook payload carries, each harness in its own
    /// shape (read here independently of roster's parser). Amp's plugin builds its payload
    /// itself, so its id is checked against the thread id the run sent.
    pub fn payload_session(&self, payload: &serde_json::Value) -> (Option<String>, Option<String>) {
        let text = |value: &serde_json::Value| value.as_str().map(str::to_owned);
        match self.name {
            "copilot" => (text(&payload["sessionId"]), text(&payload["cwd"])),
            "opencode" => (
                text(&payload["properties"]["info"]["id"]),
                text(&payload["properties"]["info"]["directory"]),
            ),
            _ => (text(&payload["session_id"]), text(&payload["cwd"])),
        }
    }

    /// What the run had to do about the harness's hook trust, for the report.
    pub fn trust_note(&self, help: &str) -> Option<&'static str> {
        match self.name {
            "codex" if help.contains(CODEX_BYPASS_HOOK_TRUST) => {
                Some("hooks run with --dangerously-bypass-hook-trust (roster-hooks writes no trust entries)")
            }
            "codex" => Some("this Codex has no --dangerously-bypass-hook-trust: its hooks stay untrusted"),
            "gemini-cli" => Some("workspace trusted with --skip-trust / GEMINI_CLI_TRUST_WORKSPACE=true"),
            "copilot" => Some("folder trusted with --trust-folder; provider mode with COPILOT_OFFLINE=true"),
            _ => None,
        }
    }
}
