//! Text for people: escaping so that no control character, escape
//! sequence or invisible reordering from a cwd or agent name reaches a
//! terminal, `~` for home, colour only where it helps, aligned tables, ages
//! and durations.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use crate::fit::{character_width, display_width};

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Escapes every character a terminal must not be given raw
/// (`must_escape`) as `\n`, `\t`, `\r`, `\e` or `\u{..}`; a backslash
/// becomes `\\` so the escaping cannot be forged.
pub fn escape_for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|character| character == '\\' || must_escape(character)) {
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
            other if must_escape(other) => {
                let _ = write!(escaped, "\\u{{{:x}}}", other as u32);
            }
            other => escaped.push(other),
        }
    }
    Cow::Owned(escaped)
}

/// A shell command shown for a person to copy and run: as it is when
/// nothing in it must be escaped for a terminal but backslashes, which are
/// the shell's own and must stay single for the command to mean what it
/// says; else escaped as `escape_for_terminal` escapes it (it cannot be
/// pasted then, and nothing reaches the terminal raw).
pub fn command_for_terminal(command: &str) -> Cow<'_, str> {
    if command.chars().any(must_escape) { escape_for_terminal(command) } else { Cow::Borrowed(command) }
}

/// Escapes, in the text of a JSON document or a JavaScript file, what
/// `escape_for_terminal` escapes, as the `\uXXXX` escapes both languages
/// read in a string (a surrogate pair past U+FFFF), and leaves everything
/// else as it is, backslashes included: the document shown means what the
/// file install writes means, and can be pasted. For text whose every
/// such character stands inside a string literal, as in a document
/// `serde_json` wrote (which escapes C0 controls itself).
pub fn escape_source_text_for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|character| character != '\n' && must_escape(character)) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 12);
    for character in text.chars() {
        if character == '\n' || !must_escape(character) {
            escaped.push(character);
            continue;
        }
        let mut units = [0u16; 2];
        for unit in character.encode_utf16(&mut units) {
            let _ = write!(escaped, "\\u{unit:04x}");
        }
    }
    Cow::Owned(escaped)
}

/// `path` for a terminal: its text escaped as `escape_for_terminal`
/// escapes it, and each byte that is not UTF-8 shown as `\xff`, so that
/// the path shown is the path that is, byte for byte (a lossy `\u{fffd}`
/// would name another directory).
pub fn escape_path_for_terminal(path: &Path) -> String {
    let mut shown = String::new();
    push_escaped_path(&mut shown, path);
    shown
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
    match home.and_then(|home| path.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => out.push('~'),
        Some(rest) => {
            out.push_str("~/");
            push_escaped_path(out, rest);
        }
        None => push_escaped_path(out, path),
    }
}

/// `escape_path_for_terminal`, appended to `out`.
fn push_escaped_path(out: &mut String, path: &Path) {
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(&escape_for_terminal(chunk.valid()));
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
}

