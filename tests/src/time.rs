//! Times as records hold them: RFC 3339 UTC with nanoseconds, written and
//! parsed here without a date crate, and file mtimes set to a given age.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Sets an entry's mtime (and atime) without following a symlink.
pub fn set_mtime(path: &Path, time: SystemTime) {
    let since_epoch = time.duration_since(UNIX_EPOCH).expect("after the epoch");
    let spec = nix::sys::time::TimeSpec::from_duration(since_epoch);
    nix::sys::stat::utimensat(
        nix::fcntl::AT_FDCWD,
        path,
        &spec,
        &spec,
        nix::sys::stat::UtimensatFlags::NoFollowSymlink,
    )
    .unwrap_or_else(|error| panic!("set the mtime of {}: {error}", path.display()));
}

/// `now - age`.
pub fn ago(age: Duration) -> SystemTime {
    SystemTime::now() - age
}

/// Formats a time as RFC 3339 UTC with nanoseconds, as records hold it.
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).expect("after the epoch");
    let seconds = since.as_secs() as i64;
    let (days, rest) = (seconds.div_euclid(86400), seconds.rem_euclid(86400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_nanos()
    )
}

/// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`) into Unix
/// nanoseconds; `None` if it is not that.
pub fn parse_rfc3339(text: &str) -> Option<i128> {
    let bytes = text.as_bytes();
    if bytes.len() < 20 || !text.is_ascii() {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.bytes().all(|byte| byte.is_ascii_digit()) { part.parse().ok() } else { None }
    };
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' || bytes[13] != b':' || bytes[16] != b':' {
        return None;
    }
    let mut position = 19;
    let mut nanos: i128 = 0;
    if bytes[position] == b'.' {
        let digits = bytes[position + 1..].iter().take_while(|byte| byte.is_ascii_digit()).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        nanos =
            text[position + 1..position + 1 + digits].parse::<i128>().ok()? * 10_i128.pow(9 - digits as u32);
        position += 1 + digits;
    }
    let offset_seconds: i64 = match &text[position..] {
        "Z" => 0,
        zone if zone.len() == 6 && (zone.starts_with('+') || zone.starts_with('-')) => {
            let magnitude =
                number(position + 1..position + 3)? * 3600 + number(position + 4..position + 6)? * 60;
            if zone.starts_with('+') { magnitude } else { -magnitude }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
    Some(i128::from(seconds) * 1_000_000_000 + nanos)
}

/// Unix nanoseconds of a `SystemTime`.
pub fn unix_nanos(time: SystemTime) -> i128 {
    time.duration_since(UNIX_EPOCH).expect("after the epoch").as_nanos() as i128
}

// Howard Hinnant's civil-date algorithms: small enough not to want a crate.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146097 + day_of_era - 719468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let day_of_era = z - era * 146097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
