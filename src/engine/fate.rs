//! What happens to open work besides being done: the probability that an open issue is closed within a
//! window at all, and when, learned from the state's own recent history.
//!
//! Real trackers are full of work that never gets done: issues closed as duplicates or "won't fix", issues
//! that sit untouched for years, issues moved out of one milestone after another. A forecaster that
//! assumes every open issue is worked through in queue order cannot say "probably never". This model can.
//!
//! **A closing rate, from recent history.** Over the last [`RECENT_DAYS`] days, in steps of
//! [`STEP_DAYS`], every open issue is *exposed* for the days it stayed open in the step, and an *event* is
//! counted when it was closed in it. An issue's features at the step — its lifecycle column and age bucket
//! (the stratum), its labels and its assignee — say which rates it feeds. A rate is events ÷ days exposed.
//! Recent history only: a project's habits drift (the real histories this was measured on show it), and
//! exposure needs no waiting for outcomes, so last month's closes count today.
//!
//! **Shrinkage, as in calibration** (team → stratum → label → person). A stratum's rate is the team's,
//! moved toward its own by `n/(n+5)` (on the log scale), `n` the distinct issues behind it — one issue seen
//! in many steps is one piece of evidence. Labels and people then scale it by their observed ÷ expected
//! events, shrunk the same way.
//!
//! **A trend, damped.** The newest weeks against the year give a trend factor; a slowdown is carried on
//! for as long again and then held, because the real histories show projects that slow keep slowing.
//!
//! **Done within the window, and when.** Going forward day by day the issue ages through the buckets; the
//! cumulative rate `H(t)` gives `P(done within the window) = 1 − exp(−H(window))`, and conditional on being
//! done, the day is drawn from `(1 − exp(−H(t))) / P`. The Monte Carlo uses both; an issue then ends no
//! earlier than that day nor than the schedule allows.
//!
//! **Cold start.** With less history than [`MIN_HISTORY_DAYS`] the model predicts 1 — every open issue is
//! done, the classic assumption — so a young project's forecast is the engine's alone: its plan is all
//! there is. With a longer history but fewer than [`MIN_EVENTS`] closes in all of it, the model is
//! *undecided*: a team that has closed almost nothing in a quarter or more gives no rate to learn, but
//! "done within weeks" is the one answer its history contradicts, so every open issue gets even odds
//! ([`UNDECIDED_DONE`]) of being closed within the window, at a steady rate over it (the real histories'
//! first months ended in mass closes as often as in silence). A project that used to close work and has
//! slowed or stopped is *not* cold: its few recent closes (half a close when there were none, so the
//! rate is never exactly zero) are the evidence that its open work is unlikely to be done — a backlog
//! that stalled years ago is "probably never", not "done within weeks".

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Days of recent history the rates are learnt from.
pub(crate) const RECENT_DAYS: i64 = 365;
/// Days per step of the exposure count.
pub(crate) const STEP_DAYS: i64 = 7;
/// Days of the newest history the trend compares with the rest.
pub(crate) const TREND_DAYS: f64 = 90.0;
/// Pseudo-events at the year's rate mixed into the trend's newest rate.
const TREND_PRIOR: f64 = 10.0;
/// Closes needed in the whole history before the model learns a rate.
pub(crate) const MIN_EVENTS: usize = 10;
/// The undecided model's chance that an open issue is closed within the window: even odds.
pub(crate) const UNDECIDED_DONE: f64 = 0.5;
/// Days of history needed before the model says anything: a quarter. Rates are per day, so a young
/// project's first months are evidence too; assuming every open issue is done is the worse prior (on the
/// real histories, the cuts with less than a year of history promised 98% and saw 30% done).
pub(crate) const MIN_HISTORY_DAYS: u32 = 90;
/// The shrinkage constant: a group with `n` distinct issues keeps `n/(n+K)` of its own deviation.
const K: f64 = 5.0;
/// The frailty used until the state's own history has chosen one (see [`FRAILTIES`]).
pub(crate) const DEFAULT_FRAILTY: f64 = 1.0;
/// The frailties a state's history chooses from.
pub(crate) const FRAILTIES: [f64; 8] = [0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0];
/// Quantile nodes of the conditional time-to-close handed to the Monte Carlo.
const LEAD_NODES: usize = 64;
/// At most this many rounds to find the strata's rates, each shrunk toward its neighbour's (see [`fit`]).
const FIXED_POINT_STEPS: usize = 100;
/// Upper bounds of the age buckets, in days (the last bucket is everything older).
pub(crate) const AGE_BUCKETS: [i64; 7] = [14, 30, 60, 120, 240, 365, 730];

/// What the model looks at for one issue at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FateFeatures {
    /// The lifecycle column (`diagnosis` … `in_review`).
    pub column: &'static str,
    /// Days since the issue was opened.
    pub age_days: i64,
    /// Its labels (CommiTea's own `est/*` and `p/*` included), shared by all its exposures.
    pub labels: Arc<[Arc<str>]>,
    /// Its assignee (only someone assigned at that moment).
    pub person: Option<Arc<str>>,
}

/// One issue's stay in one step of the recent history.
#[derive(Debug, Clone, PartialEq)]
pub struct Exposure {
    /// The issue as it was at the step's start.
    pub features: FateFeatures,
    /// Which issue it is (any number unique to the issue).
    pub issue: u64,
    /// Days it was open in the step.
    pub days: f64,
    /// Whether it was closed in the step.
    pub closed: bool,
    /// Days between the step's start and now.
    pub ago_days: f64,
}

/// One group's fitted numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct FateGroup {
    /// The group (stratum `column/age`, label or person).
    pub key: String,
    /// Distinct issues behind it.
    pub issues: usize,
    /// Closes counted.
    pub events: usize,
    /// Days exposed.
    pub days: f64,
    /// The shrunk rate per day (strata) or rate multiplier (labels, people).
    pub value: f64,
}

/// What an abandonment model stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Rates learnt from the history.
    Learnt,
    /// Too short a history: every issue is predicted done (see the module's *Cold start*).
    Young,
    /// Too few closes in the history: every issue gets even odds ([`FateModel::undecided`]).
    Undecided,
}

