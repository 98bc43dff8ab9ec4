//! The listing's table, the one home of its columns: `roster-list` prints
//! its rows under them, and `--watch` prints each event in the same
//! columns, after the time and the event, so that a stream of events reads
//! like the table. A column's limit cuts a longer value (an agent name) the
//! same way in both. Both fit the width the output may take (`--width`,
//! `COLUMNS`, the terminal's): long cells are cut, marked `…`, and when
//! that is not enough the least needed columns are left out (and said so);
//! `--columns` chooses the columns, `--wide` shows every cell whole. Session
//! ids are shortened to the shortest prefix that tells the rows apart.

use std::path::Path;

use cli_support::{
    BadInput, Colour, ColumnToFit, display_width, escape_for_terminal, escaped_prefix, fit_columns,
    format_age, home_relative, paint, push_table_line,
};
use consent::SessionConsent;
use registry_core::{SessionRow, Timestamp};

/// The columns of the listing (docs/contract.md §6.2), in the order
/// `text_row` gives their cells and the table shows them by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Column {
    Pid,
    Harness,
    Agent,
    Liveness,
    State,
    Consent,
    Msgs,
    Location,
    Age,
    Cwd,
    Session,
    Reason,
}

/// Every column, in the order of a row's cells.
pub(crate) const COLUMNS: [Column; 12] = [
    Column::Pid,
    Column::Harness,
    Column::Agent,
    Column::Liveness,
    Column::State,
    Column::Consent,
    Column::Msgs,
    Column::Location,
    Column::Age,
    Column::Cwd,
    Column::Session,
    Column::Reason,
];

impl Column {
    pub(crate) fn header(self) -> &'static str {
        match self {
            Column::Pid => "PID",
            Column::Harness => "HARNESS",
            Column::Agent => "AGENT",
            Column::Liveness => "LIVENESS",
            Column::State => "STATE",
            Column::Consent => "CONSENT",
            Column::Msgs => "MSGS",
            Column::Location => "LOCATION",
            Column::Age => "AGE",
            Column::Cwd => "CWD",
            Column::Session => "SESSION",
            Column::Reason => "REASON",
        }
    }

    /// Its name for `--columns`: the header in lower case.
    pub(crate) fn name(self) -> String {
        self.header().to_ascii_lowercase()
    }

    /// Where its cell is in a row's cells (`text_row`).
    fn index(self) -> usize {
        COLUMNS.iter().position(|column| *column == self).unwrap_or(0)
    }

    /// The most characters it shows: a longer value is cut, ending in `…`.
    /// Every value of the columns with a limit fits it but an agent name
    /// past `AGENT_COLUMN_LIMIT` (one may be 64 characters) or a harness
    /// that is no known one; the directory, the session id and the reason
    /// are cut only to fit the width.
    const fn limit(self) -> Option<usize> {
        match self {
            // A pid up to the largest pid_max, 4194304, and the unverified mark.
            Column::Pid => Some(8),
            // The longest harness name, `cursor-agent`.
            Column::Harness => Some(12),
            Column::Agent => Some(AGENT_COLUMN_LIMIT),
            // `unknown`, under `LIVENESS`.
            Column::Liveness => Some(8),
            // `waiting: permission 99m`; a harness's own longer word is cut.
            Column::State => Some(STATE_COLUMN_LIMIT),
            // `off (repo file)`.
            Column::Consent => Some(15),
            // At most 64 messages wait: the header is the widest cell.
            Column::Msgs => Some(4),
            // `9999d`: 27 years.
            Column::Age => Some(5),
            Column::Cwd | Column::Session | Column::Reason | Column::Location => None,
        }
    }

    /// The least it is cut to before columns are left out to fit a width;
    /// `None` for a column never cut (its cells would read as others).
    fn least_width(self) -> Option<usize> {
        match self {
            Column::Agent => Some(8),
            Column::State => Some(10),
            // Enough for `malformed: 31005.json` or the end of a path's start.
            Column::Cwd => Some(16),
            Column::Reason => Some(12),
            // `tmux %12 (stale)`, cut further only past it.
            Column::Location => Some(16),
            _ => None,
        }
    }

    /// How soon it is left out when the cut columns still do not fit:
    /// lowest first. The pid, which names the session, never is.
    fn drop_rank(self) -> Option<u8> {
        match self {
            Column::Age => Some(0),
            Column::Location => Some(1),
            Column::Harness => Some(2),
            Column::Consent => Some(3),
            Column::Msgs => Some(4),
            Column::Session => Some(5),
            Column::State => Some(6),
            Column::Reason => Some(7),
            Column::Agent => Some(8),
            Column::Cwd => Some(9),
            Column::Liveness => Some(10),
            Column::Pid => None,
        }
    }
}

