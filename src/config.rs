//! `commitea.yaml`: the settings of one state repo, resolved once from defaults, the file, `COMMITEA_*`
//! environment variables and command-line flags, in that order.
//!
//! Every struct denies unknown keys, and values are checked while they are read, so a mistake is reported
//! with the file, line and field (`commitea.yaml line 7 column 5: calendar.workday_hours: must be at least 0.1
//! and at most 24, not 0`). Environment overrides use the key path in capitals joined by `_`:
//! `forecast.trials` is `COMMITEA_FORECAST_TRIALS`, `calendar.workday_hours` is
//! `COMMITEA_CALENDAR_WORKDAY_HOURS`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use chrono::{NaiveDate, Weekday};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::domain::{Estimate, RepoName};
use crate::yamlfile::{self, YamlError};

/// The config file's name in a state repo.
pub(crate) const FILE_NAME: &str = "commitea.yaml";

/// Environment variables that start with `COMMITEA_` but are not config keys.
const NON_CONFIG_ENV: &[&str] = &[
    "COMMITEA_GITEA_TOKEN",
    "COMMITEA_TOKEN",
    "COMMITEA_REQUIRE_EXTERNAL",
    "COMMITEA_LOG",
    "COMMITEA_STATE",
    "COMMITEA_REALWORLD_DIR",
    "COMMITEA_BINARY_URL",
    // The workflow's install step: where to build CommiTea from.
    "COMMITEA_SOURCE",
    "COMMITEA_VERSION",
];

/// Prefixes of environment variables that are not config keys (the tests' `COMMITEA_BLESS_DOCS`, …).
const NON_CONFIG_ENV_PREFIXES: &[&str] = &["COMMITEA_BLESS_"];

/// Whether `var` is one of CommiTea's own variables that are not config keys.
fn not_config(var: &str) -> bool {
    NON_CONFIG_ENV.contains(&var) || NON_CONFIG_ENV_PREFIXES.iter().any(|p| var.starts_with(p))
}

/// Says that `var` names no config key, and why where it names a section (`tree`'s, whose scalar keys are
/// `leaves`), or the variable of those it is likely a typo of.
fn warn_unknown_var(
    var: &str,
    tree: &yaml_serde::Value,
    leaves: &[Vec<String>],
    lists: &[Vec<String>],
) {
    let at = |path: &[String]| path.iter().try_fold(tree, |v, k| v.get(k.as_str()));
    // An optional section left unset has no keys to override, only itself (audit 69: a big model set up
    // from the environment alone was ignored with no word of why; audit 164: the advice said the file
    // alone could set it, where `COMMITEA_MODELS_BIG='{url: …, model: …}'` does).
    // A section, not a value left unset (audit 165: `COMMITEA_FORECAST_SEED_VALUE` was told to set
    // `forecast.seed` whole, as YAML): one that takes a mapping.
    let takes_a_mapping = |path: &[String]| {
        let mut probe = tree.clone();
        set_path(
            &mut probe,
            path,
            yaml_serde::Value::Mapping(yaml_serde::Mapping::new()),
        );
        yaml_serde::from_value::<Config>(probe)
            .map_or_else(|e| !e.to_string().contains("invalid type: map"), |_| true)
    };
    let unset = leaves.iter().find(|p| {
        var.starts_with(&format!("{}_", env_name(p)))
            && at(p).is_some_and(yaml_serde::Value::is_null)
            && takes_a_mapping(p)
    });
    // A section that is set is overridden key by key (audit 164: COMMITEA_MODELS_SMALL, a whole section,
    // was "no config key of that name").
    let keys: Vec<String> = leaves
        .iter()
        .filter(|p| (1..p.len()).any(|k| env_name(&p[..k]) == var))
        .map(|p| env_name(p))
        .collect();
    let why = if let Some(p) = unset {
        format!(
            "; {} is not set, so it has no keys of its own yet: set it whole ({}='{{...}}', YAML) or add it \
             to commitea.yaml",
            p.join("."),
            env_name(p)
        )
    } else if !keys.is_empty() {
        format!(
            "; it names a section, which the environment sets key by key: {}",
            crate::prose::and_list_at_most(&keys, 4)
        )
    } else if let Some(p) = leaves
        .iter()
        .find(|p| var.starts_with(&format!("{}_", env_name(p))))
    {
        // A key of a value, which has none.
        format!("; did you mean {}?", env_name(p))
    } else {
        // A letter off is said with the name meant (audit 153: COMMITEA_FORCAST_TRIALS was ignored,
        // warned, with nothing to say which key it missed).
        let known: Vec<String> = leaves.iter().chain(lists).map(|p| env_name(p)).collect();
        crate::plan::nearest(var, known.iter().map(String::as_str))
            .map(|(_, k)| format!("; did you mean {k}?"))
            .unwrap_or_default()
    };
    crate::prose::warn_once(
        var,
        &format!("ignoring {var}: no config key of that name{why}"),
    );
}

/// Why the configuration could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid: syntax, an unknown key, or a bad value.
    #[error(transparent)]
    Invalid(#[from] YamlError),
    /// The file sets nothing beside a snapshot of repositories: emptied by accident (a truncated write, a
    /// merge gone wrong), not "no settings" (audit 120: a run committed a forecast with no team).
    #[error(
        "{FILE_NAME} sets nothing (it is empty, or only comments), but the snapshot holds {repos}: a run or a \
         sync would forecast them with no team and nothing to sync. Put the committed file back with `git \
         checkout HEAD -- {FILE_NAME}` (or write its settings), then run again; nothing was synced or \
         committed"
    )]
    Blank {
        /// The snapshot's repositories, in words.
        repos: String,
    },
    /// An environment override does not fit its key.
    #[error("environment variable {var}: {message}")]
    Env {
        /// The variable.
        var: String,
        /// What is wrong.
        message: String,
    },
    /// A command-line flag does not fit its key.
    #[error("{flag}: {message}")]
    Flag {
        /// The flag, `--trials`, or the key a `--set`-style flag names.
        flag: String,
        /// What is wrong.
        message: String,
    },
    /// The file is YAML but no mapping of keys: a list, or a single value.
    #[error(
        "{FILE_NAME}: the file holds {what}, not settings: it is a mapping of keys (server:, repositories:, \
         team:, …), as the README's example shows"
    )]
    NotMapping {
        /// What it holds, in words.
        what: &'static str,
    },
    /// A value is well-formed but not allowed (checked after the file, the environment and the flags).
    #[error("{FILE_NAME}: {key}: {message}")]
    Value {
        /// The key, e.g. `site.output`.
        key: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
}

/// What CommiTea keeps at the top of a state repo: the site may be written into none of them, since the
/// site writer deletes every file in its folder that it did not render.
pub(crate) const OWNED_NAMES: &[&str] = &[
    FILE_NAME,
    crate::state::LEDGER_FILE,
    "snapshot",
    "ops",
    "forecast",
    "site-templates",
    ".git",
    ".gitea",
    // Forgejo's workflows (audit 159: the render deleted them), and GitHub's, which Gitea runs too.
    ".forgejo",
    ".github",
];

/// The whole configuration of a state repo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The Gitea (or Forgejo) server's base URL, e.g. `https://git.example.com`.
    pub server: Option<String>,
    /// The repositories to snapshot, `owner/repo`.
    #[serde(deserialize_with = "unique_repositories")]
    pub repositories: Vec<RepoName>,
    /// The people who do the work.
    #[serde(deserialize_with = "unique_team")]
    pub team: Vec<Member>,
    /// Working days, holidays and the length of a working day.
    pub calendar: CalendarConfig,
    /// The estimate ladder.
    pub estimates: EstimatesConfig,
    /// Lifecycle rule settings.
    pub lifecycle: LifecycleConfig,
    /// Forecast settings.
    pub forecast: ForecastConfig,
    /// Sync settings.
    pub sync: SyncConfig,
    /// Site settings.
    pub site: SiteConfig,
    /// Commit settings.
    pub commit: CommitConfig,
    /// Model endpoints for the agent tools.
    pub models: ModelsConfig,
    /// The standup view.
    pub standup: StandupConfig,
    /// The lock that keeps two writers off one state repo.
    pub lock: LockConfig,
    /// `commitea backtest`.
    pub backtest: BacktestConfig,
    /// How proposed changes become pull requests and reach Gitea (`docs/approvals.md`).
    pub approvals: ApprovalsConfig,
}

/// How proposed changes become pull requests on the state repo and, once merged, reach Gitea.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalsConfig {
    /// The state repo on the server, `owner/name`: its pull requests are the approvals. Default: the job's
    /// `GITHUB_REPOSITORY` in Gitea Actions.
    pub state_repository: Option<RepoName>,
    /// The branch proposals are merged into and runs commit to.
    pub branch: String,
    /// The git remote of the state repo.
    pub remote: String,
    /// Whether a proposal of additive ops only (no `remove_dep`, `close_issue`, `remove_label`) may go
    /// straight to the branch without a pull request, as the seed says; destructive ops and directives
    /// always go through one.
    pub additive_direct: bool,
    /// Whether `commitea tool` and `commitea mcp` propose what they write at once (push and open the pull
    /// request), rather than leaving it for `commitea propose`.
    pub propose_on_write: bool,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            state_repository: None,
            branch: "main".into(),
            remote: "origin".into(),
            additive_direct: true,
            propose_on_write: false,
        }
    }
}

/// How `commitea backtest` replays the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BacktestConfig {
    /// Monte Carlo trials per method and cut (fewer than a forecast's: there are many cuts).
    pub trials: Trials,
    /// Days between cuts.
    pub every_days: FullEveryDays,
    /// Days after a cut forecast and scored; none means the abandonment window (`forecast.abandonment_days`,
    /// at most `forecast.horizon_days`).
    pub horizon_days: Option<HorizonDays>,
}

impl Default for BacktestConfig {
    fn default() -> Self {
        Self {
            trials: Trials(500),
            every_days: FullEveryDays(28),
            horizon_days: None,
        }
    }
}

