//! The `board` view: issues grouped by the five lifecycle columns.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::Inputs;
use crate::domain::Lifecycle;
use crate::forecast::IssueForecast;

/// The board: five columns in lifecycle order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Board {
    /// Day 0 of the forecast.
    pub as_of: String,
    /// The columns.
    pub columns: Vec<BoardColumn>,
}

/// One column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BoardColumn {
    /// `diagnosis`, `triage`, `steeping`, `in_review` or `done`.
    pub state: String,
    /// Human title.
    pub title: String,
    /// How many issues are in the column (the list may be cut to `limit`).
    pub count: usize,
    /// The issues: open ones in planned order (the median plan's start, then its end), done ones most
    /// recently closed first.
    pub issues: Vec<BoardCard>,
}

/// One issue on the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BoardCard {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title.
    pub title: String,
    /// Assignee, or who the plan gives it to (marked `planned`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// Whether `assignee` is only the plan's choice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub planned: bool,
    /// `p/0`..`p/3`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// The estimate: its label text (`2d`), or Gitea's own time estimate in hours (`1.5h`); when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<String>,
    /// Whether `estimate` is Gitea's own time estimate, not an `est/*` label.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub native_estimate: bool,
    /// Milestone title, with its repository where another milestone has the same title
    /// ([`crate::plan::milestone_names`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<String>,
    /// Forecast range `{p50, p80}` of open issues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<super::Band>,
    /// True when it is in a dependency cycle: left out of the forecast (no `forecast`) until the cycle is
    /// broken.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cycle: bool,
    /// When it was closed (done column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<String>,
    /// The open issues it waits on (the first [`WAITS_SHOWN`]): why it starts no earlier than they end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits_on: Vec<Blocker>,
    /// How many more open issues it waits on than `waits_on` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waits_on_more: u64,
    /// How many more issues it waits on that the token may not read (Gitea hides them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hidden_blockers: u64,
}

/// The open blockers a card lists at most; the rest are counted.
pub const WAITS_SHOWN: usize = 3;

/// An open issue a card waits on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Blocker {
    /// `owner/repo#N`.
    pub issue: String,
    /// Whether it is in a repository `commitea.yaml` does not name: open as Gitea last said, and not
    /// forecast (no page of its own).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outside: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The open issues `issue` waits on, in its order: of the plan's issues those `open` holds, of the
/// outside ones those Gitea last gave as open.
fn waits_on(
    issue: &crate::plan::PlannedIssue,
    open: &HashSet<&crate::domain::IssueKey>,
) -> Vec<Blocker> {
    issue
        .depends_on
        .iter()
        .filter_map(|k| {
            let outside = issue.outside_blockers.iter().find(|o| &o.issue == k);
            let waits = outside.map_or_else(
                || open.contains(k),
                |o| o.state == crate::domain::OpenState::Open,
            );
            waits.then(|| Blocker {
                issue: k.to_string(),
                outside: outside.is_some(),
            })
        })
        .collect()
}

/// The open issues of `plan`.
fn open_issues(plan: &crate::plan::Plan) -> HashSet<&crate::domain::IssueKey> {
    plan.issues
        .iter()
        .filter(|i| i.state == crate::domain::OpenState::Open)
        .map(|i| &i.key)
        .collect()
}

/// The board; `limit` cuts each column's list (the count stays whole).
pub fn board(inputs: Inputs<'_>, limit: Option<usize>) -> Board {
    let open = open_issues(inputs.plan);
    board_with(inputs, limit, &open)
}

