//! One hooked session run end to end: the harness started in its world with roster's hooks,
//! its record checked against the hook's payload, watched mid-turn and through its end by
//! list and prune rounds, and its record gone or dead once its last process exits.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::fake_model_server::FakeModelServer;
use super::harness_processes::{
    HarnessProcesses, ProcessGroup, describe_process, process_start_ticks, signal_process,
};
use super::hook_latency::milliseconds;
use super::hook_shim::{HookCall, HookShim};
use super::real_harnesses::{AMP_THREAD_ID, InstalledHarness, RealHarness};
use super::session_cases::{SessionEnding, SignalTarget};
use super::session_world::{SessionWorld, install_hooks, last_lines};
use super::{CODEX_BYPASS_HOOK_TRUST, EXIT_DEADLINE, POLL_INTERVAL, REGISTRATION_DEADLINE};

/// What one session showed.
pub(super) struct SessionReport {
    pub(super) lines: Vec<String>,
    pub(super) failures: Vec<String>,
    /// Failures of the session's start checks (record, payload, owner), kept apart so the
    /// table can show the start as a case of its own.
    pub(super) start_failures: Vec<String>,
    /// Why the case could not run here, when it could not.
    pub(super) not_run: Option<String>,
    /// The hook runs the shim saw.
    pub(super) hook_calls: Vec<HookCall>,
}

impl SessionReport {
    pub(super) fn new() -> SessionReport {
        SessionReport {
            lines: Vec::new(),
            failures: Vec::new(),
            start_failures: Vec::new(),
            not_run: None,
            hook_calls: Vec::new(),
        }
    }

