//! Exit statuses and the one-line error report (docs/contract.md §6): `0` done, `1`
//! failed, `2` bad input or usage, `3` refused by rule, `4`/`5` for `roster-send --wait`
//! (docs/contract.md §6.6), and `6` for hosts that did not answer
//! `roster-list --host` (docs/contract.md §6.7), `7` for `roster-focus`
//! out of reach (§6.8), `8`/`9`/`10` for `roster-resume` (§6.9). [`ExitStatus`] is the
//! one enum every binary exits with; each library error kind maps to it
//! through a `From<&Error>` impl below, and the binary prints `{:#}` once.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// How a roster binary ends (docs/contract.md §6), modelled on uv's `ExitStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// Done (0); also a write to a closed pipe, which is no failure of the tool.
    Success,
    /// Failed (1): an I/O error, the registry busy, anything without a rule.
    Failure,
    /// Bad input or usage (2): a flag, environment value or payload that cannot be used.
    BadInput,
    /// Refused by rule (3): an untrusted directory, a conflict, an owner not running.
    Refused,
    /// What was waited for will never happen (4): a message expired, its
    /// time to live run out or its session ended (`roster-send --wait`).
    Expired,
    /// The wait ran out before what was waited for happened (5): a message
    /// still pending (`roster-send --wait`).
    StillPending,
    /// Some hosts did not answer (6): `roster-list --host` printed the rows
    /// of the hosts that did, and said on stderr which did not and why.
    HostsUnanswered,
    /// Out of reach (7): `roster-focus` found the session, but where it
    /// shows nothing here can bring it to the front (a terminal of its own,
    /// a multiplexer no client is attached to).
    OutOfReach,
    /// Already running (8): `roster-resume` was asked for a session whose
    /// id a live session holds now, or that another `roster-resume`
    /// started and whose process still runs.
    AlreadyRunning,
    /// Its directory is gone (9): `roster-resume` cannot start a session
    /// in a directory that no longer exists.
    DirectoryGone,
    /// Not installed (10): the harness's program is not on `PATH`.
    NotInstalled,
}

impl ExitStatus {
    /// The number the process exits with.
    pub const fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::BadInput => 2,
            ExitStatus::Refused => 3,
            ExitStatus::Expired => 4,
            ExitStatus::StillPending => 5,
            ExitStatus::HostsUnanswered => 6,
            ExitStatus::OutOfReach => 7,
            ExitStatus::AlreadyRunning => 8,
            ExitStatus::DirectoryGone => 9,
            ExitStatus::NotInstalled => 10,
        }
    }

    /// The status an error deserves: a write to a closed pipe anywhere in
    /// its chain is success; else the outermost link of a kind roster knows
    /// decides (see [`status_of_link`]); else failure.
    pub fn of(error: &anyhow::Error) -> ExitStatus {
        if error.chain().any(|cause| status_of_link(cause) == Some(ExitStatus::Success)) {
            return ExitStatus::Success;
        }
        error.chain().find_map(status_of_link).unwrap_or(ExitStatus::Failure)
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        ExitCode::from(status.code())
    }
}

/// Bad input or usage at the binary's edge (exit 2).
#[derive(Debug)]
pub struct BadInput(pub String);

/// Refused by a rule at the binary's edge (exit 3).
#[derive(Debug)]
pub struct Refused(pub String);

/// A run that ends with a status of its own and says why on stderr: a
/// message refused by consent (1), expired (4), still pending (5).
#[derive(Debug)]
pub struct EndedWith {
    pub status: ExitStatus,
    pub message: String,
}

impl std::fmt::Display for EndedWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EndedWith {}

impl From<&EndedWith> for ExitStatus {
    fn from(ended: &EndedWith) -> ExitStatus {
        ended.status
    }
}

/// A path roster would have to hold as text that is not valid UTF-8: bad
/// input (exit 2). Records and markers are JSON text, and a lossy
/// conversion would put U+FFFD where the bytes were, naming another path
/// (a sibling directory called `\u{fffd}` whose `.roster.toml` would then
/// decide the session's consent). The path is kept as it is, so that the
/// report shows its bytes exactly (`/tmp/\xff`).
#[derive(Debug)]
pub struct NotUtf8Path {
    /// What the path is, as the message names it: `the session directory`, `--socket`.
    pub what: String,
    pub path: PathBuf,
    /// Why roster needs text there, and what to give instead.
    pub advice: String,
}

