//! Shell completion scripts for one binary, one per shell clap_complete
//! supports, named the way each shell expects to find them.

use clap_complete::{Generator, Shell};

/// Every shell a completion script is generated for, in file order.
pub const SHELLS: [Shell; 5] = [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Elvish, Shell::PowerShell];

/// One binary's completion script for one shell.
pub struct CompletionScript {
    pub binary: &'static str,
    pub shell: Shell,
    /// The name clap_complete gives it: `roster-list.bash`, `_roster-list`,
    /// `roster-list.fish`, `roster-list.elv`, `_roster-list.ps1`.
    pub file_name: String,
    pub script: Vec<u8>,
}

/// `binary`'s completion scripts, one per shell in [`SHELLS`].
pub fn render_completions(binary: &'static str, command: &clap::Command) -> Vec<CompletionScript> {
    SHELLS
        .into_iter()
        .map(|shell| {
            let mut command = command.clone();
            let mut script = Vec::new();
            // Writing into a Vec cannot fail, so generate's panic on a write error cannot fire.
            clap_complete::generate(shell, &mut command, binary, &mut script);
            CompletionScript { binary, shell, file_name: shell.file_name(binary), script }
        })
        .collect()
}
