//! `cargo xtask e2e [HARNESS]`: drives the real harnesses, installed from npm, through
//! their session hooks as `roster-hooks install` wires them, and checks what docs/contract.md §8 claims:
//! during the session the roster holds one record whose owner is the harness process (the
//! outermost one: Codex's and Copilot's node loaders, Gemini's first node), and at session
//! end the record goes.
//!
//! Each harness runs offline in a temporary HOME with a fake API key, against a fake model
//! server on 127.0.0.1 (`fake_model_server`) that holds every model call until the record
//! has been examined. Two endings per harness: the model answers and the harness finishes
//! its turn and exits; or the harness's process group gets SIGTERM mid-turn (a closed
//! terminal, `timeout`). Where no session-end hook removes the record, `roster-prune` must
//! remove it as dead. Opt-in and slow (npm installs, real processes), so not part of CI.

mod chains;
mod fake_model_server;
mod real_harnesses;

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use crate::install::{cargo_program, target_directory};
use fake_model_server::FakeModelServer;
use real_harnesses::{InstalledHarness, REAL_HARNESSES, RealHarness};

/// The binaries the run uses.
const ROSTER_BINARIES: [&str; 4] = ["roster-register", "roster-prune", "roster-list", "roster-hooks"];

/// How long a harness may take to start and register (npm loaders unpack native binaries on
/// a first run; the machine may be loaded).
const REGISTRATION_DEADLINE: Duration = Duration::from_secs(180);

/// How long a harness may take to end once its turn is answered or it got SIGTERM.
const EXIT_DEADLINE: Duration = Duration::from_secs(180);

/// How often the run looks at the roster directory and the harness while it waits.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// The Codex flag that runs hooks nobody trusted, for one invocation.
const CODEX_BYPASS_HOOK_TRUST: &str = "--dangerously-bypass-hook-trust";

/// How each session ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SessionEnding {
    /// The fake model answers; the harness finishes its turn and exits on its own.
    TurnCompletes,
    /// The harness's process group gets SIGTERM while its model call is held.
    Terminated,
    /// Codex without `--dangerously-bypass-hook-trust`: roster's hooks are installed but
    /// not trusted, so Codex must skip them (what `roster-hooks status` reports).
    HooksUntrusted,
}

impl SessionEnding {
    fn describe(self) -> &'static str {
        match self {
            SessionEnding::TurnCompletes => "turn completes",
            SessionEnding::Terminated => "SIGTERM mid-turn",
            SessionEnding::HooksUntrusted => "hooks untrusted",
        }
    }

    fn directory_label(self) -> &'static str {
        match self {
            SessionEnding::TurnCompletes => "completes",
            SessionEnding::Terminated => "terminated",
            SessionEnding::HooksUntrusted => "untrusted",
        }
    }
}

/// What one session showed.
struct SessionReport {
    lines: Vec<String>,
    failures: Vec<String>,
}

