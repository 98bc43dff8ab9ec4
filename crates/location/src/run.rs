//! Running a multiplexer's own command line (`tmux list-panes`, `kitty @
//! ls`) with a bound on its time: a server that hangs must not hang a
//! listing.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use owner_liveness::{Pid, PidFd, retry_interrupted};

/// What a command run to its end said.
#[derive(Clone, Debug)]
pub struct CommandAnswer {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// How often a running command is looked at where its end cannot be
/// waited for (a kernel without pidfds, or one that forbids them).
const POLL_WITHOUT_PIDFD: Duration = Duration::from_millis(2);

/// Runs `program` with `arguments`, stdin closed, for at most `bound`;
/// `Err` says why it gave no answer (not installed, could not start, ran
/// past its bound and was killed).
///
/// Its output is read as it comes and its end is waited for on a pidfd,
/// all on this thread: the answer is taken the moment the command ends
/// (looking every few milliseconds made each `tmux` question cost up to
/// one look more than tmux itself). What the command wrote is read whole;
/// a process it left behind that still holds its output open is not
/// waited for.
pub fn run_bounded(program: &str, arguments: &[String], bound: Duration) -> Result<CommandAnswer, String> {
    let started = Instant::now();
    let child = Command::new(program)
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => format!("{program} is not installed here"),
            _ => format!("{program} could not be started: {error}"),
        })?;
    // The child is this process's own and not reaped yet: its pid cannot
    // name another process while the handle is opened.
    let end = Pid::new(child.id()).and_then(|pid| PidFd::open(pid).ok());
    answer_of(program, child, end, started + bound, bound)
}

/// How long what a command left in its pipes may take to read once it has
/// ended, past its bound if need be: what it wrote is there already (a pipe
/// holds no more than its capacity), so this bounds only a process it left
/// behind that writes on and on.
const DRAIN_AFTER_THE_END: Duration = Duration::from_millis(250);

/// Reads `child`'s two streams until it ends (`end` polls readable then;
/// without it, it is looked at every `POLL_WITHOUT_PIDFD`) or `deadline`
/// passes, when it is killed. A command that ended, even at its deadline,
/// is an answer, with all it wrote.
fn answer_of(
    program: &str,
    mut child: Child,
    end: Option<PidFd>,
    deadline: Instant,
    bound: Duration,
) -> Result<CommandAnswer, String> {
    let mut streams: [Option<File>; 2] = [
        child.stdout.take().map(|out| File::from(OwnedFd::from(out))),
        child.stderr.take().map(|err| File::from(OwnedFd::from(err))),
    ];
    let mut texts = [Vec::new(), Vec::new()];
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(error) => return Err(stopped(&mut child, format!("waiting for {program}: {error}"))),
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(stopped(
                &mut child,
                format!("{program} gave no answer within {} ms", bound.as_millis()),
            ));
        }
        let mut wait = deadline - now;
        if end.is_none() {
            wait = wait.min(POLL_WITHOUT_PIDFD);
        }
        if let Err(error) = read_what_comes(&mut streams, &mut texts, end.as_ref(), wait) {
            return Err(stopped(&mut child, format!("reading what {program} printed: {error}")));
        }
    };
    // Everything it wrote is in its pipes now: read to their end, or as far
    // as they hold, without waiting for a process it left behind.
    let drain_until = deadline.max(Instant::now() + DRAIN_AFTER_THE_END);
    while streams.iter().any(Option::is_some) && Instant::now() < drain_until {
        match read_what_comes(&mut streams, &mut texts, None, Duration::ZERO) {
            Ok(true) => {}
            Ok(false) => break,
            Err(error) => return Err(format!("reading what {program} printed: {error}")),
        }
    }
    Ok(answer(status, texts))
}

/// Kills `child` and reaps it, so that nothing it does outlives the
/// question; `why` is what to say.
fn stopped(child: &mut Child, why: String) -> String {
    let _ = child.kill();
    let _ = child.wait();
    why
}

/// Waits up to `wait` for either stream to have something, or `end` to
/// poll readable, and reads what the streams hold: a stream at its end is
/// closed (`None`). `false` when nothing was ready; `true` also when a
/// signal cut the wait short, so that the caller looks again with the time
/// it has left.
fn read_what_comes(
    streams: &mut [Option<File>; 2],
    texts: &mut [Vec<u8>; 2],
    end: Option<&PidFd>,
    wait: Duration,
) -> nix::Result<bool> {
    let ready = {
        let mut watched: Vec<PollFd<'_>> = streams
            .iter()
            .flatten()
            .map(|stream| PollFd::new(stream.as_fd(), PollFlags::POLLIN))
            .chain(end.map(|end| PollFd::new(end.as_fd(), PollFlags::POLLIN)))
            .collect();
        if watched.is_empty() {
            std::thread::sleep(wait);
            return Ok(false);
        }
        // Rounded up: a wait shorter than a millisecond is a millisecond,
        // never a turn of the loop that waits for nothing.
        let millis = wait.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
        let timeout = PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX);
        match poll(&mut watched, timeout) {
            Ok(0) => return Ok(false),
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => return Ok(true),
            Err(error) => return Err(error),
        }
        let readable: Vec<bool> = watched
            .iter()
            .take(streams.iter().flatten().count())
            .map(|watched| !watched.revents().unwrap_or(PollFlags::empty()).is_empty())
            .collect();
        readable
    };
    let mut readable = ready.into_iter();
    for (stream, text) in streams.iter_mut().zip(texts.iter_mut()) {
        let Some(open) = stream else { continue };
        if !readable.next().unwrap_or(false) {
            continue;
        }
        let mut chunk = [0u8; 16 * 1024];
        match retry_interrupted(|| open.read(&mut chunk)) {
            Ok(0) | Err(_) => *stream = None,
            Ok(read) => text.extend_from_slice(&chunk[..read]),
        }
    }
    Ok(true)
}

