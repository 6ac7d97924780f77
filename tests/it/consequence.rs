//! The consequence diff on the small fixture: what raising one estimate does to the forecast.

use std::path::Path;

use commitea::config::Config;
use commitea::consequence::{Consequence, diff};
use commitea::forecast::{self, ForecastReport, Settings};
use commitea::plan::Plan;
use commitea::state::{Layout, Snapshot};

const SETTINGS: Settings = Settings {
    trials: 2000,
    seed: 42,
    horizon_days: 730,
};

fn small_plan() -> Plan {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small");
    let snapshot = Snapshot::load(&Layout::new(&dir)).unwrap();
    let config = Config::load(&dir, vec![], &Default::default()).unwrap();
    Plan::from_snapshot(&snapshot, &config, snapshot.meta.synced_at)
}

/// The small plan with acme/api#3's estimate four times as big.
fn bigger_api3(plan: &Plan) -> Plan {
    let mut after = plan.clone();
    let issue = after
        .issues
        .iter_mut()
        .find(|i| i.key.to_string() == "acme/api#3")
        .unwrap();
    issue.estimate_hours = issue.estimate_hours.map(|h| h * 4.0);
    after
}

fn reports() -> (Plan, ForecastReport, Plan, ForecastReport) {
    let before = small_plan();
    let after = bigger_api3(&before);
    let (rb, ra) = (
        forecast::run(&before, &SETTINGS),
        forecast::run(&after, &SETTINGS),
    );
    (before, rb, after, ra)
}

fn consequence() -> Consequence {
    let (before, rb, after, ra) = reports();
    diff(&rb, &ra, &before, &after)
}

#[test]
fn a_bigger_estimate_moves_the_issue_what_waits_on_it_and_its_milestone() {
    let c = consequence();
    let issue = |key: &str| {
        c.issues
            .iter()
            .find(|i| i.issue == key)
            .unwrap_or_else(|| panic!("{key} did not move: {c:#?}"))
    };
    let api3 = issue("acme/api#3");
    assert_eq!(api3.why, "own change");
    assert!(api3.moved_working_days > 0, "{api3:?}");
    let api4 = issue("acme/api#4");
    assert_eq!(api4.why, "waits on acme/api#3");
    assert!(api4.moved_working_days > 0, "{api4:?}");
    // Sorted by the size of the move, then by key.
    for w in c.issues.windows(2) {
        let (x, y) = (&w[0], &w[1]);
        assert!(
            x.moved_working_days.abs() > y.moved_working_days.abs()
                || (x.moved_working_days.abs() == y.moved_working_days.abs() && x.issue < y.issue),
            "{x:?} before {y:?}"
        );
    }

    let v1 = c.milestones.iter().find(|m| m.title == "v1.0").unwrap();
    let (before, after) = (v1.before.as_ref().unwrap(), v1.after.as_ref().unwrap());
    assert!(after.p80 > before.p80, "{v1:?}");
    assert!(v1.moved_working_days > 0);
    let (pb, pa) = (
        before.probability_on_time.unwrap(),
        after.probability_on_time.unwrap(),
    );
    assert!(pa <= pb, "{pb} → {pa}");
    let ids: Vec<u64> = c.milestones.iter().map(|m| m.milestone).collect();
    assert_eq!(ids, [1, 2]);

    // The summary names v1.0, a positive move and both dates, then how many issues moved.
    let short = |d: &str| {
        chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .unwrap()
            .format("%b %-d")
            .to_string()
    };
    let expected = format!(
        "v1.0 p80 +{} working days ({} → {})",
        v1.moved_working_days,
        short(&before.p80),
        short(&after.p80)
    );
    assert!(c.summary.starts_with(&expected), "{}", c.summary);
    assert!(c.summary.contains("P(on time) "), "{}", c.summary);
    assert!(
        c.summary
            .ends_with(&format!("; {} issues moved", c.issues.len())),
        "{}",
        c.summary
    );
}

#[test]
fn an_unchanged_plan_has_no_consequence() {
    let plan = small_plan();
    let report = forecast::run(&plan, &SETTINGS);
    let c = diff(&report, &report, &plan, &plan);
    assert_eq!(c.summary, "no forecast change");
    assert!(c.issues.is_empty(), "{:?}", c.issues);
    assert!(c.milestones.iter().all(|m| m.moved_working_days == 0));
    assert_eq!(c.milestones.len(), 2);
}

#[test]
fn an_issue_that_closes_is_gone_and_one_that_opens_is_new() {
    let before = small_plan();
    let mut after = before.clone();
    let issue = after
        .issues
        .iter_mut()
        .find(|i| i.key.to_string() == "acme/api#5")
        .unwrap();
    issue.state = commitea::domain::OpenState::Closed;
    let (rb, ra) = (
        forecast::run(&before, &SETTINGS),
        forecast::run(&after, &SETTINGS),
    );
    let c = diff(&rb, &ra, &before, &after);
    let gone = c.issues.iter().find(|i| i.issue == "acme/api#5").unwrap();
    assert_eq!(gone.why, "gone");
    assert!(gone.before.is_some() && gone.after.is_none());
    assert!(c.summary.contains("1 issue gone"), "{}", c.summary);
    let back = diff(&ra, &rb, &after, &before);
    let new = back
        .issues
        .iter()
        .find(|i| i.issue == "acme/api#5")
        .unwrap();
    assert_eq!(new.why, "new");
    assert!(new.before.is_none() && new.after.is_some());
}

#[test]
fn the_diff_is_deterministic() {
    let (before, rb, after, ra) = reports();
    let once = serde_json::to_string(&diff(&rb, &ra, &before, &after)).unwrap();
    let twice = serde_json::to_string(&diff(&rb, &ra, &before, &after)).unwrap();
    assert_eq!(once, twice);
    let (before, rb, after, ra) = reports();
    let again = serde_json::to_string(&diff(&rb, &ra, &before, &after)).unwrap();
    assert_eq!(once, again);
}

#[test]
fn the_consequence_of_a_bigger_estimate() {
    insta::assert_json_snapshot!(consequence());
}
