//! What install, uninstall and status report: for shell hooks and plugin
//! files alike, so both kinds of editing share them.

use std::path::PathBuf;

use super::types::HookConfigFile;

/// What install did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstallOutcome {
    pub target: HookConfigFile,
    /// The file actually written: the target, or the file a symbolic link at
    /// the target points to (the link itself is kept).
    pub written_path: PathBuf,
    /// False when the hooks were already there exactly: nothing was written.
    pub changed: bool,
    /// True when there was no file before.
    pub created: bool,
    /// Where the previous file was copied, when there was one and it changed.
    pub backup: Option<PathBuf>,
}

/// What uninstall did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UninstallOutcome {
    pub target: HookConfigFile,
    pub written_path: PathBuf,
    /// False when there was no file at the target.
    pub file_existed: bool,
    /// False when there was no file or no roster hook in it.
    pub changed: bool,
    /// The backup install kept (`<file>.roster-backup`), removed: after
    /// uninstall nothing of roster's stays behind.
    pub removed_backup: Option<PathBuf>,
    /// Directories install created for a new file (and recorded), left
    /// empty by removing it and removed, innermost first. A directory that
    /// was there before install is never one.
    pub removed_directories: Vec<PathBuf>,
    /// Codex: the keys of the trust entries its `config.toml` holds for the
    /// hooks uninstall removed; they stay, since roster never edits that
    /// file. Empty when there were none.
    pub kept_trust_entries: Vec<String>,
    /// True when the file held nothing but roster's hooks and was removed.
    pub removed_file: bool,
    /// True when the backup install made was put back byte for byte, because
    /// the file still meant exactly that plus roster's hooks.
    pub restored_backup: bool,
}

impl UninstallOutcome {
    /// What uninstall reports before it changed anything.
    pub(crate) fn nothing_done(target: &HookConfigFile, file_existed: bool) -> UninstallOutcome {
        UninstallOutcome {
            target: target.clone(),
            written_path: target.path.clone(),
            file_existed,
            changed: false,
            removed_backup: None,
            removed_directories: Vec::new(),
            kept_trust_entries: Vec::new(),
            removed_file: false,
            restored_backup: false,
        }
    }
}

/// Whether roster's hooks are in one configuration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookState {
    /// Both hooks are there (and, for Codex, trusted).
    Installed,
    /// Only one of the two hooks is there.
    PartlyInstalled,
    /// No roster hook, or no file.
    NotInstalled,
    /// Codex: both hooks are there, but Codex has no trust entry for one of
    /// them, so it skips it.
    Untrusted,
    /// The hooks are there, but a program one of them runs is missing or
    /// not executable (a `cargo clean` of the build directory they were
    /// installed from, an uninstalled roster), so each run fails.
    Broken,
    /// The file exists but cannot be parsed (install would refuse it).
    Unparseable,
    /// The file could not be read.
    Unreadable,
}

/// The status of one configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookStatus {
    pub target: HookConfigFile,
    pub state: HookState,
    /// One line for people: what was found and, where there is one, the fix.
    pub detail: String,
}

impl HookState {
    /// The name `status` prints and `--format json` carries.
    pub fn as_str(self) -> &'static str {
        match self {
            HookState::Installed => "installed",
            HookState::PartlyInstalled => "partly-installed",
            HookState::NotInstalled => "not-installed",
            HookState::Untrusted => "untrusted",
            HookState::Broken => "broken",
            HookState::Unparseable => "unparseable",
            HookState::Unreadable => "unreadable",
        }
    }
}
