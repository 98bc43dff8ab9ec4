//! Merging roster's hooks into a parsed configuration file and taking them out
//! again: pure functions over `serde_json::Value`, so every rule about what
//! install keeps, replaces and removes is tested without a disk.
//!
//! Two shapes exist. Claude Code, Codex and Gemini CLI nest a hook inside a
//! group (`{"hooks": {"SessionStart": [{"matcher": …, "hooks": [{"type":
//! "command", "command": …}]}]}}`); Cursor and Copilot list hooks directly
//! (`{"version": 1, "hooks": {"sessionStart": [{"command": …}]}}`, Copilot
//! naming the command `bash`). Every other key, event, group and hook is
//! carried through untouched, in its place.

use serde_json::{Map, Value, json};

use super::commands::{HookCommands, RosterHookCall, roster_hook_call};
use super::{HookEvent, HookHarness};

/// One of roster's hooks found in a configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundHook {
    pub event: HookEvent,
    /// Index in the event's array (Codex's `i` in its trust keys).
    pub group_index: usize,
    /// Index inside the group's `hooks` (Codex's `j`); 0 for flat shapes.
    pub hook_index: usize,
    pub command: String,
    pub call: RosterHookCall,
}

/// Roster's hooks in one configuration file, per event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstalledHooks {
    pub session_start: Vec<FoundHook>,
    pub session_end: Vec<FoundHook>,
}

impl InstalledHooks {
    pub fn for_event(&self, event: HookEvent) -> &[FoundHook] {
        match event {
            HookEvent::SessionStart => &self.session_start,
            HookEvent::SessionEnd => &self.session_end,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.session_start.is_empty() && self.session_end.is_empty()
    }
}

/// How a harness lays out the hooks of one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// `[{"matcher"?, "hooks": [hook, …]}, …]`
    Grouped,
    /// `[hook, …]` under a top-level `"version": 1`
    Flat,
}

/// What stripping roster's hooks did to one element of an event array.
enum Stripped {
    /// It held none of roster's hooks.
    Untouched,
    /// It held only roster's hooks and disappears.
    Emptied,
    /// A group that held roster's hooks among others, now without them.
    Kept(Value),
}

/// Seconds (milliseconds for Gemini CLI) a SessionStart hook may take. The
/// SessionEnd hooks keep each harness's own budget, which is short on purpose
/// so that a session's exit is never held up; roster-prune needs far less.
const SESSION_START_TIMEOUT_SECONDS: u64 = 10;

/// Parses the bytes of a configuration file. An empty file (or only blanks)
/// reads as `{}`. Anything install could not merge into without guessing is
/// refused with the reason: bytes that are not UTF-8 JSON, a top level that is
/// not an object, a `hooks` that is not an object, a session-start or
/// session-end entry that is not an array.
pub fn parse_hook_document(harness: HookHarness, bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|error| format!("it is not UTF-8 text ({error})"))?;
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let document: Value =
        serde_json::from_str(text).map_err(|error| format!("it is not valid JSON ({error})"))?;
    let object = document
        .as_object()
        .ok_or_else(|| format!("its top level is {}, not an object", kind_of(&document)))?;
    if let Some(hooks) = object.get("hooks") {
        let hooks =
            hooks.as_object().ok_or_else(|| format!("its \"hooks\" is {}, not an object", kind_of(hooks)))?;
        for event in HookEvent::BOTH {
            let name = harness.event_name(event);
            if let Some(entries) = hooks.get(name).filter(|entries| !entries.is_array()) {
                return Err(format!("its \"hooks\".\"{name}\" is {}, not an array", kind_of(entries)));
            }
        }
    }
    Ok(document)
}

/// The fragment install merges into an empty file, for adding by hand.
pub fn hook_snippet(harness: HookHarness, commands: &HookCommands) -> Value {
    with_hooks_installed(harness, &Value::Object(Map::new()), commands)
}

