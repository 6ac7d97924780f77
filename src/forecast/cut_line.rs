//! The cut line of a hard deadline its p80 misses: which issues would have to leave the milestone.

use std::collections::HashSet;

use super::*;

/// Trials for each step of the cut-line search (the search runs the simulation a few times).
pub(super) const CUT_LINE_TRIALS: u32 = 2_000;

/// How many simulations a forecast spends putting cut issues back, over all its hard deadlines: each is a
/// 2,000-trial run of the work up to the milestone (about 6 ms at 5,000 issues, 0.25 s at 20,000), and a
/// project of many late hard deadlines would otherwise pay it for each. Each hard deadline gets an equal
/// share ([`put_back_share`]), so one milestone's cut line never depends on another's.
pub(super) const MAX_PUT_BACK: usize = 40;

/// The put-back simulations each hard deadline gets at least, however many there are.
const MIN_PUT_BACK: usize = 8;

/// Each of `hard` hard deadlines' share of [`MAX_PUT_BACK`].
pub(super) fn put_back_share(hard: usize) -> usize {
    (MAX_PUT_BACK / hard.max(1)).max(MIN_PUT_BACK)
}

/// The share of futures in which a cut meets its deadline. A p80 on the due day is not enough: the day
/// reported for p80 is the one nearest to 80%, which may be met in a little less (a cut trimmed to that
/// edge missed by a day when forecast with more trials, audit 56).
const MEETS: f64 = 0.8;

