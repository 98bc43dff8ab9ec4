//! What each harness's hook events say a session is doing (docs/contract.md §3.2, §8.4):
//! working, idle, or waiting for its user. One table holds every event
//! roster listens to, per harness, with the activity it implies: the state
//! hook looks an event up in it, `roster-hooks install` wires exactly its
//! events, and the documents list it. An event not in the table changes
//! nothing; a harness with no event for an activity never shows it.

use crate::detect::Harness;

/// What a session is doing, as its last event said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activity {
    /// A turn is running: a prompt was submitted, a tool is about to run or
    /// just ran.
    Working,
    /// The turn ended; the session waits for a prompt.
    Idle,
    /// The session is blocked on its user: a permission prompt, a question.
    Waiting,
}

impl Activity {
    pub const ALL: [Activity; 3] = [Activity::Working, Activity::Idle, Activity::Waiting];

    pub fn as_str(self) -> &'static str {
        match self {
            Activity::Working => "working",
            Activity::Idle => "idle",
            Activity::Waiting => "waiting",
        }
    }

    pub fn parse(text: &str) -> Option<Activity> {
        Activity::ALL.into_iter().find(|activity| activity.as_str() == text)
    }
}

/// What a `waiting` session waits for when a permission dialog shows.
pub const WAITING_FOR_PERMISSION: &str = "permission";
/// What a `waiting` session waits for when it asked its user a question.
pub const WAITING_FOR_INPUT: &str = "input";

/// One event roster listens to and what it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActivityEvent {
    pub harness: Harness,
    /// The event's name as the harness's hook configuration spells it.
    pub event: &'static str,
    /// For an event that carries a kind (Claude Code's `Notification`
    /// with `notification_type`, Gemini CLI's with `notification_type`):
    /// the kind this row is about; the hook configuration selects it with
    /// a matcher where the harness has one. `None`: any occurrence.
    pub kind: Option<&'static str>,
    pub activity: Activity,
    /// What a `waiting` row waits for.
    pub waiting_for: Option<&'static str>,
}

const fn event(harness: Harness, event: &'static str, activity: Activity) -> ActivityEvent {
    ActivityEvent { harness, event, kind: None, activity, waiting_for: None }
}

const fn waiting(
    harness: Harness,
    event: &'static str,
    kind: Option<&'static str>,
    waiting_for: &'static str,
) -> ActivityEvent {
    ActivityEvent { harness, event, kind, activity: Activity::Waiting, waiting_for: Some(waiting_for) }
}

const fn kind_of(
    harness: Harness,
    event: &'static str,
    kind: &'static str,
    activity: Activity,
) -> ActivityEvent {
    ActivityEvent { harness, event, kind: Some(kind), activity, waiting_for: None }
}

use Activity::{Idle, Working};
use Harness::{Amp, ClaudeCode, Codex, Copilot, CursorAgent, GeminiCli, Opencode};

