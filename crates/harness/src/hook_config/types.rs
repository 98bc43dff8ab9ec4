//! The words of hook-config editing: which harness, which scope, which
//! event, where the files are, one file to edit and what can go wrong. Every
//! other file of `hook_config` uses them, so they live apart from all of them.

use std::io;
use std::path::{Path, PathBuf};

/// A harness whose configuration roster-hooks knows how to edit: five with
/// shell hooks on session start and end, and opencode and Amp, which load a
/// plugin file roster-hooks writes. Goose and Aider have neither and are
/// served by wrappers (see docs/harnesses.md), so a value of this type can
/// never name a harness roster-hooks cannot wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookHarness {
    ClaudeCode,
    Codex,
    GeminiCli,
    CursorAgent,
    Copilot,
    Opencode,
    Amp,
}

/// Where a configuration file lives: the user's home (every project) or the
/// current project (committed with it, shared with the team).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    User,
    Project,
}

/// An event roster hooks into: the two session events (register, remove),
/// and the events that say what a session is doing (`State`, named as the
/// harness's configuration names it; `crate::ACTIVITY_EVENTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookEvent {
    SessionStart,
    SessionEnd,
    State(&'static str),
}

/// The directories the configuration files are found under. Built from the
/// environment by [`HookPaths::from_environment`]; tests build it by hand so
/// that nothing reads or writes the real home.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookPaths {
    /// `$HOME`.
    pub home: PathBuf,
    /// The project a `--scope project` file belongs to: the current directory.
    pub project: PathBuf,
    /// `$CLAUDE_CONFIG_DIR`, which Claude Code reads instead of `~/.claude`.
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME`, which Codex reads instead of `~/.codex`.
    pub codex_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, where opencode keeps its configuration instead of
    /// `~/.config`.
    pub xdg_config_home: Option<PathBuf>,
}

/// One configuration file to edit: which harness, which scope, which path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookConfigFile {
    pub harness: HookHarness,
    pub scope: Scope,
    pub path: PathBuf,
}

/// What can go wrong while editing a hook configuration; each kind knows the
/// exit code it deserves (docs/contract.md §6).
#[derive(Debug, thiserror::Error)]
pub enum HookConfigError {
    /// The file exists but roster-hooks cannot safely rewrite it: it does not
    /// parse, has the wrong shape, is not a regular file or is too large.
    /// Nothing was written (exit 3).
    #[error("refusing to edit {}: {reason}; fix or move the file by hand, then run again", path.display())]
    Unusable { path: PathBuf, reason: String },

    /// Reading, writing or renaming failed (exit 1).
    #[error("cannot {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// A value given by the user or the environment cannot be used (exit 2).
    #[error("{0}")]
    BadInput(String),
}

impl HookConfigError {
    /// The exit code of docs/contract.md §6: 3 refused, 1 failed, 2 bad input.
    pub fn exit_code(&self) -> u8 {
        match self {
            HookConfigError::Unusable { .. } => 3,
            HookConfigError::Io { .. } => 1,
            HookConfigError::BadInput(_) => 2,
        }
    }

    pub(crate) fn io(action: &'static str, path: &Path, source: io::Error) -> Self {
        HookConfigError::Io { action, path: path.to_owned(), source }
    }

    pub(crate) fn unusable(path: &Path, reason: impl Into<String>) -> Self {
        HookConfigError::Unusable { path: path.to_owned(), reason: reason.into() }
    }
}

impl HookHarness {
    /// Every hook-capable harness, in the order `status` reports them.
    pub const ALL: [HookHarness; 7] = [
        HookHarness::ClaudeCode,
        HookHarness::Codex,
        HookHarness::GeminiCli,
        HookHarness::CursorAgent,
        HookHarness::Copilot,
        HookHarness::Opencode,
        HookHarness::Amp,
    ];

    /// The harness's name as records and flags spell it (docs/contract.md §3).
    pub fn as_str(self) -> &'static str {
        crate::Harness::from(self).as_str()
    }

    /// The harnesses whose own settings files roster-hooks edits (the others
    /// get a plugin file of roster's own).
    pub const WITH_SETTINGS_FILES: [HookHarness; 5] = [
        HookHarness::ClaudeCode,
        HookHarness::Codex,
        HookHarness::GeminiCli,
        HookHarness::CursorAgent,
        HookHarness::Copilot,
    ];

    /// Whether roster-hooks writes a plugin file of its own for this harness
    /// rather than hook entries in the harness's settings.
    pub fn uses_plugin_file(self) -> bool {
        matches!(self, HookHarness::Opencode | HookHarness::Amp)
    }

    /// The harness named `name`, if it is one with hook support.
    pub fn parse(name: &str) -> Option<Self> {
        HookHarness::ALL.into_iter().find(|harness| harness.as_str() == name)
    }

    /// The scopes this harness has a configuration file for; the first one is
    /// the default.
    pub fn scopes(self) -> &'static [Scope] {
        match self {
            HookHarness::ClaudeCode | HookHarness::Opencode | HookHarness::Amp => {
                &[Scope::User, Scope::Project]
            }
            HookHarness::Codex | HookHarness::GeminiCli | HookHarness::CursorAgent => &[Scope::User],
            HookHarness::Copilot => &[Scope::Project],
        }
    }

    /// The scope used when none is asked for.
    pub(crate) fn default_scope(self) -> Scope {
        self.scopes()[0]
    }

    /// Every event roster hooks into for this harness: its session events
    /// (Amp has no session end), then its state events.
    pub fn events(self) -> Vec<HookEvent> {
        let session = HookEvent::BOTH
            .into_iter()
            .filter(|event| !(self == HookHarness::Amp && *event == HookEvent::SessionEnd));
        session.chain(self.state_events()).collect()
    }

    /// The events that say what a session of this harness is doing.
    pub fn state_events(self) -> Vec<HookEvent> {
        crate::activity_event_names(crate::Harness::from(self)).into_iter().map(HookEvent::State).collect()
    }

    /// The event this harness files under `name`, among those roster hooks into.
    pub fn event_named(self, name: &str) -> Option<HookEvent> {
        self.events().into_iter().find(|event| self.event_name(*event) == name)
    }

    /// The key the harness files this event under in its `hooks` object.
    pub fn event_name(self, event: HookEvent) -> &'static str {
        if let HookEvent::State(name) = event {
            return name;
        }
        match (self, event) {
            (HookHarness::Opencode, HookEvent::SessionStart) => return "session.created",
            (HookHarness::Opencode, HookEvent::SessionEnd) => return "session.deleted",
            (HookHarness::Amp, HookEvent::SessionStart) => return "session.start",
            (HookHarness::Amp, HookEvent::SessionEnd) => return "(none)",
            _ => {}
        }
        let camel_case = matches!(self, HookHarness::CursorAgent | HookHarness::Copilot);
        match (event, camel_case) {
            (HookEvent::SessionStart, false) => "SessionStart",
            (HookEvent::SessionEnd, false) => "SessionEnd",
            (HookEvent::SessionStart, true) => "sessionStart",
            (HookEvent::SessionEnd, true) => "sessionEnd",
            (HookEvent::State(name), _) => name,
        }
    }
}

impl std::fmt::Display for HookHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl HookEvent {
    pub const BOTH: [HookEvent; 2] = [HookEvent::SessionStart, HookEvent::SessionEnd];

    /// The snake-case name Codex uses in its trust keys (`session_start`,
    /// `pre_tool_use`).
    pub fn codex_trust_name(self) -> String {
        let name = match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::State(name) => name,
        };
        let mut snake = String::with_capacity(name.len() + 4);
        for (index, character) in name.chars().enumerate() {
            if character.is_ascii_uppercase() {
                if index > 0 {
                    snake.push('_');
                }
                snake.push(character.to_ascii_lowercase());
            } else {
                snake.push(character);
            }
        }
        snake
    }

    /// Whether this is one of the events that say what a session does.
    pub fn is_state(self) -> bool {
        matches!(self, HookEvent::State(_))
    }
}

impl HookPaths {
    /// Paths under `home` and `project` with no harness-specific overrides.
    pub fn new(home: &Path, project: &Path) -> Self {
        HookPaths {
            home: home.to_owned(),
            project: project.to_owned(),
            claude_config_dir: None,
            codex_home: None,
            xdg_config_home: None,
        }
    }

    /// Reads `$HOME`, the current directory, `$CLAUDE_CONFIG_DIR` and
    /// `$CODEX_HOME` (the last two only when set and not empty).
    pub fn from_environment() -> Result<Self, HookConfigError> {
        let home =
            std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from).ok_or_else(|| {
                HookConfigError::BadInput("HOME is not set; set it to your home directory".to_owned())
            })?;
        if !home.is_absolute() {
            return Err(HookConfigError::BadInput(format!(
                "HOME is {:?}, not an absolute path; set it to your home directory",
                home.display().to_string()
            )));
        }
        let project = owner_liveness::retry_interrupted(std::env::current_dir)
            .map_err(|source| HookConfigError::io("read the current directory", Path::new("."), source))?;
        let absolute_from_env = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
                .map(|path| if path.is_absolute() { path } else { project.join(path) })
        };
        Ok(HookPaths {
            claude_config_dir: absolute_from_env("CLAUDE_CONFIG_DIR"),
            codex_home: absolute_from_env("CODEX_HOME"),
            xdg_config_home: absolute_from_env("XDG_CONFIG_HOME"),
            home,
            project,
        })
    }

    /// The configuration file of `harness` in `scope`, or bad input when the
    /// harness has no file in that scope.
    pub fn config_file(&self, harness: HookHarness, scope: Scope) -> Result<PathBuf, HookConfigError> {
        if !harness.scopes().contains(&scope) {
            let supported: Vec<&str> = harness.scopes().iter().map(|scope| scope.as_str()).collect();
            return Err(HookConfigError::BadInput(format!(
                "{harness} has no {scope}-scope hook file; use --scope {}",
                supported.join(" or --scope ")
            )));
        }
        Ok(match (harness, scope) {
            (HookHarness::ClaudeCode, Scope::User) => self.claude_config_dir().join("settings.json"),
            (HookHarness::ClaudeCode, Scope::Project) => self.project.join(".claude/settings.json"),
            (HookHarness::Codex, _) => self.codex_home().join("hooks.json"),
            (HookHarness::GeminiCli, _) => self.home.join(".gemini/settings.json"),
            (HookHarness::CursorAgent, _) => self.home.join(".cursor/hooks.json"),
            (HookHarness::Copilot, _) => self.project.join(".github/hooks/roster.json"),
            (HookHarness::Opencode, Scope::User) => self.config_home().join("opencode/plugins/roster.js"),
            (HookHarness::Opencode, Scope::Project) => self.project.join(".opencode/plugins/roster.js"),
            (HookHarness::Amp, Scope::User) => self.home.join(".config/amp/plugins/roster.ts"),
            (HookHarness::Amp, Scope::Project) => self.project.join(".amp/plugins/roster.ts"),
        })
    }

    /// The target for `harness` in `scope`, its default scope when `None`.
    pub fn target(
        &self,
        harness: HookHarness,
        scope: Option<Scope>,
    ) -> Result<HookConfigFile, HookConfigError> {
        let scope = scope.unwrap_or(harness.default_scope());
        Ok(HookConfigFile { harness, scope, path: self.config_file(harness, scope)? })
    }

    /// Codex's `config.toml`, where it keeps the hashes of trusted hooks.
    pub fn codex_config_toml(&self) -> PathBuf {
        self.codex_home().join("config.toml")
    }

    fn claude_config_dir(&self) -> PathBuf {
        self.claude_config_dir.clone().unwrap_or_else(|| self.home.join(".claude"))
    }

    fn config_home(&self) -> PathBuf {
        self.xdg_config_home.clone().unwrap_or_else(|| self.home.join(".config"))
    }

    fn codex_home(&self) -> PathBuf {
        self.codex_home.clone().unwrap_or_else(|| self.home.join(".codex"))
    }
}

impl From<HookHarness> for crate::Harness {
    fn from(harness: HookHarness) -> Self {
        match harness {
            HookHarness::ClaudeCode => crate::Harness::ClaudeCode,
            HookHarness::Codex => crate::Harness::Codex,
            HookHarness::GeminiCli => crate::Harness::GeminiCli,
            HookHarness::CursorAgent => crate::Harness::CursorAgent,
            HookHarness::Copilot => crate::Harness::Copilot,
            HookHarness::Opencode => crate::Harness::Opencode,
            HookHarness::Amp => crate::Harness::Amp,
        }
    }
}

/// The directory a scope's files are found under: home for the user's
/// files, the project for a project's.
pub(crate) fn scope_directory<'a>(target: &HookConfigFile, paths: &'a HookPaths) -> &'a Path {
    match target.scope {
        Scope::User => &paths.home,
        Scope::Project => &paths.project,
    }
}

/// The `--scope` flag that names `target`'s scope, empty for the
/// harness's default scope: what the fix a message gives must pass.
pub(crate) fn scope_flag(target: &HookConfigFile) -> String {
    if target.scope == target.harness.default_scope() {
        String::new()
    } else {
        format!(" --scope {}", target.scope)
    }
}
