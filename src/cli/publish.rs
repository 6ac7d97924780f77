//! `commitea publish`: the rendered site as the `pages` branch, for any static host or Gitea Pages.

use super::{CommandError, CommandResult, StateArg, env_vars};
use crate::config::{Config, Overrides};
use crate::state::Layout;
use crate::state::remote::Pushed;

/// How many commits of the branch's history `publish` looks through for the forecast a site shows.
const PUBLISH_HISTORY: usize = 200;

/// `commitea publish`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    /// The branch the site goes on.
    #[arg(long, default_value = "pages")]
    branch: String,
    /// Publish a site drawn from a checkout whose ledger or op files have changes not committed (they
    /// show on its Changes and Directives pages as pending), or from another forecast than the branch's
    /// newest.
    #[arg(long)]
    allow_uncommitted: bool,
}

/// Commits `site.output` as the whole tree of the branch (one commit per change, on top of the last)
/// and pushes it; prints the commit, or nothing when the site did not change.
pub fn run(a: Args) -> CommandResult {
    let layout = Layout::new(&a.state.state);
    crate::state::check_format(&layout)?;
    let config = Config::load(layout.root(), env_vars(), &Overrides::default())?;
    let out = layout.root().join(&config.site.output);
    if !out.join("index.html").exists() {
        return Err(CommandError::Input(format!(
            "{} has no site: run `commitea run` or `commitea render` first",
            out.display()
        )));
    }
    // A site rendered from the checkout shows its proposals as pending: a draft not yet proposed would
    // be published to everyone who reads the pages (audit 80).
    let drafts = crate::pipeline::uncommitted_proposals(&layout)?;
    if !drafts.is_empty() && !a.allow_uncommitted {
        return Err(CommandError::Input(format!(
            "the checkout has changes that are not committed ({}), and a site rendered here shows them \
             (a proposal as pending, a config edit in every figure): commit and propose them (`commitea \
             propose`, a pull request) or set them aside, render again, then publish; or publish them as \
             they are with --allow-uncommitted",
            drafts.join(", ")
        )));
    }
    // The site replaces the whole tree of its branch: on the state's own branch it put the site where
    // commitea.yaml, the snapshot and the ledger were (audit 89).
    if let Some(why) = crate::state::git::branch_name_problem(&a.branch) {
        return Err(CommandError::Input(format!("--branch: {why}")));
    }
    if a.branch == config.approvals.branch {
        return Err(CommandError::Input(format!(
            "--branch {}: that is the state's branch (approvals.branch), and the site would replace its \
             files; give the site a branch of its own, e.g. pages",
            a.branch
        )));
    }
    let repo = crate::state::git::open_or_init(layout.root())?;
    let remote = crate::state::remote::Remote::new(
        layout.root(),
        &config.approvals.remote,
        crate::gitea::client::token_from_env(),
        &super::token_servers(config.server.as_deref()),
    );
    let sig = crate::state::git::Signature {
        name: config.commit.name.clone(),
        email: config.commit.email.clone(),
        time: chrono::Utc::now(),
    };
    // A site drawn from a forecast the state's branch no longer has as its newest is an older run's (two
    // runs overlapped, and the newer one publishes its own; audit 172: the older site replaced it) or a
    // preview's: not published over the branch's.
    if let Ok(stamp) = std::fs::read_to_string(out.join(crate::pipeline::SITE_FORECAST_FILE))
        && !a.allow_uncommitted
    {
        let mut lines = stamp.lines();
        let shown = lines.next().unwrap_or("").trim().to_owned();
        // Proposals not committed that the site was drawn with, though the checkout no longer has them
        // (audit 191: set aside after the render, they were published as pending).
        let rest: Vec<&str> = lines.collect();
        let drafts: Vec<&str> = rest
            .iter()
            .filter_map(|l| l.strip_prefix(crate::pipeline::SITE_DRAFT_PREFIX))
            .collect();
        let preview = rest.contains(&crate::pipeline::SITE_PREVIEW_LINE);
        if !drafts.is_empty() {
            return Err(CommandError::Input(format!(
                "the site in {} was drawn with changes that were not committed ({}), and shows them: \
                 render again from a checkout without them, then publish; or publish it as it is with \
                 --allow-uncommitted",
                out.display(),
                drafts.join(", ")
            )));
        }
        let branch = &config.approvals.branch;
        let _ = remote.fetch(branch);
        // The newer of the checkout's commit and the server's branch: a run committed here and not yet
        // pushed is the newest (audit 173: refused, with advice that looped).
        let head = crate::state::git::head(&repo);
        let tip = remote
            .tracking(branch)
            .and_then(|c| crate::state::git::resolve(&repo, &c));
        let newest = match (head, tip) {
            (Some(h), Some(t)) if crate::state::git::is_ancestor(&repo, t, h) => Some(h),
            (h, t) => t.or(h),
        };
        // The forecasts of the branch's recent history, newest first.
        let forecasts: Vec<(gix::ObjectId, Option<String>)> =
            crate::state::git::first_parents_from(&repo, newest)
                .take(PUBLISH_HISTORY)
                .map(|c| {
                    let id = crate::state::git::blob_id_at(&repo, c, crate::state::FORECAST_FILE);
                    (c, id.map(|i| i.to_string()))
                })
                .collect();
        match forecasts.first() {
            Some((_, Some(newest))) if *newest != shown => {
                // An older forecast of the branch's: an overlapping run's, whose later one publishes its own.
                if forecasts
                    .iter()
                    .any(|(_, f)| f.as_deref() == Some(shown.as_str()))
                {
                    tracing::warn!(
                        "publish: the site in {} shows an older forecast of {branch} than its newest (a run \
                         that overlapped a later one, which publishes its own): not published; `commitea \
                         render` draws the newest",
                        out.display()
                    );
                    return Ok(());
                }
                // The newest commit changed what is forecast and committed no forecast of it: the render
                // forecast the change (audit 191: "a later run's or a preview's", and advice that looped).
                // The commits after the branch's last forecast, and of them the newest that changed
                // what is forecast (audit 195: the newest commit was blamed, a forecast commit or an
                // empty one).
                let last = (0..forecasts.len())
                    .find(|&k| {
                        forecasts
                            .get(k + 1)
                            .is_none_or(|next| next.1 != forecasts[k].1)
                    })
                    .unwrap_or(0);
                let inputs = [
                    crate::config::FILE_NAME,
                    crate::state::LEDGER_FILE,
                    crate::state::SNAPSHOT_DIR,
                ];
                let changed = (0..last).find(|&i| {
                    let (c, parent) = (forecasts[i].0, forecasts[i + 1].0);
                    inputs.iter().any(|p| {
                        crate::state::git::blob_id_at(&repo, c, p)
                            != crate::state::git::blob_id_at(&repo, parent, p)
                    })
                });
                return Err(CommandError::Input(match (preview, changed) {
                    (true, _) => format!(
                        "the site in {} is a preview (drawn by `run --no-commit`, or with another --now, \
                         --seed or --trials than {branch}'s newest forecast): `commitea run`, or `commitea \
                         render` with the run's flags, draws the committed one; then publish",
                        out.display()
                    ),
                    (false, Some(i)) => {
                        let c = forecasts[i].0;
                        format!(
                            "the site in {} shows a forecast no commit of {branch} has: {} (\"{}\") came \
                             after {branch}'s last forecast and changed what is forecast (the config, the \
                             ledger or the snapshot): `commitea run` (or `commitea run --offline`) commits \
                             a forecast of it and draws its site; then publish",
                            out.display(),
                            &c.to_string()[..7],
                            crate::state::git::subject(&repo, c).unwrap_or_default(),
                        )
                    }
                    (false, None) => format!(
                        "the site in {} shows a forecast no commit of {branch} has (drawn from a checkout \
                         with changes not committed?): `commitea run` commits a forecast and draws its \
                         site; then publish",
                        out.display()
                    ),
                }));
            }
            _ => {}
        }
    }
    for _ in 0..3 {
        // The branch may not exist yet: then the site's first commit has no parent.
        let _ = remote.fetch(&a.branch);
        let parent = remote
            .tracking(&a.branch)
            .and_then(|c| crate::state::git::resolve(&repo, &c));
        // A branch that holds a state repo (a proposal's, another team's) is no site's.
        if let Some(p) = parent
            && crate::state::git::read_at(&repo, p, crate::config::FILE_NAME)?.is_some()
        {
            return Err(CommandError::Input(format!(
                "--branch {}: that branch holds a state repository ({} is on it), and the site would \
                 replace its files; give the site a branch of its own, e.g. pages",
                a.branch,
                crate::config::FILE_NAME
            )));
        }
        let Some(commit) = crate::state::git::commit_dir(
            &repo,
            &out,
            parent,
            &format!("commitea: the site of {}\n", config.site.title),
            &sig,
        )?
        else {
            tracing::info!("publish: the site on {} is unchanged", a.branch);
            return Ok(());
        };
        match remote.push(&commit.to_string(), &a.branch, false)? {
            Pushed::Done => {
                tracing::info!("publish: the site is on {} at {commit}", a.branch);
                println!("{commit}");
                return Ok(());
            }
            Pushed::Rejected => continue,
            Pushed::Refused { reason } => {
                return Err(CommandError::Failed(anyhow::anyhow!(
                    "the server refused the site's commit on {branch}: {reason}. Let the token's account \
                     push to {branch} (the state repository's Settings → Branches), or publish to another \
                     branch with --branch",
                    branch = a.branch
                )));
            }
        }
    }
    Err(CommandError::Failed(anyhow::anyhow!(
        "the {} branch kept moving while the site was pushed; run `commitea publish` again",
        a.branch
    )))
}
