//! Backtest benchmark: every real Jira project with at least 50 issues (from `$COMMITEA_REALWORLD_DIR`,
//! else `<crate>/../shared/realworld-issues`), backtested with the default options. Prints, per project
//! and pooled over all of them, each method's targets, coverage of p10/p50/p80 with 95% intervals and
//! pinball losses (resolved, and censored lower bounds), then the wall time and peak memory of the
//! largest project's backtest.
//!
//! With `--gitea`, every project goes through the user's path instead: its history served by the Gitea
//! emulator as of each cut, synced into a state repo by the real sync and forecast by the real `commitea
//! run` (`commitea_testkit::backtest`); it also counts the cuts whose models were cold.
//!
//! Run: `cargo bench --bench backtest` (add `-- --trials N` to change the trials, `-- --horizon-days N`
//! the horizon (the abandonment window stays the config's), `-- --gitea` for the
//! Gitea path, `-- --only PROJECT` for one project). Skips with a message when the data is absent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use commitea::backtest::score::score_by_group;
use commitea::backtest::{
    BacktestOptions, Metric, Outcome, Pace, Scores, Scoring, Target, backtest_targets, pace_after,
    score_by_pace,
};
use commitea::config::Config;
use commitea::import::{load_dataset, to_state};

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn metric(m: Option<Metric>) -> String {
    m.map_or_else(
        || "—".to_owned(),
        |m| format!("{:.3} [{:.3}, {:.3}]", m.value, m.lo, m.hi),
    )
}

fn print_scores(title: &str, methods: &BTreeMap<String, Scores>) {
    println!("== {title}");
    for (name, s) in methods {
        println!(
            "  {name:<10} n={} cuts={} resolved={} open={} undecided={:?}",
            s.n, s.n_cuts, s.n_resolved, s.n_open, s.n_undecided
        );
        println!(
            "    coverage p10 {}  p50 {}  p80 {}",
            metric(s.coverage[0]),
            metric(s.coverage[1]),
            metric(s.coverage[2])
        );
        println!(
            "    pinball50 {}  pinball80 {}",
            metric(s.pinball50),
            metric(s.pinball80)
        );
        println!(
            "    censored pinball50 {}  pinball80 {}",
            metric(s.pinball50_censored),
            metric(s.pinball80_censored)
        );
        if s.n_dated.iter().any(|n| *n > 0) {
            println!(
                "    dated (n {:?}) p10 {}  p50 {}  p80 {}",
                s.n_dated,
                metric(s.dated_coverage[0]),
                metric(s.dated_coverage[1]),
                metric(s.dated_coverage[2])
            );
        }
        for b in &s.reliability {
            println!(
                "    P(done) {:.1}–{:.1}: n {:>5}, promised {:.3}, observed {}",
                b.lo,
                b.hi,
                b.n,
                b.promised,
                metric(Some(b.observed))
            );
        }
    }
}

/// One project backtested through the Gitea path.
struct GiteaProject {
    cuts: usize,
    targets: Vec<Target>,
    /// The cuts (by index) whose run had the abandonment model off.
    off: BTreeSet<i64>,
    /// What the team's pace on new work did after each cut (by index; see [`pace_after`]).
    paces: BTreeMap<i64, Pace>,
}

/// Dated p80s met, split by whether the pace of new work held after the cut (`score_by_pace`): which
/// misses are the model's, and which a slowdown's.
fn print_pace_split(targets: &[Target], paces: &BTreeMap<i64, Pace>, scoring: &Scoring) {
    for p in score_by_pace(targets, |cut| paces.get(&cut).copied(), scoring) {
        let s = &p.scores;
        if s.n_dated[2] > 0 {
            println!(
                "  pace of new work {} after the cut: {} cuts, dated p80 met {} (n {}), p50 {}, P(done) ≥ 0.8 done {}",
                p.pace.as_str(),
                s.n_cuts,
                metric(s.dated_coverage[2]),
                s.n_dated[2],
                metric(s.dated_coverage[1]),
                top_done(s)
            );
        }
    }
}

