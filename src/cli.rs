//! The command line: `commitea run | demo | plan | directive | tool | mcp | render | import | backtest |
//! generate`.
//!
//! Parsing only; each command calls the library. Data goes to stdout, logs to stderr.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use chrono::{DateTime, NaiveDate, Utc};
use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;
use crate::pipeline::{self, RunOptions};

/// CommiTea: honest forecasts for teams on Gitea, kept in git.
#[derive(Debug, Parser)]
#[command(name = "commitea", version, about, long_about = None)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Settings shared by the commands that forecast.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// The state repo.
    #[arg(long, short = 's', default_value = ".", env = "COMMITEA_STATE")]
    pub state: PathBuf,
    /// Forecast as of this moment (YYYY-MM-DD or RFC 3339); default: the snapshot's time.
    #[arg(long, value_parser = parse_now)]
    pub now: Option<DateTime<Utc>>,
    /// The Monte Carlo seed; default: derived from the state's content.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Monte Carlo trials.
    #[arg(long)]
    pub trials: Option<u32>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the whole pipeline on a state repo: sync, apply, replay, forecast, commit, render.
    Run {
        /// Shared settings.
        #[command(flatten)]
        common: Common,
        /// Skip sync and apply: forecast the committed snapshot.
        #[arg(long)]
        offline: bool,
        /// Do not commit the results.
        #[arg(long)]
        no_commit: bool,
        /// Resync every repository in full.
        #[arg(long)]
        full: bool,
    },
    /// Read the configured repositories from Gitea into snapshot/ and commit it (no forecast).
    Sync {
        /// Shared settings.
        #[command(flatten)]
        common: Common,
        /// Resync every repository in full.
        #[arg(long)]
        full: bool,
        /// Do not commit the snapshot.
        #[arg(long)]
        no_commit: bool,
    },
    /// Set up the bundled demo in DIR (default ./commitea-demo), run the pipeline, print the site's path.
    Demo {
        /// Where to put the demo state repo.
        dir: Option<PathBuf>,
        /// Generate a project of this many issues instead of the bundled demo (for benchmarks).
        #[arg(long)]
        issues: Option<usize>,
        /// Forecast as of this moment (YYYY-MM-DD or RFC 3339).
        #[arg(long, value_parser = parse_now)]
        now: Option<DateTime<Utc>>,
        /// The Monte Carlo seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Monte Carlo trials.
        #[arg(long)]
        trials: Option<u32>,
    },
    /// Replay and forecast; write forecast/ and print each milestone's range.
    Plan {
        /// Shared settings.
        #[command(flatten)]
        common: Common,
        /// Print forecast.json instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Export the deterministic plan for another tool.
    Export {
        /// The format: `tjp` (TaskJuggler 3).
        #[arg(value_parser = ["tjp"])]
        format: String,
        /// Shared settings.
        #[command(flatten)]
        common: Common,
        /// Write to this file instead of stdout.
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// Record a PM directive: append it to pm-state.md, write its proposed Gitea changes to ops/pending/ and
    /// print the consequence (JSON). Never touches Gitea, never commits.
    Directive {
        /// The state repo.
        #[arg(long, short = 's', default_value = ".", env = "COMMITEA_STATE")]
        state: PathBuf,
        /// reprioritize, reestimate, set-deadline, scope, capacity or note.
        #[arg(long)]
        kind: String,
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
        /// Forecast the consequence as of this moment, and stamp the entry with it (YYYY-MM-DD or RFC 3339).
        #[arg(long, value_parser = parse_now)]
        now: Option<DateTime<Utc>>,
        /// The Monte Carlo seed of the consequence.
        #[arg(long)]
        seed: Option<u64>,
        /// Monte Carlo trials of the consequence.
        #[arg(long)]
        trials: Option<u32>,
    },
    /// Call one agent tool (query_project, capture_work, apply_changes, record_directive) with JSON input and
    /// print its JSON answer on one line. Input errors exit with status 2 and name the field.
    Tool {
        /// The state repo.
        #[arg(long, short = 's', default_value = ".", env = "COMMITEA_STATE")]
        state: PathBuf,
        /// The tool's name.
        #[arg(required_unless_present = "list")]
        name: Option<String>,
        /// The input as JSON; `-` or absent reads it from stdin.
        input: Option<String>,
        /// Print the tools with their input and output JSON Schemas instead (the MCP `tools/list` shape).
        #[arg(long, conflicts_with_all = ["name", "input"])]
        list: bool,
        /// Who is asking (a Gitea username), written into op files and directives.
        #[arg(long)]
        by: Option<String>,
        /// Use this time (RFC 3339) as the wall clock, for reproducible op files and ledger entries.
        #[arg(long, hide = true, value_parser = parse_now)]
        clock: Option<DateTime<Utc>>,
        /// Forecast as of this moment (YYYY-MM-DD or RFC 3339); default: the snapshot's time.
        #[arg(long, value_parser = parse_now)]
        now: Option<DateTime<Utc>>,
        /// The Monte Carlo seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Monte Carlo trials.
        #[arg(long)]
        trials: Option<u32>,
    },
    /// Serve the four agent tools to an MCP client over stdin/stdout until stdin closes. Logs go to stderr.
    Mcp {
        /// The state repo.
        #[arg(long, short = 's', default_value = ".", env = "COMMITEA_STATE")]
        state: PathBuf,
        /// Who is asking (a Gitea username), written into op files and directives.
        #[arg(long)]
        by: Option<String>,
        /// Forecast as of this moment (YYYY-MM-DD or RFC 3339); default: the snapshot's time.
        #[arg(long, value_parser = parse_now)]
        now: Option<DateTime<Utc>>,
        /// The Monte Carlo seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Monte Carlo trials.
        #[arg(long)]
        trials: Option<u32>,
    },
    /// Render the site from the views in forecast/views/.
    Render {
        /// The state repo.
        #[arg(long, short = 's', default_value = ".", env = "COMMITEA_STATE")]
        state: PathBuf,
    },
    /// Serve a state repo's snapshot through the Gitea API emulator on loopback until stopped (for trying
    /// CommiTea, and sync, without a Gitea server). Prints the base URL.
    #[command(hide = true)]
    Emulate {
        /// The state repo whose snapshot to serve.
        #[arg(long, short = 's', default_value = ".", env = "COMMITEA_STATE")]
        state: PathBuf,
        /// The token the emulator accepts.
        #[arg(long, default_value = "emulator-token")]
        token: String,
    },
    /// Backtest: rewind the snapshot to past cuts, forecast from each, and score CommiTea and two baselines
    /// against what happened. Prints the report (JSON) on stdout and a table on stderr.
    Backtest {
        /// The state repo.
        #[arg(long, short = 's', default_value = ".", env = "COMMITEA_STATE")]
        state: PathBuf,
        /// Days between cuts.
        #[arg(long, default_value_t = 28)]
        every_days: u32,
        /// Monte Carlo trials per method and cut.
        #[arg(long, default_value_t = 500)]
        trials: u32,
        /// The seed; default: the config's forecast seed, else 1.
        #[arg(long)]
        seed: Option<u64>,
        /// Print only the JSON report (no table on stderr).
        #[arg(long)]
        json: bool,
        /// Days after a cut forecast and scored; default: the abandonment window (`forecast.abandonment_days`,
        /// at most `forecast.horizon_days`).
        #[arg(long)]
        horizon_days: Option<u32>,
        /// Also write the report to forecast/backtest.json, where the calibration view and page publish it
        /// (the next `commitea run` commits it).
        #[arg(long)]
        write: bool,
    },
    /// Import another tracker's history into a new state repo (see docs/import.md); prints its path.
    Import {
        /// Where the history comes from.
        #[command(subcommand)]
        source: ImportSource,
    },
    /// Write a generated state repo (no git, no forecast) into DIR: the bundled demo, or N issues.
    #[command(hide = true)]
    Generate {
        /// Where to write it.
        dir: PathBuf,
        /// How many issues (default: the bundled demo).
        #[arg(long)]
        issues: Option<usize>,
    },
}

/// The trackers `commitea import` reads.
#[derive(Debug, Subcommand)]
pub enum ImportSource {
    /// Jira, flattened to DATASET_issues.csv, DATASET_history.csv and DATASET_milestones.csv: one state repo
    /// per project, its issues in the Gitea repository `jira/<PROJECT>`.
    Jira {
        /// The folder holding the CSV files.
        #[arg(long)]
        data: PathBuf,
        /// The dataset, the files' prefix: `duraspace` or `apache`.
        #[arg(long)]
        dataset: String,
        /// The Jira project key, or `all` for every project with at least --min-issues issues.
        #[arg(long)]
        project: String,
        /// Where to write the state repo; with `--project all`, one sub-folder per project.
        #[arg(long)]
        out: PathBuf,
        /// With `--project all`: skip projects with fewer issues.
        #[arg(long, default_value_t = 50)]
        min_issues: usize,
    },
}

fn parse_now(s: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return d
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc())
            .ok_or_else(|| format!("\"{s}\" is not a valid date"));
    }
    DateTime::parse_from_rfc3339(s)
        .map(|d| d.with_timezone(&Utc))
        .map_err(|_| format!("\"{s}\" is neither YYYY-MM-DD nor an RFC 3339 time"))
}

