//! The batch pipeline: sync → apply → replay → forecast → commit → render, each stage a module.
//!
//! Every stage before the commit only reads; what the run will write is computed in memory first, so a
//! failure anywhere leaves the state repo exactly as it was. If the commit itself fails, the files the
//! run had already written are put back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use chrono::{DateTime, Utc};

use crate::config::{Config, ConfigError, Overrides};
use crate::forecast::{self, ForecastReport, Settings};
use crate::plan::Plan;
use crate::site::{self, SiteData};
use crate::state::git::{self, GitError, Signature};
use crate::state::{Layout, Snapshot, StateError};
use crate::views::{self, Board, Inputs, Overview, Runway};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The state repo could not be read or written.
    #[error(transparent)]
    State(#[from] StateError),
    /// Git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The site could not be rendered.
    #[error(transparent)]
    Site(#[from] Box<site::SiteError>),
    /// The run committed its forecast, then could not write the site.
    #[error(
        "the forecast is committed ({commit}), but the site was not written whole (its pages may be part this \
         run's, part the last's); fix what is said below, then run `commitea render` to draw it"
    )]
    SiteNotWritten {
        /// The commit made (or "no new commit").
        commit: String,
        /// Why the site was not written whole.
        #[source]
        source: Box<site::SiteError>,
    },
    /// The committed forecast was made by a newer CommiTea than this one.
    #[error(
        "{file} was made by CommiTea {theirs}, newer than this one ({ours}): this run would commit an older \
         engine's forecast over it, and the two would overturn each other's. Run the version the workflow \
         installs (vars.COMMITEA_VERSION), or upgrade; nothing was synced, applied or committed"
    )]
    NewerEngine {
        /// The forecast file.
        file: String,
        /// The engine that made it.
        theirs: String,
        /// This one.
        ours: String,
    },
    /// A stage that needs the network was asked for but is not possible.
    #[error("{0}")]
    Unavailable(String),
    /// Talking to Gitea failed.
    #[error(transparent)]
    Client(#[from] crate::gitea::client::ClientError),
    /// Gitea stopped answering partway through the approved files.
    #[error(
        "the apply stage stopped in {file}, partway: {done}; {file} stays pending, and the next run finds \
         what it wrote before the stop already so"
    )]
    ApplyStopped {
        /// The file it stopped in.
        file: String,
        /// What was carried out before, in words.
        done: String,
        /// What failed.
        #[source]
        source: Box<crate::gitea::client::ClientError>,
    },
    /// The sync failed; the previous snapshot is untouched.
    #[error("sync failed, the snapshot is as it was")]
    Sync(#[from] crate::gitea::sync::SyncError),
    /// Another writer holds the state repo.
    #[error(transparent)]
    Lock(#[from] crate::state::lock::LockError),
    /// The checkout's snapshot is not the one committed: a run would commit what was edited there as
    /// Gitea's word.
    #[error(
        "snapshot/ differs from the last commit in {count} ({files}): a run reads snapshot/ as what Gitea last \
         said, and would commit these as if Gitea had sent them. Put them back with `git checkout HEAD -- \
         snapshot` (and `git clean -f snapshot` for new files), then run again; a change to an issue is made \
         on Gitea (or through an op file), and the next sync brings it. Nothing was synced or committed"
    )]
    SnapshotEdited {
        /// How many files, in words.
        count: String,
        /// The first few, each with how it differs.
        files: String,
    },
}

/// What a run is asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The state repo.
    pub state_dir: PathBuf,
    /// The moment the forecast is as of; default: see [`day_zero`].
    pub now: Option<DateTime<Utc>>,
    /// The wall clock, for the commit's time (read at the edge, passed in).
    pub clock: DateTime<Utc>,
    /// Skip sync and apply.
    pub offline: bool,
    /// Resync every repository in full.
    pub full_sync: bool,
    /// The Gitea token (read from the environment at the edge; never written anywhere).
    pub token: Option<String>,
    /// The server to use when `commitea.yaml` names none (`GITHUB_SERVER_URL` in Actions).
    pub server_fallback: Option<String>,
    /// Flag overrides of the config.
    pub overrides: Overrides,
    /// Environment variables (`COMMITEA_*` are read from these).
    pub env: Vec<(String, String)>,
    /// Whether to commit the results.
    pub commit: bool,
    /// Whether to render the site.
    pub render: bool,
    /// What an earlier attempt of this run applied (a run redone after a push race must not lose it).
    pub applied_before: Vec<crate::apply::AppliedFile>,
    /// Whether the commit is pushed from the Actions job, which publishes the site itself: its message
    /// then ends with `[skip ci]`, so the push does not start the workflow again (Gitea starts one for a
    /// push with a personal token; an audit saw every change run twice).
    pub skip_ci: bool,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The commit made, if anything changed.
    pub commit: Option<String>,
    /// The commit message (or the one that would have been used).
    pub message: String,
    /// The site's front page, if rendered.
    pub site_index: Option<PathBuf>,
    /// Issues in the snapshot.
    pub issues: usize,
    /// Open issues forecast.
    pub open: usize,
    /// Warnings for the run summary.
    pub warnings: Vec<String>,
    /// The op files the apply stage carried out.
    pub applied: Vec<crate::apply::AppliedFile>,
    /// The approved op files Gitea refused whole (they stay pending): the run did its work, and says
    /// it could not carry them out by its exit status.
    pub refused: Vec<crate::apply::Refused>,
}

/// The forecast and the views of one state, computed in memory.
#[derive(Debug, Clone)]
pub struct Computed {
    /// The resolved configuration.
    pub config: Config,
    /// The effective plan.
    pub plan: Plan,
    /// The forecast.
    pub report: ForecastReport,
    /// The overview view.
    pub overview: Overview,
    /// The board view.
    pub board: Board,
    /// The runway view.
    pub runway: Runway,
    /// The directives view.
    pub directives: crate::views::directives::Directives,
    /// Whether the directives view's pending op file is on the branch; a run's committed view leaves out
    /// one that is only in the checkout (a proposal not yet approved), which its site still shows.
    pub pending_committed: bool,
    /// The last backtest written to `forecast/backtest.json`, if any.
    pub backtest: Option<crate::backtest::BacktestReport>,
    /// The calibration view (with the backtest's hit-rates when there is one).
    pub calibration: crate::views::calibration::CalibrationView,
    /// The snapshot the forecast ran on.
    pub snapshot: Snapshot,
    /// Whether the snapshot comes from a sync (and so must be written).
    pub synced: bool,
    /// The op files the apply stage carried out, with what happened.
    pub applied: Vec<crate::apply::AppliedFile>,
    /// Where each of `applied` is recorded (`ops/applied/ID.yaml`, or `ID.2.yaml` beside another
    /// run's record of it): placed, and for a run that commits written, right after the apply stage.
    pub records: Vec<String>,
    /// The approved op files Gitea refused whole this run (they stay pending).
    pub refused: Vec<crate::apply::Refused>,
    /// The approved op files Gitea refused at the last run that put them to it: this run's `refused`
    /// where its apply stage did, else the record a run left (`forecast/refused.json`). The pages say
    /// these are refused, not "applied at the next run".
    pub standing_refused: Vec<crate::apply::Refused>,
    /// The proposals' open pull requests, when the run asked the server (it renders the site); `None`
    /// when it did not, or the server did not answer.
    pub open_pull_requests: Option<Vec<crate::apply::propose::OpenProposal>>,
    /// Whether the forecast is the committed one, reused because its inputs are unchanged.
    pub reused: bool,
    /// The ledger the forecast replayed: the branch's for a run, the checkout's for a preview or a tool.
    pub ledger: Option<String>,
}

/// What a state repo holds for a forecast, read once: the resolved config, the snapshot and the ledger.
#[derive(Debug, Clone)]
pub(crate) struct RepoState {
    /// Where everything is.
    pub layout: Layout,
    /// The config, resolved from defaults, `commitea.yaml`, the environment and flags.
    pub config: Config,
    /// The snapshot.
    pub snapshot: Snapshot,
    /// `pm-state.md`'s text, if there is one.
    pub ledger: Option<String>,
}

impl RepoState {
    /// Reads the state repo at `dir` with `env` and `overrides` applied to its config.
    pub fn load(
        dir: &Path,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &Overrides,
    ) -> Result<Self, PipelineError> {
        let layout = Layout::new(dir);
        let config = Config::load(layout.root(), env, overrides)?;
        let snapshot = Snapshot::load(&layout)?;
        let ledger = crate::ledger::read(&layout.ledger())?;
        Ok(Self {
            layout,
            config,
            snapshot,
            ledger,
        })
    }

    /// The forecast's day zero: `now` taken as a run takes it, else [`day_zero`] ([`moment`]).
    pub fn as_of(&self, now: Option<DateTime<Utc>>) -> DateTime<Utc> {
        moment(
            &self.layout,
            &self.config.calendar.timezone,
            now,
            self.snapshot.meta.synced_at,
        )
    }

    /// The ledger replayed over the snapshot as of `now`: the effective plan and what replay found.
    pub fn replay(&self, now: DateTime<Utc>) -> crate::ledger::Replayed {
        crate::ledger::replay(&self.snapshot, &self.config, self.ledger.as_deref(), now)
    }
}

