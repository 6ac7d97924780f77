//! `commitea backtest`: replay the state's own history and score the forecasts.

use super::{CommandError, CommandResult, StateArg, env_vars};
use crate::config::Overrides;

/// `commitea backtest`'s arguments; each overrides its `backtest.*` (or `forecast.seed`) setting.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    /// Days between cuts (`backtest.every_days`, default 28).
    #[arg(long)]
    every_days: Option<u32>,
    /// Monte Carlo trials per method and cut (`backtest.trials`, default 500).
    #[arg(long)]
    trials: Option<u32>,
    /// The seed (`forecast.seed`); default 1.
    #[arg(long)]
    seed: Option<u64>,
    /// Days after a cut forecast and scored (`backtest.horizon_days`); default: the abandonment window
    /// (`forecast.abandonment_days`, at most `forecast.horizon_days`).
    #[arg(long)]
    horizon_days: Option<u32>,
    /// Print only the JSON report (no table on stderr).
    #[arg(long)]
    json: bool,
    /// Also write the report to forecast/backtest.json, where the calibration view and page publish it
    /// (the next `commitea run` commits it).
    #[arg(long)]
    write: bool,
}

/// Runs the backtest, prints the report (and a table on stderr), writes it with `--write`.
pub fn run(a: Args) -> CommandResult {
    let mut overrides = Overrides {
        seed: a.seed,
        ..Overrides::default()
    };
    if let Some(t) = a.trials {
        overrides.keys.push(("backtest.trials", t.to_string()));
    }
    if let Some(d) = a.every_days {
        overrides.keys.push(("backtest.every_days", d.to_string()));
    }
    if let Some(h) = a.horizon_days {
        overrides
            .keys
            .push(("backtest.horizon_days", h.to_string()));
    }
    let repo = match crate::pipeline::RepoState::load(&a.state.state, env_vars(), &overrides) {
        Err(crate::pipeline::PipelineError::Config(e)) => {
            return Err(CommandError::Input(e.to_string()));
        }
        other => other?,
    };
    let c = &repo.config;
    let defaults = crate::backtest::BacktestOptions::default();
    let opts = crate::backtest::BacktestOptions {
        every_days: c.backtest.every_days.0,
        trials: c.backtest.trials.0,
        seed: c.forecast.seed.unwrap_or(defaults.seed),
        horizon_days: c.backtest.horizon_days.map_or_else(
            || c.forecast.abandonment_days.0.min(c.forecast.horizon_days.0),
            |h| h.0,
        ),
        ..defaults
    };
    let report = crate::backtest::backtest(&repo.snapshot, c, repo.ledger.as_deref(), &opts);
    if a.write {
        let _lock = crate::state::lock::lock_state(repo.layout.root(), c, chrono::Utc::now())?;
        let rel = std::path::Path::new(crate::state::BACKTEST_FILE);
        let bytes = crate::state::to_json(&report, rel)?;
        crate::state::write_if_changed(&repo.layout.backtest_file(), &bytes)?;
        tracing::info!("wrote {}", rel.display());
    }
    println!("{}", serde_json::to_string_pretty(&report)?);
    if !a.json {
        eprint!("{}", crate::backtest::run::table(&report));
    }
    Ok(())
}
