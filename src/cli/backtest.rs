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

/// The fewest trials per forecast whose quantiles a coverage figure can be read from.
const MIN_SOUND_TRIALS: u32 = 100;

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
    // Each forecast's p10/p50/p80 are read off its trials: a handful makes them the same few draws, and
    // the coverage figures measure that coarseness, not the forecast (audit 73: 1 trial, "0% held").
    if c.backtest.trials.0 < MIN_SOUND_TRIALS {
        tracing::warn!(
            "{} trials per forecast make its p10, p50 and p80 coarse, and the coverage figures measure \
             that, not the forecast: give --trials {MIN_SOUND_TRIALS} or more (backtest.trials, default 500) \
             for figures to act on",
            c.backtest.trials.0
        );
    }
    let opts = crate::backtest::BacktestOptions::from_config(c);
    let report = crate::backtest::backtest(&repo.snapshot, c, repo.ledger.as_deref(), &opts);
    // An empty report written over a good one left the Calibration page a table of dashes, the reason only
    // on a terminal long closed; printed, it was a table of dashes too.
    if report.cuts == 0 {
        let need = i64::from(opts.min_history_days);
        let what_to_do = match crate::backtest::run::longest_horizon_days(&repo.snapshot, &opts) {
            Some(days) => format!(
                "give --horizon-days (or backtest.horizon_days) at most {days} (docs/forecasting.md)"
            ),
            // The day with the horizon in force, and the soonest with the shortest (audit 186: the
            // message named the day the shortest horizon needs, where the one in force still failed).
            None => match crate::backtest::rewind::first_cut(&repo.snapshot, opts.min_history_days)
            {
                Some(cut) => {
                    let margin = crate::backtest::rewind::END_MARGIN_DAYS;
                    let day =
                        |days: u32| (cut + chrono::Duration::days(i64::from(days))).date_naive();
                    format!(
                        "no horizon gives one yet: the first cut is {}; run it again from {} with the \
                         horizon in force ({} days), or from {} with --horizon-days {margin} \
                         (docs/forecasting.md)",
                        cut.date_naive(),
                        day(opts.horizon_days.max(margin)),
                        opts.horizon_days,
                        day(margin)
                    )
                }
                None => "the snapshot has no issues".to_owned(),
            },
        };
        return Err(CommandError::Input(format!(
            "no cut: a cut needs {need} days of history before it and its whole horizon ({} days) after it, \
             before the snapshot; {what_to_do}{}",
            opts.horizon_days,
            if a.write {
                format!("; {} is left as it was", crate::state::BACKTEST_FILE)
            } else {
                String::new()
            }
        )));
    }
    stalled_cuts(&report);
    if report.none_resolved() {
        tracing::warn!(
            "none of the {} targets scored was resolved: no issue closed within {} days after any cut, so \
             these figures say nothing about dates (a method that gives no date meets every range; the \
             Calibration page says so beside them)",
            report
                .methods
                .get(crate::backtest::run::COMMITEA)
                .map_or(0, |s| s.n),
            opts.horizon_days
        );
    }
    if a.write {
        let _lock = crate::state::lock::lock_state(repo.layout.root(), c)?;
        let rel = std::path::Path::new(crate::state::BACKTEST_FILE);
        let bytes = crate::state::to_json(&report, rel)?;
        crate::state::write_if_changed(&repo.layout.backtest_file(), &bytes)?;
        tracing::info!("wrote {}", rel.display());
    }
    super::print_json(&report, true)?;
    if !a.json {
        eprint!("{}", crate::backtest::run::table(&report));
    }
    Ok(())
}

/// Says how many cuts fall after the history's last activity: there nothing happens, and their scores
/// measure a project that stopped, not forecasts of a working one (audit 97: 161 of 243 cuts of a
/// Gitea-path backtest after the project's last activity, without a word). The report keeps the count,
/// and the Calibration page says it.
fn stalled_cuts(report: &crate::backtest::BacktestReport) {
    if let Some(last) = report
        .last_activity
        .filter(|_| report.cuts_after_last_activity > 0)
    {
        tracing::warn!(
            "{} of the {} cuts fall after the history's last activity ({}): nothing happens there, so \
             their scores measure a project that stopped, not forecasts of a working one (the Calibration \
             page says so beside them)",
            report.cuts_after_last_activity,
            report.cuts,
            last.date_naive()
        );
    }
}
