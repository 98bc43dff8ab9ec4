//! The notes `roster-list` adds to a listing: what the reader should act on
//! (dead sessions hidden, unknown and untrusted entries, hook failures).
//! They go to stderr, so stdout holds only the listing; for people each is
//! said once per cause, not on every call: `.notes-shown.json` in the roster
//! directory remembers the cause each note was last shown for and the newest
//! hook failure shown. A script (`--format json`) gets every current note,
//! every call, as one JSON line `{"notes":[...]}` on stderr, and stdout stays
//! the array of rows it always was.

use std::collections::BTreeMap;
use std::time::Duration;

use cli_support::{escape_for_terminal, local_date_time};
use consent::ConsentLabel;
use registry_core::adopted::AdoptedHarness;
use registry_core::{
    HOOK_LOG_NAME, ListingSummary, NOTES_SHOWN_NAME, Origin, ProblemKind, RosterDir, Timestamp, read_entry,
    recent_hook_errors, write_atomically,
};

use crate::table::UNVERIFIED_MARK;

/// How far back hook failures count.
const HOOK_ERROR_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// One note: its kind, what it is caused by (two listings with the same
/// cause give the same note), and what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    pub cause: String,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoteKind {
    DeadHidden,
    DeadAdoptedHidden,
    Unknown,
    Untrusted,
    HookFailures,
    AdoptedUnread,
    /// Entries of `ended/` skipped as not to be believed (`--ended` only).
    EndedSkipped,
    /// What one CONSENT label the table shows means (text only).
    ConsentLegend(ConsentLabel),
    /// What the `?` after a pid means (text only).
    UnverifiedMark,
    /// Which columns were left out or cut to fit the width (text only).
    ColumnsFitted,
}

impl NoteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::DeadHidden => "dead-hidden",
            NoteKind::DeadAdoptedHidden => "dead-adopted-hidden",
            NoteKind::Unknown => "unknown",
            NoteKind::Untrusted => "untrusted",
            NoteKind::HookFailures => "hook-failures",
            NoteKind::AdoptedUnread => "adopted-unread",
            NoteKind::EndedSkipped => "ended-skipped",
            NoteKind::ConsentLegend(_) => "consent-legend",
            NoteKind::UnverifiedMark => "unverified-mark",
            NoteKind::ColumnsFitted => "columns-fitted",
        }
    }

    /// Where `.notes-shown.json` remembers it: its name, and the label for
    /// each label's legend, which is said once per label.
    fn key(self) -> String {
        match self {
            NoteKind::ConsentLegend(label) => format!("{LEGEND_KEY_PREFIX}{label}"),
            kind => kind.as_str().to_owned(),
        }
    }
}

/// How the keys of the legend's notes begin in `.notes-shown.json`.
const LEGEND_KEY_PREFIX: &str = "consent-legend ";

/// Whether a note remembered under `key` stays remembered while its cause
/// is absent: what a label or a mark means is said once, not again each
/// time a listing without it came in between.
fn is_remembered_while_absent(key: &str) -> bool {
    key.starts_with(LEGEND_KEY_PREFIX) || key == NoteKind::UnverifiedMark.as_str()
}

/// The notes that explain the table's marks: what each CONSENT label it
/// shows means (`labels`), and the `?` after a pid when `unverified` rows
/// are shown. Said to people once each, like every note.
pub fn legend_notes(labels: &[ConsentLabel], unverified: usize) -> Vec<Note> {
    let mut notes: Vec<Note> = labels
        .iter()
        .map(|label| Note {
            kind: NoteKind::ConsentLegend(*label),
            cause: label.meaning().to_owned(),
            message: format!("CONSENT {label}: {}", label.meaning()),
        })
        .collect();
    if unverified > 0 {
        notes.push(Note {
            kind: NoteKind::UnverifiedMark,
            cause: UNVERIFIED_MEANING.to_owned(),
            message: format!(
                "{unverified} unverified owner{}, marked {UNVERIFIED_MARK} after the pid: {UNVERIFIED_MEANING}; \
                 `roster-consent arm` refuses {} (only a session itself may arm)",
                plural(unverified),
                if unverified == 1 { "it" } else { "them" }
            ),
        });
    }
    notes
}