/// The classic nine columns' headers and limits, for the many-host view
/// (`hosts/`), whose rows come as JSON from each host.
pub(crate) const HEADERS: [&str; 9] =
    ["PID", "HARNESS", "AGENT", "LIVENESS", "STATE", "CONSENT", "AGE", "CWD", "SESSION"];
pub(crate) const LIMITS: [Option<usize>; 9] = [
    Column::Pid.limit(),
    Column::Harness.limit(),
    Column::Agent.limit(),
    Column::Liveness.limit(),
    Column::State.limit(),
    Column::Consent.limit(),
    Column::Age.limit(),
    Column::Cwd.limit(),
    Column::Session.limit(),
];

/// The most characters the AGENT column shows.
const AGENT_COLUMN_LIMIT: usize = 20;

/// The most characters the STATE column shows.
const STATE_COLUMN_LIMIT: usize = 24;

/// Where `text_row` puts a row's consent label.
pub(crate) const CONSENT_COLUMN: usize = 5;

/// The mark after the pid of an owner named by hand that is not an
/// ancestor of the registering process (`session_pid_verified: false`).
pub(crate) const UNVERIFIED_MARK: &str = "?";

/// The fewest characters a shortened session id keeps.
const SESSION_ID_LEAST: usize = 8;

/// How the table is to be laid out, from the flags: which columns
/// (`--columns`, else the default ones), whether cells are shown whole
/// (`--wide`), and how wide the output may be (`None`: no limit).
#[derive(Clone, Debug, Default)]
pub(crate) struct TableOptions {
    pub(crate) chosen: Option<Vec<Column>>,
    pub(crate) wide: bool,
    pub(crate) width: Option<usize>,
}

impl TableOptions {
    /// The options `--columns LIST`, `--wide` and `--width N` give, with
    /// `COLUMNS` and the terminal's width where `--width` is not given.
    pub(crate) fn from_flags(
        columns: Option<&str>,
        wide: bool,
        width: Option<usize>,
    ) -> Result<TableOptions, BadInput> {
        let chosen = columns.map(parse_columns).transpose()?;
        let width = if wide { None } else { cli_support::output_width(width, &cli_support::process_env_os) };
        Ok(TableOptions { chosen, wide, width })
    }

    /// The columns to lay out for `rows`: those chosen; by default every
    /// one but MSGS, LOCATION and REASON, which are there only when a row
    /// has messages waiting, a location or is a problem entry (`with_reason`: always,
    /// as for a watch, whose later events may be).
    fn candidates(&self, rows: &[Vec<String>], with_reason: bool) -> Vec<Column> {
        if let Some(chosen) = &self.chosen {
            return chosen.clone();
        }
        let any = |column: Column, absent: &str| rows.iter().any(|cells| cells[column.index()] != absent);
        COLUMNS
            .into_iter()
            .filter(|column| match column {
                Column::Msgs => any(Column::Msgs, "-"),
                Column::Location => any(Column::Location, "-"),
                Column::Reason => with_reason || any(Column::Reason, ""),
                _ => true,
            })
            .collect()
    }
}

/// The columns `--columns` names (`pid,agent,cwd`, in any case), in the
/// order given; an unknown name is bad input naming the valid ones.
fn parse_columns(list: &str) -> Result<Vec<Column>, BadInput> {
    let valid = || COLUMNS.iter().map(|column| column.name()).collect::<Vec<_>>().join(", ");
    let mut chosen = Vec::new();
    for name in list.split(',').map(str::trim) {
        let column = COLUMNS.into_iter().find(|column| column.name().eq_ignore_ascii_case(name));
        match column {
            Some(column) if !chosen.contains(&column) => chosen.push(column),
            Some(_) => {}
            None => {
                return Err(BadInput(format!(
                    "--columns {}: no column {:?}; the columns are {}",
                    escape_for_terminal(list),
                    escape_for_terminal(name),
                    valid()
                )));
            }
        }
    }
    Ok(chosen)
}