impl SessionReport {
    fn note(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    fn fail(&mut self, failure: impl Into<String>) {
        let failure = failure.into();
        self.lines.push(format!("FAILED: {failure}"));
        self.failures.push(failure);
    }
}

/// Runs the e2e for one harness (by roster name or command name) or for all of them.
pub fn run(harness: Option<&str>) -> anyhow::Result<()> {
    let harnesses: Vec<RealHarness> = match harness {
        Some(name) => vec![RealHarness::named(name).with_context(|| {
            let names: Vec<&str> = REAL_HARNESSES.iter().map(|harness| harness.name).collect();
            format!("unknown harness {name:?}; use one of {}", names.join(", "))
        })?],
        None => REAL_HARNESSES.to_vec(),
    };
    let node =
        find_on_path("node").context("node is not on PATH: the harnesses are npm packages run by node")?;
    let npm = find_on_path("npm")
        .context("npm is not on PATH: the harnesses are installed from the npm registry")?;
    let binaries = build_roster_binaries()?;
    let target = target_directory()?;

    let mut failed = Vec::new();
    let mut summary = Vec::new();
    for harness in harnesses {
        let installed = install_harness(&npm, &target.join("e2e").join("npm").join(harness.name), harness)?;
        println!("\n=== {} {} ({})", harness.name, installed.version, installed.executable.display());
        if let Some(note) = harness.trust_note(&installed.help) {
            println!("    {note}");
        }
        let mut endings = vec![SessionEnding::TurnCompletes, SessionEnding::Terminated];
        if harness.name == "codex" && installed.help.contains(CODEX_BYPASS_HOOK_TRUST) {
            endings.push(SessionEnding::HooksUntrusted);
        }
        for ending in endings {
            println!("--- {}: {}", harness.name, ending.describe());
            let report =
                run_session(&installed, ending, &binaries, &node).unwrap_or_else(|error| SessionReport {
                    lines: vec![format!("FAILED: {error:#}")],
                    failures: vec![format!("{error:#}")],
                });
            for line in &report.lines {
                println!("    {line}");
            }
            let verdict = if report.failures.is_empty() { "ok" } else { "FAILED" };
            summary.push(format!("{:<12} {:<18} {verdict}", harness.name, ending.describe()));
            if !report.failures.is_empty() {
                failed.push(format!("{} ({})", harness.name, ending.describe()));
            }
        }
        if chains::CHAIN_HARNESSES.contains(&harness.name) {
            println!("--- {}: {}", harness.name, chains::CASE);
            let report = chains::loader_killed_alone(&installed, &binaries, &node);
            report.lines.iter().for_each(|line| println!("    {line}"));
            let verdict = if report.failures.is_empty() { "ok" } else { "FAILED" };
            summary.push(format!("{:<12} {:<18} {verdict}", harness.name, chains::CASE));
            if !report.failures.is_empty() {
                failed.push(format!("{} ({})", harness.name, chains::CASE));
            }
        }
    }
    println!("\n=== summary");
    for line in &summary {
        println!("    {line}");
    }
    if !failed.is_empty() {
        bail!("e2e failed for {}", failed.join(", "));
    }
    Ok(())
}

/// Builds the roster binaries the hooks call (debug profile) and returns their directory.
fn build_roster_binaries() -> anyhow::Result<PathBuf> {
    let mut command = Command::new(cargo_program());
    command.current_dir(crate::codegen::repository_root()).arg("build");
    for binary in ROSTER_BINARIES {
        command.args(["--bin", binary]);
    }
    eprintln!("building: cargo build {}", ROSTER_BINARIES.map(|binary| format!("--bin {binary}")).join(" "));
    let status = command.status().context("running cargo build")?;
    ensure!(status.success(), "cargo build failed ({status})");
    let directory = target_directory()?.join("debug");
    for binary in ROSTER_BINARIES {
        ensure!(directory.join(binary).is_file(), "{} was not built", directory.join(binary).display());
    }
    Ok(directory)
}

/// Installs `harness` under `prefix` with npm, unless an earlier run did; delete the prefix
/// to reinstall.
fn install_harness(npm: &Path, prefix: &Path, harness: RealHarness) -> anyhow::Result<InstalledHarness> {
    let executable = prefix.join("node_modules").join(".bin").join(harness.command);
    if executable.exists() {
        eprintln!("using {} installed under {} (delete it to reinstall)", harness.package, prefix.display());
    } else {
        fs::create_dir_all(prefix)?;
        eprintln!(
            "installing {} from npm under {} (this can take minutes)",
            harness.package,
            prefix.display()
        );
        let status = Command::new(npm)
            .current_dir(prefix)
            .args(["install", "--prefix"])
            .arg(prefix)
            .args(["--no-audit", "--no-fund", "--loglevel=error", harness.package])
            .status()
            .context("running npm install")?;
        ensure!(status.success(), "npm install {} failed ({status})", harness.package);
        ensure!(executable.exists(), "npm installed {} but not {}", harness.package, executable.display());
    }
    let manifest = prefix.join("node_modules").join(harness.package).join("package.json");
    let manifest: Value = serde_json::from_slice(
        &fs::read(&manifest).with_context(|| format!("reading {}", manifest.display()))?,
    )
    .context("parsing the package's package.json")?;
    let version = manifest["version"].as_str().context("package.json has no version")?.to_owned();
    let help_arguments: &[&str] = if harness.name == "codex" { &["exec", "--help"] } else { &["--help"] };
    let help = Command::new(&executable)
        .args(help_arguments)
        .stdin(Stdio::null())
        .output()
        .map(|output| {
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
        })
        .unwrap_or_default();
    Ok(InstalledHarness { harness, executable, version, help })
}

/// A temporary world for one session: HOME, a project directory, and the roster directory
/// the installed hooks use by default (`~/.local/state/roster`).
struct SessionWorld {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    roster: PathBuf,
}

impl SessionWorld {
    /// Under the system temp directory, never inside this repository: the harnesses read
    /// instructions and settings from every parent directory of their project.
    fn create(harness: &str, ending: SessionEnding) -> anyhow::Result<SessionWorld> {
        let label = ending.directory_label();
        let root = std::env::temp_dir().join(format!("roster-e2e-{harness}-{label}-{}", std::process::id()));
        if root.exists() {
            fs::remove_dir_all(&root).with_context(|| format!("clearing {}", root.display()))?;
        }
        let home = root.join("home");
        let project = home.join("src").join("app");
        fs::create_dir_all(&project).with_context(|| format!("creating {}", project.display()))?;
        let root = fs::canonicalize(&root)?;
        let home = root.join("home");
        let project = home.join("src").join("app");
        let roster = home.join(".local").join("state").join("roster");
        Ok(SessionWorld { root, home, project, roster })
    }

