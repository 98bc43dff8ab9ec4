//! `cargo xtask bench`: measures the speed targets of docs/contract.md §9 on whole
//! processes of the release binaries, as ratios taken in one run so that a
//! busy machine shifts both sides alike, and fails when one is missed.
//!
//! Registries of 0, 1,000 and 10,000 records are seeded through the library
//! (the same record and state formats register and the state hook write),
//! each record owned by a live child process the bench keeps and with a
//! state of its own, so every verdict is a real one and every listing reads
//! states too. Compared commands run interleaved, round by round, so that a
//! machine changing pace shifts both sides alike.

pub mod ended;
pub mod fleet;
pub mod focus;
pub mod notify;
mod processes;
pub mod report;
pub mod watch;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use owner_liveness::OwnerIdentity;

use ::tests::measure::{Invocation, Samples, milliseconds};
use ::tests::owners::OwnerPool;
use ::tests::seed::{SeededRegistry, realistic_record, realistic_state, session_id_for};
use ::tests::workspace::{Profile, build_binaries, target_directory};
use report::{BenchReport, Contention, Figure, RatioCheck, thousands};

/// Options of `cargo xtask bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Run the whole bench N times; a row is met only when its median meets the target in every run
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub runs: u16,

    /// Timed rounds per figure in each run (after one warm-up round that is not counted)
    #[arg(long, value_name = "N", default_value_t = 11, value_parser = clap::value_parser!(u16).range(1..))]
    pub rounds: u16,

    /// Smoke run: registries of 0, 100 and 1,000 records and fewer contended writes; targets are shown, not judged
    #[arg(long)]
    pub quick: bool,

    /// Put the registries under DIR (default: /dev/shm when it is a tmpfs, else the temp directory)
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

/// The limits: docs/contract.md §9's, tightened to the floor.
const REGISTER_GROWTH_LIMIT: f64 = 1.1;
const LIST_VERSUS_CAT_LIMIT: f64 = 1.5;
/// The sessions Claude Code keeps list in the same order of time as
/// roster's own records: a file each, read and judged.
const ADOPTED_LIST_VERSUS_CAT_LIMIT: f64 = 1.3;
/// The ended sessions are listed in the shape the sessions Claude Code
/// keeps are: a small file each, read, parsed, checked and ordered by
/// time, and here no owner even to judge; so the same bound holds, not
/// the looser one of a listing that reads two files (record and state)
/// per session.
const ENDED_LIST_VERSUS_CAT_LIMIT: f64 = ADOPTED_LIST_VERSUS_CAT_LIMIT;
const PRUNE_VERSUS_RM_LIMIT: f64 = 2.0;
/// What roster adds to a prune's file operations (reading, judging and
/// reporting each record, choosing the ended sessions). The file
/// operations alone, on two threads as a prune splits them, take 1.3-1.8×
/// `rm` of the records on a 2-core machine (three bench runs, and two sets
/// of 20 interleaved rounds), and roster-prune 1.15-1.4× them.
const PRUNE_VERSUS_FILE_OPERATIONS_LIMIT: f64 = 1.5;
/// The session-start hook runs before the harness shows its prompt: at
/// the floor, like the state hook.
const HOOK_VERSUS_TRUE_LIMIT: f64 = 1.5;
/// The state hook runs on every tool call: within this many `/bin/true`s,
/// and no slower in a large registry than in a registry of one session.
const STATE_HOOK_VERSUS_TRUE_LIMIT: f64 = 1.5;
const STATE_HOOK_GROWTH_LIMIT: f64 = 1.1;
/// The state hook at a delivery event (docs/contract.md §6.6) with nothing
/// queued: within this many of the same hook at an event that delivers
/// nothing, medians of the same rounds.
const DELIVERY_HOOK_VERSUS_STATE_HOOK_LIMIT: f64 = 1.1;
/// The state hook at a delivery event handing over one waiting message:
/// within this many of the same hook, same session and registry, with
/// nothing waiting, in the same rounds. The floor is the hook itself, not
/// `/bin/true`, so that the row measures the handover alone (reading the
/// message, writing it to the harness, settling it durably) and not the
/// hook again, which its own rows hold.
const HANDOVER_VERSUS_NOTHING_WAITING_LIMIT: f64 = 1.3;
/// `roster-focus --print PID` of a session in a tmux pane: within this
/// many of the two questions it asks the tmux server (`list-panes`, to
/// check the pane still runs the session, and `list-clients`, for the
/// client to switch), asked by tmux itself in the same rounds: the floor
/// of going anywhere in tmux. Its own work beside them (one record read
/// and judged, the owner's ancestry) is a hook's, and the bound the hooks'
/// is. A session named by pid is read from its one record, so the row
/// does not grow with the registry.
const FOCUS_VERSUS_TMUX_LIMIT: f64 = 1.5;
/// The worst contended registration: within `WORST_CONTENDED_MS`, unless
/// the same writers each into a registry of their own, with no lock to
/// share, already wait longer at their worst. That remainder is the
/// scheduler's (two cores, eight writers), and what is judged then is what
/// the lock alone adds: the worst within `CONTENDED_VERSUS_SEPARATE_P99_LIMIT`
/// times theirs, the bound the tail is held to.
fn worst_registration_check(contention: &Contention, writers: &str) -> RatioCheck {
    let worst = contention.latencies.max();
    let scheduler_worst = contention.uncontended.max();
    if milliseconds(scheduler_worst) <= WORST_CONTENDED_MS {
        return RatioCheck::new(
            format!("{writers}: worst registration"),
            milliseconds(worst),
            WORST_CONTENDED_MS,
            "ms",
            Some(1.0),
        );
    }
    RatioCheck::of_durations(
        format!(
            "{writers}: worst registration vs the scheduler's worst with no lock (over {WORST_CONTENDED_MS} ms)"
        ),
        worst,
        scheduler_worst,
        Some(CONTENDED_VERSUS_SEPARATE_P99_LIMIT),
    )
}

/// Queuing a message for a live session: within this many registrations
/// of a fresh session into the same registry, in the same rounds. Both
/// write one file durably; a send also decides the session's consent.
const SEND_VERSUS_REGISTER_LIMIT: f64 = 2.0;
/// Contended writers: the 99th percentile into one registry within this
/// many of the same writers' each into a registry of its own (what the
/// lock adds to the tail), and no registration longer than
/// `WORST_CONTENDED_MS` (`worst_registration_check`).
const CONTENDED_VERSUS_SEPARATE_P99_LIMIT: f64 = 1.15;
const WORST_CONTENDED_MS: f64 = 40.0;
/// A JSON listing of `LARGE_REGISTRY` records fits in this much memory, and
/// its time per record grows by at most `LINEAR_LIMIT` from a registry a
/// quarter of its size.
const LARGE_REGISTRY: usize = 100_000;
const LARGE_LISTING_MEMORY_MIB: f64 = 64.0;
const LINEAR_LIMIT: f64 = 1.25;

/// Registrations and state updates are timed this many times more often
/// than the rest.
const REGISTER_ROUNDS_FACTOR: usize = 4;

/// The names of the figures more than one function uses.
const LIST_JSON: &str = "roster-list --format json, with states";
const LIST_TEXT: &str = "roster-list, with states";
const CAT_RECORDS_AND_STATES: &str = "cat sessions/*.json states/*.json";
const TOP_SUMMARY: &str = "roster-top --summary, with states";
const TOP_REDRAW: &str = "roster-top: one frame of 1,000 sessions, 200x50";
/// Sessions on roster-top's board when a frame is timed.
const TOP_REDRAW_SESSIONS: usize = 1000;
/// The most one frame of roster-top may take: a frame of a 60 Hz screen.
const TOP_FRAME_BUDGET: Duration = Duration::from_micros(16_700);
const LIST_ADOPTED: &str = "roster-list --format json, Claude Code's sessions";
const CAT_ADOPTED: &str = "cat ~/.claude/sessions/*.json";
const REGISTER_BY_FLAGS: &str = "roster-register --pid";
const REGISTER_AS_HOOK: &str = "roster-register --hook claude-code";
const TRUE_BESIDE_REGISTER: &str = "/bin/true (register rounds)";
const STATE_HOOK: &str = "roster-state --hook claude-code (PostToolUse)";
const TRUE_BESIDE_STATE_HOOK: &str = "/bin/true (state hook rounds)";
const DELIVERY_HOOK: &str = "roster-state --hook claude-code (UserPromptSubmit, nothing queued)";
const DELIVERY_WITH_MESSAGE: &str = "roster-state --hook claude-code (UserPromptSubmit, one message waiting)";
const DELIVERY_NOTHING_WAITING: &str =
    "roster-state --hook claude-code (UserPromptSubmit, nothing waiting, send rounds)";
const SEND: &str = "roster-send --to PID";
const REGISTER_BESIDE_SEND: &str = "roster-register --pid (send rounds)";
const PRUNE_ALL_DEAD: &str = "roster-prune (all dead)";
const RM_RECORDS: &str = "rm -f sessions/*.json";
/// The file operations of a prune alone (`tests/examples/prune_floor.rs`).
const PRUNE_FILE_OPERATIONS: &str = "prune_floor (a prune's file operations alone)";

/// The records of the registry of one session the state hook and a send
/// are timed in.
const ONE_SESSION: usize = 1;

/// What every timed send queues.
const SEND_TEXT: &str = "the build on main fails in tests/api.rs; can you look?";

/// The `.roster.toml` of the directory the session a send goes to works
/// in: its repository opts in, so the session accepts messages.
const AUTO_ARM_CONFIG: &str = "[consent]\nauto_arm = true\n";

/// Concurrent writers of the contention figure.
const CONTENDING_WRITERS: usize = 8;

/// Everything the measurements of one run share.
struct Bench {
    binaries: PathBuf,
    scratch: PathBuf,
    /// The directory every record and registration names as its cwd.
    work_directory: PathBuf,
    sizes: Vec<usize>,
    /// Timed rounds per figure, after one warm-up round.
    rounds: usize,
    cat: PathBuf,
    rm: PathBuf,
    true_program: PathBuf,
}

pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    let quick = args.quick;
    let sizes: Vec<usize> = if quick { vec![0, 100, 1_000] } else { vec![0, 1_000, 10_000] };
    let built = build_binaries(Profile::Release, &crate::codegen::BINARY_NAMES)?;
    let binaries = install_binaries(&built, &results_directory()?.join("installed"))?;
    let scratch_parent = match &args.scratch {
        Some(directory) => directory.clone(),
        None if filesystem_of(Path::new("/dev/shm")).is_some_and(|name| name == "tmpfs") => "/dev/shm".into(),
        None => std::env::temp_dir(),
    };
    let scratch_holder = tempfile::Builder::new()
        .prefix("roster-bench-")
        .tempdir_in(&scratch_parent)
        .context("create a scratch directory")?;
    let filesystem = format!(
        "{} ({})",
        filesystem_of(scratch_holder.path()).unwrap_or_else(|| "an unknown filesystem".into()),
        scratch_parent.display()
    );
    progress(&format!("registries on {filesystem}"));
    // The directory every session works in lives where a project would,
    // not below the scratch directory: the watch follows each directory
    // above a session's, for a `.roster.toml` appearing or being edited,
    // and below `/dev/shm` that includes `/dev`, where every process on
    // the machine that closes `/dev/null` after writing would wake the
    // idle watcher.
    let work_holder = tempfile::Builder::new()
        .prefix("roster-bench-work-")
        .tempdir_in(results_directory()?)
        .context("create the sessions' work directory")?;
    let runs = usize::from(args.runs);
    let mut outcomes = Vec::with_capacity(runs);
    for run in 1..=runs {
        if runs > 1 {
            progress(&format!("run {run} of {runs}"));
        }
        // Each run starts from nothing: its own owners, registries and
        // scratch directory, as a bench started anew would.
        let scratch = scratch_holder.path().join(format!("run-{run}"));
        std::fs::create_dir_all(&scratch).with_context(|| format!("create {}", scratch.display()))?;
        let bench = Bench {
            binaries: binaries.clone(),
            work_directory: work_holder.path().to_owned(),
            sizes: sizes.clone(),
            rounds: usize::from(args.rounds),
            cat: find_on_path("cat")?,
            rm: find_on_path("rm")?,
            true_program: find_on_path("true")?,
            scratch: scratch.clone(),
        };
        let outcome = bench.run_once(&filesystem, quick)?;
        println!("{}", outcome.report.render_table());
        println!("{}", render_floors(&outcome.report));
        println!("{}", outcome.watch.render());
        print_reproduction(&outcome.report);
        outcomes.push(outcome);
        std::fs::remove_dir_all(&scratch).with_context(|| format!("remove {}", scratch.display()))?;
    }
    if runs > 1 {
        println!("{}", render_runs(&outcomes));
    }
    let saved = save_json(&outcomes)?;
    println!("saved {}", saved.display());

    if !quick && !outcomes.iter().all(|outcome| outcome.watch.targets_met()) {
        bail!("a target of roster-list --watch was missed (see the watch lines above)");
    }
    if !quick && !outcomes.iter().all(|outcome| outcome.report.all_targets_met()) {
        bail!("a speed target was missed (see the tables above)");
    }
    Ok(())
}

/// What one run of the whole bench found.
struct RunOutcome {
    report: BenchReport,
    watch: watch::WatchFigures,
}

/// The measurements whose rows can be repeated on their own: each times a
/// few commands against their floors in the same rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Measurement {
    ListAndCat,
    Adopted,
    StateHook,
    SendAndDelivery,
    Register,
    Focus,
    Prune,
    Ended,
}

/// This machine's floors in one run, medians: what two machines' figures
/// are compared by.
fn floors(report: &BenchReport) -> Vec<(String, f64)> {
    let largest = *report.sizes.last().expect("sizes are listed");
    let size = thousands(largest);
    [
        ("/bin/true (state hook rounds)".to_owned(), TRUE_BESIDE_STATE_HOOK, None),
        ("/bin/true (register rounds)".to_owned(), TRUE_BESIDE_REGISTER, None),
        ("/bin/true (focus rounds)".to_owned(), focus::TRUE_BESIDE_FOCUS, None),
        (format!("cat of {size} records and states"), CAT_RECORDS_AND_STATES, Some(largest)),
        (format!("cat of {size} files Claude Code keeps"), CAT_ADOPTED, Some(largest)),
        (format!("rm of {size} records"), RM_RECORDS, Some(largest)),
        (format!("a prune's file operations alone, {size} records"), PRUNE_FILE_OPERATIONS, Some(largest)),
        (
            format!("cat of {} ended-session entries", thousands(ended::ENDED_ENTRIES)),
            ended::CAT_ENDED,
            Some(ended::ENDED_ENTRIES),
        ),
    ]
    .into_iter()
    .filter_map(|(what, name, records)| {
        Some((what, milliseconds(report.figure(name, records)?.samples.median())))
    })
    .collect()
}

fn render_floors(report: &BenchReport) -> String {
    let floors: Vec<String> =
        floors(report).into_iter().map(|(what, median)| format!("{what} {median:.2} ms")).collect();
    format!("this machine's floors (medians): {}", floors.join("; "))
}

/// Every row of every run, side by side: a row is met when it was met
/// in each run.
fn render_runs(outcomes: &[RunOutcome]) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{} runs: each row's ratio of medians per run; a row is met when it met its target in every run",
        outcomes.len()
    );
    let first = &outcomes[0].report;
    let width = first.ratios.iter().map(|ratio| ratio.description.chars().count()).max().unwrap_or(0).max(6);
    let _ = write!(text, "{:width$}", "figure");
    for run in 1..=outcomes.len() {
        let _ = write!(text, "  {:>8}", format!("run {run}"));
    }
    let _ = writeln!(text, "  {:>7}  verdict", "target");
    for (index, ratio) in first.ratios.iter().enumerate() {
        let _ = write!(text, "{:width$}", ratio.description);
        let mut met = true;
        for outcome in outcomes {
            match outcome.report.ratios.get(index) {
                Some(this_run) => {
                    met &= this_run.met();
                    let _ = write!(text, "  {:>7.2}×", this_run.ratio());
                }
                None => {
                    met = false;
                    let _ = write!(text, "  {:>8}", "-");
                }
            }
        }
        let target = ratio.limit.map_or("-".to_owned(), |limit| format!("≤{limit}×"));
        let verdict = match ratio.limit {
            None => "reported",
            Some(_) if first.quick => "not judged (quick)",
            Some(_) if met => "met",
            Some(_) => "MISSED",
        };
        let _ = writeln!(text, "  {target:>7}  {verdict}");
    }
    for (run, outcome) in outcomes.iter().enumerate() {
        let _ = writeln!(text, "run {}: {}", run + 1, render_floors(&outcome.report));
    }
    let watch_met = outcomes.iter().all(|outcome| outcome.watch.targets_met());
    let _ = writeln!(
        text,
        "roster-list --watch: {}",
        if watch_met { "met in every run" } else { "MISSED in a run (see its watch lines)" }
    );
    text
}

fn progress(message: &str) {
    eprintln!("bench: {message}");
}

/// Waits until the cores are idle again, at most `IDLE_WAIT_LIMIT`: the
/// kernel finishes tearing down thousands of killed owners in the
/// background for a second or more, and timings taken meanwhile measure
/// that (prune of 10,000 records ran 196-399 ms right after the kill,
/// 110-145 ms once the machine was idle).
fn wait_until_the_cores_are_idle() {
    const IDLE_WAIT_LIMIT: Duration = Duration::from_secs(15);
    const WINDOW: Duration = Duration::from_millis(250);
    const IDLE_ENOUGH: f64 = 0.9;
    let started = Instant::now();
    let mut before = cpu_times();
    while started.elapsed() < IDLE_WAIT_LIMIT {
        std::thread::sleep(WINDOW);
        let now = cpu_times();
        if let (Some((idle_before, total_before)), Some((idle_now, total_now))) = (before, now) {
            let total = total_now.saturating_sub(total_before);
            if total > 0 && idle_now.saturating_sub(idle_before) as f64 / total as f64 >= IDLE_ENOUGH {
                progress(&format!(
                    "the cores are idle again after {:.0} ms",
                    milliseconds(started.elapsed())
                ));
                return;
            }
        } else {
            // No /proc/stat to ask: give the kernel the time it usually needs.
            std::thread::sleep(Duration::from_secs(2));
            return;
        }
        before = now;
    }
    progress(&format!("the cores were still busy after {} s; measuring anyway", IDLE_WAIT_LIMIT.as_secs()));
}

/// The idle (idle and iowait) and total ticks of every core, from `/proc/stat`.
fn cpu_times() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<u64> = stat
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    let idle = ticks.get(3)? + ticks.get(4)?;
    Some((idle, ticks.iter().sum()))
}

fn find_on_path(name: &str) -> anyhow::Result<PathBuf> {
    ::tests::find_on_path(name).with_context(|| format!("`{name}` is not on PATH"))
}

/// Seeded registries by size, every record owned by a live process.
struct LiveRegistries {
    by_size: Vec<(usize, SeededRegistry)>,
}

impl LiveRegistries {
    fn get(&self, size: usize) -> &SeededRegistry {
        &self.by_size.iter().find(|(records, _)| *records == size).expect("a registry per size").1
    }
}

impl Bench {
    fn tool(&self, name: &str) -> PathBuf {
        self.binaries.join(name)
    }

