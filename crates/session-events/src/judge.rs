//! Which event, if any, a difference between two readings of one session
//! is: the rules of docs/contract.md §6.7 over rows alone, apart from how
//! the rows were read, so that they are tested over rows made up here.

use owner_liveness::Liveness;
use registry_core::{ListFilter, Origin, Record, SessionRow};

use crate::event::EventKind;

/// Whether two records name the same owner process.
pub(crate) fn same_recorded_owner(old: &Record, new: &Record) -> bool {
    old.owner.pid == new.owner.pid
        && old.owner.start_ticks == new.owner.start_ticks
        && old.owner.boot_id == new.owner.boot_id
        && old.owner.pidfs_ino == new.owner.pidfs_ino
}

/// What kind of change turned `before` into `now` (same file name), if any
/// worth an event.
pub(crate) fn change_between(before: &SessionRow, now: &SessionRow) -> Option<EventKind> {
    // A harness's claim names its owner by pid alone until it is proven
    // (start ticks 0): the same claim proven, or dead after it was, is one
    // session.
    let claim = now.origin != Origin::Roster;
    let unproven = |row: &SessionRow| row.record.as_ref().is_some_and(|record| record.owner.start_ticks == 0);
    if claim
        && (unproven(before) || unproven(now))
        && let (Some(old), Some(new)) = (&before.record, &now.record)
        && old.owner.pid == new.owner.pid
    {
        return if now.liveness() == Liveness::Dead {
            (before.liveness() != Liveness::Dead).then_some(EventKind::Died)
        } else {
            (old != new || before.liveness() != now.liveness()).then_some(EventKind::Refreshed)
        };
    }
    match (&before.record, &now.record) {
        (_, None) => {
            let same_problem = before.problem == now.problem;
            (!same_problem).then_some(EventKind::Problem)
        }
        (None, Some(_)) => Some(EventKind::Registered),
        (Some(old), Some(new)) => {
            if !same_recorded_owner(old, new) {
                Some(EventKind::Registered)
            } else if before.liveness() != Liveness::Dead && now.liveness() == Liveness::Dead {
                Some(EventKind::Died)
            } else if old != new {
                Some(EventKind::Refreshed)
            } else {
                None
            }
        }
    }
}

/// Whether a live session's state changed in what a row shows of it: the
/// state and what it waits for (an owner that died is a `died` event).
pub(crate) fn state_differs(before: &SessionRow, now: &SessionRow) -> bool {
    let words = |row: &SessionRow| row.shown_state().map(|state| (state.activity, state.waiting_for.clone()));
    before.liveness() == Liveness::Alive && now.liveness() == Liveness::Alive && words(before) != words(now)
}

