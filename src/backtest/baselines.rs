//! The two baselines every forecasting method in the literature is compared with, run on a rewound
//! snapshot at a cut. Both are deliberately naive — no dependencies, no calibration by label, no credit
//! for work already under way — because their job is to be the bar a real method must clear.
//!
//! **Queue order**, shared by both: priority (`p/0` first; no priority label counts as `p/2`), then the
//! due date of the issue's milestone (earliest first, none last), then creation time, then the key.
//!
//! **Throughput Monte Carlo** ([`throughput`]), per repository: the weekly throughput is the number of
//! the repository's issues closed in each of the [`THROUGHPUT_WEEKS`] seven-day windows before the cut
//! (windows that end before the repository's first issue was created are left out, so a young
//! repository is not charged for weeks it did not exist). Each trial draws a throughput for each week
//! after the cut with replacement from those samples and takes that many issues off the front of the
//! queue; the `j`-th of `n` issues taken in week `w` (from 0) is done at `7·w + 7·j/n` days, evenly
//! spread through the week.
//!
//! **Evidence-based scheduling** ([`evidence_based`], FogBugz's method), per person: a person's velocity
//! samples are `estimate / actual` of the closed issues whose first assignee they were and that had an
//! estimate (`est/*` label, else Gitea's native estimate), where the actual is the working time from the
//! issue's first assignment to that person (when the timeline has it, else its creation) until it was
//! closed, on a Monday-to-Friday week of [`WORKDAY_HOURS`]-hour days; ratios outside the calibration's
//! [`RATIO_LIMIT`] are data errors and dropped. Someone with fewer than [`MIN_PERSON_SAMPLES`] samples
//! draws from the team's pool of everyone's samples (and an empty pool means a velocity of 1: estimates
//! taken at face value). Open work goes to its first assignee; unassigned work queues for the
//! pseudo-person [`UNASSIGNED`], who draws from the team's pool. An open issue without an estimate is
//! given the team's median estimate (all estimated issues, open or closed; a day when there are none).
//! Each trial walks each person's queue, one task at a time, every task taking `estimate / velocity` with
//! a fresh velocity draw, and converts the running total of working time to calendar days after the cut.
//!
//! Both report, per open issue, the nearest-rank p10/p50/p80 of the trials in days after the cut; `None`
//! where that quantile is beyond the horizon. Every trial draws from its own RNG stream (seeded from the
//! seed, the repository or person, and the trial number), so results do not depend on the order of work.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use super::score::LEVELS;
use super::{Fnv, days_between, nearest_rank, stream};
use crate::domain::{Issue, IssueKey, OpenState, RepoName};
use crate::engine::calibrate::RATIO_LIMIT;
use crate::state::Snapshot;

/// Weeks of history the throughput is sampled from.
pub(crate) const THROUGHPUT_WEEKS: u32 = 12;
/// Hours in an estimate's working day.
pub(crate) const WORKDAY_HOURS: f64 = 6.0;
/// Fewer own velocity samples than this and a person draws from the team's pool.
pub(crate) const MIN_PERSON_SAMPLES: usize = 6;
/// The pseudo-person unassigned open work queues for.
pub(crate) const UNASSIGNED: &str = "unassigned";

/// p10, p50 and p80 in days after the cut; `None` is beyond the horizon.
pub(crate) type Quantiles = [Option<f64>; 3];

/// How a baseline is simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Simulation {
    /// Trials.
    pub trials: u32,
    /// The seed: the same seed gives the same quantiles.
    pub seed: u64,
    /// Days after the cut looked at; anything later is `None`.
    pub horizon_days: u32,
}

/// The queue-order key of an issue (see the module documentation).
fn queue_key<'a>(
    snapshot: &Snapshot,
    key: &'a IssueKey,
    issue: &Issue,
) -> (u8, bool, Option<DateTime<Utc>>, DateTime<Utc>, &'a IssueKey) {
    let due = issue
        .milestone
        .and_then(|id| snapshot.milestone(id))
        .and_then(|(_, m)| m.due_on);
    (
        issue.priority().level(),
        due.is_none(),
        due,
        issue.created_at,
        key,
    )
}

/// The open issues in queue order.
fn queue(snapshot: &Snapshot) -> Vec<(&IssueKey, &Issue)> {
    let mut open: Vec<(&IssueKey, &Issue)> = snapshot
        .issues
        .iter()
        .filter(|(_, i)| i.state == OpenState::Open)
        .collect();
    open.sort_by(|a, b| queue_key(snapshot, a.0, a.1).cmp(&queue_key(snapshot, b.0, b.1)));
    open
}

