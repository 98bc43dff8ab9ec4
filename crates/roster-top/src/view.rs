//! The view's state and its drawing: the board through the filter, which
//! row is selected (followed by its session, not its place), the mode (the
//! list, the `/` filter, the `s` prompt, the `?` help), the status line;
//! what each key does; and how one frame is laid out, fitted to any pane
//! (columns dropped in a stated order) with colour or without.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row, Table};
use registry_core::Timestamp;

use crate::actions::{self, Passed};
use crate::board::{Board, Shown, Standing};
use crate::keys::Key;

/// The columns, in the order shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Pid,
    Harness,
    Agent,
    State,
    Project,
    Location,
    Consent,
    Messages,
    Host,
}

impl Column {
    const SHOWN: [Column; 9] = [
        Column::Pid,
        Column::Harness,
        Column::Agent,
        Column::State,
        Column::Project,
        Column::Location,
        Column::Consent,
        Column::Messages,
        Column::Host,
    ];

    /// Left out first when the pane is too narrow, in this order; AGENT
    /// and STATE are never left out.
    pub const DROPPED_FIRST: [Column; 7] = [
        Column::Pid,
        Column::Messages,
        Column::Harness,
        Column::Consent,
        Column::Host,
        Column::Location,
        Column::Project,
    ];

    fn header(self) -> &'static str {
        match self {
            Column::Pid => "PID",
            Column::Harness => "HARNESS",
            Column::Agent => "AGENT",
            Column::State => "STATE",
            Column::Project => "PROJECT",
            Column::Location => "LOCATION",
            Column::Consent => "CONSENT",
            Column::Messages => "MSGS",
            Column::Host => "HOST",
        }
    }

    /// The widest a column grows.
    fn limit(self) -> usize {
        match self {
            Column::Pid => 8,
            Column::Harness => 12,
            Column::Agent => 20,
            Column::State => 30,
            Column::Project => 32,
            Column::Location => 24,
            Column::Consent => 16,
            Column::Messages => 4,
            Column::Host => 20,
        }
    }

    fn cell(self, shown: &Shown, now: Timestamp) -> String {
        match self {
            Column::Pid => shown.pid.map_or_else(|| "-".to_owned(), |pid| pid.to_string()),
            Column::Harness => shown.harness.clone(),
            Column::Agent => shown.agent.clone().unwrap_or_else(|| "-".to_owned()),
            Column::State => shown.state_text(now),
            Column::Project => shown.project.clone(),
            Column::Location => shown.location.clone(),
            Column::Consent => {
                if shown.standing() == Standing::Dead {
                    "-".to_owned()
                } else {
                    shown.consent.clone()
                }
            }
            Column::Messages => {
                if shown.messages_pending == 0 {
                    "-".to_owned()
                } else {
                    shown.messages_pending.to_string()
                }
            }
            Column::Host => shown.host.clone().unwrap_or_else(|| "local".to_owned()),
        }
    }
}

/// What the keys are doing now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    List,
    /// Typing a `/` filter; Enter keeps it, Esc clears it.
    Filter,
    /// Typing a message for the session of this key.
    Send {
        key: String,
        text: String,
    },
    Help,
}

/// What a key asks of the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    Stay,
    Quit,
}

/// Everything a frame is drawn from.
pub struct View {
    pub board: Board,
    pub filter: String,
    pub mode: Mode,
    selected: Option<String>,
    status: Option<(bool, String)>,
    pub colour: bool,
    pub with_hosts: bool,
    passed: Passed,
    /// The first row shown, when the rows do not fit.
    offset: usize,
}

impl View {
    pub fn new(colour: bool, with_hosts: bool, passed: Passed) -> View {
        View {
            board: Board::default(),
            filter: String::new(),
            mode: Mode::List,
            selected: None,
            status: None,
            colour,
            with_hosts,
            passed,
            offset: 0,
        }
    }

    pub fn say(&mut self, ok: bool, text: String) {
        self.status = Some((ok, text));
    }

    /// The keys of the rows shown, in order.
    fn keys(&self) -> Vec<String> {
        self.board.ordered(&self.filter).into_iter().map(|(key, _)| key.clone()).collect()
    }

