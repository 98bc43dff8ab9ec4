//! The hook run's clock: which event it serves, when it started, and the
//! deadlines that follow from the event's budget. Kept apart from hook
//! mode's reporting so that opening the roster (which waits for the lock
//! no longer than the work deadline) and reporting (which opens the
//! roster) do not import each other.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The hook event a tool serves, which sets its time budget. Harnesses
/// kill slow hooks, and give a session-end hook the least time of all
/// (Codex 1 s, Claude Code about 1.5 s while it exits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    /// `roster-register --hook`: the whole run within 1 s.
    SessionStart,
    /// `roster-prune --current --hook`: the whole run within 500 ms.
    SessionEnd,
    /// `roster-state --hook`, on every prompt and tool call: within 500 ms,
    /// though it takes a few milliseconds.
    StateChange,
}

impl HookEvent {
    /// The most the whole run may take, from start to exit.
    pub fn budget(self) -> Duration {
        match self {
            HookEvent::SessionStart => Duration::from_millis(1000),
            HookEvent::SessionEnd | HookEvent::StateChange => Duration::from_millis(500),
        }
    }

    /// How long the payload may take to arrive. A session start needs it
    /// (the session id is in it); a session end finds its owner without it,
    /// so it waits only briefly and goes on without.
    fn payload_share(self) -> Duration {
        match self {
            HookEvent::SessionStart => Duration::from_millis(600),
            HookEvent::SessionEnd => Duration::from_millis(150),
            HookEvent::StateChange => Duration::from_millis(300),
        }
    }
}

/// What is kept back from a budget for reporting a failure and exiting.
pub(crate) const BUDGET_RESERVE: Duration = Duration::from_millis(120);

/// The running hook's timing, set once when hook mode starts.
pub(crate) struct HookClock {
    pub(crate) event: HookEvent,
    pub(crate) started: Instant,
}

pub(crate) static HOOK_CLOCK: OnceLock<HookClock> = OnceLock::new();

/// When this hook run's work must be done (lock waits included): the
/// budget less the reserve. `None` outside hook mode.
pub fn hook_work_deadline() -> Option<Instant> {
    HOOK_CLOCK.get().map(|clock| clock.started + clock.event.budget().saturating_sub(BUDGET_RESERVE))
}

/// How long a hook may wait for its payload now: the event's share, never
/// past the work deadline. `fallback` outside hook mode.
pub fn payload_wait(fallback: Duration) -> Duration {
    match HOOK_CLOCK.get() {
        Some(clock) => {
            let share_ends = clock.started + clock.event.payload_share();
            let ends = hook_work_deadline().map_or(share_ends, |work| work.min(share_ends));
            ends.saturating_duration_since(Instant::now()).min(fallback)
        }
        None => fallback,
    }
}
