//! Text for people: escaping so that no control character or escape
//! sequence from a cwd or agent name reaches a terminal, `~` for home,
//! colour only where it helps, aligned tables, ages and durations.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// Escapes every control character (C0, DEL, C1) and the Unicode bidi
/// controls that could reorder what a terminal shows, as `\n`, `\t`, `\e`
/// or `\u{..}`; a backslash becomes `\\` so the escaping cannot be forged.
pub fn escape_for_terminal(text: &str) -> Cow<'_, str> {
    let needs_escape = |character: char| {
        character.is_control()
            || character == '\\'
            || matches!(character, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            '\\' => escaped.push_str("\\\\"),
            '\n' => escaped.push_str("\\n"),
            '\t' => escaped.push_str("\\t"),
            '\r' => escaped.push_str("\\r"),
            '\u{1b}' => escaped.push_str("\\e"),
            other if needs_escape(other) => {
                let _ = write!(escaped, "\\u{{{:x}}}", other as u32);
            }
            other => escaped.push(other),
        }
    }
    Cow::Owned(escaped)
}

/// Shows `path` with the home directory as `~`, escaped for a terminal.
pub fn home_relative(path: &Path, home: Option<&Path>) -> String {
    let mut shown = String::new();
    push_home_relative(&mut shown, path, home);
    shown
}

/// `home_relative`, appended to `out`: a report of ten thousand lines
/// writes each into one buffer.
pub fn push_home_relative(out: &mut String, path: &Path, home: Option<&Path>) {
    let start = out.len();
    match home.and_then(|home| path.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => out.push('~'),
        Some(rest) => {
            let _ = write!(out, "~/{}", rest.display());
        }
        None => {
            let _ = write!(out, "{}", path.display());
        }
    }
    if let Cow::Owned(escaped) = escape_for_terminal(&out[start..]) {
        out.truncate(start);
        out.push_str(&escaped);
    }
}

/// The local wall-clock time of `time` as `HH:MM:SS.mmm`, for event lines
/// people read; UTC where the local zone cannot be told.
pub fn local_clock(time: registry_core::Timestamp) -> String {
    let nanos = time.unix_nanos();
    let seconds = nanos.div_euclid(1_000_000_000);
    let millis = nanos.rem_euclid(1_000_000_000) / 1_000_000;
    let mut offset = 0i64;
    if let Ok(epoch) = nix::libc::time_t::try_from(seconds) {
        // SAFETY: localtime_r reads one time_t and writes one tm, both
        // owned here; it is the reentrant form.
        let mut broken_down: nix::libc::tm = unsafe { std::mem::zeroed() };
        if !unsafe { nix::libc::localtime_r(&epoch, &mut broken_down) }.is_null() {
            offset = broken_down.tm_gmtoff;
        }
    }
    let local = (seconds as i64 + offset).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}.{millis:03}", local / 3600, local % 3600 / 60, local % 60)
}

/// The few colours roster uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    Green,
    Yellow,
    Red,
    Dim,
}

/// Wraps `text` in the colour's SGR sequence when `enabled`.
pub fn paint(text: &str, colour: Colour, enabled: bool) -> String {
    if !enabled {
        return text.to_owned();
    }
    let code = match colour {
        Colour::Green => "32",
        Colour::Yellow => "33",
        Colour::Red => "31",
        Colour::Dim => "2",
    };
    format!("\u{1b}[{code}m{text}\u{1b}[0m")
}

