//! The listing's table, the one home of its columns: `roster-list` prints
//! its rows under them, and `--watch` prints each event in the same
//! columns, after the time and the event, so that a stream of events reads
//! like the table. A column's limit cuts a longer value (an agent name) the
//! same way in both.

use std::path::Path;

use cli_support::{
    Colour, column_widths, escape_for_terminal, format_age, home_relative, paint, push_table_line,
    render_table_within,
};
use consent::SessionConsent;
use registry_core::{SessionRow, Timestamp};

/// The columns of the listing (docs/contract.md §6.2).
pub(crate) const HEADERS: [&str; 9] =
    ["PID", "HARNESS", "AGENT", "LIVENESS", "STATE", "CONSENT", "AGE", "CWD", "SESSION"];

/// The most characters each column shows: a longer value is cut, ending
/// in `…`. Every value of the columns with a limit fits it but an agent
/// name past `AGENT_COLUMN_LIMIT` (one may be 64 characters) or a harness
/// that is no known one; the directory and the session id are shown whole.
pub(crate) const LIMITS: [Option<usize>; 9] = [
    // A pid up to the largest pid_max, 4194304, and the unverified mark.
    Some(8),
    // The longest harness name, `cursor-agent`.
    Some(12),
    Some(AGENT_COLUMN_LIMIT),
    // `unknown`, under `LIVENESS`.
    Some(8),
    // `waiting: permission 99m`; a harness's own longer word is cut.
    Some(STATE_COLUMN_LIMIT),
    // `off (repo file)`.
    Some(15),
    // `9999d`: 27 years.
    Some(5),
    None,
    None,
];

/// The most characters the AGENT column shows.
const AGENT_COLUMN_LIMIT: usize = 20;

/// The most characters the STATE column shows.
const STATE_COLUMN_LIMIT: usize = 24;

/// Where the LIVENESS column is, to colour it.
const LIVENESS_COLUMN: usize = 3;

/// Where the STATE column is, to colour it.
const STATE_COLUMN: usize = 4;

/// Where `text_row` puts a row's consent label.
pub(crate) const CONSENT_COLUMN: usize = 5;

/// The mark after the pid of an owner named by hand that is not an
/// ancestor of the registering process (`session_pid_verified: false`).
pub(crate) const UNVERIFIED_MARK: &str = "?";

/// The column of the messages waiting for each session, after CONSENT:
/// shown only when a row has some, so the usual table is unchanged.
const MSGS_HEADER: &str = "MSGS";
/// Where the MSGS column goes when shown.
const MSGS_COLUMN: usize = CONSENT_COLUMN + 1;

/// The cells of a listed row: `text_row`'s, then, only when messages wait
/// for the session, their count (`render_cells` makes it a column).
pub(crate) fn listing_row(
    row: &SessionRow,
    consent: &SessionConsent,
    home: Option<&Path>,
    now: Timestamp,
) -> Vec<String> {
    let mut cells = text_row(row, consent, home, now);
    if row.messages_pending > 0 {
        cells.push(row.messages_pending.to_string());
    }
    cells
}

/// The table of the rows' cells (`listing_row`), empty without rows. The
/// MSGS column is there only when some row has messages waiting.
pub(crate) fn render_cells(rows: &[Vec<String>], colour: bool) -> String {
    if rows.is_empty() {
        return String::new();
    }
    if rows.iter().all(|cells| cells.len() == HEADERS.len()) {
        return render_table_within(&HEADERS, &LIMITS, rows, &|column, cell| {
            paint_cell(column, cell, colour)
        });
    }
    let mut headers = HEADERS.to_vec();
    headers.insert(MSGS_COLUMN, MSGS_HEADER);
    let mut limits = LIMITS.to_vec();
    // At most 64 messages wait: the header is the widest cell.
    limits.insert(MSGS_COLUMN, Some(MSGS_HEADER.len()));
    let with_counts: Vec<Vec<String>> = rows
        .iter()
        .map(|cells| {
            let mut shown = cells[..HEADERS.len()].to_vec();
            shown.insert(MSGS_COLUMN, cells.get(HEADERS.len()).cloned().unwrap_or_else(|| "-".to_owned()));
            shown
        })
        .collect();
    // Past MSGS, the columns are those of the table without it, one on;
    // MSGS itself is not painted.
    let unshifted = |column: usize| match column {
        MSGS_COLUMN => usize::MAX,
        column if column > MSGS_COLUMN => column - 1,
        column => column,
    };
    render_table_within(&headers, &limits, &with_counts, &|column, cell| {
        paint_cell(unshifted(column), cell, colour)
    })
}