/// Whether a terminal must not be given `character` raw: a control
/// character (C0, DEL, C1: cursor moves, colours, a new line, a CSI), a
/// format character (general category Cf: the bidi controls U+061C,
/// U+200E, U+200F, U+202A–U+202E and U+2066–U+2069 that reorder what is
/// shown, invisible ones such as U+200B, U+00AD and U+FEFF, the tags
/// U+E0001 and U+E0020–U+E007F), or a line or paragraph separator (U+2028,
/// U+2029, which break a line where no newline shows). The price is that
/// text joining emoji or letters with U+200D or U+200C shows the joiner
/// escaped.
fn must_escape(character: char) -> bool {
    // Below U+00AD, the first format character, only the controls are; the
    // table is looked at for the rest, which keeps an ASCII path cheap.
    if u32::from(character) < 0xAD {
        return character.is_control();
    }
    matches!(
        character.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
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

/// Colours a cell of a table after its width was measured: the column
/// and the cell, borrowed back when left alone.
pub type PaintCell<'a> = dyn for<'cell> Fn(usize, &'cell str) -> Cow<'cell, str> + 'a;

/// Renders rows under headers with columns aligned by character count.
/// Cells must already be escaped; `paint_cell` may colour a cell after its
/// width was measured (so SGR sequences do not skew the alignment), and
/// hands back the cells it leaves alone borrowed: a listing's table has
/// tens of thousands of cells. Headers are never painted: `paint_cell`
/// decides by column and value, and a header is neither a state nor a value.
pub fn render_table(headers: &[&str], rows: &[Vec<String>], paint_cell: &PaintCell<'_>) -> String {
    render_table_within(headers, &[], rows, paint_cell)
}

/// `render_table`, with the most characters each column shows: `limits`
/// holds one per column (missing ones: none), and a cell longer than its
/// column's limit is cut to it (`fit_to_width`).
pub fn render_table_within(
    headers: &[&str],
    limits: &[Option<usize>],
    rows: &[Vec<String>],
    paint_cell: &PaintCell<'_>,
) -> String {
    let widths = column_widths(headers, limits, rows);
    let line_width = widths.iter().map(|width| width + 2).sum::<usize>();
    let mut out = String::with_capacity((rows.len() + 1) * line_width);
    push_table_line(&mut out, &widths, &mut headers.iter().copied(), &|_, header| header.into());
    for row in rows {
        push_table_line(&mut out, &widths, &mut row.iter().map(String::as_str), paint_cell);
    }
    out
}

/// The width of each column of a table: its header's or its widest
/// cell's, whichever is wider, but at most its limit where it has one
/// (`limits` as for `render_table_within`).
pub fn column_widths(headers: &[&str], limits: &[Option<usize>], rows: &[Vec<String>]) -> Vec<usize> {
    let mut widths: Vec<usize> = headers.iter().map(|header| display_width(header)).collect();
    for row in rows {
        for (column, cell) in row.iter().enumerate() {
            widths[column] = widths[column].max(display_width(cell));
        }
    }
    for (width, limit) in widths.iter_mut().zip(limits) {
        if let Some(limit) = limit {
            *width = (*width).min(*limit);
        }
    }
    widths
}

/// Appends one line of a table to `out`: each cell cut to its column's
/// width (`fit_to_width`; the last one too, whose width may be
/// `usize::MAX`, no limit) and padded to it, two spaces between columns,
/// nothing after the last cell. Every line of a table, and every line
/// printed in a table's columns later (a watch's events), is made here.
pub fn push_table_line(
    out: &mut String,
    widths: &[usize],
    cells: &mut dyn Iterator<Item = &str>,
    paint_cell: &PaintCell<'_>,
) {
    let last = widths.len() - 1;
    let line_start = out.len();
    for (column, cell) in cells.enumerate().take(widths.len()) {
        let width = widths[column];
        let cell = fit_to_width(cell, width);
        let padding = width.saturating_sub(display_width(&cell));
        out.push_str(&paint_cell(column, &cell));
        if column < last {
            out.extend(std::iter::repeat_n(' ', padding + 2));
        }
    }
    let line_end = line_start + out[line_start..].trim_end().len();
    out.truncate(line_end);
    out.push('\n');
}

/// `cell` cut to at most `width` terminal columns (`display_width`), its
/// last one `…` where it was cut, so that a long value (an agent name)
/// keeps its column; never inside an escape.
pub fn fit_to_width(cell: &str, width: usize) -> Cow<'_, str> {
    // Most cells are short: a cell takes no more columns than bytes.
    if cell.len() <= width || display_width(cell) <= width {
        return Cow::Borrowed(cell);
    }
    if width == 0 {
        return Cow::Borrowed("");
    }
    let mut taken = 0;
    let mut end = 0;
    for (index, character) in cell.char_indices() {
        let character_width = character_width(character);
        if taken + character_width > width - 1 {
            break;
        }
        taken += character_width;
        end = index + character.len_utf8();
    }
    let kept = &cell[..end];
    Cow::Owned(format!("{}…", &kept[..whole_escapes_end(kept)]))
}

/// The first `characters` characters of an escaped cell, fewer where that
/// would cut an escape in half (`fit_to_width` keeps escapes whole alike).
pub fn escaped_prefix(cell: &str, characters: usize) -> &str {
    let end = cell.char_indices().nth(characters).map_or(cell.len(), |(index, _)| index);
    let kept = &cell[..end];
    &kept[..whole_escapes_end(kept)]
}

/// Where `prefix` of an escaped cell (`escape_for_terminal`'s output, in
/// which every backslash starts an escape) ends without cutting an escape
/// in half: `\u{202e}` is kept whole or left out, never shown as
/// `\u{202…`, which would read as another character.
fn whole_escapes_end(prefix: &str) -> usize {
    let bytes = prefix.as_bytes();
    let mut index = 0;
    let mut whole = 0;
    while index < bytes.len() {
        if bytes[index] != b'\\' {
            index += 1;
            whole = index;
            continue;
        }
        let rest = &bytes[index + 1..];
        let length = match rest.first() {
            Some(b'u') => rest.iter().position(|byte| *byte == b'}').map(|end| end + 2),
            Some(b'x') => (rest.len() >= 3).then_some(4),
            Some(_) => Some(2),
            None => None,
        };
        match length {
            Some(length) if index + length <= bytes.len() => {
                index += length;
                whole = index;
            }
            _ => return whole,
        }
    }
    whole
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

/// The durations offered when a shell completes a duration's value
/// (`roster-prune --older-than <TAB>`): an hour, a day, a week, two weeks.
/// Any other that [`parse_duration`] reads may be typed.
pub const DURATION_SUGGESTIONS: [&str; 4] = ["1h", "1d", "7d", "2w"];

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

    /// General category Cf as the Unicode Character Database lists it
    /// (`DerivedGeneralCategory.txt`), the same from Unicode 15.0 on:
    /// written out here so that the table escaping relies on is checked
    /// against the standard, not against itself.
    const FORMAT_CHARACTERS: [(u32, u32); 21] = [
        (0x00AD, 0x00AD),
        (0x0600, 0x0605),
        (0x061C, 0x061C),
        (0x06DD, 0x06DD),
        (0x070F, 0x070F),
        (0x0890, 0x0891),
        (0x08E2, 0x08E2),
        (0x180E, 0x180E),
        (0x200B, 0x200F),
        (0x202A, 0x202E),
        (0x2060, 0x2064),
        (0x2066, 0x206F),
        (0xFEFF, 0xFEFF),
        (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x13430, 0x1343F),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0001, 0xE0001),
        (0xE0020, 0xE007F),
    ];

    /// Bidi_Control as `PropList.txt` lists it: the characters that reorder
    /// what a terminal shows (all of them Cf too).
    const BIDI_CONTROLS: [(u32, u32); 4] =
        [(0x061C, 0x061C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2066, 0x2069)];

    fn code_points(ranges: &[(u32, u32)]) -> impl Iterator<Item = char> + '_ {
        ranges.iter().flat_map(|&(first, last)| (first..=last).map(|code| char::from_u32(code).unwrap()))
    }

    /// What escaping promises, said without the table it uses: controls,
    /// the format characters of the standard, line and paragraph separators.
    fn escaped_by_the_standard(character: char) -> bool {
        character.is_control()
            || matches!(character, '\u{2028}' | '\u{2029}')
            || code_points(&FORMAT_CHARACTERS).any(|format| format == character)
    }

    #[test]
    fn escapes_controls_and_keeps_the_rest() {
        let cases = [
            ("plain/path", "plain/path"),
            ("a\nb", "a\\nb"),
            ("\u{1b}[31mred", "\\e[31mred"),
            ("tab\there", "tab\\there"),
            ("back\\slash", "back\\\\slash"),
            ("bell\u{7}", "bell\\u{7}"),
            ("del\u{7f}", "del\\u{7f}"),
            ("c1\u{9b}31m", "c1\\u{9b}31m"),
            ("rtl\u{202e}gnp.exe", "rtl\\u{202e}gnp.exe"),
            // Regression: U+061C ARABIC LETTER MARK, a bidi control, was printed raw.
            ("mark\u{61c}here", "mark\\u{61c}here"),
            ("zero\u{200b}width", "zero\\u{200b}width"),
            ("\u{feff}bom", "\\u{feff}bom"),
            ("soft\u{ad}hyphen", "soft\\u{ad}hyphen"),
            ("tag\u{e0041}", "tag\\u{e0041}"),
            ("line\u{2028}para\u{2029}", "line\\u{2028}para\\u{2029}"),
            ("ünïcödé ✓", "ünïcödé ✓"),
        ];
        for (input, expect) in cases {
            assert_eq!(escape_for_terminal(input), expect, "input {input:?}");
        }
    }

    /// Every format character and bidi control of the standard is escaped
    /// as `\u{..}`, and the escaped form is plain ASCII.
    #[test]
    fn every_format_character_and_bidi_control_is_escaped() {
        for character in code_points(&FORMAT_CHARACTERS).chain(code_points(&BIDI_CONTROLS)) {
            let text = format!("a{character}b");
            let expect = format!("a\\u{{{:x}}}b", u32::from(character));
            assert_eq!(escape_for_terminal(&text), expect, "U+{:04X}", u32::from(character));
        }
    }

    /// The table escaping relies on agrees with the standard on every code
    /// point: nothing of the standard's list slips through, and nothing
    /// else is escaped. A newer table that calls another character a format
    /// character fails here: add it to `FORMAT_CHARACTERS` when the UCD
    /// agrees.
    #[test]
    fn escaping_agrees_with_the_standard_on_every_code_point() {
        let mut format = vec![false; 0x11_0000];
        for character in code_points(&FORMAT_CHARACTERS) {
            format[character as usize] = true;
        }
        let disagreements: Vec<String> = (0..=0x10_FFFF_u32)
            .filter_map(char::from_u32)
            .filter(|&character| {
                let standard = character.is_control()
                    || matches!(character, '\u{2028}' | '\u{2029}')
                    || format[character as usize];
                must_escape(character) != standard
            })
            .map(|character| format!("U+{:04X}", u32::from(character)))
            .collect();
        assert!(
            disagreements.is_empty(),
            "escaped against the standard, or kept against it: {disagreements:?}"
        );
    }

    #[test]
    fn ordinary_text_of_every_script_is_kept() {
        let texts = [
            "Grüße aus Köln",
            "Ελληνικά",
            "Русский текст",
            "العربية",
            "עברית",
            "हिन्दी",
            "中文目录",
            "日本語のフォルダ",
            "한국어",
            "ภาษาไทย",
            "🦀 🚀 ✓ 👍🏽 ❤️ 🇫🇷",
            "wren-2 agent.v1 (copy) [x] {y} ~/src",
        ];
        for text in texts {
            assert_eq!(escape_for_terminal(text), text);
            assert_eq!(escape_path_for_terminal(Path::new(text)), text);
        }
    }

    proptest::proptest! {
        #[test]
        fn escaped_text_has_no_character_a_terminal_must_not_get(
            text in "(\\PC|\\p{Cf}|\\p{Zl}|\\p{Zp}|[\\x00-\\x1f\\x7f-\\x9f])*"
        ) {
            let escaped = escape_for_terminal(&text);
            proptest::prop_assert!(!escaped.chars().any(escaped_by_the_standard), "{:?}", escaped);
        }
    }

    /// Regression: `roster-hooks print` escaped the JSON snippet as plain
    /// text, doubling the backslashes of its escapes, so a command holding
    /// `'` could no longer be pasted. The source escaping keeps the document
    /// one that parses to the same value.
    #[test]
    fn source_text_stays_the_same_document() {
        let value = serde_json::json!({
            "command": "'/opt/o'\\''brien/bin/x' --dir '/a \"b\" $c \\d'",
            "hostile": "\u{1b}[31m\u{7f}\u{9b}\u{61c}\u{202e}\u{200b}\u{feff}\u{2028}\u{e0001}\n\t",
        });
        let text = serde_json::to_string_pretty(&value).unwrap();
        let shown = escape_source_text_for_terminal(&text);
        assert!(!shown.chars().any(|character| character != '\n' && escaped_by_the_standard(character)));
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), value);
        assert!(shown.contains("\\u061c") && shown.contains("\\udb40\\udc01"), "{shown}");
        let plain = serde_json::to_string_pretty(&serde_json::json!({"command": "a 'b\\'c'"})).unwrap();
        assert_eq!(escape_source_text_for_terminal(&plain), plain);
    }

    #[test]
    fn commands_are_shown_as_they_are_unless_they_hold_controls() {
        let command = "'/opt/o'\\''brien/bin/roster-register' --hook codex --dir '/a \"b\" $c \\d'";
        assert_eq!(command_for_terminal(command), command);
        assert_eq!(command_for_terminal("'/opt/x\u{1b}[2J\\y'"), "'/opt/x\\e[2J\\\\y'");
        assert_eq!(command_for_terminal("'/opt/\u{202e}x'"), "'/opt/\\u{202e}x'");
    }

    #[test]
    fn paths_show_bytes_that_are_not_utf8() {
        use std::ffi::OsStr;
        let path = |bytes: &[u8]| Path::new(OsStr::from_bytes(bytes)).to_owned();
        assert_eq!(escape_path_for_terminal(&path(b"/tmp/\xff")), "/tmp/\\xff");
        assert_eq!(escape_path_for_terminal(&path(b"/tmp/\xc3\x28\\x\x1b")), "/tmp/\\xc3(\\\\x\\e");
        assert_eq!(escape_path_for_terminal(&path("/tmp/\u{fffd}".as_bytes())), "/tmp/\u{fffd}");
        let home = Path::new("/home/dev");
        assert_eq!(home_relative(&path(b"/home/dev/\xff\xfe"), Some(home)), "~/\\xff\\xfe");
    }

    #[test]
    fn home_is_shown_as_tilde() {
        let home = Path::new("/home/dev");
        assert_eq!(home_relative(Path::new("/home/dev/src/app"), Some(home)), "~/src/app");
        assert_eq!(home_relative(Path::new("/home/dev"), Some(home)), "~");
        assert_eq!(home_relative(Path::new("/home/devil"), Some(home)), "/home/devil");
        assert_eq!(home_relative(Path::new("/tmp/x\ny"), Some(home)), "/tmp/x\\ny");
        assert_eq!(home_relative(Path::new("/home/dev/a\u{61c}b"), Some(home)), "~/a\\u{61c}b");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("36h"), Ok(Duration::from_secs(36 * 3600)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86400)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(14 * 86400)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        for suggested in DURATION_SUGGESTIONS {
            assert!(parse_duration(suggested).is_ok(), "{suggested} is offered but not read");
        }
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

    #[test]
    fn a_cell_past_its_columns_limit_is_cut_and_marked() {
        let rows = vec![
            vec!["1".into(), "a-very-long-agent-name".into(), "x".into()],
            vec!["2".into(), "ünïcode".into(), "y".into()],
        ];
        let table =
            render_table_within(&["PID", "AGENT", "CWD"], &[None, Some(8)], &rows, &|_, cell| cell.into());
        assert_eq!(table, "PID  AGENT     CWD\n1    a-very-…  x\n2    ünïcode   y\n");
        assert_eq!(fit_to_width("wren", 4), "wren");
        assert_eq!(fit_to_width("ünïcöde", 7), "ünïcöde");
        assert_eq!(fit_to_width("ünïcöde", 3), "ün…");
        // An escape is never cut in half.
        let escaped = escape_for_terminal("lead\u{202e}dael\u{1b}x\\y");
        for width in 1..=escaped.chars().count() {
            let cut = fit_to_width(&escaped, width);
            assert!(cut.chars().count() <= width, "{cut}");
            let shown = cut.trim_end_matches('…');
            assert!(escaped.starts_with(shown), "{cut}");
            for partial in ["\\u{202…", "\\u{20…", "\\u{2…", "\\u{…", "\\u…"] {
                assert!(!cut.ends_with(partial), "{width}: {cut}");
            }
            assert_eq!(shown.matches("\\u{").count(), shown.matches('}').count(), "{width}: {cut}");
        }
    }

    /// Wide characters take two columns: a table of them lines up on a
    /// terminal, and a cut keeps within the width however wide what is cut.
    #[test]
    fn wide_characters_are_measured_in_terminal_columns() {
        let rows = vec![vec!["日本語の名前".into(), "x".into()], vec!["wren".into(), "y".into()]];
        let table = render_table_within(&["AGENT", "CWD"], &[Some(7)], &rows, &|_, cell| cell.into());
        assert_eq!(table, "AGENT    CWD\n日本語…  x\nwren     y\n");
        assert_eq!(fit_to_width("日本語の名前", 12), "日本語の名前");
        assert_eq!(fit_to_width("日本語の名前", 6), "日本…");
        assert_eq!(fit_to_width("ab日本", 4), "ab…");
        assert_eq!(escaped_prefix("abc\\u{202e}def", 5), "abc");
        assert_eq!(escaped_prefix("abc\\u{202e}def", 10), "abc");
        assert_eq!(escaped_prefix("abc\\u{202e}def", 12), "abc\\u{202e}d");
    }

    /// Regression: `roster-hooks status` painted by column alone, and its
    /// STATE header came out dimmed like a state.
    #[test]
    fn headers_are_never_painted() {
        let rows = vec![vec!["installed".into()]];
        let table = render_table(&["STATE"], &rows, &|_, cell| format!("<{cell}>").into());
        assert_eq!(table, "STATE\n<installed>\n");
    }
}
