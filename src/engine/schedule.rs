//! Deterministic list scheduling with resource levelling, and a checker that proves a schedule feasible.
//!
//! The order work is taken in is fixed before any effort is known (see [`Prepared`]), so the Monte Carlo
//! can reuse it for every trial: each task, in that order, starts when its dependencies are done and its
//! person is free, and an unassigned task goes to the eligible person who would finish it first.
//!
//! The order ("rank") compares, in turn: `p/0` work first; work already started (people finish what they
//! started); work a hard-deadline milestone needs; the effective priority; the earliest due date the work
//! serves; the input order.
//! Effective priority, hardness and due date are inherited backwards along dependencies: work that
//! something more urgent waits for is as urgent as that.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::calendar::{Calendar, DayIndex};

/// One piece of open work, as the scheduler sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// A name for messages, e.g. `acme/api#12`.
    pub name: String,
    /// Remaining effort in working hours (the median; the Monte Carlo samples around it).
    pub effort: f64,
    /// The person (index into the people) who will do it, if assigned.
    pub assignee: Option<usize>,
    /// Who may take it when unassigned: `None`, everybody; an empty list, nobody (it is never done).
    pub eligible: Option<Vec<usize>>,
    /// Tasks (indices) that must be done first.
    pub deps: Vec<usize>,
    /// Priority level, 0 (highest) to 3.
    pub priority: u8,
    /// Whether it is in a milestone with a hard deadline.
    pub hard: bool,
    /// Its milestone's due day, if any.
    pub due: Option<DayIndex>,
    /// Whether work on it has begun (a pull request, tracked time): people finish what they started.
    pub started: bool,
}

/// The people and the work.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// Open work.
    pub tasks: Vec<Task>,
    /// One calendar per person.
    pub people: Vec<Calendar>,
}

/// A problem found while preparing a project.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A task names a dependency or person that does not exist.
    #[error("task {task}: {message}")]
    BadReference {
        /// The task's name.
        task: String,
        /// What is wrong.
        message: String,
    },
}

/// A project made ready for (repeated) scheduling: cycles cut out, ranks inherited, the order fixed.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Task indices in the order they are scheduled; tasks in dependency cycles are absent.
    pub order: Vec<u32>,
    /// Dependency cycles found (each a list of task indices, smallest first); these tasks are left out.
    pub cycles: Vec<Vec<usize>>,
    /// Per task: left out because it is in a cycle.
    pub excluded: Vec<bool>,
    /// Per task: a dependency was left out (it was in a cycle), so that wait is ignored.
    pub lost_deps: Vec<bool>,
    /// Per task: priority after inheriting from the work that waits for it.
    pub effective_priority: Vec<u8>,
    /// Per task: its identity in the Monte Carlo's random numbers, a hash of its name — so a task draws
    /// the same numbers wherever it sits in the project.
    pub(crate) ids: Vec<u64>,
    dep_start: Vec<u32>,
    dep_list: Vec<u32>,
    assignee: Vec<u32>,
    elig_start: Vec<u32>,
    elig_list: Vec<u32>,
    people: Vec<Calendar>,
}

const NOBODY: u32 = u32::MAX;

/// A task's identity in the random numbers: FNV-1a of its name.
fn task_id(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Every task's identity; a name that repeats gets a different identity each time it appears (in input
/// order), so two tasks never share their random numbers.
fn task_ids(tasks: &[Task]) -> Vec<u64> {
    let mut seen: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    tasks
        .iter()
        .map(|t| {
            let n = seen.entry(t.name.as_str()).or_insert(0);
            let id = task_id(&t.name) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            *n += 1;
            id
        })
        .collect()
}

/// When each task starts and ends (hours since day 0) and who does it; `NaN` start for left-out tasks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schedule {
    /// Start time per task.
    pub start: Vec<f64>,
    /// End time per task (infinite when nobody can ever do it).
    pub end: Vec<f64>,
    /// Who does it (index into people), `None` for left-out tasks.
    pub person: Vec<Option<u32>>,
    /// The stretches of its person's work (positions on their calendar, in hours) the task occupies.
    pub segments: Vec<Vec<(f64, f64)>>,
}

/// Working memory of the dynamic scheduler, reusable across calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scratch {
    lanes: Vec<Lane>,
}

/// Gaps narrower than this (hours) are rounding noise, not time anyone can work in.
const TINY: f64 = 1e-9;

