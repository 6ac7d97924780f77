//! The demo team: repositories, people with their (hidden) speed, part-time days and time off, the team
//! calendar, and the `commitea.yaml` that describes them — as a [`Config`] and as commented YAML text.

use std::fmt::Write as _;
use std::path::PathBuf;

use chrono::{Datelike, Duration, NaiveDate, Weekday};
use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;

use super::DemoSpec;
use crate::config::{
    CalendarConfig, Config, DateRange, Day, DayHours, ForecastConfig, HorizonDays, Hours, Member,
    SiteConfig, Trials,
};
use crate::domain::RepoName;

/// The organisation that owns every demo repository.
pub(super) const OWNER: &str = "acme";
/// The demo's Gitea server.
pub(super) const SERVER: &str = "https://gitea.example.com";
/// The site title of the demo.
pub(super) const SITE_TITLE: &str = "Acme Platform (CommiTea demo)";
/// Hours in a working day (the length of `est/1d`).
pub(super) const WORKDAY_HOURS: f64 = 6.0;

/// Repository names in the order they are added.
const REPO_NAMES: &[&str] = &[
    "api",
    "web",
    "mobile",
    "infra",
    "billing",
    "search",
    "data",
    "auth",
    "notifications",
    "docs-site",
];

/// Usernames in the order people are added; past the end a number is appended (`amara2`).
const NAMES: &[&str] = &[
    "amara", "bjorn", "chen", "dana", "emeka", "farah", "gus", "hiro", "ines", "jonas", "kofi",
    "lena", "mateo", "nadia", "oskar", "priya", "quinn", "rosa", "sven", "tamar", "ugo", "vera",
    "wei", "ximena", "yusuf", "zoe",
];

const WEEK: [Weekday; 5] = [
    Weekday::Mon,
    Weekday::Tue,
    Weekday::Wed,
    Weekday::Thu,
    Weekday::Fri,
];

/// One person on the team, with the traits the history generator uses.
#[derive(Debug, Clone)]
pub(super) struct Person {
    /// Gitea username.
    pub name: String,
    /// Working hours in a full week.
    pub hours_per_week: f64,
    /// The weekdays this person works.
    pub days: Vec<Weekday>,
    /// Whether `days` differs from the team's (written as `working_days`).
    pub part_time_days: bool,
    /// Days off, inclusive, with a note for the config comment.
    pub time_off: Vec<(NaiveDate, NaiveDate, &'static str)>,
    /// First working day of a new hire.
    pub starts: Option<NaiveDate>,
    /// Repositories (indices) this person works in; empty means all.
    pub repos: Vec<usize>,
    /// Hidden speed: actual effort = estimate × factor × noise.
    pub factor: f64,
    /// How likely this person logs time on an issue they work on.
    pub tracks: f64,
    /// A short note for the config comment.
    pub note: &'static str,
}

impl Person {
    /// Hours on one of this person's working days.
    pub fn hours_per_day(&self) -> f64 {
        self.hours_per_week / self.days.len().max(1) as f64
    }

    /// Whether this person works in repository `repo`.
    pub fn covers(&self, repo: usize) -> bool {
        self.repos.is_empty() || self.repos.contains(&repo)
    }

    /// Whether this person works on `day`.
    pub(crate) fn works_on(&self, day: NaiveDate, holidays: &[NaiveDate]) -> bool {
        self.days.contains(&day.weekday())
            && !holidays.contains(&day)
            && !self.time_off.iter().any(|(a, b, _)| *a <= day && day <= *b)
            && self.starts.is_none_or(|s| day >= s)
    }

