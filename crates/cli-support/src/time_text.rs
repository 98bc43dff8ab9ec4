//! Times as people read them in text output: the local date and time to
//! the second, and how far away it is (`2026-12-04 21:32:25 (in 59m)`),
//! never the raw UTC with nanoseconds that JSON carries (RFC 3339 stays
//! the contract for scripts). One home for the local time zone, which the
//! watch's event lines use too (`local_clock`).

use std::time::Duration;

use registry_core::{Timestamp, civil_from_days};

use crate::text::format_age;

/// `time` for a line people read: the local date and time and how far it
/// is from `now`, as in `2026-12-04 21:32:25 (in 59m)` or
/// `2026-12-04 20:30:01 (3s ago)`.
pub fn time_text(time: Timestamp, now: Timestamp) -> String {
    format!("{} ({})", local_date_time(time), distance_text(time, now))
}

/// The local date and time of `time` to the second, `YYYY-MM-DD HH:MM:SS`;
/// UTC where the local zone cannot be told.
pub fn local_date_time(time: Timestamp) -> String {
    let seconds = whole_seconds(time);
    date_time_text(seconds + local_offset_seconds(seconds))
}

/// The local wall-clock time of `time` as `HH:MM:SS.mmm`, for event lines
/// people read; UTC where the local zone cannot be told.
pub fn local_clock(time: Timestamp) -> String {
    let seconds = whole_seconds(time);
    let millis = time.unix_nanos().rem_euclid(1_000_000_000) / 1_000_000;
    let local = (seconds + local_offset_seconds(seconds)).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}.{millis:03}", local / 3600, local % 3600 / 60, local % 60)
}

/// `in 59m`, `3s ago` or `now`: how far `time` is from `now`, in the
/// units of an age.
fn distance_text(time: Timestamp, now: Timestamp) -> String {
    let nanos = time.unix_nanos() - now.unix_nanos();
    let distance = Duration::from_nanos(u64::try_from(nanos.unsigned_abs()).unwrap_or(u64::MAX));
    if distance < Duration::from_secs(1) {
        "now".to_owned()
    } else if nanos > 0 {
        format!("in {}", format_age(distance))
    } else {
        format!("{} ago", format_age(distance))
    }
}

fn whole_seconds(time: Timestamp) -> i64 {
    i64::try_from(time.unix_nanos().div_euclid(1_000_000_000)).unwrap_or(i64::MAX)
}

/// How far the local zone is ahead of UTC at the Unix time `seconds`
/// (daylight saving included), as the C library's `localtime_r` says from
/// `TZ` or `/etc/localtime`; 0 when it cannot tell.
fn local_offset_seconds(seconds: i64) -> i64 {
    let Some(epoch) = nix::libc::time_t::try_from(seconds).ok() else { return 0 };
    // SAFETY: localtime_r reads one time_t and writes one tm, both owned
    // here; it is the reentrant form.
    let mut broken_down: nix::libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { nix::libc::localtime_r(&epoch, &mut broken_down) }.is_null() {
        return 0;
    }
    broken_down.tm_gmtoff
}

/// `YYYY-MM-DD HH:MM:SS` of a count of seconds since 1970-01-01 00:00:00
/// in the zone they are counted in.
fn date_time_text(seconds: i64) -> String {
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let of_day = seconds.rem_euclid(86_400);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}", of_day / 3600, of_day % 3600 / 60, of_day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_follow_the_calendar() {
        let cases = [
            (0, "1970-01-01 00:00:00"),
            (951_782_400, "2000-02-29 00:00:00"),
            (1_709_251_199, "2024-02-29 23:59:59"),
            (1_796_419_945, "2026-12-04 21:32:25"),
            (-1, "1969-12-31 23:59:59"),
            (4_102_444_800, "2100-01-01 00:00:00"),
        ];
        for (seconds, expect) in cases {
            assert_eq!(date_time_text(seconds), expect, "{seconds}");
        }
    }

    #[test]
    fn distances_read_as_ages_before_or_after_now() {
        let now = Timestamp::from_unix_nanos(1_000 * 1_000_000_000);
        let at = |seconds: i128| Timestamp::from_unix_nanos(seconds * 1_000_000_000 + 272_870_736);
        assert_eq!(distance_text(at(1_000 + 3600), now), "in 1h");
        assert_eq!(distance_text(at(1_000 + 600), now), "in 10m");
        assert_eq!(distance_text(at(1_000 - 4), now), "3s ago");
        assert_eq!(distance_text(at(1_000), now), "now");
    }
}
