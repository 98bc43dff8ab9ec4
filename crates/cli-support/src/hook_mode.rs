//! Hook mode's discipline (docs/contract.md §8.2), shared by `roster-register --hook`
//! and `roster-prune --current --hook`: never a byte on stdout, always exit
//! 0, a failure is one line on stderr and one line in `hook-errors.log`,
//! and the whole run fits the harness's time budget for the event.

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::args::CommonArgs;
use crate::hook_clock::{BUDGET_RESERVE, HOOK_CLOCK, HookClock, HookEvent, hook_work_deadline};
use crate::roster::open_roster_for_writing;

/// Runs a hook-mode body. Whatever happens, exits 0 and writes nothing to
/// stdout; a failure is reported on stderr and logged for `roster-list`.
/// A watchdog ends the run at the event's budget if anything still blocks
/// then (the lock and payload waits end well before it on their own).
pub fn run_hook(
    tool: &'static str,
    common: &CommonArgs,
    event: HookEvent,
    body: impl FnOnce() -> anyhow::Result<()>,
) -> ExitCode {
    // The late start is measured only when something waits (a run of a
    // few milliseconds never does), by whichever thread asks first.
    let clock = HOOK_CLOCK.get_or_init(|| HookClock::starting_now(event));
    let watchdog = Watchdog::start(tool, common.clone(), clock);
    // A panic is a failure like any other: said, logged, and exit 0 (its
    // message is on stderr already, from the panic hook).
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => {}
        Ok(Err(error)) => report_escaped_hook_problem(tool, common, &crate::exit::terminal_message(&error)),
        Err(_) => {
            report_hook_problem(tool, common, "stopped by an internal error (a panic); nothing more was done")
        }
    }
    watchdog.stand_down();
    match HOOK_EXIT_STATUS.load(std::sync::atomic::Ordering::SeqCst) {
        0 => ExitCode::from(crate::exit::ExitStatus::Success),
        status => ExitCode::from(status),
    }
}

/// The status a hook run asked to end with (`end_hook_with`); 0 unless it
/// did.
static HOOK_EXIT_STATUS: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Makes this hook run end with `status` instead of 0: the harness's own
/// protocol for a reply on stderr (Claude Code reads exit 2 as "block,
/// with stderr as the reason"). Called once the reply is written whole: a
/// run its watchdog cuts short after that still ends with `status`, so
/// the harness takes what it was handed.
pub fn end_hook_with(status: u8) {
    HOOK_EXIT_STATUS.store(status, std::sync::atomic::Ordering::SeqCst);
}

