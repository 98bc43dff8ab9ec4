//! What the tools say when they are used wrongly or asked for colour, as a
//! user meets it. Regressions: clap's "a similar argument exists" tip was
//! dropped; suggestions for a misspelt subcommand came in clap's order,
//! not nearest first; `1w` was not a duration; a tool with subcommands run without
//! one printed its one-line description; a negative value (`--older-than
//! -1d`) was reported as an unknown argument `-1` without the flag;
//! `--color auto` coloured a `TERM=dumb` terminal; `roster-hooks status`
//! dimmed its STATE header.

use tests::{Owner, Sandbox};

#[test]
fn a_misspelt_flag_keeps_clap_suggestion_on_the_one_line() {
    let sandbox = Sandbox::new();
    let outcome = sandbox.run("roster-register", &["--agnt", "wren"]);
    outcome.expect_code(2).expect_error_line("roster-register");
    assert!(outcome.stderr.contains("a similar argument exists: '--agent'"), "{outcome}");
}

/// Regression: `roster-hooks instal` suggested `print` and `uninstall`
/// before `install`; suggestions now come nearest first by edit distance.
#[test]
fn a_misspelt_subcommand_suggests_the_nearest_first() {
    let sandbox = Sandbox::new();
    for (typed, first) in [("instal", "'install'"), ("unistall", "'uninstall'")] {
        let outcome = sandbox.run("roster-hooks", &[typed]);
        outcome.expect_code(2).expect_error_line("roster-hooks");
        let suggested = outcome.stderr.split("subcommands exist: ").nth(1).unwrap_or_default();
        assert!(suggested.starts_with(first), "{typed}: {outcome}");
    }
}

