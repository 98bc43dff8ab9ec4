//! What a notice is and what it says: the one value every backend is
//! handed (`Notice`, serialized as the JSON the webhook posts and the exec
//! command reads), made from the session as the watch last showed it and
//! the trigger's decision. It names the session (harness, agent), what it
//! waits for, the project (the last part of its directory and the git
//! branch, read from `.git/HEAD` without running git), the host, and for
//! how long; never a message's text. `--redact` leaves out paths and
//! names for the backends whose notices leave the machine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use registry_core::record::ScreenLocation;
use serde::Serialize;

use crate::triggers::{Millis, SessionKey, Trigger};

/// A session as the watch last showed it: the keys of its row a notice
/// reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionView {
    pub key: Option<SessionKey>,
    pub host: Option<String>,
    pub pid: Option<u32>,
    pub session_id: Option<String>,
    pub harness: Option<String>,
    pub agent: Option<String>,
    pub cwd: Option<String>,
    pub waiting_for: Option<String>,
    pub location: Option<ScreenLocation>,
}

/// How loud a notice is: the freedesktop urgency, and the ntfy priority
/// it maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Urgency {
    Low,
    Normal,
    Critical,
}

impl Urgency {
    pub fn of(trigger: Trigger) -> Urgency {
        match trigger {
            Trigger::Waiting => Urgency::Normal,
            Trigger::TurnFinished => Urgency::Low,
            Trigger::Crashed => Urgency::Critical,
        }
    }

    /// ntfy's priority, 1 (min) to 5 (max).
    pub fn ntfy_priority(self) -> u8 {
        match self {
            Urgency::Low => 2,
            Urgency::Normal => 4,
            Urgency::Critical => 5,
        }
    }
}

/// How to go to the session: `roster-focus [--host HOST] PID`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FocusTarget {
    pub host: Option<String>,
    /// The owner's pid, or the session id when the pid is not known.
    pub session: String,
}

impl FocusTarget {
    /// The `roster-focus` command line that goes there.
    pub fn command(&self) -> Vec<String> {
        let mut words = vec!["roster-focus".to_owned()];
        if let Some(host) = self.host.as_ref().filter(|host| host.as_str() != "local") {
            words.extend(["--host".to_owned(), host.clone()]);
        }
        words.extend(["--".to_owned(), self.session.clone()]);
        words
    }
}

/// One notice, as every backend is handed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Notice {
    /// The same for every notice about one session: a backend replaces or
    /// withdraws by it.
    pub key: String,
    pub trigger: Trigger,
    pub urgency: Urgency,
    pub title: String,
    pub body: String,
    pub host: Option<String>,
    pub harness: Option<String>,
    pub agent: Option<String>,
    pub waiting_for: Option<String>,
    /// The last part of the session's directory.
    pub project: Option<String>,
    /// The git branch checked out there.
    pub branch: Option<String>,
    pub cwd: Option<String>,
    pub session_pid: Option<u32>,
    pub session_id: Option<String>,
    /// When what it is about began (RFC 3339).
    pub since: String,
    /// How long ago that was, when the notice was made, in seconds.
    pub for_seconds: u64,
    pub redacted: bool,
    #[serde(skip)]
    pub focus: Option<FocusTarget>,
    /// The command that goes to the session (empty when none can).
    pub focus_command: Vec<String>,
}

/// The key a notice carries for a session.
pub fn notice_key(key: &SessionKey) -> String {
    match &key.host {
        Some(host) => format!("{host}/{}", key.record),
        None => key.record.clone(),
    }
}