    /// One run of the whole bench: owners forked, registries seeded, every
    /// row measured; a row that missed its target is measured once more
    /// before it is called missed.
    fn run_once(&self, filesystem: &str, quick: bool) -> anyhow::Result<RunOutcome> {
        let largest = *self.sizes.last().expect("sizes are listed");
        let registrations_per_writer = if quick { 50 } else { 500 };
        progress(&format!("forking {} owner processes", thousands(largest)));
        let owners = OwnerPool::fork(largest)?;
        let identities = owners.identities()?;

        let live = self.seed_live_registries(&identities)?;
        let measure = |measurement: Measurement| -> anyhow::Result<Vec<Figure>> {
            match measurement {
                Measurement::ListAndCat => self.measure_list_and_cat(&live),
                Measurement::Adopted => self.measure_adopted_listing(&identities),
                Measurement::StateHook => self.measure_state_hook(&live, &identities[0]),
                Measurement::SendAndDelivery => self.measure_send(&live),
                Measurement::Register => self.measure_register(&live),
                Measurement::Focus => self.measure_focus(&live),
                Measurement::Prune => self.measure_prune_and_rm(&identities),
                Measurement::Ended => self.measure_ended_listing(&identities),
            }
        };
        let live_measurements = [
            Measurement::ListAndCat,
            Measurement::Adopted,
            Measurement::StateHook,
            Measurement::SendAndDelivery,
            Measurement::Register,
            Measurement::Focus,
        ];
        let mut figures = Vec::new();
        for measurement in live_measurements {
            figures.extend(measure(measurement)?);
        }
        let mut checks = ratio_checks(&figures, largest);
        if !quick {
            repeat_missed(&mut checks, &figures, largest, |measurement| {
                live_measurements.contains(&measurement).then(|| measure(measurement)).transpose()
            })?;
        }

        progress(&format!(
            "timing roster-list --watch and roster-notify over {} live sessions",
            thousands(largest)
        ));
        let watch_once = || {
            watch::measure_watch(
                &watch::WatchedTools {
                    list: self.tool("roster-list"),
                    register: self.tool("roster-register"),
                    state: self.tool("roster-state"),
                    notify: self.tool("roster-notify"),
                    prune: self.tool("roster-prune"),
                    exec: self.true_program.clone(),
                },
                &live.get(largest).root,
                &self.work_directory,
                &self.scratch,
                largest,
                if quick { 20 } else { 100 },
            )
        };
        let mut watch = watch_once()?;
        if !quick && !watch.targets_met() {
            progress("repeating the watch: a target of it missed");
            watch = watch_once()?;
        }

        progress("timing roster-top's frame of 1,000 sessions");
        let frame = self.measure_top_frame()?;
        let frame_check = RatioCheck::new(
            format!(
                "roster-top: one frame of {} sessions (200×50) vs a 60 Hz frame",
                thousands(TOP_REDRAW_SESSIONS)
            ),
            frame.samples.median().as_secs_f64() * 1e3,
            TOP_FRAME_BUDGET.as_secs_f64() * 1e3,
            "ms",
            Some(1.0),
        );
        figures.push(frame);

        let mut contention = self.measure_contention(&owners, registrations_per_writer, 0)?;
        let mut contention_ratios = contention_checks(&contention);
        if !quick && !contention_ratios.iter().all(RatioCheck::met) {
            progress("repeating the contended writers: a target of theirs missed");
            contention = self.measure_contention(&owners, registrations_per_writer, 1)?;
            contention_ratios = contention_checks(&contention)
                .into_iter()
                .zip(&contention_ratios)
                .map(|(again, first)| if first.met() { again } else { again.repeated_after(first) })
                .collect();
        }

        progress("killing the owners: their records become dead ones for prune and the ended sessions");
        owners.kill_all();
        wait_until_the_cores_are_idle();
        let dead_measurements = [Measurement::Prune, Measurement::Ended];
        for measurement in dead_measurements {
            figures.extend(measure(measurement)?);
        }
        // The rows judged above keep their verdicts; the rows of dead
        // owners are judged now that their figures are in.
        for ((_, check), (measurement, dead_check)) in checks.iter_mut().zip(ratio_checks(&figures, largest))
        {
            if dead_measurements.contains(&measurement) {
                *check = dead_check;
            }
        }
        if !quick {
            repeat_missed(&mut checks, &figures, largest, |measurement| {
                dead_measurements.contains(&measurement).then(|| measure(measurement)).transpose()
            })?;
        }
        let large = if quick { Vec::new() } else { self.measure_large_listing(&identities)? };
        let large = if !quick && !large.iter().all(RatioCheck::met) {
            progress("repeating the large listing: a target of it missed");
            let again = self.measure_large_listing(&identities)?;
            again
                .into_iter()
                .zip(&large)
                .map(|(again, first)| if first.met() { again } else { again.repeated_after(first) })
                .collect()
        } else {
            large
        };

        let mut ratios: Vec<RatioCheck> = checks.into_iter().map(|(_, check)| check).collect();
        ratios.extend(contention_ratios);
        ratios.extend(large);
        ratios.push(frame_check);
        progress("timing roster-list --host over 4 sshd hosts against 1");
        let list = self.tool("roster-list");
        let mut fleet_checks = fleet::measure_fleet(&list, self.rounds);
        if !quick && !fleet_checks.iter().all(RatioCheck::met) {
            progress("repeating roster-list --host: a target of it missed");
            let again = fleet::measure_fleet(&list, self.rounds);
            fleet_checks = again
                .into_iter()
                .zip(&fleet_checks)
                .map(|(again, first)| if first.met() { again } else { again.repeated_after(first) })
                .collect();
        }
        ratios.extend(fleet_checks);
        let report = BenchReport {
            filesystem: filesystem.to_owned(),
            ratios,
            sizes: self.sizes.clone(),
            rounds: self.rounds,
            register_rounds: self.register_rounds(),
            quick,
            figures,
            contention,
        };
        Ok(RunOutcome { report, watch })
    }

    /// Times each of `invocations` once a round, the order rotating every
    /// round so that none always runs first, over one warm-up round and
    /// `rounds` counted ones: their samples, in the order given.
    fn time_in_rounds<const N: usize>(&self, invocations: [&Invocation; N]) -> anyhow::Result<[Samples; N]> {
        let mut samples: [Samples; N] = std::array::from_fn(|_| Samples::default());
        for round in 0..=self.rounds {
            for index in rotated(N, round) {
                let elapsed = invocations[index].time_once()?;
                if round > 0 {
                    samples[index].push(elapsed);
                }
            }
        }
        Ok(samples)
    }

