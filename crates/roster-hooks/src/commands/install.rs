//! `roster-hooks install HARNESS`: roster's hooks merged into the
//! harness's configuration file (or its plugin file written), and what
//! they run said.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use cli_support::command_for_terminal;
use harness::hook_config;
use serde_json::json;

use super::{Invocation, TargetArgs, commands_json, print_change, write_notes};

#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    #[command(flatten)]
    pub(crate) target: TargetArgs,

    /// Call roster-register, roster-prune and roster-state in DIR (default: by name through PATH in
    /// project files, else the directory roster-hooks runs from)
    #[arg(long, value_name = "DIR")]
    pub(crate) bin_dir: Option<PathBuf>,
}

pub(crate) fn install(context: &Invocation, arguments: &InstallArgs) -> anyhow::Result<()> {
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
