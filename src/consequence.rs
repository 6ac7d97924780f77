//! The consequence diff: what a change to the plan does to the forecast.
//!
//! Given the forecast of the same state before and after a change (a directive, or an op set that
//! `apply_changes` proposes), [`diff`] says which milestones' ranges and on-time chances move, which open
//! issues' p80 dates move by at least one working day and why, and sums it up in one line fit for a pull
//! request title. Everything is deterministic: identical inputs give byte-identical output.
//!
//! Moves are counted in working days on the team calendar of the plan after the change. A date that leaves
//! the forecast horizon (or comes back into it) counts as a move of at least one working day.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Datelike, Days, NaiveDate};
use serde::Serialize;

use crate::domain::{IssueKey, OpenState};
use crate::engine::Calendar;
use crate::forecast::{ForecastReport, IssueForecast, MilestoneForecast, When};
use crate::plan::{EstimateSource, Plan, PlannedIssue};
use crate::prose::percent;

/// Why an issue with no input change of its own moved, when nothing else explains it (no planned
/// assignee): its place in the team's shared capacity changed.
const WHY_CAPACITY: &str = "team capacity";

/// What a change does to the forecast (the default: nothing moved, no summary).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Consequence {
    /// Every milestone open before or after the change, by id.
    pub milestones: Vec<MilestoneChange>,
    /// Every open issue whose p80 moved by at least one working day, appeared or went away, whose
    /// chance of being done moved by a tenth or more (its p80 held: `movedWorkingDays` 0), or that went
    /// into or out of a dependency cycle (`movedWorkingDays` 0: one side has no forecast); biggest move
    /// first, then by key.
    pub issues: Vec<IssueChange>,
    /// One line for a person: the milestone whose p80 moved most and how many issues moved, or
    /// `no forecast change`.
    pub summary: String,
    /// Day 0 of the forecast after the change: its dates are as of this day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<chrono::NaiveDate>,
    /// The year dates in the summary are written without.
    #[serde(skip)]
    year: i32,
    /// The median plan's moves where no p80 moved, in words, for a summary that would say nothing moved.
    #[serde(skip)]
    plan_moved: Option<String>,
}

impl Consequence {
    /// The consequence with a summary that also says what happens to each milestone of `about` (those a
    /// change is about), when the milestone that moved most is another: "Public API v2 p80 unchanged".
    #[must_use]
    pub fn about(mut self, about: &[u64]) -> Self {
        self.summary = with_plan(
            summary(&self.milestones, &self.issues, self.year, about),
            self.plan_moved.as_deref(),
        );
        self
    }
}

/// `summary`, where it says nothing moved but the median plan did, saying that instead (audit 92: a
/// directive putting someone on leave was "no forecast change" while their work moved ten days).
fn with_plan(summary: String, plan_moved: Option<&str>) -> String {
    match plan_moved {
        Some(words) if summary == NO_CHANGE => format!("no p80 moved; {words}"),
        _ => summary,
    }
}

/// What a summary says when nothing it shows moved.
const NO_CHANGE: &str = "no forecast change";

/// The open issues whose planned end in the median plan moved by a working day or more while their p80
/// did not (those are in `issues`), in words with the biggest move; `None` when none did.
fn plan_moves(
    before: &ForecastReport,
    after: &ForecastReport,
    days: &WorkingDays,
    issues: &[IssueChange],
) -> Option<String> {
    let b: BTreeMap<&IssueKey, &IssueForecast> =
        before.issues.iter().map(|f| (&f.issue, f)).collect();
    // Looked up once each: a scan of the moved issues per open issue was quadratic in a big change.
    let shown: BTreeSet<&str> = issues.iter().map(|i| i.issue.as_str()).collect();
    let mut moves: Vec<(i64, &IssueKey, NaiveDate, NaiveDate)> = after
        .issues
        .iter()
        .filter(|f| !shown.contains(f.issue.to_string().as_str()))
        .filter_map(|f| {
            let (When::Date(from), When::Date(to)) = (b.get(&f.issue)?.planned_end, f.planned_end)
            else {
                return None;
            };
            let n = days.between(from, to);
            (n != 0).then_some((n, &f.issue, from, to))
        })
        .collect();
    moves.sort_by(|x, y| y.0.abs().cmp(&x.0.abs()).then(x.1.cmp(y.1)));
    let (_, key, from, to) = moves.first()?;
    let year = after.as_of.year();
    Some(format!(
        "the median plan moved {} (the most: {key}, planned to end {} → {})",
        crate::prose::count(moves.len(), "issue", "issues"),
        short(&from.to_string(), year),
        short(&to.to_string(), year)
    ))
}

/// One milestone before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneChange {
    /// Gitea id.
    pub milestone: u64,
    /// Title (after the change, if it is still there).
    pub title: String,
    /// Its repository, `owner/repo`.
    pub repo: String,
    /// The forecast before; absent when the milestone is only in the forecast after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<MilestoneSide>,
    /// The forecast after; absent when the milestone is only in the forecast before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<MilestoneSide>,
    /// Working days the p80 moved (later is positive); 0 when one side is absent.
    pub moved_working_days: i64,
    /// Closed on Gitea since the forecast before (absent from the forecast after for that reason, not
    /// deleted).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closed: bool,
    /// Open, with nothing open in it any more: `after` is absent, as it has no date (a milestone with
    /// nothing open is "forecast" for the forecast's own day; audit 106 read "p80 -75 working days (Mar 18
    /// 2027 → Nov 27)"). Likewise `before` is absent for one that had nothing open before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emptied: bool,
}

/// How each changed milestone is named in words: its title, with its repository where two share it.
pub fn names_of(milestones: &[MilestoneChange]) -> BTreeMap<u64, String> {
    crate::plan::milestone_names(
        milestones
            .iter()
            .map(|m| (m.milestone, m.title.as_str(), m.repo.clone())),
    )
}

/// A milestone's forecast on one side of the change.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneSide {
    /// Median, as the report prints it (`2026-12-11` or `beyond horizon`).
    pub p50: String,
    /// 80%, as the report prints it.
    pub p80: String,
    /// Share of simulated futures that finish by the due day, if it has one.
    pub probability_on_time: Option<f64>,
    /// The due day, if it has one: a change of deadline is said with it (audit 140: the answer to
    /// "the release moves to January 22nd" named neither date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<NaiveDate>,
    /// Working days from the p80 to the due day (negative: the p80 is late), where both are dates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack_working_days: Option<i64>,
}

/// One issue before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssueChange {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title (after the change, if it is still open).
    pub title: String,
    /// The forecast before; absent for a `new` issue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<IssueSide>,
    /// The forecast after; absent for a `closed` or `gone` issue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<IssueSide>,
    /// Working days the p80 moved (later is positive); 0 for `new`, `closed` and `gone`.
    /// Where the p80 crossed the horizon (one side `beyond horizon`) the count runs to the horizon, not
    /// to the work: say it left or came within the horizon.
    pub moved_working_days: i64,
    /// `own change`, `imputed estimate`, `calibration` (only its remaining effort moved, re-measured by a
    /// changed calibration), `blocks KEY` (it inherits a changed priority from KEY, which waits on it),
    /// `waits on KEY`, `queue of PERSON`, `capacity of PERSON` (alone, or beside one of the two before;
    /// `holidays Feb 15 and Feb 16 added` where only the team's holidays changed that person's days),
    /// `planned for PERSON, not PERSON` (`; zoe joined the team` after it where someone joined), `N
    /// working days passed with no progress recorded` (on the calendar of its person; `N working days passed, none of them PERSON's working days`), `team
    /// capacity`, `new`, `closed` or `gone` (see `docs/tools.md`, the standup's `why`).
    pub why: String,
    /// The moved issues `why` points at where they pushed it by at least half its move: the one it blocks
    /// or waits on, or the work ahead of it in its person's queue; empty for a change of its own, a
    /// weaker push and the rest. The standup follows these to the directive behind a move.
    #[serde(skip)]
    pub upstream: Vec<String>,
    /// The people whose change is behind the move: the person whose capacity changed within its span
    /// (`capacity of PERSON`), or of the two it was planned for then and now, those whose hours changed;
    /// empty otherwise. The standup
    /// names a directive about a person only for these moves (and those that follow from them).
    #[serde(skip)]
    pub people: Vec<String>,
}

/// An issue's forecast on one side of the change.
// The tools' spelling, as the issue view spells the same figure (`probabilityDone`; audit 177: a client
// reading it so found nothing here).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssueSide {
    /// Median, as the report prints it.
    pub p50: String,
    /// 80%, as the report prints it.
    pub p80: String,
    /// Its chance of being done within the horizon, where the abandonment model gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
    /// True when it is in a dependency cycle: not forecast, its dates only placeholders.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_cycle: bool,
}

impl IssueSide {
    /// How far its chance of being done moved from `self` to `after`, where both sides have one.
    fn chance_moved(&self, after: &Self) -> Option<(f64, f64)> {
        let (b, a) = (self.probability_done?, after.probability_done?);
        ((b - a).abs() >= CHANCE_MOVED).then_some((b, a))
    }
}

/// Working days on the team calendar, over the span both reports cover.
struct WorkingDays {
    day0: NaiveDate,
    cal: Calendar,
}

impl WorkingDays {
    fn new(before: &ForecastReport, after: &ForecastReport, plan: &Plan) -> Self {
        let day0 = before.as_of.min(after.as_of);
        let last = before.horizon.max(after.horizon);
        // One day past the later horizon stands for "beyond horizon".
        let days = (last - day0).num_days().max(0) + 2;
        Self {
            day0,
            cal: Calendar::new(
                &plan.team_calendar,
                day0,
                u32::try_from(days).unwrap_or(u32::MAX),
            ),
        }
    }

    /// Working days in `(a, b]`, negative when `b` is before `a`.
    fn between(&self, a: NaiveDate, b: NaiveDate) -> i64 {
        self.cal.working_days_between(self.day0, a, b)
    }

