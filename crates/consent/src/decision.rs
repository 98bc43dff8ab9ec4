//! The effective consent of one session: should it accept pushes now, why,
//! and the short label a table shows. One function decides it for
//! `roster-consent status` and `should-arm`, each `roster-list` row and
//! each `roster-list --watch` event, so they can never disagree.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use owner_liveness::{Liveness, SystemFacts};
use registry_core::{RecordName, RosterDir, SessionRow, World};

use crate::config::{ConfigOutcome, Decision, resolve_auto_arm_naming_repo_file};
use crate::config_files::{ConfigInput, load_repo_input, load_user_input};
use crate::marker_entry::{ConsentState, MarkerEntry, MarkerFinding, read_marker};

/// Whether the session's owner runs now, as far as the caller could tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnerCondition {
    Running,
    /// Not running, or not provably the same process; the words complete
    /// "the session's owner …".
    NotRunning(String),
}

/// The decision and what it rests on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionConsent {
    /// The marker's state as the gate counts it (`consent` in a JSON row).
    pub marker: ConsentState,
    pub should_arm: bool,
    /// One line: the first of the reasons `status` prints.
    pub reason: String,
    /// What the CONSENT column shows.
    pub label: ConsentLabel,
}

/// The short word a table shows for a session's consent (the CONSENT
/// column of `roster-list`, the consent of a `--watch` event line), and
/// what it means, said in one place for the table's footnotes and the
/// manual alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConsentLabel {
    /// Armed by hand (`roster-consent arm`).
    Armed,
    /// Auto-armed by its repository's `.roster.toml`.
    ArmedByRepository,
    /// Disarmed by hand, which beats the repository.
    Disarmed,
    /// Its repository does not opt in.
    RepositoryOff,
    /// Its repository's `.roster.toml` cannot be used.
    RepositoryFileUnusable,
    /// A marker that cannot be believed holds auto-arm off.
    MarkerHoldsOff,
    /// The user's config vetoes the repository's auto-arm.
    DeniedByUser,
    /// The owner does not run (or the record is not believed): it accepts
    /// nothing.
    NotRunning,
}

impl ConsentLabel {
    /// Every label, in the order a legend lists them.
    pub const ALL: [ConsentLabel; 8] = [
        ConsentLabel::Armed,
        ConsentLabel::ArmedByRepository,
        ConsentLabel::Disarmed,
        ConsentLabel::RepositoryOff,
        ConsentLabel::RepositoryFileUnusable,
        ConsentLabel::MarkerHoldsOff,
        ConsentLabel::DeniedByUser,
        ConsentLabel::NotRunning,
    ];

    /// The word the table shows.
    pub fn as_str(self) -> &'static str {
        match self {
            ConsentLabel::Armed => "armed",
            ConsentLabel::ArmedByRepository => "armed (repo)",
            ConsentLabel::Disarmed => "off (disarmed)",
            ConsentLabel::RepositoryOff => "off (repo)",
            ConsentLabel::RepositoryFileUnusable => "off (repo file)",
            ConsentLabel::MarkerHoldsOff => "off (marker)",
            ConsentLabel::DeniedByUser => "denied (user)",
            ConsentLabel::NotRunning => "-",
        }
    }

    /// What the word means, for someone who has not read the manual:
    /// whether the session accepts messages, and why.
    pub fn meaning(self) -> &'static str {
        match self {
            ConsentLabel::Armed => "accepts messages, armed by hand (roster-consent arm)",
            ConsentLabel::ArmedByRepository => {
                "accepts messages, auto-armed by its repository's .roster.toml ([consent] auto_arm = true)"
            }
            ConsentLabel::Disarmed => {
                "accepts none, disarmed by hand (roster-consent disarm), which beats the repository"
            }
            ConsentLabel::RepositoryOff => {
                "accepts none, its repository did not opt in (a .roster.toml above its directory with \
                 [consent] auto_arm = true would auto-arm it)"
            }
            ConsentLabel::RepositoryFileUnusable => {
                "accepts none, its repository's .roster.toml cannot be used (roster-consent status --pid PID \
                 says why)"
            }
            ConsentLabel::MarkerHoldsOff => {
                "accepts none, a consent marker that cannot be believed holds its repository's auto-arm off \
                 (roster-consent status --pid PID says why)"
            }
            ConsentLabel::DeniedByUser => {
                "accepts none, your ~/.config/roster/config.toml vetoes its repository's auto-arm"
            }
            ConsentLabel::NotRunning => {
                "accepts nothing, its owner does not run or its record is not believed"
            }
        }
    }
}

impl std::fmt::Display for ConsentLabel {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl SessionConsent {
    /// The consent of a listed row whose owner is not alive: it accepts
    /// nothing, whatever its marker (`marker`, as counted) and its
    /// repository say.
    pub fn of_owner_not_running(row: &SessionRow, marker: ConsentState) -> SessionConsent {
        accepting_nothing(marker, &format!("is {} ({})", row.liveness(), row.verdict.reason))
    }

