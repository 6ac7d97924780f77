//! The command line, as jj and zola lay it out: one file per command, each with its `Args` and a `run`
//! function that calls the library. Data goes to stdout, logs to stderr; a [`CommandError`] says whether
//! the caller or the state repo is at fault, and `main` turns that into the exit code.

mod ask;
mod backtest;
mod capture;
mod demo;
mod directive;
mod export;
mod import;
mod init;
mod mcp;
mod plan;
mod propose;
mod publish;
mod render;
mod run;
mod sync;
mod tool;

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;
use crate::pipeline::RunOptions;

/// CommiTea: honest forecasts for teams on Gitea, kept in git.
#[derive(Debug, Parser)]
#[command(name = "commitea", version = crate::forecast::ENGINE, about, long_about = None)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a state repo against a server: config with the team found there, ledger, workflow, first
    /// sync and forecast; says which secrets to set.
    Init(init::Args),
    /// Run the whole pipeline on a state repo: sync, apply, replay, forecast, commit, render.
    Run(run::Args),
    /// Read the configured repositories from Gitea into snapshot/ and commit it (no forecast).
    Sync(sync::Args),
    /// Set up the bundled demo in DIR (default ./commitea-demo), run the pipeline, print the site's path.
    Demo(demo::Args),
    /// Replay and forecast; write forecast/ and print each milestone's range.
    Plan(plan::Args),
    /// Export the deterministic plan for another tool.
    Export(export::Args),
    /// Ask a question in words: the small model answers through the four tools (reads only through
    /// query_project; writes become op files or directives for review). See docs/models.md.
    Ask(ask::Args),
    /// Capture work: a braindump (stdin or $EDITOR) → follow-up questions → a proposal of issues on the big
    /// model, edited in $EDITOR as YAML, checked again and filed through apply_changes for review.
    Capture(capture::Args),
    /// Record a PM directive: append it to pm-state.md, write its proposed Gitea changes to ops/pending/ and
    /// print the consequence (JSON). Never touches Gitea, never commits.
    Directive(directive::Args),
    /// Call one agent tool (query_project, capture_work, apply_changes, record_directive) with JSON input and
    /// print its JSON answer on one line. Input errors exit with status 2 and name the field.
    Tool(tool::Args),
    /// Serve the four agent tools to an MCP client over stdin/stdout until stdin closes. Logs go to stderr.
    Mcp(mcp::Args),
    /// Redraw the whole site offline, as a run does: the state forecast again (at forecast.trials unless
    /// --trials), not the files a `plan` wrote.
    Render(render::Args),
    /// Propose the op files and directives in the checkout: push each to a branch and open its pull request
    /// on the state repo (additive ops may go straight to the branch where the config allows).
    Propose(propose::Args),
    /// Publish the rendered site as the `pages` branch of the state repo.
    Publish(publish::Args),
    /// Backtest: rewind the snapshot to past cuts, forecast from each, and score CommiTea and two baselines
    /// against what happened. Prints the report (JSON) on stdout and a table on stderr.
    Backtest(backtest::Args),
    /// Import another tracker's history into a new state repo (see docs/import.md); prints its path.
    Import(import::Args),
}

/// Why a command failed; its kind decides the exit code.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The caller's input is wrong (exit status 2, as clap's usage errors).
    #[error("{0}")]
    Input(String),
    /// The command could not do its work (exit status 1).
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// The library's errors are failures of the command (the caller's mistakes are said as [`CommandError::Input`]).
macro_rules! failed_from {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for CommandError {
            fn from(e: $t) -> Self {
                Self::Failed(anyhow::Error::from(e))
            }
        }
    )*};
}

/// A setting that does not read is the caller's to fix (exit 2), wherever it came from (audit 89: the
/// same refused value exited 2 from a flag and 1 from the file or the environment); a file that cannot
/// be read is a failure.
impl From<crate::config::ConfigError> for CommandError {
    fn from(e: crate::config::ConfigError) -> Self {
        match e {
            crate::config::ConfigError::Read { .. } => Self::Failed(anyhow::Error::from(e)),
            e => Self::Input(e.to_string()),
        }
    }
}

impl From<crate::pipeline::PipelineError> for CommandError {
    fn from(e: crate::pipeline::PipelineError) -> Self {
        match e {
            crate::pipeline::PipelineError::Config(c) => c.into(),
            e => Self::Failed(anyhow::Error::from(e)),
        }
    }
}

