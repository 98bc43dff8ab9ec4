//! Installs into a temporary prefix and checks the result the way a user
//! would: the binaries run, and `man` finds the pages through MANPATH.
//! The binaries come from a debug build next to this test's executable
//! (cargo reuses the libraries it just built for the test, so this is
//! quick) rather than from the release build `cargo xtask install` makes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use ::tests::workspace::cargo_program;

use super::install_into;
use crate::codegen::temporary_directory::TemporaryDirectory;
use crate::codegen::tests::require_program;
use crate::codegen::{BINARY_NAMES, repository_root};

#[test]
fn install_puts_every_file_where_its_tool_looks_and_the_binaries_run() {
    let binaries_directory = build_binaries_next_to_test_executable();
    let prefix = TemporaryDirectory::new("install-prefix");
    let installed = install_into(prefix.path(), &binaries_directory).expect("install succeeds");

    let expected_files = [
        ("bin/roster-list", 0o755),
        ("share/man/man1/roster-list.1", 0o644),
        ("share/man/man7/roster.7", 0o644),
        ("share/bash-completion/completions/roster-list", 0o644),
        ("share/zsh/site-functions/_roster-list", 0o644),
        ("share/fish/vendor_completions.d/roster-list.fish", 0o644),
        ("share/roster/completions/roster-list.elv", 0o644),
        ("share/roster/completions/_roster-list.ps1", 0o644),
    ];
    for (relative_path, mode) in expected_files {
        let path = prefix.path().join(relative_path);
        assert!(installed.contains(&path), "install did not report {relative_path}");
        let metadata = std::fs::metadata(&path).unwrap_or_else(|error| panic!("{relative_path}: {error}"));
        assert_eq!(metadata.permissions().mode() & 0o777, mode, "mode of {relative_path}");
    }
    // 5 binaries, 6 pages, 5 completion scripts per binary.
    assert_eq!(installed.len(), 5 + 6 + 25, "installed files: {installed:#?}");

    for binary in BINARY_NAMES {
        let output = Command::new(prefix.path().join("bin").join(binary))
            .arg("--version")
            .output()
            .unwrap_or_else(|error| panic!("cannot run the installed {binary}: {error}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.starts_with(binary),
            "installed {binary} --version: {}\nstdout: {stdout}\nstderr: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }

    require_program("man", "man (Debian and Ubuntu package: man-db)");
    let man_directory = prefix.path().join("share/man");
    for (section, page) in [("1", "roster-list"), ("7", "roster")] {
        let output = Command::new("man")
            .args(["-w", section, page])
            .env("MANPATH", &man_directory)
            .output()
            .unwrap_or_else(|error| panic!("cannot run man: {error}"));
        let found = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let expected = man_directory.join(format!("man{section}/{page}.{section}"));
        assert_eq!(
            Path::new(&found),
            expected,
            "MANPATH={} man -w {section} {page} ({}): {}",
            man_directory.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Builds the five binaries with the profile and target directory this test
/// executable was built with, and returns the directory holding them.
fn build_binaries_next_to_test_executable() -> PathBuf {
    let test_executable = std::env::current_exe().expect("the test knows its executable");
    // The test executable is <target directory>/<profile directory>/deps/xtask-<hash>.
    let profile_directory = test_executable
        .parent()
        .and_then(Path::parent)
        .expect("the test executable lies two levels below the target directory")
        .to_path_buf();
    let target_directory = profile_directory.parent().expect("the profile directory has a parent");
    let profile = match profile_directory.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => panic!("{} has no name", profile_directory.display()),
    };
    let mut build = Command::new(cargo_program());
    build
        .current_dir(repository_root())
        .args(["build", "--quiet", "--profile", profile, "--target-dir"])
        .arg(target_directory);
    for binary in BINARY_NAMES {
        build.args(["--bin", binary]);
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "cargo build of the binaries failed: {status}");
    profile_directory
}
