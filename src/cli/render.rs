//! `commitea render`: the site from the views a run wrote.

use super::{CommandResult, StateArg, env_vars};
use crate::config::{Config, Overrides};
use crate::state::Layout;

/// `commitea render`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
}

/// Renders `forecast/views/` into `site.output` and prints the front page's path.
pub fn run(a: Args) -> CommandResult {
    let layout = Layout::new(&a.state.state);
    let config = Config::load(layout.root(), env_vars(), &Overrides::default())?;
    let _lock = crate::state::lock::lock_state(layout.root(), &config, chrono::Utc::now())?;
    let data = crate::pipeline::site_data_from_views(&layout, &config.site.title)?;
    let templates = layout.templates_dir();
    let files = crate::site::render(&data, templates.exists().then_some(templates.as_path()))?;
    let out = layout.root().join(&config.site.output);
    crate::site::write(&files, &out)?;
    println!("{}", out.join("index.html").display());
    Ok(())
}
