//! `roster-consent should-arm`: 0 when the session accepts pushes now, 1
//! otherwise, nothing printed whatever happens (fail closed).

use cli_support::{CommonArgs, ExitStatus};
use registry_core::RunningSystem;

use super::{SessionArgs, assess};

/// `should-arm` as the binary runs it: 0 or 1, nothing printed, whatever
/// happens. Even a panic is caught and silenced, since its message would
/// be output.
pub(crate) fn should_arm_exit_status(common: &CommonArgs, session: &SessionArgs) -> ExitStatus {
    std::panic::set_hook(Box::new(|_| {}));
    match std::panic::catch_unwind(|| should_arm(common, session)) {
        Ok(true) => ExitStatus::Success,
        _ => ExitStatus::Failure,
    }
}

/// Should the session accept pushes now? Its owner must be running, and
/// either armed itself, or auto-arm resolves true and it did not disarm
/// itself. Every error is `false` (fail closed); nothing is printed.
pub fn should_arm(common: &CommonArgs, session: &SessionArgs) -> bool {
    assess(common, session, &RunningSystem::read()).is_ok_and(|status| status.session.should_arm())
}
