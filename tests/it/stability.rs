//! Plans that do not jump: with the people the last forecast planned and the same random numbers, a change
//! to nothing moves nothing, a smaller estimate never makes a milestone later (a larger one never earlier)
//! by more than a working day, and a reprioritised issue moves only work connected to it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Datelike, NaiveDate, Weekday};
use commitea::domain::{IssueKey, Priority};
use commitea::forecast::{self, ForecastReport, Settings, When};
use commitea::plan::Plan;
use proptest::prelude::*;

use crate::engine::demo_plan;

const SETTINGS: Settings = Settings {
    trials: 1_000,
    seed: 11,
    horizon_days: 730,
};

/// The forecast as a run makes it after an earlier one: unassigned work stays with whom that one planned.
fn after(plan: &Plan, before: &ForecastReport) -> ForecastReport {
    let mut plan = plan.clone();
    plan.planned_for = forecast::planned_people(before);
    forecast::run(&plan, &SETTINGS)
}

/// Working days (Monday to Friday) from `a` to `b`, negative when `b` is earlier.
fn weekdays(a: NaiveDate, b: NaiveDate) -> i64 {
    let (lo, hi, sign) = if a <= b { (a, b, 1) } else { (b, a, -1) };
    let n = lo
        .iter_days()
        .take_while(|d| *d < hi)
        .filter(|d| !matches!(d.weekday(), Weekday::Sat | Weekday::Sun))
        .count() as i64;
    sign * n
}

/// How many working days later `new` is than `old` (beyond the horizon counts as far later).
fn later_by(old: When, new: When) -> i64 {
    match (old, new) {
        (When::Date(a), When::Date(b)) => weekdays(a, b),
        (When::Date(_), When::BeyondHorizon) => i64::MAX / 2,
        (When::BeyondHorizon, When::Date(_)) => -(i64::MAX / 2),
        (When::BeyondHorizon, When::BeyondHorizon) => 0,
    }
}

fn p80s(r: &ForecastReport) -> BTreeMap<u64, When> {
    r.milestones.iter().map(|m| (m.id, m.p80)).collect()
}

/// Shared across cases: the demo's plan and its first forecast (the "committed" one).
fn base() -> &'static (Plan, ForecastReport) {
    static BASE: std::sync::OnceLock<(Plan, ForecastReport)> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        let plan = demo_plan();
        let first = forecast::run(&plan, &SETTINGS);
        (plan, first)
    })
}

/// The same with the abandonment model on (the demo turns it off): a milestone's p80 is then the headline
/// of the work that stays, each issue's fate and lead time drawn beside its effort.
fn base_model_on() -> &'static (Plan, ForecastReport) {
    static BASE: std::sync::OnceLock<(Plan, ForecastReport)> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        let mut plan = demo_plan();
        plan.abandonment_min_history_days = 90;
        let first = forecast::run(&plan, &SETTINGS);
        assert!(first.abandonment.is_some(), "the model is on");
        assert!(first.milestones.iter().any(|m| m.planned.is_some()));
        (plan, first)
    })
}

/// One case of the monotonicity property: `pick`'s estimate times `factor` moves no milestone's p80 the
/// other way by more than a working day.
fn estimate_case(
    (plan, first): &(Plan, ForecastReport),
    pick: &prop::sample::Index,
    factor: f64,
) -> Result<(), TestCaseError> {
    let keys = open_keys(plan, first);
    let key = pick.get(&keys);
    let mut changed = plan.clone();
    let issue = changed.issues.iter_mut().find(|i| &i.key == key).unwrap();
    let old = issue.estimate_hours.unwrap_or(8.0);
    issue.estimate_hours = Some(old * factor);
    let before = after(plan, first);
    let now = after(&changed, first);
    let (b, n) = (p80s(&before), p80s(&now));
    for (id, old_p80) in &b {
        let new_p80 = n[id];
        let moved = later_by(*old_p80, new_p80);
        if factor < 1.0 {
            prop_assert!(
                moved <= 1,
                "{key} × {factor:.2}: milestone {id} p80 {old_p80:?} → {new_p80:?} ({moved} working days later)"
            );
        } else {
            prop_assert!(
                moved >= -1,
                "{key} × {factor:.2}: milestone {id} p80 {old_p80:?} → {new_p80:?} ({moved} working days earlier)"
            );
        }
    }
    Ok(())
}

