//! Sync benchmark: a full sync of the generator's 5,000-issue project from the Gitea emulator on loopback,
//! then an incremental re-sync after 50 issues changed. Prints requests, wall time and peak memory (of the
//! whole process, the emulator's copy of the data included).
//!
//! Run: `cargo bench --bench sync` (add `-- --issues N` for another size).

use std::time::Instant;

use commitea::demo::{DemoSpec, generate};
use commitea::gitea::client::{Client, ClientOptions};
use commitea::gitea::emulator::{Dataset, Emulator, EmulatorOptions};
use commitea::gitea::sync::{SyncOptions, sync};

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
        "{:<34} {:>9} {:>9} {:>10}",
        "sync", "requests", "wall s", "peak MiB"
    );
    let options = SyncOptions::default();
    let t = Instant::now();
    let first = match sync(&client, &repos, None, now, &options) {
        Ok(o) => o,
        Err(e) => {
            println!("full sync failed: {e}");
            return;
        }
    };
    let full_requests = client.request_count();
    println!(
        "{:<34} {:>9} {:>9.2} {:>10}",
        format!("full, {} issues", first.snapshot.issues.len()),
        full_requests,
        t.elapsed().as_secs_f64(),
        peak_rss_mib()
    );

    let step = (first.snapshot.issues.len() / 50).max(1);
    let keys: Vec<_> = first
        .snapshot
        .issues
        .keys()
        .step_by(step)
        .take(50)
        .cloned()
        .collect();
    emulator.with_dataset(|ds| {
        for k in &keys {
            ds.update_issue(k, |i| i.title.push_str(" (edited)"));
        }
    });
    let later = now + chrono::Duration::hours(1);
    let t = Instant::now();
    match sync(&client, &repos, Some(&first.snapshot), later, &options) {
        Ok(o) => println!(
            "{:<34} {:>9} {:>9.2} {:>10}",
            format!(
                "incremental, {} changed ({} re-read)",
                keys.len(),
                o.refreshed
            ),
            client.request_count() - full_requests,
            t.elapsed().as_secs_f64(),
            peak_rss_mib()
        ),
        Err(e) => println!("incremental sync failed: {e}"),
    }
}
