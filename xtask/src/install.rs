//! `cargo xtask install [--prefix DIR]`: builds the release binaries and puts
//! them, the man pages and the completions where each tool looks for them
//! under a prefix (default `~/.local`), then says how to enable what the
//! environment does not pick up on its own. It records what it put in place
//! in a manifest under the prefix, and `cargo xtask uninstall [--prefix
//! DIR]` removes exactly that. `dist` lays out its tarball with the same
//! [`installation_files`], so an unpacked tarball and an install look alike.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};
use clap_complete::Shell;

use crate::codegen::{self, BINARY_NAMES};
use ::tests::workspace::{Profile, build_binaries};

/// The manifest of an installation, below its prefix: every file install
/// wrote and every directory it created, which uninstall removes.
pub const MANIFEST: &str = "share/roster/installed-files";

/// Installs under `prefix` (default `~/.local`) after a release build.
pub fn run(prefix: Option<PathBuf>) -> anyhow::Result<()> {
    let prefix = chosen_prefix(prefix)?;
    let binaries_directory = build_binaries(Profile::Release, &crate::codegen::BINARY_NAMES)?;
    let installed = install_into(&prefix, &binaries_directory)?;
    println!("installed under {}:", prefix.display());
    for path in &installed {
        println!("  {}", path.display());
    }
    println!();
    print!("{}", enabling_instructions(&prefix));
    println!("\n`cargo xtask uninstall{}` removes it all again.", prefix_flag(&prefix));
    Ok(())
}

/// Removes what `cargo xtask install` put under `prefix` (default
/// `~/.local`), as its manifest lists it: the files, then the directories
/// it created, where they are left empty.
pub fn uninstall(prefix: Option<PathBuf>) -> anyhow::Result<()> {
    let prefix = chosen_prefix(prefix)?;
    let manifest_path = prefix.join(MANIFEST);
    let manifest = match fs::read_to_string(&manifest_path) {
        Ok(text) => Manifest::parse(&text, &manifest_path)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => bail!(
            "{} does not exist, so nothing under {} is known to be roster's; nothing was removed (an \
             installation made before install wrote that manifest: run `cargo xtask install{}` once more, \
             then uninstall)",
            manifest_path.display(),
            prefix.display(),
            prefix_flag(&prefix)
        ),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", manifest_path.display())),
    };
    let mut removed = Vec::new();
    let mut already_gone = Vec::new();
    for file in manifest.files.iter().map(|file| prefix.join(file)).chain([manifest_path.clone()]) {
        match fs::remove_file(&file) {
            Ok(()) => removed.push(file),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => already_gone.push(file),
            Err(error) => return Err(error).with_context(|| format!("cannot remove {}", file.display())),
        }
    }
    let mut kept = Vec::new();
    // Deepest first, so a directory's own directories go before it; the
    // prefix itself (`.`, when install created it) last.
    let mut directories: Vec<PathBuf> = manifest
        .directories
        .iter()
        .map(|directory| if directory == Path::new(".") { prefix.clone() } else { prefix.join(directory) })
        .collect();
    directories.sort_by_key(|directory| std::cmp::Reverse(directory.components().count()));
    for directory in directories {
        match fs::remove_dir(&directory) {
            Ok(()) => removed.push(directory),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) if error.kind() == std::io::ErrorKind::DirectoryNotEmpty => kept.push(directory),
            Err(error) => {
                return Err(error).with_context(|| format!("cannot remove {}", directory.display()));
            }
        }
    }
    println!("removed from {}:", prefix.display());
    for path in &removed {
        println!("  {}", path.display());
    }
    for path in &already_gone {
        println!("already gone: {}", path.display());
    }
    for path in &kept {
        println!("kept, as it holds files of others: {}", path.display());
    }
    println!(
        "\nLines you added to shell start-up files for PATH, MANPATH or completions stay; remove them by hand."
    );
    Ok(())
}

/// `--prefix` made absolute, or the default `~/.local`.
fn chosen_prefix(prefix: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match prefix {
        Some(prefix) => std::path::absolute(&prefix)
            .with_context(|| format!("cannot make --prefix {} absolute", prefix.display())),
        None => default_prefix(),
    }
}

/// ` --prefix DIR` for a command to repeat, empty for the default prefix.
fn prefix_flag(prefix: &Path) -> String {
    match default_prefix() {
        Ok(default) if default == prefix => String::new(),
        _ => format!(" --prefix {}", prefix.display()),
    }
}

/// What an installation put in place below its prefix, as [`MANIFEST`]
/// records it: one `file PATH` or `directory PATH` line each, paths
/// relative to the prefix.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub files: BTreeSet<PathBuf>,
    /// The directories install created (they did not exist before it).
    pub directories: BTreeSet<PathBuf>,
}