/// A LIVENESS or STATE cell in its colour (a session waiting for its user
/// stands out); any other cell as it is.
fn paint_cell(column: usize, cell: &str, colour: bool) -> std::borrow::Cow<'_, str> {
    match (column, cell) {
        (LIVENESS_COLUMN, "alive") => paint(cell, Colour::Green, colour).into(),
        (LIVENESS_COLUMN, "dead") => paint(cell, Colour::Red, colour).into(),
        (LIVENESS_COLUMN, "unknown") => paint(cell, Colour::Yellow, colour).into(),
        (STATE_COLUMN, cell) if cell.starts_with("waiting") => paint(cell, Colour::Yellow, colour).into(),
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

/// The cells of one row, escaped, in the order of `HEADERS`.
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
            age,
            home_relative(Path::new(&record.cwd), home),
            record
                .session_id
                .as_deref()
                .map_or_else(|| "-".to_owned(), |id| escape_for_terminal(id).into_owned()),
        ],
        (None, problem) => vec![
            pid,
            "-".to_owned(),
            "-".to_owned(),
            liveness,
            state,
            "-".to_owned(),
            age,
            match problem {
                Some(problem) => format!(
                    "{}: {} ({})",
                    problem.kind.as_str(),
                    home_relative(&row.path, home),
                    escape_for_terminal(&problem.detail)
                ),
                None => format!("problem: {}", home_relative(&row.path, home)),
            },
            "-".to_owned(),
        ],
    }
}

/// The columns of a watch's text lines: the time and the event, then the
/// listing's. Their widths are fixed when the watch starts, since an event
/// is printed as it happens: each column with a limit is as wide as its
/// limit, so that whatever value comes later fits it as it would the
/// table, and the directory as wide as the widest one known then (at least
/// `CWD_COLUMN_WIDTH`); a longer directory shifts only the session id.
pub(crate) struct EventColumns {
    widths: Vec<usize>,
    colour: bool,
}

/// `HH:MM:SS.mmm`, as `local_clock` shows a time.
const TIME_COLUMN_WIDTH: usize = 12;
/// `message-delivered`, the longest event name.
const EVENT_COLUMN_WIDTH: usize = 17;
/// The least width of the CWD column of a watch.
const CWD_COLUMN_WIDTH: usize = 24;

impl EventColumns {
    /// The columns for a watch whose rows at the start are `rows` (their
    /// cells, `text_row`).
    pub(crate) fn new(rows: &[Vec<String>], colour: bool) -> EventColumns {
        let known = column_widths(&HEADERS, &LIMITS, rows);
        let mut widths = vec![TIME_COLUMN_WIDTH, EVENT_COLUMN_WIDTH];
        widths.extend(LIMITS.iter().zip(&known).map(|(limit, known)| match limit {
            Some(limit) => *limit,
            // The directory; the session id, last, is never padded.
            None => (*known).max(CWD_COLUMN_WIDTH),
        }));
        EventColumns { widths, colour }
    }

    /// The header line: `TIME EVENT` and the listing's headers.
    pub(crate) fn header(&self) -> String {
        let mut line = String::new();
        let headers = ["TIME", "EVENT"].into_iter().chain(HEADERS);
        push_table_line(&mut line, &self.widths, &mut headers.into_iter(), &|_, cell| cell.into());
        line
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
        let mut all = [clock, event].into_iter().chain(cells.iter().map(String::as_str));
        let colour = self.colour;
        push_table_line(&mut line, &self.widths, &mut all, &|column, cell| match column {
            0 => cell.into(),
            1 => paint(cell, event_colour, colour).into(),
            column => paint_cell(column - 2, cell, colour),
        });
        line
    }

    /// The line of an event about no row (`resync`): `clock`, the event's
    /// name and why, which runs past the columns.
    pub(crate) fn reason_line(&self, clock: &str, event: &str, event_colour: Colour, reason: &str) -> String {
        let event = paint(&format!("{event:<EVENT_COLUMN_WIDTH$}"), event_colour, self.colour);
        format!("{clock:<TIME_COLUMN_WIDTH$}  {event}  {}\n", escape_for_terminal(reason))
    }
}
