//! Agreement with TaskJuggler (`tj3`, Debian's package) on generated projects.
//!
//! Without contention (each person works one dependency chain) every task's start and end must equal
//! TaskJuggler's to the minute, across weekends, holidays, time off, part-time days and cross-person
//! dependencies. With contention our schedule must pass the feasibility checker and its makespan must be
//! at most 10% longer than TaskJuggler's. Skips loudly without `tj3`; fails under
//! `COMMITEA_REQUIRE_EXTERNAL=1`.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use crate::support::external;

use chrono::{Days, NaiveDate, Weekday};
use commitea::engine::tjp::{self, TjpPerson, TjpTask};
use commitea::engine::{Calendar, CapacityOverride, PersonCalendarSpec, Prepared, Project, Task};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

const WEEK: [Weekday; 7] = [
    Weekday::Mon,
    Weekday::Tue,
    Weekday::Wed,
    Weekday::Thu,
    Weekday::Fri,
    Weekday::Sat,
    Weekday::Sun,
];

fn day0() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 30).unwrap()
}

fn random_people(rng: &mut Xoshiro256PlusPlus, n: usize) -> Vec<PersonCalendarSpec> {
    let holidays = vec![
        NaiveDate::from_ymd_opt(2026, 12, 24).unwrap(),
        NaiveDate::from_ymd_opt(2026, 12, 25).unwrap(),
        NaiveDate::from_ymd_opt(2027, 1, 1).unwrap(),
    ];
    (0..n)
        .map(|_| {
            let working_days: Vec<Weekday> = match rng.random_range(0..4) {
                0 => WEEK[0..3].to_vec(),
                1 => WEEK[1..5].to_vec(),
                _ => WEEK[0..5].to_vec(),
            };
            let mut time_off = Vec::new();
            for _ in 0..rng.random_range(0..3) {
                let start = day0() + Days::new(rng.random_range(0..60));
                time_off.push((start, start + Days::new(rng.random_range(0..6))));
            }
            let starts =
                (rng.random_range(0..5) == 0).then(|| day0() + Days::new(rng.random_range(1..15)));
            // Capacity directives: a while at other hours (none, fewer, more), one open-ended.
            let mut overrides = Vec::new();
            for _ in 0..rng.random_range(0..3) {
                let from = day0() + Days::new(rng.random_range(0..50));
                let to =
                    (rng.random_range(0..4) > 0).then(|| from + Days::new(rng.random_range(3..30)));
                overrides.push(CapacityOverride {
                    from,
                    to,
                    // Away for good would leave their work undone in both.
                    hours_per_day: [0.0, 2.0, 3.5, 9.0]
                        [rng.random_range(usize::from(to.is_none())..4)],
                });
            }
            PersonCalendarSpec {
                hours_per_day: [4.0, 5.0, 6.0, 8.0][rng.random_range(0..4)],
                working_days,
                holidays: holidays.clone(),
                time_off,
                starts,
                ends: None,
                overrides,
            }
        })
        .collect()
}

fn task(name: String, effort: f64, person: usize, deps: Vec<usize>, priority: u8) -> Task {
    Task {
        name,
        effort,
        assignee: Some(person),
        eligible: None,
        deps,
        priority,
        hard: false,
        due: None,
        started: false,
    }
}

/// Runs tj3 on our export of `project`; task index → (start, end) as tj3 prints them.
fn run_tj3(
    specs: &[PersonCalendarSpec],
    project: &Project,
    prep: &Prepared,
    days: u32,
) -> HashMap<usize, (String, String)> {
    let names: Vec<String> = (0..specs.len()).map(|i| format!("p{i}")).collect();
    let people: Vec<TjpPerson<'_>> = specs
        .iter()
        .zip(&names)
        .map(|(spec, name)| TjpPerson { name, spec })
        .collect();
    let rank: HashMap<u32, usize> = prep
        .order
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k))
        .collect();
    let tasks: Vec<TjpTask> = project
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| TjpTask {
            name: t.name.clone(),
            effort: t.effort,
            person: t.assignee,
            deps: t.deps.clone(),
            rank: rank[&(i as u32)],
        })
        .collect();
    let text = tjp::export("agreement", day0(), days, &people, &tasks, &[], "plan");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plan.tjp");
    std::fs::write(&file, &text).unwrap();
    let out = Command::new("tj3")
        .args(["--silent", "--no-color", "-o"])
        .arg(dir.path())
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tj3 failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        text
    );
    parse_csv(&dir.path().join("plan.csv"))
}