/// Which columns are shown, how wide each is, and which were left out to
/// fit the width.
#[derive(Clone, Debug)]
pub(crate) struct TableLayout {
    shown: Vec<Column>,
    widths: Vec<usize>,
    dropped: Vec<Column>,
    width: Option<usize>,
}

impl TableLayout {
    /// The layout of a listing of `rows` (`text_row`'s cells, session ids
    /// already shortened).
    pub(crate) fn for_listing(options: &TableOptions, rows: &[Vec<String>]) -> TableLayout {
        let candidates = options.candidates(rows, false);
        let natural = widest_cells(&candidates, rows)
            .into_iter()
            .zip(&candidates)
            .map(|(widest, column)| column.limit().map_or(widest, |limit| widest.min(limit)))
            .collect();
        TableLayout::fit(candidates, natural, 0, options.width)
    }

    /// Fits `candidates`, whose widths uncut are `natural`, within `width`
    /// with `reserved` columns taken before them; the last column shown
    /// gets what room is left (all of it without a width).
    fn fit(
        candidates: Vec<Column>,
        natural: Vec<usize>,
        reserved: usize,
        width: Option<usize>,
    ) -> TableLayout {
        let to_fit: Vec<ColumnToFit> = candidates
            .iter()
            .zip(&natural)
            .map(|(column, natural)| ColumnToFit {
                natural: *natural,
                least: column.least_width().map_or(*natural, |least| least.min(*natural)),
                drop_rank: column.drop_rank(),
            })
            .collect();
        let fitted = fit_columns(&to_fit, reserved, width);
        let mut shown = Vec::new();
        let mut widths = Vec::new();
        let mut dropped = Vec::new();
        for (column, fitted) in candidates.into_iter().zip(fitted.widths) {
            match fitted {
                Some(fitted) => {
                    shown.push(column);
                    widths.push(fitted);
                }
                None => dropped.push(column),
            }
        }
        if let Some(last) = widths.len().checked_sub(1) {
            let before: usize = widths[..last].iter().map(|width| width + 2).sum::<usize>() + reserved;
            widths[last] = match width {
                Some(width) => widths[last].max(width.saturating_sub(before)),
                None => usize::MAX,
            };
        }
        TableLayout { shown, widths, dropped, width }
    }

    /// The header line and one line per row, each cell cut to its column.
    pub(crate) fn render(&self, rows: &[Vec<String>], colour: bool) -> String {
        if rows.is_empty() || self.shown.is_empty() {
            return String::new();
        }
        let mut out = String::new();
        let mut headers = self.shown.iter().map(|column| column.header());
        push_table_line(&mut out, &self.widths, &mut headers, &|_, header| header.into());
        for cells in rows {
            let mut shown = self.shown.iter().map(|column| cells[column.index()].as_str());
            push_table_line(&mut out, &self.widths, &mut shown, &|index, cell| {
                paint_cell(self.shown[index], cell, colour)
            });
        }
        out
    }

    /// What to tell people of columns left out, when some were: which, to
    /// fit how wide, and how to see them.
    pub(crate) fn dropped_note(&self) -> Option<String> {
        let width = self.width?;
        if self.dropped.is_empty() {
            return None;
        }
        let names: Vec<&str> = self.dropped.iter().map(|column| column.header()).collect();
        Some(format!(
            "column{} {} left out to fit {width} columns: --columns chooses the columns, --wide shows them all",
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        ))
    }
}

/// The table of a listing's rows (`text_row`'s cells; their session ids
/// are shortened here unless `--wide`), and what to say of the columns left
/// out to fit, if any were.
pub(crate) fn render_listing(
    rows: &mut [Vec<String>],
    options: &TableOptions,
    colour: bool,
) -> (String, Option<String>) {
    if !options.wide {
        shorten_session_ids(rows);
    }
    let layout = TableLayout::for_listing(options, rows);
    (layout.render(rows, colour), layout.dropped_note())
}

