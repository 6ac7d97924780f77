//! The `person` view: one person's queue in the median plan, their load week by week against their
//! capacity, and their time off.
//!
//! The load of a week is the hours of each queued issue spread evenly over the working days of its planned
//! span (start to end of the median plan), summed over the days of that week; the capacity is the
//! person's calendar (hours, part-time days, holidays, time off, start and end dates).

use std::collections::HashMap;

use chrono::{Datelike, Days, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Inputs;
use super::issue::MilestoneRef;
use crate::domain::IssueKey;
use crate::forecast::IssueForecast;

/// Weeks of load the view covers, from the week of day 0.
pub(crate) const LOAD_WEEKS: u32 = 13;

/// One person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonView {
    /// Gitea username.
    pub person: String,
    /// Hours in a full week.
    pub hours_per_week: f64,
    /// Open issues planned for them.
    pub queued: usize,
    /// Remaining hours planned for them (medians).
    pub planned_hours: f64,
    /// When their queue empties in the median plan (a date or `beyond horizon`).
    pub busy_until: String,
    /// Their open work in planned order.
    pub queue: Vec<QueueItem>,
    /// Planned hours and capacity per week, from the week of day 0.
    pub weeks: Vec<WeekLoad>,
    /// Days off from day 0 on, inclusive ranges.
    pub time_off: Vec<TimeOff>,
    /// First working day of someone who has not started yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts: Option<String>,
    /// Their last day (`ends:` in commitea.yaml, a capacity directive of no hours from a day on, or the end
    /// of a new hire's capacity periods), from day 0 on (audit 101: someone leaving was said only in the
    /// run's log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends: Option<String>,
    /// Their hours set by the PM's capacity directives for a period, from day 0 on, in ledger order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity_changes: Vec<CapacityChange>,
    /// Open issues assigned to them that are in a dependency cycle (`owner/repo#N`): not forecast, so in
    /// no queue, until the cycle is broken (audit 131: they left the page without a word).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cycle: Vec<String>,
    /// Open issues they are a further assignee of, which the plan gives to the first assignee alone (audit
    /// 133: a co-assignee's page did not mention the issue at all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_assigned: Vec<AlsoAssigned>,
}

/// An open issue someone is assigned to after its first assignee, who the plan gives it to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlsoAssigned {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title.
    pub title: String,
    /// Who the plan gives it to.
    pub planned_for: String,
}

/// Hours a capacity directive gives someone for a period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapacityChange {
    /// First day.
    pub from: String,
    /// Last day (inclusive); absent when open-ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Hours in a full week then (0: away).
    pub hours_per_week: f64,
    /// The directive that set it (`D-0006`), when the ledger says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directive: Option<String>,
}

/// One issue in a person's queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueItem {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title.
    pub title: String,
    /// Lifecycle column.
    pub state: String,
    /// `p/0`..`p/3` (in force).
    pub priority: String,
    /// The milestone, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<MilestoneRef>,
    /// Remaining hours (median).
    pub remaining_hours: f64,
    /// Planned start in the median plan.
    pub planned_start: String,
    /// Planned end in the median plan.
    pub planned_end: String,
    /// Median of when it is done.
    pub p50: String,
    /// 80th percentile.
    pub p80: String,
    /// The chance it is done at all (the abandonment model's), given only where its median date is beyond
    /// the horizon: an issue first in the queue that most futures leave undone must say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
    /// Whether it is only planned for them (nobody is assigned).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub planned: bool,
}

/// One week of load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeekLoad {
    /// The Monday of the week.
    pub week: String,
    /// Hours they can work that week from day 0 on (the days before it are past).
    pub capacity_hours: f64,
    /// Hours the median plan gives them that week.
    pub planned_hours: f64,
    /// Their usual working days that week they are away (time off, holidays).
    pub days_off: u32,
}

/// A stretch of time off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TimeOff {
    /// First day.
    pub from: String,
    /// Last day (inclusive).
    pub to: String,
}

/// The hours the PM's capacity directives give `m` for a period, those not over by `as_of`, in ledger
/// order.
pub(crate) fn capacity_changes(
    m: &crate::plan::PlannedMember,
    as_of: chrono::NaiveDate,
) -> Vec<CapacityChange> {
    m.calendar
        .overrides
        .iter()
        .filter(|o| o.to.is_none_or(|to| to >= as_of))
        .map(|o| {
            let field = crate::plan::capacity_field(o.from, o.to);
            CapacityChange {
                from: o.from.to_string(),
                to: o.to.map(|d| d.to_string()),
                hours_per_week: super::round1(
                    o.hours_per_day * m.calendar.working_days.len() as f64,
                ),
                directive: m
                    .provenance
                    .iter()
                    .find(|(f, _)| *f == field)
                    .map(|(_, id)| id.clone()),
            }
        })
        .collect()
}