failed_from!(
    crate::state::StateError,
    crate::state::git::GitError,
    crate::state::lock::LockError,
    crate::site::SiteError,
    crate::engine::ScheduleError,
    crate::import::ImportError,
    crate::state::remote::RemoteError,
    crate::apply::propose::ProposeError,
    crate::yamlfile::YamlError,
    std::io::Error,
    serde_json::Error,
);

impl CommandError {
    /// The process's exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Input(_) => 2,
            Self::Failed(_) => 1,
        }
    }
}

/// A command's result.
pub(crate) type CommandResult = Result<(), CommandError>;

/// The state repo argument every command on a state repo takes.
#[derive(Debug, Clone, Args)]
pub(crate) struct StateArg {
    /// The state repo; default: the current folder, or the nearest one above it with a commitea.yaml
    /// (a command run inside `snapshot/` finds its state repo, as git finds its repository).
    #[arg(long, short = 's', default_value = ".", env = "COMMITEA_STATE", value_parser = state_dir)]
    pub state: PathBuf,
}

/// The state repo `-s` names: `.` without a `commitea.yaml` is the nearest folder above with one (audit 120:
/// `plan` inside `snapshot/` said to start a state repo there with `commitea init`); any other path, or
/// none found above, is taken as given, and is said not to be a state repo if it is not. An empty one (a
/// CI variable `COMMITEA_STATE` defined but blank) is as if none were given (audit 120: "there is no folder
/// : give the state repo's folder").
fn state_dir(arg: &str) -> Result<PathBuf, String> {
    let arg = if arg.trim().is_empty() { "." } else { arg };
    let given = PathBuf::from(arg);
    if arg != "." || crate::config::Config::path_in(&given).exists() {
        return Ok(given);
    }
    let found = std::env::current_dir().ok().and_then(|here| {
        here.ancestors()
            .skip(1)
            .find(|d| crate::config::Config::path_in(d).exists())
            .map(std::path::Path::to_path_buf)
    });
    Ok(found.unwrap_or(given))
}

/// What every forecasting command takes: the day zero, the seed and the trial count.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ForecastArgs {
    /// Forecast as of this moment (YYYY-MM-DD, that day; or RFC 3339, the team's date then in
    /// `calendar.timezone`); default: after a sync the run's clock, else the snapshot's time or the committed
    /// forecast's day, whichever is later. Forecasts from the start of its day (or the snapshot's time,
    /// if later), as the readers of the committed forecast will; a run also stamps its snapshot and commit
    /// with it (never before the newest change its sync read), and `directive` dates the ledger entry it records so (no earlier than an entry of the same
    /// day). A day before the snapshot's is a run's snapshot day, and previewed (`plan`, the tools) as of
    /// that day, with a warning.
    #[arg(long, value_parser = parse_now)]
    pub now: Option<DateTime<Utc>>,
    /// The Monte Carlo seed; default: `forecast.seed`, else a fixed default.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Monte Carlo trials, 1 to 1000000; default: `forecast.trials`.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::config::MAX_TRIALS)))]
    pub trials: Option<u32>,
}

impl ForecastArgs {
    /// The flags as config overrides.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            seed: self.seed,
            trials: self.trials,
            keys: Vec::new(),
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> CommandResult {
    match cli.command {
        Command::Init(a) => init::run(a),
        Command::Run(a) => run::run(a),
        Command::Sync(a) => sync::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Export(a) => export::run(a),
        Command::Directive(a) => directive::run(a),
        Command::Ask(a) => ask::run(a),
        Command::Capture(a) => capture::run(a),
        Command::Tool(a) => tool::run(a),
        Command::Mcp(a) => mcp::run(a),
        Command::Render(a) => render::run(a),
        Command::Propose(a) => propose::run(a),
        Command::Publish(a) => publish::run(a),
        Command::Backtest(a) => backtest::run(a),
        Command::Import(a) => import::run(a),
    }
}

/// The years `--now` may name: a forecast's as-of is a moment of a project's life (a backtest's cut of a
/// 2005 history, a plan for next year), and a horizon years past it must still be a date.
const NOW_YEARS: std::ops::RangeInclusive<i32> = 1970..=2200;

/// Parses `--now`: a date (carried as its midnight UTC: that day, in any zone) or an RFC 3339 time, from 1970 to
/// 2200.
pub(crate) fn parse_now(s: &str) -> Result<DateTime<Utc>, String> {
    // Shaped as a day (ten characters, no `T`): a day, or a day that does not exist, said so.
    let at = if s.len() == 10 && !s.contains(['T', 't', ' ']) {
        crate::domain::parse_day(s)?
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc())
            .ok_or_else(|| format!("\"{s}\" is not a valid date"))?
    } else {
        DateTime::parse_from_rfc3339(s)
            .map(|d| crate::config::as_moment(d.with_timezone(&Utc)))
            .map_err(|_| format!("\"{s}\" is neither YYYY-MM-DD nor an RFC 3339 time"))?
    };
    if !NOW_YEARS.contains(&chrono::Datelike::year(&at)) {
        return Err(format!(
            "\"{s}\" is out of range: give a moment from {} to {}",
            NOW_YEARS.start(),
            NOW_YEARS.end()
        ));
    }
    Ok(at)
}

