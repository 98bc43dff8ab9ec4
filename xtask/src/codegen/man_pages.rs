//! Renders one binary's man page: NAME, SYNOPSIS and OPTIONS from
//! clap_mangen, DESCRIPTION and the subcommands from the same clap
//! `Command`, then the sections of the binary's `Manual` (EXIT STATUS,
//! ENVIRONMENT, FILES, NOTES, EVENTS, EXAMPLES), the very data its
//! `--help` renders, and SEE ALSO. clap_mangen would turn `after_long_help`
//! into an "EXTRA" section of run-together lines and point subcommands at
//! pages that do not exist, so those parts are rendered here instead.

use std::io::Write;

use anyhow::{Context, anyhow};
use clap_mangen::Man;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};

use cli_support::manual::{Example, Manual};

use super::binaries::{Binary, binary_pages};

/// The fifth `.TH` argument: the manual every roster page belongs to.
pub const MANUAL_NAME: &str = "roster manual";

/// Note paragraphs that make a section of their own, by the word they
/// start with; every other note goes under NOTES.
const PARAGRAPHS_WITH_OWN_SECTION: [(&str, &str); 1] = [("Events", "EVENTS")];

/// The complete roff source of `binary`'s page in section 1.
pub fn render_binary_page(binary: &Binary) -> anyhow::Result<String> {
    let mut command = (binary.command)();
    command.build();
    let manual = (binary.manual)();
    let version = command
        .get_version()
        .ok_or_else(|| anyhow!("{} has no version; add `version` to its #[command]", binary.name))?
        .to_owned();
    let man = Man::new(command.clone());

    let mut page = apostrophe_preamble();
    page.push_str(&title_line(binary.name, "1", &version));
    page.push_str(&clap_mangen_section(binary.name, |out| man.render_name_section(out))?);
    let mut roff = Roff::new();
    render_synopsis(&mut roff, &command);
    render_description(&mut roff, &command);
    page.push_str(&render_without_preamble(&roff));

    page.push_str(&clap_mangen_section(binary.name, |out| man.render_options_section(out))?);

    let mut roff = Roff::new();
    render_subcommands(&mut roff, &command, &manual);
    render_exit_status_environment_and_files(&mut roff, &manual);
    let has_own_section =
        |note: &str| PARAGRAPHS_WITH_OWN_SECTION.iter().any(|(first_word, _)| note.starts_with(first_word));
    let notes: Vec<String> = manual.notes.iter().filter(|note| !has_own_section(note)).cloned().collect();
    if !notes.is_empty() {
        roff.control("SH", ["NOTES"]);
        render_paragraphs(&mut roff, &notes);
    }
    for (first_word, section) in PARAGRAPHS_WITH_OWN_SECTION {
        let paragraphs: Vec<String> =
            manual.notes.iter().filter(|note| note.starts_with(first_word)).cloned().collect();
        if !paragraphs.is_empty() {
            roff.control("SH", [section]);
            render_paragraphs(&mut roff, &paragraphs);
        }
    }
    // Every page points at the overview and every other tool's page.
    let see_also: Vec<String> = std::iter::once("roster(7)".to_owned()).chain(binary_pages()).collect();
    render_examples_and_see_also(&mut roff, &manual, &see_also, binary.name);
    page.push_str(&render_without_preamble(&roff));
    Ok(finish_page(&page))
}

/// The `.ie/.el` lines the `roff` crate puts before every document, which
/// define the apostrophe string; a page needs them once, at the top.
pub fn apostrophe_preamble() -> String {
    Roff::new().render()
}

/// The `.TH` line, then no hyphenation and a ragged right margin so that
/// commands, flags and paths are never split or stretched. Written by hand
/// because clap_mangen leaves the date empty without quoting it, which
/// shifts the footer; an empty date keeps the output identical from run to
/// run.
pub fn title_line(name: &str, section: &str, version: &str) -> String {
    format!(".TH {} {section} \"\" \"roster {version}\" \"{MANUAL_NAME}\"\n.nh\n.ad l\n", name.to_uppercase())
}

