//! The `issue` view: one issue's intent (what people wrote) and what CommiTea derived from it.
//!
//! Long text is cut to keep the payload small for a small model: the body to its first
//! [`BODY_CHARS`] characters and the comments to the newest [`COMMENTS`], each cut the same way; the
//! payload says how much was left out so the caller knows there is more.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Band, Inputs};
use crate::domain::IssueKey;
use crate::forecast::When;
use crate::state::Snapshot;

/// Characters of the body kept.
pub(crate) const BODY_CHARS: usize = 1200;
/// Newest comments kept.
pub(crate) const COMMENTS: usize = 5;
/// Characters of each comment kept.
pub(crate) const COMMENT_CHARS: usize = 400;

/// One issue, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssueView {
    /// Day 0 of the forecast the answer comes from: its dates are as of this day (audit 122: a focus on a
    /// week-old snapshot gave dates in the past, with nothing to say so).
    pub as_of: String,
    /// `owner/repo#N`.
    pub issue: String,
    /// What people wrote.
    pub intent: Intent,
    /// What CommiTea derived.
    pub derived: Derived,
}

/// The issue as people wrote it in Gitea.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    /// Title.
    pub title: String,
    /// `open` or `closed`.
    pub state: String,
    /// The body (Markdown), cut to its first characters.
    pub description: String,
    /// Characters of the body left out.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub description_cut: usize,
    /// The newest comments, oldest first.
    pub comments: Vec<CommentView>,
    /// Older comments left out.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub comments_omitted: usize,
    /// The assignees.
    pub assignee: Vec<String>,
    /// Labels.
    pub labels: Vec<String>,
    /// Milestone `{id, title}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<MilestoneRef>,
    /// Opened (day).
    pub created: String,
    /// Closed (day).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<String>,
    /// The pull requests that reference it (what puts it in review, or closed it), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pull_requests: Vec<PullView>,
}

/// A pull request that references the issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PullView {
    /// `owner/repo#N`.
    pub pull: String,
    /// Its title.
    pub title: String,
    /// `open`, `merged` or `closed` (without merging).
    pub state: String,
}

/// The pull requests that reference the issue `key`, oldest first, each with its key.
pub fn pulls<'a>(
    raw: &'a crate::domain::Issue,
    key: &IssueKey,
) -> Vec<(IssueKey, &'a crate::domain::LinkedPull)> {
    let mut pulls: Vec<(IssueKey, &crate::domain::LinkedPull)> = raw
        .pull_requests
        .iter()
        .map(|p| {
            let repo = p.repository.clone().unwrap_or_else(|| key.repo.clone());
            (
                IssueKey {
                    repo,
                    number: p.number,
                },
                p,
            )
        })
        .collect();
    pulls.sort_by_key(|(k, p)| (p.created_at, k.clone()));
    pulls
}

/// A milestone named in a payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MilestoneRef {
    /// Gitea id.
    pub id: u64,
    /// Title.
    pub title: String,
}

/// One comment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommentView {
    /// Author.
    pub user: String,
    /// Day written.
    pub at: String,
    /// Text, cut.
    pub body: String,
}

