//! The benchmark's results: the table people read, the verdict on each
//! target of docs/contract.md §9, and the same facts as JSON for later comparison.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::json;

use ::tests::measure::{Samples, milliseconds};

/// One measured figure: a command at one registry size.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Short name, the table's row (`register`, `list --format json`, …).
    pub name: &'static str,
    /// Records in the registry; `None` for figures without a registry.
    pub records: Option<usize>,
    pub samples: Samples,
    /// The shell line that reproduces one run.
    pub reproduce: String,
}

/// A target: our figure against its floor (what the fastest possible
/// program pays, or the bound itself), their ratio and the ratio's limit
/// (`None`: only reported).
#[derive(Clone, Debug)]
pub struct RatioCheck {
    pub description: String,
    pub ours: f64,
    pub floor: f64,
    /// The unit of `ours` and `floor` (`ms`, `MiB`, `µs/record`).
    pub unit: &'static str,
    pub limit: Option<f64>,
    /// The middle half of the ratios round by round (25th to 75th
    /// percentile), where ours and its floor were timed in the same rounds.
    pub spread: Option<(f64, f64)>,
    /// The ratio the first time, when the row missed its target and was
    /// measured again: a missed row is repeated once before it is called.
    pub first_attempt: Option<f64>,
}

/// The concurrent-writers figure.
#[derive(Clone, Debug)]
pub struct Contention {
    pub writers: usize,
    pub registrations_per_writer: usize,
    pub succeeded: usize,
    /// A few of the failures' messages, for the report.
    pub failures: Vec<String>,
    pub failed: usize,
    pub wall: Duration,
    pub latencies: Samples,
    /// The same writers registering the same owners each into a registry
    /// of its own: the same processes without a lock to share.
    pub uncontended: Samples,
}

/// Everything one benchmark run found.
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub sizes: Vec<usize>,
    /// Timed rounds per figure, and for register, the state hook and send.
    pub rounds: usize,
    pub register_rounds: usize,
    pub quick: bool,
    pub figures: Vec<Figure>,
    pub ratios: Vec<RatioCheck>,
    pub contention: Contention,
    /// The filesystem the registries were on (`tmpfs`, `ext4`, …) and where.
    pub filesystem: String,
}

impl RatioCheck {
    pub fn ratio(&self) -> f64 {
        if self.floor <= 0.0 {
            return f64::INFINITY;
        }
        self.ours / self.floor
    }

    /// A figure against its floor or bound, in `unit`.
    pub fn new(
        description: String,
        ours: f64,
        floor: f64,
        unit: &'static str,
        limit: Option<f64>,
    ) -> RatioCheck {
        RatioCheck { description, ours, floor, unit, limit, spread: None, first_attempt: None }
    }

    /// Two durations in milliseconds.
    pub fn of_durations(
        description: String,
        ours: Duration,
        floor: Duration,
        limit: Option<f64>,
    ) -> RatioCheck {
        RatioCheck::new(description, milliseconds(ours), milliseconds(floor), "ms", limit)
    }

    /// The medians of two figures timed in the same rounds, with the spread
    /// of their ratio round by round (the n-th sample of each is the n-th
    /// round's).
    pub fn of_rounds(description: String, ours: &Samples, floor: &Samples, limit: Option<f64>) -> RatioCheck {
        let mut check = RatioCheck::of_durations(description, ours.median(), floor.median(), limit);
        if ours.durations.len() == floor.durations.len() && !ours.durations.is_empty() {
            let mut ratios: Vec<f64> = ours
                .durations
                .iter()
                .zip(&floor.durations)
                .map(|(ours, floor)| ours.as_secs_f64() / floor.as_secs_f64().max(f64::EPSILON))
                .collect();
            ratios.sort_by(f64::total_cmp);
            let at = |fraction: f64| ratios[((ratios.len() - 1) as f64 * fraction).round() as usize];
            check.spread = Some((at(0.25), at(0.75)));
        }
        check
    }

