//! Where a session shows on screen (docs/contract.md §3, `location`): the
//! owner's controlling terminal and the multiplexer or terminal it runs in,
//! as its environment names them when it registers. A claim, not a fact:
//! a tmux pane number is reused after its server restarts, so every use
//! verifies it first (the `location` crate); the record only keeps what was
//! seen.

use serde::{Deserialize, Serialize};

use crate::record::malformed::{Field, FieldError, FieldLimit, FieldProblem};

/// Each value of the `location` object: far above a socket path (108
/// bytes), a screen session name or a pane number.
pub const LOCATION_VALUE_LIMIT: FieldLimit = FieldLimit::bytes(Field::Location, 128);

/// The multiplexers and terminals a location can name, innermost first:
/// a tmux inside kitty shows the session in a tmux pane, and that pane is
/// what to focus.
pub const MULTIPLEXERS: [&str; 5] = ["tmux", "screen", "zellij", "wezterm", "kitty"];

/// The `location` object: every key optional, in this order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ScreenLocation {
    /// The controlling terminal, as `ps` names it (`pts/3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tty: Option<String>,
    /// One of `MULTIPLEXERS`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiplexer: Option<String>,
    /// Which instance of it: tmux's socket path, screen's session
    /// (`STY`), zellij's session name, WezTerm's socket, kitty's
    /// `listen_on` address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Where in it: tmux's pane id (`%3`), screen's window number,
    /// zellij's and WezTerm's pane id, kitty's window id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// The terminal program (`TERM_PROGRAM`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal: Option<String>,
}

/// The `location` object as read, before its values are checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename = "ScreenLocation")]
pub(crate) struct LocationKeys {
    pub(crate) tty: Option<String>,
    pub(crate) multiplexer: Option<String>,
    pub(crate) server: Option<String>,
    pub(crate) pane: Option<String>,
    pub(crate) terminal: Option<String>,
}

/// The keys of the `location` object, in the order they are written.
pub(crate) const LOCATION_KEYS: [&str; 5] = ["tty", "multiplexer", "server", "pane", "terminal"];

impl LocationKeys {
    /// The value of `key` (one of `LOCATION_KEYS`).
    pub(crate) fn slot(&mut self, key: &str) -> Option<&mut Option<String>> {
        match key {
            "tty" => Some(&mut self.tty),
            "multiplexer" => Some(&mut self.multiplexer),
            "server" => Some(&mut self.server),
            "pane" => Some(&mut self.pane),
            "terminal" => Some(&mut self.terminal),
            _ => None,
        }
    }

    /// The location, once every value is within its limit and holds no
    /// control character.
    pub(crate) fn check(self) -> Result<ScreenLocation, FieldError> {
        let checked = |value: Option<String>| -> Result<Option<String>, FieldError> {
            let Some(value) = value else { return Ok(None) };
            LOCATION_VALUE_LIMIT.check(&value)?;
            if value.chars().any(char::is_control) {
                return Err(FieldError::new(Field::Location, FieldProblem::ControlCharacter { value }));
            }
            Ok(Some(value))
        };
        Ok(ScreenLocation {
            tty: checked(self.tty)?,
            multiplexer: checked(self.multiplexer)?,
            server: checked(self.server)?,
            pane: checked(self.pane)?,
            terminal: checked(self.terminal)?,
        })
    }
}

impl ScreenLocation {
    /// How the table shows it as recorded, before (or without) a check:
    /// `tmux %3`, `screen dev:2`, `kitty 5`, `pts/3`.
    pub fn recorded_shown(&self) -> String {
        let pane = self.pane.as_deref().unwrap_or_default();
        match (self.multiplexer.as_deref(), self.server.as_deref()) {
            (Some("screen"), Some(server)) => {
                format!("screen {}:{pane}", server.split_once('.').map_or(server, |(_, name)| name))
            }
            (Some(multiplexer), _) => format!("{multiplexer} {pane}"),
            (None, _) => self.tty.clone().or_else(|| self.terminal.clone()).unwrap_or_else(|| "-".to_owned()),
        }
    }

    /// Whether nothing is known of it.
    pub fn is_empty(&self) -> bool {
        *self == ScreenLocation::default()
    }

