//! `roster-hooks status [HARNESS]`: for each harness and scope, whether
//! roster's hooks are installed in its file.

use std::io::{self, Write};

use clap::Args;
use cli_support::{escape_for_terminal, paint, render_table};
use harness::hook_config::{self, HookConfigFile, HookHarness, HookStatus, Scope};
use serde_json::{Value, json};

use super::{HarnessNameParser, Invocation, ScopeName};
use crate::binaries::binaries_missing_from_path_warning;

#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Report only this harness (default: every harness)
    #[arg(value_name = "HARNESS", value_parser = HarnessNameParser)]
    harness: Option<HookHarness>,

    /// Report only files of this scope (default: every scope)
    #[arg(short, long, value_enum, value_name = "SCOPE")]
    scope: Option<ScopeName>,
}

pub(crate) fn status(context: &Invocation, arguments: &StatusArgs) -> anyhow::Result<()> {
    let statuses: Vec<HookStatus> = targets(context, arguments)?
        .iter()
        .map(|target| hook_config::status(target, &context.paths))
        .collect();
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
    let text = if context.json() {
        format!("{}\n", serde_json::to_string_pretty(&json_rows(&statuses))?)
    } else {
        table(context, &statuses)
    };
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The files asked about: the harness named (every one when none is) in
/// the scope named (each of its scopes when none is).
fn targets(context: &Invocation, arguments: &StatusArgs) -> anyhow::Result<Vec<HookConfigFile>> {
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
    Ok(targets)
}

/// One object per file, for a script.
fn json_rows(statuses: &[HookStatus]) -> Vec<Value> {
    statuses
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
        .collect()
}

/// One line per file for people, its state in colour.
fn table(context: &Invocation, statuses: &[HookStatus]) -> String {
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
    render_table(&["HARNESS", "SCOPE", "STATE", "PATH", "DETAIL"], &rows, paint_state)
}
