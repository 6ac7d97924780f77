//! `commitea-dev`: developer commands that are not part of CommiTea — serve a state repo through the
//! Gitea emulator, or write a generated state repo.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use commitea_testkit::gitea::{Anonymous, Dataset, Emulator, EmulatorOptions};

/// Developer commands for CommiTea (not shipped).
#[derive(Debug, Parser)]
#[command(name = "commitea-dev", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a state repo's snapshot through the Gitea API emulator on loopback until stopped (for trying
    /// CommiTea, and sync, without a Gitea server). Prints the base URL.
    Emulate {
        /// The state repo whose snapshot to serve.
        #[arg(long, short = 's', default_value = ".")]
        state: PathBuf,
        /// The token the emulator accepts.
        #[arg(long, default_value = "emulator-token")]
        token: String,
        /// Milliseconds each answer takes.
        #[arg(long, default_value_t = 0)]
        latency_ms: u64,
        /// Serve a state repo too, as `OWNER/NAME=PATH` (PATH a bare git repository, the checkout's remote):
        /// its pull requests (`commitea propose`), their merges and the approvals the apply stage asks about.
        /// Repeatable.
        #[arg(long = "state-repo", value_name = "OWNER/NAME=PATH")]
        state_repos: Vec<String>,
        /// What a request without a token is answered: `private` repositories look absent (404), `public`
        /// ones are read (writes want a token), `sign-in-required` refuses everything (403).
        #[arg(long, value_enum, default_value_t = AnonymousArg::Private)]
        anonymous: AnonymousArg,
        /// The version `/version` reports; an older Gitea (`1.21.11`) answers as it did where CommiTea
        /// depends on it, and a Forgejo (`11.0.1+gitea-1.22.0`: not starting with `1.`) as Forgejo does
        /// (no time estimate; 404 for a deleted issue's timeline).
        #[arg(long = "gitea-version", default_value = "1.27.1")]
        version: String,
        /// The token's user may only read the issues (a code writer, per-unit permissions): `/times`
        /// lists their own entries only, a new issue is filed without labels and milestone.
        #[arg(long)]
        issues_read_only: bool,
        /// The token was made with read scopes only: every write answers 403 naming the scope it needs.
        #[arg(long)]
        read_scoped_token: bool,
    },
    /// Write a generated state repo (no git, no forecast) into DIR: the bundled demo, or N issues.
    Generate {
        /// Where to write it.
        dir: PathBuf,
        /// How many issues (default: the bundled demo).
        #[arg(long)]
        issues: Option<usize>,
    },
}

/// [`Anonymous`] on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum AnonymousArg {
    Private,
    Public,
    SignInRequired,
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Emulate {
            state,
            token,
            latency_ms,
            state_repos,
            anonymous,
            version,
            issues_read_only,
            read_scoped_token,
        } => {
            let snapshot = commitea::state::Snapshot::load(&commitea::state::Layout::new(&state))?;
            let mut options = EmulatorOptions {
                token,
                latency: std::time::Duration::from_millis(latency_ms),
                anonymous: match anonymous {
                    AnonymousArg::Private => Anonymous::Private,
                    AnonymousArg::Public => Anonymous::Public,
                    AnonymousArg::SignInRequired => Anonymous::SignInRequired,
                },
                version,
                issues_read_only,
                read_scoped_token,
                ..EmulatorOptions::default()
            };
            for s in &state_repos {
                let (name, path) = s
                    .split_once('=')
                    .ok_or_else(|| anyhow::anyhow!("--state-repo {s}: expected OWNER/NAME=PATH"))?;
                let name: commitea::domain::RepoName = name
                    .parse()
                    .map_err(|e| anyhow::anyhow!("--state-repo {s}: {e}"))?;
                let path = std::fs::canonicalize(path)
                    .map_err(|e| anyhow::anyhow!("--state-repo {s}: {path}: {e}"))?;
                options.state_repos.insert(name, path);
            }
            // By hand the server's clock is the machine's, as a real server's is: started at the
            // snapshot's time, an issue filed now was dated days before the commit that asked for it,
            // and the apply stage's "filed by a run killed before it recorded so" missed it (audit 79).
            let mut dataset = Dataset::from_snapshot(&snapshot);
            dataset.set_clock(dataset.clock().max(chrono::Utc::now()));
            let emulator = Emulator::start(dataset, options)?;
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
        Command::Generate { dir, issues } => {
            let spec = issues.map_or_else(
                commitea::demo::DemoSpec::bundled,
                commitea::demo::DemoSpec::scaled,
            );
            let state = commitea::demo::generate(&spec);
            commitea::demo::write(&state, &dir)?;
            println!("{}", dir.display());
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("warn,commitea=info"))
        .with_writer(std::io::stderr)
        .without_time()
        .init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
