//! The binaries roster ships, each with the clap definition it runs and the
//! manual its `--help` renders: the one list every generated page (each
//! tool's, and `roster(7)`'s list of tools and SEE ALSO), completion,
//! package entry and description, and installation is made from, so that a
//! new tool added here is in all of them.

/// One binary: its name, the clap definition it runs and the manual its
/// `--help` renders, both defined in its own crate.
pub struct Binary {
    pub name: &'static str,
    pub command: fn() -> clap::Command,
    pub manual: fn() -> cli_support::manual::Manual,
}

/// The binaries, in the order pages and completions are generated.
pub const BINARIES: [Binary; 11] = [
    Binary { name: "roster-register", command: roster_register::command, manual: roster_register::manual },
    Binary { name: "roster-list", command: roster_list::command, manual: roster_list::manual },
    Binary { name: "roster-prune", command: roster_prune::command, manual: roster_prune::manual },
    Binary { name: "roster-consent", command: roster_consent::command, manual: roster_consent::manual },
    Binary { name: "roster-hooks", command: roster_hooks::command, manual: roster_hooks::manual },
    Binary { name: "roster-state", command: roster_state::command, manual: roster_state::manual },
    Binary { name: "roster-send", command: roster_send::command, manual: roster_send::manual },
    Binary { name: "roster-focus", command: roster_focus::command, manual: roster_focus::manual },
    Binary { name: "roster-resume", command: roster_resume::command, manual: roster_resume::manual },
    Binary { name: "roster-top", command: roster_top::command, manual: roster_top::manual },
    Binary { name: "roster-notify", command: roster_notify::command, manual: roster_notify::manual },
];

/// The names of [`BINARIES`], in the same order.
pub const BINARY_NAMES: [&str; 11] = [
    BINARIES[0].name,
    BINARIES[1].name,
    BINARIES[2].name,
    BINARIES[3].name,
    BINARIES[4].name,
    BINARIES[5].name,
    BINARIES[6].name,
    BINARIES[7].name,
    BINARIES[8].name,
    BINARIES[9].name,
    BINARIES[10].name,
];

/// The binaries' names as prose: `roster-register, ..., roster-state and
/// roster-send`.
pub fn binary_names_in_prose() -> String {
    match BINARY_NAMES.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, init)) => format!("{} and {last}", init.join(", ")),
        None => String::new(),
    }
}

/// Each binary's man page reference, `roster-register(1)` and so on, in
/// [`BINARIES`] order: what every SEE ALSO lists.
pub fn binary_pages() -> Vec<String> {
    BINARY_NAMES.iter().map(|name| format!("{name}(1)")).collect()
}