/// The width of each of `columns` uncut: its header's or its widest
/// cell's among `rows`, in terminal columns.
fn widest_cells(columns: &[Column], rows: &[Vec<String>]) -> Vec<usize> {
    columns
        .iter()
        .map(|column| {
            let widest = rows.iter().map(|cells| display_width(&cells[column.index()])).max().unwrap_or(0);
            widest.max(display_width(column.header()))
        })
        .collect()
}

/// Shortens each row's session id, in place, to the shortest prefix of at
/// least `SESSION_ID_LEAST` characters that tells the rows' ids apart,
/// followed by `…`; an id no longer than that stays whole. Returns the
/// prefix length used.
pub(crate) fn shorten_session_ids(rows: &mut [Vec<String>]) -> usize {
    let index = Column::Session.index();
    let mut ids: Vec<&str> = rows.iter().map(|cells| cells[index].as_str()).filter(|id| *id != "-").collect();
    ids.sort_unstable();
    ids.dedup();
    let longest = ids.iter().map(|id| id.chars().count()).max().unwrap_or(0);
    let mut length = SESSION_ID_LEAST;
    while length < longest {
        let mut shortened: Vec<String> = ids.iter().map(|id| shorten_session_id(id, length)).collect();
        shortened.sort_unstable();
        shortened.dedup();
        if shortened.len() == ids.len() {
            break;
        }
        length += 1;
    }
    for cells in rows.iter_mut() {
        cells[index] = shorten_session_id(&cells[index], length);
    }
    length
}

/// `id` cut to `length` characters and marked `…`, or whole when no longer.
fn shorten_session_id(id: &str, length: usize) -> String {
    if id.chars().count() <= length {
        return id.to_owned();
    }
    format!("{}…", escaped_prefix(id, length))
}

/// A LIVENESS or STATE cell in its colour (a session waiting for its user
/// stands out); any other cell as it is.
fn paint_cell(column: Column, cell: &str, colour: bool) -> std::borrow::Cow<'_, str> {
    match (column, cell) {
        (Column::Liveness, "alive") => paint(cell, Colour::Green, colour).into(),
        (Column::Liveness, "dead") => paint(cell, Colour::Red, colour).into(),
        (Column::Liveness, "unknown") => paint(cell, Colour::Yellow, colour).into(),
        (Column::State, cell) if cell.starts_with("waiting") => paint(cell, Colour::Yellow, colour).into(),
        _ => cell.into(),
    }
}

/// The STATE cell of a row: the activity and for how long (`working 3m`,
/// `idle 20s`, `waiting: permission 5s`), or `-` when no event has said
/// (or the owner is not alive).
fn state_cell(row: &SessionRow, now: Timestamp) -> String {
    let Some(state) = row.shown_state() else { return "-".to_owned() };
    let age = format_age(state.since.age(now));
    match &state.waiting_for {
        Some(what) => format!("{}: {} {age}", state.activity.as_str(), escape_for_terminal(what)),
        None => format!("{} {age}", state.activity.as_str()),
    }
}

/// The cells of one row, escaped, one per column of `COLUMNS`: MSGS is the
/// count of messages waiting (`-` for none); a problem entry shows its
/// kind and file name under CWD and why it is not believed under REASON, empty
/// for every other row.
pub(crate) fn text_row(
    row: &SessionRow,
    consent: &SessionConsent,
    home: Option<&Path>,
    now: Timestamp,
) -> Vec<String> {
    let unverified = row.record.as_ref().is_some_and(|record| !record.session_pid_verified);
    let pid = match row.pid {
        Some(pid) if unverified => format!("{pid}{UNVERIFIED_MARK}"),
        Some(pid) => pid.to_string(),
        None => "?".to_owned(),
    };
    let age = format_age(row.registered_at.age(now));
    let liveness = row.liveness().as_str().to_owned();
    let state = state_cell(row, now);
    let messages = if row.messages_pending > 0 { row.messages_pending.to_string() } else { "-".to_owned() };
    match (&row.record, &row.problem) {
        (Some(record), _) => vec![
            pid,
            if record.harness.is_empty() {
                "-".to_owned()
            } else {
                escape_for_terminal(&record.harness).into_owned()
            },
            record
                .agent
                .as_deref()
                .map_or_else(|| "-".to_owned(), |agent| escape_for_terminal(agent).into_owned()),
            liveness,
            state,
            consent.label.as_str().to_owned(),
            messages,
            escape_for_terminal(&crate::locations::location_cell(row)).into_owned(),
            age,
            home_relative(Path::new(&record.cwd), home),
            record
                .session_id
                .as_deref()
                .map_or_else(|| "-".to_owned(), |id| escape_for_terminal(id).into_owned()),
            String::new(),
        ],
        (None, problem) => vec![
            pid,
            "-".to_owned(),
            "-".to_owned(),
            liveness,
            state,
            "-".to_owned(),
            messages,
            "-".to_owned(),
            age,
            // The entry's name, not its whole path (JSON has that): a
            // problem row never widens the directory column much.
            format!(
                "{}: {}",
                problem.as_ref().map_or("problem", |problem| problem.kind.as_str()),
                home_relative(Path::new(row.path.file_name().unwrap_or(row.path.as_os_str())), None)
            ),
            "-".to_owned(),
            problem
                .as_ref()
                .map(|problem| escape_for_terminal(&problem.detail).into_owned())
                .unwrap_or_default(),
        ],
    }
}

