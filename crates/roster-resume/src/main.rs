//! Entry point of `roster-resume`: everything lives in the library so xtask can render its help.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    roster_resume::main()
}
