//! The e2e's chain case: Copilot and Codex run a `node` loader above their native binary,
//! and a signal to the loader alone (what a terminal multiplexer or a supervisor may send)
//! leaves the native process running, reparented, mid-turn. With the real harness held
//! inside its turn at the fake model server, the loader gets a signal alone (Copilot:
//! SIGTERM; Codex: SIGKILL, since its wrapper forwards SIGTERM to the native binary, which
//! then ends with it, as a real run showed); the record must
//! stay alive, name the native process it rests on, and survive `roster-prune` while the
//! native process runs. Then the turn is answered and the native process ends (or, if it
//! does not, gets SIGTERM itself), and the record must be gone or dead within 1 s after it.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::fake_model_server::FakeModelServer;
use super::harness_processes::{ProcessGroup, describe_process};
use super::real_harnesses::InstalledHarness;
use super::session_run::{SessionReport, wait_for_model_call};
use super::session_world::{SessionWorld, last_lines};
use super::{EXIT_DEADLINE, POLL_INTERVAL, REGISTRATION_DEADLINE};

/// The harnesses whose npm package runs a loader above a native binary.
pub const CHAIN_HARNESSES: [&str; 2] = ["copilot", "codex"];

/// What the case is called in the report and the summary.
pub const CASE: &str = "loader killed alone";

/// The signal that leaves the harness's native process running: Copilot's loader dies of
/// SIGTERM alone; Codex's wrapper forwards SIGTERM to its native binary, so only SIGKILL
/// (which it cannot forward) leaves that running.
fn loader_signal(harness: &str) -> &'static str {
    if harness == "codex" { "KILL" } else { "TERM" }
}

/// How long the record is watched after the loader died, while the native process runs.
const WATCH_AFTER_LOADER: Duration = Duration::from_secs(2);

/// How soon after the last member exits the record must be gone or dead.
const GONE_AFTER_LAST_MEMBER: Duration = Duration::from_secs(1);

/// Runs the case for `installed` and reports what it saw.
pub fn loader_killed_alone(installed: &InstalledHarness, binaries: &Path, node: &Path) -> SessionReport {
    let mut report = SessionReport::new();
    if let Err(error) = run(installed, binaries, node, &mut report) {
        report.fail(format!("{error:#}"));
    }
    report
}

fn run(
    installed: &InstalledHarness,
    binaries: &Path,
    node: &Path,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    let harness = installed.harness;
    let world = chain_world(harness.name)?;
    let server = FakeModelServer::start(harness.api.context("a chain harness speaks a model API")?)?;
    harness.prepare_home(&world.home, &server.base_url())?;
    // The hooks call the binaries under test by their full path, as in the case table: a
    // project's hook file names the tools through PATH, and this world's PATH has none.
    let mut install = world.roster_tool(binaries, "roster-hooks", node);
    install.args(["install", harness.name, "--bin-dir"]).arg(binaries);
    if let Some(scope) = harness.install_scope() {
        install.args(["--scope", scope]);
    }
    let installation = install.output()?;
    ensure!(
        installation.status.success(),
        "roster-hooks install {} failed: {}",
        harness.name,
        String::from_utf8_lossy(&installation.stderr).trim()
    );

    let output_path = world.harness_output();
    let started = Instant::now();
    let mut child =
        world.spawn_harness(installed, &harness.arguments(&installed.help), node, &server.base_url())?;
    let loader = child.id();
    let mut group = ProcessGroup { leader: loader, child: Some(&mut child) };
    let outcome = examine(&world, &server, installed, &mut group, binaries, node, started, report);
    group.kill();
    server.open_gate();
    if outcome.is_err() || !report.failures.is_empty() {
        report.note(format!("kept {} for inspection; harness output ends with:", world.root.display()));
        for line in last_lines(&output_path, 15) {
            report.note(format!("  | {line}"));
        }
    } else {
        let _ = fs::remove_dir_all(&world.root);
    }
    outcome
}

