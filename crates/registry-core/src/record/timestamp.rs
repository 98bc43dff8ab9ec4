//! RFC 3339 UTC timestamps with nanoseconds, the only time format in
//! records: written as `2026-11-30T02:03:05.123456789Z`, parsed strictly
//! (any offset is accepted and normalised; anything else is malformed).

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A point in time as nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i128);

impl Timestamp {
    pub fn now() -> Timestamp {
        Timestamp::from_system_time(SystemTime::now())
    }

    pub fn from_system_time(time: SystemTime) -> Timestamp {
        match time.duration_since(UNIX_EPOCH) {
            Ok(after) => Timestamp(after.as_nanos() as i128),
            Err(before) => Timestamp(-(before.duration().as_nanos() as i128)),
        }
    }

    pub fn from_unix_nanos(nanos: i128) -> Timestamp {
        Timestamp(nanos)
    }

    pub fn unix_nanos(self) -> i128 {
        self.0
    }

    /// How long ago this was, zero when it lies in the future.
    pub fn age(self, now: Timestamp) -> Duration {
        let nanos = (now.0 - self.0).max(0);
        Duration::new((nanos / 1_000_000_000) as u64, (nanos % 1_000_000_000) as u32)
    }

    /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`).
    /// RFC 3339 in UTC with milliseconds: `2026-12-01T21:30:00.123Z`, as
    /// watch events carry it.
    pub fn to_rfc3339_millis(self) -> String {
        let full = self.to_string();
        // `…:SS.nnnnnnnnnZ`: keep three of the nine digits.
        format!("{}Z", &full[..full.len() - 7])
    }

    pub fn parse(text: &str) -> Option<Timestamp> {
        let bytes = text.as_bytes();
        if bytes.len() < 20 || !text.is_ascii() {
            return None;
        }
        let number = |range: std::ops::Range<usize>| -> Option<i64> {
            let part = &text[range];
            part.bytes().all(|byte| byte.is_ascii_digit()).then(|| part.parse().ok())?
        };
        let year = number(0..4)?;
        let month = number(5..7)?;
        let day = number(8..10)?;
        let hour = number(11..13)?;
        let minute = number(14..16)?;
        let second = number(17..19)?;
        if bytes[4] != b'-'
            || bytes[7] != b'-'
            || !matches!(bytes[10], b'T' | b't')
            || bytes[13] != b':'
            || bytes[16] != b':'
        {
            return None;
        }
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return None;
        }
        let mut position = 19;
        let mut nanos: i64 = 0;
        if bytes.get(position) == Some(&b'.') {
            let digits = bytes[position + 1..].iter().take_while(|byte| byte.is_ascii_digit()).count();
            if digits == 0 || digits > 9 {
                return None;
            }
            let fraction: i64 = text[position + 1..position + 1 + digits].parse().ok()?;
            nanos = fraction * 10_i64.pow(9 - digits as u32);
            position += 1 + digits;
        }
        let offset_seconds = match &text[position..] {
            "Z" | "z" => 0,
            zone if zone.len() == 6
                && (zone.starts_with('+') || zone.starts_with('-'))
                && zone.as_bytes()[3] == b':' =>
            {
                let hours = number(position + 1..position + 3)?;
                let minutes = number(position + 4..position + 6)?;
                if hours > 23 || minutes > 59 {
                    return None;
                }
                let sign = if zone.starts_with('-') { -1 } else { 1 };
                sign * (hours * 3600 + minutes * 60)
            }
            _ => return None,
        };
        let days = days_from_civil(year, month, day);
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
        let stamp = Timestamp(i128::from(seconds) * 1_000_000_000 + i128::from(nanos));
        // An offset can carry a four-digit year out of RFC 3339's range
        // (`9999-12-31T23:59:59-23:59` is in the year 10000 in UTC); such a
        // time could not be written back as roster writes times, in UTC.
        stamp.is_writable().then_some(stamp)
    }

    /// Whether the UTC form of this time has a four-digit year, 0000 to 9999.
    fn is_writable(self) -> bool {
        let first = i128::from(days_from_civil(0, 1, 1)) * 86_400 * 1_000_000_000;
        let after_last = i128::from(days_from_civil(10_000, 1, 1)) * 86_400 * 1_000_000_000;
        (first..after_last).contains(&self.0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.0.div_euclid(1_000_000_000) as i64;
        let nanos = self.0.rem_euclid(1_000_000_000) as u64;
        let days = seconds.div_euclid(86400);
        let second_of_day = seconds.rem_euclid(86400) as u64;
        let (year, month, day) = civil_from_days(days);
        let (hour, minute, second) = (second_of_day / 3600, second_of_day % 3600 / 60, second_of_day % 60);
        match u64::try_from(year) {
            // Every time a record can hold: its digits put in place, as a
            // listing writes three per row.
            Ok(year) if year <= 9999 => {
                let mut text = *b"0000-00-00T00:00:00.000000000Z";
                for (range, value) in [
                    (0..4, year),
                    (5..7, month as u64),
                    (8..10, day as u64),
                    (11..13, hour),
                    (14..16, minute),
                    (17..19, second),
                    (20..29, nanos),
                ] {
                    put_digits(&mut text[range], value);
                }
                f.write_str(std::str::from_utf8(&text).expect("digits and separators are ASCII"))
            }
            _ => write!(f, "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{nanos:09}Z"),
        }
    }
}

/// Writes `value` in decimal into `digits`, right-aligned; the places
/// before it keep what they hold (zeros, in `Display`). `value` must fit.
fn put_digits(digits: &mut [u8], mut value: u64) {
    for place in digits.iter_mut().rev() {
        *place = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days-from-civil and civil-from-days algorithms.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146097 + day_of_era - 719468
}

/// The date `(year, month, day)` of the day `days` after 1970-01-01 in
/// the proleptic Gregorian calendar: the one conversion every date roster
/// writes or shows goes through.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719468;
    let era = shifted.div_euclid(146097);
    let day_of_era = shifted - era * 146097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_for_events() {
        let stamp = Timestamp::parse("2026-11-30T02:03:05.123456789Z").unwrap();
        assert_eq!(stamp.to_rfc3339_millis(), "2026-11-30T02:03:05.123Z");
        assert_eq!(Timestamp::from_unix_nanos(0).to_rfc3339_millis(), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn known_instants() {
        assert_eq!(Timestamp::from_unix_nanos(0).to_string(), "1970-01-01T00:00:00.000000000Z");
        let stamp = Timestamp::parse("2026-11-30T02:03:05.123456789Z").unwrap();
        assert_eq!(stamp.to_string(), "2026-11-30T02:03:05.123456789Z");
        assert_eq!(stamp.unix_nanos(), 1_796_004_185_123_456_789);
        assert_eq!(Timestamp::parse("2026-11-30T03:03:05.123456789+01:00"), Some(stamp));
        assert_eq!(
            Timestamp::parse("2024-02-29T00:00:00Z").unwrap().to_string(),
            "2024-02-29T00:00:00.000000000Z"
        );
        assert_eq!(Timestamp::parse("1969-12-31T23:59:59.5Z").unwrap().unix_nanos(), -500_000_000);
    }

    /// Regression, found by the `timestamp` fuzz target: an offset that
    /// moves a time out of the years 0000 to 9999 in UTC was accepted, and
    /// its UTC form (`10000-01-01T23:58:59.999999000Z`), which is what
    /// `roster-list` shows, did not parse back.
    #[test]
    fn offsets_that_leave_the_four_digit_years_are_malformed() {
        assert_eq!(Timestamp::parse("9999-12-31T23:59:59.999999-23:59"), None);
        assert_eq!(Timestamp::parse("0000-01-01T00:00:00+00:01"), None);
        let last = Timestamp::parse("9999-12-31T23:59:59.999999999Z").unwrap();
        assert_eq!(Timestamp::parse(&last.to_string()), Some(last));
        let first = Timestamp::parse("0000-01-01T00:00:00Z").unwrap();
        assert_eq!(Timestamp::parse(&first.to_string()), Some(first));
        assert!(Timestamp::parse("9999-12-31T23:59:59+00:01").is_some());
    }

    #[test]
    fn malformed_texts() {
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30T02:03:05",
            "2026-11-30T02:03:05.Z",
            "2026-11-30T02:03:05.1234567890Z",
            "2026-13-30T02:03:05Z",
            "2023-02-29T02:03:05Z",
            "2026-11-30T24:03:05Z",
            "2026-11-30 02:03:05Z",
            "2026-11-30T02:03:05+0100",
            "+026-11-30T02:03:05Z",
            "2026-11-30T02:03:05Zjunk",
            "２026-11-30T02:03:05Z",
        ] {
            assert_eq!(Timestamp::parse(bad), None, "{bad:?} parsed");
        }
    }

    /// What `Display` wrote before it put digits in place itself: every
    /// field through the formatting machinery.
    fn spelled_out(stamp: Timestamp) -> String {
        let seconds = stamp.0.div_euclid(1_000_000_000) as i64;
        let nanos = stamp.0.rem_euclid(1_000_000_000);
        let days = seconds.div_euclid(86400);
        let second_of_day = seconds.rem_euclid(86400);
        let (year, month, day) = civil_from_days(days);
        format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
            second_of_day / 3600,
            second_of_day % 3600 / 60,
            second_of_day % 60
        )
    }

    #[test]
    fn display_at_the_edges_of_the_four_digit_years_and_beyond() {
        let first = i128::from(days_from_civil(0, 1, 1)) * 86_400 * 1_000_000_000;
        let after_last = i128::from(days_from_civil(10_000, 1, 1)) * 86_400 * 1_000_000_000;
        for nanos in [
            first - 1,
            first,
            first + 1,
            -1,
            0,
            1,
            999_999_999,
            after_last - 1,
            after_last,
            i128::from(i64::MAX),
        ] {
            let stamp = Timestamp::from_unix_nanos(nanos);
            assert_eq!(stamp.to_string(), spelled_out(stamp), "{nanos}");
        }
        assert_eq!(Timestamp::from_unix_nanos(first - 1).to_string(), "-001-12-31T23:59:59.999999999Z");
        assert_eq!(Timestamp::from_unix_nanos(after_last).to_string(), "10000-01-01T00:00:00.000000000Z");
    }

    proptest::proptest! {
        #[test]
        fn display_puts_the_digits_the_formatting_machinery_writes(nanos in -100_000_000_000_000_000_000i128..400_000_000_000_000_000_000i128) {
            let stamp = Timestamp::from_unix_nanos(nanos);
            proptest::prop_assert_eq!(stamp.to_string(), spelled_out(stamp));
        }

        #[test]
        fn display_then_parse_round_trips(nanos in -62_135_596_800_000_000_000i128..253_402_300_799_999_999_999i128) {
            let stamp = Timestamp::from_unix_nanos(nanos);
            proptest::prop_assert_eq!(Timestamp::parse(&stamp.to_string()), Some(stamp));
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
            let _ = Timestamp::parse(&text);
        }
    }
}
