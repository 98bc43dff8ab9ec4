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

use super::jsonc::{Container, Entry, JsoncDocument, Node, apply_splices, render_entry};

use super::commands::{HookCommands, RosterHookCall, roster_hook_call};
use super::types::{HookEvent, HookHarness};

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
    pub(crate) fn for_event(&self, event: HookEvent) -> &[FoundHook] {
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

/// What one element of an event array holds of roster's hooks.
enum Stripped {
    /// Only roster's hooks: the element goes.
    Emptied,
    /// A group with roster's hook at this index among others: only it goes.
    Kept(usize),
}

/// Seconds (milliseconds for Gemini CLI) a SessionStart hook may take. The
/// SessionEnd hooks keep each harness's own budget, which is short on purpose
/// so that a session's exit is never held up; roster-prune needs far less.
const SESSION_START_TIMEOUT_SECONDS: u64 = 10;

/// Parses the bytes of a configuration file, JSON or JSONC (comments and
/// trailing commas, as Gemini CLI allows). An empty file (or only blanks and
/// comments) reads as `{}`. Anything install could not merge into without
/// guessing is refused with the reason: bytes that are not UTF-8 JSON, a top
/// level that is not an object, a `hooks` that is not an object, a
/// session-start or session-end entry that is not an array, or one of those
/// keys given twice.
pub fn parse_hook_document(harness: HookHarness, bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|error| format!("it is not UTF-8 text ({error})"))?;
    let document = JsoncDocument::parse(text)?;
    check_shape(harness, &document)?;
    Ok(document.root().map_or_else(|| Value::Object(Map::new()), |root| document.value_of(root)))
}

/// The fragment install merges into an empty file, for adding by hand.
pub fn hook_snippet(harness: HookHarness, commands: &HookCommands) -> Value {
    let mut document = Map::new();
    if shape_of(harness) == Shape::Flat {
        document.insert("version".to_owned(), json!(1));
    }
    let hooks: Map<String, Value> = HookEvent::BOTH
        .into_iter()
        .map(|event| {
            let entry = roster_entry(harness, event, commands.for_event(event));
            (harness.event_name(event).to_owned(), Value::Array(vec![entry]))
        })
        .collect();
    document.insert("hooks".to_owned(), Value::Object(hooks));
    Value::Object(document)
}

/// The text of a configuration file with roster's two hooks in it, every
/// other byte as it was. An event that already held roster hooks gets the
/// fresh entry in the place of the first of them (so a re-install after
/// moving the binaries updates the commands without reordering anything);
/// otherwise the entry goes last. The text must pass [`parse_hook_document`].
pub(crate) fn install_into_text(
    harness: HookHarness,
    text: &str,
    commands: &HookCommands,
) -> Result<String, String> {
    if JsoncDocument::parse(text)?.root().is_none() {
        return Ok(format!("{text}{}", print_document(&hook_snippet(harness, commands))));
    }
    let (mut text, insert_at) = strip_roster_hooks_from_text(harness, text.to_owned(), KeepEmptied::Yes)?;
    if shape_of(harness) == Shape::Flat && root_member(&JsoncDocument::parse(&text)?, "version").is_none() {
        text = append_member(&text, &[], "version", &json!(1))?;
    }
    let document = JsoncDocument::parse(&text)?;
    if root_member(&document, "hooks").is_none() {
        let snippet = hook_snippet(harness, commands);
        return append_member(&text, &[], "hooks", &snippet["hooks"]);
    }
    for event in HookEvent::BOTH {
        let name = harness.event_name(event);
        let entry = roster_entry(harness, event, commands.for_event(event));
        let document = JsoncDocument::parse(&text)?;
        let hooks =
            root_member(&document, "hooks").and_then(|hooks| hooks.value.as_object()).ok_or("no hooks")?;
        text = match hooks.member(name).and_then(|entries| entries.value.as_array()) {
            None => append_member(&text, &["hooks"], name, &Value::Array(vec![entry]))?,
            Some(entries) => {
                let index = insert_at[event_slot(event)].unwrap_or(entries.entries.len());
                let layout = document.layout();
                let splice = document.insert_entry(entries, index, &layout, |indent| {
                    render_entry(None, &entry, indent, &layout)
                });
                apply_splices(&text, &[splice])
            }
        };
    }
    Ok(text)
}

