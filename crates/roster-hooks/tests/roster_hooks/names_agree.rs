//! One list of harness names (`harness::Harness::ALL`) is the source for
//! detection, `--harness`, `--hook` and roster-hooks; this test holds the
//! README, docs/harnesses.md, roster-hooks' help and its man page to it, so a
//! harness added to the table and not to the docs fails here.

use std::path::Path;

use harness::hook_config::HookHarness;

const REPOSITORY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn read(relative: &str) -> String {
    std::fs::read_to_string(Path::new(REPOSITORY).join(relative)).unwrap()
}

/// The text with line breaks and roff's hyphen escapes undone, so a list
/// wrapped over lines reads as one.
fn flattened(text: &str) -> String {
    text.replace("\\-", "-").split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_harness_name_is_in_the_readme_and_the_harness_notes() {
    let all = harness::harness_names().join(", ");
    for document in ["README.md", "docs/harnesses.md"] {
        assert!(flattened(&read(document)).contains(&all), "{document} does not list every harness: {all}");
    }
}

#[test]
fn every_roster_hooks_harness_is_in_its_help_and_man_page() {
    let help = roster_hooks::command().render_long_help().to_string();
    let mut install = roster_hooks::command();
    let install_help = install.find_subcommand_mut("install").unwrap().render_long_help().to_string();
    let man = read("man/roster-hooks.1");
    for harness in HookHarness::ALL {
        let name = harness.as_str();
        assert!(flattened(&help).contains(&format!("{name} ")), "roster-hooks --help does not name {name}");
        assert!(install_help.contains(name), "roster-hooks install --help does not name {name}");
        assert!(flattened(&man).contains(name), "man/roster-hooks.1 does not name {name}");
    }
    let wired: Vec<&str> = HookHarness::ALL.iter().map(|harness| harness.as_str()).collect();
    for name in harness::harness_names() {
        let documented_elsewhere = ["goose", "aider"].contains(&name);
        assert!(wired.contains(&name) || documented_elsewhere, "{name} is neither wired nor explained");
    }
}
