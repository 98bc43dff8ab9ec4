//! `roster-hooks`: wires `roster-register` and `roster-prune` into an agent
//! harness's own hook configuration (docs/contract.md §8.3), and says where they are
//! wired. The editing itself lives in `harness::hook_config`; this crate is
//! the command line around it. The clap `Command` is built here so that xtask
//! renders man pages and completions from the definition users run.

#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use cli_support::manual::{self, EnvVar, Example, ExitStatusDoc, FileEntry, Manual};
use cli_support::{
    CommonArgs, ExitStatus, OutputFormat, command_for_terminal, escape_for_terminal,
    escape_source_text_for_terminal, home_relative, paint, render_table,
};
use harness::hook_config::{
    self, CODEX_TRUST_HINT, HookCommands, HookConfigFile, HookHarness, HookPaths, HookStatus, Scope,
};
use owner_liveness::retry_interrupted;
use serde_json::{Value, json};

const TOOL: &str = "roster-hooks";

/// Wire roster's session hooks into an agent harness's own configuration
#[derive(Debug, Parser)]
#[command(
    name = "roster-hooks",
    version,
    propagate_version = true,
    subcommand_required = true,
    arg_required_else_help = true
)]
struct HooksCommandLine {
    #[command(flatten)]
    common: CommonArgs,

    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Show the hook entries install would merge, for adding them by hand
    Print(PrintArgs),

    /// Merge roster's hooks (session start and end, and each state event) into a harness's configuration
    Install(InstallArgs),

    /// Remove exactly the hooks install added, its backup and the directories it created
    Uninstall(TargetArgs),

    /// Say for each harness whether roster's hooks are installed
    Status(StatusArgs),
}

#[derive(Debug, Args)]
struct TargetArgs {
    /// The harness: claude-code, codex, gemini-cli, cursor-agent, copilot, opencode or amp
    #[arg(value_name = "HARNESS", value_parser = HarnessNameParser)]
    harness: HookHarness,

    /// Edit the user's file (every project) or the current project's file
    /// (default: user; copilot only has project; codex, gemini-cli and
    /// cursor-agent only user)
    #[arg(short, long, value_enum, value_name = "SCOPE")]
    scope: Option<ScopeName>,
}

#[derive(Debug, Args)]
struct InstallArgs {
    #[command(flatten)]
    target: TargetArgs,

    /// Call roster-register, roster-prune and roster-state in DIR (default: by name through PATH in
    /// project files, else the directory roster-hooks runs from)
    #[arg(long, value_name = "DIR")]
    bin_dir: Option<PathBuf>,
}

type PrintArgs = InstallArgs;

#[derive(Debug, Args)]
struct StatusArgs {
    /// Report only this harness (default: every harness)
    #[arg(value_name = "HARNESS", value_parser = HarnessNameParser)]
    harness: Option<HookHarness>,

    /// Report only files of this scope (default: every scope)
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

/// Where the hooks find roster-register, roster-prune and roster-state, and what the user
/// should know about it.
struct BinaryLocation {
    directory: Option<PathBuf>,
    warning: Option<String>,
}

/// Everything one invocation needs besides its action.
struct Invocation {
    common: CommonArgs,
    paths: HookPaths,
}

/// The clap command, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(command_without_manual(), &manual())
}

/// The clap command that parses: `command()` less the manual, which is
/// built only when help is shown.
fn command_without_manual() -> clap::Command {
    HooksCommandLine::command().mut_arg("dir", |argument| {
        argument.help(
            "Make the installed hooks use DIR as the roster directory (they get --dir DIR; \
             default: ROSTER_DIR or the default when they run)",
        )
    })
}

