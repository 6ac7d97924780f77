//! The TaskJuggler 3 export of the median plan (`commitea export tjp`), built on the engine's `tjp`.

use super::*;

/// The deterministic (median) plan as a TaskJuggler 3 project: every open issue with its remaining median
/// effort, the person the plan gives it to, its dependencies, and a priority that follows our order.
/// Issues in a dependency cycle are left out, as in the forecast. `report` names the CSV report it asks for.
pub fn export_tjp(
    plan: &Plan,
    horizon_days: u32,
    title: &str,
    report: &str,
) -> Result<String, crate::engine::ScheduleError> {
    use crate::engine::tjp::{TjpPerson, TjpTask, export};
    let built = build(plan, horizon_days)?;
    let sched = built.prep.schedule(&built.medians);
    let rank: HashMap<u32, usize> = built
        .prep
        .order
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k))
        .collect();
    let kept: Vec<usize> = (0..built.open.len())
        .filter(|&i| !built.prep.excluded[i])
        .collect();
    let new_index: HashMap<usize, usize> = kept.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let tasks: Vec<TjpTask> = kept
        .iter()
        .map(|&i| TjpTask {
            name: built.open[i].key.to_string(),
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
    let people: Vec<TjpPerson<'_>> = plan
        .team
        .iter()
        .map(|m| TjpPerson {
            name: &m.name,
            spec: &m.calendar,
        })
        .collect();
    Ok(export(
        title,
        plan.as_of,
        horizon_days,
        &people,
        &tasks,
        report,
    ))
}
