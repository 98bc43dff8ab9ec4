//! `roster-list --host …` (docs/contract.md §6.7): every host asked at
//! once, a thread each, so the whole call costs about one ssh round trip;
//! their rows merged in the order the hosts were given (each host's rows
//! in its own order, newest first), each with its `host`; what a host
//! could not answer said on stderr, and the exit status says that not
//! every host answered while the others' rows are still printed.

use std::io::Write;

use cli_support::{
    Colour, EndedWith, ExitStatus, OutputFormat, escape_for_terminal, paint, render_table_within,
};
use registry_core::Timestamp;
use serde_json::Value;

use super::answer::{Answered, HostNote, Unanswered, host_notes_json_line};
use super::query::{Query, ask};
use super::rows::{ContractDifference, row_with_host, text_cells};
use super::target::Host;
use crate::json_array::{render_array_element, write_array};
use crate::listing::ListArgs;
use crate::table::{HEADERS, LIMITS};

/// Where the LIVENESS column is in the table with HOST first, to colour it.
const LIVENESS_COLUMN: usize = 4;

/// Lists the sessions of every host and prints them merged.
pub fn list_hosts(args: &ListArgs, hosts: &[Host], query: &Query) -> anyhow::Result<()> {
    let answers: Vec<Result<Answered, Unanswered>> = std::thread::scope(|scope| {
        let asking: Vec<_> = hosts.iter().map(|host| scope.spawn(move || ask(host, query, args))).collect();
        asking
            .into_iter()
            .zip(hosts)
            .map(|(thread, host)| {
                thread.join().unwrap_or_else(|_| {
                    Err(Unanswered {
                        note: HostNote {
                            host: host.given.clone(),
                            kind: "host-unreadable".to_owned(),
                            message: format!("{}: asking it failed", escape_for_terminal(&host.given)),
                        },
                    })
                })
            })
            .collect()
    });
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut unanswered = Vec::new();
    for (answer, host) in answers.into_iter().zip(hosts) {
        match answer {
            Ok(answered) => {
                let difference = ContractDifference::of_rows(&answered.rows);
                for (kind, message) in [
                    ("host-older-contract", difference.older_note(&host.given)),
                    ("host-newer-contract", difference.newer_note(&host.given)),
                ] {
                    if let Some(message) = message {
                        notes.push(HostNote { host: host.given.clone(), kind: kind.to_owned(), message });
                    }
                }
                notes.extend(answered.notes);
                rows.extend(
                    answered.rows.into_iter().map(|row| Value::Object(row_with_host(row, &host.given))),
                );
            }
            Err(failed) => {
                unanswered.push(host.given.clone());
                notes.push(failed.note);
            }
        }
    }
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let json = args.common.output_format() == OutputFormat::Json;
    if json {
        let rendered: Vec<Vec<u8>> = rows.iter().map(render_array_element).collect::<Result<_, _>>()?;
        write_array(&mut out, rendered.into_iter())?;
    } else {
        out.write_all(table(&rows, args.common.colour_on_stdout()).as_bytes())?;
    }
    out.flush()?;
    drop(out);
    report(args, hosts, &rows, &notes, &unanswered)?;
    if unanswered.is_empty() {
        return Ok(());
    }
    let names = escape_for_terminal(&unanswered.join(", ")).into_owned();
    let message = if unanswered.len() == hosts.len() {
        format!("no host answered ({names})")
    } else {
        format!(
            "{} of {} hosts did not answer ({names}); the rows of the others were printed",
            unanswered.len(),
            hosts.len()
        )
    };
    Err(EndedWith { status: ExitStatus::HostsUnanswered, message }.into())
}

/// The table, HOST first, then the listing's columns.
fn table(rows: &[Value], colour: bool) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let now = Timestamp::now();
    let cells: Vec<Vec<String>> = rows.iter().map(|row| text_cells(row, now)).collect();
    let headers: Vec<&str> = std::iter::once("HOST").chain(HEADERS).collect();
    let limits: Vec<Option<usize>> = std::iter::once(None).chain(LIMITS).collect();
    render_table_within(&headers, &limits, &cells, &|column, cell| match (column, cell) {
        (LIVENESS_COLUMN, "alive") => paint(cell, Colour::Green, colour).into(),
        (LIVENESS_COLUMN, "dead") => paint(cell, Colour::Red, colour).into(),
        (LIVENESS_COLUMN, "unknown") => paint(cell, Colour::Yellow, colour).into(),
        _ => cell.into(),
    })
}

/// Stderr: for a script, every note as one JSON line (the hosts that did
/// not answer among them); for people, one line per host that did not
/// answer, then the hosts' own notes, each naming its host.
fn report(
    args: &ListArgs,
    hosts: &[Host],
    rows: &[Value],
    notes: &[HostNote],
    unanswered: &[String],
) -> anyhow::Result<()> {
    let mut err = std::io::stderr().lock();
    if args.common.output_format() == OutputFormat::Json {
        if !notes.is_empty() {
            err.write_all(format!("{}\n", host_notes_json_line(notes)).as_bytes())?;
        }
        return Ok(());
    }
    let colour = args.common.colour_on_stderr();
    let mut text = String::new();
    for note in notes {
        let host_failed = unanswered.contains(&note.host) && note.kind.starts_with("host-");
        if args.common.quiet && !host_failed {
            continue;
        }
        let line = if note.message.starts_with(&format!("{}: ", escape_for_terminal(&note.host))) {
            note.message.clone()
        } else {
            format!("{}: {}", escape_for_terminal(&note.host), escape_for_terminal(&note.message))
        };
        let shade = if host_failed { Colour::Yellow } else { Colour::Dim };
        text.push_str(&format!("{}\n", paint(&line, shade, colour)));
    }
    if rows.is_empty() && !args.common.quiet && unanswered.len() < hosts.len() {
        text.push_str(&format!("{}\n", paint("no sessions on the hosts that answered", Colour::Dim, colour)));
    }
    err.write_all(text.as_bytes())?;
    Ok(())
}
