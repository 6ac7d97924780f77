//! `commitea run`: the whole pipeline on a state repo.

use super::{CommandError, CommandResult, ForecastArgs, StateArg, report, run_options};
use crate::state::remote::Pushed;

/// `commitea run`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    #[command(flatten)]
    forecast: ForecastArgs,
    /// Skip sync and apply: forecast the committed snapshot.
    #[arg(long)]
    offline: bool,
    /// Do not commit the results: a preview, which forecasts the checkout's ledger as `plan` does (a
    /// committing run forecasts the branch's).
    #[arg(long)]
    no_commit: bool,
    /// Resync every repository in full (not with --offline, which syncs nothing).
    // Audit 120: the two together were accepted without a word.
    #[arg(long, conflicts_with = "offline")]
    full: bool,
    /// Push the commit to the remote's branch (`approvals.branch`) and keep the open proposals current. When
    /// someone merged meanwhile (the push is not a fast-forward) the run is done again on the new head.
    #[arg(long, conflicts_with_all = ["no_commit", "offline"])]
    push: bool,
}

/// How many times a run is redone after losing a push race.
const PUSH_ATTEMPTS: usize = 3;

/// Runs the pipeline and prints the site's front page.
pub fn run(a: Args) -> CommandResult {
    let mut opts = run_options(&a.state, &a.forecast);
    opts.offline = a.offline;
    opts.full_sync = a.full;
    opts.commit = !a.no_commit;
    opts.render = true;
    // In Actions the job publishes the site itself: its own push need not start the workflow again.
    opts.skip_ci = a.push && std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    if !a.push {
        if a.no_commit {
            no_commit_preview(&crate::state::Layout::new(&a.state.state))?;
        }
        let summary = crate::pipeline::run(&opts)?;
        report(&summary);
        if let Some(index) = &summary.site_index {
            println!("{}", index.display());
        }
        return refused(&summary);
    }
    let layout = crate::state::Layout::new(&a.state.state);
    let config =
        crate::config::Config::load(layout.root(), opts.env.iter().cloned(), &opts.overrides)?;
    let branch = config.approvals.branch.clone();
    // The run's commit goes onto `branch`: made from another branch, it would carry that branch's commits
    // (an unmerged proposal's) there without a merge (audit 134).
    if let Ok(repo) = gix::open(layout.root())
        && let Some(head) = crate::state::git::head(&repo)
        && let Some(off) = crate::apply::off_approvals_branch(&repo, head, &config)
    {
        return Err(CommandError::Input(format!(
            "{off}: `commitea run --push` pushes the run's commit to {branch}, and would carry this \
             checkout's commits there without a merge. Check out {branch} (`git checkout {branch}`), or \
             run without --push"
        )));
    }
    let remote = crate::state::remote::Remote::new(
        layout.root(),
        &config.approvals.remote,
        opts.token.clone(),
        &super::token_servers(config.server.as_deref()),
    );
    // Commits of this checkout the remote's branch has not, while it has others: a push after the run
    // would be refused, and the redo on the remote's tip dropped them (audit 193: a PM's config commit,
    // five days of forecasts, gone with "nothing new to push"). Said before anything is carried out.
    // A server that does not answer is left to the run to say.
    let _ = remote.fetch(&branch);
    if let Some(problem) = diverged(&layout, remote.name(), &branch) {
        return Err(CommandError::Input(problem));
    }
    // Behind the remote's branch only: brought up to it first. Run on the old head, an op file a run
    // elsewhere carried out was still pending here and went to Gitea again, over a change made since
    // (audit 195).
    if let Ok(repo) = gix::open(layout.root())
        && let Some(head) = crate::state::git::head(&repo)
        && let Some(tip) =
            crate::state::git::resolve(&repo, &format!("refs/remotes/{}/{branch}", remote.name()))
        && head != tip
        && crate::state::git::is_ancestor(&repo, head, tip)
    {
        reset_to(&layout, &format!("{}/{branch}", remote.name()))?;
        tracing::info!(
            "this checkout is behind {}/{branch}: brought up to it before the run",
            remote.name()
        );
    }
    let start = gix::open(layout.root())
        .ok()
        .and_then(|r| crate::state::git::head(&r));
    for attempt in 1..=PUSH_ATTEMPTS {
        let summary = match crate::pipeline::run(&opts) {
            Ok(summary) => summary,
            // Committed, then the site failed: the commit is pushed all the same, or a job's checkout,
            // thrown away, took what the apply stage recorded with it (audit 152).
            Err(e @ crate::pipeline::PipelineError::SiteNotWritten { .. }) => {
                let pushed = push_what_is_committed(&layout, &remote, &branch);
                return Err(CommandError::Failed(anyhow::Error::from(e).context(pushed)));
            }
            Err(e) => return Err(e.into()),
        };
        report(&summary);
        let repo = crate::state::git::open_or_init(layout.root())?;
        let head = crate::state::git::head(&repo)
            .ok_or_else(|| CommandError::Input("the state repo has no commit to push".into()))?;
        // Known there already (as of the last fetch or push): the push is a no-op, and said as one.
        let there =
            crate::state::git::resolve(&repo, &format!("refs/remotes/{}/{branch}", remote.name()))
                == Some(head);
        match remote.push(&head.to_string(), &branch, false)? {
            Pushed::Done => {
                if there {
                    tracing::info!(
                        "nothing new to push: {} {branch} is at {head} already",
                        remote.name()
                    );
                } else {
                    tracing::info!("pushed {head} to {} {branch}", remote.name());
                }
                keep_proposals_current(&layout, &config);
                if let Some(index) = &summary.site_index {
                    println!("{}", index.display());
                }
                return refused(&summary);
            }
            Pushed::Rejected => {
                tracing::warn!(
                    "{branch} moved on {} while the run ran (a merge?): running again on the new head \
                     ({attempt} of {PUSH_ATTEMPTS})",
                    remote.name()
                );
                remote.fetch(&branch)?;
                // Only the run's own commit is redone: commits of the checkout's own that the remote's
                // moved tip has not stay, and the run stops (they were pushed with it otherwise).
                if let Some(problem) = diverged_since(&layout, remote.name(), &branch, start) {
                    if let Some(start) = start {
                        reset_to(&layout, &start.to_string())?;
                    }
                    return Err(CommandError::Failed(anyhow::anyhow!(
                        "{problem}; the run's own commit is dropped, and what it carried out on Gitea is \
                         found already so by the next run"
                    )));
                }
                reset_to(&layout, &format!("{}/{branch}", remote.name()))?;
                opts.applied_before = summary.applied;
            }
            Pushed::Refused { reason } => {
                return Err(CommandError::Failed(anyhow::anyhow!(
                    "the server refused the run's commit on {branch}: {reason}. Let the account of the \
                     token the run uses push to {branch} (the state repository's Settings → Branches: add it \
                     to the protection rule's push allowlist). The commit stays in this checkout, and the \
                     next run makes it again"
                )));
            }
        }
    }
    Err(CommandError::Failed(anyhow::anyhow!(
        "{branch} kept moving: the run's commit could not be pushed after {PUSH_ATTEMPTS} attempts; nothing is lost, run again"
    )))
}

