//! Where the hooks find roster-register, roster-prune and roster-state:
//! `--bin-dir`, next to roster-hooks, or by name through PATH, and what the
//! user is warned of for each (a binary missing, cargo's build directory).

use std::path::{Path, PathBuf};

use anyhow::Context;
use harness::hook_config;
use owner_liveness::retry_interrupted;

/// Where the hooks find roster-register, roster-prune and roster-state, and what the user
/// should know about it.
pub(crate) struct BinaryLocation {
    pub(crate) directory: Option<PathBuf>,
    pub(crate) warning: Option<String>,
}

/// Where the hook binaries (`HOOK_BINARIES`) are: `--bin-dir` when given, else
/// next to this executable, else nowhere known (the hooks then call them by
/// name, and the user is told that they must be on PATH).
pub(crate) fn locate_binaries(bin_dir: Option<&Path>) -> anyhow::Result<BinaryLocation> {
    // Only a binary that is not there makes the hooks call it by name; a
    // stat that fails otherwise is an error, not a reason to install hooks
    // that mean something else.
    // The hook binaries `directory` lacks, in `HOOK_BINARIES` order.
    let missing_from = |directory: &Path| -> anyhow::Result<Vec<&'static str>> {
        let mut missing = Vec::new();
        for name in HOOK_BINARIES {
            let path = directory.join(name);
            match retry_interrupted(|| std::fs::metadata(&path)) {
                Ok(metadata) if metadata.is_file() => {}
                Ok(_) => missing.push(name),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => missing.push(name),
                Err(error) => {
                    return Err(error).with_context(|| format!("cannot inspect {}", path.display()));
                }
            }
        }
        Ok(missing)
    };
    if let Some(bin_dir) = bin_dir {
        let directory = std::path::absolute(bin_dir)
            .with_context(|| format!("cannot resolve --bin-dir {}", bin_dir.display()))?;
        let missing = missing_from(&directory)?;
        let warning = (!missing.is_empty()).then(|| {
            format!(
                "{} does not hold {}; the hooks that call {} fail until it does",
                directory.display(),
                words_list(&missing),
                if missing.len() == 1 { "it" } else { "them" }
            )
        });
        return Ok(BinaryLocation { directory: Some(directory), warning });
    }
    let executable =
        retry_interrupted(std::env::current_exe).context("cannot find the roster-hooks executable")?;
    let directory = executable.parent().map(Path::to_path_buf).unwrap_or_default();
    if missing_from(&directory)?.is_empty() && directory.to_str().is_some() {
        return Ok(BinaryLocation { directory: Some(directory), warning: None });
    }
    Ok(BinaryLocation {
        directory: None,
        warning: Some(format!(
            "roster-register, roster-prune and roster-state are not next to roster-hooks in {}, so the hooks call them by \
             name: they must be on the PATH the harness runs its hooks with (or pass --bin-dir DIR)",
            directory.display()
        )),
    })
}

/// A warning for hooks that would call the binaries in `directory` when it
/// is a cargo build directory (`…/target/debug`): the settings file keeps
/// that path, and `cargo clean` or a rebuild removes the binaries from
/// under it, after which every hook fails without the harness saying so.
pub(crate) fn build_directory_warning(directory: &Path) -> Option<String> {
    let build_directory = hook_config::cargo_build_directory(directory)?;
    Some(format!(
        "the hooks call roster-register, roster-prune and roster-state in {}, cargo's build directory under {}: `cargo clean` \
         or a rebuild removes them, and then every hook fails silently; install roster first (`cargo xtask \
         install`, or the Debian package) and run the installed roster-hooks, or pass --bin-dir DIR naming \
         where they are installed",
        directory.display(),
        build_directory.display()
    ))
}

/// The binaries the hooks call.
const HOOK_BINARIES: [&str; 3] = ["roster-register", "roster-prune", "roster-state"];

/// A warning naming the hook binaries that are not on PATH, if any: hooks
/// that call them by name fail until they are.
pub(crate) fn binaries_missing_from_path_warning() -> Option<String> {
    let missing: Vec<&str> = HOOK_BINARIES.into_iter().filter(|name| find_on_path(name).is_none()).collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "{} {} not on PATH, so hooks that call {} by name fail; install roster (`cargo xtask install`, or the \
         Debian package) or install the hooks with --bin-dir DIR",
        words_list(&missing),
        if missing.len() == 1 { "is" } else { "are" },
        if missing.len() == 1 { "it" } else { "them" },
    ))
}

/// `a`, `a and b`, `a, b and c`.
fn words_list(words: &[&str]) -> String {
    match words {
        [init @ .., last] if !init.is_empty() => format!("{} and {last}", init.join(", ")),
        _ => words.join(""),
    }
}

/// The executable `name` in the first PATH directory that holds one.
fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|directory| directory.join(name)).find(|candidate| {
        std::fs::metadata(candidate)
            .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
    })
}
