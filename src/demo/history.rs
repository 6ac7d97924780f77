//! The issues and their histories, played out on the team's calendar.
//!
//! The generator works in phases, each deciding one thing for every issue, so that later phases can rely
//! on what earlier ones fixed:
//!
//! 1. milestones (roles: closed, hard deadline, at risk, on track, later) and each issue's fate (done,
//!    dropped, in review, steeping, triage, diagnosis), repository, kind, title, estimate and priority;
//! 2. who works on what, and the hidden actual effort (estimate × personal factor × log-normal noise);
//! 3. a history window long enough for everyone's work, then each person's work stream on their own
//!    calendar (working days, part-time days, time off): closed work first, then work in review, then work
//!    in progress ending now — with pull requests, reviews, merges and tracked time;
//! 4. creation and triage times, milestone moves, dependency chains between open issues;
//! 5. every change as an action with a time, replayed through a small state machine that turns the actions
//!    into Gitea timeline events — so the final labels, milestone and assignees are exactly what the
//!    timeline gives — then issue and pull request numbers (one number space per repository, in creation
//!    order) and comment and event ids (one sequence, increasing in time).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, NaiveDate, NaiveTime, Utc};
use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::StandardNormal;

use super::DemoSpec;
use super::team::{SERVER, Team, WORKDAY_HOURS};
use super::words::{self, EST_COLORS, Kind, ORDINARY_LABELS, PRIORITY_LABELS, Title};
use crate::config::Config;
use crate::domain::{
    Comment, Issue, IssueKey, Label, LinkedPull, Milestone, OpenState, RepoName, TimelineEvent,
    TrackedTime,
};
use crate::state::{Meta, Snapshot};

type Rng = Xoshiro256PlusPlus;
type Time = DateTime<Utc>;

/// People who file and triage issues without doing the engineering work.
const PM: &str = "pat";
const SUPPORT: &str = "sasha";

/// How likely each rung of the estimate ladder is (1h 2h 4h 1d 2d 3d 1w 2w): weighted to the middle.
const LADDER_WEIGHTS: [f64; 8] = [4.0, 10.0, 18.0, 22.0, 20.0, 12.0, 8.0, 3.0];

/// Business hours on the team calendar: work and triage happen between 09:00 and 17:00 UTC.
const DAY_START: i64 = 9 * 3600;
const SPAN: f64 = 8.0 * 3600.0;

fn u(r: &mut Rng) -> f64 {
    r.random::<f64>()
}

fn chance(r: &mut Rng, p: f64) -> bool {
    r.random::<f64>() < p
}

fn normal(r: &mut Rng) -> f64 {
    let z: f64 = r.sample(StandardNormal);
    z.clamp(-2.5, 2.5)
}

/// An index drawn with the given weights; `None` when they are all zero.
fn weighted(r: &mut Rng, w: &[f64]) -> Option<usize> {
    let total: f64 = w.iter().filter(|x| **x > 0.0).sum();
    if total <= 0.0 {
        return None;
    }
    let mut x = u(r) * total;
    let mut last = None;
    for (i, wi) in w.iter().enumerate() {
        if *wi > 0.0 {
            last = Some(i);
            if x < *wi {
                return Some(i);
            }
            x -= wi;
        }
    }
    last
}

fn pick<T: Copy>(r: &mut Rng, v: &[T]) -> Option<T> {
    if v.is_empty() {
        None
    } else {
        v.get(r.random_range(0..v.len())).copied()
    }
}

fn shuffle<T>(r: &mut Rng, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = r.random_range(0..=i);
        v.swap(i, j);
    }
}

fn midnight(d: NaiveDate) -> Time {
    d.and_time(NaiveTime::MIN).and_utc()
}

/// Working days as a line: position `i + f` is fraction `f` of the business hours of the `i`-th day.
struct Cal {
    days: Vec<NaiveDate>,
}

impl Cal {
    fn new(from: NaiveDate, to: NaiveDate, works: impl Fn(NaiveDate) -> bool) -> Self {
        let days = from
            .iter_days()
            .take_while(|d| *d <= to)
            .filter(|d| works(*d))
            .collect();
        Self { days }
    }

    fn len(&self) -> f64 {
        self.days.len() as f64
    }

    /// The position of `t`; a time outside working hours maps to the next working moment.
    fn pos(&self, t: Time) -> f64 {
        let d = t.date_naive();
        let i = self.days.partition_point(|x| *x < d);
        match self.days.get(i) {
            Some(x) if *x == d => {
                let s = (t - midnight(d)).num_seconds() - DAY_START;
                i as f64 + (s as f64 / SPAN).clamp(0.0, 1.0)
            }
            _ => i as f64,
        }
    }

    fn time(&self, i: usize, frac: f64) -> Time {
        let Some(d) = self.days.get(i).or(self.days.last()) else {
            return Time::default();
        };
        midnight(*d) + Duration::seconds(DAY_START + (frac.clamp(0.0, 1.0) * SPAN).round() as i64)
    }

    /// The moment at position `p`, a whole number being the start of that day.
    fn start(&self, p: f64) -> Time {
        let p = p.clamp(0.0, self.len());
        let i = p.floor() as usize;
        if i >= self.days.len() {
            self.time(self.days.len().saturating_sub(1), 1.0)
        } else {
            self.time(i, p - p.floor())
        }
    }

    /// The moment at position `p`, a whole number being the end of the day before.
    fn end(&self, p: f64) -> Time {
        let p = p.clamp(0.0, self.len());
        if p <= 0.0 {
            return self.start(0.0);
        }
        let i = (p.ceil() as usize).saturating_sub(1);
        self.time(i, p - i as f64)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Closed,
    Hard,
    AtRisk,
    Later,
    OnTrack,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Hard => "hard",
            Self::AtRisk => "at_risk",
            Self::Later => "later",
            Self::OnTrack => "on_track",
        }
    }

    /// How much open work a milestone of this role attracts.
    fn pull(self) -> f64 {
        match self {
            Self::Closed => 0.0,
            Self::Hard => 3.0,
            Self::AtRisk => 4.0,
            Self::Later => 1.5,
            Self::OnTrack => 2.0,
        }
    }
}

/// Milestone roles in the order milestones are made, with the due date and creation date in days from now.
const ROLES: [(Role, i64, i64); 8] = [
    (Role::Closed, -58, 185),
    (Role::Hard, 63, 100),
    (Role::AtRisk, 21, 120),
    (Role::Later, 154, 60),
    (Role::OnTrack, 49, 90),
    (Role::Closed, -150, 240),
    (Role::Later, 196, 45),
    (Role::OnTrack, 84, 110),
];

struct Ms {
    id: u64,
    repo: usize,
    role: Role,
    title: String,
    description: String,
    due: Time,
    created: Time,
    /// When issues that missed a closed milestone were moved on.
    sweep: Time,
    closed: Option<Time>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Fate {
    /// Closed by a merged pull request.
    Done,
    /// Closed without a fix: won't fix or duplicate.
    Dropped,
    /// Open pull request, from someone's work stream.
    Review,
    /// Open pull request for an issue nobody triaged (a quick fix).
    QuickReview,
    #[default]
    Steeping,
    Triage,
    Diagnosis,
}

/// A milestone the issue was in before its final one.
#[derive(Debug, Clone, Copy)]
struct Move {
    from: usize,
    set_at: Option<Time>,
    moved_at: Time,
}

#[derive(Debug, Clone)]
struct Pr {
    repo: usize,
    title: String,
    author: usize,
    created: Time,
    closed: Option<Time>,
    merged: bool,
}

#[derive(Debug, Default)]
struct Item {
    repo: usize,
    fate: Fate,
    kind: Kind,
    extra: Option<&'static str>,
    kind_at_creation: bool,
    title: Title,
    body: String,
    retitle: bool,
    author: String,
    /// The first estimate (ladder index) and the hidden size the effort derives from.
    size: usize,
    /// The final estimate label.
    est: Option<usize>,
    /// The first estimate label when it was changed.
    est0: Option<usize>,
    /// Gitea's native estimate instead of a label.
    native: bool,
    prio: Option<u8>,
    prio0: Option<u8>,
    ms: Option<usize>,
    ms_move: Option<Move>,
    assignee: Option<usize>,
    assignee0: Option<usize>,
    effort: f64,
    in_progress: bool,
    done_frac: f64,
    needs_info: bool,
    needs_diag: bool,
    dup: bool,
    created: Time,
    ws: Option<Time>,
    we: Option<Time>,
    prs: Vec<usize>,
    close: Option<Time>,
    reopen: Option<(Time, Time)>,
    merger: Option<usize>,
    tracked: Vec<(Time, u64, usize)>,
    deps: Vec<(usize, Time)>,
    dep_churn: Option<(usize, Time, Time)>,
    dup_of: Option<usize>,
    wontfix_reopen: Option<(Time, Time)>,
    triage_variant: u8,
}

enum Text {
    Plain(String),
    Pr(&'static str, usize, &'static str),
    Dup(usize),
}

enum Act {
    Label(String),
    Unlabel(String),
    Ms(Option<usize>),
    Assign(usize),
    Unassign(usize),
    Close,
    Reopen,
    PullRef(usize),
    AddDep(usize),
    RemoveDep(usize),
    Retitle,
    Comment(Text),
}

struct Action {
    at: Time,
    user: String,
    act: Act,
}

/// An event after replay, still pointing at items and pull requests by index.
enum Ev {
    Label(String, bool),
    Ms(Option<usize>, Option<usize>),
    Assign(usize, bool),
    Close,
    Reopen,
    PullRef(usize),
    Dep(usize, bool),
    Retitle,
}

struct Replayed {
    events: Vec<(Time, String, Ev)>,
    comments: Vec<(Time, String, Text)>,
    labels: BTreeSet<String>,
    ms: Option<usize>,
    assignees: BTreeSet<usize>,
    closed_at: Option<Time>,
    deps: BTreeSet<usize>,
}

/// The parts every phase reads.
struct Ctx<'a> {
    now: Time,
    today: NaiveDate,
    team: &'a Team,
    holidays: Vec<NaiveDate>,
    cal: Cal,
    hours: Vec<f64>,
    est_labels: Vec<String>,
    ms: Vec<Ms>,
    leads: Vec<usize>,
    window_start: NaiveDate,
}