impl Manifest {
    /// Reads a manifest's text; a path that does not stay below the prefix
    /// (absolute, or with `..`) is refused, so that uninstall removes
    /// nothing outside it.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Manifest> {
        let mut manifest = Manifest::default();
        for line in text.lines().filter(|line| !line.is_empty() && !line.starts_with('#')) {
            let (kind, entry) = line.split_once(' ').unwrap_or((line, ""));
            let entry = PathBuf::from(entry);
            let below_prefix = entry == Path::new(".")
                || (entry.components().next().is_some()
                    && entry.components().all(|component| matches!(component, Component::Normal(_))));
            if !below_prefix {
                bail!(
                    "{} lists {line:?}, which is not a path below the prefix; nothing was removed",
                    path.display()
                );
            }
            match kind {
                "file" => manifest.files.insert(entry),
                "directory" => manifest.directories.insert(entry),
                _ => bail!(
                    "{} holds the line {line:?}, which is neither a file nor a directory",
                    path.display()
                ),
            };
        }
        Ok(manifest)
    }

    /// The manifest's text.
    pub fn render(&self) -> String {
        let mut text = String::from(
            "# What `cargo xtask install` put in place under this prefix, relative to it;\n\
             # `cargo xtask uninstall` removes it.\n",
        );
        for file in &self.files {
            text.push_str(&format!("file {}\n", file.display()));
        }
        for directory in &self.directories {
            text.push_str(&format!("directory {}\n", directory.display()));
        }
        text
    }
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
/// the completions, generated afresh so they match the binaries, and the
/// systemd user unit of roster-notify (in `share/systemd/user`, where the
/// user's systemd looks under `~/.local` and `/usr/local`), starting
/// `notify_executable`.
pub fn installation_files(
    binaries_directory: &Path,
    notify_executable: &str,
) -> anyhow::Result<Vec<InstalledFile>> {
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
    files.push(InstalledFile {
        destination: Path::new("share/systemd/user").join(crate::systemd_unit::UNIT_NAME),
        contents: FileContents::Generated(crate::systemd_unit::user_unit(notify_executable).into_bytes()),
    });
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
/// the completions under `prefix`, and the manifest of it all; returns the
/// paths written. An earlier installation's manifest is merged in: the
/// directories it created are still install's to remove.
pub fn install_into(prefix: &Path, binaries_directory: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let manifest_path = prefix.join(MANIFEST);
    let mut manifest = match fs::read_to_string(&manifest_path) {
        Ok(text) => Manifest::parse(&text, &manifest_path)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Manifest::default(),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", manifest_path.display())),
    };
    let notify_executable = std::path::absolute(prefix.join("bin/roster-notify"))
        .with_context(|| format!("cannot make {} absolute", prefix.display()))?;
    let files = installation_files(binaries_directory, &notify_executable.to_string_lossy())?;
    let mut written = write_installation_files(prefix, &files)?;
    manifest.files.extend(files.into_iter().map(|file| file.destination));
    let manifest_directory = manifest_path.parent().context("the manifest has a parent directory")?;
    written.created_directories.extend(missing_directories(prefix, manifest_directory));
    fs::create_dir_all(manifest_directory)
        .with_context(|| format!("cannot create {}", manifest_directory.display()))?;
    manifest.directories.extend(written.created_directories);
    harness::hook_config::write_atomically(&manifest_path, manifest.render().as_bytes(), 0o644)?;
    written.files.push(manifest_path);
    Ok(written.files)
}

/// The directories from `directory` up to `prefix` that do not exist yet,
/// relative to `prefix` (`.` for the prefix itself): the ones creating
/// `directory` creates.
fn missing_directories(prefix: &Path, directory: &Path) -> Vec<PathBuf> {
    directory
        .ancestors()
        .take_while(|ancestor| !ancestor.exists())
        .filter_map(|missing| missing.strip_prefix(prefix).ok())
        .map(
            |relative| {
                if relative.as_os_str().is_empty() { PathBuf::from(".") } else { relative.to_path_buf() }
            },
        )
        .collect()
}

/// What writing an installation's files did below its prefix.
pub struct WrittenFiles {
    /// Every file written, with the prefix.
    pub files: Vec<PathBuf>,
    /// The directories that did not exist and were created, relative to
    /// the prefix (`.` for the prefix itself).
    pub created_directories: Vec<PathBuf>,
}

/// Writes `files` below `prefix`, each through a temporary file and a
/// rename so that a running binary being replaced is never written in
/// place ("text file busy") and a failure leaves no half-written file.
pub fn write_installation_files(prefix: &Path, files: &[InstalledFile]) -> anyhow::Result<WrittenFiles> {
    let mut written = Vec::new();
    let mut created_directories = Vec::new();
    for file in files {
        let destination = prefix.join(&file.destination);
        let directory = destination.parent().context("an installed file has a parent directory")?;
        created_directories.extend(missing_directories(prefix, directory));
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
    Ok(WrittenFiles { files: written, created_directories })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_reads_back_as_written() {
        let manifest = Manifest {
            files: [PathBuf::from("bin/roster-list"), PathBuf::from("share/man/man7/roster.7")].into(),
            directories: [PathBuf::from("."), PathBuf::from("share/roster")].into(),
        };
        assert_eq!(Manifest::parse(&manifest.render(), Path::new("m")).unwrap(), manifest);
    }

    /// Uninstall removes what the manifest lists: a line that leads out
    /// of the prefix is refused before anything is removed.
    #[test]
    fn a_manifest_entry_outside_the_prefix_is_refused() {
        for line in ["file /etc/passwd", "file ../x", "directory bin/../..", "file ", "link bin/x"] {
            assert!(Manifest::parse(line, Path::new("m")).is_err(), "{line:?} was accepted");
        }
    }
}