fn env_vars() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with("COMMITEA_"))
        .collect()
}

fn options(common: &Common, offline: bool, commit: bool, render: bool) -> RunOptions {
    RunOptions {
        state_dir: common.state.clone(),
        now: common.now,
        // `--now` pins every time a run writes (the snapshot's, the commit's), as the docs say.
        clock: common.now.unwrap_or_else(Utc::now),
        offline,
        full_sync: false,
        token: crate::gitea::client::token_from_env(),
        server_fallback: std::env::var("GITHUB_SERVER_URL")
            .ok()
            .filter(|s| !s.trim().is_empty()),
        overrides: Overrides {
            seed: common.seed,
            trials: common.trials,
        },
        env: env_vars(),
        commit,
        render,
    }
}

/// Runs a parsed command line.
pub fn execute(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run {
            common,
            offline,
            no_commit,
            full,
        } => {
            let mut opts = options(&common, offline, !no_commit, true);
            opts.full_sync = full;
            let summary = pipeline::run(&opts)?;
            report(&summary);
            if let Some(index) = summary.site_index {
                println!("{}", index.display());
            }
        }
        Command::Sync {
            common,
            full,
            no_commit,
        } => {
            let mut opts = options(&common, false, !no_commit, false);
            opts.full_sync = full;
            let summary = pipeline::sync_only(&opts)?;
            report(&summary);
        }
        Command::Demo {
            dir,
            issues,
            now,
            seed,
            trials,
        } => {
            let dir = dir.unwrap_or_else(|| PathBuf::from("commitea-demo"));
            demo(
                &dir,
                issues,
                Common {
                    state: dir.clone(),
                    now,
                    seed,
                    trials,
                },
            )?;
        }
        Command::Plan { common, json } => {
            let opts = options(&common, true, false, false);
            let layout = crate::state::Layout::new(&common.state);
            let _lock = pipeline::lock(&opts, &layout)?;
            let computed = pipeline::compute(&opts)?;
            for (rel, bytes) in pipeline::forecast_files(&computed)? {
                crate::state::write_if_changed(&layout.root().join(rel), &bytes)?;
            }
            if json {
                let text = serde_json::to_string_pretty(&computed.report)?;
                println!("{text}");
            } else {
                print_runway(&computed.runway);
            }
        }
        Command::Export {
            format: _,
            common,
            output,
        } => {
            let opts = options(&common, true, false, false);
            let layout = crate::state::Layout::new(&common.state);
            let config = crate::config::Config::load(
                layout.root(),
                opts.env.iter().cloned(),
                &opts.overrides,
            )?;
            let snapshot = crate::state::Snapshot::load(&layout)?;
            let now = common.now.unwrap_or(snapshot.meta.synced_at);
            let ledger = crate::ledger::read(&layout.ledger())?;
            let plan =
                crate::ledger::replay(&snapshot, &config, ledger.as_deref(), now).into_plan();
            let text = crate::forecast::export_tjp(
                &plan,
                config.forecast.horizon_days.0,
                &config.site.title,
                "commitea",
            )?;
            match output {
                Some(path) => std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => print!("{text}"),
            }
        }
        Command::Directive {
            state,
            kind,
            quote,
            target,
            params,
            rationale,
            by,
            now,
            seed,
            trials,
        } => {
            let params = match params
                .as_deref()
                .map(serde_json::from_str::<serde_json::Value>)
            {
                None => None,
                Some(Ok(v)) => Some(v),
                Some(Err(e)) => input_error(&format!("invalid params: not JSON: {e}")),
            };
            let input = crate::ledger::record::RecordInput {
                kind,
                quote,
                target: target
                    .as_deref()
                    .map(crate::ledger::record::RecordTarget::parse_cli),
                params,
                rationale,
                by,
            };
            let options = crate::ledger::record::RecordOptions {
                clock: now.unwrap_or_else(Utc::now),
                env: env_vars(),
                overrides: Overrides { seed, trials },
                as_of: now,
            };
            match crate::ledger::record::record_directive(&state, &input, &options) {
                Ok(out) => println!("{}", serde_json::to_string_pretty(&out)?),
                Err(e) if e.is_input() => input_error(&e.to_string()),
                Err(e) => return Err(e.into()),
            }
        }
        Command::Tool {
            state,
            name,
            input,
            list,
            by,
            clock,
            now,
            seed,
            trials,
        } => {
            if list {
                println!("{}", serde_json::to_string(&tool_list())?);
                return Ok(());
            }
            let name = name.unwrap_or_default();
            let input = match input.as_deref() {
                Some(text) if text != "-" => text.to_owned(),
                _ => {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                        .context("reading the tool's input from stdin")?;
                    text
                }
            };
            let mut ctx = tool_context(state, by, clock.or(now));
            ctx.overrides = Overrides { seed, trials };
            ctx.as_of = now;
            match crate::tools::call_str(&ctx, &name, &input) {
                Ok(answer) => println!("{}", serde_json::to_string(&answer)?),
                Err(e) if e.is_input() => input_error(&e.to_string()),
                Err(e) => return Err(e.into()),
            }
        }
        Command::Backtest {
            state,
            every_days,
            trials,
            seed,
            json,
            horizon_days,
            write,
        } => {
            let layout = crate::state::Layout::new(&state);
            let config = crate::config::Config::load(&state, env_vars(), &Overrides::default())?;
            let snapshot = crate::state::Snapshot::load(&layout)?;
            let ledger = crate::ledger::read(&layout.ledger())?;
            let defaults = crate::backtest::BacktestOptions::default();
            let opts = crate::backtest::BacktestOptions {
                every_days,
                trials: trials.max(1),
                seed: seed.or(config.forecast.seed).unwrap_or(defaults.seed),
                horizon_days: horizon_days.unwrap_or_else(|| {
                    config
                        .forecast
                        .abandonment_days
                        .0
                        .min(config.forecast.horizon_days.0)
                }),
                ..defaults
            };
            if opts.horizon_days == 0 {
                input_error("--horizon-days must be at least 1");
            }
            let report = crate::backtest::backtest(&snapshot, &config, ledger.as_deref(), &opts);
            if write {
                let _lock = crate::state::lock::lock_state(layout.root(), &config, Utc::now())?;
                let rel = std::path::Path::new(crate::pipeline::BACKTEST_FILE);
                let bytes = crate::state::to_json(&report, rel)?;
                crate::state::write_if_changed(&layout.root().join(rel), &bytes)?;
                tracing::info!("wrote {}", rel.display());
            }
            println!("{}", serde_json::to_string_pretty(&report)?);
            if !json {
                eprint!("{}", crate::backtest::run::table(&report));
            }
        }
        Command::Mcp {
            state,
            by,
            now,
            seed,
            trials,
        } => {
            let mut ctx = tool_context(state, by, now);
            ctx.overrides = Overrides { seed, trials };
            ctx.as_of = now;
            crate::tools::mcp::serve(ctx)?;
        }
        Command::Render { state } => {
            let layout = crate::state::Layout::new(&state);
            let config = crate::config::Config::load(&state, env_vars(), &Overrides::default())?;
            let _lock = crate::state::lock::lock_state(layout.root(), &config, Utc::now())?;
            let read = |name: &str| -> anyhow::Result<Vec<u8>> {
                let p = layout.forecast_dir().join("views").join(name);
                std::fs::read(&p).with_context(|| {
                    format!(
                        "cannot read {}: run `commitea plan` or `commitea run` first",
                        p.display()
                    )
                })
            };
            let directives =
                match std::fs::read(layout.forecast_dir().join("views").join("directives.json")) {
                    Ok(bytes) => {
                        serde_json::from_slice(&bytes).context("forecast/views/directives.json")?
                    }
                    Err(_) => crate::views::directives::load(&layout)?,
                };
            let data = crate::site::SiteData {
                directives,
                title: config.site.title.clone(),
                overview: serde_json::from_slice(&read("overview.json")?)
                    .context("forecast/views/overview.json")?,
                board: serde_json::from_slice(&read("board.json")?)
                    .context("forecast/views/board.json")?,
                runway: serde_json::from_slice(&read("runway.json")?)
                    .context("forecast/views/runway.json")?,
                calibration: serde_json::from_slice(&read("calibration.json")?)
                    .context("forecast/views/calibration.json")?,
            };
            let templates = layout.templates_dir();
            let files =
                crate::site::render(&data, templates.exists().then_some(templates.as_path()))?;
            let out = layout.root().join(&config.site.output);
            crate::site::write(&files, &out)?;
            println!("{}", out.join("index.html").display());
        }
        Command::Emulate { state, token } => {
            use crate::gitea::emulator::{Dataset, Emulator, EmulatorOptions};
            let snapshot = crate::state::Snapshot::load(&crate::state::Layout::new(&state))?;
            let options = EmulatorOptions {
                token,
                ..EmulatorOptions::default()
            };
            let emulator = Emulator::start(Dataset::from_snapshot(&snapshot), options)?;
            println!("{}", emulator.url());
            tracing::info!(
                "serving {} issues at {} until stopped",
                snapshot.issues.len(),
                emulator.url()
            );
            loop {
                std::thread::park();
            }
        }
        Command::Import { source } => match source {
            ImportSource::Jira {
                data,
                dataset,
                project,
                out,
                min_issues,
            } => import_jira(&data, &dataset, &project, &out, min_issues)?,
        },
        Command::Generate { dir, issues } => {
            let spec = issues.map_or_else(
                crate::demo::DemoSpec::bundled,
                crate::demo::DemoSpec::scaled,
            );
            let state = crate::demo::generate(&spec);
            crate::demo::write(&state, &dir)?;
            println!("{}", dir.display());
        }
    }
    Ok(())
}

