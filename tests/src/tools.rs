//! The external tools a test needs (strace, unshare, shells, dpkg, …):
//! found on PATH, or installed from Debian's packages when missing.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The Debian package of each external tool a test may need: what the tests
/// install with apt-get when they run as root and the tool is missing (the
/// README names every one at its test command).
pub const TOOL_PACKAGES: [(&str, &str); 30] = [
    ("apt-get", "apt"),
    ("bwrap", "bubblewrap"),
    ("dpkg-deb", "dpkg"),
    ("dpkg-shlibdeps", "dpkg-dev"),
    ("prlimit", "util-linux"),
    ("elvish", "elvish"),
    ("fish", "fish"),
    ("groff", "groff-base"),
    ("man", "man-db"),
    ("mount", "mount"),
    ("nsenter", "util-linux"),
    ("script", "bsdutils"),
    ("setpriv", "util-linux"),
    ("strace", "strace"),
    ("tmux", "tmux"),
    ("screen", "screen"),
    ("kitty", "kitty"),
    ("Xvfb", "xvfb"),
    ("unshare", "util-linux"),
    ("zsh", "zsh"),
    ("flock", "util-linux"),
    ("sshd", "openssh-server"),
    ("ssh", "openssh-client"),
    ("ssh-keygen", "openssh-client"),
    ("dunst", "dunst"),
    ("dunstctl", "dunst"),
    ("dbus-daemon", "dbus-daemon"),
    ("dbus-monitor", "dbus-bin"),
    ("busctl", "systemd"),
    ("openssl", "openssl"),
];

/// The full path of an external tool a test needs. A tool that is missing
/// is installed from Debian's packages where that can be done (as root,
/// with apt-get), so a fresh machine needs nothing installed by hand;
/// otherwise the test fails loudly, naming the package (a test must never
/// pass by skipping).
pub fn require_tool(name: &str) -> PathBuf {
    find_or_install_tool(name).unwrap_or_else(|| {
        let package =
            TOOL_PACKAGES.iter().find(|(tool, _)| *tool == name).map_or("unknown", |(_, package)| *package);
        panic!("this test needs `{name}` on PATH; install it (Debian package: {package}); it is not optional")
    })
}

/// The tool's path, after installing its Debian package where it was
/// missing and that can be done; `None` when it is still missing.
pub fn find_or_install_tool(name: &str) -> Option<PathBuf> {
    if let Some(path) = find_on_path(name) {
        return Some(path);
    }
    let (_, package) = TOOL_PACKAGES.iter().find(|(tool, _)| *tool == name)?;
    install_package(name, package);
    find_on_path(name)
}

/// The first executable file called `name` in a directory of `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| {
        std::fs::metadata(candidate).is_ok_and(|meta| meta.is_file() && meta.mode() & 0o111 != 0)
    })
}

/// `apt-get install` of the package that holds `tool`, one test process at
/// a time (a lock file serializes the test binaries that run at once), and
/// one line on stderr saying so: installing software on the machine must
/// never happen unannounced. Best effort: the caller looks for the tool
/// again and fails loudly if it is still missing.
fn install_package(tool: &str, package: &str) {
    if !nix::unistd::geteuid().is_root() || find_on_path("apt-get").is_none() {
        return;
    }
    let Ok(lock) =
        File::options().create(true).truncate(false).write(true).open("/tmp/roster-tests-apt.lock")
    else {
        return;
    };
    if lock.lock().is_err() {
        return;
    }
    // Another test process may have installed it while this one waited.
    if find_on_path(tool).is_some() {
        return;
    }
    // Written to the descriptor itself: libtest captures `eprintln!` of a
    // passing test, and this line is for whoever runs the tests.
    let _ = writeln!(
        std::io::stderr(),
        "roster tests: installing the Debian package {package} with apt-get: a test needs `{tool}`, which is \
         missing here"
    );
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    };
    if !install() {
        let _ = Command::new("apt-get")
            .args(["update", "-qq"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        install();
    }
}