    /// One frame of roster-top's view of `TOP_REDRAW_SESSIONS` sessions on
    /// a 200×50 screen, drawn off-screen by the release build of the
    /// `frame_cost` example (roster-top's own drawing code, built as the
    /// tool is).
    fn measure_top_frame(&self) -> anyhow::Result<Figure> {
        let program = ::tests::workspace::build_example(Profile::Release, "roster-top", "frame_cost")?;
        let rounds = (self.rounds.max(1) * 10).to_string();
        let sessions = TOP_REDRAW_SESSIONS.to_string();
        let arguments = [sessions.as_str(), "200", "50", rounds.as_str()];
        let output =
            std::process::Command::new(&program).args(arguments).output().context("run frame_cost")?;
        if !output.status.success() {
            bail!("{} failed: {}", program.display(), String::from_utf8_lossy(&output.stderr));
        }
        let mut samples = Samples::default();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let nanos: u64 = line.trim().parse().with_context(|| format!("frame_cost printed {line:?}"))?;
            samples.push(Duration::from_nanos(nanos));
        }
        Ok(Figure {
            name: TOP_REDRAW,
            records: Some(TOP_REDRAW_SESSIONS),
            samples,
            reproduce: format!("{} {}", program.display(), arguments.join(" ")),
        })
    }

    /// Every record with a state, as the state hook leaves them once the
    /// sessions have run a tool or stopped.
    fn seed_live_registries(&self, identities: &[OwnerIdentity]) -> anyhow::Result<LiveRegistries> {
        let mut by_size = Vec::new();
        for &size in &self.sizes {
            progress(&format!("seeding a registry of {} live records with states", thousands(size)));
            let registry = SeededRegistry::create(&self.scratch.join(format!("live-{size}")))?;
            for (ordinal, identity) in identities[..size].iter().enumerate() {
                let record = realistic_record(identity, ordinal, &self.work_directory)?;
                registry.write(&record)?;
                registry.write_state(&record, &realistic_state(&record, ordinal))?;
            }
            by_size.push((size, registry));
        }
        Ok(LiveRegistries { by_size })
    }

    /// `--quiet`: the notes a listing says on stderr (why it is empty,
    /// what is hidden) are not what is measured, and a timed run must say
    /// nothing on stderr.
    fn list_invocation(&self, registry: &SeededRegistry) -> Invocation {
        Invocation::new(self.tool("roster-list"))
            .arg("--dir")
            .arg(&registry.root)
            .args(["--format", "json", "--quiet"])
    }

    fn list_text_invocation(&self, registry: &SeededRegistry) -> Invocation {
        Invocation::new(self.tool("roster-list")).arg("--dir").arg(&registry.root).arg("--quiet")
    }

    /// `roster-list --all --format json` over `LARGE_REGISTRY` records and
    /// over a quarter of them: peak memory, and time per record. The owners
    /// are dead (a pid_max of 32,768 allows no 100,000 live processes), so
    /// `--all` lists every row.
    fn measure_large_listing(&self, dead: &[OwnerIdentity]) -> anyhow::Result<Vec<RatioCheck>> {
        let quarter = LARGE_REGISTRY / 4;
        let mut per_record = Vec::new();
        let mut peak = 0;
        for size in [quarter, LARGE_REGISTRY] {
            progress(&format!("seeding {} records for the large listing", thousands(size)));
            let registry = SeededRegistry::create(&self.scratch.join(format!("large-{size}")))?;
            for ordinal in 0..size {
                // Pids above any pid_max: no process can ever have them.
                let mut identity = dead[ordinal % dead.len()].clone();
                identity.pid = owner_liveness::Pid::new(4_300_000 + ordinal as u32).context("a pid")?;
                registry.write(&realistic_record(&identity, ordinal, &self.work_directory)?)?;
            }
            let list = self.list_invocation(&registry).arg("--all");
            let mut samples = Samples::default();
            for round in 0..=self.rounds.min(5) {
                let (elapsed, memory) = list.time_and_peak_memory()?;
                if round > 0 {
                    samples.push(elapsed);
                    if size == LARGE_REGISTRY {
                        peak = peak.max(memory);
                    }
                }
            }
            per_record.push(samples.median().as_secs_f64() * 1e6 / size as f64);
            std::fs::remove_dir_all(&registry.root)?;
        }
        Ok(vec![
            RatioCheck::new(
                format!("list --all --format json, {} records: peak memory", thousands(LARGE_REGISTRY)),
                peak as f64 / (1024.0 * 1024.0),
                LARGE_LISTING_MEMORY_MIB,
                "MiB",
                Some(1.0),
            ),
            RatioCheck::new(
                format!(
                    "list time per record, {} vs {} records",
                    thousands(LARGE_REGISTRY),
                    thousands(quarter)
                ),
                per_record[1],
                per_record[0],
                "µs",
                Some(LINEAR_LIMIT),
            ),
        ])
    }

    /// `cat` over exactly the record files and their state files (what a
    /// listing reads), one process, names as arguments.
    fn cat_invocation(&self, registry: &SeededRegistry) -> anyhow::Result<Invocation> {
        let names = registry.record_file_names()?;
        let records = names.iter().map(|name| Path::new(registry_core::SESSIONS).join(name));
        let states = names.iter().map(|name| Path::new(registry_core::STATES).join(name));
        Ok(Invocation::new(&self.cat)
            .args(records.chain(states))
            .in_directory(&registry.root)
            .shown_as(CAT_RECORDS_AND_STATES))
    }

    /// `roster-list` of a registry with no record of its own, in a home
    /// where Claude Code keeps a session file for each of the live owners
    /// (docs/contract.md §6.5), against `cat` of those files.
    fn measure_adopted_listing(&self, identities: &[OwnerIdentity]) -> anyhow::Result<Vec<Figure>> {
        let size = *self.sizes.last().expect("sizes are listed");
        progress(&format!("timing roster-list of {} sessions Claude Code keeps, and cat", thousands(size)));
        let home = self.scratch.join("adopted-home");
        let sessions = home.join(".claude/sessions");
        std::fs::create_dir_all(&sessions)?;
        std::fs::set_permissions(&sessions, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        let machine = owner_liveness::read_machine().context("this machine's id")?;
        let machine_id =
            machine.strip_prefix("machine-id:").context("a machine-id, not a hostname")?.to_owned();
        let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as u64;
        let mut names = Vec::with_capacity(size);
        for (ordinal, identity) in identities[..size].iter().enumerate() {
            let pid = identity.pid.get();
            let file = serde_json::json!({
                "pid": pid, "sessionId": format!("adopted-{ordinal:05}-0000-0000-0000-000000000000"),
                "cwd": self.work_directory, "startedAt": started, "procStart": identity.start_ticks.to_string(),
                "version": "2.1.332", "peerProtocol": 1, "peerFeatures": ["notify_idle"], "kind": "interactive",
                "entrypoint": "cli", "pidDomain": format!("linux:{machine_id}:pid:[{}]", identity.pid_ns),
                "messagingSocketPath": format!("/tmp/cc-socks/{pid}.sock"), "name": format!("app-{ordinal}"),
                "nameSource": "derived", "status": if ordinal % 3 == 0 { "busy" } else { "idle" },
                "updatedAt": started, "statusUpdatedAt": started,
            });
            let name = format!("{pid}.json");
            std::fs::write(sessions.join(&name), serde_json::to_vec(&file)?)?;
            names.push(name);
        }
        let registry = SeededRegistry::create(&self.scratch.join("adopted-registry"))?;
        let list = Invocation::new(self.tool("roster-list"))
            .arg("--dir")
            .arg(&registry.root)
            .args(["--format", "json", "--quiet"])
            .env("HOME", &home);
        let cat = Invocation::new(&self.cat).args(&names).in_directory(&sessions).shown_as(CAT_ADOPTED);
        let [list_samples, cat_samples] = self.time_in_rounds([&list, &cat])?;
        Ok(vec![
            Figure {
                name: LIST_ADOPTED,
                records: Some(size),
                samples: list_samples,
                reproduce: list.shell_line(),
            },
            Figure {
                name: CAT_ADOPTED,
                records: Some(size),
                samples: cat_samples,
                reproduce: cat.shell_line(),
            },
        ])
    }

    /// `roster-top --summary`: a status bar asks it every few seconds,
    /// over the same registry the listing reads.
    fn summary_invocation(&self, registry: &SeededRegistry) -> Invocation {
        Invocation::new(self.tool("roster-top"))
            .arg("--dir")
            .arg(&registry.root)
            .args(["--summary", "--quiet"])
    }

    fn measure_list_and_cat(&self, live: &LiveRegistries) -> anyhow::Result<Vec<Figure>> {
        progress("timing roster-list (JSON and text), roster-top --summary and cat, records with states");
        let mut summary_samples = vec![Samples::default(); self.sizes.len()];
        let mut list_samples = vec![Samples::default(); self.sizes.len()];
        let mut cat_samples = vec![Samples::default(); self.sizes.len()];
        let mut list_text_samples = vec![Samples::default(); self.sizes.len()];
        for round in 0..=self.rounds {
            for index in rotated(self.sizes.len(), round) {
                let size = self.sizes[index];
                let registry = live.get(size);
                let list = self.list_invocation(registry).time_once()?;
                let list_text = self.list_text_invocation(registry).time_once()?;
                let summary = self.summary_invocation(registry).time_once()?;
                // `cat` without arguments would read stdin: no figure at 0.
                let cat = if size > 0 { Some(self.cat_invocation(registry)?.time_once()?) } else { None };
                if round > 0 {
                    summary_samples[index].push(summary);
                    list_text_samples[index].push(list_text);
                    list_samples[index].push(list);
                    if let Some(cat) = cat {
                        cat_samples[index].push(cat);
                    }
                }
            }
        }
        let mut figures = Vec::new();
        for (index, &size) in self.sizes.iter().enumerate() {
            let registry = live.get(size);
            figures.push(Figure {
                name: LIST_JSON,
                records: Some(size),
                samples: list_samples[index].clone(),
                reproduce: self.list_invocation(registry).shell_line(),
            });
            figures.push(Figure {
                name: LIST_TEXT,
                records: Some(size),
                samples: list_text_samples[index].clone(),
                reproduce: self.list_text_invocation(registry).shell_line(),
            });
            figures.push(Figure {
                name: TOP_SUMMARY,
                records: Some(size),
                samples: summary_samples[index].clone(),
                reproduce: self.summary_invocation(registry).shell_line(),
            });
            if size > 0 {
                figures.push(Figure {
                    name: CAT_RECORDS_AND_STATES,
                    records: Some(size),
                    samples: cat_samples[index].clone(),
                    reproduce: self.cat_invocation(registry)?.shell_line(),
                });
            }
        }
        Ok(figures)
    }

    /// A Claude Code PostToolUse payload, as captured from a real one (see
    /// tests/data/harness-captures/state-events), for the session of
    /// `record`: a Bash call whose output runs to a few KiB.
    fn write_post_tool_use_payload(&self, record: &registry_core::Record) -> anyhow::Result<PathBuf> {
        let session_id = record.session_id.as_deref().context("the seeded record has a session id")?;
        let stdout: String = (0..64)
            .map(|test| format!("test state::update::tests::case_{test:02} ... ok\n"))
            .chain(std::iter::once(
                "\ntest result: ok. 64 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n".to_owned(),
            ))
            .collect();
        let payload = serde_json::json!({
            "session_id": session_id,
            "transcript_path": format!("/home/dev/.claude/projects/-home-dev-src-app/{session_id}.jsonl"),
            "cwd": self.work_directory,
            "prompt_id": "6ce1cdbf-04e2-46da-ac5a-4025dc15083e",
            "permission_mode": "default",
            "effort": {"level": "medium"},
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {
                "command": "cargo test -p registry-core state:: 2>&1 | tail -n 80",
                "description": "Run the state tests",
            },
            "tool_response": {
                "stdout": stdout,
                "stderr": "",
                "interrupted": false,
                "isImage": false,
                "noOutputExpected": false,
            },
            "tool_use_id": "toolu_01JZ8kQm4V7sX2rT9bN3cH5e",
            "duration_ms": 4180,
        });
        let path = self.scratch.join("post-tool-use.json");
        std::fs::write(&path, serde_json::to_vec(&payload)?)?;
        Ok(path)
    }

    /// A Claude Code UserPromptSubmit payload, as captured from a real one
    /// (see tests/data/harness-captures/state-events), for the session of
    /// `record`, saved as `<name>.json` in the scratch directory.
    fn write_user_prompt_submit_payload(
        &self,
        record: &registry_core::Record,
        name: &str,
    ) -> anyhow::Result<PathBuf> {
        let session_id = record.session_id.as_deref().context("the seeded record has a session id")?;
        let payload = serde_json::json!({
            "session_id": session_id,
            "transcript_path": format!("/home/dev/.claude/projects/-home-dev-src-app/{session_id}.jsonl"),
            "cwd": &*record.cwd,
            "prompt_id": "6ce1cdbf-04e2-46da-ac5a-4025dc15083e",
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "run the state tests and fix what fails",
        });
        let path = self.scratch.join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_vec(&payload)?)?;
        Ok(path)
    }

    /// The state hook Claude Code runs at `event`, into `registry`, its
    /// payload read from `payload`.
    fn state_hook_invocation(&self, registry: &SeededRegistry, event: &str, payload: &Path) -> Invocation {
        Invocation::new(self.tool("roster-state"))
            .args(["--hook", "claude-code", "--event", event, "--dir"])
            .arg(&registry.root)
            .stdin_from(payload)
    }

    /// `roster-state` as Claude Code runs it after every tool call, for a
    /// live session with a state already, in a registry of that one
    /// session and in each live registry (the same owner's record in all of
    /// them), with `/bin/true` timed in the same rounds as its floor. In
    /// the registry of one session the same hook also runs at a delivery
    /// event (UserPromptSubmit) with nothing queued for the session, in
    /// the same rounds: what a delivery event costs when nothing waits.
    /// Hook mode exits 0 even when it fails, so every run is checked to
    /// have replaced the state file with a later event's. Like
    /// registrations, it takes a few milliseconds and gets
    /// `REGISTER_ROUNDS_FACTOR` times the runs.
    fn measure_state_hook(
        &self,
        live: &LiveRegistries,
        owner: &OwnerIdentity,
    ) -> anyhow::Result<Vec<Figure>> {
        progress(
            "timing roster-state --hook claude-code (PostToolUse, and UserPromptSubmit with nothing queued) \
             and /bin/true",
        );
        let record = realistic_record(owner, 0, &self.work_directory)?;
        let one_session = SeededRegistry::create(&self.scratch.join("one-session"))?;
        one_session.write(&record)?;
        one_session.write_state(&record, &realistic_state(&record, 0))?;
        let mut registries = vec![(ONE_SESSION, &one_session)];
        registries.extend(self.sizes.iter().filter(|&&size| size > 0).map(|&size| (size, live.get(size))));
        let payload = self.write_post_tool_use_payload(&record)?;
        let delivery_payload = self.write_user_prompt_submit_payload(&record, "user-prompt-submit")?;
        let record_name = registry_core::RecordName::of_identity(owner);
        let state_name = record_name.file_name();
        // Each timed hook: its figure, its registry's size, the registry,
        // the invocation. The delivery event comes right after the state
        // event it is compared with, and the order rotates every round.
        let mut timed: Vec<(&'static str, usize, &SeededRegistry, Invocation)> = registries
            .iter()
            .map(|&(size, registry)| {
                (STATE_HOOK, size, registry, self.state_hook_invocation(registry, "PostToolUse", &payload))
            })
            .collect();
        timed.insert(
            1,
            (
                DELIVERY_HOOK,
                ONE_SESSION,
                &one_session,
                self.state_hook_invocation(&one_session, "UserPromptSubmit", &delivery_payload),
            ),
        );
        let queue = one_session.root.join(registry_core::MESSAGES).join(record_name.to_string());
        let mut hook_samples = vec![Samples::default(); timed.len()];
        let true_program = Invocation::new(&self.true_program);
        let mut true_samples = Samples::default();
        for round in 0..=self.register_rounds() {
            for index in rotated(timed.len(), round) {
                let (_, _, registry, invocation) = &timed[index];
                let state_file = registry.states.join(&state_name);
                let before = last_event_order(&state_file);
                let elapsed = invocation.time_once()?;
                let after = last_event_order(&state_file);
                if after.is_none() || after <= before {
                    bail!(
                        "`{}` did not update {} (last event {before:?}, then {after:?}); see {}/hook-errors.log",
                        invocation.shell_line(),
                        state_file.display(),
                        registry.root.display()
                    );
                }
                if round > 0 {
                    hook_samples[index].push(elapsed);
                }
            }
            let true_time = true_program.time_once()?;
            if round > 0 {
                true_samples.push(true_time);
            }
        }
        // Nothing was ever queued: every delivery event found no queue.
        if queue.exists() {
            bail!("{} exists, but no message was sent to the session", queue.display());
        }
        let mut figures: Vec<Figure> = timed
            .iter()
            .zip(hook_samples)
            .map(|((name, size, _, invocation), samples)| Figure {
                name,
                records: Some(*size),
                samples,
                reproduce: invocation.shell_line(),
            })
            .collect();
        figures.push(Figure {
            name: TRUE_BESIDE_STATE_HOOK,
            records: None,
            samples: true_samples,
            reproduce: true_program.shell_line(),
        });
        std::fs::remove_dir_all(&one_session.root)?;
        Ok(figures)
    }

    /// `roster-send --to PID` to a live session that accepts messages (the
    /// `.roster.toml` of the directory its record names auto-arms it), in a
    /// registry of that one session and in the largest live registry,
    /// against `roster-register --pid` of a fresh owner into the same
    /// registries in the same rounds, the order rotating every round.
    ///
    /// Every send is checked to have queued a new message file. Outside the
    /// timed part, each round then hands the message over through the
    /// delivery hook (UserPromptSubmit), checked to leave nothing pending,
    /// so that every send finds a queue with nothing waiting (the bound is
    /// 64 pending), and removes the round's registered records, so that
    /// the registries keep their size. The sends run with a configuration
    /// directory of their own: a veto in the user's configuration would
    /// close every session. Like registrations, a send gets
    /// `REGISTER_ROUNDS_FACTOR` times the rounds.
    ///
    /// The session is this process's own: a message goes only to a hook
    /// its session's owner is an ancestor of (docs/contract.md §6.6), and
    /// the bench starts every hook it times. Its record joins the largest
    /// registry for the measurement (a registry of 10,000 others) and
    /// leaves it afterwards, with its state and queue.
    fn measure_send(&self, live: &LiveRegistries) -> anyhow::Result<Vec<Figure>> {
        progress("timing roster-send to a session that accepts messages, and roster-register --pid");
        let largest = *self.sizes.last().expect("sizes are listed");
        let own_pid = owner_liveness::Pid::new(std::process::id()).context("this process's pid")?;
        let target = &owner_liveness::capture_identity(own_pid).context("capture this process's identity")?;
        let ordinal = largest;
        let opted_in = self.work_directory.join("accepts-messages");
        std::fs::create_dir_all(&opted_in)?;
        let config = opted_in.join(".roster.toml");
        std::fs::write(&config, AUTO_ARM_CONFIG)?;
        std::fs::set_permissions(&config, std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
        let record = realistic_record(target, ordinal, &opted_in)?;
        let one_session = SeededRegistry::create(&self.scratch.join("send-one-session"))?;
        one_session.write_state(&record, &realistic_state(&record, ordinal))?;
        let registries = [(ONE_SESSION, &one_session), (largest, live.get(largest))];
        for (_, registry) in registries {
            registry.write(&record)?;
        }
        let no_user_configuration = self.scratch.join("no-user-configuration");
        let record_name = registry_core::RecordName::of_identity(target);
        let queues: Vec<PathBuf> = registries
            .iter()
            .map(|(_, registry)| registry.root.join(registry_core::MESSAGES).join(record_name.to_string()))
            .collect();
        let sends: Vec<Invocation> = registries
            .iter()
            .map(|(_, registry)| {
                Invocation::new(self.tool("roster-send"))
                    .arg("--dir")
                    .arg(&registry.root)
                    .arg("--to")
                    .arg(target.pid.to_string())
                    .args(["--ttl", "1h", SEND_TEXT])
                    .env("XDG_CONFIG_HOME", &no_user_configuration)
            })
            .collect();
        let delivery_payload = self.write_user_prompt_submit_payload(&record, "send-user-prompt-submit")?;
        let deliveries: Vec<Invocation> = registries
            .iter()
            .map(|(_, registry)| {
                // As the session's own hook: its owner (this process) is
                // the hook's parent, and named, as a harness exports it.
                self.state_hook_invocation(registry, "UserPromptSubmit", &delivery_payload)
                    .env("XDG_CONFIG_HOME", &no_user_configuration)
                    .env("ROSTER_SESSION_PID", target.pid.to_string())
            })
            .collect();

        let rounds = self.register_rounds();
        let registrants = OwnerPool::fork(rounds + 1)?;
        let registrant_identities = registrants.identities()?;
        let mut send_samples = vec![Samples::default(); registries.len()];
        let mut register_samples = vec![Samples::default(); registries.len()];
        let mut register_reproduce = vec![String::new(); registries.len()];
        let mut handover_samples = vec![Samples::default(); registries.len()];
        let mut nothing_waiting_samples = vec![Samples::default(); registries.len()];
        // One fresh owner per round: `rounds + 1` of them.
        for (round, registrant) in registrant_identities.iter().enumerate() {
            // Even: a registration, odd: a send, into registry `index / 2`.
            for index in rotated(2 * registries.len(), round) {
                let (which, registry) = (index / 2, registries[index / 2].1);
                if index % 2 == 0 {
                    let register = self.register_invocation(registry, registrant, round);
                    let elapsed = register.time_once()?;
                    if round > 0 {
                        register_samples[which].push(elapsed);
                    }
                    register_reproduce[which] = register.shell_line();
                } else {
                    let before = queue_entries(&queues[which])?;
                    let elapsed = sends[which].time_once()?;
                    let after = queue_entries(&queues[which])?;
                    let new: Vec<&String> = after.difference(&before).collect();
                    if !matches!(new.as_slice(), [name] if is_pending_message(name)) {
                        bail!(
                            "`{}` queued no message in {} (new entries: {new:?})",
                            sends[which].shell_line(),
                            queues[which].display()
                        );
                    }
                    if round > 0 {
                        send_samples[which].push(elapsed);
                    }
                }
            }
            // The delivery hook hands the message over, then runs again
            // with nothing waiting: the same process in the same round,
            // its floor.
            for (which, (_, registry)) in registries.iter().enumerate() {
                let pending = |queue: &Path| -> anyhow::Result<Vec<String>> {
                    Ok(queue_entries(queue)?.into_iter().filter(|name| is_pending_message(name)).collect())
                };
                let handing_over = deliveries[which].time_once()?;
                // A hook leaves a message waiting when claiming it would
                // not fit its time budget (a busy machine): the next
                // event takes it. That round has no handover to time.
                let mut handed_over = true;
                let mut left = pending(&queues[which])?;
                for _ in 0..3 {
                    if left.is_empty() {
                        break;
                    }
                    handed_over = false;
                    deliveries[which].time_once()?;
                    left = pending(&queues[which])?;
                }
                if !left.is_empty() {
                    bail!(
                        "`{}` left {left:?} pending in {}; see {}/hook-errors.log",
                        deliveries[which].shell_line(),
                        queues[which].display(),
                        registry.root.display()
                    );
                }
                let state_file = registry.states.join(record_name.file_name());
                let before = last_event_order(&state_file);
                let nothing_waiting = deliveries[which].time_once()?;
                let after = last_event_order(&state_file);
                if after.is_none() || after <= before {
                    bail!(
                        "`{}` did not update {}; see {}/hook-errors.log",
                        deliveries[which].shell_line(),
                        state_file.display(),
                        registry.root.display()
                    );
                }
                if round > 0 && handed_over {
                    handover_samples[which].push(handing_over);
                    nothing_waiting_samples[which].push(nothing_waiting);
                }
                unregister(registry, registrant, &session_id_for(1_000_000 + round, registrant))?;
            }
        }
        drop(registrants);

        let mut figures = Vec::new();
        for (which, (size, _)) in registries.iter().enumerate() {
            figures.push(Figure {
                name: SEND,
                records: Some(*size),
                samples: send_samples[which].clone(),
                reproduce: sends[which].shell_line(),
            });
            figures.push(Figure {
                name: REGISTER_BESIDE_SEND,
                records: Some(*size),
                samples: register_samples[which].clone(),
                reproduce: register_reproduce[which].clone(),
            });
            figures.push(Figure {
                name: DELIVERY_WITH_MESSAGE,
                records: Some(*size),
                samples: handover_samples[which].clone(),
                reproduce: deliveries[which].shell_line(),
            });
            figures.push(Figure {
                name: DELIVERY_NOTHING_WAITING,
                records: Some(*size),
                samples: nothing_waiting_samples[which].clone(),
                reproduce: deliveries[which].shell_line(),
            });
        }
        let largest_registry = live.get(largest);
        unregister(largest_registry, target, &session_id_for(ordinal, target))?;
        std::fs::remove_file(largest_registry.states.join(record_name.file_name()))?;
        std::fs::remove_dir_all(&queues[1])?;
        std::fs::remove_dir_all(&one_session.root)?;
        Ok(figures)
    }

    fn register_invocation(
        &self,
        registry: &SeededRegistry,
        identity: &OwnerIdentity,
        round: usize,
    ) -> Invocation {
        Invocation::new(self.tool("roster-register"))
            .arg("--dir")
            .arg(&registry.root)
            .arg("--pid")
            .arg(identity.pid.to_string())
            .args(["--harness", "claude-code", "--agent", "bench", "--session-id"])
            .arg(session_id_for(1_000_000 + round, identity))
            .arg("--cwd")
            .arg(&self.work_directory)
            .arg("--quiet")
    }

    /// A Claude Code SessionStart payload naming a fresh session.
    fn write_hook_payload(&self, identity: &OwnerIdentity, round: usize) -> anyhow::Result<PathBuf> {
        let session_id = session_id_for(2_000_000 + round, identity);
        let payload = serde_json::json!({
            "session_id": session_id,
            "transcript_path": format!("/home/dev/.claude/projects/-home-dev-src-app/{session_id}.jsonl"),
            "cwd": self.work_directory,
            "hook_event_name": "SessionStart",
            "source": "startup",
        });
        let path = self.scratch.join(format!("payload-{round}.json"));
        std::fs::write(&path, serde_json::to_vec_pretty(&payload)?)?;
        Ok(path)
    }

    fn hook_register_invocation(
        &self,
        registry: &SeededRegistry,
        identity: &OwnerIdentity,
        payload: &Path,
    ) -> Invocation {
        Invocation::new(self.tool("roster-register"))
            .args(["--hook", "claude-code", "--dir"])
            .arg(&registry.root)
            .arg("--pid")
            .arg(identity.pid.to_string())
            .stdin_from(payload)
    }

    /// Each round registers a fresh owner (a session start, not a refresh)
    /// in every registry, first by flags, then as a hook. A registration
    /// takes a few milliseconds, so it gets `REGISTER_ROUNDS_FACTOR` times the
    /// rounds: its ratio bound is the tightest, and a few milliseconds of
    /// another process's disk flush weigh more on it. The registered
    /// records are removed afterwards, so that the registries keep their
    /// sizes (the measurement may be repeated).
    fn measure_register(&self, live: &LiveRegistries) -> anyhow::Result<Vec<Figure>> {
        progress("timing roster-register, by flags and as a claude-code hook, and /bin/true");
        let rounds = self.register_rounds();
        // Owners registered during the timed rounds, one per round and mode.
        let registrants = OwnerPool::fork(2 * (rounds + 1))?;
        let identities = registrants.identities()?;
        let (flag_owners, hook_owners) = identities.split_at(rounds + 1);
        let mut flag_samples = vec![Samples::default(); self.sizes.len()];
        let mut hook_samples = vec![Samples::default(); self.sizes.len()];
        let mut hook_reproduce = vec![String::new(); self.sizes.len()];
        let mut flag_reproduce = vec![String::new(); self.sizes.len()];
        // The floor of the hook's figure is timed in the same rounds, right
        // after the hooks, so that both see the machine in the same state.
        let true_program = Invocation::new(&self.true_program);
        let mut true_samples = Samples::default();
        for round in 0..=rounds {
            let payload = self.write_hook_payload(&hook_owners[round], round)?;
            // Rotating the order keeps any one size from always running
            // right after another's directory fsync.
            for index in rotated(self.sizes.len(), round) {
                let size = self.sizes[index];
                let registry = live.get(size);
                let by_flags = self.register_invocation(registry, &flag_owners[round], round);
                let as_hook = self.hook_register_invocation(registry, &hook_owners[round], &payload);
                let flag_time = by_flags.time_once()?;
                let hook_time = as_hook.time_once()?;
                // Hook mode exits 0 and stays silent on stdout even when it
                // fails, so check that the record is really there.
                let record = registry
                    .sessions
                    .join(registry_core::RecordName::of_identity(&hook_owners[round]).file_name());
                if !record.is_file() {
                    bail!(
                        "`{}` wrote no record; see {}/hook-errors.log",
                        as_hook.shell_line(),
                        registry.root.display()
                    );
                }
                if round > 0 {
                    flag_samples[index].push(flag_time);
                    hook_samples[index].push(hook_time);
                }
                flag_reproduce[index] = by_flags.shell_line();
                hook_reproduce[index] = as_hook.shell_line();
            }
            let true_time = true_program.time_once()?;
            if round > 0 {
                true_samples.push(true_time);
            }
        }
        for &size in &self.sizes {
            let registry = live.get(size);
            for (round, (by_flags, as_hook)) in flag_owners.iter().zip(hook_owners).enumerate() {
                unregister(registry, by_flags, &session_id_for(1_000_000 + round, by_flags))?;
                unregister(registry, as_hook, &session_id_for(2_000_000 + round, as_hook))?;
            }
        }
        drop(registrants);
        let mut figures = Vec::new();
        for (index, &size) in self.sizes.iter().enumerate() {
            figures.push(Figure {
                name: REGISTER_BY_FLAGS,
                records: Some(size),
                samples: flag_samples[index].clone(),
                reproduce: flag_reproduce[index].clone(),
            });
            figures.push(Figure {
                name: REGISTER_AS_HOOK,
                records: Some(size),
                samples: hook_samples[index].clone(),
                reproduce: hook_reproduce[index].clone(),
            });
        }
        figures.push(Figure {
            name: TRUE_BESIDE_REGISTER,
            records: None,
            samples: true_samples,
            reproduce: true_program.shell_line(),
        });
        Ok(figures)
    }

    fn register_rounds(&self) -> usize {
        self.rounds * REGISTER_ROUNDS_FACTOR
    }

    /// Writers registering distinct live owners into one registry at once,
    /// each a whole process: how many per second, and the longest any one
    /// waited (the lock included).
    ///
    /// The same writers also register the same owners each into a registry
    /// of its own, where no two processes ever want one lock: the same
    /// processes doing the same work, so what remains of their tail is the
    /// scheduler's (eight processes started at once on the machine's cores)
    /// and what the shared registry adds is the lock's. The two runs take
    /// turns, half the registrations at a time, so a machine that changes
    /// pace during the measurement shifts both.
    fn measure_contention(
        &self,
        owners: &OwnerPool,
        per_writer: usize,
        attempt: usize,
    ) -> anyhow::Result<Contention> {
        progress(&format!(
            "timing {CONTENDING_WRITERS} concurrent writers × {per_writer} registrations, into one registry \
             and into a registry each"
        ));
        let total = CONTENDING_WRITERS * per_writer;
        if owners.count() < total {
            bail!("{total} contended registrations need as many owners, only {} forked", owners.count());
        }
        // Fresh registries for every attempt: a repeat registers the same
        // owners, which would otherwise be refreshes.
        let shared = SeededRegistry::create(&self.scratch.join(format!("contention-{attempt}")))?;
        let separate: Vec<SeededRegistry> = (0..CONTENDING_WRITERS)
            .map(|writer| {
                SeededRegistry::create(&self.scratch.join(format!("contention-{attempt}-writer-{writer}")))
            })
            .collect::<anyhow::Result<_>>()?;
        let owner_pids: Vec<String> = (0..total).map(|index| owners.get(index).to_string()).collect();
        let registration = |registry: &SeededRegistry, writer: usize, index: usize| {
            Invocation::new(self.tool("roster-register"))
                .arg("--dir")
                .arg(&registry.root)
                .args(["--pid", &owner_pids[writer * per_writer + index], "--harness", "claude-code"])
                .arg("--session-id")
                .arg(format!("contention-{writer}-{index}"))
                .arg("--cwd")
                .arg(&self.work_directory)
                .arg("--quiet")
        };
        let mut contended = ConcurrentRuns::default();
        let mut uncontended = ConcurrentRuns::default();
        let halves = [0..per_writer / 2, per_writer / 2..per_writer];
        for half in halves {
            contended
                .extend(concurrent_runs(half.clone(), |writer, index| registration(&shared, writer, index)));
            uncontended.extend(concurrent_runs(half, |writer, index| {
                registration(&separate[writer], writer, index)
            }));
        }
        let present = shared.record_file_names()?.len();
        let mut shown_failures: Vec<String> = contended.failures.iter().take(5).cloned().collect();
        if present != contended.latencies.durations.len() {
            shown_failures.push(format!(
                "{} registrations succeeded but {present} records are present",
                contended.latencies.durations.len()
            ));
        }
        if let Some(failure) = uncontended.failures.first() {
            bail!("a registration into a registry of its own failed: {failure}");
        }
        Ok(Contention {
            writers: CONTENDING_WRITERS,
            registrations_per_writer: per_writer,
            succeeded: contended.latencies.durations.len(),
            failed: contended.failures.len() + usize::from(present != contended.latencies.durations.len()),
            failures: shown_failures,
            wall: contended.wall,
            latencies: contended.latencies,
            uncontended: uncontended.latencies,
        })
    }

    /// Prune of all-dead registries against `rm` of the same files, and
    /// against the file operations of a prune alone (the release build of
    /// the `prune_floor` example: the kernel's share of a prune on this
    /// machine); each starts from a freshly seeded directory every run.
    fn measure_prune_and_rm(&self, dead_identities: &[OwnerIdentity]) -> anyhow::Result<Vec<Figure>> {
        let floor_program = ::tests::workspace::build_example(Profile::Release, "tests", "prune_floor")?;
        progress("timing roster-prune, rm and a prune's file operations alone over dead records");
        let sizes: Vec<usize> = self.sizes.iter().copied().filter(|&size| size > 0).collect();
        let mut prune_samples = vec![Samples::default(); sizes.len()];
        let mut rm_samples = vec![Samples::default(); sizes.len()];
        let mut floor_samples = vec![Samples::default(); sizes.len()];
        let mut prune_reproduce = vec![String::new(); sizes.len()];
        let mut rm_reproduce = vec![String::new(); sizes.len()];
        let mut floor_reproduce = vec![String::new(); sizes.len()];
        for round in 0..=self.rounds {
            for (index, &size) in sizes.iter().enumerate() {
                let registry = SeededRegistry::create(&self.scratch.join(format!("dead-{size}")))?;

                reseed(&registry, &dead_identities[..size], &self.work_directory)?;
                let prune = Invocation::new(self.tool("roster-prune")).arg("--dir").arg(&registry.root);
                let prune_time = prune.time_once()?;
                let left = registry.record_file_names()?.len();
                if left != 0 {
                    bail!("`{}` left {left} of {size} dead records", prune.shell_line());
                }

                reseed(&registry, &dead_identities[..size], &self.work_directory)?;
                let rm = Invocation::new(&self.rm)
                    .arg("-f")
                    .args(registry.record_file_names()?)
                    .in_directory(&registry.sessions)
                    .shown_as("rm -f *.json");
                let rm_time = rm.time_once()?;

                reseed(&registry, &dead_identities[..size], &self.work_directory)?;
                let floor = Invocation::new(&floor_program).arg(&registry.root);
                let floor_time = floor.time_once()?;
                let left = registry.record_file_names()?.len();
                if left != 0 {
                    bail!("`{}` left {left} of {size} dead records", floor.shell_line());
                }

                if round > 0 {
                    prune_samples[index].push(prune_time);
                    rm_samples[index].push(rm_time);
                    floor_samples[index].push(floor_time);
                }
                prune_reproduce[index] = prune.shell_line();
                rm_reproduce[index] = rm.shell_line();
                floor_reproduce[index] = floor.shell_line();
            }
        }
        let mut figures = Vec::new();
        for (index, &size) in sizes.iter().enumerate() {
            figures.push(Figure {
                name: PRUNE_ALL_DEAD,
                records: Some(size),
                samples: prune_samples[index].clone(),
                reproduce: prune_reproduce[index].clone(),
            });
            figures.push(Figure {
                name: RM_RECORDS,
                records: Some(size),
                samples: rm_samples[index].clone(),
                reproduce: rm_reproduce[index].clone(),
            });
            figures.push(Figure {
                name: PRUNE_FILE_OPERATIONS,
                records: Some(size),
                samples: floor_samples[index].clone(),
                reproduce: floor_reproduce[index].clone(),
            });
        }
        Ok(figures)
    }
}

/// What `CONTENDING_WRITERS` threads found, each running its processes
/// one after another, all threads at once.
#[derive(Default)]
struct ConcurrentRuns {
    latencies: Samples,
    failures: Vec<String>,
    wall: Duration,
}

impl ConcurrentRuns {
    fn extend(&mut self, more: ConcurrentRuns) {
        self.latencies.durations.extend(more.latencies.durations);
        self.failures.extend(more.failures);
        self.wall += more.wall;
    }
}

/// Runs the processes `invocation(writer, index)` for each index in
/// `indices` one after another on each of `CONTENDING_WRITERS` threads,
/// all threads at once, and times every one.
fn concurrent_runs(
    indices: std::ops::Range<usize>,
    invocation: impl Fn(usize, usize) -> Invocation + Sync,
) -> ConcurrentRuns {
    let latencies = Mutex::new(Samples::default());
    let failures = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for writer in 0..CONTENDING_WRITERS {
            let (latencies, failures, invocation, indices) =
                (&latencies, &failures, &invocation, indices.clone());
            scope.spawn(move || {
                for index in indices {
                    match invocation(writer, index).time_once() {
                        Ok(elapsed) => latencies.lock().expect("no writer panics").push(elapsed),
                        Err(error) => failures.lock().expect("no writer panics").push(format!("{error:#}")),
                    }
                }
            });
        }
    });
    ConcurrentRuns {
        wall: started.elapsed(),
        latencies: latencies.into_inner().expect("no writer panicked"),
        failures: failures.into_inner().expect("no writer panicked"),
    }
}

