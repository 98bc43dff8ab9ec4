//! Tests of the generated files as committed in man/ and completions/:
//! they match what `cargo xtask codegen` generates from the binaries'
//! clap commands, every man page formats without a groff warning and
//! carries the house sections, every elvish completion script compiles, and
//! the help text they are generated from follows the house style.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use tests::help::check_command_help;
use tests::require_tool;
use tests::workspace::{workspace_root, xtask};

/// One binary: its name, the clap command it runs and the manual its
/// `--help` and man page render, from its own crate.
pub(crate) struct Binary {
    pub(crate) name: &'static str,
    pub(crate) command: fn() -> clap::Command,
    manual: fn() -> cli_support::manual::Manual,
}

pub(crate) const BINARIES: [Binary; 11] = [
    Binary { name: "roster-register", command: roster_register::command, manual: roster_register::manual },
    Binary { name: "roster-list", command: roster_list::command, manual: roster_list::manual },
    Binary { name: "roster-prune", command: roster_prune::command, manual: roster_prune::manual },
    Binary { name: "roster-consent", command: roster_consent::command, manual: roster_consent::manual },
    Binary { name: "roster-hooks", command: roster_hooks::command, manual: roster_hooks::manual },
    Binary { name: "roster-state", command: roster_state::command, manual: roster_state::manual },
    Binary { name: "roster-send", command: roster_send::command, manual: roster_send::manual },
    Binary { name: "roster-focus", command: roster_focus::command, manual: roster_focus::manual },
    Binary { name: "roster-resume", command: roster_resume::command, manual: roster_resume::manual },
    Binary { name: "roster-top", command: roster_top::command, manual: roster_top::manual },
    Binary { name: "roster-notify", command: roster_notify::command, manual: roster_notify::manual },
];

/// The committed files of a generated directory (`man` or `completions`),
/// sorted, with their bytes.
fn committed_files(directory: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(workspace_root().join(directory))
        .unwrap_or_else(|error| panic!("{directory}/ cannot be listed: {error}"))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "{directory}/ is empty; run `cargo xtask codegen` and commit");
    paths.into_iter().map(|path| (path.clone(), std::fs::read(&path).expect("a committed file"))).collect()
}

/// The man pages of `man/`: `man/<binary>.1` for each binary and `man/roster.7`.
fn committed_man_pages() -> Vec<(PathBuf, Vec<u8>)> {
    let pages = committed_files("man");
    let names: Vec<String> =
        pages.iter().map(|(path, _)| path.file_name().unwrap().to_string_lossy().into_owned()).collect();
    let mut expected: Vec<String> = BINARIES.iter().map(|binary| format!("{}.1", binary.name)).collect();
    expected.push("roster.7".to_owned());
    expected.sort();
    assert_eq!(names, expected, "man/ holds other pages than the binaries' and roster.7");
    pages
}

/// `cargo xtask codegen --check`: regenerates every page and script in
/// memory and fails, naming each drifted file, when the committed ones
/// differ. The other tests here read the committed files, which this pins
/// to the generated ones.
#[test]
fn committed_man_pages_and_completions_match_codegen() {
    let output = xtask(["codegen", "--check"]).output().expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo xtask codegen --check failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("man/ and completions/ are up to date"));
}

