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
    let kept = crate::pipeline::settings_kept(&opts, &layout)?;
    // Another day, seed or number of trials than the committed forecast's is a preview: every page says
    // so (audit 169: after `run --seed 7`, every page redrawn with the default seed, and no word of it).
    let preview = crate::pipeline::Committed::read(&layout)
        .report()
        .and_then(|committed| {
            let now = &computed.report;
            let mut differs = Vec::new();
            // What differs, and the flag that draws the committed one (audit 170: "(--seed)" of a
            // render given none).
            if committed.as_of != now.as_of {
                differs.push(format!(
                    "as of {}, the committed forecast as of {} (--now {} draws it)",
                    now.as_of, committed.as_of, committed.as_of
                ));
            }
            if committed.seed != now.seed {
                differs.push(format!(
                    "with {}, the committed forecast with {} (--seed {} draws it)",
                    crate::forecast::seed_words(now.seed),
                    crate::forecast::seed_words(committed.seed),
                    committed.seed
                ));
            }
            if committed.trials != now.trials {
                differs.push(format!(
                    "with {} trials, the committed forecast with {} (--trials {} draws it)",
                    now.trials, committed.trials, committed.trials
                ));
            }
            // The committed one is what the tools and the standup read, unless its run was given a
            // seed or trials the settings do not keep: then they draw as the settings say (audit 177:
            // this note said they read the committed one).
            let readers = if committed.seed == kept.seed && committed.trials == kept.trials {
                "the tools, the standup and the next run read the committed one"
            } else {
                "the committed one was drawn with flags its run was given, and the tools and the next \
                 run draw with the settings (commitea.yaml)"
            };
            (!differs.is_empty()).then(|| {
                format!(
                    "A preview (commitea render) {}: {readers}.",
                    crate::prose::and_list(&differs)
                )
            })
        });
    let files = crate::pipeline::site_files(&computed, &layout, preview)?;
    let out = layout.root().join(&computed.config.site.output);
    crate::site::write(&files, &out)?;
    println!("{}", out.join("index.html").display());
    Ok(())
}