/// The text of a configuration file without roster's hooks in the two
/// session events, every other byte as it was. A group, an event array or the
/// `hooks` object that held only roster's hooks goes too, with its line.
///
/// In the flat shapes `version` describes the `hooks` object only: when the
/// whole `hooks` object goes, a `"version": 1` goes with it (install adds
/// one to a file that has none).
pub(crate) fn remove_from_text(harness: HookHarness, text: &str) -> Result<String, String> {
    let had_hooks = root_member(&JsoncDocument::parse(text)?, "hooks").is_some();
    let (text, _) = strip_roster_hooks_from_text(harness, text.to_owned(), KeepEmptied::No)?;
    let document = JsoncDocument::parse(&text)?;
    let Some(root) = document.root().and_then(Node::as_object) else { return Ok(text) };
    if shape_of(harness) == Shape::Flat
        && had_hooks
        && root.member("hooks").is_none()
        && let Some(version) = root.member_index("version")
        && document.value_of(&root.entries[version].value) == json!(1)
    {
        return Ok(apply_splices(&text, &document.remove_entry(root, version)));
    }
    Ok(text)
}

/// `document` with roster's two hooks in it: [`install_into_text`] applied
/// to the document as roster prints it.
pub fn with_hooks_installed(harness: HookHarness, document: &Value, commands: &HookCommands) -> Value {
    let text = install_into_text(harness, &print_document(document), commands).unwrap_or_default();
    parse_hook_document(harness, text.as_bytes()).unwrap_or_else(|_| document.clone())
}

/// `document` without roster's hooks: [`remove_from_text`] applied to the
/// document as roster prints it.
pub fn with_hooks_removed(harness: HookHarness, document: &Value) -> Value {
    let text = remove_from_text(harness, &print_document(document)).unwrap_or_default();
    parse_hook_document(harness, text.as_bytes()).unwrap_or_else(|_| document.clone())
}

/// A document as roster writes a new file: pretty JSON, two-space indent, a
/// final newline.
pub fn print_document(document: &Value) -> String {
    let mut text = serde_json::to_string_pretty(document).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

/// Whether stripping roster's hooks before an install keeps the containers it
/// empties (the fresh entries go into them) or removes them (uninstall).
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeepEmptied {
    Yes,
    No,
}

/// Takes roster's hooks out of `text` one at a time, re-reading the text after
/// each cut. Returns the text and, per event, the index where the first of
/// them stood (where a re-install puts the fresh entry).
fn strip_roster_hooks_from_text(
    harness: HookHarness,
    mut text: String,
    keep_emptied: KeepEmptied,
) -> Result<(String, [Option<usize>; 2]), String> {
    let shape = shape_of(harness);
    let mut insert_at = [None, None];
    loop {
        let document = JsoncDocument::parse(&text)?;
        let Some(root) = document.root().and_then(Node::as_object) else { break };
        let Some(hooks_index) = root.member_index("hooks") else { break };
        let Some(hooks) = root.entries[hooks_index].value.as_object() else { break };
        let mut cut = None;
        'events: for event in HookEvent::BOTH {
            let Some(event_index) = hooks.member_index(harness.event_name(event)) else { continue };
            let Some(entries) = hooks.entries[event_index].value.as_array() else { continue };
            for (group_index, element) in entries.entries.iter().enumerate() {
                let found = match shape {
                    Shape::Flat => roster_call_of_hook(&document.value_of(&element.value))
                        .is_some()
                        .then_some(Stripped::Emptied),
                    Shape::Grouped => strip_group(&document, &element.value),
                };
                let Some(found) = found else { continue };
                insert_at[event_slot(event)].get_or_insert(group_index);
                let splices = match found {
                    Stripped::Kept(hook_index) => {
                        let group = element.value.as_object().and_then(|group| group.member("hooks"));
                        let group_hooks = group.and_then(|hooks| hooks.value.as_array()).ok_or("no group")?;
                        document.remove_entry(group_hooks, hook_index)
                    }
                    Stripped::Emptied if entries.entries.len() > 1 || keep_emptied == KeepEmptied::Yes => {
                        document.remove_entry(entries, group_index)
                    }
                    Stripped::Emptied if hooks.entries.len() > 1 => document.remove_entry(hooks, event_index),
                    Stripped::Emptied => document.remove_entry(root, hooks_index),
                };
                cut = Some(splices);
                break 'events;
            }
        }
        match cut {
            Some(splices) => text = apply_splices(&text, &splices),
            None => break,
        }
    }
    Ok((text, insert_at))
}

