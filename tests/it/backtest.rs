//! Backtests: the same input gives byte-identical reports, the forecast at a cut cannot see anything
//! after it, and the real Jira projects backtest with every method scored (skips loudly without the real
//! data folder; fails under `COMMITEA_REQUIRE_EXTERNAL=1`).

use std::path::Path;

use chrono::Duration;
use commitea::backtest::{BacktestOptions, backtest, cut_dates, forecast_at};
use commitea::config::Config;
use commitea::demo::{DemoSpec, generate};
use commitea::domain::{OpenState, TimelineEvent};
use commitea::import::{load_dataset, to_state};

fn quick() -> BacktestOptions {
    BacktestOptions {
        every_days: 56,
        trials: 40,
        // The demo's history is seven months: a short horizon leaves cuts whose horizon has passed.
        horizon_days: 60,
        resamples: 100,
        ..BacktestOptions::default()
    }
}

#[test]
fn a_backtest_counts_the_cuts_at_which_every_open_issue_was_assumed_done() {
    // The demo keeps the abandonment model off (a year of history needed, seven months there): every cut
    // assumes every open issue done. With a quarter of history enough, none does.
    let demo = generate(&DemoSpec::bundled());
    let opts = quick();
    let off = backtest(&demo.snapshot, &demo.config, None, &opts);
    assert!(off.cuts > 0);
    assert_eq!(off.cuts_assuming_all_done, off.cuts);
    let mut config = demo.config.clone();
    config.forecast.abandonment_min_history_days = 90;
    let on = backtest(&demo.snapshot, &config, None, &opts);
    assert_eq!(on.cuts, off.cuts);
    assert_eq!(on.cuts_assuming_all_done, 0);
}

#[test]
fn a_history_where_nothing_closed_is_said_and_a_ledger_without_directives_is_none_left_out() {
    // Audit 186: a history with no issue ever closed was published with the throughput baseline at 100%
    // and no word; every imported project's page said its directives were left out, though its ledger
    // held none.
    let demo = generate(&DemoSpec::bundled());
    let opts = quick();
    let preamble = "# Decisions\n\nThe PM's directive ledger.\n";
    let report = backtest(&demo.snapshot, &demo.config, Some(preamble), &opts);
    assert!(!report.none_resolved());
    assert!(!report.ledger_ignored, "no directive, none left out");
    let one = format!("{preamble}\n## D-0001 · note · 2026-11-20T10:00:00Z\n\n> Ship it.\n");
    assert!(backtest(&demo.snapshot, &demo.config, Some(&one), &opts).ledger_ignored);
    let mut open = demo.snapshot.clone();
    for i in open.issues.values_mut() {
        i.state = OpenState::Open;
        i.closed_at = None;
        i.timeline.retain(|e| {
            !matches!(
                e.kind,
                commitea::domain::EventKind::Close | commitea::domain::EventKind::Reopen
            )
        });
    }
    let never = backtest(&open, &demo.config, None, &opts);
    assert!(never.cuts > 0, "{never:#?}");
    assert!(never.none_resolved(), "{:#?}", never.methods["commitea"]);
}

#[test]
fn same_input_gives_byte_identical_reports() {
    let demo = generate(&DemoSpec::bundled());
    let opts = quick();
    let a = backtest(&demo.snapshot, &demo.config, Some(&demo.ledger), &opts);
    let b = backtest(&demo.snapshot, &demo.config, Some(&demo.ledger), &opts);
    assert!(a.cuts > 0, "the demo has cuts");
    assert!(a.methods.len() >= 3);
    for m in ["commitea", "throughput", "ebs"] {
        assert!(a.methods.contains_key(m), "{m}");
    }
    assert!(a.methods.values().all(|s| s.n > 0), "{a:#?}");
    // The split by the team's pace after the cut covers CommiTea's issue forecasts once each.
    assert!(!a.by_pace.is_empty(), "{a:#?}");
    assert_eq!(
        a.by_pace.iter().map(|p| p.scores.n).sum::<usize>(),
        a.methods["commitea"].n
    );
    assert_eq!(
        a.by_pace.iter().map(|p| p.scores.n_cuts).sum::<usize>(),
        a.methods["commitea"].n_cuts
    );
    assert_eq!(
        serde_json::to_string_pretty(&a).unwrap(),
        serde_json::to_string_pretty(&b).unwrap()
    );
}

