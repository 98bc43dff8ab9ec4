//! Claude Code's own registry of live sessions, `~/.claude/sessions/<pid>.json`
//! (`$CLAUDE_CONFIG_DIR/sessions`), as the file says it: the pid and
//! `procStart` (its start ticks) name the owner, `pidDomain`
//! (`linux:<machine-id>:pid:[<pid ns inode>]`) its machine and pid
//! namespace, `startedAt` its boot, `status` what it does.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::PathBuf;

use serde::Deserialize;

use crate::{Activity, WAITING_FOR_INPUT, WAITING_FOR_PERMISSION};

/// Where Claude Code keeps its live sessions: `$CLAUDE_CONFIG_DIR/sessions`,
/// else `~/.claude/sessions`. `None` without either variable.
pub fn sessions_directory(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |value: OsString| Some(PathBuf::from(value)).filter(|path| path.is_absolute());
    match env("CLAUDE_CONFIG_DIR").and_then(absolute) {
        Some(config) => Some(config.join("sessions")),
        None => env("HOME").and_then(absolute).map(|home| home.join(".claude").join("sessions")),
    }
}

/// Whether `name` in the sessions directory may be a session's file.
pub fn is_session_file_name(name: &str) -> bool {
    !name.starts_with('.') && name.ends_with(".json")
}

/// The keys of a session file roster reads; every other key is ignored.
/// Its strings are borrowed from the file's bytes where they need no
/// unescaping: a listing parses thousands of files.
#[derive(Debug, Deserialize)]
pub struct SessionFile<'a> {
    pub pid: u32,
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Cow<'a, str>,
    #[serde(borrow)]
    pub cwd: Cow<'a, str>,
    /// Milliseconds since the epoch.
    #[serde(rename = "startedAt")]
    pub started_at: u64,
    /// Field 22 of `/proc/<pid>/stat`, as a decimal string.
    #[serde(rename = "procStart", borrow)]
    pub proc_start: Cow<'a, str>,
    #[serde(default, borrow)]
    pub version: Option<Cow<'a, str>>,
    #[serde(rename = "pidDomain", default, borrow)]
    pub pid_domain: Option<Cow<'a, str>>,
    #[serde(rename = "messagingSocketPath", default, borrow)]
    pub messaging_socket_path: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub status: Option<Cow<'a, str>>,
    #[serde(rename = "waitingFor", default, borrow)]
    pub waiting_for: Option<Cow<'a, str>>,
    /// Milliseconds since the epoch.
    #[serde(rename = "updatedAt", default)]
    pub updated_at: Option<u64>,
    /// Milliseconds since the epoch.
    #[serde(rename = "statusUpdatedAt", default)]
    pub status_updated_at: Option<u64>,
}

/// What a session file says the session does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaidState {
    pub activity: Activity,
    /// What a waiting session waits for, in roster's words.
    pub waiting_for: Option<String>,
    /// Milliseconds since the epoch, when it last changed.
    pub since_ms: u64,
}

/// The `source` of a state read from a session file.
pub const SESSION_FILE_STATE_SOURCE: &str = "claude-code:sessions-file";

