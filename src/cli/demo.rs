//! `commitea demo`: the bundled demo (or a generated project) as a state repo, run once.
//!
//! The bundled demo is written with a short history of its own, so that every page has something to
//! show: the import (with the PM's older directives), a first forecast, then the directives of the last
//! week, two op files left pending in the checkout, and a backtest; the run that follows draws the site,
//! whose standup then shows what the week's directives moved.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::{CommandResult, ForecastArgs, StateArg, report, run_options};
use crate::demo::DemoState;
use crate::pipeline::RunOptions;

/// `commitea demo`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to put the demo state repo.
    dir: Option<PathBuf>,
    /// Generate a project of this many issues instead of the bundled demo (for benchmarks), 1 to
    /// 200000 (a hundred million took gigabytes before it was stopped).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=200_000))]
    issues: Option<u32>,
    #[command(flatten)]
    forecast: ForecastArgs,
}

/// Writes the demo into the folder (unless it is already there), commits it, runs the pipeline offline and
/// prints the site's front page.
pub fn run(a: Args) -> CommandResult {
    let dir = a.dir.unwrap_or_else(|| PathBuf::from("commitea-demo"));
    let mut opts = run_options(&StateArg { state: dir.clone() }, &a.forecast);
    opts.commit = true;
    opts.render = true;
    set_up(&dir, a.issues.map(|n| n as usize), &opts)?;
    let summary = crate::pipeline::run(&opts)?;
    report(&summary);
    if let Some(index) = summary.site_index {
        println!("{}", index.display());
    }
    Ok(())
}

/// The heading the bundled demo's first recent directive starts with: the ledger before it is
/// what the import commit holds.
const LAST_WEEK: &str = "\n## D-0004 ";

fn set_up(dir: &Path, issues: Option<usize>, opts: &RunOptions) -> anyhow::Result<()> {
    if crate::config::Config::path_in(dir).exists() {
        tracing::info!("using the existing demo state repo in {}", dir.display());
        return Ok(());
    }
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        bail!(
            "{} exists and is not a CommiTea state repo; choose an empty or new folder",
            dir.display()
        );
    }
    // Built beside the folder and moved in, commitea.yaml last: a demo killed half-way left a folder
    // that the next `commitea demo` took for a finished one, or could not open (audit 88).
    let abs = std::path::absolute(dir)?;
    let name = abs.file_name().map_or_else(
        || "commitea-demo".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let partial = abs.with_file_name(format!(".{name}.commitea-partial"));
    if partial.exists() {
        tracing::info!(
            "removing {}, a demo an earlier run did not finish",
            partial.display()
        );
        std::fs::remove_dir_all(&partial)?;
    }
    std::fs::create_dir_all(&partial)?;
    let built = RunOptions {
        state_dir: partial.clone(),
        ..opts.clone()
    };
    build(&partial, issues, &built)?;
    std::fs::create_dir_all(dir)?;
    let config = crate::config::Config::path_in(&partial);
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&partial)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|p| *p == config);
    for from in entries {
        if let Some(n) = from.file_name() {
            std::fs::rename(&from, dir.join(n))?;
        }
    }
    std::fs::remove_dir(&partial)?;
    Ok(())
}

