//! Running a backtest: CommiTea's forecast and the two baselines at every cut, scored against what
//! happened.
//!
//! For each cut from [`cut_dates`] the snapshot is rewound with [`as_of`], and three methods forecast
//! every issue open at the cut:
//!
//! - `commitea`: the plan replayed from the rewound snapshot at the cut and [`forecast::run`] on it. The
//!   directive ledger is **not** applied: it has no history that could be rewound (a directive recorded
//!   after the cut would leak the future into the forecast), so every cut replays with no ledger. A
//!   forecast date `d` means "done by the end of day `d`", so it becomes `(d − cut day) + 1` days after
//!   the cut (the cuts are at midnight UTC); beyond the horizon is `None`.
//! - `throughput` and `ebs`: [`baselines::throughput`] and [`baselines::evidence_based`] on the same
//!   rewound snapshot.
//!
//! Only the issues all three methods forecast and [`outcome`] can score are kept, so the methods are
//! compared on the same targets. Each cut simulates with its own seed, derived from the options' seed and
//! the cut's index. Cuts run in parallel, and their targets are put back in cut order, so the report is
//! the same whatever the number of threads.
//!
//! Only cuts whose whole horizon has passed by the end of the data are used, so every outcome within the
//! horizon is known.
//!
//! Milestones are scored too (groups `METHOD milestone planned-shipped` and `METHOD milestone closed`):
//! every milestone open at the cut with open issues planned in it, against when everything planned in it
//! at the cut was closed and against when the milestone was closed. CommiTea forecasts its cone of all the
//! planned work; the baselines forecast issues only, so theirs is the latest of the planned issues'
//! quantiles (which treats the issues as finishing together). CommiTea's beyond-the-horizon milestone
//! quantiles are scored with its probability that all the planned work is done within the horizon, like
//! its issues; the baselines', without one, are met by anything (in their favour). CommiTea's cone of the
//! work expected to stay in the milestone (when the abandonment model is warm) is scored against the
//! milestone's close under `commitea milestone staying closed`: it is the milestone's headline range.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::baselines::{self, Quantiles, Simulation};
use super::score::score_by_group;
use super::{Pace, Scores, Scoring, Target, as_of, cut_dates, outcome, pace_after, stream};
use crate::config::Config;
use crate::domain::IssueKey;
use crate::forecast::{self, Settings, When};
use crate::state::Snapshot;

/// The group CommiTea's forecasts are scored under.
pub(crate) const COMMITEA: &str = "commitea";
/// The group the throughput Monte Carlo baseline is scored under.
pub(crate) const THROUGHPUT: &str = "throughput";
/// The group the evidence-based scheduling baseline is scored under.
pub(crate) const EBS: &str = "ebs";

/// How a backtest is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BacktestOptions {
    /// Days between cuts.
    pub every_days: u32,
    /// History the first cut has to learn from, in days.
    pub min_history_days: u32,
    /// Monte Carlo trials per method and cut.
    pub trials: u32,
    /// The seed every cut's seed is derived from.
    pub seed: u64,
    /// Days after a cut forecast; later is "beyond the horizon".
    pub horizon_days: u32,
    /// Bootstrap resamples for the intervals.
    pub resamples: u32,
}

impl Default for BacktestOptions {
    fn default() -> Self {
        Self {
            every_days: 28,
            min_history_days: 90,
            trials: 500,
            seed: 1,
            horizon_days: 365,
            resamples: 1000,
        }
    }
}

impl BacktestOptions {
    /// The options `commitea backtest` runs with: `backtest.*` from the config, the seed `forecast.seed`
    /// (default 1), the horizon `backtest.horizon_days`, else the abandonment window (at most the
    /// forecast's horizon).
    pub fn from_config(c: &Config) -> Self {
        let defaults = Self::default();
        Self {
            every_days: c.backtest.every_days.0,
            trials: c.backtest.trials.0,
            seed: c.forecast.seed.unwrap_or(defaults.seed),
            horizon_days: c.backtest.horizon_days.map_or_else(
                || c.forecast.abandonment_days.0.min(c.forecast.horizon_days.0),
                |h| h.0,
            ),
            ..defaults
        }
    }

