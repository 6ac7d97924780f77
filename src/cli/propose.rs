//! `commitea propose`: the op files and ledger entries in the checkout as pull requests on the state repo.

use super::{CommandResult, StateArg, env_vars};
use crate::config::{Config, Overrides};
use crate::state::Layout;

/// `commitea propose`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
}

/// Proposes everything local and prints one line per proposal ([`Proposed::line`](crate::apply::propose::Proposed::line)):
/// `ID pull-request N BRANCH`, `ID direct COMMIT`, or for one not proposed `ID duplicate-of ID` and
/// `ID applied-already`.
pub fn run(a: Args) -> CommandResult {
    let layout = Layout::new(&a.state.state);
    let config = Config::load(layout.root(), env_vars(), &Overrides::default())?;
    let _lock = crate::state::lock::lock_state(layout.root(), &config)?;
    let proposed = propose_all(&layout, &config)?;
    for p in &proposed {
        println!("{}", p.line());
    }
    if proposed.is_empty() {
        let unread = crate::ops::read_pending(&layout)?.1.len();
        if unread == 0 {
            tracing::info!("nothing to propose: no op file or ledger entry in the checkout is new");
        } else {
            tracing::warn!(
                "nothing proposed: {} in {} (said above), and nothing else is new; fix {} (or \
                 delete {}, if the proposal is dropped) and run `commitea propose` again",
                crate::prose::count(unread, "op file does not read", "op files do not read"),
                crate::ops::PENDING_PATH,
                if unread == 1 { "it" } else { "them" },
                if unread == 1 { "it" } else { "them" }
            );
        }
    }
    if proposed
        .iter()
        .any(|p| matches!(p, crate::apply::propose::Proposed::Direct { .. }))
    {
        tracing::info!(
            "{} moved on the server (additive ops went straight to it): {} brings the checkout up to date",
            config.approvals.branch,
            crate::apply::propose::pull_hint(&config)
        );
    }
    Ok(())
}

/// Proposes what the checkout holds (shared with `tool` and `mcp` when `approvals.propose_on_write`).
pub fn propose_all(
    layout: &Layout,
    config: &Config,
) -> Result<Vec<crate::apply::propose::Proposed>, super::CommandError> {
    let online = super::Online::from_config(layout, config)?;
    let cx = crate::apply::propose::Context {
        layout,
        config,
        client: &online.client,
        state_repo: online.state_repo.clone(),
        remote: &online.remote,
        sig: crate::state::git::Signature {
            name: config.commit.name.clone(),
            email: config.commit.email.clone(),
            time: chrono::Utc::now(),
        },
        now: crate::state::Snapshot::load(layout)?.meta.synced_at,
    };
    crate::apply::propose::propose(&cx).map_err(|e| super::CommandError::Failed(e.into()))
}