/// Finds the cut line of group `g` (a hard-deadline milestone due on `due_day`), trying to put back each
/// issue of a cut of at most `put_back` issues (one simulation each); a longer cut is listed as the
/// bisection found it (`trimmed` false). `before` is the cut the last committed forecast gave it.
///
/// Candidates are the milestone's open issues not yet started (work in progress or in review is nearly
/// done and already paid for: a PM finishes it rather than cut it): first those of the cut before, so
/// that a cut that still meets the deadline is kept — trimmed where less is needed, grown where more is
/// — rather than another drawn afresh from an order the median plan reshuffles every run (audit 108: a
/// close in the milestone turned a cut of 10 issues into one of 13 while the 10 still met it); then,
/// and within each of the two, lowest effective priority first and,
/// within a priority, latest to finish in the median plan (`plan`) first: an issue that ends early does
/// not hold the milestone up, and a dependent ends after what it waits for, so an issue is never cut
/// before the milestone work that waits for it. A cut issue leaves the milestone (it loses the hard
/// deadline's rank and due date) but stays in the backlog. A cut meets the deadline when the milestone is
/// done by it in [`MEETS`] of the futures. The shortest run of candidates that does is found by
/// bisection, each step a smaller simulation with the same seed; then each issue of it is put back, the
/// most valuable first, where the deadline is still met without cutting it and nothing it waits on
/// (directly or through other work) stays cut: priorities say what to cut first, not that everything
/// below a priority must go. Everybody keeps the work the plan gave them, so the cut line asks only what
/// leaving the milestone changes, and a forecast that keeps the plan's people answers the same.
#[allow(clippy::too_many_arguments)]
pub(super) fn cut_line(
    project: &Project,
    plan: &Schedule,
    prep: &Prepared,
    dists: &[Distribution],
    group: &[usize],
    due_day: u32,
    mc: &MonteCarlo,
    put_back: usize,
    before: &HashSet<usize>,
) -> Option<CutFound> {
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
    // Of the cut before, only what no other candidate waits on (directly or through other work): cut
    // first, it would leave the milestone with work that waits on it.
    let mut needed: HashSet<u32> = HashSet::new();
    let mut todo: Vec<u32> = cands
        .iter()
        .filter(|i| !before.contains(i))
        .flat_map(|&i| prep.deps(i).iter().copied())
        .collect();
    while let Some(d) = todo.pop() {
        if needed.insert(d) {
            todo.extend_from_slice(prep.deps(d as usize));
        }
    }
    let before: HashSet<usize> = before
        .iter()
        .copied()
        .filter(|&i| !needed.contains(&(i as u32)))
        .collect();
    let end = |i: usize| plan.end.get(i).copied().unwrap_or(f64::INFINITY);
    // Lowest priority first, and within a priority the latest to end: the order a cut is listed in.
    let value = |a: usize, b: usize| {
        prep.effective_priority[b]
            .cmp(&prep.effective_priority[a])
            .then(end(b).total_cmp(&end(a)))
            .then(pos.get(&(b as u32)).cmp(&pos.get(&(a as u32))))
    };
    cands.sort_by(|&a, &b| {
        before
            .contains(&b)
            .cmp(&before.contains(&a))
            .then(value(a, b))
    });
    let small = MonteCarlo {
        trials: CUT_LINE_TRIALS.min(mc.trials),
        ..*mc
    };
    // Everybody keeps the work the plan gave them, given once for every evaluation.
    let planned = with_planned_people(project, plan);
    let eval = |cut: &HashSet<usize>| evaluate(&planned, dists, group, cut, due_day, &small);
    let prefix = |k: usize| cands[..k].iter().copied().collect::<HashSet<usize>>();
    let meets = |r: &(Option<u32>, f64)| r.1 >= MEETS;
    let all = eval(&prefix(cands.len()))?;
    if !meets(&all) {
        let mut issues = cands.clone();
        issues.sort_by(|&a, &b| value(a, b));
        return Some(CutFound {
            issues,
            p80: all.0,
            on_time: all.1,
            meets: false,
            trimmed: true,
        });
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
    // A cut longer than the share is left whole: trimming a few of its hundreds of issues tells a PM
    // nothing the first sentence does not ("move the date"), and cost 0.35 s at 5,000 issues.
    let trimmed = hi <= put_back;
    let tried: &[usize] = if trimmed { &cands[..hi] } else { &[] };
    for &i in tried.iter().rev() {
        // Kept, it would wait on work the cut takes out of the milestone: not put back.
        if waits_on(prep, i, &cut) {
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
    let mut issues: Vec<usize> = cands[..hi]
        .iter()
        .copied()
        .filter(|i| cut.contains(i))
        .collect();
    // Listed lowest priority first, whichever came from the cut before.
    issues.sort_by(|&a, &b| value(a, b));
    Some(CutFound {
        issues,
        p80: best.0,
        on_time: best.1,
        meets: true,
        trimmed,
    })
}

/// What [`cut_line`] found.
#[derive(Debug)]
pub(super) struct CutFound {
    /// The issues to take out, in candidate order.
    pub issues: Vec<usize>,
    /// The milestone's p80 without them.
    pub p80: Option<u32>,
    /// Its share of futures done by the due day without them.
    pub on_time: f64,
    /// Whether that meets the deadline (else every candidate is listed, and it still does not).
    pub meets: bool,
    /// Whether every issue of the cut was tried for putting back.
    pub trimmed: bool,
}

/// `project` with every unassigned task given to the person the plan (`plan`) gave it.
fn with_planned_people(project: &Project, plan: &Schedule) -> Project {
    let mut p = project.clone();
    for (t, who) in p.tasks.iter_mut().zip(&plan.person) {
        if t.assignee.is_none() {
            t.assignee = who.map(|w| w as usize);
        }
    }
    p
}

/// The milestone `group`'s p80 and its share of futures done by `due_day` with the issues of `cut` taken out
/// of it, in `planned` (the project with the plan's people, [`with_planned_people`]).
fn evaluate(
    planned: &Project,
    dists: &[Distribution],
    group: &[usize],
    cut: &HashSet<usize>,
    due_day: u32,
    mc: &MonteCarlo,
) -> Option<(Option<u32>, f64)> {
    let mut p = planned.clone();
    for &i in cut {
        p.tasks[i].hard = false;
        p.tasks[i].due = None;
    }
    let prep = Prepared::new(&p).ok()?;
    let kept: Vec<usize> = group.iter().copied().filter(|i| !cut.contains(i)).collect();
    if kept.is_empty() {
        return Some((Some(0), 1.0));
    }
    let sim = mc.run_groups(&prep, dists, &[kept]);
    Some((sim.group(0).p80, sim.group_by(0, due_day)))
}

/// Whether task `i` waits, directly or through other work, on a task of `cut`.
fn waits_on(prep: &Prepared, i: usize, cut: &HashSet<usize>) -> bool {
    let mut seen: HashSet<u32> = HashSet::new();
    let mut todo: Vec<u32> = prep.deps(i).to_vec();
    while let Some(d) = todo.pop() {
        if !seen.insert(d) {
            continue;
        }
        if cut.contains(&(d as usize)) {
            return true;
        }
        todo.extend_from_slice(prep.deps(d as usize));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str, effort: f64, who: usize, priority: u8, deps: Vec<usize>) -> Task {
        Task {
            name: name.into(),
            effort,
            assignee: Some(who),
            eligible: None,
            deps,
            priority,
            hard: true,
            due: Some(5),
            started: false,
        }
    }

    /// The cut line of the whole project as one milestone due on day 5, and what taking that cut out
    /// really gives (the same simulation, run on its own).
    fn cut_of(
        tasks: Vec<Task>,
        put_back: usize,
    ) -> (Vec<usize>, Option<u32>, f64, (Option<u32>, f64)) {
        cut_after(tasks, put_back, &HashSet::new())
    }

    /// [`cut_of`], the cut before being `before`.
    fn cut_after(
        tasks: Vec<Task>,
        put_back: usize,
        before: &HashSet<usize>,
    ) -> (Vec<usize>, Option<u32>, f64, (Option<u32>, f64)) {
        let project = Project {
            tasks,
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
        let group: Vec<usize> = (0..project.tasks.len()).collect();
        let found = cut_line(
            &project, &plan, &prep, &dists, &group, 5, &mc, put_back, before,
        )
        .unwrap();
        assert!(found.meets);
        assert_eq!(found.trimmed, put_back >= found.issues.len());
        let taken: HashSet<usize> = found.issues.iter().copied().collect();
        let really = evaluate(
            &with_planned_people(&project, &plan),
            &dists,
            &group,
            &taken,
            5,
            &mc,
        )
        .unwrap();
        (found.issues, found.p80, found.on_time, really)
    }

    #[test]
    fn the_cut_line_takes_out_the_late_issue_not_the_lowest_numbered_or_the_lowest_priority() {
        // Due on day 5: `late` (the lowest number) takes ten days; `early` and `low` (the lowest priority)
        // end on day 1. The cut line had taken all three ("only emptying the milestone would").
        let (cut, p80, on_time, really) = cut_of(
            vec![
                task("late", 60.0, 1, 2, vec![]),
                task("early", 6.0, 0, 2, vec![]),
                task("low", 6.0, 0, 3, vec![]),
            ],
            MAX_PUT_BACK,
        );
        assert_eq!(cut, [0]);
        assert_eq!((p80, on_time), really, "what it says is what the cut gives");
        assert!(on_time >= MEETS && p80.is_some_and(|d| d <= 5));
    }

    #[test]
    fn the_cut_line_keeps_nothing_that_waits_on_what_it_cuts() {
        // `c` takes ten days and `d` waits on it; `a` (the lowest priority) holds nothing up. The cut is
        // `d` with `c` (`d` goes before what it waits on), not `a` as well.
        let (cut, _, on_time, really) = cut_of(
            vec![
                task("a", 6.0, 0, 3, vec![]),
                task("b", 6.0, 1, 2, vec![]),
                task("c", 60.0, 1, 2, vec![]),
                task("d", 6.0, 0, 2, vec![2]),
            ],
            MAX_PUT_BACK,
        );
        assert_eq!(cut, [3, 2]);
        assert_eq!(on_time, really.1);
        // With no put-back left in the forecast's budget, the bisection's run stands.
        let (untrimmed, ..) = cut_of(
            vec![
                task("late", 60.0, 1, 2, vec![]),
                task("early", 6.0, 0, 2, vec![]),
                task("low", 6.0, 0, 3, vec![]),
            ],
            0,
        );
        assert_eq!(untrimmed, [2, 0]);
    }

    #[test]
    fn a_cut_that_still_meets_the_deadline_is_kept_not_drawn_afresh() {
        // Person 0 has two days' work too many: either `a` or `b` must go. Afresh, the one the plan ends
        // later (`b`) goes; after a forecast that cut `a`, `a` stays cut, as it still meets the deadline
        // (audit 108: a close in the milestone turned a cut of 10 into one of 13).
        let tasks = || {
            vec![
                task("a", 24.0, 0, 2, vec![]),
                task("b", 24.0, 0, 2, vec![]),
                task("c", 12.0, 1, 2, vec![]),
            ]
        };
        assert_eq!(cut_of(tasks(), MAX_PUT_BACK).0, [1]);
        let (kept, _, on_time, really) = cut_after(tasks(), MAX_PUT_BACK, &HashSet::from([0]));
        assert_eq!(kept, [0]);
        assert_eq!(on_time, really.1);
        // More than the cut before needed: what it no longer needs is put back.
        assert_eq!(
            cut_after(tasks(), MAX_PUT_BACK, &HashSet::from([0, 2])).0,
            [0]
        );
        // Not enough any more (`c` grew): the cut before is kept and grown, and listed as any cut is,
        // the latest to end first.
        let mut grown = tasks();
        grown[2].effort = 60.0;
        assert_eq!(
            cut_after(grown, MAX_PUT_BACK, &HashSet::from([0])).0,
            [2, 0]
        );
        // One the other candidates wait on is not cut first: `b` waits on `a`, so `a` before is dropped
        // and the cut is drawn afresh (`b`, which ends later).
        let mut waiting = tasks();
        waiting[1].deps = vec![0];
        assert_eq!(cut_after(waiting, MAX_PUT_BACK, &HashSet::from([0])).0, [1]);
    }

    #[test]
    fn waiting_on_a_cut_issue_through_other_work_counts() {
        // `a` waits on `x`, which waits on `c`.
        let project = Project {
            tasks: vec![
                task("a", 6.0, 0, 2, vec![1]),
                task("x", 6.0, 0, 2, vec![2]),
                task("c", 6.0, 1, 2, vec![]),
            ],
            people: vec![Calendar::from_capacity(vec![6.0; 400]); 2],
        };
        let prep = Prepared::new(&project).unwrap();
        assert!(waits_on(&prep, 0, &HashSet::from([2])));
        assert!(!waits_on(&prep, 2, &HashSet::from([0])));
        assert!(!waits_on(&prep, 0, &HashSet::new()));
    }
}
