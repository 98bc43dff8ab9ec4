//! `roster-consent arm` and `disarm`: a marker written for the calling
//! session, in the one state or the other, under the rules of who may
//! write one (docs/contract.md §6.4).

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use cli_support::{BadInput, CommonArgs, OutputFormat, Refused, home_relative};
use consent::{
    MarkerState, MarkerWriteRefusal, SessionDirectory, SessionDirectorySource, WrittenMarker,
    canonical_session_directory, session_directory, write_marker,
};
use owner_liveness::OwnerIdentity;
use registry_core::{RosterDir, RunningSystem};

use super::{SessionArgs, home_directory, path_json, require_utf8_directory, source_description};

/// The directory a marker records (information only: it decides nothing):
/// the session's directory as `status` finds it, else, for a session that
/// never registered, the current directory.
fn marker_directory(
    roster: Option<&RosterDir>,
    roster_path: &Path,
    identity: &OwnerIdentity,
    session: &SessionArgs,
) -> anyhow::Result<SessionDirectory> {
    if let Some(given) = &session.cwd {
        require_utf8_directory(given)?;
    }
    let directory = match session_directory(
        roster,
        roster_path,
        identity.pid,
        Some(identity),
        session.cwd.as_deref(),
        &RunningSystem::read(),
    ) {
        Err(consent::Error::NoSessionDirectory { .. }) => {
            let here = std::env::current_dir().map_err(|error| {
                BadInput(format!(
                    "the current directory cannot be read ({error}); pass the session's directory with --cwd"
                ))
            })?;
            SessionDirectory {
                path: canonical_session_directory(&here)?,
                source: SessionDirectorySource::CurrentDirectory,
            }
        }
        other => other?,
    };
    require_utf8_directory(&directory.path)?;
    Ok(directory)
}

/// `arm` and `disarm`.
pub(crate) fn write_state(
    common: &CommonArgs,
    session: &SessionArgs,
    state: MarkerState,
) -> anyhow::Result<()> {
    let verb = match state {
        MarkerState::Armed => "arm",
        MarkerState::Disarmed => "disarm",
    };
    let owner =
        cli_support::resolve_calling_session_owner(common, session.pid.as_deref(), &RunningSystem::read())?;
    let resolved = &owner.resolved;
    match consent::may_write_marker(state, resolved.verified, owner.ancestry_unreadable.as_deref()) {
        Ok(()) => {}
        // Not a refusal: whether the owner is an ancestor could not be told.
        Err(MarkerWriteRefusal::AncestryUnreadable(why)) => anyhow::bail!(
            "cannot {verb} pid {}: cannot tell whether it is this command or one of its ancestors: {why}",
            resolved.pid
        ),
        Err(MarkerWriteRefusal::NotTheSessionItself) => {
            return Err(Refused(format!(
                "cannot arm pid {pid} (named by {source}): it is neither this command nor one of its \
                 ancestors, and a session may only consent for itself; run `roster-consent arm` inside the \
                 session, or `roster-consent arm --pid parent` from its shell",
                pid = resolved.pid,
                source = source_description(&owner),
            ))
            .into());
        }
    }
    let facts = RunningSystem::read();
    let identity =
        owner.capture_identity(&facts).with_context(|| format!("cannot {verb} pid {}", resolved.pid))?;
    // The directory is decided before anything is created, from the
    // registry as it is: bad input (a --cwd, or a current directory, that
    // cannot be the session's) writes nothing.
    let existing = cli_support::open_roster_for_reading(common)?;
    let roster_path = cli_support::roster_directory_choice(common)?.path;
    let directory = marker_directory(existing.as_ref(), &roster_path, &identity, session)?.path;
    let roster = match existing {
        Some(roster) => roster,
        None => cli_support::open_roster_for_writing(common)?,
    };
    let written = write_marker(&roster, &identity, state, &directory, &facts)?;
    if common.quiet {
        return Ok(());
    }
    print_written(common, &written, state, resolved.pid, &directory)
}

/// What `arm` or `disarm` wrote: the marker with its path for a script, a
/// line for people.
fn print_written(
    common: &CommonArgs,
    written: &WrittenMarker,
    state: MarkerState,
    pid: owner_liveness::Pid,
    directory: &Path,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match common.output_format() {
        OutputFormat::Json => {
            let mut value = serde_json::to_value(&written.marker)?;
            if let Some(object) = value.as_object_mut() {
                object.insert("path".into(), path_json(Some(&written.path)));
            }
            serde_json::to_writer_pretty(&mut out, &value)?;
            writeln!(out)?;
        }
        OutputFormat::Text => {
            let home = home_directory();
            writeln!(out, "{} pid {} ({})", state.as_str(), pid, home_relative(directory, home.as_deref()))?;
        }
    }
    Ok(())
}
