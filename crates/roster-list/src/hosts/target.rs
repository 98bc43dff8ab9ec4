//! Which hosts `roster-list --host` asks (docs/contract.md §6.7): each
//! `[USER@]HOST[:PORT]` parsed once into what ssh is given, `local` for
//! this machine, and `--hosts-file`'s lines, whose errors name the file
//! and the line.

use std::path::Path;

use cli_support::{BadInput, escape_for_terminal, escape_path_for_terminal};

pub use cli_support::ssh::{Host, LOCAL_HOST, Place, parse_host};

/// The hosts to ask, in the order given: every `--host`, then the lines of
/// `--hosts-file`; a host given twice is asked once, where it first came.
pub fn hosts_asked(flags: &[String], file: Option<&Path>) -> Result<Vec<Host>, BadInput> {
    let mut hosts: Vec<Host> = Vec::new();
    let mut add = |host: Host| {
        if !hosts.iter().any(|known| known.given == host.given) {
            hosts.push(host);
        }
    };
    for flag in flags {
        let host = parse_host(flag).map_err(|why| {
            BadInput(format!("--host {}: {why}", escape_for_terminal(&format!("{flag:?}"))))
        })?;
        add(host);
    }
    if let Some(file) = file {
        let text = std::fs::read_to_string(file).map_err(|error| {
            BadInput(format!(
                "--hosts-file {}: {error}; give a readable file",
                escape_path_for_terminal(file)
            ))
        })?;
        for host in hosts_of_file(&text).map_err(|(line, why)| {
            BadInput(format!("--hosts-file {} line {line}: {why}", escape_path_for_terminal(file)))
        })? {
            add(host);
        }
    }
    if hosts.is_empty() {
        return Err(BadInput(
            "--hosts-file names no host; give one [USER@]HOST[:PORT] a line, or `local`".to_owned(),
        ));
    }
    Ok(hosts)
}

/// The hosts of a hosts file: one a line; blank lines and lines starting
/// with `#` are skipped. An error carries its line number (from 1).
pub fn hosts_of_file(text: &str) -> Result<Vec<Host>, (usize, String)> {
    let mut hosts = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let host = parse_host(line)
            .map_err(|why| (index + 1, format!("{}: {why}", escape_for_terminal(&format!("{line:?}")))))?;
        hosts.push(host);
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(given: &str, destination: &str, port: Option<u16>) -> Host {
        Host { given: given.to_owned(), place: Place::Remote { destination: destination.to_owned(), port } }
    }

    #[test]
    fn hosts_parse_into_destination_and_port() {
        let cases = [
            ("box", remote("box", "box", None)),
            ("ann@box", remote("ann@box", "ann@box", None)),
            ("ann@box:2222", remote("ann@box:2222", "ann@box", Some(2222))),
            ("10.0.0.7:22", remote("10.0.0.7:22", "10.0.0.7", Some(22))),
            ("[::1]:2222", remote("[::1]:2222", "::1", Some(2222))),
            ("[::1]", remote("[::1]", "::1", None)),
            ("fe80::1", remote("fe80::1", "fe80::1", None)),
            ("local", Host { given: "local".to_owned(), place: Place::Local }),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_host(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn hosts_that_ssh_would_misread_are_refused() {
        for text in ["", "-oProxyCommand=x", "ann@-box", "@box", "box:0", "box:99999", "box:x", "a b", "[::1"]
        {
            assert!(parse_host(text).is_err(), "{text:?} was accepted");
        }
    }

    #[test]
    fn a_hosts_file_skips_comments_and_names_the_bad_line() {
        let hosts = hosts_of_file("# fleet\n\nbox\n  ann@other:2222  \n").expect("parses");
        assert_eq!(
            hosts.iter().map(|host| host.given.as_str()).collect::<Vec<_>>(),
            ["box", "ann@other:2222"]
        );
        let (line, why) = hosts_of_file("box\n# x\nbad host\n").expect_err("a bad line");
        assert_eq!(line, 3);
        assert!(why.contains("bad host"), "{why}");
    }
}