    /// A milestone's slack on the team calendar ([`Calendar::slack`]).
    fn slack(&self, p80: NaiveDate, due: NaiveDate) -> i64 {
        self.cal.slack(self.day0, p80, due)
    }

    /// The date `n` working days after `from` on the team calendar; past `horizon`, beyond it.
    fn advance(&self, from: NaiveDate, n: i64, horizon: NaiveDate) -> When {
        match self.cal.add_working_days(self.day0, from, n) {
            Some(d) if d <= horizon => When::Date(d),
            _ => When::BeyondHorizon,
        }
    }

    /// How far `b` is from `a` in working days; a change into or out of the horizon is at least one day.
    fn moved(&self, a: When, a_horizon: NaiveDate, b: When, b_horizon: NaiveDate) -> i64 {
        let past = |h: NaiveDate| h + Days::new(1);
        match (a, b) {
            (When::Date(x), When::Date(y)) => self.between(x, y),
            (When::BeyondHorizon, When::BeyondHorizon) => 0,
            (When::Date(x), When::BeyondHorizon) => self.between(x, past(b_horizon)).max(1),
            (When::BeyondHorizon, When::Date(y)) => self.between(past(a_horizon), y).min(-1),
        }
    }
}

/// The consequence of going from `before` (forecast of `before_plan`) to `after` (of `after_plan`).
pub fn diff(
    before: &ForecastReport,
    after: &ForecastReport,
    before_plan: &Plan,
    after_plan: &Plan,
) -> Consequence {
    let days = WorkingDays::new(before, after, after_plan);
    let milestones = milestone_changes(before, after, &days);
    let issues = issue_changes(before, after, before_plan, after_plan, &days);
    let year = after.as_of.year();
    let plan_moved = plan_moves(before, after, &days, &issues);
    let summary = with_plan(
        summary(&milestones, &issues, year, &[]),
        plan_moved.as_deref(),
    );
    Consequence {
        milestones,
        issues,
        summary,
        as_of: Some(after.as_of),
        year,
        plan_moved,
    }
}

/// A milestone's side, its slack counted on the consequence's own calendar from the p80 shown (a
/// what-if's twin p80 is moved after its forecast counted the slack).
fn milestone_side(m: &MilestoneForecast, days: &WorkingDays) -> MilestoneSide {
    MilestoneSide {
        p50: m.p50.to_string(),
        p80: m.p80.to_string(),
        probability_on_time: m.probability_on_time,
        due: m.due,
        slack_working_days: match (m.due, m.p80) {
            (Some(due), When::Date(p80)) => Some(days.slack(p80, due)),
            _ => None,
        },
    }
}

fn milestone_changes(
    before: &ForecastReport,
    after: &ForecastReport,
    days: &WorkingDays,
) -> Vec<MilestoneChange> {
    let open = |m: &&MilestoneForecast| m.state == OpenState::Open;
    let b: BTreeMap<u64, &MilestoneForecast> = before
        .milestones
        .iter()
        .filter(open)
        .map(|m| (m.id, m))
        .collect();
    let a: BTreeMap<u64, &MilestoneForecast> = after
        .milestones
        .iter()
        .filter(open)
        .map(|m| (m.id, m))
        .collect();
    let ids: BTreeSet<u64> = b.keys().chain(a.keys()).copied().collect();
    // A milestone with nothing open on either side has no date to move: its "p80" is the day of each
    // forecast, which moved a day every day.
    let nothing_open = |m: Option<&&MilestoneForecast>| m.is_none_or(|m| !m.has_dates());
    let closed_after: BTreeSet<u64> = after
        .milestones
        .iter()
        .filter(|m| m.state == OpenState::Closed)
        .map(|m| m.id)
        .collect();
    ids.into_iter()
        // …unless it closed since: that is news, empty or not.
        .filter(|id| {
            !(nothing_open(b.get(id)) && nothing_open(a.get(id)))
                || (!a.contains_key(id) && closed_after.contains(id))
        })
        .map(|id| {
            let (mb, ma) = (b.get(&id).copied(), a.get(&id).copied());
            // A side with nothing open has no date: its dates are the forecast's own day.
            let (db, da) = (mb.filter(|m| m.has_dates()), ma.filter(|m| m.has_dates()));
            let moved = match (db, da) {
                (Some(x), Some(y)) => days.moved(x.p80, before.horizon, y.p80, after.horizon),
                _ => 0,
            };
            MilestoneChange {
                milestone: id,
                title: ma.or(mb).map(|m| m.title.clone()).unwrap_or_default(),
                repo: ma.or(mb).map(|m| m.repo.clone()).unwrap_or_default(),
                before: db.map(|m| milestone_side(m, days)),
                after: da.map(|m| milestone_side(m, days)),
                moved_working_days: moved,
                closed: ma.is_none() && closed_after.contains(&id),
                emptied: ma.is_some_and(|m| !m.has_dates()),
            }
        })
        .collect()
}

fn issue_side(i: &IssueForecast) -> IssueSide {
    IssueSide {
        p50: i.p50.to_string(),
        p80: i.p80.to_string(),
        probability_done: i.probability_done,
        in_cycle: i.in_cycle(),
    }
}

/// What the reasons of every move look at besides the issue itself.
struct Scene<'a> {
    /// Every issue that moved (new and gone ones by 0), by key.
    moved: &'a BTreeMap<&'a IssueKey, i64>,
    /// The issues only the forecast after has (new) and only the one before has (gone).
    new: BTreeSet<&'a IssueKey>,
    gone: BTreeSet<&'a IssueKey>,
    /// The forecasts after and before.
    reports: [&'a ForecastReport; 2],
    /// The team's time zone.
    zone: &'a crate::config::Zone,
    /// Per person whose hours differ between the two sides (or who is on one side only): each day they
    /// do, with the hours after less the hours before.
    capacity: BTreeMap<&'a str, Vec<(NaiveDate, f64)>>,
    /// Working days day 0 moved on from the forecast before to the one after.
    passed: i64,
    /// Of those, each person's own working days (their time off, their days of the week).
    passed_for: BTreeMap<&'a str, i64>,
    /// Hours in a working day, to weigh a change of remaining effort in days.
    workday_hours: f64,
    /// Who is in the team after and not before: joining shares the unassigned work out again.
    joined: Vec<&'a str>,
    /// The team's holidays added and taken off, in words (`holidays Feb 15 and Feb 16 added`), when they
    /// changed; and the people whose hours changed by that alone.
    holidays: Option<(String, BTreeSet<&'a str>)>,
    /// Each open issue's remaining work in whole working days (rounded to the nearest; the larger side's):
    /// a few hours coming ahead in a queue push nothing a day.
    work: BTreeMap<&'a IssueKey, u64>,
}

impl Scene<'_> {
    /// A change of `person`'s hours as a reason, and the people it names: `capacity of PERSON`, or the
    /// team's holidays where only they changed that person's days (audit 123: two holidays added to
    /// commitea.yaml read "capacity of amara", as if amara's own hours had changed).
    fn hours_of(&self, person: &str) -> (String, Vec<String>) {
        match &self.holidays {
            Some((words, only)) if only.contains(person) => (words.clone(), Vec::new()),
            _ => (format!("capacity of {person}"), vec![person.to_owned()]),
        }
    }

    /// The remaining work of `issue` in whole working days (0 for an issue on neither side).
    fn work_of(&self, issue: &IssueKey) -> u64 {
        self.work.get(issue).copied().unwrap_or(0)
    }

    /// The hours `person` gained (positive) or lost up to `until`, where their hours changed by then.
    fn capacity_change(&self, person: &str, until: NaiveDate) -> Option<f64> {
        let days = self.capacity.get(person)?;
        let mut before = days.iter().take_while(|(d, _)| *d <= until).peekable();
        before.peek()?;
        Some(before.map(|(_, h)| h).sum())
    }

    /// How the move of `upstream` pushes what comes after it: by its working days for an issue on both
    /// sides, later for a new one, earlier for one gone (by its work); `None` when it did not move.
    fn push_of(&self, upstream: &IssueKey) -> Option<Push> {
        if self.new.contains(upstream) {
            Some(Push::Later(self.work_of(upstream)))
        } else if self.gone.contains(upstream) {
            Some(Push::Earlier(self.work_of(upstream)))
        } else {
            self.moved
                .get(upstream)
                .copied()
                .filter(|m| *m != 0)
                .map(Push::Moved)
        }
    }
}

/// How something before an issue (what it waits on, the work ahead of it in its queue) pushes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Push {
    /// It moved by so many working days.
    Moved(i64),
    /// It is new there (a new issue, or work that came ahead in the queue): later, by its remaining work
    /// in whole working days.
    Later(u64),
    /// It left (closed, gone, or no longer ahead in the queue): earlier, by its remaining work.
    Earlier(u64),
}

impl Push {
    /// Whether it pushes the way of a move of `moved` working days.
    fn same_way(self, moved: i64) -> bool {
        match self {
            Self::Moved(m) => m.signum() == moved.signum(),
            Self::Later(_) => moved > 0,
            Self::Earlier(_) => moved < 0,
        }
    }

    /// Whether it pushes that way by at least half as far.
    fn strong(self, moved: i64) -> bool {
        self.same_way(moved) && 2 * self.size() >= moved.unsigned_abs()
    }

    /// How far it pushes, in working days.
    fn size(self) -> u64 {
        match self {
            Self::Moved(m) => m.unsigned_abs(),
            Self::Later(days) | Self::Earlier(days) => days,
        }
    }
}

