//! The `query_project` payloads, computed from the plan and the forecast report.
//!
//! Each view is a plain serialisable struct with the seed's field names (camelCase, compact). The site is
//! rendered from the same structs, so a page never shows a number the tools would not.

pub mod board;
pub mod calibration;
pub mod changes;
pub mod directives;
pub mod focus;
pub mod history;
pub mod index;
pub mod issue;
pub mod milestone;
pub mod person;
pub mod runway;
pub mod search;
pub mod standup;

/// A figure in a view to one decimal (`+ 0.0`: no `-0.0` in a view).
pub(crate) fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0 + 0.0
}

/// Whether a count is zero: a `skip_serializing_if` for counts a payload leaves out when nothing is
/// counted.
pub(crate) fn is_zero(n: &usize) -> bool {
    *n == 0
}

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

/// Which issues a view shows: the `query_project` filters, resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only this lifecycle column.
    pub state: Option<crate::domain::Lifecycle>,
    /// Only issues assigned (or planned) to this person, compared without case as Gitea does.
    pub assignee: Option<String>,
    /// Only issues carrying this label (without case).
    pub label: Option<String>,
    /// Only issues in this milestone.
    pub milestone: Option<u64>,
    /// How many items a list shows at most.
    pub limit: usize,
}

impl Selection {
    /// The default limit of every list.
    pub(crate) const DEFAULT_LIMIT: usize = 20;
    /// The largest limit a caller may ask for.
    pub(crate) const MAX_LIMIT: usize = 100;

    /// No filter, the default limit.
    pub fn all() -> Self {
        Self {
            limit: Self::DEFAULT_LIMIT,
            ..Self::default()
        }
    }

    /// Whether an issue passes the filters; `planned` is who the plan gives it to when nobody is assigned.
    pub fn matches(&self, issue: &crate::plan::PlannedIssue, planned: Option<&str>) -> bool {
        self.state.is_none_or(|s| issue.lifecycle == s)
            && self.milestone.is_none_or(|m| issue.milestone == Some(m))
            && self
                .label
                .as_deref()
                .is_none_or(|l| issue.labels.iter().any(|x| x.eq_ignore_ascii_case(l)))
            && self.assignee.as_deref().is_none_or(|a| {
                issue.assignees.iter().any(|x| x.eq_ignore_ascii_case(a))
                    || (issue.assignees.is_empty()
                        && planned.is_some_and(|p| p.eq_ignore_ascii_case(a)))
            })
    }
}

/// Where an open issue stands in planned order: the median plan's start, then its end, then its p50 —
/// one order for the board and the milestone page. By the p50 alone thousands of issues "not within 2
/// years" tied and were listed by number (audits 125, 155).
pub(crate) fn planned_order(
    f: &crate::forecast::IssueForecast,
) -> (
    crate::forecast::When,
    crate::forecast::When,
    crate::forecast::When,
) {
    (f.planned_start, f.planned_end, f.p50)
}