    /// Where a process whose environment `env` reads and whose controlling
    /// terminal is `tty` shows: the innermost multiplexer its variables
    /// name (both of its variables set), and `TERM_PROGRAM`. A value that
    /// would not fit a record (over its limit, a control character) is
    /// left out rather than kept cut.
    pub fn from_environment(env: &dyn Fn(&str) -> Option<String>, tty: Option<String>) -> ScreenLocation {
        let fits = |value: String| {
            (LOCATION_VALUE_LIMIT.check(&value).is_ok() && !value.chars().any(char::is_control))
                .then_some(value)
        };
        let pair = |server: &str, pane: &str| Some((env(server)?, env(pane)?));
        let found = [
            // TMUX is `socket,server pid,session index`.
            (
                "tmux",
                pair("TMUX", "TMUX_PANE")
                    .map(|(tmux, pane)| (tmux.split(',').next().unwrap_or_default().to_owned(), pane)),
            ),
            ("screen", pair("STY", "WINDOW")),
            ("zellij", pair("ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID")),
            ("wezterm", pair("WEZTERM_UNIX_SOCKET", "WEZTERM_PANE")),
            ("kitty", pair("KITTY_LISTEN_ON", "KITTY_WINDOW_ID")),
        ]
        .into_iter()
        .find_map(|(name, found)| {
            let (server, pane) = found?;
            Some((name, fits(server)?, fits(pane)?))
        });
        let (multiplexer, server, pane) = match found {
            Some((name, server, pane)) => (Some(name.to_owned()), Some(server), Some(pane)),
            None => (None, None, None),
        };
        ScreenLocation {
            tty: tty.and_then(fits),
            multiplexer,
            server,
            pane,
            terminal: env("TERM_PROGRAM").and_then(fits),
        }
    }
}

/// What checking a recorded location against its multiplexer found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LocationStatus {
    /// It holds now: the pane (window) is there and runs this session.
    Current,
    /// It no longer holds: shown with why, never focused.
    Stale,
    /// It could not be checked here (the multiplexer's program is not
    /// installed, or does not answer): shown as recorded, not focused.
    Unchecked,
}

impl LocationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LocationStatus::Current => "current",
            LocationStatus::Stale => "stale",
            LocationStatus::Unchecked => "unchecked",
        }
    }
}

/// A recorded location, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocationCheck {
    pub status: LocationStatus,
    /// Why it is current, stale or unchecked, in words.
    pub reason: String,
    /// How the table shows it: `tmux work:2.1`, `screen 4242.dev:3`,
    /// `kitty 5`, `pts/3`.
    pub shown: String,
}

impl LocationCheck {
    /// The check of a location that names a terminal and no multiplexer,
    /// when that terminal was read from the owner's `/proc` by the verdict
    /// that just proved it alive: it holds, and is not read again.
    pub fn of_terminal_seen_now(location: &ScreenLocation) -> Option<LocationCheck> {
        let tty = location.tty.as_deref().filter(|_| location.multiplexer.is_none())?;
        Some(LocationCheck {
            status: LocationStatus::Current,
            reason: format!("the owner's terminal is {tty}"),
            shown: tty.to_owned(),
        })
    }
}

/// The most of a process's environment read for its location.
const ENVIRON_READ_LIMIT: usize = 256 * 1024;

/// Where the process `pid` shows on screen, from its environment
/// (`/proc/PID/environ`: what it was started with, readable for a process
/// of the same user) and its controlling terminal: what a registration
/// from outside its session goes by. `None` when neither tells anything.
pub fn location_of_process(pid: u32) -> Option<ScreenLocation> {
    location_from(pid, controlling_terminal(pid))
}

/// `location_of_process` for a process whose controlling terminal the
/// caller has read already (`tty`).
pub fn location_of_process_on(pid: u32, tty: Option<String>) -> Option<ScreenLocation> {
    location_from(pid, tty)
}

/// Where the harness process `pid` of a session no hook registered (one
/// Claude Code or Copilot CLI keeps) shows, from its environment and
/// `terminal`, the controlling terminal its verdict saw (`tty_nr`; `None`
/// when the verdict did not read it). A process without a controlling
/// terminal shows on no screen (every multiplexer and terminal gives the
/// programs in its panes one), and its environment is not read: listing
/// thousands of sessions an orchestrator runs without terminals reads no
/// file more for each.
pub fn location_of_adopted(pid: u32, terminal: Option<u64>) -> Option<ScreenLocation> {
    match terminal {
        Some(0) => None,
        Some(tty_nr) => location_from(pid, terminal_name(tty_nr)),
        None => location_from(pid, None),
    }
}

