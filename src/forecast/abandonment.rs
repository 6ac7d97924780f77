//! The abandonment model's input from the plan: each open issue's features and exposures, and the
//! frailty chosen on the state's own past cuts.

use std::sync::Arc;

use super::*;

/// An open issue's abandonment-model features for its forecast at `at`: its column and assignee as
/// synced, its age at `at`, its labels.
pub fn fate_features(i: &PlannedIssue, at: chrono::DateTime<chrono::Utc>) -> FateFeatures {
    // As synced: its column and assignee now, not the timeline's at `at` — an event the server dated
    // after the run's moment (its clock ahead of the runner's) left the run reading the column before
    // it, and the next day's forecast moved the issue's chance with nothing changed (audit 166: out of
    // its milestone, shown in triage, scored as steeping). Its age is at `at`.
    let shared = Shared::of(i);
    FateFeatures {
        column: i.lifecycle.as_str(),
        person: shared.assignee.clone(),
        ..features_at(i, at, &shared)
    }
}

/// What an issue's features are at every moment: its labels and assignee, made once per issue and
/// shared by all its exposures (the fits read hundreds of thousands of them).
pub(super) struct Shared {
    labels: Arc<[Arc<str>]>,
    assignee: Option<Arc<str>>,
}

impl Shared {
    /// The issue's labels with its priority and estimate as the plan has them, not as Gitea's labels do:
    /// a directive's reprioritisation or re-estimate is the same evidence as the label it would set, and
    /// an issue without a `p/*` label plans as `p/2`, so it is read as `p/2` here too.
    fn of(i: &PlannedIssue) -> Self {
        use crate::domain::{Estimate, Priority};
        let own = |l: &&String| {
            !l.starts_with(Priority::LABEL_PREFIX) && !l.starts_with(Estimate::LABEL_PREFIX)
        };
        let mut labels: Vec<String> = i.labels.iter().filter(own).cloned().collect();
        labels.push(i.priority.label());
        labels.extend(
            i.estimate_label
                .as_ref()
                .map(|l| format!("{}{l}", Estimate::LABEL_PREFIX)),
        );
        labels.sort();
        Self {
            labels: labels.iter().map(|l| Arc::from(l.as_str())).collect(),
            assignee: i.assignee.as_deref().map(Arc::from),
        }
    }

    /// The shared parts of every issue of the plan, in its order.
    pub(super) fn all(plan: &Plan) -> Vec<Self> {
        plan.issues.iter().map(Self::of).collect()
    }
}

fn features_at(
    i: &PlannedIssue,
    at: chrono::DateTime<chrono::Utc>,
    shared: &Shared,
) -> FateFeatures {
    let column = i
        .timeline
        .iter()
        .rev()
        .find(|s| s.since <= at)
        .map_or(i.lifecycle, |s| s.column);
    FateFeatures {
        column: column.as_str(),
        age_days: (at - i.created_at).num_days().max(0),
        labels: shared.labels.clone(),
        // Only someone assigned by then: trackers often assign an issue as it is closed, and that must
        // not teach the model that assigned issues get done.
        person: shared
            .assignee
            .clone()
            .filter(|_| i.assigned_at.is_none_or(|a| a <= at)),
    }
}

/// The abandonment model's evidence: every issue open in each step of the recent history, how long it
/// stayed open in the step and whether it closed. Nothing after `plan.now` is read.
pub fn fate_exposures(plan: &Plan) -> Vec<Exposure> {
    fate_exposures_at(plan, plan.now, &Shared::all(plan))
}

/// The abandonment model's evidence as it was at `at`: closes after `at` are not seen.
pub(super) fn fate_exposures_at(
    plan: &Plan,
    at: chrono::DateTime<chrono::Utc>,
    shared: &[Shared],
) -> Vec<Exposure> {
    let step = chrono::Duration::days(fate::STEP_DAYS);
    let mut out = Vec::new();
    let mut t = cut_anchor(at) - chrono::Duration::days(fate::RECENT_DAYS);
    while t < at {
        let end = (t + step).min(at);
        for ((n, i), shared) in plan.issues.iter().enumerate().zip(shared) {
            // Open at some moment of the step, from its start or from when it was opened: an issue
            // opened and closed inside one step is a close too. Counting only issues open at the
            // step's start left those out, and which ones they were depends on where the steps fall —
            // on the day of the run — so the same history gave another model every day.
            let from = i.created_at.max(t);
            let open_in_step = i.created_at < end && i.closed_at.is_none_or(|c| c > t);
            if !open_in_step {
                continue;
            }
            let closed = i.closed_at.filter(|c| *c <= end);
            let until = closed.unwrap_or(end);
            out.push(Exposure {
                features: features_at(i, from, shared),
                issue: n as u64,
                days: (until - from).num_seconds() as f64 / 86_400.0,
                closed: closed.is_some(),
                ago_days: (at - from).num_seconds() as f64 / 86_400.0,
            });
        }
        t = end;
    }
    out
}