fn parse_csv(path: &Path) -> HashMap<usize, (String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(';').map(|x| x.trim_matches('"')).collect();
            let i = f.first()?.strip_prefix('t')?.parse().ok()?;
            Some((i, (f[2].to_owned(), f[3].to_owned())))
        })
        .collect()
}

/// Hours since day 0 for a time tj3 printed.
fn hours(s: &str) -> f64 {
    let (date, time) = s.split_once(' ').unwrap();
    let date = NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
    let (h, m) = time.split_once(':').unwrap();
    let minutes: f64 = h.parse::<f64>().unwrap() * 60.0 + m.parse::<f64>().unwrap();
    (date - day0()).num_days() as f64 * 24.0 + minutes / 60.0 - f64::from(tjp::DAY_START_HOUR)
}

#[test]
fn chains_agree_with_taskjuggler_to_the_minute() {
    if !external("tj3") {
        return;
    }
    let days = 240;
    for seed in 0..6u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let count = rng.random_range(3..6);
        let specs = random_people(&mut rng, count);
        let mut tasks: Vec<Task> = Vec::new();
        let mut chains: Vec<Vec<usize>> = Vec::new();
        for p in 0..specs.len() {
            let mut chain: Vec<usize> = Vec::new();
            for k in 0..rng.random_range(4..11) {
                let mut deps: Vec<usize> = chain.last().copied().into_iter().collect();
                if p > 0 && rng.random_range(0..4) == 0 {
                    let other = &chains[rng.random_range(0..p)];
                    deps.push(other[rng.random_range(0..other.len())]);
                }
                let i = tasks.len();
                tasks.push(task(
                    format!("p{p}-{k}"),
                    f64::from(rng.random_range(1..25u32)),
                    p,
                    deps,
                    2,
                ));
                chain.push(i);
            }
            chains.push(chain);
        }
        let people: Vec<Calendar> = specs
            .iter()
            .map(|s| Calendar::new(s, day0(), days))
            .collect();
        let project = Project { tasks, people };
        let prep = Prepared::new(&project).unwrap();
        let efforts: Vec<f64> = project.tasks.iter().map(|t| t.effort).collect();
        let ours = prep.schedule(&efforts);
        prep.check(&efforts, &ours).unwrap();
        let theirs = run_tj3(&specs, &project, &prep, days);
        for (i, t) in project.tasks.iter().enumerate() {
            let (start, end) = &theirs[&i];
            assert_eq!(
                (
                    tjp::format_time(day0(), ours.start[i]),
                    tjp::format_time(day0(), ours.end[i])
                ),
                (start.clone(), end.clone()),
                "seed {seed}, task {} ({} h on p{:?})",
                t.name,
                t.effort,
                t.assignee
            );
        }
    }
}

#[test]
fn with_contention_we_are_feasible_and_within_ten_percent_of_taskjuggler() {
    if !external("tj3") {
        return;
    }
    let days = 400;
    for seed in 10..16u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let count = rng.random_range(3..5);
        let specs = random_people(&mut rng, count);
        let n = rng.random_range(40..90);
        let mut tasks = Vec::new();
        for i in 0..n {
            let mut deps = Vec::new();
            if i > 0 && rng.random_range(0..4) == 0 {
                deps.push(rng.random_range(0..i));
            }
            let p = rng.random_range(0..specs.len());
            tasks.push(task(
                format!("t{i}"),
                f64::from(rng.random_range(1..30u32)),
                p,
                deps,
                rng.random_range(0..4),
            ));
        }
        let people: Vec<Calendar> = specs
            .iter()
            .map(|s| Calendar::new(s, day0(), days))
            .collect();
        let project = Project { tasks, people };
        let prep = Prepared::new(&project).unwrap();
        let efforts: Vec<f64> = project.tasks.iter().map(|t| t.effort).collect();
        let ours = prep.schedule(&efforts);
        prep.check(&efforts, &ours).unwrap();
        let theirs = run_tj3(&specs, &project, &prep, days);
        let our_makespan = ours.end.iter().copied().fold(0.0f64, f64::max);
        let their_makespan = theirs
            .values()
            .map(|(_, e)| hours(e))
            .fold(0.0f64, f64::max);
        assert!(
            our_makespan <= their_makespan * 1.10,
            "seed {seed}: our makespan {our_makespan} h vs TaskJuggler's {their_makespan} h"
        );
        eprintln!("seed {seed}: makespan ours {our_makespan:.1} h, tj3 {their_makespan:.1} h");
    }
}
