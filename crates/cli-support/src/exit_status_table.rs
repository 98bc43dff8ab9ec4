//! Every library error kind's exit status, one row per kind, pinned against
//! the exit codes docs/contract.md §6 documents. A new kind makes the
//! exhaustive matches below fail to compile until it has a row here.

use std::path::PathBuf;

use crate::{BadInput, ExitStatus, Refused};
use owner_liveness::{CaptureError, Pid, PidParseError, ProcReadError, ResolveError};

fn pid() -> Pid {
    Pid::new(4711).expect("4711 is a pid")
}

fn io_error() -> std::io::Error {
    std::io::Error::from_raw_os_error(28)
}

fn registry_errors() -> Vec<(registry_core::Error, ExitStatus)> {
    use registry_core::Error;
    let rows = vec![
        (
            Error::UntrustedDirectory {
                path: "/r".into(),
                problem: "is a symlink".into(),
                fix: "fix".into(),
            },
            ExitStatus::Refused,
        ),
        (Error::Busy { path: "/r/.lock".into(), waited_ms: 5000, holder: Some(42) }, ExitStatus::Failure),
        (Error::Io { operation: "write", path: "/r/x".into(), cause: io_error() }, ExitStatus::Failure),
        (
            Error::SessionIdConflict {
                session_id: "s".into(),
                holder: 42,
                holder_path: "/r/sessions/42.json".into(),
                liveness: "alive".into(),
                reason: "running".into(),
            },
            ExitStatus::Refused,
        ),
        (
            Error::NotOurs {
                path: "/r/sessions/2@4026532200-0123456789abcdef.json".into(),
                why: "alive".into(),
            },
            ExitStatus::Refused,
        ),
        (
            Error::QueueFull { path: "/r/messages/42@4026531836-0123456789abcdef".into(), limit: 64 },
            ExitStatus::Failure,
        ),
        (
            Error::QueueLocked {
                path: "/r/messages/42@4026531836-0123456789abcdef".into(),
                waited_ms: 1000,
                holder: Some(43),
            },
            ExitStatus::Failure,
        ),
        (Error::BadInput("ROSTER_DIR is relative".into()), ExitStatus::BadInput),
        (Error::NoHome, ExitStatus::BadInput),
    ];
    for (error, _) in &rows {
        match error {
            Error::UntrustedDirectory { .. }
            | Error::Busy { .. }
            | Error::Io { .. }
            | Error::SessionIdConflict { .. }
            | Error::NotOurs { .. }
            | Error::QueueFull { .. }
            | Error::QueueLocked { .. }
            | Error::BadInput(_)
            | Error::NoHome => {}
        }
    }
    rows
}

fn consent_errors() -> Vec<(consent::Error, ExitStatus)> {
    use consent::Error;
    // Registry errors keep their own status inside consent's wrapper.
    let mut rows: Vec<(Error, ExitStatus)> =
        registry_errors().into_iter().map(|(error, status)| (Error::Registry(error), status)).collect();
    let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
    rows.push((Error::SessionDirectory { path: "/gone".into(), cause: missing }, ExitStatus::BadInput));
    rows.push((
        Error::SessionDirectoryUnreadable { path: "/full".into(), cause: io_error() },
        ExitStatus::Failure,
    ));
    rows.push((Error::NoSessionDirectory { pid: pid(), why: "no record".into() }, ExitStatus::BadInput));
    rows.push((
        Error::DisarmedMeanwhile { path: "/r/consent/4711@4026531836-0123456789abcdef.json".into() },
        ExitStatus::Failure,
    ));
    for (error, _) in &rows {
        match error {
            Error::Registry(_)
            | Error::SessionDirectory { .. }
            | Error::SessionDirectoryUnreadable { .. }
            | Error::NoSessionDirectory { .. }
            | Error::DisarmedMeanwhile { .. } => {}
        }
    }
    rows
}

fn payload_errors() -> Vec<(harness::PayloadError, ExitStatus)> {
    use harness::PayloadError;
    let rows = vec![
        PayloadError::Terminal,
        PayloadError::Read(nix::errno::Errno::EIO),
        PayloadError::TooLarge { max_bytes: 1 << 20 },
        PayloadError::Deadline { deadline: std::time::Duration::from_secs(1) },
        PayloadError::Empty,
        PayloadError::NotUtf8 { valid_up_to: 3 },
        PayloadError::NotJson { message: "eof".into() },
        PayloadError::NotObject { found: "an array" },
        PayloadError::WrongType { key: "cwd".into(), expected: "a string", found: "a number" },
    ];
    for error in &rows {
        match error {
            PayloadError::Terminal
            | PayloadError::Read(_)
            | PayloadError::TooLarge { .. }
            | PayloadError::Deadline { .. }
            | PayloadError::Empty
            | PayloadError::NotUtf8 { .. }
            | PayloadError::NotJson { .. }
            | PayloadError::NotObject { .. }
            | PayloadError::WrongType { .. } => {}
        }
    }
    rows.into_iter().map(|error| (error, ExitStatus::BadInput)).collect()
}