/// Replays and forecasts the state repo without writing anything.
pub fn compute(opts: &RunOptions) -> Result<Computed, PipelineError> {
    let layout = Layout::new(&opts.state_dir);
    let config = Config::load(layout.root(), opts.env.iter().cloned(), &opts.overrides)?;
    let server = config
        .server
        .clone()
        .or_else(|| opts.server_fallback.clone());
    let mut applied = Vec::new();
    let mut refused = Vec::new();
    let mut records = Vec::new();
    let mut tried = false;
    let mut open_pull_requests = None;
    let no_server = server.is_none();
    let (snapshot, synced) = match server.filter(|_| !opts.offline) {
        Some(server) => {
            let (snapshot, client, _) = sync_stage(opts, &config, &layout, &server)?;
            let carried = apply_stage(opts, &config, &layout, &client, &snapshot)?;
            let wrote = carried.wrote;
            applied = carried.applied;
            refused = carried.refused;
            tried = carried.tried;
            records = early_records(opts, &layout, &mut applied)?;
            if opts.render && layout.root().join(".git").exists() {
                open_pull_requests = open_proposals(opts, &config, &client);
            }
            // What the apply stage wrote is what the forecast must see: read the changes back.
            let snapshot = if wrote {
                sync_with(&client, opts, &config, Some(&snapshot), false)?
            } else {
                snapshot
            };
            (snapshot, true)
        }
        None => {
            // A run that was to sync and has no server to sync from forecasts the snapshot as it is:
            // said, not silent (audit 97: an imported state's `run` exited 0 as if it had synced).
            if !opts.offline && no_server {
                tracing::warn!(
                    "no server to sync from (`server:` in {} or COMMITEA_SERVER): nothing was synced or \
                     applied; the snapshot is forecast as it is (`--offline` says that is meant)",
                    crate::config::FILE_NAME
                );
            }
            let t = Instant::now();
            // A read (`plan`, the tools) keeps the cache of parsed issue files current for the next read;
            // a run that commits does so only where a cache exists (a CI checkout is read once).
            let snapshot = if opts.commit {
                Snapshot::load_for_run(&layout)?
            } else {
                Snapshot::load(&layout)?
            };
            tracing::info!(
                "snapshot: {} issues read in {:.0?}",
                snapshot.issues.len(),
                t.elapsed()
            );
            (snapshot, false)
        }
    };
    // Offline, the forecast describes the moment its data was taken; after a sync, the run's day: the
    // moment of the sync when it changed something, else the start of the day (the snapshot keeps its old
    // time when nothing changed, but days still pass). Either is the day zero a later reader of this
    // state computes (`Committed::day_zero`), so it forecasts with the same key and reuses the forecast.
    let committed = Committed::read(&layout);
    let zone = &config.calendar.timezone;
    let now = match opts.now {
        // A run that commits is read back by the tools, `render` and the standup, which know only the
        // committed forecast's day and the snapshot's moment (`Committed::day_zero`): a given moment
        // is taken as they will take it — the start of its day, or the snapshot's moment when that is
        // later — so they reuse this forecast instead of making another of the same state.
        Some(n) if opts.commit => {
            // The sync stamps the snapshot with `--now` itself: a day before the last commit's is the
            // thing to catch.
            let day = config.calendar.timezone.day_of(n);
            if let Some(as_of) = committed.report().map(|r| r.as_of).filter(|d| day < *d) {
                tracing::warn!(
                    "--now {day} is before the day of the committed forecast ({as_of}): this forecast is committed \
                     after one of a later day, and the standup compares them as they come; run without --now, or \
                     with a later one"
                );
            }
            if zone.day_of(n) < zone.date_of(snapshot.meta.synced_at) {
                tracing::warn!(
                    "--now {n} is before the snapshot's moment ({}): a forecast cannot be as of a day \
                     before the data it reads, so it is as of the snapshot's",
                    snapshot.meta.synced_at
                );
            }
            zone.later_day(start_of_day(zone, n), snapshot.meta.synced_at)
        }
        None if synced => zone.later_day(start_of_day(zone, opts.clock), snapshot.meta.synced_at),
        given => committed.moment(zone, given, snapshot.meta.synced_at),
    };
    // A run forecasts the ledger on the branch; an entry only in the checkout is a proposal, not yet
    // approved (a preview, `commitea plan`, reads the checkout's).
    // The pending op files, read once for every use below; one that does not read is said here unless a
    // site is drawn, whose changes page lists it (and says it then).
    let (pending, unread) = crate::ops::read_pending(&layout)?;
    if !opts.render {
        for (_, e) in &unread {
            crate::ops::warn_left_out(e);
        }
    }
    // The checkout's ledger where a run forecasts the branch's and they differ: a directive recorded and
    // not yet proposed has its op file beside it, which waits for its entry to reach the branch.
    let mut proposed_ledger = None;
    let ledger = if opts.commit {
        let branch = branch_ledger(&layout)?;
        let checkout = crate::ledger::read(&layout.ledger())?;
        // A checkout's CRLF is the committed text (audit 170: every run in an autocrlf clone said the
        // ledger had edits to commit).
        let differs = match (&checkout, &branch) {
            (Some(c), Some(b)) => !crate::state::same_text(c.as_bytes(), b.as_bytes()),
            (c, b) => c != b,
        };
        if differs {
            warn_uncommitted_ledger(checkout.as_deref(), branch.as_deref());
            proposed_ledger = checkout.as_deref().map(crate::ledger::parse::parse);
        }
        warn_checkout_only_ops(&layout, &pending)?;
        if config_edited(&layout)? {
            tracing::warn!(
                "{} has edits that are not committed: this forecast follows them, where the committed \
                 config does not (the next run in CI forecasts without them); commit it (a pull request) \
                 for them to stay, or `git checkout -- {}` to drop them",
                crate::config::FILE_NAME,
                crate::config::FILE_NAME
            );
        }
        branch
    } else {
        crate::ledger::read(&layout.ledger())?
    };
    let mut replayed = crate::ledger::replay(&snapshot, &config, ledger.as_deref(), now);
    // Which directive each op file is the ledger's, once for the warnings and the check of what Gitea
    // does not carry, from the ledger the replay read.
    let parsed = replayed.ledger.take();
    let index = parsed.as_ref().map(crate::apply::LedgerIndex::new);
    let inactive = warn_pending_of_inactive(
        &pending,
        index.as_ref(),
        proposed_ledger
            .as_ref()
            .map(crate::apply::LedgerIndex::new)
            .as_ref(),
    );
    let not_on_gitea =
        not_carried_to_gitea(&pending, index.as_ref(), replayed.not_on_gitea.clone());
    let mut plan = replayed.into_plan();
    plan.warnings.extend(inactive);
    // Many at once (a ledger written by hand) are one warning: 601 lines a run said the same (audit 93);
    // the Directives page gives each its own.
    const ONE_BY_ONE: usize = 3;
    if not_on_gitea.len() > ONE_BY_ONE {
        let named: Vec<String> = not_on_gitea
            .iter()
            .take(ONE_BY_ONE)
            .map(|n| n.directive.to_string())
            .collect();
        plan.warnings.push(crate::plan::Problem {
            at: crate::plan::At::Ledger {
                line: not_on_gitea[0].line,
            },
            kind: crate::plan::ProblemKind::NotOnGitea(format!(
                "{} directives are in force but Gitea does not carry them ({} and {} more), and no op \
                 file is pending to carry them there (written into the ledger by hand, their op files \
                 deleted, or changed on Gitea since). The forecast follows them; the Directives page says \
                 what Gitea lacks of each: `commitea directive --carry-out D-ID` proposes it, or withdraw \
                 the directive if Gitea is right",
                not_on_gitea.len(),
                named.join(", "),
                not_on_gitea.len() - ONE_BY_ONE
            )),
        });
    }
    plan.warnings.extend(not_on_gitea.iter().filter(|_| not_on_gitea.len() <= ONE_BY_ONE).map(|n| {
        const SHOWN: usize = 3;
        let mut what = n.differs[..n.differs.len().min(SHOWN)].join("; ");
        if n.differs.len() > SHOWN {
            what.push_str(&format!("; and {} more", n.differs.len() - SHOWN));
        }
        // A file of its id that waits (written for another directive given the id) is no carrier, and
        // is named as what it is (audit 121: "no op file is pending" beside a pending one).
        let file = format!("{}.yaml", n.directive);
        let unreadable = unread
            .iter()
            .any(|(path, _)| path.file_name().is_some_and(|f| f.to_string_lossy() == file));
        let carrier = if pending.iter().any(|f| f.id == n.directive) {
            format!(
                "and its id's op file {}/{file} was written for another directive (it waits, as said)",
                crate::ops::PENDING_PATH,
            )
        } else if unreadable {
            // Audit 167: a merge conflict left in it, and the advice was to carry it out again beside it.
            format!(
                "and its id's op file {}/{file} does not read (as said): fix it, and it carries the change",
                crate::ops::PENDING_PATH,
            )
        } else {
            "and no op file is pending to carry it there (it was written into the ledger by hand, its op \
             file was deleted or its pull request merged without one, the change failed on Gitea, or \
             someone changed it on Gitea since)"
                .to_owned()
        };
        crate::plan::Problem {
            at: crate::plan::At::Ledger { line: n.line },
            kind: crate::plan::ProblemKind::NotOnGitea(format!(
                "{} is in force but Gitea does not carry it ({what}), {carrier}. The forecast follows {}: \
                 {}if Gitea is right, withdraw {} (status: withdrawn)",
                n.directive,
                n.directive,
                if unreadable {
                    String::new()
                } else {
                    format!(
                        "if Gitea should follow, `commitea directive --carry-out {}` proposes the change; ",
                        n.directive
                    )
                },
                n.directive
            )),
        }
    }));
    let (kept, taken_back) = committed.keeps(&layout, &config, &plan, ledger.as_deref());
    plan.keep(
        &kept,
        committed
            .report()
            .map(forecast::planned_people)
            .unwrap_or_default(),
    );
    if !taken_back.is_empty() {
        let ids = &taken_back;
        tracing::info!(
            "{} no longer in force: the plan takes up whom the forecast before {} planned each issue for",
            crate::prose::and_list(ids),
            if ids.len() == 1 { "it" } else { "them" }
        );
    }
    // Said beside a directive taken back too (audit 182: a hire withdrawn and another recorded in one
    // commit logged only the first).
    if let Some(r) = committed.report()
        && config.forecast.keep_planned_people
    {
        let joined = forecast::joined_since(&plan.team, plan.as_of, r);
        let longer: Vec<String> = forecast::staying_longer(&plan.team, r)
            .into_iter()
            .map(|(name, then)| format!("{name} stays past {then}, the last forecast's last day"))
            .collect();
        if !joined.is_empty() || !longer.is_empty() {
            let mut what = Vec::new();
            if !joined.is_empty() {
                what.push(format!(
                    "{} joined the team since the last forecast",
                    crate::prose::and_list(&joined)
                ));
            }
            what.extend(longer);
            tracing::info!(
                "{}: the team's unassigned work is shared out again (while the team stays the same, the plan \
                 keeps whom it planned each issue for)",
                what.join("; ")
            );
        }
    }
    let settings = Settings::from_config(&config);
    let t = Instant::now();
    let (mut report, reused) = forecast::run_or_reuse(
        &plan,
        &settings,
        forecast::Mode::from_config(&config),
        committed.report(),
    );
    // What it replayed, for the standup's comparison with the ledger of then (see `ledger_entries`).
    report.ledger = Some(forecast::ledger_entries(ledger.as_deref()));
    // Said in the forecast, not in the plan: a reader given the same flags keeps the same key, and
    // reuses this forecast.
    if opts.commit
        && let Some(said) = one_off_draw(opts, &layout, &config)?
        && !report.warnings.contains(&said)
    {
        report.warnings.push(said);
    }
    // A forecast that says exactly what the committed one says keeps its key: the committed forecast is
    // still the forecast of the inputs that key names, and a run whose moment alone moved (a sync that
    // changed nothing) must not write a new forecast for a new key alone.
    if let Some(c) = committed.report().filter(|c| c.inputs != report.inputs) {
        let inputs = std::mem::replace(&mut report.inputs, c.inputs.clone());
        if report != *c {
            report.inputs = inputs;
        }
    }
    if !reused {
        tracing::info!(
            "forecast: {} open issues × {} trials in {:.0?}",
            report.issues.len(),
            settings.trials,
            t.elapsed()
        );
    }
    let inputs = Inputs {
        plan: &plan,
        report: &report,
    };
    let overview = views::overview(inputs);
    let board = views::board::board(inputs, None);
    let runway = views::runway::runway(inputs);
    // The page lists every ledger problem: those the parser found and those replay found (unknown
    // targets), which the plan carries as warnings naming their line.
    let just_applied: Vec<&str> = applied.iter().map(|a| a.proposal.id.as_str()).collect();
    // A well-formed directive replay could not apply is listed as such, not as one in force.
    let replayed = crate::views::directives::Replayed {
        skipped: plan
            .warnings
            .iter()
            .filter_map(|w| match &w.kind {
                crate::plan::ProblemKind::NotApplied(why) => Some((w.ledger_line()?, why.clone())),
                _ => None,
            })
            .collect(),
        replaced: plan.replaced_directives(),
        as_of: Some(plan.as_of),
        zone: Some(plan.zone.clone()),
    };
    let mut directives = crate::views::directives::of_ledger(
        ledger.as_deref(),
        &pending,
        Some(&snapshot),
        &just_applied,
        &replayed,
    );
    // Entries left out, apart from what is said of directives in force (audit 185: "These entries were
    // skipped" headed a directive that the same page said the forecast follows).
    directives.problems.clear();
    for w in plan.warnings.iter().filter(|w| w.ledger_line().is_some()) {
        match w.kind {
            crate::plan::ProblemKind::Malformed(_) | crate::plan::ProblemKind::NotApplied(_) => {
                directives.problems.push(w.to_string());
            }
            crate::plan::ProblemKind::Data(_) => directives.notices.push(w.to_string()),
            crate::plan::ProblemKind::NotOnGitea(_) | crate::plan::ProblemKind::OpFileLeft(_) => {}
        }
    }
    for n in &not_on_gitea {
        if let Some(d) = directives
            .recent
            .iter_mut()
            .chain(&mut directives.earlier_in_force)
            .find(|d| d.id == n.directive)
        {
            d.not_on_gitea.clone_from(&n.differs);
        }
    }
    let backtest = read_backtest(&layout, &mut directives.problems);
    let calibration = crate::views::calibration::calibration(
        inputs,
        &crate::views::Selection {
            limit: crate::views::Selection::MAX_LIMIT,
            ..crate::views::Selection::default()
        },
        backtest.as_ref(),
    );
    let on_branch = match (&directives.pending, opts.commit) {
        (Some(p), true) if layout.root().join(".git").exists() => {
            let repo = git::open_or_init(layout.root())?;
            match git::head(&repo) {
                Some(head) => Some(
                    git::read_at(
                        &repo,
                        head,
                        &format!("{}/{}.yaml", crate::ops::PENDING_PATH, p.id),
                    )?
                    .is_some(),
                ),
                None => None,
            }
        }
        _ => None,
    };
    // What Gitea refused stands until a run puts the files to it again: this run's answer where it did,
    // else the last run's record.
    let recorded = read_refused(&layout);
    let standing_refused = if tried {
        // A refusal met again keeps the day it was first met: the record, and so the commit, changes
        // only when Gitea's answer does.
        for r in &mut refused {
            if let Some(b) = recorded.iter().find(|b| b.id == r.id && b.why == r.why) {
                r.at.clone_from(&b.at);
            }
        }
        refused.clone()
    } else {
        recorded
    };
    let pending_committed = on_branch.unwrap_or(true);
    if let Some(p) = directives.pending.as_mut() {
        p.approved = on_branch == Some(true);
    }
    Ok(Computed {
        pending_committed,
        applied,
        records,
        refused,
        standing_refused,
        open_pull_requests,
        backtest,
        calibration,
        config,
        plan,
        report,
        overview,
        board,
        runway,
        directives,
        snapshot,
        synced,
        reused,
        ledger,
    })
}

/// The ledger on the branch (`HEAD`'s `pm-state.md`); the checkout's when there is no commit yet.
pub(crate) fn branch_ledger(layout: &Layout) -> Result<Option<String>, PipelineError> {
    if !layout.root().join(".git").exists() {
        return Ok(crate::ledger::read(&layout.ledger())?);
    }
    let repo = git::open_or_init(layout.root())?;
    match git::head(&repo) {
        Some(head) => Ok(git::read_at(&repo, head, crate::state::LEDGER_FILE)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())),
        None => Ok(crate::ledger::read(&layout.ledger())?),
    }
}

/// Whether the checkout's `commitea.yaml` is not the one committed (audit 114: a trial edit of
/// `forecast.trials` drove the committed forecast and the published site, with no word).
fn config_edited(layout: &Layout) -> Result<bool, PipelineError> {
    if !layout.root().join(".git").exists() {
        return Ok(false);
    }
    let repo = git::open_or_init(layout.root())?;
    let Some(head) = git::head(&repo) else {
        return Ok(false);
    };
    let committed = git::read_at(&repo, head, crate::config::FILE_NAME)?;
    let here = std::fs::read(crate::config::Config::path_in(layout.root())).ok();
    Ok(match (committed, here) {
        (Some(c), Some(h)) => !crate::state::same_text(&h, &c),
        (c, h) => c != h,
    })
}

/// Each directive of a ledger text: its id and its entry as committed (LF, each line without its
/// trailing spaces: a checkout's CRLF, or an editor that trims or pads lines on save, is no edit; audit
/// 185: trailing spaces read as six entries edited, to be proposed).
fn entries(text: Option<&str>) -> Vec<(String, String)> {
    crate::ledger::parse::parse(text.unwrap_or(""))
        .ledger
        .directives()
        .map(|d| {
            let raw = crate::state::as_lf(&d.raw);
            let lines: Vec<&str> = raw.lines().map(str::trim_end).collect();
            (d.id.to_string(), lines.join("\n").trim_end().to_owned())
        })
        .collect()
}

/// The ids of the directives the `checkout`'s ledger has and the `branch`'s does not.
pub(crate) fn entries_not_on_branch(checkout: Option<&str>, branch: Option<&str>) -> Vec<String> {
    let theirs = entries(branch);
    entries(checkout)
        .into_iter()
        .filter(|(id, _)| !theirs.iter().any(|(t, _)| t == id))
        .map(|(id, _)| id)
        .collect()
}

/// The ids of the directives the `checkout`'s ledger has edited from the `branch`'s (a status line).
pub(crate) fn entries_edited(checkout: Option<&str>, branch: Option<&str>) -> Vec<String> {
    let theirs = entries(branch);
    entries(checkout)
        .into_iter()
        .filter(|(id, raw)| theirs.iter().any(|(t, r)| t == id && r != raw))
        .map(|(id, _)| id)
        .collect()
}

