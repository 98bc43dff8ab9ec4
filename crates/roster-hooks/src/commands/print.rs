//! `roster-hooks print HARNESS`: the entries install would merge (or the
//! plugin file it would write), for adding them by hand.

use std::io::{self, Write};

use cli_support::escape_source_text_for_terminal;
use harness::hook_config;
use serde_json::json;

use super::install::InstallArgs;
use super::{Invocation, commands_json, write_notes};

pub(crate) type PrintArgs = InstallArgs;

pub(crate) fn print_snippet(context: &Invocation, arguments: &PrintArgs) -> anyhow::Result<()> {
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
