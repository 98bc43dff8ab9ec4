//! Entry point of `roster-state`: everything lives in the library so xtask can render its help.

#![no_main]
#![forbid(unsafe_code)]

cli_support::tool_main!(roster_state::main);
