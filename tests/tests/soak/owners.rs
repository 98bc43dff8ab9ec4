//! Session owners for the soak: real processes that can run
//! `roster-consent` as their own children, because consent is only ever
//! given by a verified owner, the caller itself or one of its ancestors
//! (docs/contract.md §4.1, §6.4). Each owner is this very soak binary re-executed in
//! an owner role: it reads one command per line on stdin, runs
//! `roster-consent <verb> --pid parent`, and answers one line on stdout.
//! It also runs the session's delivery hook (`deliver`), as a harness runs
//! its hooks: as its own child, so the messages are the session's to take,
//! and answers with what the hook printed, which is what the harness would
//! have received. It exits when stdin closes, so an owner never outlives
//! the soak.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use owner_liveness::{OwnerIdentity, Pid, capture_identity};

use super::tools::{Ending, run_tool};

/// The environment variable that puts a re-executed soak in the owner role.
pub const OWNER_ROLE_VARIABLE: &str = "ROSTER_SOAK_ROLE";
const OWNER_ROLE: &str = "owner";
const CONSENT_BINARY_VARIABLE: &str = "ROSTER_SOAK_CONSENT_BINARY";
const ROSTER_DIRECTORY_VARIABLE: &str = "ROSTER_SOAK_DIRECTORY";

/// Whether this process was started as a soak owner.
pub fn running_as_owner() -> bool {
    std::env::var_os(OWNER_ROLE_VARIABLE).is_some_and(|role| role == OWNER_ROLE)
}

/// The owner role's main loop; never returns.
///
/// A command line is `<verb> <kill-after-microseconds>` (0: no kill); the
/// answer is `<ending> <code> <first stderr line>` with ending `exit`,
/// `killed`, `signal` or `hung`.
pub fn serve_as_owner() -> ! {
    let consent_binary = std::env::var_os(CONSENT_BINARY_VARIABLE).map(PathBuf::from);
    let roster_directory = std::env::var_os(ROSTER_DIRECTORY_VARIABLE).map(PathBuf::from);
    let (Some(consent_binary), Some(roster_directory)) = (consent_binary, roster_directory) else {
        eprintln!("soak owner: started without {CONSENT_BINARY_VARIABLE} and {ROSTER_DIRECTORY_VARIABLE}");
        std::process::exit(2);
    };
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        let mut words = line.split_whitespace();
        let (Some(verb), Some(kill_after)) =
            (words.next(), words.next().and_then(|word| word.parse::<u64>().ok()))
        else {
            let _ = writeln!(stdout, "exit 2 soak owner: cannot read the command {line:?}");
            continue;
        };
        let kill_after = (kill_after > 0).then(|| Duration::from_micros(kill_after));
        let answer = if verb == DELIVER {
            // The session id the prompt's payload names follows.
            let session_id = words.next().unwrap_or_default();
            let state_binary = consent_binary.with_file_name("roster-state");
            let mut command = Command::new(state_binary);
            command
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .args(["--hook", "claude-code", "--event", "UserPromptSubmit", "--dir"])
                .arg(&roster_directory);
            let payload = serde_json::json!({
                "session_id": session_id, "hook_event_name": "UserPromptSubmit", "prompt": "go on",
            });
            match prompt_payload(&payload).and_then(|stdin| run_tool(command, Some(stdin), kill_after)) {
                // What the harness received, as hex: one line whatever it holds.
                Ok(run) => format!("{} {}", ending_words(&run.ending), hex(&run.stdout)),
                Err(error) => format!("exit 125 soak owner: {error:#}"),
            }
        } else {
            let mut command = Command::new(&consent_binary);
            command
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .args([verb, "--pid", "parent", "--quiet", "--dir"])
                .arg(&roster_directory);
            match run_tool(command, None, kill_after) {
                Ok(run) => format!("{} {}", ending_words(&run.ending), run.first_error_line()),
                Err(error) => format!("exit 125 soak owner: {error:#}"),
            }
        };
        if writeln!(stdout, "{}", answer.replace('\n', " ")).and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
    std::process::exit(0);
}

/// The owner command that runs the session's delivery hook at a prompt.
const DELIVER: &str = "deliver";