impl<'a> SessionFile<'a> {
    /// The file's bytes parsed; why not, in serde's words.
    pub fn parse(bytes: &'a [u8]) -> Result<SessionFile<'a>, String> {
        serde_json::from_slice(bytes).map_err(|error| error.to_string())
    }

    /// `procStart` as a start tick count.
    pub fn start_ticks(&self) -> Result<u64, String> {
        self.proc_start
            .parse()
            .map_err(|_| format!("procStart {:?} is not a start tick count", self.proc_start))
    }

    /// `pidDomain` split: the machine (`machine-id:<hex>`) and the inode of
    /// the pid namespace.
    pub fn pid_domain(&self) -> Result<(String, u64), String> {
        match self.pid_domain.as_deref().map(parse_pid_domain) {
            Some(Some(domain)) => Ok(domain),
            Some(None) => {
                Err(format!("pidDomain {:?} is not linux:<machine-id>:pid:[<inode>]", self.pid_domain))
            }
            None => Err("no pidDomain: the machine and pid namespace of the pid are not known".to_owned()),
        }
    }

    /// The session's state as the file says it: `busy` working, `idle`
    /// idle, `waiting` waiting for `waitingFor` (else `input`); any other
    /// status is no state.
    pub fn said_state(&self) -> Option<SaidState> {
        let activity = match self.status.as_deref()? {
            "busy" => Activity::Working,
            "idle" => Activity::Idle,
            "waiting" => Activity::Waiting,
            _ => return None,
        };
        let waiting_for =
            (activity == Activity::Waiting).then(|| waiting_for_word(self.waiting_for.as_deref()));
        let since_ms = self.status_updated_at.or(self.updated_at).unwrap_or(self.started_at);
        Some(SaidState { activity, waiting_for, since_ms })
    }
}

/// `linux:<machine-id>:pid:[<inode>]`, split.
fn parse_pid_domain(text: &str) -> Option<(String, u64)> {
    let rest = text.strip_prefix("linux:")?;
    let (machine, namespace) = rest.split_once(":pid:[")?;
    let inode = namespace.strip_suffix(']')?.parse().ok()?;
    let valid_machine = machine.len() == 32 && machine.bytes().all(|byte| byte.is_ascii_hexdigit());
    valid_machine.then(|| (format!("machine-id:{}", machine.to_ascii_lowercase()), inode))
}

/// What a waiting session waits for, in roster's words: Claude Code says
/// `permission prompt` for a permission dialog (2.1.332); any other value
/// becomes one lowercase word (`plan approval` → `plan-approval`), and
/// none `input`.
fn waiting_for_word(said: Option<&str>) -> String {
    let Some(said) = said.map(str::trim).filter(|said| !said.is_empty()) else {
        return WAITING_FOR_INPUT.to_owned();
    };
    let lower = said.to_ascii_lowercase();
    if lower.contains("permission") {
        return WAITING_FOR_PERMISSION.to_owned();
    }
    let word: String = lower
        .chars()
        .map(|character| if character.is_ascii_alphanumeric() || character == '_' { character } else { '-' })
        .take(64)
        .collect();
    let word = word.trim_matches('-').to_owned();
    if word.is_empty() { WAITING_FOR_INPUT.to_owned() } else { word }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_session_waits_for_is_said_in_roster_words() {
        assert_eq!(waiting_for_word(Some("permission prompt")), "permission");
        assert_eq!(waiting_for_word(Some("Permission")), "permission");
        assert_eq!(waiting_for_word(Some("plan approval")), "plan-approval");
        assert_eq!(waiting_for_word(Some("  ")), "input");
        assert_eq!(waiting_for_word(None), "input");
        assert_eq!(waiting_for_word(Some("\u{1b}[2J")), "2j");
        assert!(waiting_for_word(Some(&"x".repeat(500))).len() <= 64);
    }

    #[test]
    fn a_pid_domain_names_a_machine_and_a_pid_namespace() {
        assert_eq!(
            parse_pid_domain("linux:3D1219C7C4C5404AAA1F6D2A48ADFDA4:pid:[4026531836]"),
            Some(("machine-id:3d1219c7c4c5404aaa1f6d2a48adfda4".to_owned(), 4026531836))
        );
        for bad in ["linux:3d12:pid:[1]", "darwin:3d1219c7c4c5404aaa1f6d2a48adfda4:pid:[1]", "linux:x:pid:1"]
        {
            assert_eq!(parse_pid_domain(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_status_is_a_state_and_an_unknown_one_is_none() {
        let text = |status: &str| {
            format!(
                r#"{{"pid":7,"sessionId":"s","cwd":"/","startedAt":5,"procStart":"9","status":"{status}",
                    "waitingFor":"permission prompt","updatedAt":6}}"#
            )
        };
        let texts = [text("waiting"), text("busy"), text("asleep"), text("idle")];
        let file = |index: usize| SessionFile::parse(texts[index].as_bytes()).expect("a session file");
        assert_eq!(
            file(0).said_state(),
            Some(SaidState {
                activity: Activity::Waiting,
                waiting_for: Some("permission".to_owned()),
                since_ms: 6
            })
        );
        assert_eq!(file(1).said_state().map(|state| state.waiting_for), Some(None));
        assert_eq!(file(2).said_state(), None);
        assert_eq!(file(3).start_ticks(), Ok(9));
    }
}