/// Per person whose hours differ between `before` and `after` (or who is on one team only): each day
/// they do, from `day0` through the later horizon, with the hours after less the hours before.
fn capacity_changes<'a>(
    before: &'a Plan,
    after: &'a Plan,
    day0: NaiveDate,
    last: NaiveDate,
) -> BTreeMap<&'a str, Vec<(NaiveDate, f64)>> {
    let days = u32::try_from((last - day0).num_days().max(0) + 2).unwrap_or(u32::MAX);
    let team = |p: &'a Plan| -> BTreeMap<&'a str, &'a crate::engine::PersonCalendarSpec> {
        p.team
            .iter()
            .map(|m| (m.name.as_str(), &m.calendar))
            .collect()
    };
    let (b, a) = (team(before), team(after));
    let names: BTreeSet<&str> = b.keys().chain(a.keys()).copied().collect();
    let hours = |spec: Option<&&crate::engine::PersonCalendarSpec>| {
        spec.map(|s| Calendar::new(s, day0, days))
    };
    names
        .into_iter()
        .filter(|name| b.get(name) != a.get(name))
        .map(|name| {
            let (cb, ca) = (hours(b.get(name)), hours(a.get(name)));
            let at = |c: &Option<Calendar>, d: u32| c.as_ref().map_or(0.0, |c| c.capacity(d));
            let changed = (0..days)
                .filter_map(|d| {
                    let diff = at(&ca, d) - at(&cb, d);
                    (diff.abs() > 1e-9).then(|| (day0 + Days::new(u64::from(d)), diff))
                })
                .collect();
            (name, changed)
        })
        .collect()
}

/// The team's holidays added and taken off between two plans, in words, and the people whose calendars
/// differ by them alone; `None` when the holidays are the same.
fn holidays_changed<'a>(
    before: &Plan,
    after: &'a Plan,
    year: i32,
) -> Option<(String, BTreeSet<&'a str>)> {
    let (b, a) = (
        &before.team_calendar.holidays,
        &after.team_calendar.holidays,
    );
    if b == a {
        return None;
    }
    // The days of `of` that `other` lacks, said as `holidays Feb 15 and Feb 16 {done}`.
    let said = |of: &[NaiveDate], other: &[NaiveDate], done: &str| {
        let days: Vec<String> = of
            .iter()
            .filter(|d| !other.contains(d))
            .map(|d| short(&d.to_string(), year))
            .collect();
        (!days.is_empty()).then(|| {
            let noun = if days.len() == 1 {
                "holiday"
            } else {
                "holidays"
            };
            format!("{noun} {} {done}", crate::prose::and_list(&days))
        })
    };
    let words: Vec<String> = [said(a, b, "added"), said(b, a, "taken off")]
        .into_iter()
        .flatten()
        .collect();
    let only = after
        .team
        .iter()
        .filter(|m| {
            before.member(&m.name).is_some_and(|was| {
                let mut was = was.calendar.clone();
                was.holidays.clone_from(&m.calendar.holidays);
                was == m.calendar
            })
        })
        .map(|m| m.name.as_str())
        .collect();
    Some((words.join(", "), only))
}

/// Why an issue whose only change is its remaining effort moved, when the calibration changed between
/// the two sides and nothing of the issue did: what work like it really takes was measured again.
const WHY_CALIBRATION: &str = "calibration";

/// Why an issue is in the forecast after and not before: opened (or reopened) since.
const WHY_NEW: &str = "new";

/// Why an open issue left the forecast: closed on Gitea.
const WHY_CLOSED: &str = "closed";

/// Why an open issue left the forecast without being closed: deleted, moved to another repository, or its
/// repository no longer synced.
const WHY_GONE: &str = "gone";
/// Why an issue of a repository no longer synced left the plan.
const WHY_OUT: &str = "its repository no longer synced";

/// Why an issue moved when its own inputs changed (estimate, priority, milestone, assignee, dependencies).
/// Why an issue whose own inputs changed moved.
pub(crate) const WHY_OWN: &str = "own change";

/// Whether `why` is of the issue itself (its own inputs changed, it is new, closed or gone): a reason
/// that holds whichever engine forecast the two sides.
pub(crate) fn of_its_own(why: &str) -> bool {
    [WHY_OWN, WHY_NEW, WHY_CLOSED, WHY_GONE, WHY_OUT].contains(&why)
}

/// What of an issue's own changed between the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OwnChange {
    /// Its inputs (estimate, priority, milestone, assignee, dependencies): the reason for its move.
    Inputs,
    /// Only its remaining effort, said so: a reason only where it moved the issue's way, and by enough.
    Effort(&'static str),
}

/// Whether the issue's own inputs differ between the two sides: `own change`; or, when only the remaining
/// effort moved, `imputed estimate` when it rests on an imputed estimate (which follows the other issues'
/// estimates) and `calibration` when the calibration changed and the issue itself did not (the same
/// column, no activity on it since the day the forecast before was made as of: time logged on it would
/// move it too).
fn own_change(
    b: &IssueForecast,
    a: &IssueForecast,
    pb: Option<&PlannedIssue>,
    pa: Option<&PlannedIssue>,
    recalibrated: bool,
    b_as_of: NaiveDate,
    zone: &crate::config::Zone,
) -> Option<OwnChange> {
    let report_differs = b.depends_on != a.depends_on
        || b.estimate != a.estimate
        // A source that changes how the estimate is read: imputed (already what work took) or given.
        // One directive holding the label's own value changes nothing (audit 148: "own change" of an
        // issue whose estimate stayed 1w, moved by its blocker's close).
        || ((b.estimate_source == EstimateSource::Imputed)
            != (a.estimate_source == EstimateSource::Imputed))
        || b.priority != a.priority
        || b.milestone != a.milestone
        || b.assignee != a.assignee;
    let plan_differs = match (pb, pa) {
        (Some(x), Some(y)) => {
            let deps = |i: &PlannedIssue| i.depends_on.iter().cloned().collect::<BTreeSet<_>>();
            x.estimate_hours.map(f64::to_bits) != y.estimate_hours.map(f64::to_bits)
                || x.priority != y.priority
                || x.milestone != y.milestone
                || x.assignee != y.assignee
                || deps(x) != deps(y)
        }
        (None, None) => false,
        _ => true,
    };
    if report_differs || plan_differs {
        Some(OwnChange::Inputs)
    } else if b.remaining_hours.to_bits() != a.remaining_hours.to_bits() {
        Some(OwnChange::Effort(
            if a.estimate_source == EstimateSource::Imputed {
                "imputed estimate"
            } else if recalibrated
                && b.lifecycle == a.lifecycle
                && pa.is_none_or(|p| zone.date_of(p.updated_at) < b_as_of)
            {
                WHY_CALIBRATION
            } else {
                WHY_OWN
            },
        ))
    } else {
        None
    }
}

