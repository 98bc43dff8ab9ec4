//! What the view shows, kept from the watch's events: one `Shown` per
//! session (this machine's and every host's), in the order people need
//! them (waiting first, longest waiting on top), dead ones marked and then
//! dropped, a lost host's sessions marked lost (never dead). Knows nothing
//! of the terminal: the screen draws what it says.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use cli_support::{escape_for_terminal, format_age};
use registry_core::Timestamp;
use serde_json::{Map, Value};
use session_events::{Event, EventKind, EventRow};

use crate::project::project_of;

/// How long a session that ended stays on the board, marked dead.
pub const DEAD_SHOWN_FOR: Duration = Duration::from_secs(10);

/// Where a session stands, in the order the board sorts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Standing {
    Waiting,
    Working,
    Idle,
    Unknown,
    /// Its host stopped answering: what it last was is kept, marked.
    HostLost,
    /// Its owner ended (never shown alive again).
    Dead,
}

/// One session as the board shows it.
#[derive(Clone, Debug)]
pub struct Shown {
    /// The host it runs on, under `--host` (`None`: this machine).
    pub host: Option<String>,
    pub pid: Option<u64>,
    pub harness: String,
    pub agent: Option<String>,
    /// `working`, `idle`, `waiting` or `unknown`, as the row says.
    pub state: String,
    pub waiting_for: Option<String>,
    pub state_since: Option<Timestamp>,
    pub cwd: Option<String>,
    pub project: String,
    pub location: String,
    pub consent: String,
    pub messages_pending: u64,
    /// When the board learned it ended (`Died`, `Removed`).
    pub dead_since: Option<Instant>,
    pub host_lost: bool,
}

impl Shown {
    /// The row of an event: its §6.2 JSON (this machine's or a host's)
    /// and, for this machine's, the consent label the table shows.
    fn of_row(json: &Map<String, Value>, host: Option<&str>, consent_label: Option<&str>) -> Shown {
        let text = |key: &str| {
            json.get(key).and_then(Value::as_str).map(|text| escape_for_terminal(text).into_owned())
        };
        let cwd = json.get("cwd").and_then(Value::as_str);
        // A host's directories are not here to read: the last part only.
        let project = match (cwd, host) {
            (Some(cwd), None) => project_of(Path::new(cwd)),
            (Some(cwd), Some(_)) => last_part(cwd),
            (None, _) => "-".to_owned(),
        };
        let location = match json.get("location").and_then(Value::as_object) {
            Some(location) => {
                let shown = location.get("shown").and_then(Value::as_str).unwrap_or("?");
                let shown = escape_for_terminal(shown);
                match location.get("status").and_then(Value::as_str) {
                    Some("current") | None => shown.into_owned(),
                    Some(status) => format!("{shown} ({})", escape_for_terminal(status)),
                }
            }
            None => "-".to_owned(),
        };
        let should_arm = json.get("should_arm").and_then(Value::as_bool).unwrap_or(false);
        let consent = match consent_label {
            Some(label) => label.to_owned(),
            None => remote_consent_label(json.get("consent").and_then(Value::as_str), should_arm),
        };
        Shown {
            host: host.map(str::to_owned),
            pid: json.get("session_pid").and_then(Value::as_u64),
            harness: text("harness").filter(|harness| !harness.is_empty()).unwrap_or_else(|| "-".to_owned()),
            agent: text("agent"),
            state: text("state").unwrap_or_else(|| "unknown".to_owned()),
            waiting_for: text("waiting_for"),
            state_since: json.get("state_since").and_then(Value::as_str).and_then(Timestamp::parse),
            cwd: text("cwd"),
            project,
            location,
            consent,
            messages_pending: json.get("messages_pending").and_then(Value::as_u64).unwrap_or(0),
            dead_since: None,
            host_lost: false,
        }
    }

    pub fn standing(&self) -> Standing {
        if self.dead_since.is_some() {
            return Standing::Dead;
        }
        if self.host_lost {
            return Standing::HostLost;
        }
        match self.state.as_str() {
            "waiting" => Standing::Waiting,
            "working" => Standing::Working,
            "idle" => Standing::Idle,
            _ => Standing::Unknown,
        }
    }

