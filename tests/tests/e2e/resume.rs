//! The resume proof (`resume`, docs/contract.md §6.2.1, §6.9): a real harness's TUI,
//! with roster's hooks installed, takes one turn against the fake model server and is
//! then killed with SIGKILL. The run checks that `roster-prune` keeps it as `crashed`
//! with its resume command (`roster-list --ended`), that `roster-resume --print` gives
//! that command in the session's directory, that `roster-resume` inside a real tmux
//! server opens a window running the harness there on the same session id (its own
//! session-start hook registers that id again, read back with `roster-list`), and that a
//! second `roster-resume` of the id is refused (exit 8) while it runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::fake_model_server::REPLY_TEXT;
use super::harness_processes::signal_process;
use super::real_harnesses::InstalledHarness;
use super::session_world::SessionWorld;
use super::states::{STEP_DEADLINE, TUI_START_DEADLINE, TuiSession};
use super::tui_recipes;

/// How long the resumed harness may take to start and register its session again.
const RESUMED_DEADLINE: Duration = Duration::from_secs(120);

/// How long the run waits for a resumed session to register before it types a prompt.
const PROMPT_AFTER: Duration = Duration::from_secs(20);

/// The harnesses whose resume the run proves with the real binary: their TUI runs offline
/// here and their session-start hook carries the session id.
pub const RESUMABLE_HARNESSES: [&str; 2] = ["claude-code", "gemini-cli"];

/// Why the others are not driven through a resume here.
fn not_proven(harness: &str) -> &'static str {
    match harness {
        "codex" => {
            "Codex runs roster's hooks only when trusted: its resume command (`codex resume ID`) carries no \
             --dangerously-bypass-hook-trust and the run writes no trust entries, so the resumed session \
             would never register"
        }
        "copilot" => {
            "after SIGKILL Copilot CLI's own session file keeps the id with a liveness roster cannot tell \
             here (its lock's holder could hide), so roster-resume refuses it as possibly running (exit 8); \
             when that file was not read in time, the resumed TUI ran no session-start hook before its first \
             prompt"
        }
        "opencode" => {
            "the resumed TUI (`opencode --session ID`) gave roster's plugin no session event within 120 s, \
             even after a prompt: it did not register again"
        }
        "amp" => "Amp's threads live on ampcode.com: it cannot run offline",
        _ => "no resume recipe for this harness",
    }
}

/// What the resume proof showed for one harness.
pub struct ResumeProof {
    pub lines: Vec<String>,
    /// `None`: proven; else why it failed or did not run.
    pub failure: Option<String>,
    pub not_run: Option<String>,
}

/// Runs the resume proof for one installed harness.
pub fn prove(installed: &InstalledHarness, binaries: &Path, node: &Path) -> ResumeProof {
    let harness = installed.harness;
    let mut proof = ResumeProof { lines: Vec::new(), failure: None, not_run: None };
    if !RESUMABLE_HARNESSES.contains(&harness.name) {
        proof.not_run = Some(format!("not proven with the real binary: {}", not_proven(harness.name)));
        return proof;
    }
    let recipe = match tui_recipes::recipe(harness.name) {
        Ok(recipe) => recipe,
        Err(why) => {
            proof.not_run = Some(why.to_owned());
            return proof;
        }
    };
    let mut session =
        match TuiSession::start(installed, &recipe, binaries, node, "resume", |_| Ok(()), &mut proof.lines) {
            Ok(session) => session,
            Err(error) => {
                proof.failure = Some(format!("{error:#}"));
                return proof;
            }
        };
    let mut resumed_server = None;
    let outcome =
        run(installed, &recipe, binaries, node, &mut session, &mut resumed_server, &mut proof.lines);
    let screen = session.stop();
    drop(resumed_server);
    match outcome {
        Ok(()) => {
            let _ = std::fs::remove_dir_all(&session.world.root);
        }
        Err(error) => {
            proof
                .lines
                .push(format!("the first terminal showed:\n{}", super::terminal::screen_excerpt(&screen)));
            proof.lines.push(format!("kept {} for inspection", session.world.root.display()));
            proof.failure = Some(format!("{error:#}"));
        }
    }
    proof
}

