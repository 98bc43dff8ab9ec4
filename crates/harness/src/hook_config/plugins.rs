//! Plugin files for the harnesses that run no shell hooks: opencode loads
//! JavaScript plugins into its own process, Amp runs TypeScript plugins in a
//! plugin process it starts as its child. roster-hooks writes one file of its
//! own into the harness's plugin directory, so install, uninstall and status
//! deal with a whole file that roster owns (recognised by its first line),
//! never with a file of the user's.
//!
//! opencode: the plugin runs inside the opencode process, so `process.pid` is
//! opencode itself; on `session.created` it pipes the event (opencode's own
//! shape, which `--hook opencode` reads) into `roster-register --hook opencode
//! --pid <process.pid>`; on `session.deleted` and when the process exits it
//! runs `roster-prune --current --hook opencode --pid <process.pid>`; on
//! the events that say what a session does (`session.status`, …, the
//! opencode rows of `crate::ACTIVITY_EVENTS`) it pipes the event into
//! `roster-state --hook opencode --pid <process.pid>`.
//!
//! Amp: the plugin's process is a child of the amp process, so the owner is
//! `process.ppid`, taken when the plugin loads. On `session.start` (a thread
//! starts or is switched to) it pipes a payload in the shape `--hook` reads
//! (`session_id` = the thread id, `cwd` = the workspace root or amp's own
//! directory) into `roster-register --hook amp --pid <amp>`. Amp has no
//! session-end event, and its plugin process is restarted by a plugin reload
//! while amp goes on, so nothing deregisters on exit: the record turns dead
//! when amp exits, and `roster-prune` removes it. On `agent.start`,
//! `tool.result` and `agent.end` it pipes the thread id and the event's name
//! into `roster-state --hook amp --pid <amp>`.

use std::fs;
use std::io;

use owner_liveness::retry_interrupted;

use super::commands::HookCommands;
use super::outcomes::{HookState, HookStatus, InstallOutcome, UninstallOutcome};
use super::programs::{broken_programs_report, build_directory_notes};
use super::types::{HookConfigError, HookConfigFile, HookHarness, HookPaths, Scope, scope_directory};
use super::writing::{create_parent_directories, remove_created_directories, write_atomically};

/// The first line of every plugin file roster writes; how uninstall and
/// status know the file is roster's.
pub const PLUGIN_MARKER: &str = "// roster session plugin, written by roster-hooks";

/// The end of the plugins' `roster(command, payload)` function, from the
/// spawn on: runs the hook `command` for the owner `owner_pid` (a
/// JavaScript expression) with the payload on stdin and, for a delivery
/// event (`delivery`), answers the text roster hands over. The opencode and
/// Amp plugins run their hooks this one way.
fn run_roster_hook_js(owner_pid: &str) -> String {
    format!(
        r#"  const child = Bun.spawn(["/bin/sh", "-c", `${{command}} --pid ${{{owner_pid}}}`], {{
    stdin: "pipe",
    stdout: delivery ? "pipe" : "ignore",
    stderr: "ignore",
  }});
  child.stdin.write(JSON.stringify(payload));
  child.stdin.end();
  if (!delivery) return child.exited;
  const out = await new Response(child.stdout).text();
  await child.exited;
  try {{
    const text = JSON.parse(out).deliver;
    return typeof text === "string" && text.length > 0 ? text : undefined;
  }} catch {{
    return undefined;
  }}
}}"#
    )
}