/// `commitea import jira`: one state repo per project.
fn import_jira(
    data: &Path,
    dataset: &str,
    project: &str,
    out: &Path,
    min_issues: usize,
) -> anyhow::Result<()> {
    let ds = crate::import::load_dataset(data, dataset)?;
    let projects: Vec<(String, PathBuf)> = if project == "all" {
        ds.projects()
            .into_iter()
            .filter(|(p, n)| {
                if *n < min_issues {
                    tracing::info!("skipping {p}: {n} issues, fewer than {min_issues}");
                }
                *n >= min_issues
            })
            .map(|(p, _)| {
                let dir = out.join(&p);
                (p, dir)
            })
            .collect()
    } else {
        vec![(project.to_owned(), out.to_path_buf())]
    };
    for (p, dir) in projects {
        if dir.exists()
            && !crate::config::Config::path_in(&dir).exists()
            && std::fs::read_dir(&dir)?.next().is_some()
        {
            bail!(
                "{} exists and is not a CommiTea state repo; choose an empty or new folder",
                dir.display()
            );
        }
        let imported = crate::import::to_state(&ds, &p)?;
        let s = &imported.stats;
        tracing::info!(
            "{p}: {} issues ({} open, {} with a milestone, {} with an estimate), {} events, as of {}",
            s.issues,
            s.open,
            s.with_milestone,
            s.with_estimate,
            s.events,
            imported.snapshot.meta.synced_at.to_rfc3339()
        );
        tracing::info!(
            "{p}: dropped {} dependencies on other projects, {} on issues not in the data, {} unknown \
             fixVersion references, {} in-progress moments, {} history rows of unmapped fields",
            s.dependencies_other_project,
            s.dependencies_missing,
            s.unknown_milestone_refs,
            s.in_progress_dropped,
            s.history_rows_ignored
        );
        tracing::debug!("{p}: {s:?}");
        crate::import::write_state(&dir, &imported)?;
        println!("{}", dir.display());
    }
    Ok(())
}

