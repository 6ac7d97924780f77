//! Site benchmark: the bundled demo and the demo generator's 5,000-issue project (25 people, 8
//! milestones), forecast offline, then the whole site rendered in memory. Prints the render's wall time,
//! the number of files, the total weight and the heaviest pages, and checks the budgets of docs/site.md:
//! no page over 500 KB, the render under 2 s (exits non-zero when one is broken).
//!
//! Run: `cargo bench --bench site` (add `-- --quick` for the bundled demo only).

use std::time::Instant;

use chrono::Utc;
use commitea::demo::{DemoSpec, DemoState, generate, write};
use commitea::pipeline::{RunOptions, compute, site_files};
use commitea::state::Layout;

/// The heaviest page allowed, in bytes.
const PAGE_BUDGET: usize = 500 * 1024;
/// The longest render allowed, in seconds.
const RENDER_BUDGET: f64 = 2.0;

/// Renders `spec`'s site; prints one line per figure; returns whether the budgets hold.
fn measure(name: &str, spec: &DemoSpec, state: &DemoState) -> bool {
    let dir = std::env::temp_dir().join(format!("commitea-site-bench-{}", spec.issues));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = write(state, &dir) {
        eprintln!("{name}: cannot write the demo: {e}");
        return false;
    }
    let opts = RunOptions {
        state_dir: dir.clone(),
        now: None,
        clock: Utc::now(),
        offline: true,
        full_sync: false,
        token: None,
        server_fallback: None,
        overrides: Default::default(),
        env: Vec::new(),
        commit: false,
        render: true,
        applied_before: Vec::new(),
        skip_ci: false,
    };
    let t = Instant::now();
    let computed = match compute(&opts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{name}: forecast failed: {e}");
            return false;
        }
    };
    let forecast = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let files = match site_files(&computed, &Layout::new(&dir), None) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{name}: render failed: {e}");
            return false;
        }
    };
    let render = t.elapsed().as_secs_f64();
    let total: usize = files.values().map(Vec::len).sum();
    let mut by_size: Vec<(&String, usize)> = files.iter().map(|(n, b)| (n, b.len())).collect();
    by_size.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    println!(
        "{name}: {} issues; forecast {forecast:.2} s; render {render:.2} s; {} files, {:.1} MB in all",
        spec.issues,
        files.len(),
        total as f64 / 1e6
    );
    for page in [
        "index.html",
        "board.html",
        "runway.html",
        "changes.html",
        "standup.html",
        "roadmap.html",
        "calibration.html",
        "search-index.js",
    ] {
        if let Some(b) = files.get(page) {
            println!("  {page}: {} KB", b.len() / 1024);
        }
    }
    for (n, len) in by_size.iter().take(3) {
        println!("  heaviest: {n}: {} KB", len / 1024);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let heaviest = by_size.first().map_or(0, |x| x.1);
    let ok = heaviest <= PAGE_BUDGET && render <= RENDER_BUDGET;
    if !ok {
        println!(
            "  OVER BUDGET: heaviest {} KB (budget {} KB), render {render:.2} s (budget {RENDER_BUDGET} s)",
            heaviest / 1024,
            PAGE_BUDGET / 1024
        );
    }
    ok
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // The bundled demo as `commitea demo` writes it: directives and op files included.
    let mut ok = measure(
        "bundled demo",
        &DemoSpec::bundled(),
        &commitea::demo::bundled(),
    );
    if !quick {
        let spec = DemoSpec::scaled(5000);
        ok &= measure("5,000 issues", &spec, &generate(&spec));
    }
    if !ok {
        std::process::exit(1);
    }
}
