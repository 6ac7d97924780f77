//! The `commitea` binary: parse the command line, set up logging, run the command, map its error to the
//! exit code.

use std::process::ExitCode;

use clap::Parser;

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
