//! The `focus` view: what to work on now, next and later, each with a rationale built from engine facts.
//!
//! The order is the median schedule's — the issue the plan starts first is `now` — but for `p/0` work
//! (and what it waits on), which comes first, and work in review, which comes before the rest. The
//! rationale is plain text assembled from facts the engine computed (priority, what the issue blocks, its
//! milestone's slack, its forecast band), never from a model, so the same state always gives the same
//! words.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Inputs, Selection};
use crate::domain::{IssueKey, Lifecycle};
use crate::forecast::{IssueForecast, MilestoneForecast, When};
use crate::plan::PlannedIssue;
use crate::prose::{and_list, count};

/// How many issues `next` holds at most.
pub(crate) const NEXT: usize = 3;
/// How many issues `later` holds at most.
pub(crate) const LATER: usize = 3;

/// The focus: one issue now, a few next, a few later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Focus {
    /// Day 0 of the forecast the answer comes from: its dates are as of this day (audit 122: a focus on a
    /// week-old snapshot gave dates in the past, with nothing to say so).
    pub as_of: String,
    /// Whose focus (a username), or absent for the whole team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// The issue to be on now; null when nothing is open.
    pub now: Option<FocusItem>,
    /// What comes after it.
    pub next: Vec<FocusItem>,
    /// Further down the queue.
    pub later: Vec<FocusItem>,
    /// Open issues that pass the filters, in all.
    pub open: usize,
}

/// One issue in the focus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FocusItem {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title.
    pub title: String,
    /// Why it is here, from engine facts.
    pub rationale: String,
}

/// Issues that wait on each open issue: key → the open issues depending on it.
pub(crate) fn blocked_by_map(inputs: Inputs<'_>) -> HashMap<IssueKey, Vec<IssueKey>> {
    let mut out: HashMap<IssueKey, Vec<IssueKey>> = HashMap::new();
    for i in inputs.plan.issues.iter().filter(|i| i.closed_at.is_none()) {
        for d in &i.depends_on {
            out.entry(d.clone()).or_default().push(i.key.clone());
        }
    }
    for v in out.values_mut() {
        v.sort();
        v.dedup();
    }
    out
}

/// The deterministic rationale of one open issue.
pub fn rationale(
    issue: &PlannedIssue,
    f: &IssueForecast,
    blocks: &[IssueKey],
    milestones: &BTreeMap<u64, &MilestoneForecast>,
    open: &HashMap<&IssueKey, &PlannedIssue>,
    window_days: u32,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    match issue.lifecycle {
        Lifecycle::InReview => parts.push("in review: get it merged".to_owned()),
        _ if issue.started => parts.push("in progress".to_owned()),
        _ => {}
    }
    // Its own priority where it is high, and the higher one it inherits where it does (a p/1 issue a
    // p/0 one waits on is p/0 work).
    let own = (issue.priority_set && issue.priority.level() <= 1)
        .then(|| format!("p/{}", issue.priority.level()));
    let inherited = (f.effective_priority < issue.priority.level())
        .then(|| format!("inherits p/{} from what it blocks", f.effective_priority));
    match (own, inherited) {
        (Some(own), Some(inherited)) => parts.push(format!("{own}, {inherited}")),
        (own, inherited) => parts.extend(own.or(inherited)),
    }
    if !blocks.is_empty() {
        let names: Vec<String> = blocks
            .iter()
            .take(3)
            // Whole keys: an answer lists several repositories' issues, and "#87" beside
            // acme/mobile#87 read as that one (audit 110).
            .map(ToString::to_string)
            .collect();
        let more = blocks.len().saturating_sub(3);
        let list = if more > 0 {
            format!("{} and {more} more", names.join(", "))
        } else {
            and_list(&names)
        };
        parts.push(format!("blocks {list}"));
    }
    let waits: Vec<String> = issue
        .depends_on
        .iter()
        .filter(|d| open.contains_key(d))
        .map(ToString::to_string)
        .collect();
    if !waits.is_empty() {
        parts.push(format!("waits on {}", and_list(&waits)));
    }
    if let Some(m) = issue.milestone.and_then(|m| milestones.get(&m)) {
        let hard = if m.hard { " (hard)" } else { "" };
        match m.slack_days {
            Some(s) if s >= 0 => parts.push(format!(
                "{}{hard} has {} of slack",
                m.title,
                count(s, "working day", "working days")
            )),
            // Beyond the horizon the lateness is counted to the horizon: a floor, not a figure.
            Some(s) => parts.push(format!(
                "{}{hard} is {}{} late at p80",
                m.title,
                if m.p80 == When::BeyondHorizon {
                    "more than "
                } else {
                    ""
                },
                count(-s, "working day", "working days")
            )),
            None => parts.push(format!("in {}", m.title)),
        }
    }
    if issue.assignee.is_none()
        && let Some(p) = &f.planned_assignee
    {
        parts.push(format!("unassigned, planned for {p}"));
    }
    parts.push(match (f.p50, f.p80) {
        // Where most futures leave it undone, that is the news, not the horizon.
        (When::BeyondHorizon, _) => match f.probability_done {
            Some(p) if p < 0.5 => format!(
                "done within {} in only {} of the simulated futures (work like it is often dropped)",
                crate::site::text::horizon_words(window_days),
                crate::prose::percent(p)
            ),
            _ => "done beyond the horizon".to_owned(),
        },
        (p50, p80) => format!("done p50 {p50}, p80 {p80}"),
    });
    parts.join("; ")
}

