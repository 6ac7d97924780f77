//! The cut line of a hard deadline its p80 misses: which issues would have to leave the milestone.

use std::collections::HashSet;

use super::*;

/// Trials for each step of the cut-line search (the search runs the simulation a few times).
pub(super) const CUT_LINE_TRIALS: u32 = 2_000;

/// The longest cut the search tries to shorten by putting issues back, one simulation each: a PM weighs a
/// short cut line issue by issue, while a longer one says "move the date" whatever it lists (on the
/// generator's 5,000-issue project a 341-issue cut took 40 more simulations, +0.25 s, to drop 34).
const MAX_PUT_BACK: usize = 40;

/// Finds the cut line of group `g` (a hard-deadline milestone due on `due_day`).
///
/// Candidates are the milestone's open issues not yet started (work in progress or in review is nearly
/// done and already paid for: a PM finishes it rather than cut it), lowest effective priority first and,
/// within a priority, latest to finish in the median plan (`plan`) first: an issue that ends early does
/// not hold the milestone up, and a dependent ends after what it waits for, so an issue is never cut
/// before the milestone work that waits for it. A cut issue leaves the milestone (it loses the hard
/// deadline's rank and due date) but stays in the backlog. The shortest run of candidates that meets the
/// deadline is found by bisection, each step a smaller simulation with the same seed; then each issue of
/// it is put back, the most valuable first, where the deadline is still met without cutting it (and what
/// it waits for in the milestone is kept): priorities say what to cut first, not that everything below
/// a priority must go. A cut longer than [`MAX_PUT_BACK`] is left as found. Everybody keeps the work the plan gave them, so the cut line asks only what
/// leaving the milestone changes, and a forecast that keeps the plan's people answers the same.
pub(super) fn cut_line(
    project: &Project,
    plan: &Schedule,
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
    let end = |i: usize| plan.end.get(i).copied().unwrap_or(f64::INFINITY);
    cands.sort_by(|&a, &b| {
        prep.effective_priority[b]
            .cmp(&prep.effective_priority[a])
            .then(end(b).total_cmp(&end(a)))
            .then(pos.get(&(b as u32)).cmp(&pos.get(&(a as u32))))
    });
    let small = MonteCarlo {
        trials: CUT_LINE_TRIALS.min(mc.trials),
        ..*mc
    };
    let eval = |cut: &HashSet<usize>| -> Option<(Option<u32>, f64)> {
        let mut p = project.clone();
        for (t, who) in p.tasks.iter_mut().zip(&plan.person) {
            if t.assignee.is_none() {
                t.assignee = who.map(|w| w as usize);
            }
        }
        for &i in cut {
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
    let prefix = |k: usize| cands[..k].iter().copied().collect::<HashSet<usize>>();
    let meets = |r: &(Option<u32>, f64)| r.0.is_some_and(|d| d <= due_day);
    let all = eval(&prefix(cands.len()))?;
    if !meets(&all) {
        return Some((cands, all.0, all.1, false));
    }
    let (mut lo, mut hi) = (0usize, cands.len());
    let mut best = all;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let r = eval(&prefix(mid))?;
        if meets(&r) {
            hi = mid;
            best = r;
        } else {
            lo = mid + 1;
        }
    }
    let mut cut = prefix(hi);
    let in_group: HashSet<usize> = group.iter().copied().collect();
    let put_back: &[usize] = if hi <= MAX_PUT_BACK {
        &cands[..hi]
    } else {
        &[]
    };
    for &i in put_back.iter().rev() {
        // Kept, it would wait on a blocker the cut takes out of the milestone: not put back.
        let waits_on_cut = prep
            .deps(i)
            .iter()
            .any(|&d| in_group.contains(&(d as usize)) && cut.contains(&(d as usize)));
        if waits_on_cut {
            continue;
        }
        cut.remove(&i);
        match eval(&cut) {
            Some(r) if meets(&r) => best = r,
            _ => {
                cut.insert(i);
            }
        }
    }
    let issues: Vec<usize> = cands[..hi]
        .iter()
        .copied()
        .filter(|i| cut.contains(i))
        .collect();
    Some((issues, best.0, best.1, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str, effort: f64, who: usize, priority: u8, deps: Vec<usize>) -> Task {
        Task {
            name: name.into(),
            effort,
            assignee: Some(who),
            eligible: vec![],
            deps,
            priority,
            hard: true,
            due: Some(5),
            started: false,
        }
    }

    #[test]
    fn the_cut_line_takes_out_what_holds_the_date_and_puts_back_what_does_not() {
        // A hard milestone due on day 5. `a` (the lowest priority) and `b` end on day 1; `c` takes ten
        // days, and `d` waits for it. Priority says cut `a` first, but `a` holds nothing up: the cut is
        // `d` and `c` (`d` goes with what it waits on), not `a` as well.
        let project = Project {
            tasks: vec![
                task("a", 6.0, 0, 3, vec![]),
                task("b", 6.0, 1, 2, vec![]),
                task("c", 60.0, 1, 2, vec![]),
                task("d", 6.0, 0, 2, vec![2]),
            ],
            people: vec![Calendar::from_capacity(vec![6.0; 400]); 2],
        };
        let prep = Prepared::new(&project).unwrap();
        let efforts: Vec<f64> = project.tasks.iter().map(|t| t.effort).collect();
        let plan = prep.schedule(&efforts);
        let dists: Vec<Distribution> = efforts.iter().map(|&e| Distribution::Fixed(e)).collect();
        let mc = MonteCarlo {
            trials: 500,
            seed: 1,
            horizon_days: 365,
        };
        let (cut, p80, on_time, meets) =
            cut_line(&project, &plan, &prep, &dists, &[0, 1, 2, 3], 5, &mc).unwrap();
        assert_eq!(cut, [3, 2]);
        assert!(meets);
        assert!(p80.is_some_and(|d| d <= 5), "{p80:?}");
        assert!((on_time - 1.0).abs() < 1e-9, "{on_time}");
    }
}