fn issue_changes(
    before: &ForecastReport,
    after: &ForecastReport,
    before_plan: &Plan,
    after_plan: &Plan,
    days: &WorkingDays,
) -> Vec<IssueChange> {
    let b: BTreeMap<&IssueKey, &IssueForecast> =
        before.issues.iter().map(|i| (&i.issue, i)).collect();
    let a: BTreeMap<&IssueKey, &IssueForecast> =
        after.issues.iter().map(|i| (&i.issue, i)).collect();
    let pb: BTreeMap<&IssueKey, &PlannedIssue> =
        before_plan.issues.iter().map(|i| (&i.key, i)).collect();
    let pa: BTreeMap<&IssueKey, &PlannedIssue> =
        after_plan.issues.iter().map(|i| (&i.key, i)).collect();
    let keys: BTreeSet<&IssueKey> = b.keys().chain(a.keys()).copied().collect();
    // What waits on each issue, on either side: the work an issue inherits its priority from.
    let mut waiting: BTreeMap<&IssueKey, BTreeSet<&IssueKey>> = BTreeMap::new();
    for i in before_plan.issues.iter().chain(&after_plan.issues) {
        for d in &i.depends_on {
            waiting.entry(d).or_default().insert(&i.key);
        }
    }

    // The repositories the plan after has issues of: an issue gone from one it has none of left with its
    // repository (taken out of the config), not from Gitea.
    let planned_repos: BTreeSet<&crate::domain::RepoName> =
        after_plan.issues.iter().map(|i| &i.key.repo).collect();
    // First every move, so that "waits on" and "queue of" can look at other issues' moves.
    let mut moved: BTreeMap<&IssueKey, i64> = BTreeMap::new();
    for &k in &keys {
        match (b.get(k), a.get(k)) {
            (Some(x), Some(y)) => {
                let m = days.moved(x.p80, before.horizon, y.p80, after.horizon);
                if m != 0 {
                    moved.insert(k, m);
                }
            }
            // New and gone issues count as moved for what waits on them (with no size).
            _ => {
                moved.insert(k, 0);
            }
        }
    }
    let scene = Scene {
        moved: &moved,
        reports: [after, before],
        zone: &after_plan.zone,
        new: a.keys().filter(|k| !b.contains_key(*k)).copied().collect(),
        gone: b.keys().filter(|k| !a.contains_key(*k)).copied().collect(),
        capacity: capacity_changes(
            before_plan,
            after_plan,
            days.day0,
            before.horizon.max(after.horizon),
        ),
        // The days that passed: the old day 0 up to the day before the new one (audit 149: Friday to
        // Sunday counted none, and every move was put down to a queue).
        passed: days.between(before.as_of - Days::new(1), after.as_of - Days::new(1)),
        passed_for: {
            let (from, to) = (before.as_of, after.as_of);
            let span = u32::try_from((from.max(to) - days.day0).num_days() + 2).unwrap_or(0);
            after_plan
                .team
                .iter()
                .map(|m| {
                    let own = Calendar::new(&m.calendar, days.day0, span);
                    // The days that passed are the old day 0 up to the day before the new one: from
                    // Thursday to Friday, Thursday passed (audit 148: a Monday-to-Thursday person was
                    // told "none of them chen's working days" of a Thursday).
                    let (from, to) = (from - Days::new(1), to - Days::new(1));
                    (
                        m.name.as_str(),
                        own.working_days_between(days.day0, from, to),
                    )
                })
                .collect()
        },
        workday_hours: after_plan.workday_hours,
        joined: after_plan
            .team
            .iter()
            .map(|m| m.name.as_str())
            .filter(|n| before_plan.member(n).is_none())
            .collect(),
        holidays: holidays_changed(before_plan, after_plan, after.as_of.year()),
        work: b
            .iter()
            .chain(a.iter())
            .fold(BTreeMap::new(), |mut work, (k, f)| {
                let days = (f.remaining_hours / after_plan.workday_hours.max(1e-9)).round() as u64;
                let w = work.entry(*k).or_insert(0);
                *w = (*w).max(days);
                work
            }),
    };
    let mut out: Vec<IssueChange> = moved
        .iter()
        .map(|(&k, &m)| {
            let (xb, xa) = (b.get(k).copied(), a.get(k).copied());
            let Reason {
                why,
                upstream,
                people,
            } = match (xb, xa) {
                (None, _) => Reason::plain(WHY_NEW.to_owned()),
                // Closed, or no longer on Gitea (deleted, moved to another repository, out of the plan).
                (_, None) => Reason::plain(
                    if pa
                        .get(k)
                        .is_some_and(|i| i.state == crate::domain::OpenState::Closed)
                    {
                        WHY_CLOSED
                    } else if planned_repos.contains(&k.repo) {
                        WHY_GONE
                    } else {
                        // Nothing of its repository in the plan: taken out of the config, not gone
                        // from Gitea (audit 133: a repository dropped was "37 issues gone").
                        WHY_OUT
                    }
                    .to_owned(),
                ),
                // Into or out of a dependency cycle: not forecast on one side, whatever its dates read.
                (Some(x), Some(y)) if x.in_cycle() != y.in_cycle() => Reason::plain(
                    if y.in_cycle() {
                        "into a dependency cycle: not forecast"
                    } else {
                        "out of a dependency cycle: forecast again"
                    }
                    .to_owned(),
                ),
                (Some(x), Some(y)) => {
                    let mut r = why_moved(
                        k,
                        m,
                        [x, y],
                        [pb.get(k).copied(), pa.get(k).copied()],
                        waiting.get(k),
                        &scene,
                    );
                    if let Some(leave) = across_time_off([x, y], m, after_plan, days, after.as_of) {
                        r.why.push_str(&leave);
                    }
                    r
                }
            };
            IssueChange {
                issue: k.to_string(),
                title: xa.or(xb).map(|i| i.title.clone()).unwrap_or_default(),
                before: xb.map(issue_side),
                after: xa.map(issue_side),
                // A placeholder date on one side is no move (audit 133: a cycle broken read as −517).
                moved_working_days: match (xb, xa) {
                    (Some(x), Some(y)) if x.in_cycle() != y.in_cycle() => 0,
                    _ => m,
                },
                why,
                upstream,
                people,
            }
        })
        .collect();
    // An issue whose p80 stayed put (beyond the horizon both sides) but whose chance of being done moved
    // by a tenth or more: a dependency on work rarely done makes it rarely done too, and the milestone
    // it is in looks earlier as it leaves (audit 131: add_dep took an issue from 67% to 0%, and the
    // consequence said only that its milestone moved earlier).
    for &k in keys.iter().filter(|k| !moved.contains_key(*k)) {
        let (Some(x), Some(y)) = (b.get(k).copied(), a.get(k).copied()) else {
            continue;
        };
        let Some((then, now)) = issue_side(x).chance_moved(&issue_side(y)) else {
            continue;
        };
        // Why: a dependency it did not have, else one whose own chance moved.
        let deps = |p: &BTreeMap<&IssueKey, &PlannedIssue>| {
            p.get(k).map(|i| i.depends_on.clone()).unwrap_or_default()
        };
        let (deps_then, deps_now) = (deps(&pb), deps(&pa));
        let behind = deps_now
            .iter()
            .find(|d| !deps_then.contains(d))
            .map(|d| format!("; it now waits on {d}"))
            .or_else(|| {
                deps_now
                    .iter()
                    .find(|d| {
                        b.get(d).zip(a.get(d)).is_some_and(|(x, y)| {
                            issue_side(x).chance_moved(&issue_side(y)).is_some()
                        })
                    })
                    .map(|d| format!("; waits on {d}"))
            })
            .unwrap_or_default();
        out.push(IssueChange {
            issue: k.to_string(),
            title: y.title.clone(),
            before: Some(issue_side(x)),
            after: Some(issue_side(y)),
            moved_working_days: 0,
            why: format!(
                "chance of being done {} → {}{behind}",
                percent(then),
                percent(now)
            ),
            upstream: Vec::new(),
            people: Vec::new(),
        });
    }
    // `moved` is keyed by IssueKey, so the stable sort leaves ties in key order.
    out.sort_by_key(|c| std::cmp::Reverse(c.moved_working_days.unsigned_abs()));
    out
}

/// How far an issue's chance of being done moves, its p80 held, before the consequence names it.
const CHANCE_MOVED: f64 = 0.1;

/// Where an issue's p80 moved across the whole of a time off of the person it is planned for (later: from
/// before its first day to after its last; earlier: the other way), and that time off's working days
/// are half the move or more, the words that say so: `; its p80 now after vera's time off Jan 11 – Jan
/// 22`. A day's slip that lands the work after two weeks' leave moves its p80 eleven working days, which
/// "1 working day passed" alone does not explain (audit 108); a move of forty that the issue's own change
/// made is not the leave's. A time off already running on day 0 is crossed from day 0: no p80 falls
/// before it, and work given to someone away until Dec 4 waits for Dec 4 all the same (audit 112).
fn across_time_off(
    [b, a]: [&IssueForecast; 2],
    moved: i64,
    plan: &Plan,
    days: &WorkingDays,
    day0: NaiveDate,
) -> Option<String> {
    let (When::Date(from), When::Date(to)) = (b.p80, a.p80) else {
        return None;
    };
    let person = a.planned_assignee.as_deref().or(a.assignee.as_deref())?;
    let member = plan.team.iter().find(|m| m.name == person)?;
    // A capacity directive's period of no hours is time off too (audit 123: an offsite pushed work ten
    // working days, said only as "queue of amara").
    let away = member.calendar.overrides.iter().filter_map(|o| {
        let to = o.to.filter(|_| o.hours_per_day <= 0.0)?;
        Some((o.from, to))
    });
    // Of several crossed, the longest ahead says most (ties: the first).
    let (side, (first, last), ahead) = member
        .calendar
        .time_off
        .iter()
        .copied()
        .chain(away)
        .filter_map(|(first, last)| {
            // The part still ahead: a time off running on day 0 starts, for the plan, on day 0 — and so
            // does one that starts on the person's first working day from day 0 (audit 124: the same
            // leave from a Monday, day 0 a Friday chen does not work, was not said).
            let running = first <= day0
                || day0
                    .iter_days()
                    .take_while(|d| *d < first)
                    .all(|d| member.calendar.hours_on(d) <= 0.0);
            let ahead = first.max(day0);
            if (from < first || (running && from <= last)) && to > last {
                Some(("after", (first, last), ahead))
            } else if to < first && from > last {
                Some(("before", (first, last), ahead))
            } else {
                None
            }
        })
        .rev()
        .max_by_key(|(_, (_, last), ahead)| *last - *ahead)?;
    let leave_days = ahead.pred_opt().map_or(0, |eve| days.between(eve, last));
    if 2 * leave_days < moved.abs() {
        return None;
    }
    let day = |d: NaiveDate| short(&d.to_string(), day0.year());
    Some(format!(
        "; its p80 now {side} {person}'s time off {} – {}",
        day(first),
        day(last)
    ))
}

/// Why an issue moved: the words, the moved issues they point at, the people whose change it is.
struct Reason {
    why: String,
    upstream: Vec<String>,
    people: Vec<String>,
}

impl Reason {
    fn plain(why: String) -> Self {
        Self {
            why,
            upstream: Vec::new(),
            people: Vec::new(),
        }
    }
}

