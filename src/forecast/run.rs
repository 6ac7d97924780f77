//! The forecast itself: calibrate, schedule, simulate, and turn the engine's answers into the report.

use super::*;

/// Runs the forecast on a plan. The report records the key of its inputs ([`key`](mod@super::key)).
pub fn run(plan: &Plan, settings: &Settings) -> ForecastReport {
    run_with(plan, settings, Mode::default())
}

/// [`run`] in a [`Mode`].
pub fn run_with(plan: &Plan, settings: &Settings, mode: Mode) -> ForecastReport {
    let digest = key::PlanDigest::new(plan, settings, mode);
    finish(simulate(plan, settings, mode), &digest)
}

/// [`run_with`] for a forecast that is never reused nor committed (the forecast after a what-if's change,
/// its twins): the key of its inputs is not computed.
pub fn run_unkeyed(plan: &Plan, settings: &Settings, mode: Mode) -> ForecastReport {
    simulate(plan, settings, mode)
}

/// The forecast of `plan`: `committed` itself when it is the forecast of exactly these inputs (its
/// recorded key is the plan's), else a new one. The flag says whether it was reused.
///
/// The engine is deterministic, so a reused forecast is byte for byte the one a new run would give; the
/// Monte Carlo is skipped, which is most of the time a read of an unchanged state takes.
pub fn run_or_reuse(
    plan: &Plan,
    settings: &Settings,
    mode: Mode,
    committed: Option<&ForecastReport>,
) -> (ForecastReport, bool) {
    let digest = key::PlanDigest::new(plan, settings, mode);
    if let Some(c) = committed.filter(|c| key::matches(c, &digest, plan)) {
        tracing::info!(
            "forecast: the committed forecast is reused, its inputs are unchanged ({})",
            crate::prose::count(c.issues.len(), "open issue", "open issues")
        );
        return (c.clone(), true);
    }
    (finish(simulate(plan, settings, mode), &digest), false)
}

/// Records the key of the report's inputs: the plan's, with the people the report itself planned.
fn finish(mut report: ForecastReport, digest: &key::PlanDigest) -> ForecastReport {
    report.inputs = Some(digest.with_people(&planned_people(&report), &cut_lines(&report)));
    report.engine = Some(super::ENGINE.to_owned());
    report
}

/// Working days by which a milestone's headline p50 may trail its schedule's finish before the run says
/// why (four weeks: past the schedule's own noise).
const PACE_GAP_WORKING_DAYS: i64 = 20;

/// How many times at most the plan is made again to move unassigned work off people who leave: until
/// nothing more moves, which each pass's slipping work can undo (audit 178: after three, a two-day issue a
/// free colleague could take stayed with a leaver). A pass only bars work from a leaver, so they end.
const LEAVER_PASSES: usize = 8;

/// Whether task `n`, done by its person's last day (`last`) in under 80% of the futures it is done in at
/// all, would be left unfinished past it in the rest: after that day they have no hour, and no one else
/// takes it in a trial.
fn misses_last_day(
    sim: &crate::engine::SimulationResult,
    done_at_all: &[f64],
    n: usize,
    last: u32,
) -> bool {
    sim.task_by(n, last) < 0.8 * done_at_all.get(n).copied().unwrap_or(1.0)
}