/// The state repo's writer lock (see `docs/architecture.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LockConfig {
    /// How long a writer waits for another to finish before it gives up, in seconds.
    pub wait_seconds: WaitSeconds,
}

impl Default for LockConfig {
    fn default() -> Self {
        Self {
            wait_seconds: WaitSeconds(120),
        }
    }
}

/// One person on the team.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Member {
    /// Gitea username.
    #[serde(deserialize_with = "a_username")]
    pub name: String,
    /// Working hours in a full week; default: `workday_hours` times the number of working days.
    pub hours_per_week: Option<Hours>,
    /// The days this person works, when not the team's (part-time).
    #[serde(deserialize_with = "some_days_if_given")]
    pub working_days: Option<Vec<Day>>,
    /// Days off, as inclusive date ranges.
    pub time_off: Vec<DateRange>,
    /// First working day (a new hire); none means always there.
    #[serde(deserialize_with = "a_date_if_given")]
    pub starts: Option<NaiveDate>,
    /// Last working day (someone leaving).
    #[serde(deserialize_with = "a_date_if_given")]
    pub ends: Option<NaiveDate>,
    /// Repositories this person takes unassigned work from; left out, all (an empty list is refused).
    #[serde(
        deserialize_with = "some_repositories",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub repositories: Vec<RepoName>,
}

/// The team's calendar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CalendarConfig {
    /// Working days of the week.
    #[serde(deserialize_with = "some_days")]
    pub working_days: Vec<Day>,
    /// Public holidays: nobody works.
    #[serde(deserialize_with = "dates")]
    pub holidays: Vec<NaiveDate>,
    /// Hours in a working day: the length of `1d`.
    pub workday_hours: DayHours,
    /// The team's time zone: the forecast's "as of" day is the team's date when the run runs.
    pub timezone: Zone,
}

/// A time zone (`calendar.timezone`): an IANA name (`Australia/Sydney`, from the system's tz database), `UTC`,
/// or a fixed offset (`+10:00`, `-03:30`).
#[derive(Debug, Clone)]
pub struct Zone {
    name: String,
    tz: jiff::tz::TimeZone,
}

impl Zone {
    /// UTC, the default.
    pub fn utc() -> Self {
        Self {
            name: "UTC".into(),
            tz: jiff::tz::TimeZone::UTC,
        }
    }

    /// The zone `text` names, or what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let name = text.trim();
        let fixed = || {
            let (sign, rest) = match name.as_bytes().first() {
                Some(b'+') => (1, &name[1..]),
                Some(b'-') => (-1, &name[1..]),
                _ => return None,
            };
            let (h, m) = rest.split_once(':')?;
            let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
            (h.to_string().len() <= 2 && (0..=14).contains(&h) && (0..60).contains(&m))
                .then_some(())?;
            let offset = jiff::tz::Offset::from_seconds(sign * (h * 3600 + m * 60)).ok()?;
            Some(jiff::tz::TimeZone::fixed(offset))
        };
        // `Z` is RFC 3339's name for UTC (audit 127: refused).
        let tz = if name.eq_ignore_ascii_case("utc") || name.eq_ignore_ascii_case("z") {
            Some(jiff::tz::TimeZone::UTC)
        } else if name.starts_with(['+', '-']) {
            fixed()
        } else {
            jiff::tz::TimeZone::get(name).ok()
        };
        tz.map(|tz| Self {
            name: name.to_owned(),
            tz,
        })
        .ok_or_else(|| {
            format!(
                "\"{}\" is not a time zone this machine knows: give an IANA name such as Europe/Berlin or \
                 Australia/Sydney (from the system's tz database, package tzdata), UTC, or an offset such as +10:00",
                crate::limits::excerpt(name)
            )
        })
    }

    /// The zone's name as written.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The team's wall-clock time at moment `t`.
    pub fn local(&self, t: chrono::DateTime<chrono::Utc>) -> chrono::NaiveDateTime {
        let offset = jiff::Timestamp::from_second(t.timestamp())
            .map(|ts| self.tz.to_offset(ts).seconds())
            .unwrap_or(0);
        (t + chrono::TimeDelta::seconds(i64::from(offset))).naive_utc()
    }

    /// The moment the team's wall clock shows `local` (the earlier one where a clock goes back, the time
    /// after the gap where it jumps forward).
    pub fn instant(&self, local: chrono::NaiveDateTime) -> chrono::DateTime<chrono::Utc> {
        let as_utc = local.and_utc();
        // The offset an hour either side of a change can differ; the offset at the guess, then at the
        // corrected guess, settles every real zone.
        let offset_at = |t: chrono::DateTime<chrono::Utc>| {
            jiff::Timestamp::from_second(t.timestamp())
                .map(|ts| i64::from(self.tz.to_offset(ts).seconds()))
                .unwrap_or(0)
        };
        let first = as_utc - chrono::TimeDelta::seconds(offset_at(as_utc));
        as_utc - chrono::TimeDelta::seconds(offset_at(first))
    }

    /// The team's date at moment `t`.
    pub fn date_of(&self, t: chrono::DateTime<chrono::Utc>) -> NaiveDate {
        self.local(t).date()
    }

    /// The day a forecast's moment stands for. Midnight UTC is how a day is carried (`--now 2026-11-30`, a
    /// committed forecast's day): that day, whatever the zone. Any other moment (a run's clock, a sync's) is
    /// the team's date then.
    pub fn day_of(&self, t: chrono::DateTime<chrono::Utc>) -> NaiveDate {
        if t.time() == chrono::NaiveTime::MIN {
            t.date_naive()
        } else {
            self.date_of(t)
        }
    }

    /// The later, by the team's days, of a day (carried as its midnight UTC) and a moment (a sync's): the
    /// moment where it falls on that day or after, else the day. Compared as moments, a New York team's
    /// sync at 20:00 on Dec 7 (01:00 UTC Dec 8, after Dec 8's midnight UTC) held every later run of Dec 8
    /// at Dec 7 (audit 127).
    pub fn later_day(
        &self,
        day: chrono::DateTime<chrono::Utc>,
        moment: chrono::DateTime<chrono::Utc>,
    ) -> chrono::DateTime<chrono::Utc> {
        if self.day_of(day) > self.date_of(moment) {
            day
        } else {
            as_moment(moment)
        }
    }
}

/// `t` as a moment that is never taken for a day: midnight UTC is how a day is carried ([`Zone::day_of`]),
/// so a moment exactly then (an RFC 3339 `--now` of `…T00:00:00Z`, a stamp in whole seconds) is moved on by
/// a nanosecond (audit 127: `--now 2026-12-07T13:00:00-11:00` was as of Dec 8 in Pago Pago).
pub fn as_moment(t: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
    if t.time() == chrono::NaiveTime::MIN {
        t + chrono::TimeDelta::nanoseconds(1)
    } else {
        t
    }
}

impl Default for Zone {
    fn default() -> Self {
        Self::utc()
    }
}

impl PartialEq for Zone {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Serialize for Zone {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name)
    }
}

impl<'de> Deserialize<'de> for Zone {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl Default for CalendarConfig {
    fn default() -> Self {
        Self {
            working_days: [
                Weekday::Mon,
                Weekday::Tue,
                Weekday::Wed,
                Weekday::Thu,
                Weekday::Fri,
            ]
            .into_iter()
            .map(Day)
            .collect(),
            holidays: Vec::new(),
            workday_hours: DayHours(6.0),
            timezone: Zone::utc(),
        }
    }
}

/// The allowed estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EstimatesConfig {
    /// The ladder of allowed estimate labels, smallest first.
    pub ladder: Vec<Estimate>,
}

impl EstimatesConfig {
    /// The ladder in words, smallest first: `1h, 2h, 4h, 1d, 2d, 3d, 1w, 2w`.
    pub fn ladder_words(&self) -> String {
        self.ladder
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The rung nearest `estimate` ([`crate::domain::nearest_rung`], a day of `workday_hours`): what to
    /// write instead of one off the ladder.
    pub fn nearest(&self, estimate: &Estimate, workday_hours: f64) -> Option<Estimate> {
        crate::domain::nearest_rung(estimate.hours(workday_hours), &self.ladder, workday_hours)
    }
}

impl Default for EstimatesConfig {
    fn default() -> Self {
        let ladder = ["1h", "2h", "4h", "1d", "2d", "3d", "1w", "2w"]
            .iter()
            .filter_map(|s| s.parse().ok())
            .collect();
        Self { ladder }
    }
}

/// Lifecycle rule settings (see `docs/lifecycle.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LifecycleConfig {
    /// Labels that keep an open issue in `diagnosis`.
    pub diagnosis_labels: Vec<String>,
}

impl Default for LifecycleConfig {
    fn default() -> Self {
        Self {
            diagnosis_labels: crate::domain::lifecycle::Rules::default().diagnosis_labels,
        }
    }
}

/// Forecast settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ForecastConfig {
    /// Monte Carlo trials.
    pub trials: Trials,
    /// The random seed; none is a fixed default. It is not derived from the state: two forecasts of states
    /// that differ in one issue must draw the same numbers for the others.
    pub seed: Option<u64>,
    /// How far ahead to forecast, in calendar days; later is reported as "beyond the horizon".
    pub horizon_days: HorizonDays,
    /// The window of the abandonment model: an open issue's chance of being done at all is its chance of
    /// being closed within this many days (work not done within it is treated as work that may never be).
    pub abandonment_days: HorizonDays,
    /// Days of history the abandonment model needs before it learns a closing rate; with less, every open
    /// issue is assumed to be done some day (and the run says so).
    pub abandonment_min_history_days: u32,
    /// Unassigned work stays with the person the last committed forecast planned it for (unless they left
    /// the team or may no longer take it), so a run does not reshuffle the plan. `false` plans every run
    /// afresh (whoever would finish first).
    pub keep_planned_people: bool,
    /// Run the trials in batches of 1,000 and stop once a batch moves no reported percentile (p10, p50,
    /// p80 of every issue and milestone) by more than one working day; `trials` is the most run. Off:
    /// always run `trials`.
    pub adaptive_trials: bool,
    /// The most open-issue trials (open issues × trials) a what-if forecasts at full size. Above it, the
    /// consequence of a change is measured on twin forecasts of fewer trials (this budget over the open
    /// issues, at least 1,000), before and after drawing the same numbers, and their difference is
    /// applied to the full forecast before the change. `0`, the default, always runs the full size: the
    /// what-if reuses the committed forecast before and runs one forecast after, which measured as fast as
    /// the twins at 5,000 and 20,000 issues and is exact (audit 98: at 2,000 issues the twins misnamed
    /// the moved issues in 48 of 100 changes).
    pub what_if_issue_trials: u64,
}