impl NotUtf8Path {
    /// A directory roster would record or compare as text; `fix` says what
    /// to do instead.
    pub fn directory(what: &str, path: &Path, fix: &str) -> NotUtf8Path {
        NotUtf8Path {
            what: what.to_owned(),
            path: path.to_owned(),
            advice: format!("roster records directories as text; {fix}"),
        }
    }
}

impl std::fmt::Display for NotUtf8Path {
    /// The message as a terminal may show it: the parts escaped, the path
    /// with `\xff` for each byte that is not UTF-8. `terminal_message`
    /// prints it as it is: escaping it again would double the backslashes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} is not valid UTF-8: {}",
            crate::text::escape_for_terminal(&self.what),
            crate::text::escape_path_for_terminal(&self.path),
            crate::text::escape_for_terminal(&self.advice)
        )
    }
}

impl std::error::Error for NotUtf8Path {}

impl From<&NotUtf8Path> for ExitStatus {
    fn from(_: &NotUtf8Path) -> ExitStatus {
        ExitStatus::BadInput
    }
}

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}
impl std::error::Error for Refused {}

impl From<&BadInput> for ExitStatus {
    fn from(_: &BadInput) -> ExitStatus {
        ExitStatus::BadInput
    }
}

impl From<&Refused> for ExitStatus {
    fn from(_: &Refused) -> ExitStatus {
        ExitStatus::Refused
    }
}

impl From<&registry_core::Error> for ExitStatus {
    fn from(error: &registry_core::Error) -> ExitStatus {
        use registry_core::Error;
        match error {
            Error::UntrustedDirectory { .. } | Error::SessionIdConflict { .. } | Error::NotOurs { .. } => {
                ExitStatus::Refused
            }
            Error::BadInput(_) | Error::NoHome => ExitStatus::BadInput,
            Error::Busy { .. } | Error::Io { .. } | Error::QueueFull { .. } | Error::QueueLocked { .. } => {
                ExitStatus::Failure
            }
        }
    }
}

/// Sees through the registry errors consent wraps (transparently, so that
/// their message is unchanged): they keep the status they have unwrapped.
impl From<&consent::Error> for ExitStatus {
    fn from(error: &consent::Error) -> ExitStatus {
        use consent::Error;
        match error {
            Error::Registry(inner) => ExitStatus::from(inner),
            Error::SessionDirectory { .. } | Error::NoSessionDirectory { .. } => ExitStatus::BadInput,
            Error::SessionDirectoryUnreadable { .. } | Error::DisarmedMeanwhile { .. } => ExitStatus::Failure,
        }
    }
}

impl From<&harness::PayloadError> for ExitStatus {
    fn from(_: &harness::PayloadError) -> ExitStatus {
        ExitStatus::BadInput
    }
}

impl From<&harness::hook_config::HookConfigError> for ExitStatus {
    fn from(error: &harness::hook_config::HookConfigError) -> ExitStatus {
        use harness::hook_config::HookConfigError;
        match error {
            HookConfigError::Unusable { .. } => ExitStatus::Refused,
            HookConfigError::Io { .. } => ExitStatus::Failure,
            HookConfigError::BadInput(_) => ExitStatus::BadInput,
        }
    }
}

impl From<&owner_liveness::ResolveError> for ExitStatus {
    fn from(_: &owner_liveness::ResolveError) -> ExitStatus {
        ExitStatus::BadInput
    }
}

impl From<&owner_liveness::CaptureError> for ExitStatus {
    fn from(error: &owner_liveness::CaptureError) -> ExitStatus {
        use owner_liveness::CaptureError;
        match error {
            CaptureError::NotRunning(_) | CaptureError::ExitedDuringCapture(_) => ExitStatus::Refused,
            CaptureError::ProcUnreadable { .. } | CaptureError::System { .. } => ExitStatus::Failure,
        }
    }
}

/// A write to a closed pipe (`roster-list | head`) is not a failure of the tool.
impl From<&io::Error> for ExitStatus {
    fn from(error: &io::Error) -> ExitStatus {
        if error.kind() == io::ErrorKind::BrokenPipe { ExitStatus::Success } else { ExitStatus::Failure }
    }
}

/// The same for a JSON serializer writing to a closed pipe.
impl From<&serde_json::Error> for ExitStatus {
    fn from(error: &serde_json::Error) -> ExitStatus {
        if error.io_error_kind() == Some(io::ErrorKind::BrokenPipe) {
            ExitStatus::Success
        } else {
            ExitStatus::Failure
        }
    }
}