    /// How the targets are scored.
    pub fn scoring(&self) -> Scoring {
        Scoring {
            horizon_days: self.horizon_days,
            resamples: self.resamples,
        }
    }

    fn settings(&self, cut_index: usize) -> Settings {
        Settings {
            trials: self.trials,
            seed: stream(self.seed, cut_index as u64),
            horizon_days: self.horizon_days,
        }
    }
}

/// A backtest's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BacktestReport {
    /// How it was run.
    pub options: BacktestOptions,
    /// Cuts forecast from.
    pub cuts: usize,
    /// The first cut (none when the history is too short).
    pub first_cut: Option<DateTime<Utc>>,
    /// The last cut.
    pub last_cut: Option<DateTime<Utc>>,
    /// When the snapshot it read was synced: the history it scored runs up to then. Absent in a report
    /// written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_through: Option<DateTime<Utc>>,
    /// Whether a directive ledger was given and left out (it cannot be rewound; see the module docs).
    pub ledger_ignored: bool,
    /// Cuts at which CommiTea assumed every open issue gets done, as both baselines do: the abandonment
    /// model was off there (less history than `forecast.abandonment_min_history_days`), so an issue never
    /// closed missed every date it was given. Zero in a report written before it was counted.
    #[serde(default)]
    pub cuts_assuming_all_done: usize,
    /// The history's last activity (an issue created or updated), where cuts fall after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<DateTime<Utc>>,
    /// Cuts after [`last_activity`](Self::last_activity): nothing happens there, so their scores measure a
    /// project that stopped, not forecasts of a working one (audit 97; audit 171: said only on stderr).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cuts_after_last_activity: usize,
    /// Scores by method: `commitea`, `throughput`, `ebs`.
    pub methods: BTreeMap<String, Scores>,
    /// CommiTea's issue forecasts again, split by whether the team kept its pace after the cut
    /// ([`pace_after`]): which misses are the forecast's, and which a slowdown's that no history before
    /// the cut could show. Empty in a report written before it was added.
    #[serde(default)]
    pub by_pace: Vec<PaceScores>,
}

/// Serde's test for a count left out of a file when it is nothing.
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// CommiTea's issue forecasts at the cuts after which the team's pace held, or fell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaceScores {
    /// Which cuts.
    pub pace: Pace,
    /// Their scores.
    pub scores: Scores,
}

/// Days after `cut` of a forecast date: done by the end of that day.
fn days_after(when: When, cut: DateTime<Utc>) -> Option<f64> {
    match when {
        When::Date(d) => Some((d - cut.date_naive()).num_days() as f64 + 1.0),
        When::BeyondHorizon => None,
    }
}

/// CommiTea's quantiles per open issue, with its probability of being done within the horizon (when the
/// abandonment model gives one).
/// Per open issue of a report: its quantiles in days after the cut, and its probability of being done
/// within the horizon (when the abandonment model gives one).
fn issue_quantiles(
    report: &forecast::ForecastReport,
    cut: DateTime<Utc>,
) -> Vec<(IssueKey, Quantiles, Option<f64>)> {
    report
        .issues
        .iter()
        .map(|f| {
            let q = [f.p10, f.p50, f.p80].map(|w| days_after(w, cut));
            (f.issue.clone(), q, f.probability_done)
        })
        .collect()
}

fn commitea_report(
    past: &Snapshot,
    config: &Config,
    cut: DateTime<Utc>,
    settings: &Settings,
) -> forecast::ForecastReport {
    let plan = crate::ledger::replay(past, config, None, cut).into_plan();
    forecast::run(&plan, settings)
}

fn commitea_at(
    past: &Snapshot,
    config: &Config,
    cut: DateTime<Utc>,
    settings: &Settings,
) -> Vec<(IssueKey, Quantiles)> {
    issue_quantiles(&commitea_report(past, config, cut, settings), cut)
        .into_iter()
        .map(|(k, q, _)| (k, q))
        .collect()
}

