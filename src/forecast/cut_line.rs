//! The cut line of a hard deadline its p80 misses: which issues would have to leave the milestone.

use super::*;

/// Trials for each step of the cut-line search (the search runs the simulation a few times).
pub(super) const CUT_LINE_TRIALS: u32 = 2_000;

/// Finds the cut line of group `g` (a hard-deadline milestone due on `due_day`).
///
/// Candidates are the milestone's open issues not yet started (work in progress or in review is nearly
/// done and already paid for: a PM finishes it rather than cut it), lowest effective priority first and, within a priority,
/// latest in the scheduling order first — so an issue is never cut before the milestone work that waits
/// for it. A cut issue leaves the milestone (it loses the hard deadline's rank and due date) but stays in
/// the backlog. The number to cut is found by bisection, each step a smaller simulation with the same seed.
/// Everybody keeps the work the plan (`planned`: the person per task) gave them, so the cut line asks
/// only what leaving the milestone changes, and a forecast that keeps the plan's people answers the same.
pub(super) fn cut_line(
    project: &Project,
    planned: &[Option<u32>],
    prep: &Prepared,
    dists: &[Distribution],
    group: &[usize],
    due_day: u32,
    mc: &MonteCarlo,
) -> Option<(Vec<usize>, Option<u32>, f64, bool)> {
    let pos: HashMap<u32, usize> = prep
        .order
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k))
        .collect();
    let mut cands: Vec<usize> = group
        .iter()
        .copied()
        .filter(|&i| !project.tasks[i].started)
        .collect();
    cands.sort_by_key(|&i| {
        (
            std::cmp::Reverse(prep.effective_priority[i]),
            std::cmp::Reverse(pos.get(&(i as u32)).copied().unwrap_or(0)),
        )
    });
    let small = MonteCarlo {
        trials: CUT_LINE_TRIALS.min(mc.trials),
        ..*mc
    };
    let eval = |k: usize| -> Option<(Option<u32>, f64)> {
        let cut: std::collections::HashSet<usize> = cands[..k].iter().copied().collect();
        let mut p = project.clone();
        for (t, who) in p.tasks.iter_mut().zip(planned) {
            if t.assignee.is_none() {
                t.assignee = who.map(|w| w as usize);
            }
        }
        for &i in &cut {
            p.tasks[i].hard = false;
            p.tasks[i].due = None;
        }
        let prep = Prepared::new(&p).ok()?;
        let kept: Vec<usize> = group.iter().copied().filter(|i| !cut.contains(i)).collect();
        if kept.is_empty() {
            return Some((Some(0), 1.0));
        }
        let sim = small.run_groups(&prep, dists, &[kept]);
        Some((sim.group(0).p80, sim.group_by(0, due_day)))
    };
    let meets = |r: &(Option<u32>, f64)| r.0.is_some_and(|d| d <= due_day);
    let all = eval(cands.len())?;
    if !meets(&all) {
        return Some((cands, all.0, all.1, false));
    }
    let (mut lo, mut hi) = (0usize, cands.len());
    let mut best = all;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let r = eval(mid)?;
        if meets(&r) {
            hi = mid;
            best = r;
        } else {
            lo = mid + 1;
        }
    }
    cands.truncate(hi);
    Some((cands, best.0, best.1, true))
}
