//! The table of resume commands (`harness::RESUME_COMMANDS`) against the
//! harnesses themselves: every flag and subcommand of a row checked against
//! a release appears in that release's own help, captured in
//! `tests/data/harness-captures/resume-help/<harness>-<version>/`; the
//! release is the one the e2e run pins; and docs/harnesses.md shows each
//! row with the version it was checked against, or says it is unchecked.

use std::fs;
use std::path::PathBuf;

use harness::{Checked, RESUME_COMMANDS, ResumeCommands, SESSION_ID_PLACEHOLDER};
use tests::workspace::workspace_root;

fn captures(row: &ResumeCommands, version: &str) -> PathBuf {
    tests::hooks::captures_directory().join("resume-help").join(format!("{}-{version}", row.harness.as_str()))
}

/// All the help text captured of one release, each file after the other.
fn captured_help(row: &ResumeCommands, version: &str) -> String {
    let directory = captures(row, version);
    let mut names: Vec<PathBuf> = fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("{}: {error} (capture its --help there)", directory.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{} holds no captured help", directory.display());
    names
        .iter()
        .map(|path| fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display())))
        .collect::<Vec<String>>()
        .join("\n")
}

/// Whether `word` stands in `text` as a word of its own: not part of a
/// longer flag or name (`--resume` is not found in `--resume-picker`).
fn has_word(text: &str, word: &str) -> bool {
    let is_word_character =
        |character: char| character.is_ascii_alphanumeric() || character == '-' || character == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        before.is_none_or(|character| !is_word_character(character))
            && after.is_none_or(|character| !is_word_character(character))
    })
}

/// The words of a form that the harness's help must name: every flag and
/// subcommand, without the id it is given (`--resume={session_id}` names
/// `--resume`).
fn named_words(words: &[&str]) -> Vec<String> {
    words
        .iter()
        .map(|word| word.replace(&format!("={SESSION_ID_PLACEHOLDER}"), ""))
        .filter(|word| !word.contains(SESSION_ID_PLACEHOLDER))
        .collect()
}

#[test]
fn every_checked_resume_command_is_named_in_the_captured_help_of_its_release() {
    let mut checked = 0;
    for row in RESUME_COMMANDS {
        let Checked::AgainstRelease(version) = row.checked else { continue };
        let help = captured_help(&row, version);
        for (form, words) in [("by id", row.by_id), ("latest", row.latest)] {
            let words = words.unwrap_or_else(|| {
                panic!("{} is checked against {version} but has no {form} form", row.harness.as_str())
            });
            for word in named_words(words) {
                assert!(
                    has_word(&help, &word),
                    "{} {version}'s captured help does not name `{word}` of its {form} form ({})",
                    row.harness.as_str(),
                    captures(&row, version).display()
                );
            }
            checked += 1;
        }
        // The help is the program's own: its usage line names it.
        assert!(
            has_word(&help, row.program),
            "{}'s captured help never names `{}`",
            row.harness.as_str(),
            row.program
        );
    }
    assert!(checked >= 12, "only {checked} forms were checked against captured help");
}

/// Every folder of captured help is a release a row of the table was
/// checked against: none is left over from a release no longer pinned.
#[test]
fn every_captured_release_is_one_the_table_was_checked_against() {
    let folder = tests::hooks::captures_directory().join("resume-help");
    let mut on_disk: Vec<String> = fs::read_dir(&folder)
        .expect("the captured help")
        .map(|entry| entry.expect("a directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut checked: Vec<String> = RESUME_COMMANDS
        .iter()
        .filter_map(|row| match row.checked {
            Checked::AgainstRelease(version) => Some(format!("{}-{version}", row.harness.as_str())),
            Checked::Unchecked(_) => None,
        })
        .collect();
    checked.sort();
    assert_eq!(on_disk, checked);
}

/// The words were captured from a release roster's table does not use: a
/// flag the table lacks is not in the help (the check above can fail).
#[test]
fn a_flag_no_release_has_is_not_found_in_its_captured_help() {
    let row = RESUME_COMMANDS.iter().find(|row| row.program == "claude").expect("claude's row");
    let Checked::AgainstRelease(version) = row.checked else { panic!("claude's row is checked") };
    let help = captured_help(row, version);
    assert!(has_word(&help, "--resume") && has_word(&help, "--continue"));
    assert!(!has_word(&help, "--resume-last"));
    assert!(!has_word(&help, "--resum"));
}

/// The release a row was checked against is the one the e2e run installs
/// and runs (`tests/tests/e2e/real_harnesses.rs` pins every version).
#[test]
fn each_checked_release_is_the_one_the_e2e_run_pins() {
    let pins =
        fs::read_to_string(workspace_root().join("tests/tests/e2e/real_harnesses.rs")).expect("the pins");
    for row in RESUME_COMMANDS {
        let Checked::AgainstRelease(version) = row.checked else { continue };
        let name = format!("name: \"{}\",", row.harness.as_str());
        let at = pins.find(&name).unwrap_or_else(|| panic!("the e2e run pins no {}", row.harness.as_str()));
        let entry = &pins[at..];
        let entry = &entry[..entry.find("},").expect("the entry ends")];
        assert!(
            entry.contains(&format!("pinned_version: \"{version}\"")),
            "{} is checked against {version}, but the e2e run pins another release: {entry}",
            row.harness.as_str()
        );
    }
}

/// docs/harnesses.md's resume table has a row per harness with its
/// commands as the table writes them and the version checked, or
/// "unchecked".
#[test]
fn the_harness_notes_show_every_resume_command_and_what_it_was_checked_against() {
    let notes = fs::read_to_string(workspace_root().join("docs/harnesses.md")).expect("docs/harnesses.md");
    let section = &notes[notes.find("## Resuming a session").expect("a `## Resuming a session` section")..];
    let shown = |program: &str, words: Option<&[&str]>| match words {
        Some(words) => format!(
            "`{program} {}`",
            words.iter().map(|word| word.replace(SESSION_ID_PLACEHOLDER, "ID")).collect::<Vec<_>>().join(" ")
        ),
        None => "none".to_owned(),
    };
    for row in RESUME_COMMANDS {
        let line = section
            .lines()
            .find(|line| line.starts_with(&format!("| {} ", row.harness.as_str())))
            .unwrap_or_else(|| {
                panic!("docs/harnesses.md's resume table has no row for {}", row.harness.as_str())
            });
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[2], shown(row.program, row.by_id), "{line}");
        assert_eq!(cells[3], shown(row.program, row.latest), "{line}");
        match row.checked {
            Checked::AgainstRelease(version) => assert!(cells[4].starts_with(version), "{line}"),
            Checked::Unchecked(_) => assert!(cells[4].starts_with("unchecked"), "{line}"),
        }
    }
}
