//! Owner resolution (docs/contract.md §4.1) as a table: one row per rule, against a tiny
//! synthetic harness table and process trees written as text, so a row
//! reads like the situation it describes.

use owner_liveness::{
    AncestorStep, HarnessPatterns, OwnerQuery, Pid, PidExport, ResolveError, ResolvedOwner, resolve_owner,
};

/// A small stand-in for the harness crate's table: `claude`, `codex` and
/// `opencode` by comm, and a `node` loader whose script is `…/codex`.
struct SyntheticHarnesses;

const SYNTHETIC_EXPORTS: &[PidExport] = &[
    PidExport { variable: "CLAUDE_PID", harness: "claude-code" },
    PidExport { variable: "OPENCODE_PID", harness: "opencode" },
];

impl HarnessPatterns for SyntheticHarnesses {
    fn harness_of(&self, step: &AncestorStep) -> Option<&'static str> {
        match step.comm.as_str() {
            "claude" => Some("claude-code"),
            "codex" => Some("codex"),
            "opencode" => Some("opencode"),
            "node" if step.argv().get(1).is_some_and(|script| script.ends_with("/codex")) => Some("codex"),
            _ => None,
        }
    }

    fn pid_exports(&self) -> &[PidExport] {
        SYNTHETIC_EXPORTS
    }
}

/// The pid_max every row runs under.
const PID_MAX: u32 = 4_194_304;

/// One resolution problem. `tree` lists the caller first, then each parent:
/// `"<pid> <comm> [script args…]"`; argv\[0\] is the comm.
struct Situation<'a> {
    flag: Option<&'a str>,
    env: &'a [(&'a str, &'a str)],
    tree: &'a [&'a str],
}

/// A caller (pid 1000) in a shell (900) run by claude (800).
const CALLER_UNDER_CLAUDE: &[&str] =
    &["1000 roster-register", "900 bash", "800 claude", "700 zsh", "1 systemd"];

/// A caller in a shell run by codex (600), itself run from a shell inside
/// claude (400): an outer claude's `CLAUDE_PID=400` leaks into the codex.
const CODEX_INSIDE_CLAUDE: &[&str] =
    &["1000 roster-register", "900 bash", "600 codex", "500 bash", "400 claude", "300 zsh", "1 systemd"];

/// No harness anywhere above the caller.
const NO_HARNESS: &[&str] = &["1000 roster-register", "900 bash", "800 sshd", "1 systemd"];

fn ancestry_of(tree: &[&str]) -> Vec<AncestorStep> {
    let pids: Vec<Pid> =
        tree.iter().map(|line| Pid::new(line.split(' ').next().unwrap().parse().unwrap()).unwrap()).collect();
    tree.iter()
        .enumerate()
        .map(|(index, line)| {
            let mut words = line.split(' ');
            words.next();
            let comm = words.next().unwrap().to_owned();
            let argv = std::iter::once(comm.clone()).chain(words.map(str::to_owned)).collect();
            AncestorStep::with_names(pids[index], pids.get(index + 1).copied(), comm, argv, None)
        })
        .collect()
}

/// Renders an answer as one line: `"<pid> <source> verified|unverified
/// <harness or -> [chain=<pid>,…]"` (the chain below the owner, when there
/// is one), or the error's debug form.
fn render(answer: Result<ResolvedOwner, ResolveError>) -> String {
    match answer {
        Ok(owner) => format!(
            "{} {} {} {}{}",
            owner.pid,
            owner.source.as_str(),
            if owner.verified { "verified" } else { "unverified" },
            owner.harness.unwrap_or("-"),
            if owner.chain.is_empty() {
                String::new()
            } else {
                let pids: Vec<String> = owner.chain.iter().map(ToString::to_string).collect();
                format!(" chain={}", pids.join(","))
            }
        ),
        Err(error) => format!("{error:?}"),
    }
}