impl Default for ForecastConfig {
    fn default() -> Self {
        Self {
            trials: Trials(10_000),
            seed: None,
            horizon_days: HorizonDays(730),
            abandonment_days: HorizonDays(365),
            abandonment_min_history_days: crate::engine::fate::MIN_HISTORY_DAYS,
            keep_planned_people: true,
            adaptive_trials: false,
            what_if_issue_trials: 0,
        }
    }
}

/// How the sync reads Gitea.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyncConfig {
    /// A repository is read in full again after this many days (deletions and transfers are invisible to
    /// an incremental sync).
    pub full_every_days: FullEveryDays,
    /// Requests in flight at once to begin with while reading issues.
    pub parallel: Parallel,
    /// The most requests in flight at once: the sync grows from `parallel` towards this while the server
    /// answers well, and halves on a sign of overload (429, 5xx, a timeout).
    pub max_parallel: Parallel,
    /// A full read that finds more than this share of a repository's issues gone (of at least 20 in the
    /// last snapshot) stops the sync instead of committing them gone; 1 accepts any.
    pub max_vanished_share: Share,
}

impl Default for SyncConfig {
    fn default() -> Self {
        Self {
            full_every_days: FullEveryDays(7),
            parallel: Parallel(4),
            max_parallel: Parallel(16),
            max_vanished_share: Share(0.5),
        }
    }
}

/// What the standup view looks at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StandupConfig {
    /// An open issue that blocks others is a stale blocker after this many calendar days without activity.
    pub stale_days: StaleDays,
    /// Each person's plan covers the next this many working days.
    pub plan_days: PlanDays,
}

impl Default for StandupConfig {
    fn default() -> Self {
        Self {
            stale_days: StaleDays(5),
            plan_days: PlanDays(3),
        }
    }
}

/// Site settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SiteConfig {
    /// The title shown on every page.
    pub title: String,
    /// Where the site is written, relative to the state repo.
    pub output: PathBuf,
}

impl Default for SiteConfig {
    fn default() -> Self {
        Self {
            title: "CommiTea".into(),
            output: PathBuf::from("public"),
        }
    }
}

/// Who CommiTea's commits are by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommitConfig {
    /// Author and committer name.
    pub name: String,
    /// Author and committer e-mail.
    pub email: String,
}

impl Default for CommitConfig {
    fn default() -> Self {
        Self {
            name: "CommiTea".into(),
            email: "commitea@localhost".into(),
        }
    }
}

/// The two model endpoints (OpenAI-compatible) and the bounds of one `commitea ask` (see `docs/models.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelsConfig {
    /// The small local model: `query_project` answers, `commitea ask`, prose such as the standup in words.
    /// Default: a Gemma-class 4B model on a local Ollama.
    pub small: ModelEndpoint,
    /// The big model: `capture_work` decomposition and directive negotiation; none until configured.
    pub big: Option<ModelEndpoint>,
    /// Whether capture and negotiation may run on the small model while no big one is configured (an
    /// opt-in: a 4B model decomposes poorly).
    pub small_for_big: bool,
    /// The most model calls one `commitea ask` (or one capture or negotiation) makes.
    pub max_turns: MaxTurns,
    /// The most tokens one `commitea ask` may use in all, prompts and replies, as the server counts them (or
    /// a quarter of the bytes when it does not say).
    pub max_total_tokens: TotalTokens,
}

impl Default for ModelsConfig {
    fn default() -> Self {
        Self {
            small: ModelEndpoint::default(),
            big: None,
            small_for_big: false,
            max_turns: MaxTurns(8),
            max_total_tokens: TotalTokens(32_000),
        }
    }
}

/// One OpenAI-compatible endpoint; the key is read from the named environment variable, never stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelEndpoint {
    /// Base URL, the part before `/chat/completions`: `http://127.0.0.1:11434/v1` for a local Ollama.
    pub url: String,
    /// The model's name, as the server knows it (`qwen3:4b`).
    pub model: String,
    /// The environment variable that holds the API key, if the server needs one (sent as a bearer token).
    pub api_key_env: Option<String>,
    /// How long one request may take, in seconds, answer included.
    pub timeout_seconds: TimeoutSeconds,
    /// The most tokens one reply may have (`max_tokens`); a reply cut there is an error, never half-read.
    pub max_tokens: ReplyTokens,
    /// The sampling temperature; 0 makes a model as repeatable as it can be.
    pub temperature: Temperature,
}

impl Default for ModelEndpoint {
    fn default() -> Self {
        Self {
            url: DEFAULT_MODEL_URL.to_owned(),
            model: DEFAULT_SMALL_MODEL.to_owned(),
            api_key_env: None,
            timeout_seconds: TimeoutSeconds(180),
            // A thinking model's reasoning counts against it (Ollama's `num_predict`).
            max_tokens: ReplyTokens(4096),
            temperature: Temperature(0.0),
        }
    }
}

/// A local Ollama's OpenAI-compatible endpoint.
pub(crate) const DEFAULT_MODEL_URL: &str = "http://127.0.0.1:11434/v1";
/// The default small model: Qwen3, 4B parameters, as Ollama names it. It calls tools, which every
/// question needs (Ollama refuses a request with tools for a model without them, Gemma 3's 4B among
/// them: "does not support tools").
pub(crate) const DEFAULT_SMALL_MODEL: &str = "qwen3:4b";

/// A day of the week, written `mon`..`sun` (or the full English name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Day(pub Weekday);

impl Serialize for Day {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(crate::domain::weekday_name(self.0))
    }
}

impl<'de> Deserialize<'de> for Day {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse::<Weekday>().map(Day).map_err(|_| {
            serde::de::Error::custom(format!(
                "\"{s}\" is not a day of the week (mon, tue, … sun)"
            ))
        })
    }
}

/// The Rust types a checked number is read as: how each takes YAML's integers and floats, and what it is
/// called.
trait CheckedKind: Sized + Copy {
    /// The kind in words: `a whole number`.
    const NOUN: &'static str;
    fn from_u64(v: u64) -> Option<Self>;
    fn from_i64(v: i64) -> Option<Self>;
    fn from_f64(v: f64) -> Option<Self>;
}

impl CheckedKind for u32 {
    const NOUN: &'static str = "a whole number";
    fn from_u64(v: u64) -> Option<Self> {
        u32::try_from(v).ok()
    }
    fn from_i64(v: i64) -> Option<Self> {
        u32::try_from(v).ok()
    }
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
}

impl CheckedKind for f64 {
    const NOUN: &'static str = "a number";
    #[allow(clippy::cast_precision_loss)] // a setting's number is far below 2^52
    fn from_u64(v: u64) -> Option<Self> {
        Some(v as f64)
    }
    #[allow(clippy::cast_precision_loss)]
    fn from_i64(v: i64) -> Option<Self> {
        Some(v as f64)
    }
    fn from_f64(v: f64) -> Option<Self> {
        v.is_finite().then_some(v)
    }
}

/// Reads a checked number of kind `T`, saying what it takes in the range's words ("expected a whole
/// number between 1 and 1000000"), not serde's "expected u32" (audit 150: `trials: abc` was told "a
/// whole number from 0"). The error comes from the visitor, so the reader marks the value's own place.
struct CheckedVisitor<T> {
    what: &'static str,
    kind: std::marker::PhantomData<T>,
}

impl<'de, T: CheckedKind> serde::de::Visitor<'de> for CheckedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", T::NOUN, self.what)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
        T::from_u64(v).ok_or_else(|| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
        T::from_i64(v).ok_or_else(|| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<T, E> {
        T::from_f64(v).ok_or_else(|| E::invalid_type(serde::de::Unexpected::Float(v), &self))
    }
}

macro_rules! checked_number {
    ($(#[$doc:meta])* $name:ident($t:ty), $ok:expr, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub $t);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = d.deserialize_any(CheckedVisitor::<$t> {
                    what: $what,
                    kind: std::marker::PhantomData,
                })?;
                let ok: fn($t) -> bool = $ok;
                if ok(v) {
                    Ok(Self(v))
                } else {
                    Err(serde::de::Error::custom(format!(concat!("must be ", $what, ", not {}"), v)))
                }
            }
        }

        /// Read from a flag, checked as the file's value is.
        impl std::str::FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                let v: $t = s.trim().parse().map_err(|_| {
                    format!(concat!("\"{}\" is not {} ", $what), s, <$t as CheckedKind>::NOUN)
                })?;
                let ok: fn($t) -> bool = $ok;
                if ok(v) {
                    Ok(Self(v))
                } else {
                    Err(format!(concat!("must be ", $what, ", not {}"), v))
                }
            }
        }
    };
}

/// The fewest hours a week (or a day) anyone is planned at, short of none: below it a task of a few
/// hours would end millennia out, past where the scheduler's arithmetic holds (audit 66), and no team
/// means it.
pub const MIN_HOURS: f64 = 0.1;

checked_number!(
    /// Hours a week: at least 0.1, at most 168.
    Hours(f64), |v| (MIN_HOURS..=168.0).contains(&v), "at least 0.1 and at most 168");
