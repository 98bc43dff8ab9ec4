//! When a notice is due: a pure state machine over what each session was
//! and now is, with no clock, no I/O and no knowledge of where notices go,
//! so every rule is a table-driven unit test. It says *show* or *withdraw*
//! per session; what a notice says and who shows it is decided elsewhere.
//!
//! The rules (docs/contract.md §6.11):
//! - a session that starts waiting gets one notice; waiting for something
//!   else (permission, then input) replaces it;
//! - a notice for waiting is withdrawn when the session stops waiting, but
//!   only once it has stayed away for the flap window: a session that goes
//!   waiting → working → waiting within it keeps its one notice;
//! - a turn that ran at least `turn_finished_after` and ended (working →
//!   idle) gets a "turn finished" notice, withdrawn when the next turn
//!   starts;
//! - a session whose owner died without its session end gets a "crashed"
//!   notice, never withdrawn;
//! - a session whose record went (its session end ran) loses its notice.

use std::collections::HashMap;

/// Milliseconds since the Unix epoch: the one clock of the machine, given
/// with each input, never read.
pub type Millis = i64;

/// Which session an input is about: the host it runs on and its record
/// (its owner's pid, and the file the record is).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    pub host: Option<String>,
    pub record: String,
}

/// What a session was doing, as the watch shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    Working,
    Idle,
    Waiting(WaitingFor),
    /// No event has said, or the owner is not alive.
    Unknown,
}

/// What a waiting session waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitingFor {
    Permission,
    Input,
    /// A waiting state that did not say.
    Unsaid,
}

/// What became of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// It is doing `now`; `since` is when it started doing it, as its
    /// state file says (else when this was seen).
    State { now: Activity, since: Millis },
    /// Its owner is gone; `without_session_end`: its record was still
    /// there (no session end ran), a crash.
    Died { without_session_end: bool },
    /// Its record is gone: its session end ran, or it was pruned.
    Removed,
}

/// One input: what became of which session, seen when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    pub key: SessionKey,
    pub change: Change,
    pub at: Millis,
}

/// Why a notice is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trigger {
    /// The session started waiting for its user.
    Waiting,
    /// A turn that ran a while finished.
    TurnFinished,
    /// The owner died without its session end.
    Crashed,
}

impl Trigger {
    pub const ALL: [Trigger; 3] = [Trigger::Waiting, Trigger::TurnFinished, Trigger::Crashed];

    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Waiting => "waiting",
            Trigger::TurnFinished => "turn-finished",
            Trigger::Crashed => "crashed",
        }
    }

    pub fn parse(text: &str) -> Option<Trigger> {
        Trigger::ALL.into_iter().find(|trigger| trigger.as_str() == text)
    }
}

/// What the machine decides for a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Show a notice for `trigger` (replacing the session's notice, if one
    /// is out). `since` is when what it is about began: the wait, the
    /// turn that finished, the death.
    Show { key: SessionKey, trigger: Trigger, since: Millis },
    /// Take the session's notice back.
    Withdraw { key: SessionKey },
}

/// The settings the rules read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerSettings {
    pub waiting: bool,
    pub turn_finished: bool,
    pub crashed: bool,
    /// The shortest turn whose end is worth a notice.
    pub turn_finished_after_ms: Millis,
    /// How long a session must stay out of waiting before its notice is
    /// withdrawn: a flap within it keeps the one notice.
    pub flap_window_ms: Millis,
}

impl Default for TriggerSettings {
    fn default() -> TriggerSettings {
        TriggerSettings {
            waiting: true,
            turn_finished: true,
            crashed: true,
            turn_finished_after_ms: 30_000,
            flap_window_ms: 3_000,
        }
    }
}

/// What the machine remembers of one session.
#[derive(Clone, Debug, Default)]
struct Remembered {
    activity: Option<Activity>,
    /// When its current activity began.
    since: Millis,
    /// The notice it has out, if any.
    out: Option<Trigger>,
    /// When its waiting notice is to be withdrawn (it left waiting).
    withdraw_at: Option<Millis>,
}

/// The machine: one memory per session.
#[derive(Debug, Default)]
pub struct Triggers {
    settings: TriggerSettings,
    sessions: HashMap<SessionKey, Remembered>,
}

impl Triggers {
    pub fn new(settings: TriggerSettings) -> Triggers {
        Triggers { settings, sessions: HashMap::new() }
    }