    fn record(&self, pid: u32) -> Option<Value> {
        let bytes = fs::read(self.roster.join("sessions").join(format!("{pid}.json"))).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    fn record_pids(&self) -> Vec<u32> {
        let Ok(entries) = fs::read_dir(self.roster.join("sessions")) else { return Vec::new() };
        entries
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| entry.file_name().to_str()?.strip_suffix(".json")?.parse().ok())
            .collect()
    }

    fn hook_errors(&self) -> Vec<String> {
        fs::read_to_string(self.roster.join("hook-errors.log"))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// The environment every process of the world starts from: nothing of this process's
    /// own (which may itself run inside a harness) but PATH, HOME and a plain locale.
    fn base_environment(&self, node: &Path) -> Vec<(String, String)> {
        let node_directory =
            node.parent().map(|directory| directory.display().to_string()).unwrap_or_default();
        vec![
            ("PATH".to_owned(), format!("{node_directory}:/usr/local/bin:/usr/bin:/bin")),
            ("HOME".to_owned(), self.home.display().to_string()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("TERM".to_owned(), "dumb".to_owned()),
            ("NO_COLOR".to_owned(), "1".to_owned()),
        ]
    }

    fn roster_tool(&self, binaries: &Path, tool: &str, node: &Path) -> Command {
        let mut command = Command::new(binaries.join(tool));
        command.env_clear().envs(self.base_environment(node)).current_dir(&self.project).stdin(Stdio::null());
        command
    }
}

/// One session of `installed`, ended as `ending` says.
fn run_session(
    installed: &InstalledHarness,
    ending: SessionEnding,
    binaries: &Path,
    node: &Path,
) -> anyhow::Result<SessionReport> {
    let harness = installed.harness;
    let world = SessionWorld::create(harness.name, ending)?;
    let mut report = SessionReport { lines: Vec::new(), failures: Vec::new() };
    let server = FakeModelServer::start(harness.api)?;
    harness.prepare_home(&world.home, &server.base_url())?;

    let installation = world
        .roster_tool(binaries, "roster-hooks", node)
        .args(["install", harness.name])
        .output()
        .context("running roster-hooks install")?;
    ensure!(
        installation.status.success(),
        "roster-hooks install {} failed: {}",
        harness.name,
        String::from_utf8_lossy(&installation.stderr).trim()
    );
    let status = world.roster_tool(binaries, "roster-hooks", node).args(["status", harness.name]).output()?;
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    for line in status.lines().filter(|line| !line.trim().is_empty()) {
        report.note(format!("roster-hooks status: {}", line.trim_end()));
    }
    if ending == SessionEnding::HooksUntrusted && !status.contains("untrusted") {
        report.fail("roster-hooks status does not call the installed Codex hooks untrusted");
    }

    let output_path = world.root.join("harness-output.txt");
    let output = fs::File::create(&output_path)?;
    let started = Instant::now();
    let mut arguments = harness.arguments(&installed.help);
    if ending == SessionEnding::HooksUntrusted {
        arguments.retain(|argument| argument != CODEX_BYPASS_HOOK_TRUST);
    }
    let mut child = Command::new(&installed.executable)
        .args(&arguments)
        .env_clear()
        .envs(world.base_environment(node))
        .envs(harness.environment(&server.base_url()))
        .current_dir(&world.project)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(output.try_clone()?)
        .stderr(output)
        .spawn()
        .with_context(|| format!("starting {}", installed.executable.display()))?;
    let owner = child.id();
    let mut harness_group = ProcessGroup { leader: owner, child: Some(&mut child) };

    let outcome = examine_session(
        &world,
        &server,
        harness,
        installed,
        ending,
        &mut harness_group,
        binaries,
        node,
        &mut report,
    );
    // Whatever happened, nothing of the harness may outlive its session here.
    harness_group.kill();
    server.open_gate();
    if let Err(error) = outcome {
        report.fail(format!("{error:#}"));
    }
    report.note(format!(
        "model server saw {} request(s), {} model call(s); harness ran {:.1} s",
        server.requests().len(),
        server.model_call_count(),
        started.elapsed().as_secs_f64()
    ));
    if report.failures.is_empty() {
        let _ = fs::remove_dir_all(&world.root);
    } else {
        let tail = last_lines(&output_path, 15);
        report.note(format!("kept {} for inspection; harness output ends with:", world.root.display()));
        for line in tail {
            report.note(format!("  | {line}"));
        }
    }
    Ok(report)
}

/// The harness's process group, killed on request and reaped.
struct ProcessGroup<'a> {
    leader: u32,
    child: Option<&'a mut Child>,
}

impl ProcessGroup<'_> {
    fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .args([format!("-{signal}"), "--".to_owned(), format!("-{}", self.leader)])
            .stderr(Stdio::null())
            .status();
    }

    fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|child| child.try_wait().ok().flatten())
    }

    fn kill(&mut self) {
        self.signal("KILL");
        if let Some(child) = self.child.take() {
            let _ = child.wait();
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn examine_session(
    world: &SessionWorld,
    server: &FakeModelServer,
    harness: RealHarness,
    installed: &InstalledHarness,
    ending: SessionEnding,
    group: &mut ProcessGroup<'_>,
    binaries: &Path,
    node: &Path,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    let owner = group.leader;
    if ending == SessionEnding::HooksUntrusted {
        return examine_untrusted_session(world, server, harness, group, report);
    }
    let started = Instant::now();
    // The session start: the record of the harness process appears while its model call is
    // held at the fake server's gate.
    let record = loop {
        if let Some(record) = world.record(owner) {
            break record;
        }
        if let Some(status) = group.try_wait() {
            bail!(
                "{} exited ({status}) without registering pid {owner}; records: {:?}; hook errors: {:?}",
                harness.name,
                world.record_pids(),
                world.hook_errors()
            );
        }
        ensure!(
            started.elapsed() < REGISTRATION_DEADLINE,
            "no record for pid {owner} within {REGISTRATION_DEADLINE:?}; records: {:?} {}; hook errors: {:?}",
            world.record_pids(),
            world.record_pids().iter().map(|pid| describe_process(*pid)).collect::<Vec<_>>().join(", "),
            world.hook_errors()
        );
        std::thread::sleep(POLL_INTERVAL);
    };
    report.note(format!(
        "registered after {:.1} s: owner {owner} = {}",
        started.elapsed().as_secs_f64(),
        describe_process(owner)
    ));
    let chain = harness_descendants(owner);
    if chain.len() > 1 {
        report.note(format!("processes under it: {}", chain[1..].join(", ")));
    }

    let others: Vec<u32> = world.record_pids().into_iter().filter(|pid| *pid != owner).collect();
    if !others.is_empty() {
        report.fail(format!("other records besides the owner's: {others:?}"));
    }
    check_record(&record, harness, installed, owner, report);
    let listed = world.roster_tool(binaries, "roster-list", node).arg("--json").output()?;
    let rows: Value = serde_json::from_slice(&listed.stdout).context("roster-list --json printed no JSON")?;
    let liveness = rows.get(0).and_then(|row| row["liveness"].as_str()).unwrap_or("missing").to_owned();
    if liveness == "alive" {
        report.note("roster-list: alive");
    } else {
        report.fail(format!("roster-list says {liveness}: {rows}"));
    }

    // The session end, once the harness is inside its turn (its model call held).
    wait_for_model_call(server, group, harness)?;
    let ended_at = Instant::now();
    match ending {
        SessionEnding::TurnCompletes => server.open_gate(),
        SessionEnding::Terminated => group.signal("TERM"),
        SessionEnding::HooksUntrusted => unreachable!("examined above"),
    }
    let mut removed_after = None;
    let status = loop {
        if removed_after.is_none() && world.record(owner).is_none() {
            removed_after = Some(ended_at.elapsed());
        }
        if let Some(status) = group.try_wait() {
            break status;
        }
        ensure!(ended_at.elapsed() < EXIT_DEADLINE, "{} did not exit within {EXIT_DEADLINE:?}", harness.name);
        std::thread::sleep(POLL_INTERVAL);
    };
    let exited_after = ended_at.elapsed();
    // A harness may leave its session-end hook running as it exits.
    let settle = Instant::now();
    while world.record(owner).is_some() && settle.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(POLL_INTERVAL);
    }
    if removed_after.is_none() && world.record(owner).is_none() {
        removed_after = Some(ended_at.elapsed());
    }
    report.note(format!(
        "{} exited with {status} {:.1} s after the session end began",
        harness.name,
        exited_after.as_secs_f64()
    ));

    match removed_after {
        Some(after) => report.note(format!(
            "the session-end hook removed the record ({:.2} s after the end began)",
            after.as_secs_f64()
        )),
        None => {
            let message = format!("no session-end hook removed the record of pid {owner}");
            if ending == SessionEnding::TurnCompletes {
                report.fail(message);
            } else {
                report.note(message);
            }
            reap_dead_record(world, owner, binaries, node, report)?;
        }
    }
    let errors = world.hook_errors();
    if !errors.is_empty() {
        report.fail(format!("hook-errors.log: {errors:?}"));
    }
    Ok(())
}

/// Codex with roster's hooks installed but not trusted: no record while its turn is held,
/// none after it ends, and nothing in the hook log: Codex skipped the hooks silently.
fn examine_untrusted_session(
    world: &SessionWorld,
    server: &FakeModelServer,
    harness: RealHarness,
    group: &mut ProcessGroup<'_>,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    wait_for_model_call(server, group, harness)?;
    let during = world.record_pids();
    server.open_gate();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = group.try_wait() {
            break status;
        }
        ensure!(started.elapsed() < EXIT_DEADLINE, "{} did not exit within {EXIT_DEADLINE:?}", harness.name);
        std::thread::sleep(POLL_INTERVAL);
    };
    report.note(format!("{} exited with {status}", harness.name));
    if during.is_empty() && world.record_pids().is_empty() && world.hook_errors().is_empty() {
        report.note("no record during or after the turn: Codex skipped the untrusted hooks, as status said");
    } else {
        report.fail(format!(
            "untrusted hooks ran: records during the turn {during:?}, after {:?}, hook errors {:?}",
            world.record_pids(),
            world.hook_errors()
        ));
    }
    Ok(())
}

