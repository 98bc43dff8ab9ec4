//! The Debian package `cargo xtask deb` builds (run for real, from
//! release binaries), installed for real twice: with `dpkg --root` into an
//! empty root (nothing but the package there, and nothing left after a
//! purge), and with `dpkg -i` and `apt-get remove` into this
//! machine's own system seen through overlay mounts in a private mount
//! namespace, where the real `man`, bash, zsh and fish find what the
//! package installed. The overlays take every write, so the machine itself
//! is never changed; the test checks that they are overlays before dpkg runs.
//! A second build of the same commit is the same bytes.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use tests::require_tool;
use tests::shell_completion::{CompletionDirectories, TestedShell, complete_through};
use tests::workspace::{ROSTER_BINARIES, workspace_root, xtask};

/// The package's name, which is also the name of its documentation directory.
const PACKAGE_NAME: &str = "roster";

/// The subcommands every shell must offer for `roster-consent <TAB>`.
const CONSENT_SUBCOMMANDS: [&str; 4] = ["arm", "disarm", "status", "should-arm"];

/// The package, built once for all tests here by `cargo xtask deb`, which
/// says where it wrote it.
fn package() -> &'static Path {
    static PACKAGE: OnceLock<PathBuf> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        require_tool("dpkg-deb");
        require_tool("dpkg-shlibdeps");
        written_package(&run_checked(&mut xtask(["deb"])))
    })
}

/// The package's version: the binaries' with the first Debian revision.
fn debian_version() -> String {
    format!("{}-1", roster_list::command().get_version().expect("roster-list has a version"))
}

/// The Debian architecture of this machine, which the binaries are built for.
fn host_architecture() -> String {
    let output = run_checked(Command::new("dpkg").arg("--print-architecture"));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

#[test]
fn package_holds_every_file_where_debian_wants_it() {
    let package = package();
    let expected_name = format!("{PACKAGE_NAME}_{}_{}.deb", debian_version(), host_architecture());
    assert_eq!(package.file_name().unwrap(), OsStr::new(&expected_name));

    let listing = run_checked(Command::new("dpkg-deb").arg("--contents").arg(package));
    let mut files = BTreeSet::new();
    for line in String::from_utf8(listing.stdout).unwrap().lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (mode, owner, path) = (fields[0], fields[1], *fields.last().unwrap());
        assert_eq!(owner, "root/root", "{line}");
        if mode.starts_with('-') {
            let executable = path.starts_with("./usr/bin/");
            assert_eq!(mode, if executable { "-rwxr-xr-x" } else { "-rw-r--r--" }, "{line}");
            files.insert(path.trim_start_matches("./").to_owned());
        } else {
            assert_eq!(mode, "drwxr-xr-x", "{line}");
        }
    }
    let mut expected = BTreeSet::new();
    for binary in ROSTER_BINARIES {
        expected.insert(format!("usr/bin/{binary}"));
        expected.insert(format!("usr/share/man/man1/{binary}.1.gz"));
        expected.insert(format!("usr/share/bash-completion/completions/{binary}"));
        expected.insert(format!("usr/share/zsh/vendor-completions/_{binary}"));
        expected.insert(format!("usr/share/fish/vendor_completions.d/{binary}.fish"));
    }
    expected.insert("usr/share/man/man7/roster.7.gz".to_owned());
    expected.insert("usr/share/doc/roster/copyright".to_owned());
    expected.insert("usr/share/doc/roster/changelog.Debian.gz".to_owned());
    expected.insert("usr/lib/systemd/user/roster-notify.service".to_owned());
    // The release binaries are linked statically (the hook's start-up), which
    // lintian is told is on purpose.
    expected.insert("usr/share/lintian/overrides/roster".to_owned());
    assert_eq!(files, expected);

    let fields = run_checked(Command::new("dpkg-deb").arg("--field").arg(package));
    let fields = String::from_utf8(fields.stdout).unwrap();
    for wanted in ["Package: roster\n", "Version: 0.1.0-1\n"] {
        assert!(fields.contains(wanted), "the control file lacks {wanted:?}:\n{fields}");
    }
    assert!(!fields.contains("Depends:"), "static binaries need no shared library:\n{fields}");
    // Regression: the description listed the harnesses by hand, without Aider and Amp.
    let description = fields.split_whitespace().collect::<Vec<_>>().join(" ");
    let harnesses = harness::display_names_in_prose(&harness::Harness::ALL);
    assert!(description.contains(&harnesses), "the description does not name `{harnesses}`:\n{fields}");
    let unpacked = tempfile::tempdir().unwrap();
    run_checked(Command::new("dpkg-deb").arg("--extract").arg(package).arg(unpacked.path()));
    for binary in ROSTER_BINARIES {
        let path = unpacked.path().join("usr/bin").join(binary);
        let dynamic_section = run_checked(Command::new("readelf").arg("--dynamic").arg(&path));
        let dynamic_section = String::from_utf8_lossy(&dynamic_section.stdout);
        assert!(!dynamic_section.contains("(NEEDED)"), "{binary} needs a shared library:\n{dynamic_section}");
    }
}

