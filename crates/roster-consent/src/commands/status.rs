//! `roster-consent status`: the session's consent and why, as text or
//! JSON; a session that ended is described and refused (exit 3).

use std::io::Write;
use std::path::Path;

use cli_support::{
    CallingOwner, Colour, CommonArgs, OutputFormat, Refused, escape_for_terminal, home_relative, paint,
};
use consent::{
    Assessment, ConfigInput, ConfigOutcome, EndedSession, MarkerEntry, MarkerFinding, MarkerState,
    SessionDirectory, SessionDirectorySource, SessionStatus, owner_condition,
};
use registry_core::RunningSystem;

use super::{SessionArgs, assess, home_directory, path_json, source_description};

/// `status`: the session's consent and why. A session that ended is
/// described (what it last was) and refused like any command about an
/// owner that is not running: exit 3.
pub(crate) fn status(common: &CommonArgs, session: &SessionArgs) -> anyhow::Result<()> {
    let status = assess(common, session, &RunningSystem::read())?;
    if !common.quiet {
        let mut out = std::io::stdout().lock();
        let home = home_directory();
        match (common.output_format(), &status.session) {
            (OutputFormat::Json, SessionStatus::Assessed(assessment)) => {
                serde_json::to_writer_pretty(&mut out, &status_json(&status.owner, assessment))?;
                writeln!(out)?;
            }
            (OutputFormat::Json, SessionStatus::Ended(ended)) => {
                serde_json::to_writer_pretty(&mut out, &ended_status_json(&status.owner, ended))?;
                writeln!(out)?;
            }
            (OutputFormat::Text, SessionStatus::Assessed(assessment)) => out.write_all(
                status_text(&status.owner, assessment, home.as_deref(), common.colour_on_stdout()).as_bytes(),
            )?,
            (OutputFormat::Text, SessionStatus::Ended(ended)) => {
                out.write_all(ended_status_text(&status.owner, ended, home.as_deref()).as_bytes())?;
            }
        }
        out.flush()?;
    }
    match &status.session {
        SessionStatus::Assessed(_) => Ok(()),
        SessionStatus::Ended(ended) => {
            Err(Refused(format!("{}: its session has ended and accepts nothing", ended.owner_gone)).into())
        }
    }
}

/// The `marker` object of `status --json`: the state that counts, what
/// the file says, its owner's liveness, why, and its path (where it is,
/// or would be).
fn marker_json(marker: &MarkerEntry) -> serde_json::Value {
    let (liveness, problem) = match &marker.finding {
        MarkerFinding::Absent => (None, None),
        MarkerFinding::Judged { verdict, .. } => (Some(verdict.liveness.as_str()), None),
        MarkerFinding::Problem(problem) => (Some("unknown"), Some(problem.kind.as_str())),
    };
    serde_json::json!({
        "state": marker.counted_state().as_str(),
        "written_state": marker.written_state().map(MarkerState::as_str),
        "counts": marker.counts(),
        "liveness": liveness,
        "problem": problem,
        "reason": marker.reason(),
        "path": path_json(Some(&marker.path)),
    })
}

/// The owner's keys of `status --json`: its pid and how it was found.
fn owner_json(owner: &CallingOwner) -> serde_json::Map<String, serde_json::Value> {
    let mut keys = serde_json::Map::new();
    keys.insert("pid".into(), owner.resolved.pid.get().into());
    keys.insert("pid_source".into(), owner.resolved.source.as_str().into());
    keys.insert("pid_verified".into(), owner.resolved.verified.into());
    keys
}