/// Why `key` moved by `moved` working days. The causes are tried from the issue's own to the farthest,
/// each only where it pushes the way the issue moved: its own inputs; its chance of being done crossing
/// 80%; the plan giving it to someone else; the priority it inherits from what waits on it; what it waits
/// on, and the work ahead of it in its queue, where those moved by at least half as much; its person's
/// hours, changed before it ends, the way that moves it; its remaining effort re-measured by at least
/// half its move; then the smaller pushes of what it waits on and of its queue, a smaller re-measured
/// effort (a quarter of a day at least), its chance of being done, day 0 moving on with nothing done on
/// it, and last the queue or the team's capacity. (An audit of a month of runs found a capacity cut said
/// as "calibration" for issues whose effort fell, and a dependency that moved a day named for a move of
/// twenty that a re-estimate ahead in the queue made.)
fn why_moved<'a>(
    key: &IssueKey,
    moved: i64,
    [b, a]: [&IssueForecast; 2],
    [pb, pa]: [Option<&PlannedIssue>; 2],
    waiting: Option<&BTreeSet<&IssueKey>>,
    scene: &Scene<'a>,
) -> Reason {
    let reports = scene.reports;
    let recalibrated = reports[0].calibration.refitted(&reports[1].calibration);
    let own = match own_change(b, a, pb, pa, recalibrated, reports[1].as_of, scene.zone) {
        Some(OwnChange::Inputs) => return Reason::plain(WHY_OWN.to_owned()),
        Some(OwnChange::Effort(why)) => Some(why),
        None => None,
    };
    // Its p80 went between a date and "not within the horizon" as its chance of being done at all
    // crossed 80% (below it, fewer than 80% of the futures finish): a move of hundreds of working days
    // that no queue or capacity made, whatever else moved a day.
    if let (Some(pb), Some(pa)) = (b.probability_done, a.probability_done) {
        let flipped = matches!(
            (b.p80, a.p80),
            (When::Date(_), When::BeyondHorizon) | (When::BeyondHorizon, When::Date(_))
        );
        if flipped && (pb >= P80) != (pa >= P80) {
            return Reason::plain(format!(
                "chance of being done {} → {} (a p80 needs 80%)",
                percent_tenths(pb),
                percent_tenths(pa)
            ));
        }
    }
    let ends = |w: When| match w {
        When::Date(d) => d,
        When::BeyondHorizon => reports[0].horizon.max(reports[1].horizon) + Days::new(1),
    };
    // Its span runs to the later of its median plan's end and its p80, on either side: hours lost after
    // the plan's end but before the p80 move the p80 too (an audit saw a course from February said as
    // the queue for an issue whose p80 moved from February to April).
    let last_end = ends(b.planned_end)
        .max(ends(a.planned_end))
        .max(ends(b.p80))
        .max(ends(a.p80));
    // The plan gives it to someone else (the one it was planned for left, or may no longer take it, or
    // someone joined): the people whose hours changed before it ends are the ones behind it.
    if let (Some(then), Some(now)) = (b.planned_assignee.as_ref(), a.planned_assignee.as_ref())
        && then != now
    {
        // Behind it: a change of either one's hours, and anyone who joined (the unassigned work is
        // shared out again). Where someone joined, a change of hours the wrong way for the move (the one
        // it goes to losing hours) is not behind it (audit 123: amara's offsite named why she received
        // chen's work, which zoe's joining moved).
        let mut why = format!("planned for {now}, not {then}");
        let joined: Vec<String> = scene
            .joined
            .iter()
            .filter(|j| a.assignee.is_none() && **j != now.as_str())
            .map(|j| (*j).to_owned())
            .collect();
        let mut people: Vec<String> = [(then, -1.0), (now, 1.0)]
            .into_iter()
            .filter(|(p, sign)| {
                scene
                    .capacity_change(p, last_end)
                    .is_some_and(|gained| joined.is_empty() || gained * sign >= 0.0)
            })
            .map(|(p, _)| p.clone())
            .collect();
        if !joined.is_empty() {
            why.push_str(&format!(
                "; {} joined the team",
                crate::prose::and_list(&joined)
            ));
            people.extend(joined);
        }
        return Reason {
            why,
            upstream: Vec::new(),
            people,
        };
    }
    // Its priority is inherited from what waits on it, and that changed: name the waiting issue whose
    // priority it now carries (ties: the smallest key), else the one that moved most.
    if b.effective_priority != a.effective_priority
        && let Some(waiting) = waiting
    {
        let priority = |k: &IssueKey| {
            reports[0]
                .issues
                .iter()
                .find(|i| &i.issue == k)
                .map(|i| i.effective_priority)
        };
        let carried = waiting
            .iter()
            .find(|k| priority(k) == Some(a.effective_priority))
            .or_else(|| {
                waiting
                    .iter()
                    .filter(|k| scene.moved.contains_key(*k))
                    .min_by_key(|k| {
                        std::cmp::Reverse(scene.moved.get(*k).map(|m| m.unsigned_abs()))
                    })
            });
        if let Some(w) = carried {
            return Reason {
                why: format!("blocks {w}"),
                upstream: vec![w.to_string()],
                people: Vec::new(),
            };
        }
    }
    // What pushes it the way it moved: each dependency and each piece of work ahead of it in its queue
    // that moved the same way, or came ahead of it, or left; "strong" pushes go at least half as far.
    let deps: BTreeSet<&IssueKey> = pb
        .iter()
        .chain(pa.iter())
        .flat_map(|i| i.depends_on.iter())
        .chain(b.depends_on.iter().chain(&a.depends_on))
        .collect();
    let dep_pushes: Vec<(&IssueKey, Push)> = deps
        .into_iter()
        .filter_map(|d| Some((d, scene.push_of(d)?)))
        .filter(|(_, p)| p.same_way(moved))
        .collect();
    let people = [a.planned_assignee.as_ref(), b.planned_assignee.as_ref()];
    // The work ahead of it in its person's queue, on each side (the same person on both: a change of
    // person was said above). Work ahead on one side only came ahead of it, or left.
    let queue_pushes: Option<(&String, Vec<(&IssueKey, Push)>)> =
        people.iter().flatten().next().map(|person| {
            let ahead = |report: &'a ForecastReport| -> BTreeSet<&'a IssueKey> {
                report
                    .people
                    .iter()
                    .filter(|p| &p.name == *person)
                    .flat_map(|p| p.queue.iter().take_while(|k| *k != key))
                    .collect()
            };
            let (now, then) = (ahead(reports[0]), ahead(reports[1]));
            let pushes = now
                .union(&then)
                .filter_map(|k| {
                    let push = match (now.contains(k), then.contains(k)) {
                        (true, true) => scene.push_of(k)?,
                        (true, false) => Push::Later(scene.work_of(k)),
                        _ => Push::Earlier(scene.work_of(k)),
                    };
                    Some((*k, push))
                })
                .filter(|(_, p)| p.same_way(moved))
                .collect();
            (*person, pushes)
        });
    let waits_on = |strong_only: bool| -> Option<Reason> {
        // The dependency that pushed most (ties: the smallest key, as the BTreeSet orders them).
        let (d, _) = dep_pushes
            .iter()
            .filter(|(_, p)| !strong_only || p.strong(moved))
            .fold(None::<(&IssueKey, u64)>, |best, (d, p)| match best {
                Some((_, size)) if size >= p.size() => best,
                _ => Some((d, p.size())),
            })?;
        Some(Reason {
            why: format!("waits on {d}"),
            upstream: if strong_only {
                vec![d.to_string()]
            } else {
                Vec::new()
            },
            people: Vec::new(),
        })
    };
    // In a queue, work that came ahead or left adds up (each is so much more or less to do first), while
    // moves ahead carry on one another (the farthest counts). A weak push is a reason but no route for a
    // directive (upstream stays empty): a day's drift behind a reprioritised issue named it on moves that
    // were the same without it.
    let queue_of = |strong_only: bool| -> Option<Reason> {
        let (person, ahead) = queue_pushes.as_ref()?;
        let arrivals: u64 = ahead
            .iter()
            .filter(|(_, p)| !matches!(p, Push::Moved(_)))
            .map(|(_, p)| p.size())
            .sum();
        let farthest = ahead
            .iter()
            .filter(|(_, p)| matches!(p, Push::Moved(_)))
            .map(|(_, p)| p.size())
            .max()
            .unwrap_or(0);
        let together = 2 * (arrivals + farthest) >= moved.unsigned_abs();
        let upstream: Vec<String> = ahead
            .iter()
            .filter(|(_, p)| {
                !strong_only
                    || match p {
                        Push::Moved(_) => p.strong(moved),
                        Push::Later(_) | Push::Earlier(_) => together && p.size() > 0,
                    }
            })
            .map(|(k, _)| k.to_string())
            .collect();
        (!upstream.is_empty()).then(|| Reason {
            why: format!("queue of {person}"),
            upstream: if strong_only { upstream } else { Vec::new() },
            people: Vec::new(),
        })
    };
    // Its person's hours changed before it ends, the way that moves it (fewer hours: later; hours only
    // moved between days: either way).
    let capacity = people.iter().flatten().find_map(|p| {
        scene
            .capacity_change(p, last_end)
            .filter(|gained| gained.abs() < 1e-9 || (*gained < 0.0) == (moved > 0))
            .map(|gained| (p.as_str(), gained))
    });
    if let Some(mut r) = waits_on(true).or_else(|| queue_of(true)) {
        // Both pushed it (a re-estimate ahead of it and its person's hours cut): both are said, the
        // hours first where they alone account for half the move or more (audit 123: two weeks away
        // read "queue of farah; capacity of farah", the queue first).
        if let Some((person, gained)) = capacity {
            let (words, named) = scene.hours_of(person);
            let days = gained.abs() / scene.workday_hours.max(1e-9);
            r.why = if 2.0 * days >= moved.unsigned_abs() as f64 {
                format!("{words}; {}", r.why)
            } else {
                format!("{}; {words}", r.why)
            };
            r.people.extend(named);
        }
        return r;
    }
    if let Some((person, _)) = capacity {
        let (why, people) = scene.hours_of(person);
        return Reason {
            why,
            upstream: Vec::new(),
            people,
        };
    }
    // Only its remaining effort moved (an imputed estimate, a new calibration): the reason where the
    // effort moved the way the issue did and by at least half its move in working days.
    let effort_days = (a.remaining_hours - b.remaining_hours) / scene.workday_hours.max(1e-9);
    let effort = own.filter(|_| effort_days.signum() == (moved as f64).signum());
    if let Some(why) = effort.filter(|_| effort_days.abs() >= moved.unsigned_abs() as f64 / 2.0) {
        return Reason::plain(why.to_owned());
    }
    if let Some(r) = waits_on(false).or_else(|| queue_of(false)) {
        return r;
    }
    // Nothing ahead of it moved its way: a smaller change of its own effort the same way, of a quarter
    // of a working day at least (a re-fitted calibration moves every effort by minutes).
    if let Some(why) = effort.filter(|_| effort_days.abs() >= 0.25) {
        return Reason::plain(why.to_owned());
    }
    // Its plan the same, or moved less than half as far its way, but its chance of being done at all
    // changed the way it moved (the abandonment model learnt from new closes): that is the reason, not
    // the queue it did not move in (audit 193: "queue of farah", −10, for a queue the same on both sides
    // and a plan a day later; a day passing always shifts a plan a little).
    let same_plan = b.planned_start == a.planned_start && b.planned_end == a.planned_end;
    let plan_held = same_plan
        || match (b.planned_end, a.planned_end) {
            (When::Date(x), When::Date(y)) => {
                // In calendar days, against the move's working days as calendar days (7 for 5).
                let shift = (y - x).num_days();
                shift.signum() != moved.signum()
                    || 2 * 5 * shift.unsigned_abs() < 7 * moved.unsigned_abs()
            }
            _ => false,
        };
    if plan_held
        && let (Some(pb), Some(pa)) = (b.probability_done, a.probability_done)
        && percent(pb) != percent(pa)
        && (same_plan || (pa > pb) == (moved < 0))
    {
        return Reason::plain(format!(
            "chance of being done {} → {}",
            percent(pb),
            percent(pa)
        ));
    }
    // Day 0 moved on and it moved later with nothing else changed: the work in front of it was not done
    // in those days (as far as Gitea shows).
    // (By more than the days passed where they pushed it past a weekend, a holiday or someone's leave.)
    // Counted on the calendar of the person it is planned for: someone on leave had none of the
    // team's days (audit 90: "2 working days passed with no progress" of someone away).
    let person = a.planned_assignee.as_deref().or(a.assignee.as_deref());
    let theirs = person.and_then(|p| Some((p, *scene.passed_for.get(p)?)));
    // A move far past the days that passed (a weekend or a holiday pushes a few more) is not theirs
    // (audit 132: "+28: 1 working day passed with no progress recorded" after a milestone reopened).
    let days_passed = theirs.map_or(scene.passed, |(_, n)| n.max(scene.passed));
    if scene.passed > 0
        && moved > 0
        && moved.unsigned_abs() <= PASSED_MOVES * days_passed.unsigned_abs() + 5
    {
        return Reason::plain(match theirs {
            Some((p, 0)) => format!(
                "{} passed, none of them {p}'s working days",
                crate::prose::count(scene.passed, "working day", "working days")
            ),
            Some((_, n)) => format!(
                "{} passed with no progress recorded",
                crate::prose::count(n, "working day", "working days")
            ),
            None => format!(
                "{} passed with no progress recorded",
                crate::prose::count(scene.passed, "working day", "working days")
            ),
        });
    }
    Reason::plain(unexplained(
        a.planned_assignee
            .as_deref()
            .or(b.planned_assignee.as_deref()),
        same_plan,
    ))
}

