//! Reading small kernel files (`/proc/<pid>/stat`, `cmdline`, the boot id)
//! in as few system calls as the kernel allows: one `open`, one `read` into
//! a buffer on the stack, one `close`. The generic `std::fs::read` adds a
//! `statx` and grows its buffer from 32 bytes, which cost six `read`s per
//! stat line, and a verdict reads one per record. Every call is retried on
//! `EINTR`, which a signal may cause and which means nothing else.

use std::io;
use std::os::fd::OwnedFd;

use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;

use crate::interrupted::retry_interrupted;

/// Large enough for any `/proc/<pid>/stat` line (52 fields of at most 20
/// digits and a 64-byte comm leave room to spare).
pub(crate) const STAT_BUFFER_BYTES: usize = 2048;

fn open_for_reading(path: &str) -> io::Result<OwnedFd> {
    retry_interrupted(|| open(path, OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOCTTY, Mode::empty()))
        .map_err(io::Error::from)
}

fn read_some(fd: &OwnedFd, buffer: &mut [u8]) -> io::Result<usize> {
    retry_interrupted(|| nix::unistd::read(fd, buffer)).map_err(io::Error::from)
}

/// Reads a file the kernel generates whole on each read (a `single_open`
/// seq file such as `/proc/<pid>/stat`, or a sysctl) into `buffer`, and
/// returns the bytes. One `read` suffices when the content is shorter than
/// the buffer; a content that fills it is read on until the end or the
/// buffer is full, and a full buffer is an error (the file is not the
/// small one expected).
pub(crate) fn read_small_file<'buffer>(path: &str, buffer: &'buffer mut [u8]) -> io::Result<&'buffer [u8]> {
    let fd = open_for_reading(path)?;
    read_small_fd(&fd, buffer).map_err(|error| match error.kind() {
        io::ErrorKind::FileTooLarge => io::Error::other(format!("{path} {error}")),
        _ => error,
    })
}

/// `read_small_file` on a file already open.
pub(crate) fn read_small_fd<'buffer>(fd: &OwnedFd, buffer: &'buffer mut [u8]) -> io::Result<&'buffer [u8]> {
    let mut filled = read_some(fd, buffer)?;
    if filled == buffer.len() {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("is larger than {} bytes", buffer.len()),
        ));
    }
    // A short first read is the whole content for these generated files;
    // the loop only guards against a kernel that splits it.
    if filled == 0 {
        return Ok(&buffer[..0]);
    }
    while filled < buffer.len() && !looks_complete(&buffer[..filled]) {
        let more = read_some(fd, &mut buffer[filled..])?;
        if more == 0 {
            break;
        }
        filled += more;
    }
    Ok(&buffer[..filled])
}

/// The generated files read here end with a newline.
fn looks_complete(bytes: &[u8]) -> bool {
    bytes.last() == Some(&b'\n')
}

/// Reads the start of `/proc/<pid>/cmdline` (NUL-separated argv) until it
/// holds `entries` complete entries, the end, or `limit` bytes.
pub(crate) fn read_cmdline_prefix(path: &str, entries: usize, limit: usize) -> io::Result<Vec<u8>> {
    let fd = open_for_reading(path)?;
    let mut bytes = vec![0u8; 4096.min(limit)];
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            if bytes.len() >= limit {
                break;
            }
            bytes.resize((bytes.len() * 2).min(limit), 0);
        }
        let read = read_some(&fd, &mut bytes[filled..])?;
        if read == 0 {
            break;
        }
        filled += read;
        if bytes[..filled].iter().filter(|&&byte| byte == 0).count() >= entries {
            break;
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_stat_line_is_read_whole_in_one_buffer() {
        let mut buffer = [0u8; STAT_BUFFER_BYTES];
        let line = read_small_file("/proc/self/stat", &mut buffer).unwrap();
        assert!(line.ends_with(b"\n"), "{:?}", String::from_utf8_lossy(line));
        let stat = crate::proc_stat::parse_proc_stat(line).unwrap();
        assert_eq!(stat.ppid, nix::unistd::getppid().as_raw() as u32);
    }

    #[test]
    fn a_file_larger_than_the_buffer_is_an_error_not_a_truncation() {
        let mut buffer = [0u8; 8];
        let error = read_small_file("/proc/self/stat", &mut buffer).unwrap_err();
        assert!(error.to_string().contains("larger than 8 bytes"), "{error}");
    }

    #[test]
    fn cmdline_prefix_stops_after_the_entries_asked_for() {
        let bytes = read_cmdline_prefix("/proc/self/cmdline", 1, 1 << 20).unwrap();
        let first = bytes.split(|&byte| byte == 0).next().unwrap();
        let expected = std::env::args_os().next().unwrap();
        assert_eq!(first, std::os::unix::ffi::OsStrExt::as_bytes(expected.as_os_str()));
    }
}
