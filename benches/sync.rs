//! Sync benchmark against the Gitea emulator on loopback (answering as Gitea 1.27 does, nulls included):
//!
//! - a full sync of the generator's 5,000-issue project, then an incremental re-sync after 50 issues changed;
//! - a full sync of a 2,717-issue project (the size of three real repositories) with 300 ms of latency on
//!   every answer, as from a server across an ocean;
//! - the time a sync takes to give up when the server goes down for good partway through.
//!
//! Each prints requests, requests per issue, wall time, the most requests in flight at once and peak memory
//! (of the whole process, the emulator's copy of the data included), and checks that the synced snapshot is
//! the one the emulator serves.
//!
//! Run: `cargo bench --bench sync` (`-- --issues N`, `-- --slow-issues N`, `-- --latency-ms N` to change the
//! sizes; `-- --quick` skips the slow sync).

use std::time::{Duration, Instant};

use commitea::demo::{DemoSpec, generate};
use commitea::gitea::client::{Client, ClientOptions};
use commitea::gitea::sync::{SyncOptions, sync};
use commitea::state::Snapshot;
use commitea_testkit::gitea::{Dataset, Emulator, EmulatorOptions, Fault, FaultKind};

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

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Whether the synced snapshot holds what the emulator serves.
fn same(a: &Snapshot, b: &Snapshot) -> &'static str {
    if a.labels == b.labels && a.milestones == b.milestones && a.issues == b.issues {
        "yes"
    } else {
        "NO"
    }
}

fn row(what: &str, requests: u64, issues: usize, wall: Duration, peak: usize, same: &str) {
    println!(
        "{:<44} {:>9} {:>8.2} {:>9.1} {:>6} {:>9} {:>6}",
        what,
        requests,
        requests as f64 / issues.max(1) as f64,
        wall.as_secs_f64(),
        peak,
        peak_rss_mib(),
        same
    );
}

fn start(snapshot: &Snapshot, latency: Duration) -> Option<(Emulator, Client)> {
    let options = EmulatorOptions {
        latency,
        ..EmulatorOptions::default()
    };
    let token = options.token.clone();
    let emulator = Emulator::start(Dataset::from_snapshot(snapshot), options).ok()?;
    let max_parallel = std::env::var("MAX_PARALLEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ClientOptions::default().max_parallel);
    let client_options = ClientOptions {
        max_parallel,
        ..ClientOptions::default()
    };
    let client = Client::new(&emulator.url(), Some(token), client_options).ok()?;
    Some((emulator, client))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let issues = arg(&args, "--issues", 5_000) as usize;
    let slow_issues = arg(&args, "--slow-issues", 2_717) as usize;
    let latency = Duration::from_millis(arg(&args, "--latency-ms", 300));
    let quick = args.iter().any(|a| a == "--quick");

    println!(
        "{:<44} {:>9} {:>8} {:>9} {:>6} {:>9} {:>6}",
        "sync", "requests", "per iss.", "wall s", "at once", "peak MiB", "same"
    );
    let state = generate(&DemoSpec::scaled(issues));
    let repos = state.config.repositories.clone();
    let now = state.snapshot.meta.synced_at;
    let options = SyncOptions::default();
    let Some((emulator, client)) = start(&state.snapshot, Duration::ZERO) else {
        println!("cannot start the emulator");
        return;
    };
    let t = Instant::now();
    let first = match sync(&client, &repos, None, now, &options) {
        Ok(o) => o,
        Err(e) => {
            println!("full sync failed: {e}");
            return;
        }
    };
    let full_requests = client.request_count();
    row(
        &format!("full, {} issues, 0 ms", first.snapshot.issues.len()),
        full_requests,
        first.snapshot.issues.len(),
        t.elapsed(),
        client.peak_parallel(),
        same(&first.snapshot, &state.snapshot),
    );

    for (pattern, n) in emulator.counts() {
        println!("    {n:>7}  {pattern}");
    }

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
        Ok(o) => row(
            &format!(
                "incremental, {} changed ({} re-read)",
                keys.len(),
                o.refreshed
            ),
            client.request_count() - full_requests,
            keys.len(),
            t.elapsed(),
            client.peak_parallel(),
            "",
        ),
        Err(e) => println!("incremental sync failed: {e}"),
    }
    drop(emulator);

    // A permanent outage partway through a full sync: every request after the first second fails.
    if let Some((emulator, client)) = start(&state.snapshot, Duration::ZERO) {
        let t = Instant::now();
        let outage = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(500));
                emulator.inject(Fault::new(FaultKind::Status(503)).times(usize::MAX));
            });
            sync(&client, &repos, None, now, &options)
        });
        match outage {
            Ok(_) => println!("outage: the sync finished before the server went down"),
            Err(e) => {
                let total = t.elapsed();
                println!(
                    "outage after 0.5 s: gave up after {:.1} s in all, {:.1} s after the outage began, \
                     {} requests; said: {e}",
                    total.as_secs_f64(),
                    total
                        .saturating_sub(Duration::from_millis(500))
                        .as_secs_f64(),
                    client.request_count()
                );
            }
        }
    }

    if quick {
        return;
    }
    let slow = generate(&DemoSpec::scaled(slow_issues));
    let repos = slow.config.repositories.clone();
    let Some((_emulator, client)) = start(&slow.snapshot, latency) else {
        println!("cannot start the emulator");
        return;
    };
    let t = Instant::now();
    match sync(
        &client,
        &repos,
        None,
        slow.snapshot.meta.synced_at,
        &options,
    ) {
        Ok(o) => row(
            &format!(
                "full, {} issues, {} ms",
                o.snapshot.issues.len(),
                latency.as_millis()
            ),
            client.request_count(),
            o.snapshot.issues.len(),
            t.elapsed(),
            client.peak_parallel(),
            same(&o.snapshot, &slow.snapshot),
        ),
        Err(e) => println!("slow full sync failed: {e}"),
    }
}
