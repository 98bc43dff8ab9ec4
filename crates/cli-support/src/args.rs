//! The flags every roster binary takes (docs/contract.md §6): `--dir`, `--format`,
//! `--json`, `--quiet` and `--color`. `--help` and `--version` come from clap itself.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Output for people (`text`) or for scripts (`json`, the stable contract).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
}

/// When to colour output for people.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColourChoice {
    /// On a terminal, unless NO_COLOR is set or TERM is dumb
    #[default]
    Auto,
    /// Always, even into a pipe or file
    Always,
    /// Never
    Never,
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

    /// Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColourChoice::Auto, global = true)]
    pub color: ColourChoice,
}

impl CommonArgs {
    /// Whether to colour what goes to stdout, as `--color`, NO_COLOR and TERM say.
    pub fn colour_on_stdout(&self) -> bool {
        colour_enabled(self.color, std::io::IsTerminal::is_terminal(&std::io::stdout()))
    }

    /// Whether to colour what goes to stderr (notes, warnings).
    pub fn colour_on_stderr(&self) -> bool {
        colour_enabled(self.color, std::io::IsTerminal::is_terminal(&std::io::stderr()))
    }

    /// The format asked for, `--json` winning over `--format`.
    pub fn output_format(&self) -> OutputFormat {
        if self.json { OutputFormat::Json } else { self.format }
    }
}

/// Whether to colour a stream: `--color always` and `never` say so;
/// `auto` colours a terminal only, and never with `NO_COLOR` set to a
/// non-empty value (no-color.org) or `TERM=dumb`: a dumb terminal (Emacs'
/// shell, a serial console, a pager that does not interpret escapes) shows
/// an SGR sequence as garbage.
pub fn colour_enabled(choice: ColourChoice, stream_is_terminal: bool) -> bool {
    match choice {
        ColourChoice::Always => true,
        ColourChoice::Never => false,
        ColourChoice::Auto => {
            let no_colour = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
            let dumb_terminal = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
            stream_is_terminal && !no_colour && !dumb_terminal
        }
    }
}
