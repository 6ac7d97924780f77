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
        .with_writer(commitea::cli::log_writer)
        .with_target(false)
        .without_time()
        .with_ansi(commitea::terminal::watched())
        .init();
    // A reader that stops reading (`| head`) is no failure: Rust ignores SIGPIPE, so the next print panics
    // ("failed printing to stdout: Broken pipe"); that panic ends the command quietly, with the status a
    // shell gives a command SIGPIPE ended (128 + 13), as other tools in a pipeline do.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !broken_pipe(info.payload()) {
            hook(info);
        }
    }));
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commitea::cli::run(cli)));
    let result = match outcome {
        Ok(result) => result,
        Err(payload) if broken_pipe(payload.as_ref()) => return ExitCode::from(141),
        Err(payload) => std::panic::resume_unwind(payload),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let message = match &e {
                commitea::cli::CommandError::Failed(inner) => commitea::cli::chain(inner.as_ref()),
                input => input.to_string(),
            };
            eprintln!("error: {}", commitea::cli::for_terminal(&message));
            ExitCode::from(e.exit_code())
        }
    }
}

/// Whether a panic is a print to stdout that met a closed pipe.
fn broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    text.starts_with("failed printing to stdout") && text.contains("Broken pipe")
}
