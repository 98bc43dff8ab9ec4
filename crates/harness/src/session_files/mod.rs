//! Where harnesses keep their own records of their live sessions, and what
//! those files say (docs/contract.md §6.5): Claude Code's session files
//! (`claude_code.rs`) and Copilot CLI's session directories with their
//! lock files (`copilot.rs`). Formats only: reading them safely, judging
//! the sessions they claim and merging them with roster's records is
//! registry-core's (`adopted/`).

pub mod claude_code;
pub mod copilot;