/// The fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct FateModel {
    /// Closes in the recent history.
    pub events: usize,
    /// What the model stands on: the history's rates, or why not.
    pub basis: Basis,
    /// The window, in days.
    pub window_days: u32,
    /// The team's closing rate per open issue per day (with the trend); the undecided model's even-odds
    /// rate; zero for the model of a young history, which predicts every issue done.
    pub team_rate: f64,
    /// The newest closing rate ÷ the recent history's (1: steady; under 1: slowing down).
    pub trend: f64,
    /// Rates per stratum (`column/age`).
    pub strata: Vec<FateGroup>,
    /// Multipliers per label.
    pub labels: Vec<FateGroup>,
    /// Multipliers per person.
    pub people: Vec<FateGroup>,
    /// The variance of the gamma frailty: how much issues that look alike differ in how soon they are
    /// closed. Without it, a rate learnt from the quick ones overstates how many slow ones close.
    pub frailty: f64,
    /// `(a, b)` of the recalibration `logit p' = a + b · logit p` of the probability of being done,
    /// fitted on the state's own past cuts ([`recalibrate`]); `[0, 1]` leaves it as the rates say.
    pub recalibration: [f64; 2],
    /// Each column's rate at every age bucket, the strata's values with the nearest-bucket rule
    /// ([`fill_buckets`]) applied once: the fits and forecasts ask for it hundreds of thousands of times.
    by_column: Vec<(&'static str, [f64; AGE_BUCKETS.len() + 1])>,
}

/// Prior weight of the recalibration's identity, in pseudo-forecasts: a handful of past forecasts must
/// not bend every probability.
const RECALIBRATION_PRIOR: f64 = 20.0;
/// The sharpest recalibration used: the slope of `logit p' = a + b · logit p` at most this.
const RECALIBRATION_MAX_SLOPE: f64 = 2.0;
/// The largest shift of the recalibration: `|a|` at most this (on the logit scale).
const RECALIBRATION_MAX_SHIFT: f64 = 3.0;
/// Probabilities are kept this far from 0 and 1 on the logit scale.
const LOGIT_EPS: f64 = 1e-4;

fn logit(p: f64) -> f64 {
    let p = p.clamp(LOGIT_EPS, 1.0 - LOGIT_EPS);
    (p / (1.0 - p)).ln()
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// One past forecast of being done: the probability promised, whether it was done, and how much it
/// counts in the recalibration (newer evidence counts more: projects drift).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Promise {
    /// The probability of being done the model gave.
    pub p: f64,
    /// Whether it was done in the time the probability was for.
    pub done: bool,
    /// Its weight in the fit, in forecasts.
    pub weight: f64,
}

/// Fits `(a, b)` of `logit p' = a + b · logit p` to past forecasts: `(p, done)` pairs of a probability
/// of being done within the window and whether it was (Platt scaling, by Newton's method on the
/// log-likelihood). A ridge pulls `(a, b)` toward the identity `(0, 1)` with the weight of
/// [`RECALIBRATION_PRIOR`] forecasts, so little history changes little. Rates learnt from the last year
/// are a year out of date by the end of the window: projects slow down, and the real histories show
/// the raw probabilities too confident — this is what corrects them, with the state's own evidence.
pub(crate) fn recalibrate(pairs: &[Promise]) -> [f64; 2] {
    let (mut a, mut b) = (0.0f64, 1.0f64);
    for _ in 0..50 {
        // Gradient and Hessian of the penalised negative log-likelihood.
        let (mut ga, mut gb) = (RECALIBRATION_PRIOR * a, RECALIBRATION_PRIOR * (b - 1.0));
        let (mut haa, mut hab, mut hbb) = (RECALIBRATION_PRIOR, 0.0, RECALIBRATION_PRIOR);
        for promise in pairs {
            let x = logit(promise.p);
            let q = sigmoid(a + b * x);
            let r = (q - f64::from(u8::from(promise.done))) * promise.weight;
            ga += r;
            gb += r * x;
            let w = q * (1.0 - q) * promise.weight;
            haa += w;
            hab += w * x;
            hbb += w * x * x;
        }
        let det = haa * hbb - hab * hab;
        if det.abs() < 1e-12 {
            break;
        }
        let da = (hbb * ga - hab * gb) / det;
        let db = (haa * gb - hab * ga) / det;
        a -= da;
        b -= db;
        if da.abs() < 1e-9 && db.abs() < 1e-9 {
            break;
        }
    }
    // A past that asks for much sharper promises, or a large shift, is an event rather than a bias: a
    // mass close (a migration, a backlog clean-up) makes nearly every old issue "done" at the past cuts,
    // and the fit then promised 99% for work of which a quarter was done. Such a fit is not used.
    if !(a.is_finite() && b.is_finite())
        || a.abs() > RECALIBRATION_MAX_SHIFT
        || b > RECALIBRATION_MAX_SLOPE
    {
        return [0.0, 1.0];
    }
    // A slope of zero or less says the model's order of issues told nothing of which were done (a
    // reversed order is not a correction to make): every issue gets the rate at which they were.
    // The same bound holds: the share kept may not lie more than the largest shift from the typical
    // promise.
    if b <= 0.0 {
        let a = flat_recalibration(pairs);
        let (sum, weight) = pairs.iter().fold((0.0, 0.0), |(s, w), promise| {
            (s + promise.weight * logit(promise.p), w + promise.weight)
        });
        let typical = sum / weight;
        return if a.is_finite() && (a - typical).abs() <= RECALIBRATION_MAX_SHIFT {
            [a, 0.0]
        } else {
            [0.0, 1.0]
        };
    }
    [a, b]
}

/// The logit of the (weighted) share of past promises kept, pulled toward even odds by the ridge of
/// [`RECALIBRATION_PRIOR`] forecasts: the recalibration `logit p' = a` of a model without skill.
fn flat_recalibration(pairs: &[Promise]) -> f64 {
    let (kept, all) = pairs.iter().fold((0.0, 0.0), |(k, n), promise| {
        (
            k + promise.weight * f64::from(u8::from(promise.done)),
            n + promise.weight,
        )
    });
    let mut a = 0.0f64;
    for _ in 0..50 {
        let q = sigmoid(a);
        let grad = RECALIBRATION_PRIOR * a + all * q - kept;
        let hess = RECALIBRATION_PRIOR + all * q * (1.0 - q);
        let step = grad / hess;
        a -= step;
        if step.abs() < 1e-9 {
            break;
        }
    }
    a
}

/// The share done by cumulative rate `h` with gamma frailty of variance `theta`: `1 − (1 + θh)^(−1/θ)`
/// (`1 − e^(−h)` without frailty).
pub(crate) fn done_by(h: f64, theta: f64) -> f64 {
    if theta <= 0.0 {
        1.0 - (-h).exp()
    } else {
        1.0 - (1.0 + theta * h).powf(-1.0 / theta)
    }
}

/// How often an outcome beyond the horizon meets a beyond-the-horizon quantile at level `tau` of a
/// forecast with `p` of its mass within the horizon: the randomised PIT, in expectation, `(tau − p)/(1 − p)`.
pub(crate) fn beyond_horizon_met(tau: f64, p: f64) -> f64 {
    if p < 1.0 {
        ((tau - p) / (1.0 - p)).clamp(0.0, 1.0)
    } else {
        // All the mass within the horizon: an outcome beyond it is past every quantile.
        0.0
    }
}

