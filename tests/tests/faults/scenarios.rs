//! The tool paths the fault table covers, the registry and home they run
//! against, and what must hold after each run however it ended.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use anyhow::{Context, bail};
use owner_liveness::OwnerIdentity;
use registry_core::messages::{MessageId, OutcomeKind, message_status};
use registry_core::{Parsed, RosterDir, Timestamp, parse_record};

use tests::owners::PausedOwner;
use tests::seed::{SeededRegistry, realistic_record};

/// One tool path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    Register,
    RegisterHook,
    ListText,
    ListJson,
    Prune,
    PruneMany,
    PruneCurrentHook,
    StateHook,
    ConsentArm,
    ConsentDisarm,
    ConsentShouldArm,
    HooksInstall,
    HooksUninstall,
    Send,
    DeliverHook,
}

impl Scenario {
    pub const ALL: [Scenario; 15] = [
        Scenario::Register,
        Scenario::RegisterHook,
        Scenario::ListText,
        Scenario::ListJson,
        Scenario::Prune,
        Scenario::PruneMany,
        Scenario::PruneCurrentHook,
        Scenario::StateHook,
        Scenario::ConsentArm,
        Scenario::ConsentDisarm,
        Scenario::ConsentShouldArm,
        Scenario::HooksInstall,
        Scenario::HooksUninstall,
        Scenario::Send,
        Scenario::DeliverHook,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Scenario::Register => "register",
            Scenario::RegisterHook => "register --hook",
            Scenario::ListText => "list",
            Scenario::ListJson => "list --json",
            Scenario::Prune => "prune",
            Scenario::PruneMany => "prune, many dead",
            Scenario::PruneCurrentHook => "prune --current --hook",
            Scenario::StateHook => "state --hook",
            Scenario::ConsentArm => "consent arm",
            Scenario::ConsentDisarm => "consent disarm",
            Scenario::ConsentShouldArm => "consent should-arm",
            Scenario::HooksInstall => "hooks install",
            Scenario::HooksUninstall => "hooks uninstall",
            Scenario::Send => "send",
            Scenario::DeliverHook => "state --hook, delivering",
        }
    }

    fn tool(self) -> &'static str {
        match self {
            Scenario::Register | Scenario::RegisterHook => "roster-register",
            Scenario::ListText | Scenario::ListJson => "roster-list",
            Scenario::Prune | Scenario::PruneMany | Scenario::PruneCurrentHook => "roster-prune",
            Scenario::ConsentArm | Scenario::ConsentDisarm | Scenario::ConsentShouldArm => "roster-consent",
            Scenario::HooksInstall | Scenario::HooksUninstall => "roster-hooks",
            Scenario::StateHook | Scenario::DeliverHook => "roster-state",
            Scenario::Send => "roster-send",
        }
    }

    pub fn hook_mode(self) -> bool {
        matches!(
            self,
            Scenario::RegisterHook | Scenario::PruneCurrentHook | Scenario::StateHook | Scenario::DeliverHook
        )
    }

    /// The registry the scenario runs against, in a run directory.
    fn registry(self) -> &'static str {
        match self {
            Scenario::PruneMany => MANY_DEAD_REGISTRY,
            _ => "roster",
        }
    }
}

/// The session id of this process's session, which messages wait for.
const SELF_SESSION: &str = "faults-self";
/// How many messages wait for it.
const WAITING: usize = 3;

