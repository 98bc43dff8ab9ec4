//! Messages queued for a session (docs/contract.md §6.6): `roster-send`
//! queues one for a live session that accepts messages, and a hook of the
//! target session's harness later hands the session what waits for it.
//!
//! Each session's queue is a directory of its own beside its record,
//! `messages/<record name>/`, holding one file per message, named
//! `<seq>-<id>.json` while pending and `<seq>-<id>.done.json` once settled
//! (delivered, expired or refused), so that counting what waits is reading
//! names. Every change to a queue is made under an `flock` on its
//! directory, which orders senders (sequence numbers) and deliveries (at
//! most once). A queued message is written durably; it is believed only
//! when its file is one roster trusts, and delivered only to the owner its
//! record named when it was queued.
//!
//! `format.rs` is the file format and the bounds, `frame.rs` a message
//! as the model reads it, `queue.rs` the
//! directory, its lock and its files; `send.rs`, `delivery.rs` and
//! `status.rs` are the three things done to a queue, `removal.rs`
//! removes queues with their sessions for prune (keeping what became of
//! their messages, `archive.rs`), and `view.rs` is a queue
//! as a watcher reads it. `shown.rs` is a message as roster's outputs
//! show it (`MessageView`).

mod archive;
mod delivery;
mod format;
mod frame;
mod queue;
pub(crate) mod removal;
mod send;
mod shown;
mod status;
mod view;

pub use archive::KEPT_FOR as OUTCOMES_KEPT_FOR;
pub use delivery::{
    ClaimDeadline, ConsentNow, Delivery, HandOver, Taken, WaitingQueue, anything_waits, pending_count,
    take_for_delivery, take_waiting, waiting_queue,
};
pub use format::{
    AddressedBy, CONVERSATION_ENDED, DEFAULT_TIME_TO_LIVE, HANDOVER_UNCONFIRMED, MAX_PENDING, MAX_SETTLED,
    MAX_TEXT_BYTES, MESSAGE_FORMAT, Message, MessageFileName, MessageId, MessageText, Outcome, OutcomeKind,
    Recipient, SESSION_ENDED, Sender, TIME_TO_LIVE_RAN_OUT, TextProblem, message_file_name,
};
pub use frame::{escape_sender_field, framed, framed_length, joined_length, text_for_model};
pub(crate) use queue::queue_name;
pub use queue::{queue_directory, queue_names};
pub use send::{queue_message, withdraw_pending};
pub use shown::MessageView;
pub use status::{FoundMessage, expire_message, message_status};
pub use view::QueueView;