/// The cumulative rate at which the share done reaches `q` (the inverse of [`done_by`]).
fn cumulative_for(q: f64, theta: f64) -> f64 {
    let left = (1.0 - q).max(f64::MIN_POSITIVE);
    if theta <= 0.0 {
        -left.ln()
    } else {
        (left.powf(-theta) - 1.0) / theta
    }
}

fn shrink(issues: usize) -> f64 {
    let n = issues as f64;
    n / (n + K)
}

fn age_bucket(age: i64) -> usize {
    AGE_BUCKETS
        .iter()
        .position(|&b| age < b)
        .unwrap_or(AGE_BUCKETS.len())
}

/// The age part of a stratum's key, per age bucket: `<14d` … `>=730d` (the last is past every bound).
const AGE_LABELS: [&str; AGE_BUCKETS.len() + 1] = [
    "<14d", "<30d", "<60d", "<120d", "<240d", "<365d", "<730d", ">=730d",
];

fn stratum_key(column: &str, bucket: usize) -> String {
    format!("{column}/{}", AGE_LABELS[bucket.min(AGE_BUCKETS.len())])
}

/// The bucket nearest to `bucket`, other than it, for which `hit` holds (older first at equal distance: an
/// issue that outlived its history is an old issue), of `n`.
fn nearest_other(n: usize, bucket: usize, hit: impl Fn(usize) -> bool) -> Option<usize> {
    (1..n)
        .flat_map(|d| {
            [Some(bucket + d).filter(|b| *b < n), bucket.checked_sub(d)]
                .into_iter()
                .flatten()
        })
        .find(|&b| hit(b))
}

/// The bucket whose rate a stratum at `bucket` is shrunk toward, and a bucket with no stratum takes: for
/// a stratum that closed something, its nearest other stratum; for one that never did, and an empty
/// bucket, the nearest bucket with a stratum on the way to the nearest stratum that closed something, or,
/// in a column that never closed anything, the nearest younger stratum — `None` for the year's rate beyond
/// it. Silence is evidence only against something heard: two silent strata shrunk toward each other sank
/// together toward a rate of zero, and took their column with them (audit 163: 7e-6 a day, and the first
/// close moved the column 85-fold). Each step of a silent one's way is nearer to what closed, so the
/// strata's neighbours form no silent cycle.
fn target_bucket(known: &[bool], closed: &[bool], bucket: usize) -> Option<usize> {
    if closed[bucket] {
        return nearest_other(known.len(), bucket, |b| known[b]);
    }
    match nearest_other(known.len(), bucket, |b| closed[b]) {
        Some(e) if e > bucket => (bucket + 1..=e).find(|&b| known[b]),
        Some(e) => (e..bucket).rev().find(|&b| known[b]),
        None => (0..bucket).rev().find(|&b| known[b]),
    }
}

/// One column's rate at every age bucket from the buckets it has strata for (`known`, and which of them
/// `closed` something): a bucket with none takes the rate a stratum there seen for a moment would read
/// ([`target_bucket`]), and a column with none at all the team's rate.
fn fill_buckets(
    known: &[Option<f64>; AGE_BUCKETS.len() + 1],
    closed: &[bool; AGE_BUCKETS.len() + 1],
    team_rate: f64,
) -> [f64; AGE_BUCKETS.len() + 1] {
    let is_known = known.map(|r| r.is_some());
    std::array::from_fn(|bucket| {
        known[bucket]
            .or_else(|| target_bucket(&is_known, closed, bucket).and_then(|b| known[b]))
            .unwrap_or(team_rate)
    })
}

/// A stratum's rate from `ev` closes in `d` days of exposure over `issues` issues, shrunk toward
/// `target`: half an event keeps a stratum that never closed anything from a rate of exactly zero, and
/// it comes with the exposure half an event takes at the target's rate, so a stratum seen for a few days
/// reads as the target, not as half an event in three days (a stratum of three issues seen three days
/// made one issue's P(done) 0.31 one day and 0.72 the next).
fn shrunk_rate(ev: usize, d: f64, issues: usize, target: f64) -> f64 {
    let own = (ev as f64 + 0.5) / (d + 0.5 / target);
    let w = shrink(issues);
    (w * own.ln() + (1.0 - w) * target.ln()).exp()
}

impl FateModel {
    /// The cold model of a young history: every issue is done.
    pub(crate) fn cold(events: usize, window_days: u32) -> Self {
        Self {
            events,
            basis: Basis::Young,
            window_days,
            team_rate: 0.0,
            trend: 1.0,
            strata: Vec::new(),
            labels: Vec::new(),
            people: Vec::new(),
            frailty: DEFAULT_FRAILTY,
            recalibration: [0.0, 1.0],
            by_column: Vec::new(),
        }
    }

    /// The cold model of a history with too few closes to learn a rate from: every open issue has even
    /// odds ([`UNDECIDED_DONE`]) of being closed within the window, at one steady rate for all, so when it
    /// is closed, if at all, spreads over the window rather than following the schedule's optimism.
    pub(crate) fn undecided(events: usize, window_days: u32) -> Self {
        Self {
            basis: Basis::Undecided,
            team_rate: -(1.0 - UNDECIDED_DONE).ln() / f64::from(window_days.max(1)),
            // No frailty: with no closes to learn from, nothing says which issues differ.
            frailty: 0.0,
            ..Self::cold(events, window_days)
        }
    }

    /// Whether the model gives each open issue its own chance of being done: every model but the young
    /// history's, which predicts every issue done.
    pub fn gives_probabilities(&self) -> bool {
        self.basis != Basis::Young
    }

    /// Whether the model did not learn from the history (too short, or too few closes in it).
    pub fn cold_start(&self) -> bool {
        self.basis != Basis::Learnt
    }

    /// The label and person multiplier of an issue.
    fn multiplier(&self, f: &FateFeatures) -> f64 {
        // A sum and a count rather than a list: the fit asks this of every exposure.
        let (sum, known) = f
            .labels
            .iter()
            .filter_map(|l| {
                self.labels
                    .iter()
                    .find(|g| *g.key == **l)
                    .map(|g| g.value.ln())
            })
            .fold((0.0f64, 0usize), |(sum, n), x| (sum + x, n + 1));
        let label = if known == 0 {
            1.0
        } else {
            (sum / known as f64).exp()
        };
        let person = f
            .person
            .as_ref()
            .and_then(|p| self.people.iter().find(|g| *g.key == **p))
            .map_or(1.0, |g| g.value);
        label * person
    }