/// Says what a committing run leaves out of the checkout's ledger, and how each part gets in: new entries
/// and edits of entries the branch has (a status line) through `commitea propose`, anything else (an
/// entry deleted, the text around the entries) by a commit.
fn warn_uncommitted_ledger(checkout: Option<&str>, branch: Option<&str>) {
    let new = entries_not_on_branch(checkout, branch);
    let edited = entries_edited(checkout, branch);
    let file = crate::state::LEDGER_FILE;
    if !new.is_empty() {
        tracing::warn!(
            "{file} has new entries that are not on the branch ({}): this run forecasts without them; \
             `commitea propose` sends them for approval",
            new.join(", ")
        );
    }
    if !edited.is_empty() {
        tracing::warn!(
            "{file} has edits of entries the branch has ({}): this run forecasts the committed ledger and \
             leaves them out; `commitea propose` sends them for approval",
            edited.join(", ")
        );
    }
    let strays = crate::ledger::parse::strays(checkout.unwrap_or(""), branch.unwrap_or(""));
    for s in strays.iter().filter(|s| !s.problems.is_empty()) {
        tracing::warn!(
            "{file} {} is a directive entry that does not read, so nothing counts it: {}; fix it, then \
             `commitea propose` sends it for approval",
            s.lines(),
            s.problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if new.is_empty() && edited.is_empty() && strays.iter().all(|s| s.problems.is_empty()) {
        tracing::warn!(
            "{file} has edits that are not committed: this run forecasts the committed ledger and leaves \
             them out; commit them (git commit, then git push or a pull request) for them to count"
        );
    }
}

/// The op files under `ops/pending/` (`pending`, those that read) that the branch does not have, by
/// file name.
fn ops_not_on_branch(
    layout: &Layout,
    pending: &[crate::ops::OpFile],
) -> Result<Vec<String>, PipelineError> {
    if !layout.root().join(".git").exists() {
        return Ok(Vec::new());
    }
    let repo = git::open_or_init(layout.root())?;
    let on_branch: Vec<String> = match git::head(&repo) {
        Some(head) => git::list_dir(&repo, head, crate::ops::PENDING_PATH)?,
        None => Vec::new(),
    };
    Ok(pending
        .iter()
        .map(|f| format!("{}.yaml", f.id))
        .filter(|name| !on_branch.contains(name))
        .collect())
}

/// What the checkout changes that is not committed, in words (`pm-state.md: D-0008 (new)`,
/// `ops/pending/C-0004.yaml`, `commitea.yaml (edited)`): a site drawn from the checkout shows it (a
/// proposal as pending, a config edit in every figure).
pub fn uncommitted_proposals(layout: &Layout) -> Result<Vec<String>, PipelineError> {
    let branch = branch_ledger(layout)?;
    let checkout = crate::ledger::read(&layout.ledger())?;
    let file = crate::state::LEDGER_FILE;
    let mut out: Vec<String> = entries_not_on_branch(checkout.as_deref(), branch.as_deref())
        .into_iter()
        .map(|id| format!("{file}: {id} (new)"))
        .chain(
            entries_edited(checkout.as_deref(), branch.as_deref())
                .into_iter()
                .map(|id| format!("{file}: {id} (edited)")),
        )
        .collect();
    let (pending, _) = crate::ops::read_pending(layout)?;
    out.extend(
        ops_not_on_branch(layout, &pending)?
            .into_iter()
            .map(|name| format!("{}/{name}", crate::ops::PENDING_PATH)),
    );
    if config_edited(layout)? {
        out.push(format!("{} (edited)", crate::config::FILE_NAME));
    }
    Ok(out)
}

/// Says which op files are only in the checkout: the apply stage carries out what is on the branch.
fn warn_checkout_only_ops(
    layout: &Layout,
    pending: &[crate::ops::OpFile],
) -> Result<(), PipelineError> {
    let only_here = ops_not_on_branch(layout, pending)?;
    if !only_here.is_empty() {
        tracing::warn!(
            "{} only in the checkout ({}): {}; `commitea propose` sends {} for approval",
            crate::prose::count(only_here.len(), "op file is", "op files are"),
            only_here.join(", "),
            if only_here.len() == 1 {
                "it is not applied until it reaches the branch"
            } else {
                "none of them is applied until it reaches the branch"
            },
            if only_here.len() == 1 { "it" } else { "them" }
        );
    }
    Ok(())
}

/// The directives in force whose change Gitea does not carry and no pending op file will carry: the plan
/// follows the directive while Gitea shows something else (its pull request was merged without the op
/// file, the change failed on Gitea, or someone changed it on Gitea since).
fn not_carried_to_gitea(
    pending: &[crate::ops::OpFile],
    index: Option<&crate::apply::LedgerIndex<'_>>,
    not_on_gitea: Vec<crate::ledger::replay::NotOnGitea>,
) -> Vec<crate::ledger::replay::NotOnGitea> {
    // Its own op file (written for it, not for another directive given its id), or one that makes every
    // change it needs (`commitea directive --carry-out`).
    let carried = |n: &crate::ledger::replay::NotOnGitea| {
        pending.iter().any(|f| {
            f.id == n.directive
                && index.is_some_and(|i| i.standing(f) == crate::apply::Standing::InForce)
        }) || (!n.carry.is_empty()
            && n.carry
                .iter()
                .all(|op| pending.iter().any(|f| f.ops.contains(op))))
    };
    not_on_gitea.into_iter().filter(|n| !carried(n)).collect()
}

/// Warns of each pending op file of a directive that will not be carried out as it stands: one whose
/// directive is no longer in force (withdrawn or superseded) is clutter now (the apply stage skips it),
/// and its pull request a change no one should merge; one the ledger does not hold in force under its id
/// as the directive it was written for waits (the apply stage carries none of it out).
/// A file the branch's ledger lacks but the checkout's (`proposed`) holds in force is said by the warning of
/// the checkout's entries, which `commitea propose` sends with it (audit 166: "remove the file", of the
/// op file `commitea directive` had just written beside its entry).
fn warn_pending_of_inactive(
    pending: &[crate::ops::OpFile],
    index: Option<&crate::apply::LedgerIndex<'_>>,
    proposed: Option<&crate::apply::LedgerIndex<'_>>,
) -> Vec<crate::plan::Problem> {
    // By id, once: found entry by entry for each file, this was files × directives (audit 93).
    let Some(index) = index else {
        return Vec::new();
    };
    if pending.iter().all(|f| f.directive.is_none()) {
        return Vec::new();
    }
    let mut stale: Vec<(&crate::ops::OpFile, crate::ledger::format::Status, usize)> = Vec::new();
    for f in pending {
        match index.standing(f) {
            crate::apply::Standing::NotInForce { status, line } => stale.push((f, status, line)),
            crate::apply::Standing::Missing
                if proposed.is_some_and(|p| p.standing(f) == crate::apply::Standing::InForce) => {}
            standing => {
                if let Some(why) = standing.waits(&f.id) {
                    tracing::warn!("{}/{}.yaml {why}", crate::ops::PENDING_PATH, f.id);
                }
            }
        }
    }
    // A few are said one by one; many at once, in one (audit 93: 134 lines a run). In the forecast's
    // warnings, so the site says it beside the Changes page (audit 175: only the job's log did).
    const ONE_BY_ONE: usize = 3;
    let at = |line: usize| crate::plan::At::Ledger { line };
    if stale.len() <= ONE_BY_ONE {
        stale
            .into_iter()
            .map(|(f, status, line)| crate::plan::Problem {
                at: at(line),
                kind: crate::plan::ProblemKind::OpFileLeft(format!(
                    "{} is {status}, but its op file {}/{}.yaml is still pending: the apply stage carries \
                     none of it out now (it skips a directive no longer in force); delete it (and close \
                     its pull request, if one is open)",
                    f.id,
                    crate::ops::PENDING_PATH,
                    f.id
                )),
            })
            .collect()
    } else {
        let named: Vec<String> = stale
            .iter()
            .take(ONE_BY_ONE)
            .map(|(f, status, _)| format!("{} {status}", f.id))
            .collect();
        vec![crate::plan::Problem {
            at: at(stale[0].2),
            kind: crate::plan::ProblemKind::OpFileLeft(format!(
                "{} op files in {} are of directives no longer in force ({} and {} more): the apply stage \
                 carries none of them out; delete them (and close their pull requests, if open)",
                stale.len(),
                crate::ops::PENDING_PATH,
                named.join(", "),
                stale.len() - ONE_BY_ONE
            )),
        }]
    }
}

/// The state repo on the server: `approvals.state_repository`, else the job's `GITHUB_REPOSITORY`.
fn state_repository(opts: &RunOptions, config: &Config) -> Option<crate::domain::RepoName> {
    config.approvals.state_repository.clone().or_else(|| {
        opts.env
            .iter()
            .chain(std::iter::once(&(
                "GITHUB_REPOSITORY".to_owned(),
                std::env::var("GITHUB_REPOSITORY").unwrap_or_default(),
            )))
            .find(|(k, _)| k == "GITHUB_REPOSITORY")
            .and_then(|(_, v)| v.parse().ok())
    })
}

/// The proposals awaiting approval on the server, for the Changes page; none when there is no state repo
/// to ask, and a warning (not a failed run) when asking fails.
fn open_proposals(
    opts: &RunOptions,
    config: &Config,
    client: &crate::gitea::client::Client,
) -> Option<Vec<crate::apply::propose::OpenProposal>> {
    let repo = state_repository(opts, config)?;
    crate::apply::propose::open_proposals(client, &repo)
        .map_err(|e| tracing::warn!("the Changes page lists no open pull requests: {e}"))
        .ok()
}

/// The apply stage: the op files on the branch carried out against the fresh snapshot, and, in a run redone
/// after a push race, what its first attempt did.
fn apply_stage(
    opts: &RunOptions,
    config: &Config,
    layout: &Layout,
    client: &crate::gitea::client::Client,
    snapshot: &Snapshot,
) -> Result<crate::apply::Carried, PipelineError> {
    let mut carried = apply_on_branch(opts, config, layout, client, snapshot)?;
    if opts.applied_before.is_empty() {
        return Ok(carried);
    }
    let Ok(repo) = gix::open(layout.root()) else {
        return Ok(carried);
    };
    let Some(head) = git::head(&repo) else {
        return Ok(carried);
    };
    let applied = &mut carried.applied;
    // A run redone after a push race keeps what the first attempt did: for a file still pending, as its
    // record; for one another run recorded meanwhile (two runs at once), beside that run's record, where
    // the first attempt wrote something (audit 134: an issue it filed was in no record).
    for before in &opts.applied_before {
        match applied
            .iter_mut()
            .find(|a| a.proposal.id == before.proposal.id)
        {
            Some(a) => *a = before.clone(),
            // The other run's record says the same (each set the same field): nothing is lost.
            None if adds_to(before, recorded(&repo, head, &before.proposal.id)?.as_ref()) => {
                applied.push(before.clone());
            }
            None => {}
        }
    }
    Ok(carried)
}

/// Whether `mine`, a record of what a run did, says a write on Gitea that `theirs`, another run's record
/// of the same file, does not: an op it wrote where the other did not, or another issue filed. An issue
/// the other filed and this one found, a write both did, and what this one found already so add nothing
/// (audit 152: such a record was kept beside the other, its "already so" and a 500 for the dependency the
/// other added making the file "partly applied" while it was whole on Gitea).
fn adds_to(mine: &crate::apply::AppliedFile, theirs: Option<&crate::apply::AppliedFile>) -> bool {
    use crate::apply::Outcome;
    let Some(theirs) = theirs else {
        return mine.applied.results.iter().any(Outcome::wrote);
    };
    mine.applied
        .results
        .iter()
        .zip(&theirs.applied.results)
        .any(|(m, t)| match (m, t) {
            (Outcome::Created { issue: a, .. }, Outcome::Created { issue: b, .. }) => a != b,
            _ => m.wrote() && !t.wrote(),
        })
}

/// The apply stage proper: carries out the op files pending on the branch (see [`apply_stage`]).
fn apply_on_branch(
    opts: &RunOptions,
    config: &Config,
    layout: &Layout,
    client: &crate::gitea::client::Client,
    snapshot: &Snapshot,
) -> Result<crate::apply::Carried, PipelineError> {
    if !layout.root().join(".git").exists() {
        return Ok(crate::apply::Carried::default());
    }
    let repo = git::open_or_init(layout.root())?;
    let Some(head) = git::head(&repo) else {
        return Ok(crate::apply::Carried::default());
    };
    let mut pending = crate::apply::pending_on_branch(&repo, head, layout)?;
    // A file the branch records as carried out already (its record of the same proposal committed) is
    // one put back — a checkout of an older commit, a revert of a run's commit — not a new approval:
    // carried out again, it wrote an old priority over a later one (audit 192), and called it "another run
    // at the same time". `propose` refuses it too.
    let mut again = Vec::new();
    // And the remote's branch as last fetched, where it is ahead of this checkout: a run there carried
    // the file out, and this checkout, behind it, still has it pending (audit 197: a plain `run` wrote an
    // old priority over one given since; `run --push` brings the checkout up first).
    let ahead = git::resolve(
        &repo,
        &format!(
            "refs/remotes/{}/{}",
            config.approvals.remote, config.approvals.branch
        ),
    )
    .filter(|tip| *tip != head && git::is_ancestor(&repo, head, *tip));
    for p in &pending {
        let Ok(f) = &p.file else { continue };
        let same = |at| -> Result<bool, PipelineError> {
            Ok(recorded(&repo, at, &f.id)?.is_some_and(|r| same_proposal(&r.proposal, f)))
        };
        if let Some(tip) = ahead
            && !same(head)?
            && same(tip)?
        {
            again.push(p.path.clone());
            tracing::warn!(
                "{} was carried out already by a run on {}/{} (its record is there), which this checkout \
                 is behind: nothing of it is carried out again; bring the checkout up to it (`git pull`)",
                f.id,
                config.approvals.remote,
                config.approvals.branch
            );
            continue;
        }
        if same(head)? {
            again.push(p.path.clone());
            tracing::warn!(
                "{} was carried out already ({}/{}.yaml on the branch records it): nothing of it is carried \
                 out again; delete {} (put back by a checkout of an older commit or a revert?) — a change \
                 wanted again is a new proposal",
                f.id,
                crate::ops::APPLIED_PATH,
                f.id,
                p.path
            );
        }
    }
    pending.retain(|p| !again.contains(&p.path));
    if !pending.is_empty()
        && let Some(off) = crate::apply::off_approvals_branch(&repo, head, config)
    {
        tracing::warn!(
            "{off}: its op files ({}) are approved by nothing here, so none is carried out on Gitea; an op \
             file is approved by its merge into {}, and a run there carries it out",
            pending
                .iter()
                .map(|p| p.path.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            config.approvals.branch
        );
        return Ok(crate::apply::Carried::default());
    }
    for p in &pending {
        if let Err(e) = &p.file {
            tracing::warn!("{} is refused whole, nothing of it applied: {e}", p.path);
        }
    }
    if pending.iter().all(|p| p.file.is_err()) {
        return Ok(crate::apply::Carried::default());
    }
    // Gitea refuses every write without a token: the approved files wait for a run that has one.
    if opts.token.is_none() {
        let ids: Vec<&str> = pending
            .iter()
            .filter_map(|p| p.file.as_ref().ok())
            .map(|f| f.id.as_str())
            .collect();
        tracing::warn!(
            "{} on the branch ({}) {} pending: without a token (COMMITEA_GITEA_TOKEN, a token that may \
             write issues: scope write:issue) nothing can be applied on Gitea",
            crate::prose::count(ids.len(), "approved op file", "approved op files"),
            ids.join(", "),
            if ids.len() == 1 { "stays" } else { "stay" }
        );
        return Ok(crate::apply::Carried::default());
    }
    let state_repo = state_repository(opts, config);
    let by_pr;
    let approvals: &dyn crate::apply::Approvals = match state_repo {
        Some(repo) => {
            by_pr = crate::apply::StateRepoApprovals::new(client, repo);
            &by_pr
        }
        None => {
            tracing::warn!(
                "approvals.state_repository is not set (nor GITHUB_REPOSITORY): no destructive op can be \
                 checked for its merged pull request, so none is applied"
            );
            &crate::apply::NoApprovals
        }
    };
    // The ledger the files were merged with: a directive withdrawn since has its changes left undone.
    let ledger = git::read_at(&repo, head, crate::state::LEDGER_FILE)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    // The records of what was applied tell an issue a proposal filed from another of the same title, and a
    // change of a field since a proposal that CommiTea wrote for another file; read only where a file
    // files an issue or sets a field it saw.
    let needs_records = pending.iter().any(|p| {
        p.file.as_ref().is_ok_and(|f| {
            f.ops.iter().any(|o| {
                matches!(o, crate::ops::Op::CreateIssue { .. })
                    || (!f.seen.is_empty() && crate::apply::field_of(o).is_some())
            })
        })
    });
    let mut branch = crate::apply::OnBranch {
        ledger: crate::ledger::parse::parse(&ledger),
        ..Default::default()
    };
    if needs_records {
        branch.take_records(&applied_on_branch(&repo, head, layout)?);
    }
    // Where the records go is checked before Gitea is written to: a linked `ops/applied` failed the run
    // only after its writes, which then had no record (audit 159).
    let records_dir = layout.root().join(crate::ops::APPLIED_PATH);
    if let Some(link) = crate::state::link_below(layout.root(), &records_dir) {
        return Err(StateError::Io {
            path: link,
            source: crate::state::link_refused(),
        }
        .into());
    }
    let t = Instant::now();
    let mut record = |done: &mut crate::apply::AppliedFile| {
        // A run redone after a push race keeps its first attempt's record of the file (`apply_stage`),
        // placed once the stage is done.
        if opts
            .applied_before
            .iter()
            .any(|b| b.proposal.id == done.proposal.id)
        {
            return;
        }
        if let Err(e) = early_records(opts, layout, std::slice::from_mut(done)) {
            tracing::warn!(
                "{}: what this run carried out on Gitea is not recorded yet ({e}); the commit writes it",
                done.proposal.id
            );
        }
    };
    let carried = crate::apply::apply_pending(
        client,
        approvals,
        config,
        snapshot,
        &pending,
        &branch,
        opts.clock,
        &mut record,
    )
    .or_else(|e| match e {
        crate::apply::ApplyError::Client(c) => Err(PipelineError::Client(c)),
        crate::apply::ApplyError::Stopped {
            file,
            mut done,
            source,
        } => {
            // Recorded now, as a run's whole apply stage is: the next run commits them.
            let records = early_records(opts, layout, &mut done.applied)?;
            let ids: Vec<String> = done.applied.iter().map(|a| a.proposal.id.clone()).collect();
            let done = match (ids.is_empty(), opts.commit) {
                (true, _) => "nothing was carried out whole before it".to_owned(),
                (false, true) => format!(
                    "{} carried out whole before it, recorded in {} for the next run to commit",
                    crate::prose::and_list(&ids),
                    crate::prose::and_list(&records)
                ),
                (false, false) => format!(
                    "{} carried out whole before it (not recorded: this run does not commit)",
                    crate::prose::and_list(&ids)
                ),
            };
            Err(PipelineError::ApplyStopped { file, done, source })
        }
    })?;
    tracing::info!(
        "apply: {} in {:.0?}",
        crate::prose::count(carried.applied.len(), "op file", "op files"),
        t.elapsed()
    );
    Ok(carried)
}

/// The committed forecast: `forecast/forecast.json` at the state repo's HEAD, if there is a readable one.
/// Read from git, not the working tree, so a `plan` that only writes files does not change what the
/// next forecast keeps.
pub(crate) fn committed_forecast(layout: &Layout) -> Option<forecast::ForecastReport> {
    let repo = gix::open(layout.root()).ok()?;
    let head = git::head(&repo)?;
    let bytes = match git::read_at(&repo, head, crate::state::FORECAST_FILE) {
        Ok(b) => b?,
        Err(e) => {
            crate::prose::warn_once(
                &format!("forecast at {head}"),
                &format!("the committed forecast is not readable; planning from scratch: {e}"),
            );
            return None;
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(r) => Some(r),
        Err(e) => {
            crate::prose::warn_once(
                &format!("forecast at {head}"),
                &format!(
                    "{} at {head} is not readable; planning from scratch: {e}",
                    crate::state::FORECAST_FILE
                ),
            );
            None
        }
    }
}

/// The committed forecast, read once for the two things a new forecast takes from it: its day and its
/// people.
pub(crate) struct Committed(Option<forecast::ForecastReport>);

impl Committed {
    /// Reads `forecast/forecast.json` at HEAD (see [`committed_forecast`]).
    pub(crate) fn read(layout: &Layout) -> Self {
        Self(committed_forecast(layout))
    }

    /// The day zero of a forecast that syncs nothing and is given no `--now`: the snapshot's time, or the
    /// start of the committed forecast's day when that is later. A run forecasts from the moment it ran
    /// (days pass between syncs that change nothing), so the tools, `plan`, a directive's consequence and
    /// the standup then answer from the same day as the committed forecast the site shows. Only the day
    /// is committed — a moment would make every run a new commit.
    pub(crate) fn day_zero(
        &self,
        zone: &crate::config::Zone,
        synced_at: DateTime<Utc>,
    ) -> DateTime<Utc> {
        match &self.0 {
            Some(r) => zone.later_day(
                r.as_of.and_time(chrono::NaiveTime::MIN).and_utc(),
                synced_at,
            ),
            None => synced_at,
        }
    }

    /// The moment a reader that commits nothing forecasts from — `plan`, the tools, a what-if's two
    /// sides — given `--now` or not: taken as a run takes it, so one `--now` is one day zero on every
    /// surface (audit 177: a what-if took the moment raw, and its "before" was not the forecast
    /// `query_project` and the site gave, nor its "after" what the run committed once approved).
    pub(crate) fn moment(
        &self,
        zone: &crate::config::Zone,
        given: Option<DateTime<Utc>>,
        synced_at: DateTime<Utc>,
    ) -> DateTime<Utc> {
        match given {
            // `plan --now D` of the committed forecast's day is that forecast: taken raw, the day's
            // midnight came before the snapshot's moment, and a close made that day was gone from the
            // open work but not in the closing-rate history (audit 165: 160 closes against 161, Mobile
            // 3.0's p50 2027-08-16 against the committed 2027-09-02). A day before the snapshot's is
            // taken as given: the issues as they stood when synced, as of that day, which the forecast
            // says.
            Some(n) if zone.day_of(n) < zone.date_of(synced_at) => n,
            Some(n) => zone.later_day(start_of_day(zone, n), synced_at),
            None => self.day_zero(zone, synced_at),
        }
    }

    /// The committed forecast itself: what a reader of an unchanged state reuses
    /// ([`forecast::run_or_reuse`]).
    pub(crate) fn report(&self) -> Option<&forecast::ForecastReport> {
        self.0.as_ref()
    }

    /// Who it planned unassigned work for, for a plan of `team` to keep ([`forecast::people_to_keep`]:
    /// nothing once someone joined the team), unless `forecast.keep_planned_people` is off.
    pub(crate) fn people(
        &self,
        config: &Config,
        plan: &crate::plan::Plan,
    ) -> std::collections::BTreeMap<crate::domain::IssueKey, String> {
        self.kept(config)
            .map(|r| forecast::people_to_keep(&plan.team, plan.as_of, r))
            .unwrap_or_default()
    }

    /// What a plan of `ledger` keeps ([`forecast::Kept`]), for every reader that forecasts (a run, `plan`,
    /// a what-if's side before: audit 179 found the what-ifs keeping other people than the run): the
    /// people of the committed forecast and its cut lines — or, where a capacity directive it replayed
    /// is taken back (withdrawn, superseded, reverted), those of the forecast before it (kept from the
    /// last forecast, the work a hire took stayed as the hire shared it out, and the plan was worse than
    /// before the hire, audit 175), with the ids taken back.
    pub(crate) fn keeps(
        &self,
        layout: &Layout,
        config: &Config,
        plan: &crate::plan::Plan,
        ledger: Option<&str>,
    ) -> (forecast::Kept, Vec<String>) {
        let before = config
            .forecast
            .keep_planned_people
            .then(|| forecast_before_taken_back(layout, config, ledger))
            .flatten();
        let planned_for = match &before {
            Some((_, r)) => forecast::people_to_keep(&plan.team, plan.as_of, r),
            None => self.people(config, plan),
        };
        let cut_before = before
            .as_ref()
            .map(|(_, r)| r)
            .or(self.report())
            .map(forecast::cut_lines)
            .unwrap_or_default();
        (
            forecast::Kept {
                planned_for,
                cut_before,
            },
            before.map(|(ids, _)| ids).unwrap_or_default(),
        )
    }

    /// The forecast whose people a plan keeps ([`Self::people`]), unless `forecast.keep_planned_people`
    /// is off.
    pub(crate) fn kept(&self, config: &Config) -> Option<&forecast::ForecastReport> {
        self.0
            .as_ref()
            .filter(|_| config.forecast.keep_planned_people)
    }
}

/// What a plan of `ledger` keeps of the state's forecasts ([`Committed::keeps`]), with the capacity
/// directives taken back: for a reader outside a run (a what-if of a ledger edit).
pub fn keeps(
    layout: &Layout,
    config: &Config,
    plan: &crate::plan::Plan,
    ledger: Option<&str>,
) -> (forecast::Kept, Vec<String>) {
    Committed::read(layout).keeps(layout, config, plan, ledger)
}

/// Forecasts of the history [`forecast_before_taken_back`] reads at most.
const TAKEN_BACK_FORECASTS: usize = 180;

/// Where the committed forecast replayed capacity directives that `ledger` no longer holds in force
/// (withdrawn, superseded, or its entry reverted): those directives, and the newest forecast on the
/// first-parent history made before any of them was in force, whose planned people the plan takes up.
/// `None` when none was taken back, or no such forecast is found (then the last forecast's are kept).
fn forecast_before_taken_back(
    layout: &Layout,
    config: &Config,
    ledger: Option<&str>,
) -> Option<(Vec<String>, forecast::ForecastReport)> {
    use crate::ledger::format::{DirectiveKind, Status};
    if !layout.root().join(".git").exists() {
        return None;
    }
    // Each capacity directive in force, by id, with the member it is about and whether it gives them
    // working hours (a hire, a part-time week; not a holiday's 0 h).
    let team_directives = |text: &str| -> BTreeMap<String, (String, bool)> {
        crate::ledger::parse::parse(text)
            .ledger
            .directives()
            .filter(|d| d.kind == DirectiveKind::Capacity && d.status == Status::Active)
            .map(|d| {
                let member = match &d.target {
                    Some(crate::ledger::format::Target::Member(m)) => m.to_ascii_lowercase(),
                    _ => String::new(),
                };
                let hours = matches!(&d.params,
                    crate::ledger::format::Params::Capacity { hours_per_week, .. }
                        if *hours_per_week > 0.0);
                (d.id.to_string(), (member, hours))
            })
            .collect()
    };
    let now = team_directives(ledger.unwrap_or(""));
    // The configured team, by the lower-cased names the directives are compared by.
    let team: BTreeSet<String> = config
        .team
        .iter()
        .map(|m| m.name.to_ascii_lowercase())
        .collect();
    let repo = git::open_or_init(layout.root()).ok()?;
    // The commits that wrote a forecast (its blob differs from the parent's): at each, the ledger is
    // the one that forecast replayed. Walked lazily: every reader asks, and most stop at the first.
    let forecast_at = |c| git::blob_id_at(&repo, c, crate::state::FORECAST_FILE);
    let mut commits = git::first_parents(&repo)
        .map(|c| (c, forecast_at(c)))
        .peekable();
    let mut written = std::iter::from_fn(|| {
        loop {
            let (c, id) = commits.next()?;
            let parent = commits.peek().and_then(|(_, p)| *p);
            if id.is_some() && parent != id {
                return Some(c);
            }
        }
    })
    .take(TAKEN_BACK_FORECASTS);
    let ledger_at = |c| {
        git::read_at(&repo, c, crate::state::LEDGER_FILE)
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let last = written.next()?;
    let then = team_directives(&ledger_at(last));
    let of = |all: &BTreeMap<String, (String, bool)>, member: &str| -> BTreeSet<String> {
        all.iter()
            .filter(|(_, (m, _))| m == member)
            .map(|(id, _)| id.clone())
            .collect()
    };
    // What a member's capacity directives in force come to: all of them, for a member of the configured
    // team or one a directive in force gives hours; none for anyone else (a holiday of a hire withdrawn
    // adds nobody, audit 182).
    let effective = |all: &BTreeMap<String, (String, bool)>, member: &str| -> BTreeSet<String> {
        let ids = of(all, member);
        let counts = team.contains(member)
            || ids
                .iter()
                .any(|id| all.get(id).is_some_and(|(_, hours)| *hours));
        if counts { ids } else { BTreeSet::new() }
    };
    // Taken back: a member some of whose capacity directives in force at the last forecast are not now,
    // with none in force now that was not then. One replaced by a later directive for the same member is
    // a change, not a taking back (audit 181: the plan went back to before a hire still in force).
    let members: BTreeSet<String> = then
        .values()
        .map(|(m, _)| m)
        .filter(|m| {
            let (was, is) = (of(&then, m), of(&now, m));
            !was.is_subset(&is) && is.is_subset(&was)
        })
        .cloned()
        .collect();
    if members.is_empty() {
        return None;
    }
    let taken_back = |at: &BTreeMap<String, (String, bool)>| -> Vec<String> {
        at.iter()
            .filter(|(id, (m, _))| members.contains(m) && !now.contains_key(*id))
            .map(|(id, _)| id.clone())
            .collect()
    };
    let mut gone: BTreeSet<String> = taken_back(&then).into_iter().collect();
    // The plan before them: the newest forecast that had none of those members' directives in force but
    // those in force now (audit 182: a hire revised, then withdrawn, went back only to the hire), and
    // all of those that count (audit 189: a leave withdrawn while a part-time week of the same member
    // stood went back to before the part-time week, three months off). Reached a forecast without some of
    // them first, there is none: the last forecast's people are kept.
    let before = loop {
        let c = written.next()?;
        let at = team_directives(&ledger_at(c));
        let extra = taken_back(&at);
        if extra.is_empty() {
            if members
                .iter()
                .all(|m| effective(&at, m) == effective(&now, m))
            {
                break c;
            }
            return None;
        }
        gone.extend(extra);
    };
    let gone: Vec<String> = gone.into_iter().collect();
    let bytes = git::read_at(&repo, before, crate::state::FORECAST_FILE).ok()??;
    let report = serde_json::from_slice(&bytes).ok()?;
    Some((gone, report))
}

/// The day `t` stands for in the team's zone (`calendar.timezone`), carried as its midnight UTC: how a day
/// is carried everywhere (a committed forecast's `as_of`, `--now 2026-11-30`), so the readers that take a
/// forecast's day zero back from it ([`Committed::day_zero`]) find the same day in any zone.
fn start_of_day(zone: &crate::config::Zone, t: DateTime<Utc>) -> DateTime<Utc> {
    zone.day_of(t).and_time(chrono::NaiveTime::MIN).and_utc()
}

/// The records of what was applied: the branch's (`ops/applied/*.yaml` in `head`), and those a run stopped
/// before its commit left on disk (the next run takes them over, [`place_records`]). A record that does
/// not read is passed over: the apply stage reads records, it does not judge them.
fn applied_on_branch(
    repo: &gix::Repository,
    head: gix::ObjectId,
    layout: &Layout,
) -> Result<Vec<crate::apply::AppliedFile>, PipelineError> {
    let mut texts: Vec<(String, String)> = Vec::new();
    let committed = git::list_dir(repo, head, crate::ops::APPLIED_PATH)?;
    for name in &committed {
        let rel = format!("{}/{name}", crate::ops::APPLIED_PATH);
        if let Some(bytes) = git::read_at(repo, head, &rel)? {
            texts.push((rel, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    let dir = layout.root().join(crate::ops::APPLIED_PATH);
    let on_disk = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).collect::<Vec<_>>())
        .unwrap_or_default();
    for entry in on_disk {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".yaml")
            && !committed.contains(&name)
            && let Ok(text) = crate::state::read_text_file(&entry.path())
        {
            texts.push((format!("{}/{name}", crate::ops::APPLIED_PATH), text));
        }
    }
    Ok(texts
        .iter()
        .filter_map(|(rel, text)| crate::yamlfile::parse(text, Path::new(rel)).ok())
        .collect())
}

/// The repositories the snapshot at `commit` was synced from (its `meta.yaml`), if it reads.
fn synced_at(
    repo: &gix::Repository,
    commit: gix::ObjectId,
) -> Option<Vec<crate::domain::RepoName>> {
    let rel = format!("{}/meta.yaml", crate::state::SNAPSHOT_DIR);
    let bytes = git::read_at(repo, commit, &rel).ok()??;
    let meta: crate::state::Meta =
        crate::yamlfile::parse(&String::from_utf8_lossy(&bytes), Path::new(&rel)).ok()?;
    Some(meta.repositories.into_iter().map(|r| r.name).collect())
}

/// Whether two op files are one proposal: the same id, made at the same moment, asking the same ops (a
/// summary or a consequence edited, or the file laid out anew, is no new approval: audit 195 found a
/// restored file with its summary edited carried out again).
fn same_proposal(a: &crate::ops::OpFile, b: &crate::ops::OpFile) -> bool {
    a.id == b.id && a.created_at == b.created_at && a.ops == b.ops
}

/// The record `ops/applied/ID.yaml` at `commit`, if there is one that reads.
fn recorded(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    id: &str,
) -> Result<Option<crate::apply::AppliedFile>, PipelineError> {
    let rel = format!("{}/{id}.yaml", crate::ops::APPLIED_PATH);
    Ok(git::read_at(repo, commit, &rel)?
        .and_then(|b| crate::yamlfile::parse(&String::from_utf8_lossy(&b), Path::new(&rel)).ok()))
}

/// Where each applied file's record goes, `ops/applied/ID.yaml`, without losing one.
///
/// - A record of that id already committed is another proposal's (an older CommiTea could give one id
///   twice; the second apply erased what the first had done, an issue it filed included): this one goes
///   beside it as `ID.2.yaml`, `ID.3.yaml`, …, said in a warning.
/// - A record of the same proposal on disk but not committed is a run's that stopped between the apply
///   and its commit (a killed job): this run found everything "already so", so the stopped run's outcomes
///   (what it wrote, the issues it filed) are taken for those ops and the record is written over, once.
///
/// Without a repository (no commit) the files on disk are all there is to go by.
fn place_records(
    layout: &Layout,
    repo: Option<&gix::Repository>,
    applied: &mut [crate::apply::AppliedFile],
) -> Result<Vec<String>, PipelineError> {
    let head = repo.and_then(|r| git::head(r).map(|h| (r, h)));
    // Without a repository nothing is committed: a record on disk is an earlier run's, of the same
    // proposal or another's (audit 156: two `--no-commit` runs made every record a `.2` beside the first).
    let committed = |rel: &str| -> Result<bool, PipelineError> {
        Ok(match head {
            Some((r, h)) => git::read_at(r, h, rel)?.is_some(),
            None => false,
        })
    };
    let read = |path: &Path| {
        crate::state::read_text_file(path)
            .ok()
            .and_then(|t| crate::yamlfile::parse::<crate::apply::AppliedFile>(&t, path).ok())
    };
    let mut out = Vec::new();
    for a in applied.iter_mut() {
        let rel = format!("{}/{}.yaml", crate::ops::APPLIED_PATH, a.proposal.id);
        let on_disk = layout.root().join(&rel);
        // This run's own record, written as its file was carried out: placed already.
        let ours = |path: &Path, a: &crate::apply::AppliedFile| read(path).is_some_and(|r| r == *a);
        if !committed(&rel)? && ours(&on_disk, a) {
            out.push(rel);
            continue;
        }
        let other = if committed(&rel)? {
            true
        } else if on_disk.exists() {
            let stopped = read(&on_disk).filter(|s| s.proposal == a.proposal);
            if let Some(stopped) = &stopped {
                adopt_stopped_outcomes(a, stopped);
                tracing::warn!(
                    "{rel} was written by a run that did not commit it (one that stopped before its \
                     commit, or ran with --no-commit): what it applied is kept in this run's record"
                );
            }
            // An uncommitted file of another proposal is kept too.
            stopped.is_none()
        } else {
            false
        };
        if !other {
            out.push(rel);
            continue;
        }
        let stem = rel.trim_end_matches(".yaml");
        let mut n = 2;
        while committed(&format!("{stem}.{n}.yaml"))?
            || layout.root().join(format!("{stem}.{n}.yaml")).exists()
        {
            if ours(&layout.root().join(format!("{stem}.{n}.yaml")), a) {
                break;
            }
            n += 1;
        }
        let kept = format!("{stem}.{n}.yaml");
        if ours(&layout.root().join(&kept), a) {
            // Placed, and said, when it was written.
            out.push(kept);
            continue;
        }
        let theirs = match head {
            Some((r, h)) => recorded(r, h, &a.proposal.id)?,
            None => None,
        };
        if theirs.as_ref().is_some_and(|t| t.proposal == a.proposal) {
            // Two runs at once carried out the same approved file (Gitea before 1.26 and Forgejo before
            // v14 let scheduled and pushed runs overlap): what this one wrote is on Gitea too. An issue
            // the other run's record names is the one it filed, which this run found, not a second one
            // (audit 152: the only copies were called duplicates to close).
            let created = |results: &[crate::apply::Outcome]| -> Vec<String> {
                results
                    .iter()
                    .filter_map(|o| match o {
                        crate::apply::Outcome::Created { issue, .. } => Some(issue.clone()),
                        _ => None,
                    })
                    .collect()
            };
            let theirs_filed = theirs
                .as_ref()
                .map(|t| created(&t.applied.results))
                .unwrap_or_default();
            let filed: Vec<String> = created(&a.applied.results)
                .into_iter()
                .filter(|i| !theirs_filed.contains(i))
                .collect();
            tracing::warn!(
                "{} was carried out by another run at the same time ({rel}); what this run did too is \
                 recorded in {kept}{}",
                a.proposal.id,
                if filed.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": it filed {} as well, a second issue for the same op — close the duplicate on Gitea",
                        filed.join(", ")
                    )
                }
            );
        } else {
            tracing::warn!(
                "{rel} already records another proposal of that id (an id given twice): this one's record is \
                 {kept}, and neither is written over"
            );
        }
        out.push(kept);
    }
    Ok(out)
}

/// Places the records of what the apply stage carried out ([`place_records`]) and, for a run that
/// commits, writes them at once, before the sync after it, the forecast and the render: a run that stops
/// in between (killed, a full disk, the server gone) leaves them on disk for the next run to adopt. They
/// were written only with the commit, and the next run recorded the stopped one's writes, an approved
/// close among them, as "already so" (audit 152).
fn early_records(
    opts: &RunOptions,
    layout: &Layout,
    applied: &mut [crate::apply::AppliedFile],
) -> Result<Vec<String>, PipelineError> {
    if applied.is_empty() {
        return Ok(Vec::new());
    }
    let repo = if opts.commit {
        Some(git::open_or_init(layout.root())?)
    } else {
        None
    };
    let records = place_records(layout, repo.as_ref(), applied)?;
    if opts.commit {
        let texts = crate::apply::applied_texts(applied).map_err(StateError::from)?;
        for (rel, text) in records.iter().zip(texts) {
            if let Err(e) =
                crate::state::write_if_changed(&layout.root().join(rel), text.as_bytes())
            {
                tracing::warn!(
                    "{rel}: what this run carried out on Gitea is not recorded yet ({e}); the commit \
                     writes it again"
                );
            }
        }
    }
    Ok(records)
}

/// Takes a stopped run's outcome for each op this run found already so: the stopped run wrote it (or
/// filed the issue), which is what the record must say.
fn adopt_stopped_outcomes(
    record: &mut crate::apply::AppliedFile,
    stopped: &crate::apply::AppliedFile,
) {
    use crate::apply::Outcome;
    let id = record.proposal.id.clone();
    for (n, (mine, theirs)) in record
        .applied
        .results
        .iter_mut()
        .zip(&stopped.applied.results)
        .enumerate()
    {
        match (&*mine, theirs) {
            (Outcome::AlreadySo, Outcome::Applied { .. } | Outcome::Created { .. }) => {
                mine.clone_from(theirs);
            }
            // Both filed it (the stopped run's issue was not found again): both issues exist.
            (Outcome::Created { issue: now, .. }, Outcome::Created { issue: then, .. })
                if now != then =>
            {
                tracing::warn!(
                    "op {} of {id} filed {then} in a run that stopped before its commit and {now} in this \
                     one: close one of them as a duplicate",
                    n + 1
                );
            }
            _ => {}
        }
    }
}

/// Fails when the committed forecast names an engine of a later version than this binary's: a colleague's
/// older CommiTea would otherwise commit over it (an upgrade audit saw two versions overturn each other's
/// forecasts, every milestone "moved" each time). An engine of the same version, or one the forecast does
/// not name (written before engines were recorded), passes.
fn refuse_a_newer_engines_forecast(layout: &Layout) -> Result<(), PipelineError> {
    let version = |engine: &str| -> Option<(u64, u64, u64)> {
        let mut parts = engine.split('+').next()?.split('.').map(str::parse::<u64>);
        Some((
            parts.next()?.ok()?,
            parts.next()?.ok()?,
            parts.next()?.ok()?,
        ))
    };
    let Some(theirs) = Committed::read(layout)
        .report()
        .and_then(|r| r.engine.clone())
    else {
        return Ok(());
    };
    match (version(&theirs), version(forecast::ENGINE)) {
        (Some(t), Some(o)) if t > o => Err(PipelineError::NewerEngine {
            file: crate::state::FORECAST_FILE.to_owned(),
            theirs,
            ours: forecast::ENGINE.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// [`Committed::day_zero`] for a reader that needs nothing else from the committed forecast.
pub fn day_zero(
    layout: &Layout,
    zone: &crate::config::Zone,
    synced_at: DateTime<Utc>,
) -> DateTime<Utc> {
    Committed::read(layout).day_zero(zone, synced_at)
}

/// The forecast settings the state keeps (`commitea.yaml` and the environment, without the run's flags):
/// what a reader given no `--seed` or `--trials` draws with.
pub(crate) fn settings_kept(
    opts: &RunOptions,
    layout: &Layout,
) -> Result<forecast::Settings, PipelineError> {
    Ok(forecast::Settings::from_config(&Config::load(
        layout.root(),
        opts.env.iter().cloned(),
        &Default::default(),
    )?))
}

/// What a forecast drawn with `--seed` or `--trials` other than the settings' says: the state keeps no
/// flag, so `plan`, the tools, `render`, `propose` and the next run draw with `commitea.yaml`'s, and
/// their figures differ from the committed ones by the draw (audits 169, 176, 177: the site said a
/// p80 of Apr 12, every other reader Apr 8, and nothing said why).
fn one_off_draw(
    opts: &RunOptions,
    layout: &Layout,
    config: &Config,
) -> Result<Option<String>, PipelineError> {
    if opts.overrides.seed.is_none() && opts.overrides.trials.is_none() {
        return Ok(None);
    }
    let kept = settings_kept(opts, layout)?;
    let drawn = forecast::Settings::from_config(config);
    let mut differs = Vec::new();
    let mut keep = Vec::new();
    if kept.seed != drawn.seed {
        differs.push(format!(
            "{} (--seed), not {}",
            forecast::seed_words(drawn.seed),
            match forecast::seed_words(kept.seed) {
                own if kept.seed != forecast::DEFAULT_SEED => format!("the settings' {own}"),
                default => default,
            }
        ));
        keep.push(format!("seed: {}", drawn.seed));
    }
    if kept.trials != drawn.trials {
        differs.push(format!(
            "{} trials (--trials), not the settings' {}",
            drawn.trials, kept.trials
        ));
        keep.push(format!("trials: {}", drawn.trials));
    }
    if differs.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!(
        "drawn with {}: `plan`, the tools, `render`, `propose` and the next run draw with the settings', \
         so their figures differ from these by the draw; to keep this draw, set {} under `forecast:` in \
         commitea.yaml",
        crate::prose::and_list(&differs),
        crate::prose::and_list(&keep)
    )))
}

/// [`Committed::moment`] for a reader that needs nothing else from the committed forecast.
pub fn moment(
    layout: &Layout,
    zone: &crate::config::Zone,
    given: Option<DateTime<Utc>>,
    synced_at: DateTime<Utc>,
) -> DateTime<Utc> {
    Committed::read(layout).moment(zone, given, synced_at)
}

/// The last backtest report, if the state has one; an unreadable one is reported and left out.
fn read_backtest(
    layout: &Layout,
    problems: &mut Vec<String>,
) -> Option<crate::backtest::BacktestReport> {
    use crate::state::BACKTEST_FILE;
    let path = layout.backtest_file();
    let bytes = std::fs::read(&path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::warn!("{BACKTEST_FILE} is not readable, left out: {e}");
            problems.push(format!(
                "{BACKTEST_FILE}: {e}; run `commitea backtest --write` again"
            ));
            None
        }
    }
}

/// The sync stage: read the configured repositories from Gitea into a new snapshot, in memory.
fn sync_stage(
    opts: &RunOptions,
    config: &Config,
    layout: &Layout,
    server: &str,
) -> Result<(Snapshot, crate::gitea::client::Client, Option<Snapshot>), PipelineError> {
    if config.repositories.is_empty() {
        return Err(PipelineError::Unavailable(format!(
            "{}: no repositories to sync: list them under `repositories:` (owner/repo), or run with --offline",
            crate::config::FILE_NAME
        )));
    }
    let client = crate::gitea::client::Client::new(
        server,
        opts.token.clone(),
        crate::gitea::client::ClientOptions {
            parallel: config.sync.parallel.0 as usize,
            max_parallel: config.sync.max_parallel.0 as usize,
            ..Default::default()
        },
    )?;
    if opts.token.is_none() {
        tracing::warn!(
            "reading {server} without a token (COMMITEA_GITEA_TOKEN is not set, or empty): Gitea shows a visitor \
             only what it shows the public, and approved changes cannot be applied"
        );
    }
    let previous = match Snapshot::load_for_run(layout) {
        Ok(s) => Some(s),
        Err(StateError::NoSnapshot { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let snapshot = sync_with(&client, opts, config, previous.as_ref(), opts.full_sync)?;
    Ok((snapshot, client, previous))
}

/// One sync against `previous` with `client`, logged.
fn sync_with(
    client: &crate::gitea::client::Client,
    opts: &RunOptions,
    config: &Config,
    previous: Option<&Snapshot>,
    full: bool,
) -> Result<Snapshot, PipelineError> {
    let requests_before = client.request_count();
    let options = crate::gitea::sync::SyncOptions {
        full_every_days: config.sync.full_every_days.0,
        force_full: full,
        max_vanished_share: config.sync.max_vanished_share.0,
    };
    let t = Instant::now();
    let outcome =
        crate::gitea::sync::sync(client, &config.repositories, previous, opts.clock, &options)?;
    tracing::info!(
        "sync: {} from {} in {} ({} at once at most), {:.0?}; {} read in full, {} re-read{}",
        crate::prose::count(outcome.snapshot.issues.len(), "issue", "issues"),
        crate::prose::count(config.repositories.len(), "repository", "repositories"),
        crate::prose::count(
            client.request_count() - requests_before,
            "request",
            "requests"
        ),
        client.peak_parallel(),
        t.elapsed(),
        outcome.full.len(),
        crate::prose::count(outcome.refreshed, "issue", "issues"),
        if outcome.changed {
            ""
        } else {
            "; nothing changed"
        }
    );
    Ok(outcome.snapshot)
}

/// The view payloads written under `forecast/views/` and the site is rendered from, by name.
pub(crate) const VIEWS: [&str; 5] = ["overview", "board", "runway", "directives", "calibration"];

/// The files under `forecast/` for a computed state: path relative to the state repo → bytes.
pub(crate) fn forecast_files(c: &Computed) -> Result<BTreeMap<String, Vec<u8>>, StateError> {
    let mut out = BTreeMap::new();
    let report = Path::new(crate::state::FORECAST_FILE);
    out.insert(
        crate::state::FORECAST_FILE.to_owned(),
        crate::state::to_json(&c.report, report)?,
    );
    for name in VIEWS {
        let rel = crate::state::view_path(name);
        let bytes = match name {
            "overview" => crate::state::to_json(&c.overview, Path::new(&rel))?,
            "board" => crate::state::to_json(&c.board, Path::new(&rel))?,
            "runway" => crate::state::to_json(&c.runway, Path::new(&rel))?,
            "directives" if !c.pending_committed => {
                let mut d = c.directives.clone();
                d.pending = None;
                crate::state::to_json(&d, Path::new(&rel))?
            }
            "directives" => crate::state::to_json(&c.directives, Path::new(&rel))?,
            _ => crate::state::to_json(&c.calibration, Path::new(&rel))?,
        };
        out.insert(rel, bytes);
    }
    if !c.standing_refused.is_empty() {
        out.insert(
            crate::state::REFUSED_FILE.to_owned(),
            crate::state::to_json(&c.standing_refused, Path::new(crate::state::REFUSED_FILE))?,
        );
    }
    Ok(out)
}

/// The refusals the last run that put approved files to Gitea recorded ([`crate::state::REFUSED_FILE`]);
/// none where there is no record, and a record that does not read is said and taken as none.
fn read_refused(layout: &Layout) -> Vec<crate::apply::Refused> {
    let path = layout.root().join(crate::state::REFUSED_FILE);
    let Ok(bytes) = std::fs::read(&path) else {
        return Vec::new();
    };
    let read: Vec<crate::apply::Refused> = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        tracing::warn!(
            "{}: not read ({e}); the pages say no approved file is refused by Gitea until the next run \
             asks it again",
            path.display()
        );
        Vec::new()
    });
    // A file taken out of ops/pending/ since is refused no longer (audit 156: the record outlived it).
    read.into_iter()
        .filter(|r| {
            layout
                .root()
                .join(crate::ops::PENDING_PATH)
                .join(format!("{}.yaml", r.id))
                .exists()
        })
        .collect()
}

/// The applied op files in the checkout's `ops/applied/`, by file name; one that cannot be read is said
/// (`who` reads them) and left out, not fatal.
fn read_applied(
    layout: &Layout,
    who: &str,
) -> Result<Vec<crate::apply::AppliedFile>, PipelineError> {
    let dir = layout.root().join(crate::ops::APPLIED_PATH);
    let mut applied = Vec::new();
    if !dir.is_dir() {
        return Ok(applied);
    }
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .map_err(|source| StateError::Io {
            path: dir.clone(),
            source,
        })?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    paths.sort();
    for path in paths {
        let text = crate::state::read_text_file(&path).map_err(|source| StateError::Io {
            path: path.clone(),
            source,
        })?;
        match crate::yamlfile::parse::<crate::apply::AppliedFile>(&text, &path) {
            Ok(a) => applied.push(a),
            Err(e) => tracing::warn!("{who}: {e}"),
        }
    }
    Ok(applied)
}

/// Every op file in the checkout's `ops/pending/` (each with whether the branch holds it too), every file
/// in `ops/applied/`, and the ledger on the branch and in the checkout: the changes page's data. `just_applied`
/// are the files this run's apply stage carried out, which its commit moves from pending to applied after
/// the page is drawn: the page shows them applied.
pub(crate) fn load_changes(
    layout: &Layout,
    holds: crate::apply::RepoHolds<'_>,
    just_applied: &[crate::apply::AppliedFile],
    refused: &[crate::apply::Refused],
    apply_ran: bool,
    open_pull_requests: Option<&[crate::apply::propose::OpenProposal]>,
    zone: &crate::config::Zone,
) -> Result<crate::views::changes::Changes, PipelineError> {
    let on_branch: std::collections::HashSet<String> = if layout.root().join(".git").exists() {
        let repo = git::open_or_init(layout.root())?;
        match git::head(&repo) {
            Some(head) => git::list_dir(&repo, head, crate::ops::PENDING_PATH)?
                .into_iter()
                .filter_map(|n| n.strip_suffix(".yaml").map(str::to_owned))
                .collect(),
            None => Default::default(),
        }
    } else {
        Default::default()
    };
    let done: std::collections::HashSet<&str> = just_applied
        .iter()
        .map(|a| a.proposal.id.as_str())
        .collect();
    let (pending, problems) = crate::ops::read_pending(layout)?;
    let unreadable: Vec<crate::views::changes::Unreadable> = problems
        .iter()
        .map(|(path, e)| crate::views::changes::Unreadable {
            path: layout.rel(path).to_string_lossy().replace('\\', "/"),
            reason: e.to_string(),
        })
        .collect();
    for (path, e) in &problems {
        // The apply stage already said that this file, on the branch, is refused whole.
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        if !(apply_ran && stem.is_some_and(|s| on_branch.contains(&s))) {
            crate::ops::warn_left_out(e);
        }
    }
    let pending: Vec<(crate::ops::OpFile, bool)> = pending
        .into_iter()
        .filter(|f| !done.contains(f.id.as_str()))
        .map(|f| {
            let b = on_branch.contains(&f.id);
            (f, b)
        })
        .collect();
    let mut applied: Vec<crate::apply::AppliedFile> = read_applied(layout, "changes page")?
        .into_iter()
        .filter(|a| !done.contains(a.proposal.id.as_str()))
        .collect();
    applied.extend(just_applied.iter().cloned());
    let branch = branch_ledger(layout)?;
    let checkout = crate::ledger::read(&layout.ledger())?;
    let mut changes = crate::views::changes::changes(
        &pending,
        &applied,
        branch.as_deref(),
        checkout.as_deref(),
        zone,
    );
    // An approved file Gitea refused is not "applied at the next run" (audit 146: an archived
    // repository's op read so on every page); nor is one held for its repositories, or behind a held
    // one (audit 168: a repository taken out of the config), in the order the apply stage takes them,
    // the order they reached the branch (audit 173: in id order a C- file behind a D- one was missed).
    let files: BTreeMap<&str, &crate::ops::OpFile> =
        pending.iter().map(|(f, _)| (f.id.as_str(), f)).collect();
    // Only two files or more on the branch have an order to keep (reading it walks each one's history).
    let on_branch_files = changes
        .pending
        .iter()
        .filter(|c| c.state == crate::views::changes::ChangeState::OnBranch)
        .count();
    let merged: Vec<String> = if on_branch_files > 1 && layout.root().join(".git").exists() {
        let repo = git::open_or_init(layout.root())?;
        git::head(&repo)
            .and_then(|head| crate::apply::pending_on_branch(&repo, head, layout).ok())
            .unwrap_or_default()
            .iter()
            .filter_map(|p| p.file.as_ref().ok().map(|f| f.id.clone()))
            .collect()
    } else {
        Vec::new()
    };
    let mut order: Vec<usize> = (0..changes.pending.len()).collect();
    order.sort_by_key(|&i| {
        merged
            .iter()
            .position(|id| *id == changes.pending[i].id)
            .unwrap_or(usize::MAX)
    });
    // A directive's file waits for the branch's ledger to hold its directive, as the apply stage says.
    let parsed = crate::ledger::parse::parse(branch.as_deref().unwrap_or(""));
    let index = crate::apply::LedgerIndex::new(&parsed);
    let mut held: BTreeMap<String, (String, String)> = BTreeMap::new();
    for i in order {
        let c = &mut changes.pending[i];
        let Some(file) = files
            .get(c.id.as_str())
            .filter(|_| c.state == crate::views::changes::ChangeState::OnBranch)
        else {
            continue;
        };
        // A directive no longer in force: the apply stage passes its file over, holding nothing back.
        if let crate::apply::Standing::NotInForce { status, .. } = index.standing(file) {
            c.state_label = format!(
                "its directive is {status}: none of it is carried out; delete this file (and close its \
                 pull request, if one is open)"
            );
            // What carrying it out would have done is no more (audit 179: shown beside "none of it").
            c.consequence.clear();
            c.summary = format!("nothing: {} is {status}", c.id);
            continue;
        }
        let targets = crate::apply::targets_of(file);
        let why = if let Some(r) = refused.iter().find(|r| r.id == c.id) {
            let since = chrono::DateTime::parse_from_rfc3339(&r.at)
                .map(|at| format!(" (since {})", zone.date_of(at.to_utc())))
                .unwrap_or_default();
            Some(format!("approved, but {}{since}; it stays pending", r.why))
        } else {
            index
                .standing(file)
                .waits(&file.id)
                .or_else(|| holds.why(file))
                .or_else(|| {
                    targets.iter().find_map(|(t, _)| {
                        held.get(t)
                            .map(|(id, what)| crate::apply::behind_words(id, what))
                    })
                })
                .map(|why| format!("approved, but it {why}"))
        };
        if let Some(why) = why {
            c.state_label = why;
            for (t, what) in targets {
                held.entry(t).or_insert((c.id.clone(), what));
            }
        }
    }
    changes.open_pull_requests = open_pull_requests.map(<[_]>::to_vec).unwrap_or_default();
    changes.pulls_checked = open_pull_requests.is_some();
    changes.unreadable = unreadable;
    Ok(changes)
}

/// Committed forecasts the drift charts read at most (the newest first): about half a year of daily runs.
/// Counted in forecasts, not commits: merges, ledger and config commits between the runs do not shorten
/// it (audit 103: 64 days of runs were 114 commits).
const DRIFT_FORECASTS: usize = 180;

/// What the earlier committed forecasts said about the milestones: `forecast/forecast.json` along the
/// first-parent history of HEAD, newest first, the same file read once.
pub(crate) fn past_forecasts(
    layout: &Layout,
) -> Result<Vec<crate::views::history::PastForecast>, PipelineError> {
    if !layout.root().join(".git").exists() {
        return Ok(Vec::new());
    }
    let repo = git::open_or_init(layout.root())?;
    let mut out = Vec::new();
    let mut last: Option<Vec<u8>> = None;
    for (commit, _) in git::first_parent_history(&repo)? {
        if out.len() == DRIFT_FORECASTS {
            break;
        }
        let Some(bytes) = git::read_at(&repo, commit, crate::state::FORECAST_FILE)? else {
            continue;
        };
        if last.as_ref() == Some(&bytes) {
            continue;
        }
        match serde_json::from_slice::<crate::views::history::PastForecast>(&bytes) {
            Ok(f) => out.push(f),
            // An old format the drift cannot read ends the history it can.
            Err(e) => {
                tracing::debug!("drift: forecast of {commit} not read: {e}");
                break;
            }
        }
        last = Some(bytes);
    }
    Ok(out)
}

/// Committed forecasts the standup looks back through at most for one that differs from today's.
const DRIFT_LOOKBACK: usize = 200;

/// The newest committed forecast that differs from `today`'s, if the state repo at `dir` has one: what
/// the standup measures drift against. It is named by the commit that wrote it — the oldest of the
/// commits just before that carry the same file — not by a later commit that only carried it along
/// (a ledger commit, say), so `git show` of the named commit shows that forecast being made. What was
/// recorded since is read against `ledger`, the ledger today's forecast replayed ([`Computed::ledger`]):
/// the branch's for a run, the checkout's for a preview or a tool.
pub(crate) fn previous_forecast(
    dir: &Path,
    c: &Computed,
) -> Option<crate::views::standup::Previous> {
    previous_forecast_in(&gix::open(dir).ok()?, c)
}

/// [`previous_forecast`] in an open repository.
fn previous_forecast_in(
    repo: &gix::Repository,
    c: &Computed,
) -> Option<crate::views::standup::Previous> {
    let ledger = c.ledger.as_deref();
    let today =
        crate::state::to_json(&c.report, std::path::Path::new(crate::state::FORECAST_FILE)).ok()?;
    let history = crate::state::git::first_parent_history(repo).ok()?;
    let walked: Vec<gix::ObjectId> = history
        .iter()
        .take(DRIFT_LOOKBACK)
        .map(|(id, _)| *id)
        .collect();
    let read = |id| crate::state::git::read_at(repo, id, crate::state::FORECAST_FILE);
    // The directives in the ledger at a commit, their status and target (none where it has no ledger).
    // What each asks (its day and params) tells an entry edited since from one left as it was.
    type Entries = BTreeMap<
        crate::ledger::format::DirectiveId,
        (
            crate::ledger::format::Status,
            Option<crate::ledger::format::Target>,
            (chrono::DateTime<chrono::Utc>, crate::ledger::format::Params),
        ),
    >;
    let entries = |text: &str| -> Entries {
        crate::ledger::parse::parse(text)
            .ledger
            .directives()
            .map(|d| (d.id, (d.status, d.target.clone(), (d.at, d.params.clone()))))
            .collect()
    };
    let directives = |id| match crate::state::git::read_at(repo, id, crate::state::LEDGER_FILE) {
        Ok(Some(bytes)) => entries(&String::from_utf8_lossy(&bytes)),
        _ => BTreeMap::new(),
    };
    // Today's settings are the checkout's `commitea.yaml`, which every forecast reads (a run too);
    // without a checkout, the branch's.
    let workdir = repo.workdir().map(Path::to_path_buf);
    let config_on_disk = workdir
        .as_ref()
        .map(|w| std::fs::read(w.join(crate::config::FILE_NAME)).ok());
    let head = history.first().map(|(id, _)| *id)?;
    let mut history = history.into_iter().take(DRIFT_LOOKBACK).map(|(id, _)| id);
    while let Some(id) = history.next() {
        let Ok(Some(bytes)) = read(id) else {
            continue;
        };
        if bytes == today {
            continue;
        }
        match serde_json::from_slice::<crate::forecast::ForecastReport>(&bytes) {
            Ok(report) => {
                let mut made_in = id;
                for older in history.by_ref() {
                    match read(older) {
                        Ok(Some(b)) if b == bytes => made_in = older,
                        _ => break,
                    }
                }
                // The ledger that forecast replayed: its commit's, unless a rebase put that commit on
                // top of entries merged after it was made; then the newest commit before with the
                // entries it recorded.
                let ledger_at = |id| {
                    crate::state::git::read_at(repo, id, crate::state::LEDGER_FILE)
                        .ok()
                        .flatten()
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                };
                let ledger_commit = report
                    .ledger
                    .as_deref()
                    .and_then(|want| {
                        walked
                            .iter()
                            .skip_while(|id| **id != made_in)
                            .find(|id| {
                                crate::forecast::ledger_entries(ledger_at(**id).as_deref()) == want
                            })
                            .copied()
                    })
                    .unwrap_or(made_in);
                let then = directives(ledger_commit);
                let now = entries(ledger.unwrap_or(""));
                // Compared as settings, so an edited comment is no change; a file that does not
                // parse counts as itself.
                let settings_of = |bytes: Option<Vec<u8>>| {
                    bytes.map(|bytes| {
                        let text = String::from_utf8_lossy(&bytes).into_owned();
                        Config::parse(&text, Path::new(crate::config::FILE_NAME)).map_err(|_| text)
                    })
                };
                let settings = |id| {
                    settings_of(
                        crate::state::git::read_at(repo, id, crate::config::FILE_NAME)
                            .ok()
                            .flatten(),
                    )
                };
                let settings_now = config_on_disk
                    .clone()
                    .map_or_else(|| settings(head), settings_of);
                // The directives recorded since and those in force then and no longer, each with what
                // it is about (so that a move can name the directive behind it) and how it is said.
                let active = crate::ledger::format::Status::Active;
                // One recorded and already withdrawn or superseded says so (`D-0012 withdrawn`).
                let recorded_since: Vec<_> =
                    now.iter().filter(|(d, _)| !then.contains_key(d)).collect();
                let ended_since: Vec<_> = now
                    .iter()
                    .filter(|(d, (status, ..))| {
                        *status != active && then.get(d).is_some_and(|(was, ..)| *was == active)
                    })
                    .collect();
                // Taken out of the ledger, or made to ask otherwise, by a commit (a revert, a hand
                // edit): its move is said as its own (audit 167: removing a capacity directive moved 47
                // issues, put down to "queue of gus").
                let removed_since: Vec<_> = then
                    .iter()
                    .filter(|(d, (was, ..))| *was == active && !now.contains_key(d))
                    .collect();
                // Back in force by a commit (a revert of its withdrawal): as much a change (audit 170).
                let reinstated_since: Vec<_> = now
                    .iter()
                    .filter(|(d, (status, ..))| {
                        *status == active && then.get(d).is_some_and(|(was, ..)| *was != active)
                    })
                    .collect();
                let edited_since: Vec<_> = now
                    .iter()
                    .filter(|(d, (status, target, asks))| {
                        *status == active
                            && then.get(d).is_some_and(|(was, t, a)| {
                                *was == active && (t != target || a != asks)
                            })
                    })
                    .collect();
                let since_ids: std::collections::BTreeSet<String> = recorded_since
                    .iter()
                    .chain(&ended_since)
                    .chain(&removed_since)
                    .chain(&edited_since)
                    .chain(&reinstated_since)
                    .map(|(d, _)| d.to_string())
                    .collect();
                let recorded: Vec<_> = recorded_since
                    .into_iter()
                    .map(|(d, (status, target, _))| {
                        let said = if *status == active {
                            d.to_string()
                        } else {
                            format!("{d} {status}")
                        };
                        (target, said)
                    })
                    .collect();
                let mut ended: Vec<_> = ended_since
                    .into_iter()
                    .map(|(d, (status, target, _))| (d, target, format!("{d} {status}")))
                    .chain(removed_since.into_iter().map(|(d, (_, target, _))| {
                        (d, target, format!("{d} removed from the ledger"))
                    }))
                    .chain(
                        edited_since
                            .into_iter()
                            .map(|(d, (_, target, _))| (d, target, format!("{d} edited"))),
                    )
                    .chain(
                        reinstated_since
                            .into_iter()
                            .map(|(d, (_, target, _))| (d, target, format!("{d} back in force"))),
                    )
                    .collect();
                ended.sort_by_key(|(d, ..)| **d);
                let ended: Vec<_> = ended
                    .into_iter()
                    .map(|(_, target, said)| (target, said))
                    .collect();
                let touched: Vec<(crate::ledger::format::Target, String)> = recorded
                    .iter()
                    .chain(&ended)
                    .filter_map(|(target, said)| Some(((*target).clone()?, said.clone())))
                    .collect();
                let settings_then = settings(made_in);
                // A commit without the file says nothing of the settings it was made with.
                let settings_changed = settings_then
                    .as_ref()
                    .is_some_and(|then| settings_now.as_ref() != Some(then));
                let keys: Vec<&'static str> = match (&settings_then, &settings_now) {
                    (Some(Ok(a)), Some(Ok(b))) => a.forecast_keys_changed(b),
                    _ => Vec::new(),
                };
                let mut forecast_settings: Vec<String> = Vec::new();
                if !keys.is_empty() {
                    forecast_settings.push(format!(
                        "{}: {}",
                        crate::config::FILE_NAME,
                        crate::prose::and_list(
                            &keys.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>()
                        )
                    ));
                }
                // What the forecasts record of their own settings, where commitea.yaml does not say the
                // change: a flag or a COMMITEA_* variable set it for one of them (audit 120: a run with
                // --trials 100 had its moves put down to queues, and so had the next without it).
                let days = |r: &crate::forecast::ForecastReport| (r.horizon - r.as_of).num_days();
                for (key, then, now) in [
                    (
                        "forecast.trials",
                        u64::from(report.trials),
                        u64::from(c.report.trials),
                    ),
                    ("forecast.seed", report.seed, c.report.seed),
                    (
                        "forecast.horizon_days",
                        days(&report).unsigned_abs(),
                        days(&c.report).unsigned_abs(),
                    ),
                ] {
                    if then != now && !keys.contains(&key) {
                        // The built-in seed is said as that, not as its 19 digits (audit 121).
                        let said = |v: u64| {
                            if key == "forecast.seed" && v == forecast::DEFAULT_SEED {
                                "the default".to_owned()
                            } else {
                                v.to_string()
                            }
                        };
                        forecast_settings.push(format!(
                            "{key} {} then, {} now, set by a flag or a COMMITEA_ variable for one of \
                             them",
                            said(then),
                            said(now)
                        ));
                    }
                }
                // The team as the forecast then planned it (its settings and directives on today's
                // snapshot), where it may differ from today's: a move is put down to a person's capacity
                // only where their hours really changed before the issue ends.
                let member_touched = touched
                    .iter()
                    .any(|(t, _)| matches!(t, crate::ledger::format::Target::Member(_)));
                let ledger_then = || ledger_at(ledger_commit);
                let team = match &settings_then {
                    Some(Ok(config)) if settings_changed || member_touched => {
                        let ledger_then = ledger_then();
                        let then = crate::ledger::replay(
                            &c.snapshot,
                            config,
                            ledger_then.as_deref(),
                            c.plan.now,
                        )
                        .plan;
                        (then.team != c.plan.team || then.team_calendar != c.plan.team_calendar)
                            .then_some((then.team, then.team_calendar))
                    }
                    _ => None,
                };
                // The op files applied since: in the checkout (or applied by this run) and not at
                // that commit. What they changed on Gitea is theirs, not an edit made there.
                let applied_then: std::collections::HashSet<String> =
                    crate::state::git::list_dir(repo, made_in, crate::ops::APPLIED_PATH)
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|n| n.strip_suffix(".yaml").map(str::to_owned))
                        .collect();
                let mut applied: Vec<crate::views::standup::AppliedSince> = workdir
                    .as_deref()
                    .and_then(|w| read_applied(&Layout::new(w), "standup").ok())
                    .unwrap_or_default()
                    .iter()
                    .chain(&c.applied)
                    .filter(|a| !applied_then.contains(&a.proposal.id))
                    .map(crate::views::standup::AppliedSince::of)
                    .collect();
                applied.sort_by(|a, b| a.id.cmp(&b.id));
                applied.dedup_by(|a, b| a.id == b.id);
                // Today's forecast without the directives recorded or ended since (the ledger of
                // then, on today's snapshot and settings, the same people and numbers): a directive is
                // behind a move only where it changed that figure (an audit found one named on moves
                // that were the same without it).
                let without_directives = (!since_ids.is_empty()).then(|| {
                    let mut plan = crate::ledger::replay(
                        &c.snapshot,
                        &c.config,
                        ledger_then().as_deref(),
                        c.plan.now,
                    )
                    .plan;
                    plan.planned_for.clone_from(&c.plan.planned_for);
                    plan.last_planned.clone_from(&c.plan.last_planned);
                    let report = crate::forecast::run_unkeyed(
                        &plan,
                        &forecast::Settings {
                            trials: c.report.trials,
                            ..forecast::Settings::from_config(&c.config)
                        },
                        forecast::Mode {
                            adaptive_trials: false,
                            skip_cut_lines: true,
                        },
                    );
                    crate::views::standup::WithoutDirectives::of(&report)
                });
                return Some(crate::views::standup::Previous {
                    commit: made_in.to_hex_with_len(12).to_string(),
                    without_directives,
                    applied,
                    settings_changed,
                    forecast_settings,
                    team,
                    since_ids,
                    engine_changed: report.engine.as_deref() != Some(forecast::ENGINE),
                    synced: synced_at(repo, made_in),
                    recorded: recorded.into_iter().map(|(_, said)| said).collect(),
                    ended: ended.into_iter().map(|(_, said)| said).collect(),
                    touched,
                    report,
                });
            }
            Err(e) => {
                crate::prose::warn_once(
                    &format!("forecast at {id}"),
                    &format!("forecast/forecast.json at {id} is not readable, skipped: {e}"),
                );
            }
        }
    }
    None
}

/// Renders the site of a computed state in memory: relative path → bytes (the site benchmark times it).
pub fn site_files(
    c: &Computed,
    layout: &Layout,
    preview: Option<String>,
) -> Result<BTreeMap<String, Vec<u8>>, PipelineError> {
    site_files_with(
        c,
        layout,
        preview,
        whole_standup(c, previous_forecast(layout.root(), c).as_ref()),
    )
}

/// [`site_files`] with the standup already made (a run makes it once for the site and its commit message).
fn site_files_with(
    c: &Computed,
    layout: &Layout,
    preview: Option<String>,
    standup: crate::views::standup::Standup,
) -> Result<BTreeMap<String, Vec<u8>>, PipelineError> {
    let t = Instant::now();
    let data = SiteData {
        preview,
        horizon_days: c.config.forecast.horizon_days.0,
        calibration: c.calibration.clone(),
        directives: c.directives.clone(),
        title: c.config.site.title.clone(),
        overview: c.overview.clone(),
        board: c.board.clone(),
        runway: c.runway.clone(),
        detail: Some(site::detail::build(
            Inputs {
                plan: &c.plan,
                report: &c.report,
            },
            &c.snapshot,
            &past_forecasts(layout)?,
            {
                let mut changes = load_changes(
                    layout,
                    crate::apply::RepoHolds::new(&c.config, &c.snapshot),
                    &c.applied,
                    &c.standing_refused,
                    c.synced,
                    c.open_pull_requests.as_deref(),
                    &c.plan.zone,
                )?;
                let left_out: BTreeMap<usize, String> = c
                    .plan
                    .warnings
                    .iter()
                    .filter_map(|w| match &w.kind {
                        crate::plan::ProblemKind::NotApplied(why) => {
                            Some((w.ledger_line()?, why.clone()))
                        }
                        _ => None,
                    })
                    .collect();
                changes.mark_left_out(c.ledger.as_deref(), &left_out);
                changes
            },
            c.config.server.as_deref(),
            standup,
            &c.board,
        )),
    };
    let templates = layout.templates_dir();
    let mut files = site::render(&data, templates.exists().then_some(templates.as_path()))
        .map_err(|e| PipelineError::Site(Box::new(e)))?;
    // Which forecast the site shows, as git names its `forecast.json`: `commitea publish` publishes it
    // only while it is the branch's newest (audit 172: an overlapping run's older site replaced a newer).
    // Then the proposals not committed that it shows, which publish refuses as it refuses them in the
    // checkout (audit 191: set aside after the render, they were published as pending).
    if let Some(id) = crate::state::to_json(&c.report, Path::new(crate::state::FORECAST_FILE))
        .ok()
        .and_then(|bytes| git::blob_hash(&bytes))
    {
        let mut stamp = format!("{id}\n");
        if data.preview.is_some() {
            stamp.push_str(SITE_PREVIEW_LINE);
            stamp.push('\n');
        }
        for draft in uncommitted_proposals(layout).unwrap_or_default() {
            stamp.push_str(&format!("{SITE_DRAFT_PREFIX}{draft}\n"));
        }
        files.insert(SITE_FORECAST_FILE.to_owned(), stamp.into_bytes());
    }
    let (largest, size) = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.len()))
        .max_by_key(|(_, len)| *len)
        .unwrap_or(("", 0));
    tracing::info!(
        "render: {} files, {} KB in all, the largest {largest} ({} KB), in {:.0?}",
        files.len(),
        files.values().map(Vec::len).sum::<usize>() / 1024,
        size / 1024,
        t.elapsed()
    );
    Ok(files)
}

/// The site's file that names the forecast it shows: the git blob id of its `forecast/forecast.json`, on
/// its first line; then a line for each proposal not committed that it shows ([`SITE_DRAFT_PREFIX`]).
pub(crate) const SITE_FORECAST_FILE: &str = "commitea-forecast.txt";

/// The line of [`SITE_FORECAST_FILE`] that says the site is a preview (another `--now`, `--seed` or
/// `--trials` than the committed forecast's).
pub(crate) const SITE_PREVIEW_LINE: &str = "a preview";

/// How [`SITE_FORECAST_FILE`] names a proposal not committed that the site shows.
pub(crate) const SITE_DRAFT_PREFIX: &str = "not committed: ";

/// Runs the whole pipeline.
pub fn run(opts: &RunOptions) -> Result<RunSummary, PipelineError> {
    let layout = Layout::new(&opts.state_dir);
    let _lock = lock_for_sync(opts, &layout)?;
    if opts.commit {
        refuse_a_newer_engines_forecast(&layout)?;
    }
    let computed = compute(opts)?;
    let files = forecast_files(&computed)?;
    // The forecast the standup measures drift against, found once for the site and the commit message
    // (with directives recorded since, it costs a forecast).
    let t = Instant::now();
    let previous = (opts.render || opts.commit)
        .then(|| previous_forecast(layout.root(), &computed))
        .flatten();
    // The standup against it, made once too: the site shows it whole, the commit message its drift.
    let standup =
        (opts.render || previous.is_some()).then(|| whole_standup(&computed, previous.as_ref()));
    if standup.is_some() {
        tracing::info!(
            "standup: against the {}, {:.0?}",
            if previous.is_some() {
                "forecast before"
            } else {
                "forecast alone (none before)"
            },
            t.elapsed()
        );
    }
    let drift = standup
        .as_ref()
        .filter(|_| previous.is_some())
        .map(|s| s.drift.clone());
    let site = match standup.filter(|_| opts.render) {
        Some(standup) => {
            site::check_output(&layout.root().join(&computed.config.site.output))
                .map_err(Box::new)?;
            let mut files = site_files_with(&computed, &layout, None, standup)?;
            // A run that commits nothing draws a forecast no commit has: `publish` refuses it as the
            // preview it is (audit 195: "the newest commit changed what is forecast", of a forecast commit).
            if !opts.commit
                && let Some(stamp) = files.get_mut(SITE_FORECAST_FILE)
            {
                stamp.extend_from_slice(format!("{SITE_PREVIEW_LINE}\n").as_bytes());
            }
            Some(files)
        }
        None => None,
    };
    let repo = if opts.commit {
        Some(git::open_or_init(layout.root())?)
    } else {
        None
    };
    let records = computed.records.clone();
    let mut message = commit_message(&computed, repo.as_ref(), drift.as_ref());
    if opts.skip_ci {
        // `SKIP_WORKFLOW_STRINGS` (Gitea's and Forgejo's default list) holds it.
        message.push_str("\n[skip ci]\n");
    }

    let crate::state::SnapshotFiles {
        files: mut to_write,
        mut stale,
    } = if computed.synced {
        computed.snapshot.files(&layout)?
    } else {
        Default::default()
    };
    to_write.extend(
        files
            .into_iter()
            .map(|(rel, bytes)| (layout.root().join(rel), bytes)),
    );
    // Refusals that no longer stand leave with the record.
    let record = layout.root().join(crate::state::REFUSED_FILE);
    if computed.standing_refused.is_empty() && record.exists() {
        stale.push(record);
    }
    // A forecast is never as of a moment before its data (`compute` takes the snapshot's when `--now` is
    // earlier), and neither is its commit: dated by `--now` as given, history ran backwards, a commit of
    // 2025 holding a forecast as of 2026 (audit 169).
    let sig = Signature {
        name: computed.config.commit.name.clone(),
        email: computed.config.commit.email.clone(),
        time: opts.clock.max(computed.snapshot.meta.synced_at),
    };
    // The apply stage's files: `ops/applied/ID.yaml` written, `ops/pending/ID.yaml` gone, in one commit.
    let mut edits: Vec<git::Edit> = Vec::new();
    let texts = crate::apply::applied_texts(&computed.applied).map_err(StateError::from)?;
    for (rel, text) in records.into_iter().zip(texts) {
        to_write.insert(layout.root().join(&rel), text.clone().into_bytes());
        edits.push((rel, Some(text.into_bytes())));
    }
    for a in &computed.applied {
        let rel = format!("{}/{}.yaml", crate::ops::PENDING_PATH, a.proposal.id);
        if layout.root().join(&rel).exists() {
            stale.push(layout.root().join(&rel));
        }
        edits.push((rel, None));
    }
    let commit = write_and_commit(
        &layout,
        &to_write,
        &stale,
        repo.as_ref(),
        &edits,
        &message,
        &sig,
    )?;
    match &commit {
        Some(id) => tracing::info!("commit: {id}"),
        None if opts.commit => tracing::info!("commit: nothing changed, no commit"),
        None => {}
    }

    let site_index = match site {
        Some(files) => {
            let out = layout.root().join(&computed.config.site.output);
            let t = Instant::now();
            site::write(&files, &out).map_err(|e| PipelineError::SiteNotWritten {
                commit: commit.clone().unwrap_or_else(|| "no new commit".to_owned()),
                source: Box::new(e),
            })?;
            // Timed: at 20,000 issues writing the pages is seconds no line accounted for (audit 196).
            tracing::info!(
                "site: {} files written in {}, {:.0?}",
                files.len(),
                out.display(),
                t.elapsed()
            );
            Some(out.join("index.html"))
        }
        None => None,
    };
    Ok(RunSummary {
        commit,
        message,
        site_index,
        issues: computed.plan.issues.len(),
        open: computed.report.issues.len(),
        warnings: computed.report.warnings.clone(),
        applied: computed.applied.clone(),
        refused: computed.refused.clone(),
    })
}

/// Writes `files` (only those whose bytes change), removes `stale`, and commits the owned paths; if anything
/// fails, every file touched is put back as it was.
fn write_and_commit(
    layout: &Layout,
    files: &BTreeMap<PathBuf, Vec<u8>>,
    stale: &[PathBuf],
    repo: Option<&gix::Repository>,
    edits: &[crate::state::git::Edit],
    message: &str,
    sig: &Signature,
) -> Result<Option<String>, PipelineError> {
    let mut previous: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
    let mut write_all = || -> Result<(), StateError> {
        for (path, bytes) in files {
            let old = std::fs::read(path).ok();
            if crate::state::write_if_changed(path, bytes)? {
                previous.push((path.clone(), old));
            }
        }
        for path in stale {
            let old = std::fs::read(path).ok();
            std::fs::remove_file(path).map_err(|source| StateError::Io {
                path: path.clone(),
                source,
            })?;
            previous.push((path.clone(), old));
        }
        Ok(())
    };
    if let Err(e) = write_all() {
        restore(&previous);
        return Err(e.into());
    }
    match repo.map(|r| git::commit_paths(r, git::OWNED_PATHS, edits, message, sig)) {
        None => {
            note_uncommitted(layout, files, stale, false);
            Ok(None)
        }
        Some(Ok(c)) => {
            note_uncommitted(layout, files, stale, true);
            if c.is_some()
                && let Some(r) = repo
            {
                git::tidy(r.workdir().unwrap_or_else(|| r.git_dir()));
            }
            Ok(c.map(|id| id.to_string()))
        }
        Some(Err(e)) => {
            restore(&previous);
            Err(e.into())
        }
    }
}

/// Takes the state repo's writer lock for a run or a sync (committing or not), and makes sure the snapshot
/// it starts from is the committed one: a file of `snapshot/` deleted or edited by hand was carried into
/// the next commit as Gitea's word ("35 issues gone from Gitea", audit 114), the sync saying "nothing
/// changed". What a run or sync that did not commit wrote is Gitea's word ([`WRITTEN_UNCOMMITTED`]).
/// Where the lock is taken over from a run or a sync that stopped, the snapshot files it wrote and did not
/// commit are put back, and said; any other difference is refused, naming the files.
fn lock_for_sync(
    opts: &RunOptions,
    layout: &Layout,
) -> Result<crate::state::lock::StateLock, PipelineError> {
    let lock = lock(opts, layout)?;
    let config = crate::state::read_text_file(&Config::path_in(layout.root())).unwrap_or_default();
    if Config::is_blank(&config) {
        let repos = crate::state::synced_repositories(layout)?;
        if !repos.is_empty() {
            let mut named: Vec<String> = repos.iter().take(3).map(ToString::to_string).collect();
            if repos.len() > 3 {
                named.push(format!("{} more", repos.len() - 3));
            }
            return Err(ConfigError::Blank {
                repos: crate::prose::and_list(&named),
            }
            .into());
        }
    }
    // A run that does not commit is checked too: what it writes is listed as Gitea's word, and a hand
    // edit it carried over would be listed with it (audit 117).
    if !layout.root().join(".git").exists() {
        return Ok(lock);
    }
    // A newer CommiTea's state is said as that, whatever else differs.
    crate::state::check_format(layout)?;
    let repo = git::open_or_init(layout.root())?;
    let Some(head) = git::head(&repo) else {
        return Ok(lock);
    };
    let snapshot = git::differences(
        &repo,
        head,
        crate::state::SNAPSHOT_DIR,
        crate::state::is_snapshot_file,
    )?;
    // Only a run or a sync writes the snapshot: another writer that stopped (a `plan`, a backtest) left
    // nothing there to put back, and the forecast files a run left are written again by this one (audit
    // 117: a finished `backtest --write` was thrown away after a killed `plan`).
    if lock
        .took_over
        .as_ref()
        .is_some_and(crate::state::lock::Holder::writes_snapshot)
    {
        // Whatever was written since the last commit goes: the sync brings Gitea's word again.
        note_uncommitted(layout, &BTreeMap::new(), &[], true);
        if !snapshot.is_empty() {
            for (rel, how) in &snapshot {
                let path = layout.root().join(rel);
                match how {
                    git::Difference::New(_) => {
                        std::fs::remove_file(&path).map_err(|source| StateError::Io {
                            path: path.clone(),
                            source,
                        })?;
                    }
                    // Written as every state file is: never through a link, never half.
                    _ => {
                        if let Some(bytes) = git::read_at(&repo, head, rel)? {
                            crate::state::write_if_changed(&path, &bytes)?;
                        }
                    }
                }
            }
            tracing::warn!(
                "put back {} of snapshot/ that the run that stopped had written and not committed: this \
                 run starts from the last commit",
                crate::prose::count(snapshot.len(), "file", "files")
            );
        }
        return Ok(lock);
    }
    let written = written_uncommitted(layout);
    let snapshot: Vec<_> = snapshot
        .into_iter()
        .filter(|(rel, how)| written.get(rel) != Some(&how.on_disk()))
        .collect();
    if !snapshot.is_empty() {
        const NAMED: usize = 5;
        let mut files: Vec<String> = snapshot
            .iter()
            .take(NAMED)
            .map(|(rel, how)| format!("{rel} {}", how.word()))
            .collect();
        if snapshot.len() > NAMED {
            files.push(format!("and {} more", snapshot.len() - NAMED));
        }
        return Err(PipelineError::SnapshotEdited {
            count: crate::prose::count(snapshot.len(), "file", "files"),
            files: files.join(", "),
        });
    }
    Ok(lock)
}

/// The file in `.git` where a run or a sync that does not commit lists what it wrote under `snapshot/`
/// (a line `BLOB PATH` for each file written, `- PATH` for each removed), until a commit takes it in.
const WRITTEN_UNCOMMITTED: &str = "commitea-snapshot-uncommitted";

/// What runs that did not commit wrote under `snapshot/` since the last commit: path → the blob written,
/// `None` where the file was removed. Empty where nothing is listed (or the list does not read).
fn written_uncommitted(layout: &Layout) -> BTreeMap<String, Option<gix::ObjectId>> {
    let text = written_list(layout)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (id, path) = l.split_once(' ')?;
            let id = match id {
                "-" => None,
                hex => Some(gix::ObjectId::from_hex(hex.as_bytes()).ok()?),
            };
            Some((path.to_owned(), id))
        })
        .collect()
}