/// The status of one link of an error chain, when it is of a kind that has
/// a `From<&kind> for ExitStatus` above. The binaries carry errors as
/// `anyhow::Error`, which keeps each link's type; this closed list of those
/// kinds is the one place a link is matched to its impl.
fn status_of_link(cause: &(dyn std::error::Error + 'static)) -> Option<ExitStatus> {
    macro_rules! first_known_kind {
        ($($kind:ty),* $(,)?) => {
            $(if let Some(error) = cause.downcast_ref::<$kind>() {
                return Some(ExitStatus::from(error));
            })*
        };
    }
    first_known_kind!(
        BadInput,
        Refused,
        EndedWith,
        NotUtf8Path,
        registry_core::Error,
        consent::Error,
        harness::PayloadError,
        harness::hook_config::HookConfigError,
        owner_liveness::ResolveError,
        owner_liveness::CaptureError,
        io::Error,
        serde_json::Error,
    );
    None
}

/// `{error:#}` as a terminal may show it: each link of the chain escaped
/// (`escape_for_terminal`), joined by `: ` as `{:#}` joins them, except a
/// `NotUtf8Path`, whose message is escaped already.
pub fn terminal_message(error: &anyhow::Error) -> String {
    let links: Vec<String> = error
        .chain()
        .map(|link| match link.downcast_ref::<NotUtf8Path>() {
            Some(not_utf8) => not_utf8.to_string(),
            None => crate::text::escape_for_terminal(&link.to_string()).into_owned(),
        })
        .collect();
    links.join(": ")
}

/// Prints `tool: {error:#}` on one escaped line to stderr (unless the
/// status is success: a closed pipe) and returns the status for it.
pub fn report_and_exit(tool: &str, error: &anyhow::Error) -> ExitCode {
    let status = ExitStatus::of(error);
    if status != ExitStatus::Success {
        let message = terminal_message(error);
        let message = message.trim_end_matches('.');
        let _ = writeln!(io::stderr().lock(), "{tool}: {message}");
    }
    ExitCode::from(status)
}

/// Runs a tool body and maps its result to an exit code. clap's own errors
/// (usage, `--help`, `--version`) are printed by clap with its exit codes
/// normalised to the contract: 0 for help and version, 2 for usage.
pub fn run_tool(tool: &str, body: impl FnOnce() -> anyhow::Result<()>) -> ExitCode {
    match body() {
        Ok(()) => ExitCode::from(ExitStatus::Success),
        Err(error) => {
            let error = match error.downcast::<clap::Error>() {
                Ok(mut clap_error) => {
                    rank_suggestions(&mut clap_error);
                    anyhow::Error::new(clap_error)
                }
                Err(error) => error,
            };
            if let Some(clap_error) = error.downcast_ref::<clap::Error>() {
                if matches!(
                    clap_error.kind(),
                    clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                        | clap::error::ErrorKind::MissingSubcommand
                ) {
                    let _ = write!(io::stderr().lock(), "{}", missing_subcommand_report(tool, clap_error));
                    return ExitCode::from(ExitStatus::BadInput);
                }
                if !clap_error.use_stderr() {
                    // --help and --version: clap prints them to stdout.
                    let _ = clap_error.print();
                    return ExitCode::from(ExitStatus::Success);
                }
                let arguments: Vec<String> = std::env::args_os()
                    .skip(1)
                    .map(|argument| argument.to_string_lossy().into_owned())
                    .collect();
                let message = negative_value_error(clap_error, &arguments)
                    .unwrap_or_else(|| one_line_usage_error(clap_error));
                let _ = writeln!(io::stderr().lock(), "{tool}: {message}");
                return ExitCode::from(ExitStatus::BadInput);
            }
            report_and_exit(tool, &error)
        }
    }
}

/// Puts clap's suggestions for a mistyped subcommand, flag or value in the
/// order of their edit distance to what was typed, nearest first: clap
/// orders them by its own similarity, which put `uninstall` and even
/// `print` before `install` for `instal`.
pub fn rank_suggestions(error: &mut clap::Error) {
    use clap::error::{ContextKind, ContextValue};
    let typed = [ContextKind::InvalidSubcommand, ContextKind::InvalidArg, ContextKind::InvalidValue]
        .into_iter()
        .find_map(|kind| match error.get(kind) {
            Some(ContextValue::String(typed)) => Some(typed.clone()),
            _ => None,
        });
    let Some(typed) = typed else { return };
    for kind in [ContextKind::SuggestedSubcommand, ContextKind::SuggestedArg, ContextKind::SuggestedValue] {
        let Some(ContextValue::Strings(suggestions)) = error.get(kind) else { continue };
        let suggestions: Vec<&str> = suggestions.iter().map(String::as_str).collect();
        let ranked: Vec<String> =
            harness::ranked_by_edit_distance(&typed, &suggestions).into_iter().map(str::to_owned).collect();
        error.insert(kind, ContextValue::Strings(ranked));
    }
}

/// A tool with subcommands run without one: that one is needed, the usage
/// and the subcommands with what each does (clap's help, cut to those
/// parts), for stderr.
pub fn missing_subcommand_report(tool: &str, error: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let mut help = error.render().to_string();
    // With other arguments given, clap reports the missing subcommand as an
    // error that names the subcommands instead of showing the help.
    if let Some(ContextValue::Strings(names)) = error.get(ContextKind::ValidSubcommand) {
        let usage = help.lines().find(|line| line.starts_with("Usage:")).unwrap_or("").to_owned();
        help = format!("{usage}\n\nCommands:\n");
        for name in names {
            help.push_str(&format!("  {name}\n"));
        }
    }
    let mut report = format!("{tool}: no subcommand given; name one of these\n\n");
    let mut keep = false;
    for line in help.lines() {
        if line.starts_with("Usage:") || line.starts_with("Commands:") {
            keep = true;
        } else if !line.starts_with(' ') && !line.is_empty() {
            keep = false;
        }
        if keep {
            report.push_str(line);
            report.push('\n');
        }
    }
    let mut report = report.trim_end().to_owned();
    report.push_str(&format!("\n\nSee '{tool} --help' for more.\n"));
    report
}

/// A flag given a negative number (`--older-than -1d`, `--pid -5`): clap
/// takes the value for an unknown flag; say instead which flag got it and
/// that it must not be negative. `arguments` are the raw arguments.
pub fn negative_value_error(error: &clap::Error, arguments: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(unknown)) = error.get(ContextKind::InvalidArg) else { return None };
    if !unknown.strip_prefix('-').is_some_and(|rest| rest.starts_with(|first: char| first.is_ascii_digit())) {
        return None;
    }
    let position = arguments.iter().position(|argument| argument.starts_with(unknown.as_str()))?;
    let flag = arguments[..position].last().filter(|flag| flag.starts_with("--"))?;
    let value = crate::text::escape_for_terminal(&arguments[position]).into_owned();
    Some(format!("{flag} {value}: a negative value is not accepted; give {flag} a positive one (see --help)"))
}