/// Examples, notes, environment, files and exit statuses, the subcommands'
/// examples among them: `--help` and the man page both render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Add roster's hooks to Claude Code's user settings:",
                commands: &["roster-hooks install claude-code"],
                output: &[],
            },
            Example {
                description: "Only for the current project:",
                commands: &["roster-hooks install claude-code --scope project"],
                output: &[],
            },
            Example {
                description: "Show where roster's hooks are installed, for a script:",
                commands: &["roster-hooks status --format json"],
                output: &[],
            },
            Example {
                description: "Show the entries to merge by hand into Codex's hooks.json:",
                commands: &["roster-hooks print codex"],
                output: &[],
            },
            Example {
                description: "Remove exactly what install added:",
                commands: &["roster-hooks uninstall claude-code"],
                output: &[],
            },
        ],
        notes: vec![
            state_events_note(),
            "Every change to a settings file leaves every byte that is not roster's as it was (comments, \
             key order, number spelling, line ends); install keeps the previous file as \
             <file>.roster-backup; uninstall removes roster's hooks, that backup, and a file and \
             directories left holding nothing else, so nothing of roster's stays behind. The plugin files \
             of opencode and amp are roster's own, written whole and removed whole."
                .to_owned(),
            "User-scope hooks call roster-register, roster-prune and roster-state by absolute path: the directory \
             roster-hooks runs from, or --bin-dir. Project-scope hooks (.claude/settings.json, \
             .github/hooks/roster.json, the project plugin files) are committed and shared, so they call \
             them by name through PATH unless --bin-dir is given; install and status warn when they are \
             not on PATH. With --dir DIR the hooks carry --dir DIR as well; without it they use \
             ROSTER_DIR or the default when they run. Hooks that would call the binaries in a cargo build \
             directory (target/debug, target/release, target/<triple>/release) are installed with a \
             warning: `cargo clean` breaks them; install roster first (cargo xtask install, or the Debian \
             package) and run the installed roster-hooks."
                .to_owned(),
            "status says, per harness and scope: installed, partly-installed, not-installed, untrusted \
             (Codex has not trusted them), broken (a program a hook runs is missing or not executable, so \
             every run fails), unparseable or unreadable, with a detail naming the fix."
                .to_owned(),
            format!(
                "Codex runs a hook only once you trust it ({CODEX_TRUST_HINT}); roster-hooks cannot compute \
                 Codex's trust hash, so it never writes trust entries, and status reports hooks Codex has \
                 not trusted. Copilot CLI runs project hooks only in a folder you trust."
            ),
        ],
        environment: vec![
            EnvVar { name: "HOME", meaning: "Where the user-scope configuration files are found." },
            EnvVar {
                name: "CLAUDE_CONFIG_DIR",
                meaning: "Claude Code's configuration directory, instead of ~/.claude.",
            },
            EnvVar { name: "CODEX_HOME", meaning: "Codex's home directory, instead of ~/.codex." },
            EnvVar {
                name: "XDG_CONFIG_HOME",
                meaning: "Where opencode's user plugin goes, instead of ~/.config: \
                          $XDG_CONFIG_HOME/opencode/plugins/roster.js.",
            },
            EnvVar {
                name: "ROSTER_DIR",
                meaning: "Not read by roster-hooks: the installed hooks read it when they run. Give --dir \
                          to have the hooks carry --dir instead.",
            },
            manual::NO_COLOR_VARIABLE,
            manual::TERM_VARIABLE,
        ],
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            FileEntry {
                path: "~/.claude/settings.json",
                meaning: "The claude-code hooks: Claude Code's user settings (--scope project: \
                          .claude/settings.json in the current directory).",
            },
            FileEntry { path: "~/.codex/hooks.json", meaning: "The codex hooks: Codex's hooks file." },
            FileEntry {
                path: "~/.codex/config.toml",
                meaning: "Read only: where Codex keeps the hashes of the hooks the user trusts.",
            },
            FileEntry {
                path: "~/.gemini/settings.json",
                meaning: "The gemini-cli hooks: Gemini CLI's settings.",
            },
            FileEntry {
                path: "~/.cursor/hooks.json",
                meaning: "The cursor-agent hooks: Cursor agent's hooks file.",
            },
            FileEntry {
                path: ".github/hooks/roster.json",
                meaning: "The copilot hooks: Copilot CLI's project hooks, in the current directory.",
            },
            FileEntry {
                path: "~/.config/opencode/plugins/roster.js",
                meaning: "The opencode plugin, roster's own file (--scope project: \
                          .opencode/plugins/roster.js in the current directory).",
            },
            FileEntry {
                path: "~/.config/amp/plugins/roster.ts",
                meaning: "The amp plugin, roster's own file (--scope project: .amp/plugins/roster.ts in \
                          the current directory).",
            },
            FileEntry {
                path: "<file>.roster-backup",
                meaning: "The previous version of each configuration file roster-hooks changed.",
            },
        ],
        exit_statuses: &[
            manual::EXIT_DONE,
            ExitStatusDoc { status: ExitStatus::Failure, meaning: "Failed: an I/O error." },
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage: an unknown harness, a scope the harness has no file for, \
                          HOME unset.",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "Refused by rule: a configuration file roster-hooks cannot parse; nothing is \
                          written.",
            },
        ],
        subcommands: vec![
            (
                "print",
                Manual {
                    examples: &[Example {
                        description: "Save Codex's entries to merge them by hand:",
                        commands: &["roster-hooks print codex > roster-hooks.json"],
                        output: &[],
                    }],
                    ..Manual::default()
                },
            ),
            (
                "install",
                Manual {
                    examples: &[
                        Example {
                            description: "Into Claude Code's user settings:",
                            commands: &["roster-hooks install claude-code"],
                            output: &[],
                        },
                        Example {
                            description: "Into the current project's .claude/settings.json:",
                            commands: &["roster-hooks install claude-code --scope project"],
                            output: &[],
                        },
                        Example {
                            description: "Hooks that call the binaries in /usr/local/bin:",
                            commands: &["roster-hooks install codex --bin-dir /usr/local/bin"],
                            output: &[],
                        },
                    ],
                    ..Manual::default()
                },
            ),
            (
                "uninstall",
                Manual {
                    examples: &[Example {
                        description: "Remove what install added to Gemini CLI's settings:",
                        commands: &["roster-hooks uninstall gemini-cli"],
                        output: &[],
                    }],
                    ..Manual::default()
                },
            ),
            (
                "status",
                Manual {
                    examples: &[
                        Example {
                            description: "Every harness, every scope:",
                            commands: &["roster-hooks status"],
                            output: &[],
                        },
                        Example {
                            description: "Codex only, for a script:",
                            commands: &["roster-hooks status codex --format json"],
                            output: &[],
                        },
                    ],
                    ..Manual::default()
                },
            ),
        ],
        ..Manual::default()
    }
}