/// Why an issue moved that nothing named explains: planned for someone, the queue it is in moved it, in
/// its plan or, where that held, in the futures around it (the queue ahead finishing sooner or later
/// there: audit 98 saw "team capacity" said where no one's hours changed); planned for no one, its place
/// in the team's shared capacity.
fn unexplained(planned: Option<&str>, same_plan: bool) -> String {
    match planned {
        Some(p) if !same_plan => format!("queue of {p}"),
        Some(p) => format!("range of {p}'s queue"),
        None => WHY_CAPACITY.to_owned(),
    }
}

/// The share of futures a p80 date needs.
const P80: f64 = 0.8;

/// How many times the working days that passed (and five more) a move may be and still be put down to
/// them.
const PASSED_MOVES: u64 = 2;

/// A probability in percent with one decimal (`80.3%`): near a threshold, whole percents read the same.
fn percent_tenths(p: f64) -> String {
    format!("{:.1}%", (p * 1000.0).round() / 10.0)
}

/// `Dec 12`, with the year when it is not `year`; `beyond horizon` in words.
fn short(when: &str, year: i32) -> String {
    match NaiveDate::parse_from_str(when, "%Y-%m-%d") {
        Ok(d) if d.year() == year => d.format("%b %-d").to_string(),
        Ok(d) => d.format("%b %-d %Y").to_string(),
        Err(_) => when.to_owned(),
    }
}

/// A milestone's change of due day in words, with where the p80 stands against the new one: `, due Dec
/// 18 → Jan 22 2027, p80 39 working days late`; empty where the due day held.
fn due_moved(before: &MilestoneSide, after: &MilestoneSide, year: i32) -> String {
    if before.due == after.due {
        return String::new();
    }
    let day =
        |d: Option<NaiveDate>| d.map_or_else(|| "none".to_owned(), |d| short(&d.to_string(), year));
    let days = |n: i64| crate::prose::count(n.unsigned_abs(), "working day", "working days");
    let stands = match after.slack_working_days {
        Some(0) => ", p80 on the due day".to_owned(),
        Some(n) if n < 0 => format!(", p80 {} late", days(n)),
        Some(n) => format!(", p80 {} early", days(n)),
        None => String::new(),
    };
    format!(", due {} → {}{stands}", day(before.due), day(after.due))
}

fn summary(
    milestones: &[MilestoneChange],
    issues: &[IssueChange],
    year: i32,
    about: &[u64],
) -> String {
    // A milestone heads the summary only for a change the summary shows: its p80 moved, or its P(on time)
    // moved by a whole percent. A p50 a day off, or a P(on time) a fraction off, is what any change does
    // to every milestone through the shared calendar; named first, it hid the one the change was about.
    let changed = |m: &&MilestoneChange| match (&m.before, &m.after) {
        (Some(b), Some(a)) => {
            m.moved_working_days != 0
                || b.probability_on_time.map(percent) != a.probability_on_time.map(percent)
                || b.due != a.due
        }
        _ => true,
    };
    // Biggest change first: the p80's move, then the change in P(on time), then by id.
    let prob_change = |m: &MilestoneChange| -> u64 {
        let p = |s: &Option<MilestoneSide>| s.as_ref().and_then(|s| s.probability_on_time);
        match (p(&m.before), p(&m.after)) {
            (Some(x), Some(y)) => ((x - y).abs() * 1000.0).round() as u64,
            _ => 0,
        }
    };
    let mut moved: Vec<&MilestoneChange> = milestones.iter().filter(changed).collect();
    moved.sort_by_key(|m| {
        (
            std::cmp::Reverse((m.moved_working_days.unsigned_abs(), prob_change(m))),
            m.milestone,
        )
    });
    // Every milestone that changed is named, biggest first (a proposal that named one moved milestone
    // hid a second whose P(on time) fell 7 points), with the ones the change is about after the
    // biggest, even unchanged; past three, the rest are counted, as the summary is a pull request's
    // title too.
    let (top, rest) = moved
        .split_first()
        .map_or((None, &[][..]), |(t, r)| (Some(*t), r));
    let about_them = milestones
        .iter()
        .filter(|m| about.contains(&m.milestone) && top.is_none_or(|t| t.milestone != m.milestone));
    let named: Vec<&MilestoneChange> = top
        .into_iter()
        .chain(about_them)
        .chain(rest.iter().copied())
        .fold(Vec::new(), |mut v, m| {
            if !v
                .iter()
                .any(|x: &&MilestoneChange| x.milestone == m.milestone)
            {
                v.push(m);
            }
            v
        });
    const NAMED: usize = 3;
    let names = names_of(milestones);
    let mut parts = Vec::new();
    for m in named.iter().take(NAMED) {
        let title = names.get(&m.milestone).unwrap_or(&m.title);
        parts.push(match (&m.before, &m.after) {
            (Some(b), Some(a)) => {
                let p80 = if m.moved_working_days == 0 && a.p80 != b.p80 {
                    // A Friday's p80 become the Saturday's: no working day, but not "unchanged" beside
                    // a table that shows both dates (audit 161).
                    format!(
                        "p80 on the same working day ({} → {})",
                        short(&b.p80, year),
                        short(&a.p80, year)
                    )
                } else if m.moved_working_days == 0 {
                    format!("p80 unchanged ({})", short(&a.p80, year))
                } else {
                    // Working days, said in full: "d" read as calendar days; across the horizon, said so.
                    format!(
                        "p80 {} ({} → {})",
                        crate::prose::p80_moved(&b.p80, &a.p80, m.moved_working_days),
                        short(&b.p80, year),
                        short(&a.p80, year)
                    )
                };
                let prob = match (b.probability_on_time, a.probability_on_time) {
                    (Some(x), Some(y)) if percent(x) == percent(y) => {
                        format!(", P(on time) {}", percent(y))
                    }
                    (Some(x), Some(y)) => format!(", P(on time) {} → {}", percent(x), percent(y)),
                    (None, Some(y)) => format!(", P(on time) {}", percent(y)),
                    _ => String::new(),
                };
                format!("{title} {p80}{prob}{}", due_moved(b, a, year))
            }
            (None, Some(a)) => format!("{title} new (p80 {})", short(&a.p80, year)),
            _ if m.closed => format!("{title} closed"),
            _ if m.emptied => format!("{title} has nothing open any more"),
            _ => format!("{title} gone"),
        });
    }
    if named.len() > NAMED {
        parts.push(crate::prose::count(
            named.len() - NAMED,
            "more milestone changed",
            "more milestones changed",
        ));
    }
    let count = |why: &str| issues.iter().filter(|i| i.why == why).count();
    let (new, closed, gone, out) = (
        count(WHY_NEW),
        count(WHY_CLOSED),
        count(WHY_GONE),
        count(WHY_OUT),
    );
    // Those into or out of a dependency cycle, and those whose chance of being done moved by a tenth or
    // more (its p80 held, or crossed the horizon with it): named, as such a change is what a dependency
    // on rarely done work does, and what makes its milestone look earlier (audits 131, 133).
    fn sides(i: &IssueChange) -> Option<(&IssueSide, &IssueSide)> {
        i.before.as_ref().zip(i.after.as_ref())
    }
    let (into, out_of): (Vec<&IssueChange>, Vec<&IssueChange>) = issues
        .iter()
        .filter(|i| sides(i).is_some_and(|(b, a)| b.in_cycle != a.in_cycle))
        .partition(|i| sides(i).is_some_and(|(_, a)| a.in_cycle));
    for (list, words) in [
        (&out_of, "out of a dependency cycle, forecast again"),
        (&into, "into a dependency cycle, not forecast"),
    ] {
        if !list.is_empty() {
            let keys: Vec<String> = list.iter().map(|i| i.issue.clone()).collect();
            parts.push(format!("{} {words}", crate::prose::and_list(&keys)));
        }
    }
    let chance: Vec<(&IssueChange, (f64, f64))> = issues
        .iter()
        .filter_map(|i| {
            let (b, a) = sides(i)?;
            (b.in_cycle == a.in_cycle).then_some(())?;
            Some((i, b.chance_moved(a)?))
        })
        .collect();
    const CHANCES_NAMED: usize = 2;
    for (i, (x, y)) in chance.iter().take(CHANCES_NAMED) {
        parts.push(format!(
            "{} done in {} → {} of the futures",
            i.issue,
            percent(*x),
            percent(*y)
        ));
    }
    if chance.len() > CHANCES_NAMED {
        parts.push(crate::prose::count(
            chance.len() - CHANCES_NAMED,
            "more issue's chance of being done moved",
            "more issues' chances of being done moved",
        ));
    }
    let moved = issues.len() - new - closed - gone - out - chance.len() - into.len() - out_of.len();
    let mut counts = Vec::new();
    if moved > 0 {
        // The biggest move named: "5 issues moved" hid the issue an op was about slipping 51 working
        // days (audit 140). Issues come biggest move first; those said above or counted apart are not it.
        let apart: BTreeSet<&str> = chance
            .iter()
            .map(|(i, _)| *i)
            .chain(into.iter().copied())
            .chain(out_of.iter().copied())
            .map(|i| i.issue.as_str())
            .collect();
        let most = issues.iter().find(|i| {
            ![WHY_NEW, WHY_CLOSED, WHY_GONE, WHY_OUT].contains(&i.why.as_str())
                && !apart.contains(i.issue.as_str())
        });
        let mut words = crate::prose::count(moved, "issue moved", "issues moved");
        if let Some((i, (b, a))) = most.and_then(|i| Some((i, sides(i)?))) {
            words.push_str(&format!(
                " ({}{}, p80 {})",
                if moved > 1 { "the most: " } else { "" },
                i.issue,
                crate::prose::p80_moved(&b.p80, &a.p80, i.moved_working_days)
            ));
        }
        counts.push(words);
    }
    if new > 0 {
        counts.push(crate::prose::count(new, "issue new", "issues new"));
    }
    if closed > 0 {
        counts.push(crate::prose::count(closed, "issue closed", "issues closed"));
    }
    if gone > 0 {
        counts.push(crate::prose::count(gone, "issue gone", "issues gone"));
    }
    if out > 0 {
        counts.push(crate::prose::count(
            out,
            "issue of a repository no longer synced",
            "issues of repositories no longer synced",
        ));
    }
    if !counts.is_empty() {
        parts.push(counts.join(", "));
    }
    if parts.is_empty() {
        NO_CHANGE.to_owned()
    } else {
        parts.join("; ")
    }
}

