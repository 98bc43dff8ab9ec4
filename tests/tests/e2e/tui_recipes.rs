//! The e2e's table of harness TUIs: for each harness whose interactive TUI runs here, how
//! it is started, what shows when it takes a prompt, the shell command its model is asked
//! to run and the permission dialog that asks for it, the keys that approve it, and which
//! of its events each state step must come from; and what its home needs to start straight
//! at its prompt. The state, send and resume proofs drive every harness through this one
//! table: a new harness is a row.

use std::fs;

use anyhow::Context;

use super::SessionWorld;

/// The shell command the model asks to run, where running it in the project asks for
/// permission, and the file it creates there.
const COMMAND_IN_PROJECT: &str = "touch roster-e2e-approved";
const CREATED_IN_PROJECT: &str = "roster-e2e-approved";

/// How one harness's TUI is driven, and what each step must show.
pub(super) struct TuiRecipe {
    /// The arguments of the interactive start.
    pub(super) arguments: &'static [&'static str],
    /// What the screen shows once the TUI takes a prompt.
    pub(super) ready: &'static str,
    /// The shell command the model asks to run, and the file it creates, relative to the
    /// project.
    pub(super) shell_command: &'static str,
    pub(super) creates: &'static str,
    /// What the screen shows while the permission dialog for the command is open.
    pub(super) dialog: &'static str,
    /// The keys that answer the dialog "yes, once", pressed in order.
    pub(super) approve: &'static [&'static str],
    /// The events whose state each step must show, by step, as `state_source` names them
    /// after the harness's name: `Event`, or `Event:kind` for an event of several kinds.
    pub(super) working: &'static [&'static str],
    pub(super) idle: &'static [&'static str],
    pub(super) waiting: &'static [&'static str],
    pub(super) working_after_approval: &'static [&'static str],
    /// What the binary cannot show, as known of the release.
    pub(super) limits: &'static [&'static str],
}