/// Parses `arguments` (the program name first) and does what they say.
pub fn run<I, T>(arguments: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let arguments: Vec<OsString> = arguments.into_iter().map(Into::into).collect();
    let matches = cli_support::matches_with_manual_on_help(command_without_manual(), command, &arguments)?;
    let command_line = HooksCommandLine::from_arg_matches(&matches)?;
    let context = Invocation { common: command_line.common, paths: HookPaths::from_environment()? };
    match command_line.action {
        Action::Print(arguments) => print_snippet(&context, &arguments),
        Action::Install(arguments) => install(&context, &arguments),
        Action::Uninstall(arguments) => uninstall(&context, &arguments),
        Action::Status(arguments) => status(&context, &arguments),
    }
}

/// Runs the tool on the process's arguments and maps the result to an exit
/// code.
pub fn main() -> ExitCode {
    cli_support::complete_when_asked(command);
    cli_support::run_tool(TOOL, || run(std::env::args_os()))
}

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

fn print_snippet(context: &Invocation, arguments: &PrintArgs) -> anyhow::Result<()> {
    let target = context.target(&arguments.target)?;
    let (commands, warnings) = context.hook_commands(&target, arguments.bin_dir.as_deref())?;
    let notes = hook_config::harness_notes(target.harness);
    // What to show: roster's own plugin file whole, or the entries to merge
    // into the harness's settings.
    let (key, value, heading, text) = match hook_config::plugin_text(target.harness, &commands) {
        Some(plugin) => ("plugin", json!(plugin), "Save as", plugin),
        None => {
            let snippet = hook_config::hook_snippet(target.harness, &commands);
            let text = hook_config::print_document(&snippet);
            ("snippet", snippet, "Merge into", text)
        }
    };
    context.warn(&warnings);
    if context.common.quiet {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    if context.json() {
        let mut report = json!({
            "harness": target.harness.as_str(),
            "scope": target.scope.as_str(),
            "path": target.path.to_string_lossy(),
            "commands": commands_json(target.harness, &commands),
            "notes": warnings.iter().chain(&notes).collect::<Vec<_>>(),
        });
        report[key] = value;
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        writeln!(out, "{heading} {}:", context.shown(&target.path))?;
        // The document as the file would hold it, to be pasted: escaped as
        // JSON and JavaScript escape, not as plain text, whose doubled
        // backslashes would change the commands inside.
        write!(out, "{}", escape_source_text_for_terminal(&text))?;
        write_notes(&mut out, &notes)?;
    }
    out.flush()?;
    Ok(())
}

fn install(context: &Invocation, arguments: &InstallArgs) -> anyhow::Result<()> {
    let target = context.target(&arguments.target)?;
    let (commands, warnings) = context.hook_commands(&target, arguments.bin_dir.as_deref())?;
    let outcome =
        hook_config::install(&target, &commands).with_context(|| format!("install {}", target.harness))?;
    let notes = hook_config::install_notes(&target);
    context.warn(&warnings);
    print_change(
        context,
        &target,
        outcome.changed,
        json!({
            "created": outcome.created,
            "backup": outcome.backup.as_ref().map(|backup| backup.to_string_lossy()),
            "commands": commands_json(target.harness, &commands),
            "notes": warnings.iter().chain(&notes).collect::<Vec<_>>(),
        }),
        |out| {
            let shown = context.shown(&target.path);
            let through_link = if outcome.written_path != target.path {
                format!(" (through the link to {})", context.shown(&outcome.written_path))
            } else {
                String::new()
            };
            if outcome.changed {
                let verb = if outcome.created { "created" } else { "updated" };
                writeln!(out, "installed roster hooks for {}: {verb} {shown}{through_link}", target.harness)?;
            } else {
                writeln!(out, "roster hooks for {} are already in {shown}; nothing changed", target.harness)?;
            }
            let harness = target.harness;
            let mut lines: Vec<(String, String)> = harness
                .events()
                .into_iter()
                .filter(|event| !(event.is_state() && harness.uses_plugin_file()))
                .map(|event| {
                    (format!("{}:", harness.event_name(event)), commands.for_event(event).into_owned())
                })
                .collect();
            if harness.uses_plugin_file() {
                // The plugin pipes each state event, which names itself.
                lines.push(("state events:".to_owned(), commands.state_for_any_event()));
            }
            let width = lines.iter().map(|(name, _)| name.len()).max().unwrap_or(0) + 2;
            for (name, command) in &lines {
                writeln!(out, "  {name:<width$}{}", command_for_terminal(command))?;
            }
            if let Some(backup) = &outcome.backup {
                writeln!(out, "  previous file kept as {}", context.shown(backup))?;
            }
            write_notes(out, &notes)?;
            Ok(())
        },
    )
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

fn uninstall(context: &Invocation, arguments: &TargetArgs) -> anyhow::Result<()> {
    let target = context.target(arguments)?;
    let outcome = hook_config::uninstall(&target, &context.paths)
        .with_context(|| format!("uninstall {}", target.harness))?;
    let mut notes = Vec::new();
    // Said only of trust entries uninstall found for the hooks it removed.
    if !outcome.kept_trust_entries.is_empty() {
        let count = outcome.kept_trust_entries.len();
        notes.push(format!(
            "{count} trust {} of the removed hooks stay{} in {}; roster-hooks never edits that file",
            if count == 1 { "entry" } else { "entries" },
            if count == 1 { "s" } else { "" },
            context.shown(&context.paths.codex_config_toml())
        ));
    }
    print_change(
        context,
        &target,
        outcome.changed,
        json!({
            "removed_backup": outcome.removed_backup.as_ref().map(|backup| backup.to_string_lossy()),
            "removed_directories": outcome
                .removed_directories
                .iter()
                .map(|directory| directory.to_string_lossy())
                .collect::<Vec<_>>(),
            "removed_file": outcome.removed_file,
            "restored_backup": outcome.restored_backup,
            "notes": notes,
        }),
        |out| {
            let shown = context.shown(&target.path);
            let harness = target.harness;
            if !outcome.file_existed {
                writeln!(out, "{shown} does not exist; no roster hooks for {harness} to remove")?;
            } else if !outcome.changed {
                writeln!(out, "no roster hooks for {harness} in {shown}; nothing changed")?;
            } else if outcome.removed_file {
                writeln!(
                    out,
                    "removed roster hooks for {harness}: {shown} held nothing else and was removed"
                )?;
            } else if outcome.restored_backup {
                writeln!(
                    out,
                    "removed roster hooks for {harness}: {shown} is back as it was before install"
                )?;
            } else {
                writeln!(out, "removed roster hooks for {harness} from {shown}")?;
            }
            if let Some(backup) = &outcome.removed_backup {
                writeln!(out, "  removed install's backup {}", context.shown(backup))?;
            }
            for directory in &outcome.removed_directories {
                writeln!(out, "  removed the empty directory {}", context.shown(directory))?;
            }
            write_notes(out, &notes)?;
            Ok(())
        },
    )
}

fn status(context: &Invocation, arguments: &StatusArgs) -> anyhow::Result<()> {
    let harnesses = match arguments.harness {
        Some(harness) => vec![harness],
        None => HookHarness::ALL.to_vec(),
    };
    let mut targets = Vec::new();
    for harness in harnesses {
        match arguments.scope.map(Scope::from) {
            // A harness named explicitly with a scope it lacks is a mistake
            // worth saying; when listing every harness, it is skipped.
            Some(scope) if arguments.harness.is_some() => {
                targets.push(context.paths.target(harness, Some(scope))?)
            }
            Some(scope) => {
                if harness.scopes().contains(&scope) {
                    targets.push(context.paths.target(harness, Some(scope))?);
                }
            }
            None => {
                for scope in harness.scopes() {
                    targets.push(context.paths.target(harness, Some(*scope))?);
                }
            }
        }
    }
    let statuses: Vec<HookStatus> =
        targets.iter().map(|target| hook_config::status(target, &context.paths)).collect();
    let any_installed = statuses.iter().any(|status| {
        use hook_config::HookState;
        matches!(
            status.state,
            HookState::Installed | HookState::PartlyInstalled | HookState::Untrusted | HookState::Broken
        )
    });
    if any_installed {
        context.warn(&binaries_missing_from_path_warning().into_iter().collect::<Vec<_>>());
    }
    if context.common.quiet {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    if context.json() {
        let rows: Vec<Value> = statuses
            .iter()
            .map(|status| {
                json!({
                    "harness": status.target.harness.as_str(),
                    "scope": status.target.scope.as_str(),
                    "path": status.target.path.to_string_lossy(),
                    "state": status.state.as_str(),
                    "detail": status.detail,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
    } else {
        let rows: Vec<Vec<String>> = statuses
            .iter()
            .map(|status| {
                vec![
                    status.target.harness.as_str().to_owned(),
                    status.target.scope.as_str().to_owned(),
                    status.state.as_str().to_owned(),
                    context.shown(&status.target.path),
                    escape_for_terminal(&status.detail).into_owned(),
                ]
            })
            .collect();
        let colour = context.common.colour_on_stdout();
        let paint_state: &dyn Fn(usize, &str) -> std::borrow::Cow<'_, str> = &|column, cell| {
            if column != 2 {
                return cell.into();
            }
            let state_colour = match cell {
                "installed" => cli_support::Colour::Green,
                "partly-installed" | "untrusted" => cli_support::Colour::Yellow,
                "unparseable" | "unreadable" | "broken" => cli_support::Colour::Red,
                _ => cli_support::Colour::Dim,
            };
            paint(cell, state_colour, colour).into()
        };
        write!(
            out,
            "{}",
            render_table(&["HARNESS", "SCOPE", "STATE", "PATH", "DETAIL"], &rows, paint_state)
        )?;
    }
    out.flush()?;
    Ok(())
}

/// Where the hook binaries (`HOOK_BINARIES`) are: `--bin-dir` when given, else
/// next to this executable, else nowhere known (the hooks then call them by
/// name, and the user is told that they must be on PATH).
fn locate_binaries(bin_dir: Option<&Path>) -> anyhow::Result<BinaryLocation> {
    // Only a binary that is not there makes the hooks call it by name; a
    // stat that fails otherwise is an error, not a reason to install hooks
    // that mean something else.
    // The hook binaries `directory` lacks, in `HOOK_BINARIES` order.
    let missing_from = |directory: &Path| -> anyhow::Result<Vec<&'static str>> {
        let mut missing = Vec::new();
        for name in HOOK_BINARIES {
            let path = directory.join(name);
            match retry_interrupted(|| std::fs::metadata(&path)) {
                Ok(metadata) if metadata.is_file() => {}
                Ok(_) => missing.push(name),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => missing.push(name),
                Err(error) => {
                    return Err(error).with_context(|| format!("cannot inspect {}", path.display()));
                }
            }
        }
        Ok(missing)
    };
    if let Some(bin_dir) = bin_dir {
        let directory = std::path::absolute(bin_dir)
            .with_context(|| format!("cannot resolve --bin-dir {}", bin_dir.display()))?;
        let missing = missing_from(&directory)?;
        let warning = (!missing.is_empty()).then(|| {
            format!(
                "{} does not hold {}; the hooks that call {} fail until it does",
                directory.display(),
                words_list(&missing),
                if missing.len() == 1 { "it" } else { "them" }
            )
        });
        return Ok(BinaryLocation { directory: Some(directory), warning });
    }
    let executable =
        retry_interrupted(std::env::current_exe).context("cannot find the roster-hooks executable")?;
    let directory = executable.parent().map(Path::to_path_buf).unwrap_or_default();
    if missing_from(&directory)?.is_empty() && directory.to_str().is_some() {
        return Ok(BinaryLocation { directory: Some(directory), warning: None });
    }
    Ok(BinaryLocation {
        directory: None,
        warning: Some(format!(
            "roster-register, roster-prune and roster-state are not next to roster-hooks in {}, so the hooks call them by \
             name: they must be on the PATH the harness runs its hooks with (or pass --bin-dir DIR)",
            directory.display()
        )),
    })
}

/// A warning for hooks that would call the binaries in `directory` when it
/// is a cargo build directory (`…/target/debug`): the settings file keeps
/// that path, and `cargo clean` or a rebuild removes the binaries from
/// under it, after which every hook fails without the harness saying so.
fn build_directory_warning(directory: &Path) -> Option<String> {
    let build_directory = hook_config::cargo_build_directory(directory)?;
    Some(format!(
        "the hooks call roster-register, roster-prune and roster-state in {}, cargo's build directory under {}: `cargo clean` \
         or a rebuild removes them, and then every hook fails silently; install roster first (`cargo xtask \
         install`, or the Debian package) and run the installed roster-hooks, or pass --bin-dir DIR naming \
         where they are installed",
        directory.display(),
        build_directory.display()
    ))
}

/// The binaries the hooks call.
const HOOK_BINARIES: [&str; 3] = ["roster-register", "roster-prune", "roster-state"];

/// A warning naming the hook binaries that are not on PATH, if any: hooks
/// that call them by name fail until they are.
fn binaries_missing_from_path_warning() -> Option<String> {
    let missing: Vec<&str> = HOOK_BINARIES.into_iter().filter(|name| find_on_path(name).is_none()).collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "{} {} not on PATH, so hooks that call {} by name fail; install roster (`cargo xtask install`, or the \
         Debian package) or install the hooks with --bin-dir DIR",
        words_list(&missing),
        if missing.len() == 1 { "is" } else { "are" },
        if missing.len() == 1 { "it" } else { "them" },
    ))
}

/// `a`, `a and b`, `a, b and c`.
fn words_list(words: &[&str]) -> String {
    match words {
        [init @ .., last] if !init.is_empty() => format!("{} and {last}", init.join(", ")),
        _ => words.join(""),
    }
}

/// The executable `name` in the first PATH directory that holds one.
fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|directory| directory.join(name)).find(|candidate| {
        std::fs::metadata(candidate)
            .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
    })
}

/// What install wires, with every state event of every harness named from
/// the one table of them (`harness::ACTIVITY_EVENTS`).
fn state_events_note() -> String {
    let per_harness: Vec<String> = HookHarness::ALL
        .into_iter()
        .map(|harness| {
            let events: Vec<String> = harness
                .state_events()
                .into_iter()
                .map(|event| {
                    let name = harness.event_name(event);
                    let kinds = harness::activity_event_kinds(harness.into(), name);
                    if kinds.is_empty() { name.to_owned() } else { format!("{name} ({})", kinds.join(", ")) }
                })
                .collect();
            format!("{harness} {}", events.join(", "))
        })
        .collect();
    format!(
        "What install wires: the session's start (roster-register --hook HARNESS), its end (roster-prune \
         --current --hook HARNESS), and one roster-state --hook HARNESS --event EVENT hook per event that \
         says what the session is doing (a prompt submitted, a tool about to run or run, a permission \
         asked, the turn ended), which roster-list shows as working, idle or waiting; opencode's and amp's \
         plugins pass those events on themselves. The events: {}. A file installed by an older roster, \
         without the state hooks, is partly-installed until install runs again.",
        per_harness.join("; ")
    )
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