    /// This check, measured again after `first` missed its target.
    pub fn repeated_after(mut self, first: &RatioCheck) -> RatioCheck {
        self.first_attempt = Some(first.ratio());
        self
    }

    pub fn met(&self) -> bool {
        self.limit.is_none_or(|limit| self.ratio() <= limit)
    }
}

impl Contention {
    pub fn throughput_per_second(&self) -> f64 {
        self.succeeded as f64 / self.wall.as_secs_f64().max(f64::EPSILON)
    }
}

impl BenchReport {
    pub fn figure(&self, name: &str, records: Option<usize>) -> Option<&Figure> {
        self.figures.iter().find(|figure| figure.name == name && figure.records == records)
    }

    /// Whether every bounded ratio held and no contended write failed.
    pub fn all_targets_met(&self) -> bool {
        self.ratios.iter().all(RatioCheck::met) && self.contention.failed == 0
    }

    /// The registry sizes the figures were taken at: the seeded sizes, and
    /// any other a figure names (the state hook's registry of one session).
    fn columns(&self) -> Vec<usize> {
        let mut columns = self.sizes.clone();
        columns.extend(self.figures.iter().filter_map(|figure| figure.records));
        columns.sort_unstable();
        columns.dedup();
        columns
    }

    /// The table: one row per command, one column per registry size, each
    /// cell `median [min–max]` in milliseconds; then the ratios.
    pub fn render_table(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "roster bench on {}: median [min–max] of {} rounds ({} for register, the state hook, send and \
             /bin/true) after one warm-up, milliseconds of wall time per process",
            self.filesystem, self.rounds, self.register_rounds
        );
        let mut names: Vec<&'static str> = Vec::new();
        for figure in &self.figures {
            if !names.contains(&figure.name) {
                names.push(figure.name);
            }
        }
        let name_width = names.iter().map(|name| name.chars().count()).max().unwrap_or(0).max(8);
        const CELL: usize = 24;
        let columns = self.columns();
        let _ = write!(text, "{:name_width$}", "");
        for &size in &columns {
            let records = if size == 1 { "record" } else { "records" };
            let _ = write!(text, "  {:>CELL$}", format!("{} {records}", thousands(size)));
        }
        text.push('\n');
        for name in names {
            let _ = write!(text, "{name:name_width$}");
            let without_registry = self.figure(name, None);
            for size in &columns {
                let cell = match (self.figure(name, Some(*size)), without_registry) {
                    (Some(figure), _) => cell(&figure.samples),
                    (None, Some(figure)) if *size == columns[0] => cell(&figure.samples),
                    _ => "-".to_owned(),
                };
                let _ = write!(text, "  {cell:>CELL$}");
            }
            text.push('\n');
        }
        text.push('\n');
        let width =
            self.ratios.iter().map(|ratio| ratio.description.chars().count()).max().unwrap_or(0).max(6);
        let _ = writeln!(
            text,
            "{:width$}  {:>14}  {:>14}  {:>7}  {:>13}  {:>7}  verdict",
            "figure", "ours", "floor", "ratio", "spread", "target"
        );
        for ratio in &self.ratios {
            let target = ratio.limit.map_or("-".to_owned(), |limit| format!("≤{limit}×"));
            let verdict = match ratio.limit {
                None => "reported",
                Some(_) if self.quick => "not judged (quick)",
                Some(_) if ratio.met() => "met",
                Some(_) => "MISSED",
            };
            let repeated = ratio
                .first_attempt
                .map(|first| format!(" (repeated: the first time {first:.2}×)"))
                .unwrap_or_default();
            let spread = ratio.spread.map_or("-".to_owned(), |(low, high)| format!("{low:.2}–{high:.2}×"));
            let _ = writeln!(
                text,
                "{:width$}  {:>14}  {:>14}  {:>6.2}×  {:>13}  {:>7}  {verdict}{repeated}",
                ratio.description,
                format!("{:.2} {}", ratio.ours, ratio.unit),
                format!("{:.2} {}", ratio.floor, ratio.unit),
                ratio.ratio(),
                spread,
                target,
            );
        }
        let contention = &self.contention;
        let _ = writeln!(
            text,
            "contention: {} writers × {} registrations: {} ok, {} failed in {:.2} s = {:.0} registrations/s; \
             latency median {:.2} ms, p99 {:.2} ms, worst wait {:.2} ms; \
             a registry each: median {:.2} ms, p99 {:.2} ms, worst {:.2} ms",
            contention.writers,
            contention.registrations_per_writer,
            contention.succeeded,
            contention.failed,
            contention.wall.as_secs_f64(),
            contention.throughput_per_second(),
            milliseconds(contention.latencies.median()),
            milliseconds(contention.latencies.percentile(0.99)),
            milliseconds(contention.latencies.max()),
            milliseconds(contention.uncontended.median()),
            milliseconds(contention.uncontended.percentile(0.99)),
            milliseconds(contention.uncontended.max()),
        );
        for failure in &contention.failures {
            let _ = writeln!(text, "  failed: {failure}");
        }
        text
    }

    pub fn to_json(&self) -> serde_json::Value {
        let figures: Vec<serde_json::Value> = self
            .figures
            .iter()
            .map(|figure| {
                json!({
                    "name": figure.name,
                    "records": figure.records,
                    "median_ms": milliseconds(figure.samples.median()),
                    "min_ms": milliseconds(figure.samples.min()),
                    "max_ms": milliseconds(figure.samples.max()),
                    "samples_ms": figure.samples.durations.iter().map(|d| milliseconds(*d)).collect::<Vec<_>>(),
                    "reproduce": figure.reproduce,
                })
            })
            .collect();
        let ratios: Vec<serde_json::Value> = self
            .ratios
            .iter()
            .map(|ratio| {
                json!({
                    "figure": ratio.description,
                    "ours": ratio.ours,
                    "floor": ratio.floor,
                    "unit": ratio.unit,
                    "ratio": ratio.ratio(),
                    "target": ratio.limit,
                    "spread": ratio.spread.map(|(low, high)| [low, high]),
                    "first_attempt": ratio.first_attempt,
                    "met": ratio.met(),
                })
            })
            .collect();
        let contention = &self.contention;
        json!({
            "filesystem": self.filesystem,
            "sizes": self.sizes,
            "rounds": self.rounds,
            "register_rounds": self.register_rounds,
            "quick": self.quick,
            "figures": figures,
            "ratios": ratios,
            "contention": {
                "writers": contention.writers,
                "registrations_per_writer": contention.registrations_per_writer,
                "succeeded": contention.succeeded,
                "failed": contention.failed,
                "failures": contention.failures,
                "wall_s": contention.wall.as_secs_f64(),
                "registrations_per_second": contention.throughput_per_second(),
                "median_ms": milliseconds(contention.latencies.median()),
                "p99_ms": milliseconds(contention.latencies.percentile(0.99)),
                "worst_ms": milliseconds(contention.latencies.max()),
                "a_registry_each": {
                    "median_ms": milliseconds(contention.uncontended.median()),
                    "p99_ms": milliseconds(contention.uncontended.percentile(0.99)),
                    "worst_ms": milliseconds(contention.uncontended.max()),
                },
            },
            "all_targets_met": self.all_targets_met(),
        })
    }
}

fn cell(samples: &Samples) -> String {
    format!(
        "{:.2} [{:.2}–{:.2}]",
        milliseconds(samples.median()),
        milliseconds(samples.min()),
        milliseconds(samples.max())
    )
}

/// `10,000` as people write it.
pub fn thousands(value: usize) -> String {
    let digits = value.to_string();
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(10000), "10,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn ratios_judge_against_their_limit() {
        let check = |numerator: u64, limit: Option<f64>| {
            RatioCheck::of_durations(
                String::new(),
                Duration::from_millis(numerator),
                Duration::from_millis(10),
                limit,
            )
        };
        assert!(check(13, Some(1.3)).met());
        assert!(!check(14, Some(1.3)).met());
        assert!(check(1000, None).met());
    }
}
