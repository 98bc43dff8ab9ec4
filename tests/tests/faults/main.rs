//! `cargo test -p tests --features faults --test faults -- [--quick] [--only TEXT]`:
//! every system call a tool's main paths make is
//! made to fail in turn (strace's fault injection), with each of the
//! errors a disk, a full quota, a permission, a signal or a resource limit
//! can cause, at its first, second and last call. After each run the rules
//! of docs/contract.md §10 must hold: no panic and no signal death, the documented exit
//! code and one error line (EINTR retried and succeeding), hook mode silent
//! on stdout with exit 0 and the failure in `hook-errors.log`, no torn
//! record, no other session's record changed or lost, no temporary left
//! behind, and a settings file roster-hooks edits holds its old bytes or
//! its new ones. The table says what each run did; any broken rule fails.
//!
//! Without `--quick` the full table runs. `--quick` (what CI runs) injects
//! EINTR and one other error per syscall, rotating through the list, at the
//! first and last call only.

#![forbid(unsafe_code)]

mod scenarios;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, bail};

use clap::Parser;
use scenarios::{Fixture, Scenario, run_plain};
use tests::strace::{SyscallUse, read_log, syscalls_in_scope};
use tests::workspace::{Profile, build_binaries};

/// The errors injected, in table order.
pub const ERRORS: [&str; 7] = ["EIO", "ENOSPC", "EACCES", "EINTR", "EAGAIN", "ENOMEM", "EMFILE"];

/// The fault table's options, given after `--`.
#[derive(Debug, clap::Parser)]
#[command(
    name = "faults",
    about = "Make every system call of every tool path fail in turn and check nothing is lost"
)]
pub struct FaultArgs {
    /// The CI subset: EINTR and one rotating error per syscall, first and last call
    #[arg(long)]
    pub quick: bool,

    /// Only the tool paths whose label contains this (e.g. `register`)
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
}

/// One injected run.
#[derive(Clone, Debug)]
struct Injection {
    scenario: Scenario,
    syscall: String,
    error: &'static str,
    /// `1st`, `2nd` or `last`, and strace's invocation number.
    position: &'static str,
    when: u32,
}

/// What one injected run did.
#[derive(Clone, Debug)]
struct Finding {
    injection: Injection,
    /// `ok` (did its work), `err N` (failed with exit N), `log` (hook mode
    /// failed and logged it).
    result: String,
    problems: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    run(FaultArgs::parse())
}

fn run(args: FaultArgs) -> anyhow::Result<()> {
    let strace = tests::find_or_install_tool("strace")
        .context("the fault table needs strace (apt-get install strace)")?;
    let binaries = build_binaries(Profile::Debug, &tests::workspace::ROSTER_BINARIES)?;
    let scratch = tempfile::Builder::new().prefix("roster-faults-").tempdir()?;
    let fixture = Fixture::create(scratch.path(), &binaries)?;
    let scenarios: Vec<Scenario> = Scenario::ALL
        .into_iter()
        .filter(|scenario| args.only.as_deref().is_none_or(|only| scenario.label().contains(only)))
        .collect();

    let mut injections = Vec::new();
    let mut syscall_counts = Vec::new();
    for &scenario in &scenarios {
        let uses = enumerate(&fixture, &strace, scenario, scratch.path())?;
        eprintln!(
            "faults: {}: {} syscalls in scope: {}",
            scenario.label(),
            uses.len(),
            uses.iter().map(|use_| format!("{}×{}", use_.name, use_.calls)).collect::<Vec<_>>().join(" ")
        );
        syscall_counts.push((scenario, uses.clone()));
        injections.extend(plan(scenario, &uses, args.quick));
    }
    eprintln!("faults: {} injected runs", injections.len());

    let started = Instant::now();
    let findings = run_all(&fixture, &strace, scratch.path(), &injections)?;
    let table = render(&findings);
    println!("{table}");
    let failures: Vec<&Finding> = findings.iter().filter(|finding| !finding.problems.is_empty()).collect();
    println!(
        "{} runs in {:.0} s, {} failed",
        findings.len(),
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    for failure in &failures {
        let injection = &failure.injection;
        println!(
            "FAILED {} {}={} at the {} call (when={}): {}",
            injection.scenario.label(),
            injection.syscall,
            injection.error,
            injection.position,
            injection.when,
            failure.problems.join("; ")
        );
    }
    if !failures.is_empty() {
        bail!("{} of {} injected faults broke a rule (see above)", failures.len(), findings.len());
    }
    Ok(())
}

/// The syscalls one clean run of `scenario` makes.
fn enumerate(
    fixture: &Fixture,
    strace: &Path,
    scenario: Scenario,
    scratch: &Path,
) -> anyhow::Result<Vec<SyscallUse>> {
    let root = scratch.join(format!("enumerate-{}", scenario.label().replace([' ', '-'], "_")));
    let run = fixture.prepare_run(scenario, &root)?;
    let log = scratch.join("enumerate.log");
    let options = ["-o".to_owned(), log.to_string_lossy().into_owned()];
    let output = run_plain(fixture.wrap(Some((strace, &options)), scenario, &root))?;
    let (succeeded, problems) = fixture.judge(scenario, &run, &output, "none");
    if !succeeded || !problems.is_empty() {
        bail!(
            "{} fails without any fault: {} {}",
            scenario.label(),
            String::from_utf8_lossy(&output.stderr),
            problems.join("; ")
        );
    }
    std::fs::remove_dir_all(&root)?;
    Ok(syscalls_in_scope(&read_log(&log)?))
}

fn plan(scenario: Scenario, uses: &[SyscallUse], quick: bool) -> Vec<Injection> {
    let mut injections = Vec::new();
    for (index, use_) in uses.iter().enumerate() {
        let mut positions = vec![("1st", use_.first)];
        if !quick && let Some(second) = use_.second {
            positions.push(("2nd", second));
        }
        if use_.last != use_.first && Some(use_.last) != use_.second.filter(|_| !quick) {
            positions.push(("last", use_.last));
        }
        let errors: Vec<&'static str> = if quick {
            let rotating = ERRORS.iter().copied().filter(|error| *error != "EINTR").collect::<Vec<_>>();
            vec!["EINTR", rotating[(index + scenario as usize) % rotating.len()]]
        } else {
            ERRORS.to_vec()
        };
        for error in errors {
            for &(position, when) in &positions {
                injections.push(Injection { scenario, syscall: use_.name.clone(), error, position, when });
            }
        }
    }
    injections
}

