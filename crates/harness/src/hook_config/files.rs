//! The disk side of hook-config editing: reads a configuration file safely,
//! keeps a backup of it, and installs, removes or reports roster's hooks in
//! it (through `writing`, so a crash leaves the old file or the new one).
//! The harnesses that load a plugin file are handed to `plugins`.

use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use owner_liveness::retry_interrupted;
use serde_json::{Map, Value};

use super::codex_trust::{codex_trust_key, read_codex_trust};
use super::commands::{HookCommands, RosterHookCall};
use super::document::{
    FoundHook, InstalledHooks, find_installed_hooks, hook_snippet, install_into_text, parse_hook_document,
    print_document, remove_from_text, without_roster_hooks_or_empty_structures,
};
use super::outcomes::{HookState, HookStatus, InstallOutcome, UninstallOutcome};
use super::plugins::{install_plugin, plugin_status, uninstall_plugin};
use super::programs::{broken_programs_report, build_directory_notes};
use super::types::{
    HookConfigError, HookConfigFile, HookEvent, HookHarness, HookPaths, Scope, scope_directory, scope_flag,
};
use super::writing::{
    create_parent_directories, remove_created_directories, sync_directory, write_atomically,
};

/// Configuration files are small; anything larger is not one, and reading it
/// whole would only cost memory.
const LARGEST_CONFIG_FILE: u64 = 16 * 1024 * 1024;

/// Merges roster's hooks into the target file (see
/// [`with_hooks_installed`]). Idempotent: when the file already holds exactly
/// these hooks nothing is written. A file that cannot be parsed is refused and
/// left untouched. The previous file is kept as `<file>.roster-backup`.
pub fn install(target: &HookConfigFile, commands: &HookCommands) -> Result<InstallOutcome, HookConfigError> {
    if target.harness.uses_plugin_file() {
        return install_plugin(target, commands);
    }
    let existing = read_existing(&target.path)?;
    let (before, after, after_text) = match &existing {
        Some(file) => {
            let before = parse_existing(target, file)?;
            let text = file_text(target, file)?;
            let after_text = install_into_text(target.harness, text, commands)
                .map_err(|reason| HookConfigError::unusable(&target.path, reason))?;
            let after = parse_hook_document(target.harness, after_text.as_bytes())
                .map_err(|reason| HookConfigError::unusable(&target.path, reason))?;
            (Some(before), after, after_text)
        }
        None => {
            let snippet = hook_snippet(target.harness, commands);
            let text = print_document(&snippet);
            (None, snippet, text)
        }
    };
    let written_path = existing.as_ref().map_or_else(|| target.path.clone(), |file| file.real_path.clone());
    let mut outcome = InstallOutcome {
        target: target.clone(),
        written_path,
        changed: false,
        created: existing.is_none(),
        backup: None,
    };
    if before.as_ref() == Some(&after) {
        return Ok(outcome);
    }
    let mode = match &existing {
        Some(file) => {
            let backup = backup_path_for(&file.real_path);
            write_atomically(&backup, &file.bytes, file.mode)?;
            outcome.backup = Some(backup);
            file.mode
        }
        None => {
            create_parent_directories(&target.path)?;
            new_file_mode(target.scope)
        }
    };
    write_atomically(&outcome.written_path, after_text.as_bytes(), mode)?;
    outcome.changed = true;
    Ok(outcome)
}

