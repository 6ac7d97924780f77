//! Reads that do not recompute, and fewer trials that say the same: the committed forecast is reused while
//! its inputs are unchanged, and adaptive trials stop early without moving what is reported. (Speed itself
//! is measured by `cargo bench --bench scale`, never by a timed test.)

use std::path::Path;
use std::process::{Command, Output};

use chrono::{Datelike, Weekday};
use commitea::forecast::{self, ForecastReport, Mode, Settings, When};
use commitea::plan::Plan;

use crate::engine::demo_plan;

const SETTINGS: Settings = Settings {
    trials: 1_000,
    seed: 5,
    horizon_days: 730,
};

fn commitea(args: &[&str], cwd: &Path) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(args)
        .current_dir(cwd)
        .env_remove("COMMITEA_STATE")
        .env("COMMITEA_LOG", "info")
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const REUSED: &str = "the committed forecast is reused";

#[test]
fn a_reused_forecast_is_byte_for_byte_the_one_a_new_run_gives() {
    let plan = demo_plan();
    let first = forecast::run(&plan, &SETTINGS);
    // What the next reader forecasts: the same plan with the people the first forecast planned.
    let mut next = plan.clone();
    next.planned_for = forecast::planned_people(&first);
    next.cut_before = forecast::cut_lines(&first);
    let fresh = forecast::run(&next, &SETTINGS);
    let (reused, was) = forecast::run_or_reuse(&next, &SETTINGS, Mode::default(), Some(&first));
    assert!(was, "the same inputs must reuse the forecast");
    assert_eq!(
        serde_json::to_string(&reused).unwrap(),
        serde_json::to_string(&fresh).unwrap(),
        "the reused forecast differs from a new one of the same inputs"
    );
    assert!(fresh.inputs.as_deref().is_some_and(|k| k.len() == 40));

    // Any change to the inputs forecasts anew: an estimate, the day zero, the settings, the mode, the people.
    let mut bigger = next.clone();
    let open = bigger
        .issues
        .iter_mut()
        .find(|i| i.state == commitea::domain::OpenState::Open && i.estimate_hours.is_some())
        .unwrap();
    open.estimate_hours = open.estimate_hours.map(|h| h * 2.0);
    let mut later = next.clone();
    later.now += chrono::Duration::hours(1);
    let mut nobody: Plan = next.clone();
    nobody.planned_for.clear();
    assert!(!next.cut_before.is_empty(), "the demo has a cut line");
    let mut uncut: Plan = next.clone();
    uncut.cut_before.clear();
    for (what, plan, settings, mode) in [
        ("an estimate", &bigger, SETTINGS, Mode::default()),
        ("the day zero", &later, SETTINGS, Mode::default()),
        (
            "the seed",
            &next,
            Settings {
                seed: 6,
                ..SETTINGS
            },
            Mode::default(),
        ),
        (
            "the trials",
            &next,
            Settings {
                trials: 999,
                ..SETTINGS
            },
            Mode::default(),
        ),
        (
            "the mode",
            &next,
            SETTINGS,
            Mode {
                adaptive_trials: true,
                ..Mode::default()
            },
        ),
        ("the people kept", &nobody, SETTINGS, Mode::default()),
        (
            "the cut lines tried first",
            &uncut,
            SETTINGS,
            Mode::default(),
        ),
    ] {
        let (_, was) = forecast::run_or_reuse(plan, &settings, mode, Some(&first));
        assert!(!was, "a change of {what} reused the committed forecast");
    }
    // A committed forecast without a key (an older version's) is never reused.
    let mut old = first.clone();
    old.inputs = None;
    assert!(!forecast::run_or_reuse(&next, &SETTINGS, Mode::default(), Some(&old)).1);
}

