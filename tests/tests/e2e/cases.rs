//! The run's table: each case of each harness, its result and hook latency, printed at the
//! end and failing the run when a case failed.

/// The result of one case.
#[derive(Clone, Debug)]
pub(super) enum CaseResult {
    Passed,
    Failed(String),
    NotRun(String),
}

/// harness × case × result × hook latency.
#[derive(Default)]
pub(super) struct CaseTable {
    rows: Vec<(String, String, CaseResult, String)>,
}

impl CaseTable {
    pub(super) fn push(&mut self, harness: &str, case: &str, result: CaseResult, latency: String) {
        self.rows.push((harness.to_owned(), case.to_owned(), result, latency));
    }

    pub(super) fn print(&self) {
        println!("{:<12} {:<34} {:<8} {:<62} detail", "HARNESS", "CASE", "RESULT", "HOOK LATENCY");
        for (harness, case, result, latency) in &self.rows {
            let (word, detail) = match result {
                CaseResult::Passed => ("ok", String::new()),
                CaseResult::Failed(why) => ("FAILED", why.clone()),
                CaseResult::NotRun(why) => ("not run", why.clone()),
            };
            let detail: String = detail.lines().next().unwrap_or_default().chars().take(400).collect();
            println!("{harness:<12} {case:<34} {word:<8} {latency:<62} {detail}");
        }
    }

    pub(super) fn failed(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|(_, _, result, _)| matches!(result, CaseResult::Failed(_)))
            .map(|(harness, case, _, _)| format!("{harness} {case}"))
            .collect()
    }
}
