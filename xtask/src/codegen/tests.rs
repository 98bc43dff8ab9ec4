//! Tests of the generated files: the committed ones match a fresh
//! generation, every man page formats without a groff warning and carries
//! the house sections, every elvish completion script compiles, and the
//! help text they are generated from follows the house style.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::BINARIES;
use super::temporary_directory::TemporaryDirectory;
use super::{drift_report, drifted_files, generate_completion_scripts, generate_man_pages, repository_root};
use clap_complete::Shell;

#[test]
fn committed_man_pages_and_completions_match_codegen() {
    let drifted = drifted_files(&repository_root()).expect("the generated directories can be read");
    assert!(drifted.is_empty(), "{}", drift_report(&drifted));
}

#[test]
fn every_man_page_formats_without_groff_warnings() {
    require_program("groff", "groff (Debian and Ubuntu package: groff-base)");
    for (path, page) in generate_man_pages().expect("man pages render") {
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
    for (path, page) in generate_man_pages().expect("man pages render") {
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

#[test]
fn man_pages_and_completions_are_the_same_on_every_run() {
    assert_eq!(
        generate_man_pages().expect("man pages render"),
        generate_man_pages().expect("man pages render")
    );
    let scripts = |scripts: Vec<super::CompletionScript>| -> Vec<(String, Vec<u8>)> {
        scripts.into_iter().map(|script| (script.file_name, script.script)).collect()
    };
    assert_eq!(scripts(generate_completion_scripts()), scripts(generate_completion_scripts()));
}

/// Elvish has no completion test that drives the shell (its completer runs
/// only in an interactive editor), so its scripts are at least compiled.
/// bash, zsh and fish scripts are driven for real in `completion_tests`.
#[test]
fn elvish_completion_scripts_compile() {
    require_program("elvish", "elvish (Debian and Ubuntu package: elvish)");
    let directory = TemporaryDirectory::new("completions");
    for script in generate_completion_scripts().into_iter().filter(|script| script.shell == Shell::Elvish) {
        let path = directory.path().join(&script.file_name);
        std::fs::write(&path, elvish_script_with_editor_stand_ins(&script.script))
            .expect("the temporary directory is writable");
        let output = Command::new("elvish")
            .arg("-compileonly")
            .arg(&path)
            .output()
            .unwrap_or_else(|error| panic!("cannot run elvish: {error}"));
        assert!(
            output.status.success() && output.stderr.is_empty(),
            "elvish -compileonly rejects {}:\n{}{}",
            script.file_name,
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

fn check_command_help(command: &clap::Command, name: &str, top_level: bool, problems: &mut Vec<String>) {
    match command.get_about().map(|about| about.to_string()) {
        None => problems.push(format!("{name}: no about line")),
        Some(about) => check_one_line(&about, &format!("{name}: about"), problems),
    }
    let after_help = command.get_after_long_help().or(command.get_after_help()).map(|help| help.to_string());
    if !after_help.is_some_and(|help| help.contains("Example")) {
        problems.push(format!("{name}: no example in after_long_help"));
    }
    for argument in command.get_arguments() {
        let id = argument.get_id().as_str();
        // Subcommands inherit the global flags, which are checked on the top-level command.
        if argument.is_hide_set()
            || matches!(id, "help" | "version")
            || (!top_level && argument.is_global_set())
        {
            continue;
        }
        match argument.get_help().or(argument.get_long_help()).map(|help| help.to_string()) {
            None => problems.push(format!("{name}: argument {id} has no help")),
            Some(help) => check_one_line(&help, &format!("{name}: help of {id}"), problems),
        }
    }
    for subcommand in command.get_subcommands().filter(|subcommand| subcommand.get_name() != "help") {
        check_command_help(subcommand, &format!("{name} {}", subcommand.get_name()), false, problems);
    }
}

fn check_one_line(text: &str, what: &str, problems: &mut Vec<String>) {
    if text.contains('\n') {
        problems.push(format!("{what} spans several lines: {text:?}"));
    }
    if text.trim_end().ends_with('.') {
        problems.push(format!("{what} ends with a period: {text:?}"));
    }
    if !text.starts_with(|first: char| first.is_uppercase()) {
        problems.push(format!("{what} does not start with a capital: {text:?}"));
    }
}

/// Fails the test, naming the package to install, when `program` is absent:
/// a check that quietly passes without its tool would prove nothing.
/// Finds `program`, installing its package from Debian's where it can (see
/// `tests::require_tool`); a test that cannot have it fails naming `package`.
pub(crate) fn require_program(program: &str, package: &str) {
    if !program_is_installed(program) {
        tests::find_or_install_tool(program);
    }
    assert!(program_is_installed(program), "{program} is not installed; install {package} to run this test");
}

pub(crate) fn program_is_installed(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else { return false };
    std::env::split_paths(&path).any(|directory| is_executable_file(&directory.join(program)))
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
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

/// Code, tests and tools cite the contract by its path and the numbers of
/// its sections (several in one citation, as in `§2, §3.1`): every section
/// cited must be a heading of the contract.
#[test]
fn every_contract_citation_names_a_section_of_docs_contract_md() {
    let root = repository_root();
    let contract = std::fs::read_to_string(root.join("docs/contract.md")).expect("docs/contract.md exists");
    let sections: std::collections::BTreeSet<String> = contract
        .lines()
        .filter(|line| line.starts_with("## ") || line.starts_with("### "))
        .filter_map(|line| line.split_whitespace().nth(1))
        .map(|number| number.trim_end_matches('.').to_owned())
        .collect();
    let mut problems = Vec::new();
    let mut pending = vec![root.join("crates"), root.join("tests"), root.join("xtask")];
    let mut citations = 0;
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).expect("source directories can be listed") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source files are UTF-8");
            // A citation starts at the contract's path and runs to the end of the line.
            for cited in text.split("docs/contract.md").skip(1) {
                let cited = cited.split(['\n', ')', '"']).next().unwrap_or("");
                for number in cited.split('§').skip(1) {
                    let number: String = number
                        .chars()
                        .take_while(|character| character.is_ascii_digit() || *character == '.')
                        .collect();
                    let number = number.trim_end_matches('.');
                    citations += 1;
                    if !sections.contains(number) {
                        problems.push(format!("{}: §{number}", path.display()));
                    }
                }
            }
        }
    }
    assert!(citations > 50, "only {citations} citations found; is the scan broken?");
    assert!(
        problems.is_empty(),
        "citations of sections docs/contract.md lacks:\n  {}",
        problems.join("\n  ")
    );
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
        let page = super::man_pages::render_binary_page(binary).expect("man pages render");
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
