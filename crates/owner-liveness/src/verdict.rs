//! The verdict (docs/contract.md §5): is the recorded owner still the process running at
//! its pid? One function over the small traits of OS facts in `facts`, so
//! each rule is a table test.

use std::fmt;
use std::io;

use crate::facts::{LinuxFacts, OpenProcessError, ProcessFacts, SystemFacts};
use crate::identity::{ChainMember, OwnerIdentity, ProcIdentity, ProcReadError, SocketIdentity};
use crate::pid::Pid;
use crate::world::ticks_in_initial_time;

/// The three answers. `Dead` is only said on positive evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Liveness {
    Alive,
    Unknown,
    Dead,
}

impl Liveness {
    pub fn as_str(self) -> &'static str {
        match self {
            Liveness::Alive => "alive",
            Liveness::Unknown => "unknown",
            Liveness::Dead => "dead",
        }
    }
}

impl fmt::Display for Liveness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A liveness with the one-line reason that says what was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub liveness: Liveness,
    pub reason: String,
}

impl Verdict {
    fn new(liveness: Liveness, reason: impl Into<String>) -> Verdict {
        Verdict { liveness, reason: reason.into() }
    }
}

/// Judges a recorded identity (and socket, if any) against the system now.
/// Rules run in the order of docs/contract.md §5. The process rules (3 to 5) judge each member of
/// the owner's chain on its own: the session is dead when every member is
/// (or the boot or the socket says so), alive when a member provably runs
/// and nothing else is in doubt, else unknown. An owner without a chain is
/// the one-member case: any dead makes the verdict dead, else any unknown
/// makes it unknown, else alive.
pub fn judge<F: SystemFacts>(
    identity: &OwnerIdentity,
    socket: Option<&SocketIdentity>,
    facts: &F,
) -> Verdict {
    judge_seeing_terminal(identity, socket, facts).verdict
}

/// A verdict, and the controlling terminal of the process it rests on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenVerdict {
    pub verdict: Verdict,
    /// For an alive verdict whose process's `/proc/<pid>/stat` was read to
    /// prove it: that process's controlling terminal (`tty_nr`, 0 without
    /// one). `None` otherwise (not alive, or proven by its pidfs inode
    /// without reading `/proc`).
    pub terminal: Option<u64>,
}

/// `judge`, also telling the controlling terminal the proof read on the
/// way: what a listing of sessions no hook registered goes by to decide
/// whether a session can show on any screen, without reading `/proc`
/// again.
pub fn judge_seeing_terminal<F: SystemFacts>(
    identity: &OwnerIdentity,
    socket: Option<&SocketIdentity>,
    facts: &F,
) -> SeenVerdict {
    let mut terminal = None;
    let verdict = judge_members(identity, socket, facts, &mut terminal);
    let terminal = terminal.filter(|_| verdict.liveness == Liveness::Alive);
    SeenVerdict { verdict, terminal }
}

/// The verdict of docs/contract.md §5; `terminal` is set to the terminal
/// the member an alive verdict rests on was seen with.
fn judge_members<F: SystemFacts>(
    identity: &OwnerIdentity,
    socket: Option<&SocketIdentity>,
    facts: &F,
    terminal: &mut Option<u64>,
) -> Verdict {
    // What could not be examined, apart from the processes: the socket.
    let mut unknowns: Vec<String> = Vec::new();

    let frame = match reader_frame(identity, facts) {
        Ok(frame) => frame,
        Err(verdict) => return verdict,
    };

    // 3 to 5. Each process of the chain. A handle that cannot be opened
    // for a reason other than the pid's absence leaves that process
    // unexamined, but the socket below may still prove death.
    let findings: Vec<MemberFinding> = identity
        .members()
        .enumerate()
        .map(|(index, member)| {
            let name = member_name(identity, index, member.pid);
            let survivor = index > 0;
            judge_member(identity, &member, &name, survivor, &frame, facts)
        })
        .collect();
    // The session is dead only when every member is provably gone.
    if findings.iter().all(|finding| matches!(finding, MemberFinding::Dead(_))) {
        return Verdict::new(Liveness::Dead, join_reasons(findings));
    }

    // 6. The harness's socket, when one was recorded. Gone or replaced, it
    // proves the session over unless a member provably still runs, or a
    // process is at a member's pid that could not be told apart from it: a
    // harness removes its socket while it shuts down (Claude Code some
    // 50 ms before it exits), and a process that may be the session's is
    // never judged dead.
    // Asked only once a socket says the session ended.
    let running = || {
        findings.iter().zip(identity.members()).enumerate().find_map(|(index, (finding, member))| {
            let name = member_name(identity, index, member.pid);
            match finding {
                MemberFinding::Alive(..) => Some(format!("{name} still runs")),
                MemberFinding::Unproven(_) => Some(format!("{name} still exists and may be the session's")),
                MemberFinding::Dead(_) | MemberFinding::Unexamined(_) => None,
            }
        })
    };
    if let Some(ended) = socket.and_then(|socket| socket_ended(socket, facts, &mut unknowns)) {
        return match running() {
            None => Verdict::new(Liveness::Dead, ended),
            Some(running) => Verdict::new(Liveness::Unknown, format!("{ended} while {running}")),
        };
    }

    alive_or_unknown(findings, unknowns, terminal)
}