/// `document` with roster's two hooks in it. An event that already held
/// roster hooks gets the fresh entry in the place of the first of them (so a
/// re-install after moving the binaries updates the commands without
/// reordering anything); otherwise the entry goes last. Installing into a
/// document that already has exactly these entries returns it unchanged.
/// `document` is expected to have passed [`parse_hook_document`].
pub fn with_hooks_installed(harness: HookHarness, document: &Value, commands: &HookCommands) -> Value {
    let shape = shape_of(harness);
    let mut document = document.as_object().cloned().unwrap_or_default();
    if shape == Shape::Flat && !document.contains_key("version") {
        document.insert("version".to_owned(), json!(1));
    }
    let hooks = document.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    if !hooks.is_object() {
        *hooks = Value::Object(Map::new());
    }
    if let Some(hooks) = hooks.as_object_mut() {
        for event in HookEvent::BOTH {
            let name = harness.event_name(event);
            let existing = hooks.get(name).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let entry = roster_entry(harness, event, commands.for_event(event));
            let mut updated = Vec::with_capacity(existing.len() + 1);
            let mut insert_at = None;
            for element in existing {
                match strip_roster_hooks(shape, element) {
                    Stripped::Untouched => updated.push(element.clone()),
                    Stripped::Emptied => {
                        insert_at.get_or_insert(updated.len());
                    }
                    Stripped::Kept(rest) => {
                        insert_at.get_or_insert(updated.len());
                        updated.push(rest);
                    }
                }
            }
            updated.insert(insert_at.unwrap_or(updated.len()), entry);
            hooks.insert(name.to_owned(), Value::Array(updated));
        }
    }
    Value::Object(document)
}

/// `document` without roster's hooks in the two session events. A group, an
/// event array or the `hooks` object that held only roster's hooks goes too;
/// everything else stays as it was, in its place.
pub fn with_hooks_removed(harness: HookHarness, document: &Value) -> Value {
    let shape = shape_of(harness);
    let Some(mut document) = document.as_object().cloned() else {
        return document.clone();
    };
    let mut removed_any = false;
    if let Some(hooks) = document.get_mut("hooks").and_then(Value::as_object_mut) {
        for event in HookEvent::BOTH {
            let name = harness.event_name(event);
            let Some(existing) = hooks.get(name).and_then(Value::as_array) else { continue };
            let mut kept = Vec::with_capacity(existing.len());
            let mut removed_here = false;
            for element in existing {
                match strip_roster_hooks(shape, element) {
                    Stripped::Untouched => kept.push(element.clone()),
                    Stripped::Emptied => removed_here = true,
                    Stripped::Kept(rest) => {
                        removed_here = true;
                        kept.push(rest);
                    }
                }
            }
            if removed_here {
                removed_any = true;
                if kept.is_empty() {
                    hooks.shift_remove(name);
                } else {
                    hooks.insert(name.to_owned(), Value::Array(kept));
                }
            }
        }
        if removed_any && hooks.is_empty() {
            document.shift_remove("hooks");
        }
    }
    Value::Object(document)
}

/// `document` reduced to what roster does not own, for comparing two files by
/// meaning: roster's hooks removed, then empty session-event arrays, an empty
/// `hooks` object and (for the flat shapes) the `version` key dropped. Two
/// files that reduce to the same value differ only by roster's hooks and
/// empty scaffolding; a file that reduces to `{}` holds nothing of the user's.
pub fn without_roster_hooks_or_empty_structures(harness: HookHarness, document: &Value) -> Value {
    let Value::Object(mut document) = with_hooks_removed(harness, document) else {
        return document.clone();
    };
    if let Some(hooks) = document.get_mut("hooks").and_then(Value::as_object_mut) {
        for event in HookEvent::BOTH {
            let name = harness.event_name(event);
            if hooks.get(name).and_then(Value::as_array).is_some_and(Vec::is_empty) {
                hooks.shift_remove(name);
            }
        }
    }
    if document.get("hooks").and_then(Value::as_object).is_some_and(Map::is_empty) {
        document.shift_remove("hooks");
    }
    if shape_of(harness) == Shape::Flat {
        document.shift_remove("version");
    }
    Value::Object(document)
}

