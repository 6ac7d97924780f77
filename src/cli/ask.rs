//! `commitea ask`: a question in words, answered by the small model through the four tools.

use super::{CommandError, CommandResult, ForecastArgs, StateArg};

/// `commitea ask`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    /// The question, in words.
    #[arg(required_unless_present = "standup")]
    question: Option<String>,
    /// Instead of a question: today's standup in words, written by the small model from the standup view
    /// and checked (CommiTea's own text where the model's does not pass, or no model answers).
    #[arg(long, conflicts_with = "question")]
    standup: bool,
    /// Print the whole answer as JSON: the text, whether the checker passed it, the tool calls, what was
    /// written, turns and tokens.
    #[arg(long)]
    json: bool,
    /// Who is asking (a Gitea username), written into op files and directives.
    #[arg(long, value_parser = super::parse_by)]
    by: Option<String>,
    #[command(flatten)]
    forecast: ForecastArgs,
}

/// Asks and prints the answer (with what the tools wrote into the checkout and what they were asked and
/// did not do, one line each).
pub fn run(a: Args) -> CommandResult {
    // Refused before a model is asked anything (or a client served): the tools would refuse each call,
    // and a model at the default address answered with exit 0 (audit 188).
    let layout = crate::state::Layout::new(&a.state.state);
    crate::state::require(&layout).map_err(|e| CommandError::Input(e.to_string()))?;
    crate::state::check_format(&layout)?;
    let ctx = crate::tools::Context {
        model: true,
        ..super::tool::context(&a.state, a.by, None, &a.forecast)
    };
    let answer = if a.standup {
        crate::model::agent::standup_in_words(&ctx)
    } else {
        crate::model::agent::ask(&ctx, a.question.as_deref().unwrap_or_default())
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) if e.is_input() => return Err(CommandError::Input(e.to_string())),
        Err(e) => return Err(CommandError::Failed(e.into())),
    };
    if let Some(why) = &answer.fallback {
        tracing::warn!("the answer is CommiTea's own text, not the model's: {why}");
    }
    if a.json {
        super::print_json(&answer, false)?;
        return Ok(());
    }
    println!("{}", answer.answer);
    for w in &answer.writes {
        println!("wrote: {w}");
    }
    // Whatever the prose says it did: a rejected op or a refused directive is said here.
    for n in &answer.not_done {
        println!("not done: {n}");
    }
    Ok(())
}
