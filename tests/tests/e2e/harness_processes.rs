//! Which processes of a harness still run, seen from outside roster: every process in the
//! harness's process group or descended from it (remembered across reparenting) whose
//! executable or script lies below the harness's npm prefix or the session's HOME. Hook
//! shells and roster's own tools do not count; the harness's loader, native binary,
//! relaunched node, plugin hosts and helpers do. The e2e run judges roster against this
//! set, never against roster's own idea of the chain.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};

use nix::sys::signal::Signal;
use nix::unistd::Pid;

/// One process seen, with its start time so that a reused pid is not taken for it.
#[derive(Clone, Debug)]
struct Seen {
    start_ticks: u64,
    is_harness: bool,
    description: String,
}

/// The processes of one harness run.
pub struct HarnessProcesses {
    leader: u32,
    roots: Vec<PathBuf>,
    seen: BTreeMap<u32, Seen>,
}

/// What `/proc/<pid>/stat` says that matters here.
struct Stat {
    ppid: u32,
    pgid: u32,
    start_ticks: u64,
    zombie: bool,
}

fn stat(pid: u32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = text[text.rfind(')')? + 2..].split(' ').collect();
    Some(Stat {
        zombie: fields.first()? == &"Z",
        ppid: fields.get(1)?.parse().ok()?,
        pgid: fields.get(2)?.parse().ok()?,
        start_ticks: fields.get(19)?.parse().ok()?,
    })
}

fn all_pids() -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok()).collect()
}

fn argv(pid: u32) -> Vec<String> {
    fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|byte| *byte == 0)
        .filter(|argument| !argument.is_empty())
        .map(|argument| String::from_utf8_lossy(argument).into_owned())
        .collect()
}

/// `<pid> <first two arguments>`.
fn describe(pid: u32) -> String {
    format!("{pid} {}", argv(pid).into_iter().take(2).collect::<Vec<_>>().join(" "))
}

impl HarnessProcesses {
    /// Watches the group led by `leader` (the harness process the run spawned); a process is
    /// the harness's when its executable or one of its first arguments is below a root.
    pub fn new(leader: u32, roots: Vec<PathBuf>) -> HarnessProcesses {
        let mut processes = HarnessProcesses { leader, roots, seen: BTreeMap::new() };
        processes.refresh();
        processes
    }

    fn belongs_to_harness(&self, pid: u32) -> bool {
        let exe = fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        let arguments = argv(pid);
        let under_root =
            |path: &Path| path.is_absolute() && self.roots.iter().any(|root| path.starts_with(root));
        under_root(&exe) || arguments.iter().take(3).any(|argument| under_root(Path::new(argument)))
    }

    /// Looks at /proc again: new members of the group or children of known processes join.
    pub fn refresh(&mut self) {
        let pids = all_pids();
        let stats: Vec<(u32, Stat)> = pids.into_iter().filter_map(|pid| Some((pid, stat(pid)?))).collect();
        // Parents before children need not hold in /proc order: repeat until nothing joins.
        loop {
            let mut joined = false;
            for (pid, stat) in &stats {
                if let Some(seen) = self.seen.get(pid).filter(|seen| seen.start_ticks == stat.start_ticks) {
                    // Seen between its fork and its exec (the leader, looked
                    // at right after it was spawned), a process is not yet
                    // what it runs: look again until it is the harness's.
                    if !seen.is_harness && self.belongs_to_harness(*pid) {
                        let description = describe(*pid);
                        self.seen.insert(
                            *pid,
                            Seen { start_ticks: stat.start_ticks, is_harness: true, description },
                        );
                    }
                    continue;
                }
                let parent_known = self.seen.contains_key(&stat.ppid);
                if stat.pgid == self.leader || *pid == self.leader || parent_known {
                    let is_harness = self.belongs_to_harness(*pid);
                    let description = describe(*pid);
                    self.seen.insert(*pid, Seen { start_ticks: stat.start_ticks, is_harness, description });
                    joined = true;
                }
            }
            if !joined {
                break;
            }
        }
    }

    /// The harness processes still running (not exited, not zombies), described.
    pub fn running(&mut self) -> Vec<String> {
        self.refresh();
        self.seen
            .iter()
            .filter(|(_, seen)| seen.is_harness)
            .filter(|(pid, seen)| {
                stat(**pid).is_some_and(|stat| stat.start_ticks == seen.start_ticks && !stat.zombie)
            })
            .map(|(_, seen)| seen.description.clone())
            .collect()
    }

    /// The pids of the harness processes still running.
    pub fn running_pids(&mut self) -> Vec<u32> {
        self.running().iter().filter_map(|description| description.split(' ').next()?.parse().ok()).collect()
    }

    /// Every harness process seen so far, for the report.
    pub fn all_seen(&self) -> Vec<String> {
        self.seen.values().filter(|seen| seen.is_harness).map(|seen| seen.description.clone()).collect()
    }
}

/// The harness's process group, killed on request and reaped.
pub(super) struct ProcessGroup<'a> {
    pub(super) leader: u32,
    pub(super) child: Option<&'a mut Child>,
}

impl ProcessGroup<'_> {
    pub(super) fn signal(&self, signal: &str) {
        if let (Ok(leader), Ok(signal)) =
            (i32::try_from(self.leader), format!("SIG{signal}").parse::<Signal>())
        {
            let _ = nix::sys::signal::killpg(Pid::from_raw(leader), signal);
        }
    }

    pub(super) fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|child| child.try_wait().ok().flatten())
    }

    pub(super) fn kill(&mut self) {
        self.signal("KILL");
        if let Some(child) = self.child.take() {
            let _ = child.wait();
        }
    }
}

/// Sends `signal` (`TERM`, `HUP`, `INT`, `KILL`) to `pid` at once (no `kill` process in between).
pub(super) fn signal_process(pid: u32, signal: &str) {
    if let (Ok(pid), Ok(signal)) = (i32::try_from(pid), format!("SIG{signal}").parse::<Signal>()) {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), signal);
    }
}

pub(super) fn process_start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split(' ').nth(19)?.parse().ok()
}

/// `comm` and the first arguments of a process, for the report.
pub(super) fn describe_process(pid: u32) -> String {
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let argv: Vec<String> = fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|byte| *byte == 0)
        .filter(|argument| !argument.is_empty())
        .take(2)
        .map(|argument| String::from_utf8_lossy(argument).into_owned())
        .collect();
    format!("{} [{}]", comm.trim_end(), argv.join(" "))
}