#[test]
fn the_forecast_at_a_cut_ignores_the_future() {
    let demo = generate(&DemoSpec::bundled());
    let opts = quick();
    let cuts = cut_dates(&demo.snapshot, opts.every_days, opts.min_history_days);
    let cut = cuts[cuts.len() / 2];
    let honest = forecast_at(&demo.snapshot, &demo.config, cut, 0, &opts);
    assert!(!honest.is_empty(), "issues open at the cut");

    // Plant the future: a day after the cut, every issue that existed then gains labels (a top priority,
    // a tiny estimate, a new one) and every issue still open is closed.
    let mut planted = demo.snapshot.clone();
    let later = cut + Duration::days(1);
    for issue in planted.issues.values_mut() {
        if issue.created_at > cut {
            continue;
        }
        let mut next_id = issue.timeline.iter().map(|e| e.id).max().unwrap_or(0) + 1_000_000;
        // Labels the issue does not have yet (adding one it has is no event in Gitea).
        for name in ["p/0", "est/1h", "oracle"] {
            if issue.labels.iter().any(|l| l == name) {
                continue;
            }
            let mut label =
                TimelineEvent::new(next_id, commitea::domain::EventKind::Label, later, "oracle");
            label.label = Some(name.into());
            issue.labels.push(name.into());
            issue.timeline.push(label);
            next_id += 1;
        }
        if issue.state == OpenState::Open {
            issue.state = OpenState::Closed;
            issue.closed_at = Some(later);
            issue.timeline.push(TimelineEvent::new(
                next_id,
                commitea::domain::EventKind::Close,
                later,
                "oracle",
            ));
        }
        issue.updated_at = later;
    }
    assert_ne!(planted, demo.snapshot);
    let leaked = forecast_at(&planted, &demo.config, cut, 0, &opts);
    assert_eq!(honest, leaked, "the forecast at the cut saw the future");
}

#[test]
fn on_a_real_project_the_abandonment_model_cannot_see_the_future_either() {
    let Some(dir) = crate::import::realworld_dir() else {
        return;
    };
    let ds = load_dataset(&dir, "apache").unwrap();
    let project = to_state(&ds, "CB").unwrap();
    let config: Config = yaml_serde::from_str(&project.config_yaml).unwrap();
    let opts = BacktestOptions {
        trials: 100,
        ..BacktestOptions::default()
    };
    // A late cut: more than a year of history behind it, so the abandonment model is warm.
    let cuts = cut_dates(&project.snapshot, 28, 400);
    let cut = cuts[cuts.len() * 3 / 4];
    let past = commitea::backtest::as_of(&project.snapshot, cut);
    let plan = commitea::ledger::replay(&past, &config, None, cut).into_plan();
    let report = commitea::forecast::run(
        &plan,
        &commitea::forecast::Settings {
            trials: 100,
            seed: 1,
            horizon_days: 365,
        },
    );
    assert!(
        report.abandonment.is_some(),
        "the model is warm at this cut, so the test covers it"
    );
    let honest = forecast_at(&project.snapshot, &config, cut, 0, &opts);
    let mut planted = project.snapshot.clone();
    let later = cut + Duration::days(2);
    for issue in planted.issues.values_mut() {
        if issue.created_at <= cut && issue.state == OpenState::Open {
            let id = issue.timeline.iter().map(|e| e.id).max().unwrap_or(0) + 1;
            issue.state = OpenState::Closed;
            issue.closed_at = Some(later);
            issue.timeline.push(TimelineEvent::new(
                id,
                commitea::domain::EventKind::Close,
                later,
                "oracle",
            ));
            issue.updated_at = later;
        }
    }
    let leaked = forecast_at(&planted, &config, cut, 0, &opts);
    assert_eq!(honest, leaked, "the forecast at the cut saw the future");
}