/// What `cargo xtask deb` prints it wrote.
fn written_package(output: &Output) -> PathBuf {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let written = stdout.lines().find_map(|line| line.strip_prefix("wrote "));
    PathBuf::from(written.unwrap_or_else(|| panic!("cargo xtask deb names no package:\n{stdout}")))
}

/// The time the package's entries must be dated: `SOURCE_DATE_EPOCH` when
/// the build had it, else the commit's time, as `YYYY-MM-DD HH:MM:SS` UTC.
fn expected_entry_date() -> String {
    let epoch = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(epoch) if !epoch.is_empty() => epoch,
        _ => {
            let mut git = Command::new("git");
            git.args(["log", "-1", "--format=%ct"]).current_dir(workspace_root());
            String::from_utf8(run_checked(&mut git).stdout).unwrap().trim().to_owned()
        }
    };
    let mut date = Command::new("date");
    date.arg("--utc").arg(format!("--date=@{epoch}")).arg("+%Y-%m-%d %H:%M:%S");
    String::from_utf8(run_checked(&mut date).stdout).unwrap().trim().to_owned()
}

/// Regression: two builds of one commit made two different packages (each
/// file dated when it was written, the archive when it was packed). A
/// second build, seconds or minutes after the first, is the same bytes, and
/// every entry is dated by the commit.
#[test]
fn two_builds_of_one_commit_are_the_same_bytes() {
    let first = std::fs::read(package()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let output =
        run_checked(&mut xtask(["deb".as_ref(), "--out-dir".as_ref(), elsewhere.path().as_os_str()]));
    let second_package = written_package(&output);
    assert!(
        second_package.starts_with(elsewhere.path()),
        "--out-dir was not used: {}",
        second_package.display()
    );
    let second = std::fs::read(&second_package).unwrap();
    assert!(first == second, "{} and {} differ", package().display(), second_package.display());

    let mut listing = Command::new("sh");
    listing
        .args(["-c", "dpkg-deb --fsys-tarfile \"$1\" | tar --list --verbose --full-time --file -", "sh"])
        .arg(&second_package)
        .env("TZ", "UTC");
    let listing = String::from_utf8(run_checked(&mut listing).stdout).unwrap();
    let expected = expected_entry_date();
    for line in listing.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[3..5].join(" "), expected, "{line}");
    }
}