/// The note saying which columns were left out to fit the width (the
/// table's own words): said once per set of columns left out.
pub fn columns_note(message: String) -> Note {
    Note { kind: NoteKind::ColumnsFitted, cause: message.clone(), message }
}

/// What the `?` mark says of an owner.
const UNVERIFIED_MEANING: &str = "named by hand, not the registering process or its ancestor";

/// Every note the listing calls for now. The hook-failures note counts
/// every failure of the last day, whether or not a note told of some of
/// them before: one count, one meaning, in text and JSON alike.
pub fn current_notes(listing: &ListingSummary, roster: &RosterDir) -> Vec<Note> {
    let mut notes = Vec::new();
    let dead_records = listing.dead_hidden_records();
    if dead_records > 0 {
        notes.push(Note {
            kind: NoteKind::DeadHidden,
            cause: dead_records.to_string(),
            message: format!(
                "{dead_records} dead session{} hidden: `roster-list --all` shows them, `roster-prune` removes them",
                plural(dead_records)
            ),
        });
    }
    if !listing.dead_hidden_adopted.is_empty() {
        notes.push(dead_adopted_note(&listing.dead_hidden_adopted));
    }
    let unknown = listing.unknown;
    if unknown > 0 {
        let problems = listing.problems.len();
        let problem_note =
            if problems > 0 { format!(" ({problems} of them problem entries)") } else { String::new() };
        notes.push(Note {
            kind: NoteKind::Unknown,
            cause: format!("{unknown}/{problems}"),
            message: format!(
                "{unknown} unknown entr{}{problem_note}: only `roster-prune --older-than DURATION` removes them",
                if unknown == 1 { "y" } else { "ies" }
            ),
        });
    }
    let untrusted: Vec<String> = listing
        .problems
        .iter()
        .filter(|(_, problem)| problem.kind == ProblemKind::Untrusted)
        .map(|(name, problem)| {
            format!("{}: {}", escape_for_terminal(name), escape_for_terminal(&problem.detail))
        })
        .collect();
    if !untrusted.is_empty() {
        notes.push(Note {
            kind: NoteKind::Untrusted,
            cause: untrusted.join("\n"),
            message: format!(
                "{} untrusted entr{} never believed ({}): make the file yours, 0600, not a link, or remove it",
                untrusted.len(),
                if untrusted.len() == 1 { "y is" } else { "ies are" },
                untrusted.join("; ")
            ),
        });
    }
    for why in &listing.adopted_unread {
        notes.push(Note {
            kind: NoteKind::AdoptedUnread,
            cause: why.clone(),
            message: escape_for_terminal(why).into_owned(),
        });
    }
    let failures = recent_hook_errors(roster, Timestamp::now(), HOOK_ERROR_WINDOW);
    if let Some((logged_at, line)) = &failures.newest {
        notes.push(Note {
            kind: NoteKind::HookFailures,
            cause: logged_at.to_string(),
            message: format!(
                "{} hook failure{} in the last day, see {}; last, at {}: {}",
                failures.count,
                plural(failures.count),
                escape_for_terminal(&roster.path().join(HOOK_LOG_NAME).display().to_string()),
                local_date_time(*logged_at),
                // The log's own RFC 3339 time is said above in local time.
                escape_for_terminal(line.split_once(' ').map_or(line.as_str(), |(_, rest)| rest))
            ),
        });
    }
    notes
}