checked_number!(
    /// Hours in a working day: at least 0.1, at most 24.
    DayHours(f64), |v| (MIN_HOURS..=24.0).contains(&v), "at least 0.1 and at most 24");
/// The most Monte Carlo trials a forecast may run (the config's `forecast.trials`, `--trials`).
pub const MAX_TRIALS: u32 = 1_000_000;

checked_number!(
    /// A trial count: 1 to 1,000,000.
    Trials(u32), |v| (1..=MAX_TRIALS).contains(&v), "between 1 and 1000000");
checked_number!(
    /// Parallel requests: 1 to 32.
    Parallel(u32), |v| (1..=32).contains(&v), "between 1 and 32");
checked_number!(
    /// Days between full resyncs: 1 to 365.
    FullEveryDays(u32), |v| (1..=365).contains(&v), "between 1 and 365");
checked_number!(
    /// Days without activity before a blocker is stale: 1 to 365.
    StaleDays(u32), |v| (1..=365).contains(&v), "between 1 and 365");
checked_number!(
    /// Working days a standup plan covers: 1 to 20.
    PlanDays(u32), |v| (1..=20).contains(&v), "between 1 and 20");
checked_number!(
    /// Seconds to wait for a lock: 0 to 3,600.
    WaitSeconds(u32), |v| v <= 3600, "at most 3600");
checked_number!(
    /// A horizon in calendar days: 7 to 3,650.
    HorizonDays(u32), |v| (7..=3650).contains(&v), "between 7 and 3650");
checked_number!(
    /// Model calls in one conversation: 1 to 50.
    MaxTurns(u32), |v| (1..=50).contains(&v), "between 1 and 50");
checked_number!(
    /// Tokens one conversation may use: 1,000 to 10,000,000.
    TotalTokens(u32), |v| (1_000..=10_000_000).contains(&v), "between 1000 and 10000000");
checked_number!(
    /// Tokens in one model reply: 16 to 1,000,000.
    ReplyTokens(u32), |v| (16..=1_000_000).contains(&v), "between 16 and 1000000");
checked_number!(
    /// Seconds one model request may take: 1 to 3,600.
    TimeoutSeconds(u32), |v| (1..=3600).contains(&v), "between 1 and 3600");
checked_number!(
    /// A share: 0 to 1.
    Share(f64), |v| (0.0..=1.0).contains(&v), "between 0 and 1");
checked_number!(
    /// A sampling temperature: 0 to 2.
    Temperature(f64), |v| (0.0..=2.0).contains(&v), "between 0 and 2");

/// An inclusive range of dates, `{ from: 2026-12-21, to: 2027-01-01 }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DateRange {
    /// First day.
    pub from: NaiveDate,
    /// Last day, inclusive.
    pub to: NaiveDate,
}

impl<'de> Deserialize<'de> for DateRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// A range as written: `{ from: YYYY-MM-DD, to: YYYY-MM-DD }`.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct FromTo {
            #[serde(deserialize_with = "a_date")]
            from: NaiveDate,
            #[serde(deserialize_with = "a_date")]
            to: NaiveDate,
        }
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = FromTo;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a range `{ from: YYYY-MM-DD, to: YYYY-MM-DD }`, or one day `YYYY-MM-DD`",
                )
            }
            // One day off, as a person writes it: `- 2026-12-24`.
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<FromTo, E> {
                let day = day(v)?;
                Ok(FromTo { from: day, to: day })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<FromTo, A::Error> {
                FromTo::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        let r = d.deserialize_any(Visitor)?;
        if r.to < r.from {
            return Err(serde::de::Error::custom(format!(
                "date range ends ({}) before it starts ({})",
                r.to, r.from
            )));
        }
        Ok(Self {
            from: r.from,
            to: r.to,
        })
    }
}

/// A Gitea username: it names a person's page on the site and their op files, so `../x` is refused.
fn a_username<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    if crate::ledger::format::valid_username(&name) {
        Ok(name)
    } else {
        Err(serde::de::Error::custom(
            crate::ledger::format::not_a_username(&name),
        ))
    }
}

/// A config date: `YYYY-MM-DD`, said as `parse_day` says it when it is not one.
fn day<E: serde::de::Error>(text: &str) -> Result<NaiveDate, E> {
    crate::domain::parse_day(text.trim()).map_err(E::custom)
}

fn a_date<'de, D: Deserializer<'de>>(d: D) -> Result<NaiveDate, D::Error> {
    day(&String::deserialize(d)?)
}

fn a_date_if_given<'de, D: Deserializer<'de>>(d: D) -> Result<Option<NaiveDate>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|text| day(&text))
        .transpose()
}

/// One item of a list of days, read on its own: a bad one is said at its line and index, not at the key
/// after the list (audit 90). A day, or a range `{ from, to }` as `team[].time_off` takes (audit 178: a
/// range copied from there was refused with serde's "invalid type: map, expected a string").
struct ListedDays(Vec<NaiveDate>);

impl<'de> Deserialize<'de> for ListedDays {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = DateRange::deserialize(d)?;
        Ok(Self(
            r.from.iter_days().take_while(|d| *d <= r.to).collect(),
        ))
    }
}

fn dates<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<NaiveDate>, D::Error> {
    Ok(Vec::<ListedDays>::deserialize(d)?
        .into_iter()
        .flat_map(|l| l.0)
        .collect())
}

impl DateRange {
    /// Whether `day` is in the range.
    pub fn contains(&self, day: NaiveDate) -> bool {
        self.from <= day && day <= self.to
    }
}

/// A week's working days: at least one (on an empty week nobody would ever work).
fn some_days<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Day>, D::Error> {
    non_empty(Vec::<Day>::deserialize(d)?)
}

/// A member's repositories, when given: at least one. Left out means all, so `[]` read as all was the
/// opposite of what it says (audit 178: a reviewer written `repositories: []` was given 60 h of work).
fn some_repositories<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RepoName>, D::Error> {
    let repos = Vec::<RepoName>::deserialize(d)?;
    if repos.is_empty() {
        return Err(serde::de::Error::custom(
            "is empty: leave `repositories` out for someone who takes unassigned work in every \
             repository, or name those they take it from (CommiTea has no setting for taking none: work \
             assigned to them on Gitea is theirs whatever this says)",
        ));
    }
    Ok(repos)
}

/// A member's own working days, when given: at least one.
fn some_days_if_given<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Day>>, D::Error> {
    Option::<Vec<Day>>::deserialize(d)?
        .map(non_empty)
        .transpose()
}

/// At least one day, each once: a week's hours are shared among its days, so `fri` written twice would
/// have cut everyone's day short.
fn non_empty<E: serde::de::Error>(days: Vec<Day>) -> Result<Vec<Day>, E> {
    if days.is_empty() {
        return Err(E::custom(
            "must name at least one day (mon, tue, … sun): on an empty week nobody ever works",
        ));
    }
    if let Some(twice) = days
        .iter()
        .enumerate()
        .find_map(|(i, d)| days[..i].contains(d).then_some(d))
    {
        return Err(E::custom(format!(
            "names {} twice: write each working day once",
            crate::domain::weekday_name(twice.0)
        )));
    }
    Ok(days)
}

/// The repositories, each once: one named twice was synced twice (Gitea's names ignore case, so
/// `acme/API` is `acme/api`).
fn unique_repositories<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RepoName>, D::Error> {
    let mut seen = BTreeSet::new();
    checked_list(d, "a repository, owner/name", |r: &RepoName| {
        if seen.insert(r.to_string().to_lowercase()) {
            Ok(())
        } else {
            Err(format!("{r} is listed twice; keep one entry"))
        }
    })
}

fn unique_team<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Member>, D::Error> {
    let mut seen = std::collections::BTreeMap::new();
    checked_list(d, "a team member", |m: &Member| {
        if m.name.is_empty() {
            return Err("every team member needs a name (their Gitea username)".to_owned());
        }
        // Gitea's usernames are one user whatever their case: `amara` and `Amara` were two members,
        // each with the hours of one (audit 89).
        if let Some(first) = seen.insert(m.name.to_lowercase(), m.name.clone()) {
            return Err(if first == m.name {
                format!("team member \"{}\" is listed twice; keep one entry", m.name)
            } else {
                format!(
                    "team member \"{}\" is \"{first}\" again (Gitea's usernames ignore case); keep one \
                     entry",
                    m.name
                )
            });
        }
        if let (Some(starts), Some(ends)) = (m.starts, m.ends)
            && ends < starts
        {
            return Err(format!(
                "{} ends ({ends}) before they start ({starts}), so they would never work; fix one of the \
                 dates (or drop `ends` if they stay)",
                m.name
            ));
        }
        Ok(())
    })
}

/// A list each entry of which is checked as it is read, against the ones before it: a refusal is then at
/// the entry's line and path (`team[3]`), not at the list's (audit 184: a member named twice was
/// reported at `team:`). Entries are mappings or strings.
fn checked_list<'de, D, T, F>(d: D, what: &'static str, check: F) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
    F: FnMut(&T) -> Result<(), String>,
{
    use serde::de::{DeserializeSeed, Error, IntoDeserializer, MapAccess, SeqAccess, Visitor};
    use std::marker::PhantomData;

    /// One entry: read, then checked inside the reader's own call, which gives the error its position.
    struct Entry<'c, T, F> {
        check: &'c mut F,
        what: &'static str,
        entry: PhantomData<T>,
    }
    impl<'de, T: Deserialize<'de>, F: FnMut(&T) -> Result<(), String>> Entry<'_, T, F> {
        fn checked<E: Error>(self, v: T) -> Result<T, E> {
            (self.check)(&v).map_err(E::custom)?;
            Ok(v)
        }
    }
    impl<'de, T: Deserialize<'de>, F: FnMut(&T) -> Result<(), String>> DeserializeSeed<'de>
        for Entry<'_, T, F>
    {
        type Value = T;
        fn deserialize<E: Deserializer<'de>>(self, d: E) -> Result<T, E::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de, T: Deserialize<'de>, F: FnMut(&T) -> Result<(), String>> Visitor<'de>
        for Entry<'_, T, F>
    {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.what)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            let v = T::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
            self.checked(v)
        }
        fn visit_str<E: Error>(self, s: &str) -> Result<T, E> {
            let v = T::deserialize(s.into_deserializer())?;
            self.checked(v)
        }
    }
    struct List<T, F> {
        check: F,
        what: &'static str,
        entry: PhantomData<T>,
    }
    impl<'de, T: Deserialize<'de>, F: FnMut(&T) -> Result<(), String>> Visitor<'de> for List<T, F> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "a list, each entry {}", self.what)
        }
        fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element_seed(Entry {
                check: &mut self.check,
                what: self.what,
                entry: PhantomData,
            })? {
                out.push(v);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(List {
        check,
        what,
        entry: PhantomData,
    })
}