/// Pushes the checkout's commit to `branch` once, for a run that failed after committing; what became
/// of it, in words.
fn push_what_is_committed(
    layout: &crate::state::Layout,
    remote: &crate::state::remote::Remote,
    branch: &str,
) -> String {
    let head = crate::state::git::open_or_init(layout.root())
        .ok()
        .and_then(|r| crate::state::git::head(&r));
    let Some(head) = head else {
        return "nothing was pushed".to_owned();
    };
    match remote.push(&head.to_string(), branch, false) {
        Ok(Pushed::Done) => format!(
            "the run's commit {head} is pushed to {} {branch}",
            remote.name()
        ),
        Ok(Pushed::Rejected) => format!(
            "the run's commit {head} is not pushed ({branch} moved meanwhile): run `commitea run --push` \
             again"
        ),
        Ok(Pushed::Refused { reason }) => {
            format!("the run's commit {head} is not pushed: the server refused it ({reason})")
        }
        Err(e) => format!("the run's commit {head} is not pushed: {e}"),
    }
}

/// The run's exit: an approved op file Gitea refused whole fails it, after its work is committed (and
/// pushed): the reason (the token's scopes, an archived repository) stays until someone fixes it, and a
/// green job on every run hid it (audit 134).
fn refused(summary: &crate::pipeline::RunSummary) -> CommandResult {
    // Issues filed short of what was approved (a label or milestone Gitea dropped for a user who may not
    // write the issues, a dependency it refused): the file is used up, so this run is the one that can
    // say it (audit 192: exit 0, while the same cause on a set_milestone failed the run).
    let short: Vec<String> = summary
        .applied
        .iter()
        .flat_map(|a| {
            a.applied.results.iter().filter_map(|o| match o {
                crate::apply::Outcome::Created {
                    issue,
                    unfinished: Some(why),
                } => Some(format!("{} (filed {issue}, but {why})", a.proposal.id)),
                _ => None,
            })
        })
        .collect();
    if summary.refused.is_empty() && short.is_empty() {
        return Ok(());
    }
    let said: Vec<String> = summary
        .refused
        .iter()
        .map(|r| format!("{} ({})", r.id, r.why))
        .collect();
    let mut parts = Vec::new();
    if !said.is_empty() {
        parts.push(format!(
            "approved changes did not reach Gitea: {}. They stay pending and are carried out once Gitea \
             takes them: give the token the scope or the rights it lacks, unarchive the repository, or \
             delete the op file if the change is dropped",
            said.join("; ")
        ));
    }
    if !short.is_empty() {
        parts.push(format!(
            "issues were filed short of their approval: {}. Those files are used up: set what is missing \
             on Gitea (or propose it again) once the token's user may write there",
            short.join("; ")
        ));
    }
    Err(CommandError::Failed(anyhow::anyhow!(
        "the run's forecast and site are done, but {}",
        parts.join("; and ")
    )))
}

