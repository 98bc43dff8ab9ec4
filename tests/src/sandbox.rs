//! A private world per test: a temporary HOME and a roster directory
//! nobody else uses, and the files a test sets up in it.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};

use crate::{
    COMMAND_DEADLINE, Finished, Outcome, StdinFeed, binary, clean_environment, record_file_name_here,
    require_tool, run_to_completion, run_with_deadline, shell_quote,
};

/// A private world for one test: a canonical temporary directory with its
/// own HOME and a roster directory nobody else uses. Two layouts, one type:
/// `new` puts the roster directory at `<temp>/roster`, passed as `--dir`;
/// `with_default_roster` puts it where the tools look by default,
/// `~/.local/state/roster` under the private HOME (a hook gets no `--dir`),
/// beside a project directory `~/src/app` standing where the harness
/// captures' `/home/dev/src/app` stood. The roster directory does not exist
/// until a binary creates it.
pub struct Sandbox {
    /// Removed, with everything in it, when the sandbox is dropped.
    _temp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    home: PathBuf,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let (temp, base, home) = Sandbox::temporary_home("roster-blackbox-");
        Sandbox { root: base.join("roster"), base, home, _temp: temp }
    }

    /// The layout of the hook tests: the roster directory at its default
    /// place under HOME, and the project directory created.
    pub fn with_default_roster() -> Sandbox {
        let (temp, base, home) = Sandbox::temporary_home("roster-hook-");
        let sandbox = Sandbox { root: home.join(".local/state/roster"), base, home, _temp: temp };
        std::fs::create_dir_all(sandbox.project()).expect("create the project directory");
        sandbox
    }

    fn temporary_home(prefix: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let temp = tempfile::Builder::new().prefix(prefix).tempdir().expect("create a temp dir");
        // Canonical, so paths the binaries print (canonicalized) compare equal.
        let base = temp.path().canonicalize().expect("canonicalize the temp dir");
        let home = base.join("home");
        std::fs::create_dir(&home).expect("create home");
        (temp, base, home)
    }

    /// The temp directory everything of this sandbox lives in.
    pub fn base(&self) -> PathBuf {
        self.base.clone()
    }

    /// The project directory of `with_default_roster` (`~/src/app`).
    pub fn project(&self) -> PathBuf {
        self.home.join("src/app")
    }

    /// The roster directory (passed as `--dir`, or the default under HOME).
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }

    pub fn consent(&self) -> PathBuf {
        self.root.join("consent")
    }

    /// Where register puts the record of `pid` registered from this
    /// process's world (its pid namespace, this boot).
    pub fn record_path(&self, pid: u32) -> PathBuf {
        self.sessions().join(record_file_name_here(pid))
    }

    /// Where arm and disarm put the consent marker of `pid`.
    pub fn marker_path(&self, pid: u32) -> PathBuf {
        self.consent().join(record_file_name_here(pid))
    }

    /// A binary with a clean environment: only `PATH` and a private `HOME`,
    /// so no `ROSTER_*`, `CLAUDE_PID`, `OPENCODE_PID`, `XDG_STATE_HOME` or
    /// harness export of the machine running the tests leaks in. Runs in
    /// the private home. No `--dir`: callers add what they test.
    pub fn command(&self, tool: &str) -> Command {
        let mut command = Command::new(binary(tool));
        clean_environment(&mut command, &self.home).current_dir(&self.home);
        command
    }

    /// `tool --dir <root> args…`, with the clean environment.
    pub fn command_in_root(&self, tool: &str, args: &[&str]) -> Command {
        let mut command = self.command(tool);
        command.arg("--dir").arg(&self.root).args(args);
        command
    }

    /// Runs `tool --dir <root> args…` to its end.
    pub fn run(&self, tool: &str, args: &[&str]) -> Outcome {
        run_with_deadline(&mut self.command_in_root(tool, args), COMMAND_DEADLINE)
    }

    /// Runs `tool --dir <root> args…` with extra environment variables.
    pub fn run_with_env(&self, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Outcome {
        let mut command = self.command_in_root(tool, args);
        for (key, value) in env {
            command.env(key, value);
        }
        run_with_deadline(&mut command, COMMAND_DEADLINE)
    }

    /// Runs `tool --dir <root> args…` on a pseudo-terminal, as a person's
    /// shell would (`script`), with the clean environment and `env` added;
    /// its stdout and stderr both go to the terminal, and come back mixed
    /// as the finished run's stdout (with `\r\n` line ends).
    pub fn run_on_terminal(&self, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Finished {
        let mut words = vec![shell_quote(&binary(tool).to_string_lossy()).into_owned()];
        words.push("--dir".to_owned());
        words.push(shell_quote(&self.root.to_string_lossy()).into_owned());
        words.extend(args.iter().map(|argument| shell_quote(argument).into_owned()));
        let mut command = Command::new(require_tool("script"));
        clean_environment(&mut command, &self.home).current_dir(&self.home);
        command.envs(env.iter().copied());
        command.args(["-qec", &words.join(" "), "/dev/null"]);
        run_to_completion(command, StdinFeed::Null, COMMAND_DEADLINE)
    }

    /// Registers `pid` (`--pid`) with extra flags, asserts success and
    /// returns the JSON row register printed.
    pub fn register(&self, pid: u32, extra: &[&str]) -> Value {
        let pid_text = pid.to_string();
        let mut args = vec!["--json", "--pid", pid_text.as_str()];
        args.extend_from_slice(extra);
        self.run("roster-register", &args).json()
    }

    /// `roster-list --json` rows (with extra flags).
    pub fn list(&self, extra: &[&str]) -> Vec<Value> {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        self.run("roster-list", &args).rows()
    }

    /// `roster-list --json --all` rows.
    pub fn list_all(&self) -> Vec<Value> {
        self.list(&["--all"])
    }

    /// The record file of `pid` as JSON.
    pub fn record(&self, pid: u32) -> Value {
        let path = self.record_path(pid);
        let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|error| panic!("{} is not JSON: {error}", path.display()))
    }

    /// Writes `sessions/<name>` with `bytes`, mode 0600, atomically (via a
    /// dotfile and a rename), so a concurrently running binary sees the old
    /// file or the new one.
    pub fn write_entry(&self, name: &str, bytes: &[u8]) -> PathBuf {
        write_file_atomically(&self.sessions().join(name), bytes)
    }

    /// Writes `value` as the record file of `pid`.
    pub fn write_record(&self, pid: u32, value: &Value) -> PathBuf {
        self.write_entry(&record_file_name_here(pid), &serde_json::to_vec_pretty(value).expect("serialize"))
    }

    /// Edits the record file of `pid` in place (atomically).
    pub fn edit_record(&self, pid: u32, edit: impl FnOnce(&mut Map<String, Value>)) -> Value {
        let mut value = self.record(pid);
        edit(value.as_object_mut().expect("a record is an object"));
        self.write_record(pid, &value);
        value
    }

    /// Every name in `sessions/`, dotfiles included, sorted.
    pub fn session_entries(&self) -> Vec<String> {
        names_in(&self.sessions())
    }

    /// The names in `sessions/` a reader lists (not dotfiles), sorted.
    pub fn visible_session_entries(&self) -> Vec<String> {
        self.session_entries().into_iter().filter(|name| !name.starts_with('.')).collect()
    }

    /// Every `.tmp-*` entry in the roster directory and its subdirectories.
    pub fn temporaries(&self) -> Vec<PathBuf> {
        [self.root.clone(), self.sessions(), self.consent()]
            .iter()
            .flat_map(|dir| {
                names_in(dir).into_iter().filter(|name| name.starts_with(".tmp-")).map(|name| dir.join(name))
            })
            .collect()
    }
}

