//! The ancestry walk: the ppid chain from a process upward, as the facts a
//! harness pattern needs (comm, first argv entries, exe basename). The walk
//! reads each step's stat (pid, ppid, comm) as it goes, and its argv and exe
//! with it, so that a process that exits or execs later still shows what it
//! was; a walk for one named process (`--pid`) reads the argv and exe of the
//! steps up to it alone, and of the others only if something asks.

use std::sync::OnceLock;

use crate::pid::Pid;
use crate::proc_read::{STAT_BUFFER_BYTES, read_cmdline_prefix, read_small_file};
use crate::proc_stat::parse_proc_stat;

/// The most hops the walk takes (docs/contract.md §4.1).
pub const MAX_ANCESTRY_HOPS: usize = 64;

/// How many argv entries each step keeps: enough for `node --flag script`.
pub const ARGV_ENTRIES_KEPT: usize = 4;

/// The most of a `cmdline` read to find those entries (the kernel allows
/// far longer argument lists; the first entries are all a pattern needs).
const CMDLINE_BYTES_READ: usize = 64 * 1024;

/// One process of the chain.
#[derive(Clone, Debug)]
pub struct AncestorStep {
    pub pid: Pid,
    /// `None` at the top of the visible tree (ppid 0).
    pub parent: Option<Pid>,
    /// `/proc/<pid>/comm` as the stat line shows it (at most 15 bytes).
    pub comm: String,
    /// When the process started (stat field 22, clock ticks since boot as
    /// this process's time namespace counts them), when the walk read it.
    start_ticks: Option<u64>,
    /// argv and exe: given when the step is built from known facts, read
    /// from `/proc/<pid>` at the first ask when the walk found the step.
    names: OnceLock<ProgramNames>,
}

/// What a step says about the program it runs besides its comm.
#[derive(Clone, Debug, Default)]
struct ProgramNames {
    /// The first `ARGV_ENTRIES_KEPT` entries of `/proc/<pid>/cmdline`,
    /// lossy UTF-8; empty when unreadable (kernel threads, other users).
    argv: Vec<String>,
    /// Basename of `/proc/<pid>/exe`; `None` when it cannot be read.
    exe_basename: Option<String>,
}

impl AncestorStep {
    /// A step whose argv and exe are known already (a captured tree, a
    /// test's made-up one); `argv` is cut to `ARGV_ENTRIES_KEPT` entries as
    /// the walk cuts it.
    pub fn with_names(
        pid: Pid,
        parent: Option<Pid>,
        comm: String,
        mut argv: Vec<String>,
        exe_basename: Option<String>,
    ) -> AncestorStep {
        argv.truncate(ARGV_ENTRIES_KEPT);
        AncestorStep {
            pid,
            parent,
            comm,
            start_ticks: None,
            names: OnceLock::from(ProgramNames { argv, exe_basename }),
        }
    }

    /// The first `ARGV_ENTRIES_KEPT` entries of the process's argv (lossy
    /// UTF-8); empty when unreadable (kernel threads, other users).
    pub fn argv(&self) -> &[String] {
        &self.names().argv
    }

    /// Basename of the process's `/proc/<pid>/exe`; `None` when it cannot be read.
    pub fn exe_basename(&self) -> Option<&str> {
        self.names().exe_basename.as_deref()
    }

    fn names(&self) -> &ProgramNames {
        self.names.get_or_init(|| read_program_names(self.pid))
    }
}

/// Steps are equal when every fact a pattern can ask about is, whether or
/// not it has been read yet.
impl PartialEq for AncestorStep {
    fn eq(&self, other: &AncestorStep) -> bool {
        (self.pid, self.parent, &self.comm, self.argv(), self.exe_basename())
            == (other.pid, other.parent, &other.comm, other.argv(), other.exe_basename())
    }
}

impl Eq for AncestorStep {}

