//! The record format (docs/contract.md §3): one session's file, its name,
//! its typed values and owner keys, the two readers of its bytes (the fast
//! canonical one and the general one) and the typed reasons a file is
//! malformed; the versioned reader that consent markers share with it.

pub(crate) mod canonical;
pub(crate) mod keys;
pub(crate) mod malformed;
pub(crate) mod name;
pub(crate) mod owner;
pub(crate) mod session_record;
pub(crate) mod stable_hash;
pub(crate) mod timestamp;
pub(crate) mod values;
pub(crate) mod versioned;