/// Names in a directory, sorted; empty when it does not exist.
pub fn names_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .map(|entry| entry.expect("read_dir entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Writes a file mode 0600 the way roster writes its own: a temporary in
/// the same directory, renamed over the target.
pub fn write_file_atomically(target: &Path, bytes: &[u8]) -> PathBuf {
    harness::hook_config::write_atomically(target, bytes, 0o600)
        .unwrap_or_else(|error| panic!("write {}: {error}", target.display()));
    target.to_owned()
}

/// Creates a plain file mode 0600 (not atomically; for setting up).
pub fn write_file_0600(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .unwrap_or_else(|error| panic!("create {}: {error}", path.display()));
    file.write_all(bytes).expect("write");
}

impl Sandbox {
    /// Registers and arms a session whose owner is a short-lived shell,
    /// and returns the shell's pid once it has exited: a record and a
    /// consent marker of a dead owner, made the only way a real session
    /// makes them (consent only arms a verified owner: the caller or one of
    /// its ancestors, here the shell).
    pub fn session_of_an_exited_shell(&self) -> u32 {
        let script = r#""$REGISTER" --dir "$DIR" --pid parent --quiet \
            && "$CONSENT" --dir "$DIR" arm --pid parent --quiet \
            && echo $$"#;
        let clean = self.command("roster-register");
        let mut shell = Command::new("sh");
        shell.args(["-c", script]).env_clear().current_dir(&self.home);
        shell.envs(clean.get_envs().filter_map(|(key, value)| Some((key, value?))));
        shell.env("REGISTER", binary("roster-register")).env("CONSENT", binary("roster-consent"));
        shell.env("DIR", &self.root);
        let outcome = run_with_deadline(&mut shell, COMMAND_DEADLINE);
        outcome.expect_code(0);
        outcome.stdout_text().trim().parse().unwrap_or_else(|_| panic!("the shell printed no pid\n{outcome}"))
    }
}