/// The notice for `trigger` about `session`, made at `now`; `redact`
/// leaves out paths and names.
pub fn make_notice(
    session: &SessionView,
    key: &SessionKey,
    trigger: Trigger,
    since: Millis,
    now: Millis,
    redact: bool,
) -> Notice {
    let lasted = Duration::from_millis(u64::try_from(now - since).unwrap_or(0));
    let project = session.cwd.as_deref().and_then(project_name);
    let branch = session.cwd.as_deref().and_then(|cwd| git_branch(Path::new(cwd)));
    let harness = session.harness.clone().filter(|harness| !harness.is_empty());
    let agent = if redact { None } else { session.agent.clone() };
    let host = if redact { None } else { session.host.clone().filter(|host| host != "local") };
    let who = match (&agent, &harness) {
        (Some(agent), Some(harness)) => format!("{agent} ({harness})"),
        (Some(agent), None) => agent.clone(),
        (None, Some(harness)) => harness.clone(),
        (None, None) => "a session".to_owned(),
    };
    let waiting_for = session.waiting_for.clone();
    let title = match trigger {
        Trigger::Waiting => match waiting_for.as_deref() {
            Some("permission") => format!("{who} waits for your permission"),
            Some("input") => format!("{who} waits for your answer"),
            _ => format!("{who} waits for you"),
        },
        Trigger::TurnFinished => format!("{who} finished its turn"),
        Trigger::Crashed => format!("{who} ended without its session end"),
    };
    let mut parts = Vec::new();
    if !redact {
        match (&project, &branch) {
            (Some(project), Some(branch)) => parts.push(format!("{project} on {branch}")),
            (Some(project), None) => parts.push(project.clone()),
            _ => {}
        }
    }
    if let Some(host) = &host {
        parts.push(format!("host {host}"));
    }
    let age = cli_support::format_age(lasted);
    parts.push(match trigger {
        Trigger::Waiting => format!("waiting {age}"),
        Trigger::TurnFinished => format!("the turn ran {age}"),
        Trigger::Crashed => "its owner process is gone".to_owned(),
    });
    if let Some(pid) = session.pid {
        parts.push(format!("pid {pid}"));
    }
    let focus = match (session.pid, &session.session_id) {
        (Some(pid), _) => Some(pid.to_string()),
        (None, Some(id)) => Some(id.clone()),
        (None, None) => None,
    }
    .filter(|_| trigger != Trigger::Crashed)
    .map(|session_target| FocusTarget { host: session.host.clone(), session: session_target });
    Notice {
        key: notice_key(key),
        trigger,
        urgency: Urgency::of(trigger),
        title,
        body: parts.join(" · "),
        host,
        harness,
        agent,
        waiting_for: waiting_for.filter(|_| trigger == Trigger::Waiting),
        project: if redact { None } else { project },
        branch: if redact { None } else { branch },
        cwd: if redact { None } else { session.cwd.clone() },
        session_pid: session.pid,
        session_id: if redact { None } else { session.session_id.clone() },
        since: registry_core::Timestamp::from_unix_nanos(i128::from(since) * 1_000_000).to_rfc3339_millis(),
        for_seconds: lasted.as_secs(),
        redacted: redact,
        focus_command: focus.as_ref().map(FocusTarget::command).unwrap_or_default(),
        focus,
    }
}

/// The last part of a directory: `/home/wren/src/roster` → `roster`.
pub fn project_name(cwd: &str) -> Option<String> {
    Path::new(cwd).file_name().map(|name| name.to_string_lossy().into_owned())
}

/// The longest `.git/HEAD` (or `.git` file) read: a real one is a line.
const GIT_FILE_LIMIT: u64 = 4096;

