//! The terminal backend on a real pseudo-terminal (`script`): a session
//! that starts waiting gives an OSC 777 notice, with its title and body,
//! and the bell, written to the terminal roster-notify runs in.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tests::{Owner, Sandbox, binary, poll_until, require_tool, shell_quote};

use crate::{claude_event, register};

#[test]
fn a_waiting_session_rings_the_terminal_with_an_osc_777_notice() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    register(&sandbox, owner.pid(), "s-term", "wren");
    claude_event(&sandbox, "s-term", "PermissionRequest");
    let script = require_tool("script");
    let line = format!(
        "{} --dir {} --backend terminal",
        shell_quote(binary("roster-notify").to_str().unwrap()),
        shell_quote(sandbox.root().to_str().unwrap())
    );
    let mut child = Command::new(script)
        .args(["-qfec", &line, "/dev/null"])
        .env_clear()
        .env("HOME", sandbox.home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start roster-notify on a pseudo-terminal");
    let written = Arc::new(Mutex::new(Vec::new()));
    let mut stdout = child.stdout.take().unwrap();
    let sink = written.clone();
    std::thread::spawn(move || {
        let mut buffer = [0; 4096];
        while let Ok(count) = stdout.read(&mut buffer) {
            if count == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buffer[..count]);
        }
    });
    let expected = "\x1b]777;notify;wren (claude-code) waits for your permission;app · waiting ";
    let found = poll_until(Duration::from_secs(20), || {
        String::from_utf8_lossy(&written.lock().unwrap()).contains(expected)
    });
    let _ = child.kill();
    let _ = child.wait();
    let text = String::from_utf8_lossy(&written.lock().unwrap()).into_owned();
    assert!(found, "no OSC 777 notice on the terminal: {text:?}");
    let after = &text[text.find(expected).unwrap()..];
    let end = after.find('\x07').expect("the sequence ends with BEL");
    assert_eq!(&after[end..end + 2], "\x07\x07", "the bell follows the sequence: {after:?}");
}