/// Whether an event of `kind` about `row` is reported under `filter`: its
/// row passes the field filters (an `unmatched` row is the one that no
/// longer does), and with a state filter only the rows listed in that
/// state and the state changes into it are.
pub(crate) fn reported_under(filter: &ListFilter, kind: &EventKind, row: Option<&SessionRow>) -> bool {
    let state_filtered = filter.state.is_some()
        && (!matches!(kind, EventKind::Listed | EventKind::StateChanged)
            || row.is_some_and(|row| !filter.admits_state(row)));
    let filtered_out =
        state_filtered || (*kind != EventKind::Unmatched && row.is_some_and(|row| !filter.admits(row)));
    !filtered_out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::made_up::{record_of, row_of};
    use harness::Activity;

    #[test]
    fn a_record_written_again_by_its_owner_is_refreshed_and_by_another_registered() {
        let before = row_of(record_of(4242, 870, "wren"), Liveness::Alive);
        assert_eq!(change_between(&before, &before), None, "the same record says nothing new");
        let renamed = row_of(record_of(4242, 870, "robin"), Liveness::Alive);
        assert_eq!(change_between(&before, &renamed), Some(EventKind::Refreshed));
        let another_owner = row_of(record_of(4242, 999, "wren"), Liveness::Alive);
        assert_eq!(change_between(&before, &another_owner), Some(EventKind::Registered));
    }

    #[test]
    fn an_owner_is_said_to_die_once() {
        let alive = row_of(record_of(4242, 870, "wren"), Liveness::Alive);
        let dead = row_of(record_of(4242, 870, "wren"), Liveness::Dead);
        assert_eq!(change_between(&alive, &dead), Some(EventKind::Died));
        assert_eq!(change_between(&dead, &dead), None);
        let unknown = row_of(record_of(4242, 870, "wren"), Liveness::Unknown);
        assert_eq!(change_between(&unknown, &dead), Some(EventKind::Died), "unknown is not dead");
    }

    #[test]
    fn a_harness_claim_proven_is_the_same_session_refreshed() {
        let mut unproven = row_of(record_of(4242, 0, "wren"), Liveness::Unknown);
        unproven.origin = Origin::Copilot;
        let mut proven = row_of(record_of(4242, 870, "wren"), Liveness::Alive);
        proven.origin = Origin::Copilot;
        assert_eq!(change_between(&unproven, &proven), Some(EventKind::Refreshed), "not a new owner");
        let mut dead = row_of(record_of(4242, 0, "wren"), Liveness::Dead);
        dead.origin = Origin::Copilot;
        assert_eq!(change_between(&unproven, &dead), Some(EventKind::Died));
        assert_eq!(change_between(&dead, &dead), None);
    }

    #[test]
    fn a_record_turned_unreadable_is_a_problem_once() {
        let alive = row_of(record_of(4242, 870, "wren"), Liveness::Alive);
        let mut broken = alive.clone();
        broken.record = None;
        broken.problem = Some(registry_core::Problem {
            kind: registry_core::ProblemKind::Malformed,
            detail: "x".to_owned(),
        });
        assert_eq!(change_between(&alive, &broken), Some(EventKind::Problem));
        assert_eq!(change_between(&broken, &broken), None);
        assert_eq!(change_between(&broken, &alive), Some(EventKind::Registered));
    }

    #[test]
    fn only_a_live_session_changes_state() {
        let mut idle = row_of(record_of(4242, 870, "wren"), Liveness::Alive);
        idle.state = Some(crate::made_up::state(Activity::Idle));
        let mut working = idle.clone();
        working.state = Some(crate::made_up::state(Activity::Working));
        assert!(state_differs(&idle, &working));
        assert!(!state_differs(&idle, &idle));
        let mut dead = working.clone();
        dead.verdict.liveness = Liveness::Dead;
        assert!(!state_differs(&idle, &dead), "a death is `died`, not a state");
    }

    #[test]
    fn the_filters_choose_the_events_reported() {
        let row = row_of(record_of(4242, 870, "wren"), Liveness::Alive);
        let everything = ListFilter::default();
        assert!(reported_under(&everything, &EventKind::Refreshed, Some(&row)));
        let robin = ListFilter { agent: Some("robin".to_owned()), ..ListFilter::default() };
        assert!(!reported_under(&robin, &EventKind::Refreshed, Some(&row)));
        assert!(reported_under(&robin, &EventKind::Unmatched, Some(&row)), "unmatched is about leaving");
        assert!(reported_under(&robin, &EventKind::Resync, None));
        let waiting = ListFilter { state: Some(vec![Some(Activity::Waiting)]), ..ListFilter::default() };
        assert!(!reported_under(&waiting, &EventKind::Refreshed, Some(&row)), "only the moments it waits");
        assert!(!reported_under(&waiting, &EventKind::StateChanged, Some(&row)), "not into waiting");
        let mut now_waiting = row.clone();
        now_waiting.state = Some(crate::made_up::state(Activity::Waiting));
        assert!(reported_under(&waiting, &EventKind::StateChanged, Some(&now_waiting)));
    }
}