    /// Whether this person has started by `day`.
    pub(crate) fn started_by(&self, day: NaiveDate) -> bool {
        self.starts.is_none_or(|s| s <= day)
    }
}

/// The repositories, people and calendar of one demo.
#[derive(Debug, Clone)]
pub(super) struct Team {
    /// The repositories, in config order.
    pub repos: Vec<RepoName>,
    /// The people, in config order.
    pub people: Vec<Person>,
    /// Public holidays with their names.
    pub holidays: Vec<(NaiveDate, &'static str)>,
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default()
}

/// A weekday-aligned range of `len` working days starting at the first weekday on or after `from`.
fn weekdays_from(from: NaiveDate, len: u32) -> (NaiveDate, NaiveDate) {
    let mut start = from;
    while start.weekday().number_from_monday() > 5 {
        start += Duration::days(1);
    }
    let mut end = start;
    let mut left = len.saturating_sub(1);
    while left > 0 {
        end += Duration::days(1);
        if end.weekday().number_from_monday() <= 5 {
            left -= 1;
        }
    }
    (start, end)
}

impl Team {
    /// The team of `spec`: the seven named people of the bundled demo first, more derived from the seed.
    pub fn new(spec: &DemoSpec, rng: &mut Xoshiro256PlusPlus) -> Self {
        let repo_count = spec.repositories.max(1);
        let repos: Vec<RepoName> = (0..repo_count)
            .map(|i| {
                let name = REPO_NAMES
                    .get(i)
                    .map_or_else(|| format!("svc{i}"), |n| (*n).to_owned());
                RepoName::new(OWNER, name)
            })
            .collect();
        // The winter holidays of the season `now` is in (or approaching).
        let today = spec.now.date_naive();
        let y = if today.month() >= 6 {
            today.year()
        } else {
            today.year() - 1
        };
        let holidays = vec![
            (date(y, 12, 24), "Christmas Eve"),
            (date(y, 12, 25), "Christmas Day"),
            (date(y, 12, 31), "New Year's Eve"),
            (date(y + 1, 1, 1), "New Year's Day"),
        ];
        let repo = |name: &str| repos.iter().position(|r| r.name == name);
        let only =
            |names: &[&str]| -> Vec<usize> { names.iter().filter_map(|n| repo(n)).collect() };
        let full = WEEK.to_vec();
        let mut people = Vec::new();
        let count = spec.people.max(1);
        for i in 0..count {
            let name = match (NAMES.get(i % NAMES.len()), i / NAMES.len()) {
                (Some(n), 0) => (*n).to_owned(),
                (Some(n), k) => format!("{n}{}", k + 1),
                (None, _) => format!("dev{i}"),
            };
            let p = match i {
                0 => Person {
                    name,
                    hours_per_week: 30.0,
                    days: full.clone(),
                    part_time_days: false,
                    time_off: vec![
                        (date(y, 8, 3), date(y, 8, 14), "summer"),
                        (date(y, 12, 21), date(y + 1, 1, 1), "winter break"),
                    ],
                    starts: None,
                    repos: Vec::new(),
                    factor: 0.8,
                    tracks: 0.9,
                    note: "tech lead, works across all repositories",
                },
                1 => Person {
                    name,
                    hours_per_week: 30.0,
                    days: full.clone(),
                    part_time_days: false,
                    time_off: vec![
                        (date(y, 7, 13), date(y, 7, 24), "summer"),
                        (date(y + 1, 1, 4), date(y + 1, 1, 15), "parental leave"),
                    ],
                    starts: None,
                    repos: only(&["api", "infra"]),
                    factor: 1.0,
                    tracks: 1.0,
                    note: "backend",
                },
                2 => Person {
                    name,
                    hours_per_week: 24.0,
                    days: WEEK[..4].to_vec(),
                    part_time_days: true,
                    time_off: vec![(date(y, 12, 28), date(y, 12, 30), "between the holidays")],
                    starts: None,
                    repos: only(&["api", "web"]),
                    factor: 1.25,
                    tracks: 0.6,
                    note: "full stack, four-day week",
                },
                3 => Person {
                    name,
                    hours_per_week: 18.0,
                    days: WEEK[1..4].to_vec(),
                    part_time_days: true,
                    time_off: vec![
                        (date(y, 9, 14), date(y, 9, 18), "autumn"),
                        (date(y, 12, 14), date(y, 12, 23), "winter break"),
                    ],
                    starts: None,
                    repos: only(&["web"]),
                    factor: 0.9,
                    tracks: 0.0,
                    note: "frontend, part-time (Tue-Thu)",
                },
                4 => Person {
                    name,
                    hours_per_week: 20.0,
                    days: full.clone(),
                    part_time_days: false,
                    time_off: vec![(date(y, 12, 21), date(y + 1, 1, 8), "winter break")],
                    starts: None,
                    repos: only(&["web", "mobile"]),
                    factor: 1.5,
                    tracks: 0.8,
                    note: "junior, 20 hours a week",
                },
                5 => Person {
                    name,
                    hours_per_week: 30.0,
                    days: full.clone(),
                    part_time_days: false,
                    time_off: vec![
                        (date(y, 8, 17), date(y, 8, 28), "summer"),
                        (date(y + 1, 1, 18), date(y + 1, 1, 22), "ski week"),
                    ],
                    starts: None,
                    repos: only(&["mobile"]),
                    factor: 1.1,
                    tracks: 0.95,
                    note: "mobile",
                },
                6 => Person {
                    name,
                    hours_per_week: 30.0,
                    days: full.clone(),
                    part_time_days: false,
                    time_off: Vec::new(),
                    starts: Some(today + Duration::days(10)),
                    repos: only(&["api", "web"]),
                    factor: 1.2,
                    tracks: 0.7,
                    note: "new hire",
                },
                _ => Self::derived(name, y, repo_count, rng),
            };
            people.push(p);
        }
        // A specialist whose repositories do not exist in this demo works everywhere.
        for p in &mut people {
            if p.repos.len() == repo_count {
                p.repos.clear();
            }
        }
        Self {
            repos,
            people,
            holidays,
        }
    }

