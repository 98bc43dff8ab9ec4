//! Entry point of `roster-notify`: everything lives in the library so xtask can render its help.

#![no_main]
#![forbid(unsafe_code)]

cli_support::tool_main!(roster_notify::main);