fn check(situation: Situation<'_>, expect: &str) {
    let ancestry = ancestry_of(situation.tree);
    let env = |name: &str| {
        situation.env.iter().find(|(variable, _)| *variable == name).map(|(_, value)| (*value).to_owned())
    };
    let query = OwnerQuery {
        flag: situation.flag,
        env: &env,
        parent: ancestry[1].pid,
        ancestry: &ancestry,
        pid_max: PID_MAX,
    };
    let actual = render(resolve_owner(&query, &SyntheticHarnesses));
    assert_eq!(
        actual, expect,
        "flag {:?}, env {:?}, tree {:?}",
        situation.flag, situation.env, situation.tree
    );
}

#[test]
fn the_flag_beats_every_other_source() {
    check(
        Situation {
            flag: Some("800"),
            env: &[("ROSTER_SESSION_PID", "900"), ("CLAUDE_PID", "700")],
            tree: CALLER_UNDER_CLAUDE,
        },
        "800 flag verified claude-code",
    );
    // The flag is the most explicit answer, so lower sources are not even
    // read: their values cannot be wrong in a way that matters.
    check(
        Situation { flag: Some("900"), env: &[("ROSTER_SESSION_PID", "12abc")], tree: CALLER_UNDER_CLAUDE },
        "900 flag verified -",
    );
}

#[test]
fn the_flag_parent_names_the_process_that_ran_the_command() {
    check(Situation { flag: Some("parent"), env: &[], tree: CALLER_UNDER_CLAUDE }, "900 parent verified -");
    check(
        Situation {
            flag: Some("parent"),
            env: &[("CLAUDE_PID", "800")],
            tree: &["1000 roster-register", "800 claude"],
        },
        "800 parent verified claude-code",
    );
}

#[test]
fn an_unrelated_flag_pid_is_accepted_but_unverified() {
    check(Situation { flag: Some("4242"), env: &[], tree: CALLER_UNDER_CLAUDE }, "4242 flag unverified -");
}

#[test]
fn the_caller_itself_counts_as_verified() {
    check(Situation { flag: Some("1000"), env: &[], tree: NO_HARNESS }, "1000 flag verified -");
    check(
        Situation { flag: None, env: &[("ROSTER_SESSION_PID", "1000")], tree: NO_HARNESS },
        "1000 ROSTER_SESSION_PID verified -",
    );
}

#[test]
fn roster_session_pid_beats_harness_exports_and_the_walk() {
    // Naming the harness process itself, or a process below it.
    check(
        Situation {
            flag: None,
            env: &[("ROSTER_SESSION_PID", "800"), ("CLAUDE_PID", "800")],
            tree: CALLER_UNDER_CLAUDE,
        },
        "800 ROSTER_SESSION_PID verified claude-code",
    );
    check(
        Situation { flag: None, env: &[("ROSTER_SESSION_PID", "900")], tree: CALLER_UNDER_CLAUDE },
        "900 ROSTER_SESSION_PID verified -",
    );
    // With no harness process among the ancestors, whatever it names.
    let plain_shells: &[&str] = &["1000 roster-register", "900 bash", "700 zsh", "1 systemd"];
    check(
        Situation { flag: None, env: &[("ROSTER_SESSION_PID", "700")], tree: plain_shells },
        "700 ROSTER_SESSION_PID verified -",
    );
    check(
        Situation { flag: None, env: &[("ROSTER_SESSION_PID", "4242")], tree: plain_shells },
        "4242 ROSTER_SESSION_PID unverified -",
    );
}

/// A wrapper that exported its own pid and started several harness
/// sessions: the harness process each caller runs inside owns its session,
/// so two sessions never share one owner (and one record).
#[test]
fn a_harness_nearer_than_the_exported_pid_owns_the_session() {
    check(
        Situation {
            flag: None,
            env: &[("ROSTER_SESSION_PID", "700"), ("CLAUDE_PID", "800")],
            tree: CALLER_UNDER_CLAUDE,
        },
        "800 ancestor verified claude-code",
    );
    // A pid that is no ancestor at all proves nothing inside a harness.
    check(
        Situation { flag: None, env: &[("ROSTER_SESSION_PID", "4242")], tree: CALLER_UNDER_CLAUDE },
        "800 ancestor verified claude-code",
    );
    // --pid still names whatever it names.
    check(
        Situation { flag: Some("700"), env: &[("ROSTER_SESSION_PID", "700")], tree: CALLER_UNDER_CLAUDE },
        "700 flag verified -",
    );
}

