//! The `runway` view: each milestone's due date, forecast band and slack, and the team's capacity.

use serde::{Deserialize, Serialize};

use super::Inputs;
use crate::domain::OpenState;

/// Where a milestone stands against its due date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MilestoneStatus {
    /// P(on time) at least 80%.
    OnTrack,
    /// P(on time) at least 50%, under 80%.
    AtRisk,
    /// P(on time) under 50%.
    Late,
    /// No due date to be on time for.
    NoDueDate,
    /// Nothing open in it: no work to be on time with (close it, or add the work it still needs).
    NothingOpen,
}

impl MilestoneStatus {
    /// The P(on time) from which a milestone is on track.
    pub const ON_TRACK_FROM: f64 = 0.8;
    /// The P(on time) from which a milestone is at risk rather than late.
    pub const AT_RISK_FROM: f64 = 0.5;

    /// The status of a milestone with this P(on time) (none: no due date) and this many open issues.
    pub fn of(probability_on_time: Option<f64>, open_issues: usize) -> Self {
        match probability_on_time {
            _ if open_issues == 0 => Self::NothingOpen,
            None => Self::NoDueDate,
            Some(p) if p >= Self::ON_TRACK_FROM => Self::OnTrack,
            Some(p) if p >= Self::AT_RISK_FROM => Self::AtRisk,
            Some(_) => Self::Late,
        }
    }

    /// The status in words: `on track`, `at risk`, `late`, `no due date` or `nothing open`.
    pub fn label(self) -> &'static str {
        match self {
            Self::OnTrack => "on track",
            Self::AtRisk => "at risk",
            Self::Late => "late",
            Self::NoDueDate => "no due date",
            Self::NothingOpen => "nothing open",
        }
    }
}
/// A forecast band: the median and the 80th percentile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Band {
    /// Median date (or `beyond horizon`).
    pub p50: String,
    /// 80th-percentile date (or `beyond horizon`).
    pub p80: String,
}

/// The runway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Runway {
    /// Day 0 of the forecast.
    pub as_of: String,
    /// Open milestones, earliest due first (those without a due date last).
    pub milestones: Vec<RunwayMilestone>,
    /// Each person's load.
    pub capacity: Vec<Capacity>,
    /// Open milestones the filters kept that `limit` left out.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub milestones_omitted: usize,
    /// People the filters kept that `limit` left out.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub capacity_omitted: usize,
}

/// One milestone on the runway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunwayMilestone {
    /// Gitea id.
    pub milestone: u64,
    /// Title.
    pub title: String,
    /// Repository.
    pub repo: String,
    /// Due date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// Whether the due date cannot move.
    pub hard: bool,
    /// `{p50, p80}` of when its work is done: the work that will stay in it while the abandonment model
    /// says which open issues leave (then `planned` is given too), else all the work planned in it.
    /// Absent when nothing is open in it (status `nothing_open`): there is no work to date, and today's
    /// date would read as "done today".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<Band>,
    /// p10 of the same; absent with `band`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p10: Option<String>,
    /// Working days from p80 to the due date; negative when late. Absent when p80 is beyond the
    /// horizon (it would be counted to the horizon, not to the work) or nothing is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack: Option<i64>,
    /// Share of simulated futures that meet the due date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_on_time: Option<f64>,
    /// Open issues left.
    pub open_issues: usize,
    /// Closed issues.
    pub closed_issues: usize,
    /// Remaining effort in working hours (medians).
    pub remaining_hours: f64,
    /// Open issues with no estimate (their hours imputed).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub unestimated_issues: usize,
    /// `on_track`, `at_risk` (P(on time) under 80%), `late` (under 50%), `no_due_date`, or `nothing_open`
    /// (no open issue in it).
    pub status: MilestoneStatus,
    /// For a hard deadline p80 misses: what would have to leave the milestone to meet it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_line: Option<RunwayCutLine>,
    /// `{p50, p80}` of all the work planned in it today (never, in a future where any of it is never done),
    /// beside the headline band of the work that stays; absent while the model has too little history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Band>,
    /// Open issues expected to leave it (not done within the abandonment window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_leaving: Option<f64>,
    /// The probability that everything planned in it today is done within the horizon, when the
    /// abandonment model says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
    /// Whether its due date passed with work open.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overdue: bool,
    /// The probability that the work that stays is done within the horizon, beside `planned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staying_done: Option<f64>,
}

