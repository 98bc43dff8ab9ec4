//! Hook-config editing (docs/contract.md §8.3): wires roster's two hook calls, SessionStart
//! → `roster-register --hook <harness>` and SessionEnd → `roster-prune --current
//! --hook <harness>`, into each hook-capable harness's own configuration file.
//!
//! It lives in the harness crate because the file locations, shapes and event
//! names are facts about the harnesses, like their process patterns and
//! payloads. The work is split so that most of it can be tested without a disk:
//! `commands` builds and recognises the command lines, `document` merges and
//! removes them in a parsed file (pure functions over `serde_json::Value`),
//! `files` reads and backs up a file and installs, removes or reports the
//! hooks in it, `plugins` does the same for the harnesses that load a plugin
//! file, `writing` replaces a file atomically, `codex_trust` reads the trust
//! entries Codex keeps in its `config.toml`, and `programs` tells whether
//! the program a hook runs can run, and `notes` what the user must know
//! about a harness beyond its file. `types` holds the words all of them use
//! and `outcomes` what install, uninstall and status report.

mod codex_trust;
mod commands;
mod document;
mod files;
mod jsonc;
mod notes;
mod outcomes;
mod plugins;
mod programs;
mod types;
mod writing;

pub use codex_trust::codex_trust_key;
pub use commands::{HookCommands, RosterHookCall, shell_quote};
pub use document::{
    FoundHook, InstalledHooks, find_installed_hooks, hook_snippet, parse_hook_document, print_document,
    with_hooks_installed, with_hooks_removed,
};
pub use files::{CODEX_TRUST_HINT, backup_path_for, install, status, uninstall};
pub use notes::{harness_notes, install_notes};
pub use outcomes::{HookState, HookStatus, InstallOutcome, UninstallOutcome};
pub use plugins::{PLUGIN_MARKER, plugin_text};
pub use programs::cargo_build_directory;
pub use types::{HookConfigError, HookConfigFile, HookEvent, HookHarness, HookPaths, Scope};
pub use writing::write_atomically;
