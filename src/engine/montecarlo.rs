//! The Monte Carlo simulation: sample every task's effort, reschedule, and count when things end.
//!
//! Every random number belongs to one task in one trial: it is a hash of the run's seed, the trial's
//! number and the task's name, not the next number of a stream the tasks share. So two forecasts of
//! states that differ in one issue draw the same numbers for every other issue (common random numbers):
//! what moves between them moves because of the change, not because the draws shifted. The per-day counts
//! are integers added in any order, so the result is the same on 1 thread or 16. The
//! percentiles are exact for the trial set at day resolution: every end is counted in a per-day histogram,
//! which needs memory for days × tasks, not for trials.

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
    /// The median times a ratio drawn from observed actual/estimate ratios (a smoothed bootstrap: between
    /// two neighbouring observations, by linear interpolation of their quantile function).
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

/// What happens to a task besides its effort: whether it is done at all, and how long such work waits.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fate {
    /// The probability it is done at all (1: always; no draw is spent on it).
    pub p: f64,
    /// Sorted lead times in days (from day 0) of work like it that got done: when it is done, it ends no
    /// earlier than a draw from these.
    pub lead: Option<std::sync::Arc<[f64]>>,
}

/// The chance each task of `prep` is done at all: its own fate's, times that of every task it waits on,
/// directly or through others — what waits on work never done is never done either (a trial drops it),
/// and the fate draws are independent, so the chance is the product over that set. Tasks left out (in a
/// cycle) have their own fate's.
pub fn done_at_all(prep: &Prepared, fates: &[Fate]) -> Vec<f64> {
    let own = |i: usize| fates.get(i).map_or(1.0, |f| f.p);
    let mut out: Vec<f64> = (0..prep.len()).map(own).collect();
    if out.iter().all(|&p| p >= 1.0) {
        return out;
    }
    // Each task's ancestors walked once per task, marked with the task's own stamp: no set per task.
    let mut seen = vec![usize::MAX; prep.len()];
    let mut stack = Vec::new();
    for (i, p) in out.iter_mut().enumerate() {
        if prep.deps(i).is_empty() {
            continue;
        }
        seen[i] = i;
        stack.extend(prep.deps(i).iter().map(|&d| d as usize));
        while let Some(d) = stack.pop() {
            if seen[d] == i {
                continue;
            }
            seen[d] = i;
            *p *= own(d);
            stack.extend(prep.deps(d).iter().map(|&e| e as usize));
        }
    }
    out
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
pub(crate) const QUANTILE_SLACK: f64 = 0.05;

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
    /// Row-major: rows × (horizon + 1); the last bucket is "beyond the horizon". The rows: one per
    /// scheduled task in scheduling order, then one per group, one per group's staying work, and an
    /// empty one.
    counts: Vec<u32>,
    /// Per task, its row.
    task_row: Vec<u32>,
    /// Scheduled tasks: the first group's row.
    positions: usize,
    tasks: usize,
    groups: usize,
    staying: bool,
}

/// The `u`-quantile of sorted values, interpolating linearly between neighbours.
fn sorted_quantile(values: &[f64], u: f64) -> f64 {
    match values {
        [] => 0.0,
        [one] => *one,
        _ => {
            let x = u.clamp(0.0, 1.0) * (values.len() - 1) as f64;
            let i = x.floor() as usize;
            let j = (i + 1).min(values.len() - 1);
            values[i] + (values[j] - values[i]) * (x - i as f64)
        }
    }
}