/// Removes exactly the hooks install added, and what install left beside
/// them. When the file, without the hooks, still means what the backup
/// install made means, the backup is put back byte for byte (the user's
/// formatting included); otherwise roster's entries are cut out, and a file
/// left with nothing of the user's is removed, with the directories that
/// install created for it (and recorded) that held only it, never the home
/// or project directory (`paths`). The backup
/// `<file>.roster-backup` is removed in every case: the file itself now
/// holds all of the user's that it held.
pub fn uninstall(target: &HookConfigFile, paths: &HookPaths) -> Result<UninstallOutcome, HookConfigError> {
    if target.harness.uses_plugin_file() {
        return uninstall_plugin(target, paths);
    }
    let existing = read_existing(&target.path)?;
    let mut outcome = UninstallOutcome::nothing_done(target, existing.is_some());
    let Some(file) = existing else {
        outcome.removed_backup = remove_backup(&backup_path_for(&target.path))?;
        outcome.removed_directories =
            remove_created_directories(&target.path, scope_directory(target, paths), true)?;
        return Ok(outcome);
    };
    outcome.written_path = file.real_path.clone();
    let before = parse_existing(target, &file)?;
    let after_text = remove_from_text(target.harness, file_text(target, &file)?)
        .map_err(|reason| HookConfigError::unusable(&target.path, reason))?;
    let after = parse_hook_document(target.harness, after_text.as_bytes())
        .map_err(|reason| HookConfigError::unusable(&target.path, reason))?;
    let backup = backup_path_for(&file.real_path);
    if after != before {
        outcome.changed = true;
        if target.harness == HookHarness::Codex {
            outcome.kept_trust_entries = codex_trust_entries_of(target, paths, &before);
        }
        if let Some(original) = restorable_backup(target.harness, &backup, &after) {
            write_atomically(&file.real_path, &original, file.mode)?;
            outcome.restored_backup = true;
        } else if without_roster_hooks_or_empty_structures(target.harness, &after)
            == Value::Object(Map::new())
        {
            retry_interrupted(|| fs::remove_file(&file.real_path))
                .map_err(|error| HookConfigError::io("remove", &file.real_path, error))?;
            sync_directory(&file.real_path)?;
            outcome.removed_file = true;
        } else {
            write_atomically(&file.real_path, after_text.as_bytes(), file.mode)?;
        }
    }
    outcome.removed_backup = remove_backup(&backup)?;
    // Directories are removed only where install made them (it records
    // them): never one the user had before, nor above the file a symbolic
    // link at the target pointed to.
    outcome.removed_directories = remove_created_directories(
        &target.path,
        scope_directory(target, paths),
        outcome.removed_file && file.real_path == target.path,
    )?;
    Ok(outcome)
}

/// The keys of the trust entries Codex's `config.toml` holds for roster's
/// hooks in `document` (the file as it was before uninstall): what stays
/// behind in a file roster never edits. None when it holds none, or cannot
/// be read (then there is nothing roster can say it saw).
fn codex_trust_entries_of(target: &HookConfigFile, paths: &HookPaths, document: &Value) -> Vec<String> {
    let Ok(trust) = read_codex_trust(&paths.codex_config_toml()) else {
        return Vec::new();
    };
    let hooks_files = equivalent_paths(&target.path);
    find_installed_hooks(target.harness, document)
        .all()
        .flat_map(|hook| {
            hooks_files
                .iter()
                .map(|file| codex_trust_key(file, hook.event, hook.group_index, hook.hook_index))
                .collect::<Vec<_>>()
        })
        .filter(|key| trust.is_trusted(key))
        .collect()
}