/// The ancestry, and why the walk stopped short of the top if it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AncestryWalk {
    pub steps: Vec<AncestorStep>,
    /// Set when a process on the way exists but its `/proc` entry could not
    /// be read (an I/O error, a resource limit): the walk is incomplete, so
    /// "not an ancestor" cannot be told from "could not look".
    pub unreadable: Option<String>,
}

/// Walks from `start` (included, as step 0) up the ppid chain, at most
/// `MAX_ANCESTRY_HOPS` steps. Stops quietly where `/proc` cannot be read:
/// the steps found so far are still true.
pub fn walk_ancestry(start: Pid) -> Vec<AncestorStep> {
    walk_ancestry_reporting(start).steps
}

/// `walk_ancestry`, saying whether a read failure cut it short.
pub fn walk_ancestry_reporting(start: Pid) -> AncestryWalk {
    walk_ancestry_with(start, read_step_checked, |_| true)
}

/// `walk_ancestry_reporting` for a caller that asks about one process,
/// `named`, and the run below it only (an owner named by `--pid`): every
/// step's stat is read as the walk goes, the argv and exe of the steps from
/// `start` up to `named` as soon as the walk reaches it, and those of any
/// other step only if something asks. An owner named that is no ancestor
/// (a process the caller only knows the pid of) costs one stat read per
/// ancestor, not three reads.
///
/// `named_started`, the start ticks of `named` when the caller read them,
/// ends the walk where `named` can no longer be above: a parent never
/// started after its child (a process is reparented only to an ancestor of
/// its parent or to another thread of its parent's process, whose stat
/// tells the leader's start), so once a step started strictly before
/// `named` did, `named` is none of the steps above it either. The steps
/// read up to there are returned; the walk is whole up to where it could
/// have found `named`.
///
/// The order holds for starts as the kernel keeps them; a reader in a time
/// namespace whose boot clock is set back sees each start shifted by the
/// offset, and a process that started before the offset's reach wraps
/// around to a start far in the future, later than its own children. A
/// `named_started` later than this process's boot clock now is such a one,
/// and ends nothing: the walk goes on to the top. (Every step below `named`
/// started after it, so when `named` did not wrap, none of them did.)
pub fn walk_ancestry_naming_up_to(start: Pid, named: Pid, named_started: Option<u64>) -> AncestryWalk {
    let named_started =
        named_started.filter(|&ticks| crate::world::boot_clock_ticks_now().is_some_and(|now| ticks <= now));
    let mut reached = false;
    walk_ancestry_with(start, read_step_stat, |steps| {
        reached = reached || name_steps_reaching(steps, named);
        reached || !started_before(steps.last(), named_started)
    })
}

/// Whether `step` is known to have started strictly before `ticks`.
fn started_before(step: Option<&AncestorStep>, ticks: Option<u64>) -> bool {
    matches!((step.and_then(|step| step.start_ticks), ticks), (Some(step), Some(ticks)) if step < ticks)
}

/// The walk from `start` up to `named`, where it stops, reading each step's
/// stat alone: for a caller that asks whether `named` is this process or an
/// ancestor (a pid of its chain), and about the steps below it only when it
/// must (their argv and exe are read then, at the first ask).
pub fn walk_ancestry_to(start: Pid, named: Pid) -> AncestryWalk {
    walk_ancestry_with(start, read_step_stat, |steps| steps.last().is_none_or(|step| step.pid != named))
}

/// When the last of `steps` is `named`, reads the argv and exe of every
/// step (the walk has just reached it) and says so.
fn name_steps_reaching(steps: &[AncestorStep], named: Pid) -> bool {
    let reached = steps.last().is_some_and(|step| step.pid == named);
    if reached {
        for step in steps {
            step.names();
        }
    }
    reached
}

