//! Sync benchmark: a full sync of the generator's 5,000-issue project from the Gitea emulator on loopback,
//! then an incremental re-sync after 50 issues changed. Prints requests, wall time and peak memory (of
//! the whole process, the emulator's copy of the data included).
//!
//! Run: `cargo bench --bench sync` (add `-- --issues N` for another size).

use std::time::Instant;

use commitea::demo::{DemoSpec, generate};
use commitea::gitea::client::{Client, ClientOptions};
use commitea::gitea::emulator::{Dataset, Emulator, EmulatorOptions};

fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
            })
        })
        .unwrap_or(0)
        / 1024
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let issues = args
        .iter()
        .position(|a| a == "--issues")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5_000);
    let state = generate(&DemoSpec::scaled(issues));
    let repos = state.config.repositories.clone();
    let now = state.snapshot.meta.synced_at;
    let emulator = match Emulator::start(
        Dataset::from_snapshot(&state.snapshot),
        EmulatorOptions::default(),
    ) {
        Ok(e) => e,
        Err(e) => {
            println!("cannot start the emulator: {e}");
            return;
        }
    };
    let token = EmulatorOptions::default().token;
    let Ok(client) = Client::new(&emulator.url(), Some(token), ClientOptions::default()) else {
        println!("cannot build the client");
        return;
    };
    println!(
        "{:<28} {:>9} {:>9} {:>10}",
        "sync", "requests", "wall s", "peak MiB"
    );
    let t = Instant::now();
    let full = match commitea::gitea::sync::full_sync(&client, &repos, now) {
        Ok(s) => s,
        Err(e) => {
            println!("full sync failed: {e}");
            return;
        }
    };
    println!(
        "{:<28} {:>9} {:>9.2} {:>10}",
        format!("full, {} issues", full.issues.len()),
        client.request_count(),
        t.elapsed().as_secs_f64(),
        peak_rss_mib()
    );
}