impl Ctx<'_> {
    /// A moment uniformly spread over the business time between `a` and `b`.
    fn between(&self, r: &mut Rng, a: Time, b: Time) -> Time {
        if b <= a {
            return a;
        }
        let (pa, pb) = (self.cal.pos(a), self.cal.pos(b));
        let x = u(r);
        let t = if pb - pa > 1e-6 {
            self.cal.start(pa + x * (pb - pa))
        } else {
            a + Duration::seconds(((b - a).num_seconds() as f64 * x) as i64)
        };
        t.clamp(a, b)
    }

    /// `days` business days after `a`.
    fn after(&self, a: Time, days: f64) -> Time {
        self.cal.start(self.cal.pos(a) + days).max(a)
    }

    /// `days` business days before `a`.
    fn before(&self, a: Time, days: f64) -> Time {
        self.cal.start(self.cal.pos(a) - days).min(a)
    }

    fn name(&self, p: usize) -> String {
        self.team
            .people
            .get(p)
            .map_or_else(|| PM.to_owned(), |x| x.name.clone())
    }

    fn repo_name(&self, repo: usize) -> &str {
        self.team.repos.get(repo).map_or("", |r| r.name.as_str())
    }

    /// People who work in `repo` and have started by `day`.
    fn covering(&self, repo: usize, day: NaiveDate) -> Vec<usize> {
        (0..self.team.people.len())
            .filter(|p| {
                self.team
                    .people
                    .get(*p)
                    .is_some_and(|x| x.covers(repo) && x.started_by(day))
            })
            .collect()
    }

    fn open_ms(&self, repo: usize) -> Vec<usize> {
        (0..self.ms.len())
            .filter(|m| {
                self.ms
                    .get(*m)
                    .is_some_and(|x| x.repo == repo && x.role != Role::Closed)
            })
            .collect()
    }

    fn ms_created(&self, m: usize) -> Time {
        self.ms.get(m).map_or(self.now, |x| x.created)
    }
}

struct Gen<'a> {
    r: &'a mut Rng,
    c: Ctx<'a>,
    items: Vec<Item>,
    prs: Vec<Pr>,
}

/// Generates the snapshot of `spec` for `team`.
pub(super) fn generate(spec: &DemoSpec, team: &Team, config: &Config, r: &mut Rng) -> Snapshot {
    let now = spec.now;
    let today = now.date_naive();
    let holidays = team.holiday_dates();
    let hours: Vec<f64> = config
        .estimates
        .ladder
        .iter()
        .map(|e| e.hours(WORKDAY_HOURS))
        .collect();
    let leads = (0..team.repos.len())
        .map(|repo| {
            team.people
                .iter()
                .position(|p| !p.repos.is_empty() && p.covers(repo) && p.starts.is_none())
                .unwrap_or(0)
        })
        .collect();
    let c = Ctx {
        now,
        today,
        team,
        holidays,
        cal: Cal { days: Vec::new() },
        hours,
        est_labels: config.estimates.ladder.iter().map(|e| e.label()).collect(),
        ms: Vec::new(),
        leads,
        window_start: today,
    };
    let mut g = Gen {
        r,
        c,
        items: Vec::new(),
        prs: Vec::new(),
    };
    g.make_calendar(400);
    g.plan_milestones(spec.milestones);
    g.plan_items(spec.issues);
    g.assign();
    g.efforts();
    let days = g.choose_window();
    g.make_calendar(days + 420);
    g.schedule_streams();
    g.place_closed();
    g.place_open();
    g.plan_dependencies();
    g.close_milestones();
    g.build(config)
}