/// The walk over any step reader (the real one reads `/proc`), calling
/// `walked` with the steps so far after each one; it stops when `walked`
/// says not to go on.
pub(crate) fn walk_ancestry_with(
    start: Pid,
    read: impl Fn(Pid) -> std::io::Result<AncestorStep>,
    mut walked: impl FnMut(&[AncestorStep]) -> bool,
) -> AncestryWalk {
    let mut walk = AncestryWalk { steps: Vec::new(), unreadable: None };
    let mut next = Some(start);
    while let Some(pid) = next {
        if walk.steps.len() == MAX_ANCESTRY_HOPS {
            break;
        }
        let step = match read(pid) {
            Ok(step) => step,
            // Gone (or hidden): the chain above is not ours to see.
            Err(error)
                if error.kind() == std::io::ErrorKind::NotFound
                    || error.raw_os_error() == Some(nix::libc::ESRCH) =>
            {
                break;
            }
            Err(error) => {
                walk.unreadable = Some(format!("/proc/{pid} unreadable: {error}"));
                break;
            }
        };
        next = step.parent;
        walk.steps.push(step);
        if !walked(&walk.steps) {
            break;
        }
    }
    walk
}

/// Reads one step; `None` when the process is gone or its stat unreadable.
pub fn read_step(pid: Pid) -> Option<AncestorStep> {
    read_step_checked(pid).ok()
}

/// Reads one step's stat, or says why it cannot be read. Its argv and exe
/// are read when first asked for; a failure there leaves them empty, as
/// for a kernel thread or another user's process, and never makes the step
/// unreadable.
pub(crate) fn read_step_checked(pid: Pid) -> std::io::Result<AncestorStep> {
    let step = read_step_stat(pid)?;
    // argv and exe are read now, with the stat: read later, when a pattern
    // asks, a process of the chain may have exited or exec'd meanwhile and
    // no longer say what it was (a harness's loader then went unrecognized
    // and another process was taken for the owner).
    step.names();
    Ok(step)
}

/// Reads one step's stat alone: its argv and exe are read at the first ask.
/// The step of this very process, asked from its main thread, is told by
/// the kernel without a `/proc` read (its parent, `getppid`; its comm, the
/// main thread's name, which is the comm its stat shows), its start
/// left unknown: every walk from this process starts there, and a stat
/// read is the dearest of its system calls.
fn read_step_stat(pid: Pid) -> std::io::Result<AncestorStep> {
    if let Some(step) = own_step_from_the_kernel(pid) {
        return Ok(step);
    }
    let mut buffer = [0u8; STAT_BUFFER_BYTES];
    let stat_bytes = read_small_file(&format!("/proc/{pid}/stat"), &mut buffer)?;
    let stat = parse_proc_stat(stat_bytes).map_err(std::io::Error::other)?;
    Ok(AncestorStep {
        pid,
        parent: Pid::new(stat.ppid),
        comm: stat.comm,
        start_ticks: Some(stat.start_ticks),
        names: OnceLock::new(),
    })
}

/// This process's step as `read_step_stat` tells it without `/proc`, when
/// `pid` is this process and the caller its main thread (another thread's
/// name is its own, not the comm); `None` otherwise or when the name
/// cannot be had.
fn own_step_from_the_kernel(pid: Pid) -> Option<AncestorStep> {
    let me = nix::unistd::getpid();
    if pid.as_raw() != me.as_raw() || nix::unistd::gettid() != me {
        return None;
    }
    let name = nix::sys::prctl::get_name().ok()?;
    Some(AncestorStep {
        pid,
        parent: u32::try_from(nix::unistd::getppid().as_raw()).ok().and_then(Pid::new),
        comm: String::from_utf8_lossy(name.to_bytes()).into_owned(),
        start_ticks: None,
        names: OnceLock::new(),
    })
}

