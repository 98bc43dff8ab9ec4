//! The registry as the tools write and read it, driven through the real
//! binaries: what register, prune and consent write and remove, who owns a
//! record, what `roster-list` and its watch tell their readers, and how the
//! registry holds up against crashes, full disks, locks, hostile entries,
//! odd paths and other pid namespaces. One test binary, a module per
//! concern.

mod adopted_sessions;
mod concurrency;
mod consent_directory;
mod consent_sessions;
mod copilot_sessions;
mod crash;
mod empty_environment;
mod ended_sessions;
mod escaping;
mod fault_regressions;
mod field_limits;
mod focus_sessions;
mod full_disk;
mod hostile_entries;
mod hosts;
mod init_is_never_an_owner;
mod json_contract;
mod list_consent;
mod list_filters;
mod list_notes;
mod list_width;
mod lock;
mod locks_held_elsewhere;
mod messages;
mod owner_chains;
mod paths_not_utf8;
mod prune_lock_once;
mod reaper;
mod register_refresh;
mod register_semantics;
mod registry_parent;
mod resume_sessions;
mod send_input;
mod send_messages;
mod short_flags;
mod trust_edge_cases;
mod user_namespaces;
mod watch;
mod watch_agrees_with_listing;
mod worlds;
