//! strace as the fault injector of the fault table (`tests/faults`), here
//! in the library so its parsing is tested with the rest of the harness: one clean run lists the system calls a
//! tool makes and how often (per thread, as strace counts them for
//! `when=`), and each injected run fails exactly one call of one syscall.
//!
//! In scope are the calls roster's own code makes. The dynamic loader's
//! and the Rust runtime's start-up calls come before `main` and are not
//! roster's to handle (an `openat` of libc.so failing ends the process in
//! the loader; std aborts when its `poll` of fds 0–2 fails with EIO), so
//! the main thread's calls up to the runtime's last start-up step (the
//! `SIGBUS` handler it installs) are skipped, as are the calls of the
//! memory allocator and thread machinery everywhere (`OUT_OF_SCOPE`).
//!
//! strace also counts what a running process does while it should be idle
//! (`calls_over`): `cargo xtask bench` holds `roster-list --watch` to none;
//! and lists it (`idle_trace`), for the tests that hold the watch and
//! roster-top's view to none.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

/// Syscalls of the loader, the allocator and thread start-up: no roster
/// code calls them, and their failure is the runtime's to handle.
pub const OUT_OF_SCOPE: &[&str] = &[
    "execve",
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "prlimit64",
    "sigaltstack",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "gettid",
    "futex",
    "exit",
    "exit_group",
    "sched_yield",
    // std's hash-map seeds: the kernel cannot fail a 16-byte GRND_INSECURE
    // read (std retries EINTR and falls back to /dev/urandom on ENOSYS) and
    // std panics by design on anything else.
    "getrandom",
    // Calls that have no error return: an injected -errno reads as a bogus
    // id that no program can tell from a real one.
    "getpid",
    "getppid",
    "geteuid",
    "getuid",
    "getegid",
    "getgid",
];

/// One syscall a tool makes, and how many in-scope calls each thread made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyscallUse {
    pub name: String,
    /// The first in-scope invocation number (strace's `when=` counts from 1
    /// per thread) and the last, in the thread that makes the most calls.
    pub first: u32,
    pub second: Option<u32>,
    pub last: u32,
    pub calls: u32,
}

/// Parses an `strace -f -qq -o LOG` log into the syscalls in scope.
pub fn syscalls_in_scope(log: &str) -> Vec<SyscallUse> {
    let mut main_thread: Option<&str> = None;
    let mut startup_over = false;
    // thread -> syscall -> (calls before main, calls in scope)
    let mut counts: BTreeMap<&str, BTreeMap<String, (u32, u32)>> = BTreeMap::new();
    for line in log.lines() {
        let Some((thread, rest)) = line.split_once(char::is_whitespace) else { continue };
        let rest = rest.trim_start();
        if rest.starts_with("<...") || rest.starts_with("+++") || rest.starts_with("---") {
            continue;
        }
        let Some(name) = rest.split('(').next().filter(|name| {
            !name.is_empty() && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        }) else {
            continue;
        };
        let main = *main_thread.get_or_insert(thread);
        let entry = counts.entry(thread).or_default().entry(name.to_owned()).or_default();
        if thread == main && !startup_over {
            entry.0 += 1;
            if name == "rt_sigaction" && rest.starts_with("rt_sigaction(SIGBUS, {") {
                startup_over = true;
            }
        } else {
            entry.1 += 1;
        }
    }
    let mut uses: BTreeMap<String, SyscallUse> = BTreeMap::new();
    // strace's `when=` counts per thread but injects into every thread: an
    // invocation number at or below the main thread's start-up calls would
    // also fail the main thread in the dynamic loader, before main. Another
    // thread's numbers therefore start after the main thread's start-up.
    let main_startup = |name: &str| {
        main_thread
            .and_then(|main| counts.get(main))
            .and_then(|per_syscall| per_syscall.get(name))
            .map_or(0, |&(before_main, _)| before_main)
    };
    for (&thread, per_thread) in &counts {
        for (name, &(before_main, in_scope)) in per_thread {
            if in_scope == 0 || OUT_OF_SCOPE.contains(&name.as_str()) {
                continue;
            }
            let skipped = if Some(thread) == main_thread { before_main } else { main_startup(name) };
            let Some(calls) = in_scope.checked_sub(if Some(thread) == main_thread { 0 } else { skipped })
            else {
                continue;
            };
            if calls == 0 {
                continue;
            }
            let candidate = SyscallUse {
                name: name.clone(),
                first: skipped + 1,
                second: (calls >= 2).then_some(skipped + 2),
                last: skipped + calls,
                calls,
            };
            match uses.get(name) {
                Some(known) if known.calls >= candidate.calls => {}
                _ => {
                    uses.insert(name.clone(), candidate);
                }
            }
        }
    }
    uses.into_values().collect()
}

