//! `roster-top --summary`: one line for a status bar (`3 working · 1
//! waiting: permission (api) · 2 idle`), from one listing through
//! registry-core, as roster-list lists (no watch, no other process): tmux
//! may run it every few seconds. `--format json` gives the counts.

use std::collections::BTreeMap;

use cli_support::{CommonArgs, OutputFormat, escape_for_terminal};
use harness::Activity;
use owner_liveness::Liveness;
use registry_core::{ListFilter, RunningSystem, SessionRow, Timestamp};
use serde_json::json;

/// A waiting session, as the summary names it.
struct Waiting {
    what: String,
    name: String,
    since: Timestamp,
}

/// Prints the line (or its JSON) for the live sessions.
pub fn print_summary(common: &CommonArgs) -> anyhow::Result<()> {
    let facts = RunningSystem::read();
    let filter = ListFilter { adopt: cli_support::harness_session_sources(true), ..ListFilter::default() };
    let rows = match cli_support::open_roster_for_reading(common)? {
        Some(roster) => registry_core::list_sessions(&roster, &filter, &facts)?.rows,
        None => registry_core::adopted::read_adopted(&filter.adopt, &facts).0,
    };
    let (line, value) = summarize(&rows);
    let text = match common.output_format() {
        OutputFormat::Json => value.to_string(),
        OutputFormat::Text => line,
    };
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// The line and its JSON: `{"working", "idle", "unknown", "waiting":
/// [{"waiting_for", "agent", "session_pid", "state_since"}], "text"}`.
fn summarize(rows: &[SessionRow]) -> (String, serde_json::Value) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut waiting: Vec<(Waiting, &SessionRow)> = Vec::new();
    for row in rows.iter().filter(|row| row.liveness() == Liveness::Alive && row.record.is_some()) {
        match row.shown_state() {
            Some(state) if state.activity == Activity::Waiting => {
                let what = state
                    .waiting_for
                    .as_deref()
                    .map(|what| escape_for_terminal(what).into_owned())
                    .unwrap_or_else(|| "you".to_owned());
                let record = row.record.as_ref().expect("filtered on records");
                let name = match &record.agent {
                    Some(agent) => escape_for_terminal(agent.as_ref()).into_owned(),
                    None => row.pid.map_or_else(|| "?".to_owned(), |pid| format!("pid {pid}")),
                };
                waiting.push((Waiting { what, name, since: state.since }, row));
            }
            Some(state) => *counts.entry(state.activity.as_str()).or_default() += 1,
            None => *counts.entry("unknown").or_default() += 1,
        }
    }
    waiting.sort_by_key(|(waiting, _)| waiting.since.unix_nanos());
    let mut parts = Vec::new();
    if let Some(working) = counts.get("working") {
        parts.push(format!("{working} working"));
    }
    // One part per thing waited for, its sessions named longest first.
    let mut by_what: Vec<(&str, Vec<&str>)> = Vec::new();
    for (entry, _) in &waiting {
        match by_what.iter_mut().find(|(what, _)| *what == entry.what) {
            Some((_, names)) => names.push(&entry.name),
            None => by_what.push((&entry.what, vec![&entry.name])),
        }
    }
    for (what, names) in &by_what {
        parts.push(format!("{} waiting: {what} ({})", names.len(), names.join(", ")));
    }
    if let Some(idle) = counts.get("idle") {
        parts.push(format!("{idle} idle"));
    }
    if let Some(unknown) = counts.get("unknown") {
        parts.push(format!("{unknown} unknown"));
    }
    let line = if parts.is_empty() { "no sessions".to_owned() } else { parts.join(" · ") };
    let value = json!({
        "working": counts.get("working").copied().unwrap_or(0),
        "idle": counts.get("idle").copied().unwrap_or(0),
        "unknown": counts.get("unknown").copied().unwrap_or(0),
        "waiting": waiting.iter().map(|(entry, row)| json!({
            "waiting_for": entry.what,
            "agent": row.record.as_ref().and_then(|record| record.agent.as_ref()).map(|agent| AsRef::<str>::as_ref(agent).to_owned()),
            "session_pid": row.pid.map(|pid| pid.get()),
            "state_since": entry.since.to_rfc3339_millis(),
        })).collect::<Vec<_>>(),
        "text": line,
    });
    (line, value)
}