/// What a plan of a ledger keeps of the state's forecasts, with the capacity directives it takes back
/// (`pipeline::keeps`): how each side of a change is kept, as a run would keep it.
pub type Keeps<'a> = dyn Fn(&Plan, Option<&str>) -> (crate::forecast::Kept, Vec<String>) + 'a;

/// The consequence of changing the state from `before` to `after` (each a snapshot and the ledger's text):
/// both replayed as of `now`, forecast with [`compare`], then diffed. The one way every proposal — a tool
/// call, a directive, a pull request kept current — gets its consequence.
pub fn of_change(
    config: &crate::config::Config,
    before: (&crate::state::Snapshot, Option<&str>),
    after: (&crate::state::Snapshot, Option<&str>),
    now: chrono::DateTime<chrono::Utc>,
    keeps: &Keeps<'_>,
    committed: Option<&ForecastReport>,
) -> (Consequence, Plan, Plan) {
    let before_plan = crate::ledger::replay(before.0, config, before.1, now).into_plan();
    let after_plan = crate::ledger::replay(after.0, config, after.1, now).into_plan();
    let (kept, _) = keeps(&before_plan, before.1);
    // A change that takes a capacity directive back (a withdrawal's edit) gives back the plan before it
    // on the side after, as the run after the merge does (audit 181: the pull request shared it afresh).
    let (after_kept, taken_back) = keeps(&after_plan, after.1);
    let after_kept = (!taken_back.is_empty()).then_some(after_kept);
    compare_reusing(
        config,
        before_plan,
        after_plan,
        &kept,
        after_kept.as_ref(),
        committed,
    )
}

/// Forecasts two plans as twins and diffs them: the same settings and seed (so every issue draws the same
/// random numbers in both), and the same people for unassigned work — `planned_for` (the committed
/// forecast's) in the plan before, and whoever the forecast before planned in the plan after, so that
/// only what the change forces moves. The plans are returned with those people set.
pub fn compare(
    config: &crate::config::Config,
    before_plan: Plan,
    after_plan: Plan,
    planned_for: &BTreeMap<IssueKey, String>,
) -> (Consequence, Plan, Plan) {
    let kept = crate::forecast::Kept {
        planned_for: planned_for.clone(),
        cut_before: BTreeMap::new(),
    };
    compare_reusing(config, before_plan, after_plan, &kept, None, None)
}

/// [`compare`], with the forecast before taken from `committed` (the committed forecast) when that is the
/// forecast of exactly the plan before: a what-if on an unchanged state then runs one forecast, not two.
///
/// A plan larger than `forecast.what_if_issue_trials` (open issues × trials) is compared on twin
/// forecasts of fewer trials — before and after, the same numbers — and their difference is applied to
/// the full forecast before ([`shifted`]): an issue the change does not reach keeps its figures exactly,
/// one it moves moves by what the twins measured.
pub fn compare_reusing(
    config: &crate::config::Config,
    mut before_plan: Plan,
    mut after_plan: Plan,
    kept: &crate::forecast::Kept,
    after_kept: Option<&crate::forecast::Kept>,
    committed: Option<&ForecastReport>,
) -> (Consequence, Plan, Plan) {
    let settings = crate::forecast::Settings::from_config(config);
    // Kept as a run keeps them (the cut lines tried first, the people of the forecast before a capacity
    // directive taken back): the forecast before is then the run's, and its key matches.
    before_plan.keep(
        kept,
        committed
            .map(crate::forecast::planned_people)
            .unwrap_or_default(),
    );
    let mode = crate::forecast::Mode::from_config(config);
    let (b, _) = crate::forecast::run_or_reuse(&before_plan, &settings, mode, committed);
    // A capacity directive that hires someone shares the work out again, as a run would; one taken back
    // gives back the plan before it (`after_kept`).
    match after_kept {
        Some(k) => after_plan.keep(k, crate::forecast::planned_people(&b)),
        None => {
            after_plan.planned_for =
                crate::forecast::people_to_keep(&after_plan.team, after_plan.as_of, &b);
            after_plan.last_planned = crate::forecast::planned_people(&b);
            after_plan.cut_before = crate::forecast::cut_lines(&b);
        }
    }
    // The forecasts compared run the same trials (adaptive trials may have stopped the one before early),
    // so both sides draw the same numbers; the consequence reports no cut lines, so they need none.
    let paired = |plan: &Plan, trials: u32| {
        crate::forecast::run_unkeyed(
            plan,
            &crate::forecast::Settings { trials, ..settings },
            crate::forecast::Mode {
                adaptive_trials: false,
                skip_cut_lines: true,
            },
        )
    };
    let twins = twin_trials(
        config.forecast.what_if_issue_trials,
        b.issues.len(),
        b.trials,
    );
    let a = if twins < b.trials {
        tracing::info!(
            "what-if: twin forecasts of {twins} trials measure the change ({} open issues × {} trials \
             is above forecast.what_if_issue_trials)",
            b.issues.len(),
            b.trials
        );
        // The twin before plans unassigned work for the people the full forecast before planned, exactly
        // as the plan after does.
        let mut twin_before_plan = before_plan.clone();
        twin_before_plan
            .planned_for
            .clone_from(&after_plan.planned_for);
        // The twins are independent: side by side, one's preparation overlaps the other's.
        let (tb, ta) = rayon::join(
            || paired(&twin_before_plan, twins),
            || paired(&after_plan, twins),
        );
        shifted(&b, &tb, ta, &WorkingDays::new(&b, &b, &after_plan))
    } else {
        paired(&after_plan, b.trials)
    };
    let c = diff(&b, &a, &before_plan, &after_plan);
    (c, before_plan, after_plan)
}

/// The fewest trials a what-if's twin forecasts run.
const MIN_TWIN_TRIALS: u32 = 1_000;

/// The trials of a what-if's twin forecasts: `trials` while `open × trials` is within `budget` (or the
/// budget is 0), else the budget spread over the open issues, at least [`MIN_TWIN_TRIALS`].
fn twin_trials(budget: u64, open: usize, trials: u32) -> u32 {
    let open = (open as u64).max(1);
    if budget == 0 || open.saturating_mul(u64::from(trials)) <= budget {
        return trials;
    }
    u32::try_from(budget / open)
        .unwrap_or(u32::MAX)
        .clamp(MIN_TWIN_TRIALS, trials.max(MIN_TWIN_TRIALS))
        .min(trials)
}

