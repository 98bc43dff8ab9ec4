//! What the roster directory holds, entry by entry (docs/contract.md §2),
//! as one list built from the names the code uses: the man page's LAYOUT is
//! generated from it, and a test holds the contract's layout to it, so an
//! entry added to the registry cannot be left out of either.

use crate::store::directory::{
    CONSENT, ENDED, MESSAGES, OUTCOMES_NAME, RESUMING, SESSION_IDS, SESSIONS, STATES,
};
use crate::store::files::TEMP_PREFIX;
use crate::store::hook_log::{HOOK_LOG_LINES, HOOK_LOG_NAME};
use crate::store::lock::LOCK_NAME;

/// Where the reaping walk of `roster-register` left off, in `sessions/`: a
/// hint, rewritten without fsync, and without the lock when nothing was
/// reaped; any value is harmless, and one that cannot be read is ignored.
pub const REAP_CURSOR_NAME: &str = ".reap-cursor";

/// Which notes `roster-list` already showed people, and for which cause,
/// in the roster directory.
pub const NOTES_SHOWN_NAME: &str = ".notes-shown.json";

/// One entry of the roster directory: its path below the directory, with
/// `<pid>`, `<world>` or `<hash>` standing for the parts that vary, and
/// what it is, in a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutEntry {
    pub path: String,
    pub meaning: String,
}

/// Every entry of the roster directory, in the order the contract lists
/// them.
pub fn registry_layout() -> Vec<LayoutEntry> {
    let entry = |path: String, meaning: &str| LayoutEntry { path, meaning: meaning.to_owned() };
    vec![
        entry(format!("{SESSIONS}/<pid>@<world>.json"), "one record per session (0600)"),
        entry(format!("{SESSIONS}/{REAP_CURSOR_NAME}"), "where register's reaping walk left off, a hint"),
        entry(format!("{CONSENT}/<pid>@<world>.json"), "one consent marker per session (0600)"),
        entry(
            format!("{STATES}/<pid>@<world>.json"),
            "what each session is doing, written by its state hook (0600)",
        ),
        entry(
            format!("{MESSAGES}/<pid>@<world>/"),
            "the messages queued for each session, one file each (0600)",
        ),
        entry(
            format!("{MESSAGES}/{OUTCOMES_NAME}/<id>.json"),
            "what became of the messages of sessions gone, kept 7 days",
        ),
        entry(
            format!("{ENDED}/<pid>@<world>-<nanos>.json"),
            "one entry per ended session, how and when it ended (0600), the last 1000 within 30 days unless config.toml says otherwise",
        ),
        entry(
            format!("{RESUMING}/<hash>.json"),
            "one claim per session roster-resume started: the process running it (0600)",
        ),
        entry(LOCK_NAME.to_owned(), "the lock every change takes, never removed"),
        entry(
            format!("{SESSION_IDS}/<hash>"),
            "the session-id index: a hint, believed when the record agrees",
        ),
        entry(HOOK_LOG_NAME.to_owned(), &format!("failed hook calls, the last {HOOK_LOG_LINES}")),
        entry(NOTES_SHOWN_NAME.to_owned(), "the notes roster-list already showed people"),
        entry(format!("{TEMP_PREFIX}*"), "atomic-write temporaries, never listed"),
    ]
}
