//! The Monte Carlo simulation: sample every task's effort, reschedule, and count when things end.
//!
//! Each trial draws from its own RNG stream (seeded from the run's seed and the trial's number), and the
//! per-day counts are integers added in any order, so the result is the same on 1 thread or 16. The
//! percentiles are exact for the trial set at day resolution: every end is counted in a per-day histogram,
//! which needs memory for days × tasks, not for trials.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt, SeedableRng};
use rayon::prelude::*;

use super::calendar::{Calendar, DayIndex, end_day};
use super::schedule::{Lane, Prepared};

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

/// How far below `q` the share of trials done by a reported day may be (see `SimulationResult::quantile`).
pub const QUANTILE_SLACK: f64 = 0.05;

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

/// The inverse of the standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.024_25 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.024_25 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Bits of the random number that pick a table cell; the rest interpolate within it.
const TABLE_BITS: u32 = 12;
const TABLE: usize = 1 << TABLE_BITS;

/// `exp(σ·z(u))` on a grid of `u`, so a log-normal draw is one table lookup and a multiply.
///
/// Cell `k` spans `u ∈ [k/N, (k+1)/N)` and is interpolated linearly between the quantiles at its ends;
/// the outermost ends use `u = 1/(2N)` and `1 − 1/(2N)` (z ≈ ±3.7), so draws beyond that are clipped:
/// a change to the distribution far outside the p10–p90 range the forecast reports.
struct LogNormalTable {
    nodes: Vec<f64>,
}

impl LogNormalTable {
    fn new(sigma: f64) -> Self {
        let n = TABLE as f64;
        let nodes = (0..=TABLE)
            .map(|k| {
                let u = (k as f64 / n).clamp(0.5 / n, 1.0 - 0.5 / n);
                (sigma * normal_quantile(u)).exp()
            })
            .collect();
        Self { nodes }
    }

    #[inline]
    fn draw(&self, bits: u64) -> f64 {
        let k = (bits >> (64 - TABLE_BITS)) as usize;
        let frac = ((bits << TABLE_BITS) >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let (a, b) = (self.nodes[k], self.nodes[k + 1]);
        a + (b - a) * frac
    }
}

/// How a position's effort is drawn in the inner loop.
#[derive(Clone, Copy)]
enum Draw {
    Fixed(f64),
    /// Median times a log-normal table's draw.
    Table {
        median: f64,
        table: u32,
    },
    /// Base times a uniformly drawn ratio from a list.
    Ratios {
        base: f64,
        list: u32,
    },
}

/// The prepared project laid out in scheduling order, so a trial walks flat arrays front to back.
struct Compiled {
    task: Vec<u32>,
    person: Vec<u32>,
    draw: Vec<Draw>,
    dep_start: Vec<u32>,
    dep_pos: Vec<u32>,
    tables: Vec<LogNormalTable>,
    ratio_lists: Vec<std::sync::Arc<[f64]>>,
}

impl Compiled {
    fn new(prep: &Prepared, dists: &[Distribution], assign: &[u32]) -> Self {
        let mut pos = vec![u32::MAX; prep.len()];
        for (k, &i) in prep.order.iter().enumerate() {
            pos[i as usize] = k as u32;
        }
        let mut tables: Vec<(u64, LogNormalTable)> = Vec::new();
        let mut ratio_lists: Vec<std::sync::Arc<[f64]>> = Vec::new();
        let mut draw = Vec::with_capacity(prep.order.len());
        let mut dep_start = Vec::with_capacity(prep.order.len() + 1);
        let mut dep_pos = Vec::new();
        for &i in &prep.order {
            let i = i as usize;
            draw.push(match &dists[i] {
                Distribution::Fixed(x) => Draw::Fixed(*x),
                Distribution::LogNormal { median, sigma } => {
                    let key = sigma.to_bits();
                    let t = match tables.iter().position(|(k, _)| *k == key) {
                        Some(t) => t,
                        None => {
                            tables.push((key, LogNormalTable::new(*sigma)));
                            tables.len() - 1
                        }
                    };
                    Draw::Table {
                        median: *median,
                        table: t as u32,
                    }
                }
                Distribution::Resample { base, ratios } => {
                    if ratios.is_empty() {
                        Draw::Fixed(*base)
                    } else {
                        let l = match ratio_lists
                            .iter()
                            .position(|r| std::sync::Arc::ptr_eq(r, ratios))
                        {
                            Some(l) => l,
                            None => {
                                ratio_lists.push(ratios.clone());
                                ratio_lists.len() - 1
                            }
                        };
                        Draw::Ratios {
                            base: *base,
                            list: l as u32,
                        }
                    }
                }
            });
            dep_start.push(dep_pos.len() as u32);
            dep_pos.extend(prep.deps(i).iter().map(|&d| pos[d as usize]));
        }
        dep_start.push(dep_pos.len() as u32);
        Self {
            task: prep.order.clone(),
            person: prep.order.iter().map(|&i| assign[i as usize]).collect(),
            draw,
            dep_start,
            dep_pos,
            tables: tables.into_iter().map(|(_, t)| t).collect(),
            ratio_lists,
        }
    }

