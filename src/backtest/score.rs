//! Scoring forecasts against outcomes: coverage of each quantile, pinball loss, and bootstrap intervals.
//!
//! A [`Target`] is one open issue at one cut: the forecast's p10/p50/p80 (days after the cut; `None` is
//! "beyond the horizon") and what happened ([`Outcome`]). The rules:
//!
//! **Coverage** of quantile level τ is the share of decided targets that were resolved at or before the
//! quantile. A target is a *hit* when it was resolved at `y ≤ q`, or when `q` is `None` (a forecast of
//! "beyond the horizon" claims nothing finite, so nothing contradicts it); a *miss* when resolved at
//! `y > q`, or still open after `o ≥ q` days of observation (it will resolve after `o`, so after `q`). A
//! target still open after `o < q` days is *undecidable*: it may yet resolve before `q` or after. It is
//! left out of that quantile's coverage and counted in [`Scores::n_undecided`]. Leaving it out biases
//! coverage towards misses (late resolutions are decided sooner than early ones), which is why the cuts
//! stop [`END_MARGIN_DAYS`](super::rewind::END_MARGIN_DAYS) before the data ends and why the count is
//! reported.
//!
//! **Pinball loss** of quantile `q` at level τ for actual `y` is `τ·(y − q)` when `y ≥ q`, else
//! `(1 − τ)·(q − y)`, in days; its mean over the resolved targets is reported for the p50 (τ = 0.5, half
//! the mean absolute error) and the p80 (τ = 0.8). A `None` quantile is scored as if it were
//! [`Scoring::horizon_days`]: the earliest date it allows. For `y ≤ horizon` that is the least loss any
//! date beyond the horizon could earn; for `y > horizon` it can overstate the loss of a forecast that
//! would have named a later date, and only by `τ·(y − horizon)`.
//!
//! **Censored pinball loss** also counts the open targets, which the plain loss silently drops (and
//! dropping them flatters methods that are late on the hardest issues). For an open target observed for
//! `o` days the true `y` is some unknown value `> o`. The loss is decreasing in `y` below `q` and
//! increasing above it, so its infimum over `y > o` is `τ·(o − q)` when `q ≤ o` (approached as `y → o`)
//! and `0` when `q > o` (at `y = q`). Each open target therefore contributes `τ·max(0, o − q)`, and the
//! mean over resolved and open targets together is a lower bound on the mean loss the method will turn out
//! to have once every outcome is known. Note that plugging `y = o` into the loss would *not* be a bound:
//! for `q > o` it charges `(1 − τ)·(q − o)`, more than the loss if the issue resolves at `q`.
//!
//! **Dated coverage** is coverage over the forecasts that named a date only: a target whose quantile is
//! beyond the horizon is left out of that quantile's dated coverage instead of counting as a hit. It is
//! the question a reader of a dated range asks — "when it says a date, does the date hold?" — and the one
//! plain coverage answers too kindly when most quantiles are beyond the horizon.
//!
//! **Reliability** checks the method's probability of being done within the horizon (`p_within`) the way
//! a weather forecast is checked: the targets are binned by that probability in tenths, and in each bin
//! the share that really was resolved within the horizon is compared with the mean promised. A target
//! still open after fewer days than the horizon is undecided and left out.
//!
//! **Intervals** are 95% percentile-bootstrap intervals. Targets from one cut share a snapshot, a queue
//! and a team's luck, so they are not independent: the bootstrap resamples whole cuts (clusters) with
//! replacement, pools their targets and recomputes every figure from the pooled sums. Each resample draws
//! from its own RNG stream, seeded from the content of the targets, so the same targets in the same order
//! always give the same intervals. A resample in which a figure has no data does not count for it. A share
//! (coverage, dated coverage, a bin's observed rate) gets at least the Wilson score interval of its pooled
//! count: a figure from one cut, or whose targets all went the same way, resamples to one value, and "100%
//! (100–100%)" over 38 forecasts claimed a certainty 38 forecasts cannot give (audit 111).