    /// The consent of a session that has ended: its owner `why`
    /// (completing "the session's owner …") and no other process of its
    /// chain runs. `marker` is its marker's state as counted.
    pub fn of_ended_session(marker: ConsentState, why: &str) -> SessionConsent {
        SessionConsent {
            marker,
            should_arm: false,
            reason: format!("the session has ended: its owner {why}, so it accepts nothing"),
            label: ConsentLabel::NotRunning,
        }
    }

    /// The keys a JSON row carries for it.
    pub fn row_consent(&self) -> registry_core::RowConsent<'_> {
        registry_core::RowConsent {
            state: self.marker.as_str(),
            should_arm: self.should_arm,
            reason: &self.reason,
        }
    }
}

/// Decides the session's consent from its owner's condition, its marker
/// and the auto-arm decision of its own directory.
pub fn decide(
    owner: &OwnerCondition,
    marker: &MarkerEntry,
    auto_arm: &Decision,
    repo: &ConfigOutcome,
) -> SessionConsent {
    let counted = marker.counted_state();
    if let OwnerCondition::NotRunning(why) = owner {
        return accepting_nothing(counted, why);
    }
    decide_running(marker, auto_arm, repo)
}

/// The consent of a running session, from its marker, the auto-arm
/// decision of its directory and its repository file: the decision, its
/// reason and its label, made in one place so that they never disagree.
pub fn decide_running(marker: &MarkerEntry, auto_arm: &Decision, repo: &ConfigOutcome) -> SessionConsent {
    let counted = marker.counted_state();
    let (should_arm, reason, label) = match counted {
        ConsentState::Armed => (true, "the session is armed (`roster-consent arm`)", ConsentLabel::Armed),
        ConsentState::Disarmed => (
            false,
            "the session is disarmed (`roster-consent disarm`), which beats any auto_arm",
            ConsentLabel::Disarmed,
        ),
        ConsentState::None if marker.holds_off_auto_arm() && auto_arm.auto_arm => (
            false,
            "a consent marker is present that cannot be believed, so auto-arm is held off (fail closed); \
             `roster-consent arm` or `disarm` replaces it",
            ConsentLabel::MarkerHoldsOff,
        ),
        ConsentState::None if auto_arm.auto_arm => (
            true,
            "not armed or disarmed by hand, and the repository auto-arms its sessions",
            ConsentLabel::ArmedByRepository,
        ),
        ConsentState::None => {
            let label = if repo.auto_arm() == Some(true) {
                ConsentLabel::DeniedByUser
            } else if repo.error().is_some() {
                ConsentLabel::RepositoryFileUnusable
            } else {
                ConsentLabel::RepositoryOff
            };
            (false, "not armed by hand, and auto-arm is off", label)
        }
    };
    SessionConsent { marker: counted, should_arm, reason: reason.to_owned(), label }
}

/// The consent of a session whose owner `why` (completing "the session's
/// owner …"): none.
fn accepting_nothing(marker: ConsentState, why: &str) -> SessionConsent {
    SessionConsent {
        marker,
        should_arm: false,
        reason: format!("the session's owner {why}, so it accepts nothing"),
        label: ConsentLabel::NotRunning,
    }
}

/// Decides many sessions at once, as a listing or a watcher does: the user
/// file is read once, and each directory's `.roster.toml` once. Shared by
/// the threads of a listing, each deciding the rows it has just judged.
pub struct ConsentDecider {
    user: ConfigInput,
    /// Per session directory: its repository file and the auto-arm
    /// decision it makes with the user file, decided once. Behind a lock
    /// because every thread of a listing fills it.
    repo_by_directory: Mutex<HashMap<PathBuf, Arc<RepoDecision>>>,
    /// The owners with a file of their name in `consent/` when it was
    /// listed once up front (a listing's decisions); `None` to look for
    /// each marker (a watcher's, whose markers come and go). A name that is
    /// not a canonical `<pid>.json` is no owner's marker.
    marker_names: Option<HashSet<String>>,
}

/// What a decision takes for a session known to have no marker: only the
/// finding (absent) counts in a decision, and naming the file each time
/// cost two allocations per row of a listing.
static NO_MARKER: LazyLock<MarkerEntry> = LazyLock::new(|| MarkerEntry {
    file_name: String::new(),
    path: PathBuf::new(),
    pid: None,
    finding: MarkerFinding::Absent,
    written_at: None,
});

impl ConsentDecider {
    pub fn new(env: &dyn Fn(&str) -> Option<OsString>) -> ConsentDecider {
        ConsentDecider {
            user: load_user_input(env),
            repo_by_directory: Mutex::new(HashMap::new()),
            marker_names: None,
        }
    }

    /// Lists `consent/` once, so that a session without a marker costs no
    /// lookup (where the listing fails, each marker is looked for).
    pub fn knowing_markers_of(mut self, roster: &RosterDir) -> ConsentDecider {
        self.marker_names = registry_core::list_names(roster, roster.consent())
            .ok()
            .map(|names| names.into_iter().filter_map(|name| name.into_string().ok()).collect());
        self
    }