/// Reads a log written by strace.
pub fn read_log(path: &Path) -> anyhow::Result<String> {
    Ok(String::from_utf8_lossy(&std::fs::read(path)?).into_owned())
}

/// The system calls `pid` (and its threads) makes over `span`, as
/// `strace -c -f -p PID` counts them.
pub fn calls_over(pid: u32, span: Duration) -> anyhow::Result<u64> {
    std::thread::sleep(Duration::from_millis(200));
    let strace = Command::new("strace")
        .args(["-c", "-f", "-p", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("start strace (install it: apt-get install strace)")?;
    std::thread::sleep(span);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(strace.id() as i32), nix::sys::signal::Signal::SIGINT)
        .context("stop strace")?;
    let output = strace.wait_with_output().context("wait for strace")?;
    let text = String::from_utf8_lossy(&output.stderr);
    if !text.contains("attached") {
        bail!("strace did not attach to process {pid}: {text}");
    }
    // With no call at all strace prints no table; otherwise its last line
    // is `100.00 … <calls> [errors] total`.
    let calls = text
        .lines()
        .find(|line| line.trim_end().ends_with("total"))
        .and_then(|line| line.split_whitespace().nth(3))
        .map(|calls| calls.parse::<u64>())
        .transpose()
        .context("read strace's total")?;
    Ok(calls.unwrap_or(0))
}

/// Whether every thread of process `pid` sleeps in `epoll_wait`, as the
/// kernel names where each sleeps (`/proc/<pid>/task/<tid>/wchan`).
pub fn every_thread_waits_in_epoll(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    let mut threads = 0;
    for task in tasks {
        let Ok(task) = task else { return false };
        let wchan = std::fs::read_to_string(task.path().join("wchan")).unwrap_or_default();
        if !wchan.contains("epoll_wait") {
            return false;
        }
        threads += 1;
    }
    threads > 0
}

/// What `strace -f` (the program `strace`) sees process `pid` do over
/// `span`, its log written to `log`: the whole log, and the lines that are
/// not the wait in progress that attaching interrupts (strace shows it
/// resumed or restarted), which are wakeups.
pub fn idle_trace(strace: &Path, pid: u32, span: Duration, log: &Path) -> (String, Vec<String>) {
    let mut tracer = Command::new(strace)
        .args(["-f", "-qq", "-o"])
        .arg(log)
        .args(["-p", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("attach strace");
    std::thread::sleep(span);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(tracer.id() as i32), nix::sys::signal::Signal::SIGINT)
        .expect("detach strace");
    crate::wait_with_deadline(&mut tracer, Duration::from_secs(10)).expect("strace did not detach");
    let lines = std::fs::read_to_string(log).expect("read the trace");
    let wakeups = lines
        .lines()
        .filter(|line| {
            !line.contains("epoll_wait(") && !line.contains("restart_syscall(") && !line.contains("resumed>")
        })
        .map(str::to_owned)
        .collect();
    (lines, wakeups)
}
