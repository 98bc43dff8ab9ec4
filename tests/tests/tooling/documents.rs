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

/// `text` as one line: line breaks and runs of blanks as one space, roff's
/// escaped hyphens as hyphens, so a list wrapped over lines reads as one.
fn flattened(text: &str) -> String {
    text.replace("\\-", "-").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Regression: the README listed nine harnesses while `man roster` left out
/// Amp (and the package description Aider and Amp, held to the list by
/// xtask's own test). Each names them all, in the words of
/// `harness::display_names_in_prose`.
#[test]
fn the_readme_contract_and_man_page_name_every_harness() {
    let harnesses = harness::display_names_in_prose(&harness::Harness::ALL);
    for document in ["README.md", "docs/contract.md", "man/roster.7"] {
        assert!(
            flattened(&read(document)).contains(&harnesses),
            "{document} does not list every harness as `{harnesses}`"
        );
    }
}

/// The code block of contract §2 that draws the roster directory.
fn contract_layout_block() -> String {
    let contract = read("docs/contract.md");
    let section = &contract[contract.find("\n## 2. ").expect("the contract has §2")..];
    let block = &section[section.find("```\n").expect("§2 draws the layout") + 4..];
    block[..block.find("```").expect("the drawing ends")].to_owned()
}

/// Regression: `man roster`'s LAYOUT left out `session-ids/`,
/// `.notes-shown.json` and `.reap-cursor`. The man page (generated from
/// `registry_core::registry_layout`) and the contract's §2 both show every
/// entry the code names.
#[test]
fn the_contract_and_man_page_show_every_entry_of_the_roster_directory() {
    let layout = contract_layout_block();
    let page = flattened(&read("man/roster.7"));
    for entry in registry_core::registry_layout() {
        assert!(layout.contains(&entry.path), "contract §2 does not show {}:\n{layout}", entry.path);
        assert!(page.contains(&entry.path), "man/roster.7 does not show {}", entry.path);
    }
}

/// Regression: the README's commands pass the shell's pid as `$$`, which
/// fish does not have; the quick start says what fish calls it.
#[test]
fn the_quick_start_says_what_fish_writes_for_dollar_dollar() {
    let quick_start = readme_section("Quick start");
    if first_shell_block(&quick_start).iter().any(|line| line.contains("$$")) {
        assert!(quick_start.contains("$fish_pid"), "the quick start uses $$ and says nothing of fish");
    }
}

/// Regression: the README said only far below its test command that the
/// tests may install packages, and not which. The quick start's test
/// command says it, and the quick start names every package the tests
/// may install (`tests::TOOL_PACKAGES`).
#[test]
fn the_quick_start_names_every_package_the_tests_may_install() {
    let quick_start = readme_section("Quick start");
    let test_command = first_shell_block(&quick_start)
        .into_iter()
        .find(|line| line.starts_with("cargo test --workspace"))
        .expect("the quick start runs the tests");
    assert!(test_command.contains("apt-get"), "the test command does not say it may install: {test_command}");
    let words: std::collections::BTreeSet<&str> = quick_start
        .split(|character: char| !(character.is_ascii_alphanumeric() || character == '-'))
        .collect();
    for (tool, package) in tests::TOOL_PACKAGES {
        assert!(words.contains(package), "the quick start does not name {package} (for `{tool}`)");
    }
}

/// The row of the Markdown table in `text` whose first cell is `first`.
fn table_row<'a>(text: &'a str, first: &str) -> Option<&'a str> {
    text.lines().find(|line| line.starts_with(&format!("| {first} ")))
}

/// The contract's table of state events (§8.4) and the harness notes' (the
/// state events section) name, in each harness's row, every event and kind
/// roster listens to, and the state the event sets is in the column it
/// belongs to: the tables cannot drift from `harness::ACTIVITY_EVENTS`.
#[test]
fn the_contract_and_harness_notes_list_every_state_event_in_its_column() {
    let contract = read("docs/contract.md");
    let section = &contract[contract.find("### 8.4 State events per harness").expect("§8.4")..];
    let notes = read("docs/harnesses.md");
    let notes_section = &notes[notes.find("## What each session is doing").expect("the state section")..];
    for (document, text) in [("docs/contract.md §8.4", section), ("docs/harnesses.md", notes_section)] {
        for row in harness::ACTIVITY_EVENTS {
            let harness = row.harness.as_str();
            let line = text
                .lines()
                .find(|line| line.starts_with(&format!("| {harness} ")))
                .or_else(|| table_row(text, harness))
                .unwrap_or_else(|| panic!("{document} has no row for {harness}"));
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let column = match row.activity {
                harness::Activity::Working => 2,
                harness::Activity::Waiting => 3,
                harness::Activity::Idle => 4,
            };
            let cell = cells[column];
            let named = format!("`{}`", row.event);
            assert!(
                cell.contains(&named),
                "{document}: {harness}'s {} cell lacks {named}: {cell}",
                row.activity.as_str()
            );
            if let Some(kind) = row.kind {
                assert!(
                    cell.contains(kind),
                    "{document}: {harness}'s {} lacks its kind {kind}: {cell}",
                    row.event
                );
            }
        }
    }
}

