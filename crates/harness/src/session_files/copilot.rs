//! Copilot CLI's marks of its live sessions, `~/.copilot/session-state/<session
//! id>/` (`$COPILOT_HOME/session-state`), as its files say them: a lock
//! file `inuse.<pid>.lock` per process using the session, which holds an
//! `flock` on `inuse.<pid>.hold` beside it while it lives; `workspace.yaml`
//! (the session's `id` and `cwd`); and `events.jsonl`, whose first event
//! names the Copilot CLI version.

use std::ffi::OsString;
use std::path::PathBuf;

/// The session's description beside its lock files.
pub const WORKSPACE_FILE: &str = "workspace.yaml";

/// The session's event log, whose first line is `session.start`.
pub const EVENTS_FILE: &str = "events.jsonl";

/// The most of `workspace.yaml` and `events.jsonl`'s first line read.
pub const SIDE_FILE_LIMIT: usize = 64 * 1024;

/// Where Copilot CLI keeps its sessions: `$COPILOT_HOME/session-state`,
/// else `~/.copilot/session-state`. `None` without either variable.
pub fn session_state_directory(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |value: OsString| Some(PathBuf::from(value)).filter(|path| path.is_absolute());
    match env("COPILOT_HOME").and_then(absolute) {
        Some(home) => Some(home.join("session-state")),
        None => env("HOME").and_then(absolute).map(|home| home.join(".copilot").join("session-state")),
    }
}

/// The pid an `inuse.<pid>.lock` name carries (not 0).
pub fn lock_file_pid(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("inuse.")?.strip_suffix(".lock")?;
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|pid| *pid != 0)
}

/// The file whose `flock` the process `pid` holds while it lives.
pub fn hold_file_name(pid: u32) -> String {
    format!("inuse.{pid}.hold")
}

/// What `workspace.yaml` says of the session.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Workspace {
    pub id: Option<String>,
    pub cwd: Option<String>,
}

impl Workspace {
    /// The top-level `id:` and `cwd:` of a `workspace.yaml`, plain or
    /// quoted scalars; anything else is not read.
    pub fn parse(text: &str) -> Workspace {
        let mut workspace = Workspace::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else { continue };
            let value = yaml_scalar(value.trim());
            match key {
                "id" => workspace.id = value,
                "cwd" => workspace.cwd = value,
                _ => {}
            }
        }
        workspace
    }
}

/// A one-line YAML scalar: `"double"` (JSON escapes), `'single'` (`''` a
/// quote), or plain (up to a ` #` comment). `None` for anything else.
fn yaml_scalar(value: &str) -> Option<String> {
    if value.starts_with('"') {
        return serde_json::from_str(value).ok();
    }
    if let Some(inner) = value.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'')?;
        return Some(inner.replace("''", "'"));
    }
    let plain = value.split(" #").next().unwrap_or_default().trim_end();
    let special = plain.is_empty() || plain.starts_with(['|', '>', '&', '*', '!', '{', '[', '%', '@', '`']);
    (!special).then(|| plain.to_owned())
}

/// The Copilot CLI version `events.jsonl`'s first line says
/// (`session.start`'s `data.copilotVersion`), from the start of the file.
pub fn version_of_first_event(start: &[u8]) -> Option<String> {
    let line = start.split(|&byte| byte == b'\n').next()?;
    let event: serde_json::Value = serde_json::from_slice(line).ok()?;
    Some(event.get("data")?.get("copilotVersion")?.as_str()?.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_file_names_carry_a_pid() {
        assert_eq!(lock_file_pid("inuse.29666.lock"), Some(29666));
        for name in
            ["inuse..lock", "inuse.12.hold", "inuse.-1.lock", "inuse.1x.lock", "inuse.0.lock", "x.12.lock"]
        {
            assert_eq!(lock_file_pid(name), None, "{name}");
        }
        assert_eq!(hold_file_name(29666), "inuse.29666.hold");
    }

    #[test]
    fn workspace_yaml_scalars() {
        let text = "id: df27416f\ncwd: /tmp/proj # here\nname: x: y\n";
        assert_eq!(
            Workspace::parse(text),
            Workspace { id: Some("df27416f".into()), cwd: Some("/tmp/proj".into()) }
        );
        assert_eq!(Workspace::parse("cwd: \"/a \\\"b\\\" c\"").cwd.as_deref(), Some("/a \"b\" c"));
        assert_eq!(Workspace::parse("cwd: '/it''s'").cwd.as_deref(), Some("/it's"));
        assert_eq!(Workspace::parse("cwd: |\n  /x").cwd, None, "a block scalar is not read");
        assert_eq!(Workspace::parse("  cwd: /nested").cwd, None, "only top-level keys");
    }

    #[test]
    fn the_version_is_the_first_events() {
        let start = br#"{"type":"session.start","data":{"copilotVersion":"1.0.102"}}
{"type":"other"}"#;
        assert_eq!(version_of_first_event(start).as_deref(), Some("1.0.102"));
        assert_eq!(version_of_first_event(b"not json\n"), None);
        assert_eq!(version_of_first_event(br#"{"data":{}}"#), None);
    }
}
