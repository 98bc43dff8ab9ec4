//! Entry point of `roster-notify`: everything lives in the library so xtask can render its help.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    roster_notify::main()
}