    /// The rate per day of an issue with these features at its current age (for fitting).
    fn rate(&self, f: &FateFeatures) -> f64 {
        self.bucket_rate(f.column, age_bucket(f.age_days)) * self.multiplier(f)
    }

    /// The rate of a column at an age bucket (see [`fill_buckets`]); a column with no history takes the
    /// team's.
    fn bucket_rate(&self, column: &str, bucket: usize) -> f64 {
        self.by_column
            .iter()
            .find(|(c, _)| *c == column)
            .map_or(self.team_rate, |(_, rates)| {
                rates[bucket.min(AGE_BUCKETS.len())]
            })
    }

    /// The cumulative rate `H(d)` for `d` = 0 … window days ahead, as the issue ages.
    pub(crate) fn cumulative(&self, f: &FateFeatures) -> Vec<f64> {
        let m = self.multiplier(f);
        let rates: Vec<f64> = (0..=AGE_BUCKETS.len())
            .map(|b| self.bucket_rate(f.column, b) * m)
            .collect();
        // The trend's factors once per call, not a power per day: it holds after TREND_DAYS.
        let damping: Vec<f64> = (0..=TREND_DAYS as i64)
            .map(|d| self.damped_trend(d))
            .collect();
        let mut h = Vec::with_capacity(self.window_days as usize + 1);
        let mut acc = 0.0;
        h.push(0.0);
        for d in 0..i64::from(self.window_days) {
            let damp = damping[(d as usize).min(damping.len() - 1)];
            acc += rates[age_bucket(f.age_days + d)] * damp;
            h.push(acc);
        }
        h
    }

    /// How much further a slowdown carries `d` days ahead: a closing rate that fell over the newest
    /// TREND_DAYS keeps falling at that pace for as long again, then holds (a damped trend). A rising
    /// rate is not extrapolated: optimism is what the backtests punish.
    fn damped_trend(&self, d: i64) -> f64 {
        if self.trend >= 1.0 {
            return 1.0;
        }
        self.trend.powf((d as f64).min(TREND_DAYS) / TREND_DAYS)
    }

    /// The probability that an issue with these features is closed within the window.
    pub fn p_done(&self, f: &FateFeatures) -> f64 {
        self.p_done_and_lead(f).0
    }

    /// Days to close, conditional on closing within the window, as sorted quantile nodes (for the Monte
    /// Carlo to interpolate); none for the young history's model, which predicts every issue done.
    pub fn lead(&self, f: &FateFeatures) -> Option<Arc<[f64]>> {
        self.p_done_and_lead(f).1
    }

    /// [`p_done`](Self::p_done) and [`lead`](Self::lead) together, from one cumulative rate: what the
    /// forecast asks of every open issue.
    pub fn p_done_and_lead(&self, f: &FateFeatures) -> (f64, Option<Arc<[f64]>>) {
        if !self.gives_probabilities() {
            return (1.0, None);
        }
        let h = self.cumulative(f);
        let total = h.last().copied().unwrap_or(0.0);
        let p = done_by(total, self.frailty);
        let done = if self.recalibration == [0.0, 1.0] {
            p
        } else {
            let [a, b] = self.recalibration;
            sigmoid(a + b * logit(p))
        };
        if p <= 0.0 {
            return (done, None);
        }
        let mut nodes = Vec::with_capacity(LEAD_NODES + 1);
        let mut d = 0usize;
        for i in 0..=LEAD_NODES {
            let level = i as f64 / LEAD_NODES as f64;
            let target = cumulative_for(level * p, self.frailty);
            while d + 1 < h.len() && h[d + 1] < target {
                d += 1;
            }
            let t = if d + 1 < h.len() {
                let (a, b) = (h[d], h[d + 1]);
                d as f64
                    + if b > a {
                        ((target - a) / (b - a)).clamp(0.0, 1.0)
                    } else {
                        0.0
                    }
            } else {
                (h.len() - 1) as f64
            };
            nodes.push(t);
        }
        (done, Some(nodes.into()))
    }
}

/// What the fit knows of the whole history besides the recent exposures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct History {
    /// How far back the state's history goes, in days.
    pub days: i64,
    /// How many issues it has seen closed in all.
    pub closes: usize,
    /// Days of history needed before the model says anything ([`MIN_HISTORY_DAYS`] by default).
    pub min_days: u32,
}

