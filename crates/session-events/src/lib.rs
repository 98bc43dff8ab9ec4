//! The watch's events as a library (docs/contract.md §6.7): the changes of
//! this machine's registry, its owners' exits, the harnesses' own session
//! files, consent re-decisions and message queues turned into typed
//! `Event`s and handed to a `Sink`; one serializer and reader of the
//! NDJSON line every consumer shares (`roster-list --watch`, the
//! many-host watch, a notifier). The process-wide parts (signals, the
//! open-file limit, stdout) stay with the consumer, which passes what ends
//! the watch as a `StopWhen`.

#![forbid(unsafe_code)]

mod event;
mod judge;
#[cfg(test)]
mod made_up;
mod sink;
mod watch;

pub use event::{EVENT_SCHEMA, Event, EventKind, EventRow, HOST_KEY};
pub use registry_core::StopWhen;
pub use registry_core::messages::MessageView;
pub use sink::{Notice, Sink};
pub use watch::{SessionWatch, WatchConfig};