/// What CommiTea derived from the issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Derived {
    /// The lifecycle column now.
    pub lifecycle: String,
    /// When it entered each column: `{state, since}`.
    pub timeline: Vec<Span>,
    /// The estimate in force: its label text (`2d`), or Gitea's own time estimate in hours (`1.5h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<String>,
    /// `label`, `native` (Gitea's time estimate), `directive` or `imputed`.
    pub estimate_source: String,
    /// Hours of time tracked on it on Gitea, by anyone, when any: an open issue's remaining effort is its
    /// total less these, a closed one's calibration sample is these (audit 142: shown nowhere, so no
    /// figure could be checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracked_hours: Option<f64>,
    /// The milestone Gitea has it in, when a directive took it out of it: the plan counts it in none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoped_out_of: Option<MilestoneRef>,
    /// Priority set for it, by its label or a directive (`p/2` when none is set).
    pub priority: String,
    /// True when no priority is set (no `p/*` label, no directive): `priority` is the default the plan
    /// schedules it at, not a decision anyone made (audit 110: 42 of the demo's 160 open issues read as
    /// "p/2" like those triaged to it); absent when one is set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub priority_default: bool,
    /// The priority it is scheduled at when that is higher than its own: inherited from the work that
    /// waits for it (`p/1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_priority: Option<String>,
    /// The forecast range of an open issue: `{p10, p50, p80}` (a date or `beyond horizon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<Cone>,
    /// Share of simulated futures that finish by its milestone's due day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_by_due: Option<f64>,
    /// The probability it is done at all within the abandonment window (absent: the model has too little
    /// history, and every open issue is assumed done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
    /// Who the plan gives it to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_assignee: Option<String>,
    /// When the median plan works on it (open issues it schedules within the horizon): the schedule's
    /// days, which the range above also weighs by how often such work is done at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Days>,
    /// The other issues of the dependency cycle it is in: it has no forecast (`forecast` absent) until
    /// one of the cycle's dependencies is removed on Gitea.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cycle: Vec<String>,
    /// The issues it waits for.
    pub depends_on: Vec<String>,
    /// The open issues that wait for it.
    pub blocks: Vec<String>,
    /// Directives that set its fields: `{field, directive}`.
    pub provenance: Vec<Provenance>,
    /// Notes from the forecast (`imputed estimate`, `in a dependency cycle` …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<crate::forecast::Flag>,
}

/// A forecast range: three dates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Cone {
    /// 10th percentile.
    pub p10: String,
    /// Median.
    pub p50: String,
    /// 80th percentile.
    pub p80: String,
}

/// Days from one to another, both inclusive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Days {
    /// The first day.
    pub from: String,
    /// The last day.
    pub to: String,
}

/// A stretch of the lifecycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Span {
    /// The column.
    pub state: String,
    /// When it entered it (day).
    pub since: String,
}

/// One field a directive set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// The field.
    pub field: String,
    /// The directive's id.
    pub directive: String,
}

/// Cuts text to `max` characters on a character boundary; returns the text and the characters left out.
pub fn cut(text: &str, max: usize) -> (String, usize) {
    let total = text.chars().count();
    if total <= max {
        return (text.to_owned(), 0);
    }
    let kept: String = text.chars().take(max).collect();
    (format!("{}…", kept.trim_end()), total - max)
}

/// The issue view of `key`; `None` when the snapshot has no such issue.
pub fn issue(inputs: Inputs<'_>, snapshot: &Snapshot, key: &IssueKey) -> Option<IssueView> {
    let forecast = inputs.report.issues.iter().find(|f| &f.issue == key);
    let blocks = super::focus::blocked_by_map(inputs)
        .remove(key)
        .unwrap_or_default();
    build(inputs, snapshot, key, forecast, &blocks, true)
}

/// The issue view with the whole body and every comment, for the issue's page; `blocks` are the open
/// issues that wait for it and `forecast` its forecast (the caller has both at hand for every issue).
pub(crate) fn issue_in_full(
    inputs: Inputs<'_>,
    snapshot: &Snapshot,
    key: &IssueKey,
    forecast: Option<&crate::forecast::IssueForecast>,
    blocks: &[IssueKey],
) -> Option<IssueView> {
    build(inputs, snapshot, key, forecast, blocks, false)
}

