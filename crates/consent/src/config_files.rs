//! Finding and reading the two configuration files (docs/contract.md §7): the nearest
//! `.roster.toml` from the session's directory upward, and the user's
//! `$XDG_CONFIG_HOME/roster/config.toml`. Reads are bounded (64 KiB), never
//! block on a FIFO and never open anything but a regular file; a repository
//! file the user did not write (a symlink, another user's file, a file
//! others may write) is untrusted. Every failure becomes a `ConfigOutcome`
//! that the resolution counts as "no".

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use registry_core::AgentName;

use crate::config::{
    ConfigOutcome, Decision, RepoConfig, parse_repo_config, parse_user_config,
    resolve_auto_arm_naming_repo_file,
};
use crate::error::{Error, Result};
use crate::notify_config::NotifyConfig;

/// The repository file's name.
pub const REPO_CONFIG_NAME: &str = ".roster.toml";
/// The user file, below `$XDG_CONFIG_HOME` (else `~/.config`).
pub const USER_CONFIG_RELATIVE: &str = "roster/config.toml";
/// The most bytes a configuration file may hold.
pub const MAX_CONFIG_BYTES: u64 = 64 * 1024;

/// One configuration file: where it is (when known) and what it said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigInput {
    /// `None` for the repository file when none was found, and for the
    /// user file when neither `XDG_CONFIG_HOME` nor `HOME` locates it.
    pub path: Option<PathBuf>,
    pub outcome: ConfigOutcome,
}

/// Both inputs of the auto-arm decision, and the decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoArmInputs {
    pub repo: ConfigInput,
    pub user: ConfigInput,
    pub decision: Decision,
}

/// Canonicalizes the session's working directory (the real path, as
/// records hold it), so the upward search walks real parents.
pub fn canonical_session_directory(directory: &Path) -> Result<PathBuf> {
    let canonical = owner_liveness::retry_interrupted(|| std::fs::canonicalize(directory))
        .map_err(|source| Error::session_directory(directory, source))?;
    // A stat that fails says why (and is retried on EINTR); only a
    // directory that is there and is not one is "not a directory".
    let metadata = owner_liveness::retry_interrupted(|| std::fs::metadata(&canonical))
        .map_err(|source| Error::session_directory(directory, source))?;
    if !metadata.is_dir() {
        return Err(Error::SessionDirectory {
            path: directory.to_owned(),
            cause: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        });
    }
    Ok(canonical)
}

/// The nearest `.roster.toml` at or above `directory` (which should be
/// canonical), up to and including `/`. Any entry of that name counts as
/// found, even one that cannot be read: a broken nearest file must not
/// let a farther one speak for the repository.
pub fn find_repo_config(directory: &Path) -> Option<PathBuf> {
    find_repo_config_examined(directory).map(|(path, _)| path)
}

/// `find_repo_config`, with what looking at the name found (its metadata,
/// not following a symlink, or why it could not be looked at): the first
/// examination of the file a read then relies on.
fn find_repo_config_examined(directory: &Path) -> Option<(PathBuf, io::Result<std::fs::Metadata>)> {
    let start = std::path::absolute(directory).unwrap_or_else(|_| directory.to_owned());
    start.ancestors().map(|ancestor| ancestor.join(REPO_CONFIG_NAME)).find_map(|candidate| {
        match std::fs::symlink_metadata(&candidate) {
            Err(error)
                if error.kind() == io::ErrorKind::NotFound
                    || error.kind() == io::ErrorKind::NotADirectory =>
            {
                None
            }
            examined => Some((candidate, examined)),
        }
    })
}