/// Rules 1 and 2 of docs/contract.md §5: whether the identity can be
/// judged from here at all (the same boot, the same pid namespace, a time
/// namespace placed), and the frame this reader judges it in; else the
/// verdict that says why not.
fn reader_frame<F: SystemFacts>(identity: &OwnerIdentity, facts: &F) -> Result<ReaderFrame, Verdict> {
    // 1. Boot and machine. One kernel has one boot id, so the same boot id
    // proves the same kernel (a container shares its host's) whatever the
    // machine ids say, and the namespaces below decide. Another boot id is
    // a reboot only on the same machine: a home shared by two machines
    // holds the other one's sessions, which this one cannot examine.
    // Without this boot's id a record cannot be placed at all: every
    // machine's initial pid namespace has the same inode, so a pid of
    // another machine would pass the namespace rule and be judged here.
    match facts.boot_id() {
        Ok(boot_id) if boot_id != identity.boot_id => return Err(another_boot(identity, facts)),
        Ok(_) => {}
        Err(error) => {
            return Err(Verdict::new(
                Liveness::Unknown,
                format!(
                    "boot id unreadable: {error}; a pid cannot be placed on this machine's kernel without it"
                ),
            ));
        }
    }

    // 2. Namespaces: pids mean other things in another pid namespace, so
    // nothing below could be trusted. A time namespace only shifts the
    // start ticks its readers see, which an identity that names its
    // machine records on the initial clock (older ones did not, and for
    // them another time namespace is unknown, as it was). A user namespace
    // changes only what uids look like; rule 4 deals with it.
    let own = match facts.own_namespaces() {
        Ok(own) if own.pid_ns != identity.pid_ns => {
            return Err(Verdict::new(Liveness::Unknown, "recorded in another pid namespace"));
        }
        Ok(own) if identity.machine.is_none() && own.time_ns != identity.time_ns => {
            return Err(Verdict::new(Liveness::Unknown, "recorded in another time namespace"));
        }
        Ok(own) => own,
        Err(error) => {
            return Err(Verdict::new(Liveness::Unknown, format!("own namespaces unreadable: {error}")));
        }
    };
    // What this reader adds to every start tick it reads, taken off again
    // before comparing with an identity on the initial clock.
    let tick_offset = match (identity.machine.is_some(), facts.boottime_offset_ticks()) {
        (false, _) => 0,
        (true, Ok(offset)) => offset,
        (true, Err(error)) => {
            return Err(Verdict::new(
                Liveness::Unknown,
                format!("time namespace offsets unreadable: {error}"),
            ));
        }
    };
    Ok(ReaderFrame { user_ns: own.user_ns, tick_offset })
}