/// The share done of the forecasts promised at least 0.8, pooled over the top two reliability bins.
fn top_done(s: &Scores) -> String {
    let (n, done) = s
        .reliability
        .iter()
        .filter(|b| b.lo >= 0.8 - 1e-9)
        .fold((0usize, 0.0f64), |(n, d), b| {
            (n + b.n, d + b.observed.value * b.n as f64)
        });
    if n == 0 {
        "—".to_owned()
    } else {
        format!("{:.3} (n {n})", done / n as f64)
    }
}

/// Backtests one project through the Gitea path; prints its cold-model counts.
fn gitea_path(
    name: &str,
    snapshot: &commitea::state::Snapshot,
    opts: &BacktestOptions,
) -> Option<GiteaProject> {
    let dir = std::env::temp_dir().join(format!(
        "commitea-gitea-backtest-{}-{}",
        std::process::id(),
        name.replace(' ', "-")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let (mut cold_calibration, mut abandonment_off, mut differing) = (0, 0, 0);
    let mut fields: BTreeMap<String, usize> = BTreeMap::new();
    let got = commitea_testkit::backtest::gitea_backtest(snapshot, &dir, opts, None, |c| {
        cold_calibration += usize::from(c.calibration_cold);
        abandonment_off += usize::from(!c.abandonment_learnt);
        differing += c.differing_issues;
        for (f, n) in &c.differing_fields {
            *fields.entry(f.clone()).or_default() += n;
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    match got {
        Ok(g) => {
            println!(
                "{name}: {} cuts through Gitea; calibration cold at {cold_calibration}, abandonment cold at \
                 {abandonment_off}; {differing} synced issue records differ from the in-memory rewind \
                 (fields: {fields:?})",
                g.cuts.len()
            );
            let off = (0i64..)
                .zip(&g.cuts)
                .filter(|(_, c)| !c.abandonment_learnt)
                .map(|(i, _)| i)
                .collect();
            let paces = (0i64..)
                .zip(&g.cuts)
                .map(|(i, c)| (i, pace_after(snapshot, c.cut, opts.horizon_days)))
                .collect();
            Some(GiteaProject {
                cuts: g.cuts.len(),
                targets: g.targets,
                off,
                paces,
            })
        }
        Err(e) => {
            println!("{name}: the Gitea-path backtest failed: {e}");
            None
        }
    }
}

/// Why CommiTea's dated p80s were missed: the issue was not done within the horizon at all (the chance
/// of being done was overstated), or it was done, later than the date (the timing was). An issue still
/// open when the data ends, before the horizon but after the date, counts with the late ones; through
/// Gitea every cut has a whole horizon before the data ends, so there are none there.
fn print_dated_misses(targets: &[Target], horizon_days: u32) {
    let h = f64::from(horizon_days);
    let (mut dated, mut never, mut late) = (0usize, 0usize, 0usize);
    for t in targets.iter().filter(|t| t.group == "commitea") {
        let Some(q) = t.q[2] else { continue };
        match t.outcome {
            Outcome::Resolved(y) if y <= q => dated += 1,
            Outcome::Resolved(y) if y <= h => {
                dated += 1;
                late += 1;
            }
            Outcome::Resolved(_) => {
                dated += 1;
                never += 1;
            }
            Outcome::Open(o) if o >= h => {
                dated += 1;
                never += 1;
            }
            Outcome::Open(o) if o >= q => {
                dated += 1;
                late += 1;
            }
            Outcome::Open(_) => {}
        }
    }
    if dated > 0 {
        let pct = |n: usize| 100.0 * n as f64 / dated as f64;
        println!(
            "  dated p80 missed: {:.1}% not done within the horizon, {:.1}% done after the date (n {dated})",
            pct(never),
            pct(late)
        );
    }
}

fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("COMMITEA_REALWORLD_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realworld-issues"),
        PathBuf::from,
    );
    dir.join("duraspace_issues.csv").exists().then_some(dir)
}

fn main() {
    let Some(dir) = data_dir() else {
        println!("backtest bench skipped: no real Jira data; set COMMITEA_REALWORLD_DIR");
        return;
    };
    let args: Vec<String> = std::env::args().collect();
    let mut opts = BacktestOptions::default();
    if let Some(t) = args
        .iter()
        .position(|a| a == "--trials")
        .and_then(|i| args.get(i + 1))
        .and_then(|t| t.parse().ok())
    {
        opts.trials = t;
    }
    if let Some(h) = args
        .iter()
        .position(|a| a == "--horizon-days")
        .and_then(|i| args.get(i + 1))
        .and_then(|h| h.parse().ok())
    {
        opts.horizon_days = h;
    }
    let gitea = args.iter().any(|a| a == "--gitea");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    println!(
        "options: every {} days, {} days of history, {} trials, seed {}, horizon {} days, {} resamples",
        opts.every_days,
        opts.min_history_days,
        opts.trials,
        opts.seed,
        opts.horizon_days,
        opts.resamples
    );
    let scoring = opts.scoring();
    let mut pooled: Vec<Target> = Vec::new();
    // Through Gitea: the targets of the cuts whose abandonment model learnt a rate (a cold one says so on
    // every page, and gives every open issue even odds, or assumes it done while the history is young).
    let mut pooled_warm: Vec<Target> = Vec::new();
    let mut pooled_paces: BTreeMap<i64, Pace> = BTreeMap::new();
    let mut largest: Option<(usize, String, f64, u64)> = None;
    let mut offset = 0i64;
    for dataset in ["duraspace", "apache"] {
        let ds = match load_dataset(&dir, dataset) {
            Ok(ds) => ds,
            Err(e) => {
                println!("{dataset}: cannot load: {e}");
                continue;
            }
        };
        for (project, n) in ds.projects() {
            if n < 50 || only.as_ref().is_some_and(|o| *o != project) {
                continue;
            }
            let imported = match to_state(&ds, &project) {
                Ok(p) => p,
                Err(e) => {
                    println!("{dataset} {project}: cannot import: {e}");
                    continue;
                }
            };
            let config = match Config::parse(&imported.config_yaml, Path::new("commitea.yaml")) {
                Ok(c) => c,
                Err(e) => {
                    println!("{dataset} {project}: bad config: {e}");
                    continue;
                }
            };
            let t = Instant::now();
            let (n_cuts, targets, off, paces) = if gitea {
                match gitea_path(&format!("{dataset} {project}"), &imported.snapshot, &opts) {
                    Some(got) => (got.cuts, got.targets, got.off, got.paces),
                    None => continue,
                }
            } else {
                let (cuts, targets) = backtest_targets(&imported.snapshot, &config, &opts);
                (cuts.len(), targets, BTreeSet::new(), BTreeMap::new())
            };
            let wall = t.elapsed().as_secs_f64();
            let rss = peak_rss_kib();
            print_scores(
                &format!("{dataset} {project}: {n} issues, {n_cuts} cuts, {wall:.1} s"),
                &score_by_group(&targets, &scoring),
            );
            print_dated_misses(&targets, opts.horizon_days);
            if gitea {
                let warm: Vec<Target> = targets
                    .iter()
                    .filter(|t| !off.contains(&t.cut))
                    .cloned()
                    .collect();
                print_pace_split(&warm, &paces, &scoring);
            }
            if largest.as_ref().is_none_or(|(m, ..)| n > *m) {
                largest = Some((n, format!("{dataset} {project}"), wall, rss));
            }
            // Cut ids stay distinct across projects, so the bootstrap resamples each project's cuts.
            let next = offset + i64::try_from(n_cuts).unwrap_or(0);
            if gitea {
                pooled_paces.extend(paces.iter().map(|(c, p)| (c + offset, *p)));
                pooled_warm.extend(targets.iter().filter(|t| !off.contains(&t.cut)).map(|t| {
                    Target {
                        cut: t.cut + offset,
                        ..t.clone()
                    }
                }));
            }
            pooled.extend(targets.into_iter().map(|mut t| {
                t.cut += offset;
                t
            }));
            offset = next;
        }
    }
    print_scores(
        "pooled over all projects",
        &score_by_group(&pooled, &scoring),
    );
    print_dated_misses(&pooled, opts.horizon_days);
    if gitea {
        print_scores(
            "pooled over all projects, cuts with the abandonment model on",
            &score_by_group(&pooled_warm, &scoring),
        );
        print_dated_misses(&pooled_warm, opts.horizon_days);
        print_pace_split(&pooled_warm, &pooled_paces, &scoring);
    }
    if let Some((n, name, wall, rss)) = largest {
        println!(
            "largest project: {name} ({n} issues): backtest wall time {wall:.2} s, peak memory (VmHWM) {:.1} MiB",
            rss as f64 / 1024.0
        );
    }
}
