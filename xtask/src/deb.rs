//! `cargo xtask deb`: a Debian package, `target/debian/roster_<version>_<arch>.deb`,
//! that puts roster where a distribution puts things: the five binaries in
//! `/usr/bin`, gzipped man pages in `/usr/share/man/man1` and `man7`, the
//! completions where bash-completion, zsh and fish look for a package's
//! own, and the DEP-5 copyright file and changelog in `/usr/share/doc/roster`.
//!
//! The package is assembled by hand and packed with `dpkg-deb` rather than
//! with cargo-deb: the layout is a dozen lines of the [`install`] table we
//! already have, the man pages and completions come from codegen and not
//! from files cargo-deb would have to be told about one by one, and
//! `dpkg-deb` and `dpkg-shlibdeps` ship with every Debian system while
//! cargo-deb is one more tool to install and keep in step.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap_complete::Shell;
use xshell::{Shell as CommandShell, cmd};

use crate::codegen::{self, BINARY_NAMES};
use crate::install::{self, FileContents, InstalledFile};
use ::tests::workspace::{Profile, build_binaries, target_directory, workspace_root};

/// The package's name, which is also the name of its documentation directory.
const PACKAGE_NAME: &str = "roster";

/// The Debian revision of the upstream version: the first packaging of it.
const DEBIAN_REVISION: &str = "1";

/// Who answers for the package, as the control file and changelog name them.
const MAINTAINER: &str = "roster maintainers <maintainers@roster.example.org>";

/// Builds the release binaries and the package, into `output_directory`
/// (default `target/debian`); prints where it is.
pub fn run(output_directory: Option<PathBuf>) -> anyhow::Result<()> {
    let binaries_directory = build_binaries(Profile::Release, &crate::codegen::BINARY_NAMES)?;
    let output_directory = match output_directory {
        Some(directory) => std::path::absolute(&directory)
            .with_context(|| format!("cannot make --out-dir {} absolute", directory.display()))?,
        None => target_directory()?.join("debian"),
    };
    let package = build_package(&binaries_directory, &output_directory)?;
    println!("wrote {}", package.display());
    Ok(())
}

/// Builds `roster_<version>_<arch>.deb` in `output_directory` from the
/// binaries in `binaries_directory`; returns its path. Two builds of one
/// commit from the same binaries are the same bytes: every file and the
/// archive itself are dated `SOURCE_DATE_EPOCH` (by default the commit's
/// time), modes and owners are fixed, and dpkg-deb sorts the entries.
fn build_package(binaries_directory: &Path, output_directory: &Path) -> anyhow::Result<PathBuf> {
    let source_date_epoch = source_date_epoch()?;
    let version = debian_version()?;
    let architecture = host_architecture()?;
    let package_stem = format!("{PACKAGE_NAME}_{version}_{architecture}");
    // Laid out as a source package's build tree (`debian/<package>/` is the
    // package's root), which is where dpkg-shlibdeps expects the binaries.
    let build_tree = output_directory.join(format!("{package_stem}.build"));
    if build_tree.exists() {
        fs::remove_dir_all(&build_tree)
            .with_context(|| format!("removing the old {}", build_tree.display()))?;
    }
    let staging = build_tree.join("debian").join(PACKAGE_NAME);
    fs::create_dir_all(&staging).with_context(|| format!("creating {}", staging.display()))?;

    install::write_installation_files(
        &staging,
        &package_files(binaries_directory, &version, source_date_epoch)?,
    )?;
    strip_binaries(&staging)?;
    // dpkg-shlibdeps recognises the package's root by its DEBIAN directory.
    let control_directory = staging.join("DEBIAN");
    fs::create_dir_all(&control_directory)
        .with_context(|| format!("creating {}", control_directory.display()))?;
    let depends = shared_library_dependencies(&build_tree)?;
    if let Some(overrides) = lintian_overrides(depends.as_deref()) {
        let overrides_directory = staging.join("usr/share/lintian/overrides");
        fs::create_dir_all(&overrides_directory)
            .with_context(|| format!("creating {}", overrides_directory.display()))?;
        write_file(&overrides_directory.join(PACKAGE_NAME), overrides.as_bytes())?;
    }
    let control = control_file(&version, &architecture, depends.as_deref(), installed_size_kib(&staging)?);
    write_file(&control_directory.join("control"), control.as_bytes())?;
    write_file(&control_directory.join("md5sums"), md5sums(&staging)?.as_bytes())?;
    normalise_tree(&staging, source_date_epoch)?;

    let package = output_directory.join(format!("{package_stem}.deb"));
    let shell = CommandShell::new()?;
    // dpkg-deb dates the ar members with it and clamps the tar entries' times to it.
    shell.set_var("SOURCE_DATE_EPOCH", source_date_epoch.to_string());
    cmd!(shell, "dpkg-deb --root-owner-group -Zxz --build {staging} {package}")
        .quiet()
        .ignore_stdout()
        .run()?;
    Ok(package)
}

