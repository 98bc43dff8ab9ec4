//! Many machines in one view (docs/contract.md §6.7): `roster-list --host`
//! asks each host's own roster-list through the user's OpenSSH (a pid
//! means nothing off its machine, so each host judges its own sessions)
//! and merges the answers; `--watch --host` merges their event streams.
//! No server of roster's own: ssh, its config, keys and agent.
//!
//! The rooms: `target` (which hosts), `ssh` (the ssh call and what its
//! failures mean), `query` (what each host is asked), `local` (the host
//! `local`, in-process), `rows` (rows of another roster's contract),
//! `answer` (a host's answer and notes), `merge` (the listing), `watch`
//! (the merged events).

mod answer;
mod local;
mod merge;
mod query;
mod rows;
mod ssh;
mod target;
mod watch;

use cli_support::manual::{EnvVar, ExitStatusDoc};
use cli_support::{BadInput, ExitStatus};

use crate::listing::ListArgs;

/// The manual's word on hosts (HOSTS in `--help` and the man page).
pub const HOSTS_NOTE: &str = "Hosts: --host [USER@]HOST[:PORT] (repeatable) and --hosts-file FILE (one host a \
    line, # comments) list the sessions of other machines through your own ssh (its config, keys and \
    agent): each host runs roster-list --format json with the filters given, all hosts at once, through \
    ssh -o BatchMode=yes -o ConnectTimeout=N (--connect-timeout, default 5 s). The host local is this \
    machine, without ssh. Rows come host after host in the order given; JSON rows get a host key, the \
    table a HOST column. A host that cannot be reached, has no roster, or answers something else is one \
    line on stderr naming it and what to do (in JSON, a note: host-unreachable, host-without-roster, \
    host-older-contract, host-unreadable), the others still answer, and the exit status is 6. Rows of an \
    older roster lack keys: shown null (JSON) or - (text), with a host-older-contract note. With --watch, \
    each host's events arrive with a host key; a host whose stream ends is reported (host-lost) and asked \
    again (0.5 s doubling to 30 s), and when it is back, resync and its listed rows follow.";

/// `ROSTER_SSH_COMMAND`, for the manual.
pub const SSH_COMMAND_ENVIRONMENT: EnvVar = EnvVar {
    name: ssh::SSH_COMMAND_VARIABLE,
    meaning: "The ssh command --host runs, split into words as a POSIX shell splits them (quotes, \
              backslashes), like git's GIT_SSH_COMMAND: e.g. \"ssh -J bastion\". Default: ssh.",
};

/// Exit status 6, for the manual.
pub const EXIT_HOSTS_UNANSWERED: ExitStatusDoc = ExitStatusDoc {
    status: ExitStatus::HostsUnanswered,
    meaning: "Some host of --host did not answer (unreachable, no roster there, or an answer that is not \
              rows): the rows of the others were printed, and stderr says which did not and why.",
};

/// Whether `args` ask other hosts (`--host`, `--hosts-file`).
pub fn asks_hosts(args: &ListArgs) -> bool {
    !args.host.is_empty() || args.hosts_file.is_some()
}

/// Lists (or watches) every host `args` name.
pub fn run(args: &ListArgs) -> anyhow::Result<()> {
    if args.until_gone.is_some() {
        return Err(BadInput(
            "--until-gone waits for a session of this machine; leave out --host and --hosts-file (or run it \
             on that host through ssh)"
                .to_owned(),
        )
        .into());
    }
    let hosts = target::hosts_asked(&args.host, args.hosts_file.as_deref())?;
    // The flags are checked here once, as this machine reads them, before
    // any host is asked: a bad --harness is the caller's mistake, not the
    // hosts'.
    let mut checked = args.clone();
    checked.cwd = None;
    crate::listing::build_filter(&checked)?;
    let query = query::Query::of_args(args)?;
    if args.watch {
        return watch::watch_hosts(args, &hosts, &query);
    }
    merge::list_hosts(args, &hosts, &query)
}
