//! Where a tool finds another roster tool it runs (roster-top its actions,
//! roster-notify roster-focus and the many-host watch): the one installed
//! beside itself first, so that a tool never runs another version's sibling
//! found earlier on PATH.

use std::path::PathBuf;

/// The roster tool `name`: beside this executable, else on PATH.
pub fn sibling_tool(name: &str) -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|directory| directory.join(name)))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}
