//! The `commitea` binary: parse the command line, set up logging, run the command, map its error to the
//! exit code.

use std::process::ExitCode;

use clap::Parser;

// Reading thousands of YAML files, rendering thousands of pages and the forecast's set-up allocate
// small objects by the million: mimalloc takes about a tenth off a 5,000-issue run's CPU time against
// glibc's allocator (`benches/scale.sh`). Transparent huge pages are off (`no_thp`): with them the
// same run's peak memory grew by half.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = commitea::cli::Cli::parse();
    let filter = tracing_subscriber::EnvFilter::new(commitea::cli::log_filter(
        std::env::var("COMMITEA_LOG").ok().as_deref(),
    ));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match commitea::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let message = match &e {
                commitea::cli::CommandError::Failed(inner) => commitea::cli::chain(inner.as_ref()),
                input => input.to_string(),
            };
            eprintln!("error: {message}");
            ExitCode::from(e.exit_code())
        }
    }
}
