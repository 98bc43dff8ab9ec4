//! Entry point of `roster-register`: everything lives in the library so xtask can render its help.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    roster_register::main()
}
