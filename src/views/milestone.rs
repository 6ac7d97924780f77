//! The `milestone` view: one milestone's due date, forecast cone, numbers and issues.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::issue::Cone;
use super::{Band, Inputs, Selection};
use crate::domain::OpenState;

/// One milestone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneView {
    /// Day 0 of the forecast the answer comes from: its dates are as of this day (audit 122: a focus on a
    /// week-old snapshot gave dates in the past, with nothing to say so).
    pub as_of: String,
    /// Gitea id.
    pub milestone: u64,
    /// Title.
    pub title: String,
    /// Repository.
    pub repo: String,
    /// `open` or `closed`.
    pub state: String,
    /// The day it closed on Gitea, when it is closed (its cone is that day).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<String>,
    /// Due day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// Whether the due day cannot move (`deadline/hard`).
    pub hard: bool,
    /// The numbers.
    pub stats: MilestoneStats,
    /// Where an open milestone stands: `on_track`, `at_risk`, `late`, `no_due_date` or `nothing_open` (as
    /// the runway says it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<super::runway::MilestoneStatus>,
    /// When its work is done, `{p10, p50, p80}` (for a closed milestone, the day it closed): the work that will stay in it while the abandonment model
    /// says which open issues leave (then `plannedCone` is given too), else all the work planned in it.
    /// Absent for an open milestone with nothing open: there is no date to forecast (audit 101: "done
    /// today" was read off it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cone: Option<Cone>,
    /// When all the work planned in it today is done (never, in a future where any of it is never done),
    /// beside the headline cone of the work that stays; absent while the model has too little history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_cone: Option<Cone>,
    /// How many open issues are expected to leave it (not done within the abandonment window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_leaving: Option<f64>,
    /// For a hard deadline p80 misses: the issues to take out, lowest priority first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_line: Vec<String>,
    /// Whether the cut line takes every open issue: only emptying the milestone meets the deadline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_line_empties_milestone: bool,
    /// Whether even the whole cut line falls short of the deadline (every issue that can be cut).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_line_falls_short: bool,
    /// Its open issues in planned order; cut to the limit, those done last (latest p80), which set its
    /// date.
    pub issues: Vec<MilestoneIssue>,
    /// Its open issues in a dependency cycle, which its dates leave out until the cycle is broken
    /// (`remove_dep`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Open issues the list leaves out (beyond `limit`).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub issues_omitted: usize,
}

/// A milestone's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneStats {
    /// Open issues.
    pub open: usize,
    /// Closed issues.
    pub closed: usize,
    /// Remaining effort in working hours (medians).
    pub remaining_hours: f64,
    /// Open issues with no estimate (their hours imputed).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub unestimated: usize,
    /// Share of simulated futures that meet the due day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_on_time: Option<f64>,
    /// Working days between p80 and the due day (negative: late).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack: Option<i64>,
    /// The chance that all the work planned in it is done within the horizon, while the abandonment
    /// model says which open issues leave (the site says it beside a planned cone beyond the horizon).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
}

/// One open issue of the milestone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MilestoneIssue {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title.
    pub title: String,
    /// Lifecycle column.
    pub state: String,
    /// Assignee, or who the plan gives it to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// Whether `assignee` is who the plan gives it to, nobody being assigned on Gitea.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub planned: bool,
    /// `{p50, p80}`.
    pub band: Band,
    /// True when it is in a dependency cycle: not forecast (its band only placeholders) until the cycle
    /// is broken.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cycle: bool,
}

/// The milestone view of `id`; `None` when there is no such milestone.
pub fn milestone(inputs: Inputs<'_>, id: u64, selection: &Selection) -> Option<MilestoneView> {
    let m = inputs.report.milestones.iter().find(|m| m.id == id)?;
    let plan_issues: std::collections::HashMap<_, _> =
        inputs.plan.issues.iter().map(|i| (&i.key, i)).collect();
    let mut open: Vec<&crate::forecast::IssueForecast> = inputs
        .report
        .issues
        .iter()
        .filter(|f| f.milestone == Some(id))
        .filter(|f| {
            plan_issues
                .get(&f.issue)
                .is_some_and(|i| selection.matches(i, f.planned_assignee.as_deref()))
        })
        .collect();
    // Cut to the limit, the issues kept are those done last (latest p80): they set the milestone's date,
    // and cutting by planned order dropped exactly them (audit 140: the five behind a hard deadline's
    // p80, two months after the last band listed). Shown in planned order.
    let issues_omitted = open.len().saturating_sub(selection.limit);
    if issues_omitted > 0 {
        open.sort_by(|a, b| b.p80.cmp(&a.p80).then(a.issue.cmp(&b.issue)));
        open.truncate(selection.limit);
    }
    open.sort_by(|a, b| {
        super::planned_order(a)
            .cmp(&super::planned_order(b))
            .then(a.issue.cmp(&b.issue))
    });
    Some(MilestoneView {
        as_of: inputs.report.as_of.to_string(),
        issues_omitted,
        milestone: m.id,
        title: m.title.clone(),
        repo: m.repo.clone(),
        state: m.state.as_str().to_owned(),
        closed: m.closed.map(|d| d.to_string()),
        due: m.due.map(|d| d.to_string()),
        hard: m.hard,
        stats: MilestoneStats {
            open: m.open_issues,
            closed: m.closed_issues,
            remaining_hours: m.remaining_hours,
            unestimated: m.unestimated_issues,
            probability_on_time: m.probability_on_time,
            slack: m.stated_slack(),
            probability_done: m.probability_done,
        },
        status: (m.state == OpenState::Open)
            .then(|| super::runway::MilestoneStatus::of(m.probability_on_time, m.open_issues)),
        cone: m.has_dates().then(|| Cone {
            p10: m.p10.to_string(),
            p50: m.p50.to_string(),
            p80: m.p80.to_string(),
        }),
        planned_cone: m.planned.map(|r| Cone {
            p10: r.p10.to_string(),
            p50: r.p50.to_string(),
            p80: r.p80.to_string(),
        }),
        expected_leaving: m.expected_leaving,
        left_out: m.left_out.iter().map(ToString::to_string).collect(),
        cut_line: m
            .cut_line
            .as_ref()
            .map(|c| c.issues.iter().map(ToString::to_string).collect())
            .unwrap_or_default(),
        cut_line_empties_milestone: m.cut_line.as_ref().is_some_and(|c| c.empties_milestone),
        cut_line_falls_short: m.cut_line.as_ref().is_some_and(|c| !c.meets_deadline),
        issues: open
            .into_iter()
            .take(selection.limit)
            .map(|f| MilestoneIssue {
                issue: f.issue.to_string(),
                title: f.title.clone(),
                state: f.lifecycle.as_str().to_owned(),
                assignee: f.assignee.clone().or_else(|| f.planned_assignee.clone()),
                planned: f.assignee.is_none() && f.planned_assignee.is_some(),
                band: f.into(),
                cycle: f.in_cycle(),
            })
            .collect(),
    })
}
