//! consent decides whether a session accepts being messaged ("pushed to")
//! by other tools (docs/contract.md §6.4, §7): the configuration that may auto-arm it,
//! the per-session consent markers in `consent/`, and the gate that combines
//! them. Every input that cannot be believed counts as "no": the gate fails
//! closed.
//!
//! The binaries call it: `roster-consent` for everything, `roster-list` for
//! each row's consent column, `roster-prune` to reap markers and
//! `roster-register` for the repository's `agent_name`. A session's
//! consent is decided from its own directory (its record's `cwd`), never
//! from the caller's.

#![forbid(unsafe_code)]

mod assessment;
mod config;
mod config_files;
mod decision;
mod error;
mod gate;
mod marker;
mod marker_entry;
mod notify_config;
mod prune;
mod session_directory;

pub use assessment::{
    Assessment, AssessmentRequest, EndedSession, NotAccepted, SessionStatus, accepts_messages, assess,
    owner_condition,
};
pub use config::{
    ConfigOutcome, ConfigProblem, Decision, RepoConfig, UserConfig, parse_repo_config, parse_user_config,
    resolve_auto_arm,
};
pub use config_files::{
    AdoptChoices, AutoArmInputs, ConfigInput, MAX_CONFIG_BYTES, REPO_CONFIG_NAME, RepoConfigWarning,
    USER_CONFIG_RELATIVE, canonical_session_directory, find_repo_config, load_auto_arm_inputs,
    load_repo_input, load_user_input, repo_agent_name, repo_file_distrust, user_adopt_choices,
    user_config_path, user_ended_bounds, user_notify_config,
};
pub use decision::{ConsentDecider, ConsentLabel, OwnerCondition, SessionConsent, decide};
pub use error::{Error, Result};
pub use gate::{
    DISARM_LOCK_WAIT, Effective, MarkerWriteRefusal, WrittenMarker, effective_should_arm, live_consent_state,
    may_write_marker, write_disarmed_marker_without_lock, write_marker,
};
pub use marker::{MARKER_FORMAT, Marker, MarkerState, ParsedMarker, parse_marker};
pub use marker_entry::{
    ConsentState, MarkerEntry, MarkerFinding, MarkerProblem, marker_name_in_reader_world, read_marker,
    read_marker_entry, record_file_name_of_marker,
};
pub use notify_config::{
    NotifyConfig, NotifyExecConfig, NotifyNtfyConfig, NotifyTerminalConfig, NotifyWebhookConfig,
};
pub use prune::{MarkerPruneReport, prune_markers, remove_marker};
pub use session_directory::{SessionDirectory, SessionDirectorySource, session_directory};
