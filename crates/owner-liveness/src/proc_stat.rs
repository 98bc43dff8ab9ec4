//! Parsing of `/proc/<pid>/stat`: the one place that knows the comm field may
//! hold any bytes, `)` and spaces included, so fields are counted after the
//! *last* `)`.

/// The fields of `/proc/<pid>/stat` roster uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// Field 2 without its parentheses; lossy UTF-8 of at most 15 bytes.
    pub comm: String,
    /// Field 3, one character such as `R`, `S`, `Z`.
    pub state: char,
    /// Field 4; 0 for the kernel's first processes.
    pub ppid: u32,
    /// Field 7: the device number of the controlling terminal (minor in
    /// bits 0–7 and 20–31, major in bits 8–19); 0 without one.
    pub tty_nr: u64,
    /// Field 9: the kernel's `PF_*` flags of the process.
    pub flags: u64,
    /// Field 22: clock ticks since boot when the process started.
    pub start_ticks: u64,
    /// Field 38: the signal the parent is sent at its exit; -1 for a thread
    /// that is not its group's leader (the kernel's `CLONE_THREAD` mark),
    /// which `/proc/<tid>` also shows. `None` in a line that ends before it.
    pub exit_signal: Option<i32>,
}

/// Why a stat line does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed /proc stat line: {0}")]
pub struct ProcStatParseError(pub &'static str);

/// Parses one `/proc/<pid>/stat` line.
pub fn parse_proc_stat(line: &[u8]) -> Result<ProcStat, ProcStatParseError> {
    let open = line.iter().position(|&byte| byte == b'(').ok_or(ProcStatParseError("no '(' before comm"))?;
    let close = line.iter().rposition(|&byte| byte == b')').ok_or(ProcStatParseError("no ')' after comm"))?;
    if close < open {
        return Err(ProcStatParseError("')' before '('"));
    }
    let comm = String::from_utf8_lossy(&line[open + 1..close]).into_owned();
    let rest = std::str::from_utf8(&line[close + 1..])
        .map_err(|_| ProcStatParseError("fields after comm are not ASCII"))?;
    // Field 3 is the first after the comm; field 22 is the 20th after it.
    let mut fields = rest.split_ascii_whitespace();
    let state_field = fields.next().ok_or(ProcStatParseError("no state"))?;
    let mut state_chars = state_field.chars();
    let state = state_chars.next().ok_or(ProcStatParseError("empty state"))?;
    if state_chars.next().is_some() {
        return Err(ProcStatParseError("state is more than one character"));
    }
    let ppid = fields
        .next()
        .ok_or(ProcStatParseError("no ppid"))?
        .parse()
        .map_err(|_| ProcStatParseError("ppid is not a number"))?;
    // Fields 5 and 6 (process group, session) are skipped.
    let tty_nr: u64 = fields
        .nth(2)
        .ok_or(ProcStatParseError("no tty_nr (field 7)"))?
        .parse()
        .map_err(|_| ProcStatParseError("tty_nr is not a number"))?;
    let flags: u64 = fields
        .nth(1)
        .ok_or(ProcStatParseError("no flags (field 9)"))?
        .parse()
        .map_err(|_| ProcStatParseError("flags are not a number"))?;
    let start_ticks = fields
        .nth(12)
        .ok_or(ProcStatParseError("no start time (field 22)"))?
        .parse()
        .map_err(|_| ProcStatParseError("start time is not a number"))?;
    let exit_signal = fields.nth(15).and_then(|field| field.parse().ok());
    Ok(ProcStat { comm, state, ppid, tty_nr, flags, start_ticks, exit_signal })
}

/// Field 22 of one `/proc/<pid>/stat` line, the clock ticks since boot
/// when the process started, read without allocating: for a thread that
/// must not make the allocator set up an arena of its own (a hook's
/// watchdog, `parse_proc_stat` reads the other fields).
pub fn parse_start_ticks(line: &[u8]) -> Result<u64, ProcStatParseError> {
    let close = line.iter().rposition(|&byte| byte == b')').ok_or(ProcStatParseError("no ')' after comm"))?;
    let rest = std::str::from_utf8(&line[close + 1..])
        .map_err(|_| ProcStatParseError("fields after comm are not ASCII"))?;
    // Field 3 is the first after the comm: field 22 is the 20th after it.
    rest.split_ascii_whitespace()
        .nth(19)
        .ok_or(ProcStatParseError("no start time (field 22)"))?
        .parse()
        .map_err(|_| ProcStatParseError("start time is not a number"))
}

/// The kernel's flag for its own threads (`PF_KTHREAD`).
const PF_KTHREAD: u64 = 0x0020_0000;

impl ProcStat {
    /// A kernel thread (kthreadd and its children): no user-space session
    /// ever runs as one.
    pub fn is_kernel_thread(&self) -> bool {
        self.flags & PF_KTHREAD != 0
    }
}

/// Whether `pid` is a kernel thread now; `false` when it cannot be read.
pub fn is_kernel_thread(pid: crate::pid::Pid) -> bool {
    let mut buffer = [0u8; crate::proc_read::STAT_BUFFER_BYTES];
    crate::proc_read::read_small_file(&format!("/proc/{pid}/stat"), &mut buffer)
        .ok()
        .and_then(|bytes| parse_proc_stat(bytes).ok())
        .is_some_and(|stat| stat.is_kernel_thread())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(comm: &str, start: u64) -> String {
        format!(
            "4242 ({comm}) S 17 4242 4242 34817 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 {start} 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
        )
    }

    #[test]
    fn plain_comm() {
        let stat = parse_proc_stat(line("claude", 870).as_bytes()).unwrap();
        assert_eq!(
            stat,
            ProcStat {
                comm: "claude".into(),
                state: 'S',
                ppid: 17,
                tty_nr: 34817,
                flags: 4194304,
                start_ticks: 870,
                exit_signal: Some(17),
            }
        );
        assert!(!stat.is_kernel_thread());
    }

    #[test]
    fn kernel_threads_are_told_by_their_flags() {
        assert!(!is_kernel_thread(crate::pid::Pid::new(std::process::id()).unwrap()));
        // kthreadd, where this process can see it (not in a pid namespace).
        let kthreadd = std::fs::read("/proc/2/stat").ok().and_then(|bytes| parse_proc_stat(&bytes).ok());
        if let Some(stat) = kthreadd.filter(|stat| stat.comm == "kthreadd") {
            assert!(stat.is_kernel_thread(), "{stat:?}");
        }
    }

    #[test]
    fn comm_that_imitates_fields_is_skipped_whole() {
        let stat = parse_proc_stat(line("a) R 1 2 3", 870).as_bytes()).unwrap();
        assert_eq!(stat.comm, "a) R 1 2 3");
        assert_eq!(stat.state, 'S');
        assert_eq!(stat.ppid, 17);
        assert_eq!(stat.start_ticks, 870);
    }

    #[test]
    fn comm_with_parentheses_and_spaces() {
        let stat = parse_proc_stat(line("(x) (y)) z", 99).as_bytes()).unwrap();
        assert_eq!(stat.comm, "(x) (y)) z");
        assert_eq!(stat.start_ticks, 99);
    }

    #[test]
    fn truncated_and_garbage_lines_are_errors() {
        for bad in ["", "4242", "4242 (x", "4242 x) S 1", "4242 (x) S", "4242 (x) S 1 2 3", ")("] {
            assert!(parse_proc_stat(bad.as_bytes()).is_err(), "{bad:?} parsed");
        }
        assert!(parse_proc_stat(b"1 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20").is_err());
        for bad in ["", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x"] {
            assert!(parse_start_ticks(bad.as_bytes()).is_err(), "{bad:?} parsed");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_comm_round_trips(comm in "[^\\x00]{0,15}", start in 0u64..u64::MAX) {
            let stat = parse_proc_stat(line(&comm, start).as_bytes()).unwrap();
            proptest::prop_assert_eq!(stat.start_ticks, start);
            proptest::prop_assert_eq!(stat.ppid, 17);
            proptest::prop_assert_eq!(parse_start_ticks(line(&comm, start).as_bytes()).unwrap(), start);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = parse_proc_stat(&bytes);
        }
    }
}