/// The per-issue quantiles of completion days over trials (`INFINITY` where a trial did not finish it).
fn quantiles(mut ends: Vec<f64>, horizon: f64) -> Quantiles {
    ends.sort_by(f64::total_cmp);
    LEVELS.map(|p| nearest_rank(&ends, p).filter(|d| *d <= horizon))
}

fn seed_for(seed: u64, name: &str) -> u64 {
    stream(seed, Fnv::new().feed(name.as_bytes()).finish())
}

/// Issues closed per week in the [`THROUGHPUT_WEEKS`] weeks before `cut`, newest week first.
pub(crate) fn weekly_throughput(
    snapshot: &Snapshot,
    repo: &RepoName,
    cut: DateTime<Utc>,
) -> Vec<u32> {
    let issues = || snapshot.issues.iter().filter(|(k, _)| &k.repo == repo);
    let Some(first) = issues().map(|(_, i)| i.created_at).min() else {
        return Vec::new();
    };
    (0..THROUGHPUT_WEEKS)
        .map(|w| {
            let end = cut - Duration::days(7 * i64::from(w));
            (end - Duration::days(7), end)
        })
        .take_while(|(_, end)| *end > first)
        .map(|(start, end)| {
            let closed = issues()
                .filter(|(_, i)| i.state == OpenState::Closed)
                .filter(|(_, i)| i.closed_at.is_some_and(|c| c > start && c <= end))
                .count();
            u32::try_from(closed).unwrap_or(u32::MAX)
        })
        .collect()
}

/// Throughput Monte Carlo: per open issue, when it is done in days after `cut`.
pub fn throughput(
    snapshot: &Snapshot,
    cut: DateTime<Utc>,
    sim: &Simulation,
) -> Vec<(IssueKey, Quantiles)> {
    let horizon = f64::from(sim.horizon_days);
    let mut by_repo: BTreeMap<&RepoName, Vec<&IssueKey>> = BTreeMap::new();
    for (k, _) in queue(snapshot) {
        by_repo.entry(&k.repo).or_default().push(k);
    }
    let mut out = Vec::new();
    for (repo, keys) in by_repo {
        let samples = weekly_throughput(snapshot, repo, cut);
        let mut ends = vec![vec![f64::INFINITY; sim.trials as usize]; keys.len()];
        let repo_seed = seed_for(sim.seed, &repo.to_string());
        if !samples.is_empty() {
            for trial in 0..sim.trials {
                let mut rng =
                    Xoshiro256PlusPlus::seed_from_u64(stream(repo_seed, u64::from(trial)));
                let mut done = 0;
                let mut week = 0u32;
                while done < keys.len() && f64::from(week) * 7.0 < horizon {
                    let n = samples
                        .get(rng.random_range(0..samples.len()))
                        .copied()
                        .unwrap_or(0);
                    for j in 1..=n {
                        let Some(slot) = ends.get_mut(done) else {
                            break;
                        };
                        slot[trial as usize] =
                            7.0 * f64::from(week) + 7.0 * f64::from(j) / f64::from(n);
                        done += 1;
                    }
                    week += 1;
                }
            }
        }
        out.extend(
            keys.into_iter()
                .zip(ends)
                .map(|(k, e)| (k.clone(), quantiles(e, horizon))),
        );
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Calendar days since Monday 1970-01-05, the origin of the working-week arithmetic.
fn week_days(t: DateTime<Utc>) -> f64 {
    let monday = Utc
        .with_ymd_and_hms(1970, 1, 5, 0, 0, 0)
        .single()
        .unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
    days_between(monday, t)
}

/// Working days (Monday to Friday) elapsed from the origin to `calendar` days after it.
fn to_working(calendar: f64) -> f64 {
    let weeks = (calendar / 7.0).floor();
    5.0 * weeks + (calendar - 7.0 * weeks).min(5.0)
}

/// The calendar day (since the origin) at which `working` working days have elapsed; work ending exactly
/// at a week's end ends on Friday night, not on Monday morning.
fn to_calendar(working: f64) -> f64 {
    let weeks = (working / 5.0).floor();
    let rest = working - 5.0 * weeks;
    if rest < 1e-12 && weeks > 0.0 {
        7.0 * (weeks - 1.0) + 5.0
    } else {
        7.0 * weeks + rest
    }
}

/// Working days between two moments, weekends excluded.
pub(crate) fn working_days_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    to_working(week_days(to)) - to_working(week_days(from))
}

/// Velocity samples (`estimate / actual`) per person from the closed issues of `snapshot`.
pub(crate) fn velocities(snapshot: &Snapshot) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for i in snapshot.issues.values() {
        let (OpenState::Closed, Some(closed), Some(Ok(estimate)), Some(person)) = (
            i.state,
            i.closed_at,
            i.estimate_hours(WORKDAY_HOURS),
            i.assignees.first(),
        ) else {
            continue;
        };
        let assigned = i
            .timeline
            .iter()
            .filter(|e| e.kind == crate::domain::EventKind::Assignees && !e.removed)
            .filter(|e| e.assignee.as_ref() == Some(person))
            .map(|e| e.created_at)
            .min();
        let start = assigned.unwrap_or(i.created_at).min(closed);
        let actual = working_days_between(start, closed) * WORKDAY_HOURS;
        if actual <= 0.0 || estimate <= 0.0 {
            continue;
        }
        let v = estimate / actual;
        if (1.0 / RATIO_LIMIT..=RATIO_LIMIT).contains(&v) {
            out.entry(person.clone()).or_default().push(v);
        }
    }
    out
}