fn hook_config_errors() -> Vec<(harness::hook_config::HookConfigError, ExitStatus)> {
    use harness::hook_config::HookConfigError;
    let rows = vec![
        (
            HookConfigError::Unusable { path: "/h.json".into(), reason: "not JSON".into() },
            ExitStatus::Refused,
        ),
        (
            HookConfigError::Io { action: "write", path: "/h.json".into(), source: io_error() },
            ExitStatus::Failure,
        ),
        (HookConfigError::BadInput("HOME is not set".into()), ExitStatus::BadInput),
    ];
    for (error, _) in &rows {
        match error {
            HookConfigError::Unusable { .. } | HookConfigError::Io { .. } | HookConfigError::BadInput(_) => {}
        }
    }
    rows
}

fn resolve_errors() -> Vec<(ResolveError, ExitStatus)> {
    let rows = vec![
        ResolveError::InvalidFlag { value: "x".into(), why: PidParseError::NotCanonical },
        ResolveError::InvalidEnv {
            variable: "ROSTER_SESSION_PID".into(),
            value: "x".into(),
            why: PidParseError::NotCanonical,
        },
        ResolveError::NotFound,
        ResolveError::NotAnOwner { named_by: "--pid", pid: pid(), what: "init" },
        ResolveError::HarnessIsInit { harness: "claude-code" },
    ];
    for error in &rows {
        match error {
            ResolveError::InvalidFlag { .. }
            | ResolveError::InvalidEnv { .. }
            | ResolveError::NotFound
            | ResolveError::NotAnOwner { .. }
            | ResolveError::HarnessIsInit { .. } => {}
        }
    }
    rows.into_iter().map(|error| (error, ExitStatus::BadInput)).collect()
}

fn capture_errors() -> Vec<(CaptureError, ExitStatus)> {
    let rows = vec![
        (CaptureError::NotRunning(pid()), ExitStatus::Refused),
        (CaptureError::ExitedDuringCapture(pid()), ExitStatus::Refused),
        (
            CaptureError::ProcUnreadable { pid: pid(), why: ProcReadError::PermissionDenied },
            ExitStatus::Failure,
        ),
        (CaptureError::System { what: "boot id".into(), why: "unreadable".into() }, ExitStatus::Failure),
    ];
    for (error, _) in &rows {
        match error {
            CaptureError::NotRunning(_)
            | CaptureError::ExitedDuringCapture(_)
            | CaptureError::ProcUnreadable { .. }
            | CaptureError::System { .. } => {}
        }
    }
    rows
}

/// Each kind's status, both straight from its `From` impl and as a binary
/// finds it: inside an `anyhow::Error` under a context line.
#[test]
fn every_error_kind_has_its_documented_status() {
    let mut problems = Vec::new();
    let mut check = |what: String, direct: ExitStatus, error: anyhow::Error, expected: ExitStatus| {
        let found = ExitStatus::of(&error.context("doing something"));
        if direct != expected || found != expected {
            problems
                .push(format!("{what}: From gives {direct:?}, the chain {found:?}, documented {expected:?}"));
        }
    };
    for (error, expected) in registry_errors() {
        check(format!("registry {error:?}"), ExitStatus::from(&error), error.into(), expected);
    }
    for (error, expected) in consent_errors() {
        check(format!("consent {error:?}"), ExitStatus::from(&error), error.into(), expected);
    }
    for (error, expected) in payload_errors() {
        check(format!("payload {error:?}"), ExitStatus::from(&error), error.into(), expected);
    }
    for (error, expected) in hook_config_errors() {
        check(format!("hook config {error:?}"), ExitStatus::from(&error), error.into(), expected);
    }
    for (error, expected) in resolve_errors() {
        check(format!("resolve {error:?}"), ExitStatus::from(&error), error.into(), expected);
    }
    for (error, expected) in capture_errors() {
        check(format!("capture {error:?}"), ExitStatus::from(&error), error.into(), expected);
    }
    let bad = BadInput("--agent: too long".into());
    check("BadInput".into(), ExitStatus::from(&bad), bad.into(), ExitStatus::BadInput);
    let refused = Refused("owner not running".into());
    check("Refused".into(), ExitStatus::from(&refused), refused.into(), ExitStatus::Refused);
    assert!(problems.is_empty(), "exit statuses differ from the table:\n  {}", problems.join("\n  "));
}

/// The four statuses are the four codes the contract lists, in its words:
/// "`0` done; `1` failed ...; `2` bad input ...; `3` refused by rule".
#[test]
fn statuses_are_the_codes_of_the_contract() {
    let contract_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/contract.md");
    let contract = std::fs::read_to_string(&contract_path).expect("docs/contract.md is readable");
    let contract = contract.split_whitespace().collect::<Vec<_>>().join(" ");
    let table =
        contract.split("Exit codes: ").nth(1).expect("docs/contract.md §6 has an `Exit codes:` paragraph");
    for (status, words) in [
        (ExitStatus::Success, "done"),
        (ExitStatus::Failure, "failed"),
        (ExitStatus::BadInput, "bad input"),
        (ExitStatus::Refused, "refused by rule"),
    ] {
        let entry = format!("`{}` {words}", status.code());
        assert!(table.contains(&entry), "docs/contract.md §6 does not say {entry:?} for {status:?}");
    }
}