#[test]
fn every_man_page_formats_without_groff_warnings() {
    require_tool("groff");
    for (path, page) in committed_man_pages() {
        // -ww turns on every warning; -z formats the page and throws the output away.
        let output = run_with_input("groff", &["-ww", "-z", "-man"], &page);
        assert!(
            output.status.success() && output.stderr.is_empty(),
            "groff -ww -z -man {} warns ({}):\n{}",
            path.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn every_man_page_carries_the_house_sections() {
    let required =
        ["NAME", "DESCRIPTION", "EXAMPLES", "FILES", "ENVIRONMENT", "\"EXIT STATUS\"", "\"SEE ALSO\""];
    for (path, page) in committed_man_pages() {
        let page = String::from_utf8(page).expect("man pages are UTF-8");
        let headings: Vec<&str> = page.lines().filter_map(|line| line.strip_prefix(".SH ")).collect();
        for section in required {
            assert!(
                headings.contains(&section),
                "{} has no {section} section; it has {headings:?}",
                path.display()
            );
        }
        if path.extension().is_some_and(|extension| extension == "1") {
            assert!(headings.contains(&"SYNOPSIS"), "{} has no SYNOPSIS section", path.display());
            assert!(headings.contains(&"OPTIONS"), "{} has no OPTIONS section", path.display());
        }
    }
}

/// Elvish has no completion test that drives the shell (its completer runs
/// only in an interactive editor), so its scripts are at least compiled.
/// bash, zsh and fish scripts are driven for real in `tests/tooling/install.rs`.
#[test]
fn elvish_completion_scripts_compile() {
    require_tool("elvish");
    let directory = tempfile::tempdir().expect("a temporary directory");
    let scripts: Vec<(PathBuf, Vec<u8>)> = committed_files("completions")
        .into_iter()
        .filter(|(path, _)| path.extension().is_some_and(|extension| extension == "elv"))
        .collect();
    assert_eq!(scripts.len(), BINARIES.len(), "one elvish script per binary");
    for (committed, script) in scripts {
        let file_name = committed.file_name().unwrap().to_string_lossy().into_owned();
        let path = directory.path().join(&file_name);
        std::fs::write(&path, elvish_script_with_editor_stand_ins(&script))
            .expect("the temporary directory is writable");
        let output = Command::new("elvish")
            .arg("-compileonly")
            .arg(&path)
            .output()
            .unwrap_or_else(|error| panic!("cannot run elvish: {error}"));
        assert!(
            output.status.success() && output.stderr.is_empty(),
            "elvish -compileonly rejects {file_name}:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Elvish defines its `edit:` module only in an interactive shell, so
/// `elvish -compileonly` rejects any completion script for naming
/// `edit:completion:arg-completer`. The check compiles the script with
/// local stand-ins for the two `edit:` names it uses instead.
fn elvish_script_with_editor_stand_ins(script: &[u8]) -> Vec<u8> {
    let script = String::from_utf8_lossy(script);
    let stand_ins = "var arg-completers = [&]\nfn complex-candidate {|@arguments| }\n";
    let script = script
        .replace("edit:completion:arg-completer", "arg-completers")
        .replace("edit:complex-candidate", "complex-candidate");
    format!("{stand_ins}{script}").into_bytes()
}

/// The house style for help text (STYLE.md, "Help text"): a first line
/// that is short, starts with a capital and has no trailing period, help
/// for every argument, and an example in every command's long help.
#[test]
fn help_text_follows_the_house_style() {
    let mut problems = Vec::new();
    for binary in &BINARIES {
        let mut command = (binary.command)();
        command.build();
        check_command_help(&command, binary.name, true, &mut problems);
    }
    assert!(problems.is_empty(), "help text breaks the house style:\n  {}", problems.join("\n  "));
}

fn run_with_input(program: &str, arguments: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(program)
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {program}: {error}"));
    child.stdin.take().expect("stdin is piped").write_all(input).expect("the program reads its input");
    child.wait_with_output().unwrap_or_else(|error| panic!("cannot wait for {program}: {error}"))
}

/// Every `ROSTER_*` variable a binary's `--help` names is in its man page's
/// ENVIRONMENT section, and every one listed there is named by `--help`.
#[test]
fn roster_variables_are_the_same_in_help_and_man_page() {
    fn roster_variables(text: &str) -> std::collections::BTreeSet<String> {
        text.split(|character: char| !(character.is_ascii_uppercase() || character == '_'))
            .filter(|word| word.starts_with("ROSTER_") && word.len() > "ROSTER_".len())
            .map(str::to_owned)
            .collect()
    }
    let mut problems = Vec::new();
    for binary in &BINARIES {
        let mut command = (binary.command)();
        command.build();
        let mut help = command.render_long_help().to_string();
        for subcommand in command.get_subcommands_mut() {
            help.push_str(&subcommand.render_long_help().to_string());
        }
        let in_help = roster_variables(&help);
        let in_man: std::collections::BTreeSet<String> = (binary.manual)()
            .environment
            .iter()
            .map(|variable| variable.name.to_owned())
            .filter(|name| name.starts_with("ROSTER_"))
            .collect();
        if in_help != in_man {
            problems
                .push(format!("{}: --help names {in_help:?}, the man page lists {in_man:?}", binary.name));
        }
    }
    assert!(problems.is_empty(), "ROSTER_ variables differ:\n  {}", problems.join("\n  "));
}

/// SYNOPSIS names the value of every option that takes one (`[--dir DIR]`).
#[test]
fn man_synopsis_shows_value_names() {
    for binary in &BINARIES {
        let path = workspace_root().join("man").join(format!("{}.1", binary.name));
        let page =
            std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let synopsis =
            page.lines().skip_while(|line| *line != ".SH SYNOPSIS").nth(1).unwrap_or("").to_owned();
        let mut command = (binary.command)();
        command.build();
        for option in command.get_arguments().filter(|argument| !argument.is_positional()) {
            let takes_values = option.get_num_args().is_some_and(|range| range.takes_values());
            let (Some(long), Some(value_names), true) =
                (option.get_long(), option.get_value_names(), takes_values)
            else {
                continue;
            };
            let shown = format!("\\fB\\-\\-{}\\fR \\fI{}\\fR", long.replace('-', "\\-"), value_names[0]);
            assert!(synopsis.contains(&shown), "{}: SYNOPSIS lacks {shown}:\n{synopsis}", binary.name);
        }
    }
}
