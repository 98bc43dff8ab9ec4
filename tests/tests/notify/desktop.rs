//! The desktop backend against a real notification server: dunst on a
//! D-Bus session bus of its own, under Xvfb, with a session in a real tmux
//! pane and a client attached elsewhere. A session that starts waiting
//! gives exactly one notice naming it, within a second; a flap gives no
//! second one; the notice's action (invoked with `dunstctl action`) runs
//! roster-focus, which takes the client to the session's pane; the notice
//! is closed once the session stops waiting; and while the client shows
//! that pane, a session starting to wait there gives no notice at all.

use std::time::{Duration, Instant};

use tests::notification_desktop::NotificationDesktop;
use tests::tmux::{AttachedClient, TmuxServer};
use tests::{Sandbox, poll_until};

use crate::{Notifier, claude_event, register};

const TITLE: &str = "wren (claude-code) waits for your permission";

#[test]
fn a_waiting_session_gives_one_desktop_notice_whose_action_goes_there_and_which_closes_after() {
    let desktop = NotificationDesktop::start();
    let sandbox = Sandbox::new();
    let server = TmuxServer::start("work");
    server.tmux(&["new-session", "-d", "-s", "play"]);
    let (pane, shell) = server.new_window("work");
    let client = AttachedClient::attach(&server, "play");
    register(&sandbox, shell, "s-wren", "wren");
    claude_event(&sandbox, "s-wren", "UserPromptSubmit");

    let notifier = Notifier::start(
        &sandbox,
        &["--backend", "desktop", "--flap-window", "2"],
        &[("DBUS_SESSION_BUS_ADDRESS", &desktop.bus_address)],
    );
    // The watch is up once a second session, waiting from the start, is
    // told of (sessions already waiting are told of once).
    let owner = tests::Owner::spawn();
    register(&sandbox, owner.pid(), "s-early", "early");
    claude_event(&sandbox, "s-early", "PermissionRequest");
    notifier.wait_for("show", 1, Duration::from_secs(20));
    assert!(poll_until(Duration::from_secs(5), || desktop.displayed() == 1), "{}", notifier.stderr());
    // It stops waiting: its notice is withdrawn after the flap window.
    claude_event(&sandbox, "s-early", "PreToolUse");
    notifier.wait_for("withdraw", 1, Duration::from_secs(5));
    assert!(poll_until(Duration::from_secs(2), || desktop.displayed() == 0), "{}", notifier.stderr());

    // Starts waiting: one notice, naming it, handed over and shown within 1 s.
    let changed = Instant::now();
    claude_event(&sandbox, "s-wren", "PermissionRequest");
    let handed = notifier.wait_for("show", 2, Duration::from_secs(5));
    assert!(handed - changed < Duration::from_secs(1), "handed over after {:?}", handed - changed);
    assert!(poll_until(Duration::from_secs(1), || desktop.displayed() == 1), "{}", notifier.stderr());
    assert!(changed.elapsed() < Duration::from_millis(1500), "shown after {:?}", changed.elapsed());
    let calls = desktop.notify_calls();
    assert_eq!(calls.iter().filter(|summary| *summary == TITLE).count(), 1, "{calls:#?}");
    let shown = &notifier.actions("show")[1]["notice"];
    assert_eq!(shown["agent"], "wren", "{shown:#}");
    assert_eq!(shown["project"], "app", "{shown:#}");
    assert_eq!(shown["urgency"], "normal", "{shown:#}");

    // A flap within the window: still the one notice.
    claude_event(&sandbox, "s-wren", "PreToolUse");
    claude_event(&sandbox, "s-wren", "PermissionRequest");
    std::thread::sleep(Duration::from_secs(3));
    let calls = desktop.notify_calls();
    assert_eq!(calls.iter().filter(|summary| *summary == TITLE).count(), 1, "{calls:#?}");
    assert_eq!(desktop.displayed(), 1);

    // Its action runs roster-focus: the client goes to the session's pane.
    assert_ne!(server.client_pane(&client.name), pane);
    desktop.dunstctl(&["action", "0"]).expect("dunstctl action");
    assert!(
        poll_until(Duration::from_secs(10), || server.client_pane(&client.name) == pane),
        "the client never went to {pane}: {}",
        notifier.stderr()
    );

    // Stops waiting: withdrawn after the flap window, closed on the desktop.
    claude_event(&sandbox, "s-wren", "PostToolUse");
    notifier.wait_for("withdraw", 2, Duration::from_secs(5));
    assert!(poll_until(Duration::from_secs(2), || desktop.displayed() == 0), "{}", notifier.stderr());
    assert!(
        desktop.history_summaries().iter().any(|summary| summary == TITLE),
        "{:?}",
        desktop.history_summaries()
    );

    // The client shows its pane now: waiting again gives no notice.
    claude_event(&sandbox, "s-wren", "PermissionRequest");
    notifier.wait_for("in-front", 1, Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(500));
    let calls = desktop.notify_calls();
    assert_eq!(calls.iter().filter(|summary| *summary == TITLE).count(), 1, "{calls:#?}");
    assert_eq!(desktop.displayed(), 0);
    notifier.stop();
}

#[test]
fn a_hung_notification_server_delays_no_other_backend_and_one_that_comes_back_is_used_again() {
    let mut desktop = NotificationDesktop::start();
    let sandbox = Sandbox::new();
    let webhook = tests::http_recorder::HttpRecorder::start(tests::http_recorder::Answer::Ok);
    let url = format!("{}/hook", webhook.url);
    let first = tests::Owner::spawn();
    register(&sandbox, first.pid(), "s-first", "first");
    let second = tests::Owner::spawn();
    register(&sandbox, second.pid(), "s-second", "second");
    let notifier = Notifier::start(
        &sandbox,
        &["--backend", "desktop,webhook", "--webhook-url", &url, "--timeout", "1"],
        &[("DBUS_SESSION_BUS_ADDRESS", &desktop.bus_address)],
    );
    std::thread::sleep(Duration::from_millis(500));

    // dunst stopped: it holds its name on the bus and answers nothing.
    desktop.stop_server(true);
    let changed = Instant::now();
    claude_event(&sandbox, "s-first", "PermissionRequest");
    let posted = webhook.wait_for(1, Duration::from_secs(5));
    assert!(
        posted[0].at - changed < Duration::from_millis(1500),
        "posted after {:?}",
        posted[0].at - changed
    );
    assert!(
        poll_until(Duration::from_secs(5), || notifier.stderr().contains("desktop: show of the notice for")
            && notifier.stderr().contains("no answer within 1000 ms")),
        "{}",
        notifier.stderr()
    );

    // dunst gone and started again: the next notice shows.
    desktop.stop_server(false);
    desktop.start_server();
    claude_event(&sandbox, "s-second", "PermissionRequest");
    assert!(
        poll_until(Duration::from_secs(10), || desktop
            .notify_calls()
            .iter()
            .any(|summary| summary == "second (claude-code) waits for your permission")
            && desktop.displayed() >= 1),
        "{:?} {}",
        desktop.notify_calls(),
        notifier.stderr()
    );
    notifier.stop();
}
