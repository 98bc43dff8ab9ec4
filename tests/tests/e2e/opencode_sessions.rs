//! The e2e's clear/resume case for opencode, the one harness that starts a second session
//! inside the same process without a person at a terminal: `opencode serve` creates a
//! session for every `POST /session`, and roster's plugin registers each on
//! `session.created`. The second session must refresh the one record (its session id now
//! the second's) with the same owner, and the record must go when opencode exits.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::fake_model_server::FakeModelServer;
use super::harness_processes::ProcessGroup;
use super::hook_latency::milliseconds;
use super::hook_shim::HookShim;
use super::real_harnesses::InstalledHarness;
use super::session_run::SessionReport;
use super::session_world::{SessionWorld, install_hooks, last_lines};
use super::{POLL_INTERVAL, REGISTRATION_DEADLINE};

/// How soon after opencode exits its record must be gone or dead.
const GONE_AFTER_EXIT: Duration = Duration::from_secs(1);

/// How long a session's record may take to appear or refresh after the session is created.
const RECORD_DEADLINE: Duration = Duration::from_secs(10);

/// Runs the case and reports what it saw.
pub fn second_session(
    installed: &InstalledHarness,
    binaries: &Path,
    node: &Path,
) -> anyhow::Result<SessionReport> {
    let harness = installed.harness;
    let world = SessionWorld::create(harness.name, "clear")?;
    let mut report = SessionReport::new();
    let server = FakeModelServer::start(harness.api.context("opencode speaks a model API")?)?;
    harness.prepare_home(&world.home, &server.base_url())?;
    let shim = HookShim::create(&world.root, binaries)?;
    install_hooks(&world, harness, &shim, binaries, node, &mut report)?;
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let output_path = world.harness_output();
    let arguments = ["serve", "--hostname", "127.0.0.1", "--port", &port.to_string()].map(str::to_owned);
    let mut child = world.spawn_harness(installed, &arguments, node, &server.base_url())?;
    let owner = child.id();
    let mut group = ProcessGroup { leader: owner, child: Some(&mut child) };
    let outcome = examine(&world, &mut group, port, binaries, node, &mut report);
    group.kill();
    report.hook_calls = shim.calls();
    if let Err(error) = outcome {
        report.fail(format!("{error:#}"));
    }
    if report.failures.is_empty() {
        let _ = fs::remove_dir_all(&world.root);
    } else {
        report.note(format!("kept {} for inspection; opencode's output ends with:", world.root.display()));
        for line in last_lines(&output_path, 15) {
            report.note(format!("  | {line}"));
        }
    }
    Ok(report)
}

fn examine(
    world: &SessionWorld,
    group: &mut ProcessGroup<'_>,
    port: u16,
    binaries: &Path,
    node: &Path,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    let owner = group.leader;
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = group.try_wait() {
            bail!("opencode serve exited ({status}) before listening");
        }
        ensure!(started.elapsed() < REGISTRATION_DEADLINE, "opencode serve did not listen on {port}");
        std::thread::sleep(POLL_INTERVAL);
    }
    wait_until_serving(port, group)?;
    let first = create_session(port)?;
    let record = wait_for_session(world, owner, &first)?;
    report.note(format!("first session {first}: record of owner {owner} with that session id"));
    let registered_at = record["registered_at"].clone();
    let second = create_session(port)?;
    let refreshed = wait_for_session(world, owner, &second)?;
    report.note(format!("second session {second}: the same record now carries it"));
    if world.record_pids() != vec![owner] {
        report.fail(format!("records besides the owner's one: {:?}", world.record_pids()));
    }
    if refreshed["session_pid"].as_u64() != Some(u64::from(owner))
        || refreshed["session_pid_verified"] != true
    {
        report.fail(format!(
            "the refreshed record's owner is {} (verified {})",
            refreshed["session_pid"], refreshed["session_pid_verified"]
        ));
    }
    if refreshed["start_ticks"] != record["start_ticks"] {
        report.fail("the refreshed record names another process start than the first");
    }
    if refreshed["refreshed_at"] == record["refreshed_at"] {
        report.fail("refreshed_at did not move on the second session");
    }
    report.note(format!(
        "registered_at {} then {}, refreshed_at {} then {}",
        registered_at, refreshed["registered_at"], record["refreshed_at"], refreshed["refreshed_at"]
    ));
    // opencode's exit: its plugin deregisters on the way out.
    group.signal("TERM");
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = group.try_wait() {
            break status;
        }
        ensure!(signalled.elapsed() < Duration::from_secs(30), "opencode serve ignored SIGTERM");
        std::thread::sleep(POLL_INTERVAL);
    };
    let exited = Instant::now();
    // Gone (its exit handler ran) or dead within 1 s; then prune removes a dead one.
    let state = loop {
        let listed = world.roster_tool(binaries, "roster-list", node).args(["--all", "--json"]).output()?;
        let rows: Value =
            serde_json::from_slice(&listed.stdout).context("roster-list --json printed no JSON")?;
        let row = rows.as_array().and_then(|rows| {
            rows.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(owner))).cloned()
        });
        match row {
            None => break Some("gone"),
            Some(row) if row["liveness"] == "dead" => break Some("dead"),
            Some(_) if exited.elapsed() > GONE_AFTER_EXIT => break None,
            Some(_) => std::thread::sleep(POLL_INTERVAL),
        }
    };
    let after = milliseconds(exited.elapsed());
    match state {
        Some(state) => {
            report.note(format!("opencode serve exited ({status}); the record was {state} {after} after"))
        }
        None => report
            .fail(format!("opencode serve exited ({status}) and its record was still alive {after} after")),
    }
    if world.record(owner).is_some() {
        let pruned = world.roster_tool(binaries, "roster-prune", node).output()?;
        if world.record(owner).is_some() || !pruned.status.success() {
            report.fail("roster-prune kept the dead record");
        } else {
            report.note("roster-prune removed it as dead (opencode's exit handler does not run on SIGTERM)");
        }
    }
    Ok(())
}

