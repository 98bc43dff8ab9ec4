//! The registry-core library at its public face: records on disk and what
//! each verdict does to a record. One test binary, a module per concern.

mod records_on_disk;
mod verdict_actions;