/// The team's median estimate in hours (a day when nothing is estimated).
fn median_estimate(snapshot: &Snapshot) -> f64 {
    let mut all: Vec<f64> = snapshot
        .issues
        .values()
        .filter_map(|i| i.estimate_hours(WORKDAY_HOURS).and_then(Result::ok))
        .filter(|h| *h > 0.0)
        .collect();
    all.sort_by(f64::total_cmp);
    all.get(all.len() / 2).copied().unwrap_or(WORKDAY_HOURS)
}

/// Evidence-based scheduling: per open issue, when it is done in days after `cut`.
pub(crate) fn evidence_based(
    snapshot: &Snapshot,
    cut: DateTime<Utc>,
    sim: &Simulation,
) -> Vec<(IssueKey, Quantiles)> {
    let horizon = f64::from(sim.horizon_days);
    let own = velocities(snapshot);
    let mut pool: Vec<f64> = own.values().flatten().copied().collect();
    if pool.is_empty() {
        pool.push(1.0);
    }
    let fallback_estimate = median_estimate(snapshot);
    let mut by_person: BTreeMap<&str, Vec<(&IssueKey, f64)>> = BTreeMap::new();
    for (k, i) in queue(snapshot) {
        let person = i.assignees.first().map_or(UNASSIGNED, String::as_str);
        let hours = i
            .estimate_hours(WORKDAY_HOURS)
            .and_then(Result::ok)
            .filter(|h| *h > 0.0)
            .unwrap_or(fallback_estimate);
        by_person.entry(person).or_default().push((k, hours));
    }
    let start = to_working(week_days(cut));
    let cut_day = week_days(cut);
    let mut out = Vec::new();
    for (person, tasks) in by_person {
        let samples = own
            .get(person)
            .filter(|v| person != UNASSIGNED && v.len() >= MIN_PERSON_SAMPLES)
            .unwrap_or(&pool);
        let mut ends = vec![vec![f64::INFINITY; sim.trials as usize]; tasks.len()];
        let person_seed = seed_for(sim.seed, person);
        for trial in 0..sim.trials {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(stream(person_seed, u64::from(trial)));
            let mut working = 0.0;
            for (slot, (_, hours)) in ends.iter_mut().zip(&tasks) {
                let v = samples
                    .get(rng.random_range(0..samples.len()))
                    .copied()
                    .unwrap_or(1.0);
                working += hours / v / WORKDAY_HOURS;
                let end = to_calendar(start + working) - cut_day;
                if end > horizon {
                    break;
                }
                slot[trial as usize] = end;
            }
        }
        out.extend(
            tasks
                .into_iter()
                .zip(ends)
                .map(|((k, _), e)| (k.clone(), quantiles(e, horizon))),
        );
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Milestone, TimelineEvent};
    use crate::state::Meta;

    /// 2026-03-02 is a Monday.
    fn day(d: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap() + Duration::days(d)
    }

    fn repo() -> RepoName {
        "acme/api".parse().unwrap()
    }

    fn issue(n: u64, created: DateTime<Utc>, labels: &[&str]) -> Issue {
        Issue {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            ..Issue::bare(n, created)
        }
    }

    fn closed(mut i: Issue, at: DateTime<Utc>) -> Issue {
        i.state = OpenState::Closed;
        i.closed_at = Some(at);
        i
    }

    fn snapshot(cut: DateTime<Utc>, issues: Vec<Issue>) -> Snapshot {
        Snapshot {
            meta: Meta::full(cut, None, &[repo()]),
            labels: BTreeMap::new(),
            milestones: BTreeMap::new(),
            issues: issues
                .into_iter()
                .map(|i| (repo().issue(i.number), i))
                .collect(),
        }
    }

    fn sim(trials: u32, horizon_days: u32) -> Simulation {
        Simulation {
            trials,
            seed: 42,
            horizon_days,
        }
    }

    fn of(out: &[(IssueKey, Quantiles)], n: u64) -> Quantiles {
        out.iter().find(|(k, _)| k.number == n).unwrap().1
    }

    /// Two issues closed in each of the twelve weeks before the cut (day 84), and `open` queued.
    fn steady(open: Vec<Issue>) -> Snapshot {
        let cut = day(84);
        let mut issues: Vec<Issue> = (0..24u32)
            .map(|n| {
                let week = i64::from(n / 2);
                closed(issue(100 + u64::from(n), day(0), &[]), day(7 * week + 3))
            })
            .collect();
        issues.extend(open);
        snapshot(cut, issues)
    }

    #[test]
    fn constant_throughput_walks_the_queue_week_by_week() {
        let open: Vec<Issue> = (1..=6).map(|n| issue(n, day(n as i64), &[])).collect();
        let s = steady(open);
        assert_eq!(weekly_throughput(&s, &repo(), day(84)), vec![2; 12]);
        let out = throughput(&s, day(84), &sim(50, 365));
        // Two a week: the 5th in the queue is the first of week 3, half-way through it.
        assert_eq!(of(&out, 5), [Some(17.5); 3]);
        assert_eq!(of(&out, 1), [Some(3.5); 3]);
        assert_eq!(of(&out, 6), [Some(21.0); 3]);
        let short = throughput(&s, day(84), &sim(50, 14));
        assert_eq!(of(&short, 4), [Some(14.0); 3]);
        assert_eq!(of(&short, 5), [None; 3]);
    }

    #[test]
    fn queue_order_is_priority_then_due_date_then_age() {
        let mut s = steady(vec![
            issue(1, day(60), &[]),
            issue(2, day(61), &["p/3"]),
            issue(3, day(62), &["p/0"]),
            issue(4, day(50), &[]),
            issue(5, day(70), &[]),
        ]);
        s.milestones.insert(
            repo(),
            vec![Milestone {
                id: 9,
                title: "v1".into(),
                description: String::new(),
                state: OpenState::Open,
                due_on: Some(day(100)),
                created_at: day(0),
                closed_at: None,
            }],
        );
        s.issues.get_mut(&repo().issue(5)).unwrap().milestone = Some(9);
        let order: Vec<u64> = queue(&s).iter().map(|(k, _)| k.number).collect();
        assert_eq!(order, vec![3, 5, 4, 1, 2]);
        let out = throughput(&s, day(84), &sim(10, 365));
        assert_eq!(of(&out, 3)[1], Some(3.5));
        assert_eq!(of(&out, 2)[1], Some(17.5));
    }

    #[test]
    fn throughput_uses_twelve_weeks_and_only_weeks_the_repository_existed() {
        // A closure 13 weeks back is outside the window; the repository is 20 days old at the cut.
        let cut = day(100);
        let young = snapshot(
            cut,
            vec![
                closed(issue(1, day(80), &[]), day(95)),
                closed(issue(2, day(80), &[]), day(96)),
                issue(3, day(81), &[]),
            ],
        );
        assert_eq!(weekly_throughput(&young, &repo(), cut), vec![2, 0, 0]);
        let mut old = steady(vec![closed(issue(1, day(0), &[]), day(84 - 7 * 13 + 1))]);
        old.issues.get_mut(&repo().issue(1)).unwrap().created_at = day(-20);
        assert_eq!(weekly_throughput(&old, &repo(), day(84)), vec![2; 12]);
        // No closures at all: nothing is ever done.
        let idle = snapshot(cut, vec![issue(3, day(1), &[])]);
        assert_eq!(of(&throughput(&idle, cut, &sim(20, 365)), 3), [None; 3]);
    }

    #[test]
    fn working_days_skip_weekends() {
        // Monday to Wednesday; Friday noon to Monday noon; a whole week.
        assert_eq!(working_days_between(day(0), day(2)), 2.0);
        assert_eq!(
            working_days_between(day(4) + Duration::hours(12), day(7) + Duration::hours(12)),
            1.0
        );
        assert_eq!(working_days_between(day(0), day(7)), 5.0);
        assert_eq!(
            working_days_between(day(5), day(6)),
            0.0,
            "Saturday to Sunday"
        );
        assert_eq!(to_calendar(5.0), 5.0, "a week's work ends on Friday night");
        assert_eq!(to_calendar(6.0), 8.0);
    }

    /// Ann: six closed 1d issues, each assigned Monday and closed Wednesday (two working days: v = 0.5).
    /// Bob: one 2d issue done in a day (v = 2).
    fn team(open: Vec<Issue>) -> Snapshot {
        let mut issues = Vec::new();
        for n in 0..6u64 {
            let monday = day(7 * n as i64);
            let mut i = closed(
                issue(100 + n, monday - Duration::days(3), &["est/1d"]),
                monday + Duration::days(2),
            );
            i.assignees = vec!["ann".into()];
            let mut a = TimelineEvent::new(n, crate::domain::EventKind::Assignees, monday, "pm");
            a.assignee = Some("ann".into());
            i.timeline = vec![a];
            issues.push(i);
        }
        let mut b = closed(issue(200, day(42), &["est/2d"]), day(43));
        b.assignees = vec!["bob".into()];
        issues.push(b);
        issues.extend(open);
        snapshot(day(49), issues)
    }

    fn assigned(mut i: Issue, who: &str) -> Issue {
        i.assignees = vec![who.into()];
        i
    }

    #[test]
    fn evidence_based_walks_each_persons_queue() {
        let s = team(vec![
            assigned(issue(1, day(40), &["est/1d", "p/1"]), "ann"),
            assigned(issue(2, day(41), &["est/1d"]), "ann"),
            assigned(issue(3, day(30), &["est/1d"]), "ann"),
            issue(4, day(41), &[]),
        ]);
        let v = velocities(&s);
        assert_eq!(v["ann"], vec![0.5; 6]);
        assert_eq!(v["bob"], vec![2.0]);
        // The cut is a Monday. Ann: #1 (p/1) two working days, then #3 (older), then #2 past the weekend.
        let out = evidence_based(&s, day(49), &sim(100, 365));
        assert_eq!(of(&out, 1), [Some(2.0); 3]);
        assert_eq!(of(&out, 3), [Some(4.0); 3]);
        assert_eq!(of(&out, 2), [Some(8.0); 3]);
        // Unassigned and unestimated: the median estimate (1d) at a velocity from the team's pool:
        // 6 of 7 samples say 0.5 (two days), 1 of 7 says 2 (half a day), so only the p10 is half a day.
        let many = evidence_based(&s, day(49), &sim(1000, 365));
        assert_eq!(of(&many, 4), [Some(0.5), Some(2.0), Some(2.0)]);
        let short = evidence_based(&s, day(49), &sim(100, 5));
        assert_eq!(of(&short, 2), [None; 3]);
        assert_eq!(of(&short, 3), [Some(4.0); 3]);
    }

    #[test]
    fn few_samples_fall_back_to_the_pool() {
        let s = team(vec![assigned(issue(1, day(45), &["est/1d"]), "bob")]);
        let q = of(&evidence_based(&s, day(49), &sim(1000, 365)), 1);
        assert_eq!(q, [Some(0.5), Some(2.0), Some(2.0)]);
    }

    #[test]
    fn baselines_are_deterministic_and_seeded() {
        // Week w before the cut closed w + 1 issues: a spread of throughputs, so trials differ.
        let cut = day(84);
        let mut issues: Vec<Issue> = (1..=10).map(|n| issue(n, day(1), &[])).collect();
        let mut n = 100;
        for w in 0..12i64 {
            for _ in 0..=w {
                issues.push(closed(
                    issue(n, day(0), &[]),
                    cut - Duration::days(7 * w + 1),
                ));
                n += 1;
            }
        }
        let s = snapshot(cut, issues);
        assert_eq!(
            weekly_throughput(&s, &repo(), cut),
            (1..=12).collect::<Vec<u32>>()
        );
        let a = throughput(&s, cut, &sim(20, 365));
        assert_eq!(a, throughput(&s, cut, &sim(20, 365)));
        let b = throughput(
            &s,
            cut,
            &Simulation {
                seed: 7,
                ..sim(20, 365)
            },
        );
        assert_ne!(a, b);
        let q = of(&a, 10);
        assert!(q[0] < q[2], "{q:?}");
        let e = evidence_based(&s, cut, &sim(20, 365));
        assert_eq!(e, evidence_based(&s, cut, &sim(20, 365)));
    }
}