#[test]
fn package_installs_into_a_clean_root_and_purges_without_a_trace() {
    require_tool("man");
    let package = package();
    let root = tempfile::tempdir().unwrap();
    let admin = root.path().join("var/lib/dpkg");
    for directory in ["info", "updates", "triggers"] {
        std::fs::create_dir_all(admin.join(directory)).unwrap();
    }
    std::fs::write(admin.join("status"), "").unwrap();
    let dpkg = || {
        let mut dpkg = Command::new("dpkg");
        dpkg.arg("--root").arg(root.path()).arg("--log=/dev/null");
        dpkg
    };
    // The empty root has no libc6 in its database; the package's dependencies
    // are checked for real by the system installation test below.
    run_checked(dpkg().args(["--force-depends", "--install"]).arg(package));

    for binary in ROSTER_BINARIES {
        let output = run_checked(Command::new(root.path().join("usr/bin").join(binary)).arg("--version"));
        assert!(String::from_utf8_lossy(&output.stdout).starts_with(binary));
    }
    let man_directory = root.path().join("usr/share/man");
    for (section, page) in [("1", "roster-list"), ("7", "roster")] {
        let output =
            run_checked(Command::new("man").args(["-w", section, page]).env("MANPATH", &man_directory));
        assert_eq!(
            Path::new(String::from_utf8_lossy(&output.stdout).trim()),
            man_directory.join(format!("man{section}/{page}.{section}.gz"))
        );
    }
    let share = root.path().join("usr/share");
    check_consent_subcommands_complete(&[], &completion_directories(&share, &root.path().join("usr/bin")));

    run_checked(dpkg().args(["--purge", PACKAGE_NAME]));
    let left: Vec<PathBuf> = walk(root.path())
        .into_iter()
        .filter(|path| {
            !path.starts_with(&admin)
                && path != &root.path().join("var/lib")
                && path != &root.path().join("var")
        })
        .collect();
    assert!(left.is_empty(), "the purge left {left:#?}");
    let dpkg_record: Vec<PathBuf> = walk(&admin.join("info"))
        .into_iter()
        .filter(|path| path.to_string_lossy().contains("roster"))
        .collect();
    assert!(dpkg_record.is_empty(), "dpkg's record of the package stayed: {dpkg_record:#?}");
}

#[test]
fn package_installs_on_the_system_and_apt_get_removes_it_without_a_trace() {
    for program in ["unshare", "nsenter", "apt-get"] {
        require_tool(program);
    }
    require_tool("man");
    let package = package();
    let system = OverlaidSystem::start();
    let in_system = |program: &str, arguments: &[&OsStr]| -> Output {
        let mut command = Command::new("nsenter");
        command.args(system.nsenter_prefix()).arg(program).args(arguments);
        command.env("DEBIAN_FRONTEND", "noninteractive").stdin(Stdio::null());
        command.output().expect("nsenter runs")
    };

    let installed = in_system("dpkg", &[OsStr::new("--install"), package.as_os_str()]);
    assert_success("dpkg --install", &installed);
    let man = in_system("man", &[OsStr::new("-w"), OsStr::new("roster-list")]);
    assert_success("man -w roster-list", &man);
    assert_eq!(String::from_utf8_lossy(&man.stdout).trim(), "/usr/share/man/man1/roster-list.1.gz");
    let version = in_system("roster-consent", &[OsStr::new("--version")]);
    assert_success("roster-consent --version", &version);
    let prefix = system.nsenter_prefix();
    let wrapper: Vec<&OsStr> =
        [OsStr::new("nsenter")].into_iter().chain(prefix.iter().map(OsStr::new)).collect();
    check_consent_subcommands_complete(
        &wrapper,
        &completion_directories(Path::new("/usr/share"), Path::new("/usr/bin")),
    );

    let removed =
        in_system("apt-get", &[OsStr::new("remove"), OsStr::new("--yes"), OsStr::new(PACKAGE_NAME)]);
    assert_success("apt-get remove", &removed);
    for binary in ROSTER_BINARIES {
        let path = format!("/usr/bin/{binary}");
        let test = in_system("test", &[OsStr::new("-e"), OsStr::new(&path)]);
        assert!(!test.status.success(), "{path} is still there after apt-get remove");
    }
    // The package has no configuration files, so removing it leaves nothing to purge: dpkg forgets it.
    let query = in_system("dpkg-query", &[OsStr::new("--status"), OsStr::new(PACKAGE_NAME)]);
    assert!(
        !query.status.success(),
        "dpkg still knows the package: {}",
        String::from_utf8_lossy(&query.stdout)
    );

    // Everything the round trip changed sits in the overlays' upper layers:
    // nothing there may be roster's.
    let traces: Vec<PathBuf> = walk(system.layers.path())
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|name| name.to_string_lossy().contains("roster")))
        .collect();
    assert!(traces.is_empty(), "install and purge left {traces:#?}");
}

/// This machine's `/usr`, `/etc` and `/var` under overlay mounts in a
/// private mount namespace, held open by a sleeping process; commands run
/// there through `nsenter`. Dropping it ends the namespace and its mounts.
struct OverlaidSystem {
    holder: Child,
    holder_pid: String,
    layers: tempfile::TempDir,
}

