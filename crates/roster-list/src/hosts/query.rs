//! One question put to every host of `roster-list --host` (docs/contract.md
//! §6.7): the ssh command, the connect timeout, and the flags forwarded to
//! each host's roster-list (the filters; `--dir` and the output flags stay
//! here); and asking one host for its listing within a deadline.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use cli_support::{BadInput, process_env_os};

use super::answer::{Answered, HostNote, Unanswered, notes_of_stderr};
use super::local::list_here;
use super::rows::parse_rows;
use super::ssh::{
    HostFailure, SSH_COMMAND_VARIABLE, failure_of, last_words, remote_command_line, ssh_call, ssh_words,
};
use super::target::{Host, Place};
use crate::listing::ListArgs;

/// How long a host may take to answer once connected: a listing of
/// 100,000 records takes seconds, a host that says nothing for this long
/// is hung, and its ssh is killed.
const ANSWER_GRACE: Duration = Duration::from_secs(30);

/// What every host is asked, and how.
#[derive(Clone, Debug)]
pub struct Query {
    /// `ssh` or `ROSTER_SSH_COMMAND`'s words.
    pub ssh: Vec<String>,
    pub connect_timeout: Duration,
    /// The filters, as `--flag=value` words for the remote roster-list.
    pub forwarded: Vec<String>,
}

impl Query {
    /// The question `args` ask. A relative `--cwd` is refused: it would
    /// name a directory of this machine's shell, not the other host's.
    pub fn of_args(args: &ListArgs) -> Result<Query, BadInput> {
        let ssh = ssh_words(process_env_os(SSH_COMMAND_VARIABLE)).map_err(BadInput)?;
        let mut forwarded = Vec::new();
        if args.all {
            forwarded.push("--all".to_owned());
        }
        if args.no_adopt {
            forwarded.push("--no-adopt".to_owned());
        }
        if args.common.quiet {
            forwarded.push("--quiet".to_owned());
        }
        for (flag, value) in [
            ("--agent", &args.agent),
            ("--harness", &args.harness),
            ("--session-id", &args.session_id),
            ("--state", &args.state_words()),
        ] {
            if let Some(value) = value {
                forwarded.push(format!("{flag}={value}"));
            }
        }
        if let Some(cwd) = &args.cwd {
            let text = cwd.to_str().filter(|_| cwd.is_absolute()).ok_or_else(|| {
                BadInput(format!(
                    "--cwd {} with --host: give an absolute directory in UTF-8, as each host names it",
                    cli_support::escape_path_for_terminal(cwd)
                ))
            })?;
            forwarded.push(format!("--cwd={text}"));
        }
        Ok(Query { ssh, connect_timeout: Duration::from_secs(u64::from(args.connect_timeout)), forwarded })
    }

    /// The remote command line for a listing (`--watch`: the watch's).
    pub fn remote_line(&self, watch: bool) -> String {
        let mut arguments = vec!["--format".to_owned(), "json".to_owned()];
        if watch {
            arguments.push("--watch".to_owned());
        }
        arguments.extend(self.forwarded.iter().cloned());
        remote_command_line(&arguments)
    }
}

/// Asks one host for its listing: `local` in-process, any other through
/// ssh, killed when it has not answered within the connect timeout and
/// `ANSWER_GRACE`.
pub fn ask(host: &Host, query: &Query, args: &ListArgs) -> Result<Answered, Unanswered> {
    let Place::Remote { destination, port } = &host.place else { return list_here(args) };
    let mut command =
        ssh_call(&query.ssh, destination, *port, query.connect_timeout, &query.remote_line(false));
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let unanswered = |failure: HostFailure, what: String| Unanswered {
        note: HostNote {
            host: host.given.clone(),
            kind: failure.kind().to_owned(),
            message: format!(
                "{}: {what}; {}",
                cli_support::escape_for_terminal(&host.given),
                failure.advice()
            ),
        },
    };
    let child = command.spawn().map_err(|error| {
        unanswered(
            HostFailure::Unreachable,
            format!(
                "could not start {}: {error}",
                cli_support::escape_path_for_terminal(Path::new(&query.ssh[0]))
            ),
        )
    })?;
    let deadline = query.connect_timeout + ANSWER_GRACE;
    let Some(finished) = finish_within(child, deadline) else {
        return Err(unanswered(
            HostFailure::Unreachable,
            format!("no answer within {} s, ssh killed", deadline.as_secs()),
        ));
    };
    let said = last_words(&finished.stderr).map(|words| format!(": {words}")).unwrap_or_default();
    let exit = finished.status.map_or_else(|| "killed by a signal".to_owned(), |code| format!("exit {code}"));
    if finished.status != Some(0) {
        let failure = failure_of(finished.status, &finished.stderr);
        let what = match failure {
            HostFailure::Unreachable => format!("unreachable through ssh ({exit}{said})"),
            HostFailure::WithoutRoster => format!("no roster-list there ({exit}{said})"),
            HostFailure::OlderContract => format!("an older roster-list refused the flags ({exit}{said})"),
            HostFailure::Unreadable => format!("roster-list failed there ({exit}{said})"),
        };
        return Err(unanswered(failure, what));
    }
    let rows = parse_rows(&finished.stdout)
        .map_err(|why| unanswered(HostFailure::Unreadable, format!("answered {why}{said}")))?;
    Ok(Answered { rows, notes: notes_of_stderr(&finished.stderr, &host.given) })
}

/// What a child printed and how it ended (`None`: killed by a signal).
struct Finished {
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// Reads the child's stdout and stderr to their ends and waits for it,
/// unless `deadline` passes first: then it is killed and `None` returned.
fn finish_within(mut child: Child, deadline: Duration) -> Option<Finished> {
    let (sender, receiver) = mpsc::channel();
    let mut stdout = child.stdout.take()?;
    let mut stderr = child.stderr.take()?;
    let stderr_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    });
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        let _ = sender.send(bytes);
    });
    let stdout = match receiver.recv_timeout(deadline) {
        Ok(bytes) => bytes,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
    };
    let status = child.wait().ok()?.code();
    let stderr = stderr_reader.join().unwrap_or_default();
    Some(Finished { status, stdout, stderr })
}