/// The forecast after a change, estimated from the full forecast before (`full`) and twin forecasts of
/// fewer trials before and after it (`twin_before`, `twin_after`, the same numbers): the twin after with
/// every figure the change moved in the twins moved by as much from the full forecast's figure — dates
/// by working days, chances by points — and every figure it did not move kept as the full forecast has
/// it. Where a side is beyond the horizon there is no distance to carry over, and the twin's figure
/// stands.
fn shifted(
    full: &ForecastReport,
    twin_before: &ForecastReport,
    mut twin_after: ForecastReport,
    days: &WorkingDays,
) -> ForecastReport {
    let when = |f: When, b: When, a: When| -> When {
        if a == b {
            return f;
        }
        match (f, b, a) {
            (When::Date(f), When::Date(b), When::Date(a)) => {
                days.advance(f, days.between(b, a), full.horizon)
            }
            _ => a,
        }
    };
    let chance = |f: Option<f64>, b: Option<f64>, a: Option<f64>| match (f, b, a) {
        (_, Some(b), Some(a)) if a.to_bits() == b.to_bits() => f,
        (Some(f), Some(b), Some(a)) => Some((f + a - b).clamp(0.0, 1.0)),
        _ => a,
    };
    fn issues(r: &ForecastReport) -> BTreeMap<&IssueKey, &IssueForecast> {
        r.issues.iter().map(|i| (&i.issue, i)).collect()
    }
    fn milestone(r: &ForecastReport, id: u64) -> Option<&MilestoneForecast> {
        r.milestones.iter().find(|x| x.id == id)
    }
    let (full_issues, twin_issues) = (issues(full), issues(twin_before));
    for i in &mut twin_after.issues {
        if let (Some(f), Some(b)) = (full_issues.get(&i.issue), twin_issues.get(&i.issue)) {
            i.p10 = when(f.p10, b.p10, i.p10);
            i.p50 = when(f.p50, b.p50, i.p50);
            i.p80 = when(f.p80, b.p80, i.p80);
            i.probability_by_due = chance(
                f.probability_by_due,
                b.probability_by_due,
                i.probability_by_due,
            );
            i.probability_done = chance(f.probability_done, b.probability_done, i.probability_done);
        }
    }
    for m in &mut twin_after.milestones {
        if let (Some(f), Some(b)) = (milestone(full, m.id), milestone(twin_before, m.id)) {
            m.p10 = when(f.p10, b.p10, m.p10);
            m.p50 = when(f.p50, b.p50, m.p50);
            m.p80 = when(f.p80, b.p80, m.p80);
            m.probability_on_time = chance(
                f.probability_on_time,
                b.probability_on_time,
                m.probability_on_time,
            );
        }
    }
    twin_after.trials = full.trials;
    twin_after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_a_new_due_day_and_the_biggest_issue_move() {
        let day = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok();
        let side = |due: &str, slack: i64| MilestoneSide {
            p50: "2027-03-01".into(),
            p80: "2027-03-18".into(),
            probability_on_time: Some(0.0),
            due: day(due),
            slack_working_days: Some(slack),
        };
        let m = MilestoneChange {
            milestone: 3,
            title: "Mobile 3.0".into(),
            repo: "acme/web".into(),
            before: Some(side("2026-12-18", -60)),
            after: Some(side("2027-01-22", -39)),
            moved_working_days: 0,
            closed: false,
            emptied: false,
        };
        let issue = |key: &str, from: &str, to: &str, moved: i64| IssueChange {
            issue: key.into(),
            title: String::new(),
            before: Some(IssueSide {
                p50: from.into(),
                p80: from.into(),
                probability_done: None,
                in_cycle: false,
            }),
            after: Some(IssueSide {
                p50: to.into(),
                p80: to.into(),
                probability_done: None,
                in_cycle: false,
            }),
            moved_working_days: moved,
            why: "own change".into(),
            upstream: Vec::new(),
            people: Vec::new(),
        };
        // A deadline moved is said with both days and where the p80 stands against the new one, even
        // where the milestone is not what the change is about and nothing else of it moved.
        assert_eq!(
            summary(std::slice::from_ref(&m), &[], 2026, &[]),
            "Mobile 3.0 p80 unchanged (Mar 18 2027), P(on time) 0%, due Dec 18 → Jan 22 2027, \
             p80 39 working days late"
        );
        // The biggest issue move is named beside the count; one issue is named alone.
        let issues = [
            issue("acme/web#29", "2026-12-02", "2027-02-17", 51),
            issue("acme/web#30", "2026-12-03", "2026-12-04", 1),
        ];
        assert_eq!(
            summary(&[], &issues, 2026, &[]),
            "2 issues moved (the most: acme/web#29, p80 +51 working days)"
        );
        assert_eq!(
            summary(&[], &issues[1..], 2026, &[]),
            "1 issue moved (acme/web#30, p80 +1 working day)"
        );
    }

    #[test]
    fn the_summary_names_a_milestone_only_for_a_change_it_shows() {
        let side = |p50: &str, p80: &str, p: f64| MilestoneSide {
            p50: p50.into(),
            p80: p80.into(),
            probability_on_time: Some(p),
            due: None,
            slack_working_days: None,
        };
        let change = |id: u64, title: &str, before: MilestoneSide, after: MilestoneSide, moved| {
            MilestoneChange {
                milestone: id,
                title: title.into(),
                repo: "acme/api".into(),
                before: Some(before),
                after: Some(after),
                moved_working_days: moved,
                closed: false,
                emptied: false,
            }
        };
        // A p50 a day off and a P(on time) a fraction off: jitter, not worth a headline.
        let jitter = change(
            3,
            "Mobile",
            side("2027-03-10", "2027-03-25", 0.001),
            side("2027-03-11", "2027-03-25", 0.002),
            0,
        );
        assert_eq!(
            summary(std::slice::from_ref(&jitter), &[], 2026, &[]),
            "no forecast change"
        );
        // A P(on time) that moves by whole percents is.
        let real = change(
            4,
            "API v2",
            side("2027-05-03", "2027-05-18", 0.56),
            side("2027-05-03", "2027-05-18", 0.57),
            0,
        );
        assert_eq!(
            summary(&[jitter.clone(), real.clone()], &[], 2026, &[]),
            "API v2 p80 unchanged (May 18 2027), P(on time) 56% → 57%"
        );
        // The milestone a change is about is said too, after the one that moved most, even unchanged.
        assert_eq!(
            summary(&[jitter.clone(), real.clone()], &[], 2026, &[3, 4, 3]),
            "API v2 p80 unchanged (May 18 2027), P(on time) 56% → 57%; \
             Mobile p80 unchanged (Mar 25 2027), P(on time) <1%"
        );
        assert_eq!(
            summary(std::slice::from_ref(&jitter), &[], 2026, &[3]),
            // 0.2% is not 0%: a percent never rounds to a certainty the forecast does not have.
            "Mobile p80 unchanged (Mar 25 2027), P(on time) <1%"
        );
        // A Friday's p80 become the Saturday's moved no working day, and is said as both days.
        let weekend = change(
            5,
            "Web",
            side("2027-10-01", "2027-10-22", 0.4),
            side("2027-10-01", "2027-10-23", 0.4),
            0,
        );
        assert_eq!(
            summary(std::slice::from_ref(&weekend), &[], 2026, &[5]),
            "Web p80 on the same working day (Oct 22 2027 → Oct 23 2027), P(on time) 40%"
        );
        // Every milestone that changed is named, biggest first, then the ones it is about; past three,
        // counted.
        let moved = |id: u64, title: &str, days: i64| {
            change(
                id,
                title,
                side("2027-03-10", "2027-03-25", 0.5),
                side("2027-03-10", "2027-03-26", 0.4),
                days,
            )
        };
        let all = [
            moved(5, "Small", 1),
            real.clone(),
            moved(6, "Big", 9),
            jitter.clone(),
            moved(7, "Middle", -4),
        ];
        assert_eq!(
            summary(&all[..3], &[], 2026, &[]),
            "Big p80 +9 working days (Mar 25 2027 → Mar 26 2027), P(on time) 50% → 40%; \
             Small p80 +1 working day (Mar 25 2027 → Mar 26 2027), P(on time) 50% → 40%; \
             API v2 p80 unchanged (May 18 2027), P(on time) 56% → 57%"
        );
        let five = summary(&all, &[], 2026, &[3]);
        assert!(
            five.starts_with("Big p80 +9 working days")
                && five.contains("; Mobile p80 unchanged")
                && five.contains("; Middle p80 \u{2212}4 working days")
                && five.ends_with("; 2 more milestones changed"),
            "{five}"
        );
        // A p80 that came from beyond the horizon is said so: its count runs to the horizon (audit 104
        // read "p80 -300 working days (beyond horizon → Oct 13 2027)").
        let back = change(
            8,
            "Far",
            side("beyond horizon", "beyond horizon", 0.1),
            side("2027-09-01", "2027-10-13", 0.1),
            -300,
        );
        assert_eq!(
            summary(&[back], &[], 2026, &[]),
            "Far p80 came within the horizon (beyond horizon → Oct 13 2027), P(on time) 10%"
        );
    }

    #[test]
    fn short_dates_name_the_month_and_the_year_only_when_it_differs() {
        assert_eq!(short("2026-12-12", 2026), "Dec 12");
        assert_eq!(short("2027-01-05", 2026), "Jan 5 2027");
        assert_eq!(short("beyond horizon", 2026), "beyond horizon");
    }

    #[test]
    fn moves_count_working_days_and_leaving_the_horizon_is_a_move() {
        let day0 = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(); // a Monday
        // Weekdays only, as the team calendar would have it.
        let cap = (0..30).map(|d| if d % 7 < 5 { 6.0 } else { 0.0 }).collect();
        let days = WorkingDays {
            day0,
            cal: Calendar::from_capacity(cap),
        };
        let d = |n: u64| When::Date(day0 + Days::new(n));
        let h = day0 + Days::new(20);
        assert_eq!(days.moved(d(4), h, d(7), h), 1); // Fri → Mon
        assert_eq!(days.moved(d(7), h, d(4), h), -1);
        assert_eq!(days.moved(d(5), h, d(6), h), 0); // Sat → Sun
        assert_eq!(days.moved(d(0), h, When::BeyondHorizon, h), 15);
        assert_eq!(days.moved(d(19), h, When::BeyondHorizon, h), 1);
        assert_eq!(days.moved(When::BeyondHorizon, h, d(0), h), -15);
        assert_eq!(
            days.moved(When::BeyondHorizon, h, When::BeyondHorizon, h),
            0
        );
    }

    #[test]
    fn twin_trials_spread_the_budget_over_the_open_issues_within_bounds() {
        // Within the budget (or none): the forecast's own trials.
        assert_eq!(twin_trials(5_000_000, 100, 10_000), 10_000);
        assert_eq!(twin_trials(0, 50_000, 10_000), 10_000);
        // Above it: the budget over the open issues, at least 1,000, never more than the forecast ran.
        assert_eq!(twin_trials(5_000_000, 2_500, 10_000), 2_000);
        assert_eq!(twin_trials(5_000_000, 50_000, 10_000), MIN_TWIN_TRIALS);
        assert_eq!(twin_trials(1, 10, 500), 500);
    }

    #[test]
    fn a_move_nothing_named_explains_is_its_queues_where_it_is_planned_for_someone() {
        assert_eq!(super::unexplained(Some("farah"), false), "queue of farah");
        assert_eq!(
            super::unexplained(Some("farah"), true),
            "range of farah's queue"
        );
        assert_eq!(super::unexplained(None, true), super::WHY_CAPACITY);
    }

    #[test]
    fn percentages_round_to_whole_numbers() {
        assert_eq!(percent(0.714), "71%");
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(1.0), "100%");
    }
}
