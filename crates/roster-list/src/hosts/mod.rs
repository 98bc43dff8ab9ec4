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

use cli_support::BadInput;

use crate::ListArgs;

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
    crate::build_filter(&checked)?;
    let query = query::Query::of_args(args)?;
    if args.watch {
        return watch::watch_hosts(args, &hosts, &query);
    }
    merge::list_hosts(args, &hosts, &query)
}
