//! `--help` and the man page say the same: for every binary and each of its
//! subcommands, the examples, environment variables, files and exit
//! statuses a built binary prints with `--help` are the ones its committed
//! page in man/ carries, word for word. They once were two texts that had
//! drifted apart (roster-register's help showed three examples and four
//! variables, its page four and nine); each side is parsed here from what a
//! reader sees, so this fails whatever makes them differ again.

use std::path::{Path, PathBuf};
use std::process::Command;

use tests::workspace::ROSTER_BINARIES as BINARIES;

/// What one command documents besides its flags, as comparable text.
#[derive(Debug, Default, PartialEq, Eq)]
struct Documented {
    /// Each example: its description and its lines (commands, with a `$ `
    /// prompt where it shows output, and the output).
    examples: Vec<(String, Vec<String>)>,
    /// `name: meaning` per variable, then the note on them all, if any.
    environment: Vec<String>,
    /// `path: meaning` per file.
    files: Vec<String>,
    /// `code: meaning` per status, then the note that overrides them, if any.
    exit_statuses: Vec<String>,
}

#[test]
fn help_and_man_page_document_the_same_examples_environment_files_and_exit_statuses() {
    let mut problems = Vec::new();
    let mut compared = 0;
    for binary in BINARIES {
        let page = std::fs::read_to_string(man_directory().join(format!("{binary}.1")))
            .unwrap_or_else(|error| panic!("man/{binary}.1: {error}"));
        let sections = man_sections(&page);
        let from_man = documented_in_man(&sections);
        let from_help = documented_in_help(&help_of(binary, &[]));
        compare(binary, &from_help, &from_man, &mut problems);
        assert!(!from_help.examples.is_empty(), "{binary} --help shows no example");
        assert!(!from_help.exit_statuses.is_empty(), "{binary} --help shows no exit status");
        compared += 1;
        for (subcommand, lines) in subcommand_sections(&sections) {
            let from_man = Documented { examples: man_examples(&lines), ..Documented::default() };
            let help = documented_in_help(&help_of(binary, &[&subcommand]));
            let from_help = Documented { examples: help.examples, ..Documented::default() };
            assert!(!from_help.examples.is_empty(), "{binary} {subcommand} --help shows no example");
            compare(&format!("{binary} {subcommand}"), &from_help, &from_man, &mut problems);
            compared += 1;
        }
    }
    assert_eq!(
        compared,
        BINARIES.len() + 4 + 4,
        "every binary and the subcommands of roster-consent and roster-hooks"
    );
    assert!(problems.is_empty(), "--help and the man page differ:\n{}", problems.join("\n"));
}

fn compare(what: &str, help: &Documented, man: &Documented, problems: &mut Vec<String>) {
    let parts: [(&str, String, String); 4] = [
        ("examples", format!("{:#?}", help.examples), format!("{:#?}", man.examples)),
        ("environment", format!("{:#?}", help.environment), format!("{:#?}", man.environment)),
        ("files", format!("{:#?}", help.files), format!("{:#?}", man.files)),
        ("exit statuses", format!("{:#?}", help.exit_statuses), format!("{:#?}", man.exit_statuses)),
    ];
    for (part, in_help, in_man) in parts {
        if in_help != in_man {
            problems.push(format!("{what}: {part}\n  --help: {in_help}\n  man:    {in_man}"));
        }
    }
}

fn man_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../man")
}

