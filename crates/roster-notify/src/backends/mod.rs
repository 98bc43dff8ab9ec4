//! The one small interface every place a notice can go implements
//! (`Backend`: show, replace, withdraw), and the backends themselves: the
//! desktop (freedesktop notifications over D-Bus), the terminal (OSC 9 /
//! OSC 777), ntfy, a webhook and a command. How each is kept from
//! delaying the others is `workers.rs`.

pub mod desktop;
pub mod exec;
pub mod http;
pub mod terminal;

use crate::notice::Notice;

/// The backends by name, as `--backend` and `[notify] backends` take them.
pub const BACKEND_NAMES: [&str; 5] = ["desktop", "terminal", "ntfy", "webhook", "exec"];

/// Why a backend could not do what it was asked; the worker logs it and
/// tries again with a backoff.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BackendError(pub String);

impl BackendError {
    pub fn new(text: impl Into<String>) -> BackendError {
        BackendError(text.into())
    }
}

/// A place notices go. Each runs on a worker thread of its own, one call
/// at a time; a call may take long or never return (a hung server): the
/// worker gives it up after its timeout.
pub trait Backend: Send + Sync {
    /// Its name in logs and in the configuration (`desktop`, `ntfy`, …).
    fn name(&self) -> &'static str;

    /// Whether what it is handed leaves this machine (then `--redact`
    /// applies to it).
    fn leaves_the_machine(&self) -> bool;

    /// Shows a notice for a session that has none out.
    fn show(&self, notice: &Notice) -> Result<(), BackendError>;

    /// Replaces the session's notice (same `key`) with `notice`, where the
    /// backend can; else shows it.
    fn replace(&self, notice: &Notice) -> Result<(), BackendError> {
        self.show(notice)
    }

    /// Takes the session's notice back, where the backend can; `notice` is
    /// the one last shown for it.
    fn withdraw(&self, notice: &Notice) -> Result<(), BackendError>;
}

/// What the webhook posts and the exec command reads on stdin: one JSON
/// object, `{"schema": 1, "action": "show"|"replace"|"withdraw",
/// "notice": {…}}`.
#[derive(Debug, serde::Serialize)]
pub struct NoticeMessage<'a> {
    pub schema: u32,
    pub action: &'static str,
    pub notice: &'a Notice,
}

impl<'a> NoticeMessage<'a> {
    pub fn new(action: &'static str, notice: &'a Notice) -> NoticeMessage<'a> {
        NoticeMessage { schema: 1, action, notice }
    }

    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a notice serializes")
    }
}