/// The columns of a watch's text lines: the time and the event, then the
/// listing's. Their widths are fixed when the watch starts, since an event
/// is printed as it happens: each column with a limit is as wide as its
/// limit, so that whatever value comes later fits it as it would the
/// table, the directory as wide as the widest one known then (at least
/// `CWD_COLUMN_WIDTH`), and the session id as its shortened form (whole
/// with `--wide`); all fitted to the output's width as the table is. The
/// REASON column, last, says why a problem entry is not believed.
pub(crate) struct EventColumns {
    layout: TableLayout,
    /// The length session ids are shortened to; `None`: shown whole.
    session_id_length: Option<usize>,
    colour: bool,
}

/// `HH:MM:SS.mmm`, as `local_clock` shows a time.
const TIME_COLUMN_WIDTH: usize = 12;
/// `message-delivered`, the longest event name.
const EVENT_COLUMN_WIDTH: usize = 17;
/// The least width of the CWD column of a watch.
const CWD_COLUMN_WIDTH: usize = 24;
/// The width a REASON is given before fitting: the rest of a line.
const REASON_COLUMN_WIDTH: usize = 40;
/// What the time and the event take before the listing's columns.
const EVENT_PREFIX_WIDTH: usize = TIME_COLUMN_WIDTH + 2 + EVENT_COLUMN_WIDTH + 2;

impl EventColumns {
    /// The columns for a watch whose rows at the start are `rows` (their
    /// cells, `text_row`).
    pub(crate) fn new(rows: &[Vec<String>], options: &TableOptions, colour: bool) -> EventColumns {
        let mut rows = rows.to_vec();
        let session_id_length = (!options.wide).then(|| shorten_session_ids(&mut rows));
        let candidates = options.candidates(&rows, true);
        let known = widest_cells(&candidates, &rows);
        let natural = candidates
            .iter()
            .zip(&known)
            .map(|(column, known)| match (column, column.limit()) {
                (_, Some(limit)) => limit.max(column.header().len()),
                (Column::Cwd, None) => (*known).max(CWD_COLUMN_WIDTH),
                (Column::Session, None) => match session_id_length {
                    // The prefix and its mark.
                    Some(length) => (*known).max(length + 1),
                    None => *known,
                },
                (_, None) => (*known).max(REASON_COLUMN_WIDTH),
            })
            .collect();
        let layout = TableLayout::fit(candidates, natural, EVENT_PREFIX_WIDTH, options.width);
        EventColumns { layout, session_id_length, colour }
    }

    /// What to tell people of columns left out to fit the width, if any.
    pub(crate) fn dropped_note(&self) -> Option<String> {
        self.layout.dropped_note()
    }

    /// The header line: `TIME EVENT` and the listing's headers.
    pub(crate) fn header(&self) -> String {
        let mut line = String::new();
        let headers =
            ["TIME", "EVENT"].into_iter().chain(self.layout.shown.iter().map(|column| column.header()));
        push_table_line(&mut line, &self.widths(), &mut headers.into_iter(), &|_, cell| cell.into());
        line
    }

    fn widths(&self) -> Vec<usize> {
        [TIME_COLUMN_WIDTH, EVENT_COLUMN_WIDTH]
            .into_iter()
            .chain(self.layout.widths.iter().copied())
            .collect()
    }

