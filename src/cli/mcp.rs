//! `commitea mcp`: the agent tools served to an MCP client over stdin/stdout.

use super::{CommandResult, ForecastArgs, StateArg};

/// `commitea mcp`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    /// Who is asking (a Gitea username), written into op files and directives.
    #[arg(long, value_parser = super::parse_by)]
    by: Option<String>,
    #[command(flatten)]
    forecast: ForecastArgs,
}

/// Serves until stdin closes.
pub fn run(a: Args) -> CommandResult {
    // Refused before a model is asked anything (or a client served): the tools would refuse each call
    // (a server on a mistyped folder answered the handshake and listed its tools).
    crate::state::lock::is_state(&a.state.state)
        .map_err(|e| super::CommandError::Input(e.to_string()))?;
    crate::state::check_format(&crate::state::Layout::new(&a.state.state))?;
    let ctx = crate::tools::Context {
        model: true,
        ..super::tool::context(&a.state, a.by, None, &a.forecast)
    };
    // So are settings that do not read: every call would answer the same error (audit 89).
    crate::config::Config::load(&ctx.state_dir, ctx.env.clone(), &ctx.overrides)?;
    // An agent may not name who it records for (a model can be steered by what it reads): without
    // --by, what it writes names no one (audit 122: directives with no author, said nowhere).
    if ctx.by.is_none() {
        tracing::warn!(
            "no --by: the directives and op files this session writes name no one as who asked; start \
             it with --by USERNAME, the person the agent works for"
        );
    }
    crate::tools::mcp::serve(ctx).map_err(super::CommandError::Failed)
}