    pub(super) fn note(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    pub(super) fn fail(&mut self, failure: impl Into<String>) {
        let failure = failure.into();
        self.lines.push(format!("FAILED: {failure}"));
        self.failures.push(failure);
    }

    pub(super) fn fail_start(&mut self, failure: impl Into<String>) {
        let failure = failure.into();
        self.lines.push(format!("FAILED (start): {failure}"));
        self.start_failures.push(failure);
    }
}

/// One session of `installed`, ended as `ending` says.
pub(super) fn run_session(
    installed: &InstalledHarness,
    ending: SessionEnding,
    binaries: &Path,
    node: &Path,
) -> anyhow::Result<SessionReport> {
    let harness = installed.harness;
    let world = SessionWorld::create(harness.name, &ending.directory_label())?;
    let mut report = SessionReport::new();
    let server = harness.api.map(FakeModelServer::start).transpose()?;
    let base_url = server.as_ref().map(FakeModelServer::base_url).unwrap_or_default();
    harness.prepare_home(&world.home, &base_url)?;
    let shim = HookShim::create(&world.root, binaries)?;
    install_hooks(&world, harness, &shim, binaries, node, &mut report)?;
    if ending == SessionEnding::HooksUntrusted {
        let status =
            world.roster_tool(binaries, "roster-hooks", node).args(["status", harness.name]).output()?;
        if !String::from_utf8_lossy(&status.stdout).contains("untrusted") {
            report.fail("roster-hooks status does not call the installed Codex hooks untrusted");
        }
    }

    let output_path = world.harness_output();
    let started = Instant::now();
    let mut arguments = harness.arguments(&installed.help);
    if ending == SessionEnding::HooksUntrusted {
        arguments.retain(|argument| argument != CODEX_BYPASS_HOOK_TRUST);
    }
    let mut child = world.spawn_harness(installed, &arguments, node, &base_url)?;
    let owner = child.id();
    let mut harness_group = ProcessGroup { leader: owner, child: Some(&mut child) };
    let mut processes = HarnessProcesses::new(owner, vec![installed.prefix.clone(), world.home.clone()]);

    let outcome = if ending == SessionEnding::HooksUntrusted {
        let server = server.as_ref().context("codex has a model server")?;
        examine_untrusted_session(&world, server, harness, &mut harness_group, &mut report)
    } else {
        let mut session = Session {
            world: &world,
            server: server.as_ref(),
            installed,
            group: &mut harness_group,
            processes: &mut processes,
            shim: &shim,
            binaries,
            node,
        };
        session.examine(ending, &mut report)
    };
    // Whatever happened, nothing of the harness may outlive its session here.
    harness_group.kill();
    for pid in processes.running_pids() {
        signal_process(pid, "KILL");
    }
    if let Some(server) = &server {
        server.open_gate();
    }
    if let Err(error) = outcome {
        report.fail(format!("{error:#}"));
    }
    report.hook_calls = shim.calls();
    if let Some(server) = &server {
        report.note(format!(
            "model server saw {} request(s), {} model call(s); harness ran {:.1} s",
            server.requests().len(),
            server.model_call_count(),
            started.elapsed().as_secs_f64()
        ));
    }
    if report.failures.is_empty() && report.start_failures.is_empty() {
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

/// The list-and-prune rounds run mid-turn (the model call held), before the session is ended.
pub(super) const MID_TURN_ROUNDS: u32 = 3;

/// How long a harness gets to end after a signal before its turn is answered.
pub(super) const SIGNAL_GRACE: Duration = Duration::from_secs(10);

/// How long a harness gets to end after its turn is answered before it gets SIGTERM.
pub(super) const TURN_GRACE: Duration = Duration::from_secs(60);

/// How soon after the harness's last process exits its record must be gone or dead.
pub(super) const GONE_AFTER_LAST_PROCESS: Duration = Duration::from_secs(1);

/// One running session and everything needed to watch it.
pub(super) struct Session<'a, 'b> {
    world: &'a SessionWorld,
    server: Option<&'a FakeModelServer>,
    installed: &'a InstalledHarness,
    group: &'a mut ProcessGroup<'b>,
    processes: &'a mut HarnessProcesses,
    shim: &'a HookShim,
    binaries: &'a Path,
    node: &'a Path,
}

impl Session<'_, '_> {
    pub(super) fn tool_json(&self, tool: &str, arguments: &[&str]) -> anyhow::Result<Value> {
        let output = self.world.roster_tool(self.binaries, tool, self.node).args(arguments).output()?;
        ensure!(output.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
        serde_json::from_slice(&output.stdout).with_context(|| format!("{tool} printed no JSON"))
    }

    /// The owner's row in `roster-list --all --json`, if any.
    pub(super) fn owner_row(&self, owner: u32) -> anyhow::Result<Option<Value>> {
        let rows = self.tool_json("roster-list", &["--all", "--json"])?;
        Ok(rows.as_array().and_then(|rows| {
            rows.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(owner))).cloned()
        }))
    }

    pub(super) fn examine(
        &mut self,
        ending: SessionEnding,
        report: &mut SessionReport,
    ) -> anyhow::Result<()> {
        let owner = self.group.leader;
        let harness = self.installed.harness;
        let started = Instant::now();
        // The session start: the record of the harness process appears (while its model
        // call is held at the fake server's gate, for the harnesses that have one).
        let record = loop {
            if let Some(record) = self.world.record(owner) {
                break record;
            }
            if let Some(status) = self.group.try_wait() {
                bail!(
                    "{} exited ({status}) without registering pid {owner}; records: {:?}; hook errors: {:?}",
                    harness.name,
                    self.world.record_pids(),
                    self.world.hook_errors()
                );
            }
            ensure!(
                started.elapsed() < REGISTRATION_DEADLINE,
                "no record for pid {owner} within {REGISTRATION_DEADLINE:?}; records: {:?} {}; hook errors: {:?}",
                self.world.record_pids(),
                self.world
                    .record_pids()
                    .iter()
                    .map(|pid| describe_process(*pid))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.world.hook_errors()
            );
            std::thread::sleep(POLL_INTERVAL);
        };
        report.note(format!(
            "registered after {:.1} s: owner {owner} = {}",
            started.elapsed().as_secs_f64(),
            describe_process(owner)
        ));
        self.check_start(&record, owner, report)?;

        // The session end, once the harness is inside its turn (its model call held).
        if let Some(server) = self.server {
            wait_for_model_call(server, self.group, harness)?;
        }
        let Some(last_exit) = self.watch_until_last_exit(owner, ending, report)? else {
            return Ok(());
        };
        self.check_after_last_exit(owner, last_exit, report)?;
        let errors = self.world.hook_errors();
        if !errors.is_empty() {
            report.fail(format!("hook-errors.log: {errors:?}"));
        }
        Ok(())
    }

    pub(super) fn open_gate(&self) {
        if let Some(server) = self.server {
            server.open_gate();
        }
    }

    /// The record against what the harness said: the payload's session id and cwd, the
    /// harness process as owner (its identity verified), alive in `roster-list`.
    pub(super) fn check_start(
        &mut self,
        record: &Value,
        owner: u32,
        report: &mut SessionReport,
    ) -> anyhow::Result<()> {
        let harness = self.installed.harness;
        let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
        if record["session_pid"].as_u64() != Some(u64::from(owner)) {
            report.fail_start(format!(
                "session_pid {} is not the harness process {owner}",
                record["session_pid"]
            ));
        }
        if text("harness").as_deref() != Some(harness.name) {
            report.fail_start(format!("harness {:?}, expected {}", text("harness"), harness.name));
        }
        if record["session_pid_verified"] != Value::Bool(true) {
            report.fail_start("session_pid_verified is not true");
        }
        let actual_ticks = process_start_ticks(owner);
        if actual_ticks.is_none() || record["start_ticks"].as_u64() != actual_ticks {
            report.fail_start(format!(
                "start_ticks {} is not the harness process's {actual_ticks:?}",
                record["start_ticks"]
            ));
        }
        let running = self.processes.running();
        if !running.iter().any(|process| process.starts_with(&format!("{owner} ")))
            && self.group.try_wait().is_none()
        {
            report.fail_start(format!(
                "the owner {owner} is not a process of the harness: {}",
                describe_process(owner)
            ));
        }
        if harness.exports_its_version
            && text("harness_version").as_deref() != Some(self.installed.running_version.as_str())
        {
            report.fail_start(format!(
                "harness_version {:?}, expected the running {}",
                text("harness_version"),
                self.installed.running_version
            ));
        }
        // The payload the hook got, as the shim kept it (its log line follows the tool's exit).
        let waited = Instant::now();
        let call = loop {
            if let Some(call) = self.shim.calls().into_iter().find(HookCall::is_session_start) {
                break Some(call);
            }
            if waited.elapsed() > Duration::from_secs(2) {
                break None;
            }
            std::thread::sleep(POLL_INTERVAL);
        };
        let Some(call) = call else {
            report.fail_start("the shim saw no session-start hook run");
            return Ok(());
        };
        let (payload_id, payload_cwd) = harness.payload_session(&call.payload);
        let expected_id =
            if harness.name == "amp" { Some(AMP_THREAD_ID.to_owned()) } else { payload_id.clone() };
        match (&expected_id, text("session_id")) {
            (Some(expected), Some(actual)) if *expected == actual => {}
            (expected, actual) => report.fail_start(format!(
                "record session id {actual:?}, the payload says {payload_id:?} (expected {expected:?})"
            )),
        }
        let same_directory = |left: &str, right: &str| {
            left == right
                || fs::canonicalize(left).ok().is_some_and(|left| fs::canonicalize(right).ok() == Some(left))
        };
        match (&payload_cwd, text("cwd")) {
            (Some(expected), Some(actual)) if same_directory(expected, &actual) => {}
            (expected, actual) => {
                report.fail_start(format!("record cwd {actual:?}, the payload says {expected:?}"));
            }
        }
        report.note(format!(
            "record = payload: session id {}, cwd {}; owner {owner} verified (start tick {}); chain {}",
            text("session_id").unwrap_or_default(),
            text("cwd").unwrap_or_default(),
            record["start_ticks"],
            record["chain"]
        ));
        if self.group.try_wait().is_none() && !self.processes.running().is_empty() {
            let liveness = self.owner_row(owner)?.map(|row| row["liveness"].clone());
            if liveness != Some(Value::from("alive")) {
                report.fail_start(format!("roster-list says {liveness:?} while the harness runs"));
            }
        }
        Ok(())
    }

    /// Watches the session mid-turn, ends it, and goes on until no process of the harness
    /// runs: every round lists and prunes, and the record must never be pruned or judged
    /// dead while one runs. A harness that does not end on a signal gets its turn answered,
    /// then SIGTERM, then SIGKILL. Returns when the last process was seen gone; `None` when
    /// the harness ended before the signal could be sent (the case did not run).
    pub(super) fn watch_until_last_exit(
        &mut self,
        owner: u32,
        ending: SessionEnding,
        report: &mut SessionReport,
    ) -> anyhow::Result<Option<Instant>> {
        let watch_started = Instant::now();
        // Amp's session (one plugin event) holds no turn to watch: it is ended at once.
        let mid_turn_rounds = if self.server.is_some() { MID_TURN_ROUNDS } else { 0 };
        let mut ended_at = None;
        let mut rounds_before_end = 0;
        let mut gate_opened = ending == SessionEnding::TurnCompletes;
        let mut terminated = false;
        let mut rounds = 0;
        let mut hook_removed = None;
        let mut problems = Vec::new();
        let ended_at = loop {
            let _ = self.group.try_wait();
            let before = self.processes.running();
            if before.is_empty() {
                match (ended_at, ending) {
                    (Some(ended_at), _) => break ended_at,
                    (None, SessionEnding::Signal(..)) => {
                        report.not_run = Some(format!(
                            "{} ended before the signal could be sent (its session lasts one event)",
                            self.installed.harness.name
                        ));
                        return Ok(None);
                    }
                    (None, _) => {
                        report.note("the harness ended on its own before its turn was answered");
                        break watch_started;
                    }
                }
            }
            // Mid-turn rounds first (the model call held): prune must keep the live record.
            let ended_at = match ended_at {
                Some(ended_at) => ended_at,
                None if rounds_before_end >= mid_turn_rounds => {
                    match ending {
                        SessionEnding::TurnCompletes => self.open_gate(),
                        SessionEnding::Signal(signal, SignalTarget::Owner) => signal_process(owner, signal),
                        SessionEnding::Signal(signal, SignalTarget::Group) => self.group.signal(signal),
                        SessionEnding::HooksUntrusted => unreachable!("examined apart"),
                    }
                    *ended_at.insert(Instant::now())
                }
                None => {
                    rounds_before_end += 1;
                    watch_started
                }
            };
            let row = self.owner_row(owner)?;
            let pruned = self.tool_json("roster-prune", &["--json"])?;
            let pruned_owner = pruned["removed"].as_array().is_some_and(|rows| {
                rows.iter().any(|row| row["session_pid"].as_u64() == Some(u64::from(owner)))
            });
            let after = self.processes.running();
            rounds += 1;
            if !after.is_empty() {
                let still = after.join(", ");
                if pruned_owner {
                    problems.push(format!("roster-prune removed the record while {still} ran"));
                }
                match &row {
                    Some(row) if row["liveness"] == "dead" => problems.push(format!(
                        "roster-list judged it dead ({}) while {still} ran",
                        row["liveness_reason"].as_str().unwrap_or_default()
                    )),
                    None if hook_removed.is_none() => {
                        if self.shim.session_end_begun() {
                            hook_removed = Some(ended_at.elapsed());
                        } else if !pruned_owner {
                            problems.push(format!(
                                "the record vanished without a session-end hook while {still} ran"
                            ));
                        }
                    }
                    _ => {}
                }
            }
            if problems.len() > 3 {
                break ended_at;
            }
            let waited = ended_at.elapsed();
            if rounds_before_end < mid_turn_rounds {
                // not ended yet
            } else if !gate_opened && waited > SIGNAL_GRACE {
                report.note(format!(
                    "still running {} after the signal: {}; the turn is answered",
                    milliseconds(waited),
                    after.join(", ")
                ));
                self.open_gate();
                gate_opened = true;
            } else if !terminated && waited > SIGNAL_GRACE + TURN_GRACE {
                if ending == SessionEnding::TurnCompletes {
                    report.fail(format!(
                        "{} did not exit within {TURN_GRACE:?} of its turn's answer",
                        self.installed.harness.name
                    ));
                }
                report.note(format!("still running: {}; SIGTERM to each", after.join(", ")));
                for pid in self.processes.running_pids() {
                    signal_process(pid, "TERM");
                }
                terminated = true;
            } else if waited > SIGNAL_GRACE + TURN_GRACE + Duration::from_secs(10) {
                report.note(format!("ignored SIGTERM: {}; SIGKILL to each", after.join(", ")));
                for pid in self.processes.running_pids() {
                    signal_process(pid, "KILL");
                }
            }
            ensure!(
                waited < EXIT_DEADLINE,
                "{} did not end within {EXIT_DEADLINE:?}",
                self.installed.harness.name
            );
            std::thread::sleep(POLL_INTERVAL);
        };
        let last_exit = Instant::now();
        let status =
            self.group.try_wait().map(|status| status.to_string()).unwrap_or_else(|| "not reaped".to_owned());
        report.note(format!(
            "last harness process gone {} after the end began (owner: {status}); {rounds} list+prune rounds while it ran ({} after the end began); processes seen: {}",
            milliseconds(last_exit - ended_at),
            rounds - rounds_before_end,
            self.processes.all_seen().join(", ")
        ));
        if let Some(after) = hook_removed {
            report.note(format!(
                "the session-end hook removed the record {} after the end began",
                milliseconds(after)
            ));
        }
        for problem in problems {
            report.fail(problem);
        }
        Ok(Some(last_exit))
    }

    /// Within 1 s after the last process exits the record is gone or dead, and prune
    /// removes a dead one.
    pub(super) fn check_after_last_exit(
        &mut self,
        owner: u32,
        last_exit: Instant,
        report: &mut SessionReport,
    ) -> anyhow::Result<()> {
        let verdict = loop {
            match self.owner_row(owner)? {
                None => break Some(("gone", last_exit.elapsed())),
                Some(row) if row["liveness"] == "dead" => break Some(("dead", last_exit.elapsed())),
                Some(_) if last_exit.elapsed() > GONE_AFTER_LAST_PROCESS * 5 => break None,
                Some(_) => std::thread::sleep(POLL_INTERVAL),
            }
        };
        match verdict {
            Some((state, after)) if after <= GONE_AFTER_LAST_PROCESS => {
                report.note(format!("record {state} {} after the last harness process", milliseconds(after)));
            }
            other => report.fail(format!(
                "the record was not gone or dead within {} after the last harness process exited ({other:?})",
                milliseconds(GONE_AFTER_LAST_PROCESS)
            )),
        }
        if self.world.record(owner).is_some() {
            reap_dead_record(self.world, owner, self.binaries, self.node, report)?;
        }
        Ok(())
    }
}

/// Codex with roster's hooks installed but not trusted: no record while its turn is held,
/// none after it ends, and nothing in the hook log: Codex skipped the hooks silently.
pub(super) fn examine_untrusted_session(
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
pub(super) fn wait_for_model_call(
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

/// A session that ended without a session-end hook leaves a record of a dead owner, which
/// `roster-prune` must remove.
pub(super) fn reap_dead_record(
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
