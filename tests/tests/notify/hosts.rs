//! `roster-notify --host`: the sessions of another machine, reached
//! through a real sshd on 127.0.0.1, are told of with their host, and
//! their notice's action goes there (`roster-focus --host`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use tests::http_recorder::{Answer, HttpRecorder};
use tests::sshd::{SshClient, SshHost};
use tests::{Owner, Sandbox, binary};

use crate::{Notifier, claude_event_in};

#[test]
fn a_session_of_another_host_that_starts_waiting_is_told_with_its_host() {
    let client = SshClient::new();
    let binaries = binary("roster-list").parent().unwrap().to_string_lossy().into_owned();
    let host = SshHost::start(&client, &format!("{binaries}:/usr/bin:/bin"));
    let owner = Owner::spawn();
    let registry = host.registry();
    register_there(&registry, owner.pid(), "s-far", "far");
    let webhook = HttpRecorder::start(Answer::Ok);
    let url = format!("{}/hook", webhook.url);
    let sandbox = Sandbox::new();
    let address = host.address();
    let notifier = Notifier::start(
        &sandbox,
        &["--backend", "webhook", "--webhook-url", &url, "--host", &address],
        &[("ROSTER_SSH_COMMAND", &client.ssh_command())],
    );
    // The host's stream is up once a session waiting there from the start
    // is told of (sessions already waiting are told of once).
    let marker = Owner::spawn();
    register_there(&registry, marker.pid(), "s-marker", "marker");
    claude_event_in(&registry, "s-marker", "PermissionRequest");
    webhook.wait_for(1, Duration::from_secs(30));
    claude_event_in(&registry, "s-far", "PermissionRequest");
    let posted = webhook.wait_for(2, Duration::from_secs(20));
    let message: Value = serde_json::from_slice(&posted[1].body).unwrap();
    let notice = &message["notice"];
    assert_eq!(notice["host"], address.as_str(), "{message:#} {}", notifier.stderr());
    assert_eq!(notice["agent"], "far", "{message:#}");
    assert!(notice["body"].as_str().unwrap().contains(&format!("host {address}")), "{message:#}");
    let focus: Vec<&str> =
        notice["focus_command"].as_array().unwrap().iter().map(|word| word.as_str().unwrap()).collect();
    assert_eq!(focus, ["roster-focus", "--host", &address, "--", &owner.pid().to_string()], "{message:#}");
    notifier.stop();
}

/// `roster-register` into the host's registry, as its sessions do.
fn register_there(registry: &Path, pid: u32, session_id: &str, agent: &str) {
    let registered = Command::new(binary("roster-register"))
        .arg("--dir")
        .arg(registry)
        .args([
            "--pid",
            &pid.to_string(),
            "--harness",
            "claude-code",
            "--session-id",
            session_id,
            "--agent",
            agent,
            "-q",
        ])
        .status()
        .expect("roster-register");
    assert!(registered.success());
}
