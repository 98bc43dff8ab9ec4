//! The README and the contract say what the code does: where they list
//! what the code holds in one list, every entry of that list is in them,
//! and what a newcomer runs first behaves as the README says.

use tests::workspace::workspace_root;

fn read(relative: &str) -> String {
    let path = workspace_root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The text of the README section under `heading` (a `## ` line), up to
/// the next section.
fn readme_section(heading: &str) -> String {
    let readme = read("README.md");
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no `## {heading}` section"));
    let body = &readme[start + heading.len() + 5..];
    body[..body.find("\n## ").unwrap_or(body.len())].to_owned()
}

/// The lines of the first ```sh block of `text`.
fn first_shell_block(text: &str) -> Vec<String> {
    let start = text.find("```sh\n").expect("a ```sh block") + "```sh\n".len();
    let block = &text[start..];
    block[..block.find("```").expect("the block ends")].lines().map(str::to_owned).collect()
}

/// Regression: the quick start began with `cargo run -q`, which on a cold
/// checkout builds the workspace for a minute and says nothing while it does.
#[test]
fn the_quick_start_builds_with_progress_before_running_quietly() {
    let commands = first_shell_block(&readme_section("Quick start"));
    let first_quiet_run = commands.iter().position(|line| line.contains("cargo run -q"));
    let build = commands.iter().position(|line| line.starts_with("cargo build") && !line.contains(" -q"));
    match (build, first_quiet_run) {
        (Some(build), Some(run)) => {
            assert!(build < run, "the build comes after `cargo run -q`: {commands:#?}")
        }
        (None, Some(_)) => {
            panic!("`cargo run -q` builds in silence with no `cargo build` before it: {commands:#?}")
        }
        (_, None) => {}
    }
}
