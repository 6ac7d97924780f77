//! Replaying the directive ledger: each kind of directive moves the forecast the way a PM expects.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use commitea::config::{Config, Overrides};
use commitea::forecast::{self, ForecastReport, Settings, When};
use commitea::ledger::replay;
use commitea::plan::{EstimateSource, Plan, ProvenanceEffect};
use commitea::state::{Layout, Snapshot};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay/small-with-ledger")
}

fn inputs() -> (Snapshot, Config) {
    let dir = fixture();
    let snapshot = Snapshot::load(&Layout::new(&dir)).unwrap();
    let config = Config::load(&dir, std::iter::empty(), &Overrides::default()).unwrap();
    (snapshot, config)
}

/// The plan with `ledger` replayed over the fixture's snapshot (`None`: no ledger), and its problems.
fn replayed(ledger: Option<&str>) -> (Plan, Vec<String>) {
    let (snapshot, config) = inputs();
    let now = snapshot.meta.synced_at;
    let r = replay(&snapshot, &config, ledger, now);
    (r.plan, r.problems.iter().map(ToString::to_string).collect())
}

fn run(plan: &Plan) -> ForecastReport {
    forecast::run(
        plan,
        &Settings {
            trials: 2000,
            seed: 42,
            horizon_days: 365,
        },
    )
}

/// One directive entry.
fn directive(id: u32, kind: &str, target: &str, params: &str) -> String {
    format!(
        "## D-{id:04} · {kind} · 2026-11-20T09:00:00Z\n\n> As the PM said.\n\n- target: {target}\n- params: {params}\n\n"
    )
}

fn p50(report: &ForecastReport, key: &str) -> NaiveDate {
    let f = report
        .issues
        .iter()
        .find(|i| i.issue.to_string() == key)
        .unwrap_or_else(|| panic!("{key} is not forecast"));
    match f.p50 {
        When::Date(d) => d,
        When::BeyondHorizon => panic!("{key} is beyond the horizon"),
    }
}

fn baseline() -> ForecastReport {
    run(&replayed(None).0)
}

#[test]
fn no_ledger_and_an_empty_ledger_leave_the_plan_as_the_snapshot_has_it() {
    let (snapshot, config) = inputs();
    let plain = Plan::from_snapshot(&snapshot, &config, snapshot.meta.synced_at);
    assert_eq!(replayed(None), (plain.clone(), vec![]));
    assert_eq!(
        replayed(Some("# PM directives\n\nNothing yet.\n")),
        (plain, vec![])
    );
}