use std::collections::BTreeMap;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use super::{Fnv, nearest_rank, stream};

/// The quantile levels of a target's forecast: p10, p50 and p80.
pub(crate) const LEVELS: [f64; 3] = [0.1, 0.5, 0.8];

/// What became of an issue after a cut.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// Closed this many days after the cut.
    Resolved(f64),
    /// Still open when the data ends, this many days after the cut.
    Open(f64),
}

/// One forecast checked against one outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// What the target is reported under, e.g. its project.
    pub group: String,
    /// The index of the cut it was forecast at: targets with the same cut are resampled together.
    pub cut: i64,
    /// p10, p50 and p80 in days after the cut; `None` is beyond the horizon (or never).
    pub q: [Option<f64>; 3],
    /// What happened.
    pub outcome: Outcome,
    /// The forecast's probability of being done within the horizon, when the method gives one: it scores
    /// a beyond-the-horizon quantile fairly (see [`score`]).
    pub p_within: Option<f64>,
}

/// How targets are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scoring {
    /// The forecast horizon: a `None` quantile is scored as this many days in the pinball losses.
    pub horizon_days: u32,
    /// Bootstrap resamples for the intervals.
    pub resamples: u32,
}

impl Default for Scoring {
    fn default() -> Self {
        Self {
            horizon_days: 365,
            resamples: 1000,
        }
    }
}

/// A figure with its 95% interval: the bootstrap's, for a share at least the Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metric {
    /// The figure on all the targets.
    pub value: f64,
    /// The interval's lower end.
    pub lo: f64,
    /// The interval's upper end.
    pub hi: f64,
}

/// How well a set of forecasts did; a figure is `None` when no target could be scored for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scores {
    /// Targets in all.
    pub n: usize,
    /// Distinct cuts (the bootstrap's clusters).
    pub n_cuts: usize,
    /// Targets resolved by the end of the data.
    pub n_resolved: usize,
    /// Targets still open at the end of the data.
    pub n_open: usize,
    /// Per quantile (p10, p50, p80): open targets observed for less than the quantile, left out of its
    /// coverage.
    pub n_undecided: [usize; 3],
    /// Per quantile: the share of decided targets resolved at or before it (ideal: 0.1, 0.5, 0.8).
    pub coverage: [Option<Metric>; 3],
    /// Mean pinball loss of the p50 over resolved targets, in days.
    pub pinball50: Option<Metric>,
    /// Mean pinball loss of the p80 over resolved targets, in days.
    pub pinball80: Option<Metric>,
    /// Lower bound on the mean pinball loss of the p50 over resolved and open targets, in days.
    pub pinball50_censored: Option<Metric>,
    /// Lower bound on the mean pinball loss of the p80 over resolved and open targets, in days.
    pub pinball80_censored: Option<Metric>,
    /// Per quantile: the share of decided targets with a dated quantile resolved at or before it — how
    /// often a date held when the method gave one.
    #[serde(default)]
    pub dated_coverage: [Option<Metric>; 3],
    /// Per quantile: how many targets had a dated quantile (decided or not).
    #[serde(default)]
    pub n_dated: [usize; 3],
    /// The reliability of the probability of being done within the horizon, by tenths of it; bins with no
    /// decided target are left out. Empty for a method that gives no such probability.
    #[serde(default)]
    pub reliability: Vec<ReliabilityBin>,
}

/// One bin of a reliability diagram: the targets promised a probability in `[lo, hi)` of being done
/// within the horizon, and how many of them were.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReliabilityBin {
    /// The bin's lowest probability.
    pub lo: f64,
    /// Its highest (exclusive, except 1.0 in the last bin).
    pub hi: f64,
    /// Decided targets in the bin.
    pub n: usize,
    /// The mean probability they were promised.
    pub promised: f64,
    /// The share resolved within the horizon, with its interval.
    pub observed: Metric,
}