/// The note on the dead sessions hidden whose files are a harness's own
/// (Claude Code's, Copilot CLI's): `roster-prune` never removes those, so
/// the note says what does rather than advise a prune that does nothing.
fn dead_adopted_note(by_origin: &BTreeMap<Origin, usize>) -> Note {
    let counts: Vec<String> = by_origin
        .iter()
        .map(|(origin, count)| format!("{count} dead {} session{}", origin_name(*origin), plural(*count)))
        .collect();
    let total: usize = by_origin.values().sum();
    Note {
        kind: NoteKind::DeadAdoptedHidden,
        cause: counts.join(", "),
        message: format!(
            "{} hidden: `roster-list --all` shows {}; `roster-prune` never removes a harness's own \
             files: the harness removes them itself, or delete {} by hand (`roster-list --all --json` \
             gives each path)",
            counts.join(" and "),
            if total == 1 { "it" } else { "them" },
            if total == 1 { "it" } else { "them" },
        ),
    }
}

/// The harness whose files rows of `origin` come from, for people.
fn origin_name(origin: Origin) -> &'static str {
    match origin {
        Origin::Roster => "roster",
        Origin::ClaudeCode => AdoptedHarness::ClaudeCode.display_name(),
        Origin::Copilot => AdoptedHarness::Copilot.display_name(),
    }
}

/// The notes people have not been shown for their present cause (the
/// listing's, then `text_only`: the legend and the width's), and the
/// shown-state to remember once they are printed (`None`: nothing changed).
pub fn unseen_notes(
    listing: &ListingSummary,
    roster: &RosterDir,
    text_only: Vec<Note>,
) -> (Vec<Note>, Option<Vec<u8>>) {
    let shown = read_shown(roster);
    let hook_failures_key = NoteKind::HookFailures.key();
    let hook_failures_shown_up_to = shown.get(&hook_failures_key).and_then(|cause| Timestamp::parse(cause));
    let mut notes = current_notes(listing, roster);
    notes.extend(text_only);
    let mut remembered: BTreeMap<String, String> = BTreeMap::new();
    // The newest hook failure shown stays remembered while it has no
    // successor, and what a label or mark means once said; the other
    // causes are remembered only while they hold, so a cause that goes
    // away and comes back is said again.
    for (key, cause) in &shown {
        if *key == hook_failures_key || is_remembered_while_absent(key) {
            remembered.insert(key.clone(), cause.clone());
        }
    }
    for note in &notes {
        remembered.insert(note.kind.key(), note.cause.clone());
    }
    // The hook-failures note is said again when a failure newer than the
    // newest one shown was logged; its count is still the whole last day.
    let unseen: Vec<Note> = notes
        .into_iter()
        .filter(|note| match note.kind {
            NoteKind::HookFailures => match (Timestamp::parse(&note.cause), hook_failures_shown_up_to) {
                (Some(newest), Some(shown_up_to)) => newest > shown_up_to,
                _ => true,
            },
            kind => shown.get(&kind.key()) != Some(&note.cause),
        })
        .collect();
    let changed = remembered != shown;
    let state = changed.then(|| serde_json::to_vec(&remembered).unwrap_or_default());
    (unseen, state)
}

/// Remembers what was shown. Best effort and without the registry lock: a
/// listing must never wait on writers for this, and two listings racing
/// only repeat a note.
pub fn remember_shown(roster: &RosterDir, state: &[u8]) {
    let _ = write_atomically(roster, roster.root(), NOTES_SHOWN_NAME, state);
}

/// The notes as the one JSON line a script finds on stderr.
pub fn notes_json_line(notes: &[Note]) -> String {
    let notes: Vec<serde_json::Value> = notes
        .iter()
        .map(|note| serde_json::json!({ "kind": note.kind.as_str(), "message": note.message }))
        .collect();
    serde_json::json!({ "notes": notes }).to_string()
}

fn read_shown(roster: &RosterDir) -> BTreeMap<String, String> {
    read_entry(roster.root(), NOTES_SHOWN_NAME)
        .ok()
        .and_then(|contents| serde_json::from_slice(&contents.bytes).ok())
        .unwrap_or_default()
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
