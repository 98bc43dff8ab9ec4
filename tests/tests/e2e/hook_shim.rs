//! A timing and logging shim in front of the roster binaries the installed hooks call: the
//! e2e run installs the hooks with `--bin-dir` at the shim, which keeps each payload the
//! harness hands its hook (byte for byte), runs the real `roster-register`, `roster-prune`
//! or `roster-state` with the same arguments, environment and payload, and logs how long
//! that took. That is how the run compares a record with what the harness said, sees which
//! state events a harness really sent, and measures hook latency for harnesses whose hooks
//! roster does not time itself (plugins included).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;

/// The roster tools the hooks call.
const SHIMMED_TOOLS: [&str; 3] = ["roster-register", "roster-prune", "roster-state"];

/// Where a shim lives and logs.
pub struct HookShim {
    pub bin_dir: PathBuf,
    log_dir: PathBuf,
}

/// What a hook run was for, by the roster tool it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookKind {
    /// `roster-register`.
    SessionStart,
    /// `roster-prune --current`.
    SessionEnd,
    /// `roster-state`.
    State,
}

/// One hook run the shim saw.
#[derive(Clone, Debug)]
pub struct HookCall {
    /// `roster-register`, `roster-prune` or `roster-state`.
    pub tool: String,
    pub kind: HookKind,
    /// The event the hook was installed for (`--event NAME`), with the payload's kind for a
    /// notification (`Notification:permission_prompt`); for opencode's plugin, which sends
    /// every state event to one command, the payload's `type` (and a status's kind:
    /// `session.status:busy`).
    pub event: Option<String>,
    /// From the shim's first line to the roster tool's exit.
    pub latency: Duration,
    /// The part of `latency` spent before the roster tool started: until the harness closed
    /// the payload it writes to the hook's stdin.
    pub payload_wait: Duration,
    pub exit_status: i32,
    /// The payload as the harness wrote it, parsed; `Null` when it was empty or not JSON.
    pub payload: Value,
}

impl HookCall {
    pub fn is_session_start(&self) -> bool {
        self.kind == HookKind::SessionStart
    }
}

impl HookShim {
    /// Writes the shim scripts under `root` for the real tools in `binaries`.
    pub fn create(root: &Path, binaries: &Path) -> anyhow::Result<HookShim> {
        let bin_dir = root.join("hook-shim");
        let log_dir = root.join("hook-calls");
        fs::create_dir_all(&bin_dir)?;
        fs::create_dir_all(&log_dir)?;
        for tool in SHIMMED_TOOLS {
            // `date +%s%N` first and last: the shell's own start (about a millisecond) is the
            // only part of the hook's run outside the measurement.
            let script = format!(
                "#!/bin/sh\n\
                 # roster e2e hook shim: keeps the payload, times the real {tool}\n\
                 started=$(date +%s%N)\n\
                 payload='{log}/{tool}-'\"$started-$$\".payload\n\
                 cat > \"$payload\"\n\
                 read=$(date +%s%N)\n\
                 '{real}' \"$@\" < \"$payload\"\n\
                 status=$?\n\
                 ended=$(date +%s%N)\n\
                 echo \"{tool} $started $read $ended $status $payload $*\" >> '{log}/calls.log'\n\
                 exit $status\n",
                log = log_dir.display(),
                real = binaries.join(tool).display(),
            );
            let path = bin_dir.join(tool);
            fs::write(&path, script).with_context(|| format!("writing {}", path.display()))?;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
        }
        // roster-hooks checks that the directory holds the tools the hooks call; it does.
        Ok(HookShim { bin_dir, log_dir })
    }

    /// Whether a session-end hook has begun (its payload kept), finished or not: the
    /// record can be gone before the shim logs the run, which comes after the tool's exit.
    pub fn session_end_begun(&self) -> bool {
        let Ok(entries) = fs::read_dir(&self.log_dir) else { return false };
        entries.filter_map(|entry| entry.ok()).any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with("roster-prune-") && name.ends_with(".payload")
        })
    }

    /// Every hook run that has finished, in the order they finished.
    pub fn calls(&self) -> Vec<HookCall> {
        let log = fs::read_to_string(self.log_dir.join("calls.log")).unwrap_or_default();
        log.lines()
            .filter_map(|line| {
                let mut words = line.splitn(7, ' ');
                let tool = words.next()?.to_owned();
                let started: u128 = words.next()?.parse().ok()?;
                let read: u128 = words.next()?.parse().ok()?;
                let ended: u128 = words.next()?.parse().ok()?;
                let exit_status = words.next()?.parse().ok()?;
                let payload = fs::read(words.next()?).ok();
                let payload =
                    payload.and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or(Value::Null);
                let arguments: Vec<&str> = words.next().unwrap_or_default().split(' ').collect();
                let kind = match tool.as_str() {
                    "roster-register" => HookKind::SessionStart,
                    "roster-prune" => HookKind::SessionEnd,
                    _ => HookKind::State,
                };
                let event = arguments
                    .iter()
                    .position(|argument| *argument == "--event")
                    .and_then(|index| arguments.get(index + 1))
                    .map(|event| (*event).to_owned())
                    .or_else(|| (kind == HookKind::State).then(|| opencode_event(&payload)).flatten())
                    .map(|event| match payload["notification_type"].as_str() {
                        Some(notification) => format!("{event}:{notification}"),
                        None => event,
                    });
                let nanoseconds = |from: u128, to: u128| {
                    u64::try_from(to.saturating_sub(from)).ok().map(Duration::from_nanos)
                };
                let latency = nanoseconds(started, ended)?;
                let payload_wait = nanoseconds(started, read)?;
                Some(HookCall { tool, kind, event, latency, payload_wait, exit_status, payload })
            })
            .collect()
    }
}

/// The event an opencode plugin payload is: its `type`, and for a status its kind.
fn opencode_event(payload: &Value) -> Option<String> {
    let kind = payload["type"].as_str()?;
    Some(match payload["properties"]["status"]["type"].as_str() {
        Some(status) => format!("{kind}:{status}"),
        None => kind.to_owned(),
    })
}