#[test]
fn reprioritize_to_p0_pulls_the_issue_earlier() {
    let ledger = directive(1, "reprioritize", "issue acme/api#5", r#"{"priority": 0}"#);
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let issue = plan.issue(&"acme/api#5".parse().unwrap()).unwrap();
    assert_eq!(issue.priority.level(), 0);
    assert!(issue.priority_set);
    assert_eq!(
        issue.provenance,
        vec![("priority".to_owned(), "D-0001".to_owned())]
    );
    let (before, after) = (baseline(), run(&plan));
    assert!(
        p50(&after, "acme/api#5") < p50(&before, "acme/api#5"),
        "{} is not before {}",
        p50(&after, "acme/api#5"),
        p50(&before, "acme/api#5")
    );
}

#[test]
fn a_directive_on_an_issue_spelt_in_another_case_is_replayed() {
    // Gitea's names ignore case: an entry on `Acme/API#5` was skipped as "not synced" (audit 156).
    let ledger = directive(1, "reprioritize", "issue Acme/API#5", r#"{"priority": 0}"#);
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let issue = plan.issue(&"acme/api#5".parse().unwrap()).unwrap();
    assert_eq!(issue.priority.level(), 0);
}

#[test]
fn reestimate_to_a_larger_estimate_pushes_the_issue_later() {
    let ledger = directive(1, "reestimate", "issue acme/web#3", r#"{"estimate": "2w"}"#);
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let issue = plan.issue(&"acme/web#3".parse().unwrap()).unwrap();
    assert_eq!(issue.estimate_hours, Some(60.0));
    assert_eq!(issue.estimate_label.as_deref(), Some("2w"));
    assert_eq!(issue.estimate_source, EstimateSource::Directive);
    let (before, after) = (baseline(), run(&plan));
    assert!(p50(&after, "acme/web#3") > p50(&before, "acme/web#3"));
}

/// An estimate off the ladder, written by hand, is left out and said at its line, as `record_directive`
/// refuses it; the directive after it still counts (audit 120: est/9d drove the forecast).
#[test]
fn a_reestimate_off_the_ladder_is_left_out_and_said_and_the_next_still_counts() {
    let ledger = directive(1, "reestimate", "issue acme/web#3", r#"{"estimate": "9d"}"#)
        + &directive(2, "reestimate", "issue acme/api#4", r#"{"estimate": "2w"}"#);
    let (plan, problems) = replayed(Some(&ledger));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with(
            "ledger line 1: D-0001's estimate \"9d\" is not on the estimate ladder (1h, 2h, 4h, 1d, \
             2d, 3d, 1w, 2w), so the directive is left out; write the nearest rung (2w) instead"
        ),
        "{problems:?}"
    );
    let (base, _) = replayed(None);
    let key = "acme/web#3".parse().unwrap();
    assert_eq!(plan.issue(&key), base.issue(&key));
    let two = plan.issue(&"acme/api#4".parse().unwrap()).unwrap();
    assert_eq!(two.estimate_label.as_deref(), Some("2w"));
}

#[test]
fn a_capacity_cut_pushes_that_persons_work_out() {
    // Bo works Monday to Wednesday; two weeks away from the first day of the forecast.
    let ledger = directive(
        1,
        "capacity",
        "member bo",
        r#"{"from": "2026-11-30", "to": "2026-12-13", "hours_per_week": 0}"#,
    );
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let bo = plan.member("bo").unwrap();
    assert_eq!(bo.calendar.overrides.len(), 1);
    assert_eq!(
        bo.provenance,
        vec![(
            "capacity 2026-11-30..2026-12-13".to_owned(),
            "D-0001".to_owned()
        )]
    );
    let (before, after) = (baseline(), run(&plan));
    assert!(p50(&after, "acme/web#1") > p50(&before, "acme/web#1"));
    // Ann's own work does not move.
    assert_eq!(p50(&after, "acme/api#3"), p50(&before, "acme/api#3"));
}

#[test]
fn a_new_hire_joins_the_team_from_their_first_day() {
    let ledger = directive(
        1,
        "capacity",
        "member cy",
        r#"{"from": "2026-12-07", "hours_per_week": 20}"#,
    );
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let cy = plan.member("cy").unwrap();
    assert!(cy.from_directive);
    assert_eq!(cy.hours_per_week, 20.0);
    assert_eq!(cy.calendar.starts, NaiveDate::from_ymd_opt(2026, 12, 7));
    // They work only in the periods directives give them: this one is open-ended.
    assert_eq!(cy.calendar.hours_per_day, 0.0);
    assert_eq!(cy.calendar.overrides.len(), 1);
    assert_eq!(cy.calendar.overrides[0].hours_per_day, 4.0);
    assert_eq!(cy.calendar.last_working_day(), None);
    // A capacity of 0 for someone not in the team adds nobody.
    let ledger = directive(
        1,
        "capacity",
        "member cy",
        r#"{"from": "2026-12-07", "hours_per_week": 0}"#,
    );
    let (plan, problems) = replayed(Some(&ledger));
    assert!(plan.member("cy").is_none());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("ledger line 1: member cy is not in the team"));
}

/// A later period covering every day of an earlier one replaces it: its hours count nowhere, and its
/// directive is not in force (audit 145: a replaced 10 h was shown under the later directive's id, and a
/// leave inside a re-stated period read as in force).
#[test]
fn a_capacity_period_covered_by_a_later_one_is_replaced() {
    // Bo's period `id` from `from` to `to`, at `hours` a week.
    let period = |id: u32, from: &str, to: &str, hours: u32| {
        directive(
            id,
            "capacity",
            "member bo",
            &format!(r#"{{"from": "{from}", "to": "{to}", "hours_per_week": {hours}}}"#),
        )
    };
    let ledger = period(1, "2027-02-01", "2027-06-30", 10)
        + &period(2, "2027-03-01", "2027-03-31", 0)
        + &period(3, "2027-02-01", "2027-06-30", 20);
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let bo = plan.member("bo").unwrap();
    assert_eq!(
        bo.calendar.overrides.len(),
        1,
        "{:?}",
        bo.calendar.overrides
    );
    assert_eq!(
        bo.provenance,
        vec![(
            "capacity 2027-02-01..2027-06-30".to_owned(),
            "D-0003".to_owned()
        )]
    );
    let replaced = plan.replaced_directives();
    assert_eq!(replaced.get("D-0001").map(String::as_str), Some("D-0003"));
    assert_eq!(replaced.get("D-0002").map(String::as_str), Some("D-0003"));
    // A shorter period inside a longer earlier one is not covered: it stays, and so does the other.
    let ledger =
        period(1, "2027-02-01", "2027-06-30", 10) + &period(2, "2027-03-01", "2027-03-31", 0);
    let (plan, _) = replayed(Some(&ledger));
    assert_eq!(plan.member("bo").unwrap().calendar.overrides.len(), 2);
    assert!(plan.replaced_directives().is_empty());
}

/// A period with an end for someone neither the team nor any issue names is said: a member renamed on
/// Gitea would otherwise work twice (audit 146: an on-call cut to 10 h became a second person).
#[test]
fn a_capacity_period_for_someone_nobody_names_is_said() {
    let ledger = directive(
        1,
        "capacity",
        "member bjorn",
        r#"{"from": "2026-12-07", "to": "2026-12-18", "hours_per_week": 10}"#,
    );
    let (plan, problems) = replayed(Some(&ledger));
    assert!(plan.member("bjorn").is_some(), "still planned as given");
    let [said] = <[String; 1]>::try_from(problems.clone()).expect("one problem");
    assert!(
        said.starts_with("ledger line 1: D-0001 adds bjorn, whom neither the team in commitea.yaml nor any synced issue names")
            && said.contains("if bjorn is a member renamed on Gitea, write their name as it is now"),
        "{said}"
    );
    // A team member's period, and someone joining for good, are not.
    for (target, params) in [
        (
            "member bo",
            r#"{"from": "2026-12-07", "to": "2026-12-18", "hours_per_week": 10}"#,
        ),
        (
            "member cy",
            r#"{"from": "2026-12-07", "hours_per_week": 20}"#,
        ),
        // A period over before the forecast's day changes nothing (audit 147: warned all the same).
        (
            "member bjorn",
            r#"{"from": "2025-10-01", "to": "2025-10-31", "hours_per_week": 10}"#,
        ),
    ] {
        let (_, problems) = replayed(Some(&directive(1, "capacity", target, params)));
        assert!(problems.is_empty(), "{target}: {problems:?}");
    }
}

#[test]
fn an_earlier_hard_deadline_makes_the_milestone_late_with_a_cut_line() {
    let before = baseline();
    let v1 = |r: &ForecastReport| r.milestones.iter().find(|m| m.id == 1).unwrap().clone();
    assert!(v1(&before).cut_line.is_none());
    let ledger = directive(
        1,
        "set-deadline",
        "milestone 1",
        r#"{"due": "2026-12-02", "hard": true}"#,
    );
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let m = plan.milestone(1).unwrap();
    assert_eq!(m.due, NaiveDate::from_ymd_opt(2026, 12, 2));
    assert!(m.hard);
    // v1.0 is already hard in Gitea: the `hard` part agrees, the date is new.
    let effects: Vec<(&str, &ProvenanceEffect)> = m
        .provenance_log
        .iter()
        .map(|r| (r.field.as_str(), &r.effect))
        .collect();
    assert_eq!(
        effects,
        vec![
            ("due", &ProvenanceEffect::Applied),
            ("hard", &ProvenanceEffect::AgreesWithGitea)
        ]
    );
    let after = run(&plan);
    let late = v1(&after);
    assert!(late.slack_days.is_some_and(|s| s < 0), "{late:?}");
    assert!(late.cut_line.is_some(), "{late:?}");
}

#[test]
fn a_deadline_on_an_issue_is_recorded_as_its_own() {
    let ledger = directive(
        1,
        "set-deadline",
        "issue acme/api#5",
        r#"{"due": "2026-12-04", "hard": true}"#,
    );
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let issue = plan.issue(&"acme/api#5".parse().unwrap()).unwrap();
    assert_eq!(issue.due, NaiveDate::from_ymd_opt(2026, 12, 4));
    assert!(issue.due_hard);
}

#[test]
fn scope_out_removes_the_issue_from_its_milestone() {
    let ledger = directive(1, "scope", "issue acme/api#4", r#"{"in": false}"#);
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        plan.issue(&"acme/api#4".parse().unwrap())
            .unwrap()
            .milestone,
        None
    );
    let open = |r: &ForecastReport| r.milestones.iter().find(|m| m.id == 1).unwrap().open_issues;
    let (before, after) = (baseline(), run(&plan));
    assert_eq!(open(&after), open(&before) - 1);
    // In scope again: back in Gitea's milestone, agreeing with Gitea.
    let ledger = format!(
        "{ledger}{}",
        directive(2, "scope", "issue acme/api#4", r#"{"in": true}"#)
    );
    let (plan, _) = replayed(Some(&ledger));
    let issue = plan.issue(&"acme/api#4".parse().unwrap()).unwrap();
    assert_eq!(issue.milestone, Some(1));
    assert_eq!(
        issue.provenance_log[1].effect,
        ProvenanceEffect::AgreesWithGitea
    );
    // Putting a milestone "in scope" means nothing without an issue.
    let ledger = directive(1, "scope", "milestone 1", r#"{"in": true}"#);
    let (_, problems) = replayed(Some(&ledger));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("not meaningful"), "{problems:?}");
}

#[test]
fn a_later_directive_supersedes_an_earlier_one() {
    let ledger = format!(
        "{}{}",
        directive(1, "reprioritize", "issue acme/web#3", r#"{"priority": 0}"#),
        directive(2, "reprioritize", "issue acme/web#3", r#"{"priority": 3}"#)
    );
    let (plan, _) = replayed(Some(&ledger));
    let issue = plan.issue(&"acme/web#3".parse().unwrap()).unwrap();
    assert_eq!(issue.priority.level(), 3);
    assert_eq!(
        issue.provenance,
        vec![("priority".to_owned(), "D-0002".to_owned())]
    );
    assert_eq!(
        issue.provenance_log[0].effect,
        ProvenanceEffect::Replaced {
            by: "D-0002".into()
        }
    );
    assert_eq!(issue.provenance_log[1].effect, ProvenanceEffect::Applied);
}

#[test]
fn a_directive_that_replaces_a_later_given_one_is_said() {
    // Replay goes by the ledger's order: an entry inserted by hand after one given later took its place
    // without a word (audit 167).
    let later = directive(1, "reprioritize", "issue acme/web#3", r#"{"priority": 0}"#)
        .replace("2026-11-20T09:00:00Z", "2026-11-26T10:00:00Z");
    let earlier = directive(2, "reprioritize", "issue acme/web#3", r#"{"priority": 3}"#);
    let (plan, problems) = replayed(Some(&format!("{later}{earlier}")));
    assert_eq!(
        plan.issue(&"acme/web#3".parse().unwrap())
            .unwrap()
            .priority
            .level(),
        3,
        "the order decides"
    );
    assert!(
        problems.iter().any(|p| p.contains(
            "D-0002 (given 2026-11-20) takes the place of D-0001 (given 2026-11-26) for coming after it in \
             the ledger, though it was given before it; if D-0001 should stand, withdraw D-0002"
        )),
        "{problems:?}"
    );
    // In order: nothing to say.
    let (_, problems) = replayed(Some(&format!(
        "{earlier}{}",
        later.replace("D-0001", "D-0003")
    )));
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn a_directive_gitea_already_reflects_is_a_recorded_no_op() {
    let ledger = directive(1, "reprioritize", "issue acme/web#1", r#"{"priority": 0}"#);
    let (plan, problems) = replayed(Some(&ledger));
    assert!(problems.is_empty(), "{problems:?}");
    let (plain, _) = replayed(None);
    let issue = plan.issue(&"acme/web#1".parse().unwrap()).unwrap();
    let gitea = plain.issue(&"acme/web#1".parse().unwrap()).unwrap();
    assert_eq!(issue.priority, gitea.priority);
    assert_eq!(
        issue.provenance,
        vec![("priority".to_owned(), "D-0001".to_owned())]
    );
    assert_eq!(
        issue.provenance_log[0].effect,
        ProvenanceEffect::AgreesWithGitea
    );
    assert_eq!(run(&plan).issues, run(&plain).issues);
}

#[test]
fn the_fixture_ledger_applies_around_its_problems() {
    let text = std::fs::read_to_string(fixture().join("pm-state.md")).unwrap();
    let (plan, problems) = replayed(Some(&text));
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(
        problems[0],
        "ledger line 22: target issue acme/api#99 does not exist in the snapshot"
    );
    assert!(
        problems[1].starts_with("ledger line 29: unknown directive kind \"reprioritise\""),
        "{problems:?}"
    );
    let issue = |k: &str| plan.issue(&k.parse().unwrap()).unwrap().clone();
    // D-0001 then D-0008 on the dashboard: the later wins.
    let web3 = issue("acme/web#3");
    assert_eq!(web3.priority.level(), 1);
    assert_eq!(
        web3.provenance,
        vec![("priority".to_owned(), "D-0008".to_owned())]
    );
    // The others still apply.
    assert_eq!(issue("acme/api#4").estimate_hours, Some(12.0));
    assert_eq!(
        issue("acme/api#4").provenance,
        vec![("estimate".to_owned(), "D-0002".to_owned())]
    );
    assert_eq!(issue("acme/web#4").milestone, None);
    assert_eq!(
        plan.milestone(2).unwrap().due,
        NaiveDate::from_ymd_opt(2027, 1, 15)
    );
    assert_eq!(plan.member("bo").unwrap().calendar.overrides.len(), 1);
    // The malformed directive and the withdrawn one do nothing.
    assert_eq!(issue("acme/api#3").priority.level(), 1);
    assert!(issue("acme/api#3").provenance.is_empty());
    assert!(!issue("acme/api#5").priority_set);
}

#[test]
fn the_pipeline_reports_ledger_problems_as_warnings() {
    let dir = super::pipeline::state_from_fixture("replay/small-with-ledger");
    let computed = commitea::pipeline::compute(&super::pipeline::options(dir.path())).unwrap();
    let warnings = &computed.plan.warnings;
    assert!(
        warnings.iter().any(|w| w.ledger_line() == Some(22)
            && w.to_string()
                == "ledger line 22: target issue acme/api#99 does not exist in the snapshot"),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.ledger_line() == Some(29)),
        "{warnings:?}"
    );
    assert_eq!(
        computed
            .plan
            .issues
            .iter()
            .filter(|i| !i.provenance.is_empty())
            .count(),
        3
    );
    // The forecast report (and so the run's summary) carries them too.
    assert!(
        computed
            .report
            .warnings
            .iter()
            .any(|w| w.starts_with("ledger line 22:")),
        "{:?}",
        computed.report.warnings
    );
    // A state repo without a ledger is a ledger without directives (a preview reads the checkout; a
    // committing run reads the branch's ledger, which still has it).
    std::fs::remove_file(dir.path().join("pm-state.md")).unwrap();
    let mut preview = super::pipeline::options(dir.path());
    preview.commit = false;
    let computed = commitea::pipeline::compute(&preview).unwrap();
    assert!(computed.plan.issues.iter().all(|i| i.provenance.is_empty()));
}

/// A milestone Gitea does not carry a directive's due date for is named with its repository where another
/// has its title (audit 123: "Public API v2 is due …", one of two).
#[test]
fn a_due_date_gitea_does_not_carry_names_a_shared_titles_repository() {
    let (mut snapshot, config) = inputs();
    for ms in snapshot.milestones.values_mut() {
        for m in ms.iter_mut() {
            m.title = "Release".into();
        }
    }
    let ledger = directive(1, "set-deadline", "milestone 2", r#"{"due": "2027-01-15"}"#);
    let now = snapshot.meta.synced_at;
    let r = replay(&snapshot, &config, Some(&ledger), now);
    assert_eq!(r.not_on_gitea.len(), 1, "{:?}", r.not_on_gitea);
    assert!(
        r.not_on_gitea[0].differs[0].starts_with("Release (acme/web) is due 2027-01-15 by it"),
        "{:?}",
        r.not_on_gitea
    );
}
