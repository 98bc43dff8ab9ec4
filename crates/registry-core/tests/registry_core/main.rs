//! The registry-core library at its public face: records on disk, message
//! queues, and what each verdict does to a record. One test binary, a
//! module per concern.

mod message_queue;
mod records_on_disk;
mod verdict_actions;
