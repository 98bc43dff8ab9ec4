//! Where a session shows on screen, checked and reached (docs/contract.md
//! §6.7): a record's `location` is what its owner's environment said at
//! registration, a claim that a restarted tmux server or a reused window
//! number can make false. `Verifier` checks each location against the
//! multiplexer itself (the pane is there and runs the session's owner or
//! one of its ancestors) before it is shown as current or used; `focus`
//! gives the commands that take an attached client there; `front` tells
//! whether the pane is the one in front of its user now.

mod focus;
mod front;
mod run;
mod verify;

pub use focus::{FocusPlan, FocusRefusal, focus_plan};
pub use front::{InFront, in_front};
pub use run::{CommandAnswer, run_bounded};
pub use verify::Verifier;