/// Rule 6: whether the harness's recorded socket says the session ended
/// (gone, or replaced); one that cannot be read adds to `unknowns`.
fn socket_ended<F: SystemFacts>(
    socket: &SocketIdentity,
    facts: &F,
    unknowns: &mut Vec<String>,
) -> Option<String> {
    let path = socket.path.display();
    match facts.stat_socket(&socket.path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Some(format!("socket {path} is gone")),
        Err(error) => {
            unknowns.push(format!("socket {path} unreadable: {error}"));
            None
        }
        Ok(now) => {
            let replaced = if socket.ino != 0 || socket.dev != 0 {
                (now.dev, now.ino) != (socket.dev, socket.ino)
            } else {
                now.mtime_ns != socket.mtime_ns
            };
            replaced.then(|| format!("socket {path} was replaced"))
        }
    }
}

/// Rule 7: alive while any member is provably the same process and
/// running, and nothing else was left unexamined; else unknown, with
/// every reason.
fn alive_or_unknown(
    findings: Vec<MemberFinding>,
    unknowns: Vec<String>,
    terminal: &mut Option<u64>,
) -> Verdict {
    // 7. Alive while any member is provably the same process and running;
    // the reason names the member it rests on, after the ones that ended.
    let alive = findings.iter().position(|finding| matches!(finding, MemberFinding::Alive(..)));
    match alive {
        Some(index) if unknowns.is_empty() => {
            let mut findings = findings;
            let resting_on = match findings.swap_remove(index) {
                MemberFinding::Alive(reason, seen_terminal) => {
                    *terminal = seen_terminal;
                    reason
                }
                _ => unreachable!("position found an alive member"),
            };
            // An owner alone, or alive itself: its reason is the verdict's.
            if index == 0 {
                return Verdict::new(Liveness::Alive, resting_on);
            }
            let ended = findings[..index].iter().filter_map(MemberFinding::dead_reason);
            let parts: Vec<String> = ended.map(str::to_owned).chain(std::iter::once(resting_on)).collect();
            Verdict::new(Liveness::Alive, parts.join("; "))
        }
        Some(_) => unknown(unknowns),
        None => {
            let mut reasons: Vec<String> = findings.iter().flat_map(MemberFinding::reasons).collect();
            reasons.extend(unknowns);
            unknown(reasons)
        }
    }
}

/// What one member of the chain turned out to be.
enum MemberFinding {
    Dead(String),
    /// Provably the recorded process, running; the reason says since when,
    /// and the controlling terminal it was seen with, when `/proc` was read.
    Alive(String, Option<u64>),
    /// A process is at the pid (its handle opened and it has not exited),
    /// neither proven the recorded one nor another; why not.
    Unproven(Vec<String>),
    /// No handle could be opened for a reason other than the pid's absence.
    Unexamined(Vec<String>),
}

impl MemberFinding {
    fn dead_reason(&self) -> Option<&str> {
        match self {
            MemberFinding::Dead(reason) => Some(reason),
            _ => None,
        }
    }

    fn reasons(&self) -> Vec<String> {
        match self {
            MemberFinding::Dead(reason) | MemberFinding::Alive(reason, _) => vec![reason.clone()],
            MemberFinding::Unproven(reasons) | MemberFinding::Unexamined(reasons) => reasons.clone(),
        }
    }
}

fn join_reasons(findings: Vec<MemberFinding>) -> String {
    match <[MemberFinding; 1]>::try_from(findings) {
        // One member (an owner alone) with one reason: that reason.
        Ok([MemberFinding::Dead(reason) | MemberFinding::Alive(reason, _)]) => reason,
        Ok([finding]) => finding.reasons().join("; "),
        Err(findings) => findings.iter().flat_map(MemberFinding::reasons).collect::<Vec<_>>().join("; "),
    }
}

/// How a reason names a member: `pid 4242` for an owner without a chain
/// (as always), else `owner 4711` for the outermost and `harness process
/// 4720` for the others.
fn member_name(identity: &OwnerIdentity, index: usize, pid: Pid) -> String {
    match (identity.chain.is_empty(), index) {
        (true, _) => format!("pid {pid}"),
        (false, 0) => format!("owner {pid}"),
        (false, _) => format!("harness process {pid}"),
    }
}