/// A uniform number in [0, 1) from 64 random bits.
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The two random words of one task in one trial: its fate draw and its effort draw.
#[inline]
fn task_draws(trial_key: u64, task: u64) -> (u64, u64) {
    let a = mix(trial_key, task);
    (a, mix(a, 0x6a09_e667_f3bc_c909))
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

/// Cells of a log-normal table.
const TABLE: usize = 1 << 12;

/// A quantile function on a grid, so every draw is one uniform number, one lookup and one interpolation,
/// whatever the distribution: no branch in the inner loop depends on which kind an issue has.
struct QuantileTable {
    /// Ascending quantiles at equally spaced levels from 0 to 1.
    nodes: Vec<f64>,
    /// `nodes.len() - 1`, as a float.
    cells: f64,
}

impl QuantileTable {
    fn from_nodes(mut nodes: Vec<f64>) -> Self {
        if nodes.len() < 2 {
            let only = nodes.first().copied().unwrap_or(1.0);
            nodes = vec![only, only];
        }
        let cells = (nodes.len() - 1) as f64;
        Self { nodes, cells }
    }

    /// `exp(σ·z(u))` on 4,096 cells of `u`, each interpolated linearly between the quantiles at its
    /// ends; the outermost ends use `u = 1/8192` and `1 − 1/8192` (z ≈ ±3.7), so draws beyond that are
    /// clipped: a change far outside the p10–p90 range the forecast reports.
    fn log_normal(sigma: f64) -> Self {
        let n = TABLE as f64;
        Self::from_nodes(
            (0..=TABLE)
                .map(|k| {
                    let u = (k as f64 / n).clamp(0.5 / n, 1.0 - 0.5 / n);
                    (sigma * normal_quantile(u)).exp()
                })
                .collect(),
        )
    }

    /// The empirical quantile function of observed ratios: a smoothed bootstrap that draws between
    /// neighbouring observations rather than exactly on them.
    fn ratios(ratios: &[f64]) -> Self {
        let mut nodes = ratios.to_vec();
        nodes.sort_by(f64::total_cmp);
        Self::from_nodes(nodes)
    }

    #[inline]
    fn draw(&self, bits: u64) -> f64 {
        let x = (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * self.cells;
        let k = x as usize;
        let (a, b) = (self.nodes[k], self.nodes[k + 1]);
        a + (b - a) * (x - k as f64)
    }
}

/// How a position's effort is drawn in the inner loop: a scale times a draw from a table.
#[derive(Clone, Copy)]
struct Draw {
    scale: f64,
    table: u32,
}

/// The prepared project laid out in scheduling order, so a trial walks flat arrays front to back.
struct Compiled {
    task: Vec<u32>,
    /// Per position: the task's identity in the random numbers (`Prepared::ids`).
    id: Vec<u64>,
    person: Vec<u32>,
    draw: Vec<Draw>,
    dep_start: Vec<u32>,
    dep_pos: Vec<u32>,
    tables: Vec<QuantileTable>,
    /// Per position: whether the task is done at all, and its lead times.
    fate: Vec<Fate>,
    /// Whether any task may be never done (else no fate draw is spent).
    fated: bool,
}

impl Compiled {
    fn new(prep: &Prepared, dists: &[Distribution], assign: &[u32], fates: &[Fate]) -> Self {
        let mut pos = vec![u32::MAX; prep.len()];
        for (k, &i) in prep.order.iter().enumerate() {
            pos[i as usize] = k as u32;
        }
        // Tables are shared: one per σ, one per list of ratios, one for fixed efforts.
        let mut tables: Vec<QuantileTable> = vec![QuantileTable::from_nodes(vec![1.0, 1.0])];
        let mut by_sigma: Vec<(u64, u32)> = Vec::new();
        let mut by_list: Vec<(*const f64, u32)> = Vec::new();
        let mut draw = Vec::with_capacity(prep.order.len());
        let mut dep_start = Vec::with_capacity(prep.order.len() + 1);
        let mut dep_pos = Vec::new();
        for &i in &prep.order {
            let i = i as usize;
            draw.push(match &dists[i] {
                Distribution::Fixed(x) => Draw {
                    scale: *x,
                    table: 0,
                },
                Distribution::LogNormal { median, sigma } => {
                    let key = sigma.to_bits();
                    let table = match by_sigma.iter().find(|(k, _)| *k == key) {
                        Some((_, t)) => *t,
                        None => {
                            tables.push(QuantileTable::log_normal(*sigma));
                            by_sigma.push((key, tables.len() as u32 - 1));
                            tables.len() as u32 - 1
                        }
                    };
                    Draw {
                        scale: *median,
                        table,
                    }
                }
                Distribution::Resample { base, ratios } => {
                    let key = ratios.as_ptr();
                    let table = match by_list.iter().find(|(k, _)| *k == key) {
                        Some((_, t)) => *t,
                        None => {
                            tables.push(QuantileTable::ratios(ratios));
                            by_list.push((key, tables.len() as u32 - 1));
                            tables.len() as u32 - 1
                        }
                    };
                    Draw {
                        scale: *base,
                        table,
                    }
                }
            });
            dep_start.push(dep_pos.len() as u32);
            dep_pos.extend(prep.deps(i).iter().map(|&d| pos[d as usize]));
        }
        dep_start.push(dep_pos.len() as u32);
        let fate: Vec<Fate> = prep
            .order
            .iter()
            .map(|&i| {
                fates
                    .get(i as usize)
                    .cloned()
                    .unwrap_or(Fate { p: 1.0, lead: None })
            })
            .collect();
        Self {
            task: prep.order.clone(),
            id: prep.order.iter().map(|&i| prep.ids[i as usize]).collect(),
            person: prep.order.iter().map(|&i| assign[i as usize]).collect(),
            draw,
            dep_start,
            dep_pos,
            tables,
            fated: fate.iter().any(|f| f.p < 1.0),
            fate,
        }
    }

    /// One trial: draw every effort and fill `end` and its day `day` (by position). A task whose fate
    /// draw says it is never done takes no time, holds up no other work and ends "never" (`u32::MAX`);
    /// what waits on it is never done either, as Gitea closes no issue while one it depends on is open.
    /// Only the first `limit` positions are scheduled: nothing later can change them.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn trial(
        &self,
        cals: &[Calendar],
        trial_key: u64,
        lanes: &mut [Lane],
        end: &mut [f64],
        day: &mut [u32],
        dropped: &mut [bool],
        limit: usize,
    ) {
        for lane in lanes.iter_mut() {
            lane.reset();
        }
        for k in 0..limit {
            let f = &self.fate[k];
            let (fate_bits, effort_bits) = task_draws(trial_key, self.id[k]);
            let deps = &self.dep_pos[self.dep_start[k] as usize..self.dep_start[k + 1] as usize];
            let mut lead = 0.0;
            if self.fated {
                // Never done: its own draw says so, or it waits on work that is never done (audit 128:
                // an issue blocked by one done in 6% of the futures was done in 72% of them, its p50
                // two months before its own planned start).
                let u = unit(fate_bits);
                if u >= f.p || deps.iter().any(|&d| dropped[d as usize]) {
                    end[k] = 0.0;
                    day[k] = u32::MAX;
                    dropped[k] = true;
                    continue;
                }
                // Conditional on being done, u / p is uniform: one draw decides both.
                if f.p < 1.0
                    && let Some(l) = &f.lead
                {
                    lead = sorted_quantile(l, u / f.p);
                }
            }
            dropped[k] = false;
            let d = self.draw[k];
            let effort = (d.scale * self.tables[d.table as usize].draw(effort_bits)).max(0.0);
            let p = self.person[k];
            if p == u32::MAX {
                end[k] = f64::INFINITY;
                day[k] = u32::MAX;
                continue;
            }
            let p = p as usize;
            let mut ready = 0.0f64;
            for &d in deps {
                ready = ready.max(end[d as usize]);
            }
            let cal = &cals[p];
            let x0 = cal.work_at(ready);
            (end[k], day[k]) = if effort > 0.0 {
                lanes[p].finish(cal, x0, effort)
            } else {
                let t = ready.max(cal.time_done(x0));
                (t, end_day(t).min(f64::from(u32::MAX)) as u32)
            };
            // Work waits as long as such work waited in the history, whatever the schedule allows.
            if lead * 24.0 > end[k] {
                end[k] = lead * 24.0;
                day[k] = lead.floor().min(f64::from(u32::MAX - 1)) as u32;
            }
        }
    }
}

/// Adaptive trials: run the trials in batches and stop once another batch no longer moves any percentile
/// by more than a working day.
///
/// Batches are `floor` trials each, up to the configured trials. After each batch from the second on,
/// every series' p10, p50 and p80 is compared with the one before the batch; when none moved by more
/// than one working day, the run stops. Trial `t` draws the same numbers whatever the batch, so a run stopped at `n` trials is exactly
/// the first `n` trials of the full run, and the stop depends only on integer counts: deterministic for a
/// seed, on any number of threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adaptive {
    /// Trials run at least, and the size of every batch.
    pub floor: u32,
    /// For every day of the horizon, how many working days the team has up to and including it: two
    /// percentiles whose days differ here by at most one are "stable to a working day". Days past the
    /// end count as one more working day than the last.
    pub working_days: Vec<u32>,
}