/// What the abandonment model knows of the plan's whole history at `at`.
pub(super) fn history_at(plan: &Plan, at: chrono::DateTime<chrono::Utc>) -> fate::History {
    fate::History {
        days: history_days(plan, at),
        closes: closes_by(plan, at),
        min_days: plan.abandonment_min_history_days,
    }
}

/// Days of history the plan's issues cover, up to `at`.
pub(super) fn history_days(plan: &Plan, at: chrono::DateTime<chrono::Utc>) -> i64 {
    plan.issues
        .iter()
        .map(|i| i.created_at)
        .min()
        .map_or(0, |first| (at - first).num_days())
}

/// Issues of the plan closed at or before `at`.
pub(super) fn closes_by(plan: &Plan, at: chrono::DateTime<chrono::Utc>) -> usize {
    plan.issues
        .iter()
        .filter(|i| i.closed_at.is_some_and(|c| c <= at))
        .count()
}

/// Past cuts the frailty is chosen on, and the days between them.
pub(super) const FRAILTY_CUTS: i64 = 8;
pub(super) const FRAILTY_CUT_EVERY: i64 = 45;
/// The age at which a past cut counts half as much in the recalibration as one made now.
const RECALIBRATION_HALF_LIFE_DAYS: f64 = 91.0;

/// How much a cut made `age` ago counts in the recalibration: halving every
/// [`RECALIBRATION_HALF_LIFE_DAYS`], as a project's pace drifts.
fn recency_weight(age: chrono::Duration) -> f64 {
    0.5f64.powf(age.num_days() as f64 / RECALIBRATION_HALF_LIFE_DAYS)
}

/// The moment the past cuts are counted back from: the start (Monday, 00:00 UTC) of the week of `now`.
/// Counted from `now` itself, every cut moved with the day of the run, the frailty (chosen from a few
/// values) and the recalibration were fitted on other issues each morning, and an unchanged history gave
/// P(done) 0.89, 0.79, 0.80, 0.90 on four days running; on a weekly grid they change once a week.
fn cut_anchor(now: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
    use chrono::Datelike;
    let day = now.date_naive();
    let monday = day - chrono::Days::new(u64::from(day.weekday().num_days_from_monday()));
    monday.and_time(chrono::NaiveTime::MIN).and_utc()
}

/// Recent cuts the recalibration also learns from, in days before now: their windows are partial.
const RECENT_CUT_DAYS: [i64; 3] = [91, 182, 273];

/// The issues open at `cut`, each with its cumulative rate over the window as the model fitted then
/// saw it, one at a time; none when the model was cold then.
fn open_then<'p>(
    plan: &'p Plan,
    cut: chrono::DateTime<chrono::Utc>,
    shared: &'p [Shared],
    window_days: u32,
) -> impl Iterator<Item = (&'p PlannedIssue, Vec<f64>)> + 'p {
    let model = fate::fit(
        &fate_exposures_at(plan, cut, shared),
        history_at(plan, cut),
        window_days,
    );
    (!model.cold_start())
        .then_some(model)
        .into_iter()
        .flat_map(move |model| {
            plan.issues
                .iter()
                .zip(shared)
                .filter(move |(i, _)| i.created_at <= cut && i.closed_at.is_none_or(|c| c > cut))
                .map(move |(i, shared)| (i, model.cumulative(&features_at(i, cut, shared))))
        })
}

/// What the state's own past cuts tune in the abandonment model: the frailty and the recalibration of
/// the probability of being done.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FateTuning {
    /// The frailty whose quantiles came closest to holding.
    pub frailty: f64,
    /// `(a, b)` of `logit p' = a + b · logit p`, fitted on the past cuts' promised probabilities and what
    /// happened (see [`fate::recalibrate`]).
    pub recalibration: [f64; 2],
}

/// The frailty the state's own history supports best, and the recalibration of the probability of being
/// done: the model is fitted at past cuts whose window has passed, and each frailty candidate is scored
/// by how often its p50 and p80 would have been met (with a beyond-the-window quantile met as the
/// randomised PIT says, as the backtest scores it): the candidate closest to 50% and 80% wins (the
/// default without such a cut). Its probabilities of being done are then compared with what was done —
/// within the window at those cuts, and since then at `RECENT_CUT_DAYS`, whose windows have partly
/// passed — each cut weighted by its age (`recency_weight`), and [`fate::recalibrate`] fits the
/// correction. `None` when the model was cold at every cut.
///
/// The cuts are counted back from a Monday ([`cut_anchor`]), so that the tuning does not move with the
/// day of the run; and the tuning of the week's Monday is blended with the previous Monday's, the
/// newer one weighing more as the week goes on (none on Monday at midnight, nearly all by Sunday
/// night), so that it does not jump on Mondays either. With one anchor alone, an unchanged state's
/// milestone p80 moved by up to two months between a Sunday and a Monday.
pub fn choose_frailty(plan: &Plan, window_days: u32) -> Option<FateTuning> {
    let this_week = cut_anchor(plan.now);
    let last_week = this_week - chrono::Duration::days(fate::STEP_DAYS);
    let newer = (plan.now - this_week).num_seconds() as f64 / (fate::STEP_DAYS * 86_400) as f64;
    let untuned = FateTuning {
        frailty: fate::DEFAULT_FRAILTY,
        recalibration: [0.0, 1.0],
    };
    match (
        tuning_at(plan, last_week, window_days),
        tuning_at(plan, this_week, window_days),
    ) {
        (None, None) => None,
        (old, new) => Some(FateTuning::blend(
            old.unwrap_or(untuned),
            new.unwrap_or(untuned),
            newer.clamp(0.0, 1.0),
        )),
    }
}

