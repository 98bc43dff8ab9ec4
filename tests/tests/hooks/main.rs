//! Hook mode, driven through the real binaries the way harnesses call them:
//! payloads, time budgets, failures, session start, refresh and end, the
//! repository file and `roster-hooks` itself. One test binary, a module per
//! concern.

mod hook_bad_repo_file;
mod hook_budgets;
mod hook_captures;
mod hook_failures;
mod hook_payload_fallbacks;
mod hook_register_reads;
mod hook_session_end;
mod hook_session_refresh;
mod hook_sessions_under_one_owner;
mod hook_stand_in_harnesses;
mod hooks_cli;
mod message_delivery;
mod message_promises;
mod repo_file_trust;
mod state_events;