/// The focus of the team, or of `selection.assignee`; `limit` caps the items in all.
pub fn focus(inputs: Inputs<'_>, selection: &Selection) -> Focus {
    let forecasts: HashMap<&IssueKey, &IssueForecast> =
        inputs.report.issues.iter().map(|f| (&f.issue, f)).collect();
    let open: HashMap<&IssueKey, &PlannedIssue> = inputs
        .plan
        .issues
        .iter()
        .filter(|i| i.closed_at.is_none())
        .map(|i| (&i.key, i))
        .collect();
    let milestones: BTreeMap<u64, &MilestoneForecast> =
        inputs.report.milestones.iter().map(|m| (m.id, m)).collect();
    let blocked = blocked_by_map(inputs);
    let mut queue: Vec<(&PlannedIssue, &IssueForecast)> = inputs
        .plan
        .issues
        .iter()
        .filter(|i| i.closed_at.is_none())
        .filter_map(|i| forecasts.get(&i.key).map(|f| (i, *f)))
        .filter(|(i, f)| selection.matches(i, f.planned_assignee.as_deref()))
        .collect();
    // "Drop everything" first (p/0, and the work a p/0 issue waits on, which inherits it), then review
    // (nearly done, and it blocks nothing new), then the median plan's order.
    queue.sort_by(|(a, fa), (b, fb)| {
        (fb.effective_priority == 0)
            .cmp(&(fa.effective_priority == 0))
            .then((b.lifecycle == Lifecycle::InReview).cmp(&(a.lifecycle == Lifecycle::InReview)))
            .then(fa.planned_start.cmp(&fb.planned_start))
            .then(fa.p50.cmp(&fb.p50))
            .then(a.key.cmp(&b.key))
    });
    let empty = Vec::new();
    // A chance of being done is within the abandonment model's window (present wherever it gives one).
    let window_days = inputs.report.abandonment.as_ref().map_or_else(
        || u32::try_from((inputs.report.horizon - inputs.report.as_of).num_days()).unwrap_or(0),
        |a| a.window_days,
    );
    let item = |(i, f): &(&PlannedIssue, &IssueForecast)| FocusItem {
        issue: i.key.to_string(),
        title: i.title.clone(),
        rationale: rationale(
            i,
            f,
            blocked.get(&i.key).unwrap_or(&empty),
            &milestones,
            &open,
            window_days,
        ),
    };
    let limit = selection.limit.max(1);
    let mut items = queue.iter().take(limit.min(1 + NEXT + LATER)).map(item);
    let now = items.next();
    let next: Vec<FocusItem> = items.by_ref().take(NEXT).collect();
    let later: Vec<FocusItem> = items.take(LATER).collect();
    Focus {
        as_of: inputs.report.as_of.to_string(),
        // The person as the team spells them (the filter matches any case: "ANN" is ann's focus).
        assignee: selection.assignee.as_ref().map(|a| {
            inputs
                .plan
                .team_names()
                .find(|n| n.eq_ignore_ascii_case(a))
                .map_or_else(|| a.clone(), str::to_owned)
        }),
        now,
        next,
        later,
        open: queue.len(),
    }
}