/// CommiTea's forecast at `cut` (as the `cut_index`-th cut of a backtest), from `snapshot` rewound to
/// it: per open issue, p10/p50/p80 in days after the cut. Nothing after the cut can change it.
pub fn forecast_at(
    snapshot: &Snapshot,
    config: &Config,
    cut: DateTime<Utc>,
    cut_index: usize,
    opts: &BacktestOptions,
) -> Vec<(IssueKey, Quantiles)> {
    let past = as_of(snapshot, cut);
    commitea_at(&past, config, cut, &opts.settings(cut_index))
}

/// The targets of one cut, methods in the order `commitea`, `throughput`, `ebs`, issues by key; and
/// whether CommiTea's forecast there assumed every open issue done (the abandonment model off: less
/// history than it needs).
fn cut_targets(
    snapshot: &Snapshot,
    config: &Config,
    cut: DateTime<Utc>,
    index: usize,
    opts: &BacktestOptions,
) -> CutTargets {
    let past = as_of(snapshot, cut);
    let report = commitea_report(&past, config, cut, &opts.settings(index));
    let all_done = report.abandonment.is_none();
    (
        score_cut(snapshot, &past, &report, cut, index, opts),
        all_done,
    )
}

/// The targets of one cut given CommiTea's forecast `report` made at `cut` from `past` (what was known
/// then), scored against `truth` (everything known now), with the baselines run on `past`. Methods in the
/// order `commitea`, `throughput`, `ebs`, issues by key, then the milestones.
///
/// This is how a forecast made elsewhere is scored — e.g. the one a real `commitea run` committed after
/// syncing from a Gitea server as of the cut — with exactly the rules of [`backtest`].
pub fn score_cut(
    truth: &Snapshot,
    past: &Snapshot,
    report: &forecast::ForecastReport,
    cut: DateTime<Utc>,
    index: usize,
    opts: &BacktestOptions,
) -> Vec<Target> {
    let settings = opts.settings(index);
    let sim = Simulation {
        trials: settings.trials,
        seed: settings.seed,
        horizon_days: settings.horizon_days,
    };
    let full = issue_quantiles(report, cut);
    let within: BTreeMap<IssueKey, Option<f64>> =
        full.iter().map(|(k, _, p)| (k.clone(), *p)).collect();
    let methods: [(&str, BTreeMap<IssueKey, Quantiles>); 3] = [
        (COMMITEA, full.into_iter().map(|(k, q, _)| (k, q)).collect()),
        (
            THROUGHPUT,
            baselines::throughput(past, cut, &sim).into_iter().collect(),
        ),
        (
            EBS,
            baselines::evidence_based(past, cut, &sim)
                .into_iter()
                .collect(),
        ),
    ];
    // The issues every method forecast, with an outcome to score them on.
    let common: Vec<(&IssueKey, super::Outcome)> = methods[0]
        .1
        .keys()
        .filter(|k| methods[1..].iter().all(|(_, m)| m.contains_key(*k)))
        .filter_map(|k| outcome(truth, k, cut).map(|o| (k, o)))
        .collect();
    let cut_id = i64::try_from(index).unwrap_or(i64::MAX);
    let mut out = Vec::with_capacity(common.len() * methods.len());
    for (group, quantiles) in &methods {
        for (key, o) in &common {
            if let Some(q) = quantiles.get(*key) {
                out.push(Target {
                    group: (*group).to_owned(),
                    cut: cut_id,
                    q: *q,
                    outcome: *o,
                    p_within: if *group == COMMITEA {
                        within.get(*key).copied().flatten()
                    } else {
                        None
                    },
                });
            }
        }
    }
    out.extend(milestone_targets(
        truth, past, report, &methods, cut, cut_id,
    ));
    out
}

/// The suffix of milestone targets scored on "everything planned in it at the cut was closed".
pub(crate) const PLANNED_SHIPPED: &str = "milestone planned-shipped";
/// The suffix of milestone targets scored on "the milestone was closed".
pub(crate) const MILESTONE_CLOSED: &str = "milestone closed";
/// The group of CommiTea's cone of the work that stays in a milestone, scored on "the milestone was
/// closed" (the baselines have no such cone).
pub(crate) const STAYING_CLOSED: &str = "commitea milestone staying closed";