/// Parses `--by`: a Gitea username, as the ledger and the op files take it (a newline in it once wrote a
/// second line into an op file's `by`).
pub(crate) fn parse_by(s: &str) -> Result<String, String> {
    if crate::ledger::format::valid_username(s) {
        Ok(s.to_owned())
    } else {
        Err(crate::ledger::format::not_a_username(s))
    }
}

/// The `COMMITEA_*` environment variables: config overrides (the resolver skips those that are not keys).
pub(crate) fn env_vars() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with("COMMITEA_"))
        .collect()
}

/// The options of a pipeline run on `state` with `forecast`'s flags, read at the edge: the wall clock
/// (or `--now`), the token, the Actions server, the environment.
fn run_options(state: &StateArg, forecast: &ForecastArgs) -> RunOptions {
    RunOptions {
        state_dir: state.state.clone(),
        now: forecast.now,
        // `--now` pins every time a run writes (the snapshot's, the commit's), as the docs say.
        clock: forecast.now.unwrap_or_else(Utc::now),
        offline: true,
        full_sync: false,
        token: crate::gitea::client::token_from_env(),
        server_fallback: std::env::var("GITHUB_SERVER_URL")
            .ok()
            .filter(|s| !s.trim().is_empty()),
        overrides: forecast.overrides(),
        env: env_vars(),
        commit: false,
        render: false,
        applied_before: Vec::new(),
        skip_ci: false,
    }
}

/// What talking to the server needs: the client, the state repo on it, and the checkout's remote.
pub(crate) struct Online {
    /// The API client.
    pub client: crate::gitea::client::Client,
    /// The state repo on the server.
    pub state_repo: crate::domain::RepoName,
    /// The checkout's remote.
    pub remote: crate::state::remote::Remote,
}

impl Online {
    /// From the config, falling back on what Gitea Actions sets (`GITHUB_SERVER_URL`, `GITHUB_REPOSITORY`).
    pub fn from_config(
        layout: &crate::state::Layout,
        config: &crate::config::Config,
    ) -> Result<Self, CommandError> {
        let server = config
            .server
            .clone()
            .or_else(|| {
                std::env::var("GITHUB_SERVER_URL")
                    .ok()
                    .filter(|s| !s.trim().is_empty())
            })
            .ok_or_else(|| {
                CommandError::Input(
                    "no server: set `server:` in commitea.yaml (or COMMITEA_SERVER)".to_owned(),
                )
            })?;
        let state_repo = config
            .approvals
            .state_repository
            .clone()
            .or_else(|| std::env::var("GITHUB_REPOSITORY").ok()?.parse().ok())
            .ok_or_else(|| {
                CommandError::Input(
                    "which repository holds this state? Set approvals.state_repository (owner/name) in \
                     commitea.yaml; in Gitea Actions it is the job's GITHUB_REPOSITORY"
                        .to_owned(),
                )
            })?;
        let token = crate::gitea::client::token_from_env();
        let client = crate::gitea::client::Client::new(&server, token.clone(), Default::default())
            .map_err(|e| CommandError::Failed(e.into()))?;
        let remote = crate::state::remote::Remote::new(
            layout.root(),
            &config.approvals.remote,
            token,
            &token_servers(Some(&server)),
        );
        Ok(Self {
            client,
            state_repo,
            remote,
        })
    }
}

/// The servers a push may send the token to: the Gitea server, and the Actions job's (`GITHUB_SERVER_URL`,
/// which its checkout's remote names).
pub(crate) fn token_servers(server: Option<&str>) -> Vec<String> {
    server
        .map(str::to_owned)
        .into_iter()
        .chain(
            std::env::var("GITHUB_SERVER_URL")
                .ok()
                .filter(|s| !s.trim().is_empty()),
        )
        .collect()
}

