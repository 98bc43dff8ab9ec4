//! The ancestry walk over a real chain of processes deeper than its bound:
//! it stops at `MAX_ANCESTRY_HOPS` steps (docs/contract.md §4.1), each step's parent is
//! the next step, and the first step is the process it started from.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid as NixPid;
use owner_liveness::{MAX_ANCESTRY_HOPS, Pid, walk_ancestry};

/// How many nested shells the chain has: more than the walk may climb.
const CHAIN_DEPTH: usize = MAX_ANCESTRY_HOPS + 10;

/// A shell that starts itself `$1` more times, each waiting for its child
/// (`; true` keeps a shell from replacing itself with its last command),
/// and whose innermost copy writes its pid to `$2` and sleeps.
const NESTING_SCRIPT: &str = r#"n=$1; if [ "$n" -gt 0 ]; then sh -c "$0" "$0" $((n-1)) "$2"; true; else echo $$ > "$2.tmp" && mv "$2.tmp" "$2"; exec sleep 300; fi"#;

/// The chain's process group, killed (and its leader reaped) on drop.
struct ProcessGroup(std::process::Child);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let _ = killpg(NixPid::from_raw(self.0.id() as i32), Signal::SIGKILL);
        let _ = self.0.wait();
    }
}

fn wait_for_pid_file(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the innermost shell never wrote {}", path.display());
        std::thread::yield_now();
    }
}

#[test]
fn the_walk_stops_at_its_bound_on_a_deeper_chain() {
    let temp = tempfile::tempdir().unwrap();
    let pid_file = temp.path().join("innermost.pid");
    let child = Command::new("sh")
        .arg("-c")
        .arg(NESTING_SCRIPT)
        .arg(NESTING_SCRIPT)
        .arg(CHAIN_DEPTH.to_string())
        .arg(&pid_file)
        .process_group(0)
        .spawn()
        .expect("sh runs");
    let _group = ProcessGroup(child);
    let innermost = Pid::new(wait_for_pid_file(&pid_file)).unwrap();
    // The pid file is written just before the shell becomes `sleep`.
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(format!("/proc/{innermost}/comm")).unwrap_or_default().trim() != "sleep" {
        assert!(Instant::now() < deadline, "pid {innermost} never became sleep");
        std::thread::yield_now();
    }

    let steps = walk_ancestry(innermost);
    assert_eq!(steps.len(), MAX_ANCESTRY_HOPS, "the walk took {} steps", steps.len());
    assert_eq!(steps[0].pid, innermost);
    assert_eq!(steps[0].comm, "sleep");
    for pair in steps.windows(2) {
        assert_eq!(pair[0].parent, Some(pair[1].pid), "a step's parent is not the next step: {pair:?}");
    }
    // Every step above the sleeper is one of the nested shells: the chain
    // is deeper than the bound, so the walk never reached this test.
    assert!(steps[1..].iter().all(|step| step.comm == "sh"), "{steps:?}");
}
