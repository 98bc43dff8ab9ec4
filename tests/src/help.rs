//! The help-style checks: the house style for help text (STYLE.md, "Help
//! text") in one place, so every check of it holds the five tools to the
//! same rules: the built binary's `--help` and `--version` (each binary
//! crate's help test) and every line of every clap command (the generated
//! files' test).

use std::path::Path;
use std::process::Command;

/// Runs `binary --help` and checks it: exit 0, every long flag of
/// `command` shown, an `Examples:` section, no period ending the first line.
pub fn check_help(binary: &Path, command: &clap::Command) {
    let output = Command::new(binary).arg("--help").output().expect("the binary runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("help is UTF-8");
    for argument in command.get_arguments() {
        if let Some(long) = argument.get_long() {
            assert!(text.contains(&format!("--{long}")), "--help does not show --{long}:\n{text}");
        }
    }
    assert!(text.contains("Examples:"), "--help has no examples:\n{text}");
    let first = text.lines().next().unwrap_or("");
    let mut problems = Vec::new();
    check_one_line(first, "the first help line", &mut problems);
    assert!(problems.is_empty(), "--help breaks the house style:\n  {}\n{text}", problems.join("\n  "));
}

/// Runs `binary --version` and checks it prints `<name> <version>`.
pub fn check_version(binary: &Path, name: &str, version: &str) {
    let output = Command::new(binary).arg("--version").output().expect("the binary runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("version is UTF-8");
    assert_eq!(text.trim(), format!("{name} {version}"));
}

/// Checks `command` and its subcommands against the house style: an about
/// line and help for every argument, each one line as `check_one_line`
/// wants it, and an example in every command's long help. `top_level`
/// says whether the global flags are checked here (they are checked once,
/// on the top-level command). Adds what is wrong to `problems`.
pub fn check_command_help(command: &clap::Command, name: &str, top_level: bool, problems: &mut Vec<String>) {
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

/// The rule for one line of help (an about, an argument's help, the first
/// line `--help` prints): a single line that starts with a capital and has
/// no trailing period. Adds what is wrong to `problems`, naming it `what`.
pub fn check_one_line(text: &str, what: &str, problems: &mut Vec<String>) {
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
