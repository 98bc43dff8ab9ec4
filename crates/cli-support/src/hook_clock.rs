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
    /// When hook mode started in this process.
    pub(crate) started: Instant,
    /// The measure `late_start` takes once.
    late: OnceLock<Duration>,
}

pub(crate) static HOOK_CLOCK: OnceLock<HookClock> = OnceLock::new();

impl HookClock {
    /// The clock of a hook run of `event` whose hook mode starts now.
    pub(crate) fn starting_now(event: HookEvent) -> HookClock {
        HookClock { event, started: Instant::now(), late: OnceLock::new() }
    }

    /// When the harness started this run, as near as can be told: hook
    /// mode's start less the time the process had already existed then
    /// (`late_start`), which a machine short of CPU makes tens of
    /// milliseconds. The harness's clock runs from its fork.
    pub(crate) fn run_started(&self) -> Instant {
        self.started.checked_sub(self.late_start()).unwrap_or(self.started)
    }

    /// When the run must be over: the budget from `run_started`.
    pub(crate) fn budget_ends(&self) -> Instant {
        self.run_started() + self.event.budget()
    }

    /// When the run's work must be done (lock waits included): the budget
    /// less the reserve.
    pub(crate) fn work_deadline(&self) -> Instant {
        self.budget_ends() - BUDGET_RESERVE
    }

    /// When the watchdog ends a run still going: half the reserve before
    /// the budget ends, so always after `work_deadline`.
    pub(crate) fn watchdog_fires(&self) -> Instant {
        self.budget_ends() - BUDGET_RESERVE / 2
    }

    /// The earliest `watchdog_fires` can be, whatever the late start: a
    /// watchdog waits this long before it measures the late start, which a
    /// run that finishes in a few milliseconds then never reads.
    pub(crate) fn watchdog_fires_at_the_earliest(&self) -> Instant {
        self.earliest_run_start() + self.event.budget() - BUDGET_RESERVE / 2
    }

    /// The earliest `work_deadline` can be, whatever the late start.
    pub(crate) fn work_deadline_at_the_earliest(&self) -> Instant {
        self.earliest_run_start() + self.event.budget() - BUDGET_RESERVE
    }

    /// The earliest `run_started` can be: hook mode's start less the
    /// largest late start counted.
    fn earliest_run_start(&self) -> Instant {
        self.started.checked_sub(late_start_limit(self.event)).unwrap_or(self.started)
    }

    /// How long the process had existed when hook mode started (the
    /// kernel's start time of the process, from its fork, against the boot
    /// clock; both are shifted alike inside a time namespace), at most a
    /// quarter of the budget. Measured once, by whichever thread asks
    /// first (hook mode asks before its watchdog starts), and every
    /// deadline counts from that one measure, so that none is ever handed
    /// out that the watchdog's would come before. The kernel counts starts
    /// in ticks of 10 ms, so the
    /// measure errs by up to a tick toward an earlier start: deadlines
    /// come early, never late. Nothing readable: 0. It costs a read of
    /// `/proc/self/stat`, so it is taken only when something waits (the
    /// payload not there at once, a busy lock, a watchdog still watching
    /// at `watchdog_fires_at_the_earliest`).
    pub(crate) fn late_start(&self) -> Duration {
        *self.late.get_or_init(|| {
            process_age().map_or(Duration::ZERO, |age| {
                age.saturating_sub(self.started.elapsed()).min(late_start_limit(self.event))
            })
        })
    }
}

/// The most of a budget a late start may take from the run: past it a hook
/// that would finish in a few milliseconds could be stopped before it
/// began, which serves no one.
fn late_start_limit(event: HookEvent) -> Duration {
    event.budget() / 4
}