/// Milestone targets: every milestone open at the cut with open issues planned in it, scored two ways —
/// when everything planned in it at the cut was closed (open while any of it is), and when the
/// milestone itself was closed. CommiTea's forecast is its milestone cone for all the planned work; the
/// baselines give issues only, so theirs is the latest of their issue quantiles (an approximation that
/// treats the issues as finishing together, documented as such).
fn milestone_targets(
    full: &Snapshot,
    past: &Snapshot,
    report: &forecast::ForecastReport,
    methods: &[(&str, BTreeMap<IssueKey, Quantiles>); 3],
    cut: DateTime<Utc>,
    cut_id: i64,
) -> Vec<Target> {
    let mut out = Vec::new();
    let end = full.meta.synced_at;
    let days = |t: DateTime<Utc>| (t - cut).num_seconds() as f64 / 86_400.0;
    for m in &report.milestones {
        if m.state != crate::domain::OpenState::Open || m.open_issues == 0 {
            continue;
        }
        let planned: Vec<&IssueKey> = past
            .issues
            .iter()
            .filter(|(_, i)| i.milestone == Some(m.id) && i.state == crate::domain::OpenState::Open)
            .map(|(k, _)| k)
            .collect();
        if planned.is_empty() {
            continue;
        }
        // Everything planned at the cut shipped: the last close, while none is still open.
        let closes: Option<Vec<f64>> = planned
            .iter()
            .map(|k| match outcome(full, k, cut) {
                Some(super::Outcome::Resolved(y)) => Some(y),
                _ => None,
            })
            .collect();
        let shipped = match closes {
            Some(c) => super::Outcome::Resolved(c.into_iter().fold(0.0, f64::max)),
            None => super::Outcome::Open(days(end).max(0.0)),
        };
        let closed = match full.milestone(m.id).and_then(|(_, ms)| ms.closed_at) {
            Some(c) if c > cut => super::Outcome::Resolved(days(c)),
            Some(_) => continue,
            None => super::Outcome::Open(days(end).max(0.0)),
        };
        // The planned scope's cone: the milestone's own while nothing is expected to leave, else given
        // beside the headline of the work that stays (scored below as its own group).
        let ours = m
            .planned
            .map_or([m.p10, m.p50, m.p80], |r| [r.p10, r.p50, r.p80])
            .map(|w| days_after(w, cut));
        for (name, quantiles) in methods {
            let q = if *name == COMMITEA {
                ours
            } else {
                // The latest of the planned issues' quantiles; beyond the horizon if any is.
                let mut q: Quantiles = [Some(0.0); 3];
                for k in &planned {
                    match quantiles.get(*k) {
                        Some(iq) => {
                            for (a, b) in q.iter_mut().zip(iq) {
                                *a = match (*a, b) {
                                    (Some(x), Some(y)) => Some(x.max(*y)),
                                    _ => None,
                                };
                            }
                        }
                        None => q = [None; 3],
                    }
                }
                q
            };
            // The headline cone is the work that stays whenever the planned scope is given beside it.
            if *name == COMMITEA && m.planned.is_some() {
                out.push(Target {
                    group: STAYING_CLOSED.to_owned(),
                    cut: cut_id,
                    q: [m.p10, m.p50, m.p80].map(|w| days_after(w, cut)),
                    outcome: closed,
                    p_within: None,
                });
            }
            for (what, o) in [(PLANNED_SHIPPED, shipped), (MILESTONE_CLOSED, closed)] {
                out.push(Target {
                    group: format!("{name} {what}"),
                    cut: cut_id,
                    q,
                    outcome: o,
                    p_within: if *name == COMMITEA {
                        m.probability_done
                    } else {
                        None
                    },
                });
            }
        }
    }
    out
}

/// Every target of a backtest, in cut order, and the cuts.
pub fn backtest_targets(
    snapshot: &Snapshot,
    config: &Config,
    opts: &BacktestOptions,
) -> (Vec<DateTime<Utc>>, Vec<Target>) {
    let (cuts, per_cut) = targets_by_cut(snapshot, config, opts);
    (cuts, per_cut.into_iter().flat_map(|(t, _)| t).collect())
}