/// Regression: `roster-consent amr` got no "did you mean" while
/// `roster-hooks instal` did (clap's similarity finds no `arm` in `amr`).
/// Every subcommand of every tool, typed with two neighbouring letters
/// swapped or its last letter dropped, is suggested.
#[test]
fn every_mistyped_subcommand_of_every_tool_gets_a_suggestion() {
    let sandbox = Sandbox::new();
    let tools = [
        ("roster-consent", roster_consent::command()),
        ("roster-hooks", roster_hooks::command()),
        ("roster-register", roster_register::command()),
        ("roster-list", roster_list::command()),
        ("roster-prune", roster_prune::command()),
        ("roster-state", roster_state::command()),
        ("roster-send", roster_send::command()),
    ];
    let mut checked = 0;
    for (tool, command) in tools {
        for subcommand in command.get_subcommands().filter(|subcommand| subcommand.get_name() != "help") {
            let name = subcommand.get_name();
            let mut swapped: Vec<char> = name.chars().collect();
            swapped.swap(1, 2);
            let swapped: String = swapped.into_iter().collect();
            let shortened = &name[..name.len() - 1];
            for typed in [swapped.as_str(), shortened] {
                let outcome = sandbox.run(tool, &[typed]);
                outcome.expect_code(2).expect_error_line(tool);
                assert!(
                    outcome.stderr.contains("similar subcommand")
                        && outcome.stderr.contains(&format!("'{name}'")),
                    "{tool} {typed}: {outcome}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 16, "only {checked} typos checked: the tools lost their subcommands?");
}

#[test]
fn a_tool_with_subcommands_run_without_one_shows_usage_and_subcommands() {
    let sandbox = Sandbox::new();
    for (tool, subcommands) in [
        ("roster-consent", &["arm", "disarm", "status", "should-arm"][..]),
        ("roster-hooks", &["print", "install", "uninstall", "status"][..]),
    ] {
        let outcome = sandbox.run(tool, &[]);
        outcome.expect_code(2);
        assert!(outcome.stdout.is_empty(), "{outcome}");
        assert!(outcome.stderr.starts_with(&format!("{tool}: no subcommand given")), "{outcome}");
        assert!(outcome.stderr.contains(&format!("Usage: {tool} ")), "{outcome}");
        for subcommand in subcommands {
            assert!(
                outcome
                    .stderr
                    .lines()
                    .map(str::trim)
                    .any(|line| line == *subcommand || line.starts_with(&format!("{subcommand} "))),
                "{tool}: {subcommand} not listed\n{outcome}"
            );
        }
    }
}

#[test]
fn negative_and_empty_values_are_refused_naming_the_flag() {
    let sandbox = Sandbox::new();
    let cases: [(&str, &[&str], &str); 5] = [
        ("roster-prune", &["--older-than", "-1d"], "--older-than -1d: a negative value"),
        ("roster-register", &["--pid", "-5"], "--pid -5: a negative value"),
        ("roster-prune", &["--older-than", ""], "--older-than"),
        ("roster-list", &["--cwd", ""], "--cwd"),
        ("roster-hooks", &["install", "codex", "--bin-dir", ""], "--bin-dir"),
    ];
    for (tool, args, expect) in cases {
        let outcome = sandbox.run(tool, args);
        outcome.expect_code(2).expect_error_line(tool);
        assert!(outcome.stderr.contains(expect), "{tool} {args:?}: {outcome}");
    }
}

#[test]
fn durations_take_seconds_to_weeks() {
    let sandbox = Sandbox::new();
    for duration in ["90s", "90m", "36h", "7d", "2w"] {
        sandbox.run("roster-prune", &["--older-than", duration, "--dry-run"]).expect_code(0);
    }
    let outcome = sandbox.run("roster-prune", &["--older-than", "1y"]);
    outcome.expect_code(2);
    assert!(outcome.stderr.contains("s m h d w"), "{outcome}");
}

#[test]
fn color_always_never_and_auto_with_no_color() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let always = sandbox.run("roster-list", &["--color", "always"]);
    always.expect_code(0);
    assert!(always.stdout_text().contains("\u{1b}[32malive"), "{always}");
    let never = sandbox.run("roster-list", &["--color", "never"]);
    assert!(!never.stdout_text().contains('\u{1b}'), "{never}");
    // auto: stdout is a pipe here, so no colour; NO_COLOR cannot turn --color always off.
    let auto = sandbox.run("roster-list", &[]);
    assert!(!auto.stdout_text().contains('\u{1b}'), "{auto}");
    let forced = sandbox.run_with_env("roster-list", &["--color", "always"], &[("NO_COLOR", "1")]);
    assert!(forced.stdout_text().contains('\u{1b}'), "{forced}");
    for tool in ["roster-register", "roster-prune", "roster-consent", "roster-hooks"] {
        let help = sandbox.run(tool, &["--help"]);
        assert!(help.stdout_text().contains("--color <WHEN>"), "{tool} --help lacks --color");
    }
}

/// Regression: `--color auto` coloured a `TERM=dumb` terminal (Emacs'
/// shell, a serial console), which shows SGR sequences as garbage, and
/// `roster-hooks status` dimmed its STATE header as if it were a state.
/// Run on a pseudo-terminal, where auto colour is on for any other TERM.
#[test]
fn auto_colour_spares_dumb_terminals_and_never_paints_headers() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    for (tool, args, header) in
        [("roster-list", &[][..], "PID "), ("roster-hooks", &["status"][..], "HARNESS ")]
    {
        let coloured = sandbox.run_on_terminal(tool, args, &[("TERM", "xterm-256color")]);
        let text = coloured.stdout_text();
        assert_eq!(coloured.code(), Some(0), "{tool}: {text}");
        assert!(text.contains('\u{1b}'), "{tool}: auto colour is on for a terminal: {text:?}");
        let header_line = text.lines().find(|line| line.starts_with(header));
        let header_line = header_line.unwrap_or_else(|| panic!("{tool}: no plain header line in {text:?}"));
        assert!(!header_line.contains('\u{1b}'), "{tool}: a header is painted: {header_line:?}");

        let dumb = sandbox.run_on_terminal(tool, args, &[("TERM", "dumb")]);
        let text = dumb.stdout_text();
        assert_eq!(dumb.code(), Some(0), "{tool}: {text}");
        assert!(text.contains(header), "{tool}: {text:?}");
        assert!(!text.contains('\u{1b}'), "{tool}: TERM=dumb is coloured: {text:?}");
    }
}
