//! The engine's input from the plan: remaining efforts, imputed estimates, calibration samples, the
//! project the scheduler and the Monte Carlo run on.

use super::*;
use crate::prose::count;

/// Share of the estimate still to do for an issue in review.
pub(super) const IN_REVIEW_REMAINING: f64 = 0.2;
/// The least share of the estimate assumed to remain for started work, however much time was tracked.
pub(super) const STARTED_MIN_REMAINING: f64 = 0.25;

/// Closed issues with a measured working time needed before imputation uses what work really took.
const IMPUTE_FROM_ACTUALS: usize = 5;

/// How unestimated work is sized: per label and a fallback, in hours.
pub(super) struct Imputation<'a> {
    /// The median per label shared by at least three issues.
    pub by_label: HashMap<&'a str, f64>,
    /// The median over all.
    pub fallback: f64,
    /// The medians are of what closed issues really took (already calibrated), not of estimates.
    pub actual: bool,
}

/// Imputed estimates: what similar closed issues really took — the median working time of closed issues
/// sharing a label, else of all closed issues with a measured time — when at least
/// [`IMPUTE_FROM_ACTUALS`] have one; else the median estimate of issues sharing a label, else of all
/// estimated issues, else a working day.
pub(super) fn imputed_estimates(plan: &Plan) -> Imputation<'_> {
    let team: HashMap<&str, &crate::plan::PlannedMember> =
        plan.team.iter().map(|m| (m.name.as_str(), m)).collect();
    let mut by_label: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut all = Vec::new();
    for i in plan.issues.iter().filter(|i| i.state == OpenState::Closed) {
        if let Some(h) = measured_hours(plan, &team, i) {
            all.push(h);
            for l in &i.labels {
                if !crate::domain::is_plan_label(l) {
                    by_label.entry(l.as_str()).or_default().push(h);
                }
            }
        }
    }
    let actual = all.len() >= IMPUTE_FROM_ACTUALS;
    if !actual {
        by_label.clear();
        all.clear();
        for i in &plan.issues {
            if let (
                Some(h),
                EstimateSource::Label | EstimateSource::Native | EstimateSource::Directive,
            ) = (i.estimate_hours, i.estimate_source)
            {
                all.push(h);
                for l in &i.labels {
                    if !crate::domain::is_plan_label(l) {
                        by_label.entry(l.as_str()).or_default().push(h);
                    }
                }
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let fallback = if all.is_empty() {
        plan.workday_hours
    } else {
        median(&mut all)
    };
    let by_label = by_label
        .into_iter()
        .filter(|(_, v)| v.len() >= 3)
        .map(|(k, mut v)| (k, median(&mut v)))
        .collect();
    Imputation {
        by_label,
        fallback,
        actual,
    }
}

/// The working hours a closed issue really took, if its history says: tracked time where any was logged,
/// else the working time (on the assignee's calendar) from when work began to the close. Work began when
/// the issue entered the steeping/review stretch that ended in the close, or when it was assigned if that
/// came later; with neither, nothing says when work began (an issue never assigned counts only with a
/// merged pull request: its stretch on the board was work, not a wait in the queue).
fn measured_hours(
    plan: &Plan,
    team: &HashMap<&str, &crate::plan::PlannedMember>,
    i: &PlannedIssue,
) -> Option<f64> {
    let closed = i.closed_at?;
    if i.tracked_hours > 0.0 {
        return Some(i.tracked_hours);
    }
    let mut run_start = None;
    for span in i.timeline.iter().rev() {
        match span.column {
            Lifecycle::Done => {}
            Lifecycle::Steeping | Lifecycle::InReview => run_start = Some(span.since),
            _ => break,
        }
    }
    let start = match (run_start, i.assigned_at) {
        (Some(r), Some(a)) => r.max(a),
        (None, Some(a)) => a,
        (Some(r), None) if i.merged_pull => r,
        _ => return None,
    };
    if start >= closed {
        return None;
    }
    let spec = i
        .assignee
        .as_deref()
        .and_then(|a| team.get(a))
        .map_or(&plan.team_calendar, |m| &m.calendar);
    // The team's days, not UTC's: a Sydney team's Monday morning is Sunday in UTC.
    let h = working_hours_between(spec, plan.zone.local(start), plan.zone.local(closed));
    (h > 0.0).then_some(h)
}

/// What the history says about how long estimated work really took: one sample per closed issue that had
/// an estimate and a known start of work — what a Gitea repository holds, with or without time tracking
/// and pull requests.
///
/// The actual effort is what [`measured_hours`] finds.
pub fn calibration_samples(plan: &Plan) -> Vec<Sample> {
    samples_of(plan).into_iter().map(|(_, s)| s).collect()
}

/// [`calibration_samples`], each with its issue.
fn samples_of(plan: &Plan) -> Vec<(&PlannedIssue, Sample)> {
    let team: HashMap<&str, &crate::plan::PlannedMember> =
        plan.team.iter().map(|m| (m.name.as_str(), m)).collect();
    let mut out = Vec::new();
    for i in plan.issues.iter().filter(|i| i.state == OpenState::Closed) {
        let Some(estimate) = i.estimate_hours else {
            continue;
        };
        if i.estimate_source == EstimateSource::Imputed {
            continue;
        }
        let Some(actual) = measured_hours(plan, &team, i) else {
            continue;
        };
        out.push((
            i,
            Sample {
                estimate,
                actual,
                person: i.assignee.clone(),
                labels: i
                    .labels
                    .iter()
                    .filter(|l| !crate::domain::is_plan_label(l))
                    .cloned()
                    .collect(),
            },
        ));
    }
    out
}

/// The warning for closed issues calibration leaves out as data errors, naming a few (audit 142: a
/// 1,000-hour entry of tracked time dropped its issue without a word, and calibration stayed cold), each
/// kind with its own way out: tracked time to correct, or, where none was tracked, the working time read
/// from when work began (audit 163: "correct the tracked time" of issues that had none, assigned weeks
/// before anyone started them).
fn absurd_samples(samples: &[(&PlannedIssue, Sample)]) -> Option<String> {
    const NAMED: usize = 5;
    let listed = |tracked: bool| -> Vec<String> {
        samples
            .iter()
            .filter(|(i, s)| s.absurd() && (i.tracked_hours > 0.0) == tracked)
            .map(|(i, s)| {
                format!(
                    "{} ({} h against an estimate of {} h)",
                    i.key,
                    crate::prose::hours(s.actual),
                    crate::prose::hours(s.estimate)
                )
            })
            .collect()
    };
    let (tracked, read) = (listed(true), listed(false));
    let it = |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    let mut said = Vec::new();
    if !tracked.is_empty() {
        said.push(format!(
            "{}: {} more than {}× off its estimate in tracked time, taken as a data error (time logged \
             on the wrong issue, or an estimate left from another); correct the tracked time or the \
             estimate on Gitea to count {}",
            crate::prose::and_list_at_most(&tracked, NAMED),
            it(tracked.len(), "it took", "each took"),
            calibrate::RATIO_LIMIT,
            it(tracked.len(), "it", "them"),
        ));
    }
    if !read.is_empty() {
        said.push(format!(
            "{}: no time was tracked, and the working time from when work on {} began (its assignment, \
             or its move to steeping or review) to its close is more than {}× off its estimate, taken as \
             a data error — work assigned long before anyone started it, or only as it was closed, reads \
             so; log the time spent on Gitea (tracked time counts first) or correct the estimate to count \
             {}",
            crate::prose::and_list_at_most(&read, NAMED),
            it(read.len(), "it", "each"),
            calibrate::RATIO_LIMIT,
            it(read.len(), "it", "them"),
        ));
    }
    (!said.is_empty()).then(|| format!("calibration leaves out {}", said.join("; and ")))
}

/// The engine's input built from a plan: the open issues as tasks, their effort distributions and the
/// milestone groups, with the calibration and the flags and warnings found on the way.
#[derive(Debug, Clone)]
pub struct Built<'a> {
    /// What calibration learnt.
    pub calibration: Calibration,
    /// The open issues, in task order.
    pub open: Vec<&'a PlannedIssue>,
    /// Per task: flags for the report.
    pub flags: Vec<Vec<Flag>>,
    /// Warnings for the report.
    pub warnings: Vec<String>,
    /// The engine's project.
    pub project: Project,
    /// The project prepared for scheduling.
    pub prep: Prepared,
    /// Median remaining effort per task.
    pub medians: Vec<f64>,
    /// Effort distribution per task.
    pub dists: Vec<Distribution>,
    /// Every milestone, by id.
    pub milestones: Vec<&'a crate::plan::PlannedMilestone>,
    /// Per milestone: its tasks that are forecast.
    pub groups: Vec<Vec<usize>>,
    /// What the abandonment model learnt.
    pub fate: FateModel,
    /// Per task: the probability it is done within the abandonment window, and when if it is.
    pub fates: Vec<Fate>,
}

/// The fewest days without an hour, reaching the horizon's end, that make someone gone as far as the
/// forecast sees (time off past it, a start after it). Shorter, it is a break (a year end's holidays).
const AWAY_TO_HORIZON_DAYS: u32 = 31;

/// The last day (counted from day 0) `m` works within the horizon, where their hours stop before its end:
/// their `ends` or a leaving directive ([`PersonCalendarSpec::last_working_day`]), or the day before at
/// least [`AWAY_TO_HORIZON_DAYS`] without an hour that reach its end; day 0 for someone with no hour in
/// it at all. `None` while they work on. Work kept with someone whose time off reached past the horizon
/// stayed with them beyond it, without a word (audit 157), where `ends` gave it to the others.
///
/// [`PersonCalendarSpec::last_working_day`]: crate::engine::PersonCalendarSpec::last_working_day
pub(crate) fn last_day_within(
    m: &crate::plan::PlannedMember,
    cal: &Calendar,
    as_of: NaiveDate,
) -> Option<u32> {
    let days = cal.days();
    let named = m
        .calendar
        .last_working_day()
        .and_then(|l| u32::try_from((l - as_of).num_days()).ok())
        .filter(|d| *d < days);
    named.or_else(|| match (0..days).rev().find(|&d| cal.capacity(d) > 0.0) {
        None => Some(0),
        Some(l) if days - (l + 1) >= AWAY_TO_HORIZON_DAYS => Some(l),
        Some(_) => None,
    })
}

/// Builds the engine's input from a plan, with calendars to `horizon_days`.
pub fn build(plan: &Plan, horizon_days: u32) -> Result<Built<'_>, crate::engine::ScheduleError> {
    let samples = samples_of(plan);
    let calibration = calibrate::fit(samples.iter().map(|(_, s)| s));
    let as_of = plan.as_of;
    let days = horizon_days;
    let imputation = imputed_estimates(plan);
    let mut warnings: Vec<String> = plan.warnings.iter().map(ToString::to_string).collect();
    warnings.extend(absurd_samples(&samples));

    let open: Vec<&PlannedIssue> = plan
        .issues
        .iter()
        .filter(|i| i.state == OpenState::Open)
        .collect();
    let index: HashMap<&IssueKey, usize> =
        open.iter().enumerate().map(|(n, i)| (&i.key, n)).collect();
    let closed: std::collections::HashSet<&IssueKey> = plan
        .issues
        .iter()
        .filter(|i| i.state == OpenState::Closed)
        .map(|i| &i.key)
        .collect();
    let people: HashMap<&str, usize> = plan
        .team
        .iter()
        .enumerate()
        .map(|(n, m)| (m.name.as_str(), n))
        .collect();

    // The repositories synced: a blocker of one that no issue file holds is a pull request.
    let synced: std::collections::HashSet<&crate::domain::RepoName> =
        plan.issues.iter().map(|i| &i.key.repo).collect();
    let synced_repo = |r: &crate::domain::RepoName| synced.contains(r);
    let mut flags: Vec<Vec<Flag>> = vec![Vec::new(); open.len()];
    let mut tasks = Vec::with_capacity(open.len());
    let calendars: Vec<Calendar> = plan
        .team
        .iter()
        .map(|m| Calendar::new(&m.calendar, as_of, days))
        .collect();
    // Whose days go on to the horizon's end, once per person rather than once per issue.
    let stays: Vec<bool> = plan
        .team
        .iter()
        .zip(&calendars)
        .map(|(m, cal)| last_day_within(m, cal, as_of).is_none())
        .collect();
    // Per repository, the unassigned issues no member may take.
    let mut nobody_takes: std::collections::BTreeMap<&crate::domain::RepoName, usize> =
        std::collections::BTreeMap::new();
    for (n, i) in open.iter().enumerate() {
        let (base, calibrated) = match i.estimate_hours {
            Some(h) => (h, false),
            None => {
                flags[n].push(Flag::ImputedEstimate);
                let h = i
                    .labels
                    .iter()
                    .find_map(|l| imputation.by_label.get(l.as_str()).copied())
                    .unwrap_or(imputation.fallback);
                (h, imputation.actual)
            }
        };
        let labels: Vec<String> = i
            .labels
            .iter()
            .filter(|l| !crate::domain::is_plan_label(l))
            .cloned()
            .collect();
        // What closed work really took is already calibrated; an estimate is not.
        let total = if calibrated {
            base
        } else {
            base * calibration.multiplier(i.assignee.as_deref(), &labels)
        };
        let remaining = if i.lifecycle == Lifecycle::InReview {
            total * IN_REVIEW_REMAINING
        } else if i.tracked_hours > 0.0 {
            (total - i.tracked_hours).max(total * STARTED_MIN_REMAINING)
        } else {
            total
        };
        let mut deps = Vec::new();
        for d in &i.depends_on {
            let outside = i.outside_blockers.iter().find(|b| &b.issue == d);
            match index.get(d) {
                Some(&j) => deps.push(j),
                None if closed.contains(d) => {}
                // Closed in a repository the config does not name, or a pull request closed or merged:
                // nothing to wait for.
                None if outside.is_some_and(|b| b.state == OpenState::Closed) => {}
                None => {
                    if !flags[n].contains(&Flag::UnknownDependency) {
                        flags[n].push(Flag::UnknownDependency);
                    }
                    warnings.push(if outside.is_some() && synced_repo(&d.repo) {
                        format!(
                            "{}: waits on pull request {d}, open: its dates assume that wait is over",
                            i.key
                        )
                    } else if outside.is_some() {
                        format!(
                            "{}: waits on {d}, open in {}, a repository commitea.yaml does not name: its \
                             dates assume that wait is over; add {} to repositories to plan it",
                            i.key, d.repo, d.repo
                        )
                    } else {
                        format!(
                            "{}: depends on {d}, which is not in the snapshot; that wait is ignored",
                            i.key
                        )
                    });
                }
            }
        }
        // Gitea lists a blocker the token may not read as a placeholder: it holds the issue up all the
        // same, for a time nobody here can know.
        if i.hidden_blockers > 0 {
            flags[n].push(Flag::HiddenDependency);
            warnings.push(format!(
                "{}: waits on {} the token may not read (Gitea shows {} as HIDDEN): its dates assume \
                 that wait is over; give the token read access to the repository {} in",
                i.key,
                crate::prose::count(i.hidden_blockers as usize, "issue", "issues"),
                if i.hidden_blockers == 1 { "it" } else { "them" },
                if i.hidden_blockers == 1 { "it is" } else { "they are" },
            ));
        }
        let assignee = i.assignee.as_deref().and_then(|a| {
            let p = people.get(a).copied();
            if p.is_none() {
                flags[n].push(Flag::AssigneeNotInTeam);
            }
            p
        });
        let eligible: Vec<usize> = plan
            .team
            .iter()
            .enumerate()
            .filter(|(_, m)| m.repositories.is_empty() || m.repositories.contains(&i.key.repo))
            .map(|(p, _)| p)
            .collect();
        // Unassigned work stays with whom the last forecast planned it for, while they may take it and
        // their days do not end in the horizon: kept with someone who leaves, it could never be done
        // (audit 89: 17 issues stayed with a member whose five weeks had been all that was left).
        if assignee.is_none() && eligible.is_empty() && !plan.team.is_empty() {
            *nobody_takes.entry(&i.key.repo).or_default() += 1;
        }
        let assignee = assignee.or_else(|| {
            plan.planned_for
                .get(&i.key)
                .and_then(|name| people.get(name.as_str()).copied())
                .filter(|p| eligible.contains(p))
                .filter(|&p| stays[p])
        });
        let ms = i.milestone.and_then(|id| plan.milestone(id));
        tasks.push(Task {
            name: i.key.to_string(),
            effort: remaining,
            assignee,
            // Nobody where no member's `repositories` names it: read as everybody, its work went to people
            // barred from it, without a word (audit 178).
            eligible: Some(eligible),
            deps,
            priority: i.priority.level(),
            hard: ms.is_some_and(|m| m.hard && m.state == OpenState::Open),
            // A closed milestone's due date is over, as its hardness is: its open issues are open work,
            // not ranked by the date of a release that went without them (audit 176).
            due: ms
                .filter(|m| m.state == OpenState::Open)
                .and_then(|m| m.due)
                .map(|d| (d - as_of).num_days().max(0) as u32),
            started: i.started,
        });
    }
    for (repo, count) in &nobody_takes {
        warnings.push(format!(
            "{} of {repo}, and no member of the team takes work there (team[].repositories): nobody is \
             planned for {}, so {} beyond the horizon; add {repo} to the repositories of who does its work \
             under `team:` in commitea.yaml, or assign {} on Gitea",
            crate::prose::count(*count, "unassigned open issue", "unassigned open issues"),
            if *count == 1 { "it" } else { "them" },
            if *count == 1 { "it stays" } else { "they stay" },
            if *count == 1 { "it" } else { "them" },
        ));
    }
    let assignees_unknown: std::collections::BTreeSet<&str> = open
        .iter()
        .filter_map(|i| i.assignee.as_deref())
        .filter(|a| !people.contains_key(a))
        .collect();
    // Said once, plainly, with the people to add — not once per person; a deleted user (Ghost) is no one
    // to add, and said as such.
    let (ghosts, names): (Vec<&str>, Vec<&str>) = assignees_unknown
        .into_iter()
        .partition(|a| crate::domain::is_placeholder_user(a));
    if !ghosts.is_empty() {
        let count = open
            .iter()
            .filter(|i| i.assignee.as_deref().is_some_and(|a| ghosts.contains(&a)))
            .count();
        warnings.push(format!(
            "{} assigned to {} (a user deleted from Gitea, or its Actions bot), so {} to the rest of the team: \
             assign {} on Gitea to who will do {}",
            crate::prose::count(count, "open issue is", "open issues are"),
            ghosts.join(", "),
            if count == 1 { "it goes" } else { "they go" },
            if count == 1 { "it" } else { "them" },
            if count == 1 { "it" } else { "them" },
        ));
    }
    if plan.team.is_empty() {
        warnings.push(format!(
            "the team in commitea.yaml is empty, so nobody can do the work and every open issue is beyond the \
             horizon: add the people who do it under `team:`{}",
            if names.is_empty() {
                String::new()
            } else {
                format!(" (open work is assigned to {})", names.join(", "))
            }
        ));
    } else if !names.is_empty() {
        warnings.push(format!(
            "{} {} open work assigned but {} not in the team in commitea.yaml, so that work goes to the rest of \
             the team: add {} under `team:`",
            names.join(", "),
            if names.len() == 1 { "has" } else { "have" },
            if names.len() == 1 { "is" } else { "are" },
            if names.len() == 1 { "them" } else { "each" },
        ));
    }
    // Open work assigned to someone with no working hour left in the horizon (they left, or start after it)
    // can never be done until it is reassigned: said, rather than left beyond the horizon without a word.
    for (p, m) in plan.team.iter().enumerate() {
        let theirs = tasks.iter().filter(|t| t.assignee == Some(p)).count();
        if theirs == 0 || calendars[p].total() > 0.0 {
            continue;
        }
        let why = match (m.last_day(), m.calendar.starts) {
            (Some((ends, why)), _) if ends < as_of => format!("their last day, {why}, was {ends}"),
            (_, Some(starts)) if starts >= as_of + Days::new(u64::from(days)) => {
                format!("they start on {starts}, past it")
            }
            _ => "their calendar (working days, time off, holidays) gives them no working hours in it"
                .to_owned(),
        };
        warnings.push(format!(
            "{} has {theirs} open issue{} assigned but no working hour in the forecast's horizon ({why}): \
             {} beyond the horizon until reassigned on Gitea",
            m.name,
            if theirs == 1 { "" } else { "s" },
            if theirs == 1 { "it stays" } else { "they stay" },
        ));
    }
    let project = Project {
        tasks,
        people: calendars,
    };
    let prep = Prepared::new(&project)?;
    for c in &prep.cycles {
        let names: Vec<&str> = c.iter().map(|&i| project.tasks[i].name.as_str()).collect();
        warnings.push(format!(
            "dependency cycle: {} depend on each other; they are left out of the forecast until the cycle is broken",
            names.join(", ")
        ));
        for &i in c {
            flags[i].push(Flag::DependencyCycle);
        }
    }
    for (i, lost) in prep.lost_deps.iter().enumerate() {
        if *lost {
            flags[i].push(Flag::WaitsOnCycle);
        }
    }
    let medians: Vec<f64> = project.tasks.iter().map(|t| t.effort).collect();
    let dists: Vec<Distribution> = medians
        .iter()
        .zip(&open)
        .map(|(&m, i)| {
            let own = i
                .assignee
                .as_deref()
                .and_then(|a| calibration.person_ratios.get(a));
            match own {
                _ if m <= 0.0 => Distribution::Fixed(0.0),
                Some(ratios) => Distribution::Resample {
                    base: m,
                    ratios: ratios.clone(),
                },
                None => Distribution::LogNormal {
                    median: m,
                    sigma: calibration.sigma,
                },
            }
        })
        .collect();

    let milestones: Vec<&crate::plan::PlannedMilestone> = plan.milestones.iter().collect();
    let groups: Vec<Vec<usize>> = milestones
        .iter()
        .map(|m| {
            open.iter()
                .enumerate()
                .filter(|(n, i)| i.milestone == Some(m.id) && !prep.excluded[*n])
                .map(|(n, _)| n)
                .collect()
        })
        .collect();
    let window = plan.abandonment_days.min(horizon_days);
    let whole = history_at(plan, plan.now);
    let fate::History {
        days: history,
        closes,
        min_days,
    } = whole;
    // Too short a history keeps the model cold; the exposures are not even counted.
    let mut fate = if history < i64::from(min_days) {
        FateModel::cold(0, window)
    } else {
        fate::fit(&fate_exposures(plan), whole, window)
    };
    // A model that is off says so and why: a silent fallback reads as a confident forecast.
    if calibration.cold_start {
        warnings.push(format!(
            "calibration is cold: {} with an estimate and a measurable working time, fewer than the {} it \
             needs; estimates are taken as given, with the prior's spread (σ {}). It warms up as closed issues \
             carry an `est/*` label and show when work began (an assignment, a move to steeping or review, a \
             linked pull request, or tracked time)",
            count(calibration.n, "closed issue", "closed issues"),
            crate::engine::calibrate::COLD_START_BELOW,
            crate::engine::calibrate::PRIOR_SIGMA
        ));
    }
    if fate.cold_start() {
        warnings.push(if fate.basis == fate::Basis::Undecided {
            format!(
                "the abandonment model is undecided: {} closed in all the history, fewer than the {} it \
                 needs to learn a closing rate; every open issue is given even odds of being closed within \
                 {}, at a steady rate, so no date is promised at 80%",
                count(closes, "issue", "issues"),
                crate::engine::fate::MIN_EVENTS,
                crate::site::text::horizon_words(window)
            )
        } else {
            // A day zero before the first issue (`--now` in the past) has no history at all, not a
            // negative one (audit 120: "covers -2310 days").
            let covered = if history > 0 {
                format!(
                    "the history covers {}, less than the {min_days} it needs",
                    count(history, "day", "days")
                )
            } else {
                format!("day zero comes before the history begins, and it needs {min_days} days of it")
            };
            format!(
                "the abandonment model is off: {covered} to learn a closing rate \
                 (forecast.abandonment_min_history_days); every open issue is assumed to be done some day"
            )
        });
    } else if fate.events < crate::engine::fate::MIN_EVENTS {
        warnings.push(format!(
            "the project has slowed or stalled: {} closed in the last {} days ({} in all), so the \
             abandonment model gives most open work a small chance of being done within {}",
            count(fate.events, "issue", "issues"),
            crate::engine::fate::RECENT_DAYS,
            closes,
            // In the site's words for the window ("1 year"; audit 174: "365 days" beside it).
            crate::site::text::horizon_words(window)
        ));
    }
    if !fate.cold_start()
        && let Some(tuning) = choose_frailty(plan, window)
    {
        fate.frailty = tuning.frailty;
        fate.recalibration = tuning.recalibration;
    }
    let fates: Vec<Fate> = open
        .iter()
        .map(|i| {
            let f = fate_features(i, plan.now);
            let (p, lead) = fate.p_done_and_lead(&f);
            Fate { p, lead }
        })
        .collect();
    Ok(Built {
        fate,
        fates,
        calibration,
        open,
        flags,
        warnings,
        project,
        prep,
        medians,
        dists,
        milestones,
        groups,
    })
}