/// Whether stderr carries this run's reply to the harness (Claude Code's
/// Stop reads it as the text the model goes on with).
static STDERR_IS_THE_REPLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that stderr carries this hook run's reply: from now on a problem
/// is logged only, never written where the harness would hand it to the
/// model beside the reply.
pub fn stderr_is_the_reply() {
    STDERR_IS_THE_REPLY.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Reports a hook-mode problem the way a hook may: one line on stderr and
/// one line in `hook-errors.log` (where `roster-list` points at it), never
/// stdout, within what is left of the budget. Best effort: a roster
/// directory that cannot be opened only loses the log line.
pub fn report_hook_problem(tool: &str, common: &CommonArgs, message: &str) {
    report_escaped_hook_problem(tool, common, &crate::text::escape_for_terminal(message));
}

/// `report_hook_problem` for a message escaped for a terminal already
/// (`terminal_message`, or a path shown by its bytes).
pub fn report_escaped_hook_problem(tool: &str, common: &CommonArgs, message: &str) {
    if !STDERR_IS_THE_REPLY.load(std::sync::atomic::Ordering::SeqCst) {
        let _ = writeln!(std::io::stderr().lock(), "{tool}: hook: {message}");
    }
    if let Ok(roster) = open_roster_for_writing(common) {
        let _ = registry_core::append_hook_error_within(&roster, tool, message, log_lock_wait());
    }
}

/// How long logging may wait for the lock: briefly, and in hook mode never
/// much past the work deadline (past it the line is appended unlocked).
fn log_lock_wait() -> Duration {
    hook_work_deadline()
        .map_or(Duration::from_millis(300), |deadline| {
            (deadline + BUDGET_RESERVE / 4).saturating_duration_since(Instant::now())
        })
        .min(Duration::from_millis(300))
}

/// The watchdog's stack: room for reporting (opening the roster, appending
/// to the log), a fraction of the default 2 MiB that a thread would map.
const WATCHDOG_STACK_BYTES: usize = 256 * 1024;

/// The watchdog's stack, given to its thread rather than mapped for it: the
/// C library would map it with a guard page (two system calls) and give it
/// back at the thread's end (a third). Zeroed memory of the executable,
/// whose pages are touched only as the thread uses them; a process has at
/// most one hook run, hence one watchdog, and a second (`WATCHDOG_STACK_TAKEN`)
/// would get a stack of its own.
#[repr(C, align(64))]
struct WatchdogStack(std::cell::UnsafeCell<[u8; WATCHDOG_STACK_BYTES]>);

// SAFETY: the stack is handed to one thread only (`WATCHDOG_STACK_TAKEN`),
// and nothing else ever reads or writes it.
unsafe impl Sync for WatchdogStack {}

static WATCHDOG_STACK: WatchdogStack = WatchdogStack(std::cell::UnsafeCell::new([0; WATCHDOG_STACK_BYTES]));
static WATCHDOG_STACK_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A thread that ends the process at a deadline with exit 0 if the run
/// is still going then, after saying so on stderr and in the log.
///
/// A plain POSIX thread rather than std's: std's sets up what a thread that
/// runs Rust code at length needs (its handle and name, thread-local
/// destructors, which make the C library build an allocator arena for the
/// thread), which a watchdog that only waits never uses; on every hook run
/// that cost five system calls and a dozen page faults. What it runs when it
/// fires is ordinary Rust: std serves threads it did not start.
struct Watchdog {
    watch: Arc<Watch>,
    thread: Option<nix::libc::pthread_t>,
}

/// What the run and its watchdog share.
struct Watch {
    finished: (Mutex<bool>, Condvar),
    tool: &'static str,
    common: CommonArgs,
    clock: &'static HookClock,
}

impl Watchdog {
    /// Starts watching until half the reserve before the budget ends,
    /// counted from when the harness started the run. Without a thread
    /// (resources exhausted) nothing watches, and the lock and payload
    /// deadlines still bound the run.
    fn start(tool: &'static str, common: CommonArgs, clock: &'static HookClock) -> Watchdog {
        let watch = Arc::new(Watch { finished: (Mutex::new(false), Condvar::new()), tool, common, clock });
        let thread = on_this_cpu_only(|| spawn_watchdog_thread(Arc::clone(&watch)));
        Watchdog { watch, thread }
    }

    /// Tells the watchdog the run is done and waits for its thread to end,
    /// so the process exits with one thread: exiting with a second one
    /// alive cost a millisecond where the harness has many children.
    fn stand_down(mut self) {
        let (finished, wakeup) = &self.watch.finished;
        if let Ok(mut finished) = finished.lock() {
            *finished = true;
        }
        wakeup.notify_one();
        if let Some(thread) = self.thread.take() {
            // SAFETY: `thread` was created joinable and is joined once.
            unsafe { nix::libc::pthread_join(thread, std::ptr::null_mut()) };
        }
    }
}

/// Runs `start` (the watchdog thread's creation) with this thread allowed
/// on the CPU it runs on alone, then gives it back the CPUs it had: the
/// new thread inherits that one CPU and keeps it. Started where the
/// scheduler likes best (the idle CPU), the watchdog cost a hook run about
/// a tenth of its time: the other CPU woken to start it and again to stand
/// it down, the run woken back from there, and every change of the address
/// space flushed on both CPUs. On one CPU, it runs when the run waits or
/// when its time slice ends, as any thread does; a run stuck in the
/// kernel leaves that CPU to it. Where the affinity cannot be read or set
/// (a sandbox that forbids it), the thread starts as it would have.
fn on_this_cpu_only<T>(start: impl FnOnce() -> T) -> T {
    use nix::sched::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
    let this_thread = nix::unistd::Pid::from_raw(0);
    let pinned = sched_getaffinity(this_thread).ok().and_then(|allowed| {
        let cpu = sched_getcpu().ok()?;
        let mut only = CpuSet::new();
        only.set(cpu).ok()?;
        sched_setaffinity(this_thread, &only).ok()?;
        Some(allowed)
    });
    let started = start();
    if let Some(allowed) = pinned {
        let _ = sched_setaffinity(this_thread, &allowed);
    }
    started
}

/// Starts the watchdog's thread with `watch`; `None` when no thread could
/// be made.
fn spawn_watchdog_thread(watch: Arc<Watch>) -> Option<nix::libc::pthread_t> {
    use nix::libc;
    // SAFETY: the attributes are initialised before use and destroyed
    // after; the thread gets one strong count of `watch`, taken back below
    // when the thread could not be made.
    unsafe {
        let mut attributes: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_attr_init(&mut attributes) != 0 {
            return None;
        }
        // A thread that ends lets its stack go only once joined or detached;
        // a watchdog that fires ends the process with it, so the stack is
        // never handed out again while a thread may still run on it.
        let stack_given = !WATCHDOG_STACK_TAKEN.swap(true, std::sync::atomic::Ordering::SeqCst)
            && libc::pthread_attr_setstack(
                &mut attributes,
                WATCHDOG_STACK.0.get().cast(),
                WATCHDOG_STACK_BYTES,
            ) == 0;
        if !stack_given {
            libc::pthread_attr_setstacksize(&mut attributes, WATCHDOG_STACK_BYTES);
        }
        let mut thread: libc::pthread_t = std::mem::zeroed();
        let argument = Arc::into_raw(watch).cast_mut().cast::<libc::c_void>();
        let created = libc::pthread_create(&mut thread, &attributes, watchdog_thread, argument);
        libc::pthread_attr_destroy(&mut attributes);
        if created != 0 {
            drop(Arc::from_raw(argument.cast::<Watch>()));
            return None;
        }
        Some(thread)
    }
}

/// The watchdog thread's body, as the C library calls it.
extern "C" fn watchdog_thread(argument: *mut nix::libc::c_void) -> *mut nix::libc::c_void {
    // SAFETY: `spawn_watchdog_thread` handed this thread one strong count.
    let watch = unsafe { Arc::from_raw(argument.cast::<Watch>().cast_const()) };
    // A panic must not unwind out of a C function; nothing is left to do
    // after one.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| watch_the_run(&watch)));
    std::ptr::null_mut()
}

/// Waits for the run to finish until the watchdog's deadline; past it,
/// reports and ends the process.
fn watch_the_run(watch: &Watch) {
    if run_finished(&watch.finished) {
        return;
    }
    // Until the earliest it could fire, nothing needs measuring; past it,
    // the late start says how much longer the run has.
    if wait_until_finished_or(watch.clock.watchdog_fires_at_the_earliest(), &watch.finished) {
        return;
    }
    let at = watch.clock.watchdog_fires();
    if !wait_until_finished_or(at, &watch.finished) {
        let budget = HOOK_CLOCK.get().map_or(0, |clock| clock.event.budget().as_millis());
        report_hook_problem(
            watch.tool,
            &watch.common,
            &format!("gave up: the run did not finish within the {budget} ms hook budget"),
        );
        // Nothing is half-written by stopping here: every file is
        // replaced by a rename, and the kernel frees the lock with
        // the process. A reply written whole ends as it asked
        // (`end_hook_with`).
        let status = HOOK_EXIT_STATUS.load(std::sync::atomic::Ordering::SeqCst);
        std::process::exit(i32::from(status));
    }
}

/// Whether the run said it finished.
fn run_finished(finished: &(Mutex<bool>, Condvar)) -> bool {
    finished.0.lock().map_or(true, |done| *done)
}

/// Waits until `at` or until the run says it finished; `true` when it did.
fn wait_until_finished_or(at: Instant, finished: &(Mutex<bool>, Condvar)) -> bool {
    let (finished, wakeup) = finished;
    let Ok(mut done) = finished.lock() else { return true };
    while !*done {
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        done = match wakeup.wait_timeout(done, left) {
            Ok((done, _)) => done,
            // A poisoned lock: the run panicked; nothing left to watch.
            Err(_) => return true,
        };
    }
    true
}

/// Reports a warning (something the user should fix that did not stop the
/// command): one line `tool: warning: message` on stderr and, in hook mode
/// (`hook_log` is the roster), one line in `hook-errors.log` as well, since
/// nobody reads a hook's stderr. Best effort: a warning never fails a run.
pub fn report_warning(tool: &str, message: &str, hook_log: Option<&registry_core::RosterDir>) {
    let message = crate::text::escape_for_terminal(&format!("warning: {message}")).into_owned();
    let _ = writeln!(std::io::stderr().lock(), "{tool}: {message}");
    if let Some(roster) = hook_log {
        let _ = registry_core::append_hook_error_within(roster, tool, &message, log_lock_wait());
    }
}

/// Whether the raw command line asks for hook mode. Used when the flags
/// themselves fail to parse: a hook must exit 0 even then, because a
/// harness may treat a non-zero hook as a reason to stop the session.
pub fn hook_mode_requested() -> bool {
    std::env::args_os().skip(1).any(|arg| {
        let arg = arg.to_string_lossy();
        arg == "--hook" || arg.starts_with("--hook=")
    })
}

/// Reports a command line that failed to parse in hook mode: one stderr
/// line and, where the default roster directory can be opened, one log
/// line; exit 0.
pub fn report_unparsable_hook_invocation(tool: &'static str, error: &clap::Error) -> ExitCode {
    // The flags did not parse, but a `--dir` among them still says where this hook's
    // roster is: log there, not in (and never by creating) the default directory.
    let common =
        CommonArgs { dir: dir_from_raw_arguments(std::env::args_os().skip(1)), ..CommonArgs::default() };
    // clap's message may go on below its first line (the missing flags);
    // it ends where the usage begins.
    let rendered = error.to_string();
    let message: Vec<&str> = rendered
        .lines()
        .take_while(|line| !line.trim().is_empty() && !line.starts_with("Usage:"))
        .map(str::trim)
        .collect();
    let first_line = if message.is_empty() { "invalid arguments".to_owned() } else { message.join(" ") };
    let event = if std::env::args_os().any(|arg| arg == "--current") {
        HookEvent::SessionEnd
    } else {
        HookEvent::SessionStart
    };
    run_hook(tool, &common, event, || Err(anyhow::anyhow!("invalid hook command line: {first_line}")))
}

/// The value of the last `--dir DIR` or `--dir=DIR` among raw arguments, if any.
fn dir_from_raw_arguments(
    mut arguments: impl Iterator<Item = std::ffi::OsString>,
) -> Option<std::path::PathBuf> {
    let mut dir = None;
    while let Some(argument) = arguments.next() {
        if argument == "--dir" {
            dir = arguments.next().map(std::path::PathBuf::from);
        } else if let Some(value) = argument.to_str().and_then(|text| text.strip_prefix("--dir=")) {
            dir = Some(std::path::PathBuf::from(value));
        }
    }
    dir
}

/// The entry point of a tool that has a hook mode (`roster-register`,
/// `roster-prune --current`): parses the flags (building the command with
/// its manual, `full()`, only for help), then runs `body` under the hook
/// discipline when `hook_of(&args)` says so (with the event it serves),
/// else as a normal tool whose errors map to exit statuses.
pub fn run_tool_with_hook_mode<Args: clap::Parser>(
    tool: &'static str,
    full: impl FnOnce() -> clap::Command,
    hook_of: impl Fn(&Args) -> Option<(&CommonArgs, HookEvent)>,
    body: impl FnOnce(Args) -> anyhow::Result<()>,
) -> ExitCode {
    let args = match crate::help::parse_with_manual_on_help::<Args>(full, &crate::help::process_arguments()) {
        Ok(args) => args,
        Err(error) if error.use_stderr() && hook_mode_requested() => {
            return report_unparsable_hook_invocation(tool, &error);
        }
        Err(error) => return crate::exit::run_tool(tool, || Err(error.into())),
    };
    if let Some((common, event)) = hook_of(&args).map(|(common, event)| (common.clone(), event)) {
        return run_hook(tool, &common, event, || body(args));
    }
    crate::exit::run_tool(tool, || body(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The watchdog's stack is small on purpose (a thread's default 2 MiB
    /// cost page faults on every hook run); what it does when it
    /// fires, reporting on stderr and in a log it first has to open and
    /// trust, must fit in it. A log that already holds its 100 lines is
    /// read and trimmed, the longest way through.
    #[test]
    fn the_watchdogs_report_fits_its_stack() {
        let temporary = tempfile::tempdir().unwrap();
        let root = temporary.path().join("roster");
        let common = CommonArgs { dir: Some(root.clone()), ..CommonArgs::default() };
        let roster = open_roster_for_writing(&common).unwrap();
        for line in 0..100 {
            registry_core::append_hook_error_within(
                &roster,
                "roster-register",
                &format!("earlier {line}"),
                Duration::ZERO,
            )
            .unwrap();
        }
        let message = "gave up: the run did not finish within the 1000 ms hook budget";
        let reporter = std::thread::Builder::new()
            .stack_size(WATCHDOG_STACK_BYTES)
            .spawn(move || report_hook_problem("roster-register", &common, message))
            .unwrap();
        reporter.join().expect("reporting fits the watchdog's stack");
        let log = std::fs::read_to_string(root.join("hook-errors.log")).unwrap();
        assert_eq!(log.lines().count(), 100, "{log}");
        assert!(log.lines().last().is_some_and(|line| line.contains(message)), "{log}");
        assert!(!log.contains("earlier 0\n"), "the oldest line stayed: {log}");
    }

    #[test]
    fn dir_is_recovered_from_an_unparsable_command_line() {
        let check = |words: &[&str], expect: Option<&str>| {
            let arguments = words.iter().map(std::ffi::OsString::from);
            assert_eq!(dir_from_raw_arguments(arguments), expect.map(std::path::PathBuf::from), "{words:?}");
        };
        check(&["--hook", "codex", "--dir", "/r", "--bogus"], Some("/r"));
        check(&["--hook=codex", "--dir=/r", "--bogus"], Some("/r"));
        check(&["--hook", "codex", "--bogus"], None);
        check(&["--hook", "codex", "--dir"], None);
    }
}
