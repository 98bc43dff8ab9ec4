//! A session's project as the view names it: its directory's last part
//! and the git branch checked out there, read from `.git/HEAD` (no git is
//! run: a view redrawn on every event cannot start a process per row).

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use cli_support::escape_for_terminal;

/// The most bytes read of a HEAD (or a `.git` file): a real one is a line.
const MAX_HEAD_BYTES: u64 = 1024;

/// The most directories walked up looking for `.git`.
const MAX_DEPTH: usize = 64;

/// `api (main)`, `api (a1b2c3d)` on a detached HEAD, `api` outside git.
pub fn project_of(cwd: &Path) -> String {
    let name = cwd
        .file_name()
        .map(|name| escape_for_terminal(&name.to_string_lossy()).into_owned())
        .unwrap_or_else(|| "/".to_owned());
    match branch_of(cwd) {
        Some(branch) => format!("{name} ({})", escape_for_terminal(&branch)),
        None => name,
    }
}

/// The branch (or the short commit of a detached HEAD) of the repository
/// `cwd` is in, from the nearest `.git` above it.
fn branch_of(cwd: &Path) -> Option<String> {
    let git_dir = cwd.ancestors().take(MAX_DEPTH).find_map(git_directory_at)?;
    let head = read_small(&git_dir.join("HEAD"))?;
    let head = head.trim();
    match head.strip_prefix("ref: ") {
        Some(reference) => Some(reference.strip_prefix("refs/heads/").unwrap_or(reference).to_owned()),
        None if head.len() >= 7 && head.chars().all(|c| c.is_ascii_hexdigit()) => Some(head[..7].to_owned()),
        None => None,
    }
}

/// The git directory `.git` at `directory` leads to: the directory itself,
/// or the one a worktree's `.git` file names (`gitdir: PATH`).
fn git_directory_at(directory: &Path) -> Option<PathBuf> {
    let dot_git = directory.join(".git");
    let metadata = std::fs::symlink_metadata(&dot_git).ok()?;
    if metadata.is_dir() {
        return Some(dot_git);
    }
    let text = read_small(&dot_git)?;
    let target = Path::new(text.trim().strip_prefix("gitdir: ")?);
    Some(if target.is_absolute() { target.to_owned() } else { directory.join(target) })
}

/// A regular file's first bytes as text; never waits on a FIFO or device.
fn read_small(path: &Path) -> Option<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits() | nix::fcntl::OFlag::O_NOCTTY.bits())
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_HEAD_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}
