//! The `desktop` backend: freedesktop notifications over the D-Bus
//! session bus (`org.freedesktop.Notifications`, which dunst, mako,
//! GNOME Shell, KDE Plasma and xfce4-notifyd serve), through notify-rust.
//! A notice carries the default action, labelled "Go to session", which
//! runs `roster-focus` for its session (clicking the notice, or dunst's
//! `dunstctl action`); its urgency follows the trigger (a crash is
//! critical, a finished turn low); a waiting notice stays until it is
//! withdrawn, which closes it (`CloseNotification`); a new notice for the
//! same session replaces it in place (the same id). Each notice opens its
//! own connection, so a session bus that went away and came back is
//! simply used again; that connection is also where the server sends the
//! notice's `ActionInvoked` (a signal addressed to the sender of the
//! notice), so a thread per notice out waits on it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use notify_rust::{Hint, Notification, NotificationHandle, NotificationResponse, Timeout};

use super::{Backend, BackendError};
use crate::notice::{Notice, Urgency};
use crate::triggers::Trigger;

/// The application name notices carry.
const APPLICATION: &str = "roster";

/// The label of the action that goes to the session.
pub const GO_TO_SESSION: &str = "Go to session";

/// What is done when a notice's action is invoked: the command line run
/// and where its outcome is said.
pub type ActionLog = Arc<dyn Fn(&str) + Send + Sync>;

pub struct DesktopBackend {
    /// The notices out, by session key.
    handles: Mutex<HashMap<String, Arc<NotificationHandle>>>,
    /// The `roster-focus` binary an action runs.
    focus_program: PathBuf,
    log: ActionLog,
}

impl DesktopBackend {
    pub fn new(focus_program: PathBuf, log: ActionLog) -> DesktopBackend {
        DesktopBackend { handles: Mutex::new(HashMap::new()), focus_program, log }
    }

    fn notification(notice: &Notice) -> Notification {
        let mut notification = Notification::new();
        notification
            .appname(APPLICATION)
            .summary(&notice.title)
            .body(&notice.body)
            .urgency(match notice.urgency {
                Urgency::Low => notify_rust::Urgency::Low,
                Urgency::Normal => notify_rust::Urgency::Normal,
                Urgency::Critical => notify_rust::Urgency::Critical,
            })
            .hint(Hint::Category("im".to_owned()))
            .timeout(match notice.trigger {
                // Until it is withdrawn, or the crash is seen.
                Trigger::Waiting | Trigger::Crashed => Timeout::Never,
                Trigger::TurnFinished => Timeout::Default,
            });
        if !notice.focus_command.is_empty() {
            notification.action("default", GO_TO_SESSION);
        }
        notification
    }

    /// Waits on a thread of its own, on the notice's own connection, for
    /// its action or its close; the action runs `roster-focus`.
    fn follow_actions(&self, handle: Arc<NotificationHandle>, notice: &Notice) {
        if notice.focus_command.is_empty() {
            return;
        }
        let mut command = notice.focus_command.clone();
        command[0] = self.focus_program.to_string_lossy().into_owned();
        let log = self.log.clone();
        let key = notice.key.clone();
        let spawned = std::thread::Builder::new().name("notify-desktop-action".to_owned()).spawn(move || {
            block_on(handle.wait_for_action_async(|response: &NotificationResponse| {
                let action = match response {
                    NotificationResponse::Default => "default",
                    NotificationResponse::Action(action) => action.as_str(),
                    _ => return,
                };
                log(&format!(
                    "desktop: action {action:?} on the notice for {key}: running {}",
                    command.join(" ")
                ));
                run_focus(&command, &log);
            }));
        });
        if let Err(error) = spawned {
            (self.log)(&format!("desktop: no thread to follow the notice's action: {error}"));
        }
    }
}

/// Runs a future to its end on this thread: notify-rust's waits are
/// futures driven by zbus's own threads, which wake this one.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// Runs `roster-focus` and says what it said when it failed.
fn run_focus(command: &[String], log: &ActionLog) {
    match Command::new(&command[0]).args(&command[1..]).stdin(Stdio::null()).output() {
        Ok(output) if output.status.success() => {}
        Ok(output) => log(&format!(
            "desktop: {} failed ({}): {}",
            command.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => log(&format!("desktop: {} could not be started: {error}", command[0])),
    }
}

impl Backend for DesktopBackend {
    fn name(&self) -> &'static str {
        "desktop"
    }

    fn leaves_the_machine(&self) -> bool {
        false
    }

    fn show(&self, notice: &Notice) -> Result<(), BackendError> {
        let handle = Self::notification(notice)
            .show()
            .map_err(|error| BackendError::new(format!("no notification server answered: {error}")))?;
        let handle = Arc::new(handle);
        let earlier = self.handles.lock().map_err(|_| poisoned())?.insert(notice.key.clone(), handle.clone());
        if let Some(earlier) = earlier {
            block_on(earlier.close_async());
        }
        self.follow_actions(handle, notice);
        Ok(())
    }

    fn replace(&self, notice: &Notice) -> Result<(), BackendError> {
        let out = self.handles.lock().map_err(|_| poisoned())?.remove(&notice.key);
        let Some(out) = out else { return self.show(notice) };
        let mut notification = Self::notification(notice);
        notification.id(out.id());
        let handle = Arc::new(
            notification
                .show()
                .map_err(|error| BackendError::new(format!("no notification server answered: {error}")))?,
        );
        self.handles.lock().map_err(|_| poisoned())?.insert(notice.key.clone(), handle.clone());
        // The replaced notice's waiting thread ends with its close signal
        // from here on: the new connection is the one the server answers.
        self.follow_actions(handle, notice);
        Ok(())
    }

    fn withdraw(&self, notice: &Notice) -> Result<(), BackendError> {
        let out = self.handles.lock().map_err(|_| poisoned())?.remove(&notice.key);
        if let Some(handle) = out {
            block_on(handle.close_async());
        }
        Ok(())
    }
}

fn poisoned() -> BackendError {
    BackendError::new("the notices' table is poisoned")
}