/// Rules 3 to 5 for one member; a `survivor` (a member below the owner)
/// that runs is said to be still running.
fn judge_member<F: SystemFacts>(
    identity: &OwnerIdentity,
    member: &ChainMember,
    name: &str,
    survivor: bool,
    frame: &ReaderFrame,
    facts: &F,
) -> MemberFinding {
    if let Some(terminal) = glanced_alive(identity, member, frame, facts) {
        let still = if survivor { "still " } else { "" };
        return MemberFinding::Alive(
            format!("{name} {still}running since tick {}", member.start_ticks),
            terminal,
        );
    }
    let mut unknowns = Vec::new();
    match facts.open_process(member.pid) {
        Ok(process) => match judge_process(identity, member, name, frame, &process, &mut unknowns) {
            ProcessFinding::Dead(reason) => MemberFinding::Dead(reason),
            ProcessFinding::RunningSince { .. } if !unknowns.is_empty() => MemberFinding::Unproven(unknowns),
            ProcessFinding::RunningSince { ticks, terminal } => {
                let since = ticks.map(|ticks| format!(" since tick {ticks}")).unwrap_or_default();
                let still = if survivor { "still " } else { "" };
                MemberFinding::Alive(format!("{name} {still}running{since}"), terminal)
            }
        },
        Err(OpenProcessError::Gone) => MemberFinding::Dead(format!("{name} is gone")),
        Err(OpenProcessError::NotAProcess) => MemberFinding::Dead(format!(
            "{name} is not a process now (a thread of another process, or one being reaped)"
        )),
        Err(OpenProcessError::Other(why)) => {
            MemberFinding::Unexamined(vec![format!("{name} cannot be opened: {why}")])
        }
    }
}

/// Rules 4 and 5 proven at a glance (`glance.rs`), for a member that
/// recorded no pidfs inode (which the handle would compare, without reading
/// `/proc` at all): at its pid is a process (not a thread of another one)
/// that shows the recorded uid, in the user namespace it was recorded in,
/// and the recorded start tick on the initial clock, and has not exited. Then it is alive, and the terminal it
/// shows is returned; `None` when anything is otherwise or unread, and the
/// handle judges: a glance only ever proves sooner what the handle would.
fn glanced_alive<F: SystemFacts>(
    identity: &OwnerIdentity,
    member: &ChainMember,
    frame: &ReaderFrame,
    facts: &F,
) -> Option<Option<u64>> {
    if member.pidfs_ino.is_some() || identity.user_ns != Some(frame.user_ns) {
        return None;
    }
    let glance = facts.glance_at_process(member.pid)?;
    let start_ticks = ticks_in_initial_time(glance.start_ticks, frame.tick_offset)?;
    (glance.leader && !glance.exited && glance.uid == member.uid && start_ticks == member.start_ticks)
        .then_some(Some(glance.terminal))
}

enum ProcessFinding {
    Dead(String),
    /// Not proven dead; the start tick and the controlling terminal when
    /// `/proc` could be read.
    RunningSince {
        ticks: Option<u64>,
        terminal: Option<u64>,
    },
}