/// Removes `backup` if it is there; returns its path when it was.
fn remove_backup(backup: &Path) -> Result<Option<PathBuf>, HookConfigError> {
    match retry_interrupted(|| fs::remove_file(backup)) {
        Ok(()) => Ok(Some(backup.to_path_buf())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(HookConfigError::io("remove the backup", backup, error)),
    }
}

/// Reports whether roster's hooks are in the target file. Never fails: a file
/// that cannot be read or parsed is a state of its own.
pub fn status(target: &HookConfigFile, paths: &HookPaths) -> HookStatus {
    if target.harness.uses_plugin_file() {
        return plugin_status(target, None);
    }
    let report = |state, detail: String| HookStatus { target: target.clone(), state, detail };
    let file = match read_existing(&target.path) {
        Ok(Some(file)) => file,
        Ok(None) => return report(HookState::NotInstalled, "no such file".to_owned()),
        Err(HookConfigError::Unusable { reason, .. }) => return report(HookState::Unparseable, reason),
        Err(error) => return report(HookState::Unreadable, error_with_causes(&error)),
    };
    let document = match parse_hook_document(target.harness, &file.bytes) {
        Ok(document) => document,
        Err(reason) => return report(HookState::Unparseable, reason),
    };
    let found = find_installed_hooks(target.harness, &document);
    let install_hint = format!("run roster-hooks install {}{}", target.harness, scope_flag(target));
    let events = target.harness.events();
    let missing: Vec<&str> = events
        .iter()
        .filter(|event| found.for_event(**event).is_empty())
        .map(|event| target.harness.event_name(*event))
        .collect();
    if missing.len() == events.len() {
        return report(HookState::NotInstalled, "no roster hooks in the file".to_owned());
    }
    if !missing.is_empty() {
        let (hooks, them) = if missing.len() > 1 { ("hooks", "them") } else { ("hook", "it") };
        return report(
            HookState::PartlyInstalled,
            format!("no {} {hooks}; {install_hint} to add {them}", words_list(&missing)),
        );
    }
    let mut problems = misplaced_hooks(target, &found, &install_hint);
    let commands: Vec<&str> = found.all().map(|hook| hook.command.as_str()).collect();
    if let Some(broken) = broken_programs_report(target, &commands) {
        return broken;
    }
    problems.extend(build_directory_notes(target, &commands));
    if target.harness == HookHarness::Codex
        && let Some((state, detail)) = codex_untrusted_hooks(target, paths, &found)
    {
        return report(state, detail);
    }
    if problems.is_empty() {
        let trusted = if target.harness == HookHarness::Codex { " and trusted" } else { "" };
        let start = target.harness.event_name(HookEvent::SessionStart);
        let end = target.harness.event_name(HookEvent::SessionEnd);
        let states = target.harness.state_events().len();
        report(
            HookState::Installed,
            format!("{start} and {end} hooks present{trusted}, and {states} state hooks"),
        )
    } else {
        report(HookState::Installed, problems.join("; "))
    }
}

/// What is wrong with hooks that are all there: an event wired more than
/// once, or to the wrong roster command.
fn misplaced_hooks(target: &HookConfigFile, found: &InstalledHooks, install_hint: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for event in target.harness.events() {
        let hooks = found.for_event(event);
        let name = target.harness.event_name(event);
        let expected = match event {
            HookEvent::SessionStart => RosterHookCall::Register,
            HookEvent::SessionEnd => RosterHookCall::Prune,
            HookEvent::State(_) => RosterHookCall::State,
        };
        if hooks.len() > 1 {
            problems.push(format!("{} roster {name} hooks; {install_hint} to keep one", hooks.len()));
        }
        if hooks.iter().any(|hook| hook.call != expected) {
            problems.push(format!("a {name} hook runs the wrong roster command; {install_hint}"));
        }
    }
    problems
}

/// Codex runs a hook only when its config.toml trusts it: the state and
/// why, when one of roster's is not trusted or the trust cannot be read.
fn codex_untrusted_hooks(
    target: &HookConfigFile,
    paths: &HookPaths,
    found: &InstalledHooks,
) -> Option<(HookState, String)> {
    let config_toml = paths.codex_config_toml();
    match read_codex_trust(&config_toml) {
        Err(reason) => {
            return Some((HookState::Untrusted, format!("cannot read Codex's trust entries: {reason}")));
        }
        Ok(trust) => {
            let hooks_files = equivalent_paths(&target.path);
            let untrusted: Vec<&FoundHook> = found
                .all()
                .filter(|hook| {
                    !hooks_files.iter().any(|file| {
                        trust.is_trusted(&codex_trust_key(
                            file,
                            hook.event,
                            hook.group_index,
                            hook.hook_index,
                        ))
                    })
                })
                .collect();
            if !untrusted.is_empty() {
                let names: Vec<&str> =
                    untrusted.iter().map(|hook| target.harness.event_name(hook.event)).collect();
                return Some((
                    HookState::Untrusted,
                    format!(
                        "Codex's config.toml has no trust entry for the {} hook{}, so Codex skips {}; \
                         {CODEX_TRUST_HINT}",
                        words_list(&names),
                        if names.len() > 1 { "s" } else { "" },
                        if names.len() > 1 { "them" } else { "it" },
                    ),
                ));
            }
        }
    }
    None
}

/// `a`, `a and b`, `a, b and c`.
fn words_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How to make Codex trust roster's hooks, for install and status to say.
pub const CODEX_TRUST_HINT: &str = "start codex and approve roster's hooks in its /hooks view, \
    or run codex with --dangerously-bypass-hook-trust";

/// `<file>.roster-backup`, next to the file.
pub fn backup_path_for(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|name| name.to_os_string()).unwrap_or_default();
    name.push(".roster-backup");
    path.with_file_name(name)
}

