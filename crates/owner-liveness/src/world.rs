//! Which world a process number belongs to (docs/contract.md §4.3): the
//! machine, read from `/etc/machine-id` or else the hostname, and the time
//! namespace's boot-time offset, which shifts every start tick a reader
//! inside it sees. A pid means something only in one pid namespace of one
//! kernel; these are the facts that tell a reboot from another machine and
//! a time namespace from another process.

use std::io;

use crate::proc_read::read_small_file;

/// Where systemd and most distributions keep the machine's id.
const MACHINE_ID_PATH: &str = "/etc/machine-id";

/// Where a process reads its own time namespace's clock offsets.
pub(crate) const TIME_OFFSETS_PATH: &str = "/proc/self/timens_offsets";

/// The inode of the initial time namespace (the kernel's
/// `PROC_TIME_INIT_INO`), whose offsets are zero by definition.
const INITIAL_TIME_NS_INODE: u64 = 0xEFFF_FFFA;

/// The longest machine text roster records: `hostname:` and a hostname of
/// at most 64 bytes (`HOST_NAME_MAX`), with room to spare.
pub const MACHINE_LIMIT: usize = 128;

/// Clock ticks per second as `/proc/<pid>/stat` counts them (`USER_HZ`).
/// Linux exports 100 on every architecture; it is a kernel ABI constant,
/// not a configuration.
pub const USER_HZ: i64 = 100;

/// Names this machine: `machine-id:<32 hex digits>` from `/etc/machine-id`
/// when it holds a valid id, else `hostname:<name>`. A container often has
/// its own machine id, or none; that is fine, because the machine is only
/// consulted when the boot ids differ (one kernel has one boot id).
pub fn read_machine() -> io::Result<String> {
    let mut buffer = [0u8; 128];
    if let Ok(bytes) = read_small_file(MACHINE_ID_PATH, &mut buffer)
        && let Some(id) = valid_machine_id(bytes)
    {
        return Ok(format!("machine-id:{id}"));
    }
    let hostname = nix::unistd::gethostname().map_err(io::Error::from)?;
    let hostname = hostname
        .to_str()
        .filter(|name| !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_graphic()))
        .ok_or_else(|| {
            io::Error::other(format!(
                "{MACHINE_ID_PATH} holds no machine id and the hostname {hostname:?} cannot name the machine"
            ))
        })?;
    Ok(format!("hostname:{hostname}"))
}

/// The id in a `machine-id` file: 32 lowercase hex digits and a newline;
/// an empty file, `uninitialized` (systemd's first boot) or all zeros is
/// no id.
fn valid_machine_id(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?.trim_end_matches('\n');
    let valid = text.len() == 32
        && text.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
        && text.bytes().any(|byte| byte != b'0');
    valid.then_some(text)
}

/// How many clock ticks the calling process's time namespace adds to every
/// start tick it reads from `/proc/<pid>/stat`: the boot-time offset, in
/// ticks (rounded down when it is not a whole number of them). Zero in the
/// initial time namespace, whose `time_ns` inode is given so that the file
/// is read only inside another.
pub fn read_boottime_offset_ticks(own_time_ns: u64) -> io::Result<i64> {
    if own_time_ns == INITIAL_TIME_NS_INODE || own_time_ns == 0 {
        return Ok(0);
    }
    let mut buffer = [0u8; 256];
    let bytes = match read_small_file(TIME_OFFSETS_PATH, &mut buffer) {
        Ok(bytes) => bytes,
        // A kernel without time namespaces has no offsets.
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(error),
    };
    parse_boottime_offset_ticks(bytes)
        .ok_or_else(|| io::Error::other(format!("{TIME_OFFSETS_PATH} has no readable boottime line")))
}

/// The `boottime <seconds> <nanoseconds>` line of `timens_offsets`, in
/// ticks; `None` when there is none or it does not parse.
fn parse_boottime_offset_ticks(bytes: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let line = text.lines().find(|line| line.split_whitespace().next() == Some("boottime"))?;
    let mut fields = line.split_whitespace().skip(1);
    let seconds: i64 = fields.next()?.parse().ok()?;
    let nanoseconds: i64 = fields.next()?.parse().ok()?;
    let nanoseconds_per_tick = 1_000_000_000 / USER_HZ;
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanoseconds);
    i64::try_from(total.div_euclid(i128::from(nanoseconds_per_tick))).ok()
}

/// This process's boot clock now, in the clock ticks `/proc/<pid>/stat`
/// counts starts in, shifted as this process's time namespace shifts them:
/// no start read now can be later, unless it wrapped around below a
/// negative offset.
pub(crate) fn boot_clock_ticks_now() -> Option<u64> {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME).ok()?;
    let ticks_per_second = u64::try_from(USER_HZ).ok()?;
    let seconds = u64::try_from(now.tv_sec()).ok()?;
    let nanoseconds = u64::try_from(now.tv_nsec()).ok()?;
    Some(seconds * ticks_per_second + nanoseconds / (1_000_000_000 / ticks_per_second))
}

/// Start ticks as a reader with `offset_ticks` saw them, taken back to the
/// initial time namespace's clock; `None` when that leaves the range.
pub(crate) fn ticks_in_initial_time(seen: u64, offset_ticks: i64) -> Option<u64> {
    u64::try_from(i128::from(seen) - i128::from(offset_ticks)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_ids_are_recognised_and_placeholders_are_not() {
        assert_eq!(
            valid_machine_id(b"3d1219c7c4c5404aaa1f6d2a48adfda4\n"),
            Some("3d1219c7c4c5404aaa1f6d2a48adfda4")
        );
        for placeholder in [
            &b""[..],
            b"\n",
            b"uninitialized\n",
            b"00000000000000000000000000000000\n",
            b"3D1219C7C4C5404AAA1F6D2A48ADFDA4\n",
            b"3d1219c7c4c5404aaa1f6d2a48adfda\n",
        ] {
            assert_eq!(valid_machine_id(placeholder), None, "{placeholder:?}");
        }
    }

    #[test]
    fn the_boottime_offset_is_read_in_ticks() {
        let offsets = b"monotonic           0         0\nboottime         1000         0\n";
        assert_eq!(parse_boottime_offset_ticks(offsets), Some(100_000));
        assert_eq!(parse_boottime_offset_ticks(b"boottime -5 0\n"), Some(-500));
        assert_eq!(parse_boottime_offset_ticks(b"boottime 1 15000000\n"), Some(101));
        assert_eq!(parse_boottime_offset_ticks(b"monotonic 3 0\n"), None);
        assert_eq!(parse_boottime_offset_ticks(b"boottime x 0\n"), None);
    }

    #[test]
    fn ticks_are_taken_back_to_the_initial_clock() {
        assert_eq!(ticks_in_initial_time(100_023, 100_000), Some(23));
        assert_eq!(ticks_in_initial_time(23, -500), Some(523));
        assert_eq!(ticks_in_initial_time(5, 10), None);
    }
}
