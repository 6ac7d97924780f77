//! `commitea directive`: record a PM directive and print its consequence.

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
    #[arg(long, value_enum)]
    kind: DirectiveKind,
    /// The PM's words, verbatim.
    #[arg(long)]
    quote: String,
    /// `issue owner/repo#N` (or just `owner/repo#N`, `#N`), `milestone ID` or `member USERNAME`.
    #[arg(long)]
    target: Option<String>,
    /// The params as JSON, e.g. '{"priority": 0}'.
    #[arg(long)]
    params: Option<String>,
    /// Why, on one line.
    #[arg(long)]
    rationale: Option<String>,
    /// Who gave the directive (a Gitea username).
    #[arg(long)]
    by: Option<String>,
    /// The consequence's day zero, seed and trials; `--now` also stamps the entry.
    #[command(flatten)]
    forecast: ForecastArgs,
}

/// Records the directive and prints its consequence (JSON).
pub fn run(a: Args) -> CommandResult {
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
        kind: a.kind.as_str().to_owned(),
        quote: a.quote,
        target: a.target.as_deref().map(RecordTarget::parse_cli),
        params,
        rationale: a.rationale,
        by: a.by,
    };
    let options = RecordOptions {
        clock: a.forecast.now.unwrap_or_else(chrono::Utc::now),
        env: env_vars(),
        overrides: a.forecast.overrides(),
        as_of: a.forecast.now,
    };
    match crate::ledger::record::record_directive(&a.state.state, &input, &options) {
        Ok(out) => {
            println!("{}", serde_json::to_string_pretty(&out)?);
            Ok(())
        }
        Err(e) if e.is_input() => Err(CommandError::Input(e.to_string())),
        Err(e) => Err(CommandError::Failed(e.into())),
    }
}