fn status_json(owner: &CallingOwner, assessment: &Assessment) -> serde_json::Value {
    let config = |input: &ConfigInput| {
        serde_json::json!({
            "path": path_json(input.path.as_deref()),
            "auto_arm": input.outcome.auto_arm(),
            "error": input.outcome.error(),
        })
    };
    let mut user = config(&assessment.inputs.user);
    user["veto"] = user_vetoes(&assessment.inputs.user.outcome).into();
    let mut keys = owner_json(owner);
    let rest = serde_json::json!({
        "owner_running": assessment.owner_identity.is_ok(),
        "owner_reason": assessment.owner_identity.as_ref().err().map(ToString::to_string),
        "session_ended": false,
        "record": serde_json::Value::Null,
        "directory": directory_json(Some(&assessment.directory)),
        "marker": marker_json(&assessment.marker),
        "repo": config(&assessment.inputs.repo),
        "user": user,
        "auto_arm": assessment.inputs.decision.auto_arm,
        "should_arm": assessment.should_arm(),
        "reasons": assessment.reasons(),
        "warnings": assessment.inputs.decision.warnings,
    });
    keys.extend(rest.as_object().cloned().unwrap_or_default());
    keys.into()
}

/// `status --json` of a session that ended: the same keys, with what is
/// left of it (its record, its marker) and nothing decided (`repo`,
/// `user` and `auto_arm` null).
fn ended_status_json(owner: &CallingOwner, ended: &EndedSession) -> serde_json::Value {
    let record = ended.record.as_ref().map(|row| {
        serde_json::json!({
            "path": path_json(Some(&row.path)),
            "liveness": row.liveness().as_str(),
            "reason": row.verdict.reason,
        })
    });
    let mut keys = owner_json(owner);
    let rest = serde_json::json!({
        "owner_running": false,
        "owner_reason": ended.owner_gone.to_string(),
        "session_ended": true,
        "record": record,
        "directory": directory_json(ended.directory.as_ref()),
        "marker": marker_json(&ended.marker),
        "repo": serde_json::Value::Null,
        "user": serde_json::Value::Null,
        "auto_arm": serde_json::Value::Null,
        "should_arm": false,
        "reasons": [ended.consent.reason],
        "warnings": [],
    });
    keys.extend(rest.as_object().cloned().unwrap_or_default());
    keys.into()
}

fn directory_json(directory: Option<&SessionDirectory>) -> serde_json::Value {
    directory.map_or(serde_json::Value::Null, |directory| {
        serde_json::json!({ "path": path_json(Some(&directory.path)), "source": directory.source.as_str() })
    })
}

/// Where the session's directory came from, in words.
fn directory_origin(source: SessionDirectorySource) -> &'static str {
    match source {
        SessionDirectorySource::CwdFlag => "from --cwd",
        SessionDirectorySource::Record => "from the session's record",
        SessionDirectorySource::CurrentDirectory => "the current directory",
    }
}

fn user_vetoes(outcome: &ConfigOutcome) -> bool {
    !matches!(outcome, ConfigOutcome::Absent | ConfigOutcome::AutoArmUnset | ConfigOutcome::AutoArm(true))
}

/// What a configuration file said, in words.
fn describe_config(input: &ConfigInput) -> String {
    match &input.outcome {
        ConfigOutcome::Absent => "absent".into(),
        ConfigOutcome::AutoArmUnset => "[consent] auto_arm not set".into(),
        ConfigOutcome::AutoArm(value) => format!("[consent] auto_arm = {value}"),
        failed => failed.error().unwrap_or_default(),
    }
}

/// The `session` line of `status`: the owner's pid, how it was found,
/// whether it is verified, and its condition (`running`, or why not).
fn session_line(owner: &CallingOwner, condition: &str) -> String {
    let resolved = &owner.resolved;
    let verified =
        if resolved.verified { "verified" } else { "not verified: not this command or an ancestor" };
    format!("pid {} (via {}, {verified}), {condition}", resolved.pid, source_description(owner))
}

/// The `directory` line of `status`: the directory and where it came from.
fn directory_line(directory: &SessionDirectory, home: Option<&Path>) -> String {
    format!("{} ({})", home_relative(&directory.path, home), directory_origin(directory.source))
}

/// Label and value lines, the labels in a column of their own.
fn labelled_lines(lines: &[(&str, String)]) -> String {
    let width = lines.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    lines.iter().map(|(label, value)| format!("{label:<width$}  {value}\n")).collect()
}

