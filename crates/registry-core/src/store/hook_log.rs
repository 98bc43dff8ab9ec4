//! `hook-errors.log`: where hook-mode failures go, since a hook must stay
//! silent on stdout and exit 0. Bounded to the last 100 lines; `roster-list`
//! points at recent failures in its notes.

use crate::record::timestamp::Timestamp;
use crate::store::directory::RosterDir;
use crate::store::files::{Durability, MAX_ENTRY_BYTES, read_entry, write_atomically_as};
use std::time::Duration;

/// The log's name in the roster directory.
pub const HOOK_LOG_NAME: &str = "hook-errors.log";
/// How many lines the log keeps.
pub const HOOK_LOG_LINES: usize = 100;
/// The longest line the log keeps. The log is read like every roster file, at most
/// `MAX_ENTRY_BYTES`; lines of at most this length keep `HOOK_LOG_LINES` of them inside
/// that limit, so the log never becomes unreadable (which dropped its history and hid
/// failures from `roster-list`).
const HOOK_LOG_LINE_BYTES: usize = (MAX_ENTRY_BYTES as usize / HOOK_LOG_LINES) - 1;
/// Appends `<time> <tool>: <message>` (one line, newlines flattened),
/// keeping the last `HOOK_LOG_LINES` lines, waiting at most `wait` for the
/// lock. Best effort by design. When the lock
/// stays busy (the very failure a hook may be reporting), the line is
/// appended without it, in one `O_APPEND` write, as long as the log is
/// still well under the read limit; the next locked append trims it.
/// The log does not wait for the disk: a line a power loss takes costs
/// little, and a hook reporting a failure on a disk busy with other
/// writes would spend its budget on the fsyncs.
pub fn append_hook_error_within(
    roster: &RosterDir,
    tool: &str,
    message: &str,
    wait: std::time::Duration,
) -> crate::error::Result<()> {
    let flat: String =
        message.chars().map(|character| if character.is_control() { ' ' } else { character }).collect();
    let line = truncate_line(format!("{} {tool}: {flat}", Timestamp::now()));
    let _lock = match roster.lock_within(wait) {
        Ok(lock) => lock,
        Err(crate::error::Error::Busy { .. }) => return append_without_lock(roster, &line),
        Err(other) => return Err(other),
    };
    let existing =
        read_entry(roster.root(), HOOK_LOG_NAME).map(|contents| contents.bytes).unwrap_or_default();
    let existing = String::from_utf8_lossy(&existing);
    let mut lines: Vec<&str> = existing.lines().collect();
    lines.push(&line);
    let keep_from = lines.len().saturating_sub(HOOK_LOG_LINES);
    let mut text = lines[keep_from..].join("\n");
    text.push('\n');
    write_atomically_as(roster, roster.root(), HOOK_LOG_NAME, text.as_bytes(), Durability::Unsynced)
}

/// One line appended to the log while another process holds the lock.
fn append_without_lock(roster: &RosterDir, line: &str) -> crate::error::Result<()> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::{Mode, fstat};
    let path = roster.path().join(HOOK_LOG_NAME);
    let flags = OFlag::O_WRONLY | OFlag::O_APPEND | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = openat(roster.root().fd(), HOOK_LOG_NAME, flags | OFlag::O_CREAT, Mode::S_IRUSR | Mode::S_IWUSR)
        .map_err(|errno| crate::error::Error::io("open", &path, errno.into()))?;
    let stat = fstat(&fd).map_err(|errno| crate::error::Error::io("stat", &path, errno.into()))?;
    let regular = stat.st_mode & nix::libc::S_IFMT == nix::libc::S_IFREG;
    // Unlocked appends stop well inside the read limit, so the log stays
    // readable (a log over it would be dropped whole by the next append).
    let size_after = u64::try_from(stat.st_size).unwrap_or(u64::MAX).saturating_add(line.len() as u64 + 1);
    if !regular || stat.st_nlink != 1 || size_after > MAX_ENTRY_BYTES * 3 / 4 {
        return Ok(());
    }
    let mut bytes = line.as_bytes().to_vec();
    bytes.push(b'\n');
    nix::unistd::write(&fd, &bytes)
        .map_err(|errno| crate::error::Error::io("append to", &path, errno.into()))?;
    Ok(())
}

/// The hook failures logged within a window of time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecentHookErrors {
    /// How many.
    pub count: usize,
    /// The last one logged: when, and its line.
    pub newest: Option<(Timestamp, String)>,
}

/// Hook failures logged within `window` of `now`: how many, and the last.
pub fn recent_hook_errors(roster: &RosterDir, now: Timestamp, window: Duration) -> RecentHookErrors {
    let Ok(contents) = read_entry(roster.root(), HOOK_LOG_NAME) else { return RecentHookErrors::default() };
    let text = String::from_utf8_lossy(&contents.bytes);
    let mut recent = RecentHookErrors::default();
    for line in text.lines() {
        let Some(logged_at) = line.split(' ').next().and_then(Timestamp::parse) else { continue };
        if logged_at.age(now) <= window {
            recent.count += 1;
            recent.newest = Some((logged_at, line.to_owned()));
        }
    }
    recent
}

/// Cuts a line to `HOOK_LOG_LINE_BYTES` at a character boundary, marking the cut.
fn truncate_line(line: String) -> String {
    const MARK: &str = " [...]";
    if line.len() <= HOOK_LOG_LINE_BYTES {
        return line;
    }
    let mut end = HOOK_LOG_LINE_BYTES - MARK.len();
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{MARK}", &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_of_the_longest_lines_stays_readable() {
        assert!((HOOK_LOG_LINE_BYTES + 1) * HOOK_LOG_LINES <= MAX_ENTRY_BYTES as usize);
        let long = truncate_line("é".repeat(HOOK_LOG_LINE_BYTES));
        assert!(long.len() <= HOOK_LOG_LINE_BYTES && long.ends_with(" [...]"), "{}", long.len());
        assert_eq!(truncate_line("short".to_owned()), "short");
    }
}
