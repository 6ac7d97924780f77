//! `commitea render`: the whole site redrawn from the state repo, offline, as `commitea run` draws it.

use super::{CommandResult, ForecastArgs, StateArg, run_options};
use crate::state::Layout;

/// `commitea render`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    #[command(flatten)]
    forecast: ForecastArgs,
}

/// Reads the state as an offline run does (the snapshot, the ledger on the branch, the committed
/// forecast's day), forecasts in memory and renders every page into `site.output`; writes nothing else
/// and commits nothing. Prints the front page's path.
pub fn run(a: Args) -> CommandResult {
    let mut opts = run_options(&a.state, &a.forecast);
    // `commit` makes the forecast read the ledger on the branch, as a run does; nothing is committed here.
    opts.commit = true;
    opts.render = true;
    let layout = Layout::new(&a.state.state);
    let _lock = crate::pipeline::lock(&opts, &layout)?;
    let computed = crate::pipeline::compute(&opts)?;
    // Another day than the committed forecast's (`--now`) is a preview: every page says so, since the
    // tools, the standup and the next run read the committed one.
    let preview = crate::pipeline::Committed::read(&layout)
        .report()
        .map(|r| r.as_of)
        .filter(|committed| *committed != computed.report.as_of)
        .map(|committed| {
            format!(
                "A preview as of {} (commitea render --now): the committed forecast, which the tools, the \
                 standup and the next run read, is as of {committed}.",
                computed.report.as_of
            )
        });
    let files = crate::pipeline::site_files(&computed, &layout, preview)?;
    let out = layout.root().join(&computed.config.site.output);
    crate::site::write(&files, &out)?;
    println!("{}", out.join("index.html").display());
    Ok(())
}