/// One request to opencode's server, with a bounded wait for its whole answer; the body.
fn request(port: u16, method: &str, path: &str, timeout: Duration) -> anyhow::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(timeout))?;
    let body = if method == "POST" { "{}" } else { "" };
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    read_response_body(&mut stream)
}

/// Waits until opencode's server answers (it listens before it serves: a request that
/// comes too early is never answered).
fn wait_until_serving(port: u16, group: &mut ProcessGroup<'_>) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if request(port, "GET", "/session", Duration::from_secs(2)).is_ok() {
            return Ok(());
        }
        if let Some(status) = group.try_wait() {
            bail!("opencode serve exited ({status}) before serving");
        }
        ensure!(started.elapsed() < REGISTRATION_DEADLINE, "opencode serve did not answer on port {port}");
        std::thread::sleep(POLL_INTERVAL * 10);
    }
}

/// `POST /session` on opencode's server; the new session's id.
fn create_session(port: u16) -> anyhow::Result<String> {
    let body = request(port, "POST", "/session", Duration::from_secs(30))?;
    let session: Value = serde_json::from_str(body.trim())
        .with_context(|| format!("opencode answered POST /session with {body:?}"))?;
    session["id"].as_str().map(str::to_owned).with_context(|| format!("the new session has no id: {session}"))
}

fn wait_for_session(world: &SessionWorld, owner: u32, session_id: &str) -> anyhow::Result<Value> {
    let started = Instant::now();
    loop {
        if let Some(record) = world.record(owner).filter(|record| record["session_id"] == session_id) {
            return Ok(record);
        }
        ensure!(
            started.elapsed() < RECORD_DEADLINE,
            "no record of {owner} with session id {session_id} within {RECORD_DEADLINE:?}: {:?}; hook errors {:?}",
            world.record(owner),
            world.hook_errors()
        );
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// The body of one HTTP/1.1 response, by its content-length or its chunks: the server may
/// keep the connection open after it.
fn read_response_body(stream: &mut TcpStream) -> anyhow::Result<String> {
    let mut received = Vec::new();
    let mut buffer = [0; 8192];
    loop {
        let text = String::from_utf8_lossy(&received).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let header = |name: &str| {
                head.lines().find_map(|line| {
                    let (key, value) = line.split_once(':')?;
                    key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
                })
            };
            let length = header("content-length").and_then(|length| length.parse::<usize>().ok());
            let chunked =
                header("transfer-encoding").is_some_and(|coding| coding.eq_ignore_ascii_case("chunked"));
            let complete = match length {
                Some(length) => body.get(..length).map(str::to_owned),
                None if chunked => decode_chunks(body),
                None => None,
            };
            if let Some(complete) = complete {
                return Ok(complete);
            }
        }
        let read = stream.read(&mut buffer)?;
        ensure!(read > 0, "the connection closed before the response was complete: {text:?}");
        received.extend_from_slice(&buffer[..read]);
    }
}

/// The chunked `body` decoded, or `None` while its last chunk has not arrived.
fn decode_chunks(mut body: &str) -> Option<String> {
    let mut decoded = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n")?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            return Some(decoded);
        }
        decoded.push_str(rest.get(..size)?);
        body = rest.get(size..)?.strip_prefix("\r\n")?;
    }
}