impl Gen<'_> {
    fn make_calendar(&mut self, days_back: i64) {
        let team = self.c.team;
        self.c.cal = Cal::new(
            self.c.today - Duration::days(days_back),
            self.c.today + Duration::days(30),
            |d| team.team_day(d),
        );
    }

    fn plan_milestones(&mut self, count: usize) {
        let repos = self.c.team.repos.len().max(1);
        for i in 0..count {
            let Some(&(role, due_off, created_off)) = ROLES.get(i % ROLES.len()) else {
                continue;
            };
            let round = (i / ROLES.len()) as i64;
            let due_off = if role == Role::Closed {
                due_off - 20 * round
            } else {
                due_off + 28 * round
            };
            let repo = i % repos;
            let nth = self
                .c
                .ms
                .iter()
                .filter(|m| m.repo == repo && m.role == role)
                .count();
            let (title, description) = words::milestone(self.c.repo_name(repo), role.name(), nth);
            let due = midnight(self.c.today + Duration::days(due_off)) + Duration::seconds(86_399);
            let created = self.c.cal.start(
                self.c
                    .cal
                    .pos(midnight(self.c.today - Duration::days(created_off)))
                    + 0.05
                    + 0.6 * u(self.r),
            );
            let sweep = self.c.cal.start(self.c.cal.pos(due) + 0.05);
            self.c.ms.push(Ms {
                id: i as u64 + 1,
                repo,
                role,
                title,
                description,
                due,
                created,
                sweep,
                closed: None,
            });
        }
    }

    fn pick_open_ms(&mut self, repo: usize) -> Option<usize> {
        let open = self.c.open_ms(repo);
        let w: Vec<f64> = open
            .iter()
            .map(|m| self.c.ms.get(*m).map_or(0.0, |x| x.role.pull()))
            .collect();
        weighted(self.r, &w).and_then(|i| open.get(i).copied())
    }

    fn priority(&mut self, kind: Kind, urgent: bool) -> u8 {
        let w: [f64; 4] = match (kind, urgent) {
            (_, true) => [5.0, 70.0, 22.0, 3.0],
            (Kind::Bug | Kind::Security, _) => [3.0, 30.0, 45.0, 22.0],
            _ => [1.0, 15.0, 50.0, 34.0],
        };
        weighted(self.r, &w).unwrap_or(2) as u8
    }

    fn plan_items(&mut self, n: usize) {
        let repos = self.c.team.repos.len().max(1);
        let active = self
            .c
            .team
            .people
            .iter()
            .filter(|p| p.started_by(self.c.today))
            .count()
            .max(1);
        let round = |x: f64| x.round() as usize;
        let closed = round(0.5 * n as f64);
        let dropped = round(closed as f64 * 0.09);
        let review = round(0.05 * n as f64)
            .min(round(1.4 * active as f64) + 1)
            .min(n - closed);
        let quick = if review >= 4 { (review / 8).max(1) } else { 0 };
        let diagnosis = round(0.11 * n as f64).min(n - closed - review);
        let triage = round(0.10 * n as f64).min(n - closed - review - diagnosis);
        let steeping = n - closed - review - diagnosis - triage;
        let mut fates = Vec::with_capacity(n);
        fates.extend(std::iter::repeat_n(Fate::Done, closed - dropped));
        fates.extend(std::iter::repeat_n(Fate::Dropped, dropped));
        fates.extend(std::iter::repeat_n(Fate::Review, review - quick));
        fates.extend(std::iter::repeat_n(Fate::QuickReview, quick));
        fates.extend(std::iter::repeat_n(Fate::Steeping, steeping));
        fates.extend(std::iter::repeat_n(Fate::Triage, triage));
        fates.extend(std::iter::repeat_n(Fate::Diagnosis, diagnosis));
        let repo_w: Vec<f64> = (0..repos).map(|i| (repos + 2 - i) as f64).collect();
        for fate in fates {
            let repo = weighted(self.r, &repo_w).unwrap_or(0);
            let rname = self.c.repo_name(repo).to_owned();
            let kind = Kind::draw(self.r, &rname);
            let extra = match kind {
                Kind::Bug if chance(self.r, 0.08) => Some("perf"),
                Kind::Feature if chance(self.r, 0.1) => Some("ux"),
                Kind::Chore if chance(self.r, 0.25) => Some("tech-debt"),
                _ => None,
            };
            let title = words::title(self.r, kind, &rname);
            let body = words::body(self.r, kind, &rname, &title.subject);
            let size = weighted(self.r, &LADDER_WEIGHTS[..self.c.hours.len().min(8)]).unwrap_or(3);
            let mut it = Item {
                repo,
                fate,
                kind,
                extra,
                kind_at_creation: chance(self.r, 0.75),
                title,
                body,
                retitle: chance(self.r, 0.06),
                size,
                ..Item::default()
            };
            let urgent_kind = matches!(kind, Kind::Bug | Kind::Security);
            match fate {
                Fate::Done => {
                    if chance(self.r, 0.9) {
                        it.est = Some(size);
                        it.prio = Some(self.priority(kind, false));
                    } else if chance(self.r, 0.5) {
                        it.prio = Some(self.priority(kind, urgent_kind));
                    }
                }
                Fate::Dropped => {
                    it.dup = chance(self.r, 0.4);
                    if chance(self.r, 0.35) {
                        it.prio = Some(self.priority(kind, false));
                        if chance(self.r, 0.5) {
                            it.est = Some(size);
                        }
                    }
                }
                Fate::Review => {
                    if chance(self.r, 0.9) {
                        it.est = Some(size);
                        it.prio = Some(self.priority(kind, false));
                        if chance(self.r, 0.75) {
                            it.ms = self.pick_open_ms(repo);
                        }
                    }
                }
                Fate::QuickReview => {}
                Fate::Steeping => {
                    it.ms = self.pick_open_ms(repo);
                    // Not everything decided goes into a release that is already tight.
                    let tight = match self.ms_role(it.ms) {
                        Some(Role::AtRisk) => 0.3,
                        Some(Role::Hard) => 0.2,
                        _ => 0.0,
                    };
                    if chance(self.r, tight) {
                        it.ms = None;
                    }
                    if it.ms.is_none() {
                        it.fate = Fate::Triage;
                        it.triage_variant = 0;
                        it.est = Some(size);
                        it.prio = Some(self.priority(kind, false));
                    } else {
                        if chance(self.r, 0.02) {
                            it.native = true;
                        } else {
                            it.est = Some(size);
                        }
                        let urgent = self
                            .ms_role(it.ms)
                            .is_some_and(|r| matches!(r, Role::AtRisk | Role::Hard));
                        it.prio = Some(self.priority(kind, urgent));
                    }
                }
                Fate::Triage => {
                    let mut v =
                        weighted(self.r, &[35.0, 25.0, 15.0, 15.0, 10.0]).unwrap_or(0) as u8;
                    let ms = if matches!(v, 1 | 2) {
                        self.pick_open_ms(repo)
                    } else {
                        None
                    };
                    if ms.is_none() && matches!(v, 1 | 2) {
                        v = 0;
                    }
                    it.triage_variant = v;
                    it.ms = ms;
                    match v {
                        0 => {
                            it.est = Some(size);
                            it.prio = Some(self.priority(kind, false));
                        }
                        1 => it.prio = Some(self.priority(kind, false)),
                        2 => it.est = Some(size),
                        3 => it.prio = Some(self.priority(kind, urgent_kind)),
                        _ => {
                            if chance(self.r, 0.5) {
                                it.est = Some(size);
                            }
                        }
                    }
                }
                Fate::Diagnosis => {
                    it.needs_info = chance(self.r, 0.3);
                    it.needs_diag = !it.needs_info && chance(self.r, 0.08);
                }
            }
            // Work for an at-risk milestone tends to be big.
            if self.ms_role(it.ms) == Some(Role::AtRisk) && chance(self.r, 0.25) {
                it.size = (it.size + 1).min(self.c.hours.len().saturating_sub(1));
                if it.est.is_some() {
                    it.est = Some(it.size);
                }
            }
            // Open work that was re-estimated or re-prioritised in discussion.
            if !matches!(fate, Fate::Done | Fate::Review)
                && let Some(e) = it.est
                && chance(self.r, 0.07)
            {
                let other = if e == 0 || (e + 1 < self.c.hours.len() && chance(self.r, 0.5)) {
                    e + 1
                } else {
                    e - 1
                };
                it.est0 = Some(other);
            }
            if let Some(p) = it.prio
                && chance(self.r, 0.06)
            {
                // Mostly escalated (p/2 became p/1), sometimes the other way.
                let first = match p {
                    3 => 2,
                    0 => 1,
                    _ if chance(self.r, 0.7) => p + 1,
                    _ => p - 1,
                };
                it.prio0 = Some(first);
            }
            self.items.push(it);
        }
    }

    fn ms_role(&self, ms: Option<usize>) -> Option<Role> {
        ms.and_then(|m| self.c.ms.get(m)).map(|m| m.role)
    }

    /// A person for work in `repo`, by throughput, among `candidates` (weights zeroed by `skip`).
    fn pick_worker(
        &mut self,
        repo: usize,
        candidates: &[usize],
        skip: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let team = self.c.team;
        let w: Vec<f64> = candidates
            .iter()
            .map(|p| {
                team.people.get(*p).map_or(0.0, |x| {
                    let base = x.hours_per_week / x.factor;
                    let later = if x.started_by(self.c.today) { 1.0 } else { 0.4 };
                    if x.covers(repo) && !skip(*p) {
                        base * later
                    } else {
                        0.0
                    }
                })
            })
            .collect();
        weighted(self.r, &w).and_then(|i| candidates.get(i).copied())
    }

    /// The less loaded (relative to capacity) of two people drawn by throughput; adds the work to `load`.
    fn balanced(
        &mut self,
        repo: usize,
        candidates: &[usize],
        load: &mut [f64],
        hours: f64,
    ) -> Option<usize> {
        let team = self.c.team;
        let today = self.c.today;
        let mut best: Option<(f64, usize)> = None;
        for &p in candidates {
            let Some(person) = team.people.get(p).filter(|x| x.covers(repo)) else {
                continue;
            };
            // Someone who has not started yet takes less.
            let capacity = person.hours_per_week * if person.started_by(today) { 1.0 } else { 0.4 };
            let effort = hours * person.factor;
            let score = (load.get(p).copied().unwrap_or(0.0) + effort) / capacity
                * (0.75 + 0.5 * u(self.r));
            if best.is_none_or(|(b, _)| score < b) {
                best = Some((score, p));
            }
        }
        let (_, p) = best?;
        if let Some(l) = load.get_mut(p) {
            *l += hours * team.people.get(p).map_or(1.0, |x| x.factor);
        }
        Some(p)
    }

    fn assign(&mut self) {
        let team = self.c.team;
        let month_ago = self.c.today - Duration::days(30);
        let active: Vec<usize> = (0..team.people.len())
            .filter(|p| team.people.get(*p).is_some_and(|x| x.started_by(month_ago)))
            .collect();
        let everyone: Vec<usize> = (0..team.people.len()).collect();
        let mut in_review = vec![0usize; team.people.len()];
        let mut done_load = vec![0.0; team.people.len()];
        let mut queue_load = vec![0.0; team.people.len()];
        for i in 0..self.items.len() {
            let (fate, repo) = match self.items.get(i) {
                Some(it) => (it.fate, it.repo),
                None => continue,
            };
            let size_hours = self
                .items
                .get(i)
                .and_then(|it| self.c.hours.get(it.size))
                .copied()
                .unwrap_or(WORKDAY_HOURS);
            let who = match fate {
                Fate::Done => self
                    .balanced(repo, &active, &mut done_load, size_hours)
                    .or_else(|| active.first().copied()),
                Fate::Review => {
                    let counts = in_review.clone();
                    let p = self
                        .pick_worker(repo, &active, |p| counts.get(p).copied().unwrap_or(0) >= 3)
                        .or_else(|| self.pick_worker(repo, &active, |_| false))
                        .or_else(|| active.first().copied());
                    if let Some(c) = p.and_then(|p| in_review.get_mut(p)) {
                        *c += 1;
                    }
                    p
                }
                Fate::Steeping if chance(self.r, 0.85) => {
                    self.balanced(repo, &everyone, &mut queue_load, size_hours)
                }
                Fate::Triage => {
                    let v = self.items.get(i).map_or(0, |it| it.triage_variant);
                    if (v == 4 && self.items.get(i).is_some_and(|it| it.est.is_none()))
                        || chance(self.r, 0.25)
                    {
                        self.pick_worker(repo, &active, |_| false)
                    } else {
                        None
                    }
                }
                Fate::Diagnosis
                    if self.items.get(i).is_some_and(|it| it.needs_info) && chance(self.r, 0.3) =>
                {
                    self.c.leads.get(repo).copied()
                }
                _ => None,
            };
            // Someone else had it first.
            let before = match (fate, who) {
                (Fate::Done | Fate::Review | Fate::Steeping, Some(w)) if chance(self.r, 0.07) => {
                    self.pick_worker(repo, &active, |p| p == w)
                }
                _ => None,
            };
            if let Some(it) = self.items.get_mut(i) {
                it.assignee = who;
                it.assignee0 = before;
                // A triage issue with only an assignee must keep it (variant 4 without estimate).
            }
        }
        // Each active person has one or two issues in progress: their most urgent steeping work.
        let today = self.c.today;
        for p in 0..team.people.len() {
            if !team.people.get(p).is_some_and(|x| x.started_by(today)) {
                continue;
            }
            let mut mine: Vec<(u8, u8, usize)> = self
                .items
                .iter()
                .enumerate()
                .filter(|(_, it)| it.fate == Fate::Steeping && it.assignee == Some(p))
                .map(|(i, it)| {
                    let urgency = match self.c.ms.get(it.ms.unwrap_or(usize::MAX)).map(|m| m.role) {
                        Some(Role::AtRisk) => 0,
                        Some(Role::Hard) => 1,
                        _ => 2,
                    };
                    (urgency, it.prio.unwrap_or(2), i)
                })
                .collect();
            mine.sort_unstable();
            let take = if chance(self.r, 0.35) { 2 } else { 1 };
            for (_, _, i) in mine.into_iter().take(take) {
                let frac = 0.15 + 0.55 * u(self.r);
                if let Some(it) = self.items.get_mut(i) {
                    it.in_progress = true;
                    it.done_frac = frac;
                }
            }
        }
    }

    fn efforts(&mut self) {
        let last = self.c.hours.len().saturating_sub(1);
        for it in &mut self.items {
            let factor = it
                .assignee
                .and_then(|p| self.c.team.people.get(p))
                .map_or(1.0, |p| p.factor);
            let noise = (0.5 * normal(self.r)).exp();
            let hours = self.c.hours.get(it.size).copied().unwrap_or(WORKDAY_HOURS);
            it.effort = ((hours * factor * noise * 4.0).round() / 4.0).max(0.25);
            // Work in progress started a few days ago at most: a fraction, but no more than ~2.5 days of it.
            if it.in_progress {
                let day = it
                    .assignee
                    .and_then(|p| self.c.team.people.get(p))
                    .map_or(WORKDAY_HOURS, |p| p.hours_per_day());
                it.done_frac = it.done_frac.min(2.5 * day / it.effort);
            }
            // Work that turned out much bigger or smaller than estimated is often re-estimated on the way.
            if matches!(it.fate, Fate::Done | Fate::Review) && it.est.is_some() {
                let ratio = factor * noise;
                if ratio > 1.9 && it.size < last && chance(self.r, 0.6) {
                    it.est0 = Some(it.size);
                    it.est = Some(it.size + 1);
                } else if ratio < 0.5 && it.size > 0 && chance(self.r, 0.4) {
                    it.est0 = Some(it.size);
                    it.est = Some(it.size - 1);
                }
            }
        }
    }

    fn stream_effort(it: &Item) -> Option<f64> {
        match it.fate {
            Fate::Done | Fate::Review => Some(it.effort),
            Fate::Steeping if it.in_progress => Some(it.effort * it.done_frac),
            _ => None,
        }
    }

    /// Calendar days of history: six months, or more if someone's finished work needs more time.
    fn choose_window(&mut self) -> i64 {
        let team = self.c.team;
        let mut load = vec![0.0; team.people.len()];
        for it in &self.items {
            if let (Some(e), Some(p)) = (Self::stream_effort(it), it.assignee)
                && let Some(l) = load.get_mut(p)
            {
                *l += e;
            }
        }
        let mut days = 182;
        while days < 1500 {
            let start = self.c.today - Duration::days(days);
            let fits = team.people.iter().zip(&load).all(|(p, l)| {
                let n = start
                    .iter_days()
                    .take_while(|d| *d <= self.c.today)
                    .filter(|d| p.works_on(*d, &self.c.holidays))
                    .count();
                *l <= 0.0 || n as f64 * p.hours_per_day() * 0.88 >= *l
            });
            if fits {
                break;
            }
            days += 14;
        }
        self.c.window_start = self.c.today - Duration::days(days);
        days
    }

    /// Each person's work stream: closed work, then work in review, then work in progress, ending now.
    fn schedule_streams(&mut self) {
        let team = self.c.team;
        for p in 0..team.people.len() {
            let Some(person) = team.people.get(p) else {
                continue;
            };
            let mut done = Vec::new();
            let mut review = Vec::new();
            let mut going = Vec::new();
            for (i, it) in self.items.iter().enumerate() {
                if it.assignee != Some(p) {
                    continue;
                }
                match it.fate {
                    Fate::Done => done.push(i),
                    Fate::Review => review.push(i),
                    Fate::Steeping if it.in_progress => going.push(i),
                    _ => {}
                }
            }
            if done.is_empty() && review.is_empty() && going.is_empty() {
                continue;
            }
            shuffle(self.r, &mut done);
            shuffle(self.r, &mut review);
            let order: Vec<usize> = done.into_iter().chain(review).chain(going).collect();
            let holidays = &self.c.holidays;
            let mut pcal = Cal::new(self.c.window_start, self.c.today, |d| {
                person.works_on(d, holidays)
            });
            if pcal.days.is_empty() {
                pcal = Cal::new(self.c.window_start, self.c.today, |d| team.team_day(d));
            }
            let efforts: Vec<f64> = order
                .iter()
                .map(|i| {
                    self.items
                        .get(*i)
                        .and_then(Self::stream_effort)
                        .unwrap_or(1.0)
                })
                .collect();
            let total: f64 = efforts.iter().sum();
            let days = pcal.len();
            let mut rate = person.hours_per_day() * (0.55 + 0.3 * u(self.r));
            if total / rate > 0.95 * days {
                rate = total / (0.95 * days);
            }
            let idle = (days - total / rate).max(0.0);
            let trailing = order
                .last()
                .and_then(|i| self.items.get(*i))
                .is_some_and(|it| it.fate != Fate::Steeping);
            let gaps_n = order.len() + usize::from(trailing);
            // Idle time falls between finished pieces of work; what is still open was picked up recently.
            let gw: Vec<f64> = (0..gaps_n)
                .map(|k| {
                    let recent = order
                        .get(k)
                        .and_then(|i| self.items.get(*i))
                        .is_none_or(|it| it.fate != Fate::Done);
                    if recent {
                        0.02 + 0.1 * u(self.r)
                    } else {
                        0.2 + u(self.r)
                    }
                })
                .collect();
            let gsum: f64 = gw.iter().sum();
            let tracks = person.tracks;
            let mut x = 0.0;
            for (k, i) in order.iter().enumerate() {
                x += idle * gw.get(k).copied().unwrap_or(0.0) / gsum;
                let xs = x;
                x += efforts.get(k).copied().unwrap_or(0.0) / rate;
                let xe = if k + 1 == order.len() && !trailing {
                    days
                } else {
                    x.min(days)
                };
                self.work_item(*i, p, &pcal, xs, xe, rate, tracks);
            }
        }
    }

    /// Times, pull requests and tracked time of item `i`, worked by `p` from `xs` to `xe` on `pcal`.
    #[allow(clippy::too_many_arguments)]
    fn work_item(
        &mut self,
        i: usize,
        p: usize,
        pcal: &Cal,
        xs: f64,
        xe: f64,
        rate: f64,
        tracks: f64,
    ) {
        let now = self.c.now;
        let latest = now - Duration::minutes(1);
        let ws = pcal.start(xs).min(latest);
        let we = pcal.end(xe).min(latest).max(ws);
        let Some(it) = self.items.get(i) else { return };
        let (fate, repo, effort, in_progress) = (it.fate, it.repo, it.effort, it.in_progress);
        let title = pr_title(it);
        let logs = chance(self.r, if in_progress { tracks.max(0.5) } else { tracks });
        let mut tracked = Vec::new();
        if logs {
            self.tracked_entries(pcal, xs, xe, rate, p, &mut tracked);
        }
        let mut prs = Vec::new();
        let mut close = None;
        let mut reopen = None;
        let mut merger = None;
        if matches!(fate, Fate::Done | Fate::Review) {
            let repos = self.c.team.repos.len();
            let pr_repo = if repos > 1 && chance(self.r, 0.04) {
                if repo == 0 { 1 } else { 0 }
            } else {
                repo
            };
            // An abandoned first attempt.
            if xe - xs >= 1.0 && chance(self.r, if fate == Fate::Done { 0.05 } else { 0.1 }) {
                let created = pcal.start(xs + 0.5 * (xe - xs)).min(latest);
                let closed = self.c.between(self.r, created, we);
                prs.push(self.add_pr(
                    pr_repo,
                    format!("WIP: {title}"),
                    p,
                    created,
                    Some(closed),
                    false,
                ));
            }
            let created = (we + Duration::minutes(self.r.random_range(1..25))).min(latest);
            if fate == Fate::Review {
                prs.push(self.add_pr(pr_repo, title, p, created, None, false));
            } else {
                let reviewers: Vec<usize> = self
                    .c
                    .covering(repo, created.date_naive())
                    .into_iter()
                    .filter(|x| *x != p)
                    .collect();
                let m = pick(self.r, &reviewers).unwrap_or(p);
                merger = Some(m);
                let d = 0.05 + 2.4 * u(self.r).powi(2);
                let mut merged = self.c.after(created, d);
                if merged >= now - Duration::minutes(5) {
                    merged = self.c.between(self.r, created, now - Duration::minutes(5));
                }
                let first_close = merged + Duration::seconds(self.r.random_range(3..40));
                prs.push(self.add_pr(pr_repo, title.clone(), p, created, Some(merged), true));
                close = Some(first_close);
                // A regression: reopened, fixed again.
                let room = self.c.cal.pos(now) - self.c.cal.pos(first_close);
                if room > 12.0 && chance(self.r, 0.04) {
                    let reopened = self.c.after(first_close, 0.5 + 3.0 * u(self.r));
                    let created2 = self.c.after(reopened, 0.3 + 1.5 * u(self.r));
                    let merged2 = self.c.after(created2, 0.1 + 1.1 * u(self.r));
                    prs.push(self.add_pr(
                        pr_repo,
                        format!("Follow-up: {}", lower_first(&title)),
                        p,
                        created2,
                        Some(merged2),
                        true,
                    ));
                    let secs = ((effort * 0.15).max(0.5) * 3600.0 / 60.0).round() as u64 * 60;
                    let at = created2 - Duration::minutes(20);
                    if logs
                        && self
                            .c
                            .team
                            .people
                            .get(p)
                            .is_some_and(|x| x.works_on(at.date_naive(), &self.c.holidays))
                    {
                        tracked.push((at, secs, p));
                    }
                    reopen = Some((first_close, reopened));
                    close = Some(merged2 + Duration::seconds(self.r.random_range(3..40)));
                }
            }
        }
        if let Some(it) = self.items.get_mut(i) {
            it.ws = Some(ws);
            it.we = Some(we);
            it.tracked = tracked;
            it.prs = prs;
            it.close = close;
            it.reopen = reopen;
            it.merger = merger;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn add_pr(
        &mut self,
        repo: usize,
        title: String,
        author: usize,
        created: Time,
        closed: Option<Time>,
        merged: bool,
    ) -> usize {
        self.prs.push(Pr {
            repo,
            title,
            author,
            created,
            closed,
            merged,
        });
        self.prs.len() - 1
    }

    /// Time entries for work from `xs` to `xe` at `rate` hours a day: at most ten, each at the end of a stretch.
    fn tracked_entries(
        &mut self,
        pcal: &Cal,
        xs: f64,
        xe: f64,
        rate: f64,
        p: usize,
        out: &mut Vec<(Time, u64, usize)>,
    ) {
        let latest = self.c.now - Duration::minutes(1);
        let first = xs.floor().max(0.0) as usize;
        let last = (xe.ceil() as usize).max(first + 1);
        let mut days: Vec<(usize, f64)> = Vec::new();
        for k in first..last {
            let overlap = xe.min(k as f64 + 1.0) - xs.max(k as f64);
            if overlap > 1e-9 {
                days.push((k, overlap * rate));
            }
        }
        if days.is_empty() {
            return;
        }
        let chunk = days.len().div_ceil(10);
        let manual = chance(self.r, 0.3);
        for group in days.chunks(chunk) {
            let hours: f64 = group.iter().map(|d| d.1).sum();
            let Some(&(k_last, _)) = group.last() else {
                continue;
            };
            let mut at = pcal.end(xe.min(k_last as f64 + 1.0))
                + Duration::seconds(self.r.random_range(120..2400));
            if at > latest {
                at = latest - Duration::seconds(self.r.random_range(0..900));
            }
            let secs = hours * (0.85 + 0.3 * u(self.r)) * 3600.0;
            let step = if manual { 900.0 } else { 60.0 };
            let secs = ((secs / step).round() * step).max(step) as u64;
            out.push((at, secs, p));
        }
    }

    /// An author for an issue of `kind` in `repo` opened at `t`.
    fn author(&mut self, kind: Kind, repo: usize, t: Time) -> String {
        let x = u(self.r);
        let outsider = match kind {
            Kind::Bug => {
                if x < 0.3 {
                    Some(SUPPORT)
                } else if x < 0.4 {
                    Some(PM)
                } else {
                    None
                }
            }
            Kind::Feature | Kind::Ux if x < 0.45 => Some(PM),
            _ => None,
        };
        if let Some(o) = outsider {
            return o.to_owned();
        }
        let team = self.c.covering(repo, t.date_naive());
        pick(self.r, &team).map_or_else(|| PM.to_owned(), |p| self.c.name(p))
    }

    /// Creation time `lead` business days before `t`, never long before the window.
    fn created_before(&mut self, t: Time) -> Time {
        let lead = if chance(self.r, 0.3) {
            0.05 + 2.0 * u(self.r)
        } else {
            2.0 + 33.0 * u(self.r).powi(2)
        };
        let floor = self.c.cal.start(
            self.c
                .cal
                .pos(midnight(self.c.window_start - Duration::days(30)))
                + 0.1,
        );
        self.c.before(t, lead).max(floor).min(t)
    }

    fn place_closed(&mut self) {
        let now = self.c.now;
        for i in 0..self.items.len() {
            let Some(it) = self.items.get(i) else {
                continue;
            };
            let (fate, repo, kind) = (it.fate, it.repo, it.kind);
            match fate {
                Fate::Done | Fate::Review => {
                    let (Some(ws), close, has_est) = (it.ws, it.close, it.est.is_some()) else {
                        continue;
                    };
                    let created = self.created_before(ws);
                    let author = self.author(kind, repo, created);
                    let mut ms = self.items.get(i).and_then(|it| it.ms);
                    let mut ms_move = None;
                    if fate == Fate::Done && has_est {
                        let close = close.unwrap_or(now);
                        let eligible =
                            |m: &Ms| m.repo == repo && m.created + Duration::days(1) <= ws;
                        let closed_ms: Vec<usize> = (0..self.c.ms.len())
                            .filter(|m| {
                                self.c.ms.get(*m).is_some_and(|x| {
                                    x.role == Role::Closed
                                        && eligible(x)
                                        && close + Duration::hours(12) <= x.due
                                })
                            })
                            .collect();
                        let open_ms: Vec<usize> = (0..self.c.ms.len())
                            .filter(|m| {
                                self.c
                                    .ms
                                    .get(*m)
                                    .is_some_and(|x| x.role != Role::Closed && eligible(x))
                            })
                            .collect();
                        let missed: Vec<usize> = (0..self.c.ms.len())
                            .filter(|m| {
                                self.c.ms.get(*m).is_some_and(|x| {
                                    x.role == Role::Closed
                                        && eligible(x)
                                        && ws + Duration::days(5) < x.due
                                        && close > x.sweep
                                })
                            })
                            .collect();
                        if let Some(m) = pick(self.r, &closed_ms).filter(|_| chance(self.r, 0.65)) {
                            ms = Some(m);
                        } else if let Some(from) =
                            pick(self.r, &missed).filter(|_| chance(self.r, 0.5))
                        {
                            let sweep = self.c.ms.get(from).map_or(now, |x| x.sweep);
                            let next: Vec<usize> = open_ms
                                .iter()
                                .copied()
                                .filter(|m| self.c.ms_created(*m) < sweep)
                                .collect();
                            ms = pick(self.r, &next);
                            ms_move = Some(Move {
                                from,
                                set_at: None,
                                moved_at: sweep + Duration::minutes(self.r.random_range(5..50)),
                            });
                        } else if let Some(m) =
                            pick(self.r, &open_ms).filter(|_| chance(self.r, 0.4))
                        {
                            ms = Some(m);
                        }
                    }
                    if let Some(it) = self.items.get_mut(i) {
                        it.created = created;
                        it.author = author;
                        it.ms = ms;
                        it.ms_move = ms_move;
                    }
                }
                Fate::Dropped => {
                    let start = midnight(self.c.window_start);
                    let end = self.c.before(now, 1.0);
                    let created = self.c.between(self.r, start, end);
                    let close = self
                        .c
                        .after(created, 0.05 + 12.0 * u(self.r).powi(2))
                        .min(now - Duration::minutes(30));
                    let author = self.author(kind, repo, created);
                    if let Some(it) = self.items.get_mut(i) {
                        it.created = created;
                        it.close = Some(close);
                        it.author = author;
                    }
                }
                _ => {}
            }
        }
    }

    fn place_open(&mut self) {
        let now = self.c.now;
        let window_bd = self.c.cal.pos(now) - self.c.cal.pos(midnight(self.c.window_start));
        for i in 0..self.items.len() {
            let Some(it) = self.items.get(i) else {
                continue;
            };
            let (fate, repo, kind, ws, in_progress) =
                (it.fate, it.repo, it.kind, it.ws, it.in_progress);
            let created = match fate {
                Fate::Steeping if in_progress => match ws {
                    Some(ws) => self.created_before(ws),
                    None => self.c.before(now, 5.0),
                },
                Fate::Steeping => self
                    .c
                    .before(now, 2.0 + 0.7 * window_bd * u(self.r).powf(0.9)),
                Fate::Triage => self.c.before(now, 0.3 + 45.0 * u(self.r).powi(2)),
                Fate::Diagnosis => {
                    if chance(self.r, 0.75) {
                        self.c.before(now, 0.05 + 12.0 * u(self.r))
                    } else {
                        self.c.before(now, 12.0 + 30.0 * u(self.r))
                    }
                }
                Fate::QuickReview => self.c.before(now, 0.5 + 8.0 * u(self.r)),
                _ => continue,
            };
            let author = self.author(kind, repo, created);
            let mut ms_move = None;
            let mut ms = self.items.get(i).and_then(|it| it.ms);
            let variant = self.items.get(i).map_or(0, |it| it.triage_variant);
            if matches!(fate, Fate::Steeping | Fate::Triage) {
                let closed_ms: Vec<usize> = (0..self.c.ms.len())
                    .filter(|m| {
                        self.c.ms.get(*m).is_some_and(|x| {
                            x.role == Role::Closed
                                && x.repo == repo
                                && created + Duration::days(10) <= x.due
                                && ms.is_none_or(|f| self.c.ms_created(f) < x.sweep)
                        })
                    })
                    .collect();
                let at_risk: Vec<usize> = (0..self.c.ms.len())
                    .filter(|m| {
                        self.c.ms.get(*m).is_some_and(|x| {
                            x.role == Role::AtRisk
                                && x.repo == repo
                                && Some(*m) != ms
                                && ms.is_some()
                        })
                    })
                    .collect();
                let can_drop = fate == Fate::Triage && variant == 0;
                if (ms.is_some() || can_drop)
                    && let Some(from) = pick(self.r, &closed_ms).filter(|_| chance(self.r, 0.35))
                {
                    let (due, sweep, mc) = self
                        .c
                        .ms
                        .get(from)
                        .map_or((now, now, now), |x| (x.due, x.sweep, x.created));
                    let set_from = created.max(mc + Duration::hours(1));
                    let set_at = self.c.between(self.r, set_from, due - Duration::hours(2));
                    ms_move = Some(Move {
                        from,
                        set_at: Some(set_at),
                        moved_at: sweep + Duration::minutes(self.r.random_range(5..50)),
                    });
                } else if let Some(from) = pick(self.r, &at_risk).filter(|_| chance(self.r, 0.2)) {
                    let mc = self.c.ms_created(from);
                    let set_from = created.max(mc + Duration::hours(1));
                    let set_at =
                        self.c
                            .between(self.r, set_from, self.c.before(now, 3.0).max(set_from));
                    let moved_at = self.c.between(self.r, set_at, now - Duration::hours(1));
                    ms_move = Some(Move {
                        from,
                        set_at: Some(set_at),
                        moved_at,
                    });
                } else if can_drop && chance(self.r, 0.2) {
                    let open = self.c.open_ms(repo);
                    if let Some(from) = pick(self.r, &open) {
                        let set_from = created.max(self.c.ms_created(from) + Duration::hours(1));
                        let set_at = self.c.between(self.r, set_from, now - Duration::hours(3));
                        let moved_at = self.c.between(self.r, set_at, now - Duration::hours(1));
                        ms_move = Some(Move {
                            from,
                            set_at: Some(set_at),
                            moved_at,
                        });
                        ms = None;
                    }
                }
            }
            // Closed as won't fix, then reopened.
            let wontfix_reopen = if matches!(fate, Fate::Steeping | Fate::Triage)
                && !in_progress
                && chance(self.r, 0.03)
            {
                let c1 = self.c.between(self.r, created, now - Duration::hours(4));
                let c2 = self.c.between(self.r, c1, now - Duration::hours(1));
                Some((c1, c2))
            } else {
                None
            };
            let mut quick_pr = None;
            if fate == Fate::QuickReview {
                let fixers = self.c.covering(repo, created.date_naive());
                let p = pick(self.r, &fixers).unwrap_or(0);
                let at = self.c.between(
                    self.r,
                    created + Duration::minutes(30),
                    now - Duration::minutes(30),
                );
                let title = self.items.get(i).map(pr_title).unwrap_or_default();
                quick_pr = Some(self.add_pr(repo, title, p, at, None, false));
            }
            if let Some(it) = self.items.get_mut(i) {
                it.created = created;
                it.author = author;
                it.ms = ms;
                it.ms_move = ms_move;
                it.wontfix_reopen = wontfix_reopen;
                if let Some(pr) = quick_pr {
                    it.prs = vec![pr];
                }
            }
        }
        // Duplicates point at an earlier issue of the same repository.
        for i in 0..self.items.len() {
            let Some(it) = self.items.get(i) else {
                continue;
            };
            if !(it.fate == Fate::Dropped && it.dup) {
                continue;
            }
            let (repo, created) = (it.repo, it.created);
            let earlier: Vec<usize> = self
                .items
                .iter()
                .enumerate()
                .filter(|(j, o)| *j != i && o.repo == repo && o.created < created)
                .map(|(j, _)| j)
                .collect();
            let target = pick(self.r, &earlier);
            if let Some(it) = self.items.get_mut(i) {
                it.dup_of = target;
                it.dup = target.is_some();
            }
        }
    }

    /// Chains of two to five open issues, within a milestone or across repositories, oldest blocker first.
    fn plan_dependencies(&mut self) {
        let now = self.c.now;
        let stage = |it: &Item| match it.fate {
            Fate::Review => 0,
            Fate::Steeping if it.in_progress => 1,
            Fate::Steeping => 2,
            _ => 3,
        };
        let mut pool: Vec<usize> = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, it)| matches!(it.fate, Fate::Review | Fate::Steeping | Fate::Triage))
            .map(|(i, _)| i)
            .collect();
        shuffle(self.r, &mut pool);
        let done: Vec<usize> = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, it)| it.fate == Fate::Done)
            .map(|(i, _)| i)
            .collect();
        let chains = pool.len() / 10;
        let mut used = vec![false; self.items.len()];
        for _ in 0..chains {
            let len = 2 + weighted(self.r, &[40.0, 30.0, 20.0, 10.0]).unwrap_or(0);
            let free: Vec<usize> = pool
                .iter()
                .copied()
                .filter(|i| !used.get(*i).copied().unwrap_or(true))
                .collect();
            let Some(seed) = pick(self.r, &free) else {
                break;
            };
            let seed_ms = self.items.get(seed).and_then(|it| it.ms);
            let same = seed_ms.is_some() && chance(self.r, 0.7);
            let mut chain = vec![seed];
            for i in free {
                if chain.len() >= len {
                    break;
                }
                if i == seed {
                    continue;
                }
                let ok = if same {
                    self.items.get(i).and_then(|it| it.ms) == seed_ms
                } else {
                    self.items.get(i).map(|it| it.repo)
                        != self
                            .items
                            .get(*chain.last().unwrap_or(&seed))
                            .map(|it| it.repo)
                };
                if ok {
                    chain.push(i);
                }
            }
            if chain.len() < 2 {
                continue;
            }
            for i in &chain {
                if let Some(x) = used.get_mut(*i) {
                    *x = true;
                }
            }
            chain.sort_by_key(|i| {
                self.items
                    .get(*i)
                    .map_or((9, Time::default()), |it| (stage(it), it.created))
            });
            // Sometimes the first blocker waits on work that is already done.
            if chance(self.r, 0.15)
                && let Some(&head) = chain.first()
            {
                let repo = self.items.get(head).map_or(0, |it| it.repo);
                let cands: Vec<usize> = done
                    .iter()
                    .copied()
                    .filter(|d| self.items.get(*d).is_some_and(|x| x.repo == repo))
                    .collect();
                if let Some(d) = pick(self.r, &cands) {
                    chain.insert(0, d);
                }
            }
            for w in chain.windows(2) {
                let &[a, b] = w else { continue };
                let from = self
                    .items
                    .get(a)
                    .map_or(now, |x| x.created)
                    .max(self.items.get(b).map_or(now, |x| x.created));
                let at = self.c.between(
                    self.r,
                    from + Duration::minutes(1),
                    now - Duration::minutes(1),
                );
                if let Some(it) = self.items.get_mut(b) {
                    it.deps.push((a, at));
                }
            }
        }
        // A dependency added by mistake and removed again.
        let dependents: Vec<usize> = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, it)| !it.deps.is_empty())
            .map(|(i, _)| i)
            .collect();
        for i in dependents {
            if !chance(self.r, 0.1) {
                continue;
            }
            let Some(it) = self.items.get(i) else {
                continue;
            };
            let created = it.created;
            let taken: Vec<usize> = it.deps.iter().map(|d| d.0).collect();
            let cands: Vec<usize> = pool
                .iter()
                .copied()
                .filter(|j| *j != i && !taken.contains(j))
                .collect();
            if let Some(x) = pick(self.r, &cands) {
                let from = created.max(self.items.get(x).map_or(now, |o| o.created));
                let t1 = self.c.between(
                    self.r,
                    from + Duration::minutes(1),
                    now - Duration::minutes(10),
                );
                let t2 = self.c.between(
                    self.r,
                    t1 + Duration::minutes(1),
                    now - Duration::minutes(2),
                );
                if let Some(it) = self.items.get_mut(i) {
                    it.dep_churn = Some((x, t1, t2));
                }
            }
        }
    }

    fn close_milestones(&mut self) {
        let now = self.c.now;
        for m in 0..self.c.ms.len() {
            let Some(ms) = self.c.ms.get(m) else { continue };
            if ms.role != Role::Closed {
                continue;
            }
            let last = self
                .items
                .iter()
                .filter(|it| it.ms == Some(m))
                .filter_map(|it| it.close)
                .max();
            let base = last.map_or(ms.sweep, |l| l.max(ms.sweep));
            let closed = (base + Duration::minutes(self.r.random_range(60..240)))
                .min(now - Duration::hours(1));
            if let Some(ms) = self.c.ms.get_mut(m) {
                ms.closed = Some(closed);
            }
        }
    }

    /// Every change to item `i` as a timed action.
    fn actions(&mut self, i: usize) -> Vec<Action> {
        let Some(it) = self.items.get(i) else {
            return Vec::new();
        };
        let c = &self.c;
        let r = &mut *self.r;
        let now = c.now;
        let latest = now - Duration::minutes(1);
        let t0 = it.created;
        let lead = c.name(c.leads.get(it.repo).copied().unwrap_or(0));
        let triager = |r: &mut Rng| {
            if chance(r, 0.6) {
                PM.to_owned()
            } else {
                lead.clone()
            }
        };
        let mut acts: Vec<Action> = Vec::new();
        let mut push = |at: Time, user: &str, act: Act| {
            acts.push(Action {
                at: at.clamp(t0, latest.max(t0)),
                user: user.to_owned(),
                act,
            })
        };
        let end = match it.fate {
            Fate::Done | Fate::Review => it.ws.unwrap_or(latest),
            Fate::Dropped => it.close.unwrap_or(latest),
            Fate::Steeping if it.in_progress => it.ws.unwrap_or(latest),
            _ => latest,
        };
        let worker = it.assignee.map(|p| c.name(p));
        // The assignee acts on the issue only once they have joined; before that the lead does.
        let started = |t: Time| {
            it.assignee
                .and_then(|p| c.team.people.get(p))
                .is_some_and(|p| p.started_by(t.date_naive()))
        };
        // Opened, with the labels the author set.
        let kinds: Vec<&str> = std::iter::once(it.kind.label()).chain(it.extra).collect();
        if it.kind_at_creation {
            for k in &kinds {
                push(t0, &it.author, Act::Label((*k).to_owned()));
            }
        }
        if it.retitle {
            let t = c.between(r, t0, c.after(t0, 2.0).min(end));
            push(t, &lead, Act::Retitle);
        }
        let mut slots: Vec<Time> = (0..4).map(|_| c.between(r, t0, end)).collect();
        slots.sort_unstable();
        let slot = |k: usize| slots.get(k).copied().unwrap_or(t0);
        if !it.kind_at_creation
            && (it.prio.is_some()
                || it.est.is_some()
                || it.fate != Fate::Diagnosis
                || chance(r, 0.5))
        {
            let who = triager(r);
            for k in &kinds {
                push(slot(0), &who, Act::Label((*k).to_owned()));
            }
        }
        if let Some(p) = it.prio {
            let who = triager(r);
            let first = it.prio0.unwrap_or(p);
            push(slot(0), &who, Act::Label(format!("p/{first}")));
            if first != p {
                let t = c.between(r, slot(0), it.we.unwrap_or(end).max(end));
                push(t, PM, Act::Unlabel(format!("p/{first}")));
                push(t, PM, Act::Label(format!("p/{p}")));
            }
        }
        let est_label = |e: usize| c.est_labels.get(e).cloned().unwrap_or_default();
        if let Some(e) = it.est {
            let who = worker
                .clone()
                .filter(|_| started(slot(1)))
                .unwrap_or_else(|| lead.clone());
            let first = it.est0.unwrap_or(e);
            push(slot(1), &who, Act::Label(est_label(first)));
            if first != e {
                let t = match (it.ws, it.we) {
                    (Some(a), Some(b)) => c.between(r, a, b),
                    _ => c.between(r, slot(1), end.max(latest)),
                };
                push(t, &who, Act::Unlabel(est_label(first)));
                push(t, &who, Act::Label(est_label(e)));
                push(
                    t,
                    &who,
                    Act::Comment(Text::Plain(words::reestimate(e > first).to_owned())),
                );
            }
        }
        match it.ms_move {
            Some(mv) => {
                let set = mv
                    .set_at
                    .unwrap_or_else(|| slot(2).max(c.ms_created(mv.from) + Duration::hours(1)));
                push(set, PM, Act::Ms(Some(mv.from)));
                push(mv.moved_at, PM, Act::Ms(it.ms));
                let from_title = c.ms.get(mv.from).map_or("", |m| m.title.as_str());
                let text = match it.ms.and_then(|m| c.ms.get(m)) {
                    Some(to) if c.ms.get(mv.from).is_some_and(|f| f.role == Role::Closed) => {
                        format!("Didn't make {from_title}; moving to {}.", to.title)
                    }
                    Some(to) => format!(
                        "Descoped from {from_title} to {} to keep the date.",
                        to.title
                    ),
                    None => format!("Taking this out of {from_title} until we know more."),
                };
                push(mv.moved_at, PM, Act::Comment(Text::Plain(text)));
            }
            None => {
                if let Some(m) = it.ms {
                    let t = slot(2).max(c.ms_created(m) + Duration::hours(1));
                    push(t, &triager(r), Act::Ms(Some(m)));
                }
            }
        }
        if let Some(a) = it.assignee {
            let name = c.name(a);
            let t = match it.ws {
                Some(ws) if chance(r, 0.5) => ws - Duration::minutes(r.random_range(1..30)),
                _ => slot(3),
            };
            match it.assignee0 {
                Some(b) => {
                    let t0a = slot(3).min(t);
                    push(t0a, &lead, Act::Assign(b));
                    let t1 = c.between(r, t0a, t.max(t0a));
                    push(t1, &lead, Act::Unassign(b));
                    push(t1, &lead, Act::Assign(a));
                }
                None => {
                    let who = if chance(r, 0.5) && started(t) {
                        name.clone()
                    } else {
                        lead.clone()
                    };
                    push(t, &who, Act::Assign(a));
                }
            }
        }
        // Discussion.
        if chance(r, 0.5) {
            let t = c.between(r, t0, end.max(t0));
            let people: Vec<usize> = c
                .covering(it.repo, t.date_naive())
                .into_iter()
                .filter(|p| c.team.people.get(*p).is_none_or(|x| x.name != it.author))
                .collect();
            let who = pick(r, &people).map_or_else(|| lead.clone(), |p| c.name(p));
            push(
                t,
                &who,
                Act::Comment(Text::Plain(words::question(r, it.kind).to_owned())),
            );
        }
        if let (Some(ws), Some(we), Some(w)) = (it.ws, it.we, &worker)
            && chance(r, 0.5)
        {
            let t = c.between(r, ws, we);
            push(
                t,
                w,
                Act::Comment(Text::Plain(words::progress(r).to_owned())),
            );
        }
        // Pull requests, closing and reopening.
        for (k, pr_i) in it.prs.iter().enumerate() {
            let Some(pr) = self.prs.get(*pr_i) else {
                continue;
            };
            let author = c.name(pr.author);
            push(pr.created, &author, Act::PullRef(*pr_i));
            if k == 0 && chance(r, 0.4) {
                push(
                    pr.created + Duration::minutes(2),
                    &author,
                    Act::Comment(Text::Pr("PR is up: ", *pr_i, ".")),
                );
            }
            if !pr.merged
                && let Some(closed) = pr.closed
            {
                push(
                    closed,
                    &author,
                    Act::Comment(Text::Pr("Closing ", *pr_i, ", going another way.")),
                );
            }
        }
        let merger = it.merger.map_or_else(|| lead.clone(), |m| c.name(m));
        match it.fate {
            Fate::Done => {
                if let Some((first, reopened)) = it.reopen {
                    push(first, &merger, Act::Close);
                    let who = if chance(r, 0.5) {
                        SUPPORT.to_owned()
                    } else {
                        it.author.clone()
                    };
                    push(reopened, &who, Act::Reopen);
                    push(reopened, &who, Act::Label("regression".to_owned()));
                    push(
                        reopened,
                        &who,
                        Act::Comment(Text::Plain(
                            "Still happening for some users after the fix, reopening.".to_owned(),
                        )),
                    );
                }
                if let Some(close) = it.close {
                    push(close, &merger, Act::Close);
                    if chance(r, 0.4) {
                        let t = c.between(r, close, c.after(close, 2.0).min(latest));
                        push(
                            t,
                            &it.author,
                            Act::Comment(Text::Plain(words::shipped(r).to_owned())),
                        );
                    }
                }
            }
            Fate::Dropped => {
                let t = it.close.unwrap_or(latest);
                let who = triager(r);
                if let Some(d) = it.dup_of {
                    push(t, &who, Act::Label("duplicate".to_owned()));
                    push(t, &who, Act::Comment(Text::Dup(d)));
                } else {
                    push(t, &who, Act::Label("wontfix".to_owned()));
                    push(
                        t,
                        &who,
                        Act::Comment(Text::Plain(words::wontfix(r).to_owned())),
                    );
                }
                push(t, &who, Act::Close);
            }
            Fate::Diagnosis => {
                if it.needs_info {
                    let t = c.between(r, t0, latest);
                    push(t, &lead, Act::Label("needs-info".to_owned()));
                    push(
                        t,
                        &lead,
                        Act::Comment(Text::Plain(words::needs_info(&it.author))),
                    );
                    if let Some(a) = it.assignee {
                        push(t, &lead, Act::Assign(a));
                    }
                    if chance(r, 0.4) {
                        let t2 = c.between(r, t, latest);
                        push(
                            t2,
                            &it.author,
                            Act::Comment(Text::Plain(words::info_reply(r).to_owned())),
                        );
                    }
                }
                if it.needs_diag {
                    let t = c.between(r, t0, latest);
                    push(t, &lead, Act::Label("needs-diagnosis".to_owned()));
                }
            }
            _ => {}
        }
        if let Some((c1, c2)) = it.wontfix_reopen {
            let who = triager(r);
            push(c1, &who, Act::Label("wontfix".to_owned()));
            push(c1, &who, Act::Close);
            push(c2, &it.author, Act::Reopen);
            push(c2, &it.author, Act::Unlabel("wontfix".to_owned()));
            push(
                c2,
                &it.author,
                Act::Comment(Text::Plain(
                    "Reopening: customers keep asking for this.".to_owned(),
                )),
            );
        }
        for (d, at) in &it.deps {
            push(*at, &triager(r), Act::AddDep(*d));
        }
        if let Some((x, t1, t2)) = it.dep_churn {
            let who = triager(r);
            push(t1, &who, Act::AddDep(x));
            push(t2, &who, Act::RemoveDep(x));
        }
        acts.sort_by_key(|a| a.at);
        acts
    }

    /// Replays the actions, dropping those that change nothing, into events and the final state.
    fn replay(acts: Vec<Action>) -> Replayed {
        let mut out = Replayed {
            events: Vec::new(),
            comments: Vec::new(),
            labels: BTreeSet::new(),
            ms: None,
            assignees: BTreeSet::new(),
            closed_at: None,
            deps: BTreeSet::new(),
        };
        for a in acts {
            let ev = match a.act {
                Act::Label(l) => out.labels.insert(l.clone()).then_some(Ev::Label(l, false)),
                Act::Unlabel(l) => out.labels.remove(&l).then_some(Ev::Label(l, true)),
                Act::Ms(m) => (m != out.ms).then(|| {
                    let old = std::mem::replace(&mut out.ms, m);
                    Ev::Ms(m, old)
                }),
                Act::Assign(p) => out.assignees.insert(p).then_some(Ev::Assign(p, false)),
                Act::Unassign(p) => out.assignees.remove(&p).then_some(Ev::Assign(p, true)),
                Act::Close => out.closed_at.is_none().then(|| {
                    out.closed_at = Some(a.at);
                    Ev::Close
                }),
                Act::Reopen => out.closed_at.take().map(|_| Ev::Reopen),
                Act::PullRef(pr) => Some(Ev::PullRef(pr)),
                Act::AddDep(d) => out.deps.insert(d).then_some(Ev::Dep(d, false)),
                Act::RemoveDep(d) => out.deps.remove(&d).then_some(Ev::Dep(d, true)),
                Act::Retitle => Some(Ev::Retitle),
                Act::Comment(t) => {
                    out.comments.push((a.at, a.user.clone(), t));
                    None
                }
            };
            if let Some(ev) = ev {
                out.events.push((a.at, a.user, ev));
            }
        }
        out
    }

    fn build(&mut self, config: &Config) -> Snapshot {
        let now = self.c.now;
        let team = self.c.team;
        let replayed: Vec<Replayed> = (0..self.items.len())
            .map(|i| Self::replay(self.actions(i)))
            .collect();

        // Numbers: issues and pull requests share one sequence per repository, in creation order.
        let repos = team.repos.len();
        let mut creations: Vec<Vec<(Time, u8, usize)>> = vec![Vec::new(); repos];
        for (i, it) in self.items.iter().enumerate() {
            if let Some(v) = creations.get_mut(it.repo) {
                v.push((it.created, 0, i));
            }
        }
        for (k, pr) in self.prs.iter().enumerate() {
            if let Some(v) = creations.get_mut(pr.repo) {
                v.push((pr.created, 1, k));
            }
        }
        let mut item_no = vec![0u64; self.items.len()];
        let mut pr_no = vec![0u64; self.prs.len()];
        for v in &mut creations {
            v.sort_unstable();
            for (n, (_, kind, idx)) in v.iter().enumerate() {
                let slot = if *kind == 0 {
                    item_no.get_mut(*idx)
                } else {
                    pr_no.get_mut(*idx)
                };
                if let Some(s) = slot {
                    *s = n as u64 + 1;
                }
            }
        }
        let key = |i: usize| -> IssueKey {
            let repo = self
                .items
                .get(i)
                .and_then(|it| team.repos.get(it.repo))
                .cloned()
                .unwrap_or_else(|| RepoName::new("acme", "x"));
            repo.issue(item_no.get(i).copied().unwrap_or(0))
        };
        let pr_key = |k: usize| -> IssueKey {
            let repo = self
                .prs
                .get(k)
                .and_then(|p| team.repos.get(p.repo))
                .cloned()
                .unwrap_or_else(|| RepoName::new("acme", "x"));
            repo.issue(pr_no.get(k).copied().unwrap_or(0))
        };

        // Ids: comments and events share Gitea's comment sequence; tracked times have their own.
        let mut order: Vec<(Time, usize, usize, bool)> = Vec::new();
        for (i, rp) in replayed.iter().enumerate() {
            order.extend(
                rp.events
                    .iter()
                    .enumerate()
                    .map(|(k, e)| (e.0, i, k, false)),
            );
            order.extend(
                rp.comments
                    .iter()
                    .enumerate()
                    .map(|(k, e)| (e.0, i, k, true)),
            );
        }
        order.sort_unstable();
        let mut event_ids: Vec<Vec<u64>> =
            replayed.iter().map(|rp| vec![0; rp.events.len()]).collect();
        let mut comment_ids: Vec<Vec<u64>> = replayed
            .iter()
            .map(|rp| vec![0; rp.comments.len()])
            .collect();
        for (n, (_, i, k, is_comment)) in order.iter().enumerate() {
            let ids = if *is_comment {
                comment_ids.get_mut(*i)
            } else {
                event_ids.get_mut(*i)
            };
            if let Some(slot) = ids.and_then(|v| v.get_mut(*k)) {
                *slot = n as u64 + 1;
            }
        }
        let mut torder: Vec<(Time, usize, usize)> = Vec::new();
        for (i, it) in self.items.iter().enumerate() {
            torder.extend(it.tracked.iter().enumerate().map(|(k, t)| (t.0, i, k)));
        }
        torder.sort_unstable();
        let mut tracked_ids: Vec<Vec<u64>> = self
            .items
            .iter()
            .map(|it| vec![0; it.tracked.len()])
            .collect();
        for (n, (_, i, k)) in torder.iter().enumerate() {
            if let Some(slot) = tracked_ids.get_mut(*i).and_then(|v| v.get_mut(*k)) {
                *slot = n as u64 + 1;
            }
        }

        let ms_id = |m: usize| self.c.ms.get(m).map_or(0, |x| x.id);
        let mut issues = BTreeMap::new();
        for (i, (it, rp)) in self.items.iter().zip(&replayed).enumerate() {
            let mut timeline = Vec::with_capacity(rp.events.len());
            for (k, (at, user, ev)) in rp.events.iter().enumerate() {
                let id = event_ids
                    .get(i)
                    .and_then(|v| v.get(k))
                    .copied()
                    .unwrap_or(0);
                let kind = match ev {
                    Ev::Label(..) => "label",
                    Ev::Ms(..) => "milestone",
                    Ev::Assign(..) => "assignees",
                    Ev::Close => "close",
                    Ev::Reopen => "reopen",
                    Ev::PullRef(_) => "pull_ref",
                    Ev::Dep(_, false) => "add_dependency",
                    Ev::Dep(_, true) => "remove_dependency",
                    Ev::Retitle => "change_title",
                };
                let mut e = TimelineEvent::new(id, crate::domain::EventKind::from(kind), *at, user);
                match ev {
                    Ev::Label(l, removed) => {
                        e.label = Some(l.clone());
                        e.removed = *removed;
                    }
                    Ev::Ms(new, old) => {
                        e.milestone = new.map(ms_id);
                        e.old_milestone = old.map(ms_id);
                    }
                    Ev::Assign(p, removed) => {
                        e.assignee = Some(self.c.name(*p));
                        e.removed = *removed;
                    }
                    Ev::PullRef(pr) => e.pull = Some(pr_key(*pr)),
                    Ev::Dep(d, _) => e.dependency = Some(key(*d)),
                    Ev::Retitle => {
                        e.old_title = Some(it.title.rough.clone());
                        e.new_title = Some(it.title.title.clone());
                    }
                    Ev::Close | Ev::Reopen => {}
                }
                timeline.push(e);
            }
            let own_repo = it.repo;
            let pr_ref = |k: usize| {
                let n = pr_no.get(k).copied().unwrap_or(0);
                match self.prs.get(k) {
                    Some(p) if p.repo != own_repo => format!(
                        "{}#{n}",
                        team.repos
                            .get(p.repo)
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    ),
                    _ => format!("#{n}"),
                }
            };
            let mut comments = Vec::with_capacity(rp.comments.len());
            for (k, (at, user, text)) in rp.comments.iter().enumerate() {
                let body = match text {
                    Text::Plain(s) => s.clone(),
                    Text::Pr(prefix, pr, suffix) => format!("{prefix}{}{suffix}", pr_ref(*pr)),
                    Text::Dup(d) => {
                        format!("Duplicate of #{}.", item_no.get(*d).copied().unwrap_or(0))
                    }
                };
                comments.push(Comment {
                    id: comment_ids
                        .get(i)
                        .and_then(|v| v.get(k))
                        .copied()
                        .unwrap_or(0),
                    user: user.clone(),
                    created_at: *at,
                    updated_at: *at,
                    body,
                });
            }
            let tracked_times: Vec<TrackedTime> = it
                .tracked
                .iter()
                .enumerate()
                .map(|(k, (at, secs, p))| TrackedTime {
                    id: tracked_ids
                        .get(i)
                        .and_then(|v| v.get(k))
                        .copied()
                        .unwrap_or(0),
                    user: self.c.name(*p),
                    created: *at,
                    time: *secs,
                })
                .collect();
            let mut pull_requests: Vec<LinkedPull> = it
                .prs
                .iter()
                .filter_map(|k| self.prs.get(*k).map(|p| (k, p)))
                .map(|(k, p)| LinkedPull {
                    number: pr_no.get(*k).copied().unwrap_or(0),
                    repository: (p.repo != it.repo)
                        .then(|| team.repos.get(p.repo).cloned())
                        .flatten(),
                    title: p.title.clone(),
                    state: if p.closed.is_some() {
                        OpenState::Closed
                    } else {
                        OpenState::Open
                    },
                    merged: p.merged,
                    created_at: p.created,
                    closed_at: p.closed,
                })
                .collect();
            pull_requests.sort_by(|a, b| (a.number, &a.repository).cmp(&(b.number, &b.repository)));
            let mut assignees: Vec<String> = rp.assignees.iter().map(|p| self.c.name(*p)).collect();
            assignees.sort();
            let mut depends_on: Vec<IssueKey> = rp.deps.iter().map(|d| key(*d)).collect();
            depends_on.sort();
            let updated_at = std::iter::once(it.created)
                .chain(timeline.iter().map(|e| e.created_at))
                .chain(comments.iter().map(|c| c.updated_at))
                .chain(tracked_times.iter().map(|t| t.created))
                .max()
                .unwrap_or(it.created)
                .min(now.max(it.created));
            let time_estimate = if it.native {
                (self.c.hours.get(it.size).copied().unwrap_or(WORKDAY_HOURS) * 3600.0) as u64
            } else {
                0
            };
            let issue = Issue {
                number: item_no.get(i).copied().unwrap_or(0),
                title: it.title.title.clone(),
                state: if rp.closed_at.is_some() {
                    OpenState::Closed
                } else {
                    OpenState::Open
                },
                author: it.author.clone(),
                created_at: it.created,
                updated_at,
                closed_at: rp.closed_at,
                assignees,
                labels: rp.labels.iter().cloned().collect(),
                milestone: rp.ms.map(ms_id),
                time_estimate,
                depends_on,
                body: it.body.clone(),
                comments,
                timeline,
                tracked_times,
                outside_blockers: Vec::new(),
                hidden_blockers: 0,
                pull_requests,
            };
            issues.insert(key(i), issue);
        }

        // Labels: every repository has the same set, CommiTea's and the ordinary ones.
        let ladder = &config.estimates.ladder;
        let mut labels = BTreeMap::new();
        let per_repo = ladder.len() + PRIORITY_LABELS.len() + ORDINARY_LABELS.len();
        for (r, repo) in team.repos.iter().enumerate() {
            let mut v = Vec::with_capacity(per_repo);
            let mut id = (r * per_repo) as u64;
            let mut add = |name: String, color: &str, description: String| {
                id += 1;
                v.push(Label {
                    id,
                    name,
                    color: color.to_owned(),
                    description,
                });
            };
            for (k, e) in ladder.iter().enumerate() {
                let color = EST_COLORS.get(k).copied().unwrap_or("1b5e2b");
                add(
                    e.label(),
                    color,
                    format!(
                        "Estimate: {}; a median, not a promise",
                        words::effort(e, WORKDAY_HOURS)
                    ),
                );
            }
            for (p, (color, what)) in PRIORITY_LABELS.iter().enumerate() {
                add(format!("p/{p}"), color, format!("Priority {p}: {what}"));
            }
            for (name, color, what) in ORDINARY_LABELS {
                add((*name).to_owned(), color, (*what).to_owned());
            }
            labels.insert(repo.clone(), v);
        }

        let mut milestones: BTreeMap<RepoName, Vec<Milestone>> =
            team.repos.iter().map(|r| (r.clone(), Vec::new())).collect();
        for m in &self.c.ms {
            if let Some(v) = team.repos.get(m.repo).and_then(|r| milestones.get_mut(r)) {
                v.push(Milestone {
                    id: m.id,
                    title: m.title.clone(),
                    description: m.description.clone(),
                    state: if m.closed.is_some() {
                        OpenState::Closed
                    } else {
                        OpenState::Open
                    },
                    due_on: Some(m.due),
                    created_at: m.created,
                    closed_at: m.closed,
                });
            }
        }
        milestones.retain(|_, v| !v.is_empty());

        let meta = Meta::full(now, Some(SERVER.to_owned()), &team.repos);
        Snapshot {
            meta,
            labels,
            milestones,
            issues,
        }
    }
}

/// `t` with the first letter of an ordinary word lower-cased (not that of `GET` or `CSRF`).
fn lower_first(t: &str) -> String {
    let mut chars = t.chars();
    match (chars.next(), chars.next()) {
        (Some(a), Some(b)) if b.is_lowercase() => {
            a.to_lowercase().chain(t.chars().skip(1)).collect()
        }
        _ => t.to_owned(),
    }
}

/// The title of a pull request for `it`.
fn pr_title(it: &Item) -> String {
    let t = &it.title.title;
    match it.kind {
        Kind::Bug => format!("Fix: {}", lower_first(t)),
        Kind::Docs => format!("docs: {}", lower_first(t)),
        Kind::Chore => format!("chore: {}", lower_first(t)),
        _ => t.clone(),
    }
}