/// The text of `status`: a label column and escaped values, `~` for home.
/// The marker's path is shown only where there is a marker.
fn status_text(owner: &CallingOwner, assessment: &Assessment, home: Option<&Path>, colour: bool) -> String {
    let escaped = |text: &str| escape_for_terminal(text).into_owned();
    let shown_path =
        |path: Option<&Path>| path.map_or_else(|| "-".to_owned(), |path| home_relative(path, home));
    let marker = &assessment.marker;
    let inputs = &assessment.inputs;

    let running = match &assessment.owner_identity {
        Ok(_) => "running".to_owned(),
        Err(error) => escaped(&owner_condition(error)),
    };
    let mut lines: Vec<(&str, String)> = vec![
        ("session", session_line(owner, &running)),
        ("directory", directory_line(&assessment.directory, home)),
        ("local", format!("{}; {}", marker.counted_state().as_str(), escaped(&marker.reason()))),
    ];
    if !matches!(marker.finding, MarkerFinding::Absent) {
        lines.push(("marker", shown_path(Some(&marker.path))));
    }
    lines.extend([
        (
            "repo file",
            match &inputs.repo.path {
                Some(path) => {
                    format!("{}: {}", shown_path(Some(path)), escaped(&describe_config(&inputs.repo)))
                }
                None => "none found from the session's directory upward".to_owned(),
            },
        ),
        (
            "user file",
            format!(
                "{}: {}{}",
                shown_path(inputs.user.path.as_deref()),
                escaped(&describe_config(&inputs.user)),
                if user_vetoes(&inputs.user.outcome) { " (veto)" } else { "" }
            ),
        ),
        ("auto-arm", if inputs.decision.auto_arm { "on" } else { "off" }.to_owned()),
        (
            "should arm",
            if assessment.should_arm() {
                paint("yes", Colour::Green, colour)
            } else {
                paint("no", Colour::Yellow, colour)
            },
        ),
    ]);
    for (index, reason) in assessment.reasons().iter().enumerate() {
        lines.push((if index == 0 { "why" } else { "" }, escaped(reason)));
    }
    for warning in &inputs.decision.warnings {
        lines.push(("warning", escaped(warning)));
    }
    labelled_lines(&lines)
}

/// The text of `status` for a session that ended: that it is gone, and
/// what it last was, as far as what it left tells (its record and its
/// directory, its marker's state); nothing is decided for it.
fn ended_status_text(owner: &CallingOwner, ended: &EndedSession, home: Option<&Path>) -> String {
    let escaped = |text: &str| escape_for_terminal(text).into_owned();
    let gone = format!("gone: {}", escaped(&ended.owner_gone.to_string()));
    let mut lines: Vec<(&str, String)> = vec![("session", session_line(owner, &gone))];
    lines.push((
        "record",
        match &ended.record {
            Some(row) => format!(
                "{}, {} ({})",
                home_relative(&row.path, home),
                row.liveness(),
                escaped(&row.verdict.reason)
            ),
            None => "none left".to_owned(),
        },
    ));
    if let Some(directory) = &ended.directory {
        lines.push(("directory", directory_line(directory, home)));
    }
    let marker = &ended.marker;
    let last_state = match &marker.finding {
        MarkerFinding::Absent => "none: it left no consent marker".to_owned(),
        MarkerFinding::Judged { marker: written, .. } => format!(
            "{} (its marker, left behind: the next consent write or `roster-prune` removes it)",
            written.state.as_str()
        ),
        MarkerFinding::Problem(_) => format!("unknown: {}", escaped(&marker.reason())),
    };
    lines.push(("last state", last_state));
    if !matches!(marker.finding, MarkerFinding::Absent) {
        lines.push(("marker", home_relative(&marker.path, home)));
    }
    lines.push(("should arm", "no".to_owned()));
    lines.push(("why", escaped(&ended.consent.reason)));
    labelled_lines(&lines)
}