/// Renders `roff` without the apostrophe preamble, for appending to a page
/// that already has it.
pub fn render_without_preamble(roff: &Roff) -> String {
    let rendered = roff.render();
    rendered.strip_prefix(&apostrophe_preamble()).map(str::to_owned).unwrap_or(rendered)
}

/// EXIT STATUS, ENVIRONMENT and FILES from a manual.
pub fn render_exit_status_environment_and_files(roff: &mut Roff, manual: &Manual) {
    roff.control("SH", ["EXIT STATUS"]);
    for status in manual.exit_statuses {
        roff.control("TP", []);
        roff.text([bold(status.status.code().to_string())]);
        roff.text([roman(status.meaning)]);
    }
    if let Some(note) = manual.exit_status_note {
        roff.control("PP", []);
        roff.text([roman(note)]);
    }

    roff.control("SH", ["ENVIRONMENT"]);
    for variable in &manual.environment {
        roff.control("TP", []);
        roff.text([bold(variable.name)]);
        roff.text([roman(variable.meaning)]);
    }
    if let Some(note) = manual.environment_note {
        roff.control("PP", []);
        roff.text([roman(note)]);
    }

    roff.control("SH", ["FILES"]);
    for file in manual.files {
        roff.control("TP", []);
        roff.text([italic(file.path)]);
        roff.text([roman(file.meaning)]);
    }
}

/// EXAMPLES from a manual, then SEE ALSO: `see_also` without `own_page`.
pub fn render_examples_and_see_also(roff: &mut Roff, manual: &Manual, see_also: &[String], own_page: &str) {
    roff.control("SH", ["EXAMPLES"]);
    render_examples(roff, manual.examples);

    roff.control("SH", ["SEE ALSO"]);
    let pages: Vec<&str> =
        see_also.iter().map(String::as_str).filter(|page| page.split('(').next() != Some(own_page)).collect();
    let mut line = Vec::new();
    for (index, page) in pages.iter().enumerate() {
        let (name, section) = page.split_once('(').unwrap_or((page, ""));
        line.push(bold(name));
        let separator = if index + 1 < pages.len() { ", " } else { "" };
        line.push(roman(format!("({section}{separator}")));
    }
    roff.text(line);
}

/// Each example: its description, then its commands in bold (after a
/// prompt when the example also shows what they print) and that output.
fn render_examples(roff: &mut Roff, examples: &[Example]) {
    for (index, example) in examples.iter().enumerate() {
        if index > 0 {
            roff.control("PP", []);
        }
        roff.text([roman(example.description)]);
        roff.control("PP", []);
        roff.control("RS", ["4"]);
        roff.control("nf", []);
        let prompt = if example.output.is_empty() { "" } else { "$ " };
        for command in example.commands {
            roff.text([roman(prompt), bold(*command)]);
        }
        for line in example.output {
            roff.text([roman(*line)]);
        }
        roff.control("fi", []);
        roff.control("RE", []);
    }
}

/// The last pass over a page: every character outside ASCII becomes its
/// groff escape, so the page renders the same whatever input encoding the
/// formatter assumes, and trailing blanks (clap_mangen leaves one after the
/// synopsis), which roff ignores, are dropped.
pub fn finish_page(page: &str) -> String {
    let mut finished = String::with_capacity(page.len());
    for line in page.lines() {
        for character in line.trim_end().chars() {
            if character.is_ascii() {
                finished.push(character);
            } else {
                finished.push_str(&format!("\\[u{:04X}]", u32::from(character)));
            }
        }
        finished.push('\n');
    }
    finished
}