/// The text of the plugin file for `harness` with `commands`, or `None` for
/// a harness configured through hook entries.
pub fn plugin_text(harness: HookHarness, commands: &HookCommands) -> Option<String> {
    let start = js_string(&commands.session_start);
    let end = js_string(&commands.session_end);
    let state = js_string(&commands.state_for_any_event());
    let state_events = serde_json::to_string(&crate::activity_event_names(crate::Harness::from(harness)))
        .unwrap_or_else(|_| "[]".to_owned());
    let delivery_events: Vec<&str> = crate::DELIVERY_EVENTS
        .iter()
        .filter(|row| row.harness == crate::Harness::from(harness))
        .map(|row| row.event)
        .collect();
    let delivery_events = serde_json::to_string(&delivery_events).unwrap_or_else(|_| "[]".to_owned());
    match harness {
        HookHarness::Opencode => Some(format!(
            r#"{PLUGIN_MARKER}; `roster-hooks uninstall opencode` removes it.
// It registers each opencode session with roster, the opencode process as its owner,
// tells roster what the session is doing (working, idle, waiting for you), and hands
// the session the messages roster-send queued for it, when the session accepts them:
// with the message the user submits, or when a turn ends (a new turn takes them up).
const SESSION_START = {start};
const SESSION_END = {end};
const STATE = {state};
const STATE_EVENTS = new Set({state_events});
const DELIVERY_EVENTS = new Set({delivery_events});

// Runs a roster hook with the payload on stdin; for a delivery event, the text roster
// hands over (`{{"deliver": TEXT}}` on stdout), if any.
async function roster(command, payload, delivery = false) {{
{run_hook}

// State runs go one at a time, in the order opencode sent their events: started side by
// side, a busy sent just before an idle could be recorded after it.
let stateRuns = Promise.resolve();
function inOrder(run) {{
  const next = stateRuns.then(run, run);
  stateRuns = next.catch(() => undefined);
  return next;
}}

export const RosterSessions = async ({{ client }}) => {{
  process.once("exit", () => {{
    const payload = JSON.stringify({{ hook_event_name: "SessionEnd", reason: "exit" }});
    Bun.spawnSync(["/bin/sh", "-c", `printf '%s' '${{payload}}' | ${{SESSION_END}} --pid ${{process.pid}}`], {{
      stdout: "ignore",
      stderr: "ignore",
    }});
  }});
  return {{
    event: async ({{ event }}) => {{
      if (event.type === "session.created") await roster(SESSION_START, event);
      else if (event.type === "session.deleted") await roster(SESSION_END, event);
      else if (DELIVERY_EVENTS.has(event.type)) {{
        const text = await inOrder(() => roster(STATE, event, true));
        const sessionID = event.properties?.sessionID;
        if (text && sessionID) {{
          await client.session.promptAsync({{ path: {{ id: sessionID }}, body: {{ parts: [{{ type: "text", text }}] }} }});
        }}
      }} else if (STATE_EVENTS.has(event.type)) await inOrder(() => roster(STATE, event));
    }},
    "chat.message": async (input, output) => {{
      const payload = {{ type: "chat.message", properties: {{ sessionID: input.sessionID }} }};
      const text = await inOrder(() => roster(STATE, payload, DELIVERY_EVENTS.has("chat.message")));
      if (text && output.message) {{
        const first = output.parts[0]?.id ?? output.message.id;
        output.parts.push({{
          id: `${{first}}roster${{output.parts.length}}`,
          messageID: output.message.id,
          sessionID: output.message.sessionID,
          type: "text",
          text,
          synthetic: true,
        }});
      }}
    }},
  }};
}};
"#,
            run_hook = run_roster_hook_js("process.pid")
        )),
        HookHarness::Amp => Some(format!(
            r#"{PLUGIN_MARKER}; `roster-hooks uninstall amp` removes it.
// It registers each Amp thread session with roster, the amp process as its owner, tells
// roster what the session is doing, and hands it the messages roster-send queued for it.
import {{ readlinkSync }} from "node:fs";

export const description = "Registers Amp sessions with roster";

const SESSION_START = {start};
const STATE = {state};
// Amp has no session-end event: the record turns dead when amp exits.
// The plugin runs in a child process of amp, so amp is its parent.
const AMP_PID = process.ppid;

function ampDirectory() {{
  try {{
    return readlinkSync(`/proc/${{AMP_PID}}/cwd`);
  }} catch {{
    return undefined;
  }}
}}

const DELIVERY_EVENTS = new Set({delivery_events});

// Runs a roster hook with the payload on stdin; for a delivery event, the text roster
// hands over (`{{"deliver": TEXT}}` on stdout), if any.
async function roster(command, payload) {{
  const delivery = DELIVERY_EVENTS.has(payload.hook_event_name);
{run_hook}

export default function (amp) {{
  amp.on("session.start", async (event, ctx) => {{
    const root = ctx.system.workspaceRoot;
    const cwd = root ? amp.helpers.filePathFromURI(root) : ampDirectory();
    await roster(SESSION_START, {{ hook_event_name: "SessionStart", session_id: event.thread.id, cwd, source: "startup" }});
  }});
  // What the session is doing: a turn starts, a tool ran, the turn ends.
  const state = (name, event) => roster(STATE, {{ hook_event_name: name, session_id: event.thread.id }});
  // A message roster-send queued goes with the prompt, or starts a new turn at the end.
  amp.on("agent.start", async (event) => {{
    const text = await state("agent.start", event);
    return text ? {{ message: {{ content: text, display: true }} }} : {{}};
  }});
  amp.on("tool.result", async (event) => {{
    await state("tool.result", event);
  }});
  amp.on("agent.end", async (event) => {{
    const text = await state("agent.end", event);
    if (text) return {{ action: "continue", userMessage: text }};
  }});
}}
"#,
            run_hook = run_roster_hook_js("AMP_PID")
        )),
        _ => None,
    }
}

/// Writes the plugin file. Idempotent; a file of the same name that is not
/// roster's is refused (exit 3) and left as it is.
pub(crate) fn install_plugin(
    target: &HookConfigFile,
    commands: &HookCommands,
) -> Result<InstallOutcome, HookConfigError> {
    let text = plugin_text(target.harness, commands)
        .ok_or_else(|| HookConfigError::BadInput(format!("{} has no plugin file", target.harness)))?;
    let existing = read_plugin(target)?;
    let mut outcome = InstallOutcome {
        target: target.clone(),
        written_path: target.path.clone(),
        changed: false,
        created: existing.is_none(),
        backup: None,
    };
    if existing.as_deref() == Some(text.as_str()) {
        return Ok(outcome);
    }
    if existing.is_none() {
        create_parent_directories(&target.path)?;
    }
    write_atomically(&target.path, text.as_bytes(), plugin_mode(target.scope))?;
    outcome.changed = true;
    Ok(outcome)
}

/// Removes roster's plugin file, and the directories install made (and
/// recorded) that held only it; a file that is not roster's stays.
pub(crate) fn uninstall_plugin(
    target: &HookConfigFile,
    paths: &HookPaths,
) -> Result<UninstallOutcome, HookConfigError> {
    let existing = read_plugin(target)?;
    let mut outcome = UninstallOutcome::nothing_done(target, existing.is_some());
    if existing.is_some() {
        retry_interrupted(|| fs::remove_file(&target.path))
            .map_err(|error| HookConfigError::io("remove", &target.path, error))?;
        outcome.changed = true;
        outcome.removed_file = true;
    }
    outcome.removed_directories =
        remove_created_directories(&target.path, scope_directory(target, paths), true)?;
    Ok(outcome)
}

/// Whether roster's plugin file is there, and whether it is the one install
/// would write now.
pub(crate) fn plugin_status(target: &HookConfigFile, expected: Option<&HookCommands>) -> HookStatus {
    let report = |state, detail: String| HookStatus { target: target.clone(), state, detail };
    match read_plugin(target) {
        Ok(None) => report(HookState::NotInstalled, "no such file".to_owned()),
        Err(HookConfigError::Unusable { reason, .. }) => report(HookState::Unparseable, reason),
        Err(error) => report(HookState::Unreadable, error.to_string()),
        Ok(Some(text)) => {
            let commands = plugin_commands(&text);
            let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
            if let Some(broken) = broken_programs_report(target, &commands) {
                return broken;
            }
            let current = expected.and_then(|commands| plugin_text(target.harness, commands));
            let mut detail = match current {
                Some(current) if current != text => format!(
                    "roster's plugin is present but differs from what install writes now; run roster-hooks install {}",
                    target.harness
                ),
                _ => format!("roster's {} plugin present", target.harness),
            };
            for note in build_directory_notes(target, &commands) {
                detail.push_str("; ");
                detail.push_str(&note);
            }
            report(HookState::Installed, detail)
        }
    }
}

/// The commands a plugin file of roster's runs: the string literals of
/// its `const SESSION_START`, `SESSION_END` and `STATE` lines, as
/// [`plugin_text`] writes them.
fn plugin_commands(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let literal = ["const SESSION_START = ", "const SESSION_END = ", "const STATE = "]
                .into_iter()
                .find_map(|prefix| line.strip_prefix(prefix))?;
            serde_json::from_str::<String>(literal.strip_suffix(';')?).ok()
        })
        .collect()
}

/// The plugin file's text when it is roster's, `None` when there is none; a
/// file that is not roster's, or not a regular file, is refused.
fn read_plugin(target: &HookConfigFile) -> Result<Option<String>, HookConfigError> {
    let metadata = match fs::symlink_metadata(&target.path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(HookConfigError::io("inspect", &target.path, error)),
    };
    if !metadata.is_file() {
        return Err(HookConfigError::unusable(&target.path, "it is not a regular file"));
    }
    let text =
        fs::read_to_string(&target.path).map_err(|error| HookConfigError::io("read", &target.path, error))?;
    if !text.starts_with(PLUGIN_MARKER) {
        return Err(HookConfigError::unusable(
            &target.path,
            "it is a plugin roster-hooks did not write (its first line is not roster's)",
        ));
    }
    Ok(Some(text))
}

/// A plugin is code the harness runs: only its owner may change it.
fn plugin_mode(scope: Scope) -> u32 {
    match scope {
        Scope::User => 0o600,
        Scope::Project => 0o644,
    }
}

/// `text` as a JavaScript string literal (JSON's escaping is valid there).
fn js_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn each_plugin_passes_on_every_state_event_roster_listens_to() {
        let commands = HookCommands::new(HookHarness::Amp, None, None).unwrap();
        let amp = plugin_text(HookHarness::Amp, &commands).unwrap();
        for name in crate::activity_event_names(crate::Harness::Amp) {
            assert!(amp.contains(&format!("amp.on(\"{name}\"")), "amp's plugin does not pass on {name}");
        }
        let opencode = plugin_text(HookHarness::Opencode, &commands).unwrap();
        let listed = serde_json::to_string(&crate::activity_event_names(crate::Harness::Opencode)).unwrap();
        assert!(opencode.contains(&format!("const STATE_EVENTS = new Set({listed});")), "{opencode}");
    }

    #[test]
    fn a_plugins_commands_are_read_back_as_written() {
        for harness in [HookHarness::Opencode, HookHarness::Amp] {
            let commands =
                HookCommands::new(harness, Some(Path::new("/opt/it's \"here\"")), Some(Path::new("/r")))
                    .unwrap();
            let text = plugin_text(harness, &commands).unwrap();
            let expected = match harness {
                HookHarness::Amp => vec![commands.session_start.clone(), commands.state_for_any_event()],
                _ => vec![
                    commands.session_start.clone(),
                    commands.session_end.clone(),
                    commands.state_for_any_event(),
                ],
            };
            assert_eq!(plugin_commands(&text), expected, "{harness}");
        }
    }
}