/// The cut line of a hard deadline, as the runway shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunwayCutLine {
    /// The issues to take out, lowest priority first.
    pub issues: Vec<String>,
    /// Issues of the cut that `limit` left out of `issues` (the last ones: the most valuable).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub issues_omitted: usize,
    /// Their remaining hours.
    pub hours: f64,
    /// The milestone's p80 without them, on the schedule with the work kept committed (assumed done).
    pub p80: String,
    /// P(on time) without them, the same way: not the headline's, which takes out what the abandonment
    /// model expects to leave.
    pub probability_on_time: f64,
    /// False when even cutting every issue that can be cut does not meet the deadline.
    pub meets_deadline: bool,
    /// True when the cut was too long to check each issue of it: its least valuable ones are listed as
    /// found, and may not all be needed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untrimmed: bool,
    /// True when it takes every open issue: only emptying the milestone meets the deadline.
    pub empties_milestone: bool,
}

/// One person's load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capacity {
    /// Gitea username.
    pub person: String,
    /// Hours in a full week.
    pub hours_per_week: f64,
    /// Open issues planned for them.
    pub queued: usize,
    /// Hours planned for them (medians).
    pub planned_hours: f64,
    /// When their queue empties in the median plan.
    pub busy_until: String,
    /// Their hours set by the PM's capacity directives for a period (see the person view).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity_changes: Vec<super::person::CapacityChange>,
}

/// The runway.
pub fn runway(inputs: Inputs<'_>) -> Runway {
    let mut ms: Vec<&crate::forecast::MilestoneForecast> = inputs
        .report
        .milestones
        .iter()
        .filter(|m| m.state == OpenState::Open)
        .collect();
    ms.sort_by(|a, b| match (a.due, b.due) {
        (Some(x), Some(y)) => x.cmp(&y).then(a.id.cmp(&b.id)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.id.cmp(&b.id),
    });
    let milestones = ms
        .into_iter()
        .map(|m| {
            let dated = m.has_dates();
            RunwayMilestone {
                milestone: m.id,
                title: m.title.clone(),
                repo: m.repo.clone(),
                due: m.due.map(|d| d.to_string()),
                hard: m.hard,
                band: dated.then(|| Band {
                    p50: m.p50.to_string(),
                    p80: m.p80.to_string(),
                }),
                p10: dated.then(|| m.p10.to_string()),
                slack: m.stated_slack(),
                probability_on_time: m.probability_on_time,
                open_issues: m.open_issues,
                unestimated_issues: m.unestimated_issues,
                closed_issues: m.closed_issues,
                remaining_hours: m.remaining_hours,
                status: MilestoneStatus::of(m.probability_on_time, m.open_issues),
                planned: m.planned.map(|r| Band {
                    p50: r.p50.to_string(),
                    p80: r.p80.to_string(),
                }),
                expected_leaving: m.expected_leaving,
                probability_done: m.probability_done,
                overdue: m.overdue(inputs.report.as_of),
                staying_done: m.staying_done,
                cut_line: m.cut_line.as_ref().map(|c| RunwayCutLine {
                    issues: c.issues.iter().map(ToString::to_string).collect(),
                    issues_omitted: 0,
                    hours: c.hours,
                    p80: c.p80.to_string(),
                    probability_on_time: c.probability_on_time,
                    meets_deadline: c.meets_deadline,
                    untrimmed: c.untrimmed,
                    empties_milestone: c.empties_milestone,
                }),
            }
        })
        .collect();
    let capacity = inputs
        .report
        .people
        .iter()
        .map(|p| Capacity {
            person: p.name.clone(),
            hours_per_week: p.hours_per_week,
            queued: p.queue.len(),
            planned_hours: p.planned_hours,
            busy_until: p.busy_until.to_string(),
            capacity_changes: inputs.plan.member(&p.name).map_or_else(Vec::new, |m| {
                super::person::capacity_changes(m, inputs.report.as_of)
            }),
        })
        .collect();
    Runway {
        as_of: inputs.report.as_of.to_string(),
        milestones,
        capacity,
        milestones_omitted: 0,
        capacity_omitted: 0,
    }
}

/// The runway narrowed by the `query_project` filters: `milestoneId` keeps one milestone, `assignee` one
/// person's capacity; `limit` cuts both lists.
pub(crate) fn runway_selected(inputs: Inputs<'_>, selection: &super::Selection) -> Runway {
    let mut r = runway(inputs);
    if let Some(id) = selection.milestone {
        r.milestones.retain(|m| m.milestone == id);
    }
    if let Some(a) = &selection.assignee {
        r.capacity.retain(|c| c.person.eq_ignore_ascii_case(a));
    }
    r.milestones_omitted = r.milestones.len().saturating_sub(selection.limit);
    r.capacity_omitted = r.capacity.len().saturating_sub(selection.limit);
    r.milestones.truncate(selection.limit);
    r.capacity.truncate(selection.limit);
    // A long cut line (hundreds of issues at 5,000) is what fills an answer: cut by the limit too.
    for c in r.milestones.iter_mut().filter_map(|m| m.cut_line.as_mut()) {
        c.issues_omitted = c.issues.len().saturating_sub(selection.limit);
        c.issues.truncate(selection.limit);
    }
    r
}
