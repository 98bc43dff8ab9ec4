//! The owner-liveness library at its public face: the ancestry walk,
//! owners resolved from tables and from real processes, and the verdict
//! table. One test binary, a module per concern.

mod ancestry_walk;
mod real_processes;
mod resolve_table;
mod verdict_table;