/// A run's ending as an answer line starts: `<ending> <code>`.
fn ending_words(ending: &Ending) -> String {
    match ending {
        Ending::Exited(code) => format!("exit {code}"),
        Ending::KilledOnPurpose => "killed 9".to_owned(),
        Ending::Signalled(signal) => format!("signal {signal}"),
        Ending::Hung => "hung 0".to_owned(),
    }
}

/// A file holding `payload`, read from its start.
fn prompt_payload(payload: &serde_json::Value) -> anyhow::Result<std::fs::File> {
    let mut file = tempfile::tempfile()?;
    serde_json::to_writer(&mut file, payload)?;
    std::io::Seek::rewind(&mut file)?;
    Ok(file)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .filter_map(|index| u8::from_str_radix(text.get(index * 2..index * 2 + 2)?, 16).ok())
        .collect()
}

/// The soak's handle on one owner process.
#[derive(Debug)]
pub struct SoakOwner {
    child: Child,
    commands: ChildStdin,
    answers: BufReader<ChildStdout>,
    pub identity: OwnerIdentity,
}

/// What an owner answered about one consent command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsentAnswer {
    pub ending: Ending,
    pub first_error_line: String,
}

impl SoakOwner {
    /// Starts an owner: this binary again, in the owner role.
    pub fn start(consent_binary: &Path, roster_directory: &Path) -> anyhow::Result<SoakOwner> {
        let executable = std::env::current_exe().context("find the soak executable")?;
        let mut child = Command::new(executable)
            .arg("0")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env(OWNER_ROLE_VARIABLE, OWNER_ROLE)
            .env(CONSENT_BINARY_VARIABLE, consent_binary)
            .env(ROSTER_DIRECTORY_VARIABLE, roster_directory)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("start an owner process")?;
        let commands = child.stdin.take().expect("stdin is piped");
        let answers = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let pid = Pid::new(child.id()).expect("a child has a non-zero pid");
        let identity = match capture_identity(pid) {
            Ok(identity) => identity,
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("capture the identity of owner {pid}: {error}");
            }
        };
        Ok(SoakOwner { child, commands, answers, identity })
    }

    pub fn pid(&self) -> Pid {
        self.identity.pid
    }

    /// Has the owner run `roster-consent <verb>`; `None` when the owner is
    /// gone (killed meanwhile).
    pub fn consent(&mut self, verb: &str, kill_after: Option<Duration>) -> Option<ConsentAnswer> {
        let micros = kill_after.map_or(0, |delay| delay.as_micros().max(1) as u64);
        let (ending, rest) = self.ask(&format!("{verb} {micros}"))?;
        Some(ConsentAnswer { ending, first_error_line: rest })
    }

    /// Sends the owner one command line and reads its answer: how the run
    /// ended, and the rest of the line.
    fn ask(&mut self, command: &str) -> Option<(Ending, String)> {
        writeln!(self.commands, "{command}").ok()?;
        self.commands.flush().ok()?;
        let mut line = String::new();
        if self.answers.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let mut words = line.trim_end().splitn(3, ' ');
        let ending = words.next()?;
        let code: i32 = words.next()?.parse().ok()?;
        let ending = match ending {
            "exit" => Ending::Exited(code),
            "killed" => Ending::KilledOnPurpose,
            "signal" => Ending::Signalled(code),
            _ => Ending::Hung,
        };
        Some((ending, words.next().unwrap_or("").to_owned()))
    }

    /// Has the owner run its session's delivery hook at a prompt of
    /// `session_id`: how the hook ended and what it printed (what the
    /// harness received); `None` when the owner is gone.
    pub fn deliver(&mut self, session_id: &str, kill_after: Option<Duration>) -> Option<(Ending, Vec<u8>)> {
        let micros = kill_after.map_or(0, |delay| delay.as_micros().max(1) as u64);
        let (ending, printed) = self.ask(&format!("{DELIVER} {micros} {session_id}"))?;
        Some((ending, unhex(&printed)))
    }

    /// Ends the owner the way a crashed harness ends: SIGKILL, then reaped.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