impl OverlaidSystem {
    const OVERLAID: [&str; 3] = ["usr", "etc", "var"];

    fn start() -> OverlaidSystem {
        let layers = tempfile::tempdir().unwrap();
        let script = r#"
            set -e
            for directory in usr etc var; do
                mkdir -p "$1/$directory/upper" "$1/$directory/work"
                mount -t overlay overlay \
                    -o "lowerdir=/$directory,upperdir=$1/$directory/upper,workdir=$1/$directory/work" "/$directory"
            done
            echo ready
            exec sleep 3600
        "#;
        let mut holder = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--", "sh", "-c", script, "sh"])
            .arg(layers.path())
            .stdout(Stdio::piped())
            .spawn()
            .expect("unshare runs");
        let mut first_line = String::new();
        BufReader::new(holder.stdout.take().unwrap()).read_line(&mut first_line).unwrap();
        if first_line.trim() != "ready" {
            let status = holder.wait().unwrap();
            panic!("the overlays could not be mounted ({status}); the test needs root and overlayfs");
        }
        let system = OverlaidSystem { holder_pid: holder.id().to_string(), holder, layers };
        // dpkg must never reach the real system: every directory it writes is checked to be an overlay.
        for directory in Self::OVERLAID {
            let output = Command::new("nsenter")
                .args(system.nsenter_prefix())
                .args(["stat", "--file-system", "--format=%T"])
                .arg(format!("/{directory}"))
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&output.stdout).trim(),
                "overlayfs",
                "/{directory} is not overlaid"
            );
        }
        system
    }

    fn nsenter_prefix(&self) -> [&str; 4] {
        ["--target", &self.holder_pid, "--mount", "--"]
    }
}

impl Drop for OverlaidSystem {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// The completion directories below a `share` directory, where the package
/// puts them, and the directory of the installed binaries.
fn completion_directories(share: &Path, commands: &Path) -> CompletionDirectories {
    CompletionDirectories {
        commands: commands.to_path_buf(),
        bash: share.join("bash-completion/completions"),
        zsh: share.join("zsh/vendor-completions"),
        fish: share.join("fish/vendor_completions.d"),
    }
}

fn check_consent_subcommands_complete(wrapper: &[&OsStr], directories: &CompletionDirectories) {
    for shell in TestedShell::ALL {
        let offered = complete_through(wrapper, shell, directories, "roster-consent ");
        for subcommand in CONSENT_SUBCOMMANDS {
            assert!(
                offered.iter().any(|candidate| candidate == subcommand),
                "{shell:?} does not offer {subcommand} for `roster-consent <TAB>`: {offered:?}"
            );
        }
    }
}

/// Every path below `root` (not `root` itself), sorted.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                pending.push(path.clone());
            }
            paths.push(path);
        }
    }
    paths.sort();
    paths
}

fn run_checked(command: &mut Command) -> Output {
    let output = command.output().unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    assert_success(&format!("{command:?}"), &output);
    output
}

fn assert_success(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The man pages in the package are the generated ones, gzipped (those
/// committed in man/, which `generated_files.rs` pins to what codegen
/// generates).
#[test]
fn packaged_man_pages_are_the_generated_ones() {
    let package = package();
    let unpacked = tempfile::tempdir().unwrap();
    run_checked(Command::new("dpkg-deb").arg("--extract").arg(package).arg(unpacked.path()));
    let mut pages: Vec<PathBuf> =
        std::fs::read_dir(workspace_root().join("man")).unwrap().map(|entry| entry.unwrap().path()).collect();
    pages.sort();
    assert_eq!(pages.len(), ROSTER_BINARIES.len() + 1, "a page per binary and roster.7: {pages:?}");
    for generated_path in pages {
        let page = std::fs::read(&generated_path).unwrap();
        let section = generated_path.extension().unwrap().to_string_lossy().into_owned();
        let name = generated_path.file_name().unwrap().to_string_lossy().into_owned();
        let packed = unpacked.path().join(format!("usr/share/man/man{section}/{name}.gz"));
        let output = run_checked(Command::new("gzip").arg("--decompress").arg("--stdout").arg(&packed));
        assert!(output.stdout == page, "{} differs from the generated page", packed.display());
    }
}
