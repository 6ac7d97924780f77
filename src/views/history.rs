//! Milestone history: how each milestone's forecast moved across the committed forecasts, and its scope
//! and done work over time (a burn-up).
//!
//! The drift comes from the `forecast/forecast.json` of earlier commits in the state repo's history (the
//! caller reads them from git, newest first) plus today's. The burn-up comes from the snapshot's own
//! history: each issue's timeline says when it entered and left a milestone, and when it was closed or
//! reopened — the same record the git history of `snapshot/` keeps, but complete from the first sync on.

use std::collections::BTreeMap;

use chrono::{DateTime, Days, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::domain::{EventKind, Issue};
use crate::forecast::{ForecastReport, When};
use crate::state::Snapshot;

/// Points of a burn-up at most (weekly; the oldest dropped first).
pub(crate) const BURNUP_POINTS: usize = 40;

/// A milestone's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneHistory {
    /// Gitea id.
    pub milestone: u64,
    /// Its forecast in each committed forecast that differs from the one before, oldest first, today's
    /// last.
    pub drift: Vec<DriftPoint>,
    /// Scope and done work per week, oldest first, up to day 0.
    pub burnup: Vec<BurnPoint>,
}

/// The milestone's forecast in one committed forecast.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DriftPoint {
    /// That forecast's day 0.
    pub as_of: String,
    /// Its p50 (a date or `beyond horizon`).
    pub p50: String,
    /// Its p80.
    pub p80: String,
}

/// One week of a burn-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BurnPoint {
    /// The day (end of the week).
    pub day: String,
    /// Issues in the milestone that day, open or closed.
    pub scope: usize,
    /// Of them, closed.
    pub done: usize,
}

/// What one earlier forecast said about the milestones: the only part of `forecast.json` the drift reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PastForecast {
    /// Its day 0.
    pub as_of: NaiveDate,
    /// Its milestones.
    pub milestones: Vec<PastMilestone>,
}

/// One milestone in an earlier forecast: its headline's p50 and p80.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "PastMilestoneRead")]
pub struct PastMilestone {
    /// Gitea id.
    pub id: u64,
    /// Median.
    pub p50: When,
    /// 80th percentile.
    pub p80: When,
}

/// A milestone as a forecast wrote it: one written before the headline was the work that stays gave that
/// work as `staying`, beside the planned scope's cone (see `forecast::upgraded_cones`).
#[derive(Deserialize)]
struct PastMilestoneRead {
    id: u64,
    p50: When,
    p80: When,
    #[serde(default)]
    planned: Option<PastBand>,
    #[serde(default)]
    staying: Option<PastBand>,
}

/// A cone of an earlier forecast, as far as the drift reads it.
#[derive(Deserialize)]
struct PastBand {
    p50: When,
    p80: When,
}

impl From<PastMilestoneRead> for PastMilestone {
    fn from(m: PastMilestoneRead) -> Self {
        let cone = PastBand {
            p50: m.p50,
            p80: m.p80,
        };
        let (headline, _) = crate::forecast::upgraded_cones(cone, m.planned, m.staying);
        Self {
            id: m.id,
            p50: headline.p50,
            p80: headline.p80,
        }
    }
}

impl From<&ForecastReport> for PastForecast {
    fn from(r: &ForecastReport) -> Self {
        Self {
            as_of: r.as_of,
            milestones: r
                .milestones
                .iter()
                .map(|m| PastMilestone {
                    id: m.id,
                    p50: m.p50,
                    p80: m.p80,
                })
                .collect(),
        }
    }
}

/// Each milestone's history: `past` are earlier committed forecasts (any order), `today` the current one.
pub fn histories(
    today: &ForecastReport,
    past: &[PastForecast],
    snapshot: &Snapshot,
    zone: &crate::config::Zone,
) -> Vec<MilestoneHistory> {
    let mut forecasts: Vec<PastForecast> = past
        .iter()
        .filter(|p| p.as_of < today.as_of)
        .cloned()
        .collect();
    forecasts.push(PastForecast::from(today));
    forecasts.sort_by_key(|p| p.as_of);
    // One point per day 0: the newest commit of a day wins.
    forecasts.dedup_by(|later, earlier| {
        if later.as_of == earlier.as_of {
            std::mem::swap(later, earlier);
            true
        } else {
            false
        }
    });
    let spans = membership(snapshot);
    today
        .milestones
        .iter()
        .map(|m| {
            let mut drift: Vec<DriftPoint> = Vec::new();
            for f in &forecasts {
                let Some(pm) = f.milestones.iter().find(|x| x.id == m.id) else {
                    continue;
                };
                let point = DriftPoint {
                    as_of: f.as_of.to_string(),
                    p50: pm.p50.to_string(),
                    p80: pm.p80.to_string(),
                };
                // Only changes, and always the last one (today).
                if drift
                    .last()
                    .is_none_or(|l| l.p80 != point.p80 || l.p50 != point.p50)
                {
                    drift.push(point);
                }
            }
            if let (Some(last), Some(f)) = (drift.last(), forecasts.last())
                && last.as_of != f.as_of.to_string()
                && let Some(pm) = f.milestones.iter().find(|x| x.id == m.id)
            {
                drift.push(DriftPoint {
                    as_of: f.as_of.to_string(),
                    p50: pm.p50.to_string(),
                    p80: pm.p80.to_string(),
                });
            }
            MilestoneHistory {
                milestone: m.id,
                drift,
                burnup: burnup(&spans, m.id, today.as_of, zone),
            }
        })
        .collect()
}

