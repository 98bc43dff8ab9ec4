//! Each listed session's location, checked before it is shown
//! (docs/contract.md §6.7): a live session's against its multiplexer (one
//! question per server, however many sessions it holds), and a session
//! that is not running shows nowhere.

use std::sync::Mutex;

use location::Verifier;
use owner_liveness::Liveness;
use registry_core::SessionRow;
use registry_core::record::{LocationCheck, LocationStatus};

/// The checks of one listing, shared by the threads that present rows.
#[derive(Debug, Default)]
pub(crate) struct Locations(Mutex<Verifier>);

impl Locations {
    pub(crate) fn new() -> Locations {
        Locations::default()
    }

    /// `row` with its recorded location checked; as it was when it has
    /// none, or was checked as it was read.
    pub(crate) fn checked(&self, mut row: SessionRow) -> SessionRow {
        let Some(location) = row.record.as_ref().and_then(|record| record.location.as_ref()) else {
            return row;
        };
        if row.location_check.is_some() {
            return row;
        }
        row.location_check = Some(match (row.liveness(), row.pid) {
            (Liveness::Alive, Some(pid)) => match self.0.lock() {
                Ok(mut verifier) => verifier.check(location, pid),
                Err(poisoned) => poisoned.into_inner().check(location, pid),
            },
            _ => LocationCheck {
                status: LocationStatus::Stale,
                reason: "the session is not running".to_owned(),
                shown: location.recorded_shown(),
            },
        });
        row
    }
}

/// The LOCATION cell of a row: where it shows, marked when that does not
/// hold now (`tmux %3 (stale)`), or `-`.
pub(crate) fn location_cell(row: &SessionRow) -> String {
    let recorded = row.record.as_ref().and_then(|record| record.location.as_ref());
    match (&row.location_check, recorded) {
        (Some(check), _) if check.status == LocationStatus::Current => check.shown.clone(),
        (Some(check), _) => format!("{} ({})", check.shown, check.status.as_str()),
        (None, Some(location)) => location.recorded_shown(),
        (None, None) => "-".to_owned(),
    }
}
