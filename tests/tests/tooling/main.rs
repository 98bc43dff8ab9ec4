//! What ships around the binaries: exit codes, help and man pages, the
//! generated files, the documents and their citations of the contract, the
//! installation and the Debian package. One test binary, a module per
//! concern; the installation and the package share one release build, which
//! is why they sit in one process. The harness's own parsers and counters are
//! checked here too.

mod contract_citations;
mod debian_package;
mod documents;
mod exit_codes;
mod generated_files;
mod help_and_man;
mod help_style;
mod install;
mod measurements;
mod resume_commands;
mod session_completion;
mod strace_logs;
