//! Completion of the values only the registry knows: the pids, session ids
//! and agent names of the live sessions. A completion script cannot know
//! them, so it asks the binary at TAB time: with `ROSTER_COMPLETE=<shell>`
//! in its environment a binary answers clap_complete's dynamic-completion
//! protocol instead of running (`complete_when_asked`), and the flags that
//! name a session carry a candidates function (`session_targets`,
//! `session_pids`, …) that reads the registry as a listing does.
//!
//! The registry is the one `ROSTER_DIR` or the default names (the
//! completion request carries no `--dir`). Only live sessions are offered:
//! a value completed is one the command can use now.

use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use owner_liveness::Liveness;
use registry_core::{ListFilter, Record, RunningSystem};

use crate::args::CommonArgs;
use crate::roster::open_roster_for_reading;

/// The variable that asks a binary to complete rather than run; its value
/// names the shell (`bash`, `zsh`, `fish`, `elvish`, `powershell`).
pub const COMPLETE_VARIABLE: &str = "ROSTER_COMPLETE";

/// Answers a completion request and exits when `ROSTER_COMPLETE` asks for
/// one; returns at once otherwise (one look at the environment, so a hook
/// pays nothing for it). `command` builds the tool's clap command.
pub fn complete_when_asked(command: fn() -> clap::Command) {
    clap_complete::CompleteEnv::with_factory(command).var(COMPLETE_VARIABLE).complete();
}

/// `--to`: each live session's owner pid, session id and agent name.
pub fn session_targets() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let mut candidates = Vec::new();
        for record in live_session_records() {
            let about = session_description(&record);
            candidates.push(
                CompletionCandidate::new(record.owner.pid.to_string()).help(Some(about.clone().into())),
            );
            if let Some(id) = &record.session_id {
                candidates.push(CompletionCandidate::new(id.as_str()).help(Some(about.clone().into())));
            }
            if let Some(agent) = &record.agent {
                candidates.push(CompletionCandidate::new(agent.as_str()).help(Some(about.into())));
            }
        }
        unique(candidates)
    })
}

/// `--pid PID|parent` of a command about a registered session: `parent`
/// and each live session's owner pid (never every process of the system).
pub fn session_pids_or_parent() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let mut candidates =
            vec![CompletionCandidate::new("parent").help(Some("the caller's parent".into()))];
        candidates.extend(pid_candidates());
        candidates
    })
}

/// A pid that must be a session's (`roster-send --from`): each live
/// session's owner pid.
pub fn session_pids() -> ArgValueCandidates {
    ArgValueCandidates::new(pid_candidates)
}

/// `--until-gone PID|SESSION_ID`: each live session's owner pid and session id.
pub fn session_pids_and_ids() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let mut candidates = pid_candidates();
        candidates.extend(session_id_candidates());
        unique(candidates)
    })
}

/// `--session-id` of a listing: each live session's session id.
pub fn session_ids() -> ArgValueCandidates {
    ArgValueCandidates::new(session_id_candidates)
}

/// `--agent` of a listing: the agent names of the live sessions.
pub fn agent_names() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        unique(
            live_session_records()
                .into_iter()
                .filter_map(|record| record.agent.map(|agent| CompletionCandidate::new(agent.as_str())))
                .collect(),
        )
    })
}

fn pid_candidates() -> Vec<CompletionCandidate> {
    live_session_records()
        .iter()
        .map(|record| {
            CompletionCandidate::new(record.owner.pid.to_string())
                .help(Some(session_description(record).into()))
        })
        .collect()
}

fn session_id_candidates() -> Vec<CompletionCandidate> {
    live_session_records()
        .iter()
        .filter_map(|record| {
            let id = record.session_id.as_ref()?;
            Some(CompletionCandidate::new(id.as_str()).help(Some(session_description(record).into())))
        })
        .collect()
}

/// The records of the live sessions in the registry, in the listing's
/// order; none when there is no registry or it cannot be read (completion
/// offers nothing rather than an error).
fn live_session_records() -> Vec<Record> {
    let Ok(Some(roster)) = open_roster_for_reading(&CommonArgs::default()) else { return Vec::new() };
    let Ok(listing) = registry_core::list_sessions(&roster, &ListFilter::default(), &RunningSystem::read())
    else {
        return Vec::new();
    };
    listing
        .rows
        .into_iter()
        .filter(|row| row.liveness() == Liveness::Alive)
        .filter_map(|row| row.record)
        .collect()
}

/// What a shell shows beside a candidate: the session's agent, harness
/// and directory.
fn session_description(record: &Record) -> String {
    let agent = record.agent.as_ref().map_or("-", |agent| agent.as_str());
    let harness = Some(record.harness.as_str()).filter(|harness| !harness.is_empty()).unwrap_or("-");
    let home = crate::process_env::process_env_os("HOME").map(std::path::PathBuf::from);
    let directory = crate::text::home_relative(std::path::Path::new(record.cwd.as_str()), home.as_deref());
    crate::text::escape_for_terminal(&format!("{agent} {harness} {directory}")).into_owned()
}

/// `candidates` without repeats (two sessions under one agent name), in order.
fn unique(candidates: Vec<CompletionCandidate>) -> Vec<CompletionCandidate> {
    let mut seen = std::collections::HashSet::new();
    candidates.into_iter().filter(|candidate| seen.insert(candidate.get_value().to_owned())).collect()
}
