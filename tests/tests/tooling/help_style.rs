//! Every binary's `--help` as the house style says, checked once over the
//! list of tools rather than in a copy per binary crate: it shows every
//! flag and an example, its first line is one imperative line, each
//! subcommand's help gives an example too, and `--version` says the tool
//! and the version its clap definition has. The clap definitions are consistent.

use tests::help::{check_help, check_version};

use super::generated_files::BINARIES;

#[test]
fn every_binary_answers_help_and_version_as_the_house_style_says() {
    for binary in &BINARIES {
        let command = (binary.command)();
        command.clone().debug_assert();
        let built = tests::binary(binary.name);
        check_help(&built, &command);
        let version = command.get_version().map(str::to_owned).unwrap_or_default();
        check_version(&built, binary.name, &version);
        for subcommand in command.get_subcommands().map(clap::Command::get_name) {
            let help = std::process::Command::new(&built)
                .args([subcommand, "--help"])
                .output()
                .unwrap_or_else(|error| panic!("cannot run {}: {error}", binary.name));
            assert_eq!(help.status.code(), Some(0), "{} {subcommand}: {help:?}", binary.name);
            let text = String::from_utf8_lossy(&help.stdout);
            assert!(
                text.contains("Example"),
                "{} {subcommand} --help shows no example:\n{text}",
                binary.name
            );
        }
    }
}

#[test]
fn every_subcommand_and_its_flags_have_help() {
    for binary in &BINARIES {
        let command = (binary.command)();
        for subcommand in command.get_subcommands() {
            assert!(
                subcommand.get_about().is_some(),
                "{} {} has no help",
                binary.name,
                subcommand.get_name()
            );
            for argument in subcommand.get_arguments() {
                assert!(
                    argument.get_help().is_some(),
                    "{} {} {} has no help",
                    binary.name,
                    subcommand.get_name(),
                    argument.get_id()
                );
            }
        }
    }
}