/// How long this process has existed: the boot clock now less the start
/// time `/proc/self/stat` gives. `None` where either cannot be read. Reads
/// into a buffer on the stack and allocates nothing: on the watchdog's
/// thread (a clock it asks first, as in tests) an allocation would have
/// the allocator set up an arena for it.
fn process_age() -> Option<Duration> {
    use std::io::Read;
    let mut line = [0_u8; 1024];
    let mut file = std::fs::File::open("/proc/self/stat").ok()?;
    let length = file.read(&mut line).ok()?;
    let start_ticks = owner_liveness::parse_start_ticks(&line[..length]).ok()?;
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME).ok()?;
    let now = Duration::new(u64::try_from(now.tv_sec()).ok()?, u32::try_from(now.tv_nsec()).ok()?);
    let ticks_per_second = u64::try_from(owner_liveness::USER_HZ).ok()?;
    let started = Duration::from_secs(start_ticks / ticks_per_second)
        + Duration::from_nanos((start_ticks % ticks_per_second) * (1_000_000_000 / ticks_per_second));
    now.checked_sub(started)
}

/// When this hook run's work must be done (lock waits included): the
/// budget less the reserve. `None` outside hook mode.
pub fn hook_work_deadline() -> Option<Instant> {
    HOOK_CLOCK.get().map(HookClock::work_deadline)
}

/// The earliest `hook_work_deadline` can be, known without measuring the
/// late start: a deadline not reached by then needs no measure. `None`
/// outside hook mode.
pub fn hook_work_deadline_at_the_earliest() -> Option<Instant> {
    HOOK_CLOCK.get().map(HookClock::work_deadline_at_the_earliest)
}

/// Whether this process runs a hook (its deadlines are then the budget's),
/// known without measuring anything.
pub fn in_hook_mode() -> bool {
    HOOK_CLOCK.get().is_some()
}

/// How long a hook may wait for its payload now: the event's share, never
/// past the work deadline. `fallback` outside hook mode.
pub fn payload_wait(fallback: Duration) -> Duration {
    match HOOK_CLOCK.get() {
        Some(clock) => {
            let share_ends = clock.run_started() + clock.event.payload_share();
            let ends = hook_work_deadline().map_or(share_ends, |work| work.min(share_ends));
            ends.saturating_duration_since(Instant::now()).min(fallback)
        }
        None => fallback,
    }
}

/// The least `payload_wait` can be now, known without measuring the late
/// start: until then a payload is waited for without asking.
pub fn payload_wait_at_the_least(fallback: Duration) -> Duration {
    match HOOK_CLOCK.get() {
        Some(clock) => {
            let share_ends = clock.earliest_run_start() + clock.event.payload_share();
            let ends = share_ends.min(clock.work_deadline_at_the_earliest());
            ends.saturating_duration_since(Instant::now()).min(fallback)
        }
        None => fallback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whichever thread measures the late start first, the run's work
    /// deadline and the watchdog's count from the same start: a deadline
    /// the run took before the watchdog began still ends before the
    /// watchdog fires.
    #[test]
    fn the_work_deadline_ends_before_the_watchdog_whichever_asks_first() {
        // This process has existed longer than any cap allows when hook
        // mode starts: a hook the harness forked long before.
        std::thread::sleep(Duration::from_millis(300));
        for event in [HookEvent::SessionStart, HookEvent::SessionEnd, HookEvent::StateChange] {
            let run_first = HookClock::starting_now(event);
            let work = run_first.work_deadline();
            assert!(work < run_first.watchdog_fires(), "{event:?}: the run asked first");
            assert_eq!(run_first.late_start(), late_start_limit(event), "{event:?}: capped");

            let watchdog_first = HookClock::starting_now(event);
            let fires = watchdog_first.watchdog_fires();
            assert!(watchdog_first.work_deadline() < fires, "{event:?}: the watchdog asked first");
        }
    }

    /// A stat line's start time is read as the kernel writes it, and a
    /// process's age is never negative or absurd.
    #[test]
    fn this_processs_age_is_read_from_its_stat() {
        let started = Instant::now();
        let age = process_age().expect("/proc/self/stat and the boot clock are readable");
        assert!(age + Duration::from_millis(20) >= started.elapsed(), "{age:?}");
        assert!(age < Duration::from_secs(24 * 3600), "{age:?}");
    }
}
