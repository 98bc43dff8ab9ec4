//! Ended sessions (docs/contract.md §2, §6.2): when a record leaves the
//! registry (its session end, a prune or reap of a dead one, a removal by
//! age), an entry is kept in `ended/` saying what the session was, how it
//! ended and when, so that after a crash or a reboot people can still see
//! what ran. One small file per ended session, written atomically; bounded
//! by count (`KEPT_MOST`) and age (`KEPT_FOR`), trimmed at each write.
//! Keeping is best effort: callers never fail a removal because of it.

use owner_liveness::Liveness;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::record::session_record::Record;
use crate::record::timestamp::Timestamp;
use crate::record::values::{
    AgentName, HarnessName, RecordedTime, SessionDirectoryPath, SessionId, TranscriptPath,
};
use crate::session_row::SessionRow;
use crate::store::directory::{ENDED, OnDemandDir, RosterDir};
use crate::store::files::{
    Durability, ReadProblem, TEMP_PREFIX, entry_mtime, list_names, read_entry, remove_entry,
    write_atomically_as,
};
use crate::store::lock::RegistryLock;

/// The format of an entry of `ended/`.
pub const ENDED_FORMAT: u64 = 1;
pub use crate::ended_bounds::{
    ENDED_KEPT_DAYS_RANGE, ENDED_KEPT_FOR, ENDED_KEPT_MOST, ENDED_KEPT_MOST_RANGE, EndedBounds,
};

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HowEnded {
    /// Its session end ran (`roster-prune --current`).
    Exited,
    /// Its owner was found dead, in this boot, without a session end.
    Crashed,
    /// It was recorded in an earlier boot of this machine.
    Reboot,
    /// Removed by age (`--older-than`) or by hand.
    Removed,
}

impl HowEnded {
    pub fn as_str(self) -> &'static str {
        match self {
            HowEnded::Exited => "exited",
            HowEnded::Crashed => "crashed",
            HowEnded::Reboot => "reboot",
            HowEnded::Removed => "removed",
        }
    }

    /// How a record that prune or the reaper removed ended: a dead owner
    /// crashed in this boot, or went with an earlier boot; anything else
    /// was removed by age.
    pub fn of_removed(row: &SessionRow, this_boot: Option<&str>) -> HowEnded {
        match (row.liveness(), &row.record) {
            (Liveness::Dead, Some(record))
                if this_boot.is_some_and(|boot| record.owner.boot_id.as_str() != boot) =>
            {
                HowEnded::Reboot
            }
            (Liveness::Dead, _) => HowEnded::Crashed,
            _ => HowEnded::Removed,
        }
    }
}

/// One entry of `ended/`, as written and as `roster-list --ended` prints
/// it in JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndedSession {
    pub format: u64,
    /// When it ended, RFC 3339.
    pub ended_at: String,
    pub how: HowEnded,
    pub harness: String,
    pub session_id: Option<String>,
    pub agent: Option<String>,
    pub cwd: String,
    pub transcript_path: Option<String>,
    pub owner_pid: u32,
    pub boot_id: String,
    /// When it was registered, RFC 3339.
    pub registered_at: String,
}

impl EndedSession {
    fn of(record: &Record, how: HowEnded, now: Timestamp) -> EndedSession {
        EndedSession {
            format: ENDED_FORMAT,
            ended_at: RecordedTime::from(now).as_str().to_owned(),
            how,
            harness: record.harness.as_str().to_owned(),
            session_id: record.session_id.as_ref().map(|id| id.as_str().to_owned()),
            agent: record.agent.as_ref().map(|agent| agent.as_str().to_owned()),
            cwd: record.cwd.as_str().to_owned(),
            transcript_path: record.transcript_path.as_ref().map(|path| path.as_str().to_owned()),
            owner_pid: record.pid().get(),
            boot_id: record.owner.boot_id.as_str().to_owned(),
            registered_at: record.registered_at.as_str().to_owned(),
        }
    }

    /// The harness's command that resumes it, in its directory
    /// (`harness::RESUME_COMMANDS`), or why none does.
    pub fn resume(&self) -> harness::Resume {
        match harness::Harness::parse(&self.harness) {
            Some(harness) => harness::resume(harness, self.session_id.as_deref()),
            None => harness::Resume::Unavailable(format!("roster knows no harness {:?}", self.harness)),
        }
    }

