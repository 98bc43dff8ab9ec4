//! Opening the roster directory the way every binary does: `--dir` beats
//! `ROSTER_DIR`, which beats the XDG default; writers create it, readers
//! only open what exists.

use registry_core::{DirectoryChoice, RosterDir, choose_directory};

use crate::args::CommonArgs;
use crate::owner::process_env_os;

/// Where the roster directory is for these flags and this environment.
pub fn roster_directory_choice(common: &CommonArgs) -> registry_core::Result<DirectoryChoice> {
    choose_directory(common.dir.as_deref(), &process_env_os)
}

/// Opens (creating it if needed) the roster directory, for a writer.
pub fn open_roster_for_writing(common: &CommonArgs) -> registry_core::Result<RosterDir> {
    RosterDir::open_or_create(&roster_directory_choice(common)?.path)
}

/// Opens the roster directory for a reader; `None` when it does not exist.
pub fn open_roster_for_reading(common: &CommonArgs) -> registry_core::Result<Option<RosterDir>> {
    RosterDir::open_existing(&roster_directory_choice(common)?.path)
}