impl Adaptive {
    /// The working-day position of a reported day (`None`: beyond the horizon, one past the last).
    fn position(&self, day: Option<DayIndex>) -> i64 {
        let last = self.working_days.last().copied().unwrap_or(0);
        match day {
            Some(d) => i64::from(self.working_days.get(d as usize).copied().unwrap_or(last)),
            None => i64::from(last) + 1,
        }
    }

    /// Whether no percentile moved by more than one working day from `before` to `now`.
    fn stable(&self, before: &[Option<DayIndex>], now: &[Option<DayIndex>]) -> bool {
        before.len() == now.len()
            && before
                .iter()
                .zip(now)
                .all(|(a, b)| (self.position(*a) - self.position(*b)).abs() <= 1)
    }
}

/// Everything a batch of trials needs, laid out once per simulation.
struct Batch<'a> {
    compiled: Compiled,
    cals: &'a [Calendar],
    /// Per group, the positions of its tasks.
    group_pos: Vec<Vec<u32>>,
    /// Positions with a row of their own: all (`compiled.task.len()`), or none when only the groups are
    /// asked for.
    task_rows: usize,
    /// Positions simulated: all, or up to the groups' last when only the groups are asked for (work later
    /// in the scheduling order cannot change when earlier work ends).
    limit: usize,
    /// Rows of the histogram: `task_rows`, then one per group (and one per group's staying work).
    series: usize,
    buckets: usize,
    groups: usize,
    staying: bool,
    seed: u64,
}