    /// A person beyond the named seven, drawn from the seed.
    fn derived(name: String, y: i32, repo_count: usize, rng: &mut Xoshiro256PlusPlus) -> Person {
        let part_time = rng.random::<f64>() < 0.2;
        let days = if part_time {
            let n = if rng.random::<f64>() < 0.5 { 4 } else { 3 };
            let skip = rng.random_range(0..=(5 - n));
            WEEK[skip..skip + n].to_vec()
        } else {
            WEEK.to_vec()
        };
        let hours_per_week = if part_time {
            WORKDAY_HOURS * days.len() as f64
        } else if rng.random::<f64>() < 0.15 {
            24.0
        } else {
            30.0
        };
        let mut time_off = Vec::new();
        if rng.random::<f64>() < 0.45 {
            let (a, b) = weekdays_from(
                date(y, 7, 6) + Duration::days(rng.random_range(0..56)),
                5 * rng.random_range(1..=2),
            );
            time_off.push((a, b, "summer"));
        }
        if rng.random::<f64>() < 0.6 {
            let (a, b) = weekdays_from(
                date(y, 12, 7) + Duration::days(rng.random_range(0..42)),
                rng.random_range(3..=10),
            );
            time_off.push((a, b, "winter break"));
        }
        let repos = if repo_count > 1 && rng.random::<f64>() < 0.6 {
            let first = rng.random_range(0..repo_count);
            let mut r = vec![first];
            if rng.random::<f64>() < 0.4 {
                let second = rng.random_range(0..repo_count);
                if second != first {
                    r.push(second);
                }
            }
            r.sort_unstable();
            r
        } else {
            Vec::new()
        };
        let factor =
            (0.75 + 0.7 * rng.random::<f64>() * rng.random::<f64>() + 0.2 * rng.random::<f64>())
                .min(1.7);
        let tracks = [0.95, 0.8, 0.5, 0.0][rng.random_range(0..4)];
        Person {
            name,
            hours_per_week,
            part_time_days: days.len() < 5,
            days,
            time_off,
            starts: None,
            repos,
            factor: (factor * 100.0).round() / 100.0,
            tracks,
            note: if part_time {
                "part-time"
            } else if hours_per_week < 30.0 {
                "reduced hours"
            } else {
                ""
            },
        }
    }

    /// The holidays as dates.
    pub(crate) fn holiday_dates(&self) -> Vec<NaiveDate> {
        self.holidays.iter().map(|(d, _)| *d).collect()
    }

    /// Whether `day` is a team working day (Mon-Fri, not a holiday).
    pub(crate) fn team_day(&self, day: NaiveDate) -> bool {
        day.weekday().number_from_monday() <= 5 && !self.holidays.iter().any(|(d, _)| *d == day)
    }

    /// The configuration the demo runs with.
    pub fn config(&self) -> Config {
        Config {
            server: Some(SERVER.to_owned()),
            repositories: self.repos.clone(),
            team: self
                .people
                .iter()
                .map(|p| Member {
                    name: p.name.clone(),
                    hours_per_week: Some(Hours(p.hours_per_week)),
                    working_days: p
                        .part_time_days
                        .then(|| p.days.iter().copied().map(Day).collect()),
                    time_off: p
                        .time_off
                        .iter()
                        .map(|(from, to, _)| DateRange {
                            from: *from,
                            to: *to,
                        })
                        .collect(),
                    starts: p.starts,
                    ends: None,
                    repositories: p
                        .repos
                        .iter()
                        .filter_map(|r| self.repos.get(*r).cloned())
                        .collect(),
                })
                .collect(),
            calendar: CalendarConfig {
                working_days: WEEK.iter().copied().map(Day).collect(),
                holidays: self.holiday_dates(),
                workday_hours: DayHours(WORKDAY_HOURS),
                ..CalendarConfig::default()
            },
            forecast: ForecastConfig {
                trials: Trials(10_000),
                seed: None,
                horizon_days: HorizonDays(730),
                abandonment_min_history_days: 365,
                ..ForecastConfig::default()
            },
            backtest: crate::config::BacktestConfig {
                every_days: crate::config::FullEveryDays(14),
                horizon_days: Some(HorizonDays(42)),
                ..crate::config::BacktestConfig::default()
            },
            site: SiteConfig {
                title: SITE_TITLE.to_owned(),
                output: PathBuf::from("public"),
            },
            ..Config::default()
        }
    }