/// `$XDG_CONFIG_HOME/roster/config.toml`, else `~/.config/roster/config.toml`.
/// A relative `XDG_CONFIG_HOME` is ignored, as the XDG base directory
/// specification says.
pub fn user_config_path(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |name: &str| env(name).map(PathBuf::from).filter(|path| path.is_absolute());
    absolute("XDG_CONFIG_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".config")))
        .map(|base| base.join(USER_CONFIG_RELATIVE))
}

/// Reads the nearest repository file for the session in `directory`.
pub fn load_repo_input(directory: &Path) -> (ConfigInput, Option<RepoConfig>) {
    let Some((path, examined)) = find_repo_config_examined(directory) else {
        return (ConfigInput { path: None, outcome: ConfigOutcome::Absent }, None);
    };
    let (outcome, parsed) = match read_examined_config_file(&path, examined, Trust::WrittenByYou) {
        // Found by name a moment ago: vanishing now is a failed read.
        FileRead::Absent => (ConfigOutcome::Unreadable("vanished while being read".into()), None),
        FileRead::Unreadable(why) => (ConfigOutcome::Unreadable(why), None),
        FileRead::Untrusted(why) => (ConfigOutcome::Untrusted(why), None),
        FileRead::Bytes(bytes) => {
            let parsed = parse_repo_config(&bytes);
            (ConfigOutcome::of_repo(&parsed), parsed.ok())
        }
    };
    (ConfigInput { path: Some(path), outcome }, parsed)
}

/// Reads the user file.
pub fn load_user_input(env: &dyn Fn(&str) -> Option<OsString>) -> ConfigInput {
    let Some(path) = user_config_path(env) else {
        // Fail closed: a veto the user may have written cannot be checked.
        let why = "neither XDG_CONFIG_HOME nor HOME is set, so the user config cannot be located".to_owned();
        return ConfigInput { path: None, outcome: ConfigOutcome::Unreadable(why) };
    };
    let outcome = match read_config_file(&path, Trust::Anyone) {
        FileRead::Absent => ConfigOutcome::Absent,
        FileRead::Unreadable(why) => ConfigOutcome::Unreadable(why),
        FileRead::Untrusted(why) => ConfigOutcome::Untrusted(why),
        FileRead::Bytes(bytes) => ConfigOutcome::of_user(&parse_user_config(&bytes)),
    };
    ConfigInput { path: Some(path), outcome }
}

/// Which harnesses' own sessions the user file lets `roster-list` list
/// (docs/contract.md §6.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdoptChoices {
    pub claude_code: bool,
    pub copilot: bool,
}

/// Whether the user file lets `roster-list` list each harness's own
/// sessions: yes unless it says `[adopt] claude_code = false` (or
/// `copilot = false`). A file that cannot be read or parsed changes
/// nothing here (a listing only shows; nothing arms because a session is
/// listed).
pub fn user_adopt_choices(env: &dyn Fn(&str) -> Option<OsString>) -> AdoptChoices {
    let everything = AdoptChoices { claude_code: true, copilot: true };
    let Some(path) = user_config_path(env) else { return everything };
    match read_config_file(&path, Trust::Anyone) {
        FileRead::Bytes(bytes) => match parse_user_config(&bytes) {
            Ok(config) => AdoptChoices {
                claude_code: config.adopt_claude_code != Some(false),
                copilot: config.adopt_copilot != Some(false),
            },
            Err(_) => everything,
        },
        _ => everything,
    }
}

