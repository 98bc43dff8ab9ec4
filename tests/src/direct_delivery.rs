//! A delivery made by the test process itself, as a session's delivery
//! hook makes it at a prompt: for tests of the queue's promises (order,
//! at most once, refusal, what a watcher sees) that need no harness and
//! no process tree.

use std::time::{Duration, Instant};

use harness::{DeliveryLimit, TextMeasure};
use registry_core::messages::{ClaimDeadline, ConsentNow, Delivery, Message, Taken, take_for_delivery};
use registry_core::{Parsed, RosterDir, Timestamp, parse_record};

use crate::{Sandbox, record_file_name_here};

/// Takes what waits for the session `pid` of `sandbox`'s registry at a
/// Claude Code prompt, with `consent` as the session's answer, and
/// confirms it delivered; returns the messages delivered.
pub fn deliver_at_prompt(sandbox: &Sandbox, pid: u32, consent: ConsentNow) -> Vec<Message> {
    let roster = RosterDir::open_existing(sandbox.root()).unwrap().expect("the registry exists");
    let bytes = std::fs::read(sandbox.record_path(pid)).unwrap();
    let Parsed::Record(record) = parse_record(&bytes, owner_liveness::Pid::new(pid).unwrap()) else {
        panic!("the record of {pid} does not parse");
    };
    let name = record_file_name_here(pid);
    let delivery = Delivery {
        record_file_name: &name,
        record: &record,
        conversation: None,
        event: "claude-code:UserPromptSubmit",
        now: Timestamp::now(),
        lock_deadline: Instant::now() + Duration::from_secs(5),
        claim_deadline: &ClaimDeadline::at(Instant::now() + Duration::from_secs(5)),
        limit: DeliveryLimit { measure: TextMeasure::Utf16Units, max: usize::MAX },
    };
    match take_for_delivery(&roster, &delivery, || consent).unwrap() {
        Taken::HandOver(handover) => handover.confirm(&roster).unwrap(),
        Taken::Nothing | Taken::Waiting(_) => Vec::new(),
    }
}
