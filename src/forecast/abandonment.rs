//! The abandonment model's input from the plan: each open issue's features and exposures, and the
//! frailty chosen on the state's own past cuts.

use super::*;

/// An issue's abandonment-model features at `at`: its column then, its age, labels and assignee.
pub fn fate_features(i: &PlannedIssue, at: chrono::DateTime<chrono::Utc>) -> FateFeatures {
    let column = i
        .timeline
        .iter()
        .rev()
        .find(|s| s.since <= at)
        .map_or(i.lifecycle, |s| s.column);
    FateFeatures {
        column: column.as_str().to_owned(),
        age_days: (at - i.created_at).num_days().max(0),
        labels: i.labels.clone(),
        // Only someone assigned by then: trackers often assign an issue as it is closed, and that must
        // not teach the model that assigned issues get done.
        person: i
            .assignee
            .clone()
            .filter(|_| i.assigned_at.is_none_or(|a| a <= at)),
    }
}

/// The abandonment model's evidence: every issue open in each step of the recent history, how long it
/// stayed open in the step and whether it closed. Nothing after `plan.now` is read.
pub fn fate_exposures(plan: &Plan) -> Vec<Exposure> {
    fate_exposures_at(plan, plan.now)
}

/// The abandonment model's evidence as it was at `at`: closes after `at` are not seen.
pub(super) fn fate_exposures_at(plan: &Plan, at: chrono::DateTime<chrono::Utc>) -> Vec<Exposure> {
    let step = chrono::Duration::days(fate::STEP_DAYS);
    let mut out = Vec::new();
    let mut t = at - chrono::Duration::days(fate::RECENT_DAYS);
    while t < at {
        let end = (t + step).min(at);
        for (n, i) in plan.issues.iter().enumerate() {
            let open_at_t = i.created_at <= t && i.closed_at.is_none_or(|c| c > t);
            if !open_at_t {
                continue;
            }
            let closed = i.closed_at.filter(|c| *c <= end);
            let until = closed.unwrap_or(end);
            out.push(Exposure {
                features: fate_features(i, t),
                issue: n as u64,
                days: (until - t).num_seconds() as f64 / 86_400.0,
                closed: closed.is_some(),
                ago_days: (at - t).num_seconds() as f64 / 86_400.0,
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
/// randomised PIT says, as the backtest scores it): the candidate closest to 50% and 80% wins. Its
/// probabilities of being done within the window are then compared with what was done, and
/// [`fate::recalibrate`] fits the correction. `None` when the history is too short for any such cut.
pub fn choose_frailty(plan: &Plan, window_days: u32) -> Option<FateTuning> {
    let window = chrono::Duration::days(i64::from(window_days));
    let levels = [0.5, 0.8];
    let mut hits = [[0.0f64; 2]; fate::FRAILTIES.len()];
    let mut scored = 0usize;
    // Per scored issue: its cumulative rate over the window, and whether it was done within it.
    let mut promised: Vec<(f64, bool)> = Vec::new();
    for k in 0..FRAILTY_CUTS {
        let cut = plan.now - window - chrono::Duration::days(k * FRAILTY_CUT_EVERY);
        let model = fate::fit(
            &fate_exposures_at(plan, cut),
            history_at(plan, cut),
            window_days,
        );
        if model.cold_start {
            continue;
        }
        for i in &plan.issues {
            let open_at_cut = i.created_at <= cut && i.closed_at.is_none_or(|c| c > cut);
            if !open_at_cut {
                continue;
            }
            let h = model.cumulative(&fate_features(i, cut));
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
            promised.push((total, closed.is_some()));
            scored += 1;
        }
    }
    (scored > 0).then(|| {
        let n = scored as f64;
        let err = |row: &[f64; 2]| (row[0] / n - 0.5).powi(2) + (row[1] / n - 0.8).powi(2);
        let best = hits
            .iter()
            .enumerate()
            .min_by(|a, b| err(a.1).total_cmp(&err(b.1)))
            .map_or(0, |(n, _)| n);
        let frailty = fate::FRAILTIES[best];
        let pairs: Vec<(f64, bool)> = promised
            .iter()
            .map(|(total, done)| (fate::done_by(*total, frailty), *done))
            .collect();
        FateTuning {
            frailty,
            recalibration: fate::recalibrate(&pairs),
        }
    })
}