#[test]
fn a_harness_export_naming_an_ancestor_beats_the_walk() {
    // The walk would widen to the outermost claude (700); the export names
    // the inner one, and the export is more explicit.
    check(
        Situation {
            flag: None,
            env: &[("CLAUDE_PID", "800")],
            tree: &["1000 roster-register", "900 bash", "800 claude", "700 claude", "1 systemd"],
        },
        "800 CLAUDE_PID verified claude-code",
    );
    check(
        Situation {
            flag: None,
            env: &[("OPENCODE_PID", "800")],
            tree: &["1000 roster-register", "900 bash", "800 opencode", "1 systemd"],
        },
        "800 OPENCODE_PID verified opencode",
    );
}

#[test]
fn a_harness_export_past_processes_of_the_same_harness_is_trusted() {
    check(
        Situation {
            flag: None,
            env: &[("CLAUDE_PID", "700")],
            tree: &["1000 roster-register", "900 claude", "800 bash", "700 claude", "1 systemd"],
        },
        "700 CLAUDE_PID verified claude-code",
    );
}

#[test]
fn a_claude_pid_leaked_from_an_outer_claude_loses_to_the_inner_codex() {
    check(
        Situation { flag: None, env: &[("CLAUDE_PID", "400")], tree: CODEX_INSIDE_CLAUDE },
        "600 ancestor verified codex",
    );
}

#[test]
fn a_claude_pid_naming_a_non_ancestor_falls_through_to_the_walk() {
    check(
        Situation { flag: None, env: &[("CLAUDE_PID", "4242")], tree: CALLER_UNDER_CLAUDE },
        "800 ancestor verified claude-code",
    );
    check(Situation { flag: None, env: &[("CLAUDE_PID", "4242")], tree: NO_HARNESS }, "NotFound");
}

#[test]
fn the_walk_takes_the_outermost_of_a_run_of_the_same_harness() {
    // node loader (700) above the native codex (800): one run, the loader is
    // the owner and the native binary its chain. The codex at 500 is cut
    // off by the shell at 600.
    check(
        Situation {
            flag: None,
            env: &[],
            tree: &[
                "1000 roster-register",
                "900 bash",
                "800 codex",
                "700 node /usr/lib/node_modules/@openai/codex/bin/codex",
                "600 bash",
                "500 codex",
                "1 systemd",
            ],
        },
        "700 ancestor verified codex chain=800",
    );
    // A run is of one harness: a claude above a codex does not extend it.
    check(
        Situation {
            flag: None,
            env: &[],
            tree: &["1000 roster-register", "800 codex", "700 claude", "1 systemd"],
        },
        "800 ancestor verified codex",
    );
    check(Situation { flag: None, env: &[], tree: CALLER_UNDER_CLAUDE }, "800 ancestor verified claude-code");
}

#[test]
fn a_node_process_running_something_else_is_no_harness() {
    check(
        Situation {
            flag: None,
            env: &[],
            tree: &["1000 roster-register", "900 node /srv/app/server.js", "1 systemd"],
        },
        "NotFound",
    );
}

#[test]
fn nothing_found_is_not_found() {
    check(Situation { flag: None, env: &[], tree: NO_HARNESS }, "NotFound");
    check(Situation { flag: None, env: &[], tree: &["1000 roster-register", "900 bash"] }, "NotFound");
}

/// Every value docs/contract.md §4.1 names as invalid, with the reason it is refused.
const INVALID_PID_TEXTS: &[(&str, &str)] = &[
    ("0", "Zero"),
    ("-1", "NotCanonical"),
    ("12abc", "NotCanonical"),
    (" 12", "NotCanonical"),
    ("1e3", "NotCanonical"),
    ("012", "NotCanonical"),
    ("4194304", "AbovePidMax { pid_max: 4194304 }"),
    ("99999999999", "AbovePidMax { pid_max: 4194304 }"),
    ("", "Empty"),
];