/// The user file's `[notify]` table (docs/contract.md §7), with the file's
/// path: the defaults when there is no file or no table; an error naming
/// the file and what is wrong when it cannot be read or parsed (a
/// notifier must not run on settings other than those written).
pub fn user_notify_config(
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<(Option<PathBuf>, NotifyConfig), String> {
    let Some(path) = user_config_path(env) else { return Ok((None, NotifyConfig::default())) };
    let shown = path.display().to_string();
    match read_config_file(&path, Trust::Anyone) {
        FileRead::Absent => Ok((Some(path), NotifyConfig::default())),
        FileRead::Bytes(bytes) => match parse_user_config(&bytes) {
            Ok(config) => Ok((Some(path), config.notify.unwrap_or_default())),
            Err(problem) => Err(format!("{shown}: {problem}; fix the file")),
        },
        FileRead::Unreadable(why) | FileRead::Untrusted(why) => Err(format!("{shown}: {why}")),
    }
}

/// The bounds of `ended/` the user file sets (`[ended] kept_most`,
/// `kept_days`), each else its default. A file that cannot be read or
/// parsed changes nothing here: the defaults hold (keeping is history, and
/// a bad file must never lose it all).
pub fn user_ended_bounds(env: &dyn Fn(&str) -> Option<OsString>) -> registry_core::EndedBounds {
    let defaults = registry_core::EndedBounds::default();
    let Some(path) = user_config_path(env) else { return defaults };
    let FileRead::Bytes(bytes) = read_config_file(&path, Trust::Anyone) else { return defaults };
    let Ok(config) = parse_user_config(&bytes) else { return defaults };
    registry_core::EndedBounds {
        kept_most: config.ended_kept_most.unwrap_or(defaults.kept_most),
        kept_for: config
            .ended_kept_days
            .map_or(defaults.kept_for, |days| std::time::Duration::from_secs(days * 24 * 3600)),
    }
}

/// Reads both files for the session in `directory` (canonical) and
/// resolves them.
pub fn load_auto_arm_inputs(directory: &Path, env: &dyn Fn(&str) -> Option<OsString>) -> AutoArmInputs {
    let (repo, _) = load_repo_input(directory);
    let user = load_user_input(env);
    let decision = resolve_auto_arm_naming_repo_file(&repo.outcome, repo.path.as_deref(), &user.outcome);
    AutoArmInputs { repo, user, decision }
}

/// The `agent_name` of the nearest `.roster.toml` at or above `directory`
/// (docs/contract.md §6.1: below `--agent` and `ROSTER_AGENT`), with the file it came
/// from; `Ok(None)` when there is no such file or it sets no name.
///
/// A nearest file that cannot be used (unreadable, untrusted, invalid TOML,
/// an unknown key, an invalid name) is a warning, never an error: a bad
/// repository file must not keep a session out of the registry, so the
/// caller registers it anonymously and shows the warning.
pub fn repo_agent_name(directory: &Path) -> Result<Option<(AgentName, PathBuf)>, RepoConfigWarning> {
    let (input, parsed) = load_repo_input(directory);
    let Some(path) = input.path else { return Ok(None) };
    match input.outcome.error() {
        Some(problem) => Err(RepoConfigWarning { path, problem }),
        None => Ok(parsed.and_then(|config| config.agent_name).map(|name| (name, path))),
    }
}

/// Why the nearest repository file's `agent_name` was not used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}; its agent_name is not used", path.display())]
pub struct RepoConfigWarning {
    pub path: PathBuf,
    /// What is wrong with the file, as `ConfigOutcome::error` says it.
    pub problem: String,
}

/// Why a repository file is not believed, from its owner and mode (`None`:
/// it is believed). The repository file is the only enabler of auto-arm,
/// so one that anybody but the user (or root) could have written enables
/// nothing: another user's file, or one that a group or everyone may
/// rewrite. Group write is refused too, although a umask of 002 gives it
/// to every checkout: a group is other people.
pub fn repo_file_distrust(owner_uid: u32, mode: u32, euid: u32) -> Option<String> {
    if owner_uid != euid && owner_uid != 0 {
        return Some(format!(
            "is owned by uid {owner_uid}, neither you (uid {euid}) nor root; only a file you wrote is \
             believed, so remove it or replace it with your own"
        ));
    }
    let writers = match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (false, false) => return None,
        (true, false) => "its group",
        (false, true) => "anyone",
        (true, true) => "its group and anyone",
    };
    Some(format!("is writable by {writers} (mode {:04o}); run chmod go-w on it", mode & 0o7777))
}

/// Whose files are believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trust {
    /// The repository file: only a regular file, found and opened without
    /// following a symlink (a link anybody may plant in a shared directory
    /// such as `/tmp`), that passes `repo_file_distrust`.
    WrittenByYou,
    /// The user file can only veto or do nothing, so whoever wrote it, it
    /// is read (and a failure to read it vetoes). Symlinks are followed:
    /// dotfiles are often links into a dotfiles repository.
    Anyone,
}

enum FileRead {
    Absent,
    Bytes(Vec<u8>),
    Unreadable(String),
    Untrusted(String),
}