/// The forecast itself.
fn simulate(plan: &Plan, settings: &Settings, mode: Mode) -> ForecastReport {
    let as_of = plan.as_of;
    let days = settings.horizon_days;
    let date_of = |d: f64| -> When {
        if d.is_finite() && d < f64::from(days) {
            When::Date(as_of + Days::new(d as u64))
        } else {
            When::BeyondHorizon
        }
    };
    let Built {
        calibration,
        open,
        flags,
        mut warnings,
        mut project,
        mut prep,
        medians,
        dists,
        milestones: open_ms,
        groups,
        fate,
        fates,
    } = match build(plan, days) {
        Ok(b) => b,
        Err(e) => {
            // References are built from existing indices, so this is a bug, not bad input.
            let mut warnings: Vec<String> = plan.warnings.iter().map(ToString::to_string).collect();
            warnings.push(format!("internal error preparing the schedule: {e}"));
            return ForecastReport {
                as_of,
                horizon: as_of + Days::new(u64::from(days)),
                seed: settings.seed,
                trials: settings.trials,
                calibration: CalibrationSummary::of(&Calibration::prior()),
                issues: Vec::new(),
                milestones: Vec::new(),
                people: Vec::new(),
                warnings,
                abandonment: None,
                inputs: None,
                ledger: None,
                engine: None,
            };
        }
    };
    let mut plan_sched = prep.schedule(&medians);
    // Each issue's chance of being done at all, with the work it waits on (`engine::done_at_all`).
    let done_at_all = crate::engine::montecarlo::done_at_all(&prep, &fates);
    let mc = MonteCarlo {
        trials: settings.trials,
        seed: settings.seed,
        horizon_days: days,
    };
    let team_cal = Calendar::new(&plan.team_calendar, as_of, days);
    let adaptive = mode.adaptive_trials.then(|| Adaptive {
        floor: ADAPTIVE_FLOOR,
        working_days: (0..days)
            .scan(0u32, |n, d| {
                *n += u32::from(team_cal.capacity(d) > 0.0);
                Some(*n)
            })
            .collect(),
    });
    let mut sim = mc.run_adaptive(&prep, &dists, &groups, &fates, adaptive.as_ref());
    // Unassigned work the median plan gives someone whose days end within the horizon, done by their last
    // day in under 80% of the futures it is done in at all, would end past it in the rest — where no one
    // does it, as every trial keeps the plan's people — and go beyond the horizon with its milestone
    // (audit 124: six issues planned for chen, leaving end of February, took Public API v2 from May to
    // "beyond horizon"). Such work goes to the others, and the plan and trials are made again.
    let last_day: Vec<Option<u32>> = plan
        .team
        .iter()
        .zip(&project.people)
        .map(|(m, cal)| super::input::last_day_within(m, cal, as_of))
        .collect();
    // Who has no hour in the horizon at all (a start after it): said so, not as a last day of day 0
    // (audit 160: "gus works until 2026-11-27" of someone starting in May).
    let no_hour: Vec<bool> = project.people.iter().map(|c| c.total() <= 0.0).collect();
    // Their last day in words: what stops them, or the calendar that leaves them no hour after it.
    let last_words = |p: usize| -> String {
        if no_hour[p] && plan.team[p].last_day().is_none() {
            return "none in the horizon: their calendar (a later start, time off) gives them no hour in it"
                .to_owned();
        }
        plan.team[p].last_day().map_or_else(
            || {
                last_day[p].map_or_else(String::new, |l| {
                    format!(
                        "{}, after which their calendar (time off, a later start) gives them no hour in \
                         the horizon",
                        as_of + Days::new(u64::from(l))
                    )
                })
            },
            |(d, why)| format!("{d}, {why}"),
        )
    };
    // Each pass bars the slipping work from every leaver whose last day comes before its p80 (a second
    // leaver, or one with time to spare who would be given more), and plans again; a few passes, as
    // moving work can make other work slip (audit 126: of three people leaving at once, ten issues moved
    // from one to another, beyond the horizon).
    // Per leaver: the unassigned issues moved off them, by index (a set, as the last forecast's plan and
    // a pass may both move one).
    let mut moved_off: std::collections::BTreeMap<usize, std::collections::BTreeSet<usize>> =
        std::collections::BTreeMap::new();
    // Per leaver: slipping unassigned work nobody else may take (team[].repositories).
    let mut stuck: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for _ in 0..LEAVER_PASSES {
        let slipping: Vec<(usize, usize)> = (0..open.len())
            .filter(|&n| project.tasks[n].assignee.is_none() && !prep.excluded[n])
            .filter_map(|n| {
                let p = plan_sched.person[n]? as usize;
                misses_last_day(&sim, &done_at_all, n, last_day[p]?).then_some((n, p))
            })
            .collect();
        let mut moved = false;
        stuck.clear();
        for &(n, p) in &slipping {
            let p80 = sim.task(n).p80;
            let leaves_first =
                |q: usize| last_day[q].is_some_and(|l| p80.is_none_or(|d| l < d)) || q == p;
            let task = &mut project.tasks[n];
            let others: Vec<usize> = match &task.eligible {
                None => (0..plan.team.len()).filter(|&q| !leaves_first(q)).collect(),
                Some(only) => only.iter().copied().filter(|&q| !leaves_first(q)).collect(),
            };
            if others.is_empty() {
                *stuck.entry(p).or_default() += 1;
            } else {
                task.eligible = Some(others);
                moved_off.entry(p).or_default().insert(n);
                moved = true;
            }
        }
        if !moved {
            break;
        }
        let Ok(again) = crate::engine::Prepared::new(&project) else {
            break;
        };
        prep = again;
        plan_sched = prep.schedule(&medians);
        sim = mc.run_adaptive(&prep, &dists, &groups, &fates, adaptive.as_ref());
    }
    // What the last pass left with a leaver that still misses their last day: the passes moved other work
    // onto them (audit 150: a helper for three weeks kept an issue whose p50 was beyond the horizon, and
    // the run said their work had gone to the others). Said, naming the issues.
    let mut left: std::collections::BTreeMap<usize, Vec<String>> =
        std::collections::BTreeMap::new();
    for n in (0..open.len()).filter(|&n| project.tasks[n].assignee.is_none() && !prep.excluded[n]) {
        if let Some(p) = plan_sched.person[n].map(|p| p as usize)
            && let Some(last) = last_day[p]
            && misses_last_day(&sim, &done_at_all, n, last)
            && !stuck.contains_key(&p)
        {
            left.entry(p).or_default().push(open[n].key.to_string());
        }
    }
    for (p, keys) in &left {
        let m = &plan.team[*p];
        const NAMED: usize = 5;
        warnings.push(format!(
            "{} planned for {} may not be done by their last day ({}): made again {LEAVER_PASSES} times, the \
             plan still gives {} to them; assign {} on Gitea to someone staying, or {} beyond the horizon",
            crate::prose::and_list_at_most(keys, NAMED),
            m.name,
            last_words(*p),
            if keys.len() == 1 { "it" } else { "them" },
            if keys.len() == 1 { "it" } else { "them" },
            if keys.len() == 1 { "it stays" } else { "they stay" },
        ));
    }
    // Against a last forecast, what went to the others is what it planned for the leaver and this plan
    // gives someone else, whichever step moved it: the count is the what-if's (audit 126: "6 went to the
    // others" beside seven issues moved). The passes' own moves are not news then: work this run's first
    // plan gave a leaver and a pass took back was never planned for them where a user saw it (audit 160:
    // "13 went" of 14 planned for bjorn, 7 of them still with him). Without one, the passes' moves are
    // all there is to say.
    if !plan.last_planned.is_empty() {
        moved_off.clear();
    }
    let people: std::collections::HashMap<&str, usize> = plan
        .team
        .iter()
        .enumerate()
        .map(|(p, m)| (m.name.as_str(), p))
        .collect();
    for (n, i) in open.iter().enumerate() {
        let Some(&p) = plan
            .last_planned
            .get(&i.key)
            .and_then(|name| people.get(name.as_str()))
        else {
            continue;
        };
        if project.tasks[n].assignee.is_none()
            && last_day[p].is_some()
            && plan_sched.person[n].is_some_and(|q| q as usize != p)
        {
            moved_off.entry(p).or_default().insert(n);
        }
    }
    for (p, moved) in &moved_off {
        let (m, count) = (&plan.team[*p], moved.len());
        tracing::info!(
            "{} planned for {} went to the others, as {}'s last day ({}) comes within the horizon: work \
             that would end past it in more than one future in five is not left with them",
            crate::prose::count(count, "unassigned issue", "unassigned issues"),
            m.name,
            m.name,
            last_words(*p),
        );
    }
    for (p, count) in &stuck {
        let m = &plan.team[*p];
        warnings.push(format!(
            "{} planned for {} may not be done by their last day ({}), and nobody else may take {}: \
             add someone to their repositories under `team:` in commitea.yaml (team[].repositories), \
             or {} beyond the horizon",
            crate::prose::count(*count, "unassigned issue", "unassigned issues"),
            m.name,
            last_words(*p),
            if *count == 1 { "it" } else { "them" },
            if *count == 1 { "it stays" } else { "they stay" },
        ));
    }
    if mode.adaptive_trials {
        tracing::info!(
            "adaptive trials: {} of {} ({})",
            sim.trials(),
            settings.trials,
            if sim.trials() < settings.trials {
                "every percentile stable to a working day"
            } else {
                "some percentile still moved by more than a working day: all of them ran"
            }
        );
    }

    let when = |d: Option<u32>| d.map_or(When::BeyondHorizon, |d| date_of(f64::from(d)));
    let issues: Vec<IssueForecast> = open
        .iter()
        .enumerate()
        .map(|(n, i)| {
            let excluded = prep.excluded[n];
            let pc = sim.task(n);
            let person = plan_sched.person[n].map(|p| plan.team[p as usize].name.clone());
            IssueForecast {
                issue: i.key.clone(),
                title: i.title.clone(),
                lifecycle: i.lifecycle,
                assignee: i.assignee.clone(),
                planned_assignee: person,
                priority: i.priority.level(),
                effective_priority: prep.effective_priority[n],
                milestone: i.milestone,
                depends_on: {
                    let mut deps = i.depends_on.clone();
                    deps.sort();
                    deps.dedup();
                    deps
                },
                estimate: i.estimate_text(),
                estimate_source: i.estimate_source,
                remaining_hours: round2(medians[n]),
                planned_start: if excluded {
                    When::BeyondHorizon
                } else {
                    date_of(start_day(plan_sched.start[n]))
                },
                planned_end: if excluded {
                    When::BeyondHorizon
                } else {
                    date_of(end_day(plan_sched.end[n]))
                },
                p10: if excluded {
                    When::BeyondHorizon
                } else {
                    when(pc.p10)
                },
                p50: if excluded {
                    When::BeyondHorizon
                } else {
                    when(pc.p50)
                },
                p80: if excluded {
                    When::BeyondHorizon
                } else {
                    when(pc.p80)
                },
                probability_by_due: i
                    .milestone
                    .and_then(|id| plan.milestone(id))
                    .filter(|m| m.state == crate::domain::OpenState::Open)
                    .and_then(|m| m.due)
                    .filter(|_| !excluded)
                    .map(|due| {
                        let day = (due - as_of).num_days();
                        if day < 0 {
                            0.0
                        } else {
                            round3(sim.task_by(n, day as u32))
                        }
                    }),
                // Done at all within the horizon: the fate draw and the timing together.
                probability_done: (fate.gives_probabilities() && !excluded)
                    .then(|| round3(sim.task_by(n, days.saturating_sub(1)))),
                flags: flags[n].clone(),
                cycle: prep
                    .cycles
                    .iter()
                    .find(|c| c.contains(&n))
                    .map(|c| {
                        c.iter()
                            .filter(|&&m| m != n)
                            .map(|&m| open[m].key.clone())
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect();

    // Milestones timed by the closing pace far past the schedule: said once, together, after the loop.
    let mut paced: Vec<String> = Vec::new();
    // In words, a title two repositories share comes with its repository.
    let names = plan.milestone_names();
    // The put-back simulations of the hard deadlines' cut lines, an equal share each: one milestone's cut
    // line never depends on another's.
    let put_back = super::cut_line::put_back_share(
        open_ms
            .iter()
            .filter(|m| m.hard && m.state == OpenState::Open && m.due.is_some())
            .count(),
    );
    // Each open issue's task, for the cut lines before.
    let open_index: HashMap<&IssueKey, usize> =
        open.iter().enumerate().map(|(n, i)| (&i.key, n)).collect();
    // The open issues the forecast leaves out (in a dependency cycle), for the milestones they are in.
    let left_out: Vec<usize> = (0..open.len()).filter(|&n| prep.excluded[n]).collect();
    let milestones = open_ms
        .iter()
        .enumerate()
        .map(|(g, m)| {
            let name = names.get(&m.id).map_or(m.title.as_str(), String::as_str);
            let in_ms = plan.issues.iter().filter(|i| i.milestone == Some(m.id));
            let (mut open_n, mut closed_n, mut unestimated) = (0, 0, 0);
            for i in in_ms {
                if i.state == OpenState::Open {
                    open_n += 1;
                    unestimated += usize::from(i.estimate_hours.is_none());
                } else {
                    closed_n += 1
                }
            }
            if unestimated > 0 && unestimated == open_n && m.state == OpenState::Open {
                warnings.push(format!(
                    "{}: none of its {} has an estimate: its dates rest on imputed hours (what similar closed \
                     issues took, or, until five have closed, the other issues' estimates); estimate them \
                     (est/* labels) to trust its dates",
                    name,
                    crate::prose::count(open_n, "open issue", "open issues")
                ));
            }
            // `+ 0.0`: an empty sum of floats is -0.0, which a reader would see as "−0.0 hours".
            let empty = groups[g].is_empty();
            // Open issues it has that the forecast left out (in a dependency cycle): no date can be
            // given for it until the cycle is broken, and "nothing open, done today" would be false.
            let cyclic: Vec<usize> = left_out
                .iter()
                .copied()
                .filter(|&n| open[n].milestone == Some(m.id))
                .collect();
            let remaining: f64 = groups[g]
                .iter()
                .chain(&cyclic)
                .map(|&n| medians[n])
                .sum::<f64>()
                + 0.0;
            // The headline is the work that stays while the abandonment model says which issues leave
            // (#14: the planned scope is "never" as soon as anything in it may never be done), else the
            // planned scope; P(on time), slack and whether a hard deadline is missed all read the headline.
            let staying_cone = (fate.gives_probabilities() && !empty)
                .then(|| sim.group_staying(g))
                .flatten();
            let staying = staying_cone.is_some();
            let planned = sim.group(g);
            // A closed milestone's work was done the day it closed: that is its cone, not a forecast.
            let closed = m.closed.filter(|_| m.state == OpenState::Closed);
            if let Some(day) = closed
                && open_n > 0
            {
                warnings.push(format!(
                    "{}: closed on Gitea on {day} with {} still open; they are forecast as open work, not \
                     in its cone: move them to an open milestone (set_milestone) or close them",
                    name,
                    crate::prose::count(open_n, "issue", "issues")
                ));
            }
            let (p10, p50, p80, prob) = if let Some(day) = closed {
                let done = When::Date(day);
                (done, done, done, None)
            } else if empty && !cyclic.is_empty() {
                // Its only open work is in a dependency cycle: not within the horizon, on time in no future.
                let never = When::BeyondHorizon;
                (never, never, never, m.due.map(|_| 0.0))
            } else if empty {
                // Nothing open: there is nothing to be on time with, and no slack to measure.
                let done = When::Date(as_of);
                (done, done, done, None)
            } else {
                let pc = staying_cone.unwrap_or(planned);
                let prob = m.due.map(|d| {
                    let day = (d - as_of).num_days();
                    if day < 0 {
                        0.0
                    } else {
                        let day = day as u32;
                        round3(
                            sim.group_staying_by(g, day)
                                .filter(|_| staying)
                                .unwrap_or_else(|| sim.group_by(g, day)),
                        )
                    }
                });
                (when(pc.p10), when(pc.p50), when(pc.p80), prob)
            };
            let slack = m.due.filter(|_| !empty).map(|due| match p80 {
                When::Date(d) => team_cal.slack(as_of, d, due),
                When::BeyondHorizon => {
                    -team_cal.working_days_between(as_of, due, as_of + Days::new(u64::from(days)))
                }
            });
            let late = matches!((m.due, p80), (Some(d), When::Date(p)) if p > d)
                || matches!((m.due, p80), (Some(_), When::BeyondHorizon));
            // Offered where the headline misses the deadline at p80, or meets it in fewer than 80% of the
            // futures (a p80 on the due day may be met a little less often): what a cut must reach.
            let short = late || prob.is_some_and(|p| p < 0.8);
            let cut_line = if !mode.skip_cut_lines && m.hard && m.state == OpenState::Open && short && !groups[g].is_empty() {
                // A due date already past is met by no cut: the date has to move, which the headline says.
                m.due.filter(|d| *d >= as_of).and_then(|d| {
                    let due_day = (d - as_of).num_days().max(0) as u32;
                    // The cut line asks the schedule: the work kept in a hard-deadline milestone is
                    // committed, so what the abandonment model expects to leave is not taken out of it,
                    // and none is given where the schedule meets the deadline with nothing cut (the
                    // headline is late for how long work waits here, which cutting scope does not change).
                    let before: std::collections::HashSet<usize> = plan
                        .cut_before
                        .get(&m.id)
                        .into_iter()
                        .flatten()
                        .filter_map(|k| open_index.get(k).copied())
                        .collect();
                    cut_line(&project, &plan_sched, &prep, &dists, &groups[g], due_day, &mc, put_back, &before).filter(|f| !f.issues.is_empty()).map(|f| CutLine {
                        hours: round2(f.issues.iter().map(|&n| medians[n]).sum()),
                        issues: f.issues.iter().map(|&n| open[n].key.clone()).collect(),
                        p80: when(f.p80),
                        probability_on_time: round3(f.on_time),
                        meets_deadline: f.meets,
                        untrimmed: !f.trimmed,
                        empties_milestone: f.meets && f.issues.len() >= groups[g].len(),
                    })
                })
            } else {
                None
            };
            if !cyclic.is_empty() && m.state == OpenState::Open {
                let keys: Vec<String> = cyclic.iter().map(|&n| open[n].key.to_string()).collect();
                warnings.push(format!(
                    "{}: {} {} in a dependency cycle, so the forecast leaves {} out and {}; break the cycle \
                     (a remove_dep, or on Gitea) to date {}",
                    name,
                    crate::prose::and_list(&keys),
                    if keys.len() == 1 { "is" } else { "are" },
                    if keys.len() == 1 { "it" } else { "them" },
                    if empty {
                        "gives the milestone no date"
                    } else {
                        "its dates leave that work out"
                    },
                    if keys.len() == 1 { "it" } else { "them" },
                ));
            }
            if empty && cyclic.is_empty() && m.state == OpenState::Open {
                // A directive that took its work out is the likely reason, and what to undo.
                let scoped_out = m
                    .provenance
                    .iter()
                    .find(|(field, _)| field == "scope")
                    .map(|(_, id)| format!(" ({id} took its issues out of it)"))
                    .unwrap_or_default();
                warnings.push(format!(
                    "{}: the milestone is open but has no open issues{}{scoped_out}; close it, or add the work it \
                     still needs",
                    name,
                    m.due
                        .filter(|d| *d < as_of)
                        .map(|d| format!(" and its due date {d} has passed"))
                        .unwrap_or_default()
                ));
            }
            // The work that stays is timed by the history's closing rate as well as by the schedule; where
            // that puts it far past the schedule's own finish, a PM who sees a late date next to an idle
            // team is owed the reason (the first forecast of a real history often meets this).
            if staying && m.state == OpenState::Open {
                let scheduled = groups[g]
                    .iter()
                    .filter(|&&n| !prep.excluded[n])
                    .map(|&n| plan_sched.end[n])
                    .fold(0.0f64, f64::max);
                if let When::Date(finish) = date_of(end_day(scheduled)) {
                    let gap = match p50 {
                        When::Date(d) => team_cal.working_days_between(as_of, finish, d),
                        When::BeyondHorizon => i64::MAX,
                    };
                    if gap > PACE_GAP_WORKING_DAYS {
                        paced.push(format!(
                            "{} (p50 {}, {} the schedule's finish, {finish})",
                            name,
                            match p50 {
                                When::Date(d) => d.to_string(),
                                When::BeyondHorizon => "beyond the horizon".to_owned(),
                            },
                            if gap == i64::MAX {
                                "far past".to_owned()
                            } else {
                                format!("{gap} working days after")
                            },
                        ));
                    }
                }
            }
            if let Some(c) = &cut_line {
                warnings.push(if c.empties_milestone {
                    // Taking out every open issue "meets" the date by emptying the milestone: no cut.
                    format!(
                        "{}: the hard deadline {} is not met at p80, and no part of its work meets it: only \
                         emptying the milestone would ({} open, about {:.0} h); move the date, or decide what \
                         must ship and take the rest out",
                        name,
                        m.due.map(|d| d.to_string()).unwrap_or_default(),
                        open_n,
                        c.hours
                    )
                } else if c.meets_deadline {
                    format!(
                        "{}: the hard deadline {} is not met at p80; taking out {} (about {:.0} h) would meet it{}{}",
                        name,
                        m.due.map(|d| d.to_string()).unwrap_or_default(),
                        crate::prose::count(c.issues.len(), "issue", "issues"),
                        c.hours,
                        // The cut asks the schedule, the headline the work that stays: say which.
                        if staying {
                            format!(
                                " with the work kept committed and done ({} of the futures; the headline's {} \
                                 counts the issues expected to leave as gone)",
                                crate::prose::percent(c.probability_on_time),
                                crate::prose::percent(prob.unwrap_or(0.0))
                            )
                        } else {
                            String::new()
                        },
                        if c.untrimmed {
                            " (so many that the date is what has to move; the list is not trimmed to the fewest)"
                        } else {
                            ""
                        }
                    )
                } else {
                    format!(
                        "{}: the hard deadline {} cannot be met even with every issue that can be cut taken out \
                         (done by it in {} of the futures; a cut must reach 80%)",
                        name,
                        m.due.map(|d| d.to_string()).unwrap_or_default(),
                        crate::prose::percent(c.probability_on_time)
                    )
                });
            } else if let Some(due) = m.due.filter(|d| {
                m.hard && m.state == OpenState::Open && short && !groups[g].is_empty() && *d >= as_of
            }) {
                // The schedule alone meets the date, so no cut is offered (taking scope out would not
                // help): the headline misses it for how long work here really takes. Still a hard
                // deadline at risk, which the PM is owed in the same words.
                // The history's pace is counted from today whenever the work starts (audit 166: "start
                // its work sooner" of work the schedule starts today); taking work out still raises the
                // chance, if not to 80% by the schedule's cut (audit 170: "not for its scope").
                warnings.push(format!(
                    "{}: the hard deadline {due} is not met at p80 ({}, on time in {} of the futures), \
                     though the schedule meets it: the work is late for how long such work really takes \
                     here, which an earlier start does not change (that pace counts from today), so the \
                     schedule offers no cut line; move the date{}, or take work out and read its chance \
                     in the consequence",
                    name,
                    match p80 {
                        When::Date(d) => format!("p80 {d}"),
                        When::BeyondHorizon => "p80 beyond the horizon".to_owned(),
                    },
                    crate::prose::percent(prob.unwrap_or(0.0)),
                    match p80 {
                        When::Date(d) => format!(" (to {d} or later for 80%)"),
                        When::BeyondHorizon => String::new(),
                    }
                ));
            } else if let Some(due) = m.due.filter(|d| {
                m.hard && m.state == OpenState::Open && late && !groups[g].is_empty() && *d < as_of
            }) {
                // Passed: no cut line, since no scope taken out meets a day gone by.
                warnings.push(format!(
                    "{}: the hard deadline {due} has passed with {} still open (about {:.0} h); no cut meets \
                     a day gone by: move the date",
                    name,
                    crate::prose::count(open_n, "issue", "issues"),
                    remaining
                ));
            }
            let planned = (staying && closed.is_none()).then(|| Range {
                p10: when(planned.p10),
                p50: when(planned.p50),
                p80: when(planned.p80),
            });
            let expected_leaving = (fate.gives_probabilities() && m.state == OpenState::Open)
                .then(|| round2(groups[g].iter().map(|&n| 1.0 - done_at_all[n]).sum()));
            let probability_done = (fate.gives_probabilities() && !groups[g].is_empty() && closed.is_none())
                .then(|| round3(sim.group_by(g, days.saturating_sub(1))));
            // The headline's own chance within the horizon, beside the planned scope's (the fan chart's
            // last point when its p80 is beyond the horizon).
            let staying_done = (staying && closed.is_none())
                .then(|| sim.group_staying_by(g, days.saturating_sub(1)))
                .flatten()
                .map(round3);
            MilestoneForecast {
                left_out: if m.state == OpenState::Open {
                    cyclic.iter().map(|&n| open[n].key.clone()).collect()
                } else {
                    Vec::new()
                },
                planned,
                staying_done,
                earlier_staying: None,
                expected_leaving,
                probability_done,
                cut_line,
                closed,
                id: m.id,
                repo: m.repo.to_string(),
                title: m.title.clone(),
                state: m.state,
                due: m.due,
                hard: m.hard,
                open_issues: open_n,
                closed_issues: closed_n,
                remaining_hours: round2(remaining),
                unestimated_issues: unestimated,
                p10,
                p50,
                p80,
                probability_on_time: if m.state == OpenState::Closed {
                    None
                } else {
                    prob
                },
                slack_days: if m.state == OpenState::Closed {
                    None
                } else {
                    slack
                },
            }
        })
        .collect();
    if !paced.is_empty() {
        warnings.push(format!(
            "{} {} forecast past the schedule's finish, which the team's hours allow: the work that stays is \
             timed by how fast this project closed issues in the last year ({} while {} open), slower \
             than the schedule. Closes made faster now move the dates earlier as they enter that rate \
             (the newest 90 days weigh more), not at once",
            crate::prose::and_list(&paced),
            if paced.len() == 1 { "is" } else { "are" },
            crate::prose::count(fate.events, "closed", "closed"),
            if open.len() == 1 {
                "1 is".to_owned()
            } else {
                format!("{} are", open.len())
            }
        ));
    }

    let mut queues: Vec<Vec<usize>> = vec![Vec::new(); plan.team.len()];
    for &i in &prep.order {
        if let Some(p) = plan_sched.person[i as usize] {
            queues[p as usize].push(i as usize);
        }
    }
    // Someone whose days end (team[].ends, a capacity directive of no hours from a day on, or the periods
    // of someone not in the team) with work left on their queue: that work is beyond the horizon until it
    // is reassigned. Said, as for someone with no hour at all (audit 89: a member taken out of
    // commitea.yaml came back for a directive's five weeks and two milestones went beyond the horizon
    // without a word).
    for (p, m) in plan.team.iter().enumerate() {
        // Someone with no hour in the horizon is said once, by the forecast's input, with why.
        if no_hour[p] {
            continue;
        }
        let Some((ends, whose)) = m
            .last_day()
            .or_else(|| {
                last_day[p].map(|l| {
                    (
                        as_of + Days::new(u64::from(l)),
                        "their calendar (time off, a later start) gives them no hour in the horizon after \
                         it"
                            .to_owned(),
                    )
                })
            })
            .filter(|(e, _)| *e >= as_of)
        else {
            continue;
        };
        // The work Gitea assigns them (what is only planned for them was moved above, or is said as
        // having no one else to go to), counted as the trials see it: work the median plan ends in time
        // may still miss the day in more than one future in five, and its p80 is then beyond the horizon
        // too (audit 124: no word of five such issues holding Public API v2 beyond the horizon).
        let assigned: Vec<usize> = queues[p]
            .iter()
            .copied()
            .filter(|&i| open[i].assignee.is_some())
            .collect();
        let left = assigned
            .iter()
            .filter(|&&i| {
                date_of(end_day(plan_sched.end[i])) == When::BeyondHorizon
                    || last_day[p].is_some_and(|last| misses_last_day(&sim, &done_at_all, i, last))
            })
            .count();
        if left == 0 {
            continue;
        }
        warnings.push(format!(
            "{} works until {ends} ({whose}) and may not finish {left} of the {} Gitea assigns them by \
             then (in more than one future in five): {} beyond the horizon until reassigned on Gitea",
            m.name,
            crate::prose::count(assigned.len(), "issue", "issues"),
            if left == 1 { "it stays" } else { "they stay" },
        ));
    }
    // One person holding most of the work planned while others have none: the dates are that person's
    // chain, with the narrow spread of one chain (audit 101: 160 of 160 issues on amara, eleven working
    // days from p50 to p80 after thirteen months of work, and no word of it).
    let total: usize = queues.iter().map(Vec::len).sum();
    let idle: Vec<String> = plan
        .team
        .iter()
        .zip(&queues)
        .filter(|(m, q)| q.is_empty() && m.hours_per_week > 0.0)
        .map(|(m, _)| m.name.clone())
        .collect();
    if let Some((m, q)) = plan.team.iter().zip(&queues).max_by_key(|(_, q)| q.len())
        && total >= 20
        && q.len() * 3 >= total * 2
        && !idle.is_empty()
    {
        warnings.push(format!(
            "{} holds {} of the {total} open issues planned while {} {} none: the dates are one person's \
             chain, and one chain's spread is narrow; assign some of it to the others on Gitea, or take \
             the assignee off for the plan to share it",
            m.name,
            q.len(),
            crate::prose::and_list(&idle),
            if idle.len() == 1 { "has" } else { "have" },
        ));
    }
    let people = plan
        .team
        .iter()
        .zip(queues)
        .map(|(m, q)| {
            let busy = q.iter().map(|&i| plan_sched.end[i]).fold(0.0f64, f64::max);
            PersonPlan {
                name: m.name.clone(),
                hours_per_week: round2(m.hours_per_week),
                planned_hours: round2(q.iter().map(|&i| medians[i]).sum()),
                queue: q.iter().map(|&i| open[i].key.clone()).collect(),
                busy_until: if q.is_empty() {
                    When::Date(as_of)
                } else {
                    date_of(end_day(busy))
                },
                last_day: m
                    .calendar
                    .last_working_day()
                    .filter(|d| *d < as_of + Days::new(u64::from(days))),
            }
        })
        .collect();

    ForecastReport {
        as_of,
        horizon: as_of + Days::new(u64::from(days)),
        seed: settings.seed,
        trials: sim.trials(),
        calibration: CalibrationSummary::of(&calibration),
        issues,
        milestones,
        people,
        warnings,
        abandonment: fate.gives_probabilities().then(|| AbandonmentSummary {
            events: fate.events,
            cold_start: fate.cold_start(),
            window_days: fate.window_days,
            team_rate: round6(fate.team_rate),
            open: fates.len(),
            expected_done: round2(done_at_all.iter().sum()),
            strata: fate
                .strata
                .iter()
                .map(|g| FateGroupSummary {
                    key: g.key.clone(),
                    issues: g.issues,
                    events: g.events,
                    days: round2(g.days),
                    rate: round6(g.value),
                })
                .collect(),
        }),
        inputs: None,
        ledger: None,
        engine: None,
    }
}
