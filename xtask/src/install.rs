//! `cargo xtask install [--prefix DIR]`: builds the release binaries and puts
//! them, the man pages and the completions where each tool looks for them
//! under a prefix (default `~/.local`), then says how to enable what the
//! environment does not pick up on its own. `dist` lays out its tarball with
//! the same [`installation_files`], so an unpacked tarball and an install
//! look alike.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap_complete::Shell;

use crate::codegen::{self, BINARY_NAMES};
use ::tests::workspace::{Profile, build_binaries};

/// Installs under `prefix` (default `~/.local`) after a release build.
pub fn run(prefix: Option<PathBuf>) -> anyhow::Result<()> {
    let prefix = match prefix {
        Some(prefix) => std::path::absolute(&prefix)
            .with_context(|| format!("cannot make --prefix {} absolute", prefix.display()))?,
        None => default_prefix()?,
    };
    let binaries_directory = build_binaries(Profile::Release)?;
    let installed = install_into(&prefix, &binaries_directory)?;
    println!("installed under {}:", prefix.display());
    for path in &installed {
        println!("  {}", path.display());
    }
    println!();
    print!("{}", enabling_instructions(&prefix));
    Ok(())
}

/// One file of an installation: where it goes below the prefix, and what
/// it holds.
pub struct InstalledFile {
    pub destination: PathBuf,
    pub contents: FileContents,
}

pub enum FileContents {
    /// A binary copied from the build, installed executable.
    Executable(PathBuf),
    /// A generated man page or completion script.
    Generated(Vec<u8>),
}

/// Every file an installation consists of, with destinations relative to
/// the prefix: the binaries from `binaries_directory`, the man pages and
/// the completions, generated afresh so they match the binaries.
pub fn installation_files(binaries_directory: &Path) -> anyhow::Result<Vec<InstalledFile>> {
    let mut files = Vec::new();
    for binary in BINARY_NAMES {
        let built = binaries_directory.join(binary);
        if !built.is_file() {
            bail!("{} is missing; build the binaries first", built.display());
        }
        files.push(InstalledFile {
            destination: Path::new("bin").join(binary),
            contents: FileContents::Executable(built),
        });
    }
    for (generated_path, page) in codegen::generate_man_pages()? {
        let file_name = generated_path.file_name().context("a man page path has a file name")?;
        let section = generated_path.extension().context("a man page path has a section")?;
        let mut section_directory = OsString::from("man");
        section_directory.push(section);
        files.push(InstalledFile {
            destination: Path::new("share/man").join(section_directory).join(file_name),
            contents: FileContents::Generated(page),
        });
    }
    for script in codegen::generate_completion_scripts() {
        files.push(InstalledFile {
            destination: completion_destination(script.shell, script.binary, &script.file_name),
            contents: FileContents::Generated(script.script),
        });
    }
    Ok(files)
}

/// Where `shell` looks for `binary`'s completion script below a prefix.
pub fn completion_destination(shell: Shell, binary: &str, file_name: &str) -> PathBuf {
    match shell {
        // bash-completion loads `completions/<command name>` on first use.
        Shell::Bash => Path::new("share/bash-completion/completions").join(binary),
        Shell::Zsh => Path::new("share/zsh/site-functions").join(file_name),
        Shell::Fish => Path::new("share/fish/vendor_completions.d").join(file_name),
        // Elvish and PowerShell have no directory they search; their users source the file.
        _ => Path::new("share/roster/completions").join(file_name),
    }
}

/// Installs the binaries found in `binaries_directory`, the man pages and
/// the completions under `prefix`; returns the paths written.
pub fn install_into(prefix: &Path, binaries_directory: &Path) -> anyhow::Result<Vec<PathBuf>> {
    write_installation_files(prefix, &installation_files(binaries_directory)?)
}