/// Twelve cases (`PROPTEST_CASES`, at most 48), drawn from a fixed seed unless `PROPTEST_RNG_SEED` asks
/// for another: the engine has rare anomalies beyond the properties' one-day bound (below), and CI must
/// not pass or fail by the draw. Explore with `PROPTEST_RNG_SEED=random` (or a number) and more cases.
fn config() -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .map_or(12, |c: u32| c.min(48)),
        failure_persistence: None,
        rng_seed: if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
            default.rng_seed
        } else {
            proptest::test_runner::RngSeed::Fixed(14)
        },
        ..default
    }
}

/// The anomalies a scan of the demo found (every open estimated issue × 20 factors from 1.1 to 7.75, with
/// the model off: 3 of 3,200 changes): a larger estimate that moves a milestone's p80 two working days
/// *earlier*. Growing one task delays the work that waits on it; the gap that work left in its person's
/// hours is then filled by later work, which ends sooner (a list-scheduling anomaly). Pinned here so a
/// change to the scheduler that makes them worse, or removes them, is seen.
#[test]
fn a_larger_estimate_moves_a_milestone_earlier_by_at_most_two_working_days_where_it_does_at_all() {
    let (plan, first) = base();
    let before = after(plan, first);
    for (key, factor, milestone) in [
        ("acme/mobile#114", 1.1, 3),
        ("acme/mobile#114", 1.45, 3),
        ("acme/web#103", 1.1, 4),
    ] {
        let key: IssueKey = key.parse().unwrap();
        let mut changed = plan.clone();
        let issue = changed.issues.iter_mut().find(|i| i.key == key).unwrap();
        issue.estimate_hours = Some(issue.estimate_hours.unwrap_or(8.0) * factor);
        let now = after(&changed, first);
        let moved = later_by(p80s(&before)[&milestone], p80s(&now)[&milestone]);
        assert_eq!(moved, -2, "{key} × {factor}: milestone {milestone}");
    }
}

#[test]
fn a_change_to_nothing_moves_nothing() {
    let (plan, first) = base();
    // The next run keeps the people the first planned: the same forecast, byte for byte.
    let second = after(plan, first);
    assert_eq!(
        serde_json::to_string(&second).unwrap(),
        serde_json::to_string(first).unwrap()
    );
    // And the one after that.
    let third = after(plan, &second);
    assert_eq!(second, third);
    // The same with the abandonment model on.
    let (plan, first) = base_model_on();
    assert_eq!(after(plan, first), *first);
}

