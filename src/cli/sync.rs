//! `commitea sync`: read Gitea into `snapshot/` and commit it, without forecasting.

use super::{CommandResult, ForecastArgs, StateArg, report, run_options};

/// `commitea sync`'s arguments: no forecast, so no seed or trials.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    /// Resync every repository in full.
    #[arg(long)]
    full: bool,
    /// Do not commit the snapshot.
    #[arg(long)]
    no_commit: bool,
}

/// Syncs and commits the snapshot.
pub fn run(a: Args) -> CommandResult {
    let mut opts = run_options(&a.state, &ForecastArgs::default());
    opts.offline = false;
    opts.full_sync = a.full;
    opts.commit = !a.no_commit;
    let summary = crate::pipeline::sync_only(&opts)?;
    report(&summary);
    Ok(())
}
