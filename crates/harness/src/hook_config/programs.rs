//! The program a hook command runs: whether it can run at all (it exists,
//! is a regular file, is executable), and whether it sits in a cargo build
//! directory, where `cargo clean` or the next rebuild of another profile
//! takes it away and every hook that names it then fails without a word to
//! the user (a harness does not show a hook's failure).

use std::path::{Component, Path, PathBuf};

use super::outcomes::{HookState, HookStatus};
use super::types::{HookConfigFile, scope_flag};

/// Why the program a hook names by absolute path cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProgramProblem {
    Missing,
    NotARegularFile,
    NotExecutable,
    /// `stat` failed otherwise (a directory above it unreadable, …).
    Uninspectable(String),
}

impl ProgramProblem {
    /// What is wrong, completing "`<program>` …".
    pub(crate) fn describe(&self) -> String {
        match self {
            ProgramProblem::Missing => "does not exist".to_owned(),
            ProgramProblem::NotARegularFile => "is not a regular file".to_owned(),
            ProgramProblem::NotExecutable => "is not executable".to_owned(),
            ProgramProblem::Uninspectable(error) => format!("cannot be inspected: {error}"),
        }
    }
}

/// The program a hook command runs: its first word, with single quotes and
/// backslashes undone as `sh` would (enough for the commands roster writes).
pub(crate) fn hook_program(command: &str) -> String {
    let mut word = String::new();
    let mut characters = command.trim_start().chars();
    while let Some(character) = characters.next() {
        match character {
            '\'' => word.extend(characters.by_ref().take_while(|inner| *inner != '\'')),
            '\\' => word.extend(characters.next()),
            blank if blank.is_whitespace() => break,
            other => word.push(other),
        }
    }
    word
}

/// Why `program` cannot run, when it is an absolute path that a hook would
/// fail to execute; `None` when it can, or when it is a bare name looked up
/// through `PATH` (which `roster-hooks` checks on its own).
pub(crate) fn program_problem(program: &Path) -> Option<ProgramProblem> {
    use std::os::unix::fs::PermissionsExt;
    if !program.is_absolute() {
        return None;
    }
    match owner_liveness::retry_interrupted(|| std::fs::metadata(program)) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Some(ProgramProblem::Missing),
        Err(error) => Some(ProgramProblem::Uninspectable(error.to_string())),
        Ok(metadata) if !metadata.is_file() => Some(ProgramProblem::NotARegularFile),
        Ok(metadata) if metadata.permissions().mode() & 0o111 == 0 => Some(ProgramProblem::NotExecutable),
        Ok(_) => None,
    }
}

/// The cargo `target` directory `directory` lies in, when it is one of the
/// directories cargo builds binaries into: `target/debug`, `target/release`
/// or `target/<triple>/debug|release`, or anything below them.
pub fn cargo_build_directory(directory: &Path) -> Option<PathBuf> {
    let components: Vec<Component> = directory.components().collect();
    let is_profile = |component: Option<&Component>| {
        component.is_some_and(|component| matches!(component.as_os_str().to_str(), Some("debug" | "release")))
    };
    let is_triple = |component: Option<&Component>| {
        component.is_some_and(|component| {
            component.as_os_str().to_str().is_some_and(|name| name.matches('-').count() >= 2)
        })
    };
    (0..components.len()).rev().find_map(|index| {
        let found = components[index].as_os_str() == "target"
            && (is_profile(components.get(index + 1))
                || (is_triple(components.get(index + 1)) && is_profile(components.get(index + 2))));
        found.then(|| components[..=index].iter().collect())
    })
}

/// The status of hooks one of whose programs cannot run: `broken`, the
/// programs named with what is wrong and how to mend it. `None` when every
/// program can run (or is called by name through `PATH`).
pub(crate) fn broken_programs_report(target: &HookConfigFile, commands: &[&str]) -> Option<HookStatus> {
    let mut broken: Vec<String> = Vec::new();
    for command in commands {
        let program = hook_program(command);
        if let Some(problem) = program_problem(Path::new(&program)) {
            let line = format!("{program} {}", problem.describe());
            if !broken.contains(&line) {
                broken.push(line);
            }
        }
    }
    if broken.is_empty() {
        return None;
    }
    Some(HookStatus {
        target: target.clone(),
        state: HookState::Broken,
        detail: format!(
            "{}, so the hooks fail each time the harness runs them; install roster (cargo xtask install, or \
             the Debian package) and run its roster-hooks install {}{}, or pass --bin-dir DIR",
            broken.join("; "),
            target.harness,
            scope_flag(target)
        ),
    })
}

/// A note for each cargo build directory the hooks run programs from:
/// they run now, and stop when `cargo clean` empties it.
pub(crate) fn build_directory_notes(target: &HookConfigFile, commands: &[&str]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for command in commands {
        let program = hook_program(command);
        let Some(build_directory) = Path::new(&program).parent().and_then(cargo_build_directory) else {
            continue;
        };
        let note = format!(
            "the hooks run {program} from cargo's build directory {}, so `cargo clean` breaks them; install \
             roster (cargo xtask install, or the Debian package) and run its roster-hooks install {}{}",
            build_directory.display(),
            target.harness,
            scope_flag(target)
        );
        if !notes.iter().any(|known| known.contains(&build_directory.display().to_string())) {
            notes.push(note);
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_the_first_word_unquoted() {
        let cases = [
            ("/usr/bin/roster-register --hook codex", "/usr/bin/roster-register"),
            ("'/opt/my tools/roster-register' --hook codex", "/opt/my tools/roster-register"),
            ("'/opt/it'\\''s/roster-prune' --current", "/opt/it's/roster-prune"),
            ("roster-register --hook codex", "roster-register"),
        ];
        for (command, expect) in cases {
            assert_eq!(hook_program(command), expect, "command {command:?}");
        }
    }

    #[test]
    fn build_directories_are_cargo_profiles_under_target() {
        let cases = [
            ("/home/dev/roster/target/debug", Some("/home/dev/roster/target")),
            ("/home/dev/roster/target/release", Some("/home/dev/roster/target")),
            ("/home/dev/roster/target/x86_64-unknown-linux-gnu/release", Some("/home/dev/roster/target")),
            ("/home/dev/roster/target/debug/deps", Some("/home/dev/roster/target")),
            ("/srv/target/release", Some("/srv/target")),
            ("/home/dev/.local/bin", None),
            ("/usr/bin", None),
            ("/home/dev/target/bin", None),
            ("/home/dev/target", None),
            ("/opt/debug/release", None),
        ];
        for (directory, expect) in cases {
            assert_eq!(
                cargo_build_directory(Path::new(directory)).as_deref(),
                expect.map(Path::new),
                "{directory}"
            );
        }
    }
}