/// Where [`WRITTEN_UNCOMMITTED`] is: in the repository's git folder, which in a worktree or a submodule
/// is not `.git` (a file there; audit 117). `None` without a repository.
fn written_list(layout: &Layout) -> Option<PathBuf> {
    gix::open(layout.root())
        .ok()
        .map(|r| r.git_dir().join(WRITTEN_UNCOMMITTED))
}

/// Adds what a run that does not commit wrote (`files`) and removed (`stale`) under `snapshot/` to the
/// list [`lock_for_sync`] reads; or, after a commit, drops the list.
fn note_uncommitted(
    layout: &Layout,
    files: &BTreeMap<PathBuf, Vec<u8>>,
    stale: &[PathBuf],
    committed: bool,
) {
    let Ok(repo) = gix::open(layout.root()) else {
        return;
    };
    let path = repo.git_dir().join(WRITTEN_UNCOMMITTED);
    if committed {
        let _ = std::fs::remove_file(&path);
        return;
    }
    let rel = |p: &Path| {
        p.strip_prefix(layout.root())
            .ok()
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .filter(|r| crate::state::is_snapshot_file(r))
    };
    let mut list = written_uncommitted(layout);
    for (p, bytes) in files {
        if let Some(r) = rel(p) {
            let id = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, bytes).ok();
            list.insert(r, id);
        }
    }
    for p in stale {
        if let Some(r) = rel(p) {
            list.insert(r, None);
        }
    }
    let text: String = list
        .iter()
        .map(|(r, id)| match id {
            Some(id) => format!("{id} {r}\n"),
            None => format!("- {r}\n"),
        })
        .collect();
    if let Err(e) = std::fs::write(&path, text) {
        tracing::warn!(
            "cannot write {}: {e}; the next run that commits takes the snapshot written now for an edit",
            path.display()
        );
    }
}

