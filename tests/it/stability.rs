//! Plans that do not jump: with the people the last forecast planned and the same random numbers, a change
//! to nothing moves nothing, a smaller estimate never makes a milestone later (a larger one never earlier)
//! by more than a working day, and a reprioritised issue moves only work connected to it.

use std::collections::{BTreeMap, BTreeSet};

use commitea::domain::{IssueKey, Priority};
use commitea::forecast::{self, ForecastReport, Settings};
use commitea::plan::Plan;
use proptest::prelude::*;

use crate::plans::{self, estimated_open_keys, later_by, moves_against, p80s, scaled};

const SETTINGS: Settings = Settings {
    trials: 1_000,
    seed: 11,
    horizon_days: 730,
};

fn after(plan: &Plan, before: &ForecastReport) -> ForecastReport {
    plans::after(plan, before, &SETTINGS)
}

/// Shared across cases: the demo's plan and its first forecast (the "committed" one).
fn base() -> &'static (Plan, ForecastReport) {
    static BASE: std::sync::OnceLock<(Plan, ForecastReport)> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        let plan = plans::demo_plan();
        let first = forecast::run(&plan, &SETTINGS);
        (plan, first)
    })
}

/// The same with the abandonment model on (the demo turns it off): a milestone's p80 is then the headline
/// of the work that stays, each issue's fate and lead time drawn beside its effort.
fn base_model_on() -> &'static (Plan, ForecastReport) {
    static BASE: std::sync::OnceLock<(Plan, ForecastReport)> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        let plan = plans::demo_plan_model_on();
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
    let keys = estimated_open_keys(plan, first);
    let key = pick.get(&keys);
    let before = after(plan, first);
    let now = after(&scaled(plan, key, factor), first);
    for (id, against) in moves_against(&before, &now, factor) {
        prop_assert!(
            against <= 1,
            "{key} × {factor:.2}: milestone {id} p80 {:?} → {:?} ({against} working days against the change)",
            p80s(&before)[&id],
            p80s(&now)[&id]
        );
    }
    Ok(())
}

/// Twelve cases (`PROPTEST_CASES`, at most 48), drawn from a fixed seed unless `PROPTEST_RNG_SEED` asks
/// for another, so CI does not pass or fail by the draw (list scheduling that fills idle gaps can in
/// principle move work the other way; `cargo bench --bench stability` scans every estimated open issue
/// of the demo and finds no move against the change at all). Explore with `PROPTEST_RNG_SEED=random`.
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

/// What an earlier scan took for scheduling anomalies: an unestimated issue "grown" from a default of 8 hours. Its
/// effort was imputed from similar closed work (24 h for acme/mobile#114), so an estimate of 8.8 h is
/// *less* work, and the issue and its milestone rightly move earlier. The remaining effort decides the
/// direction, not the factor: the property scales only real estimates.
#[test]
fn an_estimate_below_an_unestimated_issues_imputed_effort_brings_it_earlier() {
    let (plan, first) = base();
    let before = after(plan, first);
    for (key, hours, milestone) in [
        ("acme/mobile#114", 8.8, 3),
        ("acme/mobile#114", 11.6, 3),
        ("acme/web#103", 8.8, 4),
    ] {
        let key: IssueKey = key.parse().unwrap();
        let mut changed = plan.clone();
        let issue = changed.issues.iter_mut().find(|i| i.key == key).unwrap();
        assert_eq!(issue.estimate_hours, None, "{key} is unestimated");
        issue.estimate_hours = Some(hours);
        let now = after(&changed, first);
        let effort = |r: &ForecastReport| {
            r.issues
                .iter()
                .find(|f| f.issue == key)
                .map(|f| (f.remaining_hours, f.estimate_source))
                .unwrap()
        };
        let (old, new) = (effort(&before), effort(&now));
        assert_eq!(old.1, commitea::plan::EstimateSource::Imputed, "{key}");
        assert!(
            new.0 < old.0,
            "{key} at {hours} h: {} h before, {} h now",
            old.0,
            new.0
        );
        let moved = later_by(p80s(&before)[&milestone], p80s(&now)[&milestone]);
        assert!(
            moved < 0,
            "{key} at {hours} h: milestone {milestone} moved {moved}"
        );
    }
    // None of them is in the property's draw.
    let keys = estimated_open_keys(plan, first);
    assert!(
        !keys
            .iter()
            .any(|k| ["acme/mobile#114", "acme/web#103"].contains(&k.to_string().as_str()))
    );
    assert!(keys.len() >= 100, "{} estimated open issues", keys.len());
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

/// The open issues in the forecast (any of them can be reprioritised).
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
