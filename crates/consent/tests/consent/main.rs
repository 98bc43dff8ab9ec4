//! The consent library at its public face: config files, markers in memory
//! and on disk, and the resolution table. One test binary, a module per
//! concern.

mod config_files;
mod markers;
mod markers_on_disk;
mod resolution_table;