#[test]
fn every_invalid_flag_value_is_an_error() {
    for (value, why) in INVALID_PID_TEXTS {
        check(
            Situation { flag: Some(value), env: &[], tree: CALLER_UNDER_CLAUDE },
            &format!("InvalidFlag {{ value: {value:?}, why: {why} }}"),
        );
    }
}

#[test]
fn every_invalid_environment_value_is_an_error_never_a_fall_through() {
    for variable in ["ROSTER_SESSION_PID", "CLAUDE_PID", "OPENCODE_PID"] {
        for (value, why) in INVALID_PID_TEXTS {
            // The walk would find claude at 800: the bad value must still win.
            check(
                Situation { flag: None, env: &[(variable, value)], tree: CALLER_UNDER_CLAUDE },
                &format!("InvalidEnv {{ variable: {variable:?}, value: {value:?}, why: {why} }}"),
            );
        }
    }
}

#[test]
fn a_bad_export_is_an_error_even_beside_a_good_one_in_either_order() {
    // Regression: exports used to be read one at a time, so a trusted
    // CLAUDE_PID hid a bad OPENCODE_PID only because of the table's order.
    check(
        Situation {
            flag: None,
            env: &[("CLAUDE_PID", "800"), ("OPENCODE_PID", "1e3")],
            tree: CALLER_UNDER_CLAUDE,
        },
        "InvalidEnv { variable: \"OPENCODE_PID\", value: \"1e3\", why: NotCanonical }",
    );
}

#[test]
fn an_invalid_roster_session_pid_is_an_error_even_beside_a_good_harness_export() {
    check(
        Situation {
            flag: None,
            env: &[("ROSTER_SESSION_PID", "-1"), ("CLAUDE_PID", "800")],
            tree: CALLER_UNDER_CLAUDE,
        },
        "InvalidEnv { variable: \"ROSTER_SESSION_PID\", value: \"-1\", why: NotCanonical }",
    );
}

#[test]
fn error_messages_name_the_value_and_the_fix() {
    let ancestry = ancestry_of(NO_HARNESS);
    let env = |name: &str| (name == "CLAUDE_PID").then(|| "0".to_owned());
    let query =
        |flag| OwnerQuery { flag, env: &env, parent: ancestry[1].pid, ancestry: &ancestry, pid_max: PID_MAX };
    let message = |flag| resolve_owner(&query(flag), &SyntheticHarnesses).unwrap_err().to_string();
    assert_eq!(
        message(Some(" 12")),
        "--pid \" 12\" is not a canonical positive decimal (digits only, no sign, no leading zeros, no spaces); \
         give a pid or `parent`"
    );
    assert_eq!(message(None), "CLAUDE_PID=\"0\" is zero; set it to the owner's pid or unset it");
    let no_env = |_: &str| None;
    let nothing = OwnerQuery {
        flag: None,
        env: &no_env,
        parent: ancestry[1].pid,
        ancestry: &ancestry,
        pid_max: PID_MAX,
    };
    let not_found = resolve_owner(&nothing, &SyntheticHarnesses).unwrap_err().to_string();
    for way in ["--pid PID", "--pid parent", "ROSTER_SESSION_PID=PID", "CLAUDE_PID"] {
        assert!(not_found.contains(way), "{not_found:?} does not name {way}");
    }
}

