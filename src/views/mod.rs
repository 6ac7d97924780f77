//! The `query_project` payloads, computed from the plan and the forecast report.
//!
//! Each view is a plain serialisable struct with the seed's field names (camelCase, compact). The site is
//! rendered from the same structs, so a page never shows a number the tools would not.

pub mod board;
pub mod directives;
pub mod runway;

use serde::{Deserialize, Serialize};

use crate::forecast::ForecastReport;
use crate::plan::Plan;

pub use board::{Board, BoardCard, BoardColumn};
pub use runway::{Band, Capacity, Runway, RunwayCutLine, RunwayMilestone};

/// What every view is computed from.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The effective plan.
    pub plan: &'a Plan,
    /// The forecast.
    pub report: &'a ForecastReport,
}

/// The overview on the site's front page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    /// Day 0 of the forecast.
    pub as_of: String,
    /// How many issues in each column, in board order.
    pub columns: Vec<ColumnCount>,
    /// Open issues in all.
    pub open_issues: usize,
    /// Trials run.
    pub trials: u32,
    /// The seed.
    pub seed: u64,
    /// Whether the forecast uses the cold-start prior.
    pub cold_start: bool,
    /// Problems found in the run.
    pub warnings: Vec<String>,
}

/// One column's count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnCount {
    /// `diagnosis` … `done`.
    pub state: String,
    /// Human title.
    pub title: String,
    /// How many.
    pub count: usize,
}

/// The front page's overview.
pub fn overview(inputs: Inputs<'_>) -> Overview {
    let columns = crate::domain::Lifecycle::ALL
        .iter()
        .map(|c| ColumnCount {
            state: c.as_str().to_owned(),
            title: c.title().to_owned(),
            count: inputs
                .plan
                .issues
                .iter()
                .filter(|i| i.lifecycle == *c)
                .count(),
        })
        .collect();
    Overview {
        as_of: inputs.report.as_of.to_string(),
        columns,
        open_issues: inputs.report.issues.len(),
        trials: inputs.report.trials,
        seed: inputs.report.seed,
        cold_start: inputs.report.calibration.cold_start,
        warnings: inputs.report.warnings.clone(),
    }
}