    /// `commitea.yaml` as a person would write it: commented, every value of [`Team::config`].
    pub fn config_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# CommiTea configuration of the bundled demo: Acme, a made-up team building a platform in\n\
             # {n} repositories. A key left out takes its default. Any scalar can be overridden from the\n\
             # environment: forecast.trials is COMMITEA_FORECAST_TRIALS, calendar.workday_hours is\n\
             # COMMITEA_CALENDAR_WORKDAY_HOURS.\n",
            n = self.repos.len()
        );
        let _ = writeln!(
            s,
            "# The Gitea (or Forgejo) server, and the repositories CommiTea snapshots."
        );
        let _ = writeln!(s, "server: {SERVER}");
        let _ = writeln!(s, "repositories:");
        for r in &self.repos {
            let _ = writeln!(s, "  - {r}");
        }
        let _ = writeln!(
            s,
            "\n# The people who do the work, by Gitea username.\n\
             #   hours_per_week  their capacity in a full week, spread over their working days\n\
             #   working_days    only for people who work fewer days than the team (part-time)\n\
             #   time_off        inclusive date ranges without work\n\
             #   starts          a new hire's first day: no capacity before it\n\
             #   repositories    where they take unassigned work from (left out: everywhere)"
        );
        let _ = writeln!(s, "team:");
        for p in &self.people {
            if p.note.is_empty() {
                let _ = writeln!(s, "  - name: {}", p.name);
            } else {
                let _ = writeln!(s, "  - name: {}   # {}", p.name, p.note);
            }
            let _ = writeln!(s, "    hours_per_week: {}", p.hours_per_week);
            if p.part_time_days {
                let days: Vec<&str> = p
                    .days
                    .iter()
                    .map(|d| crate::domain::weekday_name(*d))
                    .collect();
                let _ = writeln!(s, "    working_days: [{}]", days.join(", "));
            }
            if let Some(start) = p.starts {
                let _ = writeln!(s, "    starts: {start}");
            }
            if !p.repos.is_empty() {
                let names: Vec<String> = p
                    .repos
                    .iter()
                    .filter_map(|r| self.repos.get(*r))
                    .map(ToString::to_string)
                    .collect();
                let _ = writeln!(s, "    repositories: [{}]", names.join(", "));
            }
            if !p.time_off.is_empty() {
                let _ = writeln!(s, "    time_off:");
                for (from, to, why) in &p.time_off {
                    let _ = writeln!(s, "      - {{ from: {from}, to: {to} }}   # {why}");
                }
            }
        }
        let _ = writeln!(
            s,
            "\n# The team calendar: nobody works on weekends or holidays. A day (est/1d) is workday_hours of\n\
             # work, a week (est/1w) five days.\ncalendar:"
        );
        let _ = writeln!(s, "  working_days: [mon, tue, wed, thu, fri]");
        let _ = writeln!(s, "  workday_hours: {WORKDAY_HOURS}");
        let _ = writeln!(s, "  holidays:");
        for (d, name) in &self.holidays {
            let _ = writeln!(s, "    - {d}   # {name}");
        }
        let _ = writeln!(
            s,
            "\n# The estimate labels people may use (est/1h ... est/2w). An estimate is a median, never a promise.\n\
             estimates:\n  ladder: [1h, 2h, 4h, 1d, 2d, 3d, 1w, 2w]\n\n\
             # Labels that keep an open issue in the diagnosis column until someone understands it.\n\
             lifecycle:\n  diagnosis_labels: [needs-info, needs-diagnosis]\n\n\
             # The Monte Carlo forecast. With no seed, a fixed default seed is used, so the same state\n\
             # always gives the same forecast; set one to draw other random numbers.\n\
             forecast:\n  trials: 10000\n  # seed: 42\n  horizon_days: 730\n\
             \x20 # The abandonment model (which open work is probably never done) learns from 90 days\n\
             \x20 # of history by default. The demo's seven months are made up by a generator, so the demo\n\
             \x20 # shows the engine's schedule alone; delete this line to see the model's view of them.\n\
             \x20 abandonment_min_history_days: 365\n\n\
             # `commitea backtest`: a young project (seven months of history) has no cut whose year-long\n\
             # default horizon has passed, so the demo scores six weeks ahead, a cut every two weeks.\n\
             backtest:\n  every_days: 14\n  horizon_days: 42\n\n\
             # The static site, rebuilt on every run (public/ is not committed).\n\
             site:\n  title: \"{SITE_TITLE}\"\n  output: public\n\n\
             # Model endpoints for `commitea ask` (OpenAI-compatible); the demo needs none. For example:\n\
             # models:\n\
             #   small: {{ url: \"http://localhost:11434/v1\", model: \"qwen2.5:7b\" }}\n\
             #   big: {{ url: \"https://api.example.com/v1\", model: \"big-model\", api_key_env: \"BIG_MODEL_KEY\" }}"
        );
        s
    }
}