    /// The entry as `roster-list --ended --format json` shows it: its
    /// fields and `resume`.
    pub fn shown(&self) -> ShownEndedSession<'_> {
        let (argv, form, none) = match self.resume() {
            harness::Resume::Command { argv, form } => (Some(argv), Some(form.as_str()), None),
            harness::Resume::Unavailable(why) => (None, None, Some(why)),
        };
        ShownEndedSession { session: self, resume: ShownResume { argv, cwd: &self.cwd, form, none } }
    }

    /// When it ended.
    pub fn ended(&self) -> Timestamp {
        Timestamp::parse(&self.ended_at).unwrap_or(Timestamp::from_unix_nanos(0))
    }

    /// Whether every field holds what a record may: an entry that does not
    /// is never believed.
    fn is_valid(&self) -> bool {
        self.format == ENDED_FORMAT
            && Timestamp::parse(&self.ended_at).is_some()
            && Timestamp::parse(&self.registered_at).is_some()
            && HarnessName::parse(&self.harness).is_ok()
            && self.session_id.as_deref().is_none_or(|id| SessionId::parse(id).is_ok())
            && self.agent.as_deref().is_none_or(|agent| AgentName::parse(agent).is_ok())
            && SessionDirectoryPath::parse(&self.cwd).is_ok()
            && self.transcript_path.as_deref().is_none_or(|path| TranscriptPath::parse(path).is_ok())
            && !self.boot_id.is_empty()
            && self.boot_id.len() <= 64
    }
}

/// An ended session as listed in JSON: the entry's keys, then `resume`.
#[derive(Debug, Serialize)]
pub struct ShownEndedSession<'a> {
    #[serde(flatten)]
    pub session: &'a EndedSession,
    pub resume: ShownResume<'a>,
}

/// `resume` of a listed ended session: the argv to run in `cwd` and its
/// form (`by-id`, or `latest`: the latest session of the directory, for a
/// session without id), or `argv` null and `none` saying why nothing
/// resumes it.
#[derive(Debug, Serialize)]
pub struct ShownResume<'a> {
    pub argv: Option<Vec<String>>,
    pub cwd: &'a str,
    pub form: Option<&'static str>,
    pub none: Option<String>,
}

/// `ended/`; created when `create` and missing.
fn open_ended_directory(roster: &RosterDir, create: bool) -> Result<Option<OnDemandDir>> {
    OnDemandDir::open(roster, roster.root(), ENDED, create)
}

/// The name of a record's entry in `ended/`: the record's name and when it
/// was registered, so that one session ended twice is one entry.
fn entry_name(row: &SessionRow, record: &Record) -> String {
    let stem = row.file_name.strip_suffix(".json").unwrap_or(&row.file_name);
    format!("{stem}-{}.json", record.registered_at().unix_nanos())
}

/// Keeps an entry for each of `ended` (rows whose records were just
/// removed under `_lock`), ended as `how` says, then trims `ended/` to the
/// roster handle's bounds (`RosterDir::with_ended_bounds`). Rows without a
/// record (problem entries) tell nothing to keep. Of more than the bound
/// at once only the most recently registered are written, since the trim
/// would remove the rest.
///
/// The writes are not fsynced: a rename is as atomic for every process,
/// and an entry lost to a power cut is a hint lost, not a record; a prune
/// of thousands of records does not wait on the disk for each.
pub fn keep_ended(
    roster: &RosterDir,
    _lock: &RegistryLock,
    ended: &[&SessionRow],
    how: impl Fn(&SessionRow) -> HowEnded,
    now: Timestamp,
) -> Result<()> {
    let bounds = roster.ended_bounds();
    let kept = most_recently_registered(ended, bounds.kept_most);
    if kept.is_empty() {
        return Ok(());
    }
    let Some(directory) = open_ended_directory(roster, true)? else { return Ok(()) };
    let mut written = std::collections::HashSet::with_capacity(kept.len());
    for (row, record) in kept {
        let bytes = serde_json::to_vec(&EndedSession::of(record, how(row), now)).map_err(|error| {
            Error::io("encode the ended session of", row.path.clone(), std::io::Error::other(error))
        })?;
        let name = entry_name(row, record);
        write_atomically_as(roster, directory.subdir(), &name, &bytes, Durability::Unsynced)?;
        written.insert(name);
    }
    trim(roster, &directory, now, bounds, &written)
}