/// Rules 4 and 5 on an open handle. `/proc` is read before the exit check on
/// purpose: if the handle's process exits and the pid is reused meanwhile,
/// `/proc` may describe the newcomer, but the exit check then says dead.
fn judge_process<P: ProcessFacts>(
    identity: &OwnerIdentity,
    member: &ChainMember,
    name: &str,
    frame: &ReaderFrame,
    process: &P,
    unknowns: &mut Vec<String>,
) -> ProcessFinding {
    let pid = member.pid;
    let own_user_ns = frame.user_ns;

    // 4. Is it the same process?
    // The handle's inode is looked at only against a recorded one: an
    // identity without one (a harness's own file, an older record) is
    // proven by `/proc` below, and the `fstat` would be a system call per
    // row for nothing.
    let pidfs_agrees = match member.pidfs_ino.map(|recorded| (recorded, process.pidfs_inode())) {
        Some((recorded, Some(now))) if recorded != now => {
            return ProcessFinding::Dead(format!(
                "{name} now names another process (pidfs inode {now}, not {recorded})"
            ));
        }
        Some((_, Some(_))) => true,
        _ => false,
    };
    let mut running_since = None;
    let mut seen_terminal = None;
    let read = start_tick_read(member, name, pidfs_agrees, frame, process, unknowns, &mut seen_terminal);
    match read {
        None => {}
        Some(read) => match read {
            Ok((_, start_ticks)) if start_ticks != member.start_ticks => {
                return ProcessFinding::Dead(format!(
                    "{name} now names a process started at tick {start_ticks}, not {}",
                    member.start_ticks
                ));
            }
            Ok((None, start_ticks)) => running_since = Some(start_ticks),
            Ok((Some(uid), start_ticks)) => match uid_frame(identity, own_user_ns, process) {
                UidFrame::Shared if uid == member.uid => running_since = Some(start_ticks),
                UidFrame::Shared if own_user_ns == INITIAL_USER_NS_INODE => {
                    return ProcessFinding::Dead(format!(
                        "{name} now belongs to uid {uid}, not {}",
                        member.uid
                    ));
                }
                // Only the initial user namespace's inode is never reused; any
                // other one may be a new namespace with the inode of a gone one,
                // where the same owner shows another uid.
                UidFrame::Shared => unknowns.push(format!(
                    "{name} now shows uid {uid}, not {}, but in user namespace {own_user_ns}, whose \
                 inode may have been reused, that proves nothing",
                    member.uid
                )),
                // The uid is translated here, so it proves nothing either way,
                // and without a pidfs inode the start tick alone is no proof.
                UidFrame::Foreign(why) => unknowns.push(format!(
                    "{name} started at tick {start_ticks} as recorded, but its uid cannot be compared \
                 ({why}) and no pidfs inode proves it is the same process"
                )),
            },
            // The pid exists (the handle opened), so a missing /proc entry is a
            // hidden one, never proof of death.
            Err(why) => unknowns.push(format!("/proc/{pid} unreadable: {why}")),
        },
    }

    // 5. Exited and awaiting its reaper? A pidfd polls readable only once
    // the whole thread group is gone, so a leader that exited while its
    // threads run is not taken for dead.
    match process.has_exited() {
        Ok(true) => return ProcessFinding::Dead(format!("{name} has exited (zombie)")),
        Ok(false) => {}
        Err(error) => unknowns.push(format!("{name} cannot be polled: {error}")),
    }
    ProcessFinding::RunningSince { ticks: running_since, terminal: seen_terminal }
}

/// Rule 4's reading of the process: its uid (when it must be read) and its
/// start tick on the initial clock, from `/proc` unless the pidfs inode
/// already proves the process; `None` when a time namespace's offset leaves
/// the tick proving nothing (said in `unknowns`), and the terminal it was
/// seen with in `seen_terminal` when `/proc` was read.
fn start_tick_read<P: ProcessFacts>(
    member: &ChainMember,
    name: &str,
    pidfs_agrees: bool,
    frame: &ReaderFrame,
    process: &P,
    unknowns: &mut Vec<String>,
    seen_terminal: &mut Option<u64>,
) -> Option<Result<(Option<u32>, u64), ProcReadError>> {
    // The pidfs inode names one process for the whole boot: where it
    // agrees, the process is the one that registered, whatever uid it shows
    // now (it may have changed its uid, or be seen through a user namespace
    // that translates it), so the uid proves nothing and is not read. Where
    // the inode is a 64-bit counter the kernel never hands out twice, the
    // start tick is the recorded one too, and `/proc` is not read at all
    // (three system calls, and the kernel's costliest part of a listing).
    let on_initial_clock = |seen: u64| ticks_in_initial_time(seen, frame.tick_offset);
    let read = if pidfs_agrees && PIDFS_INODES_ARE_NEVER_REUSED {
        Ok((None, Some(member.start_ticks)))
    } else if pidfs_agrees {
        process.proc_start_ticks().map(|start_ticks| (None, on_initial_clock(start_ticks)))
    } else {
        process.proc_identity().map(|ProcIdentity { uid, start_ticks, terminal }| {
            *seen_terminal = Some(terminal);
            (Some(uid), on_initial_clock(start_ticks))
        })
    };
    // Through a time namespace's offset a start tick may be rounded (an
    // offset that is not whole ticks) or not be taken back at all (a
    // negative offset past the process's age): a tick seen that way proves
    // nothing, and only the pidfs inode (above) may say another process.
    let offset = frame.tick_offset;
    match read {
        Ok((_, None)) => {
            unknowns.push(format!(
                "{name}'s start tick cannot be taken back to the initial clock through this time \
                 namespace's offset of {offset} ticks"
            ));
            None
        }
        Ok((_, Some(start_ticks))) if start_ticks != member.start_ticks && offset != 0 => {
            unknowns.push(format!(
                "{name} shows start tick {start_ticks}, not {}, through this time namespace's offset of \
                 {offset} ticks, which proves nothing without a pidfs inode",
                member.start_ticks
            ));
            None
        }
        Ok((uid, Some(start_ticks))) => Some(Ok((uid, start_ticks))),
        Err(why) => Some(Err(why)),
    }
}