/// The keys of a JSON row are one list in the code
/// (`registry_core::ROW_KEYS`): each key a row adds to the record's is
/// named in contract §6.2, and the tests' own list of them
/// (`tests::ROW_EXTRA_KEYS`, which every row is checked against) is that
/// list less the record's keys.
#[test]
fn the_contract_names_every_key_a_json_row_adds_to_the_record() {
    let contract = read("docs/contract.md");
    let start = contract.find("\n### 6.2 ").expect("the contract has §6.2");
    let section = &contract[start..];
    let section = &section[..section[1..].find("\n### ").map_or(section.len(), |end| end + 1)];
    // `chain` is a record key (§3) the tests' list of required ones leaves out.
    let record_keys: Vec<&str> = tests::RECORD_KEYS.iter().copied().chain(["chain"]).collect();
    let added: Vec<&str> =
        registry_core::ROW_KEYS.iter().copied().filter(|key| !record_keys.contains(key)).collect();
    let mut expected = tests::ROW_EXTRA_KEYS.to_vec();
    let mut found = added.clone();
    expected.sort_unstable();
    found.sort_unstable();
    assert_eq!(found, expected, "the row keys beyond the record's differ from the tests' list");
    for key in added {
        assert!(section.contains(&format!("`{key}`")), "contract §6.2 does not name the row key `{key}`");
    }
}

/// The binaries the workspace's crates build: each `[[bin]]` name of
/// `crates/*/Cargo.toml`, or the package's own name for a crate with a
/// `src/main.rs` and no `[[bin]]` section.
fn binary_crates() -> std::collections::BTreeSet<String> {
    let mut binaries = std::collections::BTreeSet::new();
    let crates = workspace_root().join("crates");
    for entry in std::fs::read_dir(&crates).unwrap_or_else(|error| panic!("{}: {error}", crates.display())) {
        let directory = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(directory.join("Cargo.toml")) else { continue };
        let mut section = "";
        let mut package_name = None;
        let mut named_binaries = 0;
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line;
                continue;
            }
            let Some(value) =
                line.strip_prefix("name").map(str::trim_start).and_then(|rest| rest.strip_prefix('='))
            else {
                continue;
            };
            let value = value.trim().trim_matches('"').to_owned();
            match section {
                "[package]" => package_name = Some(value),
                "[[bin]]" => {
                    binaries.insert(value);
                    named_binaries += 1;
                }
                _ => {}
            }
        }
        if named_binaries == 0 && directory.join("src/main.rs").is_file() {
            binaries.insert(package_name.expect("a package has a name"));
        }
    }
    binaries
}

/// The text of the man page section `heading` (a `.SH` line) of `page`.
fn man_section<'a>(page: &'a str, heading: &str) -> &'a str {
    let start = page
        .lines()
        .position(|line| {
            line.trim_start_matches(".SH ").trim_matches('"') == heading && line.starts_with(".SH")
        })
        .unwrap_or_else(|| panic!("no {heading} section"));
    let lines: Vec<&str> = page.lines().collect();
    let from = page.find(lines[start]).unwrap() + lines[start].len();
    let rest = &page[from..];
    &rest[..rest.find("\n.SH").unwrap_or(rest.len())]
}