/// The `most` rows of `ended` with a record registered last, and their
/// records, by each row's `registered_at` (its record's, parsed when the
/// row was read): parsing them again here took 3 ms of a prune of 10,000
/// records, on the thread that writes the ended sessions while the other
/// has little left to do.
fn most_recently_registered<'r>(ended: &[&'r SessionRow], most: usize) -> Vec<(&'r SessionRow, &'r Record)> {
    let with_records = ended.iter().filter_map(|row| Some((*row, row.record.as_ref()?)));
    if ended.len() <= most {
        return with_records.collect();
    }
    if most == 0 {
        return Vec::new();
    }
    let mut keyed: Vec<(std::cmp::Reverse<i128>, (&SessionRow, &Record))> = with_records
        .map(|(row, record)| (std::cmp::Reverse(row.registered_at.unix_nanos()), (row, record)))
        .collect();
    if keyed.len() > most {
        keyed.select_nth_unstable_by_key(most - 1, |(key, _)| *key);
        keyed.truncate(most);
    }
    keyed.into_iter().map(|(_, entry)| entry).collect()
}

/// Removes the entries older than `bounds.kept_for`, then the oldest past
/// `bounds.kept_most`, and temporaries an hour old. The entries in
/// `just_written` were written after `now` under the same lock: none is
/// older than that, and none is looked at (a prune that keeps a thousand
/// sessions spares a thousand `stat`s); when they are as many as are
/// kept, neither is any other entry, all of which go.
fn trim(
    roster: &RosterDir,
    directory: &OnDemandDir,
    now: Timestamp,
    bounds: EndedBounds,
    just_written: &std::collections::HashSet<String>,
) -> Result<()> {
    let subdir = directory.subdir();
    let oldest_kept = now.unix_nanos() - bounds.kept_for.as_nanos() as i128;
    let oldest_temporary = now.unix_nanos() - crate::store::files::TEMP_MAX_AGE.as_nanos() as i128;
    // As many written now as may be kept: every other entry was written
    // before them and is past the bound, whatever its mtime says (a clock
    // stepped back dates an older entry later), so it goes unlooked at.
    let all_others_go = just_written.len() >= bounds.kept_most;
    let mut kept = Vec::new();
    for name in list_names(roster, subdir)? {
        let Some(text) = name.to_str() else { continue };
        if just_written.contains(text) {
            kept.push((now.unix_nanos(), text.to_owned()));
            continue;
        }
        if all_others_go && !text.starts_with(TEMP_PREFIX) {
            remove_entry(roster, subdir, text)?;
            continue;
        }
        let Some(mtime) = entry_mtime(subdir, &name) else { continue };
        if text.starts_with(TEMP_PREFIX) {
            if mtime.unix_nanos() < oldest_temporary {
                remove_entry(roster, subdir, text)?;
            }
        } else if mtime.unix_nanos() < oldest_kept {
            remove_entry(roster, subdir, text)?;
        } else {
            kept.push((mtime.unix_nanos(), text.to_owned()));
        }
    }
    if kept.len() > bounds.kept_most {
        kept.sort();
        for (_, name) in kept.iter().take(kept.len() - bounds.kept_most) {
            remove_entry(roster, subdir, name)?;
        }
    }
    Ok(())
}

/// The ended sessions kept, newest first, and how many entries were
/// skipped as not to be believed (a symlink, another user's file, bad
/// JSON, a field no record may hold).
#[derive(Clone, Debug, Default)]
pub struct EndedListing {
    pub sessions: Vec<EndedSession>,
    pub skipped: usize,
}