/// The tools' context: the state repo, the `COMMITEA_*` config overrides, who asks, and a fixed clock if any.
fn tool_context(
    state: PathBuf,
    by: Option<String>,
    clock: Option<DateTime<Utc>>,
) -> crate::tools::Context {
    crate::tools::Context {
        state_dir: state,
        // COMMITEA_STATE chose the state repo; it is not a config key.
        env: env_vars()
            .into_iter()
            .filter(|(k, _)| k != "COMMITEA_STATE")
            .collect(),
        clock,
        by,
        overrides: Overrides::default(),
        as_of: None,
    }
}

/// `commitea tool --list`: the tools exactly as the MCP server's `tools/list` answers them.
fn tool_list() -> serde_json::Value {
    serde_json::json!({ "tools": crate::tools::mcp::tools() })
}

/// Reports a bad input and exits with status 2, as clap does for usage errors.
fn input_error(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2)
}

fn demo(dir: &Path, issues: Option<usize>, common: Common) -> anyhow::Result<()> {
    let config_path = dir.join(crate::config::FILE_NAME);
    if config_path.exists() {
        tracing::info!("using the existing demo state repo in {}", dir.display());
    } else {
        if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
            bail!(
                "{} exists and is not a CommiTea state repo; choose an empty or new folder",
                dir.display()
            );
        }
        let spec = issues.map_or_else(
            crate::demo::DemoSpec::bundled,
            crate::demo::DemoSpec::scaled,
        );
        tracing::info!(
            "generating the demo ({} issues) in {}",
            spec.issues,
            dir.display()
        );
        let state = crate::demo::generate(&spec);
        crate::demo::write(&state, dir)?;
        let repo = crate::state::git::open_or_init(dir)?;
        let sig = crate::state::git::Signature {
            name: state.config.commit.name.clone(),
            email: state.config.commit.email.clone(),
            time: spec.now,
        };
        crate::state::git::commit_all(
            &repo,
            &[state.config.site.output.to_string_lossy().as_ref()],
            "Import the CommiTea demo state\n\nGenerated by `commitea demo`: a snapshot of a fictional team's issues.\n",
            &sig,
        )?;
    }
    let summary = pipeline::run(&options(&common, true, true, true))?;
    report(&summary);
    if let Some(index) = summary.site_index {
        println!("{}", index.display());
    }
    Ok(())
}

