//! `commitea export`: the deterministic plan in another tool's format.

use std::path::PathBuf;

use anyhow::Context;

use super::{CommandResult, ForecastArgs, StateArg, env_vars};

/// The formats `commitea export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// TaskJuggler 3 (`tj3`): the median plan as a project with resources and tasks.
    Tjp,
}

/// `commitea export`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The format.
    #[arg(value_enum)]
    format: Format,
    #[command(flatten)]
    state: StateArg,
    #[command(flatten)]
    forecast: ForecastArgs,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
}

/// Writes the export to the file or stdout.
pub fn run(a: Args) -> CommandResult {
    let repo =
        crate::pipeline::RepoState::load(&a.state.state, env_vars(), &a.forecast.overrides())?;
    let mut plan = repo.replay(repo.as_of(a.forecast.now)).into_plan();
    // The people the committed forecast planned unassigned work for, as a run keeps them: without them
    // the export dealt that work out afresh (25 of the demo's 160 open issues to someone else).
    let committed = crate::pipeline::Committed::read(&repo.layout);
    let (kept, _) = committed.keeps(&repo.layout, &repo.config, &plan, repo.ledger.as_deref());
    plan.keep(
        &kept,
        committed
            .report()
            .map(crate::forecast::planned_people)
            .unwrap_or_default(),
    );
    // What the plan could not take (a dependency cycle's issues are left out of the export) is said by
    // the export, with the forecast's own warnings, once (audit 182: the plan's were said twice).
    let text = match a.format {
        Format::Tjp => crate::forecast::export_tjp(
            &plan,
            repo.config.forecast.horizon_days.0,
            &repo.config.site.title,
            "commitea",
        )?,
    };
    match a.output {
        Some(path) => {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{text}"),
    }
    Ok(())
}