/// Reads `ended/` with the store's trust checks (no reader creates it).
pub fn list_ended(roster: &RosterDir) -> Result<EndedListing> {
    let mut listing = EndedListing::default();
    let Some(directory) = open_ended_directory(roster, false)? else { return Ok(listing) };
    for name in list_names(roster, directory.subdir())? {
        let Some(name) = name.to_str().filter(|name| !name.starts_with('.')).map(str::to_owned) else {
            if !name.as_encoded_bytes().starts_with(b".") {
                listing.skipped += 1;
            }
            continue;
        };
        let session = match read_entry(directory.subdir(), &name) {
            // Trimmed by a writer since the listing: nothing to say.
            Err(ReadProblem::Missing) => continue,
            read => read
                .ok()
                .and_then(|contents| serde_json::from_slice::<EndedSession>(&contents.bytes).ok())
                .filter(EndedSession::is_valid),
        };
        match session {
            Some(session) => listing.sessions.push(session),
            None => listing.skipped += 1,
        }
    }
    listing.sessions.sort_by_key(|session| std::cmp::Reverse(session.ended().unix_nanos()));
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn entry(ended_at: &str) -> EndedSession {
        EndedSession {
            format: ENDED_FORMAT,
            ended_at: ended_at.to_owned(),
            how: HowEnded::Crashed,
            harness: "claude-code".to_owned(),
            session_id: Some("abc".to_owned()),
            agent: None,
            cwd: "/srv/app".to_owned(),
            transcript_path: None,
            owner_pid: 4711,
            boot_id: "6f639ca8-0eda-4ff2-ab93-8c443cc64887".to_owned(),
            registered_at: "2026-01-01T00:00:00Z".to_owned(),
        }
    }

    /// Writes entry `name`, last written `age` ago.
    fn write_aged(roster: &RosterDir, directory: &OnDemandDir, name: &str, age: Duration) {
        let bytes = serde_json::to_vec(&entry("2026-01-01T00:00:00Z")).unwrap();
        write_atomically_as(roster, directory.subdir(), name, &bytes, Durability::Unsynced).unwrap();
        let path = roster.path().join(ENDED).join(name);
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    /// The trim keeps the newest `ENDED_KEPT_MOST` within `ENDED_KEPT_FOR`:
    /// entries past the age go whatever their number, then the oldest past
    /// the count.
    #[test]
    fn the_trim_keeps_the_newest_thousand_within_thirty_days() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let directory = open_ended_directory(&roster, true).unwrap().expect("created");
        let over = 7;
        for index in 0..ENDED_KEPT_MOST + over {
            // Entry 0 is the newest; the higher the index, the older.
            write_aged(&roster, &directory, &format!("{index}.json"), Duration::from_secs(60 * index as u64));
        }
        write_aged(&roster, &directory, "expired.json", ENDED_KEPT_FOR + Duration::from_secs(3600));
        trim(&roster, &directory, Timestamp::now(), EndedBounds::default(), &Default::default()).unwrap();
        let names: Vec<String> = list_names(&roster, directory.subdir())
            .unwrap()
            .into_iter()
            .map(|name| name.into_string().unwrap())
            .collect();
        assert_eq!(names.len(), ENDED_KEPT_MOST);
        assert!(!names.contains(&"expired.json".to_owned()));
        for index in ENDED_KEPT_MOST..ENDED_KEPT_MOST + over {
            assert!(!names.contains(&format!("{index}.json")), "{index}.json, among the oldest, was kept");
        }
        assert!(
            names.contains(&"0.json".to_owned()) && names.contains(&format!("{}.json", ENDED_KEPT_MOST - 1))
        );

        // Only ever bounded: a listing of what was kept reads every entry.
        let listing = list_ended(&roster).unwrap();
        assert_eq!((listing.sessions.len(), listing.skipped), (ENDED_KEPT_MOST, 0));
    }

    /// Bounds the user configured hold as the defaults do: the newest
    /// `kept_most` within `kept_for`.
    #[test]
    fn configured_bounds_keep_fewer_for_less_time() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let directory = open_ended_directory(&roster, true).unwrap().expect("created");
        for index in 0..8 {
            write_aged(
                &roster,
                &directory,
                &format!("{index}.json"),
                Duration::from_secs(3600 * index as u64),
            );
        }
        write_aged(&roster, &directory, "two-days.json", Duration::from_secs(2 * 86400));
        let bounds = EndedBounds { kept_most: 5, kept_for: Duration::from_secs(86400) };
        trim(&roster, &directory, Timestamp::now(), bounds, &Default::default()).unwrap();
        let mut names: Vec<String> = list_names(&roster, directory.subdir())
            .unwrap()
            .into_iter()
            .map(|name| name.into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["0.json", "1.json", "2.json", "3.json", "4.json"]);
    }

    /// An entry whose fields no record may hold is not believed.
    #[test]
    fn an_entry_with_a_field_no_record_may_hold_is_skipped() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let directory = open_ended_directory(&roster, true).unwrap().expect("created");
        let good = entry("2026-01-02T00:00:00Z");
        let relative = EndedSession { cwd: "srv/app".to_owned(), ..good.clone() };
        let newer = EndedSession { format: ENDED_FORMAT + 1, ..good.clone() };
        let bad_time = EndedSession { ended_at: "yesterday".to_owned(), ..good.clone() };
        for (name, session) in
            [("a.json", &good), ("b.json", &relative), ("c.json", &newer), ("d.json", &bad_time)]
        {
            let bytes = serde_json::to_vec(session).unwrap();
            write_atomically_as(&roster, directory.subdir(), name, &bytes, Durability::Unsynced).unwrap();
        }
        let listing = list_ended(&roster).unwrap();
        assert_eq!(listing.sessions, vec![good]);
        assert_eq!(listing.skipped, 3);
    }
}