/// `binary [subcommand] --help` as a pipe reads it (clap's default width).
fn help_of(binary: &str, subcommand: &[&str]) -> String {
    let output = Command::new(tests::binary(binary))
        .args(subcommand)
        .arg("--help")
        .env_clear()
        .output()
        .unwrap_or_else(|error| panic!("cannot run {binary}: {error}"));
    assert!(output.status.success(), "{binary} {subcommand:?} --help: {output:?}");
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

// --help: sections under the headings `Examples:`, `Environment:`, `Files:`
// and `Exit status:`, each running to the next blank line.

fn documented_in_help(help: &str) -> Documented {
    let paragraphs: Vec<Vec<&str>> = help
        .split("\n\n")
        .map(|paragraph| paragraph.lines().filter(|line| !line.trim().is_empty()).collect::<Vec<_>>())
        .filter(|lines| !lines.is_empty())
        .collect();
    let mut documented = Documented::default();
    for (index, lines) in paragraphs.iter().enumerate() {
        // The paragraph after a list, when it is no heading, is the list's note.
        let note = paragraphs
            .get(index + 1)
            .filter(|next| !next[0].starts_with(' ') && !next[0].ends_with(':'))
            .map(|next| collapse(&next.join(" ")));
        match lines[0] {
            "Examples:" => documented.examples = help_examples(&lines[1..]),
            "Environment:" => {
                documented.environment = help_entries(&lines[1..]);
                documented.environment.extend(note);
            }
            "Files:" => documented.files = help_entries(&lines[1..]),
            "Exit status:" => {
                documented.exit_statuses = help_entries(&lines[1..]);
                documented.exit_statuses.extend(note);
            }
            _ => {}
        }
    }
    documented
}

/// Descriptions are indented two spaces (and may wrap), their lines four.
fn help_examples(lines: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut examples: Vec<(String, Vec<String>)> = Vec::new();
    let mut previous_was_description = false;
    for line in lines {
        if let Some(example_line) = line.strip_prefix("    ") {
            examples.last_mut().expect("a description comes first").1.push(example_line.to_owned());
            previous_was_description = false;
        } else if previous_was_description {
            let (description, _) = examples.last_mut().expect("a description is open");
            *description = collapse(&format!("{description} {line}"));
        } else {
            examples.push((collapse(line), Vec::new()));
            previous_was_description = true;
        }
    }
    examples
}

/// `  NAME  meaning` with the meaning wrapped under itself, or a long name
/// alone on its line and the meaning below it.
fn help_entries(lines: &[&str]) -> Vec<String> {
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in lines {
        let is_new_entry = line.starts_with("  ") && !line[2..].starts_with(' ');
        if is_new_entry {
            let text = &line[2..];
            let (name, meaning) = text.split_once("  ").unwrap_or((text, ""));
            entries.push((name.to_owned(), meaning.trim().to_owned()));
        } else if let Some((_, meaning)) = entries.last_mut() {
            meaning.push(' ');
            meaning.push_str(line.trim());
        }
    }
    entries.into_iter().map(|(name, meaning)| format!("{name}: {}", collapse(&meaning))).collect()
}

// The man page: roff from clap_mangen and xtask, parsed line by line.

/// The lines of each `.SH` section, by heading (quotes removed).
fn man_sections(page: &str) -> Vec<(String, Vec<String>)> {
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in page.lines() {
        if let Some(heading) = line.strip_prefix(".SH ") {
            sections.push((heading.trim_matches('"').to_owned(), Vec::new()));
        } else if let Some((_, lines)) = sections.last_mut() {
            lines.push(line.to_owned());
        }
    }
    sections
}

fn section<'a>(sections: &'a [(String, Vec<String>)], heading: &str) -> &'a [String] {
    sections.iter().find(|(name, _)| name == heading).map(|(_, lines)| lines.as_slice()).unwrap_or(&[])
}

fn documented_in_man(sections: &[(String, Vec<String>)]) -> Documented {
    Documented {
        examples: man_examples(section(sections, "EXAMPLES")),
        environment: man_entries(section(sections, "ENVIRONMENT")),
        files: man_entries(section(sections, "FILES")),
        exit_statuses: man_entries(section(sections, "EXIT STATUS")),
    }
}