/// Moves the checkout to `to` (the remote branch's tip, or the commit the run started from): the run's
/// own commit is dropped (it is redone on top). Changes not committed stay (`--keep`): where one is in
/// the way, the checkout stays as it is and the run stops, saying so.
fn reset_to(layout: &crate::state::Layout, to: &str) -> Result<(), CommandError> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(layout.root())
            .args(args)
            .output()
    };
    // What a run writes (the snapshot, the forecast) and a run that commits nothing left changed is
    // drawn again by this run: taken back to the commit first, or it stood in the way (audit 197: after
    // `run --no-commit`, "commit them or set them aside", which led to a divergence).
    // (One path at a time: a path the commit lacks fails the whole command.)
    for path in crate::state::git::OWNED_PATHS {
        let _ = git(&["checkout", "--quiet", "HEAD", "--", path]);
        let _ = git(&["clean", "-fdq", "--", path]);
    }
    // The index then, to the checkout's commit (a run commits without it, so it still holds the files
    // before the run's commit, which `--keep` would take for changes not committed); the files stay.
    let out = git(&["reset", "--quiet"])?;
    let out = if out.status.success() {
        git(&["reset", "--keep", "--quiet", "--end-of-options", to])?
    } else {
        out
    };
    if out.status.success() {
        Ok(())
    } else {
        Err(CommandError::Failed(anyhow::anyhow!(
            "could not move the checkout to {to} without losing changes not committed (git: {}): commit \
             them, or set them aside (`git stash --include-untracked`, which takes new files too), then \
             run again",
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Says what a run that commits nothing forecasts that a committing run does not: it previews the
/// checkout's ledger, as `plan` does (audit 193: a directive not yet proposed moved the preview, and
/// nothing said CI's run would not).
fn no_commit_preview(layout: &crate::state::Layout) -> Result<(), CommandError> {
    if !layout.root().join(".git").exists() {
        return Ok(());
    }
    let checkout =
        crate::ledger::read(&layout.ledger()).map_err(crate::pipeline::PipelineError::from)?;
    let branch = crate::pipeline::branch_ledger(layout)?;
    let ids: Vec<String> =
        crate::pipeline::entries_not_on_branch(checkout.as_deref(), branch.as_deref())
            .into_iter()
            .chain(crate::pipeline::entries_edited(
                checkout.as_deref(),
                branch.as_deref(),
            ))
            .collect();
    if !ids.is_empty() {
        tracing::warn!(
            "--no-commit: this run forecasts the checkout's {}, with {} ({}) that the branch does not \
             have: a committing run (CI's) forecasts without {} until `commitea propose` sends {} and {} \
             merged",
            crate::state::LEDGER_FILE,
            crate::prose::count(ids.len(), "entry", "entries"),
            ids.join(", "),
            if ids.len() == 1 { "it" } else { "them" },
            if ids.len() == 1 { "it" } else { "them" },
            if ids.len() == 1 { "it is" } else { "they are" }
        );
    }
    Ok(())
}

/// How many commits of a first-parent walk from `from` a divergence names at most.
const DIVERGED_SHOWN: usize = 3;

/// Where the checkout's branch and the remote's have each moved on without the other (as last
/// fetched): what to do, with the checkout's own commits named.
fn diverged(layout: &crate::state::Layout, remote: &str, branch: &str) -> Option<String> {
    let repo = gix::open(layout.root()).ok()?;
    let head = crate::state::git::head(&repo)?;
    diverged_from(&repo, remote, branch, head)
}

/// [`diverged`], for the commit `start` the run began from: the remote's tip moved while the run ran,
/// and the checkout had commits of its own.
fn diverged_since(
    layout: &crate::state::Layout,
    remote: &str,
    branch: &str,
    start: Option<gix::ObjectId>,
) -> Option<String> {
    let repo = gix::open(layout.root()).ok()?;
    diverged_from(&repo, remote, branch, start?)
}

fn diverged_from(
    repo: &gix::Repository,
    remote: &str,
    branch: &str,
    from: gix::ObjectId,
) -> Option<String> {
    use crate::state::git::{first_parents_from, is_ancestor, resolve, subject};
    let tip = resolve(repo, &format!("refs/remotes/{remote}/{branch}"))?;
    if is_ancestor(repo, from, tip) || is_ancestor(repo, tip, from) {
        return None;
    }
    let mine: Vec<gix::ObjectId> = first_parents_from(repo, Some(from))
        .take_while(|c| !is_ancestor(repo, *c, tip))
        .take(1000)
        .collect();
    let named: Vec<String> = mine
        .iter()
        .take(DIVERGED_SHOWN)
        .map(|c| {
            format!(
                "{} \"{}\"",
                &c.to_string()[..7],
                subject(repo, *c).unwrap_or_default()
            )
        })
        .collect();
    Some(format!(
        "this checkout's {branch} has {} that {remote}/{branch} has not ({}{}), and {remote}/{branch} has \
         moved on without them: `git pull --rebase {remote} {branch}` (or push them to a pull request), then \
         run again — a run pushes onto {remote}/{branch}, and would drop them",
        crate::prose::count(mine.len(), "commit", "commits"),
        named.join(", "),
        if mine.len() > DIVERGED_SHOWN {
            format!(" and {} more", mine.len() - DIVERGED_SHOWN)
        } else {
            String::new()
        }
    ))
}

/// Recomputes the consequence of every open proposal and updates the pull requests whose changed; a
/// failure here is logged, not fatal (the run's own work is pushed).
fn keep_proposals_current(layout: &crate::state::Layout, config: &crate::config::Config) {
    let online = match super::Online::from_config(layout, config) {
        Ok(o) => o,
        Err(e) => {
            tracing::info!("proposals not refreshed: {e}");
            return;
        }
    };
    let now = crate::state::Snapshot::load(layout)
        .map_or_else(|_| chrono::Utc::now(), |s| s.meta.synced_at);
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
        now,
    };
    match crate::apply::propose::refresh(&cx) {
        Ok(0) => {}
        Ok(n) => tracing::info!("updated {n} open proposals"),
        Err(e) => tracing::warn!(
            "could not keep the open proposals current: {}",
            super::chain(&e)
        ),
    }
}
