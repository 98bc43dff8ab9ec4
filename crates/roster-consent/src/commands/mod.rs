//! The subcommands of `roster-consent`, one file each (`arm.rs` for `arm`
//! and `disarm`, which differ only in the state written; `status.rs`;
//! `should_arm.rs`), and what they share: the calling session's owner and
//! the consent library's assessment of its session.

pub(crate) mod arm;
pub(crate) mod should_arm;
pub(crate) mod status;

use std::path::{Path, PathBuf};

use clap::Args;

use cli_support::{CallingOwner, CommonArgs, NotUtf8Path};
use consent::{AssessmentRequest, SessionStatus};
use registry_core::RunningSystem;

/// The calling owner and the consent library's assessment of its session.
pub(crate) fn assess(
    common: &CommonArgs,
    session: &SessionArgs,
    facts: &RunningSystem,
) -> anyhow::Result<Status> {
    if let Some(given) = &session.cwd {
        require_utf8_directory(given)?;
    }
    let owner = cli_support::resolve_calling_session_owner(common, session.pid.as_deref(), facts)?;
    let roster_path = cli_support::roster_directory_choice(common)?.path;
    let request = AssessmentRequest {
        pid: owner.resolved.pid,
        owner_identity: owner.capture_identity(facts),
        roster_path: &roster_path,
        opened_roster: None,
        known_row: None,
        cwd_flag: session.cwd.as_deref(),
        env: &cli_support::process_env_os,
    };
    let session = consent::assess(request, facts)?;
    let directory = match &session {
        SessionStatus::Assessed(assessment) => Some(&assessment.directory),
        SessionStatus::Ended(ended) => ended.directory.as_ref(),
    };
    if let Some(directory) = directory {
        require_utf8_directory(&directory.path)?;
    }
    Ok(Status { owner, session })
}

/// Refuses a session directory that is not UTF-8, as given or as resolved:
/// roster records directories as text, and one read lossily (`\u{fffd}`
/// for the bytes) would be another directory, whose `.roster.toml` would
/// speak for the session.
pub(crate) fn require_utf8_directory(path: &Path) -> Result<(), NotUtf8Path> {
    match path.to_str() {
        Some(_) => Ok(()),
        None => Err(NotUtf8Path::directory(
            "the session directory",
            path,
            "pass --cwd a directory whose path is UTF-8",
        )),
    }
}

/// What `status` prints: who the owner is and how it was found, and the
/// assessment of its session, or what is left of one that ended.
pub(crate) struct Status {
    pub(crate) owner: CallingOwner,
    pub(crate) session: SessionStatus,
}

pub(crate) fn home_directory() -> Option<PathBuf> {
    cli_support::process_env_os("HOME").map(PathBuf::from).filter(|home| home.is_absolute())
}

pub(crate) fn path_json(path: Option<&Path>) -> serde_json::Value {
    path.map_or(serde_json::Value::Null, |path| path.to_string_lossy().into_owned().into())
}

/// How the owner was named, in words: `--pid`, `--pid parent`, the
/// ancestor walk, or the variable that named it.
pub(crate) fn source_description(owner: &CallingOwner) -> String {
    match owner.resolved.source {
        owner_liveness::OwnerSource::Flag => "--pid".into(),
        owner_liveness::OwnerSource::Parent => "--pid parent".into(),
        owner_liveness::OwnerSource::Ancestor => "the ancestor walk".into(),
        other => other.as_str().into(),
    }
}

/// Which session, and where it works.
#[derive(Clone, Debug, Args)]
pub struct SessionArgs {
    /// Name the session's owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command
    #[arg(short, long, value_name = "PID|parent", add = cli_support::session_pids_or_parent())]
    pub pid: Option<String>,

    /// Take DIR as the session's directory, where .roster.toml is looked for (default: the cwd of the session's record)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}