    /// `waiting: permission 2m`, `working 5s`, `idle 3h`, `-`; `dead`,
    /// `host lost (was working)`.
    pub fn state_text(&self, now: Timestamp) -> String {
        let age =
            self.state_since.map(|since| format!(" {}", format_age(since.age(now)))).unwrap_or_default();
        let state = match (&self.state[..], &self.waiting_for) {
            ("unknown", _) => "-".to_owned(),
            ("waiting", Some(what)) => format!("waiting: {what}{age}"),
            (state, _) => format!("{state}{age}"),
        };
        match self.standing() {
            Standing::Dead => "dead".to_owned(),
            Standing::HostLost => format!("host lost (was {state})"),
            _ => state,
        }
    }

    /// `pid 5854 (wren, claude-code)`, for the status line.
    pub fn described(&self) -> String {
        let pid = self.pid.map_or_else(|| "?".to_owned(), |pid| pid.to_string());
        let host = self.host.as_deref().map(|host| format!(" on {host}")).unwrap_or_default();
        match &self.agent {
            Some(agent) => format!("pid {pid} ({agent}, {}){host}", self.harness),
            None => format!("pid {pid} ({}){host}", self.harness),
        }
    }

    /// Whether the `/` filter's words all appear in its agent, harness,
    /// state or directory.
    fn matches(&self, filter: &str) -> bool {
        let haystack = format!(
            "{} {} {} {} {}",
            self.agent.as_deref().unwrap_or(""),
            self.harness,
            self.state_text(Timestamp::now()),
            self.cwd.as_deref().unwrap_or(""),
            self.project
        )
        .to_lowercase();
        filter.to_lowercase().split_whitespace().all(|word| haystack.contains(word))
    }

    /// When the age shown next changes its text: a second, minute, hour
    /// or day boundary of the state's age.
    fn next_age_change(&self, now: Timestamp) -> Option<Duration> {
        if matches!(self.standing(), Standing::Dead | Standing::HostLost | Standing::Unknown) {
            return None;
        }
        let age = self.state_since?.age(now);
        let seconds = age.as_secs();
        let unit = match seconds {
            0..60 => 1,
            60..3600 => 60,
            3600..86400 => 3600,
            _ => 86400,
        };
        let next = Duration::from_secs((seconds / unit + 1) * unit);
        Some(next.saturating_sub(age))
    }
}

/// The consent label of a host's row, from its JSON (the table's label
/// is not in it): `armed`, `off (disarmed)`, `off`.
fn remote_consent_label(marker: Option<&str>, should_arm: bool) -> String {
    match (should_arm, marker) {
        (true, Some("armed")) => "armed",
        (true, _) => "armed (repo)",
        (false, Some("disarmed")) => "off (disarmed)",
        (false, _) => "off",
    }
    .to_owned()
}

/// A path's last part, for a host's directory.
fn last_part(path: &str) -> String {
    let part = path.trim_end_matches('/').rsplit('/').next().unwrap_or(path);
    escape_for_terminal(if part.is_empty() { "/" } else { part }).into_owned()
}

/// The sessions shown, by a key that names each across hosts.
#[derive(Debug, Default)]
pub struct Board {
    sessions: BTreeMap<String, Shown>,
    lost_hosts: BTreeSet<String>,
}

impl Board {
    /// Takes one event in; whether anything shown changed.
    pub fn apply(&mut self, event: &Event, consent_label: Option<&str>) -> bool {
        let host = event.host.as_deref();
        if let Some(host) = host
            && event.kind != EventKind::HostLost
            && self.lost_hosts.remove(host)
        {
            for shown in self.sessions.values_mut().filter(|shown| shown.host.as_deref() == Some(host)) {
                shown.host_lost = false;
            }
        }
        match &event.kind {
            EventKind::HostLost => {
                let Some(host) = host else { return false };
                self.lost_hosts.insert(host.to_owned());
                for shown in self.sessions.values_mut().filter(|shown| shown.host.as_deref() == Some(host)) {
                    shown.host_lost = true;
                }
                true
            }
            EventKind::Newer(_) | EventKind::Resync => host.is_some(),
            EventKind::Problem => false,
            kind => {
                let Some(row) = &event.row else { return false };
                let json = match row.to_json() {
                    Value::Object(json) => json,
                    _ => return false,
                };
                // A problem entry is no session.
                if !json.get("problem").is_none_or(Value::is_null) {
                    return false;
                }
                let key = key_of(host, &json);
                match kind {
                    EventKind::Unmatched => self.sessions.remove(&key).is_some(),
                    EventKind::Died | EventKind::Removed => {
                        let shown = self
                            .sessions
                            .entry(key)
                            .or_insert_with(|| Shown::of_row(&json, host, consent_label));
                        if shown.dead_since.is_none() {
                            shown.dead_since = Some(Instant::now());
                        }
                        true
                    }
                    _ => {
                        let dead = json.get("liveness").and_then(Value::as_str) == Some("dead");
                        let mut shown = Shown::of_row(&json, host, consent_label);
                        if let Some(before) = self.sessions.get(&key) {
                            // A row that ended stays ended (a late event
                            // of its record never revives it).
                            shown.dead_since = before.dead_since;
                        }
                        if dead && shown.dead_since.is_none() {
                            shown.dead_since = Some(Instant::now());
                        }
                        shown.host_lost = host.is_some_and(|host| self.lost_hosts.contains(host));
                        self.sessions.insert(key, shown);
                        true
                    }
                }
            }
        }
    }