/// Runs `command`, which must succeed.
fn run_checked(mut command: Command) -> anyhow::Result<Output> {
    let output = command.stdin(std::process::Stdio::null()).output().context("run a tool")?;
    if !output.status.success() {
        bail!("{command:?} failed without faults: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(output)
}

/// A registry of the live records and [`MANY_DEAD`] dead ones (and their
/// session-id index entries): enough for prune to judge on several threads
/// while one thread removes records and another their index entries.
const MANY_DEAD_REGISTRY: &str = "roster-many";
const MANY_DEAD: usize = 1_100;

/// The owners and files every run starts from. `template` is copied for
/// each run, so no run sees another's leftovers.
pub struct Fixture {
    pub template: PathBuf,
    /// The many-dead registry, copied only for the runs that use it.
    many_dead_template: PathBuf,
    /// The owners of the many-dead registry's dead records.
    many_dead_pids: Vec<u32>,
    binaries: PathBuf,
    /// Live owners with records; the first is the one `prune --current` ends.
    live: Vec<(PausedOwner, OwnerIdentity)>,
    dead_pid: u32,
    /// A live owner with no record, which register registers.
    newcomer: PausedOwner,
    /// This process: an ancestor of every tool run, so consent may arm it;
    /// registered as a Claude Code session (`SELF_SESSION`) with messages
    /// waiting, so that a delivery hook run under it hands them over.
    self_pid: u32,
    /// The ids of the messages waiting for this process's session, in order.
    waiting: Vec<String>,
    /// The record bytes of every live owner, as seeded.
    live_records: BTreeMap<u32, Vec<u8>>,
    settings_before_install: Vec<u8>,
    settings_after_install: Vec<u8>,
    settings_after_uninstall: Vec<u8>,
}

/// Where one run's copy of the template is, and when the run began.
pub struct RunDirectory {
    pub root: PathBuf,
    pub started: SystemTime,
}

const SETTINGS: &str = "home/.claude/settings.json";
const INSTALLED_SETTINGS: &str = "home-installed/.claude/settings.json";

impl Fixture {
    pub fn create(scratch: &Path, binaries: &Path) -> anyhow::Result<Fixture> {
        let template = scratch.join("template");
        std::fs::create_dir_all(template.join("work"))?;
        std::fs::create_dir_all(template.join("home/.claude"))?;
        let work = template.join("work");
        let registry = SeededRegistry::create(&template.join("roster"))?;
        let mut live = Vec::new();
        let mut live_records = BTreeMap::new();
        for ordinal in 0..3 {
            let owner = PausedOwner::fork()?;
            let identity = owner.identity()?;
            let path = registry.write(&realistic_record(&identity, ordinal, &work)?)?;
            live_records.insert(identity.pid.get(), std::fs::read(&path)?);
            live.push((owner, identity));
        }
        let dead = PausedOwner::fork()?;
        let dead_identity = dead.identity()?;
        drop(dead);
        registry.write(&realistic_record(&dead_identity, 9, &work)?)?;
        // A temporary a crashed writer left two hours ago: prune's to remove.
        let old_temporary = registry.sessions.join(".tmp-crashed.json.1.0.0");
        std::fs::write(&old_temporary, b"{")?;
        let two_hours_ago = SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::options().write(true).open(&old_temporary)?.set_modified(two_hours_ago)?;
        let newcomer = PausedOwner::fork()?;
        let self_pid = std::process::id();

        // The many-dead registry: a copy of the live records, then the dead
        // ones (owners forked, captured, killed and reaped).
        let many_dead_template = scratch.join("many-dead-template");
        std::fs::create_dir_all(&many_dead_template)?;
        copy_tree(&registry.root, &many_dead_template.join(MANY_DEAD_REGISTRY))?;
        let many_dead = SeededRegistry::create(&many_dead_template.join(MANY_DEAD_REGISTRY))?;
        let mut dead_identities = Vec::new();
        for _ in 0..MANY_DEAD {
            let owner = PausedOwner::fork()?;
            dead_identities.push(owner.identity()?);
            drop(owner);
        }
        let mut many_dead_pids = Vec::new();
        for (ordinal, identity) in dead_identities.iter().enumerate() {
            many_dead.write(&realistic_record(identity, 1_000 + ordinal, &work)?)?;
            many_dead_pids.push(identity.pid.get());
        }

        let settings_before_install =
            b"{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\n    ]\n  }\n}\n"
                .to_vec();
        std::fs::write(template.join(SETTINGS), &settings_before_install)?;
        let mut fixture = Fixture {
            template: template.clone(),
            many_dead_template,
            many_dead_pids,
            binaries: binaries.to_owned(),
            live,
            dead_pid: dead_identity.pid.get(),
            newcomer,
            self_pid,
            waiting: Vec::new(),
            live_records,
            settings_before_install: settings_before_install.clone(),
            settings_after_install: Vec::new(),
            settings_after_uninstall: Vec::new(),
        };
        // A clean install gives the bytes an install writes and the home an
        // uninstall starts from; a clean uninstall gives what it writes.
        fixture.run_clean(Scenario::HooksInstall, &template)?;
        fixture.settings_after_install = std::fs::read(template.join(SETTINGS))?;
        copy_tree(&template.join("home"), &template.join("home-installed"))?;
        let _ = std::fs::remove_file(template.join("home/.claude/settings.json.roster-backup"));
        std::fs::write(template.join(SETTINGS), &settings_before_install)?;
        let uninstall_probe = scratch.join("uninstall-probe");
        copy_tree(&template, &uninstall_probe)?;
        fixture.run_clean(Scenario::HooksUninstall, &uninstall_probe)?;
        fixture.settings_after_uninstall = std::fs::read(uninstall_probe.join(INSTALLED_SETTINGS))?;
        std::fs::remove_dir_all(&uninstall_probe)?;
        // The marker should-arm finds, and disarm and arm replace.
        fixture.run_clean(Scenario::ConsentArm, &template)?;
        // This process as a session, its consent armed above, and the
        // messages a delivery hands it.
        let mut register = Command::new(binaries.join("roster-register"));
        register.arg("--dir").arg(template.join("roster")).args(["--pid", &self_pid.to_string()]);
        register
            .args(["--harness", "claude-code", "--session-id", SELF_SESSION, "--quiet", "--cwd"])
            .arg(&work);
        run_checked(register)?;
        for index in 0..WAITING {
            let mut send = Command::new(binaries.join("roster-send"));
            send.arg("--dir").arg(template.join("roster")).args(["--json", "--to", SELF_SESSION]);
            send.arg(format!("FAULTS-MESSAGE-{index}: {}", "a line of text. ".repeat(20)));
            let output = run_checked(send)?;
            let answer: serde_json::Value = serde_json::from_slice(&output.stdout)?;
            fixture.waiting.push(answer["id"].as_str().context("a message id")?.to_owned());
        }
        Ok(fixture)
    }

    fn run_clean(&self, scenario: Scenario, root: &Path) -> anyhow::Result<Output> {
        let output = run_plain(self.command_for(scenario, root))?;
        if !output.status.success() {
            bail!("{} failed without faults: {}", scenario.label(), String::from_utf8_lossy(&output.stderr));
        }
        Ok(output)
    }

    /// The tool's program and arguments for `scenario` in the run directory
    /// `root`, with the environment and working directory set.
    pub fn command_for(&self, scenario: Scenario, root: &Path) -> Command {
        self.wrap(None, scenario, root)
    }

    /// The command under `strace`: with `inject`, one fault; with `log`,
    /// the log every call goes to.
    pub fn wrap(&self, strace: Option<(&Path, &[String])>, scenario: Scenario, root: &Path) -> Command {
        let program = self.binaries.join(scenario.tool());
        let mut command = match strace {
            Some((strace, options)) => {
                let mut command = Command::new(strace);
                command.args(["-f", "-qq"]).args(options).arg("--").arg(&program);
                command
            }
            None => Command::new(&program),
        };
        let roster = root.join(scenario.registry());
        let work = root.join("work");
        let home = match scenario {
            Scenario::HooksUninstall => root.join("home-installed"),
            _ => root.join("home"),
        };
        let self_pid = self.self_pid.to_string();
        let newcomer = self.newcomer.pid().to_string();
        let current = self.live.first().map(|(owner, _)| owner.pid().to_string()).unwrap_or_default();
        let dir: [&std::ffi::OsStr; 2] = ["--dir".as_ref(), roster.as_os_str()];
        match scenario {
            Scenario::Register => {
                command.args(dir).args(["--pid", &newcomer, "--harness", "claude-code", "--session-id"]);
                command.args(["faults-new", "--cwd"]).arg(&work).arg("--quiet");
            }
            Scenario::RegisterHook => {
                command.args(["--hook", "claude-code"]).args(dir).args(["--pid", &newcomer]);
            }
            Scenario::ListText => {
                command.args(dir);
            }
            Scenario::ListJson => {
                command.args(dir).args(["--format", "json"]);
            }
            Scenario::Prune | Scenario::PruneMany => {
                command.args(dir);
            }
            Scenario::PruneCurrentHook => {
                command.args(["--current", "--hook", "claude-code"]).args(dir).args(["--pid", &current]);
            }
            Scenario::StateHook => {
                command.args(["--hook", "claude-code", "--event", "PermissionRequest"]).args(dir);
            }
            Scenario::ConsentArm | Scenario::ConsentDisarm | Scenario::ConsentShouldArm => {
                let verb = match scenario {
                    Scenario::ConsentArm => "arm",
                    Scenario::ConsentDisarm => "disarm",
                    _ => "should-arm",
                };
                command.arg(verb).args(dir).args(["--pid", &self_pid, "--cwd"]).arg(&work);
            }
            Scenario::HooksInstall => {
                command.args(["install", "claude-code"]);
            }
            Scenario::HooksUninstall => {
                command.args(["uninstall", "claude-code"]);
            }
            Scenario::Send => {
                command.args(dir).args(["--json", "--to", SELF_SESSION, "FAULTS-SENT: one more"]);
            }
            Scenario::DeliverHook => {
                command.args(["--hook", "claude-code", "--event", "UserPromptSubmit"]).args(dir);
            }
        }
        command.env_clear().env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("HOME", &home);
        command.env("NO_COLOR", "1").current_dir(&work);
        match scenario {
            Scenario::RegisterHook => command.env("FAULTS_STDIN", "hook-start.json"),
            Scenario::PruneCurrentHook => command.env("FAULTS_STDIN", "hook-end.json"),
            Scenario::StateHook => command.env("FAULTS_STDIN", "hook-state.json"),
            Scenario::DeliverHook => command.env("FAULTS_STDIN", "hook-prompt.json"),
            _ => command.env("FAULTS_STDIN", ""),
        };
        command
    }

    /// Copies the template for one run of `scenario`, with the hook
    /// payloads beside it.
    pub fn prepare_run(&self, scenario: Scenario, root: &Path) -> anyhow::Result<RunDirectory> {
        copy_tree(&self.template, root)?;
        if scenario.registry() == MANY_DEAD_REGISTRY {
            copy_tree(&self.many_dead_template.join(MANY_DEAD_REGISTRY), &root.join(MANY_DEAD_REGISTRY))?;
        }
        let work = root.join("work");
        let start = serde_json::json!({
            "session_id": "faults-hook", "cwd": work, "hook_event_name": "SessionStart", "source": "startup",
        });
        // The session that ends is the first live one: its end names its
        // own session id, or `--current` keeps the record (another
        // session's end).
        let ending = self.live.first().map(|(_, identity)| tests::seed::session_id_for(0, identity));
        let end = serde_json::json!({
            "session_id": ending, "cwd": work, "hook_event_name": "SessionEnd", "reason": "logout",
        });
        // A permission asked in the first live session, found by its id.
        let state = serde_json::json!({
            "session_id": ending, "cwd": work, "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        });
        std::fs::write(root.join("hook-state.json"), serde_json::to_vec(&state)?)?;
        // A prompt in this process's session, whose messages wait.
        let prompt = serde_json::json!({
            "session_id": SELF_SESSION, "cwd": work, "hook_event_name": "UserPromptSubmit", "prompt": "go on",
        });
        std::fs::write(root.join("hook-prompt.json"), serde_json::to_vec(&prompt)?)?;
        std::fs::write(root.join("hook-start.json"), serde_json::to_vec(&start)?)?;
        std::fs::write(root.join("hook-end.json"), serde_json::to_vec(&end)?)?;
        Ok(RunDirectory { root: root.to_owned(), started: SystemTime::now() })
    }

    /// What went wrong in one run, judged by the rules of the fault table;
    /// empty when all held. `succeeded` says whether the tool did its work.
    pub fn judge(
        &self,
        scenario: Scenario,
        run: &RunDirectory,
        output: &Output,
        error: &str,
    ) -> (bool, Vec<String>) {
        let mut problems = Vec::new();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        if let Some(signal) = output.status.signal() {
            problems.push(format!("killed by signal {signal}"));
        }
        if stderr.contains("panicked") || output.status.code() == Some(101) {
            problems.push(format!("panicked: {}", stderr.trim()));
        }
        let code = output.status.code().unwrap_or(-1);
        let succeeded = self.effect_present(scenario, &run.root, &stdout, code);
        let tool = scenario.tool();
        if scenario.hook_mode() {
            if code != 0 {
                problems.push(format!("hook mode exited {code}"));
            }
            if scenario == Scenario::DeliverHook {
                problems.extend(self.delivery_invariants(run, &stdout));
            } else if !stdout.is_empty() {
                problems.push(format!("hook mode wrote to stdout: {stdout:?}"));
            }
            if !succeeded {
                let log =
                    std::fs::read_to_string(run.root.join("roster/hook-errors.log")).unwrap_or_default();
                if !log.lines().any(|line| line.contains(tool)) {
                    problems.push("the hook failed but hook-errors.log has no line for it".into());
                }
                if !stderr.starts_with(&format!("{tool}: hook: ")) {
                    problems.push(format!("the hook failed without a line on stderr: {:?}", stderr.trim()));
                }
            }
        } else if scenario == Scenario::ConsentShouldArm {
            // No output; 1 on every error (fail closed).
            if !matches!(code, 0 | 1) || !stdout.is_empty() {
                problems.push(format!("should-arm exited {code} with stdout {stdout:?}"));
            }
        } else if succeeded {
            if !matches!(code, 0 | 1) {
                problems.push(format!("did its work but exited {code}: {}", stderr.trim()));
            }
        } else {
            // A send whose session could not be judged alive is refused as
            // unknown (exit 3, contract §8): nothing goes to a session that
            // may not be there.
            let unknown_session = scenario == Scenario::Send && stderr.contains("is unknown");
            let allowed: &[i32] = if error == "EACCES" || unknown_session { &[1, 2, 3] } else { &[1] };
            if !allowed.contains(&code) {
                problems.push(format!("failed with exit {code}, not {allowed:?}: {}", stderr.trim()));
            }
            // A warning said before the failure (roster-hooks run from a
            // cargo build directory says that its hooks would point into
            // it) is not part of the failure's report, which is one line.
            let warning = format!("{tool}: warning: ");
            let report: Vec<&str> =
                stderr.trim().lines().filter(|line| !line.starts_with(&warning)).collect();
            if report.len() != 1 || !report[0].starts_with(&format!("{tool}: ")) {
                problems
                    .push(format!("failed without one `{tool}: ...` line on stderr: {:?}", stderr.trim()));
            }
        }
        if error == "EINTR" && !succeeded && scenario != Scenario::ConsentShouldArm {
            problems.push(format!("EINTR was not retried: exit {code}: {}", stderr.trim()));
        }
        let sessions = run.root.join("roster/sessions");
        let leftovers = [tests::record_file_name_here(self.dead_pid), ".tmp-crashed.json.1.0.0".to_owned()];
        if scenario == Scenario::Prune
            && error == "none"
            && leftovers.iter().any(|name| sessions.join(name).exists())
        {
            problems.push("prune without any fault kept the dead record or the old temporary".into());
        }
        if scenario == Scenario::PruneMany && error == "none" {
            let many = run.root.join(MANY_DEAD_REGISTRY);
            let left = self
                .many_dead_pids
                .iter()
                .filter(|pid| many.join(format!("sessions/{}", tests::record_file_name_here(**pid))).exists())
                .count();
            let index_entries = std::fs::read_dir(many.join("session-ids")).map_or(0, Iterator::count);
            if left != 0 || index_entries != self.live.len() {
                problems.push(format!(
                    "prune without any fault left {left} of {} dead records, and {index_entries} index entries for {} live sessions",
                    self.many_dead_pids.len(),
                    self.live.len()
                ));
            }
        }
        if scenario == Scenario::Send {
            problems.extend(self.send_invariants(run, &stdout, code));
        }
        problems.extend(self.registry_invariants(scenario, run));
        problems.extend(self.settings_invariants(scenario, &run.root));
        (succeeded, problems)
    }

    fn effect_present(&self, scenario: Scenario, root: &Path, stdout: &str, code: i32) -> bool {
        let sessions = root.join("roster/sessions");
        let record_with_id = |pid: u32, session_id: &str| {
            std::fs::read(sessions.join(tests::record_file_name_here(pid))).is_ok_and(|bytes| {
                matches!(parse_record(&bytes, owner_liveness::Pid::new(pid).expect("pid")),
                    Parsed::Record(record) if record.session_id.as_deref() == Some(session_id))
            })
        };
        let live_pids: Vec<u32> = self.live.iter().map(|(owner, _)| owner.pid().get()).collect();
        match scenario {
            Scenario::Register => code == 0 && record_with_id(self.newcomer.pid().get(), "faults-new"),
            Scenario::RegisterHook => record_with_id(self.newcomer.pid().get(), "faults-hook"),
            Scenario::ListText => {
                code == 0
                    && live_pids.iter().all(|pid| {
                        stdout.lines().any(|line| {
                            let mut words = line.split_whitespace();
                            words.next().map(|word| word.trim_end_matches('?')) == Some(&pid.to_string())
                                && !words.any(|word| word == "dead")
                        })
                    })
            }
            Scenario::ListJson => {
                code == 0
                    && serde_json::from_str::<serde_json::Value>(stdout).is_ok_and(|rows| {
                        live_pids.iter().all(|pid| {
                            rows.as_array().is_some_and(|rows| {
                                rows.iter().any(|row| row["session_pid"] == *pid && row["liveness"] != "dead")
                            })
                        })
                    })
            }
            // A fault while examining the dead record (or the temporary)
            // leaves it unproven, and prune keeps what it cannot prove dead:
            // doing its work means finishing with exit 0; the invariants
            // check that nothing live went.
            Scenario::Prune | Scenario::PruneMany => code == 0,
            Scenario::PruneCurrentHook => !sessions.join(tests::record_file_name_here(live_pids[0])).exists(),
            Scenario::StateHook => {
                std::fs::read(root.join("roster/states").join(tests::record_file_name_here(live_pids[0])))
                    .ok()
                    .and_then(|bytes| registry_core::state::StateFile::parse(&bytes))
                    .is_some_and(|state| state.state == "waiting")
            }
            Scenario::ConsentArm | Scenario::ConsentDisarm => {
                let state = if scenario == Scenario::ConsentArm { "armed" } else { "disarmed" };
                code == 0
                    && std::fs::read(
                        root.join(format!("roster/consent/{}", tests::record_file_name_here(self.self_pid))),
                    )
                    .ok()
                    .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
                    .is_some_and(|marker| marker["state"] == state)
            }
            Scenario::ConsentShouldArm => code == 0,
            Scenario::HooksInstall => {
                code == 0 && same_json(&root.join(SETTINGS), &self.settings_after_install)
            }
            Scenario::HooksUninstall => {
                code == 0 && same_json(&root.join(INSTALLED_SETTINGS), &self.settings_after_uninstall)
            }
            Scenario::Send => code == 0 && self.messages_of(root).len() == WAITING + 1,
            Scenario::DeliverHook => self.waiting.iter().all(|id| {
                self.outcome_of(root, id).is_some_and(|outcome| outcome == Some(OutcomeKind::Delivered))
            }),
        }
    }

    /// The message `id` as it stands in the run directory `root`: `None`
    /// when it cannot be found, `Some(None)` while it is pending.
    fn outcome_of(&self, root: &Path, id: &str) -> Option<Option<OutcomeKind>> {
        let roster = RosterDir::open_existing(&root.join("roster")).ok()??;
        let found = message_status(&roster, &MessageId::parse(id)?, Timestamp::now()).ok()??;
        Some(found.message.outcome.map(|outcome| outcome.kind))
    }

    /// The names of the message files in this process's session's queue.
    fn messages_of(&self, root: &Path) -> Vec<String> {
        let queue = root
            .join("roster/messages")
            .join(tests::record_file_name_here(self.self_pid).strip_suffix(".json").expect("a record name"));
        std::fs::read_dir(queue)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .filter(|name| !name.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// What a delivery promises whatever failed: stdout is nothing or one
    /// whole reply; a message reads `delivered` only when the reply holds
    /// it whole; one the reply holds is never left to be handed over again;
    /// a passing fault never refuses or expires a message for good.
    fn delivery_invariants(&self, run: &RunDirectory, stdout: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let context = if stdout.is_empty() {
            String::new()
        } else {
            match serde_json::from_str::<serde_json::Value>(stdout.trim_end()) {
                Ok(reply) if stdout.trim_end().lines().count() == 1 => {
                    reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned()
                }
                _ => {
                    problems.push(format!("stdout is not one whole reply: {stdout:?}"));
                    String::new()
                }
            }
        };
        for id in &self.waiting {
            let whole = context.contains(&format!("[roster message {id} "))
                && context.contains(&format!("[end of roster message {id}]"));
            let handed = stdout.contains(id.as_str());
            match self.outcome_of(&run.root, id) {
                None => problems.push(format!("message {id} is lost")),
                Some(Some(OutcomeKind::Delivered)) if !whole => problems
                    .push(format!("message {id} reads delivered, but the reply does not hold it whole")),
                Some(None) if handed => {
                    problems.push(format!("message {id} was handed over and waits to be handed over again"))
                }
                Some(Some(kind @ (OutcomeKind::Refused | OutcomeKind::Expired))) => {
                    problems.push(format!("a passing fault settled message {id} {kind:?} for good"))
                }
                Some(_) => {}
            }
        }
        problems
    }

    /// A send that says it failed queued nothing; one that says it queued
    /// a message queued exactly it.
    fn send_invariants(&self, run: &RunDirectory, stdout: &str, code: i32) -> Vec<String> {
        let queued = self.messages_of(&run.root).len();
        if code == 0 {
            let id = serde_json::from_str::<serde_json::Value>(stdout)
                .ok()
                .and_then(|answer| answer["id"].as_str().map(str::to_owned));
            match id {
                Some(id) if self.outcome_of(&run.root, &id) == Some(None) => Vec::new(),
                _ => vec![format!("send exited 0, but {stdout:?} names no pending message")],
            }
        } else if queued != WAITING {
            vec![format!(
                "send failed with exit {code}, yet the queue holds {queued} messages, not {WAITING}"
            )]
        } else {
            Vec::new()
        }
    }

    /// No torn record or marker, no other session's record changed or
    /// lost, no temporary of this run left, a live owner never called dead.
    fn registry_invariants(&self, scenario: Scenario, run: &RunDirectory) -> Vec<String> {
        let mut problems = Vec::new();
        let roster = run.root.join(scenario.registry());
        for (index, (owner, _)) in self.live.iter().enumerate() {
            let pid = owner.pid().get();
            let path = roster.join(format!("sessions/{}", tests::record_file_name_here(pid)));
            let ended_by_this_run = index == 0 && scenario == Scenario::PruneCurrentHook;
            match std::fs::read(&path) {
                Ok(bytes) if bytes == self.live_records[&pid] => {}
                Ok(_) => problems.push(format!("the live record {} was changed", path.display())),
                Err(_) if ended_by_this_run => {}
                Err(_) => problems.push(format!("the live record {} was lost", path.display())),
            }
        }
        for subdirectory in ["sessions", "consent", "states", "ended"] {
            let Ok(entries) = std::fs::read_dir(roster.join(subdirectory)) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Ok(bytes) = std::fs::read(entry.path()) else { continue };
                // `<pid>@<world>.json`, or an older roster's `<pid>.json`.
                let pid =
                    name.strip_suffix(".json").and_then(|stem| stem.split('@').next()?.parse::<u32>().ok());
                if let Some(pid) = pid {
                    let whole = match subdirectory {
                        "sessions" => matches!(
                            parse_record(&bytes, owner_liveness::Pid::new(pid).expect("pid")),
                            Parsed::Record(_)
                        ),
                        "states" => registry_core::state::StateFile::parse(&bytes).is_some(),
                        _ => serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(),
                    };
                    if !whole {
                        problems.push(format!("torn or unreadable {subdirectory}/{name}"));
                    }
                }
            }
        }
        for directory in [
            roster.clone(),
            roster.join("sessions"),
            roster.join("consent"),
            roster.join("session-ids"),
            roster.join("states"),
            roster.join("ended"),
            roster.join("messages"),
            roster.join("messages").join(
                tests::record_file_name_here(self.self_pid).strip_suffix(".json").expect("a record name"),
            ),
            run.root.join("home/.claude"),
            run.root.join("home-installed/.claude"),
        ] {
            let Ok(entries) = std::fs::read_dir(&directory) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let temporary = name.starts_with(".tmp-") || name.contains(".roster-tmp-");
                let from_this_run = entry
                    .metadata()
                    .and_then(|metadata| metadata.modified())
                    .is_ok_and(|modified| modified >= run.started);
                if temporary && from_this_run {
                    problems.push(format!("temporary left behind: {}/{name}", directory.display()));
                }
            }
        }
        problems
    }

    /// A settings file roster-hooks edits holds its old bytes or its new ones.
    fn settings_invariants(&self, scenario: Scenario, root: &Path) -> Vec<String> {
        let (path, before, after) = match scenario {
            Scenario::HooksInstall => (SETTINGS, &self.settings_before_install, &self.settings_after_install),
            Scenario::HooksUninstall => {
                (INSTALLED_SETTINGS, &self.settings_after_install, &self.settings_after_uninstall)
            }
            _ => return Vec::new(),
        };
        // Uninstall may reach the same settings by two roads (the backup put
        // back byte for byte, or roster's entries removed when the backup
        // cannot be read), so the new content is compared as JSON.
        match std::fs::read(root.join(path)) {
            Ok(bytes) if bytes == *before || same_json(&root.join(path), after) => Vec::new(),
            Ok(_) => vec![format!("{path} holds neither its old nor its new content")],
            Err(error) => vec![format!("{path} is gone: {error}")],
        }
    }
}

/// Whether the file at `path` holds the JSON document `expected` holds.
fn same_json(path: &Path, expected: &[u8]) -> bool {
    let parse = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).ok();
    std::fs::read(path)
        .ok()
        .and_then(|bytes| parse(&bytes))
        .is_some_and(|found| Some(found) == parse(expected))
}

/// Runs a command with the stdin its `FAULTS_STDIN` names (relative to the
/// run directory above its working directory), capturing the output.
pub fn run_plain(mut command: Command) -> anyhow::Result<Output> {
    let stdin_name = command
        .get_envs()
        .find(|(name, _)| *name == "FAULTS_STDIN")
        .and_then(|(_, value)| value.map(|value| value.to_owned()))
        .unwrap_or_default();
    let directory = command.get_current_dir().map(Path::to_owned).context("a working directory")?;
    command.env_remove("FAULTS_STDIN");
    if stdin_name.is_empty() {
        command.stdin(std::process::Stdio::null());
    } else {
        let run_root = directory.parent().context("the run directory")?;
        command.stdin(std::fs::File::open(run_root.join(stdin_name))?);
    }
    command.output().context("run a tool")
}

/// `cp -a`: modes, times and symlinks kept.
pub fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    let status = Command::new("cp").arg("-a").arg(from).arg(to).status().context("run cp")?;
    if !status.success() {
        bail!("cp -a {} {} failed", from.display(), to.display());
    }
    Ok(())
}
