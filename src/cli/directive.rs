//! `commitea directive`: record a PM directive and print its consequence — or, with `--say`, have the big
//! model draft it from the PM's words, show the draft and its consequence, and record it when confirmed;
//! with `--carry-out`, propose the Gitea changes of a directive already in force that Gitea does not carry.

use super::{CommandError, CommandResult, ForecastArgs, StateArg, env_vars};
use crate::ledger::format::DirectiveKind;
use crate::ledger::record::{RecordInput, RecordOptions, RecordTarget};

impl clap::ValueEnum for DirectiveKind {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

/// `commitea directive`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    /// The kind of directive.
    #[arg(long, value_enum, required_unless_present_any = ["say", "carry_out"])]
    kind: Option<DirectiveKind>,
    /// The PM's words, verbatim.
    #[arg(long, required_unless_present_any = ["say", "carry_out"])]
    quote: Option<String>,
    /// Instead of recording one: write the op file that makes Gitea carry D-ID, a directive in force
    /// whose change Gitea does not have (written into the ledger by hand, or changed back on Gitea since;
    /// the run warns of it), through `apply_changes`. Prints its answer; `commitea propose` sends it.
    #[arg(
        long,
        value_name = "ID",
        conflicts_with_all = ["kind", "quote", "say", "target", "params", "rationale"]
    )]
    carry_out: Option<String>,
    /// Instead of the fields: what the PM said, for the big model to draft the directive from (see
    /// docs/models.md). The draft and its consequence are shown on stderr, and it is recorded once
    /// confirmed (a `y` line on stdin, or `--yes`).
    #[arg(long, conflicts_with_all = ["kind", "quote", "target", "params"])]
    say: Option<String>,
    /// With `--say`: record the draft without asking (a directive given by its fields is never asked
    /// about, so scripts may pass it always).
    #[arg(long)]
    yes: bool,
    /// `issue owner/repo#N` (or just `owner/repo#N`; `#N` with one repository configured), `milestone ID`, `milestone TITLE` or `member
    /// USERNAME`.
    #[arg(long)]
    target: Option<String>,
    /// The params as JSON, e.g. '{"priority": 0}'.
    #[arg(long)]
    params: Option<String>,
    /// Why, on one line.
    #[arg(long)]
    rationale: Option<String>,
    /// Who gave the directive (a Gitea username).
    #[arg(long, value_parser = super::parse_by)]
    by: Option<String>,
    /// The consequence's day zero, seed and trials; `--now` also stamps the entry.
    #[command(flatten)]
    forecast: ForecastArgs,
}

/// Records the directive and prints its consequence (JSON).
pub fn run(a: Args) -> CommandResult {
    if let Some(say) = a.say.clone() {
        return negotiate(a, &say);
    }
    if let Some(id) = a.carry_out.clone() {
        return carry_out(&a, &id);
    }
    let params = match a.params.as_deref().map(serde_json::from_str) {
        None => None,
        Some(Ok(v)) => Some(v),
        Some(Err(e)) => {
            return Err(CommandError::Input(format!(
                "invalid params: not JSON: {e}"
            )));
        }
    };
    let input = RecordInput {
        kind: a.kind.map(|k| k.as_str().to_owned()).unwrap_or_default(),
        quote: a.quote.clone().unwrap_or_default(),
        target: a.target.as_deref().map(RecordTarget::parse_cli),
        params,
        rationale: a.rationale.clone(),
        by: a.by.clone(),
    };
    record(&a.state.state, &input, &options(&a)).map(drop)
}

/// The stamp, settings and day zero the flags give.
fn options(a: &Args) -> RecordOptions {
    RecordOptions {
        clock: a.forecast.now.unwrap_or_else(chrono::Utc::now),
        env: env_vars(),
        overrides: a.forecast.overrides(),
        as_of: a.forecast.now,
        model: false,
        cancel: crate::state::Cancel::default(),
    }
}

/// Writes the op file that carries out the directive `id` and prints `apply_changes`' answer.
fn carry_out(a: &Args, id: &str) -> CommandResult {
    let ops = match crate::ledger::record::carry_out_ops(&a.state.state, id, &options(a)) {
        Ok(ops) => ops,
        Err(e) if e.is_input() => return Err(CommandError::Input(e.to_string())),
        Err(e) => return Err(CommandError::Failed(e.into())),
    };
    let ctx = super::tool::context(&a.state, a.by.clone(), None, &a.forecast);
    let answer = crate::tools::call(
        &ctx,
        crate::tools::APPLY_CHANGES,
        &serde_json::json!({ "ops": ops }),
    )
    .map_err(super::tool_error)?;
    super::print_json(&answer, true)?;
    Ok(())
}

/// Records `input` and prints the consequence.
fn record(
    state: &std::path::Path,
    input: &RecordInput,
    options: &RecordOptions,
) -> Result<String, CommandError> {
    match crate::ledger::record::record_directive(state, input, options) {
        Ok(out) => {
            super::warn_all(&out.ledger_problems);
            super::print_json(&out, true)?;
            Ok(out.directive_id)
        }
        Err(e) if e.is_input() => Err(CommandError::Input(e.to_string())),
        Err(e) => Err(CommandError::Failed(e.into())),
    }
}

/// `--say`: the big model drafts, CommiTea checks and shows the consequence, the PM confirms.
fn negotiate(a: Args, say: &str) -> CommandResult {
    use std::io::{BufRead, Write};
    let ctx = super::tool::context(&a.state, a.by.clone(), None, &a.forecast);
    let n = match crate::model::negotiate::negotiate(&ctx, say) {
        Ok(n) => n,
        Err(e) if e.is_input() => return Err(CommandError::Input(e.to_string())),
        Err(e) => return Err(CommandError::Failed(e.into())),
    };
    let mut draft = n.draft;
    if a.rationale.is_some() {
        draft.rationale.clone_from(&a.rationale);
    }
    // Titles in the consequence and the model's words come from people who can write on Gitea: one
    // line each, no escape sequence reaches the terminal while the PM decides.
    let one_line = crate::prose::one_line;
    eprintln!(
        "Draft {}: {} {}{}\n  quote: \"{}\"{}\n  consequence: {}",
        n.preview.directive_id,
        draft.kind,
        draft
            .target
            .as_ref()
            .and_then(|t| serde_json::to_string(t).ok())
            .unwrap_or_default(),
        draft
            .params
            .as_ref()
            .map_or_else(String::new, |p| format!(" {p}")),
        one_line(&draft.quote),
        draft
            .rationale
            .as_deref()
            .map_or_else(String::new, |r| format!("\n  rationale: {}", one_line(r))),
        one_line(&n.preview.summary)
    );
    // What moved (the summary says the rest).
    for pair in n
        .preview
        .consequence
        .iter()
        .filter(|p| p.moved_working_days != 0)
        .take(10)
    {
        eprintln!(
            "  {}: p80 {}",
            one_line(&pair.subject),
            crate::prose::working_days_moved(pair.moved_working_days)
        );
    }
    let confirmed = a.yes || {
        eprint!("Record it? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        matches!(line.trim().to_lowercase().as_str(), "y" | "yes")
    };
    if !confirmed {
        eprintln!("Not recorded.");
        super::print_json(
            &serde_json::json!({
                "recorded": false, "draft": draft, "summary": n.preview.summary}),
            true,
        )?;
        return Ok(());
    }
    let drafted = RecordOptions {
        model: true,
        ..options(&a)
    };
    let id = record(&a.state.state, &draft, &drafted)?;
    eprintln!("Recorded {id} in pm-state.md.");
    Ok(())
}