/// Every person of the forecast, in team order.
pub fn people(inputs: Inputs<'_>) -> Vec<PersonView> {
    let forecasts: HashMap<&IssueKey, &IssueForecast> =
        inputs.report.issues.iter().map(|f| (&f.issue, f)).collect();
    let queue_owner: HashMap<&IssueKey, &str> = inputs
        .report
        .people
        .iter()
        .flat_map(|p| p.queue.iter().map(move |k| (k, p.name.as_str())))
        .collect();
    inputs
        .report
        .people
        .iter()
        .map(|p| {
            let member = inputs.plan.member(&p.name);
            let mut queue: Vec<&IssueForecast> = p
                .queue
                .iter()
                .filter_map(|k| forecasts.get(k).copied())
                .collect();
            // In the order they work on it: the plan takes work up by priority, and an issue that waits
            // on other work starts later than its place there (an audit found a p/2 planned for
            // February listed before one planned for December). Ties keep the plan's order.
            queue.sort_by_key(|f| (f.planned_start, f.planned_end));
            PersonView {
                person: p.name.clone(),
                hours_per_week: p.hours_per_week,
                queued: p.queue.len(),
                planned_hours: super::round1(p.planned_hours),
                busy_until: p.busy_until.to_string(),
                weeks: member.map_or_else(Vec::new, |m| weeks(inputs, &m.calendar, &queue)),
                time_off: member.map_or_else(Vec::new, |m| {
                    m.calendar
                        .time_off
                        .iter()
                        .filter(|(_, to)| *to >= inputs.report.as_of)
                        .map(|(from, to)| TimeOff {
                            from: from.to_string(),
                            to: to.to_string(),
                        })
                        .collect()
                }),
                starts: member
                    .and_then(|m| m.starts_after(inputs.report.as_of))
                    .map(|s| s.to_string()),
                ends: member
                    .and_then(|m| m.calendar.last_working_day())
                    .filter(|e| *e >= inputs.report.as_of)
                    .map(|e| e.to_string()),
                capacity_changes: member
                    .map_or_else(Vec::new, |m| capacity_changes(m, inputs.report.as_of)),
                cycle: inputs
                    .report
                    .issues
                    .iter()
                    .filter(|f| f.in_cycle() && f.assignee.as_deref() == Some(p.name.as_str()))
                    .map(|f| f.issue.to_string())
                    .collect(),
                also_assigned: inputs
                    .plan
                    .issues
                    .iter()
                    .filter(|i| {
                        i.state == crate::domain::OpenState::Open
                            && i.assignees.contains(&p.name)
                            && !p.queue.contains(&i.key)
                    })
                    .filter_map(|i| {
                        // Whose queue it is in: the plan's assignee, or whom the plan gave it to where
                        // no assignee is on the team (audit 137: "gives it to zoe", planned on emeka).
                        // Not forecast (in a dependency cycle), it is in no one's queue: the first
                        // assignee's page says so (audit 139: "the plan gives it to dana" there).
                        let owner = queue_owner.get(&i.key).copied().filter(|o| *o != p.name)?;
                        Some(AlsoAssigned {
                            issue: i.key.to_string(),
                            title: i.title.clone(),
                            planned_for: owner.to_owned(),
                        })
                    })
                    .collect(),
                queue: queue
                    .iter()
                    .map(|f| QueueItem {
                        issue: f.issue.to_string(),
                        title: f.title.clone(),
                        state: f.lifecycle.as_str().to_owned(),
                        priority: format!("p/{}", f.effective_priority),
                        milestone: f.milestone.and_then(|id| {
                            inputs.plan.milestone(id).map(|m| MilestoneRef {
                                id,
                                title: m.title.clone(),
                            })
                        }),
                        remaining_hours: super::round1(f.remaining_hours),
                        planned_start: f.planned_start.to_string(),
                        planned_end: f.planned_end.to_string(),
                        p50: f.p50.to_string(),
                        p80: f.p80.to_string(),
                        probability_done: f
                            .probability_done
                            .filter(|_| f.p50 == crate::forecast::When::BeyondHorizon),
                        planned: f.assignee.is_none(),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The hours booked on each day from `monday`, for a person whose capacity on those days is `cap`.
///
/// The plan books work into free capacity and splits it around what waits, so an issue's planned span
/// may hold other work too: spreading its hours evenly over the span counted shared days twice and drew
/// weeks "over capacity" that the plan never booked. Instead each day's capacity goes to the issues
/// already started, earliest planned end first (preemptive earliest-deadline-first, which finds an
/// allocation within the capacity whenever one exists, as the plan's own is). Hours that do not fit by
/// an issue's end run on into the next days; no day gets more than it holds. Where the person has no
/// capacity in the window at all, the hours are spread over each span's days, so they still show.
/// `spans` are each issue's planned start, planned end and remaining hours.
fn booked_hours(
    day0: NaiveDate,
    monday: NaiveDate,
    cap: &[f64],
    spans: impl Iterator<Item = (NaiveDate, NaiveDate, f64)>,
) -> Vec<f64> {
    let mut load = vec![0.0; cap.len()];
    let index = |d: NaiveDate| usize::try_from((d - monday).num_days()).ok();
    // (first day, planned end, hours left)
    let mut jobs: Vec<(usize, NaiveDate, f64)> = spans
        .filter_map(|(start, end, hours)| {
            let start = start.max(day0);
            Some((index(start)?, end.max(start), hours.max(0.0)))
        })
        .collect();
    if cap.iter().all(|c| *c <= 0.0) {
        for (first, end, hours) in jobs {
            let last = index(end).unwrap_or(first).max(first);
            let per_day = hours / (last - first + 1) as f64;
            for slot in load.iter_mut().take(last + 1).skip(first) {
                *slot += per_day;
            }
        }
        return load;
    }
    jobs.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    for (d, slot) in load.iter_mut().enumerate() {
        let mut free = cap[d];
        for job in jobs.iter_mut().filter(|j| j.0 <= d) {
            if free <= 0.0 {
                break;
            }
            let take = job.2.min(free);
            job.2 -= take;
            free -= take;
            *slot += take;
        }
    }
    load
}

/// The weeks of [`LOAD_WEEKS`] from the Monday of day 0's week: capacity from the calendar, load from the
/// queue's planned spans.
fn weeks(
    inputs: Inputs<'_>,
    spec: &crate::engine::PersonCalendarSpec,
    queue: &[&IssueForecast],
) -> Vec<WeekLoad> {
    let day0 = inputs.report.as_of;
    let monday = day0 - Days::new(u64::from(day0.weekday().num_days_from_monday()));
    let days = LOAD_WEEKS * 7;
    let date = |d: u32| monday + Days::new(u64::from(d));
    let cap: Vec<f64> = (0..days).map(|d| spec.hours_on(date(d)).max(0.0)).collect();
    let last = spec.last_working_day();
    // Days before day 0 are past: the week's capacity is what is left of it, so a forecast made on a
    // Friday does not show the week's Monday to Thursday as hours left unbooked.
    let ahead: Vec<f64> = (0..days)
        .map(|d| if date(d) < day0 { 0.0 } else { cap[d as usize] })
        .collect();
    // Work the plan starts and does not finish within the horizon (a leaver's last issue) books the
    // hours it can until then, last of all: left out, the leaver's last weeks showed free while the plan
    // had them working (audits 175, 178).
    let spans = queue.iter().filter_map(|f| {
        Some((
            f.planned_start.date()?,
            f.planned_end.date().unwrap_or(NaiveDate::MAX),
            f.remaining_hours,
        ))
    });
    let load = booked_hours(day0, monday, &ahead, spans);
    (0..LOAD_WEEKS)
        .map(|w| {
            let range = (w * 7) as usize..((w + 1) * 7) as usize;
            let usual = range
                .clone()
                .filter(|&d| {
                    let day = date(d as u32);
                    spec.working_days.contains(&day.weekday())
                        && spec.starts.is_none_or(|s| day >= s)
                        && last.is_none_or(|e| day <= e)
                })
                .count() as u32;
            let working = range.clone().filter(|&d| cap[d] > 0.0).count() as u32;
            WeekLoad {
                week: date(w * 7).to_string(),
                capacity_hours: super::round1(ahead[range.clone()].iter().sum()),
                planned_hours: super::round1(load[range].iter().sum()),
                days_off: usual.saturating_sub(working),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booked_hours_never_exceed_a_days_capacity_when_work_is_split_around_other_work() {
        let day = |n: u64| NaiveDate::from_ymd_opt(2026, 1, 5).unwrap() + Days::new(n);
        let cap = vec![6.0; 14];
        // The plan split A (12 h, days 0 to 2) around B (6 h, day 1): spread evenly over its span, A
        // would put 4 h on day 1 beside B's 6.
        let spans = [(day(0), day(2), 12.0), (day(1), day(1), 6.0)];
        let load = booked_hours(day(0), day(0), &cap, spans.into_iter());
        assert_eq!(&load[..4], &[6.0, 6.0, 6.0, 0.0]);
        assert!(load.iter().zip(&cap).all(|(l, c)| l <= c), "{load:?}");
        // Nothing before day 0 and nothing lost.
        let load = booked_hours(day(2), day(0), &cap, spans.into_iter());
        assert_eq!(load[..2].iter().sum::<f64>(), 0.0, "{load:?}");
        assert!((load.iter().sum::<f64>() - 18.0).abs() < 1e-9, "{load:?}");
        // With no capacity at all the hours still show, spread over each span.
        let load = booked_hours(day(0), day(0), &[0.0; 14], spans.into_iter());
        assert!((load[1] - 10.0).abs() < 1e-9, "{load:?}");
        // Work started and not done within the horizon books what is free until the capacity ends
        // (a leaver's last days), after the work that ends.
        let mut leaving = vec![6.0; 14];
        for c in &mut leaving[5..] {
            *c = 0.0;
        }
        let spans = [(day(0), NaiveDate::MAX, 40.0), (day(0), day(1), 6.0)];
        let load = booked_hours(day(0), day(0), &leaving, spans.into_iter());
        assert_eq!(&load[..6], &[6.0, 6.0, 6.0, 6.0, 6.0, 0.0], "{load:?}");
    }
}
