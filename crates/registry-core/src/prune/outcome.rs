//! What judging one entry of `sessions/` decided and what became of it:
//! shared by the judging (`prune`) and the removing (`removals`), which run
//! side by side.

use crate::session_row::SessionRow;
use crate::store::lock::RegistryLock;

/// What became of one entry of `sessions/`.
pub(crate) enum EntryOutcome {
    /// Not there any more, or a dotfile that is not a temporary.
    Gone,
    Kept,
    Temporary(String),
    /// Removed (with `dry_run`: would be), as finally judged.
    Removed(Box<SessionRow>),
    /// A name that is not UTF-8 (no roster wrote it: malformed), removable
    /// like any problem entry, only past --older-than.
    Undecodable(Box<SessionRow>),
}

/// What judging one entry decided.
pub(crate) enum Judged<'l> {
    Done(EntryOutcome),
    /// It may go, as finally judged under the lock, which is held: remove it.
    Remove(Box<SessionRow>, &'l RegistryLock),
}