/// The open issues whose estimate can change: estimated and in the plan.
fn open_keys(plan: &Plan, report: &ForecastReport) -> Vec<IssueKey> {
    let open: BTreeSet<&IssueKey> = report.issues.iter().map(|f| &f.issue).collect();
    plan.issues
        .iter()
        .filter(|i| open.contains(&i.key))
        .map(|i| i.key.clone())
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_smaller_estimate_never_makes_a_milestone_later_nor_a_larger_one_earlier(
        pick in any::<prop::sample::Index>(),
        factor in prop_oneof![0.05f64..0.95, 1.1f64..8.0],
    ) {
        estimate_case(base(), &pick, factor)?;
    }

    #[test]
    fn with_the_abandonment_model_on_a_smaller_estimate_never_makes_a_milestones_headline_later(
        pick in any::<prop::sample::Index>(),
        factor in prop_oneof![0.05f64..0.95, 1.1f64..8.0],
    ) {
        estimate_case(base_model_on(), &pick, factor)?;
    }

    #[test]
    fn a_reprioritised_issue_moves_only_its_persons_queue_and_what_waits_on_it(
        pick in any::<prop::sample::Index>(),
        level in 0u8..4,
    ) {
        let (plan, first) = base();
        let keys = open_keys(plan, first);
        let key = pick.get(&keys).clone();
        let mut changed = plan.clone();
        let issue = changed.issues.iter_mut().find(|i| i.key == key).unwrap();
        issue.priority = Priority::new(level).unwrap();
        issue.priority_set = true;
        let before = after(plan, first);
        let now = after(&changed, first);
        // What may move: the queues of whoever does it and the work it waits for, and what is downstream
        // of those — waiting on it, or after it on the same person's queue — transitively.
        let person: BTreeMap<&IssueKey, Option<&String>> = before
            .issues
            .iter()
            .map(|f| (&f.issue, f.planned_assignee.as_ref()))
            .collect();
        // "After it on the queue" is the scheduling order: work taken earlier books its person first.
        let built = forecast::build(plan, SETTINGS.horizon_days).unwrap();
        let rank: BTreeMap<IssueKey, usize> = built
            .prep
            .order
            .iter()
            .enumerate()
            .map(|(pos, &i)| (built.open[i as usize].key.clone(), pos))
            .collect();
        let rank_of = |k: &IssueKey| rank.get(k).copied().unwrap_or(usize::MAX);
        let deps: BTreeMap<&IssueKey, &Vec<IssueKey>> =
            plan.issues.iter().map(|i| (&i.key, &i.depends_on)).collect();
        // The issue and the work it waits for (which inherits its new priority), and their queues.
        let mut seeds: BTreeSet<IssueKey> = BTreeSet::from([key.clone()]);
        loop {
            let up: BTreeSet<IssueKey> = seeds
                .iter()
                .filter_map(|k| deps.get(k))
                .flat_map(|d| d.iter().cloned())
                .filter(|d| !seeds.contains(d))
                .collect();
            if up.is_empty() {
                break;
            }
            seeds.extend(up);
        }
        let queues: BTreeSet<&String> = seeds.iter().filter_map(|k| person.get(k).copied().flatten()).collect();
        let mut reach: BTreeSet<IssueKey> = before
            .issues
            .iter()
            .filter(|f| seeds.contains(&f.issue) || person[&f.issue].is_some_and(|p| queues.contains(p)))
            .map(|f| f.issue.clone())
            .collect();
        loop {
            let grown: BTreeSet<IssueKey> = before
                .issues
                .iter()
                .filter(|f| !reach.contains(&f.issue))
                .filter(|f| {
                    deps.get(&f.issue).is_some_and(|d| d.iter().any(|x| reach.contains(x)))
                        || reach.iter().any(|r| {
                            person[r].is_some()
                                && person[r] == person[&f.issue]
                                && rank_of(r) <= rank_of(&f.issue)
                        })
                })
                .map(|f| f.issue.clone())
                .collect();
            if grown.is_empty() {
                break;
            }
            reach.extend(grown);
        }
        // The plan's moves stay within that reach. The ranges are drawn from trials in which work may
        // run in another order than the plan's, so they may also move for work sharing a queue with
        // anything reached: still never for work with no path to the change.
        let mut loose = reach.clone();
        loop {
            let people: BTreeSet<&String> = loose.iter().filter_map(|k| person[k]).collect();
            let grown: Vec<IssueKey> = before
                .issues
                .iter()
                .filter(|f| !loose.contains(&f.issue))
                .filter(|f| {
                    person[&f.issue].is_some_and(|p| people.contains(p))
                        || deps.get(&f.issue).is_some_and(|d| d.iter().any(|x| loose.contains(x)))
                })
                .map(|f| f.issue.clone())
                .collect();
            if grown.is_empty() {
                break;
            }
            loose.extend(grown);
        }
        let old: BTreeMap<&IssueKey, _> = before.issues.iter().map(|f| (&f.issue, f)).collect();
        let mut moved = Vec::new();
        for f in &now.issues {
            let o = old[&f.issue];
            if (o.planned_start, o.planned_end) != (f.planned_start, f.planned_end) {
                moved.push(f.issue.clone());
                prop_assert!(reach.contains(&f.issue), "{key} → p/{level} moved {} in the plan ({:?} → {:?}), which is neither on a reached queue nor downstream", f.issue, (o.planned_start, o.planned_end), (f.planned_start, f.planned_end));
            }
            if (o.p50, o.p80) != (f.p50, f.p80) {
                prop_assert!(loose.contains(&f.issue), "{key} → p/{level} moved the range of {} ({:?} → {:?}), which has no path to it", f.issue, (o.p50, o.p80), (f.p50, f.p80));
            }
        }
        // Nobody changes hands for a reprioritisation.
        for f in &now.issues {
            prop_assert_eq!(person[&f.issue], f.planned_assignee.as_ref(), "{} changed hands", f.issue);
        }
    }
}