/// Waits until the harness's first model call is held at the fake server's gate.
fn wait_for_model_call(
    server: &FakeModelServer,
    group: &mut ProcessGroup<'_>,
    harness: RealHarness,
) -> anyhow::Result<()> {
    let started = Instant::now();
    while server.model_call_count() == 0 {
        if let Some(status) = group.try_wait() {
            bail!(
                "{} exited ({status}) before calling the model; requests: {:?}",
                harness.name,
                server.requests()
            );
        }
        ensure!(
            started.elapsed() < REGISTRATION_DEADLINE,
            "{} made no model call within {REGISTRATION_DEADLINE:?}; requests: {:?}",
            harness.name,
            server.requests()
        );
        std::thread::sleep(POLL_INTERVAL);
    }
    Ok(())
}

fn check_record(
    record: &Value,
    harness: RealHarness,
    installed: &InstalledHarness,
    owner: u32,
    report: &mut SessionReport,
) {
    let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
    if record["session_pid"].as_u64() != Some(u64::from(owner)) {
        report.fail(format!("session_pid {} is not the harness process {owner}", record["session_pid"]));
    }
    if text("harness").as_deref() != Some(harness.name) {
        report.fail(format!("harness {:?}, expected {}", text("harness"), harness.name));
    }
    if record["session_pid_verified"] != Value::Bool(true) {
        report.fail("session_pid_verified is not true");
    }
    match text("session_id") {
        Some(id) => report.note(format!(
            "record: harness {}, session id {id}, owner found by {}, harness_version {}, transcript {}",
            harness.name,
            text("session_pid_source").unwrap_or_default(),
            text("harness_version").unwrap_or_else(|| "-".to_owned()),
            if text("transcript_path").is_some() { "recorded" } else { "-" }
        )),
        None => report.fail("the record has no session id"),
    }
    if harness.exports_its_version && text("harness_version").as_deref() != Some(installed.version.as_str()) {
        report.fail(format!(
            "harness_version {:?}, expected the installed {}",
            text("harness_version"),
            installed.version
        ));
    }
}

