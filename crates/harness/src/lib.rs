//! harness knows each agent harness roster serves: how to recognise its
//! processes (docs/contract.md §8.1), what it exports in the environment, what its hook
//! payloads say (docs/contract.md §8.2), where it keeps its own record of its live
//! sessions and what those files say (§6.5), and how to edit its hook configuration (§8.3).

#![forbid(unsafe_code)]

mod activity;
mod delivery;
mod detect;
mod exports;
pub mod hook_config;
mod payload;
mod resume;
pub mod session_files;
mod state_payload;
mod suggest;

pub use activity::*;
pub use delivery::*;
pub use detect::*;
pub use exports::*;
pub use payload::*;
pub use resume::*;
pub use state_payload::*;
pub use suggest::{edit_distance, nearest_by_edit_distance, ranked_by_edit_distance};
