//! The TaskJuggler 3 export of the median plan (`commitea export tjp`), built on the engine's `tjp`.

use super::*;

/// The deterministic (median) plan as a TaskJuggler 3 project: every open issue with its remaining median
/// effort, the person the plan gives it to, its dependencies, and a priority that follows our order; and
/// every milestone with open issues as a TaskJuggler milestone waiting for them, its due date in its note.
/// Issues in a dependency cycle are left out, as in the forecast, and said (as every warning the forecast
/// would give). The project runs to the horizon, or past it to a month after the plan's last finish, so
/// that `tj3` can place work the median plan ends beyond the horizon; an issue no one can do (no member
/// may take it, or its person has no working hour left for it) is left out with the work waiting on it,
/// and said, as `tj3` cannot place it. `report` names the CSV report it asks for.
pub fn export_tjp(
    plan: &Plan,
    horizon_days: u32,
    title: &str,
    report: &str,
) -> Result<String, crate::engine::ScheduleError> {
    use crate::engine::tjp::{TjpMilestone, TjpPerson, TjpTask, export};
    let built = build(plan, horizon_days)?;
    for w in &built.warnings {
        tracing::warn!("{w}");
    }
    let sched = built.prep.schedule(&built.medians);
    let rank: HashMap<u32, usize> = built
        .prep
        .order
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k))
        .collect();
    // Work no one can do within the plan — no member may take it (team[].repositories), or its person
    // has no working hour left for it (starts after the horizon, or leaves first) — and the work that
    // waits on it are left out, and said: written as effort with no allocation, or past a last day, tj3
    // refused the whole project and wrote no report (audit 180); run to 2038, a year it does not read
    // (audit 90).
    let mut last_day = 0.0f64;
    let mut nobody: Vec<String> = Vec::new();
    let mut no_hours: Vec<String> = Vec::new();
    let mut stuck = vec![false; built.open.len()];
    let mut waiting = 0usize;
    for &i in &built.prep.order {
        let i = i as usize;
        if built.prep.excluded[i] {
            continue;
        }
        let end = end_day(sched.end[i]);
        let last_day_of_person = sched.person[i]
            .and_then(|p| plan.team.get(p as usize)?.calendar.last_working_day())
            .map(|e| (e - plan.as_of).num_days() as f64);
        let waits_on_stuck = built.prep.deps(i).iter().any(|&d| stuck[d as usize]);
        if end.is_finite() && last_day_of_person.is_none_or(|l| end <= l) && !waits_on_stuck {
            last_day = last_day.max(end);
        } else {
            stuck[i] = true;
            let key = built.open[i].key.to_string();
            if waits_on_stuck {
                waiting += 1;
            } else if sched.person[i].is_none() {
                nobody.push(key);
            } else {
                no_hours.push(key);
            }
        }
    }
    let mut causes = Vec::new();
    if !nobody.is_empty() {
        nobody.sort();
        causes.push(format!(
            "{} (no member of the team may take {}: team[].repositories)",
            crate::prose::and_list_at_most(&nobody, 5),
            if nobody.len() == 1 { "it" } else { "them" }
        ));
    }
    if !no_hours.is_empty() {
        no_hours.sort();
        causes.push(format!(
            "{} (the person the plan gives {} has no working hour left for it: they start after the \
             horizon, or leave first)",
            crate::prose::and_list_at_most(&no_hours, 5),
            if no_hours.len() == 1 { "it" } else { "them" }
        ));
    }
    if !causes.is_empty() {
        tracing::warn!(
            "left out of the export, as tj3 cannot place work no one can do: {}{}",
            causes.join("; "),
            if waiting > 0 {
                format!(
                    "; and {} waiting on {}",
                    crate::prose::count(waiting, "issue", "issues"),
                    if nobody.len() + no_hours.len() == 1 {
                        "it"
                    } else {
                        "them"
                    }
                )
            } else {
                String::new()
            }
        );
    }
    let kept: Vec<usize> = (0..built.open.len())
        .filter(|&i| !built.prep.excluded[i] && !stuck[i])
        .collect();
    let new_index: HashMap<usize, usize> = kept.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let tasks: Vec<TjpTask> = kept
        .iter()
        .map(|&i| TjpTask {
            name: format!("{} {}", built.open[i].key, built.open[i].title),
            effort: built.medians[i],
            person: sched.person[i].map(|p| p as usize),
            deps: built
                .prep
                .deps(i)
                .iter()
                .filter_map(|&d| new_index.get(&(d as usize)).copied())
                .collect(),
            rank: rank.get(&(i as u32)).copied().unwrap_or(usize::MAX / 2),
        })
        .collect();
    // Each open milestone waits for its open issues, so TaskJuggler's reports date it; its due date goes
    // with it. A closed one is left out: the forecast times its open issues as work, not as its cone.
    let milestones: Vec<TjpMilestone> = built
        .milestones
        .iter()
        .zip(&built.groups)
        .filter(|(m, _)| m.state == crate::domain::OpenState::Open)
        .map(|(m, group)| TjpMilestone {
            name: format!("{}: {}", m.repo, m.title),
            tasks: group
                .iter()
                .filter_map(|i| new_index.get(i).copied())
                .collect(),
            note: m.due.map(|due| {
                if m.hard {
                    format!("due {due}, a hard deadline")
                } else {
                    format!("due {due}")
                }
            }),
        })
        .collect();
    let people: Vec<TjpPerson<'_>> = plan
        .team
        .iter()
        .map(|m| TjpPerson {
            name: &m.name,
            spec: &m.calendar,
        })
        .collect();
    // And within the years tj3 reads (up to 2035).
    let tj3_last = chrono::NaiveDate::from_ymd_opt(2035, 12, 31).unwrap_or(plan.as_of);
    let days = horizon_days
        .max((last_day as u32).saturating_add(31))
        .min(u32::try_from((tj3_last - plan.as_of).num_days()).unwrap_or(0));
    Ok(export(
        title,
        plan.as_of,
        days,
        &people,
        &tasks,
        &milestones,
        report,
    ))
}