/// Renders rows under headers with columns aligned by character count.
/// Cells must already be escaped; `paint_cell` may colour a cell after its
/// width was measured (so SGR sequences do not skew the alignment), and
/// hands back the cells it leaves alone borrowed: a listing's table has
/// tens of thousands of cells.
pub fn render_table(
    headers: &[&str],
    rows: &[Vec<String>],
    paint_cell: &dyn for<'cell> Fn(usize, &'cell str) -> Cow<'cell, str>,
) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|header| header.chars().count()).collect();
    for row in rows {
        for (column, cell) in row.iter().enumerate() {
            widths[column] = widths[column].max(cell.chars().count());
        }
    }
    let line_width = widths.iter().map(|width| width + 2).sum::<usize>();
    let mut out = String::with_capacity((rows.len() + 1) * line_width);
    let mut push_line = |cells: &mut dyn Iterator<Item = (usize, &str)>| {
        let last = widths.len() - 1;
        let line_start = out.len();
        for (column, cell) in cells {
            let padding = widths[column] - cell.chars().count();
            out.push_str(&paint_cell(column, cell));
            if column != last {
                out.extend(std::iter::repeat_n(' ', padding + 2));
            }
        }
        let line_end = line_start + out[line_start..].trim_end().len();
        out.truncate(line_end);
        out.push('\n');
    };
    push_line(&mut headers.iter().copied().enumerate());
    for row in rows {
        push_line(&mut row.iter().map(String::as_str).enumerate());
    }
    out
}

/// A short age: `42s`, `5m`, `3h`, `2d`.
pub fn format_age(age: Duration) -> String {
    let seconds = age.as_secs();
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m", seconds / 60),
        3600..86400 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86400),
    }
}

/// Parses `90s`, `90m`, `36h`, `7d`, `2w` (a whole number and one unit of
/// `s m h d w`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let fail = || {
        format!(
            "{text:?} is not a duration; write a whole number and a unit (s m h d w), as in 90m, 36h, 7d or 2w"
        )
    };
    let split = text.find(|character: char| !character.is_ascii_digit()).ok_or_else(fail)?;
    let (digits, unit) = text.split_at(split);
    if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
        return Err(fail());
    }
    let amount: u64 = digits.parse().map_err(|_| fail())?;
    let unit_seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        "w" => 7 * 86400,
        _ => return Err(fail()),
    };
    amount.checked_mul(unit_seconds).map(Duration::from_secs).ok_or_else(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_keeps_the_rest() {
        let cases = [
            ("plain/path", "plain/path"),
            ("a\nb", "a\\nb"),
            ("\u{1b}[31mred", "\\e[31mred"),
            ("tab\there", "tab\\there"),
            ("back\\slash", "back\\\\slash"),
            ("bell\u{7}", "bell\\u{7}"),
            ("c1\u{9b}31m", "c1\\u{9b}31m"),
            ("rtl\u{202e}gnp.exe", "rtl\\u{202e}gnp.exe"),
            ("ünïcödé ✓", "ünïcödé ✓"),
        ];
        for (input, expect) in cases {
            assert_eq!(escape_for_terminal(input), expect, "input {input:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn escaped_text_has_no_control_characters(text in "\\PC*|[\\x00-\\x1f\\x7f-\\x9f]*") {
            let escaped = escape_for_terminal(&text);
            proptest::prop_assert!(!escaped.chars().any(char::is_control));
        }
    }

    #[test]
    fn home_is_shown_as_tilde() {
        let home = Path::new("/home/dev");
        assert_eq!(home_relative(Path::new("/home/dev/src/app"), Some(home)), "~/src/app");
        assert_eq!(home_relative(Path::new("/home/dev"), Some(home)), "~");
        assert_eq!(home_relative(Path::new("/home/devil"), Some(home)), "/home/devil");
        assert_eq!(home_relative(Path::new("/tmp/x\ny"), Some(home)), "/tmp/x\\ny");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("36h"), Ok(Duration::from_secs(36 * 3600)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86400)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(14 * 86400)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        for bad in ["", "m", "7", "7y", "-1d", "1.5h", " 7d", "7d ", "07d", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn ages() {
        assert_eq!(format_age(Duration::from_secs(5)), "5s");
        assert_eq!(format_age(Duration::from_secs(300)), "5m");
        assert_eq!(format_age(Duration::from_secs(7200)), "2h");
        assert_eq!(format_age(Duration::from_secs(3 * 86400)), "3d");
    }

    #[test]
    fn table_aligns_by_characters() {
        let rows =
            vec![vec!["1".into(), "ünï".into(), "x".into()], vec!["4242".into(), "a".into(), "y".into()]];
        let table = render_table(&["PID", "AGENT", "CWD"], &rows, &|_, cell| cell.into());
        assert_eq!(table, "PID   AGENT  CWD\n1     ünï    x\n4242  a      y\n");
    }
}