/// One person's booked work: everything before `tail` is taken except the `gaps`.
///
/// Work is placed at the earliest free positions from where it may start, filling gaps that waiting on
/// dependencies left earlier (a person blocked on one task works on another meanwhile) and splitting
/// across them if it must.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lane {
    gaps: Vec<(f64, f64)>,
    tail: f64,
    /// Calendar lookup hint for the tail (see [`Calendar::time_done_hinted`]).
    pub(crate) hint: u32,
}

impl Lane {
    pub(crate) fn reset(&mut self) {
        self.gaps.clear();
        self.tail = 0.0;
        self.hint = 0;
    }

    /// First and last work positions `effort` hours would occupy if they may start at position `x0`.
    pub(crate) fn peek(&self, x0: f64, effort: f64) -> (f64, f64) {
        let mut need = effort;
        let mut first = None;
        for &(a, b) in &self.gaps {
            if b <= x0 + TINY {
                continue;
            }
            let s = a.max(x0);
            let take = (b - s).min(need);
            first.get_or_insert(s);
            need -= take;
            if need <= TINY {
                return (first.unwrap_or(s), s + take);
            }
        }
        let s = self.tail.max(x0);
        (first.unwrap_or(s), s + need)
    }

    /// Books `effort` hours from position `x0` (see [`Lane::peek`]); records the stretches in `segments`
    /// if given. Returns the first and last positions.
    pub(crate) fn take(
        &mut self,
        x0: f64,
        effort: f64,
        mut segments: Option<&mut Vec<(f64, f64)>>,
    ) -> (f64, f64) {
        let mut need = effort;
        let mut first = None;
        let mut k = 0;
        while k < self.gaps.len() && need > TINY {
            let (a, b) = self.gaps[k];
            if b <= x0 + TINY {
                k += 1;
                continue;
            }
            let s = a.max(x0);
            let take = (b - s).min(need);
            first.get_or_insert(s);
            if let Some(seg) = segments.as_deref_mut() {
                seg.push((s, s + take));
            }
            need -= take;
            let left = (a, s);
            let right = (s + take, b);
            let keep_left = left.1 - left.0 > TINY;
            let keep_right = right.1 - right.0 > TINY;
            match (keep_left, keep_right) {
                (true, true) => {
                    self.gaps[k] = left;
                    self.gaps.insert(k + 1, right);
                    k += 2;
                }
                (true, false) => {
                    self.gaps[k] = left;
                    k += 1;
                }
                (false, true) => {
                    self.gaps[k] = right;
                    k += 1;
                }
                (false, false) => {
                    self.gaps.remove(k);
                }
            }
            if need <= TINY {
                return (first.unwrap_or(s), s + take);
            }
        }
        let s = self.tail.max(x0);
        if s - self.tail > TINY {
            self.gaps.push((self.tail, s));
        }
        first.get_or_insert(s);
        if let Some(seg) = segments {
            seg.push((s, s + need));
        }
        self.tail = s + need;
        (first.unwrap_or(s), self.tail)
    }

    /// Books `effort` hours from `x0` on `cal` and returns the time the work is done and its day: the
    /// Monte Carlo's step.
    #[inline]
    pub(crate) fn finish(&mut self, cal: &Calendar, x0: f64, effort: f64) -> (f64, u32) {
        if self.gaps.is_empty() && x0 <= self.tail {
            // The common case: work goes on where the person's booked work ends.
            self.tail += effort;
            cal.done_hinted(self.tail, &mut self.hint)
        } else {
            let old_tail = self.tail;
            let (_, last) = self.take(x0, effort, None);
            if last > old_tail {
                cal.done_hinted(last, &mut self.hint)
            } else {
                cal.done(last)
            }
        }
    }
}

