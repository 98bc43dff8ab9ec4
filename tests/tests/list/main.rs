//! What `roster-list` tells its readers, driven through the real binary:
//! the text table and its filters and notes, the JSON rows, escaping, the
//! watch stream, consent on every row, and the messages of misuse. One test
//! binary, a module per concern.

mod escaping;
mod json_contract;
mod list_consent;
mod list_filters;
mod list_notes;
mod messages;
mod watch;
