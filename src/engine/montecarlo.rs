//! The Monte Carlo simulation: sample every task's effort, reschedule, and count when things end.
//!
//! Each trial draws from its own RNG stream (seeded from the run's seed and the trial's number), and the
//! per-day counts are integers added in any order, so the result is the same on 1 thread or 16. The
//! percentiles are exact for the trial set at day resolution: every end is counted in a per-day histogram,
//! which needs memory for days × tasks, not for trials.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;
use rayon::prelude::*;

use super::calendar::{DayIndex, end_day};
use super::schedule::{Prepared, Schedule, Scratch};

/// How one task's effort varies from trial to trial.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// Always the same effort.
    Fixed(f64),
    /// Log-normal with this median (hours) and standard deviation of the log.
    LogNormal {
        /// The median effort in hours.
        median: f64,
        /// σ of ln(effort).
        sigma: f64,
    },
    /// The median times one ratio drawn uniformly from observed actual/estimate ratios.
    Resample {
        /// The median (estimate times the calibrated multiplier) in hours.
        base: f64,
        /// Observed ratios, each relative to the calibrated median.
        ratios: std::sync::Arc<[f64]>,
    },
}

impl Distribution {
    /// The median effort.
    pub fn median(&self) -> f64 {
        match self {
            Self::Fixed(x) => *x,
            Self::LogNormal { median, .. } => *median,
            Self::Resample { base, .. } => *base,
        }
    }

    #[inline]
    fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> f64 {
        match self {
            Self::Fixed(x) => *x,
            Self::LogNormal { median, sigma } => {
                let z: f64 = rng.sample(StandardNormal);
                median * (sigma * z).exp()
            }
            Self::Resample { base, ratios } => {
                if ratios.is_empty() {
                    *base
                } else {
                    base * ratios[rng.random_range(0..ratios.len())]
                }
            }
        }
    }
}

/// Settings of one simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonteCarlo {
    /// How many trials.
    pub trials: u32,
    /// The seed; the same seed gives the same result.
    pub seed: u64,
    /// Days counted; anything later is "beyond the horizon".
    pub horizon_days: u32,
}

/// p10, p50 and p80 end days; `None` is beyond the horizon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Percentiles {
    /// 10th percentile.
    pub p10: Option<DayIndex>,
    /// Median.
    pub p50: Option<DayIndex>,
    /// 80th percentile.
    pub p80: Option<DayIndex>,
}

/// Per-day counts of when each task and each group ended, over all trials.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulationResult {
    trials: u32,
    buckets: usize,
    /// Row-major: series × (horizon + 1); the last bucket is "beyond the horizon".
    counts: Vec<u32>,
    tasks: usize,
}

fn mix(seed: u64, trial: u64) -> u64 {
    // SplitMix64 finaliser over the pair, so neighbouring trials get unrelated streams.
    let mut z = seed ^ trial.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl MonteCarlo {
    /// Runs the trials. `groups` lists, per group (milestone), the tasks whose last end is the group's end.
    pub fn run(
        &self,
        prep: &Prepared,
        dists: &[Distribution],
        groups: &[Vec<usize>],
    ) -> SimulationResult {
        let n = prep.len();
        let buckets = self.horizon_days as usize + 1;
        let series = n + groups.len();
        let horizon = self.horizon_days as f64;
        struct Acc {
            counts: Vec<u32>,
            efforts: Vec<f64>,
            scratch: Scratch,
            sched: Schedule,
        }
        let new_acc = || Acc {
            counts: vec![0; series * buckets],
            efforts: vec![0.0; n],
            scratch: Scratch::default(),
            sched: Schedule::default(),
        };
        let bucket = |t: f64| -> usize {
            let d = end_day(t);
            if d.is_finite() && d < horizon {
                d as usize
            } else {
                buckets - 1
            }
        };
        let acc = (0..u64::from(self.trials))
            .into_par_iter()
            .fold(new_acc, |mut acc, trial| {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(self.seed, trial));
                for (e, d) in acc.efforts.iter_mut().zip(dists) {
                    *e = d.sample(&mut rng);
                }
                prep.schedule_into(&acc.efforts, &mut acc.scratch, &mut acc.sched);
                for i in 0..n {
                    let end = acc.sched.end[i];
                    if end.is_nan() {
                        continue; // left out (a cycle)
                    }
                    acc.counts[i * buckets + bucket(end)] += 1;
                }
                for (g, tasks) in groups.iter().enumerate() {
                    let end = tasks
                        .iter()
                        .map(|&i| acc.sched.end[i])
                        .filter(|e| !e.is_nan())
                        .fold(0.0f64, f64::max);
                    acc.counts[(n + g) * buckets + bucket(end)] += 1;
                }
                acc
            })
            .map(|acc| acc.counts)
            .reduce(
                || vec![0; series * buckets],
                |mut a, b| {
                    for (x, y) in a.iter_mut().zip(b) {
                        *x += y;
                    }
                    a
                },
            );
        SimulationResult {
            trials: self.trials,
            buckets,
            counts: acc,
            tasks: n,
        }
    }
}