/// Takes the state repo's writer lock for a run (the config says how long to wait).
pub fn lock(
    opts: &RunOptions,
    layout: &Layout,
) -> Result<crate::state::lock::StateLock, PipelineError> {
    let config = Config::load(layout.root(), opts.env.iter().cloned(), &opts.overrides)?;
    Ok(crate::state::lock::lock_state(layout.root(), &config)?)
}

/// What a sync changed in the snapshot, as the body of its commit message: the issues new, changed and
/// gone (ten of each named), and whether the labels or milestones changed; empty when nothing did (audit
/// 99: every sync's message was the same line, whatever it brought). Compared in memory, against the
/// snapshot the sync started from.
fn synced_changes(previous: Option<&Snapshot>, now: &Snapshot) -> String {
    const NAMED: usize = 10;
    let before = |k: &crate::domain::IssueKey| previous.and_then(|p| p.issues.get(k));
    let (mut new, mut changed) = (Vec::new(), Vec::new());
    for (k, issue) in &now.issues {
        match before(k) {
            None => new.push(k.to_string()),
            Some(old) if old != issue => changed.push(k.to_string()),
            Some(_) => {}
        }
    }
    let gone: Vec<String> = previous
        .map(|p| {
            p.issues
                .keys()
                .filter(|k| !now.issues.contains_key(*k))
                .map(ToString::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut other = Vec::new();
    if previous.is_some_and(|p| p.labels != now.labels) {
        other.push("labels");
    }
    if previous.is_some_and(|p| p.milestones != now.milestones) {
        other.push("milestones");
    }
    let list = |what: &str, keys: &[String]| -> Option<String> {
        if keys.is_empty() {
            return None;
        }
        let shown: Vec<&str> = keys.iter().take(NAMED).map(String::as_str).collect();
        let more = keys.len().saturating_sub(NAMED);
        Some(format!(
            "{what} ({}): {}{}",
            keys.len(),
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    };
    let lines: Vec<String> = [
        list("issues changed", &changed),
        list("issues new", &new),
        list("issues gone from Gitea", &gone),
        (!other.is_empty()).then(|| format!("{} changed", other.join(" and "))),
    ]
    .into_iter()
    .flatten()
    .map(|l| format!("- {l}\n"))
    .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("\n{}", lines.concat())
    }
}

/// `commitea sync`: read the repositories from Gitea, write the snapshot and commit it (no forecast).
pub(crate) fn sync_only(opts: &RunOptions) -> Result<RunSummary, PipelineError> {
    let layout = Layout::new(&opts.state_dir);
    let _lock = lock_for_sync(opts, &layout)?;
    let config = Config::load(layout.root(), opts.env.iter().cloned(), &opts.overrides)?;
    let server = config
        .server
        .clone()
        .or_else(|| opts.server_fallback.clone())
        .ok_or_else(|| {
            PipelineError::Unavailable(format!(
                "{}: no server to sync from: set `server:` (or COMMITEA_SERVER)",
                crate::config::FILE_NAME
            ))
        })?;
    let (snapshot, _, previous) = sync_stage(opts, &config, &layout, &server)?;
    let crate::state::SnapshotFiles { files, stale } = snapshot.files(&layout)?;
    let repo = if opts.commit {
        Some(git::open_or_init(layout.root())?)
    } else {
        None
    };
    let message = format!(
        "commitea: sync of {} ({})\n{}",
        crate::prose::count(config.repositories.len(), "repository", "repositories"),
        crate::prose::count(snapshot.issues.len(), "issue", "issues"),
        synced_changes(previous.as_ref(), &snapshot)
    );
    let sig = Signature {
        name: config.commit.name.clone(),
        email: config.commit.email.clone(),
        time: opts.clock,
    };
    let commit = write_and_commit(&layout, &files, &stale, repo.as_ref(), &[], &message, &sig)?;
    Ok(RunSummary {
        commit,
        message,
        site_index: None,
        issues: snapshot.issues.len(),
        open: snapshot.issues.values().filter(|i| !i.is_closed()).count(),
        warnings: Vec::new(),
        applied: Vec::new(),
        refused: Vec::new(),
    })
}

fn restore(previous: &[(PathBuf, Option<Vec<u8>>)]) {
    for (path, old) in previous.iter().rev() {
        let result = match old {
            Some(bytes) => std::fs::write(path, bytes),
            None => std::fs::remove_file(path),
        };
        if let Err(e) = result {
            tracing::error!("could not restore {}: {e}", path.display());
        }
    }
}

/// The standup of a computed state against `previous`, nothing cut: what the site and the commit
/// message show.
fn whole_standup(
    c: &Computed,
    previous: Option<&crate::views::standup::Previous>,
) -> crate::views::standup::Standup {
    let mut standup = crate::views::standup::standup(
        Inputs {
            plan: &c.plan,
            report: &c.report,
        },
        &c.snapshot,
        previous,
        crate::views::standup::StandupSettings {
            stale_days: c.config.standup.stale_days.0,
            plan_days: c.config.standup.plan_days.0,
        },
        &crate::views::Selection {
            limit: usize::MAX,
            ..crate::views::Selection::default()
        },
    );
    // A forecast that read nothing from Gitea (an offline run, a render) says so where it says what
    // changed (audit 193: a day with the server down, run offline, read word for word as a quiet day).
    if !c.synced
        && let Some(since) = standup.drift.since_then.as_mut()
    {
        since.not_read_since = Some(
            c.snapshot
                .meta
                .synced_at
                .format("%Y-%m-%d %H:%M UTC")
                .to_string(),
        );
    }
    standup
}

/// The commit message: a title line, then what moved since the last committed forecast, each move with
/// its reason as the standup's `drift` against that forecast ([`previous_forecast`]) gives it.
pub(crate) fn commit_message(
    c: &Computed,
    repo: Option<&gix::Repository>,
    drift: Option<&crate::views::standup::Drift>,
) -> String {
    let r = &c.report;
    let mut msg = format!(
        "commitea: forecast as of {} ({})\n",
        r.as_of,
        crate::prose::count(r.issues.len(), "open issue", "open issues")
    );
    // HEAD's forecast, read as the standup reads it: one committed in an earlier format has its
    // milestones' headlines moved into today's places, so an upgrade alone reports no move.
    let previous: Option<forecast::ForecastReport> = repo
        .and_then(git::head)
        .zip(repo)
        .and_then(|(head, repo)| {
            git::read_at(repo, head, crate::state::FORECAST_FILE)
                .ok()
                .flatten()
        })
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    // Named as the standup names them: a title two repositories share carries its repository (audit 132:
    // two "Mobile 3.0" lines, and the first lost its reason); those gone since are named too.
    let gone: Vec<&forecast::MilestoneForecast> = previous
        .iter()
        .flat_map(|p| &p.milestones)
        .filter(|x| !r.milestones.iter().any(|m| m.id == x.id))
        .collect();
    let names = crate::plan::milestone_names(
        r.milestones
            .iter()
            .chain(gone.iter().copied())
            .map(|m| (m.id, m.title.as_str(), m.repo.clone())),
    );
    let name = |m: &forecast::MilestoneForecast| names.get(&m.id).unwrap_or(&m.title).clone();
    let mut lines = Vec::new();
    for m in r
        .milestones
        .iter()
        .filter(|m| m.state == crate::domain::OpenState::Open)
    {
        let Some(old) = previous
            .as_ref()
            .and_then(|p| p.milestones.iter().find(|x| x.id == m.id))
        else {
            lines.push((name(m), format!("- {}: p80 {}", name(m), m.p80), true));
            continue;
        };
        let moved = crate::views::standup::milestone_changes(old, m, true);
        if !moved.is_empty() {
            lines.push((
                name(m),
                format!("- {}: {}", name(m), moved.join(", ")),
                true,
            ));
        }
    }
    // Milestones gone from Gitea since (deleted; a repository taken out of the config is said as such below): their issues
    // are in none now (audit 132: a deleted milestone's 45 issues were "moved to another milestone", the
    // milestone itself not named).
    // ", 20 issues still open in it": a milestone's open issues where it left the forecast with some.
    let open_in = |n: usize, how: &str| {
        if n > 0 {
            format!(", {} {how}", crate::prose::count(n, "issue", "issues"))
        } else {
            String::new()
        }
    };
    // A repository taken out of the config is said as such below, not as its milestones' deletion.
    let synced: std::collections::HashSet<String> = c
        .snapshot
        .synced_repositories()
        .into_iter()
        .map(ToString::to_string)
        .collect();
    for m in gone
        .iter()
        .filter(|m| m.state == crate::domain::OpenState::Open && synced.contains(&m.repo))
    {
        let left = open_in(m.open_issues, "open in it then");
        lines.push((
            name(m),
            format!("- {}: gone from Gitea (deleted){left}", name(m)),
            false,
        ));
    }
    // Milestones closed on Gitea since: they leave the forecast, which is news too.
    for m in r
        .milestones
        .iter()
        .filter(|m| m.state == crate::domain::OpenState::Closed)
    {
        let was_open = previous.as_ref().is_some_and(|p| {
            p.milestones
                .iter()
                .any(|x| x.id == m.id && x.state == crate::domain::OpenState::Open)
        });
        if was_open {
            let left = open_in(m.open_issues, "still open in it");
            // The line says why; the standup's reason would say it again.
            lines.push((
                name(m),
                format!("- {}: closed on Gitea{left}", name(m)),
                false,
            ));
        }
    }
    // What this run carried out on Gitea.
    // A file Gitea did not take whole is said as such: "Applied" over a refusal hid it (audit 79).
    let (mut applied, mut short) = (Vec::new(), Vec::new());
    for a in &c.applied {
        let name = match a.applied.pull_request {
            Some(n) => format!("{} (pull request #{n})", a.proposal.id),
            None => a.proposal.id.clone(),
        };
        match crate::apply::shortfall(&a.applied.results) {
            Some(how) => short.push(format!("{name}, {how}")),
            None => applied.push(name),
        }
    }
    // The context of the moves, as the standup gives it: the newest committed forecast that differs from
    // today's (named by the commit that wrote it).
    // Said even when no milestone moved: a commit is made because something changed (an issue closed, a
    // directive recorded), and its message says what (audit 64: "4 warnings" was all a close got).
    if !lines.is_empty() {
        msg.push('\n');
        for (title, line, with_why) in &lines {
            msg.push_str(&crate::prose::one_line(line));
            // Why it moved, where the standup can say.
            if *with_why
                && let Some(why) = drift
                    .iter()
                    .flat_map(|d| &d.milestones)
                    .find_map(|m| (m.subject == *title).then_some(m.why.as_deref()).flatten())
            {
                msg.push_str(&format!(" ({})", crate::prose::one_line(why)));
            }
            msg.push('\n');
        }
    }
    if !applied.is_empty() {
        msg.push_str(&format!("\nApplied on Gitea: {}.\n", applied.join(", ")));
    }
    if !short.is_empty() {
        msg.push_str(&format!(
            "\nNot whole on Gitea (see ops/applied/ and the Changes page): {}.\n",
            short.join("; ")
        ));
    }
    // Approved files Gitea refused whole: in the commit too, not only in the failed job's log (audit 147).
    if !c.refused.is_empty() {
        let refused: Vec<String> = c
            .refused
            .iter()
            .map(|r| format!("{} ({})", r.id, crate::prose::one_line(&r.why)))
            .collect();
        msg.push_str(&format!(
            "\nRefused by Gitea, still pending: {}.\n",
            refused.join("; ")
        ));
    }
    if let Some(d) = drift
        && let (Some(commit), Some(since)) = (&d.since, &d.since_then)
        && !since.is_empty()
    {
        msg.push_str(&format!(
            "\nSince the forecast of {commit}: {}.\n",
            crate::prose::one_line(&since.words())
        ));
    }
    if !r.warnings.is_empty() {
        msg.push_str(&format!(
            "\n{}; see forecast/forecast.json\n",
            crate::prose::count(r.warnings.len(), "warning", "warnings")
        ));
    }
    msg
}
