//! Fuzzes the consent configuration parsers (docs/contract.md §7): the repository's
//! `.roster.toml` and the user's `config.toml`. Any bytes give a
//! configuration or a problem, never a panic.

#![no_main]

use consent::{ConfigOutcome, parse_repo_config, parse_user_config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let repo = parse_repo_config(data);
    let _ = ConfigOutcome::of_repo(&repo).error();
    let _ = parse_user_config(data);
});
