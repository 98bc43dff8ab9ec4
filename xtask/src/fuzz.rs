//! `cargo xtask fuzz`: being written.
pub fn run(_seconds: u64) -> anyhow::Result<()> {
    anyhow::bail!("fuzz is being written")
}