/// A session that ended without a session-end hook leaves a record of a dead owner, which
/// `roster-prune` must remove.
fn reap_dead_record(
    world: &SessionWorld,
    owner: u32,
    binaries: &Path,
    node: &Path,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    let pruned = world.roster_tool(binaries, "roster-prune", node).arg("--json").output()?;
    ensure!(
        pruned.status.success(),
        "roster-prune failed: {}",
        String::from_utf8_lossy(&pruned.stderr).trim()
    );
    let pruned: Value =
        serde_json::from_slice(&pruned.stdout).context("roster-prune --json printed no JSON")?;
    let removed_owner = pruned["removed"].as_array().is_some_and(|rows| {
        rows.iter()
            .any(|row| row["session_pid"].as_u64() == Some(u64::from(owner)) && row["liveness"] == "dead")
    });
    if removed_owner && world.record(owner).is_none() {
        report.note("roster-prune removed it as dead");
    } else {
        report.fail(format!("roster-prune did not remove the dead record: {pruned}"));
    }
    Ok(())
}

/// `comm` and the first arguments of a process, for the report.
fn describe_process(pid: u32) -> String {
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let argv: Vec<String> = fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|byte| *byte == 0)
        .filter(|argument| !argument.is_empty())
        .take(2)
        .map(|argument| String::from_utf8_lossy(argument).into_owned())
        .collect();
    format!("{} [{}]", comm.trim_end(), argv.join(" "))
}

/// `pid` and its descendants, parent before child, each described, for the report.
fn harness_descendants(pid: u32) -> Vec<String> {
    let mut parents = Vec::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.filter_map(|entry| entry.ok()) {
            let Some(child) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
            let Some(after_comm) = stat.rfind(')').map(|end| &stat[end + 2..]) else { continue };
            if let Some(parent) = after_comm.split(' ').nth(1).and_then(|ppid| ppid.parse::<u32>().ok()) {
                parents.push((child, parent));
            }
        }
    }
    let mut order = vec![pid];
    let mut index = 0;
    while index < order.len() {
        let current = order[index];
        let mut children: Vec<u32> =
            parents.iter().filter(|(_, parent)| *parent == current).map(|(child, _)| *child).collect();
        children.sort_unstable();
        order.extend(children);
        index += 1;
    }
    if !Path::new(&format!("/proc/{pid}")).exists() {
        return Vec::new();
    }
    order.into_iter().map(|pid| format!("{pid} {}", describe_process(pid))).collect()
}

fn last_lines(path: &Path, count: usize) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[lines.len().saturating_sub(count)..].to_vec()
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|directory| directory.join(program))
        .find(|candidate| candidate.is_file())
}