/// Command-line settings that override everything else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `--seed`: `forecast.seed`.
    pub seed: Option<u64>,
    /// `--trials`: `forecast.trials`.
    pub trials: Option<u32>,
    /// Other flags, as (key path, value): `("backtest.trials", "300")`. Checked like the file's values.
    pub keys: Vec<(&'static str, String)>,
}

impl Config {
    /// The path of the config file in a state repo.
    pub(crate) fn path_in(state_dir: &Path) -> PathBuf {
        state_dir.join(FILE_NAME)
    }

    /// Parses config text; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Self, ConfigError> {
        if Self::is_blank(text) {
            return Ok(Self::default());
        }
        // Said as what it is, not as serde's "invalid type: sequence, expected struct Config" (audit 120).
        if let Ok(v) = yaml_serde::from_str::<yaml_serde::Value>(text)
            && !v.is_mapping()
        {
            return Err(ConfigError::NotMapping {
                what: if v.is_sequence() {
                    "a list"
                } else {
                    "a single value"
                },
            });
        }
        Ok(yamlfile::parse(text, file)?)
    }

    /// Whether config text sets nothing: empty, only comments, or an empty document (`~`, `null`).
    pub(crate) fn is_blank(text: &str) -> bool {
        text.trim().is_empty()
            || yaml_serde::from_str::<yaml_serde::Value>(text).is_ok_and(|v| v.is_null())
    }

    /// Resolves the config of a state repo: defaults < `commitea.yaml` < `COMMITEA_*` env < overrides.
    pub fn load(
        state_dir: &Path,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &Overrides,
    ) -> Result<Self, ConfigError> {
        let path = Self::path_in(state_dir);
        let text = match crate::state::read_text_file(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let mut cfg = Self::parse(&text, Path::new(FILE_NAME))?;
        let from_env = cfg.apply_env(env)?;
        if let Some(s) = overrides.seed {
            cfg.forecast.seed = Some(s);
        }
        if let Some(t) = overrides.trials {
            if !(1..=MAX_TRIALS).contains(&t) {
                return Err(ConfigError::Flag {
                    flag: "--trials".into(),
                    message: format!("must be between 1 and {MAX_TRIALS}, not {t}"),
                });
            }
            cfg.forecast.trials = Trials(t);
        }
        for (key, value) in &overrides.keys {
            cfg.set(key, value)?;
        }
        // A value refused is blamed on where it came from (audit 89: a variable's was on commitea.yaml).
        cfg.check().map_err(|e| match e {
            ConfigError::Value { key, message } => {
                if overrides.keys.iter().any(|(k, _)| *k == key) {
                    ConfigError::Flag {
                        flag: format!("the flag for {key}"),
                        message,
                    }
                } else if let Some((var, _)) = from_env.iter().find(|(_, k)| k == key) {
                    ConfigError::Env {
                        var: var.clone(),
                        message: format!("{key}: {message}"),
                    }
                } else if (from_env.is_empty() && overrides.keys.is_empty())
                    // The file alone is refused too: it is the file's (audit 156: every variable set,
                    // COMMITEA_SERVER among them, was named beside a wrong file).
                    || Self::parse(&text, Path::new(FILE_NAME)).is_ok_and(|c| c.check().is_err())
                {
                    ConfigError::Value { key, message }
                } else {
                    // A check across keys (the ladder against the working day) may fail on a value
                    // another key's variable or flag set: named, not left on the file alone (audit
                    // 153: `COMMITEA_CALENDAR_WORKDAY_HOURS=3` read as the file's ladder being wrong).
                    let set: Vec<String> = from_env
                        .iter()
                        .map(|(var, _)| var.clone())
                        .chain(
                            overrides
                                .keys
                                .iter()
                                .map(|(k, _)| format!("the flag for {k}")),
                        )
                        .collect();
                    ConfigError::Value {
                        key,
                        message: format!(
                            "{message} (as read with {} set over the file)",
                            crate::prose::and_list(&set)
                        ),
                    }
                }
            }
            e => e,
        })?;
        // A member's repository spelt in another case is the top-level one (Gitea's names ignore case):
        // read as theirs, a member writing `Acme/API` took no work in acme/api (audit 153).
        let top = cfg.repositories.clone();
        for m in &mut cfg.team {
            for r in &mut m.repositories {
                *r = r.clone().as_configured(&top);
            }
        }
        Ok(cfg)
    }

    /// Sets the key at the dotted path `key` (`backtest.trials`) from a flag's `value`, checked as the file's
    /// values are; the error names the flag's key.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Flag {
            flag: format!("the flag for {key}"),
            message,
        };
        let mut tree = yaml_serde::to_value(&*self).map_err(|e| invalid(e.to_string()))?;
        let value: yaml_serde::Value =
            yaml_serde::from_str(value).map_err(|e| invalid(e.to_string()))?;
        let path: Vec<String> = key.split('.').map(str::to_owned).collect();
        set_path(&mut tree, &path, value);
        *self = yaml_serde::from_value(tree).map_err(|e| invalid(e.to_string()))?;
        Ok(())
    }

    /// The keys that shape every forecast (not one person's hours, which the moves say as capacity, nor
    /// what only warns or sizes a what-if) whose values differ in `other`: `forecast.horizon_days`.
    pub fn forecast_keys_changed(&self, other: &Self) -> Vec<&'static str> {
        let (a, b) = (&self.forecast, &other.forecast);
        [
            ("forecast.trials", a.trials != b.trials),
            ("forecast.seed", a.seed != b.seed),
            ("forecast.horizon_days", a.horizon_days != b.horizon_days),
            (
                "forecast.abandonment_days",
                a.abandonment_days != b.abandonment_days,
            ),
            (
                "forecast.abandonment_min_history_days",
                a.abandonment_min_history_days != b.abandonment_min_history_days,
            ),
            (
                "forecast.keep_planned_people",
                a.keep_planned_people != b.keep_planned_people,
            ),
            (
                "forecast.adaptive_trials",
                a.adaptive_trials != b.adaptive_trials,
            ),
            (
                "calendar.workday_hours",
                self.calendar.workday_hours != other.calendar.workday_hours,
            ),
            (
                "calendar.timezone",
                self.calendar.timezone != other.calendar.timezone,
            ),
        ]
        .into_iter()
        .filter_map(|(key, changed)| changed.then_some(key))
        .collect()
    }

    /// Checks what no single key can check on its own: that the site's folder cannot destroy state, and
    /// that the server's URL carries no password (every command checks, not only a sync: an offline run
    /// writes the URL into the site's links).
    pub fn check(&self) -> Result<(), ConfigError> {
        if let Some(server) = &self.server
            && let Err(why) = crate::gitea::client::api_url(server)
        {
            return Err(ConfigError::Value {
                key: "server",
                message: format!(
                    "the URL (from commitea.yaml, or COMMITEA_SERVER) is not a Gitea server's: {why}; \
                     give its root, e.g. https://gitea.example.com"
                ),
            });
        }
        if let Some(why) = crate::state::git::branch_name_problem(&self.approvals.branch) {
            return Err(ConfigError::Value {
                key: "approvals.branch",
                message: why,
            });
        }
        // What git refuses in a signature, refused here, where the key can be named: at the commit,
        // after the whole forecast, it was "Signature name or email must not contain …" (audit 153).
        for (key, value, what) in [
            ("commit.name", &self.commit.name, "a name, e.g. CommiTea"),
            (
                "commit.email",
                &self.commit.email,
                "an e-mail address, e.g. commitea@localhost",
            ),
        ] {
            if value.trim().is_empty() || value.contains(['<', '>', '\n', '\r', '\0']) {
                return Err(ConfigError::Value {
                    key,
                    message: format!(
                        "{value:?} cannot sign a commit (git takes no empty value, `<`, `>`, line \
                         break or NUL there): give {what}"
                    ),
                });
            }
        }
        // A model's key read from the Gitea token's variable sent the token to the model's URL (audit 159).
        for (key, endpoint) in [
            ("models.small.api_key_env", Some(&self.models.small)),
            ("models.big.api_key_env", self.models.big.as_ref()),
        ] {
            if let Some(var) = endpoint.and_then(|e| e.api_key_env.as_deref())
                && [
                    "COMMITEA_GITEA_TOKEN",
                    "GITEA_TOKEN",
                    "GITHUB_TOKEN",
                    "FORGEJO_TOKEN",
                ]
                .iter()
                .any(|t| var.eq_ignore_ascii_case(t))
            {
                return Err(ConfigError::Value {
                    key,
                    message: format!(
                        "{var} holds the Gitea token, which would be sent to the model's server: give \
                         the variable that holds the model's own key"
                    ),
                });
            }
        }
        if let Some(why) = crate::state::git::remote_name_problem(&self.approvals.remote) {
            return Err(ConfigError::Value {
                key: "approvals.remote",
                message: format!(
                    "{why}: give the name of the state repo's git remote, e.g. origin"
                ),
            });
        }
        if self.estimates.ladder.is_empty() {
            return Err(ConfigError::Value {
                key: "estimates.ladder",
                message:
                    "lists no estimate, so every est/* label would be off it: list the rungs, e.g. \
                          [1h, 2h, 4h, 1d, 2d, 3d, 1w, 2w], or leave the key out for those"
                        .to_owned(),
            });
        }
        // A day has 24 hours: more a week than that over their days was planned in full while their
        // calendar gave them at most 24 a day (audit 90).
        for m in &self.team {
            let days = m
                .working_days
                .as_ref()
                .unwrap_or(&self.calendar.working_days)
                .len();
            if let Some(h) = m.hours_per_week
                && days > 0
                && h.0 / days as f64 > 24.0
            {
                return Err(ConfigError::Value {
                    key: "team[].hours_per_week",
                    message: format!(
                        "{}: {} hours a week over {} is more than 24 hours a day: lower the hours, or give \
                         them more working days",
                        m.name,
                        h.0,
                        crate::prose::count(days, "working day", "working days")
                    ),
                });
            }
        }
        if self.sync.parallel.0 > self.sync.max_parallel.0 {
            return Err(ConfigError::Value {
                key: "sync.parallel",
                message: format!(
                    "{} is more than sync.max_parallel ({}), the most a sync ever sends at once: lower it, \
                     or raise sync.max_parallel",
                    self.sync.parallel.0, self.sync.max_parallel.0
                ),
            });
        }
        // Smallest first, each once: the rung nearest a native estimate, and "off the ladder", read it
        // so (audit 89: `[1d, 1h, 1d]` was taken).
        let wd = self.workday_hours();
        for pair in self.estimates.ladder.windows(2) {
            if let [a, b] = pair
                && b.hours(wd) <= a.hours(wd)
            {
                return Err(ConfigError::Value {
                    key: "estimates.ladder",
                    message: format!(
                        "{} comes after {}: list the rungs smallest first, each once",
                        b.label(),
                        a.label()
                    ),
                });
            }
        }
        site_output(&self.site.output).map_err(|message| ConfigError::Value {
            key: "site.output",
            message: format!(
                "{message}; the site writer deletes every file in its folder that it did not render, so give it a \
                 folder of its own inside the state repo, e.g. `public`"
            ),
        })
    }

    /// Applies `COMMITEA_*` overrides from `env` to scalar keys (see the module docs for the names).
    pub(crate) fn apply_env(
        &mut self,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        let mut vars: Vec<(String, String)> = env
            .into_iter()
            .filter(|(k, _)| k.starts_with("COMMITEA_"))
            .collect();
        if vars.is_empty() {
            return Ok(Vec::new());
        }
        vars.sort();
        let mut tree = yaml_serde::to_value(&*self).map_err(|e| ConfigError::Env {
            var: "COMMITEA_*".into(),
            message: e.to_string(),
        })?;
        let (mut leaves, mut lists) = (Vec::new(), Vec::new());
        collect_leaves(&tree, &mut Vec::new(), &mut leaves, &mut lists);
        let mut set = Vec::new();
        for (var, raw) in &vars {
            if not_config(var) {
                continue;
            }
            let Some(path) = leaves.iter().find(|p| env_name(p) == *var) else {
                match lists.iter().find(|p| env_name(p) == *var) {
                    Some(p) => crate::prose::warn_once(
                        var,
                        &format!(
                            "ignoring {var}: {} is a list, which only commitea.yaml sets",
                            p.join(".")
                        ),
                    ),
                    None => warn_unknown_var(var, &tree, &leaves, &lists),
                }
                continue;
            };
            // An unset CI variable (`${{ vars.X }}`) arrives empty: read as YAML, that is null, which
            // erased the file's value without a word (audit 89).
            if raw.trim().is_empty() {
                crate::prose::warn_once(
                    var,
                    &format!("ignoring {var}: it is empty; unset it, or give it a value"),
                );
                continue;
            }
            // The text as it is, where the key takes text: read as YAML, `Plan #2` lost its `#2` and
            // `Roadmap: Q1` was a map. Otherwise YAML (a number, a boolean, a section).
            let before = tree.clone();
            set_path(&mut tree, path, yaml_serde::Value::String(raw.clone()));
            if yaml_serde::from_value::<Config>(tree.clone()).is_err() {
                tree = before;
                let value: yaml_serde::Value =
                    yaml_serde::from_str(raw).map_err(|e| ConfigError::Env {
                        var: var.clone(),
                        message: crate::prose::type_words(&e.to_string()),
                    })?;
                set_path(&mut tree, path, value);
                let probe: Result<Config, _> = yaml_serde::from_value(tree.clone());
                if let Err(e) = probe {
                    // In words, as a file's value is said (audit 120: "expected u32").
                    return Err(ConfigError::Env {
                        var: var.clone(),
                        message: crate::prose::type_words(&e.to_string()),
                    });
                }
            }
            set.push((var.clone(), path.join(".")));
        }
        *self = yaml_serde::from_value(tree).map_err(|e| ConfigError::Env {
            var: "COMMITEA_*".into(),
            message: e.to_string(),
        })?;
        Ok(set)
    }

    /// The working hours in a day, the length of `1d`.
    pub fn workday_hours(&self) -> f64 {
        self.calendar.workday_hours.0
    }
}

