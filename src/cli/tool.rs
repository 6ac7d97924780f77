//! `commitea tool`: one agent tool call from the command line.

use std::io::Read;

use chrono::{DateTime, Utc};

use super::{CommandError, CommandResult, ForecastArgs, StateArg, env_vars};

/// `commitea tool`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    /// The tool's name.
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// The input as JSON; `-` or absent reads it from stdin.
    input: Option<String>,
    /// Print the tools with their input and output JSON Schemas instead (the MCP `tools/list` shape).
    #[arg(long, conflicts_with_all = ["name", "input"])]
    list: bool,
    /// Who is asking (a Gitea username), written into op files and directives.
    #[arg(long, value_parser = super::parse_by)]
    by: Option<String>,
    /// Use this time (RFC 3339) as the wall clock, for reproducible op files and ledger entries.
    #[arg(long, hide = true, value_parser = super::parse_now)]
    clock: Option<DateTime<Utc>>,
    #[command(flatten)]
    forecast: ForecastArgs,
}

/// The tools' context for a command: the state repo, the `COMMITEA_*` config overrides, who asks, the
/// clock, and the forecast flags.
pub(crate) fn context(
    state: &StateArg,
    by: Option<String>,
    clock: Option<DateTime<Utc>>,
    forecast: &ForecastArgs,
) -> crate::tools::Context {
    crate::tools::Context {
        state_dir: state.state.clone(),
        // COMMITEA_STATE chose the state repo; it is not a config key.
        env: env_vars(),
        clock: clock.or(forecast.now),
        by,
        model: false,
        overrides: forecast.overrides(),
        as_of: forecast.now,
        proposer: proposer(&state.state),
        memo: crate::tools::Memo::default(),
        cancel: crate::state::Cancel::default(),
        spent: crate::model::Spent::default(),
    }
}

/// The proposer of the tools, when the state repo's config asks to propose on write.
fn proposer(dir: &std::path::Path) -> Option<crate::tools::Proposer> {
    let config = crate::config::Config::load(dir, env_vars(), &Default::default()).ok()?;
    if !config.approvals.propose_on_write {
        return None;
    }
    let dir = dir.to_path_buf();
    Some(crate::tools::Proposer(std::sync::Arc::new(move || {
        let layout = crate::state::Layout::new(&dir);
        let config = crate::config::Config::load(&dir, env_vars(), &Default::default())
            .map_err(|e| e.to_string())?;
        let done = super::propose::propose_all(&layout, &config).map_err(|e| e.to_string())?;
        Ok(done
            .iter()
            .map(crate::apply::propose::Proposed::line)
            .collect())
    })))
}

/// Calls the tool and prints its answer on one line.
pub fn run(a: Args) -> CommandResult {
    if a.list {
        let list = serde_json::json!({ "tools": crate::tools::mcp::tools() });
        super::print_json(&list, false)?;
        return Ok(());
    }
    let name = a.name.clone().unwrap_or_default();
    let input = match a.input.as_deref() {
        Some(text) if text != "-" => text.to_owned(),
        _ => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            text
        }
    };
    let ctx = context(&a.state, a.by, a.clock, &a.forecast);
    match crate::tools::call_str(&ctx, &name, &input) {
        Ok(answer) => {
            super::print_json(&answer, false)?;
            Ok(())
        }
        Err(e) if e.is_input() => Err(CommandError::Input(e.to_string())),
        Err(e) => Err(CommandError::Failed(e.into())),
    }
}
