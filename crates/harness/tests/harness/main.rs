//! The harness library at its public face: detection from captures and its
//! traps, environment exports, hook payloads parsed and read, and hook
//! config files edited and round-tripped. One test binary, a module per
//! concern.

mod detect_support;

mod detect_captures;
mod detect_traps;
mod exports_env;
mod hook_config_documents;
mod hook_config_files;
mod hook_config_round_trip;
mod payload_parse;
mod payload_read;
