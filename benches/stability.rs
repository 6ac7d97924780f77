//! The monotonicity property of `tests/it/stability.rs`, exhaustively on the demo: every estimated open
//! issue's estimate times each of 22 factors (0.05 to 7.75), with the abandonment model off (the demo's
//! default) and on. Prints, per setting, the changes tried, how many moved some milestone's p80 with the
//! change, how many moved one against it (later for a smaller estimate, earlier for a larger one), the
//! largest such move in working days and where, and the time.
//!
//! Run: `cargo bench --bench stability` (`-- --trials N` for another trial count; 1,000 by default, as the
//! property tests use).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use commitea::forecast::{self, Settings};
use commitea::plan::Plan;

#[path = "../tests/support/stability.rs"]
mod plans;

const FACTORS: [f64; 22] = [
    0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.01, 1.05, 1.1, 1.2, 1.45, 1.7, 2.0, 2.6,
    3.3, 4.0, 5.5, 7.75,
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trials = args
        .iter()
        .position(|a| a == "--trials")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000);
    let settings = Settings {
        trials,
        seed: 11,
        horizon_days: 730,
    };
    println!(
        "{:<10} {:>7} {:>7} {:>8} {:>9} {:>8} {:>7} {:>7}  worst",
        "model", "trials", "issues", "changes", "with", "against", "max wd", "s"
    );
    let mut failed = false;
    for (name, plan) in [
        ("off", plans::demo_plan()),
        ("on", plans::demo_plan_model_on()),
    ] {
        failed |= scan(name, &plan, &settings);
    }
    if failed {
        println!("a milestone moved against a change by more than one working day");
        std::process::exit(1);
    }
}

/// Scans one setting; true when some move against the change exceeds a working day.
fn scan(name: &str, plan: &Plan, settings: &Settings) -> bool {
    let t = Instant::now();
    let first = forecast::run(plan, settings);
    let before = plans::after(plan, &first, settings);
    let keys = plans::estimated_open_keys(plan, &first);
    let (mut changes, mut with, mut against) = (0usize, 0usize, 0usize);
    let mut worst: (i64, String) = (0, "-".into());
    for key in &keys {
        for factor in FACTORS {
            let now = plans::after(&plans::scaled(plan, key, factor), &first, settings);
            changes += 1;
            let moves = plans::moves_against(&before, &now, factor);
            if plans::p80s(&before) != plans::p80s(&now) {
                with += usize::from(moves.iter().all(|(_, a)| *a == 0));
            }
            for (id, a) in moves {
                if a > 0 {
                    against += 1;
                }
                if a > worst.0 {
                    worst = (a, format!("{key} × {factor}: milestone {id}"));
                }
            }
        }
    }
    println!(
        "{name:<10} {:>7} {:>7} {changes:>8} {with:>9} {against:>8} {:>7} {:>7.1}  {}",
        settings.trials,
        keys.len(),
        worst.0,
        t.elapsed().as_secs_f64(),
        worst.1
    );
    worst.0 > 1
}