    /// What `observation` calls for. Withdrawals that fall due at or before
    /// its time are decided first.
    pub fn observe(&mut self, observation: Observation) -> Vec<Decision> {
        let mut decisions = self.tick(observation.at);
        let settings = self.settings.clone();
        let key = observation.key;
        match observation.change {
            Change::State { now, since } => {
                let remembered = self.sessions.entry(key.clone()).or_default();
                let before = remembered.activity.replace(now);
                let before_since = std::mem::replace(&mut remembered.since, since);
                match (before, now) {
                    (Some(Activity::Waiting(was)), Activity::Waiting(is)) if was == is => {}
                    (_, Activity::Waiting(_)) => {
                        // Waiting for something else replaces the notice;
                        // coming back within the flap window keeps the one
                        // still out (its withdrawal called off).
                        let replaces = matches!(before, Some(Activity::Waiting(_)));
                        let flapped_back = remembered.out == Some(Trigger::Waiting) && !replaces;
                        remembered.withdraw_at = None;
                        if settings.waiting && !flapped_back {
                            remembered.out = Some(Trigger::Waiting);
                            decisions.push(Decision::Show { key, trigger: Trigger::Waiting, since });
                        }
                    }
                    (Some(Activity::Waiting(_)), _) if remembered.out == Some(Trigger::Waiting) => {
                        remembered.withdraw_at = Some(observation.at + settings.flap_window_ms);
                    }
                    (Some(Activity::Working), Activity::Idle) => {
                        let ran = since - before_since;
                        if settings.turn_finished && ran >= settings.turn_finished_after_ms {
                            remembered.out = Some(Trigger::TurnFinished);
                            decisions.push(Decision::Show {
                                key,
                                trigger: Trigger::TurnFinished,
                                since: before_since,
                            });
                        }
                    }
                    (_, Activity::Working) if remembered.out == Some(Trigger::TurnFinished) => {
                        remembered.out = None;
                        decisions.push(Decision::Withdraw { key });
                    }
                    _ => {}
                }
            }
            Change::Died { without_session_end } => {
                let remembered = self.sessions.entry(key.clone()).or_default();
                let had_notice = remembered.out.is_some();
                remembered.activity = Some(Activity::Unknown);
                remembered.withdraw_at = None;
                if without_session_end && settings.crashed {
                    remembered.out = Some(Trigger::Crashed);
                    decisions.push(Decision::Show { key, trigger: Trigger::Crashed, since: observation.at });
                } else if had_notice {
                    remembered.out = None;
                    decisions.push(Decision::Withdraw { key });
                }
            }
            Change::Removed => {
                if let Some(remembered) = self.sessions.remove(&key)
                    && remembered.out.is_some_and(|trigger| trigger != Trigger::Crashed)
                {
                    decisions.push(Decision::Withdraw { key });
                }
            }
        }
        decisions
    }

    /// The withdrawals due at `now`.
    pub fn tick(&mut self, now: Millis) -> Vec<Decision> {
        let mut due: Vec<SessionKey> = self
            .sessions
            .iter()
            .filter(|(_, remembered)| remembered.withdraw_at.is_some_and(|at| at <= now))
            .map(|(key, _)| key.clone())
            .collect();
        due.sort();
        for key in &due {
            if let Some(remembered) = self.sessions.get_mut(key) {
                remembered.withdraw_at = None;
                remembered.out = None;
            }
        }
        due.into_iter().map(|key| Decision::Withdraw { key }).collect()
    }