/// [`board`], with what is open read from the whole plan (`inputs` may hold a selection of it).
fn board_with(
    inputs: Inputs<'_>,
    limit: Option<usize>,
    open: &HashSet<&crate::domain::IssueKey>,
) -> Board {
    let fc: HashMap<&crate::domain::IssueKey, (usize, &IssueForecast)> = inputs
        .report
        .issues
        .iter()
        .enumerate()
        .map(|(n, f)| (&f.issue, (n, f)))
        .collect();
    let milestone_names = inputs.plan.milestone_names();
    let mut columns = Vec::new();
    for col in Lifecycle::ALL {
        let mut members: Vec<&crate::plan::PlannedIssue> = inputs
            .plan
            .issues
            .iter()
            .filter(|i| i.lifecycle == col)
            .collect();
        if col == Lifecycle::Done {
            members.sort_by(|a, b| {
                b.closed_at
                    .cmp(&a.closed_at)
                    .then_with(|| a.key.cmp(&b.key))
            });
        } else {
            // Planned order: the median plan's start, then its end, then the median, then key. By the
            // median alone, thousands of issues "not within 2 years" (done in under half the futures)
            // tied, and the 200 a column shows were one repository's by number (audit 125: 17 issues
            // planned to start today hidden behind p/3 work planned for next November).
            members.sort_by(|a, b| {
                let key = |i: &crate::plan::PlannedIssue| {
                    fc.get(&i.key).map(|(_, f)| super::planned_order(f))
                };
                key(a).cmp(&key(b)).then_with(|| a.key.cmp(&b.key))
            });
        }
        let count = members.len();
        let issues = members
            .into_iter()
            .take(limit.unwrap_or(usize::MAX))
            .map(|i| {
                let f = fc.get(&i.key).map(|(_, f)| *f);
                let blockers = if col == Lifecycle::Done {
                    Vec::new()
                } else {
                    waits_on(i, open)
                };
                let (assignee, planned) =
                    match (&i.assignee, f.and_then(|f| f.planned_assignee.clone())) {
                        (Some(a), _) => (Some(a.clone()), false),
                        (None, Some(p)) if col != Lifecycle::Done => (Some(p), true),
                        _ => (None, false),
                    };
                BoardCard {
                    issue: i.key.to_string(),
                    title: i.title.clone(),
                    assignee,
                    planned,
                    priority: i.priority_set.then(|| i.priority.to_string()),
                    estimate: i.estimate_text(),
                    native_estimate: i.estimate_source == crate::plan::EstimateSource::Native,
                    milestone: i.milestone.and_then(|m| milestone_names.get(&m).cloned()),
                    forecast: f.filter(|f| !f.in_cycle()).map(|f| super::Band {
                        p50: f.p50.to_string(),
                        p80: f.p80.to_string(),
                    }),
                    cycle: f.is_some_and(crate::forecast::IssueForecast::in_cycle),
                    closed: i.closed_at.map(|c| inputs.plan.zone.date_of(c).to_string()),
                    waits_on_more: blockers.len().saturating_sub(WAITS_SHOWN) as u64,
                    waits_on: blockers.into_iter().take(WAITS_SHOWN).collect(),
                    hidden_blockers: if col == Lifecycle::Done {
                        0
                    } else {
                        i.hidden_blockers
                    },
                }
            })
            .collect();
        columns.push(BoardColumn {
            state: col.as_str().to_owned(),
            title: col.title().to_owned(),
            count,
            issues,
        });
    }
    Board {
        as_of: inputs.report.as_of.to_string(),
        columns,
    }
}

/// The board narrowed by the `query_project` filters. `limit` is the number of cards over the whole board,
/// shared equally by the columns shown (at least one each); every column's `count` stays whole.
pub(crate) fn board_selected(inputs: Inputs<'_>, selection: &super::Selection) -> Board {
    let planned: HashMap<&crate::domain::IssueKey, Option<&str>> = inputs
        .report
        .issues
        .iter()
        .map(|f| (&f.issue, f.planned_assignee.as_deref()))
        .collect();
    let plan = crate::plan::Plan {
        issues: inputs
            .plan
            .issues
            .iter()
            .filter(|i| selection.matches(i, planned.get(&i.key).copied().flatten()))
            .cloned()
            .collect(),
        ..inputs.plan.clone()
    };
    let shown = if selection.state.is_some() {
        1
    } else {
        Lifecycle::ALL.len()
    };
    let per_column = (selection.limit / shown).max(1);
    let mut b = board_with(
        Inputs {
            plan: &plan,
            report: inputs.report,
        },
        Some(per_column),
        &open_issues(inputs.plan),
    );
    if let Some(s) = selection.state {
        b.columns.retain(|c| c.state == s.as_str());
    }
    b
}
