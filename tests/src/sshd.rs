//! Hosts for `roster-list --host` (docs/contract.md §6.7): real OpenSSH
//! servers on 127.0.0.1, each with its own port, host key, registry and
//! PATH, so that each acts as a separate machine; and the client's
//! `ROSTER_SSH_COMMAND` that reaches them with a generated key and no
//! config of the machine running the tests.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{poll_until, require_tool};

/// How long an sshd may take to listen.
const SSHD_START: Duration = Duration::from_secs(10);

/// The client's key, shared by every host of a test, and the ssh command
/// line that uses it.
pub struct SshClient {
    _dir: tempfile::TempDir,
    key: PathBuf,
}

impl SshClient {
    /// Generates a key pair with `ssh-keygen`.
    pub fn new() -> SshClient {
        let keygen = require_tool("ssh-keygen");
        require_tool("ssh");
        let dir = tempfile::Builder::new().prefix("roster-ssh-client-").tempdir().expect("a temp dir");
        let key = dir.path().join("id_ed25519");
        generate_key(&keygen, &key);
        SshClient { _dir: dir, key }
    }

    /// The public key, for a host's `AuthorizedKeysFile`.
    pub fn public_key(&self) -> PathBuf {
        self.key.with_extension("pub")
    }

    /// `ROSTER_SSH_COMMAND` for these hosts: this key, no user or system
    /// config, no known-hosts file, no prompt about host keys.
    pub fn ssh_command(&self) -> String {
        format!(
            "ssh -F /dev/null -i {} -o IdentitiesOnly=yes -o UserKnownHostsFile=/dev/null \
             -o StrictHostKeyChecking=no -o LogLevel=ERROR",
            crate::shell_quote(&self.key.to_string_lossy())
        )
    }
}

impl Default for SshClient {
    fn default() -> Self {
        SshClient::new()
    }
}

/// One host: an sshd, its registry, and what its sessions find on PATH.
pub struct SshHost {
    dir: tempfile::TempDir,
    port: u16,
    sshd: Option<Child>,
}

impl SshHost {
    /// Starts a host whose sessions see `ROSTER_DIR` = its own registry,
    /// `HOME` = its own home, and `PATH` = `path`.
    pub fn start(client: &SshClient, path: &str) -> SshHost {
        assert!(
            nix::unistd::geteuid().is_root(),
            "the --host tests start sshd, which must run as root (each host logs in as root); run them as root"
        );
        require_tool("sshd");
        std::fs::create_dir_all("/run/sshd").expect("create sshd's privilege separation directory");
        let dir = tempfile::Builder::new().prefix("roster-ssh-host-").tempdir().expect("a temp dir");
        let base = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(base.join("home")).expect("create the host's home");
        let host_key = base.join("host_key");
        generate_key(&require_tool("ssh-keygen"), &host_key);
        let port = free_port();
        let config = format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {}\nAuthorizedKeysFile {}\nPermitRootLogin yes\n\
             UsePAM no\nStrictModes no\nPidFile none\nPasswordAuthentication no\n\
             SetEnv ROSTER_DIR={} HOME={} PATH={path}\n",
            host_key.display(),
            client.public_key().display(),
            base.join("roster").display(),
            base.join("home").display(),
        );
        std::fs::write(base.join("sshd_config"), config).expect("write sshd_config");
        let mut host = SshHost { dir, port, sshd: None };
        host.restart();
        host
    }

    /// `127.0.0.1:PORT`, as `--host` takes it.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The host's registry, as its sessions find it in `ROSTER_DIR`.
    pub fn registry(&self) -> PathBuf {
        self.base().join("roster")
    }

    /// A directory of this host's own, for what a test puts on its PATH.
    pub fn base(&self) -> PathBuf {
        self.dir.path().canonicalize().expect("canonical")
    }

    /// Starts its sshd (again, on the same port) and waits until it listens.
    pub fn restart(&mut self) {
        assert!(self.sshd.is_none(), "the host runs already");
        let mut command = Command::new(require_tool("sshd"));
        command
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(self.base().join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = command.spawn().expect("start sshd");
        self.sshd = Some(child);
        let port = self.port;
        assert!(
            poll_until(SSHD_START, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()),
            "sshd did not listen on 127.0.0.1:{port} within {SSHD_START:?}"
        );
    }

    /// Kills the whole host: its sshd, every session it serves and what
    /// they run (each connection's sshd starts a session of its own, so
    /// they are found as its descendants), as a machine that goes down.
    pub fn kill(&mut self) {
        if let Some(mut sshd) = self.sshd.take() {
            let mut doomed = descendants(sshd.id());
            doomed.push(sshd.id());
            for pid in doomed {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = sshd.wait();
        }
    }
}

impl Drop for SshHost {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port on 127.0.0.1 nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|listener| listener.local_addr()).expect("a free port").port()
}

/// Every process descended from `pid`, read from `/proc/*/stat`.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // The parent is the second field after the command's closing parenthesis.
        let Some(after) = stat.rfind(')').map(|end| &stat[end + 1..]) else { continue };
        if let Some(parent) = after.split_whitespace().nth(1).and_then(|field| field.parse::<u32>().ok()) {
            parents.push((child, parent));
        }
    }
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(child, of) in &parents {
            if of == parent && !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

fn generate_key(keygen: &Path, key: &Path) {
    let status = Command::new(keygen)
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(key)
        .stdin(Stdio::null())
        .status()
        .expect("run ssh-keygen");
    assert!(status.success(), "ssh-keygen failed: {status}");
}