#[allow(clippy::too_many_arguments)]
fn examine(
    world: &SessionWorld,
    server: &FakeModelServer,
    installed: &InstalledHarness,
    group: &mut ProcessGroup<'_>,
    binaries: &Path,
    node: &Path,
    started: Instant,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    let name = installed.harness.name;
    let loader = group.leader;
    let record = loop {
        if let Some(record) = world.record(loader) {
            break record;
        }
        if let Some(status) = group.try_wait() {
            bail!(
                "{name} exited ({status}) without registering pid {loader}; hook errors: {:?}",
                world.hook_errors()
            );
        }
        ensure!(
            started.elapsed() < REGISTRATION_DEADLINE,
            "no record for pid {loader} within {REGISTRATION_DEADLINE:?}"
        );
        std::thread::sleep(POLL_INTERVAL);
    };
    let native = record["chain"]
        .as_array()
        .and_then(|chain| chain.last())
        .and_then(|member| member["pid"].as_u64())
        .and_then(|pid| u32::try_from(pid).ok())
        .with_context(|| format!("the record of {loader} carries no chain: {record}"))?;
    report.note(format!(
        "registered: owner {loader} = {}, chain {} (innermost {native} = {})",
        describe_process(loader),
        record["chain"],
        describe_process(native)
    ));

    // Mid-turn: the model call is held at the gate. The loader alone gets SIGTERM.
    wait_for_model_call(server, group, installed.harness)?;
    let loader_signal = loader_signal(name);
    signal(loader, loader_signal);
    let loader_signalled = Instant::now();
    let status = loop {
        if let Some(status) = group.try_wait() {
            break status;
        }
        ensure!(
            loader_signalled.elapsed() < EXIT_DEADLINE,
            "the {name} loader {loader} ignored SIG{loader_signal}"
        );
        std::thread::sleep(POLL_INTERVAL);
    };
    report.note(format!("loader {loader} exited ({status}) after SIG{loader_signal} to it alone"));
    if !is_running(native) {
        report.fail(format!(
            "the native process {native} went with its loader: this {name} does not leave its native process \
             running, so the case shows nothing"
        ));
        return Ok(());
    }
    report.note(format!("native process {native} still runs: {}", describe_process(native)));

    // While it runs, the record stays alive and prune keeps it.
    let mut checks = 0;
    while loader_signalled.elapsed() < WATCH_AFTER_LOADER && is_running(native) {
        let row = only_row(world, binaries, node)?;
        let reason = row["liveness_reason"].as_str().unwrap_or_default().to_owned();
        if row["liveness"] != "alive" || !reason.contains(&format!("harness process {native}")) {
            report
                .fail(format!("with the native process running the record is {}: {reason}", row["liveness"]));
            break;
        }
        let pruned = tool_json(world, binaries, node, "roster-prune", &["--json"])?;
        if pruned["dead_removed"] != 0 || world.record(loader).is_none() {
            report.fail(format!("roster-prune removed the live session: {pruned}"));
            break;
        }
        checks += 1;
        if checks == 1 {
            report.note(format!("roster-list: alive, {reason}"));
        }
        std::thread::sleep(POLL_INTERVAL * 5);
    }
    report.note(format!("{checks} list and prune rounds kept the record while {native} ran"));

    // The turn is answered; the native process ends on its own, or is told to.
    server.open_gate();
    let answered = Instant::now();
    while is_running(native) && answered.elapsed() < EXIT_DEADLINE / 6 {
        std::thread::sleep(POLL_INTERVAL);
    }
    if is_running(native) {
        report.note(format!(
            "native process {native} still ran {:.0?} after its turn; SIGTERM to it",
            answered.elapsed()
        ));
        signal(native, "TERM");
        while is_running(native) {
            ensure!(answered.elapsed() < EXIT_DEADLINE, "native process {native} ignored SIGTERM");
            std::thread::sleep(POLL_INTERVAL);
        }
    }
    let last_exit = Instant::now();
    let gone_after = loop {
        let row = world.record(loader).map(|_| only_row(world, binaries, node)).transpose()?;
        match row {
            None => break Some(last_exit.elapsed()),
            Some(row) if row["liveness"] == "dead" => break Some(last_exit.elapsed()),
            Some(_) if last_exit.elapsed() > GONE_AFTER_LAST_MEMBER * 5 => break None,
            Some(_) => std::thread::sleep(POLL_INTERVAL),
        }
    };
    match gone_after {
        Some(after) if after <= GONE_AFTER_LAST_MEMBER => report.note(format!(
            "native process {native} exited; the record was gone or dead {:.0} ms later",
            after.as_secs_f64() * 1000.0
        )),
        other => report.fail(format!(
            "the record of {loader} was not gone or dead within {GONE_AFTER_LAST_MEMBER:?} after its last member \
             exited ({other:?})"
        )),
    }
    if world.record(loader).is_some() {
        let pruned = tool_json(world, binaries, node, "roster-prune", &["--json"])?;
        if world.record(loader).is_some() {
            report.fail(format!("roster-prune kept the dead session: {pruned}"));
        } else {
            report.note("roster-prune removed it as dead");
        }
    } else {
        report.note("the session-end hook removed the record");
    }
    let errors = world.hook_errors();
    if !errors.is_empty() {
        report.fail(format!("hook-errors.log: {errors:?}"));
    }
    Ok(())
}

/// A world of its own, beside the other cases' (`roster-e2e-<harness>-chain-<pid>`).
fn chain_world(harness: &str) -> anyhow::Result<SessionWorld> {
    let root = std::env::temp_dir().join(format!("roster-e2e-{harness}-chain-{}", std::process::id()));
    if root.exists() {
        fs::remove_dir_all(&root).with_context(|| format!("clearing {}", root.display()))?;
    }
    fs::create_dir_all(root.join("home").join("src").join("app"))?;
    let root = fs::canonicalize(&root)?;
    let home = root.join("home");
    Ok(SessionWorld {
        project: home.join("src").join("app"),
        roster: home.join(".local").join("state").join("roster"),
        home,
        root,
    })
}

fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill").args([format!("-{signal}"), pid.to_string()]).stderr(Stdio::null()).status();
}

/// Whether `pid` runs: it exists and is no zombie (the native process, reparented, is
/// reaped by init, which may take a moment).
fn is_running(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rfind(')').is_some_and(|end| !stat[end + 2..].starts_with('Z')),
        Err(_) => false,
    }
}

fn tool_json(
    world: &SessionWorld,
    binaries: &Path,
    node: &Path,
    tool: &str,
    args: &[&str],
) -> anyhow::Result<Value> {
    let output = world.roster_tool(binaries, tool, node).args(args).output()?;
    ensure!(output.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    serde_json::from_slice(&output.stdout).with_context(|| format!("{tool} printed no JSON"))
}

fn only_row(world: &SessionWorld, binaries: &Path, node: &Path) -> anyhow::Result<Value> {
    let rows = tool_json(world, binaries, node, "roster-list", &["--all", "--json"])?;
    let rows = rows.as_array().context("roster-list --json printed no array")?;
    ensure!(rows.len() == 1, "expected one row, roster-list shows {}: {rows:?}", rows.len());
    Ok(rows[0].clone())
}
