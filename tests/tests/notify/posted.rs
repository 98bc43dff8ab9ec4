//! The backends whose notices leave the machine, against a local HTTP(S)
//! server that records what arrives (ntfy's own server is no Debian
//! package: the recorder stands where it would) and a command's stdin:
//! ntfy's headers and body over TLS with a certificate authority of its
//! own and a token from the environment, the webhook's JSON, `--redact`,
//! the exec command's JSON, the `[notify]` table of the user config, the
//! crash and turn-finished triggers, and a hung server that delays no
//! other backend past the timeout.

use std::time::{Duration, Instant};

use serde_json::Value;
use tests::http_recorder::{Answer, HttpRecorder};
use tests::{Owner, Sandbox, poll_until};

use crate::{Notifier, claude_event, register, write_user_config};

#[test]
fn ntfy_over_tls_and_the_webhook_get_the_notice_with_paths_and_names_redacted() {
    let sandbox = Sandbox::new();
    let ntfy = HttpRecorder::start_tls(Answer::Ok);
    let webhook = HttpRecorder::start(Answer::Ok);
    let owner = Owner::spawn();
    register(&sandbox, owner.pid(), "s-http", "wren");
    claude_event(&sandbox, "s-http", "PermissionRequest");
    let topic = format!("{}/agents", ntfy.url);
    let ca = ntfy.ca_certificate.as_ref().unwrap().to_str().unwrap().to_owned();
    write_user_config(
        &sandbox,
        &format!(
            "[notify]\nbackends = [\"ntfy\", \"webhook\"]\nredact = true\n[notify.ntfy]\nurl = \"{topic}\"\n\
             token_env = \"NTFY_TEST_TOKEN\"\ntags = [\"robot\"]\nclick = \"https://example.invalid/go\"\n\
             ca_certificate = \"{ca}\"\n[notify.webhook]\nurl = \"{}/hook\"\n",
            webhook.url
        ),
    );
    let notifier = Notifier::start(&sandbox, &[], &[("NTFY_TEST_TOKEN", "tk_secret")]);
    let published = ntfy.wait_for(1, Duration::from_secs(20));
    let posted = webhook.wait_for(1, Duration::from_secs(5));

    let request = &published[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/agents"), "{request:#?}");
    assert_eq!(request.headers["authorization"], "Bearer tk_secret", "{request:#?}");
    assert_eq!(request.headers["title"], "claude-code waits for your permission", "{request:#?}");
    assert_eq!(request.headers["priority"], "4", "{request:#?}");
    assert_eq!(request.headers["tags"], "waiting,robot", "{request:#?}");
    assert_eq!(request.headers["click"], "https://example.invalid/go", "{request:#?}");
    let body = String::from_utf8_lossy(&request.body);
    assert!(body.starts_with("waiting "), "{body}");
    for secret in ["wren", "app", "s-http", sandbox.base().to_str().unwrap()] {
        assert!(
            !body.contains(secret) && !request.headers.values().any(|value| value.contains(secret)),
            "{secret}"
        );
    }

    let message: Value = serde_json::from_slice(&posted[0].body).expect("the webhook posts JSON");
    assert_eq!(posted[0].headers["content-type"], "application/json");
    assert_eq!(message["schema"], 1, "{message:#}");
    assert_eq!(message["action"], "show", "{message:#}");
    assert_eq!(message["notice"]["trigger"], "waiting", "{message:#}");
    assert_eq!(message["notice"]["session_pid"], owner.pid(), "{message:#}");
    assert_eq!(message["notice"]["redacted"], true, "{message:#}");
    for key in ["agent", "cwd", "project", "session_id"] {
        assert!(message["notice"][key].is_null(), "{key} in {message:#}");
    }
    // The token never reaches the command line or the log.
    assert!(!notifier.stderr().contains("tk_secret"), "{}", notifier.stderr());
    notifier.stop();
}

#[test]
fn a_hung_server_delays_no_other_backend_past_the_timeout_and_is_retried_and_logged() {
    let sandbox = Sandbox::new();
    let hung = HttpRecorder::start(Answer::Hang);
    let healthy = HttpRecorder::start(Answer::Ok);
    let exec_output = sandbox.base().join("exec.jsonl");
    write_user_config(
        &sandbox,
        &format!(
            "[notify]\nbackends = [\"ntfy\", \"webhook\", \"exec\"]\ntimeout = 1\n[notify.ntfy]\nurl = \"{}/t\"\n\
             [notify.webhook]\nurl = \"{}/hook\"\n[notify.exec]\ncommand = [\"sh\", \"-c\", \"cat >> {}\"]\n",
            hung.url,
            healthy.url,
            exec_output.display()
        ),
    );
    let notifier = Notifier::start(&sandbox, &[], &[]);
    let first = Owner::spawn();
    register(&sandbox, first.pid(), "s-one", "one");
    let second = Owner::spawn();
    register(&sandbox, second.pid(), "s-two", "two");

    let changed = Instant::now();
    claude_event(&sandbox, "s-one", "PermissionRequest");
    claude_event(&sandbox, "s-two", "PermissionRequest");
    let posted = healthy.wait_for(2, Duration::from_secs(5));
    for request in &posted {
        assert!(
            request.at - changed < Duration::from_millis(1500),
            "posted after {:?}",
            request.at - changed
        );
    }
    assert!(
        poll_until(Duration::from_secs(5), || std::fs::read_to_string(&exec_output)
            .is_ok_and(|text| text.lines().count() == 2)),
        "the exec command did not get both notices: {}",
        notifier.stderr()
    );
    let lines: Vec<Value> = std::fs::read_to_string(&exec_output)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON on stdin"))
        .collect();
    assert!(
        lines.iter().all(|line| line["action"] == "show" && line["notice"]["agent"].is_string()),
        "{lines:#?}"
    );
    // The hung server got the first notice, never answered, and was given
    // up on after the timeout, said on stderr, and tried again.
    assert!(
        poll_until(Duration::from_secs(10), || notifier.stderr().contains("ntfy: show of the notice for")
            && notifier.stderr().contains("no answer within 1000 ms")
            && notifier.stderr().contains("trying again in 500 ms")),
        "{}",
        notifier.stderr()
    );
    assert!(poll_until(Duration::from_secs(5), || hung.requests().len() >= 2), "{:#?}", hung.requests());
    notifier.stop();
}

#[test]
fn a_crash_and_a_long_turn_are_told_and_triggers_can_be_turned_off() {
    let sandbox = Sandbox::new();
    let webhook = HttpRecorder::start(Answer::Ok);
    let url = format!("{}/hook", webhook.url);
    let notifier = Notifier::start(
        &sandbox,
        &["--backend", "webhook", "--webhook-url", &url, "--turn-finished-after", "1"],
        &[],
    );
    let worker = Owner::spawn();
    register(&sandbox, worker.pid(), "s-turn", "turner");
    let crasher = Owner::spawn();
    register(&sandbox, crasher.pid(), "s-crash", "crasher");
    notifier.wait_for("watching", 1, Duration::from_secs(20));
    claude_event(&sandbox, "s-turn", "UserPromptSubmit");
    // A turn of more than the second asked for.
    std::thread::sleep(Duration::from_millis(1200));
    claude_event(&sandbox, "s-turn", "Stop");
    // A short turn after it is not told.
    claude_event(&sandbox, "s-turn", "UserPromptSubmit");
    claude_event(&sandbox, "s-turn", "Stop");
    crasher.kill();
    let posted = webhook.wait_for(3, Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(500));
    let messages: Vec<Value> =
        webhook.requests().iter().map(|request| serde_json::from_slice(&request.body).unwrap()).collect();
    let shown: Vec<(&str, &str)> = messages
        .iter()
        .filter(|message| message["action"] == "show")
        .map(|message| {
            (message["notice"]["trigger"].as_str().unwrap(), message["notice"]["agent"].as_str().unwrap())
        })
        .collect();
    assert_eq!(shown, [("turn-finished", "turner"), ("crashed", "crasher")], "{messages:#?}");
    let crash = messages.iter().find(|message| message["notice"]["trigger"] == "crashed").unwrap();
    assert_eq!(crash["notice"]["urgency"], "critical", "{crash:#}");
    // The next turn withdraws the turn-finished notice.
    assert!(messages.iter().any(|message| message["action"] == "withdraw"), "{messages:#?} {posted:#?}");
    notifier.stop();

    // Only the crash trigger on: a wait says nothing.
    let quiet = HttpRecorder::start(Answer::Ok);
    let url = format!("{}/hook", quiet.url);
    let notifier = Notifier::start(
        &sandbox,
        &["--backend", "webhook", "--webhook-url", &url, "--triggers", "crashed"],
        &[],
    );
    claude_event(&sandbox, "s-turn", "PermissionRequest");
    std::thread::sleep(Duration::from_secs(2));
    assert!(quiet.requests().is_empty(), "{:#?}", quiet.requests());
    notifier.stop();
}
