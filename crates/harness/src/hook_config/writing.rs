//! Writing a configuration file safely: its directories made, the file
//! replaced atomically (temporary file in the same directory, fsync, rename,
//! fsync of the directory) so a crash leaves the old file or the new one and
//! never a torn one, and the directories install made for it recorded, so
//! that uninstall removes those and no other.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use owner_liveness::retry_interrupted;

use super::types::HookConfigError;

/// Creates the missing directories above `file`, outermost first, and
/// records the outermost one it created beside the file
/// ([`created_directories_record`]), so that uninstall removes the
/// directories install made and never one the user had made before.
pub(crate) fn create_parent_directories(file: &Path) -> Result<(), HookConfigError> {
    let Some(parent) = file.parent().filter(|parent| !parent.as_os_str().is_empty()) else {
        return Ok(());
    };
    // Only a directory known to be missing counts as one install creates:
    // one that cannot be examined may be the user's.
    let missing: Vec<&Path> = parent
        .ancestors()
        .take_while(|directory| {
            matches!(fs::symlink_metadata(directory), Err(error) if error.kind() == io::ErrorKind::NotFound)
        })
        .collect();
    let Some(outermost) = missing.last() else {
        return Ok(());
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)
        .map_err(|error| HookConfigError::io("create the directory", parent, error))?;
    let mut record = outermost.as_os_str().as_bytes().to_vec();
    record.push(b'\n');
    write_atomically(&created_directories_record(file), &record, 0o600)
}

/// Where install records the outermost directory it created for `file`
/// (`<file>.roster-directories`, in the innermost one): the record that
/// tells uninstall which directories are roster's to remove.
pub(crate) fn created_directories_record(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".roster-directories");
    file.with_file_name(name)
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

/// Removes the record of the directories install created for `file`, and,
/// when `file_removed`, those directories that are empty now, innermost
/// first, stopping at the first one that is not. Only directories install
/// recorded go, and never `scope_directory` or one above it (nor anywhere
/// outside it): a directory the user had before install stays.
pub(crate) fn remove_created_directories(
    file: &Path,
    scope_directory: &Path,
    file_removed: bool,
) -> Result<Vec<PathBuf>, HookConfigError> {
    let record_path = created_directories_record(file);
    let record = match fs::read(&record_path) {
        Ok(record) => record,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(HookConfigError::io("read", &record_path, error)),
    };
    retry_interrupted(|| fs::remove_file(&record_path))
        .map_err(|error| HookConfigError::io("remove", &record_path, error))?;
    let outermost = PathBuf::from(OsStr::from_bytes(record.strip_suffix(b"\n").unwrap_or(&record)));
    let mut removed = Vec::new();
    if !file_removed || !file.starts_with(&outermost) {
        return Ok(removed);
    }
    let mut directory = file.parent();
    while let Some(current) = directory {
        if current == scope_directory
            || !current.starts_with(scope_directory)
            || !current.starts_with(&outermost)
            || retry_interrupted(|| fs::remove_dir(current)).is_err()
        {
            break;
        }
        removed.push(current.to_path_buf());
        directory = current.parent();
    }
    Ok(removed)
}