    /// The selected session's key: the one chosen while it is shown, else
    /// the first row.
    fn selected_key(&self) -> Option<String> {
        let keys = self.keys();
        match &self.selected {
            Some(key) if keys.contains(key) => Some(key.clone()),
            _ => keys.first().cloned(),
        }
    }

    fn selected_session(&self) -> Option<Shown> {
        self.selected_key().and_then(|key| self.board.get(&key).cloned())
    }

    fn move_selection(&mut self, by: isize) {
        let keys = self.keys();
        if keys.is_empty() {
            return;
        }
        let at = self.selected_key().and_then(|key| keys.iter().position(|k| *k == key)).unwrap_or(0);
        let to = (at as isize + by).clamp(0, keys.len() as isize - 1) as usize;
        self.selected = Some(keys[to].clone());
    }

    /// Tab (and `n`, which then goes there): selects the next waiting
    /// session after the selected one (the longest waiting first, round
    /// again after the last); whether there was one.
    fn next_waiting(&mut self) -> bool {
        let rows = self.board.ordered(&self.filter);
        let waiting: Vec<String> = rows
            .iter()
            .filter(|(_, shown)| shown.standing() == Standing::Waiting)
            .map(|(key, _)| (*key).clone())
            .collect();
        drop(rows);
        let Some(first) = waiting.first().cloned() else {
            self.say(false, "no session is waiting".to_owned());
            return false;
        };
        let next = match self.selected_key().and_then(|key| waiting.iter().position(|k| *k == key)) {
            Some(at) => waiting.get(at + 1).cloned().unwrap_or(first),
            None => first,
        };
        self.selected = Some(next);
        true
    }

    /// `n`: selects the next waiting session and goes there.
    fn go_to_next_waiting(&mut self) {
        if self.next_waiting() {
            self.act(actions::go_to);
        }
    }

    /// Takes one key.
    pub fn key(&mut self, key: Key) -> After {
        match self.mode.clone() {
            Mode::Help => {
                self.mode = Mode::List;
                After::Stay
            }
            Mode::Filter => {
                match key {
                    Key::Enter => self.mode = Mode::List,
                    Key::Escape => {
                        self.filter.clear();
                        self.mode = Mode::List;
                    }
                    Key::Backspace => {
                        self.filter.pop();
                    }
                    Key::Char(character) => self.filter.push(character),
                    Key::Interrupt => return After::Quit,
                    _ => {}
                }
                After::Stay
            }
            Mode::Send { key: target, mut text } => {
                match key {
                    Key::Enter => {
                        self.mode = Mode::List;
                        match self.board.get(&target).cloned() {
                            Some(shown) if !text.is_empty() => {
                                let outcome = actions::send(&shown, &text, &self.passed);
                                self.say(outcome.ok, outcome.text);
                            }
                            Some(_) => self.say(false, "nothing sent: the message was empty".to_owned()),
                            None => {
                                self.say(false, "nothing sent: the session is no longer shown".to_owned())
                            }
                        }
                    }
                    Key::Escape => {
                        self.mode = Mode::List;
                        self.say(true, "nothing sent".to_owned());
                    }
                    Key::Backspace => {
                        text.pop();
                        self.mode = Mode::Send { key: target, text };
                    }
                    Key::Char(character) => {
                        text.push(character);
                        self.mode = Mode::Send { key: target, text };
                    }
                    Key::Interrupt => return After::Quit,
                    _ => {}
                }
                After::Stay
            }
            Mode::List => self.list_key(key),
        }
    }

    fn list_key(&mut self, key: Key) -> After {
        match key {
            Key::Char('q') | Key::Escape | Key::Interrupt => return After::Quit,
            Key::Char('j') | Key::Down => self.move_selection(1),
            Key::Char('k') | Key::Up => self.move_selection(-1),
            Key::PageDown => self.move_selection(10),
            Key::PageUp => self.move_selection(-10),
            Key::Home => self.move_selection(isize::MIN / 2),
            Key::End => self.move_selection(isize::MAX / 2),
            Key::Tab => {
                self.next_waiting();
            }
            Key::Char('n') => self.go_to_next_waiting(),
            Key::Char('?') | Key::Char('h') => self.mode = Mode::Help,
            Key::Char('/') => self.mode = Mode::Filter,
            Key::Enter | Key::Char('g') => self.act(actions::go_to),
            Key::Char('a') => self.act(|shown, passed| actions::consent(shown, true, passed)),
            Key::Char('d') => self.act(|shown, passed| actions::consent(shown, false, passed)),
            Key::Char('s') => match self.selected_key() {
                Some(key) => self.mode = Mode::Send { key, text: String::new() },
                None => self.say(false, "no session to send to".to_owned()),
            },
            _ => {}
        }
        After::Stay
    }