/// Whether `output` is a folder of its own inside the state repo: relative, not the repo itself, not
/// leaving it, and neither inside nor around anything CommiTea owns ([`OWNED_NAMES`]).
fn site_output(output: &Path) -> Result<(), String> {
    let shown = output.display();
    let mut parts: Vec<String> = Vec::new();
    for c in output.components() {
        match c {
            std::path::Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(format!("\"{shown}\" leaves the state repo"));
                }
            }
            std::path::Component::RootDir | std::path::Component::Prefix(_) => {
                return Err(format!(
                    "\"{shown}\" is an absolute path, outside the state repo"
                ));
            }
        }
    }
    let Some(first) = parts.first() else {
        return Err(format!("\"{shown}\" is the state repo itself"));
    };
    if let Some(owned) = OWNED_NAMES.iter().find(|n| first.eq_ignore_ascii_case(n)) {
        return Err(if parts.len() == 1 {
            format!("\"{shown}\" is {owned}, which CommiTea keeps")
        } else {
            format!("\"{shown}\" is inside {owned}, which CommiTea keeps")
        });
    }
    Ok(())
}

fn env_name(path: &[String]) -> String {
    let mut s = String::from("COMMITEA");
    for p in path {
        s.push('_');
        s.push_str(&p.to_ascii_uppercase());
    }
    s
}

/// Every key path whose value is a scalar or null (lists and tables are not overridable from the environment).
fn collect_leaves(
    v: &yaml_serde::Value,
    path: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
    lists: &mut Vec<Vec<String>>,
) {
    match v {
        yaml_serde::Value::Mapping(m) => {
            for (k, child) in m {
                if let Some(k) = k.as_str() {
                    path.push(k.to_owned());
                    collect_leaves(child, path, out, lists);
                    path.pop();
                }
            }
        }
        yaml_serde::Value::Sequence(_) => lists.push(path.clone()),
        yaml_serde::Value::Tagged(_) => {}
        _ => out.push(path.clone()),
    }
}