fn report(summary: &pipeline::RunSummary) {
    tracing::info!(
        "{} issues, {} open; {}",
        summary.issues,
        summary.open,
        summary
            .commit
            .as_deref()
            .map_or_else(|| "no new commit".to_owned(), |c| format!("committed {c}"))
    );
    for w in &summary.warnings {
        tracing::warn!("{w}");
    }
}

fn print_runway(r: &crate::views::Runway) {
    println!("as of {}", r.as_of);
    println!(
        "{:<28} {:>10} {:>25} {:>9} {:>6}",
        "milestone", "due", "p50 – p80", "P(due)", "slack"
    );
    for m in &r.milestones {
        println!(
            "{:<28} {:>10} {:>25} {:>9} {:>6}",
            m.title,
            m.due.as_deref().unwrap_or("-"),
            format!("{} – {}", m.band.p50, m.band.p80),
            m.probability_on_time
                .map_or_else(|| "-".to_owned(), |p| format!("{:.0}%", p * 100.0)),
            m.slack.map_or_else(|| "-".to_owned(), |s| s.to_string()),
        );
    }
}

/// Parses `std::env::args`, sets up logging and runs; the process's exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::new(log_filter(
        std::env::var("COMMITEA_LOG").ok().as_deref(),
    ));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
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
