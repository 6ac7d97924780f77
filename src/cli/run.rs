//! `commitea run`: the whole pipeline on a state repo.

use super::{CommandResult, ForecastArgs, StateArg, report, run_options};

/// `commitea run`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    #[command(flatten)]
    forecast: ForecastArgs,
    /// Skip sync and apply: forecast the committed snapshot.
    #[arg(long)]
    offline: bool,
    /// Do not commit the results.
    #[arg(long)]
    no_commit: bool,
    /// Resync every repository in full.
    #[arg(long)]
    full: bool,
}

/// Runs the pipeline and prints the site's front page.
pub fn run(a: Args) -> CommandResult {
    let mut opts = run_options(&a.state, &a.forecast);
    opts.offline = a.offline;
    opts.full_sync = a.full;
    opts.commit = !a.no_commit;
    opts.render = true;
    let summary = crate::pipeline::run(&opts)?;
    report(&summary);
    if let Some(index) = summary.site_index {
        println!("{}", index.display());
    }
    Ok(())
}
