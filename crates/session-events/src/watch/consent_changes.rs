//! A watched session's consent, decided when it is read and again when a
//! file it is decided from changes: its marker, the user's config, the
//! nearest `.roster.toml` (docs/contract.md §7). Which files those are is
//! `consent_inputs.rs`; deciding is the consent crate's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use consent::{SessionConsent, record_file_name_of_marker};
use owner_liveness::Liveness;
use registry_core::SessionRow;

use super::SessionWatch;
use super::consent_inputs::ConsentConcerns;
use crate::event::EventKind;
use crate::sink::{Notice, Sink};

/// How many times `refresh_consent` follows paths anew before it lets the
/// next change finish the work: each round is a change that raced it.
const FOLLOW_ROUNDS: usize = 4;

impl<S: Sink> SessionWatch<S> {
    pub(super) fn consent_entry_changed(&mut self, marker_file_name: &str) -> anyhow::Result<()> {
        self.decide_consent_again(record_file_name_of_marker(marker_file_name))
    }

    /// Decides the consent of the known row `name` again, and reports it
    /// when it changed.
    fn decide_consent_again(&mut self, name: &str) -> anyhow::Result<()> {
        let Some(known) = self.known.get(name) else { return Ok(()) };
        let consent = self.decide_consent(&known.row);
        if known.consent == consent {
            return Ok(());
        }
        // The change may follow the owner's exit, not yet read from its
        // pidfd (a pruned marker, while this watcher was behind): then it
        // is that exit which is reported, from the record as it is now.
        if known.row.liveness() != Liveness::Dead
            && known.row.judged_again(&self.facts).liveness() == Liveness::Dead
        {
            let now = self.read_known_row(name);
            return self.compare_and_report(name, now);
        }
        let row = known.row.clone();
        self.emit_about(EventKind::ConsentChanged, &row, &consent)?;
        if let Some(known) = self.known.get_mut(name) {
            known.consent = consent;
        }
        Ok(())
    }

    /// Brings the followed consent inputs up to date, then decides again
    /// the consent of the sessions `concerns` names and of those whose
    /// inputs were followed anew, reporting each that changed. Following
    /// comes first: a change after a file is read is then always seen.
    pub(super) fn refresh_consent(&mut self, mut concerns: ConsentConcerns) -> anyhow::Result<()> {
        if !self.follows_consent {
            let adopted: BTreeSet<PathBuf> = self.adopted_follow_paths().into_iter().collect();
            let outcome = self.source.follow(&adopted);
            self.say_unfollowed(&outcome.unfollowable);
            return Ok(());
        }
        self.inputs.forget_paths_of(&concerns);
        // A path followed anew may move what is to be followed (a chain
        // looked at again finds the nearest repository file elsewhere):
        // a few rounds settle it, each one a change that raced this one.
        for _ in 0..FOLLOW_ROUNDS {
            let mut wanted = self.inputs.wanted_paths();
            wanted.extend(self.adopted_follow_paths());
            let outcome = self.source.follow(&wanted);
            self.say_unfollowed(&outcome.unfollowable);
            if outcome.newly_followed.is_empty() {
                break;
            }
            let mut anew = ConsentConcerns::default();
            for path in &outcome.newly_followed {
                anew.merge(self.inputs.concerns_of_newly_followed(path));
            }
            self.inputs.forget_paths_of(&anew);
            concerns.merge(anew);
        }
        if concerns.is_empty() {
            return Ok(());
        }
        if concerns.everyone {
            self.decider.forget_files(&self.env);
        } else {
            for changed in &concerns.below {
                self.decider.forget_directories_below(changed);
            }
        }
        for name in self.inputs.sessions_concerned(&concerns) {
            self.decide_consent_again(&name)?;
        }
        Ok(())
    }

    /// Says once that some consent input cannot be followed, and falls
    /// back to deciding every consent again on each change of the
    /// registry, for as long as one cannot.
    fn say_unfollowed(&mut self, unfollowable: &[(PathBuf, String)]) {
        self.inputs_incomplete = !unfollowable.is_empty();
        let Some((path, why)) = unfollowable.first() else { return };
        if self.said_unfollowed {
            return;
        }
        self.said_unfollowed = true;
        self.sink.notice(Notice::ConsentUnfollowed { path: path.clone(), why: why.clone() });
    }

    /// Whether the consent of `row` is reported, so its inputs are
    /// followed: a live session's that passes the filters.
    fn reports_consent_of(&self, row: &SessionRow) -> bool {
        self.follows_consent && row.liveness() == Liveness::Alive && self.filter.admits(row)
    }

    /// Follows (or stops following) the consent inputs of `row`; `true`
    /// when that may need paths followed anew.
    pub(super) fn follow_consent_of(&mut self, row: &SessionRow) -> bool {
        match (&row.record, self.reports_consent_of(row)) {
            (Some(record), true) => self.inputs.follow_session(&row.file_name, Path::new(&record.cwd)),
            _ => {
                self.inputs.unfollow_session(&row.file_name);
                false
            }
        }
    }

    pub(super) fn decide_consent(&self, row: &SessionRow) -> SessionConsent {
        match &self.roster {
            Some(roster) => self.decider.for_row(roster, row, &self.facts),
            // No registry, no marker: a harness's session is decided from
            // its directory, as the listing decides it, and the row of an
            // owner found gone since (`report_a_death_not_yet_seen`)
            // accepts nothing.
            None => self.decider.for_row_without_registry(row),
        }
    }
}
