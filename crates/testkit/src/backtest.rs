//! The backtest through the user's path: a project's history served by the Gitea emulator as it was at
//! each cut, synced into a state repo by the real sync, forecast and committed by the real `commitea run`
//! pipeline, and scored against what really happened.
//!
//! `commitea backtest` rewinds the snapshot in memory ([`commitea::backtest::as_of`]) and forecasts it
//! directly. This harness measures what a user meets instead: only what a Gitea server answers and a sync
//! keeps reaches the engine, the state repo accumulates its syncs and committed forecasts from cut to
//! cut (so each forecast keeps the people the previous one planned, as a user's does), and the forecast
//! scored is the `forecast/forecast.json` the run committed.
//!
//! At each cut the emulator's data is replaced by the truth rewound to the cut, its clock set to the cut,
//! and the state repo synced incrementally (the first cut syncs in full). The team in `commitea.yaml` is
//! what a PM would list at that moment: everyone assigned to an issue with activity in the
//! [`TEAM_WINDOW_DAYS`] before the cut (else everyone assigned by then), never people who only turn up
//! later.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use commitea::backtest::{BacktestOptions, Target, as_of, cut_dates, score_cut};
use commitea::config::Overrides;
use commitea::domain::RepoName;
use commitea::forecast::ForecastReport;
use commitea::pipeline::{RunOptions, run};
use commitea::state::{Layout, Snapshot};

use crate::gitea::{Dataset, Emulator, EmulatorOptions};

/// The token the emulator accepts and the runs send.
const TOKEN: &str = "backtest-token";

/// How far back activity makes someone part of the team a PM would list at a cut.
pub const TEAM_WINDOW_DAYS: i64 = 180;