    fn act(&mut self, action: impl FnOnce(&Shown, &Passed) -> actions::Outcome) {
        let Some(shown) = self.selected_session() else {
            self.say(false, "no session selected".to_owned());
            return;
        };
        if shown.standing() == Standing::Dead {
            self.say(false, format!("{} has ended", shown.described()));
            return;
        }
        let outcome = action(&shown, &self.passed);
        self.say(outcome.ok, outcome.text);
    }

    /// Draws one frame.
    pub fn draw(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        if area.height < 3 || area.width < 20 {
            frame.render_widget(Paragraph::new("roster-top: pane too small"), area);
            return;
        }
        let now = Timestamp::now();
        let selected = self.selected_key();
        let rows = self.board.ordered(&self.filter);
        let title = self.title(&rows);
        frame.render_widget(Paragraph::new(title), Rect { height: 1, ..area });

        let columns = self.fitted_columns(&rows, now, area.width as usize);
        let table_area = Rect { y: area.y + 1, height: area.height - 2, ..area };
        let visible = (table_area.height as usize).saturating_sub(1);
        let at = selected.as_ref().and_then(|key| rows.iter().position(|(k, _)| *k == key)).unwrap_or(0);
        if at < self.offset {
            self.offset = at;
        } else if visible > 0 && at >= self.offset + visible {
            self.offset = at + 1 - visible;
        }
        self.offset = self.offset.min(rows.len().saturating_sub(visible.max(1)));
        let header = Row::new(
            std::iter::once(Cell::from(" "))
                .chain(columns.iter().map(|(column, _)| Cell::from(column.header()))),
        )
        .style(Style::default().add_modifier(Modifier::BOLD));
        let table_rows: Vec<Row<'_>> = rows
            .iter()
            .skip(self.offset)
            .take(visible)
            .map(|(key, shown)| {
                let is_selected = selected.as_ref() == Some(*key);
                let marker = if is_selected { ">" } else { " " };
                let cells = std::iter::once(Cell::from(marker))
                    .chain(columns.iter().map(|(column, _)| self.styled_cell(*column, shown, now)));
                let mut style = Style::default();
                if is_selected {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                Row::new(cells).style(style)
            })
            .collect();
        let widths: Vec<Constraint> = std::iter::once(Constraint::Length(1))
            .chain(columns.iter().map(|(_, width)| Constraint::Length(*width as u16)))
            .collect();
        let table = Table::new(table_rows, widths).header(header).column_spacing(1);
        frame.render_widget(table, table_area);
        if rows.is_empty() {
            let empty = if self.filter.is_empty() {
                "no sessions".to_owned()
            } else {
                format!("no session matches /{}", self.filter)
            };
            frame.render_widget(Paragraph::new(empty), Rect { y: area.y + 2, height: 1, ..area });
        }
        drop(rows);
        let bottom = Rect { y: area.y + area.height - 1, height: 1, ..area };
        frame.render_widget(Paragraph::new(self.bottom_line()), bottom);
        if self.mode == Mode::Help {
            self.draw_help(frame, area);
        }
    }

    /// `roster-top · 5 sessions: 1 waiting · 3 working · 1 idle`, and the
    /// filter and lost hosts.
    fn title(&self, rows: &[(&String, &Shown)]) -> Line<'static> {
        let count =
            |standing: Standing| rows.iter().filter(|(_, shown)| shown.standing() == standing).count();
        let mut parts = vec![format!("{} sessions", rows.len())];
        for (standing, word) in [
            (Standing::Waiting, "waiting"),
            (Standing::Working, "working"),
            (Standing::Idle, "idle"),
            (Standing::Dead, "ended"),
        ] {
            let number = count(standing);
            if number > 0 {
                parts.push(format!("{number} {word}"));
            }
        }
        let mut spans = vec![Span::styled("roster-top ", Style::default().add_modifier(Modifier::BOLD))];
        spans.push(Span::raw(parts.join(" · ")));
        if !self.filter.is_empty() {
            spans.push(Span::raw(format!("  filter: {}", self.filter)));
        }
        let lost = self.board.lost_hosts();
        if !lost.is_empty() {
            let text = format!("  host lost: {}", lost.iter().cloned().collect::<Vec<_>>().join(", "));
            spans.push(Span::styled(text, self.paint(Color::Magenta)));
        }
        Line::from(spans)
    }