/// Runs one of clap_mangen's section renderers and returns its roff without
/// the preamble it writes each time.
fn clap_mangen_section(
    binary: &str,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<String> {
    let mut buffer = Vec::new();
    render(&mut buffer).with_context(|| format!("cannot render the man page of {binary}"))?;
    let text = String::from_utf8(buffer).with_context(|| format!("the man page of {binary} is not UTF-8"))?;
    Ok(text.strip_prefix(&apostrophe_preamble()).map(str::to_owned).unwrap_or(text))
}

/// DESCRIPTION: the long about, without its first paragraph when that only
/// repeats the one-line about already shown under NAME.
fn render_description(roff: &mut Roff, command: &clap::Command) {
    let about = command.get_about().map(|about| about.to_string()).unwrap_or_default();
    let long_about = command.get_long_about().map(|long_about| long_about.to_string());
    let mut paragraphs = split_paragraphs(long_about.as_deref().unwrap_or(&about));
    if paragraphs.len() > 1 && paragraphs[0].trim() == about.trim() {
        paragraphs.remove(0);
    }
    roff.control("SH", ["DESCRIPTION"]);
    render_paragraphs(roff, &paragraphs);
}

/// One `.SS` per subcommand: its usage, description, its own options and
/// arguments (the global ones are under OPTIONS), then its manual's notes
/// and examples.
fn render_subcommands(roff: &mut Roff, command: &clap::Command, manual: &Manual) {
    let subcommands: Vec<&clap::Command> = command
        .get_subcommands()
        .filter(|subcommand| !subcommand.is_hide_set() && subcommand.get_name() != "help")
        .collect();
    if subcommands.is_empty() {
        return;
    }
    roff.control("SH", ["COMMANDS"]);
    for subcommand in subcommands {
        let full_name = format!("{} {}", command.get_name(), subcommand.get_name());
        roff.control("SS", [full_name.as_str()]);

        let usage = subcommand.clone().render_usage().to_string();
        let usage = usage.trim().trim_start_matches("Usage:").trim();
        let arguments_part = usage.strip_prefix(full_name.as_str()).unwrap_or(usage);
        roff.text([bold(full_name.as_str()), roman(arguments_part)]);

        let description = subcommand
            .get_long_about()
            .or(subcommand.get_about())
            .map(|about| about.to_string())
            .unwrap_or_default();
        roff.control("PP", []);
        render_paragraphs(roff, &split_paragraphs(&description));

        let arguments: Vec<&clap::Arg> = subcommand
            .get_arguments()
            .filter(|argument| {
                !argument.is_hide_set()
                    && !argument.is_global_set()
                    && !matches!(argument.get_id().as_str(), "help" | "version")
            })
            .collect();
        let (positionals, options): (Vec<&clap::Arg>, Vec<&clap::Arg>) =
            arguments.into_iter().partition(|argument| argument.is_positional());
        for argument in positionals.into_iter().chain(options) {
            render_argument(roff, argument);
        }

        let Some(subcommand_manual) = manual.subcommand(subcommand.get_name()) else { continue };
        if !subcommand_manual.notes.is_empty() {
            roff.control("PP", []);
            render_paragraphs(roff, &subcommand_manual.notes);
        }
        if !subcommand_manual.examples.is_empty() {
            roff.control("PP", []);
            roff.text([roman("Examples:")]);
            roff.control("PP", []);
            render_examples(roff, subcommand_manual.examples);
        }
    }
}

/// SYNOPSIS: the binary and every option with the name of its value
/// (`[--dir DIR]`, which clap_mangen's synopsis leaves out), then the
/// positionals and the subcommand.
fn render_synopsis(roff: &mut Roff, command: &clap::Command) {
    roff.control("SH", ["SYNOPSIS"]);
    let mut line: Vec<Inline> = vec![bold(command.get_name())];
    let arguments = command.get_arguments().filter(|argument| !argument.is_hide_set());
    let (positionals, options): (Vec<&clap::Arg>, Vec<&clap::Arg>) =
        arguments.partition(|argument| argument.is_positional());
    for option in options {
        line.push(roman(" ["));
        let names: Vec<String> = option
            .get_short()
            .map(|short| format!("-{short}"))
            .into_iter()
            .chain(option.get_long().map(|long| format!("--{long}")))
            .collect();
        for (index, name) in names.iter().enumerate() {
            if index > 0 {
                line.push(roman("|"));
            }
            line.push(bold(name.as_str()));
        }
        if option.get_num_args().is_some_and(|range| range.takes_values()) {
            line.push(roman(" "));
            line.push(italic(value_names(option).join(" ")));
        }
        line.push(roman("]"));
    }
    for positional in positionals {
        let (open, close) = if positional.is_required_set() { ("<", ">") } else { ("[", "]") };
        line.push(roman(" "));
        line.push(italic(format!("{open}{}{close}", value_names(positional).join(" "))));
    }
    if command.has_subcommands() {
        line.push(roman(" "));
        line.push(italic("<COMMAND>"));
    }
    roff.text(line);
}

/// The names an argument's values are shown with: its value names, else its id.
fn value_names(argument: &clap::Arg) -> Vec<String> {
    argument
        .get_value_names()
        .map(|names| names.iter().map(|name| name.to_string()).collect())
        .unwrap_or_else(|| vec![argument.get_id().as_str().to_uppercase()])
}

/// One `.TP` entry for an option or positional argument of a subcommand.
fn render_argument(roff: &mut Roff, argument: &clap::Arg) {
    let value_names = value_names(argument);
    let takes_values = argument.get_num_args().is_some_and(|range| range.takes_values());

    let mut header: Vec<Inline> = Vec::new();
    if argument.is_positional() {
        let (open, close) = if argument.is_required_set() { ("<", ">") } else { ("[", "]") };
        header.push(italic(format!("{open}{}{close}", value_names.join(" "))));
    } else {
        if let Some(short) = argument.get_short() {
            header.push(bold(format!("-{short}")));
            if argument.get_long().is_some() {
                header.push(roman(", "));
            }
        }
        if let Some(long) = argument.get_long() {
            header.push(bold(format!("--{long}")));
        }
        if takes_values {
            header.push(roman(" "));
            header.push(italic(format!("<{}>", value_names.join(" "))));
        }
    }
    let defaults: Vec<String> =
        argument.get_default_values().iter().map(|value| value.to_string_lossy().into_owned()).collect();
    if takes_values && !defaults.is_empty() && !argument.is_hide_default_value_set() {
        header.push(roman(format!(" [default: {}]", defaults.join(","))));
    }
    roff.control("TP", []);
    roff.text(header);

    let help =
        argument.get_long_help().or(argument.get_help()).map(|help| help.to_string()).unwrap_or_default();
    roff.text([roman(help)]);

    let possible_values: Vec<clap::builder::PossibleValue> = if argument.is_hide_possible_values_set() {
        Vec::new()
    } else {
        argument.get_possible_values().into_iter().filter(|value| !value.is_hide_set()).collect()
    };
    if !possible_values.is_empty() {
        roff.text([Inline::LineBreak, roman("Possible values:")]);
        for value in possible_values {
            let mut line = vec![Inline::LineBreak, roman("  "), bold(value.get_name())];
            if let Some(help) = value.get_help() {
                line.push(roman(format!(": {help}")));
            }
            roff.text(line);
        }
    }
}

/// Splits help text at blank lines.
fn split_paragraphs(text: &str) -> Vec<String> {
    let mut paragraphs = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(current.join("\n"));
                current.clear();
            }
        } else {
            current.push(line.trim_end());
        }
    }
    if !current.is_empty() {
        paragraphs.push(current.join("\n"));
    }
    paragraphs
}

/// Renders help paragraphs: prose is filled; a paragraph with indented lines
/// (a list or a command) keeps its line breaks and indentation.
fn render_paragraphs(roff: &mut Roff, paragraphs: &[String]) {
    for (index, paragraph) in paragraphs.iter().enumerate() {
        if index > 0 {
            roff.control("PP", []);
        }
        let has_indented_lines = paragraph.lines().any(|line| line.starts_with(' '));
        if has_indented_lines {
            roff.control("nf", []);
            for line in paragraph.lines() {
                roff.text([roman(line)]);
            }
            roff.control("fi", []);
        } else {
            for line in paragraph.lines() {
                roff.text([roman(line)]);
            }
        }
    }
}