fn build(
    inputs: Inputs<'_>,
    snapshot: &Snapshot,
    key: &IssueKey,
    forecast: Option<&crate::forecast::IssueForecast>,
    blocks: &[IssueKey],
    short: bool,
) -> Option<IssueView> {
    let raw = snapshot.issues.get(key)?;
    let planned = inputs.plan.issue(key)?;
    let (description, description_cut) = if short {
        cut(&raw.body, BODY_CHARS)
    } else {
        (raw.body.clone(), 0)
    };
    let skip = if short {
        raw.comments.len().saturating_sub(COMMENTS)
    } else {
        0
    };
    let comments = raw
        .comments
        .iter()
        .skip(skip)
        .map(|c| CommentView {
            user: c.user.clone(),
            at: inputs.plan.zone.date_of(c.created_at).to_string(),
            body: if short {
                cut(&c.body, COMMENT_CHARS).0
            } else {
                c.body.clone()
            },
        })
        .collect();
    let blocks = blocks.iter().map(ToString::to_string).collect();
    Some(IssueView {
        as_of: inputs.report.as_of.to_string(),
        issue: key.to_string(),
        intent: Intent {
            title: raw.title.clone(),
            state: if raw.is_closed() { "closed" } else { "open" }.to_owned(),
            description,
            description_cut,
            comments,
            comments_omitted: skip,
            assignee: raw.assignees.clone(),
            labels: raw.labels.clone(),
            // Gitea's: a directive that scopes the issue out shows in `derived.scopedOutOf`.
            milestone: raw.milestone.and_then(|id| {
                inputs.plan.milestone(id).map(|m| MilestoneRef {
                    id,
                    title: m.title.clone(),
                })
            }),
            created: inputs.plan.zone.date_of(raw.created_at).to_string(),
            closed: raw
                .closed_at
                .map(|c| inputs.plan.zone.date_of(c).to_string()),
            pull_requests: pulls(raw, key)
                .into_iter()
                .map(|(pull, p)| PullView {
                    pull: pull.to_string(),
                    title: p.title.clone(),
                    state: p.state_word().to_owned(),
                })
                .collect(),
        },
        derived: Derived {
            lifecycle: planned.lifecycle.as_str().to_owned(),
            timeline: planned
                .timeline
                .iter()
                .map(|s| Span {
                    state: s.column.as_str().to_owned(),
                    since: inputs.plan.zone.date_of(s.since).to_string(),
                })
                .collect(),
            estimate: planned.estimate_text(),
            estimate_source: planned.estimate_source.as_str().to_owned(),
            tracked_hours: (planned.tracked_hours > 0.0)
                .then(|| super::round1(planned.tracked_hours)),
            scoped_out_of: raw
                .milestone
                .filter(|id| planned.milestone != Some(*id))
                .and_then(|id| {
                    inputs.plan.milestone(id).map(|m| MilestoneRef {
                        id,
                        title: m.title.clone(),
                    })
                }),
            priority: planned.priority.to_string(),
            priority_default: !planned.priority_set,
            scheduled_priority: forecast
                .filter(|f| f.effective_priority < planned.priority.level())
                .map(|f| format!("p/{}", f.effective_priority)),
            forecast: forecast.filter(|f| !f.in_cycle()).map(|f| Cone {
                p10: f.p10.to_string(),
                p50: f.p50.to_string(),
                p80: f.p80.to_string(),
            }),
            probability_by_due: forecast.and_then(|f| f.probability_by_due),
            probability_done: forecast.and_then(|f| f.probability_done),
            planned_assignee: forecast.and_then(|f| f.planned_assignee.clone()),
            planned: forecast.and_then(|f| match (f.planned_start, f.planned_end) {
                (When::Date(from), When::Date(to)) => Some(Days {
                    from: from.to_string(),
                    to: to.to_string(),
                }),
                _ => None,
            }),
            cycle: forecast
                .map(|f| f.cycle.iter().map(ToString::to_string).collect())
                .unwrap_or_default(),
            depends_on: planned.depends_on.iter().map(ToString::to_string).collect(),
            blocks,
            provenance: planned
                .provenance
                .iter()
                .map(|(field, directive)| Provenance {
                    field: field.clone(),
                    directive: directive.clone(),
                })
                .collect(),
            flags: forecast.map(|f| f.flags.clone()).unwrap_or_default(),
        },
    })
}

impl From<&crate::forecast::IssueForecast> for Band {
    fn from(f: &crate::forecast::IssueForecast) -> Self {
        Self {
            p50: f.p50.to_string(),
            p80: f.p80.to_string(),
        }
    }
}
