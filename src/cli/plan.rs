//! `commitea plan`: replay and forecast offline; write `forecast/` and print the runway.

use super::{CommandResult, ForecastArgs, StateArg, run_options};
use crate::state::Layout;

/// `commitea plan`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    #[command(flatten)]
    forecast: ForecastArgs,
    /// Print forecast.json instead of the table.
    #[arg(long)]
    json: bool,
}

/// Forecasts, writes `forecast/`, prints the runway (or the report as JSON).
pub fn run(a: Args) -> CommandResult {
    let opts = run_options(&a.state, &a.forecast);
    let layout = Layout::new(&a.state.state);
    let _lock = crate::pipeline::lock(&opts, &layout)?;
    let computed = crate::pipeline::compute(&opts)?;
    super::warn_all(&computed.report.warnings);
    // `plan` previews the checkout's ledger, `run` forecasts the branch's: say when they differ.
    if layout.root().join(".git").exists() {
        // The checkout's ledger is the one the preview replayed: read once (a second read warned twice
        // about the same non-UTF-8 line).
        let new = crate::pipeline::entries_not_on_branch(
            computed.ledger.as_deref(),
            crate::pipeline::branch_ledger(&layout)?.as_deref(),
        );
        if !new.is_empty() {
            tracing::info!(
                "a preview: this plan includes {} from pm-state.md that the branch does not have yet; \
                 `commitea run` forecasts the branch's ledger, without {} until {} committed (or proposed \
                 and merged)",
                crate::prose::and_list(&new),
                if new.len() == 1 { "it" } else { "them" },
                if new.len() == 1 { "it is" } else { "they are" }
            );
        }
    }
    let mut changed = 0;
    for (rel, bytes) in crate::pipeline::forecast_files(&computed)? {
        changed += usize::from(crate::state::write_if_changed(
            &layout.root().join(rel),
            &bytes,
        )?);
    }
    // `forecast/` is committed by `commitea run`: left changed in a clone, it makes `git pull` refuse.
    if changed > 0 && layout.root().join(".git").exists() {
        tracing::info!(
            "wrote {changed} file(s) in forecast/ without committing them: a preview of this checkout, \
             its uncommitted directives and op files included, which the tools read until the next run; \
             `commitea run --offline` forecasts what is committed and commits that, `git checkout -- \
             forecast` drops them (a `git pull` refuses while they differ)"
        );
    }
    if a.json {
        super::print_json(&computed.report, true)?;
    } else {
        let days = (computed.report.horizon - computed.report.as_of).num_days();
        print_runway(
            &computed.runway,
            &crate::site::text::horizon_words(u32::try_from(days).unwrap_or(0)),
        );
    }
    Ok(())
}

fn print_runway(r: &crate::views::Runway, horizon_words: &str) {
    // The title column is as wide as the longest title, up to a limit past which a title is cut with "…".
    const MAX_TITLE: usize = 40;
    let names = crate::plan::milestone_names(
        r.milestones
            .iter()
            .map(|m| (m.milestone, m.title.as_str(), m.repo.clone())),
    );
    let name = |m: &crate::views::runway::RunwayMilestone| {
        names.get(&m.milestone).cloned().unwrap_or_default()
    };
    // Widths in terminal columns: a Japanese title's characters take two each (audit 95).
    let width = r
        .milestones
        .iter()
        .map(|m| crate::prose::columns(&crate::prose::one_line(&name(m))))
        .max()
        .unwrap_or(0)
        .clamp("milestone".len(), MAX_TITLE);
    // A title is anyone's on Gitea: a newline or an escape sequence in it would break the table, or
    // the terminal, so each is one line of plain text, cut and padded to the column.
    let cut = |t: &str| crate::prose::fit_columns(&crate::prose::one_line(t), width, true);
    // The site's words: "not within 2 years", said once for a range, one date when both ends agree.
    let not_within = format!("not within {horizon_words}");
    let band = |p50: &str, p80: &str| {
        crate::site::pages::band_label(p50, p80)
            .replace(crate::site::pages::NOT_WITHIN, &not_within)
    };
    let bands: Vec<String> = r
        .milestones
        .iter()
        .map(|m| {
            m.band
                .as_ref()
                .map_or_else(|| m.status.label().to_owned(), |b| band(&b.p50, &b.p80))
        })
        .collect();
    let band_width = bands
        .iter()
        .map(|b| b.chars().count())
        .max()
        .unwrap_or(0)
        .max("p50 – p80".chars().count());
    println!("as of {}", r.as_of);
    println!(
        "{:<width$} {:>10} {:>band_width$} {:>9} {:>7}",
        "milestone", "due", "p50 – p80", "P(due)", "slack"
    );
    for (m, b) in r.milestones.iter().zip(&bands) {
        println!(
            "{} {:>10} {:>band_width$} {:>9} {:>7}",
            cut(&name(m)),
            m.due.as_deref().unwrap_or("-"),
            b,
            m.probability_on_time
                .map_or_else(|| "-".to_owned(), crate::prose::percent),
            m.slack.map_or_else(
                // No slack to state (p80 beyond the horizon) and the due date gone: said (audit 102).
                || if m.overdue { "overdue" } else { "-" }.to_owned(),
                crate::prose::signed
            ),
        );
        // The line above is the work that stays when the abandonment model says which issues leave.
        if let Some(p) = &m.planned {
            println!(
                "  (the work that stays; all planned work: {}{})",
                band(&p.p50, &p.p80),
                m.expected_leaving
                    .map(|n| format!(", {}", crate::site::pages::leaving_words(n, m.open_issues)))
                    .unwrap_or_default()
            );
        }
    }
}