fn set_path(v: &mut yaml_serde::Value, path: &[String], value: yaml_serde::Value) {
    match path.split_first() {
        None => *v = value,
        Some((head, rest)) => {
            if let Some(child) = v.get_mut(head.as_str()) {
                set_path(child, rest, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("commitea.yaml"))
    }

    #[test]
    fn the_workflows_and_the_tests_own_variables_are_not_taken_for_config_keys() {
        for var in [
            "COMMITEA_SOURCE",
            "COMMITEA_VERSION",
            "COMMITEA_BLESS_SCREENSHOTS",
            "COMMITEA_BLESS_DEMO",
            "COMMITEA_GITEA_TOKEN",
        ] {
            assert!(not_config(var), "{var}");
        }
        assert!(!not_config("COMMITEA_FORECAST_TRIALS"));
        assert!(!not_config("COMMITEA_BLESS"));
    }

    #[test]
    fn a_zones_wall_clock_and_its_moments_go_both_ways() {
        let t = |s: &str| {
            chrono::DateTime::parse_from_rfc3339(s)
                .unwrap()
                .with_timezone(&chrono::Utc)
        };
        let fixed = Zone::parse("+11:00").unwrap();
        let monday = t("2026-11-22T22:00:00Z");
        assert_eq!(fixed.local(monday).to_string(), "2026-11-23 09:00:00");
        assert_eq!(fixed.instant(fixed.local(monday)), monday);
        // Either side of a clock change (Los Angeles: UTC-8 in winter, UTC-7 in summer).
        let la = Zone::parse("America/Los_Angeles").unwrap();
        for s in [
            "2026-03-08T09:59:00Z",
            "2026-03-08T10:01:00Z",
            "2026-07-01T12:00:00Z",
        ] {
            assert_eq!(la.instant(la.local(t(s))), t(s), "{s}");
        }
        assert_eq!(
            la.local(t("2026-07-01T12:00:00Z")).to_string(),
            "2026-07-01 05:00:00"
        );
        // The end of a day is that day's last second there.
        let end = la.instant(
            chrono::NaiveDate::from_ymd_opt(2026, 12, 18)
                .unwrap()
                .and_hms_opt(23, 59, 59)
                .unwrap(),
        );
        assert_eq!(end, t("2026-12-19T07:59:59Z"));
    }

    #[test]
    fn empty_file_gives_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.workday_hours(), 6.0);
        assert_eq!(c.estimates.ladder.len(), 8);
        assert_eq!(c.forecast.trials.0, 10_000);
    }

    #[test]
    fn a_team_member_is_a_gitea_username() {
        // The name becomes the path of the person's page and goes into op files.
        for bad in ["../../root", "..", ".hidden", "ann smith", ""] {
            let err = parse(&format!("team:\n  - name: \"{bad}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("team[0].name") && err.contains("is not a Gitea username"),
                "{bad}: {err}"
            );
        }
        assert_eq!(
            parse("team:\n  - name: ann.b-c_d\n").unwrap().team[0].name,
            "ann.b-c_d"
        );
    }

    #[test]
    fn unknown_key_names_line_and_field() {
        let err = parse("forecast:\n  trials: 100\n  trails: 5\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "commitea.yaml line 3 column 3: forecast.trails: unknown field `trails`"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_server_url_with_a_password_is_refused_by_every_command_without_echoing_it() {
        // A URL that does not parse was let through (audit 87): its password reached the site's links.
        for server in [
            "https://bot:s3cret@gitea.example.com",
            "http://user:s3cret@127.0.0.1:999999",
            "ftp://user:s3cret@host",
            "https://gitea.example.com/?access_token=s3cret",
        ] {
            let cfg = parse(&format!("server: \"{server}\"\n")).unwrap();
            let err = cfg.check().unwrap_err().to_string();
            assert!(
                err.contains("server: the URL (from commitea.yaml, or COMMITEA_SERVER) is not a Gitea server's")
                    && !err.contains("s3cret"),
                "{err}"
            );
        }
        for server in ["not a url", "ftp://gitea.example.com"] {
            let cfg = parse(&format!("server: \"{server}\"\n")).unwrap();
            assert!(cfg.check().is_err(), "{server}");
        }
        assert!(
            parse("server: https://gitea.example.com/\n")
                .unwrap()
                .check()
                .is_ok()
        );
    }

    #[test]
    fn only_the_keys_that_shape_every_forecast_count_as_its_settings_changing() {
        let base = parse("forecast:\n  abandonment_min_history_days: 365\n").unwrap();
        // A rung added, a what-if's trials, the site's title, a person's hours: not the forecast's own.
        let other = parse(
            "forecast:\n  abandonment_min_history_days: 365\n  what_if_issue_trials: 5000\n\
             estimates:\n  ladder: [1h, 1d, 1w, 3w]\nsite:\n  title: Other\n",
        )
        .unwrap();
        assert_eq!(base.forecast_keys_changed(&other), Vec::<&str>::new());
        let on = parse("calendar:\n  workday_hours: 8\n").unwrap();
        assert_eq!(
            base.forecast_keys_changed(&on),
            [
                "forecast.abandonment_min_history_days",
                "calendar.workday_hours"
            ]
        );
    }

    #[test]
    fn an_empty_ladder_is_refused() {
        let err = parse("estimates:\n  ladder: []\n")
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(err.contains("estimates.ladder: lists no estimate"), "{err}");
        for ladder in ["[1d, 1h]", "[1h, 1d, 1d]", "[1h, 8h, 1d]"] {
            let err = parse(&format!("estimates:\n  ladder: {ladder}\n"))
                .unwrap()
                .check()
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("list the rungs smallest first, each once"),
                "{err}"
            );
        }
        let err = parse("sync:\n  parallel: 20\n  max_parallel: 4\n")
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sync.parallel: 20 is more than sync.max_parallel (4)"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_name_line_and_field() {
        let err = parse("calendar:\n  workday_hours: 0\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("calendar.workday_hours"), "{err}");
        assert!(err.contains("must be at least 0.1"), "{err}");
        let err = parse("calendar:\n  workday_hours: 100\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("at most 24, not 100"), "{err}");
        for (yaml, line, field) in [
            (
                "calendar:\n  working_days: []\n",
                "line 2",
                "calendar.working_days",
            ),
            (
                // Its own line, not the list item's (audit 127).
                "team:\n  - name: ann\n    working_days: []\n",
                "line 3",
                "team[0].working_days",
            ),
        ] {
            let err = parse(yaml).unwrap_err().to_string();
            assert!(
                err.contains(line) && err.contains(field) && err.contains("at least one day"),
                "{err}"
            );
        }
        assert!(parse("team:\n  - name: ann\n    working_days: ~\n").is_ok());
        // A range of holidays, as time off takes one (audit 178: refused with serde's words).
        let c = parse(
            "calendar:\n  holidays:\n    - 2026-12-24\n    - { from: 2026-12-30, to: 2027-01-01 }\n",
        )
        .unwrap();
        assert_eq!(
            c.calendar.holidays,
            ["2026-12-24", "2026-12-30", "2026-12-31", "2027-01-01"]
                .map(|d| d.parse::<NaiveDate>().unwrap())
        );
        let err = parse("calendar:\n  holidays:\n    - { from: 2027-01-01, to: 2026-12-30 }\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("calendar.holidays[0]")
                && err.contains("ends (2026-12-30) before it starts"),
            "{err}"
        );
        // Left out is every repository; `[]` read so was the opposite of what it says (audit 178).
        let err = parse("repositories: [acme/api]\nteam:\n  - name: ann\n    repositories: []\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 4")
                && err.contains("team[0].repositories")
                && err.contains("is empty: leave `repositories` out"),
            "{err}"
        );
        // A flag's round trip writes no empty list back.
        let mut c = parse("repositories: [acme/api]\nteam:\n  - name: ann\n").unwrap();
        c.set("forecast.trials", "300").unwrap();
        assert!(c.team[0].repositories.is_empty());

        let err = parse(
            "team:\n  - name: ann\n    time_off:\n      - { from: 2026-12-10, to: 2026-12-01 }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("line 4") && err.contains("team[0].time_off[0]"),
            "{err}"
        );
        assert!(err.contains("ends (2026-12-01) before it starts"), "{err}");

        // One day off as a person writes it; a date that is no date, said so.
        let c = parse("team:\n  - name: ann\n    time_off:\n      - 2026-12-24\n").unwrap();
        assert_eq!(c.team[0].time_off[0].from, c.team[0].time_off[0].to);
        for bad in [
            "team:\n  - name: ann\n    time_off:\n      - 2026-02-30\n",
            "team:\n  - name: ann\n    time_off:\n      - { from: 2026-02-30, to: 2026-03-02 }\n",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(
                err.contains("\"2026-02-30\" is not a date: expected a real day as YYYY-MM-DD")
                    && err.contains("team[0].time_off[0]")
                    && !err.contains("Raw"),
                "{err}"
            );
        }
        let err = parse("team:\n  - name: ann\n    time_off: [7]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a range `{ from: YYYY-MM-DD, to: YYYY-MM-DD }`"),
            "{err}"
        );
        // Someone who leaves before they start would never work.
        let err = parse("team:\n  - name: ann\n    starts: 2027-02-01\n    ends: 2027-01-01\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("team[0]: ann ends (2027-01-01) before they start (2027-02-01)"),
            "{err}"
        );

        let err = parse("team:\n  - name: ann\n  - name: ann\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("listed twice"), "{err}");
        let err = parse("repositories: [acme/api, acme/web, acme/API]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("repositories[2]: acme/API is listed twice"),
            "{err}"
        );
        // Each said at the entry's line, not the list's (audit 184: at `team:`; audit 191: a bad name at
        // the first entry's).
        let err = parse("repositories:\n  - acme/api\n  - acme/web\n  - not a name\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 4") && err.contains("repositories[2]"),
            "{err}"
        );
        let err = parse("repositories:\n  - acme/api\n  - acme/web\n  - acme/API\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 4") && err.contains("repositories[2]: acme/API is listed twice"),
            "{err}"
        );
        let err = parse("team:\n  - name: amara\n    hours_per_week: 20\n  - name: Amara\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 4")
                && err.contains("team[1]: team member \"Amara\" is \"amara\" again"),
            "{err}"
        );

        // A day named twice would have shared the week's hours among six days; a two-digit year is the year
        // 26, not 2026: both refused, at their line.
        for (yaml, field, said) in [
            (
                "calendar:\n  working_days: [mon, tue, wed, thu, fri, fri]\n",
                "calendar.working_days",
                "names fri twice",
            ),
            (
                "team:\n  - name: ann\n    working_days: [mon, mon]\n",
                "team[0].working_days",
                "names mon twice",
            ),
            (
                "team:\n  - name: ann\n    starts: 26-12-07\n",
                "team[0].starts",
                "\"26-12-07\" is not a date: expected a real day as YYYY-MM-DD",
            ),
            (
                "calendar:\n  holidays: [2027-01-01, 27-12-25]\n",
                "calendar.holidays",
                "\"27-12-25\" is not a date",
            ),
            (
                "calendar:\n  holidays: [2027-02-29]\n",
                "calendar.holidays",
                "\"2027-02-29\" is not a date: expected a real day",
            ),
        ] {
            let err = parse(yaml).unwrap_err().to_string();
            // At the key's own line: a team member's third line, not its list item's (audit 127).
            let line = if field.starts_with("team[") {
                "line 3"
            } else {
                "line 2"
            };
            assert!(
                err.contains(line) && err.contains(field) && err.contains(said),
                "{yaml}: {err}"
            );
        }
        // A holiday deep in a list is said by its place in it (it was said at the key after the list;
        // the parser's line is the item before's).
        let err = parse(
            "calendar:\n  holidays:\n    - 2027-01-01\n    - 2026-12-32\n  workday_hours: 8\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("calendar.holidays[1]: \"2026-12-32\" is not a date"),
            "{err}"
        );
        {}
        let c = parse("team:\n  - name: ann\n    starts: 2026-12-07\n    ends: '2027-03-31'\n")
            .unwrap();
        assert_eq!(c.team[0].ends, chrono::NaiveDate::from_ymd_opt(2027, 3, 31));

        let err = parse("calendar:\n  working_days: [mon, funday]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && err.contains("funday"), "{err}");

        let err = parse("estimates:\n  ladder: [1h, 3x]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("estimates.ladder[1]") && err.contains("3x"),
            "{err}"
        );

        let err = parse("repositories: [acme]\n").unwrap_err().to_string();
        assert!(
            err.contains("repositories[0]") && err.contains("owner/repo"),
            "{err}"
        );
    }

    #[test]
    fn models_default_to_a_local_ollama_and_no_big_model() {
        let c = parse("").unwrap();
        assert_eq!(c.models.small.url, "http://127.0.0.1:11434/v1");
        assert_eq!(c.models.small.model, "qwen3:4b");
        assert_eq!(c.models.small.api_key_env, None);
        assert!(c.models.big.is_none());
        let c = parse(
            "models:\n  big: { url: \"https://api.example.com/v1\", model: big, api_key_env: BIG_KEY, timeout_seconds: 60 }\n  max_turns: 4\n",
        )
        .unwrap();
        let big = c.models.big.unwrap();
        assert_eq!((big.model.as_str(), big.timeout_seconds.0), ("big", 60));
        assert_eq!(big.max_tokens.0, 4096, "unset keys take their defaults");
        assert_eq!(c.models.max_turns.0, 4);
        let err = parse("models:\n  small: { timeout_seconds: 0 }\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("timeout_seconds") && err.contains("between 1 and 3600"),
            "{err}"
        );
        let err = parse("models:\n  small: { key: sk-123 }\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("key"), "{err}");
        // The small model's scalars from the environment, as every setting.
        let dir = tempfile::tempdir().unwrap();
        let env = vec![(
            "COMMITEA_MODELS_SMALL_MODEL".to_string(),
            "qwen3:4b".to_string(),
        )];
        let c = Config::load(dir.path(), env, &Overrides::default()).unwrap();
        assert_eq!(c.models.small.model, "qwen3:4b");
    }

    #[test]
    fn a_models_key_is_never_read_from_the_gitea_tokens_variable() {
        let err = Config::parse(
            "models:\n  big: { url: \"https://m.example/v1\", model: m, api_key_env: COMMITEA_GITEA_TOKEN }\n",
            Path::new(FILE_NAME),
        )
        .and_then(|c| c.check().map(|()| c))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("models.big.api_key_env") && err.contains("holds the Gitea token"),
            "{err}"
        );
    }

    #[test]
    fn a_commit_signature_git_refuses_is_refused_with_its_key() {
        for (yaml, key) in [
            ("commit:\n  name: \"a>b\"\n", "commit.name"),
            ("commit:\n  name: \"\"\n", "commit.name"),
            ("commit:\n  email: \" \"\n", "commit.email"),
            ("commit:\n  name: \"a\\0b\"\n", "commit.name"),
        ] {
            let err = Config::parse(yaml, Path::new(FILE_NAME))
                .and_then(|c| c.check().map(|()| c))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(key) && err.contains("cannot sign a commit"),
                "{yaml}: {err}"
            );
        }
    }

    #[test]
    fn a_check_across_keys_names_the_variable_that_set_one_of_them() {
        // The ladder is checked against the working day: a variable's short day was blamed on the
        // file's ladder alone (audit 153).
        let dir = tempfile::tempdir().unwrap();
        let env = vec![(
            "COMMITEA_CALENDAR_WORKDAY_HOURS".to_string(),
            "3".to_string(),
        )];
        let err = Config::load(dir.path(), env, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("estimates.ladder")
                && err.contains("as read with COMMITEA_CALENDAR_WORKDAY_HOURS set over the file"),
            "{err}"
        );
        // A file wrong on its own is the file's, whatever else is set.
        std::fs::write(
            dir.path().join(FILE_NAME),
            "calendar:\n  workday_hours: 3\n",
        )
        .unwrap();
        let env = vec![(
            "COMMITEA_SERVER".to_string(),
            "https://git.example".to_string(),
        )];
        let err = Config::load(dir.path(), env, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("commitea.yaml: estimates.ladder") && !err.contains("COMMITEA_SERVER"),
            "{err}"
        );
    }

    #[test]
    fn a_members_repository_in_another_case_is_the_top_level_one() {
        // Gitea's names ignore case: a member's `Acme/API` took no work in acme/api (audit 153).
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE_NAME),
            "repositories: [acme/api, acme/web]\nteam:\n  - name: bjorn\n    hours_per_week: 40\n    \
             repositories: [Acme/API, acme/other]\n",
        )
        .unwrap();
        let c = Config::load(dir.path(), Vec::new(), &Overrides::default()).unwrap();
        assert_eq!(
            c.team[0].repositories,
            vec![RepoName::new("acme", "api"), RepoName::new("acme", "other")]
        );
    }

    #[test]
    fn env_overrides_file_and_flags_override_env() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE_NAME),
            "forecast:\n  trials: 500\n  seed: 1\n",
        )
        .unwrap();
        let env = vec![
            ("COMMITEA_FORECAST_TRIALS".to_string(), "700".to_string()),
            (
                "COMMITEA_CALENDAR_WORKDAY_HOURS".to_string(),
                "7.5".to_string(),
            ),
            ("COMMITEA_GITEA_TOKEN".to_string(), "secret".to_string()),
            ("PATH".to_string(), "/bin".to_string()),
        ];
        let c = Config::load(dir.path(), env.clone(), &Overrides::default()).unwrap();
        assert_eq!(c.forecast.trials.0, 700);
        assert_eq!(c.forecast.seed, Some(1));
        assert_eq!(c.workday_hours(), 7.5);
        let c = Config::load(
            dir.path(),
            env,
            &Overrides {
                seed: Some(9),
                trials: Some(42),
                keys: vec![("backtest.trials", "77".into())],
            },
        )
        .unwrap();
        assert_eq!((c.forecast.trials.0, c.forecast.seed), (42, Some(9)));
        assert_eq!(c.backtest.trials.0, 77);
    }

    #[test]
    fn a_site_output_that_could_destroy_state_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let refused = [
            (".", "the state repo itself"),
            ("", "the state repo itself"),
            ("public/..", "the state repo itself"),
            ("..", "leaves the state repo"),
            ("../site", "leaves the state repo"),
            ("/var/www", "absolute path"),
            ("snapshot", "is snapshot"),
            ("forecast/site", "inside forecast"),
            ("ops", "is ops"),
            (".git", "is .git"),
            (".gitea/pages", "inside .gitea"),
            (".forgejo/site", "inside .forgejo"),
            ("commitea.yaml", "is commitea.yaml"),
            ("pm-state.md", "is pm-state.md"),
            ("site-templates", "is site-templates"),
            ("./Snapshot", "is snapshot"),
        ];
        for (output, why) in refused {
            std::fs::write(
                dir.path().join(FILE_NAME),
                format!("site:\n  output: {output:?}\n"),
            )
            .unwrap();
            let err = Config::load(dir.path(), Vec::new(), &Overrides::default())
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("commitea.yaml: site.output: ") && err.contains(why),
                "{output}: {err}"
            );
        }
        // The environment is checked the same way.
        std::fs::write(dir.path().join(FILE_NAME), "").unwrap();
        let err = Config::load(
            dir.path(),
            vec![("COMMITEA_SITE_OUTPUT".into(), ".".into())],
            &Overrides::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("environment variable COMMITEA_SITE_OUTPUT: site.output: "),
            "{err}"
        );
        for ok in ["public", "site/public", "./public", "docs/site"] {
            std::fs::write(
                dir.path().join(FILE_NAME),
                format!("site:\n  output: {ok}\n"),
            )
            .unwrap();
            Config::load(dir.path(), Vec::new(), &Overrides::default())
                .unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn a_file_that_is_no_mapping_is_said_as_what_it_holds() {
        for (text, what) in [("- a\n- b\n", "a list"), ("hello\n", "a single value")] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!(
                    "commitea.yaml: the file holds {what}, not settings"
                )),
                "{err}"
            );
        }
    }

    #[test]
    fn bad_env_value_names_the_variable() {
        let mut c = Config::default();
        let err = c
            .apply_env(vec![(
                "COMMITEA_FORECAST_TRIALS".to_string(),
                "0".to_string(),
            )])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("environment variable COMMITEA_FORECAST_TRIALS:"),
            "{err}"
        );
        // Said in words, as a file's value is (audit 120: "expected u32").
        let err = Config::default()
            .apply_env(vec![(
                "COMMITEA_FORECAST_TRIALS".to_string(),
                "abc".to_string(),
            )])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("expected a whole number between 1 and 1000000") && !err.contains("u32"),
            "{err}"
        );
        let mut c = Config::default();
        c.apply_env(vec![(
            "COMMITEA_SERVER".to_string(),
            "https://git.example".to_string(),
        )])
        .unwrap();
        assert_eq!(c.server.as_deref(), Some("https://git.example"));
    }

    #[test]
    fn the_environment_gives_text_as_written_and_an_empty_variable_changes_nothing() {
        // Read as YAML, `Plan #2 (Q1)` lost its `#2`, `Roadmap: Q1` was a map and `2027` a number; an
        // empty variable (an unset CI variable) erased the file's seed (audit 89).
        let mut c = parse("forecast:\n  seed: 42\n").unwrap();
        c.apply_env(vec![
            ("COMMITEA_SITE_TITLE".to_owned(), "Plan #2 (Q1)".to_owned()),
            ("COMMITEA_FORECAST_SEED".to_owned(), " ".to_owned()),
            ("COMMITEA_FORECAST_TRIALS".to_owned(), "300".to_owned()),
            (
                "COMMITEA_FORECAST_ADAPTIVE_TRIALS".to_owned(),
                "true".to_owned(),
            ),
        ])
        .unwrap();
        assert_eq!(c.site.title, "Plan #2 (Q1)");
        assert_eq!(c.forecast.seed, Some(42));
        assert_eq!(c.forecast.trials.0, 300);
        assert!(c.forecast.adaptive_trials);
        for title in ["Roadmap: Q1", "2027", "[draft] plan"] {
            let mut c = Config::default();
            c.apply_env(vec![("COMMITEA_SITE_TITLE".to_owned(), title.to_owned())])
                .unwrap();
            assert_eq!(c.site.title, title);
        }
    }
}