#[test]
fn a_real_project_backtests_with_every_method_scored() {
    let Some(dir) = crate::import::realworld_dir() else {
        return;
    };
    let ds = load_dataset(&dir, "apache").unwrap();
    // The smallest of HYPAT and DRILL.
    let (project, _) = ds
        .projects()
        .into_iter()
        .filter(|(p, n)| (p == "HYPAT" || p == "DRILL") && *n >= 50)
        .min_by_key(|(_, n)| *n)
        .expect("HYPAT or DRILL in the apache dataset");
    let p = to_state(&ds, &project).unwrap();
    let config = Config::parse(&p.config_yaml, Path::new("commitea.yaml")).unwrap();
    let report = backtest(&p.snapshot, &config, None, &quick());
    eprintln!("{project}: {report:#?}");
    assert!(report.cuts > 0, "{project} has cuts");
    for method in ["commitea", "throughput", "ebs"] {
        let s = &report.methods[method];
        assert!(s.n > 0, "{project} {method}: no targets");
        for m in s.coverage.iter().flatten() {
            for v in [m.value, m.lo, m.hi] {
                assert!((0.0..=1.0).contains(&v), "{project} {method}: coverage {v}");
            }
        }
    }
}

#[test]
fn the_gitea_path_backtest_syncs_runs_and_scores_every_cut() {
    let Some(dir) = crate::import::realworld_dir() else {
        return;
    };
    let ds = load_dataset(&dir, "apache").unwrap();
    let p = to_state(&ds, "CB").unwrap();
    let opts = BacktestOptions {
        trials: 60,
        horizon_days: 120,
        resamples: 100,
        ..BacktestOptions::default()
    };
    let state = tempfile::tempdir().unwrap();
    let mut seen = 0;
    let got = commitea_testkit::backtest::gitea_backtest(
        &p.snapshot,
        state.path(),
        &opts,
        Some(4),
        |c| {
            seen += 1;
            eprintln!("{c:?}");
        },
    )
    .unwrap();
    assert_eq!(seen, 4);
    assert_eq!(got.cuts.len(), 4);
    for c in &got.cuts {
        // Only what Gitea answers reaches the engine, and here that is everything the rewind knows.
        assert_eq!(c.differing_issues, 0, "{c:?}");
        assert!(c.requests > 0 && c.team > 0, "{c:?}");
    }
    let scores = commitea::backtest::score::score_by_group(&got.targets, &opts.scoring());
    for method in ["commitea", "throughput", "ebs"] {
        assert!(scores[method].n > 0, "{method}: no targets");
    }
    // The committed forecast is what was scored: the state repo has one forecast commit per cut.
    let log = std::process::Command::new("git")
        .arg("-C")
        .arg(state.path())
        .args(["log", "--format=%s"])
        .output()
        .unwrap();
    let subjects = String::from_utf8_lossy(&log.stdout);
    assert!(subjects.lines().count() >= 5, "{subjects}");
}

/// A project that went quiet long before its data ends: the cuts after its last activity are said (audit
/// 97: 161 of 243 cuts of a stalled project scored without a word).
#[test]
fn cuts_after_a_projects_last_activity_are_said() {
    let Some(dir) = crate::import::realworld_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("hypat");
    let bin = env!("CARGO_BIN_EXE_commitea");
    let import = std::process::Command::new(bin)
        .args(["import", "jira", "--data"])
        .arg(&dir)
        .args(["--dataset", "duraspace", "--project", "HYPAT", "--out"])
        .arg(&out_dir)
        .env_remove("COMMITEA_STATE")
        .output()
        .unwrap();
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    let run = std::process::Command::new(bin)
        .args(["backtest", "--trials", "60", "-s"])
        .arg(&out_dir)
        .env_remove("COMMITEA_STATE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(
        err.contains("cuts fall after the history's last activity (2011-10-11)"),
        "{err}"
    );
}
