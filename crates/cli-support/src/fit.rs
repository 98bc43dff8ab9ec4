//! Fitting text to the width of the terminal people read it in: how many
//! terminal columns a text takes (a CJK character or an emoji two, a
//! combining mark none), how wide the output may be (`--width`, `COLUMNS`,
//! the terminal's own size), and which columns of a table to keep and how
//! wide to make each so that its lines fit. The tables themselves are
//! rendered in `text.rs`; this file only decides.

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The terminal columns `text` takes. Text here is already escaped
/// (`escape_for_terminal`): no control characters are left to measure.
pub fn display_width(text: &str) -> usize {
    // Most cells are ASCII: one column a byte.
    if text.is_ascii() {
        return text.len();
    }
    text.chars().map(character_width).sum()
}

/// The terminal columns one character takes: none for a combining mark
/// (it joins the character before it), two for the East Asian wide and
/// fullwidth characters and the emoji shown as pictures, one otherwise.
pub fn character_width(character: char) -> usize {
    if character.is_ascii() {
        return 1;
    }
    if matches!(
        character.general_category(),
        GeneralCategory::NonspacingMark | GeneralCategory::EnclosingMark
    ) {
        return 0;
    }
    let code = u32::from(character);
    let wide = WIDE_RANGES
        .binary_search_by(|&(first, last)| {
            if last < code {
                std::cmp::Ordering::Less
            } else if first > code {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok();
    if wide { 2 } else { 1 }
}

/// The characters terminals draw two columns wide: Unicode's East Asian
/// Wide and Fullwidth ranges (UAX #11) and the blocks of emoji drawn as
/// pictures, abridged to whole blocks. A terminal may disagree on a rare
/// symbol; a cell then ends a column early or late, never cut in an escape.
const WIDE_RANGES: [(u32, u32); 22] = [
    (0x1100, 0x115F),
    (0x231A, 0x231B),
    (0x2329, 0x232A),
    (0x23E9, 0x23F3),
    (0x25FD, 0x25FE),
    (0x2614, 0x2615),
    (0x2648, 0x2653),
    (0x26AA, 0x26FD),
    (0x2705, 0x27BF),
    (0x2B1B, 0x2B55),
    (0x2E80, 0xA4CF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7A3),
    (0xF900, 0xFAFF),
    (0xFE10, 0xFE6F),
    (0xFF00, 0xFF60),
    (0xFFE0, 0xFFE6),
    (0x16FE0, 0x18AFF),
    (0x1B000, 0x1B2FF),
    (0x1F004, 0x1F251),
    (0x1F300, 0x1FAFF),
    (0x20000, 0x3FFFD),
];

/// How many columns output to stdout may take: `requested` (`--width N`)
/// when given, else `COLUMNS` when it holds a positive number, else the
/// width of the terminal stdout is, else `None`: no limit (a pipe or a
/// file, read by a program or a pager that scrolls sideways).
pub fn output_width(
    requested: Option<usize>,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<usize> {
    width_from(requested, env, &stdout_terminal_width)
}

/// `output_width`, the terminal's width asked of `terminal`.
fn width_from(
    requested: Option<usize>,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    terminal: &dyn Fn() -> Option<usize>,
) -> Option<usize> {
    if let Some(width) = requested {
        return Some(width);
    }
    let from_environment = env("COLUMNS")
        .and_then(|value| value.to_str().and_then(|text| text.trim().parse::<usize>().ok()))
        .filter(|width| *width > 0);
    from_environment.or_else(terminal)
}

/// The width of the terminal stdout is, from the terminal itself
/// (`TIOCGWINSZ`); `None` when stdout is no terminal or says width 0 (a
/// pseudo-terminal nobody sized).
fn stdout_terminal_width() -> Option<usize> {
    use std::os::fd::AsRawFd;
    let stdout = std::io::stdout();
    if !std::io::IsTerminal::is_terminal(&stdout) {
        return None;
    }
    let mut size = nix::libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one winsize, owned here, for an open fd.
    let answer = unsafe { nix::libc::ioctl(stdout.as_raw_fd(), nix::libc::TIOCGWINSZ, &mut size) };
    (answer == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// One column of a table to fit: its width when nothing is cut (`natural`,
/// its widest cell or header), the least it may be cut to (`least`; equal
/// to `natural` for a column never cut), and how soon it is left out when
/// even cut columns do not fit (`drop_rank`: lower first; `None`: never).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnToFit {
    pub natural: usize,
    pub least: usize,
    pub drop_rank: Option<u8>,
}

/// What fitting decided: for each column given, its width, or `None` when
/// it is left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FittedColumns {
    pub widths: Vec<Option<usize>>,
}

impl FittedColumns {
    /// The indices of the columns left out.
    pub fn dropped(&self) -> Vec<usize> {
        self.widths.iter().enumerate().filter(|(_, width)| width.is_none()).map(|(index, _)| index).collect()
    }
}

/// The columns as wide as they may be within `available` terminal columns,
/// `reserved` of them already taken by what comes before the columns (a
/// watch's time and event, with their gaps); two columns of gap between
/// columns. Columns are first left out, lowest `drop_rank` first, only
/// while even every cuttable column at its least does not fit; then the
/// cuttable ones are cut, the last-given first, no more than needed.
/// Without a limit, every column at its natural width.
pub fn fit_columns(columns: &[ColumnToFit], reserved: usize, available: Option<usize>) -> FittedColumns {
    let mut widths: Vec<Option<usize>> = columns.iter().map(|column| Some(column.natural)).collect();
    let Some(available) = available else { return FittedColumns { widths } };
    let total = |widths: &[Option<usize>], least: bool| {
        let shown: Vec<usize> = widths
            .iter()
            .zip(columns)
            .filter_map(|(width, column)| {
                width.map(|width| if least { column.least.min(width) } else { width })
            })
            .collect();
        reserved + shown.iter().sum::<usize>() + 2 * shown.len().saturating_sub(1)
    };
    while total(&widths, true) > available {
        let next = columns
            .iter()
            .enumerate()
            .filter(|(index, column)| widths[*index].is_some() && column.drop_rank.is_some())
            .min_by_key(|(_, column)| column.drop_rank);
        match next {
            Some((index, _)) => widths[index] = None,
            None => break,
        }
    }
    let mut excess = total(&widths, false).saturating_sub(available);
    for (index, column) in columns.iter().enumerate().rev() {
        if excess == 0 {
            break;
        }
        if let Some(width) = widths[index] {
            let cut = excess.min(width.saturating_sub(column.least));
            widths[index] = Some(width - cut);
            excess -= cut;
        }
    }
    FittedColumns { widths }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_take_two_columns_and_combining_marks_none() {
        for (text, width) in [
            ("heron", 5),
            ("日本語", 6),
            ("e\u{301}", 1),
            ("🦀 crab", 7),
            ("café", 4),
            ("Ｆｕｌｌ", 8),
            ("\\u{202e}", 8),
        ] {
            assert_eq!(display_width(text), width, "{text:?}");
        }
    }

    #[test]
    fn the_width_comes_from_the_flag_then_columns_then_the_terminal() {
        let columns = |value: &'static str| move |name: &str| (name == "COLUMNS").then(|| value.into());
        let terminal_of = |width: Option<usize>| move || width;
        assert_eq!(width_from(Some(50), &columns("120"), &terminal_of(Some(90))), Some(50));
        assert_eq!(width_from(None, &columns("120"), &terminal_of(Some(90))), Some(120));
        for unusable in ["", "0", "wide", "-3"] {
            assert_eq!(
                width_from(None, &columns(unusable), &terminal_of(Some(90))),
                Some(90),
                "{unusable:?}"
            );
            assert_eq!(width_from(None, &columns(unusable), &terminal_of(None)), None, "{unusable:?}");
        }
        assert_eq!(width_from(None, &|_: &str| None, &terminal_of(None)), None, "a pipe: no limit");
    }

    fn column(natural: usize, least: usize, drop_rank: Option<u8>) -> ColumnToFit {
        ColumnToFit { natural, least, drop_rank }
    }

    #[test]
    fn columns_are_cut_before_any_is_left_out_and_left_out_lowest_rank_first() {
        let columns =
            [column(5, 5, None), column(10, 10, Some(1)), column(30, 10, Some(3)), column(8, 8, Some(2))];
        // Natural: 5 + 10 + 30 + 8 + 3 gaps of 2 = 59.
        let check = |available: Option<usize>, expected: [Option<usize>; 4]| {
            assert_eq!(fit_columns(&columns, 0, available).widths, expected, "{available:?}");
        };
        check(None, [Some(5), Some(10), Some(30), Some(8)]);
        check(Some(59), [Some(5), Some(10), Some(30), Some(8)]);
        check(Some(50), [Some(5), Some(10), Some(21), Some(8)]);
        check(Some(39), [Some(5), Some(10), Some(10), Some(8)]);
        // Too narrow for every column at its least: rank 1 goes first, and
        // the room it leaves goes back to the cut column.
        check(Some(38), [Some(5), None, Some(21), Some(8)]);
        check(Some(20), [Some(5), None, Some(13), None]);
        check(Some(3), [Some(5), None, None, None]);
        assert_eq!(fit_columns(&columns, 20, Some(59)).widths, [Some(5), Some(10), Some(10), Some(8)]);
    }
}