/// Writes, commits and runs the demo in `dir`.
fn build(dir: &Path, issues: Option<usize>, opts: &RunOptions) -> anyhow::Result<()> {
    let spec = issues.map_or_else(
        crate::demo::DemoSpec::bundled,
        crate::demo::DemoSpec::scaled,
    );
    tracing::info!(
        "generating the demo ({} issues) in {}",
        spec.issues,
        dir.display()
    );
    // The bundled demo comes with its project management: directives, applied and pending op files.
    let state = match issues {
        None => crate::demo::bundled(),
        Some(_) => crate::demo::generate(&spec),
    };
    crate::demo::write_committed(&state, dir)?;
    let (earlier, _) = state
        .ledger
        .split_once(LAST_WEEK)
        .unwrap_or((state.ledger.as_str(), ""));
    let week = issues.is_none() && earlier.len() < state.ledger.len();
    if week {
        let layout = crate::state::Layout::new(dir);
        std::fs::write(layout.ledger(), format!("{earlier}\n"))?;
        // Gitea as it was before the week's directives were carried out.
        if let Some((before, files)) = &state.before_last_week {
            before.save(&layout)?;
            for rel in files {
                std::fs::remove_file(dir.join(rel))?;
            }
        }
    }
    let repo = crate::state::git::open_or_init(dir)?;
    let sig = crate::state::git::Signature {
        name: state.config.commit.name.clone(),
        email: state.config.commit.email.clone(),
        time: spec.now,
    };
    let site = state.config.site.output.to_string_lossy().into_owned();
    crate::state::git::commit_all(
        &repo,
        &[&site],
        "Import the CommiTea demo state\n\nGenerated by `commitea demo`: a snapshot of a fictional team's issues.\n",
        &sig,
    )?;
    if week {
        last_week(dir, &state, opts, &repo, &sig, &site)?;
    }
    // Pending op files stay in the checkout, as a proposal not yet approved does; they are filed
    // through `apply_changes`, as an agent files them, so each carries its computed consequence.
    file_pending(dir, &state, opts)?;
    if issues.is_none() {
        backtest(dir)?;
    }
    Ok(())
}

/// The bundled demo's last week: a forecast committed before the PM's latest directives, then the
/// directives, so that the standup has something that moved.
fn last_week(
    dir: &Path,
    state: &DemoState,
    opts: &RunOptions,
    repo: &gix::Repository,
    sig: &crate::state::git::Signature,
    site: &str,
) -> anyhow::Result<()> {
    let first = RunOptions {
        render: false,
        ..opts.clone()
    };
    crate::pipeline::run(&first)?;
    let layout = crate::state::Layout::new(dir);
    std::fs::write(layout.ledger(), &state.ledger)?;
    // Their pull requests merged, a run carried them out on Gitea and synced what it changed.
    if state.before_last_week.is_some() {
        crate::demo::write_committed(state, dir)?;
    }
    crate::state::git::commit_all(
        repo,
        &[site],
        "Record the PM's latest directives\n\nA re-estimate, a scope cut, a new hire's hours and a note, approved and carried out on Gitea (`commitea demo`).\n",
        sig,
    )?;
    Ok(())
}

/// Files the demo's pending changes through the `apply_changes` tool, each at its own time and by its
/// own person, so the Changes page shows what each would move.
fn file_pending(dir: &Path, state: &DemoState, opts: &RunOptions) -> anyhow::Result<()> {
    for f in &state.pending {
        let at = chrono::DateTime::parse_from_rfc3339(&f.created_at)?.with_timezone(&chrono::Utc);
        let ctx = crate::tools::Context {
            clock: Some(at),
            by: f.by.clone(),
            overrides: opts.overrides.clone(),
            as_of: opts.now,
            ..crate::tools::Context::new(dir)
        };
        let input = crate::tools::apply::ApplyInput {
            ops: f.ops.clone(),
            approved: f.destructive,
            preview: false,
            source: None,
        };
        let out = crate::tools::apply::apply_changes(&ctx, input)?;
        if !out.rejected.is_empty() {
            bail!(
                "the demo's pending change {} was rejected: {:?}",
                f.id,
                out.rejected
            );
        }
    }
    Ok(())
}

/// Backtests the demo with its config's settings (as `commitea backtest --write` does) and writes
/// `forecast/backtest.json`, so that the calibration page shows the demo's own history scored.
fn backtest(dir: &Path) -> anyhow::Result<()> {
    let repo = crate::pipeline::RepoState::load(
        dir,
        super::env_vars(),
        &crate::config::Overrides::default(),
    )?;
    let opts = crate::backtest::BacktestOptions::from_config(&repo.config);
    let t = std::time::Instant::now();
    let report =
        crate::backtest::backtest(&repo.snapshot, &repo.config, repo.ledger.as_deref(), &opts);
    tracing::info!("backtest: {} cuts in {:.0?}", report.cuts, t.elapsed());
    let rel = Path::new(crate::state::BACKTEST_FILE);
    let bytes = crate::state::to_json(&report, rel)?;
    crate::state::write_if_changed(&repo.layout.backtest_file(), &bytes)?;
    Ok(())
}
