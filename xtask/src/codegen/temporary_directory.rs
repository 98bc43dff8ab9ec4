//! A directory under the system's temporary directory that the tests of
//! codegen and install write into and that is removed when dropped; a few
//! lines here instead of a dependency.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

pub struct TemporaryDirectory {
    path: PathBuf,
}

impl TemporaryDirectory {
    /// Creates a fresh, empty directory whose name says what it is for.
    pub fn new(purpose: &str) -> TemporaryDirectory {
        static NEXT_NUMBER: AtomicU32 = AtomicU32::new(0);
        let number = NEXT_NUMBER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("roster-xtask-{purpose}-{}-{number}", std::process::id()));
        // A directory left by an earlier process with the same pid would make the test see its files.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", path.display()));
        TemporaryDirectory { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TemporaryDirectory {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
