//! What a hook-mode tool reads before anything else: the `--hook` value
//! and the harness's payload on stdin, within the hook's payload share of
//! its budget. Register and `prune --current` both read it this one way.

use std::os::fd::AsFd;

use harness::{
    HookPayload, HookTarget, MAX_PAYLOAD_BYTES, PAYLOAD_READ_DEADLINE, PayloadError, parse_payload,
    read_payload_within,
};

use crate::exit::BadInput;
use crate::hook_clock::payload_wait;

/// The harness `--hook VALUE` names (`auto` or a harness name); a value
/// that names none is bad input, with the names it could be.
pub fn hook_target(value: &str) -> Result<HookTarget, BadInput> {
    HookTarget::parse(value).ok_or_else(|| {
        let mut names = harness::harness_names();
        names.insert(0, "auto");
        BadInput(harness::unknown_harness_message(&format!("--hook {value:?}"), "a harness", value, &names))
    })
}

/// The payload on stdin: at most `MAX_PAYLOAD_BYTES`, waited for no longer
/// than the hook's payload share of its budget (`PAYLOAD_READ_DEADLINE`
/// outside hook mode), then parsed.
pub fn read_hook_payload() -> Result<HookPayload, PayloadError> {
    let bytes = read_payload_within(std::io::stdin().as_fd(), MAX_PAYLOAD_BYTES, || {
        payload_wait(PAYLOAD_READ_DEADLINE)
    })?;
    parse_payload(&bytes)
}