/// Every event roster listens to, checked against the releases
/// docs/harnesses.md names (their bundled schemas and event lists, and
/// payloads captured from them). Events that fire per model call or per
/// streamed message are left out on purpose: they say nothing the tool
/// events do not, at many times the cost.
pub const ACTIVITY_EVENTS: &[ActivityEvent] = &[
    // Claude Code: `PermissionRequest` comes the moment a permission
    // dialog opens; `Notification` `permission_prompt` about 6 s later,
    // and for every other blocking dialog (a question, plan mode) too.
    event(ClaudeCode, "UserPromptSubmit", Working),
    event(ClaudeCode, "PreToolUse", Working),
    event(ClaudeCode, "PostToolUse", Working),
    event(ClaudeCode, "PostToolUseFailure", Working),
    event(ClaudeCode, "PermissionDenied", Working),
    waiting(ClaudeCode, "PermissionRequest", None, WAITING_FOR_PERMISSION),
    waiting(ClaudeCode, "Notification", Some("permission_prompt"), WAITING_FOR_PERMISSION),
    waiting(ClaudeCode, "Notification", Some("elicitation_dialog"), WAITING_FOR_INPUT),
    waiting(ClaudeCode, "Notification", Some("elicitation_url_dialog"), WAITING_FOR_INPUT),
    kind_of(ClaudeCode, "Notification", "idle_prompt", Idle),
    waiting(ClaudeCode, "Elicitation", None, WAITING_FOR_INPUT),
    event(ClaudeCode, "ElicitationResult", Working),
    event(ClaudeCode, "Stop", Idle),
    event(ClaudeCode, "StopFailure", Idle),
    // Codex (hooks behind its `codex_hooks` feature): `Interrupt` is an
    // Esc, at a dialog or in a running turn.
    event(Codex, "UserPromptSubmit", Working),
    event(Codex, "PreToolUse", Working),
    event(Codex, "PostToolUse", Working),
    waiting(Codex, "PermissionRequest", None, WAITING_FOR_PERMISSION),
    event(Codex, "Stop", Idle),
    event(Codex, "Interrupt", Idle),
    // Gemini CLI: `Notification` `ToolPermission` fires right before the
    // confirmation dialog shows.
    event(GeminiCli, "BeforeAgent", Working),
    event(GeminiCli, "BeforeTool", Working),
    event(GeminiCli, "AfterTool", Working),
    waiting(GeminiCli, "Notification", Some("ToolPermission"), WAITING_FOR_PERMISSION),
    event(GeminiCli, "AfterAgent", Idle),
    // Copilot CLI (its camelCase events): `notification` `permission_prompt`
    // only for a prompt really shown (`permissionRequest` runs before its
    // rules decide, also for calls allowed without asking: not used).
    event(Copilot, "userPromptSubmitted", Working),
    event(Copilot, "preToolUse", Working),
    event(Copilot, "postToolUse", Working),
    event(Copilot, "postToolUseFailure", Working),
    waiting(Copilot, "notification", Some("permission_prompt"), WAITING_FOR_PERMISSION),
    waiting(Copilot, "notification", Some("elicitation_dialog"), WAITING_FOR_INPUT),
    event(Copilot, "agentStop", Idle),
    // Cursor's agent: from its published hook list; not run here.
    event(CursorAgent, "beforeSubmitPrompt", Working),
    event(CursorAgent, "beforeShellExecution", Working),
    event(CursorAgent, "beforeMCPExecution", Working),
    event(CursorAgent, "afterFileEdit", Working),
    event(CursorAgent, "stop", Idle),
    // opencode: bus events its plugin sees; a status goes idle however the
    // turn ended, an interrupt or a refusal included.
    kind_of(Opencode, "session.status", "busy", Working),
    // Not a bus event: the plugin's `chat.message` hook, run on each message
    // the user submits, which is also where it delivers roster's messages.
    event(Opencode, "chat.message", Working),
    kind_of(Opencode, "session.status", "retry", Working),
    kind_of(Opencode, "session.status", "idle", Idle),
    event(Opencode, "session.idle", Idle),
    waiting(Opencode, "permission.asked", None, WAITING_FOR_PERMISSION),
    event(Opencode, "permission.replied", Working),
    waiting(Opencode, "question.asked", None, WAITING_FOR_INPUT),
    event(Opencode, "question.replied", Working),
    event(Opencode, "question.rejected", Working),
    // Amp: plugin events; it has none for an approval it waits for (and
    // `tool.call` asks its handler to decide the call: not roster's to do).
    event(Amp, "agent.start", Working),
    event(Amp, "tool.result", Working),
    event(Amp, "agent.end", Idle),
];

/// The row for `event` of `harness` with `kind` (the payload's notification
/// type or status), or `None` when roster does not listen to it: such an
/// event changes nothing.
pub fn activity_event(harness: Harness, event: &str, kind: Option<&str>) -> Option<&'static ActivityEvent> {
    ACTIVITY_EVENTS.iter().find(|row| {
        row.harness == harness && row.event == event && row.kind.is_none_or(|wanted| kind == Some(wanted))
    })
}

/// The events of `harness` roster listens to, each name once, in table
/// order: what `roster-hooks install` wires.
pub fn activity_event_names(harness: Harness) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for row in ACTIVITY_EVENTS.iter().filter(|row| row.harness == harness) {
        if !names.contains(&row.event) {
            names.push(row.event);
        }
    }
    names
}

/// The kinds of `event` of `harness` roster listens to (the matchers a
/// hook configuration selects them with); empty when every occurrence
/// counts.
pub fn activity_event_kinds(harness: Harness, event: &str) -> Vec<&'static str> {
    ACTIVITY_EVENTS
        .iter()
        .filter(|row| row.harness == harness && row.event == event)
        .filter_map(|row| row.kind)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_waiting_row_says_what_it_waits_for_and_no_other_row_does() {
        for row in ACTIVITY_EVENTS {
            assert_eq!(row.activity == Activity::Waiting, row.waiting_for.is_some(), "{row:?}");
        }
    }

    #[test]
    fn no_event_of_a_harness_is_listed_twice_for_the_same_kind() {
        for (index, row) in ACTIVITY_EVENTS.iter().enumerate() {
            for other in &ACTIVITY_EVENTS[index + 1..] {
                assert!(
                    !(row.harness == other.harness && row.event == other.event && row.kind == other.kind),
                    "{row:?} twice"
                );
            }
        }
    }

    #[test]
    fn an_event_with_kinds_counts_only_for_a_kind_it_lists() {
        let permission = activity_event(ClaudeCode, "Notification", Some("permission_prompt")).unwrap();
        assert_eq!((permission.activity, permission.waiting_for), (Activity::Waiting, Some("permission")));
        assert_eq!(activity_event(ClaudeCode, "Notification", Some("auth_success")), None);
        assert_eq!(activity_event(ClaudeCode, "Notification", None), None);
        assert_eq!(activity_event(ClaudeCode, "PreToolUse", Some("anything")).unwrap().activity, Working);
        assert_eq!(activity_event(Codex, "Notification", Some("permission_prompt")), None);
    }

    #[test]
    fn activities_read_back_from_their_words() {
        for activity in Activity::ALL {
            assert_eq!(Activity::parse(activity.as_str()), Some(activity));
        }
        assert_eq!(Activity::parse("unknown"), None);
    }
}