/// Fits the model to the recent history's exposures, knowing `history`, for a window of `window_days`.
pub(crate) fn fit(exposures: &[Exposure], history: History, window_days: u32) -> FateModel {
    let events = exposures.iter().filter(|e| e.closed).count();
    let days: f64 = exposures.iter().map(|e| e.days).sum();
    if history.days < i64::from(history.min_days) || days <= 0.0 {
        return FateModel::cold(events, window_days);
    }
    if history.closes.max(events) < MIN_EVENTS {
        return FateModel::undecided(events, window_days);
    }
    // Half a close when the recent history has none: a stalled project's rate is tiny, not zero.
    let year_rate = (events as f64).max(0.5) / days;
    // The trend: the last TREND_DAYS against the whole recent history, with TREND_PRIOR events of the
    // year's rate mixed in so that a quiet month does not swing it. Trackers drift (a release winds down,
    // a project goes quiet), and the newest weeks say where it is heading.
    let (ev_recent, days_recent) = exposures
        .iter()
        .filter(|e| e.ago_days <= TREND_DAYS)
        .fold((0usize, 0.0f64), |(n, d), e| {
            (n + usize::from(e.closed), d + e.days)
        });
    let recent_rate = (ev_recent as f64 + TREND_PRIOR)
        / (days_recent + TREND_PRIOR / year_rate.max(f64::MIN_POSITIVE));
    let trend = (recent_rate / year_rate).clamp(0.25, 2.0);
    let team_rate = year_rate * trend;

    // Grouped by column and bucket, not by key: a key string per exposure was most of the fit's time.
    let mut by_stratum: BTreeMap<(&'static str, usize), (usize, f64, BTreeSet<u64>)> =
        BTreeMap::new();
    for e in exposures {
        let g = by_stratum
            .entry((e.features.column, age_bucket(e.features.age_days)))
            .or_default();
        g.0 += usize::from(e.closed);
        g.1 += e.days;
        g.2.insert(e.issue);
    }
    // Each stratum is shrunk toward its nearest neighbour's rate (the year's when its column has no
    // other), which is the rate a bucket with no history of its own is filled with: so the day a stratum
    // first gets a few days of exposure (a Monday, as the weekly grid moves) it reads nearly as it did
    // the day before, when it had none. Shrunk toward the year's rate instead, one issue's P(done) went
    // 0.30 → 0.60 overnight on unchanged data. The neighbours' rates depend on each other, so they are
    // found together: a fixed point, reached by repeating until no rate moves (each step shrinks the
    // distance to it; a few steps in practice).
    // ((column, bucket), (closes, days, issues))
    type Group = ((&'static str, usize), (usize, f64, usize));
    let groups: Vec<Group> = by_stratum
        .into_iter()
        .map(|(key, (ev, d, issues))| (key, (ev, d, issues.len())))
        .collect();
    let mut rates: BTreeMap<&'static str, [Option<f64>; AGE_BUCKETS.len() + 1]> = BTreeMap::new();
    let mut closed: BTreeMap<&'static str, [bool; AGE_BUCKETS.len() + 1]> = BTreeMap::new();
    for ((column, bucket), (ev, d, issues)) in &groups {
        rates.entry(column).or_default()[*bucket] = Some(shrunk_rate(*ev, *d, *issues, year_rate));
        closed.entry(column).or_default()[*bucket] = *ev > 0;
    }
    // Which bucket each stratum is shrunk toward is the same in every round: found once.
    let targets: Vec<Option<usize>> = groups
        .iter()
        .map(|((column, bucket), _)| {
            target_bucket(
                &rates[column].map(|r| r.is_some()),
                &closed[column],
                *bucket,
            )
        })
        .collect();
    for _ in 0..FIXED_POINT_STEPS {
        let mut next = rates.clone();
        let mut moved = 0.0f64;
        for (((column, bucket), (ev, d, issues)), to) in groups.iter().zip(&targets) {
            let target = to.and_then(|b| rates[column][b]).unwrap_or(year_rate);
            let rate = shrunk_rate(*ev, *d, *issues, target);
            let was = rates[column][*bucket].unwrap_or(rate);
            moved = moved.max((rate / was).ln().abs());
            next.entry(column).or_default()[*bucket] = Some(rate);
        }
        rates = next;
        if moved < 1e-6 {
            break;
        }
    }
    let mut strata: Vec<FateGroup> = groups
        .iter()
        .map(|&((column, bucket), (ev, d, issues))| FateGroup {
            key: stratum_key(column, bucket),
            issues,
            events: ev,
            days: d,
            value: rates[column][bucket].unwrap_or(year_rate) * trend,
        })
        .collect();
    strata.sort_by(|a, b| a.key.cmp(&b.key));
    let by_column = rates
        .into_iter()
        .map(|(column, known)| {
            (
                column,
                fill_buckets(
                    &known.map(|r| r.map(|r| r * trend)),
                    &closed[column],
                    team_rate,
                ),
            )
        })
        .collect();
    let mut model = FateModel {
        events,
        basis: Basis::Learnt,
        window_days,
        team_rate,
        trend,
        strata,
        labels: Vec::new(),
        people: Vec::new(),
        frailty: DEFAULT_FRAILTY,
        recalibration: [0.0, 1.0],
        by_column,
    };
    // Labels, then people: observed ÷ expected closes under the model so far, shrunk on the log scale.
    let multipliers = |model: &FateModel, key_of: &dyn Fn(&FateFeatures) -> &[Arc<str>]| {
        let mut acc: BTreeMap<&str, (usize, f64, f64, BTreeSet<u64>)> = BTreeMap::new();
        for e in exposures {
            let expected = model.rate(&e.features) * e.days;
            for k in key_of(&e.features) {
                let g = acc.entry(&**k).or_default();
                g.0 += usize::from(e.closed);
                g.1 += expected;
                g.2 += e.days;
                g.3.insert(e.issue);
            }
        }
        acc.into_iter()
            .map(|(key, (ev, expected, d, issues))| {
                let ratio = (ev as f64 + 0.5) / (expected + 0.5);
                FateGroup {
                    key: key.to_owned(),
                    issues: issues.len(),
                    events: ev,
                    days: d,
                    value: (shrink(issues.len()) * ratio.ln()).exp(),
                }
            })
            .collect::<Vec<_>>()
    };
    model.labels = multipliers(&model, &|f| &f.labels);
    in_priority_order(&mut model.labels);
    model.people = multipliers(&model, &|f| f.person.as_slice());
    model
}

/// Pools the `p/*` multipliers where the history reverses the PM's order (`p/3` issues closing sooner
/// than `p/1` ones, say: quick "won't fix" closes), weighted by their issues on the log scale
/// (pool-adjacent-violators), so that raising an issue's priority never makes it less likely to be done.
/// A priority says what the team works on first; history may say by how much that helps, not that it
/// hurts.
fn in_priority_order(labels: &mut [FateGroup]) {
    let mut ranked: Vec<(u8, usize)> = labels
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            crate::domain::Priority::from_label(&g.key)
                .and_then(Result::ok)
                .map(|p| (p.level(), i))
        })
        .collect();
    ranked.sort_unstable();
    // Each block: the weighted sum of log multipliers, the weight, its members.
    let mut blocks: Vec<(f64, f64, Vec<usize>)> = Vec::new();
    for (_, i) in ranked {
        let w = labels[i].issues.max(1) as f64;
        blocks.push((w * labels[i].value.ln(), w, vec![i]));
        // Non-increasing from p/0 down: a block above its predecessor merges into it.
        while let [.., a, b] = blocks.as_slice()
            && a.0 / a.1 < b.0 / b.1
        {
            if let Some((s, w, members)) = blocks.pop()
                && let Some(last) = blocks.last_mut()
            {
                last.0 += s;
                last.1 += w;
                last.2.extend(members);
            }
        }
    }
    for (s, w, members) in blocks {
        for i in members {
            labels[i].value = (s / w).exp();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(days: i64, closes: usize) -> History {
        History {
            days,
            closes,
            min_days: MIN_HISTORY_DAYS,
        }
    }

    fn features(
        column: &'static str,
        age: i64,
        labels: &[&str],
        person: Option<&str>,
    ) -> FateFeatures {
        FateFeatures {
            column,
            age_days: age,
            labels: labels.iter().map(|s| Arc::from(*s)).collect(),
            person: person.map(Arc::from),
        }
    }

    /// `n` issues of one kind, each exposed `days` in one step, `closed` of them closing.
    fn group(first: u64, n: usize, closed: usize, days: f64, f: &FateFeatures) -> Vec<Exposure> {
        (0..n)
            .map(|i| Exposure {
                features: f.clone(),
                issue: first + i as u64,
                days,
                closed: i < closed,
                ago_days: 200.0,
            })
            .collect()
    }

    #[test]
    fn an_outcome_beyond_the_horizon_meets_a_quantile_there_as_the_pit_says() {
        // 30% within the horizon: the p80 is beyond it, and an outcome beyond it meets it (0.8−0.3)/0.7.
        assert!((beyond_horizon_met(0.8, 0.3) - 5.0 / 7.0).abs() < 1e-12);
        assert_eq!(beyond_horizon_met(0.1, 0.3), 0.0);
        assert_eq!(beyond_horizon_met(0.8, 0.0), 0.8);
        assert_eq!(beyond_horizon_met(0.8, 1.0), 0.0);
    }

    #[test]
    fn the_age_labels_name_the_age_buckets() {
        for (b, bound) in AGE_BUCKETS.iter().enumerate() {
            assert_eq!(AGE_LABELS[b], format!("<{bound}d"));
            assert_eq!(stratum_key("triage", b), format!("triage/<{bound}d"));
        }
        let last = AGE_BUCKETS.len();
        assert_eq!(AGE_LABELS[last], format!(">={}d", AGE_BUCKETS[last - 1]));
    }

    #[test]
    fn a_bucket_without_history_takes_the_nearest_older_first() {
        let mut known = [None; AGE_BUCKETS.len() + 1];
        known[1] = Some(1.0);
        known[3] = Some(3.0);
        let mut closed = [false; AGE_BUCKETS.len() + 1];
        (closed[1], closed[3]) = (true, true);
        let filled = fill_buckets(&known, &closed, 9.0);
        // Bucket 2 is as near to 1 as to 3: the older wins; beyond the last known, the last.
        assert_eq!(filled, [1.0, 1.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]);
        assert_eq!(
            fill_buckets(&[None; AGE_BUCKETS.len() + 1], &closed, 9.0),
            [9.0; 8]
        );
        // Where 3 never closed anything, bucket 2 reads from the way to what did close; beyond 3, 3.
        closed[3] = false;
        assert_eq!(
            fill_buckets(&known, &closed, 9.0),
            [1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0, 3.0]
        );
        // In a column that never closed anything, from the younger side, and the team's below it all.
        closed[1] = false;
        assert_eq!(
            fill_buckets(&known, &closed, 9.0),
            [9.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0, 3.0]
        );
        // A stratum that closed something is shrunk toward its nearest other; a silent one toward the
        // way to what closed, never another silent one beyond it.
        let is_known = known.map(|r| r.is_some());
        let both = [false, true, false, true, false, false, false, false];
        assert_eq!(target_bucket(&is_known, &both, 1), Some(3));
        assert_eq!(target_bucket(&is_known, &both, 3), Some(1));
        let one = [false, true, false, false, false, false, false, false];
        assert_eq!(target_bucket(&is_known, &one, 3), Some(1));
        assert_eq!(target_bucket(&is_known, &one, 1), Some(3));
    }

    #[test]
    fn a_higher_priority_is_never_less_likely_done_whatever_the_history_says() {
        // p/3 issues closed far more often than p/1 ones (quick "won't fix" closes); p/0 most of all.
        let f = |p: &'static str| features("triage", 20, &[p, "kind/bug"], None);
        let mut e = group(0, 100, 60, 7.0, &f("p/0"));
        e.extend(group(100, 100, 5, 7.0, &f("p/1")));
        e.extend(group(200, 100, 20, 7.0, &f("p/2")));
        e.extend(group(300, 100, 40, 7.0, &f("p/3")));
        let m = fit(&e, hist(400, 125), 365);
        let p: Vec<f64> = ["p/0", "p/1", "p/2", "p/3"]
            .into_iter()
            .map(|l| m.p_done(&f(l)))
            .collect();
        assert!(p.windows(2).all(|w| w[0] >= w[1] - 1e-12), "{p:?}");
        // The reversed three pool into one; p/0, above them, keeps its own.
        assert!((p[1] - p[3]).abs() < 1e-12, "{p:?}");
        assert!(p[0] > p[1] + 0.01, "{p:?}");
        // A history in the PM's order is left as it is.
        let mut e = group(0, 100, 60, 7.0, &f("p/0"));
        e.extend(group(100, 100, 30, 7.0, &f("p/3")));
        let m = fit(&e, hist(400, 90), 365);
        assert!(m.p_done(&f("p/0")) > m.p_done(&f("p/3")) + 0.01);
    }

    #[test]
    fn too_little_history_predicts_every_issue_done() {
        let f = features("triage", 3, &[], None);
        let e = group(0, 100, 50, 7.0, &f);
        let m = fit(&e, hist(i64::from(MIN_HISTORY_DAYS) - 1, 50), 365);
        assert!(m.cold_start());
        assert_eq!(m.p_done(&f), 1.0);
        assert!(m.lead(&f).is_none());
        // A quarter of history is enough, though the window is a year: rates are per day.
        let m = fit(&e, hist(i64::from(MIN_HISTORY_DAYS), 50), 365);
        assert!(!m.cold_start());
        assert!(m.p_done(&f) < 1.0);
        let m = fit(&group(0, 100, 3, 7.0, &f), hist(1000, 3), 365);
        assert!(m.cold_start(), "three closes are too few");
    }

    #[test]
    fn a_quarter_with_too_few_closes_gives_even_odds_spread_over_the_window() {
        // 200 days, 300 issues open, three closed: no rate to learn, and "done within weeks" is what the
        // history contradicts.
        let f = features("triage", 150, &["kind/bug"], Some("ada"));
        let m = fit(&group(0, 300, 3, 7.0, &f), hist(200, 3), 365);
        assert_eq!(m.basis, Basis::Undecided);
        assert!(m.cold_start() && m.gives_probabilities());
        assert!(
            (m.p_done(&f) - UNDECIDED_DONE).abs() < 1e-9,
            "{}",
            m.p_done(&f)
        );
        // The same for every issue, whatever it looks like.
        let other = features("in_review", 2, &[], None);
        assert!((m.p_done(&other) - m.p_done(&f)).abs() < 1e-12);
        // When, if at all: at a steady rate, the share `q` of the closes comes by −ln(1 − q/2)·365/ln 2
        // days — half of them by day 151, not all at once as the schedule would have it.
        let lead = m
            .lead(&f)
            .expect("the undecided model spreads the closes over the window");
        for (i, day) in lead.iter().enumerate() {
            let q = i as f64 / (lead.len() - 1) as f64;
            let expected = -(1.0 - q * UNDECIDED_DONE).ln() * 365.0 / std::f64::consts::LN_2;
            assert!(
                (day - expected).abs() < 0.5,
                "node {i}: {day} against {expected}"
            );
        }
        // Ten closes are enough to learn from; a young history is still the engine's alone.
        assert!(!fit(&group(0, 300, 10, 7.0, &f), hist(200, 10), 365).cold_start());
        let young = fit(&group(0, 300, 3, 7.0, &f), hist(60, 3), 365);
        assert_eq!(young.basis, Basis::Young);
        assert!(young.cold_start() && !young.gives_probabilities());
        assert_eq!(young.p_done(&f), 1.0);
    }

    #[test]
    fn a_stratum_seen_for_a_few_days_reads_near_the_years_rate() {
        // Three young issues seen one day each, none closed, beside a year of old ones closing at 1% a
        // day: half an event in three days made the young stratum's rate three times the year's, and
        // the issues of a stratum that appeared overnight jumped (P(done) 0.31 to 0.72).
        let old = features("triage", 500, &[], None);
        let young = features("triage", 20, &[], None);
        let mut exposures = group(0, 1000, 70, 7.0, &old);
        exposures.extend(group(2000, 3, 0, 1.0, &young));
        let m = fit(&exposures, hist(1000, 70), 100);
        let year = 70.0 / 7003.0;
        let rate = m.rate(&young);
        assert!(
            rate < 1.2 * year && rate > 0.8 * year,
            "{rate} against {year}"
        );
    }

    #[test]
    fn a_stratum_reads_the_same_the_day_it_first_gets_exposure_as_the_day_before() {
        // Young issues close fast, old ones slowly: the year's rate is neither. A stratum between them
        // with no history takes its nearest neighbour's rate; the next day, seen for a day, it must not
        // drop to the year's (one issue's P(done) went 0.30 → 0.60 overnight on unchanged data).
        let young = features("triage", 20, &[], None);
        let old = features("triage", 500, &[], None);
        let between = features("triage", 40, &[], None);
        let mut before = group(0, 300, 100, 7.0, &young);
        before.extend(group(1000, 1000, 10, 7.0, &old));
        let mut after = before.clone();
        after.extend(group(5000, 3, 0, 1.0, &between));
        let (m0, m1) = (
            fit(&before, hist(1000, 110), 100),
            fit(&after, hist(1000, 110), 100),
        );
        let (r0, r1) = (m0.rate(&between), m1.rate(&between));
        // Three issue-days closing nothing are a little evidence, not a jump to another rate.
        assert!(
            (r1 / r0 - 1.0).abs() < 0.15,
            "{r0} the day before, {r1} after"
        );
        assert!((m1.p_done(&between) - m0.p_done(&between)).abs() < 0.02);
        // And it is the neighbour's rate, far from the year's.
        let year = 110.0 / 9003.0;
        assert!(r1 > 2.0 * year, "{r1} against the year's {year}");
        // Evidence still counts: a month of the stratum closing nothing takes it well below.
        let mut slow = before.clone();
        slow.extend(group(5000, 40, 0, 30.0, &between));
        let r2 = fit(&slow, hist(1000, 110), 100).rate(&between);
        assert!(r2 < 0.5 * r1, "{r2} after a month of nothing, {r1} before");
    }

    #[test]
    fn strata_that_never_closed_anything_do_not_drag_their_column_toward_nothing() {
        // Audit 163's steeping column: closes at 14, 30 and 60 days, none in 977 days of 36 issues aged
        // 60-120 days nor in 118 days of 9 older ones. The two silent strata were each other's
        // neighbour, each shrunk toward the other, and sank together toward a rate of zero (7e-6 a day)
        // taking the younger strata down with them; the first close among the 36 then moved every rate of
        // the column up to 85-fold, and milestones months later.
        let at = |age: i64| features("steeping", age, &[], None);
        let mut e = group(0, 40, 15, 7.4, &at(7));
        e.extend(group(100, 47, 10, 10.0, &at(20)));
        e.extend(group(200, 47, 6, 17.9, &at(45)));
        e.extend(group(300, 36, 0, 27.1, &at(90)));
        e.extend(group(400, 9, 0, 13.1, &at(180)));
        let before = fit(&e, hist(1000, 200), 365);
        // Six closes in 841 days: the 60-day stratum reads near that, not near nothing.
        let r60 = before.rate(&at(45));
        assert!(r60 > 0.3 * 6.0 / 841.0, "{r60}");
        // And the silent ones read what 977 days without a close say against their neighbours, not zero.
        let r120 = before.rate(&at(90));
        assert!(r120 > 0.1 / 977.0 && r120 < r60, "{r120} against {r60}");
        let mut one = e.clone();
        if let Some(x) = one.iter_mut().find(|x| x.issue == 300) {
            x.closed = true;
        }
        let after = fit(&one, hist(1000, 201), 365);
        for age in [7, 20, 45, 90, 180] {
            let (r0, r1) = (before.rate(&at(age)), after.rate(&at(age)));
            assert!(
                r1 / r0 < 3.0 && r1 >= r0,
                "age {age}: {r0} before one close, {r1} after"
            );
            let (p0, p1) = (before.p_done(&at(age)), after.p_done(&at(age)));
            assert!(p1 - p0 < 0.15, "age {age}: P(done) {p0} → {p1}");
        }
    }

    #[test]
    fn a_constant_rate_gives_the_exponential_answer() {
        // 1000 issue-weeks, 70 closes: 0.01 per day, in one old stratum (no ageing between buckets).
        let f = features("triage", 500, &[], None);
        let mut m = fit(&group(0, 1000, 70, 7.0, &f), hist(1000, 70), 100);
        m.frailty = 0.0;
        let p = m.p_done(&f);
        // One stratum: its half-event prior comes with the 50 days half an event takes at the year's
        // rate, so the stratum's rate, 70.5 closes in 7050 days, is the year's own.
        let want = 1.0 - (-(70.5 / 7050.0) * 100.0f64).exp();
        assert!((p - want).abs() < 1e-4, "{p} vs {want}");
        // The median time to close, given a close within 100 days, solves (1 − e^(−rt)) = p/2.
        let lead = m.lead(&f).unwrap();
        let r = 70.5 / 7050.0;
        let median = -(1.0 - p / 2.0).ln() / r;
        let got = lead[LEAD_NODES / 2];
        assert!((got - median).abs() < 0.05, "{got} vs {median}");
        assert!(lead.windows(2).all(|w| w[0] <= w[1]));
        assert!(*lead.last().unwrap() <= 100.0);
    }

    #[test]
    fn strata_and_people_follow_the_history_and_shrink() {
        let fresh = features("steeping", 10, &[], Some("ann"));
        let old = features("diagnosis", 400, &[], None);
        let mut e = group(0, 200, 100, 7.0, &fresh);
        e.extend(group(1000, 200, 4, 7.0, &old));
        let m = fit(&e, hist(1000, 104), 365);
        assert!(m.p_done(&fresh) > 0.9);
        assert!(
            m.p_done(&old) < 0.75 && m.p_done(&old) > 0.1,
            "{}",
            m.p_done(&old)
        );
        // A person seen on two issues barely moves the estimate.
        let mut e2 = e.clone();
        e2.extend(group(
            5000,
            2,
            2,
            7.0,
            &features("diagnosis", 400, &[], Some("zed")),
        ));
        let m2 = fit(&e2, hist(1000, 106), 365);
        let zed = m2.p_done(&features("diagnosis", 400, &[], Some("zed")));
        let nobody = m2.p_done(&features("diagnosis", 400, &[], None));
        assert!(zed > nobody && zed < nobody + 0.5, "{zed} vs {nobody}");
    }

    #[test]
    fn a_slowdown_carries_on_for_one_trend_period_and_a_speedup_is_not_extrapolated() {
        let old = features("diagnosis", 1000, &[], None);
        let mut m = fit(&group(0, 300, 60, 7.0, &old), hist(1000, 60), 365);
        let step = |m: &FateModel, d: usize| {
            let h = m.cumulative(&old);
            h[d + 1] - h[d]
        };
        m.trend = 1.0;
        let base = step(&m, 0);
        assert!(base > 0.0);
        assert!((step(&m, 300) - base).abs() < 1e-12);
        m.trend = 0.5;
        assert!((step(&m, 0) - base).abs() < 1e-12);
        let half = TREND_DAYS as usize / 2;
        assert!((step(&m, half) - base * 0.5f64.sqrt()).abs() < 1e-9);
        // The decline stops after one trend period and holds.
        assert!((step(&m, TREND_DAYS as usize) - base * 0.5).abs() < 1e-9);
        assert!((step(&m, 300) - base * 0.5).abs() < 1e-9);
        m.trend = 1.5;
        assert!((step(&m, 300) - base).abs() < 1e-12);
    }

    #[test]
    fn young_issues_slow_down_as_they_age() {
        // Young issues close fast, old ones slowly: a 10-day-old issue soon moves to the slower buckets,
        // and buckets with no history of their own take their older neighbour's rate.
        let young = features("triage", 5, &[], None);
        let older = features("triage", 20, &[], None);
        let mut e = group(0, 300, 150, 7.0, &young);
        e.extend(group(1000, 300, 15, 7.0, &older));
        let m = fit(&e, hist(1000, 104), 365);
        let at_0 = m.p_done(&features("triage", 0, &[], None));
        let at_10 = m.p_done(&features("triage", 10, &[], None));
        let at_20 = m.p_done(&older);
        let at_400 = m.p_done(&features("triage", 400, &[], None));
        assert!(at_0 > at_10 && at_10 > at_20, "{at_0} {at_10} {at_20}");
        assert!(
            (at_400 - at_20).abs() < 1e-9,
            "old issues take the oldest known rate"
        );
    }

    #[test]
    fn a_stalled_project_is_not_cold_and_its_open_work_is_probably_never_done() {
        // 300 issues open all year (52 weekly exposures each), not one closed in it — but the project
        // closed 200 issues before.
        let f = features("triage", 900, &[], None);
        let stalled = fit(&group(0, 300 * 52, 0, 7.0, &f), hist(3000, 200), 365);
        assert!(
            !stalled.cold_start(),
            "a history of closes keeps the model warm"
        );
        assert!(stalled.p_done(&f) < 0.01, "{}", stalled.p_done(&f));
        // A project that never closed ten issues is still cold.
        assert!(fit(&group(0, 300, 0, 7.0, &f), hist(3000, 9), 365).cold_start());
    }

    #[test]
    fn recalibration_learns_overconfidence_and_leaves_calibrated_forecasts_alone() {
        // Promised 0.9, done 6 times in 10: the recalibrated 0.9 comes down toward 0.6.
        let promise = |p: f64, done: bool| Promise {
            p,
            done,
            weight: 1.0,
        };
        let over: Vec<Promise> = (0..400).map(|i| promise(0.9, i % 10 < 6)).collect();
        let [a, b] = recalibrate(&over);
        let p = sigmoid(a + b * logit(0.9));
        assert!((p - 0.6).abs() < 0.05, "{p}");
        // Calibrated promises (0.2 done 2 in 10, 0.7 done 7 in 10) stay close to themselves.
        let fair: Vec<Promise> = (0..500)
            .map(|i| promise(0.2, i % 10 < 2))
            .chain((0..500).map(|i| promise(0.7, i % 10 < 7)))
            .collect();
        let [a, b] = recalibrate(&fair);
        for p in [0.2, 0.7] {
            let q = sigmoid(a + b * logit(p));
            assert!((q - p).abs() < 0.02, "{p} → {q}");
        }
        // No history: the identity.
        assert_eq!(recalibrate(&[]), [0.0, 1.0]);
        // The order reversed (promised 0.2, done 8 in 10; promised 0.8, done 5 in 10): the model told
        // nothing of which were done, and every promise becomes the share kept, 0.65.
        let reversed: Vec<Promise> = (0..500)
            .map(|i| promise(0.2, i % 10 < 8))
            .chain((0..500).map(|i| promise(0.8, i % 10 < 5)))
            .collect();
        let [a, b] = recalibrate(&reversed);
        assert_eq!(b, 0.0);
        for p in [0.2, 0.8] {
            let q = sigmoid(a + b * logit(p));
            assert!((q - 0.65).abs() < 0.02, "{p} → {q}");
        }
        // A mass close at the past cuts: old issues promised 5–20% were all done. The fit would promise
        // nearly everything; it is an event, not a bias, and the model is left as it is.
        let burst: Vec<Promise> = (0..300)
            .map(|i| promise(0.05 + 0.15 * f64::from(i % 16) / 15.0, i % 50 != 0))
            .collect();
        assert_eq!(recalibrate(&burst), [0.0, 1.0]);
    }

    #[test]
    fn the_recalibration_follows_the_weightier_promises() {
        // Old promises of 0.8 were kept 8 times in 10, new ones 5 times in 10: weighted four to one for
        // the new, the fit lands nearer 0.5; weighted four to one for the old, nearer 0.8.
        let fit = |old: f64, new: f64| {
            let pairs: Vec<Promise> = (0..500)
                .map(|i| Promise {
                    p: 0.8,
                    done: i % 10 < 8,
                    weight: old,
                })
                .chain((0..500).map(|i| Promise {
                    p: 0.8,
                    done: i % 10 < 5,
                    weight: new,
                }))
                .collect();
            let [a, b] = recalibrate(&pairs);
            sigmoid(a + b * logit(0.8))
        };
        let recent = fit(0.25, 1.0);
        let past = fit(1.0, 0.25);
        assert!((recent - 0.56).abs() < 0.03, "{recent}");
        assert!((past - 0.74).abs() < 0.03, "{past}");
    }
}