/// A configuration file read from disk.
struct ExistingFile {
    /// The file itself, after following a symbolic link at the target.
    real_path: PathBuf,
    bytes: Vec<u8>,
    mode: u32,
}

/// Reads the file at `path`, following a symbolic link (dotfile managers link
/// settings files; writing through keeps the link). `None` when there is no
/// file. Refuses what is not a regular file or is too large.
fn read_existing(path: &Path) -> Result<Option<ExistingFile>, HookConfigError> {
    let link_metadata = match retry_interrupted(|| fs::symlink_metadata(path)) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(HookConfigError::io("inspect", path, error)),
    };
    let real_path = if link_metadata.file_type().is_symlink() {
        retry_interrupted(|| fs::canonicalize(path)).map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => {
                HookConfigError::unusable(path, "it is a symbolic link to a file that does not exist")
            }
            _ => HookConfigError::io("follow the symbolic link", path, error),
        })?
    } else {
        path.to_owned()
    };
    let metadata = retry_interrupted(|| fs::metadata(&real_path))
        .map_err(|error| HookConfigError::io("inspect", &real_path, error))?;
    if !metadata.is_file() {
        return Err(HookConfigError::unusable(path, "it is not a regular file"));
    }
    if metadata.len() > LARGEST_CONFIG_FILE {
        return Err(HookConfigError::unusable(path, "it is larger than 16 MiB"));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    File::open(&real_path)
        .and_then(|file| file.take(LARGEST_CONFIG_FILE + 1).read_to_end(&mut bytes))
        .map_err(|error| HookConfigError::io("read", &real_path, error))?;
    if bytes.len() as u64 > LARGEST_CONFIG_FILE {
        return Err(HookConfigError::unusable(path, "it is larger than 16 MiB"));
    }
    Ok(Some(ExistingFile { real_path, bytes, mode: metadata.permissions().mode() & 0o7777 }))
}

/// The file's text; it passed [`parse_existing`], so it is UTF-8.
fn file_text<'f>(target: &HookConfigFile, file: &'f ExistingFile) -> Result<&'f str, HookConfigError> {
    std::str::from_utf8(&file.bytes)
        .map_err(|error| HookConfigError::unusable(&target.path, error.to_string()))
}

fn parse_existing(target: &HookConfigFile, file: &ExistingFile) -> Result<Value, HookConfigError> {
    parse_hook_document(target.harness, &file.bytes)
        .map_err(|reason| HookConfigError::unusable(&target.path, reason))
}

/// The bytes of the backup at `backup` when putting them back is exactly
/// undoing install: the backup holds no roster hook and means what
/// `without_roster` means, up to empty scaffolding.
fn restorable_backup(harness: HookHarness, backup: &Path, without_roster: &Value) -> Option<Vec<u8>> {
    let file = read_existing(backup).ok()??;
    let document = parse_hook_document(harness, &file.bytes).ok()?;
    let same_meaning = without_roster_hooks_or_empty_structures(harness, &document)
        == without_roster_hooks_or_empty_structures(harness, without_roster);
    (find_installed_hooks(harness, &document).is_empty() && same_meaning).then_some(file.bytes)
}

/// A new user-scope file may come to hold secrets (Claude Code keeps `env`
/// in its settings), so only its owner reads it; a project file is meant to
/// be committed and shared.
fn new_file_mode(scope: Scope) -> u32 {
    match scope {
        Scope::User => 0o600,
        Scope::Project => 0o644,
    }
}

/// `path` and, when it differs, its canonical form: Codex may key its trust
/// entries by either.
fn equivalent_paths(path: &Path) -> Vec<PathBuf> {
    let mut paths = vec![path.to_owned()];
    if let Ok(canonical) = fs::canonicalize(path)
        && canonical != path
    {
        paths.push(canonical);
    }
    paths
}

fn error_with_causes(error: &HookConfigError) -> String {
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_sits_next_to_the_file() {
        assert_eq!(
            backup_path_for(Path::new("/home/dev/.claude/settings.json")),
            Path::new("/home/dev/.claude/settings.json.roster-backup")
        );
    }
}