/// Logs what a run did (stderr), with its warnings.
fn report(summary: &crate::pipeline::RunSummary) {
    tracing::info!(
        "{} issues, {} open; {}",
        summary.issues,
        summary.open,
        summary
            .commit
            .as_deref()
            .map_or_else(|| "no new commit".to_owned(), |c| format!("committed {c}"))
    );
    warn_all(&summary.warnings);
}

/// Logs each of `warnings` (a forecast's, a ledger's problems) as a warning on stderr.
/// A tool's error as the command's: the caller's input (status 2), or a failure.
pub(crate) fn tool_error(e: crate::tools::ToolError) -> CommandError {
    if e.is_input() {
        CommandError::Input(e.to_string())
    } else {
        CommandError::Failed(e.into())
    }
}

fn warn_all(warnings: &[String]) {
    for w in warnings {
        tracing::warn!("{}", crate::prose::one_line(w));
    }
}

/// A writer that drops bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069, U+200E,
/// U+200F, U+061C) from what passes through it: the logs quote titles anyone on Gitea wrote, and a right-to-
/// left override in one would reorder the terminal line it is printed on. They are removed as bytes (UTF-8
/// never splits a character's bytes over two characters), so no write is decoded.
pub struct WithoutBidi<W>(pub W);

impl<W: std::io::Write> std::io::Write for WithoutBidi<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = Vec::with_capacity(buf.len());
        let mut i = 0;
        while i < buf.len() {
            let bidi = match buf[i..] {
                [0xE2, 0x80, 0xAA..=0xAE | 0x8E | 0x8F, ..] | [0xE2, 0x81, 0xA6..=0xA9, ..] => 3,
                [0xD8, 0x9C, ..] => 2,
                _ => 0,
            };
            if bidi > 0 {
                i += bidi;
            } else {
                out.push(buf[i]);
                i += 1;
            }
        }
        self.0.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Standard error without bidirectional formatting characters ([`WithoutBidi`]): the log's writer.
pub fn log_writer() -> WithoutBidi<std::io::Stderr> {
    WithoutBidi(std::io::stderr())
}

/// The log filter for `COMMITEA_LOG`: a level (`debug`) applies to CommiTea's own messages while the
/// libraries stay at `warn` (their debug output is theirs: an HTTP pool's 27,000 lines per sync); a full
/// directive (`reqwest=debug`, anything with `=` or `,`) is taken as it is.
pub fn log_filter(var: Option<&str>) -> String {
    match var.map(str::trim).filter(|v| !v.is_empty()) {
        None => "warn,commitea=info".to_owned(),
        Some(v) if v.contains(['=', ',']) => v.to_owned(),
        Some(level) => format!("warn,commitea={level}"),
    }
}

/// Prints `value` as JSON on stdout, on one line or `pretty`, with every bidirectional formatting
/// character escaped ([`crate::site::text::escape_bidi_json`]): the same data, but a title with a
/// right-to-left override does not reorder the terminal that shows it (audit 95: `directive` and `plan
/// --json` printed them raw where `tool` escaped them).
pub(crate) fn print_json(value: &impl serde::Serialize, pretty: bool) -> serde_json::Result<()> {
    let text = if pretty {
        serde_json::to_string_pretty(value)?
    } else {
        serde_json::to_string(value)?
    };
    println!("{}", crate::site::text::escape_bidi_json(&text));
    Ok(())
}

/// An error message as a terminal shows it: without control characters (newlines and tabs kept) nor
/// bidirectional formatting characters, which a hostile title quoted in it could use to reorder the line.
pub fn for_terminal(message: &str) -> String {
    crate::site::text::clean(message).into_owned()
}

/// An error and its causes on one line, each said once: a cause whose text the message already holds
/// (an error that prints its source, `{path}: {source}`) is not repeated.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    #[test]
    fn the_log_writer_drops_bidirectional_controls_and_nothing_else() {
        let mut w = super::WithoutBidi(Vec::new());
        let line = "WARN Public \u{202e}2v IPA\u{202c} API: no open issues; café 登录 \u{2067}x\u{2069} \u{61c}!\n";
        w.write_all(line.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(w.0).unwrap(),
            "WARN Public 2v IPA API: no open issues; café 登录 x !\n"
        );
    }
}