/// The longest horizon, in days, that gives the snapshot a cut ([`cut_dates`] with `opts`); `None` when no
/// horizon does (the history is shorter than `min_history_days` and the end margin).
pub fn longest_horizon_days(snapshot: &Snapshot, opts: &BacktestOptions) -> Option<i64> {
    cut_dates(snapshot, opts.every_days, opts.min_history_days)
        .first()
        .map(|first| (snapshot.meta.synced_at - *first).num_days())
}

/// One cut's targets, and whether CommiTea assumed every open issue done there.
type CutTargets = (Vec<Target>, bool);

/// The cuts, and each one's targets with whether CommiTea assumed every open issue done there.
fn targets_by_cut(
    snapshot: &Snapshot,
    config: &Config,
    opts: &BacktestOptions,
) -> (Vec<DateTime<Utc>>, Vec<CutTargets>) {
    // Only cuts whose whole horizon has passed: then every outcome within the horizon is known, and no
    // target is left undecided for lack of follow-up.
    let horizon = chrono::Duration::days(i64::from(opts.horizon_days));
    let cuts: Vec<DateTime<Utc>> = cut_dates(snapshot, opts.every_days, opts.min_history_days)
        .into_iter()
        .filter(|c| *c + horizon <= snapshot.meta.synced_at)
        .collect();
    let per_cut: Vec<CutTargets> = cuts
        .par_iter()
        .enumerate()
        .map(|(i, cut)| cut_targets(snapshot, config, *cut, i, opts))
        .collect();
    (cuts, per_cut)
}

impl BacktestReport {
    /// Whether CommiTea had targets and none of them was resolved: no issue closed within a horizon after
    /// any cut (audit 186: a history where nothing ever closed was published with the throughput baseline
    /// at 100%, as a forecast that dates nothing meets every range).
    pub fn none_resolved(&self) -> bool {
        self.methods
            .get(COMMITEA)
            .is_some_and(|s| s.n > 0 && s.n_resolved == 0)
    }
}

/// Backtests CommiTea and the baselines on `snapshot` (see the module documentation). `ledger` is not
/// applied — its history cannot be rewound — and the report says whether one was left out.
pub fn backtest(
    snapshot: &Snapshot,
    config: &Config,
    ledger: Option<&str>,
    opts: &BacktestOptions,
) -> BacktestReport {
    let (cuts, per_cut) = targets_by_cut(snapshot, config, opts);
    let cuts_assuming_all_done = per_cut.iter().filter(|(_, all_done)| *all_done).count();
    let targets: Vec<Target> = per_cut.into_iter().flat_map(|(t, _)| t).collect();
    let mut methods = score_by_group(&targets, &opts.scoring());
    // Every method is reported, even when no cut had a target for it.
    for name in [COMMITEA, THROUGHPUT, EBS] {
        methods
            .entry(name.to_owned())
            .or_insert_with(|| super::score::score(&[], &opts.scoring()));
    }
    let paces: Vec<Pace> = cuts
        .iter()
        .map(|c| pace_after(snapshot, *c, opts.horizon_days))
        .collect();
    let by_pace = score_by_pace(
        &targets,
        |cut| {
            usize::try_from(cut)
                .ok()
                .and_then(|c| paces.get(c))
                .copied()
        },
        &opts.scoring(),
    );
    let last_activity = snapshot
        .issues
        .values()
        .map(|i| i.updated_at.max(i.created_at))
        .max();
    let cuts_after_last_activity =
        last_activity.map_or(0, |l| cuts.iter().filter(|c| **c > l).count());
    BacktestReport {
        options: *opts,
        cuts: cuts.len(),
        first_cut: cuts.first().copied(),
        last_cut: cuts.last().copied(),
        history_through: Some(snapshot.meta.synced_at),
        // Directives, not any text: an imported state's ledger holds only its preamble (audit 186: every
        // imported project's page said its directives were left out).
        ledger_ignored: ledger.is_some_and(|l| {
            crate::ledger::parse::parse(l)
                .ledger
                .directives()
                .next()
                .is_some()
        }),
        cuts_assuming_all_done,
        last_activity: last_activity.filter(|_| cuts_after_last_activity > 0),
        cuts_after_last_activity,
        methods,
        by_pace,
    }
}

