//! When this boot began, on the wall clock: what a harness's file says in
//! wall-clock time (a start, a write) is placed against it.

use owner_liveness::SystemFacts;

use crate::record::timestamp::Timestamp;

/// The wall-clock time this boot began: now, less the boot clock (which
/// counts suspended time). `None` when the boot clock cannot be read.
pub(crate) fn this_boot_began(facts: &impl SystemFacts) -> Option<Timestamp> {
    let uptime = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME).ok()?;
    let uptime_nanos = i128::from(uptime.tv_sec()) * 1_000_000_000 + i128::from(uptime.tv_nsec());
    Some(Timestamp::from_unix_nanos(Timestamp::from_system_time(facts.now()).unix_nanos() - uptime_nanos))
}