    /// When `tick` next has something to do.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.sessions.values().filter_map(|remembered| remembered.withdraw_at).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(record: &str) -> SessionKey {
        SessionKey { host: None, record: record.to_owned() }
    }

    fn state(record: &str, now: Activity, at: Millis) -> Observation {
        Observation { key: key(record), change: Change::State { now, since: at }, at }
    }

    const WORKING: Activity = Activity::Working;
    const IDLE: Activity = Activity::Idle;
    const PERMISSION: Activity = Activity::Waiting(WaitingFor::Permission);
    const INPUT: Activity = Activity::Waiting(WaitingFor::Input);

    fn show(record: &str, trigger: Trigger, since: Millis) -> Decision {
        Decision::Show { key: key(record), trigger, since }
    }

    fn withdraw(record: &str) -> Decision {
        Decision::Withdraw { key: key(record) }
    }

    /// Feeds the observations in order (ticking at each one's time) and
    /// then ticks at `end`; returns every decision.
    fn run(settings: TriggerSettings, observations: &[Observation], end: Millis) -> Vec<Decision> {
        let mut machine = Triggers::new(settings);
        let mut decisions = Vec::new();
        for observation in observations {
            decisions.extend(machine.observe(observation.clone()));
        }
        decisions.extend(machine.tick(end));
        decisions
    }

    fn check(observations: &[Observation], end: Millis, expected: &[Decision]) {
        assert_eq!(run(TriggerSettings::default(), observations, end), expected, "{observations:#?}");
    }

    #[test]
    fn starting_to_wait_gives_one_notice() {
        check(
            &[state("a", WORKING, 0), state("a", PERMISSION, 1_000)],
            2_000,
            &[show("a", Trigger::Waiting, 1_000)],
        );
    }

    #[test]
    fn the_same_wait_said_again_gives_nothing_more() {
        check(
            &[state("a", PERMISSION, 1_000), state("a", PERMISSION, 2_000), state("a", PERMISSION, 9_000)],
            10_000,
            &[show("a", Trigger::Waiting, 1_000)],
        );
    }

    #[test]
    fn waiting_for_something_else_replaces_the_notice() {
        check(
            &[state("a", PERMISSION, 1_000), state("a", INPUT, 2_000)],
            2_500,
            &[show("a", Trigger::Waiting, 1_000), show("a", Trigger::Waiting, 2_000)],
        );
    }

    #[test]
    fn a_flap_within_the_window_keeps_one_notice() {
        check(
            &[state("a", PERMISSION, 1_000), state("a", WORKING, 1_500), state("a", PERMISSION, 2_500)],
            60_000,
            &[show("a", Trigger::Waiting, 1_000)],
        );
    }

    #[test]
    fn stopping_to_wait_withdraws_the_notice_after_the_window() {
        let observations = [state("a", PERMISSION, 1_000), state("a", WORKING, 2_000)];
        check(&observations, 4_999, &[show("a", Trigger::Waiting, 1_000)]);
        check(&observations, 5_000, &[show("a", Trigger::Waiting, 1_000), withdraw("a")]);
    }

    #[test]
    fn waiting_again_after_the_window_is_a_new_notice() {
        check(
            &[state("a", PERMISSION, 1_000), state("a", WORKING, 2_000), state("a", PERMISSION, 10_000)],
            11_000,
            &[show("a", Trigger::Waiting, 1_000), withdraw("a"), show("a", Trigger::Waiting, 10_000)],
        );
    }

    #[test]
    fn a_long_turn_that_ends_is_told_and_a_short_one_is_not() {
        check(
            &[state("a", WORKING, 0), state("a", IDLE, 30_000)],
            31_000,
            &[show("a", Trigger::TurnFinished, 0)],
        );
        check(&[state("a", WORKING, 0), state("a", IDLE, 29_999)], 31_000, &[]);
    }

    #[test]
    fn a_turn_finished_notice_goes_when_the_next_turn_starts() {
        check(
            &[state("a", WORKING, 0), state("a", IDLE, 40_000), state("a", WORKING, 50_000)],
            51_000,
            &[show("a", Trigger::TurnFinished, 0), withdraw("a")],
        );
    }

    #[test]
    fn a_turn_seen_only_at_its_end_is_measured_from_its_state_file() {
        // The watch started while the turn ran: the state file's
        // `state_since` says when the turn began.
        let started =
            Observation { key: key("a"), change: Change::State { now: WORKING, since: 0 }, at: 25_000 };
        check(&[started, state("a", IDLE, 35_000)], 36_000, &[show("a", Trigger::TurnFinished, 0)]);
    }

    #[test]
    fn dying_without_a_session_end_is_a_crash() {
        let died =
            Observation { key: key("a"), change: Change::Died { without_session_end: true }, at: 5_000 };
        check(&[state("a", WORKING, 0), died], 6_000, &[show("a", Trigger::Crashed, 5_000)]);
    }

    #[test]
    fn an_ended_session_takes_its_waiting_notice_with_it() {
        let removed = Observation { key: key("a"), change: Change::Removed, at: 2_000 };
        check(
            &[state("a", PERMISSION, 1_000), removed],
            9_000,
            &[show("a", Trigger::Waiting, 1_000), withdraw("a")],
        );
    }

    #[test]
    fn a_crash_notice_outlives_the_record() {
        let died =
            Observation { key: key("a"), change: Change::Died { without_session_end: true }, at: 1_000 };
        let removed = Observation { key: key("a"), change: Change::Removed, at: 2_000 };
        check(&[died, removed], 9_000, &[show("a", Trigger::Crashed, 1_000)]);
    }

    #[test]
    fn triggers_turned_off_say_nothing() {
        let settings = TriggerSettings {
            waiting: false,
            turn_finished: false,
            crashed: false,
            ..TriggerSettings::default()
        };
        let died = Observation { key: key("b"), change: Change::Died { without_session_end: true }, at: 1 };
        let decisions = run(
            settings,
            &[state("a", WORKING, 0), state("a", IDLE, 60_000), state("a", PERMISSION, 61_000), died],
            99_000,
        );
        assert_eq!(decisions, []);
    }

    #[test]
    fn sessions_are_apart() {
        check(
            &[state("a", PERMISSION, 1_000), state("b", PERMISSION, 1_100), state("a", WORKING, 1_200)],
            9_000,
            &[show("a", Trigger::Waiting, 1_000), show("b", Trigger::Waiting, 1_100), withdraw("a")],
        );
    }

    #[test]
    fn the_next_deadline_is_the_earliest_withdrawal() {
        let mut machine = Triggers::new(TriggerSettings::default());
        assert_eq!(machine.next_deadline(), None);
        machine.observe(state("a", PERMISSION, 1_000));
        machine.observe(state("a", WORKING, 2_000));
        assert_eq!(machine.next_deadline(), Some(5_000));
    }
}