/// Trials whose end days are buffered before they are counted: the histogram row of a task is then
/// touched once per block instead of once per trial, so counting stays in cache at any size.
const BLOCK: usize = 32;

impl Batch<'_> {
    /// Counts trials `from..to` into `acc` (series × buckets; task rows in scheduling order), split in
    /// contiguous shares over the threads.
    fn count(&self, from: u32, to: u32, acc: &mut [u32]) {
        let (series, buckets, m) = (self.series, self.buckets, self.task_rows);
        let np = self.cals.len();
        // Days at or past the horizon all count in the last bucket, "beyond the horizon".
        let last_bucket = buckets - 1;
        let trials = to - from;
        // One job per thread, each counting a contiguous share of the trials into its own histogram, then
        // added up. The counts are integers added in any order, so the number of threads cannot change the
        // result. The histogram is kept small: 16-bit counts, folded into 32-bit ones every 65,535 trials.
        let jobs = (rayon::current_num_threads() as u32).clamp(1, trials.max(1));
        let parts: Vec<(Vec<u16>, Vec<u32>)> = (0..jobs)
            .into_par_iter()
            .map(|j| {
                let mut counts = vec![0u16; series * buckets];
                let mut total: Vec<u32> = Vec::new();
                // `days[k * BLOCK + b]`: the end day bucket of position `k` in the block's trial `b`.
                let mut days = vec![0u16; m * BLOCK];
                let mut filled = 0usize;
                let flush = |counts: &mut [u16], days: &[u16], filled: usize| {
                    for (k, row) in counts.chunks_exact_mut(buckets).take(m).enumerate() {
                        for &d in &days[k * BLOCK..k * BLOCK + filled] {
                            row[usize::from(d)] += 1;
                        }
                    }
                };
                let fold = |counts: &mut Vec<u16>, total: &mut Vec<u32>| {
                    if total.is_empty() {
                        *total = counts.iter().map(|c| u32::from(*c)).collect();
                    } else {
                        for (t, c) in total.iter_mut().zip(counts.iter()) {
                            *t += u32::from(*c);
                        }
                    }
                    counts.fill(0);
                };
                let all = self.compiled.task.len();
                let (mut lanes, mut end, mut day, mut dropped) = (
                    vec![Lane::default(); np],
                    vec![0.0; all],
                    vec![0u32; all],
                    vec![false; all],
                );
                let lo = from + (u64::from(trials) * u64::from(j) / u64::from(jobs)) as u32;
                let hi = from + (u64::from(trials) * u64::from(j + 1) / u64::from(jobs)) as u32;
                for trial in lo..hi {
                    if (trial - lo).is_multiple_of(u32::from(u16::MAX)) && trial > lo {
                        flush(&mut counts, &days, filled);
                        filled = 0;
                        fold(&mut counts, &mut total);
                    }
                    let key = mix(self.seed, u64::from(trial));
                    self.compiled.trial(
                        self.cals,
                        key,
                        &mut lanes,
                        &mut end,
                        &mut day,
                        &mut dropped,
                        self.limit,
                    );
                    for (k, &d) in day.iter().take(m).enumerate() {
                        days[k * BLOCK + filled] = d.min(last_bucket as u32) as u16;
                    }
                    filled += 1;
                    if filled == BLOCK {
                        flush(&mut counts, &days, filled);
                        filled = 0;
                    }
                    for (g, ks) in self.group_pos.iter().enumerate() {
                        let last = ks.iter().map(|&k| day[k as usize]).max().unwrap_or(0);
                        counts[(m + g) * buckets + (last as usize).min(last_bucket)] += 1;
                        if self.staying {
                            // A future where every open issue leaves the group has no work that stays
                            // to end it: the milestone closes when someone closes it, which nothing here
                            // knows — beyond the horizon, not today.
                            let stays = ks
                                .iter()
                                .filter(|&&k| !dropped[k as usize])
                                .map(|&k| day[k as usize])
                                .max()
                                .map_or(last_bucket, |d| d as usize);
                            counts[(m + self.groups + g) * buckets + stays.min(last_bucket)] += 1;
                        }
                    }
                }
                flush(&mut counts, &days, filled);
                (counts, total)
            })
            .collect();
        for (counts, total) in parts {
            for (x, y) in acc.iter_mut().zip(counts) {
                *x += u32::from(y);
            }
            for (x, y) in acc.iter_mut().zip(total) {
                *x += y;
            }
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
        self.run_with_fates(prep, dists, groups, &[])
    }

    /// Runs the trials with each task done at all only with probability `fates[i]` (missing: 1). Each group
    /// then has two series: its planned scope (a task never done leaves the group never done) and the work
    /// that stays in it (tasks never done are left out).
    pub fn run_with_fates(
        &self,
        prep: &Prepared,
        dists: &[Distribution],
        groups: &[Vec<usize>],
        fates: &[Fate],
    ) -> SimulationResult {
        self.run_adaptive(prep, dists, groups, fates, None)
    }

    /// [`run_with_fates`](Self::run_with_fates), with `adaptive` trials when given: at most `self.trials`,
    /// fewer once every percentile is stable (see [`Adaptive`]); [`SimulationResult::trials`] says how
    /// many ran.
    pub fn run_adaptive(
        &self,
        prep: &Prepared,
        dists: &[Distribution],
        groups: &[Vec<usize>],
        fates: &[Fate],
        adaptive: Option<&Adaptive>,
    ) -> SimulationResult {
        self.simulate(prep, dists, groups, fates, adaptive, false)
    }

    /// [`run`](Self::run) for the groups only: no task has percentiles of its own, and each trial stops
    /// at the groups' last task in the scheduling order — what the cut-line search asks, for a fraction
    /// of the work when the groups' tasks come early. Their counts are exactly [`run`](Self::run)'s.
    pub fn run_groups(
        &self,
        prep: &Prepared,
        dists: &[Distribution],
        groups: &[Vec<usize>],
    ) -> SimulationResult {
        self.simulate(prep, dists, groups, &[], None, true)
    }

    fn simulate(
        &self,
        prep: &Prepared,
        dists: &[Distribution],
        groups: &[Vec<usize>],
        fates: &[Fate],
        adaptive: Option<&Adaptive>,
        groups_only: bool,
    ) -> SimulationResult {
        let n = prep.len();
        // Day buckets are counted in 16 bits: a horizon is at most 65,534 days.
        let buckets = (self.horizon_days as usize).min(usize::from(u16::MAX) - 1) + 1;
        let uncertain = fates.iter().any(|f| f.p < 1.0);
        let staying = if uncertain { groups.len() } else { 0 };
        let medians: Vec<f64> = dists.iter().map(Distribution::median).collect();
        let assign = Prepared::assignment(&prep.schedule(&medians));
        let compiled = Compiled::new(prep, dists, &assign, fates);
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
        // Counted with task rows in scheduling order (the order a trial fills them in); `task_row` says
        // which is whose.
        let (m, limit) = if groups_only {
            let last = group_pos.iter().flatten().map(|&k| k as usize + 1).max();
            (0, last.unwrap_or(0))
        } else {
            (compiled.task.len(), compiled.task.len())
        };
        let series = m + groups.len() + staying;
        let batch = Batch {
            compiled,
            cals: prep.people(),
            group_pos,
            task_rows: m,
            limit,
            series,
            buckets,
            groups: groups.len(),
            staying: staying > 0,
            seed: self.seed,
        };
        let mut acc = vec![0u32; series * buckets];
        let mut done = 0u32;
        let mut before: Option<Vec<Option<DayIndex>>> = None;
        loop {
            let next = match adaptive {
                Some(a) if done == 0 => a.floor.max(1).min(self.trials),
                Some(a) => done.saturating_add(a.floor.max(1)).min(self.trials),
                None => self.trials,
            };
            batch.count(done, next, &mut acc);
            done = next;
            let Some(a) = adaptive.filter(|_| done < self.trials) else {
                break;
            };
            let now: Vec<Option<DayIndex>> = (0..series)
                .flat_map(|s| {
                    let row = &acc[s * buckets..(s + 1) * buckets];
                    [0.1, 0.5, 0.8].map(|q| quantile_of(row, q))
                })
                .collect();
            if before.as_ref().is_some_and(|b| a.stable(b, &now)) {
                break;
            }
            before = Some(now);
        }
        // One more row, all zeros: the row of a task left out of the schedule (no trial counted it).
        acc.resize(acc.len() + buckets, 0);
        let empty = series as u32;
        SimulationResult {
            trials: done,
            buckets,
            counts: acc,
            task_row: pos
                .iter()
                .map(|&k| if k == u32::MAX || m == 0 { empty } else { k })
                .collect(),
            positions: m,
            tasks: n,
            groups: groups.len(),
            staying: staying > 0,
        }
    }
}

