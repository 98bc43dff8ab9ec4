//! Shared helpers for the black-box tests in `tests/tests/`: where the built
//! binaries are, a private roster directory per test, owner processes that
//! die with the test, running a binary with a clean environment and a
//! deadline, and reading what it printed and wrote.
//!
//! The tests drive the real binaries as a user's shell or a harness hook
//! would, so a test can only see what a process can see. The roster
//! libraries are linked only where the harness must do exactly what they
//! do (shell quoting, pidfds, atomic writes, seeding records), never to
//! look behind a binary's back.
//!
//! The one harness of the workspace: every black-box test, the help checks
//! of the binary crates, the long runs (`tests/soak`, `tests/faults`,
//! `tests/e2e`) and `cargo xtask bench` build on it.

pub mod help;
pub mod hooks;
pub mod http_recorder;
pub mod measure;
pub mod notification_desktop;
pub mod owners;
pub mod process_exit;
pub mod seed;
pub mod shell_completion;
pub mod sshd;
pub mod strace;
pub mod tmux;
pub mod workspace;

pub use harness::hook_config::shell_quote;

mod direct_delivery;
mod locks;
mod owner_processes;
mod process;
mod random;
mod records;
mod sandbox;
mod session_shell;
mod text;
mod time;
mod tools;

pub use direct_delivery::*;
pub use locks::*;
pub use owner_processes::*;
pub use process::*;
pub use random::*;
pub use records::*;
pub use sandbox::*;
pub use session_shell::*;
pub use text::*;
pub use time::*;
pub use tools::*;