impl FateTuning {
    /// `old` and `new` mixed, `w` of `new`.
    fn blend(old: Self, new: Self, w: f64) -> Self {
        let mix = |a: f64, b: f64| a + (b - a) * w;
        Self {
            frailty: mix(old.frailty, new.frailty),
            recalibration: [
                mix(old.recalibration[0], new.recalibration[0]),
                mix(old.recalibration[1], new.recalibration[1]),
            ],
        }
    }
}

/// [`choose_frailty`] with its cuts counted back from `anchor`.
fn tuning_at(
    plan: &Plan,
    anchor: chrono::DateTime<chrono::Utc>,
    window_days: u32,
) -> Option<FateTuning> {
    let window = chrono::Duration::days(i64::from(window_days));
    let levels = [0.5, 0.8];
    let mut hits = [[0.0f64; 2]; fate::FRAILTIES.len()];
    let mut scored = 0usize;
    let shared = Shared::all(plan);
    // Per scored issue: its cumulative rate over the time promised, whether it was done in it, and the
    // weight of its cut.
    let mut promised: Vec<(f64, bool, f64)> = Vec::new();
    for k in 0..FRAILTY_CUTS {
        let cut = anchor - window - chrono::Duration::days(k * FRAILTY_CUT_EVERY);
        let weight = recency_weight(plan.now - cut);
        for (i, h) in open_then(plan, cut, &shared, window_days) {
            let total = h.last().copied().unwrap_or(0.0);
            let closed = i
                .closed_at
                .filter(|c| *c <= cut + window)
                .map(|c| (c - cut).num_days().clamp(0, i64::from(window_days)) as usize);
            for (row, &theta) in hits.iter_mut().zip(fate::FRAILTIES.iter()) {
                let p = fate::done_by(total, theta);
                for (slot, tau) in row.iter_mut().zip(levels) {
                    *slot += match closed {
                        // Met when the share done by the close is at most tau.
                        Some(d) => f64::from(u8::from(
                            fate::done_by(h.get(d).copied().unwrap_or(total), theta) <= tau,
                        )),
                        None => fate::beyond_horizon_met(tau, p),
                    };
                }
            }
            promised.push((total, closed.is_some(), weight));
            scored += 1;
        }
    }
    // Recent cuts whose window has not yet passed: what the model promised for the days since, and
    // what was done in them. The newest evidence of drift the full-window cuts are a year late to see.
    for d in RECENT_CUT_DAYS
        .into_iter()
        .filter(|d| *d < i64::from(window_days))
    {
        let cut = anchor - chrono::Duration::days(d);
        let weight = recency_weight(plan.now - cut);
        let since = usize::try_from((plan.now - cut).num_days()).unwrap_or(0);
        for (i, h) in open_then(plan, cut, &shared, window_days) {
            let by = h.get(since).copied().unwrap_or(0.0);
            let done = i.closed_at.is_some_and(|c| c <= plan.now);
            promised.push((by, done, weight));
        }
    }
    if promised.is_empty() {
        return None;
    }
    // Without a past cut whose window has passed, the frailty stays the default; the recent cuts still
    // correct the promises.
    let frailty = if scored > 0 {
        let n = scored as f64;
        let err = |row: &[f64; 2]| (row[0] / n - 0.5).powi(2) + (row[1] / n - 0.8).powi(2);
        let best = hits
            .iter()
            .enumerate()
            .min_by(|a, b| err(a.1).total_cmp(&err(b.1)))
            .map_or(0, |(n, _)| n);
        fate::FRAILTIES[best]
    } else {
        fate::DEFAULT_FRAILTY
    };
    let pairs: Vec<fate::Promise> = promised
        .iter()
        .map(|(total, done, weight)| fate::Promise {
            p: fate::done_by(*total, frailty),
            done: *done,
            weight: *weight,
        })
        .collect();
    Some(FateTuning {
        frailty,
        recalibration: fate::recalibrate(&pairs),
    })
}
