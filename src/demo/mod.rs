//! The demo generator: a realistic, deterministic team and its history, at any scale.
//!
//! [`generate()`] turns a [`DemoSpec`] into a whole state repo in memory — `commitea.yaml`, the empty directive
//! ledger and a snapshot of issues with six months or so of believable history (longer when a big project's
//! closed work needs more time than its team has in six months) — and [`write()`] puts it on disk. The
//! bundled demo in the crate's `state/` folder is [`DemoSpec::bundled`], written by the test
//! `bundled_demo_matches_committed_files` (run it with `COMMITEA_BLESS_DEMO=1` to regenerate).
//!
//! What the data holds:
//!
//! - a team with Gitea-style usernames, different hidden speeds (actual effort = estimate × personal factor
//!   × log-normal noise with σ = 0.5), part-timers, time off and a new hire who has not started yet;
//! - about half the issues closed, each with its story as Gitea timeline events: opened, labelled (kind,
//!   `p/*`, `est/*` from the ladder, weighted to the middle), put in a milestone, assigned, worked on the
//!   assignee's working days with tracked time, fixed by a pull request that was reviewed and merged, closed
//!   — and some re-estimated, re-prioritised, moved between milestones, reopened, or closed as won't fix or
//!   duplicate;
//! - open issues in all five lifecycle columns, dependency chains between them, and milestones that are
//!   done, hard-deadlined, at risk and comfortable.
//!
//! The same spec always gives the same bytes: one seeded random stream, ordered collections only, and no
//! clock (`now` is part of the spec).

mod history;
mod populate;
mod team;
mod words;

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, TimeZone, Utc};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::config::Config;
use crate::state::{Layout, Snapshot, StateError, write_if_changed};

/// What demo to generate: its size, its random seed and the moment the snapshot is taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSpec {
    /// How many issues.
    pub issues: usize,
    /// How many people on the team (at least one).
    pub people: usize,
    /// How many milestones.
    pub milestones: usize,
    /// How many repositories (at least one).
    pub repositories: usize,
    /// The seed of the one random stream everything is drawn from.
    pub seed: u64,
    /// When the snapshot is taken: the history ends here.
    pub now: DateTime<Utc>,
}

/// The seed of the bundled demo, picked among the first few for a representative forecast: the hard
/// deadline tight but possible, one milestone clearly late, one comfortable.
const BUNDLED_SEED: u64 = 9;

impl DemoSpec {
    /// The bundled demo: 320 issues, 7 people, 4 milestones, 3 repositories, now = 2026-11-27T17:00:00Z, fixed seed.
    pub fn bundled() -> Self {
        Self {
            issues: 320,
            people: 7,
            milestones: 4,
            repositories: 3,
            seed: BUNDLED_SEED,
            now: Utc
                .with_ymd_and_hms(2026, 11, 27, 17, 0, 0)
                .single()
                .unwrap_or_default(),
        }
    }

    /// A benchmark-scale project of `issues` issues: 25 people, 8 milestones, 4 repositories (same now and seed).
    pub fn scaled(issues: usize) -> Self {
        Self {
            issues,
            people: 25,
            milestones: 8,
            repositories: 4,
            ..Self::bundled()
        }
    }
}

/// A generated state repo, in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoState {
    /// The configuration.
    pub config: Config,
    /// `commitea.yaml`: commented YAML that parses to `config`.
    pub config_text: String,
    /// `pm-state.md`: the directive ledger, with no directives yet.
    pub ledger: String,
    /// `snapshot/`.
    pub snapshot: Snapshot,
    /// `ops/applied/ID.yaml` files: path relative to the state repo → text (none unless [`populate`]d).
    pub applied: BTreeMap<String, String>,
    /// The op files left pending in the checkout (none unless [`populate`]d). Their consequence is not
    /// computed here; `commitea demo` files their ops through `apply_changes`, which computes it.
    pub pending: Vec<crate::ops::OpFile>,
    /// The snapshot as Gitea was before the last week's directives were carried out, and the
    /// `ops/applied/` files of those (none unless [`populate`]d): what `commitea demo` commits and
    /// forecasts first, before the week's directives and what they changed on Gitea.
    pub before_last_week: Option<(Snapshot, Vec<String>)>,
}

/// Generates the demo state repo of `spec`; the same spec always gives the same state.
pub fn generate(spec: &DemoSpec) -> DemoState {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
    let team = team::Team::new(spec, &mut rng);
    let config = team.config();
    let config_text = team.config_text();
    let snapshot = history::generate(spec, &team, &config, &mut rng);
    DemoState {
        config,
        config_text,
        ledger: LEDGER.to_owned(),
        snapshot,
        applied: BTreeMap::new(),
        pending: Vec::new(),
        before_last_week: None,
    }
}

/// The bundled demo as `commitea demo` and the crate's `state/` folder hold it: [`generate`]d, then
/// [`populate`]d with directives, an applied history and pending op files.
pub fn bundled() -> DemoState {
    let mut state = generate(&DemoSpec::bundled());
    populate(&mut state);
    state
}

pub use populate::populate;

/// The initial `pm-state.md`.
const LEDGER: &str = "\
# PM directives: Acme Platform

This is the project manager's directive ledger. CommiTea replays it over the snapshot to get the plan it
forecasts: deadlines that cannot move, priorities, scope decisions, who works on what.

The ledger is append-only. Each directive quotes the PM verbatim, with who said it and when; nothing is
edited or deleted, a later directive supersedes an earlier one. The `record_directive` tool appends here
(through a pull request when it changes the plan), and people may append by hand in the same format,
documented in docs/ledger.md.

No directives yet.
";

/// Writes commitea.yaml (config_text), pm-state.md (ledger), .gitignore (containing `public/`), the
/// snapshot (via Snapshot::save), the applied op files and the pending ones into `dir`.
///
/// Files whose bytes are already right are left alone, and issue files the snapshot no longer has are removed.
pub fn write(state: &DemoState, dir: &Path) -> Result<(), StateError> {
    write_committed(state, dir)?;
    write_pending(state, dir)
}

/// [`write`] without the pending op files: what the demo's first commit holds.
pub fn write_committed(state: &DemoState, dir: &Path) -> Result<(), StateError> {
    let layout = Layout::new(dir);
    write_if_changed(&Config::path_in(dir), state.config_text.as_bytes())?;
    write_if_changed(&layout.ledger(), state.ledger.as_bytes())?;
    write_if_changed(&dir.join(".gitignore"), crate::state::GITIGNORE.as_bytes())?;
    state.snapshot.save(&layout)?;
    for (rel, text) in &state.applied {
        write_if_changed(&dir.join(rel), text.as_bytes())?;
    }
    Ok(())
}

/// Writes the pending op files: after the first commit they are only in the checkout, where the demo's
/// changes page shows them awaiting `commitea propose` (additive) or their pull request (destructive).
pub fn write_pending(state: &DemoState, dir: &Path) -> Result<(), StateError> {
    let layout = Layout::new(dir);
    for f in &state.pending {
        f.write_pending(&layout)?;
    }
    Ok(())
}
