//! The key of a forecast's inputs: a digest of everything [`run`](super::run) is a function of, recorded in
//! `forecast/forecast.json` so a reader of an unchanged state reuses the committed forecast instead of
//! running the Monte Carlo again.
//!
//! The forecast is a pure function of the plan (the snapshot, `pm-state.md` and the resolved config
//! replayed as of day zero, with the people the last forecast planned) and the settings, so the key is a
//! SHA-1 of those, as the engine sees them — not of files on disk: an environment variable or a flag that
//! changes a setting, or a ledger entry only in the checkout, changes the key too. The people part is
//! special: a forecast keeps the people it was given (`Plan::planned_for`) and plans the rest, and the
//! scheduler books a kept person exactly as it would have chosen them, so a forecast given the people it
//! planned itself says the same again (the stability tests check it). The key recorded is therefore the
//! one of the forecast's *own* people, which is what the next reader gives it: a state forecast once is
//! reused from its first read on. A run whose new forecast says exactly what the committed one says
//! keeps the committed key (`pipeline::compute`): a sync that changed nothing moves the run's moment,
//! and with it the key, but must not write a new forecast for that alone. The engine
//! ([`super::ENGINE`]: the version and a hash of the source) is in the key too, so a forecast another build
//! made, which may mean something else by its fields, is computed again, never reused.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::domain::IssueKey;
use crate::plan::Plan;

use super::{ForecastReport, Mode, Settings};

/// A SHA-1 fed through `fmt::Write`, buffered (Debug output arrives in many small pieces).
struct Digest {
    hasher: gix::hash::Hasher,
    buf: Vec<u8>,
}

impl Digest {
    const CHUNK: usize = 1 << 16;

    fn new() -> Self {
        Self {
            hasher: gix::hash::hasher(gix::hash::Kind::Sha1),
            buf: Vec::with_capacity(Self::CHUNK),
        }
    }

    fn finish(mut self) -> String {
        self.hasher.update(&self.buf);
        match self.hasher.try_finalize() {
            Ok(id) => id.to_string(),
            // A SHA-1 collision attack was detected: no key, so nothing is ever reused for it.
            Err(_) => String::new(),
        }
    }
}

impl std::fmt::Write for Digest {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.buf.extend_from_slice(s.as_bytes());
        if self.buf.len() >= Self::CHUNK {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
        Ok(())
    }
}

/// The digest of a plan (without its kept people) and the settings: the part of the key both sides share.
pub(super) struct PlanDigest(String);

impl PlanDigest {
    /// Digests everything of `plan` but `planned_for`, with `settings`, `mode` and this build's version.
    pub(super) fn new(plan: &Plan, settings: &Settings, mode: Mode) -> Self {
        // Named field by field, with no `..`: a field added to the plan must be added here (or said to
        // be irrelevant), or this does not compile.
        let Plan {
            as_of,
            now,
            issues,
            milestones,
            team,
            team_calendar,
            zone,
            workday_hours,
            abandonment_days,
            abandonment_min_history_days,
            planned_for: _,
            last_planned: _,
            cut_before: _,
            // What the ledger's targets resolve to is in the issues and milestones the replay changed.
            former_names: _,
            warnings,
        } = plan;
        let mut d = Digest::new();
        // Writing into a digest cannot fail.
        let _ = write!(
            d,
            "commitea {}\n{settings:?}\n{mode:?}\n{as_of:?}\n{now:?}\n{issues:?}\n{milestones:?}\n{team:?}\n\
             {team_calendar:?}\n{zone}\n{workday_hours:?}\n{abandonment_days:?}\n{abandonment_min_history_days:?}\n{warnings:?}\n",
            super::ENGINE,
            zone = zone.name(),
        );
        Self(d.finish())
    }

    /// The key of the plan forecast with `people` kept and the cut lines `cuts` tried first.
    pub(super) fn with_people(
        &self,
        people: &BTreeMap<IssueKey, String>,
        cuts: &BTreeMap<u64, Vec<IssueKey>>,
    ) -> String {
        let mut d = Digest::new();
        let _ = write!(d, "{}\n{people:?}\n", self.0);
        // A forecast with no cut line keeps the key it had before cut lines were kept.
        if !cuts.is_empty() {
            let _ = writeln!(d, "{cuts:?}");
        }
        d.finish()
    }
}

/// Whether `committed` is the forecast of `plan` with `settings`: its recorded key is the plan's.
pub(super) fn matches(committed: &ForecastReport, digest: &PlanDigest, plan: &Plan) -> bool {
    committed.inputs.as_deref().is_some_and(|k| {
        !k.is_empty() && k == digest.with_people(&plan.planned_for, &plan.cut_before)
    })
}

/// A digest of the ledger's entries as a forecast replayed them (each id and status): recorded in the
/// forecast, so the standup compares with the ledger that forecast was made from, not the one its
/// commit carries. A forecast a local run committed and a rebase then put on top of a merged directive
/// carries that directive in its commit, though it was made without it (audit 92: "no directive
/// recorded" after every merge the docs' `git pull --rebase` brought in).
pub(crate) fn ledger_entries(ledger: Option<&str>) -> String {
    let mut d = Digest::new();
    for e in crate::ledger::parse::parse(ledger.unwrap_or(""))
        .ledger
        .directives()
    {
        let _ = writeln!(d, "{} {}", e.id, e.status);
    }
    d.finish()
}