/// The day reported for quantile `q` of one series' per-day counts (see `SimulationResult::quantile`).
fn quantile_of(row: &[u32], q: f64) -> Option<DayIndex> {
    let total: u64 = row.iter().map(|c| u64::from(*c)).sum();
    if total == 0 {
        return None;
    }
    let n = total as f64;
    let rank = ((q * n).ceil() as u64).max(1);
    let mut acc = 0u64;
    // The last earlier day on which some trial ended: stepping back lands there, not on a weekend
    // or holiday that merely carries the same share. Only from a day: the last bucket is beyond the
    // horizon, and its jump to all the trials is no rounding of a day.
    let mut last_end_day: Option<usize> = None;
    for (d, c) in row.iter().enumerate() {
        let before = acc;
        acc += u64::from(*c);
        if acc >= rank {
            let (f_before, f_at) = (before as f64 / n, acc as f64 / n);
            let day = match last_end_day {
                Some(b)
                    if d + 1 < row.len()
                        && q - f_before < f_at - q
                        && f_before >= q - QUANTILE_SLACK =>
                {
                    b
                }
                _ => d,
            };
            return (day + 1 < row.len()).then_some(day as DayIndex);
        }
        if *c > 0 {
            last_end_day = Some(d);
        }
    }
    None
}

