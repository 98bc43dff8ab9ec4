//! The ended-session list's figure: `roster-list --ended --format json`
//! over the entries `ended/` keeps (as many as it keeps by default),
//! against `cat` of those entry files, in the same rounds.

use std::path::Path;

use anyhow::{Context, bail};
use owner_liveness::OwnerIdentity;

use super::report::Figure;
use super::{Bench, progress, reseed};
use ::tests::measure::Invocation;
use ::tests::seed::SeededRegistry;

/// The figures' names.
pub const LIST_ENDED: &str = "roster-list --ended --format json";
pub const CAT_ENDED: &str = "cat ended/*.json";

/// The entries listed: as many as `ended/` keeps by default
/// (`[ended] kept_most`), so the figure is the largest listing a user
/// who configured nothing can have.
pub const ENDED_ENTRIES: usize = registry_core::ENDED_KEPT_MOST;

impl Bench {
    /// Seeds `ENDED_ENTRIES` entries in `ended/` the way they come to be:
    /// records of dead owners (`dead`, the killed owners' identities)
    /// pruned by `roster-prune`, which keeps an entry for each; then times
    /// `roster-list --ended --format json` against `cat` of exactly those
    /// entry files, round by round. Prune runs with a configuration
    /// directory of its own, so a user's `[ended]` bounds cannot keep
    /// fewer; the count is checked.
    pub(super) fn measure_ended_listing(&self, dead: &[OwnerIdentity]) -> anyhow::Result<Vec<Figure>> {
        progress(&format!(
            "timing roster-list --ended of {} ended sessions, and cat",
            super::thousands(ENDED_ENTRIES)
        ));
        if dead.len() < ENDED_ENTRIES {
            bail!("{ENDED_ENTRIES} ended sessions need as many dead owners, only {} known", dead.len());
        }
        let root = self.scratch.join("ended-registry");
        if root.exists() {
            std::fs::remove_dir_all(&root).with_context(|| format!("remove {}", root.display()))?;
        }
        let registry = SeededRegistry::create(&root)?;
        reseed(&registry, &dead[..ENDED_ENTRIES], &self.work_directory)?;
        let no_user_configuration = self.scratch.join("no-user-configuration");
        let prune = Invocation::new(self.tool("roster-prune"))
            .arg("--dir")
            .arg(&registry.root)
            .env("XDG_CONFIG_HOME", &no_user_configuration);
        prune.time_once().context("prune the dead records into ended sessions")?;
        let ended = registry.root.join(registry_core::ENDED);
        let names = entry_names(&ended)?;
        if names.len() != ENDED_ENTRIES || !registry.record_file_names()?.is_empty() {
            bail!(
                "`{}` left {} records and {} entries in {}; {ENDED_ENTRIES} entries and no record were expected",
                prune.shell_line(),
                registry.record_file_names()?.len(),
                names.len(),
                ended.display()
            );
        }

        let list = Invocation::new(self.tool("roster-list"))
            .arg("--dir")
            .arg(&registry.root)
            .args(["--ended", "--format", "json", "--quiet"]);
        let cat = Invocation::new(&self.cat)
            .args(names.iter().map(|name| Path::new(registry_core::ENDED).join(name)))
            .in_directory(&registry.root)
            .shown_as(CAT_ENDED);
        let [list_samples, cat_samples] = self.time_in_rounds([&list, &cat])?;
        Ok(vec![
            Figure {
                name: LIST_ENDED,
                records: Some(ENDED_ENTRIES),
                samples: list_samples,
                reproduce: list.shell_line(),
            },
            Figure {
                name: CAT_ENDED,
                records: Some(ENDED_ENTRIES),
                samples: cat_samples,
                reproduce: cat.shell_line(),
            },
        ])
    }
}

/// The entry files in `ended/`, temporaries left out.
fn entry_names(ended: &Path) -> anyhow::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(ended).with_context(|| format!("read {}", ended.display()))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") && !name.starts_with('.') {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}
