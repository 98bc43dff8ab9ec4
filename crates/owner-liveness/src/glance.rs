//! A glance at a process: what `/proc/<pid>` shows of it (its owner, start
//! tick, terminal and whether it has exited), all of one process. The verdict takes it to prove
//! alive an owner that recorded no pidfs inode (a harness's own session
//! file) without a pidfd, in fewer and cheaper system calls; whatever it
//! cannot prove, the full rules judge through a pidfd.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::OnceLock;

use nix::fcntl::AtFlags;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, fstat, fstatat};

use crate::interrupted::retry_interrupted;
use crate::pid::Pid;
use crate::proc_read::{STAT_BUFFER_BYTES, read_small_fd};
use crate::proc_stat::parse_proc_stat;

/// `PROC_SUPER_MAGIC` from `<linux/magic.h>`.
const PROC_SUPER_MAGIC: i64 = 0x9fa0;

/// What `/proc/<pid>` showed, all of the process its stat file was opened
/// on: the kernel binds an open file there to its process (a read after
/// that process is reaped fails; it never describes a newcomer at the
/// pid), and the owner is told while that process still holds the pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcGlance {
    /// The directory's owner: the process's effective uid, as a capture
    /// records it.
    pub uid: u32,
    /// Field 22, as this reader's time namespace shows it.
    pub start_ticks: u64,
    /// Field 7, the controlling terminal (0 without one).
    pub terminal: u64,
    /// Field 3 says zombie (`Z`) or dead (`X`): the process, or at least its
    /// leader, has exited. Only a pidfd tells whether its threads still run.
    pub exited: bool,
    /// Field 38 shows a thread-group leader, a process: `/proc/<tid>` shows
    /// a thread of another process at its id too, which no pidfd opens on.
    pub leader: bool,
}

/// `/proc`, opened once a process, when it is procfs and shows this
/// process's own pid namespace: a glance through any other `/proc` could
/// describe another process than the pid names here, and is not taken.
struct ProcDirectory {
    directory: OwnedFd,
    device: u64,
}

static PROC_DIRECTORY: OnceLock<Option<ProcDirectory>> = OnceLock::new();

fn proc_directory() -> Option<&'static ProcDirectory> {
    PROC_DIRECTORY
        .get_or_init(|| {
            let directory = retry_interrupted(|| {
                nix::fcntl::open(
                    "/proc",
                    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
                    Mode::empty(),
                )
            })
            .ok()?;
            let filesystem = retry_interrupted(|| nix::sys::statfs::fstatfs(directory.as_fd())).ok()?;
            // The magic's integer type is the C library's: the cast is a
            // no-op on glibc's 64-bit targets only.
            #[allow(clippy::unnecessary_cast)]
            let is_procfs = filesystem.filesystem_type().0 as i64 == PROC_SUPER_MAGIC;
            let device = retry_interrupted(|| fstat(directory.as_fd())).ok()?.st_dev;
            (is_procfs && shows_only_this_pid_namespace(&directory))
                .then_some(ProcDirectory { directory, device })
        })
        .as_ref()
}

/// Whether the procfs open at `directory` is this process's own pid
/// namespace's: its `self/status` names this process by one pid alone
/// (`NSpid` lists the pid in the namespace of the procfs and in each one
/// below it down to the process's own, so a procfs of an ancestor
/// namespace shows two or more, whatever `self` says).
fn shows_only_this_pid_namespace(directory: &OwnedFd) -> bool {
    let Ok(status) = retry_interrupted(|| {
        openat(directory.as_fd(), "self/status", OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty())
    }) else {
        return false;
    };
    // Room for a long `Groups` line before `NSpid`; a status larger than
    // that leaves the glance untaken, which costs time, never truth.
    let mut buffer = vec![0u8; 64 * 1024];
    let Ok(text) = read_small_fd(&status, &mut buffer) else { return false };
    let Some(pids) = text.split(|&byte| byte == b'\n').find_map(|line| line.strip_prefix(b"NSpid:")) else {
        return false;
    };
    let own = std::process::id().to_string();
    let mut pids = pids.split(|byte| byte.is_ascii_whitespace()).filter(|pid| !pid.is_empty());
    pids.next() == Some(own.as_bytes()) && pids.next().is_none()
}