impl SimulationResult {
    /// The counts of `series`: a task (`< tasks`), else a group's (`tasks + g`) or a group's staying
    /// work's (`tasks + groups + g`).
    fn row(&self, series: usize) -> &[u32] {
        let r = if series < self.tasks {
            self.task_row[series] as usize
        } else {
            self.positions + series - self.tasks
        };
        &self.counts[r * self.buckets..(r + 1) * self.buckets]
    }

    /// The day reported for quantile `q`.
    ///
    /// Ends are counted per day, so the share of trials done by a day jumps from day to day, and the day on
    /// which it first reaches `q` is met in more than `q` of the trials — by half a day's share on average.
    /// The day reported is therefore the one whose share is closest to `q`: the crossing day, or the day
    /// before when that is closer — but never a day met in fewer than `q` − [`QUANTILE_SLACK`] of the
    /// trials. Over many issues the dates are then met as often as they say. Beyond the horizon is not a
    /// day: a share that only reaches `q` there is beyond it, however near the last day came (an issue
    /// done within the horizon in 77% of the trials has no p80 date).
    fn quantile(&self, series: usize, q: f64) -> Option<DayIndex> {
        quantile_of(self.row(series), q)
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

    /// Percentiles of the work that stays in group `g` (tasks never done left out), when fates were given.
    pub(crate) fn group_staying(&self, g: usize) -> Option<Percentiles> {
        self.staying
            .then(|| self.percentiles(self.tasks + self.groups + g))
    }

    /// The share of trials in which task `i` ended on or before `day`.
    pub fn task_by(&self, i: usize, day: DayIndex) -> f64 {
        self.share_by(i, day)
    }

    /// The share of trials in which group `g` ended on or before `day`.
    pub fn group_by(&self, g: usize, day: DayIndex) -> f64 {
        self.share_by(self.tasks + g, day)
    }

    /// The share of trials in which the work that stays in group `g` ended on or before `day`, when fates
    /// were given.
    pub(crate) fn group_staying_by(&self, g: usize, day: DayIndex) -> Option<f64> {
        self.staying
            .then(|| self.share_by(self.tasks + self.groups + g, day))
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

    /// A task of `effort` hours for person `who`, with no dependency, at priority 2.
    fn task(name: &str, effort: f64, who: usize) -> Task {
        Task {
            name: name.into(),
            effort,
            assignee: Some(who),
            eligible: None,
            deps: vec![],
            priority: 2,
            hard: false,
            due: None,
            started: false,
        }
    }

    fn one_task_project(hours_per_day: f64) -> Prepared {
        let p = Project {
            tasks: vec![task("x", 12.0, 0)],
            people: vec![Calendar::from_capacity(vec![hours_per_day; 400])],
        };
        Prepared::new(&p).unwrap()
    }

    /// A year-long Monte Carlo of `trials` trials with seed 1.
    fn year_of(trials: u32) -> MonteCarlo {
        MonteCarlo {
            trials,
            seed: 1,
            horizon_days: 365,
        }
    }

    #[test]
    fn a_future_where_all_the_work_leaves_ends_the_staying_work_beyond_the_horizon() {
        let prep = one_task_project(6.0);
        let mc = year_of(2_000);
        let dists = [Distribution::Fixed(12.0)];
        // Never done: nothing stays, and the milestone's close is not "today".
        let never = mc.run_with_fates(&prep, &dists, &[vec![0]], &[Fate { p: 0.0, lead: None }]);
        let s = never.group_staying(0).unwrap();
        assert_eq!((s.p10, s.p50, s.p80), (None, None, None));
        // Done in about half the futures: the staying work ends on its day in those, beyond in the rest.
        let half = mc.run_with_fates(&prep, &dists, &[vec![0]], &[Fate { p: 0.5, lead: None }]);
        let s = half.group_staying(0).unwrap();
        assert_eq!(s.p10, Some(1));
        assert_eq!(s.p80, None);
    }

    #[test]
    fn work_that_stays_added_to_a_milestone_can_end_its_staying_cone_where_nothing_ended_it() {
        // `a` takes 20 days and is done in 70% of futures; `b` takes a day and is always done.
        let prep = Prepared::new(&Project {
            tasks: vec![task("a", 120.0, 0), task("b", 6.0, 1)],
            people: vec![Calendar::from_capacity(vec![6.0; 400]); 2],
        })
        .unwrap();
        let fates = [Fate { p: 0.7, lead: None }, Fate { p: 1.0, lead: None }];
        let r = year_of(4_000).run_with_fates(
            &prep,
            &[Distribution::Fixed(120.0), Distribution::Fixed(6.0)],
            &[vec![0], vec![0, 1]],
            &fates,
        );
        // The milestone of `a` alone has no work that stays in 30% of futures: beyond the horizon.
        assert_eq!(r.group_staying(0).unwrap().p80, None);
        // With `b` added, `b` is what stays in those futures and ends the milestone on its day, so the
        // headline gains a date though the scope grew; where `a` stays, nothing ends earlier than it did.
        let with_b = r.group_staying(1).unwrap();
        assert_eq!((with_b.p10, with_b.p80), (r.task(1).p50, r.task(0).p50));
        assert!(with_b.p10 < with_b.p80, "{with_b:?}");
        // The planned scope, which needs every issue done, is never in either case.
        assert_eq!((r.group(0).p80, r.group(1).p80), (None, None));
    }

    #[test]
    fn work_waiting_on_work_never_done_is_never_done_and_never_ends_first() {
        // `c` waits on `a` and `b`, both on `a` (a diamond); `a` is done in 30% of futures, `b` in 50%.
        let mut tasks = vec![task("a", 6.0, 0), task("b", 6.0, 1), task("c", 6.0, 1)];
        tasks[1].deps = vec![0];
        tasks[2].deps = vec![0, 1];
        let prep = Prepared::new(&Project {
            tasks,
            people: vec![Calendar::from_capacity(vec![6.0; 400]); 2],
        })
        .unwrap();
        let fates = [
            Fate { p: 0.3, lead: None },
            Fate { p: 0.5, lead: None },
            Fate { p: 1.0, lead: None },
        ];
        // Each one's chance is its own times every task it waits on, `a` counted once.
        let p = done_at_all(&prep, &fates);
        assert!(
            (p[0] - 0.3).abs() < 1e-12 && (p[1] - 0.15).abs() < 1e-12,
            "{p:?}"
        );
        assert!((p[2] - 0.15).abs() < 1e-12, "{p:?}");
        let r = year_of(20_000).run_with_fates(
            &prep,
            &[const { Distribution::Fixed(6.0) }; 3],
            &[vec![2]],
            &fates,
        );
        // Gitea closes nothing while what it depends on is open: `c`, always done on its own, is done
        // only where `a` and `b` are (audit 128: a dependent was done in 72% of the futures, its blocker
        // in 6%), and in the trials the chance is what `done_at_all` says.
        let last = 364;
        let (a, b, c) = (r.task_by(0, last), r.task_by(1, last), r.task_by(2, last));
        assert!(c <= b && b <= a, "{a} {b} {c}");
        assert!((c - 0.15).abs() < 0.01, "{c}");
        // Where it is done it ends after them: its p10 is never before theirs.
        assert!(r.task(2).p10 >= r.task(1).p10, "{:?}", r.task(2));
        // The milestone of `c` alone has nothing that stays in 85% of the futures.
        assert!((r.group_staying_by(0, last).unwrap() - 0.15).abs() < 0.01);
    }

    #[test]
    fn fixed_effort_gives_a_point_range() {
        let prep = one_task_project(6.0);
        let mc = year_of(100);
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
    fn sixteen_bit_counts_are_folded_before_they_overflow() {
        let prep = one_task_project(6.0);
        let mc = MonteCarlo {
            trials: 140_000,
            seed: 1,
            horizon_days: 30,
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let r = one.install(|| mc.run(&prep, &[Distribution::Fixed(12.0)], &[vec![0]]));
        assert_eq!(r.task(0).p50, Some(1));
        assert_eq!(r.task_by(0, 1), 1.0);
        assert_eq!(r.group_by(0, 1), 1.0);
        assert_eq!(r.row(0).iter().map(|c| u64::from(*c)).sum::<u64>(), 140_000);
    }

    /// A chain of tasks on two people, the group being the early ones.
    fn chain_project() -> Prepared {
        let task = |name: &str, who: usize, deps: Vec<usize>, priority: u8| Task {
            name: name.into(),
            effort: 10.0,
            assignee: Some(who),
            eligible: None,
            deps,
            priority,
            hard: false,
            due: None,
            started: false,
        };
        let p = Project {
            tasks: vec![
                task("a", 0, vec![], 1),
                task("b", 1, vec![0], 1),
                task("c", 0, vec![], 3),
                task("d", 1, vec![2], 3),
                task("e", 0, vec![1], 2),
            ],
            people: vec![
                Calendar::from_capacity(vec![6.0; 400]),
                Calendar::from_capacity(vec![4.0; 400]),
            ],
        };
        Prepared::new(&p).unwrap()
    }

    #[test]
    fn a_groups_only_run_counts_the_groups_exactly_as_the_full_run() {
        let prep = chain_project();
        let d: Vec<Distribution> = (0..5)
            .map(|i| Distribution::LogNormal {
                median: 8.0 + f64::from(i),
                sigma: 0.6,
            })
            .collect();
        let mc = MonteCarlo {
            trials: 3_000,
            seed: 4,
            horizon_days: 200,
        };
        let groups = [vec![0, 1], vec![4], vec![1, 4]];
        let full = mc.run(&prep, &d, &groups);
        let only = mc.run_groups(&prep, &d, &groups);
        for g in 0..groups.len() {
            assert_eq!(full.group(g), only.group(g));
            for day in 0..60 {
                assert_eq!(full.group_by(g, day), only.group_by(g, day));
            }
        }
        assert_eq!(only.task(0).p50, None, "no task rows in a groups-only run");
    }

    #[test]
    fn adaptive_trials_stop_early_deterministically_and_never_past_the_ceiling() {
        let prep = chain_project();
        let d: Vec<Distribution> = (0..5)
            .map(|_| Distribution::LogNormal {
                median: 10.0,
                sigma: 0.2,
            })
            .collect();
        let mc = MonteCarlo {
            trials: 64_000,
            seed: 2,
            horizon_days: 200,
        };
        let adaptive = Adaptive {
            floor: 1_000,
            working_days: (1..=200).collect(),
        };
        let groups = [vec![0, 1, 2, 3, 4]];
        let a = mc.run_adaptive(&prep, &d, &groups, &[], Some(&adaptive));
        assert!(a.trials() >= 2_000 && a.trials() < 64_000, "{}", a.trials());
        // Exactly the first trials of a fixed run of that many.
        let fixed = MonteCarlo {
            trials: a.trials(),
            ..mc
        }
        .run(&prep, &d, &groups);
        assert_eq!(a, fixed);
        // A never-stable series (no working days to be stable in) runs to the ceiling.
        let strict = Adaptive {
            floor: 100,
            working_days: (0..200).map(|d| d * 10).collect(),
        };
        let wide: Vec<Distribution> = (0..5)
            .map(|_| Distribution::LogNormal {
                median: 10.0,
                sigma: 2.0,
            })
            .collect();
        let small = MonteCarlo {
            trials: 1_000,
            ..mc
        };
        let b = small.run_adaptive(&prep, &wide, &groups, &[], Some(&strict));
        assert_eq!(b.trials(), 1_000);
    }

    #[test]
    fn a_quantile_steps_back_a_day_but_never_out_of_beyond_the_horizon() {
        // 100 trials: 77 end on day 3; the rest on day 4, or beyond the horizon (the last bucket).
        let within = [0, 0, 0, 77, 23, 0, 0, 0];
        let beyond = [0, 0, 0, 77, 0, 0, 0, 23];
        // Day 4 is met in all the trials, day 3 in 77: day 3 is nearer to 80% and within the slack.
        assert_eq!(quantile_of(&within, 0.8), Some(3));
        // Beyond the horizon is no day to be near to: with 77% done within it, the p80 lies beyond.
        assert_eq!(quantile_of(&beyond, 0.8), None);
        // A share that reaches the quantile within the horizon is dated as before.
        assert_eq!(quantile_of(&beyond, 0.5), Some(3));
        // Below the slack a day is never stepped back to, within the horizon or not.
        assert_eq!(quantile_of(&[0, 0, 0, 74, 26, 0, 0, 0], 0.8), Some(4));
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