/// The branch checked out in the repository holding `directory`, read from
/// its `HEAD` without running git: `ref: refs/heads/NAME` gives NAME; a
/// detached HEAD gives the commit's first 12 characters. A worktree's or
/// submodule's `.git` file (`gitdir: PATH`) is followed. None outside a
/// repository or when a file cannot be read.
pub fn git_branch(directory: &Path) -> Option<String> {
    let git = directory.ancestors().map(|dir| dir.join(".git")).find(|git| git.symlink_metadata().is_ok())?;
    let git_directory = if git.is_dir() {
        git
    } else {
        let text = read_small(&git)?;
        let target = text.trim().strip_prefix("gitdir:")?.trim();
        let target = PathBuf::from(target);
        if target.is_absolute() { target } else { git.parent()?.join(target) }
    };
    let head = read_small(&git_directory.join("HEAD"))?;
    let head = head.trim();
    match head.strip_prefix("ref:") {
        Some(reference) => {
            let reference = reference.trim();
            Some(reference.strip_prefix("refs/heads/").unwrap_or(reference).to_owned())
        }
        None if head.len() >= 12 && head.chars().all(|c| c.is_ascii_hexdigit()) => {
            Some(head[..12].to_owned())
        }
        None => None,
    }
}

fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(GIT_FILE_LIMIT).read_to_string(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> SessionView {
        SessionView {
            pid: Some(5854),
            session_id: Some("7f3c2a10-aaaa".into()),
            harness: Some("claude-code".into()),
            agent: Some("wren".into()),
            cwd: Some("/nonexistent/src/roster".into()),
            waiting_for: Some("permission".into()),
            ..SessionView::default()
        }
    }

    fn key() -> SessionKey {
        SessionKey { host: None, record: "5854@w.json".into() }
    }

    #[test]
    fn a_waiting_notice_names_the_session_the_wait_the_project_and_how_long() {
        let notice = make_notice(&session(), &key(), Trigger::Waiting, 1_000, 13_000, false);
        assert_eq!(notice.title, "wren (claude-code) waits for your permission");
        assert_eq!(notice.body, "roster · waiting 12s · pid 5854");
        assert_eq!(notice.urgency, Urgency::Normal);
        assert_eq!(notice.focus_command, ["roster-focus", "--", "5854"]);
    }

    #[test]
    fn a_redacted_notice_leaves_out_paths_and_names() {
        let notice = make_notice(&session(), &key(), Trigger::Waiting, 1_000, 13_000, true);
        assert_eq!(notice.title, "claude-code waits for your permission");
        let json = serde_json::to_string(&notice).unwrap();
        for secret in ["wren", "roster\"", "/nonexistent", "7f3c2a10"] {
            assert!(!json.contains(secret), "{secret} in {json}");
        }
    }

    #[test]
    fn a_session_of_another_host_is_gone_to_through_it() {
        let view = SessionView { host: Some("build1".into()), ..session() };
        let key = SessionKey { host: Some("build1".into()), record: "5854@w.json".into() };
        let notice = make_notice(&view, &key, Trigger::Waiting, 0, 0, false);
        assert_eq!(notice.focus_command, ["roster-focus", "--host", "build1", "--", "5854"]);
        assert!(notice.body.contains("host build1"), "{}", notice.body);
        assert_eq!(notice.key, "build1/5854@w.json");
    }

    #[test]
    fn the_branch_is_read_from_head_and_through_a_worktree_gitdir_file() {
        let root = tempfile::tempdir().unwrap();
        let repository = root.path().join("repo");
        std::fs::create_dir_all(repository.join(".git")).unwrap();
        std::fs::create_dir_all(repository.join("src/deep")).unwrap();
        std::fs::write(repository.join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        assert_eq!(git_branch(&repository.join("src/deep")).as_deref(), Some("feature/x"));
        let worktree = root.path().join("worktree");
        std::fs::create_dir_all(repository.join(".git/worktrees/w")).unwrap();
        std::fs::write(repository.join(".git/worktrees/w/HEAD"), "0123456789abcdef0123\n").unwrap();
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(
            worktree.join(".git"),
            format!("gitdir: {}\n", repository.join(".git/worktrees/w").display()),
        )
        .unwrap();
        assert_eq!(git_branch(&worktree).as_deref(), Some("0123456789ab"));
        assert_eq!(git_branch(Path::new("/nonexistent/dir")), None);
    }
}
