//! The record format (docs/contract.md §3): one session's file, its name,
//! its typed values and owner keys, the two readers of its bytes (the fast
//! canonical one and the general one) and the typed reasons a file is
//! malformed; the versioned reader that consent markers share with it.
//!
//! Its public face is for the files that share the record's way of being
//! read and written (consent markers: the owner's keys, the versioned
//! reader), for the checks at a tool's edge (each field's limit) and for
//! telling apart why a file is malformed; the record itself is at the
//! crate's root.

pub(crate) mod canonical;
pub(crate) mod keys;
pub(crate) mod location;
pub(crate) mod malformed;
pub(crate) mod name;
pub(crate) mod owner;
pub(crate) mod session_record;
pub(crate) mod stable_hash;
pub(crate) mod timestamp;
pub(crate) mod values;
pub(crate) mod versioned;

pub use location::{
    LOCATION_VALUE_LIMIT, LocationCheck, LocationStatus, MULTIPLEXERS, ScreenLocation, controlling_terminal,
    location_of_adopted, location_of_process, location_of_process_on, terminal_name,
};
pub use malformed::{Field, FieldError, FieldLimit, FieldProblem, Malformed};
pub use owner::{ChainMemberRecord, KeyName, OwnerKeys, UncheckedOwner, read_once, required};
pub use values::{
    AGENT_NAME_LIMIT, CWD_LIMIT, FIELD_LIMITS, HARNESS_LIMIT, HARNESS_VERSION_LIMIT, SESSION_ID_LIMIT,
    SOCKET_PATH_LIMIT, TRANSCRIPT_PATH_LIMIT,
};
pub use versioned::{FormatProblem, Versioned, parse_versioned};
