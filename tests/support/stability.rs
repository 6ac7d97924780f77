//! Plan-stability helpers shared by the property tests (`tests/it/stability.rs`, a dozen random cases) and
//! `benches/stability.rs` (every estimated open issue of the demo times a ladder of factors): the demo's
//! plan, the forecast a run makes after an earlier one, and how far a milestone's p80 moved.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Datelike, NaiveDate, Weekday};
use commitea::domain::IssueKey;
use commitea::forecast::{self, ForecastReport, Settings, When};
use commitea::plan::Plan;

/// The demo's plan as of its snapshot.
pub fn demo_plan() -> Plan {
    let state = commitea::demo::generate(&commitea::demo::DemoSpec::bundled());
    Plan::from_snapshot(
        &state.snapshot,
        &state.config,
        state.snapshot.meta.synced_at,
    )
}

/// The demo's plan with the abandonment model on (the demo's history is too short for it by default):
/// a milestone's p80 is then the headline of the work that stays.
pub fn demo_plan_model_on() -> Plan {
    let mut plan = demo_plan();
    plan.abandonment_min_history_days = 90;
    plan
}

/// The forecast as a run makes it after an earlier one: unassigned work stays with whom that one planned.
pub fn after(plan: &Plan, before: &ForecastReport, settings: &Settings) -> ForecastReport {
    let mut plan = plan.clone();
    plan.planned_for = forecast::planned_people(before);
    forecast::run(&plan, settings)
}

/// Working days (Monday to Friday) from `a` to `b`, negative when `b` is earlier.
pub fn weekdays(a: NaiveDate, b: NaiveDate) -> i64 {
    let (lo, hi, sign) = if a <= b { (a, b, 1) } else { (b, a, -1) };
    let n = lo
        .iter_days()
        .take_while(|d| *d < hi)
        .filter(|d| !matches!(d.weekday(), Weekday::Sat | Weekday::Sun))
        .count() as i64;
    sign * n
}

/// How many working days later `new` is than `old` (beyond the horizon counts as far later).
pub fn later_by(old: When, new: When) -> i64 {
    match (old, new) {
        (When::Date(a), When::Date(b)) => weekdays(a, b),
        (When::Date(_), When::BeyondHorizon) => i64::MAX / 2,
        (When::BeyondHorizon, When::Date(_)) => -(i64::MAX / 2),
        (When::BeyondHorizon, When::BeyondHorizon) => 0,
    }
}

/// Each milestone's p80 (the headline).
pub fn p80s(r: &ForecastReport) -> BTreeMap<u64, When> {
    r.milestones.iter().map(|m| (m.id, m.p80)).collect()
}

/// The open issues in the forecast whose estimate a PM can scale: those with an estimate. (An unestimated
/// issue's effort is imputed from similar closed work; giving it an estimate is a different change, whose
/// direction is not the factor's: 8 h × 1.1 is less than the 24 h imputed for acme/mobile#114.)
pub fn estimated_open_keys(plan: &Plan, report: &ForecastReport) -> Vec<IssueKey> {
    let open: BTreeSet<&IssueKey> = report.issues.iter().map(|f| &f.issue).collect();
    plan.issues
        .iter()
        .filter(|i| open.contains(&i.key) && i.estimate_hours.is_some())
        .map(|i| i.key.clone())
        .collect()
}

/// `plan` with `key`'s estimate times `factor`.
pub fn scaled(plan: &Plan, key: &IssueKey, factor: f64) -> Plan {
    let mut changed = plan.clone();
    let issue = changed
        .issues
        .iter_mut()
        .find(|i| &i.key == key)
        .expect("the issue is in the plan");
    let old = issue.estimate_hours.expect("the issue has an estimate");
    issue.estimate_hours = Some(old * factor);
    changed
}

/// For each milestone, how many working days its p80 moved *against* the change — later for a smaller
/// estimate, earlier for a larger one (0 when it moved with the change or not at all).
pub fn moves_against(
    before: &ForecastReport,
    now: &ForecastReport,
    factor: f64,
) -> Vec<(u64, i64)> {
    let n = p80s(now);
    p80s(before)
        .into_iter()
        .map(|(id, old)| {
            let moved = later_by(old, n[&id]);
            let against = if factor < 1.0 { moved } else { -moved };
            (id, against.max(0))
        })
        .collect()
}