fn answer(status: ExitStatus, [stdout, stderr]: [Vec<u8>; 2]) -> CommandAnswer {
    CommandAnswer {
        success: status.success(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    fn shell(script: &str) -> Vec<String> {
        words(&["-c", script])
    }

    /// Runs `script` under `sh` as `run_bounded` does, with the end of the
    /// command waited for on a pidfd or, as on a kernel without them, looked
    /// at every few milliseconds.
    fn run_both_ways(script: &str, bound: Duration) -> [Result<CommandAnswer, String>; 2] {
        let with_pidfd = run_bounded("sh", &shell(script), bound);
        let started = Instant::now();
        let child = Command::new("sh")
            .args(shell(script))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run sh");
        let without_pidfd = answer_of("sh", child, None, started + bound, bound);
        [with_pidfd, without_pidfd]
    }

    #[test]
    fn both_streams_are_read_whole_however_much_they_hold() {
        // More than a pipe holds on either stream, so the command waits
        // for its output to be read before it can end.
        let script =
            "head -c 300000 /dev/zero | tr '\\0' o; head -c 200000 /dev/zero | tr '\\0' e >&2; exit 3";
        for answer in run_both_ways(script, Duration::from_secs(60)) {
            let answer = answer.expect("an answer");
            assert!(!answer.success, "exit 3 is no success");
            assert_eq!(answer.stdout.len(), 300_000);
            assert!(answer.stdout.bytes().all(|byte| byte == b'o'));
            assert_eq!(answer.stderr.len(), 200_000);
            assert!(answer.stderr.bytes().all(|byte| byte == b'e'));
        }
    }

    #[test]
    fn a_command_past_its_bound_is_killed_and_said_to_have_given_no_answer() {
        let started = Instant::now();
        for answer in run_both_ways("echo started; exec sleep 60", Duration::from_millis(300)) {
            let why = answer.expect_err("no answer within the bound");
            assert_eq!(why, "sh gave no answer within 300 ms");
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the sleep was waited for");
    }

    #[test]
    fn a_process_left_behind_holding_the_output_does_not_hold_the_answer() {
        // The command ends at once; the sleep it started keeps both of its
        // streams open for a minute. Its pid is the answer, to end it here.
        let started = Instant::now();
        for answer in run_both_ways("sleep 60 & echo $!", Duration::from_secs(40)) {
            let answer = answer.expect("the command's own answer");
            assert!(answer.success);
            let left_behind: i32 = answer.stdout.trim().parse().expect("the pid it printed");
            let _ =
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(left_behind), nix::sys::signal::SIGKILL);
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the answer waited for the process left behind");
    }

    /// Spawns `script` under `sh` as `run_bounded` does.
    fn spawned(script: &str) -> Child {
        Command::new("sh")
            .args(shell(script))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run sh")
    }

    #[test]
    fn a_command_that_ended_by_its_deadline_is_answered_with_all_it_wrote() {
        // 60,000 bytes fit in a pipe, so the command ends without anyone
        // reading; it is first looked at with its deadline already past, as
        // a thread woken late would, and all of it is still the answer.
        let script = "head -c 60000 /dev/zero | tr '\\0' o; printf done >&2";
        for with_pidfd in [true, false] {
            let child = spawned(script);
            let end = with_pidfd.then(|| PidFd::open(Pid::new(child.id()).expect("a pid")).expect("a pidfd"));
            std::thread::sleep(Duration::from_millis(300));
            let answer =
                answer_of("sh", child, end, Instant::now(), Duration::ZERO).expect("it ended: an answer");
            assert!(answer.success);
            assert_eq!(answer.stdout.len(), 60_000);
            assert_eq!(answer.stderr, "done");
        }
    }

    #[test]
    fn a_stream_closed_early_leaves_the_other_read_whole() {
        // stdout closes at once; stderr carries more than a pipe holds.
        let script = "exec >&-; sleep 0.2; head -c 100000 /dev/zero | tr '\\0' e >&2";
        for answer in run_both_ways(script, Duration::from_secs(60)) {
            let answer = answer.expect("an answer");
            assert!(answer.success);
            assert_eq!(answer.stdout, "");
            assert_eq!(answer.stderr.len(), 100_000);
        }
    }

    #[test]
    fn a_program_that_is_not_there_is_said_so() {
        let why =
            run_bounded("roster-no-such-program", &[], Duration::from_secs(5)).expect_err("nothing ran");
        assert_eq!(why, "roster-no-such-program is not installed here");
    }
}