/// CommiTea's issue targets scored apart at the cuts after which the team's pace held and at those after
/// which it fell; `pace_of` says which a cut (by its index) was. A side without targets is left out.
pub fn score_by_pace(
    targets: &[Target],
    pace_of: impl Fn(i64) -> Option<Pace>,
    scoring: &Scoring,
) -> Vec<PaceScores> {
    [Pace::Held, Pace::Fell]
        .into_iter()
        .map(|pace| {
            let side: Vec<Target> = targets
                .iter()
                .filter(|t| t.group == COMMITEA && pace_of(t.cut) == Some(pace))
                .cloned()
                .collect();
            PaceScores {
                pace,
                scores: super::score::score(&side, scoring),
            }
        })
        .filter(|p| p.scores.n > 0)
        .collect()
}

/// A small table of the methods' scores, for people: shares met in percent, pinball losses in days, each
/// with its interval (audit 118: bare `0.80` and `81.64` where the page says 80% and 82 d).
pub fn table(report: &BacktestReport) -> String {
    let m = |x: Option<super::Metric>| {
        x.map_or_else(
            || "—".to_owned(),
            |m| {
                format!(
                    "{:.0}% [{:.0}, {:.0}]",
                    100.0 * m.value,
                    100.0 * m.lo,
                    100.0 * m.hi
                )
            },
        )
    };
    let d = |x: Option<super::Metric>| {
        x.map_or_else(
            || "—".to_owned(),
            |m| format!("{:.0} d [{:.0}, {:.0}]", m.value, m.lo, m.hi),
        )
    };
    let mut out = format!(
        "{} cuts, {} to {}{}\n",
        report.cuts,
        report
            .first_cut
            .map_or_else(|| "—".to_owned(), |c| c.date_naive().to_string()),
        report
            .last_cut
            .map_or_else(|| "—".to_owned(), |c| c.date_naive().to_string()),
        report.history_through.map_or_else(String::new, |t| format!(
            " (history through {})",
            t.date_naive()
        )),
    );
    for (name, s) in &report.methods {
        out.push_str(&format!(
            "{name:<10} n={} (resolved {}, open {})\n  coverage p10 {}  p50 {}  p80 {}\n  pinball50 {}  pinball80 {}\n  censored  pinball50 {}  pinball80 {}\n",
            s.n,
            s.n_resolved,
            s.n_open,
            m(s.coverage[0]),
            m(s.coverage[1]),
            m(s.coverage[2]),
            d(s.pinball50),
            d(s.pinball80),
            d(s.pinball50_censored),
            d(s.pinball80_censored),
        ));
        if s.n_dated.iter().any(|n| *n > 0) {
            out.push_str(&format!(
                "  when dated (n {}/{}/{})  p10 {}  p50 {}  p80 {}\n",
                s.n_dated[0],
                s.n_dated[1],
                s.n_dated[2],
                m(s.dated_coverage[0]),
                m(s.dated_coverage[1]),
                m(s.dated_coverage[2]),
            ));
        }
        for b in &s.reliability {
            out.push_str(&format!(
                "  P(done) {:.1}–{:.1}: {} forecasts, promised {:.0}%, observed {}\n",
                b.lo,
                b.hi,
                b.n,
                100.0 * b.promised,
                m(Some(b.observed)),
            ));
        }
    }
    for p in &report.by_pace {
        let s = &p.scores;
        out.push_str(&format!(
            "{COMMITEA} where the team {} after the cut: {} cuts, n={}  p80 {}  when dated: p50 {} (n {})  p80 {} (n {})\n",
            p.pace.words(),
            s.n_cuts,
            s.n,
            m(s.coverage[2]),
            m(s.dated_coverage[1]),
            s.n_dated[1],
            m(s.dated_coverage[2]),
            s.n_dated[2],
        ));
    }
    out
}