fn read_program_names(pid: Pid) -> ProgramNames {
    let argv = read_cmdline_prefix(&format!("/proc/{pid}/cmdline"), ARGV_ENTRIES_KEPT, CMDLINE_BYTES_READ)
        .map(|bytes| split_cmdline(&bytes))
        .unwrap_or_default();
    let exe_basename = std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|path| path.file_name().map(|name| name.to_string_lossy().into_owned()));
    ProgramNames { argv, exe_basename }
}

fn split_cmdline(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&byte| byte == 0)
        .filter(|entry| !entry.is_empty())
        .take(ARGV_ENTRIES_KEPT)
        .map(|entry| String::from_utf8_lossy(entry).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_is_split_on_nul_and_bounded() {
        assert_eq!(
            split_cmdline(b"node\0/x/.bin/gemini\0-p\0hi\0extra\0"),
            ["node", "/x/.bin/gemini", "-p", "hi"]
        );
        assert_eq!(split_cmdline(b""), Vec::<String>::new());
    }

    /// Regression (found by the fault table): a `/proc` read failing
    /// with ENOMEM or EIO ended the walk as quietly as a process that is
    /// gone, so `roster-consent arm` refused with exit 3, saying the owner
    /// "is neither this command nor one of its ancestors", when it could
    /// only not look. The walk now says it was cut short.
    #[test]
    fn a_step_that_cannot_be_read_is_reported_and_a_vanished_one_is_not() {
        let me = Pid::new(std::process::id()).unwrap();
        let failing =
            walk_ancestry_with(me, |_| Err(std::io::Error::from_raw_os_error(nix::libc::ENOMEM)), |_| true);
        assert!(failing.steps.is_empty());
        assert!(failing.unreadable.as_deref().is_some_and(|why| why.contains("unreadable")), "{failing:?}");
        let gone =
            walk_ancestry_with(me, |_| Err(std::io::Error::from_raw_os_error(nix::libc::ENOENT)), |_| true);
        assert_eq!(gone.unreadable, None);
        let real = walk_ancestry_reporting(me);
        assert_eq!(real.unreadable, None);
        assert_eq!(real.steps[0].pid, me);
    }

    /// Walked for one named ancestor, the steps up to it have their argv
    /// and exe read by the time the walk returns (a process among them that
    /// exits later still shows what it was), the steps above it only when
    /// asked; the facts are the same as the full walk's either way.
    #[test]
    fn a_walk_for_a_named_ancestor_reads_the_names_up_to_it_alone() {
        let me = Pid::new(std::process::id()).unwrap();
        let full = walk_ancestry_reporting(me);
        assert!(full.steps.len() >= 2, "this test runs under a parent: {full:?}");
        let parent = full.steps[1].pid;
        let parent_started = crate::read_proc_stat(parent).unwrap().start_ticks;
        let named = walk_ancestry_naming_up_to(me, parent, Some(parent_started));
        assert_eq!(
            named.steps.iter().map(|step| step.pid).collect::<Vec<_>>(),
            full.steps.iter().map(|step| step.pid).collect::<Vec<_>>()
        );
        assert!(named.steps[..2].iter().all(|step| step.names.get().is_some()), "{named:?}");
        assert!(named.steps[2..].iter().all(|step| step.names.get().is_none()), "{named:?}");
        assert_eq!(named, full);
        // A pid that is no ancestor: no step's names are read by the walk.
        let stranger = walk_ancestry_naming_up_to(me, Pid::new(u32::MAX).unwrap(), None);
        assert!(stranger.steps.iter().all(|step| step.names.get().is_none()), "{stranger:?}");
        // Walked to the named one, the walk ends there, and reads no names
        // until asked.
        let to_parent = walk_ancestry_to(me, parent);
        assert!(to_parent.steps.iter().all(|step| step.names.get().is_none()), "{to_parent:?}");
        assert_eq!(to_parent.steps, full.steps[..2]);
        assert_eq!(walk_ancestry_to(me, Pid::new(u32::MAX).unwrap()).steps.len(), full.steps.len());
    }

    /// Inside a time namespace whose boot clock is set back, an owner that
    /// started before the offset's reach shows a start that wrapped around,
    /// later than its children's: a walk from a process started after the
    /// offset took effect still reaches it.
    #[test]
    fn a_named_ancestor_whose_start_wrapped_in_a_shifted_time_namespace_is_still_reached() {
        let named = Pid::new(std::process::id()).unwrap();
        let named_ticks = crate::read_proc_stat(named).unwrap().start_ticks;
        let tick_nanoseconds = 1_000_000_000 / u64::try_from(crate::world::USER_HZ).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        // A child, then a grandchild in a time namespace whose boot clock is
        // set back past the named process's start but not the child's.
        // SAFETY: the children only read their own facts and exit.
        match unsafe { nix::unistd::fork() }.unwrap() {
            nix::unistd::ForkResult::Child => {
                let me = Pid::new(std::process::id()).unwrap();
                let code = (|| {
                    if crate::read_proc_stat(me).ok()?.start_ticks < named_ticks + 2 {
                        return Some(20);
                    }
                    let offset = (named_ticks + 1) * tick_nanoseconds;
                    let seconds = offset.div_ceil(1_000_000_000);
                    let nanoseconds = seconds * 1_000_000_000 - offset;
                    nix::sched::unshare(nix::sched::CloneFlags::from_bits_retain(nix::libc::CLONE_NEWTIME))
                        .ok()?;
                    std::fs::write("/proc/self/timens_offsets", format!("boottime -{seconds} {nanoseconds}"))
                        .ok()?;
                    match unsafe { nix::unistd::fork() }.ok()? {
                        nix::unistd::ForkResult::Child => {
                            let reader = Pid::new(std::process::id()).unwrap();
                            let seen = crate::read_proc_stat(named).unwrap().start_ticks;
                            let walk = walk_ancestry_naming_up_to(reader, named, Some(seen));
                            let reached =
                                seen > named_ticks && walk.steps.iter().any(|step| step.pid == named);
                            unsafe { nix::libc::_exit(if reached { 0 } else { 1 }) };
                        }
                        nix::unistd::ForkResult::Parent { child } => {
                            match nix::sys::wait::waitpid(child, None) {
                                Ok(nix::sys::wait::WaitStatus::Exited(_, code)) => Some(code),
                                _ => Some(23),
                            }
                        }
                    }
                })()
                .unwrap_or(21);
                unsafe { nix::libc::_exit(code) };
            }
            nix::unistd::ForkResult::Parent { child } => {
                let status = nix::sys::wait::waitpid(child, None).unwrap();
                // 20: the child started in the named one's tick; 21: no time
                // namespace could be made (a test needing it fails loudly);
                // 1: the named ancestor was missed.
                assert_eq!(status, nix::sys::wait::WaitStatus::Exited(child, 0), "see the codes above");
            }
        }
    }

    /// The step of this very process, told by the kernel on its main
    /// thread, says what its stat says; on another thread it is read from
    /// the stat.
    #[test]
    fn the_own_step_told_without_proc_is_the_one_its_stat_tells() {
        let me = Pid::new(std::process::id()).unwrap();
        // A test runs on a thread of its own.
        assert!(own_step_from_the_kernel(me).is_none());
        // A forked child's only thread is its main thread. glibc makes
        // allocation after fork safe in the child.
        // SAFETY: the child only reads its own facts and exits.
        match unsafe { nix::unistd::fork() }.unwrap() {
            nix::unistd::ForkResult::Child => {
                let child = Pid::new(std::process::id()).unwrap();
                let told = own_step_from_the_kernel(child);
                let mut buffer = [0u8; STAT_BUFFER_BYTES];
                let stat = read_small_file(&format!("/proc/{child}/stat"), &mut buffer)
                    .ok()
                    .and_then(|bytes| parse_proc_stat(bytes).ok());
                let same = match (told, stat) {
                    (Some(told), Some(stat)) => {
                        told.pid == child && told.parent == Pid::new(stat.ppid) && told.comm == stat.comm
                    }
                    _ => false,
                };
                unsafe { nix::libc::_exit(if same { 0 } else { 1 }) };
            }
            nix::unistd::ForkResult::Parent { child } => {
                let status = nix::sys::wait::waitpid(child, None).unwrap();
                assert_eq!(status, nix::sys::wait::WaitStatus::Exited(child, 0));
            }
        }
    }

    /// A named process that started after a step cannot be above it: the
    /// walk ends at the first step that started before it, and is the full
    /// walk when the named one is an ancestor or its start is not known.
    #[test]
    fn a_walk_for_a_process_started_later_ends_at_the_first_step_started_before_it() {
        let me = Pid::new(std::process::id()).unwrap();
        let my_start = crate::read_proc_stat(me).unwrap().start_ticks;
        let full = walk_ancestry_reporting(me);
        // A sibling-like process that started strictly after this one (a
        // clock tick is 10 ms): never an ancestor.
        let started_later = loop {
            let child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
            let pid = Pid::new(child.id()).unwrap();
            let started = crate::read_proc_stat(pid).unwrap().start_ticks;
            if started > my_start {
                break (child, pid, started);
            }
            let mut child = child;
            child.kill().unwrap();
            child.wait().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let (mut child, pid, started) = started_later;
        let cut = walk_ancestry_naming_up_to(me, pid, Some(started));
        assert_eq!(cut.steps.len(), 1, "{cut:?}");
        assert_eq!(cut.steps[0].pid, me);
        assert_eq!(cut.unreadable, None);
        let unknown_start = walk_ancestry_naming_up_to(me, pid, None);
        assert_eq!(unknown_start.steps, full.steps);
        child.kill().unwrap();
        child.wait().unwrap();
        // Named by its start, an ancestor is still reached and the walk goes
        // on above it to the top.
        let top = full.steps.last().unwrap();
        let top_started = crate::read_proc_stat(top.pid).unwrap().start_ticks;
        assert_eq!(walk_ancestry_naming_up_to(me, top.pid, Some(top_started)).steps, full.steps);
        let parent = full.steps[1].pid;
        let parent_started = crate::read_proc_stat(parent).unwrap().start_ticks;
        assert_eq!(walk_ancestry_naming_up_to(me, parent, Some(parent_started)).steps, full.steps);
    }

    /// A step's argv and exe are read with its stat: a process that exits
    /// (or execs) after the walk still shows what it was when walked.
    #[test]
    fn argv_and_exe_are_read_with_the_step() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        // A vfork-style spawn returns once the child's exec has replaced its
        // memory, a moment before the kernel has set up the new argv.
        let cmdline = format!("/proc/{}/cmdline", child.id());
        let started = std::time::Instant::now();
        while std::fs::read(&cmdline).unwrap() != b"sleep\x0030\x00" {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "{cmdline} never showed the argv"
            );
            std::thread::yield_now();
        }
        let step = read_step_checked(Pid::new(child.id()).unwrap()).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(step.comm, "sleep");
        assert_eq!(step.argv(), ["sleep", "30"]);
        assert_eq!(step.exe_basename(), Some("sleep"));
    }

    #[test]
    fn walk_from_self_reaches_this_process_and_its_parent() {
        let me = Pid::new(std::process::id()).unwrap();
        let steps = walk_ancestry(me);
        assert_eq!(steps[0].pid, me);
        assert_eq!(steps[0].parent.map(Pid::get), Some(nix::unistd::getppid().as_raw() as u32));
        assert!(steps.len() >= 2, "expected at least the parent: {steps:?}");
        assert!(steps.len() <= MAX_ANCESTRY_HOPS);
        assert!(steps[0].exe_basename().is_some());
    }
}