/// clap's usage error as one line: its first paragraph without the
/// `error: ` prefix (which names the missing or wrong arguments), the
/// possible values or tip if clap gives one (`tip: a similar argument
/// exists: '--agent'`), and where to read more.
pub fn one_line_usage_error(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let mut paragraphs = rendered.split("\n\n");
    let mut first: Vec<&str> =
        paragraphs.next().unwrap_or("").lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    // clap puts its suggestions in paragraphs of their own after the first.
    first.extend(paragraphs.map(str::trim).filter(|paragraph| paragraph.starts_with("tip: ")));
    let mut parts: Vec<String> = Vec::new();
    for (index, line) in first.iter().enumerate() {
        let line = if index == 0 { line.strip_prefix("error: ").unwrap_or(line) } else { line };
        let line = line.strip_prefix("tip: ").unwrap_or(line);
        parts.push(line.trim_end_matches(':').to_owned());
    }
    if parts.is_empty() {
        parts.push("invalid arguments".to_owned());
    }
    let message = format!("{}; see --help", parts.join(": ").replace(": [", " ["));
    crate::text::escape_for_terminal(&message).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path that is not UTF-8 is shown by its bytes, once escaped: the
    /// report does not double the backslash of `\xff`, and still escapes
    /// every other link.
    #[test]
    fn a_path_that_is_not_utf8_is_shown_by_its_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff\x1b\\"));
        let error = anyhow::Error::new(NotUtf8Path::directory("the session directory", path, "use another"))
            .context("registering in /tmp/a\\b");
        assert_eq!(
            terminal_message(&error),
            "registering in /tmp/a\\\\b: the session directory /tmp/\\xff\\e\\\\ is not valid UTF-8: \
             roster records directories as text; use another"
        );
        assert_eq!(ExitStatus::of(&error), ExitStatus::BadInput);
        let plain = anyhow::anyhow!("a\u{202e}b\\c").context("x");
        assert_eq!(terminal_message(&plain), crate::text::escape_for_terminal(&format!("{plain:#}")));
    }

    #[test]
    fn statuses_follow_the_chain() {
        let bad = anyhow::Error::new(BadInput("--agent is empty".into())).context("reading flags");
        assert_eq!(ExitStatus::of(&bad), ExitStatus::BadInput);
        let refused = anyhow::Error::new(Refused("conflict".into()));
        assert_eq!(ExitStatus::of(&refused), ExitStatus::Refused);
        let plain = anyhow::anyhow!("disk on fire");
        assert_eq!(ExitStatus::of(&plain), ExitStatus::Failure);
        let pipe = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing stdout");
        assert_eq!(ExitStatus::of(&pipe), ExitStatus::Success);
        let json_pipe = anyhow::Error::new(serde_json::Error::io(io::Error::from(io::ErrorKind::BrokenPipe)));
        assert_eq!(ExitStatus::of(&json_pipe), ExitStatus::Success);
    }

    /// Regression: consent wraps registry errors transparently, so a lookup
    /// by type saw only the wrapper and roster-prune, which passed no
    /// lookups, exited 1 for an untrusted directory met while reaping markers.
    #[test]
    fn registry_errors_inside_consent_errors_keep_their_status() {
        let untrusted = registry_core::Error::UntrustedDirectory {
            path: "/r".into(),
            problem: "is a symlink".into(),
            fix: "remove it".into(),
        };
        let wrapped = anyhow::Error::new(consent::Error::from(untrusted)).context("pruning consent markers");
        assert_eq!(ExitStatus::of(&wrapped), ExitStatus::Refused);
    }

    #[test]
    fn statuses_become_the_documented_exit_codes() {
        let codes: Vec<u8> = [
            ExitStatus::Success,
            ExitStatus::Failure,
            ExitStatus::BadInput,
            ExitStatus::Refused,
            ExitStatus::Expired,
            ExitStatus::StillPending,
            ExitStatus::HostsUnanswered,
            ExitStatus::OutOfReach,
            ExitStatus::AlreadyRunning,
            ExitStatus::DirectoryGone,
            ExitStatus::NotInstalled,
        ]
        .into_iter()
        .map(ExitStatus::code)
        .collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }

    fn usage_error(arguments: &[&str]) -> clap::Error {
        let command = clap::Command::new("tool")
            .arg(clap::Arg::new("agent").long("agent"))
            .arg(clap::Arg::new("older-than").long("older-than"));
        command.try_get_matches_from(arguments).expect_err("the arguments are wrong")
    }

    /// Regression: clap's "a similar argument exists" tip was dropped.
    #[test]
    fn usage_errors_keep_clap_suggestions_on_one_line() {
        let message = one_line_usage_error(&usage_error(&["tool", "--agnt", "x"]));
        assert_eq!(
            message,
            "unexpected argument '--agnt' found: a similar argument exists: '--agent'; see --help"
        );
    }

    /// Regression: `roster-hooks instal` suggested `print`, `uninstall`,
    /// `install`, in that order.
    #[test]
    fn suggestions_come_nearest_first() {
        let command = clap::Command::new("tool")
            .subcommand(clap::Command::new("print"))
            .subcommand(clap::Command::new("install"))
            .subcommand(clap::Command::new("uninstall"));
        for (typed, first) in [("instal", "'install'"), ("unistall", "'uninstall'"), ("prnt", "'print'")] {
            let mut error = command.clone().try_get_matches_from(["tool", typed]).expect_err("a typo");
            rank_suggestions(&mut error);
            let message = one_line_usage_error(&error);
            let suggested =
                message.split("exist: ").nth(1).or(message.split("exists: ").nth(1)).unwrap_or("");
            assert!(suggested.starts_with(first), "{typed}: {message}");
        }
    }

    #[test]
    fn a_negative_value_names_its_flag() {
        let arguments = ["tool", "--older-than", "-1d"];
        let error = usage_error(&arguments);
        let raw: Vec<String> = arguments[1..].iter().map(|argument| (*argument).to_owned()).collect();
        assert_eq!(
            negative_value_error(&error, &raw).as_deref(),
            Some(
                "--older-than -1d: a negative value is not accepted; give --older-than a positive one (see --help)"
            )
        );
        let other = usage_error(&["tool", "--bogus"]);
        assert_eq!(negative_value_error(&other, &["--bogus".to_owned()]), None);
    }
}