/// The location `pid`'s environment names, with `tty` as its terminal.
fn location_from(pid: u32, tty: Option<String>) -> Option<ScreenLocation> {
    let location = with_environ(pid, |environ| {
        let variables: Vec<(&[u8], &[u8])> = environ
            .split(|&byte| byte == 0)
            .filter_map(|entry| {
                let equals = entry.iter().position(|&byte| byte == b'=')?;
                Some((&entry[..equals], &entry[equals + 1..]))
            })
            .collect();
        let env = |name: &str| {
            variables
                .iter()
                .find(|(key, _)| *key == name.as_bytes())
                .and_then(|(_, value)| std::str::from_utf8(value).ok())
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
        };
        ScreenLocation::from_environment(&env, tty)
    });
    (!location.is_empty()).then_some(location)
}

std::thread_local! {
    /// The buffer each thread reads environments into, kept between reads:
    /// a listing of thousands of sessions neither allocates nor faults in
    /// fresh pages for each.
    static ENVIRON_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `use_environ` of the bytes of `/proc/PID/environ` (none when it cannot
/// be read), at most `ENVIRON_READ_LIMIT`, read in as few reads as the
/// kernel allows: each read copies from the other process's memory, so
/// each environment is read in one read (most are a few KiB), not in the
/// doubling reads of `read_to_end`. The kernel fills a read up to the end
/// of the environment, so a short read is its end. The bytes go straight
/// into the buffer's room, never zeroed first: a registration reads one
/// environment, and zeroing the whole first read's room cost it four
/// pages it never used.
fn with_environ<T>(pid: u32, use_environ: impl FnOnce(&[u8]) -> T) -> T {
    const FIRST_READ: usize = 16 * 1024;
    ENVIRON_BUFFER.with_borrow_mut(|buffer| {
        buffer.clear();
        if let Ok(file) = std::fs::File::open(format!("/proc/{pid}/environ")) {
            buffer.reserve(FIRST_READ);
            loop {
                match read_into_room(&file, buffer) {
                    Ok(0) => break,
                    Ok(_) => {
                        let room = buffer.capacity();
                        if buffer.len() < room || room >= ENVIRON_READ_LIMIT {
                            break;
                        }
                        buffer.reserve_exact(room.min(ENVIRON_READ_LIMIT - room));
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        }
        buffer.truncate(ENVIRON_READ_LIMIT);
        use_environ(buffer)
    })
}

/// Reads from `file` into the room `buffer` has past its length, at most
/// all of it, and counts what the kernel wrote as part of the buffer.
fn read_into_room(file: &std::fs::File, buffer: &mut Vec<u8>) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let room = buffer.spare_capacity_mut();
    // SAFETY: the kernel writes at most `room.len()` bytes at the start of
    // the buffer's unused capacity, which is valid for writes of that many.
    let read = unsafe { nix::libc::read(file.as_raw_fd(), room.as_mut_ptr().cast(), room.len()) };
    let read = usize::try_from(read).map_err(|_| std::io::Error::last_os_error())?;
    // SAFETY: those `read` bytes were written by the kernel just now.
    unsafe { buffer.set_len(buffer.len() + read) };
    Ok(read)
}

/// The controlling terminal of `pid` as `ps` names it (`pts/3`, `tty2`),
/// from field 7 of `/proc/PID/stat`; `None` without one, or when it cannot
/// be read.
pub fn controlling_terminal(pid: u32) -> Option<String> {
    let stat = owner_liveness::read_proc_stat(owner_liveness::Pid::new(pid)?).ok()?;
    terminal_name(stat.tty_nr)
}

/// The name of the terminal device number `tty_nr` (the kernel's encoding:
/// minor in bits 0–7 and 20–31, major in bits 8–19); `None` for 0, no
/// terminal.
pub fn terminal_name(tty_nr: u64) -> Option<String> {
    if tty_nr == 0 {
        return None;
    }
    let major = (tty_nr >> 8) & 0xfff;
    let minor = (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00);
    Some(match major {
        // Unix98 pseudo-terminals: majors 136–143, 256 minors each.
        136..=143 => format!("pts/{}", (major - 136) * 256 + minor),
        4 if minor < 64 => format!("tty{minor}"),
        4 => format!("ttyS{}", minor - 64),
        _ => format!("tty({major},{minor})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| (*value).to_owned())
    }

    #[test]
    fn the_innermost_multiplexer_whose_variables_are_both_set_is_the_location() {
        let env = env_of(&[
            ("TMUX", "/tmp/tmux-1000/default,4242,0"),
            ("TMUX_PANE", "%3"),
            ("KITTY_LISTEN_ON", "unix:/tmp/kitty"),
            ("KITTY_WINDOW_ID", "5"),
            ("TERM_PROGRAM", "tmux"),
        ]);
        let location = ScreenLocation::from_environment(&env, Some("pts/3".into()));
        assert_eq!(
            location,
            ScreenLocation {
                tty: Some("pts/3".into()),
                multiplexer: Some("tmux".into()),
                server: Some("/tmp/tmux-1000/default".into()),
                pane: Some("%3".into()),
                terminal: Some("tmux".into()),
            }
        );
        // Half a pair names nothing: the next one counts.
        let env = env_of(&[("TMUX", "/tmp/t,1,0"), ("STY", "77.pts-0.host"), ("WINDOW", "2")]);
        let location = ScreenLocation::from_environment(&env, None);
        assert_eq!((location.multiplexer.as_deref(), location.pane.as_deref()), (Some("screen"), Some("2")));
        // A value that could not be recorded whole is left out.
        let long = "x".repeat(200);
        let pairs = [("TMUX", long.as_str()), ("TMUX_PANE", "%1"), ("TERM_PROGRAM", "a\nb")];
        let env = env_of(&pairs);
        assert!(ScreenLocation::from_environment(&env, None).is_empty());
    }

    #[test]
    fn terminal_numbers_are_named_as_ps_names_them() {
        assert_eq!(terminal_name(0), None);
        assert_eq!(terminal_name(136 << 8 | 3).as_deref(), Some("pts/3"));
        assert_eq!(terminal_name(137 << 8 | 1).as_deref(), Some("pts/257"));
        // A minor past 255 is split across the high bits.
        assert_eq!(terminal_name((136 << 8) | (0x100 << 12) | 0x02).as_deref(), Some("pts/258"));
        assert_eq!(terminal_name(4 << 8 | 2).as_deref(), Some("tty2"));
    }

    /// An environment is read whole, in one read or in growing ones, up to
    /// `ENVIRON_READ_LIMIT`, into a buffer a thread reuses: a small one
    /// after a large one is not mixed with what the large one left.
    #[test]
    fn environments_of_every_size_are_read_whole_up_to_the_limit() {
        for value_bytes in [0, 10, 15 * 1024, 16 * 1024, 40 * 1024, 200 * 1024, 300 * 1024, 10] {
            // One string may be at most 128 KiB: the value is spread over
            // variables of 64 KiB.
            let mut command = std::process::Command::new("sleep");
            command.arg("30").env_clear().env("ROSTER_TEST_VALUE", "");
            for (index, start) in (0..value_bytes).step_by(64 * 1024).enumerate() {
                let length = (value_bytes - start).min(64 * 1024);
                command.env(format!("ROSTER_TEST_VALUE_{index}"), "v".repeat(length));
            }
            let mut child = command.spawn().expect("spawn sleep");
            let pid = child.id();
            let whole = std::fs::read(format!("/proc/{pid}/environ")).expect("read the environment");
            let read = with_environ(pid, <[u8]>::to_vec);
            let _ = child.kill();
            let _ = child.wait();
            let expected = &whole[..whole.len().min(ENVIRON_READ_LIMIT)];
            assert_eq!(read.len(), expected.len(), "a value of {value_bytes} bytes");
            assert!(read == expected, "a value of {value_bytes} bytes reads as written");
        }
        assert!(with_environ(u32::MAX - 1, <[u8]>::is_empty), "no process: nothing read");
    }

    #[test]
    fn this_processs_terminal_reads_as_its_stat_says() {
        // Whatever it is (none under a test runner without a terminal), it
        // reads without a failure and names a device when there is one.
        let tty = controlling_terminal(std::process::id());
        assert!(tty.is_none_or(|name| name.starts_with("pts/") || name.starts_with("tty")));
    }
}