/// The recipe of `harness`, `None` for a harness whose TUI cannot run here, with why.
pub(super) fn recipe(harness: &str) -> Result<TuiRecipe, &'static str> {
    match harness {
        // 2.1.332's default permission mode is "auto", which runs a command it judges safe
        // (a `touch` in the project) unasked: the run asks for the mode that asks.
        "claude-code" => Ok(TuiRecipe {
            arguments: &["--permission-mode", "default"],
            shell_command: COMMAND_IN_PROJECT,
            creates: CREATED_IN_PROJECT,
            ready: "? for shortcuts",
            dialog: "Do you want to proceed?",
            approve: &["1"],
            working: &["UserPromptSubmit"],
            idle: &["Stop"],
            waiting: &["PermissionRequest"],
            working_after_approval: &["PostToolUse"],
            limits: &[
                "print mode (-p) asks nobody, yet sends PermissionRequest before it refuses the command: \
                 the row says waiting for permission, with no dialog anywhere, until the turn's Stop \
                 (a hand-driven run of 2.1.332 saw it; this run does not check it)",
                "a permission answered No sends no event: the row stays waiting for permission until the \
                 next prompt (a hand-driven run of 2.1.332 saw it; this run does not check it)",
            ],
        }),
        // A model name Codex has no metadata for gets its classic tools (`exec_command`);
        // its own models get a JavaScript `exec` tool instead. The project is trusted
        // (`prepare_tui_home`): in an untrusted one 0.171 rejects a call that asks to
        // leave the sandbox without asking.
        "codex" => Ok(TuiRecipe {
            arguments: &[super::CODEX_BYPASS_HOOK_TRUST, "--model", "fake-model"],
            shell_command: COMMAND_IN_PROJECT,
            creates: CREATED_IN_PROJECT,
            ready: "? for shortcuts",
            dialog: "Would you like to run the following command?",
            approve: &["y"],
            working: &["UserPromptSubmit"],
            idle: &["Stop"],
            waiting: &["PermissionRequest"],
            working_after_approval: &["PostToolUse"],
            limits: &[
                "no record before the first prompt: the TUI sends SessionStart with it",
                "hooks run only when trusted (/hooks) or with --dangerously-bypass-hook-trust; untrusted, \
                 no state is ever shown",
            ],
        }),
        // The workspace is trusted by GEMINI_CLI_TRUST_WORKSPACE (`environment`).
        "gemini-cli" => Ok(TuiRecipe {
            arguments: &[],
            shell_command: COMMAND_IN_PROJECT,
            creates: CREATED_IN_PROJECT,
            ready: "Type your message",
            dialog: "Allow execution of",
            approve: &["1"],
            working: &["BeforeAgent"],
            idle: &["AfterAgent"],
            waiting: &["Notification:ToolPermission"],
            working_after_approval: &["AfterTool"],
            limits: &["a permission answered No (Esc) sends no event: the row stays waiting for permission \
                       until the next prompt (a hand-driven run of 0.61.0 saw it; this run does not check it)"],
        }),
        // The folder is trusted in ~/.copilot/config.json (`prepare_tui_home`): Copilot
        // runs the project's hooks only there, and `--trust-folder` is for prompt mode only.
        "copilot" => Ok(TuiRecipe {
            arguments: &[],
            shell_command: COMMAND_IN_PROJECT,
            creates: CREATED_IN_PROJECT,
            ready: "/ commands",
            dialog: "Do you want to run this command?",
            approve: &["1"],
            working: &["userPromptSubmitted"],
            idle: &["agentStop"],
            waiting: &["notification:permission_prompt"],
            working_after_approval: &["postToolUse"],
            limits: &["a permission answered No (Esc) sends no event: the row stays waiting for permission \
                       until the next prompt (a hand-driven run of 1.0.102 saw it; this run does not check it)"],
        }),
        // opencode runs a shell command inside the project without asking (its default
        // permission for `bash` is allow); touching a file outside asks for access to an
        // external directory, which is "ask" by default.
        "opencode" => Ok(TuiRecipe {
            arguments: &[],
            shell_command: "touch ../roster-e2e-approved",
            creates: "../roster-e2e-approved",
            ready: "Ask anything",
            dialog: "Permission required",
            approve: &["Enter"],
            working: &["chat.message", "session.status:busy"],
            idle: &["session.idle", "session.status:idle"],
            waiting: &["permission.asked"],
            working_after_approval: &["permission.replied", "session.status:busy"],
            limits: &[
                "a shell command inside the project runs without asking (bash is allowed by default): \
                 waiting shows for what asks, such as a directory outside it",
                "`opencode run` (headless) rejects every ask itself, about 4 ms after permission.asked: \
                 waiting flickers (a hand-driven run of 1.18.33 saw it; this run does not check it)",
            ],
        }),
        "amp" => {
            Err("Amp's sessions need ampcode.com (its service): offline only `amp plugins exec` runs, one \
                      plugin event per process, and Amp has no event for an approval it waits for")
        }
        _ => Err("no TUI recipe for this harness yet"),
    }
}

/// What a harness's TUI needs in its home to start straight at its prompt: offline, with a
/// fake key, no first-run screens.
pub fn prepare_tui_home(harness: &str, world: &SessionWorld) -> anyhow::Result<()> {
    if harness == "codex" {
        // Signed in with the fake key, as `codex login --with-api-key` writes it; the
        // project trusted, as Codex's first-run question records it.
        let codex = world.home.join(".codex");
        let auth = serde_json::json!({"auth_mode": "apikey", "OPENAI_API_KEY": "sk-fake"});
        fs::write(codex.join("auth.json"), format!("{auth:#}\n")).context("writing ~/.codex/auth.json")?;
        let config = codex.join("config.toml");
        let mut text = fs::read_to_string(&config).context("reading ~/.codex/config.toml")?;
        text.push_str(&format!("\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n", world.project.display()));
        fs::write(&config, text).context("writing ~/.codex/config.toml")?;
    }
    if harness == "copilot" {
        // The project among the trusted folders, as Copilot's trust question records it
        // when answered "remember".
        let copilot = world.home.join(".copilot");
        fs::create_dir_all(&copilot)?;
        let config = serde_json::json!({"trustedFolders": [world.project.display().to_string()]});
        fs::write(copilot.join("config.json"), format!("{config:#}\n"))
            .context("writing ~/.copilot/config.json")?;
    }
    if harness == "claude-code" {
        // Onboarding done, the fake key approved (by its last 20 characters, which is all
        // of it), the project's trust dialog accepted.
        let project = world.project.display().to_string();
        let state = serde_json::json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "customApiKeyResponses": {"approved": ["sk-ant-fake"], "rejected": []},
            "projects": {project: {"hasTrustDialogAccepted": true}},
        });
        fs::write(world.home.join(".claude.json"), format!("{state:#}\n"))
            .context("writing ~/.claude.json")?;
    }
    Ok(())
}