    /// The marker of the session whose record is called `name`, or an
    /// older roster's `<pid>.json` standing in for it (`read_marker`).
    fn marker(
        &self,
        roster: &RosterDir,
        name: RecordName,
        facts: &impl SystemFacts,
    ) -> Cow<'static, MarkerEntry> {
        match &self.marker_names {
            // No marker at all, as in most registries: no name to spell out
            // (twice, for each row of a listing) and look up.
            Some(names) if names.is_empty() => Cow::Borrowed(&NO_MARKER),
            Some(names)
                if !names.contains(&name.file_name())
                    && !names.contains(&RecordName::legacy(name.pid).file_name()) =>
            {
                Cow::Borrowed(&NO_MARKER)
            }
            _ => Cow::Owned(read_marker(roster, name, facts)),
        }
    }

    /// Forgets what was read, so the next decisions read the files again.
    pub fn forget_files(&mut self, env: &dyn Fn(&str) -> Option<OsString>) {
        *self = ConsentDecider::new(env);
    }

    /// The consent of a listed row when no registry exists (so no marker
    /// does): an adopted session's, decided from its directory's
    /// repository file and the user config alone.
    pub fn for_row_without_registry(&self, row: &SessionRow) -> SessionConsent {
        let Some(record) = &row.record else {
            return SessionConsent {
                marker: ConsentState::None,
                should_arm: false,
                reason: "the record is not believed, so the session accepts nothing".into(),
                label: ConsentLabel::NotRunning,
            };
        };
        if row.liveness() != Liveness::Alive {
            return SessionConsent::of_owner_not_running(row, ConsentState::None);
        }
        let repo = self.repo_decision(Path::new(&record.cwd));
        decide(&OwnerCondition::Running, &NO_MARKER, &repo.decision, &repo.input.outcome)
    }

    /// The consent of the session a listed row stands for, decided from
    /// the directory its record holds. A row whose owner is not alive, or
    /// that is not believed, accepts nothing.
    pub fn for_row(&self, roster: &RosterDir, row: &SessionRow, facts: &impl SystemFacts) -> SessionConsent {
        let Some(record) = &row.record else {
            let marker = match RecordName::parse_file_name(&row.file_name) {
                Some(name) => self.marker(roster, name, facts).counted_state(),
                None => ConsentState::None,
            };
            return SessionConsent {
                marker,
                should_arm: false,
                reason: "the record is not believed, so the session accepts nothing".into(),
                label: ConsentLabel::NotRunning,
            };
        };
        // The marker is named for the world the record's owner is in, which
        // a record an older roster named `<pid>.json` does not say in its
        // name: a marker its session wrote since is under the new name.
        let world = World::new(record.owner.pid_ns, record.owner.boot_id.as_str());
        let marker = self.marker(roster, RecordName::new(record.pid(), world), facts);
        if row.liveness() != Liveness::Alive {
            return SessionConsent::of_owner_not_running(row, marker.counted_state());
        }
        let repo = self.repo_decision(Path::new(&record.cwd));
        decide(&OwnerCondition::Running, &marker, &repo.decision, &repo.input.outcome)
    }

    /// Forgets the repository decisions made for the session directories
    /// at or below `directory`, so the next decisions there read the files
    /// again: something in `directory` changed.
    pub fn forget_directories_below(&self, directory: &Path) {
        let mut known = self.repo_by_directory.lock().unwrap_or_else(PoisonError::into_inner);
        known.retain(|decided, _| !decided.starts_with(directory));
    }

    fn repo_decision(&self, directory: &Path) -> Arc<RepoDecision> {
        // A poisoned lock only means another thread panicked while
        // inserting; the map itself is whole.
        let cached =
            || self.repo_by_directory.lock().unwrap_or_else(PoisonError::into_inner).get(directory).cloned();
        if let Some(known) = cached() {
            return known;
        }
        // Read without holding the lock: two threads that meet a new
        // directory at once both read it, and the first answer stays.
        let decided = Arc::new(RepoDecision::of_directory(directory, &self.user.outcome));
        let mut known = self.repo_by_directory.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(known.entry(directory.to_owned()).or_insert(decided))
    }
}

/// A session directory's repository file and the auto-arm decision it
/// makes together with the user file.
struct RepoDecision {
    input: ConfigInput,
    decision: Decision,
}

impl RepoDecision {
    fn of_directory(directory: &Path, user: &ConfigOutcome) -> RepoDecision {
        // The record holds the canonical directory; one that is gone or
        // unreadable now opts nothing in.
        let input = match owner_liveness::retry_interrupted(|| std::fs::canonicalize(directory)) {
            Ok(canonical) => load_repo_input(&canonical).0,
            Err(error) => ConfigInput {
                path: None,
                outcome: ConfigOutcome::Unreadable(format!(
                    "the session's directory {} cannot be read: {error}",
                    directory.display()
                )),
            },
        };
        let decision = resolve_auto_arm_naming_repo_file(&input.outcome, input.path.as_deref(), user);
        RepoDecision { input, decision }
    }
}