/// Writes `files` below `prefix`, each through a temporary file and a
/// rename so that a running binary being replaced is never written in
/// place ("text file busy") and a failure leaves no half-written file.
pub fn write_installation_files(prefix: &Path, files: &[InstalledFile]) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for file in files {
        let destination = prefix.join(&file.destination);
        let directory = destination.parent().context("an installed file has a parent directory")?;
        fs::create_dir_all(directory).with_context(|| format!("cannot create {}", directory.display()))?;
        let (bytes, mode) = match &file.contents {
            FileContents::Executable(source) => {
                (fs::read(source).with_context(|| format!("cannot read {}", source.display()))?, 0o755)
            }
            FileContents::Generated(bytes) => (bytes.clone(), 0o644),
        };
        harness::hook_config::write_atomically(&destination, &bytes, mode)?;
        written.push(destination);
    }
    Ok(written)
}

fn default_prefix() -> anyhow::Result<PathBuf> {
    match std::env::var_os("HOME").filter(|home| !home.is_empty()) {
        Some(home) => Ok(Path::new(&home).join(".local")),
        None => bail!("HOME is not set; give the installation directory with --prefix DIR"),
    }
}

/// What to add to which shell start-up file so that PATH, completions and
/// man pages find the installation.
fn enabling_instructions(prefix: &Path) -> String {
    let prefix_text = prefix.display().to_string();
    let bin_directory = prefix.join("bin");
    let man_directory = prefix.join("share/man");
    let mut text = String::new();

    if !directory_is_on_path(&bin_directory) {
        text.push_str(&format!(
            "{} is not on PATH; add to your shell's start-up file:\n  export PATH=\"{}:$PATH\"\n\n",
            bin_directory.display(),
            bin_directory.display()
        ));
    }

    text.push_str(&format!(
        "Completions:\n\
         \x20 bash:       bash-completion loads them on first use when {prefix_text}/bin is on PATH;\n\
         \x20             without bash-completion, add to ~/.bashrc:\n\
         \x20               for file in {prefix_text}/share/bash-completion/completions/roster-*; do . \"$file\"; done\n\
         \x20 zsh:        add to ~/.zshrc, before compinit:\n\
         \x20               fpath=({prefix_text}/share/zsh/site-functions $fpath)\n\
         \x20 fish:       found on its own when the prefix is ~/.local or its share/ is in XDG_DATA_DIRS;\n\
         \x20             otherwise add to ~/.config/fish/config.fish:\n\
         \x20               set -p fish_complete_path {prefix_text}/share/fish/vendor_completions.d\n\
         \x20 elvish:     add to rc.elv, one line per tool:\n\
         \x20               eval (slurp < {prefix_text}/share/roster/completions/roster-list.elv)\n\
         \x20 PowerShell: add to $PROFILE, one line per tool:\n\
         \x20               . {prefix_text}/share/roster/completions/_roster-list.ps1\n"
    ));
    text.push_str("\nMan pages: man roster for the overview, man roster-list and so on for each tool.\n");
    match directory_is_on_man_path(&man_directory) {
        Some(true) => {}
        Some(false) => text.push_str(&format!(
            "  {man} is not on the man path; add to your shell's start-up file:\n\
             \x20   export MANPATH=\"{man}:$MANPATH\"\n\
             \x20 (where MANPATH was unset this leaves a trailing colon, which keeps the system's pages)\n",
            man = man_directory.display()
        )),
        None => text
            .push_str(&format!("  if man does not find them, add {} to MANPATH\n", man_directory.display())),
    }
    text
}

fn directory_is_on_path(directory: &Path) -> bool {
    let Some(path) = std::env::var_os("PATH") else { return false };
    std::env::split_paths(&path).any(|entry| same_directory(&entry, directory))
}

/// Whether `manpath` (man-db) lists `directory`; `None` when it cannot be
/// asked.
fn directory_is_on_man_path(directory: &Path) -> Option<bool> {
    let output = std::process::Command::new("manpath").arg("-q").output().ok()?;
    if !output.status.success() {
        return None;
    }
    let listed = String::from_utf8_lossy(&output.stdout);
    Some(listed.trim().split(':').any(|entry| same_directory(Path::new(entry), directory)))
}

fn same_directory(left: &Path, right: &Path) -> bool {
    match (fs::canonicalize(left), fs::canonicalize(right)) {
        (Ok(left), Ok(right)) => left == right,
        _ => left == right,
    }
}