/// Regression: `man roster` said "roster is five small tools" and never
/// mentioned roster-send or roster-state, and its SEE ALSO (and every
/// tool page's) left them out, while the package and the installation
/// listed seven. Every list of the tools is made from xtask's one list of
/// binaries; this holds that list, as the generated pages show it, and the
/// tests' own, to the binaries the workspace's crates build, so an eighth
/// tool cannot be forgotten.
#[test]
fn every_binary_crate_is_in_every_list_of_the_tools() {
    let binaries = binary_crates();
    assert!(binaries.len() >= 7, "the crates build {binaries:?}");
    let tests_list: std::collections::BTreeSet<String> =
        tests::workspace::ROSTER_BINARIES.iter().map(|name| (*name).to_owned()).collect();
    assert_eq!(tests_list, binaries, "tests::workspace::ROSTER_BINARIES against the crates' binaries");

    let overview = read("man/roster.7");
    let description = man_section(&overview, "DESCRIPTION");
    let see_also = man_section(&overview, "SEE ALSO");
    for binary in &binaries {
        let roff_name = binary.replace('-', "\\-");
        assert!(
            description.contains(&format!(".BR {roff_name} (1)\n")),
            "man roster's list of tools leaves out {binary}:\n{description}"
        );
        assert!(
            see_also.contains(&format!("\\fB{roff_name}\\fR(1)")),
            "man roster's SEE ALSO leaves out {binary}:\n{see_also}"
        );
        let page = read(&format!("man/{binary}.1"));
        let page_see_also = man_section(&page, "SEE ALSO");
        assert!(page_see_also.contains("\\fBroster\\fR(7)"), "{binary}(1) does not point at roster(7)");
        for other in binaries.iter().filter(|other| *other != binary) {
            let other_roff = other.replace('-', "\\-");
            assert!(
                page_see_also.contains(&format!("\\fB{other_roff}\\fR(1)")),
                "{binary}(1)'s SEE ALSO leaves out {other}:\n{page_see_also}"
            );
        }
    }
    assert!(!flattened(description).contains("five small tools"), "{description}");

    // Prose that counts the binaries counts them all.
    let count = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    for document in ["README.md", "docs/architecture.md", "docs/contract.md"] {
        let text = flattened(&read(document));
        for (number, word) in count.iter().enumerate() {
            for phrase in [format!("the {word} binaries"), format!("{word} small tools")] {
                assert!(
                    !text.contains(&phrase) || number == binaries.len(),
                    "{document} says `{phrase}`; the crates build {}",
                    binaries.len()
                );
            }
        }
    }
}

/// What a build left of roster's own crates in the target directory's
/// `debug/`: their files in `deps/` and each roster binary, with its
/// modification time. A command that compiles a tool again changes it;
/// another test's cargo building something else does not.
fn debug_build_state(
    debug: &std::path::Path,
) -> std::collections::BTreeMap<std::path::PathBuf, std::time::SystemTime> {
    let deps = debug.join("deps");
    let files = std::fs::read_dir(&deps)
        .unwrap_or_else(|error| panic!("{}: {error}", deps.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().is_some_and(|name| name.to_string_lossy().contains("roster")))
        .chain(tests::workspace::ROSTER_BINARIES.iter().map(|binary| debug.join(binary)));
    files
        .filter_map(|path| {
            let modified = std::fs::symlink_metadata(&path).and_then(|metadata| metadata.modified()).ok()?;
            Some((path, modified))
        })
        .collect()
}

/// Regression: after the quick start's `cargo build --workspace`, its
/// `cargo run -q -p roster-register …` compiled roster-register and
/// roster-list again and printed nothing for 16 s. The build unified
/// features over the whole workspace (tempfile, a dependency of the test
/// harness and xtask, turns on rustix's `fs`, and rustix sits under clap),
/// while `cargo run -p` builds one package's graph, so every crate above
/// rustix had another hash. The quick start's build is run here, then each
/// command after it up to the tests, read from the README itself: they run
/// without compiling anything.
#[test]
fn the_quick_start_runs_what_its_build_built() {
    let commands = first_shell_block(&readme_section("Quick start"));
    let build =
        commands.iter().position(|line| line.starts_with("cargo build")).expect("the quick start builds");
    let tests_line = commands
        .iter()
        .position(|line| line.starts_with("cargo test"))
        .expect("the quick start runs the tests");
    let cargo = std::path::PathBuf::from(tests::workspace::cargo_program());
    // `cargo` in the README is the cargo that runs these tests.
    let path = match cargo.parent().filter(|directory| !directory.as_os_str().is_empty()) {
        Some(directory) => format!("{}:{}", directory.display(), std::env::var("PATH").unwrap_or_default()),
        None => std::env::var("PATH").unwrap_or_default(),
    };
    let registry = tempfile::tempdir().unwrap();
    let run = |line: &str| {
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(line)
            .current_dir(workspace_root())
            .env("PATH", &path)
            .env("ROSTER_DIR", registry.path().join("roster"))
            .env("NO_COLOR", "1")
            .output()
            .expect("sh runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "`{line}` failed ({}):\n{stderr}", output.status);
        (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
    };
    run(&commands[build]);
    let debug = tests::workspace::target_directory().expect("cargo metadata answers").join("debug");
    let built = debug_build_state(&debug);
    let mut printed = String::new();
    for line in &commands[build + 1..tests_line] {
        let (stdout, stderr) = run(line);
        assert!(!stderr.contains("Compiling"), "`{line}` compiled:\n{stderr}");
        printed.push_str(&stdout);
    }
    let after = debug_build_state(&debug);
    let changed: Vec<&std::path::PathBuf> = after
        .iter()
        .filter(|(path, modified)| built.get(*path) != Some(modified))
        .map(|(path, _)| path)
        .collect();
    assert!(
        changed.is_empty(),
        "the quick start's commands after `{}` built again: {changed:#?}",
        commands[build]
    );
    assert!(printed.contains("registered pid"), "the quick start registers the shell:\n{printed}");
}
