//! `roster-hooks uninstall HARNESS`: exactly the hooks install added
//! removed, with its backup and the directories it created.

use std::io::Write;

use anyhow::Context;
use harness::hook_config;
use serde_json::json;

use super::{Invocation, TargetArgs, print_change, write_notes};

pub(crate) fn uninstall(context: &Invocation, arguments: &TargetArgs) -> anyhow::Result<()> {
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