/// The time the package's files are dated: `SOURCE_DATE_EPOCH` when set
/// (reproducible-builds.org), else the time of the commit built, so that
/// two builds of one commit are the same package.
fn source_date_epoch() -> anyhow::Result<u64> {
    if let Some(value) = std::env::var_os("SOURCE_DATE_EPOCH").filter(|value| !value.is_empty()) {
        let text = value.to_string_lossy();
        return text.parse().with_context(|| {
            format!("SOURCE_DATE_EPOCH is {text:?}, not a number of seconds; unset it to date the package by its commit")
        });
    }
    let shell = CommandShell::new()?;
    shell.change_dir(workspace_root());
    let committed = cmd!(shell, "git log -1 --format=%ct").quiet().read().context(
        "reading the time of the last commit to date the package; without git, set SOURCE_DATE_EPOCH",
    )?;
    committed.trim().parse().with_context(|| format!("git log gave {committed:?} as the commit's time"))
}

/// The package's version: the workspace's, with the Debian revision.
fn debian_version() -> anyhow::Result<String> {
    Ok(format!("{}-{DEBIAN_REVISION}", crate::dist::release_version()?))
}

/// The Debian architecture of this machine, which the binaries are built for.
fn host_architecture() -> anyhow::Result<String> {
    let shell = CommandShell::new()?;
    Ok(cmd!(shell, "dpkg --print-architecture").quiet().read()?.trim().to_owned())
}

/// Every file of the package below its root, the same files
/// [`install::installation_files`] puts under a prefix, where Debian wants
/// them, plus the copyright file, the changelog and roster-notify's
/// systemd user unit.
fn package_files(
    binaries_directory: &Path,
    version: &str,
    source_date_epoch: u64,
) -> anyhow::Result<Vec<InstalledFile>> {
    let mut files = Vec::new();
    for binary in BINARY_NAMES {
        files.push(InstalledFile {
            destination: Path::new("usr/bin").join(binary),
            contents: FileContents::Executable(binaries_directory.join(binary)),
        });
    }
    for (generated_path, page) in codegen::generate_man_pages()? {
        let file_name =
            generated_path.file_name().and_then(|name| name.to_str()).context("a man page name")?;
        let section = generated_path.extension().and_then(|section| section.to_str()).context("a section")?;
        files.push(InstalledFile {
            destination: Path::new("usr/share/man")
                .join(format!("man{section}"))
                .join(format!("{file_name}.gz")),
            contents: FileContents::Generated(gzip(&page)?),
        });
    }
    for script in codegen::generate_completion_scripts() {
        let destination = match script.shell {
            Shell::Bash => Path::new("usr/share/bash-completion/completions").join(script.binary),
            Shell::Zsh => Path::new("usr/share/zsh/vendor-completions").join(&script.file_name),
            Shell::Fish => Path::new("usr/share/fish/vendor_completions.d").join(&script.file_name),
            // Elvish and PowerShell search no directory a package could fill.
            _ => continue,
        };
        files.push(InstalledFile { destination, contents: FileContents::Generated(script.script) });
    }
    let documentation = Path::new("usr/share/doc").join(PACKAGE_NAME);
    files.push(InstalledFile {
        destination: documentation.join("copyright"),
        contents: FileContents::Generated(copyright_file()?.into_bytes()),
    });
    files.push(InstalledFile {
        destination: documentation.join("changelog.Debian.gz"),
        contents: FileContents::Generated(gzip(changelog(version, source_date_epoch)?.as_bytes())?),
    });
    files.push(InstalledFile {
        destination: Path::new("usr/lib/systemd/user").join(crate::systemd_unit::UNIT_NAME),
        contents: FileContents::Generated(
            crate::systemd_unit::user_unit("/usr/bin/roster-notify").into_bytes(),
        ),
    });
    Ok(files)
}