    fn bottom_line(&self) -> Line<'static> {
        match &self.mode {
            Mode::Filter => Line::from(format!("/{}", self.filter)),
            Mode::Send { key, text } => {
                let to = self.board.get(key).map(Shown::described).unwrap_or_default();
                Line::from(format!("send to {to}: {text}"))
            }
            _ => match &self.status {
                Some((ok, text)) => Line::from(Span::styled(
                    text.clone(),
                    self.paint(if *ok { Color::Green } else { Color::Red }),
                )),
                None => Line::from(Span::styled(
                    "enter go · n next waiting · s send · a/d arm/disarm · / filter · ? help · q quit",
                    Style::default().add_modifier(Modifier::DIM),
                )),
            },
        }
    }

    fn draw_help(&self, frame: &mut Frame<'_>, area: Rect) {
        let lines: Vec<Line<'_>> = HELP.iter().map(|line| Line::from(*line)).collect();
        let width =
            (HELP.iter().map(|line| line.len()).max().unwrap_or(0) + 4).min(area.width as usize) as u16;
        let height = (HELP.len() as u16 + 2).min(area.height);
        let popup = Rect {
            x: area.x + (area.width - width) / 2,
            y: area.y + (area.height - height) / 2,
            width,
            height,
        };
        frame.render_widget(Clear, popup);
        frame.render_widget(
            Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" keys ")),
            popup,
        );
    }

    fn paint(&self, colour: Color) -> Style {
        if self.colour { Style::default().fg(colour) } else { Style::default() }
    }

    fn styled_cell(&self, column: Column, shown: &Shown, now: Timestamp) -> Cell<'static> {
        let text = column.cell(shown, now);
        let style = match (column, shown.standing()) {
            (_, Standing::Dead) => self.paint(Color::Red).add_modifier(Modifier::DIM),
            (_, Standing::HostLost) => self.paint(Color::Magenta),
            (Column::State, Standing::Waiting) => self.paint(Color::Yellow).add_modifier(Modifier::BOLD),
            (Column::State, Standing::Working) => self.paint(Color::Green),
            _ => Style::default(),
        };
        Cell::from(text).style(style)
    }

    /// The columns that fit `width`, each with its width: as wide as its
    /// widest cell (up to its limit), leaving columns out in
    /// `Column::DROPPED_FIRST`'s order until the rest fit.
    fn fitted_columns(
        &self,
        rows: &[(&String, &Shown)],
        now: Timestamp,
        width: usize,
    ) -> Vec<(Column, usize)> {
        let mut columns: Vec<(Column, usize)> = Column::SHOWN
            .into_iter()
            .filter(|column| *column != Column::Host || self.with_hosts)
            .map(|column| {
                let widest = rows
                    .iter()
                    .map(|(_, shown)| cli_support::display_width(&column.cell(shown, now)))
                    .max()
                    .unwrap_or(0);
                (column, widest.max(column.header().len()).min(column.limit()))
            })
            .collect();
        // The marker column and a space before each column.
        let total =
            |columns: &[(Column, usize)]| 1 + columns.iter().map(|(_, width)| width + 1).sum::<usize>();
        for dropped in Column::DROPPED_FIRST {
            if total(&columns) <= width {
                break;
            }
            columns.retain(|(column, _)| *column != dropped);
        }
        columns
    }
}

/// The `?` help.
const HELP: &[&str] = &[
    "enter, g   go to the session (roster-focus)",
    "n          go to the next waiting session (roster-focus)",
    "tab        select the next waiting session",
    "j k ↑ ↓    select another session",
    "s          send the session a message (roster-send)",
    "a          arm: accept messages (roster-consent arm)",
    "d          disarm: refuse messages (roster-consent disarm)",
    "/          filter by agent, harness, state, directory",
    "?          this help (any key closes it)",
    "q, esc     quit",
];