/// One issue's stretch in a milestone: from, until (exclusive; none = still in it), and when it was
/// closed while in it (the close in force at the end of the stretch).
#[derive(Debug, Clone)]
struct Stretch {
    from: DateTime<Utc>,
    until: Option<DateTime<Utc>>,
    /// Close and reopen moments of the issue, in order: `(time, closed after it)`.
    states: Vec<(DateTime<Utc>, bool)>,
}

/// Every issue's stretches in each milestone, by milestone id, rebuilt from the timeline backwards from
/// the issue as it is now.
fn membership(snapshot: &Snapshot) -> BTreeMap<u64, Vec<Stretch>> {
    let mut out: BTreeMap<u64, Vec<Stretch>> = BTreeMap::new();
    for issue in snapshot.issues.values() {
        for (m, s) in stretches(issue) {
            out.entry(m).or_default().push(s);
        }
    }
    out
}

fn stretches(issue: &Issue) -> Vec<(u64, Stretch)> {
    let mut events: Vec<_> = issue.timeline.iter().collect();
    events.sort_by_key(|e| (e.created_at, e.id));
    // Open/closed over time, walking forward from creation (closed at the end if closed now).
    let mut states: Vec<(DateTime<Utc>, bool)> = Vec::new();
    for e in &events {
        match e.kind {
            EventKind::Close => states.push((e.created_at, true)),
            EventKind::Reopen => states.push((e.created_at, false)),
            _ => {}
        }
    }
    if issue.is_closed() && !states.last().is_some_and(|s| s.1) {
        states.push((issue.closed_at.unwrap_or(issue.updated_at), true));
    }
    // Milestone over time, backwards from now.
    let mut out = Vec::new();
    let mut current = issue.milestone;
    let mut until: Option<DateTime<Utc>> = None;
    for e in events
        .iter()
        .rev()
        .filter(|e| e.kind == EventKind::Milestone)
    {
        if let Some(m) = current {
            out.push((
                m,
                Stretch {
                    from: e.created_at,
                    until,
                    states: states.clone(),
                },
            ));
        }
        current = e.old_milestone;
        until = Some(e.created_at);
    }
    if let Some(m) = current {
        out.push((
            m,
            Stretch {
                from: issue.created_at,
                until,
                states,
            },
        ));
    }
    out
}

/// Scope and done at the end of each week up to `as_of`, from the first week anything was in the
/// milestone; at most [`BURNUP_POINTS`] points, the newest kept.
fn burnup(
    spans: &BTreeMap<u64, Vec<Stretch>>,
    id: u64,
    as_of: NaiveDate,
    zone: &crate::config::Zone,
) -> Vec<BurnPoint> {
    let Some(stretches) = spans.get(&id) else {
        return Vec::new();
    };
    let Some(first) = stretches.iter().map(|s| s.from).min() else {
        return Vec::new();
    };
    let first = zone.date_of(first);
    let mut days: Vec<NaiveDate> = Vec::new();
    let mut d = as_of;
    while d >= first && days.len() < BURNUP_POINTS {
        days.push(d);
        d = d - Days::new(7);
    }
    days.reverse();
    days.into_iter()
        .map(|day| {
            // The end of the team's day.
            let at = zone.instant(
                day.and_hms_opt(23, 59, 59)
                    .unwrap_or_else(|| day.and_time(chrono::NaiveTime::MIN)),
            );
            let inside: Vec<&Stretch> = stretches
                .iter()
                .filter(|s| s.from <= at && s.until.is_none_or(|u| u > at))
                .collect();
            let done = inside
                .iter()
                .filter(|s| {
                    s.states
                        .iter()
                        .rev()
                        .find(|(t, _)| *t <= at)
                        .is_some_and(|(_, closed)| *closed)
                })
                .count();
            BurnPoint {
                day: day.to_string(),
                scope: inside.len(),
                done,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drift_reads_an_earlier_forecasts_headline_as_the_work_that_stays() {
        let earlier: PastMilestone = serde_json::from_str(
            r#"{"id": 2, "p10": "beyond horizon", "p50": "beyond horizon", "p80": "beyond horizon",
                "staying": {"p10": "2027-06-18", "p50": "2027-09-16", "p80": "2027-11-02"}}"#,
        )
        .unwrap();
        let day = |s: &str| When::Date(s.parse().unwrap());
        assert_eq!(
            (earlier.p50, earlier.p80),
            (day("2027-09-16"), day("2027-11-02"))
        );
        let today: PastMilestone =
            serde_json::from_str(r#"{"id": 2, "p50": "2027-09-20", "p80": "2027-11-05"}"#).unwrap();
        assert_eq!(today.p80, day("2027-11-05"));
    }
}
