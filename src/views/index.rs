//! The site's search index: every issue, compactly, for the board's filters and the search page.
//!
//! Names that repeat (repositories, columns, milestones, people, labels) are listed once and referred to by
//! position; dates are days after day 0 (negative before it). A 5,000-issue project fits in a few hundred
//! kilobytes, and the script that reads it needs no server: the site loads it from `file://`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::Inputs;
use crate::domain::{IssueKey, Lifecycle};
use crate::forecast::IssueForecast;

/// The index.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchIndex {
    /// Day 0 of the forecast: dates are days after it.
    pub as_of: String,
    /// Repositories, `owner/repo`.
    pub repos: Vec<String>,
    /// Lifecycle columns: `[state, title]`.
    pub columns: Vec<(String, String)>,
    /// Milestones: `[id, title, open]`.
    pub milestones: Vec<(u64, String, bool)>,
    /// People (assignees and planned assignees).
    pub people: Vec<String>,
    /// Labels.
    pub labels: Vec<String>,
    /// Every issue, by key.
    pub issues: Vec<IndexEntry>,
    /// The issues in a dependency cycle (`owner/repo#N`): not forecast, their dates none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cycles: Vec<String>,
}

/// One issue: `[repo, number, title, column, milestone, person, priority, labels, p50, p80, closed,
/// planned, estimate]` — positions into the lists above (-1 for none), the priority level (-1 when none
/// is set), days after day 0 (null when beyond the horizon or not open), whether the person is only
/// planned, and the estimate as the board writes it (`2d`, Gitea's own `1.5h`; `""` for none, a leading
/// `~` for Gitea's): a card the board's filter adds from the index looks as the page's own do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexEntry(
    pub usize,
    pub u64,
    pub String,
    pub usize,
    pub i64,
    pub i64,
    pub i64,
    pub Vec<usize>,
    pub Option<i64>,
    pub Option<i64>,
    pub Option<i64>,
    pub u8,
    pub String,
);

fn position<T: Ord>(list: &BTreeMap<T, usize>, key: &T) -> i64 {
    list.get(key).map_or(-1, |&i| i as i64)
}

/// The index of every issue in the plan.
pub fn search_index(inputs: Inputs<'_>) -> SearchIndex {
    let plan = inputs.plan;
    let day0 = inputs.report.as_of;
    let fc: HashMap<&IssueKey, &IssueForecast> =
        inputs.report.issues.iter().map(|f| (&f.issue, f)).collect();
    let person = |i: &crate::plan::PlannedIssue| -> (Option<String>, bool) {
        match (
            &i.assignee,
            fc.get(&i.key).and_then(|f| f.planned_assignee.clone()),
        ) {
            (Some(a), _) => (Some(a.clone()), false),
            (None, Some(p)) if i.closed_at.is_none() => (Some(p), true),
            _ => (None, false),
        }
    };
    // In the order people read a list: case and composition aside ("amara" before "Jo.e-Z_1"), then
    // exactly, so that the order stays one.
    let numbered = |set: BTreeSet<String>| -> (BTreeMap<String, usize>, Vec<String>) {
        let mut list: Vec<String> = set.into_iter().collect();
        list.sort_by_cached_key(|s| (crate::plan::folded(s), s.clone()));
        let at = list
            .iter()
            .enumerate()
            .map(|(n, s)| (s.clone(), n))
            .collect();
        (at, list)
    };
    let repos = numbered(plan.issues.iter().map(|i| i.key.repo.to_string()).collect());
    let people = numbered(plan.issues.iter().filter_map(|i| person(i).0).collect());
    let labels = numbered(
        plan.issues
            .iter()
            .flat_map(|i| i.labels.iter().cloned())
            .collect(),
    );
    let milestones: BTreeMap<u64, usize> = plan
        .milestones
        .iter()
        .enumerate()
        .map(|(n, m)| (m.id, n))
        .collect();
    let days = |d: Option<chrono::NaiveDate>| d.map(|d| (d - day0).num_days());
    let issues = plan
        .issues
        .iter()
        .map(|i| {
            let f = fc.get(&i.key);
            let (who, planned) = person(i);
            IndexEntry(
                repos.0.get(&i.key.repo.to_string()).copied().unwrap_or(0),
                i.key.number,
                i.title.clone(),
                Lifecycle::ALL
                    .iter()
                    .position(|c| *c == i.lifecycle)
                    .unwrap_or(0),
                i.milestone.map_or(-1, |m| position(&milestones, &m)),
                who.map_or(-1, |w| position(&people.0, &w)),
                if i.priority_set {
                    i64::from(i.priority.level())
                } else {
                    -1
                },
                i.labels
                    .iter()
                    .filter_map(|l| labels.0.get(l).copied())
                    .collect(),
                f.and_then(|f| days(f.p50.date())),
                f.and_then(|f| days(f.p80.date())),
                days(i.closed_at.map(|c| plan.zone.date_of(c))),
                u8::from(planned),
                i.estimate_text().map_or_else(String::new, |e| {
                    if i.estimate_source == crate::plan::EstimateSource::Native {
                        format!("~{e}")
                    } else {
                        e
                    }
                }),
            )
        })
        .collect();
    SearchIndex {
        as_of: day0.to_string(),
        repos: repos.1,
        columns: Lifecycle::ALL
            .iter()
            .map(|c| (c.as_str().to_owned(), c.title().to_owned()))
            .collect(),
        milestones: plan
            .milestones
            .iter()
            .map(|m| {
                (
                    m.id,
                    m.title.clone(),
                    m.state == crate::domain::OpenState::Open,
                )
            })
            .collect(),
        people: people.1,
        labels: labels.1,
        issues,
        cycles: inputs
            .report
            .issues
            .iter()
            .filter(|f| f.in_cycle())
            .map(|f| f.issue.to_string())
            .collect(),
    }
}
