//! The fleet rows of `cargo xtask bench` (docs/contract.md §9, §6.7):
//! `roster-list --host` over four hosts costs about one ssh round trip,
//! not four in sequence. Each host is a real sshd on 127.0.0.1 with its
//! own registry (the black-box tests' `tests::sshd`). The floor is the
//! machine's own: the same four `ssh HOST roster-list --format json` run
//! at once by a shell (what one round trip to four hosts costs here, the
//! handshakes' work shared by the cores there are), and the same four run
//! one after another. The calls take turns, round by round.

use std::path::Path;

use ::tests::measure::{Invocation, Samples};
use ::tests::sshd::{SshClient, SshHost};

use super::report::RatioCheck;

/// How many hosts the fleet call asks.
const HOSTS: usize = 4;

/// Four hosts within this many of the four plain ssh calls run at once.
const FOUR_HOSTS_VERSUS_PARALLEL_SSH_LIMIT: f64 = 1.25;

/// Four hosts within this many of the four plain ssh calls in sequence:
/// clearly not one after another.
const FOUR_HOSTS_VERSUS_SEQUENTIAL_SSH_LIMIT: f64 = 0.75;

const VERSUS_PARALLEL: &str = "roster-list --host ×4 vs 4 × ssh HOST roster-list at once (sshd on 127.0.0.1)";
const VERSUS_SEQUENTIAL: &str = "roster-list --host ×4 vs 4 × ssh HOST roster-list in sequence";

/// Times `roster-list --format json --host h1 … --host h4` against the
/// same four hosts asked by plain ssh at once and in sequence, `runs`
/// rounds after one warm-up each. Without sshd (or without root, which
/// each sshd needs) the rows say why and fail.
pub fn measure_fleet(list: &Path, runs: usize) -> Vec<RatioCheck> {
    match time_fleet(list, runs) {
        Ok(times) => vec![
            RatioCheck::of_rounds(
                VERSUS_PARALLEL.to_owned(),
                &times.fleet,
                &times.parallel,
                Some(FOUR_HOSTS_VERSUS_PARALLEL_SSH_LIMIT),
            ),
            RatioCheck::of_rounds(
                VERSUS_SEQUENTIAL.to_owned(),
                &times.fleet,
                &times.sequential,
                Some(FOUR_HOSTS_VERSUS_SEQUENTIAL_SSH_LIMIT),
            ),
        ],
        Err(why) => {
            eprintln!("bench: the fleet rows cannot be measured: {why:#}");
            [
                (VERSUS_PARALLEL, FOUR_HOSTS_VERSUS_PARALLEL_SSH_LIMIT),
                (VERSUS_SEQUENTIAL, FOUR_HOSTS_VERSUS_SEQUENTIAL_SSH_LIMIT),
            ]
            .into_iter()
            .map(|(description, limit)| {
                RatioCheck::new(
                    format!("{description}: NOT MEASURED, {why:#}"),
                    f64::INFINITY,
                    1.0,
                    "ms",
                    Some(limit),
                )
            })
            .collect()
        }
    }
}

/// The three timings of one fleet measurement.
struct FleetTimes {
    fleet: Samples,
    parallel: Samples,
    sequential: Samples,
}

fn time_fleet(list: &Path, runs: usize) -> anyhow::Result<FleetTimes> {
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
    let mut fleet_call = Invocation::new(list)
        .args(["--format", "json", "-q"])
        .env("ROSTER_SSH_COMMAND", client.ssh_command());
    for host in &hosts {
        fleet_call = fleet_call.args(["--host", &host.address()]);
    }
    // The same four asked by plain ssh, through a shell: at once, and one
    // after another.
    let plain: Vec<String> = hosts
        .iter()
        .map(|host| {
            let (name, port) = host
                .address()
                .rsplit_once(':')
                .map_or((host.address(), String::new()), |(name, port)| (name.to_owned(), port.to_owned()));
            let port = if port.is_empty() { String::new() } else { format!(" -p {port}") };
            format!(
                "{} -o BatchMode=yes -T{port} {name} roster-list --format json -q >/dev/null",
                client.ssh_command()
            )
        })
        .collect();
    let at_once = format!("{} & wait", plain.join(" & "));
    let in_sequence = plain.join(" && ");
    let parallel_call = Invocation::new(Path::new("/bin/sh")).args(["-c", &at_once]);
    let sequential_call = Invocation::new(Path::new("/bin/sh")).args(["-c", &in_sequence]);
    for call in [&fleet_call, &parallel_call, &sequential_call] {
        call.time_once()?;
    }
    let mut times = FleetTimes {
        fleet: Samples::default(),
        parallel: Samples::default(),
        sequential: Samples::default(),
    };
    for _ in 0..runs {
        times.fleet.push(fleet_call.time_once()?);
        times.parallel.push(parallel_call.time_once()?);
        times.sequential.push(sequential_call.time_once()?);
    }
    Ok(times)
}