/// Every roster hook in the session events of `document`, with its position.
pub fn find_installed_hooks(harness: HookHarness, document: &Value) -> InstalledHooks {
    let shape = shape_of(harness);
    let mut installed = InstalledHooks::default();
    let Some(hooks) = document.get("hooks").and_then(Value::as_object) else { return installed };
    for event in HookEvent::BOTH {
        let found = match event {
            HookEvent::SessionStart => &mut installed.session_start,
            HookEvent::SessionEnd => &mut installed.session_end,
        };
        let Some(entries) = hooks.get(harness.event_name(event)).and_then(Value::as_array) else { continue };
        for (group_index, element) in entries.iter().enumerate() {
            let members: Vec<&Value> = match shape {
                Shape::Flat => vec![element],
                Shape::Grouped => element
                    .get("hooks")
                    .and_then(Value::as_array)
                    .map(|hooks| hooks.iter().collect())
                    .unwrap_or_default(),
            };
            for (hook_index, hook) in members.into_iter().enumerate() {
                if let Some((call, command)) = roster_call_of_hook(hook) {
                    found.push(FoundHook {
                        event,
                        group_index,
                        hook_index,
                        command: command.to_owned(),
                        call,
                    });
                }
            }
        }
    }
    installed
}

fn shape_of(harness: HookHarness) -> Shape {
    match harness {
        HookHarness::ClaudeCode | HookHarness::Codex | HookHarness::GeminiCli => Shape::Grouped,
        HookHarness::CursorAgent | HookHarness::Copilot => Shape::Flat,
    }
}

/// The array element install adds for `event`, in the harness's own format.
fn roster_entry(harness: HookHarness, event: HookEvent, command: &str) -> Value {
    let start = event == HookEvent::SessionStart;
    match harness {
        // Claude Code and Codex read `timeout` in seconds; a group without a
        // `matcher` runs on every source (startup, resume, clear, compact).
        HookHarness::ClaudeCode | HookHarness::Codex => {
            let mut hook = json!({"type": "command", "command": command});
            if start {
                hook["timeout"] = json!(SESSION_START_TIMEOUT_SECONDS);
            }
            json!({"hooks": [hook]})
        }
        // Gemini CLI reads `timeout` in milliseconds and shows `name`.
        HookHarness::GeminiCli => {
            let name = if start { "roster-register" } else { "roster-prune" };
            let mut hook = json!({"type": "command", "command": command, "name": name});
            if start {
                hook["timeout"] = json!(SESSION_START_TIMEOUT_SECONDS * 1000);
            }
            json!({"hooks": [hook]})
        }
        HookHarness::CursorAgent => json!({"command": command}),
        HookHarness::Copilot => {
            let mut hook = json!({"type": "command", "bash": command});
            if start {
                hook["timeoutSec"] = json!(SESSION_START_TIMEOUT_SECONDS);
            }
            hook
        }
    }
}

/// Takes roster's hooks out of one element of an event array.
fn strip_roster_hooks(shape: Shape, element: &Value) -> Stripped {
    match shape {
        Shape::Flat => {
            if roster_call_of_hook(element).is_some() {
                Stripped::Emptied
            } else {
                Stripped::Untouched
            }
        }
        Shape::Grouped => {
            // A group that is not `{"hooks": [...]}` is somebody else's odd
            // entry: carried through as it is, never refused or rewritten.
            let Some(hooks) = element.get("hooks").and_then(Value::as_array) else {
                return Stripped::Untouched;
            };
            let kept: Vec<Value> =
                hooks.iter().filter(|hook| roster_call_of_hook(hook).is_none()).cloned().collect();
            if kept.len() == hooks.len() {
                Stripped::Untouched
            } else if kept.is_empty() {
                Stripped::Emptied
            } else {
                let mut group = element.clone();
                group["hooks"] = Value::Array(kept);
                Stripped::Kept(group)
            }
        }
    }
}

/// The roster call a hook object makes through its `command` (or Copilot's
/// `bash`) key, and that command.
fn roster_call_of_hook(hook: &Value) -> Option<(RosterHookCall, &str)> {
    let object = hook.as_object()?;
    ["command", "bash"].into_iter().find_map(|key| {
        let command = object.get(key)?.as_str()?;
        roster_hook_call(command).map(|call| (call, command))
    })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