/// What went wrong in a Gitea-path backtest.
#[derive(Debug, thiserror::Error)]
pub enum GiteaBacktestError {
    /// The emulator did not start.
    #[error("starting the Gitea emulator: {0}")]
    Emulator(#[from] crate::gitea::EmulatorError),
    /// A file of the state repo could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The state repo could not be set up.
    #[error("setting up the state repo: {0}")]
    Git(#[from] commitea::state::git::GitError),
    /// A run failed.
    #[error("the run at the cut {cut}: {source}")]
    Run {
        /// The cut.
        cut: DateTime<Utc>,
        /// Why.
        source: commitea::pipeline::PipelineError,
    },
    /// The synced snapshot or the committed forecast could not be read back.
    #[error("reading back the state at the cut {cut}: {what}")]
    ReadBack {
        /// The cut.
        cut: DateTime<Utc>,
        /// What failed.
        what: String,
    },
}

/// One cut of a Gitea-path backtest: what the sync brought and how the run went.
#[derive(Debug, Clone)]
pub struct CutRun {
    /// The cut.
    pub cut: DateTime<Utc>,
    /// Requests the sync made.
    pub requests: u64,
    /// Issues in the synced snapshot.
    pub issues: usize,
    /// Open issues forecast.
    pub open: usize,
    /// The people in `commitea.yaml` at the cut.
    pub team: usize,
    /// How many issues of the synced snapshot differ from the truth rewound in memory (what `commitea
    /// backtest` would have forecast from).
    pub differing_issues: usize,
    /// Which fields of those issues differ, and in how many issues each.
    pub differing_fields: BTreeMap<String, usize>,
    /// The run's warnings (cold models and the like).
    pub warnings: Vec<String>,
    /// Whether the forecast's calibration was cold (too few closed issues to learn from).
    pub calibration_cold: bool,
    /// Whether the abandonment model learnt a closing rate: not too short a history, nor too few closes.
    pub abandonment_learnt: bool,
}

/// A Gitea-path backtest's result: its cuts and its targets, scored by the caller.
#[derive(Debug, Clone, Default)]
pub struct GiteaBacktest {
    /// The cuts, in order.
    pub cuts: Vec<CutRun>,
    /// Every target, in cut order (cut ids are the cut's index).
    pub targets: Vec<Target>,
}

/// Backtests `truth` (a project's whole history, e.g. imported from Jira) through the user's path, in
/// the state repo `dir` (created; it must not exist or be empty), with `opts` (cut spacing, history,
/// trials, seed and horizon; the forecast horizon is set to the backtest's). At most `max_cuts` cuts are
/// run, the latest dropped first; `progress` is called after each.
pub fn gitea_backtest(
    truth: &Snapshot,
    dir: &Path,
    opts: &BacktestOptions,
    max_cuts: Option<usize>,
    mut progress: impl FnMut(&CutRun),
) -> Result<GiteaBacktest, GiteaBacktestError> {
    let horizon = Duration::days(i64::from(opts.horizon_days));
    let mut cuts: Vec<DateTime<Utc>> = cut_dates(truth, opts.every_days, opts.min_history_days)
        .into_iter()
        .filter(|c| *c + horizon <= truth.meta.synced_at)
        .collect();
    if let Some(m) = max_cuts {
        cuts.truncate(m);
    }
    let mut out = GiteaBacktest::default();
    let Some(first) = cuts.first() else {
        return Ok(out);
    };
    let repos: Vec<RepoName> = truth
        .meta
        .repositories
        .iter()
        .map(|r| r.name.clone())
        .collect();
    let layout = Layout::new(dir);
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    write(&layout.ledger(), LEDGER)?;
    write(&dir.join("commitea.yaml"), &config_text(&repos, &[]))?;
    let repo = commitea::state::git::open_or_init(dir)?;
    let sig = commitea::state::git::Signature {
        name: "backtest".into(),
        email: "backtest@example.invalid".into(),
        time: *first - Duration::days(1),
    };
    commitea::state::git::commit_all(&repo, &[], "the state repo before the first cut\n", &sig)?;

    let mut emulator = Emulator::start(
        Dataset::from_snapshot(&as_of(truth, *first)),
        EmulatorOptions {
            token: TOKEN.into(),
            future_fields: false,
            ..EmulatorOptions::default()
        },
    )?;
    for (index, cut) in cuts.iter().enumerate() {
        let past = as_of(truth, *cut);
        emulator.with_dataset(|d| {
            *d = Dataset::from_snapshot(&past);
            d.set_clock(*cut);
        });
        let team = team_at(&past, *cut);
        write(&dir.join("commitea.yaml"), &config_text(&repos, &team))?;
        emulator.reset_counts();
        let summary = run(&RunOptions {
            state_dir: dir.to_path_buf(),
            now: Some(*cut),
            clock: *cut,
            offline: false,
            full_sync: false,
            token: Some(TOKEN.into()),
            server_fallback: Some(emulator.url()),
            overrides: Overrides {
                seed: Some(opts.seed),
                trials: Some(opts.trials),
                keys: vec![("forecast.horizon_days", opts.horizon_days.to_string())],
            },
            env: Vec::new(),
            commit: true,
            render: false,
            applied_before: Vec::new(),
            skip_ci: false,
        })
        .map_err(|source| GiteaBacktestError::Run { cut: *cut, source })?;
        let read_back = |what: String| GiteaBacktestError::ReadBack { cut: *cut, what };
        let synced = Snapshot::load(&layout).map_err(|e| read_back(e.to_string()))?;
        let path = layout.forecast_file();
        let bytes =
            std::fs::read(&path).map_err(|e| read_back(format!("{}: {e}", path.display())))?;
        let report: ForecastReport = serde_json::from_slice(&bytes)
            .map_err(|e| read_back(format!("{}: {e}", path.display())))?;
        let (differing_issues, differing_fields) = differing(&past, &synced);
        let run = CutRun {
            cut: *cut,
            requests: emulator.request_count(),
            issues: synced.issues.len(),
            open: summary.open,
            team: team.len(),
            differing_issues,
            differing_fields,
            warnings: summary.warnings.clone(),
            calibration_cold: report.calibration.cold_start,
            abandonment_learnt: report.abandonment.as_ref().is_some_and(|a| !a.cold_start),
        };
        progress(&run);
        out.cuts.push(run);
        out.targets
            .extend(score_cut(truth, &synced, &report, *cut, index, opts));
    }
    emulator.stop();
    Ok(out)
}

/// How many issues' synced records differ from the truth rewound in memory, and which of their fields
/// (an issue only one side has counts as `issue`).
fn differing(past: &Snapshot, synced: &Snapshot) -> (usize, BTreeMap<String, usize>) {
    let mut keys: BTreeSet<_> = past.issues.keys().collect();
    keys.extend(synced.issues.keys());
    let mut n = 0;
    let mut fields: BTreeMap<String, usize> = BTreeMap::new();
    for k in keys {
        match (past.issues.get(k), synced.issues.get(k)) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(a), Some(b)) => {
                let (a, b) = (serde_json::to_value(a), serde_json::to_value(b));
                if let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) = (a, b)
                {
                    for (f, v) in &a {
                        if b.get(f) != Some(v) {
                            *fields.entry(f.clone()).or_default() += 1;
                        }
                    }
                }
            }
            _ => *fields.entry("issue".into()).or_default() += 1,
        }
        n += 1;
    }
    (n, fields)
}

/// The people a PM would list as the team at `cut`: assigned to an issue with activity in the
/// [`TEAM_WINDOW_DAYS`] before it, else everyone assigned by then.
pub fn team_at(past: &Snapshot, cut: DateTime<Utc>) -> Vec<String> {
    let since = cut - Duration::days(TEAM_WINDOW_DAYS);
    let recent: BTreeSet<String> = past
        .issues
        .values()
        .filter(|i| i.updated_at >= since)
        .flat_map(|i| i.assignees.iter().cloned())
        .collect();
    if !recent.is_empty() {
        return recent.into_iter().collect();
    }
    past.issues
        .values()
        .flat_map(|i| i.assignees.iter().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

const LEDGER: &str =
    "# PM directives\n\nA backtest's state repo: no directives (they have no history to rewind).\n";

fn config_text(repos: &[RepoName], team: &[String]) -> String {
    let mut s = String::from("repositories:\n");
    for r in repos {
        s.push_str(&format!("  - {r}\n"));
    }
    if team.is_empty() {
        s.push_str("team: []\n");
    } else {
        s.push_str("team:\n");
        for t in team {
            // Names are quoted: a pseudonym or login is data, not YAML.
            s.push_str(&format!(
                "  - name: {}\n",
                serde_json::Value::String(t.clone())
            ));
        }
    }
    s
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> GiteaBacktestError + '_ {
    move |source| GiteaBacktestError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn write(path: &Path, text: &str) -> Result<(), GiteaBacktestError> {
    std::fs::write(path, text).map_err(io(path))
}