#[test]
fn tools_plan_and_a_what_if_reuse_the_committed_forecast_until_an_input_changes() {
    let state = crate::toolcli::demo_state();
    let dir = state.path();
    let s = dir.to_str().unwrap();
    let small = ["--seed", "3", "--trials", "300"];
    let with = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-s", s]);
        all.extend(small);
        commitea(&all, dir)
    };
    let out = with(&["run", "--offline"]);
    assert!(
        stderr(&out).contains("trials in") && !stderr(&out).contains(REUSED),
        "the first run forecasts: {}",
        stderr(&out)
    );
    let committed = std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap();
    let committed: ForecastReport = serde_json::from_str(&committed).unwrap();

    // A read of the unchanged state: the committed numbers, no Monte Carlo.
    let out = with(&["plan", "--json"]);
    assert!(stderr(&out).contains(REUSED), "{}", stderr(&out));
    assert!(!stderr(&out).contains("trials in"), "{}", stderr(&out));
    let planned: ForecastReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(planned, committed);
    let out = with(&["tool", "query_project", r#"{"view":"runway"}"#]);
    assert!(stderr(&out).contains(REUSED), "{}", stderr(&out));
    // Running again changes nothing and recomputes nothing.
    let out = with(&["run", "--offline"]);
    assert!(stderr(&out).contains(REUSED), "{}", stderr(&out));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(said.contains("no new commit"), "{said}");

    // A what-if: the forecast before is the committed one, only the one after runs.
    let out = with(&[
        "directive",
        "--kind",
        "reprioritize",
        "--quote",
        "Pull to refresh first.",
        "--target",
        "issue acme/mobile#90",
        "--params",
        r#"{"priority": 0}"#,
    ]);
    assert!(stderr(&out).contains(REUSED), "{}", stderr(&out));

    // The directive changed the ledger: every read forecasts anew, and says something else.
    let out = with(&["plan", "--json"]);
    assert!(!stderr(&out).contains(REUSED), "{}", stderr(&out));
    assert!(stderr(&out).contains("trials in"), "{}", stderr(&out));
    let after: ForecastReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(after.inputs, committed.inputs);
    assert_ne!(after.issues, committed.issues);
}

/// Working days (Monday to Friday) between two reported days; beyond the horizon is far away.
fn apart(a: When, b: When) -> i64 {
    match (a, b) {
        (When::Date(a), When::Date(b)) => {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            lo.iter_days()
                .take_while(|d| *d < hi)
                .filter(|d| !matches!(d.weekday(), Weekday::Sat | Weekday::Sun))
                .count() as i64
        }
        (When::BeyondHorizon, When::BeyondHorizon) => 0,
        _ => i64::MAX / 2,
    }
}

#[test]
fn adaptive_trials_stop_early_and_report_what_the_full_run_reports() {
    let plan = demo_plan();
    let full_settings = Settings {
        trials: 16_000,
        seed: 9,
        horizon_days: 730,
    };
    let adaptive = Mode {
        adaptive_trials: true,
        ..Mode::default()
    };
    let full = forecast::run(&plan, &full_settings);
    let quick = forecast::run_with(&plan, &full_settings, adaptive);
    assert!(
        quick.trials >= forecast::ADAPTIVE_FLOOR && quick.trials < full.trials,
        "adaptive trials ran {} of {}",
        quick.trials,
        full.trials
    );
    // Deterministic for a seed, whatever the thread count.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| forecast::run_with(&plan, &full_settings, adaptive));
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&quick).unwrap()
    );
    // Every percentile it reports is within a working day of the full run's, but for as many as a run of
    // the default 10,000 trials also misses by more (a p10 on a bimodal range can jump a few days at
    // any count).
    let off = |r: &ForecastReport| -> Vec<String> {
        let mut out = Vec::new();
        for (a, b) in full.issues.iter().zip(&r.issues) {
            assert_eq!(a.issue, b.issue);
            for (q, x, y) in [
                ("p10", a.p10, b.p10),
                ("p50", a.p50, b.p50),
                ("p80", a.p80, b.p80),
            ] {
                if apart(x, y) > 1 {
                    out.push(format!("{} {q}: {x} vs {y}", a.issue));
                }
            }
        }
        for (a, b) in full.milestones.iter().zip(&r.milestones) {
            for (q, x, y) in [
                ("p10", a.p10, b.p10),
                ("p50", a.p50, b.p50),
                ("p80", a.p80, b.p80),
            ] {
                if apart(x, y) > 1 {
                    out.push(format!("{} {q}: {x} vs {y}", a.title));
                }
            }
        }
        out
    };
    let default = forecast::run(
        &plan,
        &Settings {
            trials: 10_000,
            ..full_settings
        },
    );
    let (adaptive_off, default_off) = (off(&quick), off(&default));
    let reported = 3 * (full.issues.len() + full.milestones.len());
    assert!(
        adaptive_off.len() <= default_off.len() && adaptive_off.len() * 100 <= reported,
        "adaptive trials ({} trials): {} of {reported} percentiles more than a working day from the full \
         run's, 10,000 trials: {}: {adaptive_off:?}",
        quick.trials,
        adaptive_off.len(),
        default_off.len()
    );
}
