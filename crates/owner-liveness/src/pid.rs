//! `Pid`: a process id that is known to be a canonical positive decimal, so
//! no later code has to wonder whether `0`, `-1` or ` 12` slipped through.

use std::fmt;
use std::num::NonZeroU32;

/// A positive process id, at most `pid_max` when it came from text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pid(NonZeroU32);

/// Why a text is not a pid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PidParseError {
    #[error("is empty")]
    Empty,
    #[error("is not a canonical positive decimal (digits only, no sign, no leading zeros, no spaces)")]
    NotCanonical,
    #[error("is zero")]
    Zero,
    #[error("is above the kernel's pid_max ({pid_max})")]
    AbovePidMax { pid_max: u32 },
}

impl Pid {
    /// Wraps a raw pid; `None` for zero.
    pub fn new(raw: u32) -> Option<Pid> {
        NonZeroU32::new(raw).map(Pid)
    }

    /// The pid as the kernel's `pid_t` wants it.
    pub fn as_raw(self) -> i32 {
        // pid_max is at most 2^22 on Linux, so this never truncates for a
        // pid that came from the kernel or from `parse_canonical`.
        self.0.get() as i32
    }

    pub fn get(self) -> u32 {
        self.0.get()
    }

    /// Parses the canonical decimal form: `[1-9][0-9]*`, no more than
    /// `pid_max`. Everything else (`0`, `-1`, `+3`, `012`, ` 12`, `1e3`)
    /// is refused, never truncated or trimmed.
    pub fn parse_canonical(text: &str, pid_max: u32) -> Result<Pid, PidParseError> {
        if text.is_empty() {
            return Err(PidParseError::Empty);
        }
        if text == "0" {
            return Err(PidParseError::Zero);
        }
        let bytes = text.as_bytes();
        if !bytes.iter().all(u8::is_ascii_digit) || bytes[0] == b'0' {
            return Err(PidParseError::NotCanonical);
        }
        // Ten digits or more cannot be a pid; refuse before parsing overflows.
        if bytes.len() > 10 {
            return Err(PidParseError::AbovePidMax { pid_max });
        }
        let value: u64 = text.parse().map_err(|_| PidParseError::NotCanonical)?;
        // The kernel's pid_max is the first pid that is *not* allowed.
        if value >= u64::from(pid_max) {
            return Err(PidParseError::AbovePidMax { pid_max });
        }
        Ok(Pid::new(value as u32).expect("non-zero by the checks above"))
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Reads `/proc/sys/kernel/pid_max`, falling back to the largest value Linux
/// allows (2^22) when it cannot be read.
pub fn kernel_pid_max() -> u32 {
    let mut buffer = [0u8; 32];
    crate::proc_read::read_small_file("/proc/sys/kernel/pid_max", &mut buffer)
        .ok()
        .and_then(|bytes| std::str::from_utf8(bytes).ok()?.trim().parse().ok())
        .unwrap_or(1 << 22)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: Result<u32, PidParseError>) {
        assert_eq!(Pid::parse_canonical(text, 32768).map(Pid::get), expect, "input {text:?}");
    }

    #[test]
    fn canonical_forms() {
        check("1", Ok(1));
        check("4242", Ok(4242));
        check("32767", Ok(32767));
        check("", Err(PidParseError::Empty));
        check("0", Err(PidParseError::Zero));
        check("-1", Err(PidParseError::NotCanonical));
        check("+1", Err(PidParseError::NotCanonical));
        check("12abc", Err(PidParseError::NotCanonical));
        check(" 12", Err(PidParseError::NotCanonical));
        check("12 ", Err(PidParseError::NotCanonical));
        check("1e3", Err(PidParseError::NotCanonical));
        check("012", Err(PidParseError::NotCanonical));
        check("007", Err(PidParseError::NotCanonical));
        check("32768", Err(PidParseError::AbovePidMax { pid_max: 32768 }));
        check("99999999999999999999", Err(PidParseError::AbovePidMax { pid_max: 32768 }));
        check("١٢", Err(PidParseError::NotCanonical));
    }

    proptest::proptest! {
        #[test]
        fn every_pid_round_trips(raw in 1u32..32768) {
            let pid = Pid::parse_canonical(&raw.to_string(), 32768).unwrap();
            proptest::prop_assert_eq!(pid.get(), raw);
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,12}") {
            let _ = Pid::parse_canonical(&text, 32768);
        }
    }
}