/// Init outlives every session: a record naming it would never die, so no
/// source may name it and the walk never settles on it.
#[test]
fn init_is_never_an_owner() {
    let refused =
        |named_by: &str| format!("NotAnOwner {{ named_by: {named_by:?}, pid: Pid(1), what: \"init\" }}");
    check(Situation { flag: Some("1"), env: &[], tree: CALLER_UNDER_CLAUDE }, &refused("--pid"));
    check(
        Situation {
            flag: None,
            env: &[("ROSTER_SESSION_PID", "1")],
            tree: &["1000 roster-register", "900 bash", "1 systemd"],
        },
        &refused("ROSTER_SESSION_PID"),
    );
    check(
        Situation { flag: None, env: &[("CLAUDE_PID", "1")], tree: CALLER_UNDER_CLAUDE },
        &refused("CLAUDE_PID"),
    );
    // A shell whose parent is init: `--pid parent` names init.
    check(
        Situation { flag: Some("parent"), env: &[], tree: &["1000 roster-register", "1 systemd"] },
        &refused("--pid parent (this command was started by init, or its parent exited)"),
    );
    // A container whose first process is the harness: the walk passes it by.
    check(
        Situation { flag: None, env: &[], tree: &["1000 roster-register", "900 bash", "1 claude"] },
        "HarnessIsInit { harness: \"claude-code\" }",
    );
    check(
        Situation {
            flag: None,
            env: &[],
            tree: &["1000 roster-register", "900 bash", "800 claude", "1 claude"],
        },
        "800 ancestor verified claude-code",
    );
}

#[test]
fn refusing_init_says_what_to_name_instead() {
    let ancestry = ancestry_of(CALLER_UNDER_CLAUDE);
    let no_env = |_: &str| None;
    let query = OwnerQuery {
        flag: Some("1"),
        env: &no_env,
        parent: ancestry[1].pid,
        ancestry: &ancestry,
        pid_max: PID_MAX,
    };
    assert_eq!(
        resolve_owner(&query, &SyntheticHarnesses).unwrap_err().to_string(),
        "--pid names pid 1, init, which outlives every session and so can never own one; name the harness \
         process instead: --pid with its pid, or --pid parent from the session's shell"
    );
}

/// A caller under Copilot-like loader 500 (`node …/codex`) above its native
/// process 600, in a shell.
const CALLER_UNDER_LOADER_AND_NATIVE: &[&str] = &[
    "1000 roster-register",
    "900 bash",
    "600 codex",
    "500 node /lib/node_modules/.bin/codex",
    "400 zsh",
    "1 systemd",
];

#[test]
fn chains_the_walk_records_the_run_below_the_outermost() {
    check(
        Situation { flag: None, env: &[], tree: CALLER_UNDER_LOADER_AND_NATIVE },
        "500 ancestor verified codex chain=600",
    );
    // A run longer than a chain holds keeps the owner and the three members
    // nearest the caller (the innermost does the work), outermost first.
    check(
        Situation {
            flag: None,
            env: &[],
            tree: &[
                "1000 roster-register",
                "610 codex",
                "620 codex",
                "630 codex",
                "640 codex",
                "650 codex",
                "1 systemd",
            ],
        },
        "650 ancestor verified codex chain=630,620,610",
    );
    // Another harness above the run is not part of it.
    check(
        Situation {
            flag: None,
            env: &[],
            tree: &["1000 roster-register", "600 codex", "500 claude", "1 systemd"],
        },
        "600 ancestor verified codex",
    );
}

#[test]
fn chains_a_named_owner_keeps_the_run_below_it_and_nothing_above() {
    // --pid naming the outermost of the run: the same chain as the walk.
    check(
        Situation { flag: Some("500"), env: &[], tree: CALLER_UNDER_LOADER_AND_NATIVE },
        "500 flag verified codex chain=600",
    );
    check(
        Situation { flag: None, env: &[("ROSTER_SESSION_PID", "500")], tree: CALLER_UNDER_LOADER_AND_NATIVE },
        "500 ROSTER_SESSION_PID verified codex chain=600",
    );
    // Naming the inner process makes it the owner alone: what is above it
    // was not named.
    check(
        Situation { flag: Some("600"), env: &[], tree: CALLER_UNDER_LOADER_AND_NATIVE },
        "600 flag verified codex",
    );
    // Not an ancestor, or not a harness process: no chain.
    check(
        Situation { flag: Some("4242"), env: &[], tree: CALLER_UNDER_LOADER_AND_NATIVE },
        "4242 flag unverified -",
    );
    check(
        Situation { flag: Some("parent"), env: &[], tree: CALLER_UNDER_LOADER_AND_NATIVE },
        "900 parent verified -",
    );
}
