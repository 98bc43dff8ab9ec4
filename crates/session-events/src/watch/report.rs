//! A session read again, compared with what the watch knew of it, and the
//! events the difference makes: one session is one row, a roster record's
//! taking in the harness's file of the same session (docs/contract.md
//! §6.5), and an owner gone unseen is `died` before anything else about it.

use owner_liveness::Liveness;
use registry_core::adopted::{adopted_row_name, counterparts_of, is_same_session, process_is_exiting};
use registry_core::{Origin, SessionRow};

use super::{Known, SessionWatch};
use crate::event::EventKind;
use crate::judge::{change_between, same_recorded_owner, state_differs};
use crate::sink::Sink;

impl<S: Sink> SessionWatch<S> {
    /// Reports what differs between the known row named `name` and `now`;
    /// for a roster record, also the harness's sessions it stands for, or
    /// stood for: one session is one row, the record's, as in a listing
    /// (docs/contract.md §6.5). A harness's session a record takes in is
    /// `removed` as a row of its own before the record's event, and one a
    /// record no longer stands for (its record removed, or now another
    /// owner's) is a row of its own again after it, its owner watched.
    pub(super) fn compare_and_report(&mut self, name: &str, now: Option<SessionRow>) -> anyhow::Result<()> {
        if adopted_row_name(name).is_some() {
            return self.compare_and_report_row(name, now);
        }
        let before = self.known.get(name).and_then(|known| known.row.record.clone());
        let mut counterparts = Vec::new();
        for record in before.iter().chain(now.as_ref().and_then(|now| now.record.as_ref())) {
            for adopted in counterparts_of(record, &self.adopted, &self.facts) {
                if !counterparts.iter().any(|seen: &SessionRow| seen.file_name == adopted.file_name) {
                    counterparts.push(adopted);
                }
            }
        }
        let (taken, left): (Vec<SessionRow>, Vec<SessionRow>) = counterparts
            .into_iter()
            .partition(|adopted| now.as_ref().is_some_and(|now| is_same_session(now, adopted)));
        for adopted in &taken {
            if self.known.contains_key(&adopted.file_name) {
                self.compare_and_report_row(&adopted.file_name, None)?;
            }
        }
        self.compare_and_report_row(name, now)?;
        for adopted in left {
            let taken_elsewhere = self.known.iter().any(|(other, known)| {
                other != name && adopted_row_name(other).is_none() && is_same_session(&known.row, &adopted)
            });
            if !taken_elsewhere {
                let adopted_name = adopted.file_name.clone();
                self.compare_and_report_row(&adopted_name, Some(adopted))?;
            }
        }
        Ok(())
    }

    /// Reports what differs between the known row named `name` and `now`.
    fn compare_and_report_row(&mut self, name: &str, now: Option<SessionRow>) -> anyhow::Result<()> {
        // A claim proven alive whose process is on its way out has let its
        // lock go: its death is what comes next, through its pidfd.
        if let (Some(known), Some(now)) = (self.known.get(name), &now)
            && now.origin != Origin::Roster
            && known.row.liveness() == Liveness::Alive
            && now.liveness() == Liveness::Unknown
            && known.row.pid == now.pid
            && known.row.pid.is_some_and(process_is_exiting)
            && known.row.judged_again(&self.facts).liveness() == Liveness::Alive
        {
            return Ok(());
        }
        let before = match self.forget(name) {
            Some(before) => Some(self.report_a_death_not_yet_seen(before, now.as_ref())?),
            None => None,
        };
        // A harness's claim that was dead is dead still, whatever its file
        // says since (the reason may be worded anew, or its lock file be
        // young enough to read as a session starting): nothing to report
        // until the claim is proven alive again.
        if let (Some(known), Some(now)) = (&before, &now)
            && now.origin != Origin::Roster
            && known.row.liveness() == Liveness::Dead
            && now.liveness() != Liveness::Alive
            && known.row.pid == now.pid
        {
            let known = before.expect("matched above");
            self.known.insert(name.to_owned(), known);
            return Ok(());
        }
        let Some(row) = now else {
            if let Some(before) = before {
                self.emit_about(EventKind::Removed, &before.row, &before.consent)?;
            }
            return Ok(());
        };
        let kind = match &before {
            None if row.problem.is_some() => Some(EventKind::Problem),
            None => Some(EventKind::Registered),
            Some(before) => change_between(&before.row, &row),
        };
        self.remember(row)?;
        let Some(known) = self.known.get(name) else { return Ok(()) };
        let consent_changed = before.as_ref().is_some_and(|before| before.consent != known.consent);
        let state_changed = before.as_ref().is_some_and(|before| state_differs(&before.row, &known.row));
        let (row, consent) = (known.row.clone(), known.consent.clone());
        if let Some(kind) = kind.or(consent_changed.then_some(EventKind::ConsentChanged)) {
            let was_matched = before.as_ref().is_some_and(|before| self.filter.admits(&before.row));
            if was_matched && !self.filter.admits(&row) {
                self.emit_about(EventKind::Unmatched, &row, &consent)?;
            } else {
                self.emit_about(kind, &row, &consent)?;
            }
        }
        if state_changed {
            self.emit_about(EventKind::StateChanged, &row, &consent)?;
        }
        Ok(())
    }

    /// A watcher that fell behind (its reader paused, or the process
    /// stopped) may learn that a record went away, or was replaced by
    /// another owner's, only after that session's owner exited, and before
    /// it reads the owner's pidfd. The last row seen is judged again now
    /// through the identity it records: an owner that is gone is reported
    /// `died` first, and the row that follows is the dead one.
    fn report_a_death_not_yet_seen(
        &mut self,
        before: Known,
        now: Option<&SessionRow>,
    ) -> anyhow::Result<Known> {
        let Some(record) = &before.row.record else { return Ok(before) };
        let still_its_record =
            now.and_then(|now| now.record.as_ref()).is_some_and(|now| same_recorded_owner(record, now));
        if still_its_record || before.row.liveness() == Liveness::Dead {
            return Ok(before);
        }
        let judged = before.row.judged_again(&self.facts);
        if judged.liveness() != Liveness::Dead {
            return Ok(before);
        }
        let consent = self.decide_consent(&judged);
        self.emit_about(EventKind::Died, &judged, &consent)?;
        Ok(Known { row: judged, consent })
    }
}
