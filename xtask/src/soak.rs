//! `cargo xtask soak`: being written.
pub fn run(_seconds: u64) -> anyhow::Result<()> {
    anyhow::bail!("soak is being written")
}
