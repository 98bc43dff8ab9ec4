//! A local HTTP(S) server that records what is posted to it, for the
//! notifier's ntfy and webhook tests (ntfy's own server is no Debian
//! package, so this stands where it would): every request's method, path,
//! headers and body, answered 200; or, as a hung server, read and never
//! answered. HTTPS with a certificate made at test time by `openssl`: a
//! certificate authority of its own and a server certificate for
//! 127.0.0.1 it signed. Listens on 127.0.0.1 only.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{poll_until, require_tool};

/// One request as it arrived.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
    pub at: Instant,
}

/// How the server behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Ok,
    /// Reads the request, never answers.
    Hang,
}

pub struct HttpRecorder {
    pub url: String,
    /// The certificate authority's PEM file, for HTTPS.
    pub ca_certificate: Option<PathBuf>,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    _directory: tempfile::TempDir,
}

impl HttpRecorder {
    /// A plain HTTP server.
    pub fn start(answer: Answer) -> HttpRecorder {
        HttpRecorder::start_with(answer, false)
    }

    /// An HTTPS server, its certificate signed by a CA of its own.
    pub fn start_tls(answer: Answer) -> HttpRecorder {
        HttpRecorder::start_with(answer, true)
    }

    fn start_with(answer: Answer, tls: bool) -> HttpRecorder {
        let directory = tempfile::tempdir().expect("a scratch directory");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("an address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (config, ca_certificate) = if tls {
            let (config, ca) = tls_config(directory.path());
            (Some(Arc::new(config)), Some(ca))
        } else {
            (None, None)
        };
        let recorded = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let recorded = recorded.clone();
                let config = config.clone();
                std::thread::spawn(move || serve(stream, config, answer, &recorded));
            }
        });
        let scheme = if tls { "https" } else { "http" };
        HttpRecorder {
            url: format!("{scheme}://127.0.0.1:{port}"),
            ca_certificate,
            requests,
            _directory: directory,
        }
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits until `count` requests arrived; all of them.
    pub fn wait_for(&self, count: usize, deadline: Duration) -> Vec<RecordedRequest> {
        let arrived = poll_until(deadline, || self.requests.lock().unwrap().len() >= count);
        // Taken once: a lock held by the message's count while the message
        // took the requests again was never let go, and a missed wait hung.
        let requests = self.requests();
        assert!(arrived, "{} requests arrived of {count}: {requests:#?}", requests.len());
        requests
    }
}

fn serve(
    stream: TcpStream,
    config: Option<Arc<rustls::ServerConfig>>,
    answer: Answer,
    recorded: &Mutex<Vec<RecordedRequest>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    match config {
        Some(config) => {
            let Ok(connection) = rustls::ServerConnection::new(config) else { return };
            let mut tls = rustls::StreamOwned::new(connection, stream);
            exchange(&mut tls, answer, recorded);
        }
        None => {
            let mut plain = stream;
            exchange(&mut plain, answer, recorded);
        }
    }
}

/// Reads requests off one connection (keep-alive) and answers each.
fn exchange(stream: &mut (impl Read + Write), answer: Answer, recorded: &Mutex<Vec<RecordedRequest>>) {
    loop {
        let mut reader = BufReader::new(&mut *stream);
        let mut first = String::new();
        if reader.read_line(&mut first).unwrap_or(0) == 0 {
            return;
        }
        let mut words = first.split_whitespace();
        let (method, path) = (words.next().unwrap_or("").to_owned(), words.next().unwrap_or("").to_owned());
        let mut headers = BTreeMap::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.insert(name.trim().to_lowercase(), value.trim().to_owned());
            }
        }
        let length: usize = headers.get("content-length").and_then(|length| length.parse().ok()).unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        drop(reader);
        recorded.lock().unwrap().push(RecordedRequest { method, path, headers, body, at: Instant::now() });
        match answer {
            Answer::Hang => {
                std::thread::sleep(Duration::from_secs(600));
                return;
            }
            Answer::Ok => {
                let reply =
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
                if stream.write_all(reply).and_then(|()| stream.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

/// A CA and a server certificate for 127.0.0.1 it signed, made by
/// `openssl` in `directory`; the server's rustls configuration and the
/// CA's PEM file.
fn tls_config(directory: &Path) -> (rustls::ServerConfig, PathBuf) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let openssl = require_tool("openssl");
    let run = |args: &[&str]| {
        let output = Command::new(&openssl).args(args).current_dir(directory).output().expect("run openssl");
        assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=roster test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    ]);
    run(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    std::fs::write(
        directory.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write the extensions");
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        "-out",
        "server.pem",
    ]);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(directory.join("server.pem"))
        .expect("server.pem")
        .map(|certificate| certificate.expect("a certificate"))
        .collect();
    let key = PrivateKeyDer::from_pem_file(directory.join("server.key")).expect("server.key");
    // ring, the provider ureq uses (rustls calls it deprecated for want of
    // post-quantum key exchange, which a test server on 127.0.0.1 needs not).
    #[allow(deprecated)]
    let provider = rustls::crypto::ring::default_provider();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("a server configuration");
    (config, directory.join("ca.pem"))
}