    /// One trial: draw every effort and fill `end` (by position).
    #[inline]
    fn trial(
        &self,
        cals: &[Calendar],
        rng: &mut Xoshiro256PlusPlus,
        lanes: &mut [Lane],
        end: &mut [f64],
    ) {
        for lane in lanes.iter_mut() {
            lane.reset();
        }
        for k in 0..self.task.len() {
            let effort = match self.draw[k] {
                Draw::Fixed(x) => x,
                Draw::Table { median, table } => {
                    median * self.tables[table as usize].draw(rng.next_u64())
                }
                Draw::Ratios { base, list } => {
                    let l = &self.ratio_lists[list as usize];
                    base * l[rng.random_range(0..l.len())]
                }
            }
            .max(0.0);
            let p = self.person[k];
            if p == u32::MAX {
                end[k] = f64::INFINITY;
                continue;
            }
            let p = p as usize;
            let mut ready = 0.0f64;
            for &d in &self.dep_pos[self.dep_start[k] as usize..self.dep_start[k + 1] as usize] {
                ready = ready.max(end[d as usize]);
            }
            let cal = &cals[p];
            let x0 = cal.work_at(ready);
            end[k] = if effort > 0.0 {
                lanes[p].finish(cal, x0, effort)
            } else {
                ready.max(cal.time_done(x0))
            };
        }
    }
}

impl MonteCarlo {
    /// Runs the trials. `groups` lists, per group (milestone), the tasks whose last end is the group's end.
    ///
    /// Every trial keeps the people the median plan chose for unassigned work: the simulation asks how long
    /// this plan takes, not how long it would take with perfect hindsight dispatch.
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
        let medians: Vec<f64> = dists.iter().map(Distribution::median).collect();
        let assign = Prepared::assignment(&prep.schedule(&medians));
        let compiled = Compiled::new(prep, dists, &assign);
        let mut pos = vec![u32::MAX; n];
        for (k, &i) in prep.order.iter().enumerate() {
            pos[i as usize] = k as u32;
        }
        let group_pos: Vec<Vec<u32>> = groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|&i| pos[i])
                    .filter(|&k| k != u32::MAX)
                    .collect()
            })
            .collect();
        let cals = prep.people();
        let np = cals.len();
        let m = compiled.task.len();
        let bucket = |t: f64| -> usize {
            let d = end_day(t);
            if d.is_finite() && d < horizon {
                d as usize
            } else {
                buckets - 1
            }
        };
        // One job per thread, each counting a contiguous share of the trials into its own histogram, then
        // added up. The counts are integers added in any order, so the number of threads cannot change the
        // result. Fresh memory is expensive to touch, so there is exactly one histogram per job.
        let jobs = (rayon::current_num_threads() as u32).clamp(1, self.trials.max(1));
        let mut parts: Vec<Vec<u32>> = (0..jobs)
            .into_par_iter()
            .map(|j| {
                let mut counts = vec![0u32; series * buckets];
                let (mut lanes, mut end) = (vec![Lane::default(); np], vec![0.0; m]);
                let from = (u64::from(self.trials) * u64::from(j) / u64::from(jobs)) as u32;
                let to = (u64::from(self.trials) * u64::from(j + 1) / u64::from(jobs)) as u32;
                for trial in from..to {
                    let mut rng =
                        Xoshiro256PlusPlus::seed_from_u64(mix(self.seed, u64::from(trial)));
                    compiled.trial(cals, &mut rng, &mut lanes, &mut end);
                    for (k, &i) in compiled.task.iter().enumerate() {
                        counts[i as usize * buckets + bucket(end[k])] += 1;
                    }
                    for (g, ks) in group_pos.iter().enumerate() {
                        let last = ks.iter().map(|&k| end[k as usize]).fold(0.0f64, f64::max);
                        counts[(n + g) * buckets + bucket(last)] += 1;
                    }
                }
                counts
            })
            .collect();
        let mut acc = parts.pop().unwrap_or_else(|| vec![0u32; series * buckets]);
        for part in parts {
            for (x, y) in acc.iter_mut().zip(part) {
                *x += y;
            }
        }
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

    /// The day reported for quantile `q`.
    ///
    /// Ends are counted per day, so the share of trials done by a day jumps from day to day, and the day on
    /// which it first reaches `q` is met in more than `q` of the trials — by half a day's share on average.
    /// The day reported is therefore the one whose share is closest to `q`: the crossing day, or the day
    /// before when that is closer — but never a day met in fewer than `q` − [`QUANTILE_SLACK`] of the
    /// trials. Over many issues the dates are then met as often as they say.
    fn quantile(&self, series: usize, q: f64) -> Option<DayIndex> {
        let row = self.row(series);
        let total: u64 = row.iter().map(|c| u64::from(*c)).sum();
        if total == 0 {
            return None;
        }
        let n = total as f64;
        let rank = ((q * n).ceil() as u64).max(1);
        let mut acc = 0u64;
        for (d, c) in row.iter().enumerate() {
            let before = acc;
            acc += u64::from(*c);
            if acc >= rank {
                let (f_before, f_at) = (before as f64 / n, acc as f64 / n);
                let day = if d > 0 && q - f_before < f_at - q && f_before >= q - QUANTILE_SLACK {
                    d - 1
                } else {
                    d
                };
                return (day + 1 < self.buckets).then_some(day as DayIndex);
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