/// Each `.SS` of COMMANDS: the subcommand's name and its lines.
fn subcommand_sections(sections: &[(String, Vec<String>)]) -> Vec<(String, Vec<String>)> {
    let mut subcommands: Vec<(String, Vec<String>)> = Vec::new();
    for line in section(sections, "COMMANDS") {
        if let Some(heading) = line.strip_prefix(".SS ") {
            let full_name = heading.trim_matches('"');
            let name = full_name.split_once(' ').map_or(full_name, |(_, name)| name);
            subcommands.push((name.to_owned(), Vec::new()));
        } else if let Some((_, lines)) = subcommands.last_mut() {
            lines.push(line.clone());
        }
    }
    subcommands
}

/// `.TP`, the name, the meaning; a `.PP` paragraph after them is a note.
fn man_entries(lines: &[String]) -> Vec<String> {
    let mut entries = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        match lines[index].as_str() {
            ".TP" => {
                let name = unescape(lines.get(index + 1).map_or("", String::as_str));
                let meaning = unescape(lines.get(index + 2).map_or("", String::as_str));
                entries.push(format!("{name}: {}", collapse(&meaning)));
                index += 3;
            }
            ".PP" => {
                let note: Vec<String> = lines[index + 1..]
                    .iter()
                    .take_while(|line| !line.starts_with('.'))
                    .map(|line| unescape(line))
                    .collect();
                entries.push(collapse(&note.join(" ")));
                index += 1 + note.len();
            }
            _ => index += 1,
        }
    }
    entries
}

/// A description, then its lines between `.nf` and `.fi`. In a subcommand's
/// `.SS` the examples follow a line `Examples:`.
fn man_examples(lines: &[String]) -> Vec<(String, Vec<String>)> {
    let start = match lines.iter().position(|line| line == "Examples:") {
        Some(position) => position + 1,
        None if lines.iter().any(|line| line.starts_with(".SS ")) => return Vec::new(),
        None => 0,
    };
    let mut examples: Vec<(String, Vec<String>)> = Vec::new();
    let mut description: Vec<String> = Vec::new();
    let mut in_example = false;
    for line in &lines[start..] {
        match line.as_str() {
            ".nf" => {
                examples.push((collapse(&description.join(" ")), Vec::new()));
                description.clear();
                in_example = true;
            }
            ".fi" => in_example = false,
            _ if line.starts_with('.') => {}
            _ if in_example => examples.last_mut().expect("opened by .nf").1.push(unescape(line)),
            _ => description.push(unescape(line)),
        }
    }
    examples
}

/// Plain text of a roff line: font changes dropped, escapes resolved.
fn unescape(line: &str) -> String {
    let mut text = String::new();
    let mut rest = line;
    while let Some(position) = rest.find('\\') {
        text.push_str(&rest[..position]);
        let escape = &rest[position + 1..];
        let (replacement, length) = if let Some(font) = escape.strip_prefix('f') {
            (String::new(), 1 + font.chars().next().map_or(0, char::len_utf8))
        } else if escape.starts_with("*(Aq") {
            ("'".to_owned(), 4)
        } else if let Some(code) = escape.strip_prefix("[u") {
            let end = code.find(']').expect("a \\[u....] escape is closed");
            let character =
                u32::from_str_radix(&code[..end], 16).ok().and_then(char::from_u32).unwrap_or('?');
            (character.to_string(), 2 + end + 1)
        } else if escape.starts_with('&') {
            (String::new(), 1)
        } else if escape.starts_with('e') {
            ("\\".to_owned(), 1)
        } else {
            // `\-`, `\\` and the like: the character itself.
            (
                escape.chars().next().map(String::from).unwrap_or_default(),
                escape.chars().next().map_or(0, char::len_utf8),
            )
        };
        text.push_str(&replacement);
        rest = &escape[length..];
    }
    text.push_str(rest);
    text
}

#[test]
fn roff_escapes_are_read_back() {
    assert_eq!(unescape("\\fBroster\\-list \\-\\-all\\fR"), "roster-list --all");
    assert_eq!(unescape("the session\\*(Aqs \\[u00FC]"), "the session's ü");
    assert_eq!(unescape("\\&.roster.toml"), ".roster.toml");
}