/// The pinball (quantile) loss of quantile `q` at level `tau` for actual `y`.
pub fn pinball(tau: f64, q: f64, y: f64) -> f64 {
    if y >= q {
        tau * (y - q)
    } else {
        (1.0 - tau) * (q - y)
    }
}

/// Reliability bins: tenths of the promised probability.
const BINS: usize = 10;
/// The first slot of dated coverage (p10, p50, p80).
const DATED: usize = 7;
/// The first slot of the bins' observed rates; the bins' promised sums follow.
const RELIABLE: usize = DATED + 3;
/// Coverage, pinball p50, pinball p80, their censored versions, dated coverage, and per reliability bin
/// the observed rate and the promised probability: the figures bootstrapped together.
const FIGURES: usize = RELIABLE + 2 * BINS;

/// Per figure, the sum of the targets' contributions and how many contributed.
type Sums = [(f64, usize); FIGURES];

/// Adds one target's contributions to `sums` and returns which quantiles it left undecided.
fn contribute(t: &Target, scoring: &Scoring, sums: &mut Sums) -> [bool; 3] {
    let horizon = f64::from(scoring.horizon_days);
    let mut undecided = [false; 3];
    for (k, q) in t.q.iter().enumerate() {
        let tau = LEVELS[k];
        let beyond = |x: f64| x >= horizon;
        let hit = match (t.outcome, q) {
            // Without the method's probability of being done within the horizon, a beyond-the-horizon
            // quantile is met by anything (this favours the method).
            (_, None) if t.p_within.is_none() => Some(1.0),
            // The forecast puts mass p within the horizon and 1 − p beyond it; a quantile beyond the
            // horizon is met by anything done within it, and by an outcome beyond it with the probability
            // of the randomised PIT: (tau − p) / (1 − p).
            (Outcome::Resolved(y), None) if !beyond(y) => Some(1.0),
            (Outcome::Resolved(_), None) => Some(pit(tau, t.p_within)),
            (Outcome::Open(o), None) if beyond(o) => Some(pit(tau, t.p_within)),
            (Outcome::Open(_), None) => None,
            (Outcome::Resolved(y), Some(q)) => Some(f64::from(u8::from(y <= *q))),
            (Outcome::Open(o), Some(q)) if o >= *q => Some(0.0),
            (Outcome::Open(_), Some(_)) => None,
        };
        match hit {
            Some(h) => {
                sums[k].0 += h;
                sums[k].1 += 1;
            }
            None => undecided[k] = true,
        }
    }

    for (slot, (k, tau)) in [(1, 0.5), (2, 0.8)].into_iter().enumerate() {
        let q = t.q[k].unwrap_or(horizon);
        let (plain, censored) = match t.outcome {
            Outcome::Resolved(y) => {
                let l = pinball(tau, q, y);
                (Some(l), l)
            }
            Outcome::Open(o) => (None, tau * (o - q).max(0.0)),
        };
        if let Some(l) = plain {
            sums[3 + slot].0 += l;
            sums[3 + slot].1 += 1;
        }
        sums[5 + slot].0 += censored;
        sums[5 + slot].1 += 1;
    }

    for (k, q) in t.q.iter().enumerate() {
        let Some(q) = q else { continue };
        let hit = match t.outcome {
            Outcome::Resolved(y) => Some(f64::from(u8::from(y <= *q))),
            Outcome::Open(o) if o >= *q => Some(0.0),
            Outcome::Open(_) => None,
        };
        if let Some(h) = hit {
            sums[DATED + k].0 += h;
            sums[DATED + k].1 += 1;
        }
    }

    if let Some(p) = t.p_within {
        let done = match t.outcome {
            Outcome::Resolved(y) => Some(y <= horizon),
            Outcome::Open(o) if o >= horizon => Some(false),
            Outcome::Open(_) => None,
        };
        if let Some(done) = done {
            let bin = bin_of(p);
            sums[RELIABLE + bin].0 += f64::from(u8::from(done));
            sums[RELIABLE + bin].1 += 1;
            sums[RELIABLE + BINS + bin].0 += p;
            sums[RELIABLE + BINS + bin].1 += 1;
        }
    }
    undecided
}

