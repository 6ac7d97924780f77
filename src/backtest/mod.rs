//! Backtests: forecasts that prove themselves.
//!
//! A backtest rewinds the snapshot to a past moment (a *cut*), forecasts from what was known then, and
//! compares the forecast with what happened afterwards. The building blocks here are pure — no I/O, no
//! clock: [`rewind`] derives the past snapshot and the outcomes, [`baselines`] holds the two reference
//! methods every forecast must beat, and [`score`] turns forecasts and outcomes into calibration and loss
//! figures with bootstrap intervals.

pub mod baselines;
pub mod rewind;
pub mod run;
pub mod score;

use chrono::{DateTime, Utc};

pub use rewind::{Pace, as_of, cut_dates, outcome, pace_after};
pub use run::{
    BacktestOptions, BacktestReport, PaceScores, backtest, backtest_targets, forecast_at,
    score_by_pace, score_cut,
};
pub use score::{Metric, Outcome, ReliabilityBin, Scores, Scoring, Target};

/// Seconds in a day, as a float: every duration in a backtest is in (fractional) days.
const DAY_SECONDS: f64 = 86_400.0;

/// Days from `from` to `to` (negative when `to` is earlier).
pub(crate) fn days_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_milliseconds() as f64 / 1000.0 / DAY_SECONDS
}

/// The seed of stream `n` derived from `seed`: a SplitMix64 finaliser over the pair, so neighbouring
/// streams are unrelated and each trial or resample draws the same numbers however many there are.
pub(crate) fn stream(seed: u64, n: u64) -> u64 {
    let mut z = seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, for seeds derived from content (names, inputs): stable across platforms and Rust versions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn feed(&mut self, bytes: &[u8]) -> &mut Self {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self
    }

    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

/// The nearest-rank `p`-quantile of ascending `sorted` values: the smallest value with at least a share
/// `p` of the values at or below it — exactly the definition coverage checks.
pub(crate) fn nearest_rank(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    // The epsilon keeps 0.1 × 30 = 3.0000000000000004 at rank 3.
    let rank = (p * sorted.len() as f64 - 1e-9).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}
