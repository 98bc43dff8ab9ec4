//! A real desktop for the notifier's tests: an X server of its own
//! (Xvfb), a D-Bus session bus of its own (`dbus-daemon --session` on a
//! socket in a scratch directory) and a real notification server on it
//! (Debian's dunst), read back with dunst's own `dunstctl` and with
//! `dbus-monitor`, which records every `Notify` call on the bus. All of
//! it is killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{poll_until, require_tool};

pub struct NotificationDesktop {
    xvfb: Child,
    bus: Child,
    server: Option<Child>,
    monitor: Child,
    /// `DISPLAY`.
    pub display: String,
    /// `DBUS_SESSION_BUS_ADDRESS`.
    pub bus_address: String,
    /// What `dbus-monitor` printed, line by line.
    monitored: Arc<Mutex<Vec<String>>>,
    _directory: tempfile::TempDir,
}

impl NotificationDesktop {
    pub fn start() -> NotificationDesktop {
        let xvfb_program = require_tool("Xvfb");
        let bus_program = require_tool("dbus-daemon");
        require_tool("dunst");
        require_tool("dunstctl");
        let monitor_program = require_tool("dbus-monitor");
        require_tool("busctl");
        let directory = tempfile::tempdir().expect("a scratch directory");
        // Xvfb chooses a free display itself and says which on a pipe
        // (-displayfd): two tests choosing at once never pick the same one.
        let (read_end, write_end) = nix::unistd::pipe().expect("a pipe");
        nix::fcntl::fcntl(&read_end, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC))
            .expect("close-on-exec");
        let xvfb = Command::new(xvfb_program)
            .args([
                "-displayfd",
                &std::os::fd::AsRawFd::as_raw_fd(&write_end).to_string(),
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb");
        drop(write_end);
        let mut number = String::new();
        BufReader::new(std::fs::File::from(read_end)).read_line(&mut number).expect("Xvfb says its display");
        let number = number.trim().to_owned();
        assert!(!number.is_empty(), "Xvfb chose no display");
        let display = format!(":{number}");
        let socket = directory.path().join("bus");
        let bus_address = format!("unix:path={}", socket.display());
        let bus = Command::new(bus_program)
            .args(["--session", "--nofork", &format!("--address={bus_address}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-daemon");
        assert!(poll_until(Duration::from_secs(10), || socket.exists()), "dbus-daemon never listened");
        let monitored = Arc::new(Mutex::new(Vec::new()));
        let mut monitor = Command::new(monitor_program)
            .args(["--address", &bus_address, "interface='org.freedesktop.Notifications'"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-monitor");
        let lines = monitored.clone();
        let stdout = monitor.stdout.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        });
        let mut desktop = NotificationDesktop {
            xvfb,
            bus,
            server: None,
            monitor,
            display,
            bus_address,
            monitored,
            _directory: directory,
        };
        desktop.start_server();
        desktop
    }

    /// Starts dunst (again), and waits until it answers.
    pub fn start_server(&mut self) {
        let server = Command::new("dunst")
            .env("DISPLAY", &self.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus_address)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dunst");
        self.server = Some(server);
        assert!(
            poll_until(Duration::from_secs(10), || self.dunstctl(&["count", "displayed"]).is_some()),
            "dunst never answered on the bus"
        );
    }

    /// Stops dunst (SIGSTOP: it holds its name on the bus and answers
    /// nothing, a hung server), or kills it.
    pub fn stop_server(&mut self, hang: bool) {
        if let Some(server) = self.server.as_mut() {
            let pid = nix::unistd::Pid::from_raw(server.id() as i32);
            if hang {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP);
                return;
            }
            let _ = server.kill();
            let _ = server.wait();
            self.server = None;
        }
    }

    /// Lets a stopped dunst go on.
    pub fn continue_server(&mut self) {
        if let Some(server) = self.server.as_mut() {
            let pid = nix::unistd::Pid::from_raw(server.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT);
        }
    }

    /// `dunstctl args…` on this bus; its stdout when it succeeded.
    pub fn dunstctl(&self, args: &[&str]) -> Option<String> {
        let output = Command::new("dunstctl")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus_address)
            .env("DISPLAY", &self.display)
            .stdin(Stdio::null())
            .output()
            .ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// How many notices dunst shows now.
    pub fn displayed(&self) -> usize {
        self.dunstctl(&["count", "displayed"]).and_then(|count| count.parse().ok()).unwrap_or(usize::MAX)
    }

    /// The summaries of the notices dunst keeps in its history (closed ones).
    pub fn history_summaries(&self) -> Vec<String> {
        let history = self.dunstctl(&["history"]).unwrap_or_default();
        let value: serde_json::Value = serde_json::from_str(&history).unwrap_or_default();
        value["data"][0]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|notice| notice["summary"]["data"].as_str().map(str::to_owned))
            .collect()
    }

    /// The summaries of every `Notify` call seen on the bus, in order (the
    /// fourth argument: app name, replaces id, icon, summary, body…).
    pub fn notify_calls(&self) -> Vec<String> {
        self.timed_notify_calls().into_iter().map(|(_, summary)| summary).collect()
    }

    /// Every `Notify` call seen on the bus, in order: when the bus passed
    /// it on (its `time=`, the wall clock), and its summary.
    pub fn timed_notify_calls(&self) -> Vec<(std::time::SystemTime, String)> {
        let lines = self.monitored.lock().unwrap().clone();
        let mut calls = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            if !(line.contains("member=Notify") && line.starts_with("method call")) {
                continue;
            }
            let strings: Vec<&str> = lines[index + 1..]
                .iter()
                .take_while(|line| line.starts_with(' '))
                .filter_map(|line| line.trim().strip_prefix("string \""))
                .collect();
            let time = line
                .split(' ')
                .find_map(|word| word.strip_prefix("time="))
                .and_then(|seconds| seconds.parse::<f64>().ok())
                .map_or(std::time::UNIX_EPOCH, |seconds| {
                    std::time::UNIX_EPOCH + Duration::from_secs_f64(seconds)
                });
            if let Some(summary) = strings.get(2) {
                calls.push((time, summary.trim_end_matches('"').to_owned()));
            }
        }
        calls
    }

    /// How many `CloseNotification` calls were seen on the bus.
    pub fn close_calls(&self) -> usize {
        self.monitored.lock().unwrap().iter().filter(|line| line.contains("member=CloseNotification")).count()
    }
}

impl Drop for NotificationDesktop {
    fn drop(&mut self) {
        self.continue_server();
        for child in
            [self.server.as_mut(), Some(&mut self.monitor), Some(&mut self.bus), Some(&mut self.xvfb)]
                .into_iter()
                .flatten()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
