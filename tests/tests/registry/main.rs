//! The registry as the tools keep it, driven through the real binaries:
//! what register, prune and consent write and remove, who owns a record, and
//! how the registry holds up against crashes, full disks, locks, hostile
//! entries, odd paths and other pid namespaces. One test binary, a module
//! per concern.

mod concurrency;
mod consent_directory;
mod consent_sessions;
mod crash;
mod empty_environment;
mod fault_regressions;
mod field_limits;
mod full_disk;
mod hostile_entries;
mod init_is_never_an_owner;
mod lock;
mod owner_chains;
mod paths_not_utf8;
mod prune_lock_once;
mod reaper;
mod register_semantics;
mod registry_parent;
mod trust_edge_cases;
mod user_namespaces;
mod worlds;
