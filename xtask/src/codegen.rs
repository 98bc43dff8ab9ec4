//! Generated files: one man page per binary plus the `roster(7)` overview
//! under `man/`, and shell completions under `completions/`, all rendered
//! from the same clap `Command` each binary runs. The files are committed so
//! that packagers need no Rust toolchain; `cargo xtask codegen --check` and a
//! test regenerate them in memory and fail when the committed ones drift.

mod binaries;
mod completions;
mod man_pages;
mod overview;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use ::tests::workspace::workspace_root;
use anyhow::{Context, bail};

pub use binaries::{BINARIES, BINARY_NAMES, binary_names_in_prose};
pub use completions::CompletionScript;

/// A generated file: its path relative to the repository root and its bytes.
pub type GeneratedFile = (PathBuf, Vec<u8>);

/// The directory generated man pages live in, relative to the repository root.
pub const MAN_DIRECTORY: &str = "man";

/// The directory generated completions live in, relative to the repository root.
pub const COMPLETIONS_DIRECTORY: &str = "completions";

/// Writes `man/` from the binaries' clap definitions.
pub fn write_man_pages() -> anyhow::Result<()> {
    write_generated_directory(MAN_DIRECTORY, &generate_man_pages()?)
}

/// Writes `completions/` from the binaries' clap definitions.
pub fn write_completions() -> anyhow::Result<()> {
    write_generated_directory(COMPLETIONS_DIRECTORY, &generate_completions())
}

/// Writes both generated directories.
pub fn write_all() -> anyhow::Result<()> {
    write_man_pages()?;
    write_completions()
}

/// Regenerates everything in memory and fails, naming each drifted file,
/// when the files in the tree differ from what would be generated.
pub fn check_all() -> anyhow::Result<()> {
    let drifted = drifted_files(&workspace_root())?;
    if drifted.is_empty() {
        println!("man/ and completions/ are up to date");
        return Ok(());
    }
    bail!("{}", drift_report(&drifted))
}

/// Every man page: `man/<binary>.1` for each binary and `man/roster.7`.
pub fn generate_man_pages() -> anyhow::Result<Vec<GeneratedFile>> {
    let mut files = Vec::new();
    for binary in &BINARIES {
        let page = man_pages::render_binary_page(binary)?;
        files.push((Path::new(MAN_DIRECTORY).join(format!("{}.1", binary.name)), page.into_bytes()));
    }
    files.push((Path::new(MAN_DIRECTORY).join("roster.7"), overview::render_overview_page().into_bytes()));
    Ok(files)
}

/// Every completion script: five shells for each binary, as files.
pub fn generate_completions() -> Vec<GeneratedFile> {
    generate_completion_scripts()
        .into_iter()
        .map(|script| (Path::new(COMPLETIONS_DIRECTORY).join(&script.file_name), script.script))
        .collect()
}

/// Every completion script, with the binary and shell it is for.
pub fn generate_completion_scripts() -> Vec<CompletionScript> {
    BINARIES
        .iter()
        .flat_map(|binary| completions::render_completions(binary.name, &(binary.command)()))
        .collect()
}

/// Man pages followed by completions, as `cargo xtask codegen` writes them.
pub fn generate_all() -> anyhow::Result<Vec<GeneratedFile>> {
    let mut files = generate_man_pages()?;
    files.extend(generate_completions());
    Ok(files)
}

/// How one file in the tree differs from what codegen would write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriftedFile {
    pub path: PathBuf,
    pub problem: DriftProblem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftProblem {
    /// Codegen would write the file but the tree lacks it.
    Missing,
    /// The file's contents differ from what codegen would write.
    Changed,
    /// The file sits in a generated directory but codegen no longer writes it.
    Stale,
}

/// Compares the generated directories under `root` with a fresh in-memory
/// generation.
pub fn drifted_files(root: &Path) -> anyhow::Result<Vec<DriftedFile>> {
    let generated = generate_all()?;
    let mut drifted = Vec::new();
    for (relative_path, contents) in &generated {
        let problem = match fs::read(root.join(relative_path)) {
            Ok(on_disk) if on_disk == *contents => continue,
            Ok(_) => DriftProblem::Changed,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => DriftProblem::Missing,
            Err(error) => {
                return Err(error)
                    .with_context(|| format!("cannot read {}", root.join(relative_path).display()));
            }
        };
        drifted.push(DriftedFile { path: relative_path.clone(), problem });
    }
    let expected: BTreeSet<&Path> = generated.iter().map(|(path, _)| path.as_path()).collect();
    for directory in [MAN_DIRECTORY, COMPLETIONS_DIRECTORY] {
        for relative_path in files_in_directory(root, Path::new(directory))? {
            if !expected.contains(relative_path.as_path()) {
                drifted.push(DriftedFile { path: relative_path, problem: DriftProblem::Stale });
            }
        }
    }
    Ok(drifted)
}

/// The message `codegen --check` and the drift test fail with.
pub fn drift_report(drifted: &[DriftedFile]) -> String {
    let mut report = String::from("generated files are out of date:\n");
    for file in drifted {
        let problem = match file.problem {
            DriftProblem::Missing => "missing",
            DriftProblem::Changed => "differs from what codegen writes",
            DriftProblem::Stale => "no longer generated",
        };
        report.push_str(&format!("  {}: {problem}\n", file.path.display()));
    }
    report.push_str("run `cargo xtask codegen` and commit");
    report
}

/// Makes `directory` (relative to the repository root) hold exactly `files`:
/// writes what changed, removes what is no longer generated.
fn write_generated_directory(directory: &str, files: &[GeneratedFile]) -> anyhow::Result<()> {
    let root = workspace_root();
    let absolute_directory = root.join(directory);
    fs::create_dir_all(&absolute_directory)
        .with_context(|| format!("cannot create {}", absolute_directory.display()))?;
    for (relative_path, contents) in files {
        let path = root.join(relative_path);
        // Rewriting only what changed keeps mtimes stable for tools that watch the tree.
        if fs::read(&path).ok().as_deref() == Some(contents.as_slice()) {
            continue;
        }
        fs::write(&path, contents).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", relative_path.display());
    }
    let expected: BTreeSet<&Path> = files.iter().map(|(path, _)| path.as_path()).collect();
    for relative_path in files_in_directory(&root, Path::new(directory))? {
        if !expected.contains(relative_path.as_path()) {
            let path = root.join(&relative_path);
            fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
            println!("removed {}", relative_path.display());
        }
    }
    Ok(())
}

/// The files directly inside `root/directory`, as paths relative to `root`,
/// sorted; none when the directory does not exist.
fn files_in_directory(root: &Path, directory: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let absolute_directory = root.join(directory);
    let entries = match fs::read_dir(&absolute_directory) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(error).with_context(|| format!("cannot list {}", absolute_directory.display()));
        }
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", absolute_directory.display()))?;
        files.push(directory.join(entry.file_name()));
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    /// Generation depends on nothing but the clap commands: two runs give
    /// the same bytes. (The generated files themselves are tested in the
    /// `tests` crate, `tests/tooling/generated_files.rs`.)
    #[test]
    fn man_pages_and_completions_are_the_same_on_every_run() {
        assert_eq!(
            super::generate_all().expect("pages render"),
            super::generate_all().expect("pages render")
        );
    }
}