    /// Drops the sessions dead for longer than `DEAD_SHOWN_FOR`; whether
    /// any went.
    pub fn drop_the_long_dead(&mut self, now: Instant) -> bool {
        let before = self.sessions.len();
        self.sessions.retain(|_, shown| shown.dead_since.is_none_or(|since| now - since < DEAD_SHOWN_FOR));
        self.sessions.len() != before
    }

    /// The sessions shown through `filter`, in order: waiting (longest
    /// first), working, idle, unknown, a lost host's, dead.
    pub fn ordered(&self, filter: &str) -> Vec<(&String, &Shown)> {
        let mut rows: Vec<(&String, &Shown)> =
            self.sessions.iter().filter(|(_, shown)| filter.is_empty() || shown.matches(filter)).collect();
        rows.sort_by(|(a_key, a), (b_key, b)| {
            a.standing()
                .cmp(&b.standing())
                .then_with(|| {
                    let since = |shown: &Shown| shown.state_since.map_or(i128::MAX, Timestamp::unix_nanos);
                    since(a).cmp(&since(b))
                })
                .then_with(|| a_key.cmp(b_key))
        });
        rows
    }

    pub fn get(&self, key: &str) -> Option<&Shown> {
        self.sessions.get(key)
    }

    pub fn lost_hosts(&self) -> &BTreeSet<String> {
        &self.lost_hosts
    }

    /// How long until the board must be drawn again without an event:
    /// the soonest an age shown changes its text, or a dead row goes.
    pub fn next_change(&self, filter: &str, now: Timestamp, instant: Instant) -> Option<Duration> {
        let ages = self.ordered(filter).into_iter().filter_map(|(_, shown)| shown.next_age_change(now));
        let deaths = self
            .sessions
            .values()
            .filter_map(|shown| shown.dead_since)
            .map(|since| (since + DEAD_SHOWN_FOR).saturating_duration_since(instant));
        ages.chain(deaths).min()
    }
}

/// A session's key on the board: its host, and its record's path (its
/// owner's pid when a row has none).
fn key_of(host: Option<&str>, json: &Map<String, Value>) -> String {
    let path = json.get("path").and_then(Value::as_str).map(str::to_owned);
    let pid = json.get("session_pid").and_then(Value::as_u64).map(|pid| pid.to_string());
    format!("{}\u{0}{}", host.unwrap_or(""), path.or(pid).unwrap_or_default())
}