fn run(
    installed: &InstalledHarness,
    recipe: &tui_recipes::TuiRecipe,
    binaries: &Path,
    node: &Path,
    session: &mut TuiSession,
    resumed_server: &mut Option<ResumeServer>,
    lines: &mut Vec<String>,
) -> anyhow::Result<()> {
    let harness = installed.harness;
    let started = Instant::now();
    session
        .terminal
        .wait_for_text(recipe.ready, TUI_START_DEADLINE)
        .context("the TUI did not take a prompt")?;
    // One turn, so that the harness keeps a conversation to resume.
    {
        let mut drive = session.drive(harness, binaries, node);
        drive.submit("Say hello to the roster e2e")?;
        drive.wait_for_held_call("the prompt's model call")?;
    }
    session.server.let_one_through();
    session.terminal.wait_for_text(REPLY_TEXT, STEP_DEADLINE).context("the reply did not show")?;
    let row = session
        .drive(harness, binaries, node)
        .wait_for_row("a session id", STEP_DEADLINE, |row| row["session_id"].is_string())?;
    let id = row["session_id"].as_str().context("no session id")?.to_owned();
    let owner = session.owner;
    lines.push(format!(
        "session {id} of pid {owner} took a turn after {:.1} s",
        started.elapsed().as_secs_f64()
    ));

    // SIGKILL: no session end runs. Every process of the harness goes.
    for pid in session.processes.running_pids() {
        signal_process(pid, "KILL");
    }
    wait_until("the killed harness to be gone", Duration::from_secs(30), || {
        session.processes.running_pids().is_empty()
    })?;
    let world = &session.world;
    let prune = world.roster_tool(binaries, "roster-prune", node).arg("--quiet").output()?;
    ensure!(prune.status.success(), "roster-prune: {}", String::from_utf8_lossy(&prune.stderr));

    // Listed crashed, with its resume command in its directory.
    let ended = world.roster_tool(binaries, "roster-list", node).args(["--ended", "--json"]).output()?;
    ensure!(ended.status.success(), "roster-list --ended: {}", String::from_utf8_lossy(&ended.stderr));
    let ended: Value =
        serde_json::from_slice(&ended.stdout).context("roster-list --ended printed no JSON")?;
    let entry = ended
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["session_id"] == id.as_str()))
        .with_context(|| format!("no ended entry for {id}: {ended:#}"))?;
    ensure!(
        entry["how"] == "crashed",
        "the killed session is listed {}, not crashed: {entry:#}",
        entry["how"]
    );
    let expected: Vec<String> =
        match harness::Harness::parse(harness.name).map(|known| harness::resume(known, Some(&id))) {
            Some(harness::Resume::Command { argv, .. }) => argv,
            other => bail!("roster's table has no resume command for {}: {other:?}", harness.name),
        };
    let expected_argv = serde_json::json!(expected);
    ensure!(entry["resume"]["argv"] == expected_argv, "its resume command is {:#}", entry["resume"]);
    let project = world.project.display().to_string();
    ensure!(entry["resume"]["cwd"] == project.as_str(), "resumed in {:#}", entry["resume"]["cwd"]);
    lines.push(format!("listed crashed, resume: {}", entry["resume"]));

    // --print gives it, with the harness on PATH as a person has it.
    let bin = installed.executable.parent().context("the executable's directory")?.to_path_buf();
    let path = format!("{}:{}", bin.display(), base_path(world, node));
    let printed = resume_tool(world, binaries, node, &path).args(["--print", &id]).output()?;
    ensure!(printed.status.success(), "roster-resume --print: {}", String::from_utf8_lossy(&printed.stderr));
    let printed = String::from_utf8_lossy(&printed.stdout).trim().to_owned();
    let words: Vec<String> = expected.iter().map(|word| tests::shell_quote(word).into_owned()).collect();
    let expected_line = format!("cd {} && {}", tests::shell_quote(&project), words.join(" "));
    ensure!(printed == expected_line, "roster-resume --print printed {printed:?}, not {expected_line:?}");
    lines.push(format!("roster-resume --print: {printed}"));

    // In a real tmux server: a window running the harness in the project on the same id.
    let mut environment = world.base_environment(node);
    environment.retain(|(key, _)| key != "TERM" && key != "PATH");
    environment.push(("TERM".to_owned(), "xterm-256color".to_owned()));
    environment.push(("PATH".to_owned(), path.clone()));
    environment.extend(harness.environment(&session.server.base_url()));
    session.server.open_gate();
    let server = resumed_server.insert(ResumeServer::start(
        &world.root.join("resume-tmux.socket"),
        world,
        &environment,
    )?);
    let tmux_variable = server.tmux_variable()?;
    let started = resume_tool(world, binaries, node, &path)
        .env("TMUX", &tmux_variable)
        .args(["--json", &id])
        .output()?;
    ensure!(
        started.status.success(),
        "roster-resume in tmux exited {}: {}",
        started.status,
        String::from_utf8_lossy(&started.stderr)
    );
    let started: Value = serde_json::from_slice(&started.stdout).context("roster-resume printed no JSON")?;
    let started = &started[0];
    ensure!(started["outcome"] == "started", "roster-resume: {started:#}");
    let pane_pid = started["pid"].as_u64().context("no pid of the window's process")? as u32;
    let windows =
        server.run(&["list-windows", "-a", "-F", "#{window_name} #{pane_pid} #{pane_current_path}"])?;
    let window = windows
        .lines()
        .find(|line| line.split(' ').nth(1) == Some(pane_pid.to_string().as_str()))
        .with_context(|| format!("no window runs pid {pane_pid}: {windows}"))?;
    ensure!(window.starts_with(&format!("{} ", harness.name)), "the window is named otherwise: {window}");
    ensure!(window.ends_with(&format!(" {project}")), "the window is not in the project: {window}");
    lines.push(format!("roster-resume opened window {} ({window})", started["window"]));

    let window_id = started["window"].as_str().context("no window id")?.to_owned();
    let deadline = Instant::now() + RESUMED_DEADLINE;
    let prompt_after = Instant::now() + PROMPT_AFTER;
    let mut prompted = false;
    let row = loop {
        let listed = world
            .roster_tool(binaries, "roster-list", node)
            .args(["--json", "--session-id", &id])
            .output()?;
        let rows: Value = serde_json::from_slice(&listed.stdout).unwrap_or(Value::Null);
        if let Some(row) = rows.as_array().and_then(|rows| rows.first()) {
            break row.clone();
        }
        // Some harnesses run their session-start hook of a resumed session only with its
        // first prompt (Copilot CLI, opencode's plugin): a person types one.
        if !prompted && Instant::now() > prompt_after {
            prompted = true;
            server.run(&["send-keys", "-t", &window_id, "-l", "Say hello again"])?;
            std::thread::sleep(Duration::from_millis(500));
            server.run(&["send-keys", "-t", &window_id, "Enter"])?;
            lines.push(format!(
                "no registration {PROMPT_AFTER:?} after the start: a prompt was typed in the window"
            ));
        }
        if Instant::now() > deadline {
            bail!(
                "the resumed {} never registered {id} within {RESUMED_DEADLINE:?}; hook errors: {:?}; its window shows:\n{}",
                harness.name,
                world.hook_errors(),
                super::terminal::screen_excerpt(&server.screen_of(&window_id))
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    ensure!(row["session_pid"] == pane_pid, "the resumed session's owner is not the window's: {row:#}");
    ensure!(row["cwd"] == project.as_str(), "the resumed session is in {}", row["cwd"]);
    ensure!(row["harness"] == harness.name, "the resumed session is {}", row["harness"]);
    lines.push(format!(
        "its hook registered {id} again: pid {} in {} ({})",
        row["session_pid"], row["cwd"], row["liveness"]
    ));

    // The conversation is the one resumed: the window shows the turn taken before the kill.
    let shown = wait_until("the resumed window to show the earlier reply", STEP_DEADLINE, || {
        server.screen_of(&window_id).contains(REPLY_TEXT)
    });
    if let Err(error) = shown {
        bail!(
            "{error}; the resumed window shows:\n{}",
            super::terminal::screen_excerpt(&server.screen_of(&window_id))
        );
    }
    lines.push(format!("the resumed window shows the earlier turn's reply ({REPLY_TEXT:?})"));

    // While it runs, a second roster-resume is refused.
    let again = resume_tool(world, binaries, node, &path).env("TMUX", &tmux_variable).arg(&id).output()?;
    let said = String::from_utf8_lossy(&again.stderr).trim().to_owned();
    ensure!(again.status.code() == Some(8), "a second roster-resume exited {}: {said}", again.status);
    ensure!(said.contains(&format!("pid {pane_pid}")), "the refusal does not name pid {pane_pid}: {said}");
    lines.push(format!("a second roster-resume: exit 8, {said}"));
    signal_process(pane_pid, "KILL");
    Ok(())
}

/// `roster-resume --dir <roster>` with the world's environment and `path` as PATH.
fn resume_tool(world: &SessionWorld, binaries: &Path, node: &Path, path: &str) -> Command {
    let mut command = world.roster_tool(binaries, "roster-resume", node);
    command.env("PATH", path).arg("--dir").arg(&world.roster);
    command
}

fn base_path(world: &SessionWorld, node: &Path) -> String {
    world
        .base_environment(node)
        .into_iter()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| value)
        .unwrap_or_default()
}

fn wait_until(what: &str, deadline: Duration, mut done: impl FnMut() -> bool) -> anyhow::Result<()> {
    let until = Instant::now() + deadline;
    while !done() {
        ensure!(Instant::now() < until, "waited {deadline:?} for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// The tmux server `roster-resume` runs in: started with the session's environment
/// (which every window it opens inherits), one idle window first. Killed when dropped.
struct ResumeServer {
    tmux: PathBuf,
    socket: PathBuf,
}

impl ResumeServer {
    fn start(
        socket: &Path,
        world: &SessionWorld,
        environment: &[(String, String)],
    ) -> anyhow::Result<ResumeServer> {
        let tmux = tests::find_or_install_tool("tmux").context("the resume proof needs tmux")?;
        let server = ResumeServer { tmux, socket: socket.to_path_buf() };
        let output = Command::new(&server.tmux)
            .env_clear()
            .envs(environment.iter().map(|(key, value)| (key, value)))
            .arg("-S")
            .arg(&server.socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "work", "-x", "200", "-y", "50", "-c"])
            .arg(&world.project)
            .args(["--", "sleep", "3600"])
            .stdin(Stdio::null())
            .output()
            .context("starting tmux")?;
        ensure!(output.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&output.stderr));
        Ok(server)
    }

    fn run(&self, arguments: &[&str]) -> anyhow::Result<String> {
        let output = Command::new(&self.tmux)
            .env_clear()
            .arg("-S")
            .arg(&self.socket)
            .args(arguments)
            .stdin(Stdio::null())
            .output()
            .context("running tmux")?;
        ensure!(output.status.success(), "tmux {arguments:?}: {}", String::from_utf8_lossy(&output.stderr));
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// `TMUX` as a client in the first session sees it: the socket, the server's pid, the
    /// session's index.
    fn tmux_variable(&self) -> anyhow::Result<String> {
        let pid = self.run(&["display-message", "-p", "-t", "work:", "#{pid}"])?;
        Ok(format!("{},{},0", self.socket.display(), pid.trim()))
    }

    /// The screen of window `window` (`@1`).
    fn screen_of(&self, window: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", window]).unwrap_or_default()
    }
}

impl Drop for ResumeServer {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}
