//! Running a multiplexer's own command line (`tmux list-panes`, `kitty @
//! ls`) with a bound on its time: a server that hangs must not hang a
//! listing.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a command run to its end said.
#[derive(Clone, Debug)]
pub struct CommandAnswer {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// How often a running command is looked at.
const POLL: Duration = Duration::from_millis(2);

/// Runs `program` with `arguments`, stdin closed, for at most `bound`;
/// `Err` says why it gave no answer (not installed, could not start, ran
/// past its bound and was killed).
pub fn run_bounded(program: &str, arguments: &[String], bound: Duration) -> Result<CommandAnswer, String> {
    let mut child = Command::new(program)
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => format!("{program} is not installed here"),
            _ => format!("{program} could not be started: {error}"),
        })?;
    // Read while it runs, so that a full pipe never stops it.
    let readers = [
        child.stdout.take().map(Box::new).map(|out| out as Box<dyn Read + Send>),
        child.stderr.take().map(Box::new).map(|err| err as Box<dyn Read + Send>),
    ]
    .map(|stream| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= bound => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{program} gave no answer within {} ms", bound.as_millis()));
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(error) => return Err(format!("waiting for {program}: {error}")),
        }
    };
    let [stdout, stderr] = readers.map(|reader| reader.join().unwrap_or_default());
    Ok(CommandAnswer { success: status.success(), stdout, stderr })
}

/// Why the tmux server on a socket gave no answer.
#[derive(Debug)]
pub(crate) enum TmuxSilence {
    /// tmux could not be run, or ran past its bound: nothing is known of
    /// the server.
    NotAsked(String),
    /// tmux ran, and no server answers on the socket.
    NoServer(String),
}

/// Asks the tmux server on `socket` (`tmux -S SOCKET ARGUMENTS`) within
/// `bound`: what it printed.
pub(crate) fn ask_tmux_server(
    socket: &str,
    arguments: &[&str],
    bound: Duration,
) -> Result<String, TmuxSilence> {
    let arguments: Vec<String> =
        ["-S", socket].iter().chain(arguments).map(|word| (*word).to_owned()).collect();
    let answer = run_bounded("tmux", &arguments, bound).map_err(TmuxSilence::NotAsked)?;
    if !answer.success {
        return Err(TmuxSilence::NoServer(format!(
            "no tmux server answers on {socket}: {}",
            answer.stderr.trim()
        )));
    }
    Ok(answer.stdout)
}