impl Prepared {
    /// Checks references, cuts out dependency cycles, inherits ranks and fixes the scheduling order.
    pub fn new(project: &Project) -> Result<Self, ScheduleError> {
        let n = project.tasks.len();
        let np = project.people.len();
        for t in &project.tasks {
            let bad = |message: String| ScheduleError::BadReference {
                task: t.name.clone(),
                message,
            };
            if let Some(d) = t.deps.iter().find(|d| **d >= n) {
                return Err(bad(format!("depends on task {d}, which does not exist")));
            }
            if let Some(a) = t.assignee.filter(|a| *a >= np) {
                return Err(bad(format!(
                    "is assigned to person {a}, who does not exist"
                )));
            }
            if let Some(e) = t.eligible.iter().flatten().find(|e| **e >= np) {
                return Err(bad(format!(
                    "names eligible person {e}, who does not exist"
                )));
            }
        }
        let deps: Vec<Vec<usize>> = project
            .tasks
            .iter()
            .map(|t| {
                let mut d = t.deps.clone();
                d.sort_unstable();
                d.dedup();
                d
            })
            .collect();
        let cycles = find_cycles(&deps);
        let mut excluded = vec![false; n];
        for c in &cycles {
            for &i in c {
                excluded[i] = true;
            }
        }
        let mut lost_deps = vec![false; n];
        let mut kept: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..n {
            if excluded[i] {
                continue;
            }
            for &d in &deps[i] {
                if excluded[d] {
                    lost_deps[i] = true;
                } else {
                    kept[i].push(d);
                }
            }
        }
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, ds) in kept.iter().enumerate() {
            for &d in ds {
                dependents[d].push(i);
            }
        }

        // Inherit priority, hardness and due date backwards: visit dependents before what they wait for.
        let topo = kahn(&kept, &dependents, &excluded, |i| i);
        let mut prio: Vec<u8> = project.tasks.iter().map(|t| t.priority.min(3)).collect();
        let mut hard: Vec<bool> = project.tasks.iter().map(|t| t.hard).collect();
        let mut due: Vec<DayIndex> = project
            .tasks
            .iter()
            .map(|t| t.due.unwrap_or(DayIndex::MAX))
            .collect();
        for &i in topo.iter().rev() {
            for &j in &dependents[i] {
                prio[i] = prio[i].min(prio[j]);
                hard[i] |= hard[j];
                due[i] = due[i].min(due[j]);
            }
        }
        let key = |i: usize| {
            (
                prio[i] != 0,
                !project.tasks[i].started,
                !hard[i],
                prio[i],
                due[i],
                i,
            )
        };
        let order: Vec<u32> = kahn(&kept, &dependents, &excluded, key)
            .into_iter()
            .map(|i| i as u32)
            .collect();