/// The consent label this machine's table shows for an event's row.
pub fn local_consent_label(event: &Event) -> Option<&'static str> {
    match &event.row {
        Some(EventRow::Local { consent, .. }) => Some(consent.label.as_str()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, host: Option<&str>, agent: &str, state: &str, since_seconds_ago: i128) -> Event {
        let since =
            Timestamp::from_unix_nanos(Timestamp::now().unix_nanos() - since_seconds_ago * 1_000_000_000)
                .to_rfc3339_millis();
        let host = host.map(|host| format!(r#","host":"{host}""#)).unwrap_or_default();
        let line = format!(
            r#"{{"schema":1,"event":"{kind}","at":"{since}","row":{{"path":"/r/{agent}.json","session_pid":7,"harness":"codex","agent":"{agent}","state":"{state}","waiting_for":null,"state_since":"{since}","liveness":"alive","problem":null}}{host}}}"#
        );
        Event::from_line(&line).expect("an event")
    }

    fn agents(board: &Board) -> Vec<String> {
        board.ordered("").into_iter().map(|(_, shown)| shown.agent.clone().unwrap_or_default()).collect()
    }

    #[test]
    fn waiting_first_longest_on_top_then_working_idle() {
        let mut board = Board::default();
        board.apply(&event("listed", None, "idle-one", "idle", 500), None);
        board.apply(&event("listed", None, "recent", "waiting", 5), None);
        board.apply(&event("listed", None, "working", "working", 50), None);
        board.apply(&event("listed", None, "longest", "waiting", 90), None);
        assert_eq!(agents(&board), ["longest", "recent", "working", "idle-one"]);
    }

    #[test]
    fn an_ended_session_is_never_shown_alive_again() {
        let mut board = Board::default();
        board.apply(&event("listed", None, "gone", "working", 5), None);
        board.apply(&event("died", None, "gone", "working", 5), None);
        // A late event of its record does not revive it.
        board.apply(&event("state-changed", None, "gone", "waiting", 1), None);
        let (_, shown) = board.ordered("")[0];
        assert_eq!(shown.standing(), Standing::Dead);
        assert_eq!(shown.state_text(Timestamp::now()), "dead");
        assert!(!board.drop_the_long_dead(Instant::now()));
        assert!(board.drop_the_long_dead(Instant::now() + DEAD_SHOWN_FOR));
        assert!(board.ordered("").is_empty());
    }

    #[test]
    fn a_lost_host_marks_its_sessions_lost_never_dead_until_it_speaks() {
        let mut board = Board::default();
        board.apply(&event("listed", Some("far"), "remote", "working", 5), None);
        board.apply(&event("listed", Some("near"), "other", "idle", 5), None);
        let lost = Event::from_line(
            r#"{"schema":1,"event":"host-lost","at":"2026-12-05T00:00:00.000Z","row":null,"reason":"ssh ended","host":"far"}"#,
        )
        .unwrap();
        board.apply(&lost, None);
        let standing = |board: &Board, agent: &str| {
            board
                .ordered("")
                .into_iter()
                .find(|(_, shown)| shown.agent.as_deref() == Some(agent))
                .unwrap()
                .1
                .standing()
        };
        assert_eq!(standing(&board, "remote"), Standing::HostLost);
        assert_eq!(standing(&board, "other"), Standing::Idle);
        assert!(!board.drop_the_long_dead(Instant::now() + DEAD_SHOWN_FOR * 10), "a lost row never leaves");
        board.apply(&event("listed", Some("far"), "remote", "working", 5), None);
        assert_eq!(standing(&board, "remote"), Standing::Working);
    }

    #[test]
    fn the_next_redraw_is_when_the_age_shown_changes_its_text() {
        let mut board = Board::default();
        board.apply(&event("listed", None, "minutes", "working", 150), None);
        let now = Timestamp::now();
        let wait = board.next_change("", now, Instant::now()).expect("an age is shown");
        // 2m30s shows `2m` until 3m: about 30 s from now, never a second.
        assert!(wait > Duration::from_secs(25) && wait <= Duration::from_secs(30), "{wait:?}");
        board.apply(&event("listed", None, "seconds", "idle", 3), None);
        let wait = board.next_change("", now, Instant::now()).unwrap();
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
        let mut unknown = Board::default();
        unknown.apply(&event("listed", None, "quiet", "unknown", 3), None);
        assert_eq!(unknown.next_change("", now, Instant::now()), None, "no age shown: no timeout");
    }

    #[test]
    fn the_filter_matches_every_word_in_agent_harness_state_or_directory() {
        let mut board = Board::default();
        board.apply(&event("listed", None, "api", "waiting", 5), None);
        board.apply(&event("listed", None, "web", "idle", 5), None);
        assert_eq!(agents_filtered(&board, "web"), ["web"]);
        assert_eq!(agents_filtered(&board, "codex waiting"), ["api"]);
        assert!(agents_filtered(&board, "nothing-like-it").is_empty());
    }

    fn agents_filtered(board: &Board, filter: &str) -> Vec<String> {
        board.ordered(filter).into_iter().map(|(_, shown)| shown.agent.clone().unwrap_or_default()).collect()
    }
}
