//! The flags every roster binary takes (docs/contract.md §6): `--dir`, `--format`,
//! `--json` and `--quiet`. `--help` and `--version` come from clap itself.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Output for people (`text`) or for scripts (`json`, the stable contract).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
}

/// Flags shared by every binary; flatten into each tool's clap struct.
#[derive(Clone, Debug, Default, Args)]
pub struct CommonArgs {
    /// Use DIR as the roster directory (beats ROSTER_DIR and the default
    /// $XDG_STATE_HOME/roster, else ~/.local/state/roster)
    #[arg(long, value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

    /// Print for people (text) or for scripts (json, the stable contract)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = OutputFormat::Text, global = true)]
    pub format: OutputFormat,

    /// Print JSON, same as --format json
    #[arg(long, global = true)]
    pub json: bool,

    /// Print nothing on success; errors still go to stderr
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

impl CommonArgs {
    /// The format asked for, `--json` winning over `--format`.
    pub fn output_format(&self) -> OutputFormat {
        if self.json { OutputFormat::Json } else { self.format }
    }
}