/// Glances at the process at `pid`; `None` when the glance shows nothing
/// to go by (no such process, a `/proc` that hides it or is not this pid
/// namespace's, a line that does not parse): the caller judges in full.
pub(crate) fn glance_at_process(pid: Pid) -> Option<ProcGlance> {
    let proc = proc_directory()?;
    let directory_name = pid.to_string();
    let stat_file = retry_interrupted(|| {
        openat(
            proc.directory.as_fd(),
            format!("{directory_name}/stat").as_str(),
            OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOCTTY | OFlag::O_NOFOLLOW,
            Mode::empty(),
        )
    })
    .ok()?;
    // The owner of the directory, not of the stat file: the directory shows
    // the effective uid always, a file in it shows root while the process
    // is not dumpable (a live owner that hardens itself would look like
    // another process). It is looked up by its pid, after the file was
    // opened and before the file is read: a read that succeeds proves the
    // file's process was not reaped yet, so the pid was still its own when
    // the directory was looked up, and the owner is that process's too.
    let owner = retry_interrupted(|| {
        fstatat(proc.directory.as_fd(), directory_name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
    })
    .ok()?;
    if owner.st_dev != proc.device {
        return None;
    }
    let mut buffer = [0u8; STAT_BUFFER_BYTES];
    let line = read_small_fd(&stat_file, &mut buffer).ok()?;
    let stat = parse_proc_stat(line).ok()?;
    Some(ProcGlance {
        uid: owner.st_uid,
        start_ticks: stat.start_ticks,
        terminal: stat.tty_nr,
        exited: matches!(stat.state, 'Z' | 'X' | 'x'),
        leader: stat.exit_signal.is_some_and(|signal| signal != -1),
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn a_glance_at_this_process_shows_what_its_stat_line_and_owner_say() {
        let pid = Pid::new(std::process::id()).unwrap();
        let glance = glance_at_process(pid).expect("this process's own /proc is procfs and shows it");
        let stat = crate::identity::read_proc_stat(pid).unwrap();
        assert_eq!(glance.start_ticks, stat.start_ticks);
        assert_eq!(glance.terminal, stat.tty_nr);
        assert_eq!(glance.uid, std::fs::metadata(format!("/proc/{pid}")).unwrap().uid());
        assert!(!glance.exited);
        assert!(glance.leader);
    }

    #[test]
    fn a_glance_at_a_thread_of_this_process_tells_it_is_no_process() {
        let (tid_sender, tid_receiver) = std::sync::mpsc::channel();
        let (done_sender, done_receiver) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            tid_sender.send(nix::unistd::gettid().as_raw()).unwrap();
            let _ = done_receiver.recv();
        });
        let tid = Pid::new(u32::try_from(tid_receiver.recv().unwrap()).unwrap()).unwrap();
        let glance = glance_at_process(tid);
        done_sender.send(()).unwrap();
        thread.join().unwrap();
        let glance = glance.expect("/proc/<tid> shows a thread");
        assert!(!glance.leader, "{glance:?}");
    }

    /// The variable that makes a re-executed copy of this test binary
    /// answer, inside new namespaces, whether it would glance through its
    /// `/proc`.
    const ANSWER_VARIABLE: &str = "OWNER_LIVENESS_GLANCE_ANSWER";

    #[test]
    fn only_a_proc_of_this_processs_own_pid_namespace_is_glanced_through() {
        if std::env::var_os(ANSWER_VARIABLE).is_some() {
            println!("glances: {}", proc_directory().is_some());
            return;
        }
        let in_new_pid_namespace = |mount_its_proc: bool| {
            let mut unshare = std::process::Command::new("unshare");
            unshare.args(["--pid", "--fork"]);
            if mount_its_proc {
                unshare.args(["--mount", "--mount-proc"]);
            }
            let output = unshare
                .arg(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "glance::tests::only_a_proc_of_this_processs_own_pid_namespace_is_glanced_through",
                ])
                .args(["--nocapture", "--test-threads=1"])
                .env(ANSWER_VARIABLE, "1")
                .output()
                .expect("unshare runs (util-linux; as root)");
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
            stdout
        };
        // The parent namespace's /proc: its `self` is this process under
        // another pid, and a pid read there names another process.
        assert!(in_new_pid_namespace(false).contains("glances: false"));
        assert!(in_new_pid_namespace(true).contains("glances: true"));
    }

    #[test]
    fn a_glance_at_a_non_dumpable_owner_shows_its_effective_uid() {
        use nix::unistd::{ForkResult, Uid, fork, pipe, read, setresuid, write};
        assert!(Uid::effective().is_root(), "this test changes a child's uid: run it as root");
        let (ready_reader, ready_writer) = pipe().unwrap();
        // SAFETY: the child makes system calls only, then waits to be killed.
        let child = match unsafe { fork() }.unwrap() {
            ForkResult::Child => {
                let uid = Uid::from_raw(4321);
                // Changing the effective uid makes the process non-dumpable.
                let dropped = setresuid(uid, uid, uid).is_ok();
                let _ = write(&ready_writer, &[u8::from(dropped)]);
                loop {
                    nix::unistd::pause();
                }
            }
            ForkResult::Parent { child } => child,
        };
        let mut dropped = [0u8];
        assert_eq!(read(&ready_reader, &mut dropped).unwrap(), 1);
        let pid = Pid::new(u32::try_from(child.as_raw()).unwrap()).unwrap();
        let stat_file_owner = std::fs::metadata(format!("/proc/{pid}/stat")).map(|metadata| metadata.uid());
        let glance = glance_at_process(pid);
        let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
        let _ = nix::sys::wait::waitpid(child, None);
        assert_eq!(dropped, [1], "the child could not change its uid");
        assert_eq!(stat_file_owner.unwrap(), 0, "the stat file of a non-dumpable process shows root");
        assert_eq!(glance.expect("a live child is glanced at").uid, 4321);
    }

    #[test]
    fn a_glance_at_a_zombie_says_it_exited_and_at_a_reaped_one_shows_nothing() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = Pid::new(child.id()).unwrap();
        // Not waited for: it stays a zombie until reaped below.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let glance = glance_at_process(pid).expect("an unreaped child is glanced at");
            if glance.exited {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "the child never became a zombie");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child.wait().unwrap();
        assert_eq!(glance_at_process(pid), None);
    }
}