/// Reads a configuration file: its type is checked before it is opened
/// (no FIFO or device is ever opened), the open does not block, the handle
/// is checked again (regular file, same inode, the same trust, at most
/// `MAX_CONFIG_BYTES`), and at most that many bytes are read.
fn read_config_file(path: &Path, trust: Trust) -> FileRead {
    // The name itself first: a file that is not there (the usual user
    // configuration) costs one call.
    read_examined_config_file(path, std::fs::symlink_metadata(path), trust)
}

/// `read_config_file` of a file whose name was just looked at, not
/// following a symlink (`examined`): a file anyone may have written is
/// then followed when it is a symlink.
fn read_examined_config_file(path: &Path, examined: io::Result<std::fs::Metadata>, trust: Trust) -> FileRead {
    let examined = match examined {
        Ok(metadata) if trust == Trust::Anyone && metadata.file_type().is_symlink() => {
            match std::fs::metadata(path) {
                // A dangling symlink is a file the user meant to have.
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    return FileRead::Unreadable("is a dangling symlink".into());
                }
                followed => followed,
            }
        }
        examined => examined,
    };
    let before = match examined {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return FileRead::Absent,
        Err(error) => return FileRead::Unreadable(error.to_string()),
    };
    if let Some(refused) = refusal(&before, trust) {
        return refused;
    }
    let mut flags = nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_CLOEXEC;
    if trust == Trust::WrittenByYou {
        flags |= nix::libc::O_NOFOLLOW;
    }
    let file: File = match std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path) {
        Ok(file) => file,
        Err(error) if error.raw_os_error() == Some(nix::libc::ELOOP) => {
            return FileRead::Untrusted(format!("{SYMLINK_REFUSAL} (it became one while being opened)"));
        }
        Err(error) => return FileRead::Unreadable(error.to_string()),
    };
    let after = match file.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return FileRead::Unreadable(error.to_string()),
    };
    if (after.dev(), after.ino()) != (before.dev(), before.ino()) {
        return FileRead::Unreadable("was replaced while being opened".into());
    }
    if let Some(refused) = refusal(&after, trust) {
        return refused;
    }
    if trust == Trust::WrittenByYou
        && after.uid() == nix::unistd::geteuid().as_raw()
        && !registry_core::owned_by_caller(file.as_fd(), after.uid(), after.mode())
    {
        return FileRead::Untrusted(format!(
            "cannot be proved yours: {}; it enables nothing",
            registry_core::UNPROVABLE_OWNER
        ));
    }
    let mut bytes = Vec::with_capacity(after.len().min(MAX_CONFIG_BYTES) as usize);
    if let Err(error) = file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes) {
        return FileRead::Unreadable(error.to_string());
    }
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return FileRead::Unreadable("grew past 64 KiB while being read".into());
    }
    FileRead::Bytes(bytes)
}

const SYMLINK_REFUSAL: &str =
    "is a symlink, and only a regular file you wrote is believed; replace it with a copy of its target";

fn refusal(metadata: &std::fs::Metadata, trust: Trust) -> Option<FileRead> {
    let file_type = metadata.file_type();
    if file_type.is_symlink() {
        return Some(FileRead::Untrusted(SYMLINK_REFUSAL.into()));
    }
    if !file_type.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let kind = if file_type.is_dir() {
            "a directory"
        } else if file_type.is_fifo() {
            "a FIFO"
        } else if file_type.is_socket() {
            "a socket"
        } else if file_type.is_char_device() || file_type.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Some(FileRead::Unreadable(format!("is {kind}, not a regular file")));
    }
    if metadata.len() > MAX_CONFIG_BYTES {
        return Some(FileRead::Unreadable(format!("is {} bytes, over the 64 KiB limit", metadata.len())));
    }
    if trust == Trust::WrittenByYou {
        let euid = nix::unistd::geteuid().as_raw();
        return repo_file_distrust(metadata.uid(), metadata.mode(), euid).map(FileRead::Untrusted);
    }
    None
}