/// What a grouped-shape element holds of roster's: `None` when nothing,
/// `Emptied` when only roster's hooks (the group goes), `Kept(j)` when
/// roster's hook `j` sits among others (only it goes). A group that is not
/// `{"hooks": [...]}` is somebody else's odd entry and never touched.
fn strip_group(document: &JsoncDocument, group: &Node) -> Option<Stripped> {
    let hooks = group.as_object()?.member("hooks")?.value.as_array()?;
    let roster_hooks: Vec<usize> = hooks
        .entries
        .iter()
        .enumerate()
        .filter(|(_, hook)| roster_call_of_hook(&document.value_of(&hook.value)).is_some())
        .map(|(index, _)| index)
        .collect();
    match roster_hooks.first() {
        None => None,
        Some(_) if roster_hooks.len() == hooks.entries.len() => Some(Stripped::Emptied),
        Some(first) => Some(Stripped::Kept(*first)),
    }
}

fn root_member<'d>(document: &'d JsoncDocument, key: &str) -> Option<&'d Entry> {
    document.root()?.as_object()?.member(key)
}

/// `text` with the member `key: value` added last to the object at `path`
/// (member names from the root).
fn append_member(text: &str, path: &[&str], key: &str, value: &Value) -> Result<String, String> {
    let document = JsoncDocument::parse(text)?;
    let mut node = document.root().ok_or("an empty document")?;
    for step in path {
        node = &node.as_object().and_then(|object| object.member(step)).ok_or("a missing object")?.value;
    }
    let object = node.as_object().ok_or("not an object")?;
    let layout = document.layout();
    let splice = document.insert_entry(object, object.entries.len(), &layout, |indent| {
        render_entry(Some(key), value, indent, &layout)
    });
    Ok(apply_splices(text, &[splice]))
}

fn event_slot(event: HookEvent) -> usize {
    match event {
        HookEvent::SessionStart => 0,
        HookEvent::SessionEnd => 1,
    }
}

/// The shape checks of [`parse_hook_document`] on a parsed text.
fn check_shape(harness: HookHarness, document: &JsoncDocument) -> Result<(), String> {
    let Some(root) = document.root() else { return Ok(()) };
    let object = root.as_object().ok_or_else(|| {
        format!("its top level is {}, not an object", crate::payload::json_kind(&document.value_of(root)))
    })?;
    let once = |container: &Container, key: &str, place: &str| -> Result<(), String> {
        let count = container.entries.iter().filter(|entry| entry.key.as_deref() == Some(key)).count();
        if count > 1 {
            return Err(format!("{place}\"{key}\" is given {count} times; keep one"));
        }
        Ok(())
    };
    once(object, "hooks", "its ")?;
    let Some(hooks) = object.member("hooks") else { return Ok(()) };
    let hooks = hooks.value.as_object().ok_or_else(|| {
        format!(
            "its \"hooks\" is {}, not an object",
            crate::payload::json_kind(&document.value_of(&hooks.value))
        )
    })?;
    for event in HookEvent::BOTH {
        let name = harness.event_name(event);
        once(hooks, name, "its \"hooks\".")?;
        if let Some(entries) = hooks.member(name).filter(|entries| entries.value.as_array().is_none()) {
            return Err(format!(
                "its \"hooks\".\"{name}\" is {}, not an array",
                crate::payload::json_kind(&document.value_of(&entries.value))
            ));
        }
    }
    Ok(())
}

/// `document` reduced to what roster does not own, for comparing two files by
/// meaning: roster's hooks removed, then empty session-event arrays, an empty
/// `hooks` object and (for the flat shapes) the `version` key dropped. Two
/// files that reduce to the same value differ only by roster's hooks and
/// empty scaffolding; a file that reduces to `{}` holds nothing of the user's.
pub(crate) fn without_roster_hooks_or_empty_structures(harness: HookHarness, document: &Value) -> Value {
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
        // Plugin harnesses have no hook entries; the flat shape is never used for them.
        HookHarness::CursorAgent | HookHarness::Copilot | HookHarness::Opencode | HookHarness::Amp => {
            Shape::Flat
        }
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
        HookHarness::CursorAgent | HookHarness::Opencode | HookHarness::Amp => json!({"command": command}),
        HookHarness::Copilot => {
            let mut hook = json!({"type": "command", "bash": command});
            if start {
                hook["timeoutSec"] = json!(SESSION_START_TIMEOUT_SECONDS);
            }
            hook
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