    /// The line of an event about a row: `clock`, the event's name in
    /// `event_colour`, and the row's cells (`text_row`).
    pub(crate) fn row_line(
        &self,
        clock: &str,
        event: &str,
        event_colour: Colour,
        cells: &[String],
    ) -> String {
        let mut line = String::new();
        let session = Column::Session.index();
        let shortened = match self.session_id_length {
            Some(length) => shorten_session_id(&cells[session], length),
            None => cells[session].clone(),
        };
        let shown: Vec<&str> = self
            .layout
            .shown
            .iter()
            .map(|column| match column {
                Column::Session => shortened.as_str(),
                column => cells[column.index()].as_str(),
            })
            .collect();
        let mut widths = self.widths();
        if self.layout.width.is_none() {
            // No width to keep to: a directory, id or reason longer than
            // any at the start is shown whole, shifting what follows.
            for ((width, column), cell) in widths[2..].iter_mut().zip(&self.layout.shown).zip(&shown) {
                if column.limit().is_none() {
                    *width = (*width).max(display_width(cell));
                }
            }
        }
        let mut all = [clock, event].into_iter().chain(shown.iter().copied());
        let colour = self.colour;
        push_table_line(&mut line, &widths, &mut all, &|index, cell| match index {
            0 => cell.into(),
            1 => paint(cell, event_colour, colour).into(),
            index => paint_cell(self.layout.shown[index - 2], cell, colour),
        });
        line
    }

    /// The line of an event about no row (`resync`): `clock`, the event's
    /// name and why, cut to the width like any line.
    pub(crate) fn reason_line(&self, clock: &str, event: &str, event_colour: Colour, reason: &str) -> String {
        let reason = escape_for_terminal(reason);
        let room = self.layout.width.map_or(usize::MAX, |width| width.saturating_sub(EVENT_PREFIX_WIDTH));
        let reason = cli_support::fit_to_width(&reason, room);
        let event = paint(&format!("{event:<EVENT_COLUMN_WIDTH$}"), event_colour, self.colour);
        format!("{clock:<TIME_COLUMN_WIDTH$}  {event}  {reason}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_with_ids(ids: &[&str]) -> Vec<Vec<String>> {
        ids.iter()
            .map(|id| {
                let mut cells = vec![String::new(); COLUMNS.len()];
                cells[Column::Session.index()] = (*id).to_owned();
                cells
            })
            .collect()
    }

    #[test]
    fn session_ids_are_cut_to_the_shortest_prefix_that_tells_them_apart() {
        let check = |ids: &[&str], expected: &[&str]| {
            let mut rows = rows_with_ids(ids);
            shorten_session_ids(&mut rows);
            let shown: Vec<&str> = rows.iter().map(|cells| cells[Column::Session.index()].as_str()).collect();
            assert_eq!(shown, expected, "{ids:?}");
        };
        check(
            &["0191e1c2-aaaa-bbbb-cccc-0123456789ab", "7c660e54-2e19-4577-b46a-16f46484eaf4", "-", "short"],
            &["0191e1c2…", "7c660e54…", "-", "short"],
        );
        check(
            &["0191e1c2-aaaa-1", "0191e1c2-aaab-2", "0191e1c2-aaaa-1"],
            &["0191e1c2-aaaa…", "0191e1c2-aaab…", "0191e1c2-aaaa…"],
        );
        // A prefix never ends inside an escape.
        check(
            &["abcdef\\u{202e}xyz-1", "abcdef\\u{202e}xyz-2"],
            &["abcdef\\u{202e}xyz-1", "abcdef\\u{202e}xyz-2"],
        );
        check(&["abcdefg\\u{202e}tail", "zz"], &["abcdefg…", "zz"]);
    }

    #[test]
    fn columns_are_chosen_by_name_and_an_unknown_one_names_the_valid_ones() {
        assert_eq!(parse_columns("pid,CWD, agent,pid").unwrap(), [Column::Pid, Column::Cwd, Column::Agent]);
        let refused = parse_columns("pid,sesion").unwrap_err().0;
        assert!(refused.contains("no column \"sesion\""), "{refused}");
        assert!(refused.contains(
            "pid, harness, agent, liveness, state, consent, msgs, location, age, cwd, session, reason"
        ));
    }
}
