//! Writing a configuration file safely: its directories made, the file
//! replaced atomically (temporary file in the same directory, fsync, rename,
//! fsync of the directory) so a crash leaves the old file or the new one and
//! never a torn one, and the directories it leaves empty removed.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use owner_liveness::retry_interrupted;

use super::types::HookConfigError;

pub(crate) fn create_parent_directories(path: &Path) -> Result<(), HookConfigError> {
    match path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        Some(parent) => fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|error| HookConfigError::io("create the directory", parent, error)),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` with `mode`: a temporary file in the same
/// directory, fsync, rename over `path`, fsync of the directory. A failure at
/// any step removes the temporary and leaves `path` as it was.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<(), HookConfigError> {
    static TEMPORARY_COUNTER: AtomicU32 = AtomicU32::new(0);
    let file_name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(
        ".{file_name}.roster-tmp-{}-{}",
        std::process::id(),
        TEMPORARY_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| -> io::Result<()> {
        let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temporary)?;
        retry_interrupted(|| file.set_permissions(fs::Permissions::from_mode(mode)))?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(error) = written {
        let _ = fs::remove_file(&temporary);
        return Err(HookConfigError::io("write", path, error));
    }
    if let Err(error) = retry_interrupted(|| fs::rename(&temporary, path)) {
        let _ = fs::remove_file(&temporary);
        return Err(HookConfigError::io("replace", path, error));
    }
    sync_directory(path)
}

/// Makes the rename or removal of `path` durable.
pub(crate) fn sync_directory(path: &Path) -> Result<(), HookConfigError> {
    let directory = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    File::open(directory)
        .and_then(|directory| directory.sync_all())
        .map_err(|error| HookConfigError::io("sync the directory", directory, error))
}

/// Removes the directories above the removed `file` that are empty now,
/// innermost first, stopping at the first one that is not and never going
/// up to `scope_directory` or above it (nor anywhere outside it).
pub(crate) fn remove_emptied_directories(file: &Path, scope_directory: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let mut directory = file.parent();
    while let Some(current) = directory {
        if current == scope_directory
            || !current.starts_with(scope_directory)
            || retry_interrupted(|| fs::remove_dir(current)).is_err()
        {
            break;
        }
        removed.push(current.to_path_buf());
        directory = current.parent();
    }
    removed
}
