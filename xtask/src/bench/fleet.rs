//! The fleet row of `cargo xtask bench` (docs/contract.md §9, §6.7):
//! `roster-list --host` over four hosts costs about one ssh round trip,
//! not four in sequence. Each host is a real sshd on 127.0.0.1 with its
//! own registry (the black-box tests' `tests::sshd`); the four-host call
//! and the one-host call take turns, round by round.

use std::path::Path;

use ::tests::measure::{Invocation, Samples};
use ::tests::sshd::{SshClient, SshHost};

use super::report::RatioCheck;

/// How many hosts the fleet call asks.
const HOSTS: usize = 4;

/// Four hosts within this many of one host.
const FOUR_HOSTS_VERSUS_ONE_LIMIT: f64 = 1.5;

const DESCRIPTION: &str = "roster-list --format json --host ×4 vs --host ×1 (sshd on 127.0.0.1)";

/// Times `roster-list --format json --host h1 … --host h4` against
/// `--host h1` alone, `runs` rounds after one warm-up each. Without sshd
/// (or without root, which each sshd needs) the row says why and fails.
pub fn measure_fleet(list: &Path, runs: usize) -> RatioCheck {
    match time_fleet(list, runs) {
        Ok((four, one)) => RatioCheck::of_durations(
            DESCRIPTION.to_owned(),
            four.median(),
            one.median(),
            Some(FOUR_HOSTS_VERSUS_ONE_LIMIT),
        ),
        Err(why) => {
            eprintln!("bench: the fleet row cannot be measured: {why:#}");
            RatioCheck {
                description: format!("{DESCRIPTION}: NOT MEASURED, {why:#}"),
                ours: f64::INFINITY,
                floor: 1.0,
                unit: "ms",
                limit: Some(FOUR_HOSTS_VERSUS_ONE_LIMIT),
            }
        }
    }
}

fn time_fleet(list: &Path, runs: usize) -> anyhow::Result<(Samples, Samples)> {
    if !nix::unistd::geteuid().is_root() {
        anyhow::bail!("each host is an sshd that logs in as root: run the bench as root");
    }
    if ::tests::find_or_install_tool("sshd").is_none() {
        anyhow::bail!("sshd is missing: install the Debian package openssh-server");
    }
    let binaries = list.parent().map(Path::to_string_lossy).unwrap_or_default();
    let client = SshClient::new();
    let hosts: Vec<SshHost> =
        (0..HOSTS).map(|_| SshHost::start(&client, &format!("{binaries}:/usr/bin:/bin"))).collect();
    let call = |count: usize| {
        let mut invocation = Invocation::new(list)
            .args(["--format", "json", "-q"])
            .env("ROSTER_SSH_COMMAND", client.ssh_command());
        for host in &hosts[..count] {
            invocation = invocation.args(["--host", &host.address()]);
        }
        invocation
    };
    let (four_call, one_call) = (call(HOSTS), call(1));
    four_call.time_once()?;
    one_call.time_once()?;
    let (mut four, mut one) = (Samples::default(), Samples::default());
    for _ in 0..runs {
        four.push(four_call.time_once()?);
        one.push(one_call.time_once()?);
    }
    Ok((four, one))
}