/// `0..count`, starting at `round % count`.
fn rotated(count: usize, round: usize) -> impl Iterator<Item = usize> {
    (0..count).map(move |offset| (round + offset) % count)
}

/// The order of the last event the state file at `path` holds, when it
/// holds one roster wrote.
fn last_event_order(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    Some(registry_core::state::StateFile::parse(&bytes)?.last_event_order)
}

/// The names in the message queue directory `queue` (none when it does
/// not exist yet).
fn queue_entries(queue: &Path) -> anyhow::Result<BTreeSet<String>> {
    match std::fs::read_dir(queue) {
        Ok(entries) => entries
            .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
            .collect::<anyhow::Result<_>>(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(BTreeSet::new()),
        Err(error) => Err(error).with_context(|| format!("read {}", queue.display())),
    }
}

/// Whether `name` in a message queue is a message still waiting
/// (`<seq>-<id>.json`), not a settled one (`<seq>-<id>.done.json`) nor a
/// temporary.
fn is_pending_message(name: &str) -> bool {
    name.ends_with(".json") && !name.ends_with(".done.json") && !name.starts_with('.')
}

/// Removes the record of `identity`, which holds `session_id`, and its
/// session-id index entry from `registry`.
fn unregister(registry: &SeededRegistry, identity: &OwnerIdentity, session_id: &str) -> anyhow::Result<()> {
    let record = registry.sessions.join(registry_core::RecordName::of_identity(identity).file_name());
    std::fs::remove_file(&record).with_context(|| format!("remove {}", record.display()))?;
    let index = registry
        .root
        .join(registry_core::SESSION_IDS)
        .join(registry_core::index_entry_name(&registry_core::SessionId::parse(session_id)?));
    std::fs::remove_file(&index).with_context(|| format!("remove {}", index.display()))
}

/// Empties `sessions/` and writes one record per identity.
fn reseed(registry: &SeededRegistry, identities: &[OwnerIdentity], cwd: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(&registry.sessions)? {
        std::fs::remove_file(entry?.path())?;
    }
    for (ordinal, identity) in identities.iter().enumerate() {
        registry.write(&realistic_record(identity, ordinal, cwd)?)?;
    }
    Ok(())
}

fn samples_of(figures: &[Figure], name: &str, records: Option<usize>) -> Samples {
    figures
        .iter()
        .find(|figure| figure.name == name && figure.records == records)
        .map(|figure| figure.samples.clone())
        .unwrap_or_default()
}

/// Every row judged from the figures, each with the measurement that
/// timed it (and its floor, in the same rounds).
fn ratio_checks(figures: &[Figure], largest: usize) -> Vec<(Measurement, RatioCheck)> {
    let size = thousands(largest);
    let one = thousands(ONE_SESSION);
    let at = |name: &str, records: usize| samples_of(figures, name, Some(records));
    let alone = |name: &str| samples_of(figures, name, None);
    let check = |measurement: Measurement, description: String, ours: Samples, floor: Samples, limit: f64| {
        (measurement, RatioCheck::of_rounds(description, &ours, &floor, Some(limit)))
    };
    use Measurement::*;
    vec![
        check(
            ListAndCat,
            format!("list --format json, {size} records with states, vs cat of records and states"),
            at(LIST_JSON, largest),
            at(CAT_RECORDS_AND_STATES, largest),
            LIST_VERSUS_CAT_LIMIT,
        ),
        check(
            ListAndCat,
            format!("list (text), {size} records with states, vs cat of records and states"),
            at(LIST_TEXT, largest),
            at(CAT_RECORDS_AND_STATES, largest),
            LIST_VERSUS_CAT_LIMIT,
        ),
        check(
            ListAndCat,
            format!("roster-top --summary, {size} records with states, vs cat of records and states"),
            at(TOP_SUMMARY, largest),
            at(CAT_RECORDS_AND_STATES, largest),
            LIST_VERSUS_CAT_LIMIT,
        ),
        check(
            Adopted,
            format!("list --format json of {size} sessions Claude Code keeps vs cat of their files"),
            at(LIST_ADOPTED, largest),
            at(CAT_ADOPTED, largest),
            ADOPTED_LIST_VERSUS_CAT_LIMIT,
        ),
        check(
            Focus,
            format!("focus --print (tmux pane), {size} sessions, vs tmux's list-panes + list-clients"),
            at(focus::FOCUS_PRINT, largest),
            alone(focus::TMUX_QUERIES_BESIDE_FOCUS),
            FOCUS_VERSUS_TMUX_LIMIT,
        ),
        (
            Focus,
            RatioCheck::of_rounds(
                format!("focus --print (tmux pane), {size} sessions, vs /bin/true"),
                &at(focus::FOCUS_PRINT, largest),
                &alone(focus::TRUE_BESIDE_FOCUS),
                None,
            ),
        ),
        check(
            Ended,
            format!(
                "list --ended --format json of {} ended sessions vs cat of their entries",
                thousands(ended::ENDED_ENTRIES)
            ),
            at(ended::LIST_ENDED, ended::ENDED_ENTRIES),
            at(ended::CAT_ENDED, ended::ENDED_ENTRIES),
            ENDED_LIST_VERSUS_CAT_LIMIT,
        ),
        check(
            Prune,
            format!("prune of {size} dead records vs rm"),
            at(PRUNE_ALL_DEAD, largest),
            at(RM_RECORDS, largest),
            PRUNE_VERSUS_RM_LIMIT,
        ),
        (
            Prune,
            RatioCheck::of_rounds(
                format!("a prune's file operations alone, {size} dead records, vs rm"),
                &at(PRUNE_FILE_OPERATIONS, largest),
                &at(RM_RECORDS, largest),
                None,
            ),
        ),
        check(
            Prune,
            format!("prune of {size} dead records vs its file operations alone"),
            at(PRUNE_ALL_DEAD, largest),
            at(PRUNE_FILE_OPERATIONS, largest),
            PRUNE_VERSUS_FILE_OPERATIONS_LIMIT,
        ),
        check(
            Register,
            "register --hook (empty registry) vs /bin/true".to_owned(),
            at(REGISTER_AS_HOOK, 0),
            alone(TRUE_BESIDE_REGISTER),
            HOOK_VERSUS_TRUE_LIMIT,
        ),
        check(
            Register,
            format!("register --pid into {size} vs into empty"),
            at(REGISTER_BY_FLAGS, largest),
            at(REGISTER_BY_FLAGS, 0),
            REGISTER_GROWTH_LIMIT,
        ),
        check(
            Register,
            format!("register --hook into {size} vs into empty"),
            at(REGISTER_AS_HOOK, largest),
            at(REGISTER_AS_HOOK, 0),
            REGISTER_GROWTH_LIMIT,
        ),
        check(
            StateHook,
            format!("state hook (PostToolUse), {one} session, vs /bin/true"),
            at(STATE_HOOK, ONE_SESSION),
            alone(TRUE_BESIDE_STATE_HOOK),
            STATE_HOOK_VERSUS_TRUE_LIMIT,
        ),
        check(
            StateHook,
            format!("state hook (PostToolUse), {size} sessions, vs /bin/true"),
            at(STATE_HOOK, largest),
            alone(TRUE_BESIDE_STATE_HOOK),
            STATE_HOOK_VERSUS_TRUE_LIMIT,
        ),
        check(
            StateHook,
            format!("state hook into {size} vs into {one}"),
            at(STATE_HOOK, largest),
            at(STATE_HOOK, ONE_SESSION),
            STATE_HOOK_GROWTH_LIMIT,
        ),
        check(
            StateHook,
            format!("state hook at a delivery event, nothing queued, vs PostToolUse, {one} session"),
            at(DELIVERY_HOOK, ONE_SESSION),
            at(STATE_HOOK, ONE_SESSION),
            DELIVERY_HOOK_VERSUS_STATE_HOOK_LIMIT,
        ),
        check(
            SendAndDelivery,
            format!("state hook handing over one message vs nothing waiting, {one} session"),
            at(DELIVERY_WITH_MESSAGE, ONE_SESSION),
            at(DELIVERY_NOTHING_WAITING, ONE_SESSION),
            HANDOVER_VERSUS_NOTHING_WAITING_LIMIT,
        ),
        check(
            SendAndDelivery,
            format!("state hook handing over one message vs nothing waiting, {size} sessions"),
            at(DELIVERY_WITH_MESSAGE, largest),
            at(DELIVERY_NOTHING_WAITING, largest),
            HANDOVER_VERSUS_NOTHING_WAITING_LIMIT,
        ),
        check(
            SendAndDelivery,
            format!("send, {one} session, vs register --pid into it"),
            at(SEND, ONE_SESSION),
            at(REGISTER_BESIDE_SEND, ONE_SESSION),
            SEND_VERSUS_REGISTER_LIMIT,
        ),
        check(
            SendAndDelivery,
            format!("send, {size} sessions, vs register --pid into them"),
            at(SEND, largest),
            at(REGISTER_BESIDE_SEND, largest),
            SEND_VERSUS_REGISTER_LIMIT,
        ),
    ]
}

/// Measures again, once, each measurement a missed row of `checks` comes
/// from, when `measure_again` can now (`None` when it cannot), and judges
/// its missed rows by the repeat. The table keeps the first figures.
fn repeat_missed(
    checks: &mut [(Measurement, RatioCheck)],
    figures: &[Figure],
    largest: usize,
    measure_again: impl Fn(Measurement) -> anyhow::Result<Option<Vec<Figure>>>,
) -> anyhow::Result<()> {
    let missed: BTreeSet<Measurement> =
        checks.iter().filter(|(_, check)| !check.met()).map(|(measurement, _)| *measurement).collect();
    for measurement in missed {
        let Some(again) = measure_again(measurement)? else { continue };
        progress(&format!("measured {measurement:?} again: a row of it had missed its target"));
        let mut repeated = figures.to_vec();
        for figure in again {
            match repeated.iter_mut().find(|old| old.name == figure.name && old.records == figure.records) {
                Some(old) => *old = figure,
                None => repeated.push(figure),
            }
        }
        for ((from, check), (_, again)) in checks.iter_mut().zip(ratio_checks(&repeated, largest)) {
            if *from == measurement && !check.met() {
                *check = again.repeated_after(check);
            }
        }
    }
    Ok(())
}

fn contention_checks(contention: &Contention) -> Vec<RatioCheck> {
    let writers = format!("{} writers × {}", contention.writers, contention.registrations_per_writer);
    vec![
        // The same writers, each into a registry of its own, have the tail
        // the scheduler alone gives these processes (reported); what the
        // shared registry adds to it is the lock's share (judged).
        RatioCheck::of_durations(
            format!("{writers}, a registry each: p99 vs median"),
            contention.uncontended.percentile(0.99),
            contention.uncontended.median(),
            None,
        ),
        RatioCheck::of_durations(
            format!("{writers}: p99, one registry vs a registry each"),
            contention.latencies.percentile(0.99),
            contention.uncontended.percentile(0.99),
            Some(CONTENDED_VERSUS_SEPARATE_P99_LIMIT),
        ),
        worst_registration_check(contention, &writers),
        // The worst wait with no lock to share: what of the worst is the
        // scheduler's (reported beside the bound above).
        RatioCheck::of_durations(
            format!("{writers}: worst, one registry vs a registry each"),
            contention.latencies.max(),
            contention.uncontended.max(),
            None,
        ),
    ]
}

/// The name of the filesystem `path` is on, for the report.
fn filesystem_of(path: &Path) -> Option<String> {
    let kind = nix::sys::statfs::statfs(path).ok()?.filesystem_type().0 as i64;
    Some(
        match kind {
            0x0102_1994 => "tmpfs",
            0xEF53 => "ext4",
            0x9123_683E => "btrfs",
            0x5846_5342 => "xfs",
            0x6969 => "nfs",
            0x794C_7630 => "overlayfs",
            _ => return Some(format!("filesystem 0x{kind:x}")),
        }
        .to_owned(),
    )
}

fn print_reproduction(report: &BenchReport) {
    let hyperfine = find_on_path("hyperfine").is_ok();
    println!("reproduce a figure with public tools: `/usr/bin/time -v sh -c '<line>'`, or");
    if hyperfine {
        println!("`hyperfine --warmup 1 '<line>' '<other line>'` to compare two; lines of the last round:");
    } else {
        println!(
            "`hyperfine --warmup 1 '<line>' '<other line>'` (not installed here) to compare two; lines of the last round:"
        );
    }
    for figure in &report.figures {
        let size =
            figure.records.map(|records| format!(", {} records", thousands(records))).unwrap_or_default();
        println!("  {}{size}: {}", figure.name, figure.reproduce);
    }
    println!("(the bench's directories and owners are gone when it ends: seed a registry of your own with");
    println!(
        "`roster-register --pid PID` for each of N live processes; prune and rm need dead records seeded anew)"
    );
}

/// Puts a copy of each tool built in `built` into `into` as `install(1)`
/// and `cp` do, in writes of 128 KiB, and returns `into`: the bench times
/// the tools as a user runs them once installed, not the linker's output.
/// The kernel maps that file in smaller pieces: `roster-register
/// --version` took 81 page faults run from it and 64 from a copy, on
/// every run, about a tenth of a hook's time.
fn install_binaries(built: &Path, into: &Path) -> anyhow::Result<PathBuf> {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    const WRITE_BYTES: usize = 128 * 1024;
    std::fs::create_dir_all(into).with_context(|| format!("create {}", into.display()))?;
    let mut buffer = vec![0u8; WRITE_BYTES];
    for name in crate::codegen::BINARY_NAMES {
        let (from, to) = (built.join(name), into.join(name));
        let mut source = std::fs::File::open(&from).with_context(|| format!("open {}", from.display()))?;
        // A new file each time: one still being run is never rewritten.
        let _ = std::fs::remove_file(&to);
        let mut copy = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(&to)
            .with_context(|| format!("create {}", to.display()))?;
        loop {
            let count = source.read(&mut buffer).with_context(|| format!("read {}", from.display()))?;
            if count == 0 {
                break;
            }
            copy.write_all(&buffer[..count]).with_context(|| format!("write {}", to.display()))?;
        }
    }
    Ok(into.to_owned())
}

/// `target/bench`, created if needed: the saved results, and the sessions'
/// work directory while the bench runs.
fn results_directory() -> anyhow::Result<PathBuf> {
    let directory = target_directory()?.join("bench");
    std::fs::create_dir_all(&directory).with_context(|| format!("create {}", directory.display()))?;
    Ok(directory)
}

/// Every run's report, and whether each target was met in all of them.
fn save_json(outcomes: &[RunOutcome]) -> anyhow::Result<PathBuf> {
    let directory = results_directory()?;
    let seconds =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
    let runs: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|outcome| {
            let mut report = outcome.report.to_json();
            report["watch_targets_met"] = outcome.watch.targets_met().into();
            report["floors_ms"] = floors(&outcome.report)
                .into_iter()
                .map(|(what, median)| (what, median.into()))
                .collect::<serde_json::Map<_, _>>()
                .into();
            report
        })
        .collect();
    let all_met =
        outcomes.iter().all(|outcome| outcome.report.all_targets_met() && outcome.watch.targets_met());
    let bytes = serde_json::to_vec_pretty(&serde_json::json!({ "runs": runs, "all_targets_met": all_met }))?;
    let path = directory.join(format!("bench-{seconds}.json"));
    std::fs::write(&path, &bytes).with_context(|| format!("write {}", path.display()))?;
    std::fs::write(directory.join("latest.json"), &bytes)?;
    Ok(path)
}