impl SimulationResult {
    fn row(&self, series: usize) -> &[u32] {
        &self.counts[series * self.buckets..(series + 1) * self.buckets]
    }

    fn quantile(&self, series: usize, q: f64) -> Option<DayIndex> {
        let row = self.row(series);
        let total: u64 = row.iter().map(|c| u64::from(*c)).sum();
        if total == 0 {
            return None;
        }
        // Nearest rank: the ceil(q·N)-th smallest end.
        let rank = ((q * total as f64).ceil() as u64).max(1);
        let mut acc = 0u64;
        for (d, c) in row.iter().enumerate() {
            acc += u64::from(*c);
            if acc >= rank {
                return (d + 1 < self.buckets).then_some(d as DayIndex);
            }
        }
        None
    }

    fn percentiles(&self, series: usize) -> Percentiles {
        Percentiles {
            p10: self.quantile(series, 0.1),
            p50: self.quantile(series, 0.5),
            p80: self.quantile(series, 0.8),
        }
    }

    /// Percentiles of task `i`'s end day.
    pub fn task(&self, i: usize) -> Percentiles {
        self.percentiles(i)
    }

    /// Percentiles of group `g`'s end day (its last task's end).
    pub fn group(&self, g: usize) -> Percentiles {
        self.percentiles(self.tasks + g)
    }

    /// The share of trials in which task `i` ended on or before `day`.
    pub fn task_by(&self, i: usize, day: DayIndex) -> f64 {
        self.share_by(i, day)
    }

    /// The share of trials in which group `g` ended on or before `day`.
    pub fn group_by(&self, g: usize, day: DayIndex) -> f64 {
        self.share_by(self.tasks + g, day)
    }

    /// Any quantile of task `i`'s end day.
    pub fn task_quantile(&self, i: usize, q: f64) -> Option<DayIndex> {
        self.quantile(i, q)
    }

    fn share_by(&self, series: usize, day: DayIndex) -> f64 {
        let row = self.row(series);
        let upto = (day as usize + 1).min(self.buckets - 1);
        let hit: u64 = row[..upto].iter().map(|c| u64::from(*c)).sum();
        hit as f64 / f64::from(self.trials.max(1))
    }

    /// How many trials ran.
    pub fn trials(&self) -> u32 {
        self.trials
    }
}

#[cfg(test)]
mod tests {
    use super::super::calendar::Calendar;
    use super::super::schedule::{Project, Task};
    use super::*;

    fn one_task_project(hours_per_day: f64) -> Prepared {
        let p = Project {
            tasks: vec![Task {
                name: "x".into(),
                effort: 12.0,
                assignee: Some(0),
                eligible: vec![],
                deps: vec![],
                priority: 2,
                hard: false,
                due: None,
                started: false,
            }],
            people: vec![Calendar::from_capacity(vec![hours_per_day; 400])],
        };
        Prepared::new(&p).unwrap()
    }

    #[test]
    fn fixed_effort_gives_a_point_range() {
        let prep = one_task_project(6.0);
        let mc = MonteCarlo {
            trials: 100,
            seed: 1,
            horizon_days: 365,
        };
        let r = mc.run(&prep, &[Distribution::Fixed(12.0)], &[vec![0]]);
        let p = r.task(0);
        assert_eq!((p.p10, p.p50, p.p80), (Some(1), Some(1), Some(1)));
        assert_eq!(r.group(0), p);
        assert_eq!(r.task_by(0, 0), 0.0);
        assert_eq!(r.task_by(0, 1), 1.0);
    }

    #[test]
    fn same_seed_same_counts_whatever_the_thread_count() {
        let prep = one_task_project(1.0);
        let mc = MonteCarlo {
            trials: 2000,
            seed: 7,
            horizon_days: 365,
        };
        let d = [Distribution::LogNormal {
            median: 12.0,
            sigma: 0.5,
        }];
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let four = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let a = one.install(|| mc.run(&prep, &d, &[]));
        let b = four.install(|| mc.run(&prep, &d, &[]));
        assert_eq!(a, b);
        let c = MonteCarlo { seed: 8, ..mc }.run(&prep, &d, &[]);
        assert_ne!(a, c);
    }

    #[test]
    fn beyond_the_horizon_is_reported_as_none() {
        let prep = one_task_project(1.0);
        let mc = MonteCarlo {
            trials: 10,
            seed: 1,
            horizon_days: 7,
        };
        let r = mc.run(&prep, &[Distribution::Fixed(100.0)], &[]);
        assert_eq!(r.task(0).p50, None);
        assert_eq!(r.task_by(0, 6), 0.0);
    }
}
