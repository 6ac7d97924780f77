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
use commitea::engine::MonteCarlo;
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

/// Child: one measurement, printed as one tab-separated line: the whole forecast (calibration, schedule,
/// simulation, cut lines, report), then the simulation alone, which is what ns/issue-trial is about.
fn measure(issues: usize, trials: u32) {
    let state = generate(&DemoSpec::scaled(issues));
    let plan = Plan::from_snapshot(
        &state.snapshot,
        &state.config,
        state.snapshot.meta.synced_at,
    );
    let days = state.config.forecast.horizon_days.0;
    let settings = Settings {
        trials,
        seed: 1,
        horizon_days: days,
    };
    let before = peak_rss_kib();
    let t = Instant::now();
    let report = forecast::run(&plan, &settings);
    let wall = t.elapsed().as_secs_f64();
    let open = report.issues.len();

    let built = match forecast::build(&plan, days) {
        Ok(b) => b,
        Err(e) => {
            println!("error: {e}");
            return;
        }
    };
    let mc = MonteCarlo {
        trials,
        seed: 1,
        horizon_days: days,
    };
    let t = Instant::now();
    let sim = mc.run(&built.prep, &built.dists, &built.groups);
    let sim_wall = t.elapsed().as_secs_f64();
    std::hint::black_box(sim);
    let threads = rayon::current_num_threads();
    let ns = sim_wall * 1e9 * threads as f64 / (open as f64 * f64::from(trials));
    println!(
        "{issues}\t{open}\t{trials}\t{wall:.3}\t{sim_wall:.3}\t{ns:.1}\t{threads}\t{}\t{}",
        before / 1024,
        peak_rss_kib() / 1024
    );
}

/// Child: TaskJuggler's time for one deterministic schedule of the same project.
fn taskjuggler(issues: usize) {
    let state = generate(&DemoSpec::scaled(issues));
    let plan = Plan::from_snapshot(
        &state.snapshot,
        &state.config,
        state.snapshot.meta.synced_at,
    );
    let days = state.config.forecast.horizon_days.0;
    let Ok(text) = forecast::export_tjp(&plan, days, "bench", "bench") else {
        println!("export failed");
        return;
    };
    let dir = std::env::temp_dir().join(format!(
        "commitea-bench-tj3-{issues}-{}",
        std::process::id()
    ));
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("bench.tjp");
    if std::fs::write(&file, text).is_err() {
        println!("cannot write {}", file.display());
        return;
    }
    let t = Instant::now();
    let ok = Command::new("tj3")
        .args(["--silent", "--no-color", "-o"])
        .arg(&dir)
        .arg(&file)
        .status()
        .is_ok_and(|s| s.success());
    let wall = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    println!("{}\t{wall:.2}", if ok { "ok" } else { "failed" });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--tj3") {
        taskjuggler(args[i + 1].parse().unwrap_or(300));
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let issues = args[i + 1].parse().unwrap_or(300);
        let trials = args[i + 2].parse().unwrap_or(10_000);
        measure(issues, trials);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let trials: u32 = runs_trials(quick);
    let exe = std::env::current_exe().unwrap_or_default();
    println!(
        "{:>7} {:>6} {:>7} {:>11} {:>9} {:>16} {:>8} {:>22}",
        "issues", "open", "trials", "forecast s", "sim s", "ns/issue-trial", "threads", "peak MiB"
    );
    let mut runs: Vec<(usize, u32)> = [300, 2_000, 5_000].iter().map(|&n| (n, trials)).collect();
    // Memory must not grow with the trial count: the largest project again at a tenth of the trials.
    runs.push((5_000, trials / 10));
    let mut forecast_wall = std::collections::BTreeMap::new();
    for (issues, trials) in runs {
        let out = child(&exe, &["--child", &issues.to_string(), &trials.to_string()]);
        let f: Vec<&str> = out.trim().split('\t').collect();
        if f.len() < 9 {
            println!("{issues:>7} measurement failed: {out}");
            continue;
        }
        if trials == runs_trials(quick) {
            forecast_wall.insert(issues, f[3].parse::<f64>().unwrap_or(f64::NAN));
        }
        println!(
            "{:>7} {:>6} {:>7} {:>11} {:>9} {:>16} {:>8} {:>22}",
            f[0],
            f[1],
            f[2],
            f[3],
            f[4],
            f[5],
            f[6],
            format!("{} (before: {})", f[8], f[7])
        );
    }
    let has_tj3 = Command::new("tj3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_tj3 {
        println!("\ntj3 is not installed: no TaskJuggler comparison (apt-get install tj3)");
        return;
    }
    println!("\nTaskJuggler, one deterministic schedule of the same project:");
    println!(
        "{:>7} {:>9} {:>26}",
        "issues", "tj3 s", "our forecast / tj3"
    );
    for issues in [300, 2_000, 5_000] {
        let out = child(&exe, &["--tj3", &issues.to_string()]);
        let f: Vec<&str> = out.trim().split('\t').collect();
        let tj3: f64 = f.get(1).and_then(|x| x.parse().ok()).unwrap_or(f64::NAN);
        let ours = forecast_wall.get(&issues).copied().unwrap_or(f64::NAN);
        println!(
            "{issues:>7} {:>9} {:>26}",
            format!("{tj3:.2}{}", if f[0] == "ok" { "" } else { " (failed)" }),
            format!("{:.3}", ours / tj3)
        );
    }
}

fn runs_trials(quick: bool) -> u32 {
    if quick { 1_000 } else { 10_000 }
}

fn child(exe: &std::path::Path, args: &[&str]) -> String {
    Command::new(exe)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}
