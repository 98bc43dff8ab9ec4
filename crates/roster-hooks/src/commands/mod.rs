//! The subcommands of `roster-hooks`, one file each (`print.rs`,
//! `install.rs`, `uninstall.rs`, `status.rs`), and what they share: the
//! harness and scope they are given, the invocation's flags and paths, and
//! the shape of what they print.

pub(crate) mod install;
pub(crate) mod print;
pub(crate) mod status;
pub(crate) mod uninstall;

use std::ffi::OsStr;
use std::io::{self, Write};
use std::path::Path;

use anyhow::Context;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, ValueEnum};
use cli_support::{CommonArgs, OutputFormat, escape_for_terminal, home_relative};
use harness::hook_config::{HookCommands, HookConfigFile, HookHarness, HookPaths, Scope};
use serde_json::{Value, json};

use crate::binaries::{
    BinaryLocation, binaries_missing_from_path_warning, build_directory_warning, locate_binaries,
};

/// The name the tool says its warnings and errors under.
pub(crate) const TOOL: &str = "roster-hooks";

#[derive(Debug, Args)]
pub(crate) struct TargetArgs {
    /// The harness: claude-code, codex, gemini-cli, cursor-agent, copilot, opencode or amp
    #[arg(value_name = "HARNESS", value_parser = HarnessNameParser)]
    harness: HookHarness,

    /// Edit the user's file (every project) or the current project's file
    /// (default: user; copilot only has project; codex, gemini-cli and
    /// cursor-agent only user)
    #[arg(short, long, value_enum, value_name = "SCOPE")]
    scope: Option<ScopeName>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ScopeName {
    /// The user's file, read in every project
    User,
    /// The current directory's project file
    Project,
}

/// Accepts the five hook-capable harnesses, and answers the names of the
/// others with what to do instead rather than a bare "invalid value".
#[derive(Clone, Copy, Debug)]
struct HarnessNameParser;

impl TypedValueParser for HarnessNameParser {
    type Value = HookHarness;

    fn parse_ref(
        &self,
        command: &clap::Command,
        _argument: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<HookHarness, clap::Error> {
        let name = value.to_string_lossy();
        if let Some(harness) = HookHarness::parse(&name) {
            return Ok(harness);
        }
        let known: Vec<&str> = HookHarness::ALL.iter().map(|harness| harness.as_str()).collect();
        let message = match name.as_ref() {
            "goose" => "goose has no session hooks or plugins roster-hooks can install; start it from a wrapper \
                        script that runs `roster-register --pid $$ --harness goose` (or exports ROSTER_SESSION_PID), \
                        see docs/harnesses.md"
                .to_owned(),
            "aider" => "aider runs no hooks; start it from a wrapper script that runs \
                        `roster-register --pid $$ --harness aider` and then execs aider, see docs/harnesses.md"
                .to_owned(),
            _ => harness::unknown_harness_message(
                &format!("harness {:?}", escape_for_terminal(&name)),
                "one roster-hooks can wire",
                &name,
                &known,
            ),
        };
        Err(clap::Error::raw(ErrorKind::InvalidValue, format!("{message}\n")).with_cmd(command))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(HookHarness::ALL.into_iter().map(|harness| PossibleValue::new(harness.as_str()))))
    }
}

impl From<ScopeName> for Scope {
    fn from(scope: ScopeName) -> Self {
        match scope {
            ScopeName::User => Scope::User,
            ScopeName::Project => Scope::Project,
        }
    }
}

/// Everything one invocation needs besides its action.
pub(crate) struct Invocation {
    pub(crate) common: CommonArgs,
    pub(crate) paths: HookPaths,
}

impl Invocation {
    fn json(&self) -> bool {
        self.common.output_format() == OutputFormat::Json
    }

    fn shown(&self, path: &Path) -> String {
        home_relative(path, Some(&self.paths.home))
    }

    fn target(&self, arguments: &TargetArgs) -> anyhow::Result<HookConfigFile> {
        Ok(self.paths.target(arguments.harness, arguments.scope.map(Scope::from))?)
    }

    /// The commands install writes, and the warnings that go with them.
    /// A project's file is committed and read on other machines, where this
    /// machine's paths mean nothing: its hooks call the binaries by name,
    /// through PATH, unless `--bin-dir` says otherwise.
    fn hook_commands(
        &self,
        target: &HookConfigFile,
        bin_dir: Option<&Path>,
    ) -> anyhow::Result<(HookCommands, Vec<String>)> {
        let location = match (bin_dir, target.scope) {
            (None, Scope::Project) => {
                BinaryLocation { directory: None, warning: binaries_missing_from_path_warning() }
            }
            _ => locate_binaries(bin_dir)?,
        };
        let harness = target.harness;
        let roster_dir = match &self.common.dir {
            Some(dir) => Some(
                std::path::absolute(dir)
                    .with_context(|| format!("cannot resolve --dir {}", dir.display()))?,
            ),
            None => None,
        };
        let commands = HookCommands::new(harness, location.directory.as_deref(), roster_dir.as_deref())?;
        let mut warnings: Vec<String> = location.warning.into_iter().collect();
        warnings.extend(location.directory.as_deref().and_then(build_directory_warning));
        Ok((commands, warnings))
    }

    /// Prints warnings to stderr, where they reach a person even when stdout
    /// goes to a file; `--quiet` silences them.
    fn warn(&self, warnings: &[String]) {
        if self.common.quiet {
            return;
        }
        let mut stderr = io::stderr().lock();
        for warning in warnings {
            let _ = writeln!(stderr, "{TOOL}: warning: {}", escape_for_terminal(warning));
        }
    }
}

/// The keys every install and uninstall report starts with: which file,
/// and whether it changed.
fn change_report(target: &HookConfigFile, changed: bool) -> Value {
    json!({
        "harness": target.harness.as_str(),
        "scope": target.scope.as_str(),
        "path": target.path.to_string_lossy(),
        "changed": changed,
    })
}

/// Prints what install or uninstall did, nothing with --quiet: the JSON
/// report (the file, whether it changed, then `more`), or the text
/// `write_text` writes.
fn print_change(
    context: &Invocation,
    target: &HookConfigFile,
    changed: bool,
    more: Value,
    write_text: impl FnOnce(&mut io::StdoutLock<'static>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if context.common.quiet {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    if context.json() {
        let report = with_keys(change_report(target, changed), more);
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write_text(&mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// `head` with the keys of `more` after its own, in order.
fn with_keys(mut head: Value, more: Value) -> Value {
    if let (Some(head), Value::Object(more)) = (head.as_object_mut(), more) {
        head.extend(more);
    }
    head
}

/// The commands install writes: the session's start and end, and the
/// command each state event runs (a plugin's pipes the event, which names
/// itself, into one command for them all).
fn commands_json(harness: HookHarness, commands: &HookCommands) -> Value {
    let state: serde_json::Map<String, Value> = harness
        .state_events()
        .into_iter()
        .map(|event| {
            let command = match harness.uses_plugin_file() {
                true => commands.state_for_any_event(),
                false => commands.for_event(event).into_owned(),
            };
            (harness.event_name(event).to_owned(), json!(command))
        })
        .collect();
    json!({"session_start": commands.session_start, "session_end": commands.session_end, "state": state})
}

fn write_notes(out: &mut impl Write, notes: &[String]) -> io::Result<()> {
    for note in notes {
        writeln!(out, "note: {}", escape_for_terminal(note))?;
    }
    Ok(())
}