/// The copyright file in the machine-readable format (DEP-5). DEP-5 calls
/// the MIT licence roster uses "Expat" (the MIT name covers several
/// licences); Apache-2.0 is referred to in common-licenses, as policy asks.
fn copyright_file() -> anyhow::Result<String> {
    let root = workspace_root();
    let mit = fs::read_to_string(root.join("LICENSE-MIT")).context("reading LICENSE-MIT")?;
    let copyright = mit
        .lines()
        .find_map(|line| line.strip_prefix("Copyright (c) "))
        .context("LICENSE-MIT has no `Copyright (c) ` line")?;
    // The licence text starts after the copyright line; DEP-5 writes a blank line as " .".
    let text: String = mit
        .lines()
        .skip_while(|line| !line.starts_with("Permission is hereby granted"))
        .map(|line| if line.trim().is_empty() { " .\n".to_owned() } else { format!(" {line}\n") })
        .collect();
    let years = copyright_years()?;
    Ok(format!(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
         Upstream-Name: roster\n\
         \n\
         Files: *\n\
         Copyright: {years} {copyright}\n\
         License: Expat or Apache-2.0\n\
         \n\
         License: Expat\n{text}\
         \n\
         License: Apache-2.0\n \
         Licensed under the Apache License, Version 2.0 (the \"License\"); you may not\n \
         use this software except in compliance with the License.\n \
         .\n \
         On Debian systems, the complete text of the Apache License, Version 2.0\n \
         can be found in \"/usr/share/common-licenses/Apache-2.0\".\n"
    ))
}

/// The years of the first and the last commit (`2025-2026`, or one year),
/// which Debian wants in a copyright notice and LICENSE-MIT does not name.
fn copyright_years() -> anyhow::Result<String> {
    let shell = CommandShell::new()?;
    shell.change_dir(workspace_root());
    shell.set_var("TZ", "UTC");
    let years = cmd!(shell, "git log --format=%cd --date=format-local:%Y")
        .quiet()
        .read()
        .context("reading the years of the commits for the copyright file")?;
    let first = years.lines().last().context("the repository has no commits")?;
    let last = years.lines().next().context("the repository has no commits")?;
    Ok(if first == last { first.to_owned() } else { format!("{first}-{last}") })
}

/// The Debian changelog: one entry for this version, dated as the files
/// are (`source_date_epoch`), so that two builds of one commit are the
/// same package.
fn changelog(version: &str, source_date_epoch: u64) -> anyhow::Result<String> {
    let shell = CommandShell::new()?;
    shell.set_var("TZ", "UTC");
    shell.set_var("LC_ALL", "C");
    let at = format!("@{source_date_epoch}");
    let format = "+%a, %d %b %Y %H:%M:%S +0000";
    let date =
        cmd!(shell, "date --date {at} {format}").quiet().read().context("formatting the changelog's date")?;
    let upstream = version.trim_end_matches(&format!("-{DEBIAN_REVISION}"));
    let entry = format!(
        "roster {upstream}: {}, with their man pages and bash, zsh and fish completions.",
        codegen::binary_names_in_prose()
    );
    Ok(format!(
        "{PACKAGE_NAME} ({version}) unstable; urgency=medium\n\n{}\n\n -- {MAINTAINER}  {date}\n",
        changelog_item(&entry)
    ))
}

/// `text` as one changelog item: `  * ` and then lines of at most 76
/// characters, continued four spaces in, as dch writes them.
fn changelog_item(text: &str) -> String {
    let mut lines: Vec<String> = vec!["  *".to_owned()];
    for word in text.split_whitespace() {
        let last = lines.last_mut().expect("one line at least");
        if last.len() + 1 + word.len() > 76 && last.trim() != "*" {
            lines.push(format!("    {word}"));
        } else {
            last.push(' ');
            last.push_str(word);
        }
    }
    lines.join("\n")
}

/// The control file. `depends` is what dpkg-shlibdeps found the binaries need.
/// Binaries linked statically need no shared library, and have no `Depends:`.
fn control_file(version: &str, architecture: &str, depends: Option<&str>, installed_size_kib: u64) -> String {
    let depends = depends.map(|depends| format!("Depends: {depends}\n")).unwrap_or_default();
    let harnesses = harness::display_names_in_prose(&harness::Harness::ALL);
    let description = [
        format!(
            "roster keeps a host-local, per-user registry of the agent sessions ({harnesses}) running \
             on this machine, and answers without a server which sessions run right now, as which \
             harness and agent, in which directory, and whether each one agreed to be messaged. Every \
             answer carries a liveness verdict that a reused pid, a reboot or a stale file cannot fool."
        ),
        format!(
            "The package holds {}, their man pages and completions for bash, zsh and fish.",
            codegen::binary_names_in_prose()
        ),
    ]
    .map(|paragraph| extended_description_lines(&paragraph))
    .join(" .\n");
    format!(
        "Package: {PACKAGE_NAME}\n\
         Version: {version}\n\
         Architecture: {architecture}\n\
         Maintainer: {MAINTAINER}\n\
         Installed-Size: {installed_size_kib}\n\
         {depends}\
         Section: utils\n\
         Priority: optional\n\
         Description: registry of the AI coding-agent sessions running on this host\n\
         {description}"
    )
}

/// A paragraph of a control file's extended description: words wrapped
/// under 80 columns, each line starting with the space that marks it as
/// a continuation.
fn extended_description_lines(paragraph: &str) -> String {
    let mut lines = String::new();
    let mut line = String::new();
    for word in paragraph.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > 74 {
            lines.push_str(&format!(" {line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push_str(&format!(" {line}\n"));
    }
    lines
}

/// Removes the symbols and debug information from the packaged binaries,
/// as Debian ships them (the build keeps line tables for backtraces).
fn strip_binaries(staging: &Path) -> anyhow::Result<()> {
    let shell = CommandShell::new()?;
    for binary in BINARY_NAMES {
        let path = staging.join("usr/bin").join(binary);
        cmd!(shell, "strip --strip-unneeded --remove-section=.comment --remove-section=.note {path}")
            .quiet()
            .run()
            .with_context(|| format!("stripping {}", path.display()))?;
    }
    Ok(())
}

/// The `Depends:` value for the packaged binaries' shared libraries, as
/// dpkg-shlibdeps computes it in the build tree (it wants a `debian/control`);
/// `None` when readelf finds that no binary needs a shared library (they
/// were linked statically).
fn shared_library_dependencies(build_tree: &Path) -> anyhow::Result<Option<String>> {
    let binaries: Vec<PathBuf> = BINARY_NAMES
        .iter()
        .map(|binary| Path::new("debian").join(PACKAGE_NAME).join("usr/bin").join(binary))
        .collect();
    let shell = CommandShell::new()?;
    shell.change_dir(build_tree);
    let mut any_needs_a_library = false;
    for binary in &binaries {
        let dynamic_section = cmd!(shell, "readelf --dynamic {binary}").quiet().read()?;
        any_needs_a_library |= dynamic_section.contains("(NEEDED)");
    }
    if !any_needs_a_library {
        return Ok(None);
    }
    write_file(
        &build_tree.join("debian/control"),
        format!("Source: {PACKAGE_NAME}\n\nPackage: {PACKAGE_NAME}\nArchitecture: any\n").as_bytes(),
    )?;
    let output = cmd!(shell, "dpkg-shlibdeps -O {binaries...}").quiet().read()?;
    match output.lines().find_map(|line| line.strip_prefix("shlibs:Depends=")) {
        Some(depends) if !depends.trim().is_empty() => Ok(Some(depends.trim().to_owned())),
        _ => bail!("dpkg-shlibdeps found no shared library dependencies: {output}"),
    }
}

/// The lintian overrides for binaries linked statically, on purpose: a
/// session-start hook runs under the harness's time budget, and the
/// dynamic loader alone costs more than `/bin/true` takes in all. Lintian
/// takes a static position-independent executable for a shared library
/// without prerequisites. `None` for binaries linked dynamically.
fn lintian_overrides(depends: Option<&str>) -> Option<String> {
    if depends.is_some() {
        return None;
    }
    let mut overrides = String::from(
        "# Linked statically on purpose: a session-start hook runs under the\n\
         # harness's time budget, and the dynamic loader alone costs more than\n\
         # /bin/true takes in all.\n",
    );
    for binary in BINARY_NAMES {
        overrides
            .push_str(&format!("{PACKAGE_NAME}: shared-library-lacks-prerequisites [usr/bin/{binary}]\n"));
    }
    Some(overrides)
}

/// The `Installed-Size:` value: the files' sizes in KiB, rounded up.
fn installed_size_kib(staging: &Path) -> anyhow::Result<u64> {
    let mut bytes = 0;
    for path in files_below(staging)? {
        bytes += fs::symlink_metadata(&path).with_context(|| format!("reading {}", path.display()))?.len();
    }
    Ok(bytes.div_ceil(1024))
}

/// `DEBIAN/md5sums`: one `md5  path` line per file, paths relative to the root.
fn md5sums(staging: &Path) -> anyhow::Result<String> {
    let relative: Vec<PathBuf> = files_below(staging)?
        .into_iter()
        .map(|path| path.strip_prefix(staging).map(Path::to_path_buf))
        .collect::<Result<_, _>>()?;
    let shell = CommandShell::new()?;
    shell.change_dir(staging);
    Ok(cmd!(shell, "md5sum -- {relative...}").quiet().read()? + "\n")
}

/// Every regular file below `root` but `DEBIAN/`, sorted.
fn files_below(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let (_, files) = tree_below(root)?;
    Ok(files.into_iter().filter(|path| !path.starts_with(root.join("DEBIAN"))).collect())
}

/// Every entry below `root` as a reproducible package wants it, whatever
/// the umask and the clock were: directories 0755 (as dpkg-deb and lintian
/// expect), the control files 0644 (the others were written with their
/// modes), and everything dated `source_date_epoch`.
fn normalise_tree(root: &Path, source_date_epoch: u64) -> anyhow::Result<()> {
    let date = std::time::UNIX_EPOCH + std::time::Duration::from_secs(source_date_epoch);
    let (directories, files) = tree_below(root)?;
    for directory in &directories {
        fs::set_permissions(directory, fs::Permissions::from_mode(0o755))
            .with_context(|| format!("setting the mode of {}", directory.display()))?;
    }
    for file in files.iter().filter(|file| file.starts_with(root.join("DEBIAN"))) {
        fs::set_permissions(file, fs::Permissions::from_mode(0o644))
            .with_context(|| format!("setting the mode of {}", file.display()))?;
    }
    for path in files.iter().chain(&directories) {
        fs::File::open(path)
            .and_then(|opened| opened.set_modified(date))
            .with_context(|| format!("dating {}", path.display()))?;
    }
    Ok(())
}

/// The directories (`root` first) and the other files below `root`, sorted.
fn tree_below(root: &Path) -> anyhow::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let (mut directories, mut files) = (vec![root.to_path_buf()], Vec::new());
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in fs::read_dir(&directory).with_context(|| format!("listing {}", directory.display()))? {
            let path = entry.with_context(|| format!("listing {}", directory.display()))?.path();
            if path.is_dir() {
                pending.push(path.clone());
                directories.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok((directories, files))
}

/// `bytes` compressed by `gzip -9n` (no name or time stamp inside, so the
/// same page always packs to the same bytes).
fn gzip(bytes: &[u8]) -> anyhow::Result<Vec<u8>> {
    let shell = CommandShell::new()?;
    let output = cmd!(shell, "gzip -9n").quiet().stdin(bytes).output().context("running gzip")?;
    Ok(output.stdout)
}

fn write_file(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: the description listed the harnesses by hand and left
    /// out Aider and Amp. Each continuation line starts with a space and
    /// fits a terminal, and a lone ` .` separates the paragraphs.
    #[test]
    fn the_description_names_every_harness_in_wrapped_continuation_lines() {
        let control = control_file("0.1.0-1", "amd64", None, 1);
        let description = control.split_once("Description: ").expect("a Description field").1;
        let mut lines = description.lines();
        assert!(lines.next().is_some_and(|synopsis| synopsis.len() <= 80), "{description}");
        for line in lines {
            assert!(line.starts_with(' ') && line.len() <= 80, "{line:?} in\n{description}");
        }
        assert!(description.contains("\n .\n"), "{description}");
        let flattened = description.split_whitespace().collect::<Vec<_>>().join(" ");
        for harness in harness::Harness::ALL {
            assert!(flattened.contains(harness.display_name()), "{} missing from\n{description}", harness);
        }
        for binary in codegen::BINARY_NAMES {
            assert!(flattened.contains(binary), "{binary} missing from\n{description}");
        }
    }

    /// The changelog's one item names every binary of the one list, in
    /// lines of dch's shape: `  * ` first, four spaces in after.
    #[test]
    fn the_changelog_item_names_every_binary_in_wrapped_lines() {
        let item = changelog_item(&format!(
            "roster 0.1.0: {}, with their man pages.",
            codegen::binary_names_in_prose()
        ));
        let mut lines = item.lines();
        assert!(lines.next().is_some_and(|first| first.starts_with("  * ")), "{item}");
        for line in lines {
            assert!(line.starts_with("    ") && !line.starts_with("     "), "{line:?} in\n{item}");
        }
        assert!(item.lines().all(|line| line.len() <= 76), "{item}");
        let flattened = item.split_whitespace().collect::<Vec<_>>().join(" ");
        for binary in codegen::BINARY_NAMES {
            assert!(flattened.contains(binary), "{binary} missing from\n{item}");
        }
    }
}