        let mut dep_start = Vec::with_capacity(n + 1);
        let mut dep_list = Vec::new();
        let mut elig_start = Vec::with_capacity(n + 1);
        let mut elig_list = Vec::new();
        for (i, t) in project.tasks.iter().enumerate() {
            dep_start.push(dep_list.len() as u32);
            dep_list.extend(kept[i].iter().map(|d| *d as u32));
            elig_start.push(elig_list.len() as u32);
            match &t.eligible {
                None => elig_list.extend(0..np as u32),
                Some(only) => {
                    let mut e: Vec<u32> = only.iter().map(|e| *e as u32).collect();
                    e.sort_unstable();
                    e.dedup();
                    elig_list.extend(e);
                }
            }
        }
        dep_start.push(dep_list.len() as u32);
        elig_start.push(elig_list.len() as u32);
        Ok(Self {
            order,
            cycles,
            excluded,
            lost_deps,
            effective_priority: prio,
            ids: task_ids(&project.tasks),
            dep_start,
            dep_list,
            assignee: project
                .tasks
                .iter()
                .map(|t| t.assignee.map_or(NOBODY, |a| a as u32))
                .collect(),
            elig_start,
            elig_list,
            people: project.people.clone(),
        })
    }

    /// How many tasks (including left-out ones).
    pub fn len(&self) -> usize {
        self.assignee.len()
    }

    /// Whether there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.assignee.is_empty()
    }

    /// The people's calendars.
    pub fn people(&self) -> &[Calendar] {
        &self.people
    }

    /// The dependencies kept for task `i`.
    pub fn deps(&self, i: usize) -> &[u32] {
        &self.dep_list[self.dep_start[i] as usize..self.dep_start[i + 1] as usize]
    }

    /// Schedules with the given efforts (hours per task) into `out`.
    pub(crate) fn schedule_into(&self, efforts: &[f64], scratch: &mut Scratch, out: &mut Schedule) {
        let n = self.len();
        out.start.clear();
        out.start.resize(n, f64::NAN);
        out.end.clear();
        out.end.resize(n, f64::NAN);
        out.person.clear();
        out.person.resize(n, None);
        out.segments.clear();
        out.segments.resize(n, Vec::new());
        scratch.lanes.clear();
        scratch.lanes.resize(self.people.len(), Lane::default());
        for &i in &self.order {
            let i = i as usize;
            let ready = self
                .deps(i)
                .iter()
                .map(|&d| out.end[d as usize])
                .fold(0.0f64, f64::max);
            let effort = efforts[i].max(0.0);
            let finish = |p: usize, lanes: &[Lane]| {
                let cal = &self.people[p];
                let x0 = cal.work_at(ready);
                let (_, last) = lanes[p].peek(x0, effort);
                if effort > 0.0 {
                    cal.time_done(last)
                } else {
                    ready.max(cal.time_done(x0))
                }
            };
            let p = if self.assignee[i] != NOBODY {
                self.assignee[i] as usize
            } else {
                let elig =
                    &self.elig_list[self.elig_start[i] as usize..self.elig_start[i + 1] as usize];
                let mut best: Option<(usize, f64)> = None;
                for &p in elig {
                    let end = finish(p as usize, &scratch.lanes);
                    if best.is_none_or(|(_, e)| end < e) {
                        best = Some((p as usize, end));
                    }
                }
                match best {
                    Some((p, _)) => p,
                    None => {
                        out.start[i] = f64::INFINITY;
                        out.end[i] = f64::INFINITY;
                        continue;
                    }
                }
            };
            self.book(i, p, ready, effort, &mut scratch.lanes[p], out);
        }
    }

    /// Books task `i` on person `p`'s lane and records it in `out`.
    fn book(
        &self,
        i: usize,
        p: usize,
        ready: f64,
        effort: f64,
        lane: &mut Lane,
        out: &mut Schedule,
    ) {
        let cal = &self.people[p];
        let x0 = cal.work_at(ready);
        if effort > 0.0 {
            let (first, last) = lane.take(x0, effort, Some(&mut out.segments[i]));
            out.start[i] = cal.time_start(first).max(ready);
            out.end[i] = cal.time_done(last);
        } else {
            let end = ready.max(cal.time_done(x0));
            out.start[i] = end;
            out.end[i] = end;
        }
        out.person[i] = Some(p as u32);
    }

    /// Schedules with the tasks' own (median) efforts.
    pub fn schedule(&self, efforts: &[f64]) -> Schedule {
        let mut out = Schedule::default();
        self.schedule_into(efforts, &mut Scratch::default(), &mut out);
        if cfg!(debug_assertions)
            && let Err(e) = self.check(efforts, &out)
        {
            panic!("the scheduler made an infeasible schedule: {e}");
        }
        out
    }

    /// Schedules with every task's person fixed (`u32::MAX`: nobody, never ends), as each Monte Carlo
    /// trial does; the full schedule, so the checker can prove the trials' plans feasible in tests.
    pub fn schedule_fixed(&self, efforts: &[f64], assign: &[u32]) -> Schedule {
        let n = self.len();
        let mut out = Schedule {
            start: vec![f64::NAN; n],
            end: vec![f64::NAN; n],
            person: vec![None; n],
            segments: vec![Vec::new(); n],
        };
        let mut lanes = vec![Lane::default(); self.people.len()];
        for &i in &self.order {
            let i = i as usize;
            if assign[i] == NOBODY {
                out.start[i] = f64::INFINITY;
                out.end[i] = f64::INFINITY;
                continue;
            }
            let p = assign[i] as usize;
            let ready = self
                .deps(i)
                .iter()
                .map(|&d| out.end[d as usize])
                .fold(0.0f64, f64::max);
            self.book(i, p, ready, efforts[i].max(0.0), &mut lanes[p], &mut out);
        }
        if cfg!(debug_assertions)
            && let Err(e) = self.check(efforts, &out)
        {
            panic!("the scheduler made an infeasible schedule: {e}");
        }
        out
    }

    /// The people a schedule gives each task to (`u32::MAX` for nobody), for [`Prepared::schedule_fixed`].
    pub fn assignment(s: &Schedule) -> Vec<u32> {
        s.person.iter().map(|p| p.unwrap_or(NOBODY)).collect()
    }

    /// Proves `s` feasible for `efforts`: nothing starts before its dependencies end, every task gets exactly
    /// its effort, all of it within its person's working hours and between its start and end, and nobody
    /// works on two tasks at once.
    pub fn check(&self, efforts: &[f64], s: &Schedule) -> Result<(), String> {
        const EPS: f64 = 1e-6;
        let mut booked: Vec<Vec<(f64, f64, usize)>> = vec![Vec::new(); self.people.len()];
        for (i, &effort) in efforts.iter().enumerate().take(self.len()) {
            if self.excluded[i] {
                if s.person[i].is_some() {
                    return Err(format!("task {i} is in a cycle but was scheduled"));
                }
                continue;
            }
            let Some(p) = s.person[i] else {
                if s.end[i].is_infinite() {
                    continue;
                }
                return Err(format!("task {i} has no person"));
            };
            if self.assignee[i] != NOBODY && self.assignee[i] != p {
                return Err(format!(
                    "task {i} is assigned to {} but scheduled for {p}",
                    self.assignee[i]
                ));
            }
            for &d in self.deps(i) {
                if s.start[i] + EPS < s.end[d as usize] {
                    return Err(format!(
                        "task {i} starts at {} before its dependency {d} ends at {}",
                        s.start[i], s.end[d as usize]
                    ));
                }
            }
            if s.end[i] + EPS < s.start[i] {
                return Err(format!("task {i} ends before it starts"));
            }
            let cal = &self.people[p as usize];
            let total: f64 = s.segments[i].iter().map(|(a, b)| b - a).sum();
            if (total - effort.max(0.0)).abs() > EPS {
                return Err(format!(
                    "task {i} needs {effort} hours but was given {total}"
                ));
            }
            if s.end[i].is_finite() {
                let (from, to) = (cal.work_at(s.start[i]), cal.work_at(s.end[i]));
                for &(a, b) in &s.segments[i] {
                    if a + EPS < from || b > to + EPS {
                        return Err(format!(
                            "task {i} is worked on outside its start and end ({a}..{b} not within {from}..{to})"
                        ));
                    }
                }
            }
            booked[p as usize].extend(s.segments[i].iter().map(|&(a, b)| (a, b, i)));
        }
        for (p, segs) in booked.iter_mut().enumerate() {
            segs.sort_by(|x, y| x.0.total_cmp(&y.0));
            for w in segs.windows(2) {
                if w[1].0 + EPS < w[0].1 {
                    return Err(format!(
                        "person {p} works on tasks {} and {} at once",
                        w[0].2, w[1].2
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Kahn's algorithm over the kept edges, always taking the ready task with the smallest `key`.
fn kahn<K: Ord>(
    deps: &[Vec<usize>],
    dependents: &[Vec<usize>],
    excluded: &[bool],
    key: impl Fn(usize) -> K,
) -> Vec<usize> {
    let n = deps.len();
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut heap = BinaryHeap::new();
    for i in 0..n {
        if !excluded[i] && waiting[i] == 0 {
            heap.push(Reverse((key(i), i)));
        }
    }
    let mut out = Vec::with_capacity(n);
    while let Some(Reverse((_, i))) = heap.pop() {
        out.push(i);
        for &j in &dependents[i] {
            waiting[j] -= 1;
            if waiting[j] == 0 {
                heap.push(Reverse((key(j), j)));
            }
        }
    }
    out
}

/// Strongly connected components of more than one task, or a task that depends on itself (Tarjan, iterative).
fn find_cycles(deps: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = deps.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0usize;
    let mut out = Vec::new();
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = call.last_mut() {
            if *k < deps[v].len() {
                let w = deps[v][*k];
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if comp.len() > 1 || deps[v].contains(&v) {
                        comp.sort_unstable();
                        out.push(comp);
                    }
                }
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(
        name: &str,
        effort: f64,
        assignee: Option<usize>,
        deps: &[usize],
        priority: u8,
    ) -> Task {
        Task {
            name: name.into(),
            effort,
            assignee,
            eligible: None,
            deps: deps.to_vec(),
            priority,
            hard: false,
            due: None,
            started: false,
        }
    }

    fn flat(people: usize, hours: f64) -> Vec<Calendar> {
        (0..people)
            .map(|_| Calendar::from_capacity(vec![hours; 200]))
            .collect()
    }

    fn efforts(p: &Project) -> Vec<f64> {
        p.tasks.iter().map(|t| t.effort).collect()
    }

    #[test]
    fn a_chain_runs_back_to_back_across_days() {
        let p = Project {
            tasks: vec![
                task("a", 4.0, Some(0), &[], 2),
                task("b", 4.0, Some(0), &[0], 2),
            ],
            people: flat(1, 6.0),
        };
        let prep = Prepared::new(&p).unwrap();
        let s = prep.schedule(&efforts(&p));
        assert_eq!((s.start[0], s.end[0]), (0.0, 4.0));
        assert_eq!((s.start[1], s.end[1]), (4.0, 24.0 + 2.0));
        prep.check(&efforts(&p), &s).unwrap();
    }

    #[test]
    fn unassigned_work_goes_to_whoever_finishes_first() {
        let p = Project {
            tasks: vec![
                task("busy", 12.0, Some(0), &[], 1),
                task("free", 6.0, None, &[], 2),
            ],
            people: flat(2, 6.0),
        };
        let prep = Prepared::new(&p).unwrap();
        let s = prep.schedule(&efforts(&p));
        assert_eq!(s.person[1], Some(1));
        assert_eq!(s.end[1], 6.0);
        prep.check(&efforts(&p), &s).unwrap();
    }

    #[test]
    fn dependencies_lift_priority_of_what_they_wait_for() {
        // "enabler" is p/3 but "urgent" (p/0) needs it, so it goes before "normal" (p/2).
        let p = Project {
            tasks: vec![
                task("normal", 6.0, Some(0), &[], 2),
                task("enabler", 6.0, Some(0), &[], 3),
                task("urgent", 6.0, Some(0), &[1], 0),
            ],
            people: flat(1, 6.0),
        };
        let prep = Prepared::new(&p).unwrap();
        assert_eq!(prep.effective_priority, vec![2, 0, 0]);
        assert_eq!(prep.order, vec![1, 2, 0]);
        let s = prep.schedule(&efforts(&p));
        prep.check(&efforts(&p), &s).unwrap();
        assert_eq!(s.end[0], 24.0 * 2.0 + 6.0);
    }

    #[test]
    fn hard_deadlines_go_before_higher_priority_numbers_but_not_before_p0() {
        let mut hard = task("hard", 6.0, Some(0), &[], 2);
        hard.hard = true;
        let p = Project {
            tasks: vec![
                task("p1", 6.0, Some(0), &[], 1),
                hard,
                task("p0", 6.0, Some(0), &[], 0),
            ],
            people: flat(1, 6.0),
        };
        assert_eq!(Prepared::new(&p).unwrap().order, vec![2, 1, 0]);
    }

    #[test]
    fn cycles_are_cut_out_and_named_and_the_rest_still_schedules() {
        let p = Project {
            tasks: vec![
                task("a", 1.0, Some(0), &[1], 2),
                task("b", 1.0, Some(0), &[2], 2),
                task("c", 1.0, Some(0), &[0], 2),
                task("d", 1.0, Some(0), &[2], 2),
                task("e", 1.0, Some(0), &[4], 2),
                task("f", 1.0, Some(0), &[], 2),
            ],
            people: flat(1, 6.0),
        };
        let prep = Prepared::new(&p).unwrap();
        assert_eq!(prep.cycles, vec![vec![0, 1, 2], vec![4]]);
        assert_eq!(
            prep.lost_deps,
            vec![false, false, false, true, false, false]
        );
        let s = prep.schedule(&efforts(&p));
        assert!(s.person[0].is_none() && s.person[4].is_none());
        assert!(s.end[3].is_finite() && s.end[5].is_finite());
        prep.check(&efforts(&p), &s).unwrap();
    }

    #[test]
    fn bad_references_are_errors() {
        let p = Project {
            tasks: vec![task("x", 1.0, Some(3), &[], 2)],
            people: flat(1, 6.0),
        };
        assert!(
            Prepared::new(&p)
                .unwrap_err()
                .to_string()
                .contains("task x")
        );
        let p = Project {
            tasks: vec![task("x", 1.0, None, &[9], 2)],
            people: flat(1, 6.0),
        };
        assert!(Prepared::new(&p).is_err());
    }

    #[test]
    fn the_checker_catches_overlap_and_early_starts() {
        let p = Project {
            tasks: vec![
                task("a", 6.0, Some(0), &[], 2),
                task("b", 6.0, Some(0), &[0], 2),
            ],
            people: flat(1, 6.0),
        };
        let prep = Prepared::new(&p).unwrap();
        let e = efforts(&p);
        let good = prep.schedule(&e);
        let mut bad = good.clone();
        bad.start[1] = 0.0;
        assert!(prep.check(&e, &bad).is_err());
        let mut short = good.clone();
        short.end[1] = short.start[1] + 1.0;
        assert!(prep.check(&e, &short).is_err());
    }
}