/// The reliability bin of probability `p`: tenths, 1.0 in the last.
fn bin_of(p: f64) -> usize {
    // Truncation is the binning; a probability outside [0, 1] is clamped into the end bins.
    ((p.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1)
}

/// The chance that an outcome beyond the horizon meets a beyond-the-horizon quantile at level `tau` of a
/// forecast with `p` of its mass within the horizon (the randomised PIT, in expectation).
fn pit(tau: f64, p: Option<f64>) -> f64 {
    p.map_or(1.0, |p| crate::engine::fate::beyond_horizon_met(tau, p))
}

fn ratio((sum, n): (f64, usize)) -> Option<f64> {
    (n > 0).then(|| sum / n as f64)
}

/// A seed from the targets' content, so the intervals are reproducible without a seed to pass around.
fn content_seed(targets: &[Target]) -> u64 {
    let mut h = Fnv::new();
    for t in targets {
        h.feed(t.group.as_bytes())
            .feed(&[0])
            .feed(&t.cut.to_le_bytes());
        for q in t.q {
            h.feed(&q.map_or(f64::NAN, |x| x).to_bits().to_le_bytes());
        }
        h.feed(&t.p_within.map_or(f64::NAN, |x| x).to_bits().to_le_bytes());
        let (tag, x) = match t.outcome {
            Outcome::Resolved(y) => (b'r', y),
            Outcome::Open(o) => (b'o', o),
        };
        h.feed(&[tag]).feed(&x.to_bits().to_le_bytes());
    }
    h.finish()
}

/// Scores `targets` (see the module documentation for the exact rules).
pub fn score(targets: &[Target], scoring: &Scoring) -> Scores {
    let mut clusters: BTreeMap<i64, Sums> = BTreeMap::new();
    let mut n_undecided = [0; 3];
    let (mut n_resolved, mut n_open) = (0, 0);
    for t in targets {
        match t.outcome {
            Outcome::Resolved(_) => n_resolved += 1,
            Outcome::Open(_) => n_open += 1,
        }
        let sums = clusters.entry(t.cut).or_insert([(0.0, 0); FIGURES]);
        let undecided = contribute(t, scoring, sums);
        for (n, u) in n_undecided.iter_mut().zip(undecided) {
            *n += usize::from(u);
        }
    }
    let clusters: Vec<Sums> = clusters.into_values().collect();
    let total = pool(clusters.iter());

    // Each resample: as many cuts as there are, drawn with replacement, every figure from the same draw.
    let seed = content_seed(targets);
    let mut draws: [Vec<f64>; FIGURES] = Default::default();
    if !clusters.is_empty() {
        for r in 0..scoring.resamples {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(stream(seed, u64::from(r)));
            let picked = pool(
                (0..clusters.len())
                    .filter_map(|_| clusters.get(rng.random_range(0..clusters.len()))),
            );
            for (d, s) in draws.iter_mut().zip(picked) {
                if let Some(v) = ratio(s) {
                    d.push(v);
                }
            }
        }
    }
    let metrics: Vec<Option<Metric>> = total
        .into_iter()
        .zip(draws.iter_mut())
        .enumerate()
        .map(|(k, (s, d))| {
            let value = ratio(s)?;
            d.sort_by(f64::total_cmp);
            let (mut lo, mut hi) = (
                nearest_rank(d, 0.025).unwrap_or(value),
                nearest_rank(d, 0.975).unwrap_or(value),
            );
            if is_share(k) {
                let (wlo, whi) = wilson(s.0, s.1);
                (lo, hi) = (lo.min(wlo), hi.max(whi));
            }
            Some(Metric { value, lo, hi })
        })
        .collect();
    let m = |k: usize| metrics.get(k).copied().flatten();
    let reliability = (0..BINS)
        .filter_map(|b| {
            let observed = m(RELIABLE + b)?;
            let (promised, n) = total[RELIABLE + BINS + b];
            Some(ReliabilityBin {
                lo: b as f64 / BINS as f64,
                hi: (b + 1) as f64 / BINS as f64,
                n,
                promised: promised / n as f64,
                observed,
            })
        })
        .collect();
    let mut n_dated = [0; 3];
    for t in targets {
        for (n, q) in n_dated.iter_mut().zip(t.q) {
            *n += usize::from(q.is_some());
        }
    }
    Scores {
        n: targets.len(),
        n_cuts: clusters.len(),
        n_resolved,
        n_open,
        n_undecided,
        coverage: [m(0), m(1), m(2)],
        pinball50: m(3),
        pinball80: m(4),
        pinball50_censored: m(5),
        pinball80_censored: m(6),
        dated_coverage: [m(DATED), m(DATED + 1), m(DATED + 2)],
        n_dated,
        reliability,
    }
}

/// Scores each group on its own, by group name.
pub fn score_by_group(targets: &[Target], scoring: &Scoring) -> BTreeMap<String, Scores> {
    let mut groups: BTreeMap<&str, Vec<Target>> = BTreeMap::new();
    for t in targets {
        groups.entry(t.group.as_str()).or_default().push(t.clone());
    }
    groups
        .into_iter()
        .map(|(g, ts)| (g.to_owned(), score(&ts, scoring)))
        .collect()
}

/// Whether figure `k` is a share of targets (each contributing 0 or 1): coverage, dated coverage, a
/// reliability bin's observed rate — not a pinball loss or a bin's promised probability.
fn is_share(k: usize) -> bool {
    k < 3 || (DATED..RELIABLE + BINS).contains(&k)
}

/// The 95% Wilson score interval of `hits` successes in `n` trials.
fn wilson(hits: f64, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.959_963_984_540_054;
    let n = n as f64;
    let p = (hits / n).clamp(0.0, 1.0);
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

fn pool<'a>(clusters: impl Iterator<Item = &'a Sums>) -> Sums {
    let mut out = [(0.0, 0); FIGURES];
    for c in clusters {
        for (o, s) in out.iter_mut().zip(c) {
            o.0 += s.0;
            o.1 += s.1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(cut: i64, q: [Option<f64>; 3], outcome: Outcome) -> Target {
        Target {
            p_within: None,
            group: "acme/api".into(),
            cut,
            q,
            outcome,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    const Q: [Option<f64>; 3] = [Some(2.0), Some(5.0), Some(10.0)];

    #[test]
    fn pinball_loss_by_hand() {
        assert!(close(pinball(0.5, 10.0, 14.0), 2.0));
        assert!(close(pinball(0.5, 10.0, 6.0), 2.0));
        assert!(close(pinball(0.8, 10.0, 14.0), 3.2));
        assert!(close(pinball(0.8, 10.0, 6.0), 0.8));
        assert!(close(pinball(0.8, 10.0, 10.0), 0.0));
    }

    #[test]
    fn calibrated_forecasts_cover_exactly() {
        // Ten issues, one per cut, each forecast 2/5/10 days: one resolves by day 2, five by day 5 and
        // eight by day 10 — exactly what a calibrated p10/p50/p80 promises.
        let ys = [1.0, 3.0, 4.0, 5.0, 5.0, 7.0, 8.0, 10.0, 20.0, 30.0];
        let ts: Vec<_> = ys
            .iter()
            .enumerate()
            .map(|(i, y)| target(i as i64, Q, Outcome::Resolved(*y)))
            .collect();
        let s = score(&ts, &Scoring::default());
        let cov: Vec<f64> = s.coverage.iter().map(|m| m.unwrap().value).collect();
        assert_eq!(cov, vec![0.1, 0.5, 0.8]);
        assert_eq!((s.n, s.n_cuts, s.n_resolved, s.n_open), (10, 10, 10, 0));
        let c80 = s.coverage[2].unwrap();
        assert!(c80.lo <= 0.8 && 0.8 <= c80.hi && c80.lo < c80.hi, "{c80:?}");
        // p50 losses: |y − 5| / 2 summed = (4+2+1+0+0+2+3+5+15+25)/2 = 28.5 over 10.
        assert!(close(s.pinball50.unwrap().value, 2.85));
        // p80: below 10 (1−0.8)·(10−y): 9,7,6,5,5,3,2,0 → 37·0.2 = 7.4; above 0.8·(10+20) = 24 → 3.14.
        assert!(close(s.pinball80.unwrap().value, 31.4 / 10.0));
        // Nothing open: the censored figures are the plain ones.
        assert_eq!(
            s.pinball50_censored.unwrap().value,
            s.pinball50.unwrap().value
        );
    }

    #[test]
    fn open_targets_miss_or_are_undecided_and_bound_the_loss() {
        let ts = vec![
            // Observed 20 days, still open: misses every quantile; censored p50 0.5·15, p80 0.8·10.
            target(0, Q, Outcome::Open(20.0)),
            // Observed 3 days: a miss for p10 (2), undecided for p50 (5) and p80 (10); bound 0.5·0, 0.
            target(0, Q, Outcome::Open(3.0)),
            // Beyond the horizon at p80: a hit whatever happens; its loss is scored at the horizon (30).
            target(1, [Some(1.0), Some(4.0), None], Outcome::Resolved(6.0)),
        ];
        let scoring = Scoring {
            horizon_days: 30,
            resamples: 200,
        };
        let s = score(&ts, &scoring);
        assert_eq!((s.n_resolved, s.n_open), (1, 2));
        assert_eq!(s.n_undecided, [0, 1, 1]);
        let cov: Vec<f64> = s.coverage.iter().map(|m| m.unwrap().value).collect();
        // p10: three misses (6 > 1). p50: the 20-day open target misses, 6 > 4 misses. p80: miss, hit.
        assert_eq!(cov, vec![0.0, 0.0, 0.5]);
        // Plain losses, over the one resolved target: p50 0.5·(6−4) = 1; p80 0.2·(30−6) = 4.8.
        assert!(close(s.pinball50.unwrap().value, 1.0));
        assert!(close(s.pinball80.unwrap().value, 4.8));
        // Censored: p50 (7.5 + 0 + 1) / 3; p80 (8 + 0 + 4.8) / 3.
        assert!(close(s.pinball50_censored.unwrap().value, 8.5 / 3.0));
        assert!(close(s.pinball80_censored.unwrap().value, 12.8 / 3.0));
    }

    #[test]
    fn one_cut_has_no_spread_between_cuts_but_a_share_keeps_its_binomial_one() {
        let ts = vec![
            target(4, Q, Outcome::Resolved(1.0)),
            target(4, Q, Outcome::Resolved(9.0)),
        ];
        let s = score(&ts, &Scoring::default());
        // A loss from one cut resamples to itself.
        let p = s.pinball50.unwrap();
        assert_eq!((p.lo, p.hi), (p.value, p.value));
        // A share does not: 1 of 2 is Wilson's 9.5%–90.5%, not "50% (50–50%)" (audit 111).
        let m = s.coverage[1].unwrap();
        assert_eq!(m.value, 0.5);
        assert!(
            (m.lo - 0.0945).abs() < 1e-3 && (m.hi - 0.9055).abs() < 1e-3,
            "{m:?}"
        );
        // All alike: 38 of 38 is no certainty either.
        let all: Vec<Target> = (0..38)
            .map(|_| target(1, Q, Outcome::Resolved(1.0)))
            .collect();
        let m = score(&all, &Scoring::default()).coverage[2].unwrap();
        assert_eq!(m.value, 1.0);
        assert!(m.hi == 1.0 && m.lo < 0.91 && m.lo > 0.9, "{m:?}");
        // Many cuts: the bootstrap's interval where it is the wider.
        assert_eq!(wilson(0.0, 0), (0.0, 1.0));
        let none = score(&[target(0, Q, Outcome::Open(1.0))], &Scoring::default());
        assert_eq!(none.pinball50, None);
        assert_eq!(none.coverage[2], None);
        assert_eq!(none.n_undecided, [1, 1, 1]);
        assert!(none.pinball80_censored.is_some());
        assert_eq!(score(&[], &Scoring::default()).coverage, [None, None, None]);
    }

    #[test]
    fn deterministic_and_clustered_by_cut() {
        let ts: Vec<_> = (0..40)
            .map(|i| {
                let y = f64::from((i * 7) % 13);
                target(i64::from(i % 5), Q, Outcome::Resolved(y))
            })
            .collect();
        let a = score(&ts, &Scoring::default());
        let b = score(&ts, &Scoring::default());
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        assert_eq!(a.n_cuts, 5);
        for m in a.coverage.iter().flatten() {
            assert!(m.lo <= m.value && m.value <= m.hi, "{m:?}");
        }
        let json = serde_json::to_value(&a).unwrap();
        assert!(json.get("pinball50Censored").is_some());
        assert!(json.get("nUndecided").is_some());
        let by = score_by_group(&ts, &Scoring::default());
        assert_eq!(by.len(), 1);
        assert_eq!(by["acme/api"], a);
    }

    #[test]
    fn dated_coverage_leaves_out_beyond_the_horizon_quantiles() {
        let scoring = Scoring {
            horizon_days: 30,
            resamples: 50,
        };
        let ts = vec![
            // Dated everywhere, resolved on day 6: misses p10 (1) and p50 (4), meets p80 (8).
            target(0, [Some(1.0), Some(4.0), Some(8.0)], Outcome::Resolved(6.0)),
            // p80 beyond the horizon: plain coverage counts it a hit, dated coverage leaves it out.
            target(1, [Some(1.0), Some(4.0), None], Outcome::Resolved(40.0)),
            // Open after 3 days with a p50 of 4: undecided for the p50, a miss for the p10.
            target(2, [Some(2.0), Some(4.0), Some(9.0)], Outcome::Open(3.0)),
        ];
        let s = score(&ts, &scoring);
        let dated: Vec<f64> = s.dated_coverage.iter().map(|m| m.unwrap().value).collect();
        assert_eq!(dated, vec![0.0, 0.0, 1.0]);
        assert_eq!(s.n_dated, [3, 3, 2]);
        // Plain p80 coverage counts the beyond-the-horizon p80 as met.
        assert_eq!(s.coverage[2].unwrap().value, 1.0);
    }

    #[test]
    fn reliability_bins_compare_promised_with_observed() {
        let scoring = Scoring {
            horizon_days: 30,
            resamples: 50,
        };
        let with = |cut: i64, p: f64, outcome: Outcome| Target {
            p_within: Some(p),
            ..target(cut, [None; 3], outcome)
        };
        let ts = vec![
            // Promised 0.85 and 0.95: one done within the horizon, one after it, one open long enough.
            with(0, 0.85, Outcome::Resolved(10.0)),
            with(1, 0.85, Outcome::Resolved(45.0)),
            with(2, 0.95, Outcome::Open(31.0)),
            // Promised 0.15, open for only 5 days: undecided, left out.
            with(3, 0.15, Outcome::Open(5.0)),
            // Promised 1.0: the last bin; done.
            with(4, 1.0, Outcome::Resolved(2.0)),
        ];
        let s = score(&ts, &scoring);
        let bins: Vec<(f64, usize, f64, f64)> = s
            .reliability
            .iter()
            .map(|b| (b.lo, b.n, b.promised, b.observed.value))
            .collect();
        assert_eq!(bins, vec![(0.8, 2, 0.85, 0.5), (0.9, 2, 0.975, 0.5)]);
        // A method without probabilities has no diagram.
        assert!(
            score(&[target(0, Q, Outcome::Resolved(1.0))], &scoring)
                .reliability
                .is_empty()
        );
    }
}
