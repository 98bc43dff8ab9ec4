//! Where a watch hands what it finds: each event, and the notices about
//! the watch itself (what it cannot watch as it should, and how it makes
//! up for it). The consumer decides how they are shown: `roster-list`
//! prints them, a notifier turns events into notices.

use std::path::PathBuf;

use crate::event::Event;

/// Takes the events of a watch, in order, as they happen.
pub trait Sink {
    /// One event; an error ends the watch with it (a closed stdout, say).
    fn event(&mut self, event: Event) -> std::io::Result<()>;

    /// Something about the watch itself, said once; ignored unless the
    /// consumer shows it.
    fn notice(&mut self, notice: Notice) {
        let _ = notice;
    }
}

/// Anything that takes events one by one is a sink that ignores notices.
impl<F: FnMut(Event) -> std::io::Result<()>> Sink for F {
    fn event(&mut self, event: Event) -> std::io::Result<()> {
        self(event)
    }
}

/// What a watch says about itself, each said once (per reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// From owner `owner` on, owners get no pidfd (`why`, the open-file
    /// limit reached after `watched` owners): their exits are seen on the
    /// next change of the registry instead.
    OwnersUnwatched { owner: u32, why: String, watched: usize },
    /// `path`, which a consent is decided from, cannot be followed
    /// (`why`): consent is decided again on every change of the registry
    /// instead.
    ConsentUnfollowed { path: PathBuf, why: String },
    /// The registry cannot be opened (`why`): it is watched as if it were
    /// absent until it changes and can be opened.
    RegistryUnopenable { why: String },
}