/// Whether a pidfs inode number is unique for the whole boot. The kernel
/// numbers pidfs inodes from a 64-bit counter; a 32-bit kernel shows only
/// its low half as the inode (the high half is the generation), which may
/// come round again. A 64-bit program runs on a 64-bit kernel only.
pub const PIDFS_INODES_ARE_NEVER_REUSED: bool = cfg!(target_pointer_width = "64");

/// The inode of the initial user namespace (the kernel's
/// `PROC_USER_INIT_INO`): fixed, and never given to another namespace.
pub const INITIAL_USER_NS_INODE: u64 = 0xEFFF_FFFD;

/// Whether the recorded uid and the one `/proc` shows now are in the same
/// user namespace, so that comparing them means anything.
enum UidFrame {
    Shared,
    /// Not comparable, and why.
    Foreign(String),
}

fn uid_frame<P: ProcessFacts>(identity: &OwnerIdentity, own_user_ns: u64, process: &P) -> UidFrame {
    match identity.user_ns {
        Some(recorded) if recorded == own_user_ns => UidFrame::Shared,
        Some(recorded) => UidFrame::Foreign(format!(
            "recorded in user namespace {recorded}, read from user namespace {own_user_ns}"
        )),
        // An older record does not say which user namespace its uid is
        // in; its registrar ran in the session, so the owner's own user
        // namespace stands for it.
        None => match process.user_namespace() {
            Some(owner) if owner == own_user_ns => UidFrame::Shared,
            Some(owner) => UidFrame::Foreign(format!(
                "the owner is in user namespace {owner}, read from user namespace {own_user_ns}"
            )),
            None => UidFrame::Foreign(format!(
                "the owner's user namespace cannot be read from user namespace {own_user_ns}"
            )),
        },
    }
}

/// Rule 1 for an identity of another boot: a reboot of this machine
/// (dead), another machine sharing the registry (unknown, naming it), or,
/// for an identity that does not name its machine, either (unknown).
fn another_boot<F: SystemFacts>(identity: &OwnerIdentity, facts: &F) -> Verdict {
    let Some(recorded) = &identity.machine else {
        return Verdict::new(
            Liveness::Unknown,
            "recorded in another boot by a roster that did not record its machine: an earlier boot \
             of this machine or another machine sharing this registry",
        );
    };
    match facts.machine() {
        Ok(this) if this == recorded.as_str() => Verdict::new(Liveness::Dead, "recorded in an earlier boot"),
        Ok(_) => Verdict::new(Liveness::Unknown, format!("recorded on another machine ({recorded})")),
        Err(error) => Verdict::new(
            Liveness::Unknown,
            format!("recorded in another boot on {recorded}, and this machine cannot be named: {error}"),
        ),
    }
}

/// How the judging process sees uids and start ticks.
struct ReaderFrame {
    user_ns: u64,
    /// Ticks to take off a start tick read from `/proc` before comparing
    /// it with the identity's.
    tick_offset: i64,
}

fn unknown(reasons: Vec<String>) -> Verdict {
    Verdict::new(Liveness::Unknown, reasons.join("; "))
}

/// Judges against the real system.
pub fn judge_now(identity: &OwnerIdentity, socket: Option<&SocketIdentity>) -> Verdict {
    judge(identity, socket, &LinuxFacts)
}