fn run_all(
    fixture: &Fixture,
    strace: &Path,
    scratch: &Path,
    injections: &[Injection],
) -> anyhow::Result<Vec<Finding>> {
    let next = AtomicUsize::new(0);
    let findings = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |count| count.get()).clamp(2, 8);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(injection) = injections.get(index) else { break };
                    match run_one(fixture, strace, scratch, index, injection) {
                        Ok(finding) => findings.lock().expect("no panic").push((index, finding)),
                        Err(error) => errors.lock().expect("no panic").push(format!("{error:#}")),
                    }
                    if index % 200 == 199 {
                        eprintln!("faults: {} of {} runs", index + 1, injections.len());
                    }
                }
            });
        }
    });
    let errors = errors.into_inner().expect("no panic");
    if let Some(error) = errors.first() {
        bail!("the fault runner itself failed: {error}");
    }
    let mut findings = findings.into_inner().expect("no panic");
    findings.sort_by_key(|(index, _)| *index);
    Ok(findings.into_iter().map(|(_, finding)| finding).collect())
}

fn run_one(
    fixture: &Fixture,
    strace: &Path,
    scratch: &Path,
    index: usize,
    injection: &Injection,
) -> anyhow::Result<Finding> {
    let root: PathBuf = scratch.join(format!("run-{index}"));
    let run = fixture.prepare_run(injection.scenario, &root)?;
    let options = [
        "-o".to_owned(),
        "/dev/null".to_owned(),
        "-e".to_owned(),
        format!("inject={}:error={}:when={}", injection.syscall, injection.error, injection.when),
    ];
    let output = run_plain(fixture.wrap(Some((strace, &options)), injection.scenario, &root))?;
    let (succeeded, problems) = fixture.judge(injection.scenario, &run, &output, injection.error);
    let result = match (succeeded, output.status.code()) {
        (true, _) => "ok".to_owned(),
        (false, Some(0)) if injection.scenario.hook_mode() => "log".to_owned(),
        (false, Some(code)) => format!("err{code}"),
        (false, None) => "signal".to_owned(),
    };
    if problems.is_empty() {
        std::fs::remove_dir_all(&root)?;
    }
    Ok(Finding { injection: injection.clone(), result, problems })
}

/// One row per tool path and syscall, one column per error; a cell lists
/// the result at each position injected (`ok`, `err1`, `log`), and `FAIL`
/// where a rule broke.
fn render(findings: &[Finding]) -> String {
    let mut cells: BTreeMap<(usize, String), BTreeMap<&str, Vec<String>>> = BTreeMap::new();
    for finding in findings {
        let injection = &finding.injection;
        let row = (
            Scenario::ALL.iter().position(|s| *s == injection.scenario).unwrap_or(0),
            injection.syscall.clone(),
        );
        let shown = if finding.problems.is_empty() { finding.result.clone() } else { "FAIL".to_owned() };
        cells.entry(row).or_default().entry(injection.error).or_default().push(shown);
    }
    let mut text = String::new();
    let _ = write!(text, "{:24} {:16}", "tool path", "syscall");
    for error in ERRORS {
        let _ = write!(text, " {error:>16}");
    }
    text.push('\n');
    for ((scenario, syscall), by_error) in &cells {
        let _ = write!(text, "{:24} {:16}", Scenario::ALL[*scenario].label(), syscall);
        for error in ERRORS {
            let cell = by_error.get(error).map_or("-".to_owned(), |results| results.join("/"));
            let _ = write!(text, " {cell:>16}");
        }
        text.push('\n');
    }
    text
}
