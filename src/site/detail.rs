//! The site's pages per issue, milestone and person, and the changes page: plain structs built from the
//! computed state (plan, forecast, snapshot) and the op files, with every link, label and chart ready,
//! so the templates only print.
//!
//! Paths are relative to the site root (`issues/OWNER/REPO/N.html`, `milestones/ID.html`,
//! `people/NAME.html`); a page prefixes them with its `root` (`../../../` for an issue page).

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{Datelike, NaiveDate};
use rayon::prelude::*;
use serde::Serialize;

use super::charts;
use crate::domain::IssueKey;
use crate::state::Snapshot;
use crate::views::Inputs;
use crate::views::changes::Changes;
use crate::views::issue::IssueView;
use crate::views::milestone::MilestoneView;
use crate::views::person::PersonView;

/// Everything beyond the five summary pages.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detail {
    /// A page per issue in the plan, open and closed.
    pub issues: Vec<IssuePage>,
    /// A page per milestone of the forecast.
    pub milestones: Vec<MilestonePage>,
    /// A page per person of the forecast.
    pub people: Vec<PersonPage>,
    /// Every op file, pending and applied, and every directive.
    pub changes: ChangesPage,
    /// The compact index of every issue the board's filters and the search page read.
    pub index: crate::views::index::SearchIndex,
    /// The standup page.
    pub standup: StandupPage,
    /// The roadmap page.
    pub roadmap: RoadmapPage,
    /// The index of closed work: closed milestones and the months issues closed in.
    pub closed: ClosedPage,
    /// A page per month some issue closed in, its closed issues.
    pub closed_months: Vec<ClosedMonthPage>,
}

/// The index of closed work (`closed.html`): every closed milestone and every month an issue closed in,
/// so that a closed issue's page is reached by links alone, without the search page's script.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedPage {
    /// Closed milestones, most recently closed first.
    pub milestones: Vec<ClosedMilestoneRow>,
    /// The months issues closed in, newest first.
    pub months: Vec<ClosedMonthLink>,
}

/// A closed milestone on the closed-work index.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedMilestoneRow {
    /// The milestone, linked to its page.
    pub link: Link,
    /// Its repository.
    pub repo: String,
    /// The day it closed.
    pub closed: String,
    /// Its due day, if it had one.
    pub due: Option<String>,
    /// Its issues closed.
    pub closed_issues: usize,
    /// Its issues still open (left in it when it closed).
    pub open_issues: usize,
}

/// A month on the closed-work index.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedMonthLink {
    /// `November 2026`.
    pub label: String,
    /// Its page, `closed/2026-11.html`.
    pub path: String,
    /// Issues closed in it.
    pub count: usize,
}

/// The issues closed in one month (`closed/YYYY-MM.html`), most recently closed first.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedMonthPage {
    /// Where it is written.
    pub path: String,
    /// `November 2026`.
    pub label: String,
    /// Each issue: linked, the day it closed, and its milestone.
    pub issues: Vec<ClosedIssueRow>,
    /// The month before this one that issues closed in, where there is one.
    pub earlier: Option<ClosedMonthLink>,
    /// The month after this one that issues closed in, where there is one.
    pub later: Option<ClosedMonthLink>,
}

/// A closed issue on its month's page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedIssueRow {
    /// The issue, linked to its page, its title as the link's title.
    pub link: Link,
    /// Its title.
    pub title: String,
    /// The day it closed.
    pub closed: String,
    /// Its milestone, linked to the milestone's page.
    pub milestone: Option<Link>,
}

/// The page of the issues closed in `day`'s month.
pub(crate) fn closed_month_path(day: NaiveDate) -> String {
    format!("closed/{}.html", day.format("%Y-%m"))
}

/// `November 2026`.
fn month_words(day: NaiveDate) -> String {
    day.format("%B %Y").to_string()
}

/// The changes page: the changes view with its moments as labels and each directive's target linked.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangesPage {
    /// Proposed op files, newest first.
    pub pending: Vec<ChangeRow>,
    /// Applied op files, newest first.
    pub applied: Vec<ChangeRow>,
    /// Every directive of the ledger, newest first.
    pub directives: Vec<LedgerRow>,
    /// The proposals' open pull requests, when the run asked the server.
    pub open_pull_requests: Vec<crate::apply::propose::OpenProposal>,
    /// Whether the run asked the server for them.
    pub pulls_checked: bool,
    /// Op files that do not read, left out whole.
    pub unreadable: Vec<crate::views::changes::Unreadable>,
}

/// One op file with labels.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRow {
    /// The view's fields, unchanged.
    #[serde(flatten)]
    pub change: crate::views::changes::Change,
    /// When it was proposed: `2026-11-26 17:00 UTC`.
    pub created_label: String,
    /// When it was applied, the same way.
    pub applied_label: Option<String>,
}

/// One directive of the ledger with its target as a link.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerRow {
    /// The view's fields, unchanged.
    #[serde(flatten)]
    pub directive: crate::views::changes::DirectiveItem,
    /// Its target: an issue with its title, a milestone by its title, a person; linked where the site has
    /// the page.
    pub target_link: Option<Link>,
}

/// The standup page: what moved since the last committed forecast, by person, each person's next
/// working days, and the blockers nobody has touched.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StandupPage {
    /// The standup view.
    pub view: crate::views::standup::Standup,
    /// The milestones that moved, with links.
    pub milestones: Vec<MovedRow>,
    /// The issues that moved, grouped by who works on them (assignee, else the planned person).
    pub moved_by_person: Vec<PersonMoves>,
    /// Issues moved in all (the groups list at most [`STANDUP_MOVED`]).
    pub moved_total: usize,
    /// Issues the groups list.
    pub moved_shown: usize,
    /// Each person's next working days, with links.
    pub people: Vec<PersonPlanRow>,
    /// Stale blockers, with links (at most [`STANDUP_STALE`], the longest idle first).
    pub stale: Vec<StaleRow>,
    /// Stale blockers in all.
    pub stale_total: usize,
    /// What changed in the inputs since the forecast compared with, in words (`4 directives recorded
    /// (D-0004, …); 2 issues closed; 1 new`), the issues and directives it names linked; empty when there
    /// is none.
    pub since_then: Vec<Link>,
}

/// Stale blockers the standup page lists at most.
pub const STANDUP_STALE: usize = 100;

/// Issues the standup page lists as moved at most.
pub const STANDUP_MOVED: usize = 200;

/// Something that moved between two forecasts.
#[derive(Debug, Clone, Serialize)]
pub struct MovedRow {
    /// The issue or milestone.
    pub link: Link,
    /// p50 – p80 before.
    pub before: String,
    /// p50 – p80 now.
    pub after: String,
    /// Working days moved, signed (`+3`), or `new` / `gone`.
    pub moved: String,
    /// The same in a sentence: a count with its unit (`+3 working days`).
    pub moved_words: String,
    /// Why it moved (the standup view's words), the issues and directives it names linked; empty when
    /// it does not say.
    pub why: Vec<Link>,
}

/// One person's moved issues.
#[derive(Debug, Clone, Serialize)]
pub struct PersonMoves {
    /// The person (text `nobody` when unplanned).
    pub person: Link,
    /// Their moved issues.
    pub rows: Vec<MovedRow>,
}

/// One person's next working days.
#[derive(Debug, Clone, Serialize)]
pub struct PersonPlanRow {
    /// The person.
    pub person: Link,
    /// What they work on, with the planned days.
    pub work: Vec<PlannedRow>,
    /// Their first working day, when they have not started yet.
    pub starts: Option<String>,
}

/// One planned issue.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedRow {
    /// The issue.
    pub link: Link,
    /// First day in the median plan.
    pub from: String,
    /// Last day in the median plan.
    pub to: String,
    /// The chance it is done at all, formatted, where that is under even (the person page's words): work
    /// planned next that is probably never done says so (audit 68).
    #[serde(rename = "doneAtAll", skip_serializing_if = "Option::is_none")]
    pub done_at_all: Option<String>,
}

/// A blocker nobody touched.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleRow {
    /// The issue.
    pub link: Link,
    /// Days without activity.
    pub idle_days: i64,
    /// The issues waiting for it.
    pub blocks: Vec<Link>,
    /// Its assignee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<Link>,
    /// Whether it is in a dependency cycle.
    pub in_cycle: bool,
}

/// The roadmap page: the median plan as a Gantt chart.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoadmapPage {
    /// The chart (SVG).
    pub chart: String,
    /// Bars drawn.
    pub shown: usize,
    /// Open issues planned for someone.
    pub total: usize,
    /// The last day the chart shows.
    pub until: String,
    /// Bars at most per person.
    pub per_person: usize,
}

/// The weeks the roadmap shows from today at most.
const ROADMAP_DAYS: u64 = 26 * 7;
/// Bars the roadmap draws per person at most (in planned order).
const ROADMAP_BARS: usize = 40;

/// An issue or pull request another names (what it waits for, what references it): its link, what it
/// is where that matters, and its address on Gitea where the site has no page for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Related {
    /// The link to its page, if the site has one.
    #[serde(flatten)]
    pub link: Link,
    /// What it is: for what an issue waits for, where it is not an open issue of the plan (`closed`,
    /// `pull request, open`, `open, in acme/mobile, which is not synced …`); for a pull request, its
    /// state (`open`, `merged`, `closed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Its address on Gitea, where the site has no page for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitea: Option<String>,
}

/// A link to something that may have a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    /// What it is called (`owner/repo#N`, a milestone title, a username).
    pub text: String,
    /// A second line: the issue's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its page, relative to the site root; none when the site has no page for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
}

/// A closed issue in a list: its link and the day it was closed.
#[derive(Debug, Clone, Serialize)]
pub struct ClosedLink {
    /// The issue.
    pub link: Link,
    /// The day it was closed, in the team's zone.
    pub closed: String,
}

/// One issue's page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuePage {
    /// Its file, relative to the site root.
    pub path: String,
    /// The issue on Gitea.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitea: Option<String>,
    /// The issue view (the whole body and every comment).
    pub view: IssueView,
    /// The body as sanitised HTML.
    pub body_html: String,
    /// The comments with sanitised HTML bodies, oldest first.
    pub comments: Vec<CommentPage>,
    /// The other issues of the dependency cycle it is in (it has no forecast).
    pub cycle: Vec<Link>,
    /// The issues it waits for, each with what it is where that is not an open issue of the plan.
    pub depends_on: Vec<Related>,
    /// The open issues waiting for it.
    pub blocks: Vec<Link>,
    /// The pull requests that reference it, oldest first.
    pub pulls: Vec<Related>,
    /// Its milestone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<Link>,
    /// Where the breadcrumb leads: the board's column, or, for an issue closed before the weeks the board
    /// shows, its milestone's closed issues, else the search for it (audit 96: `board.html#done` did not
    /// list it).
    pub crumb: Link,
    /// Its assignees, and who the plan gives it to.
    pub people: Vec<Link>,
    /// P(done by the milestone's due day), formatted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_due: Option<String>,
    /// P(done at all within the abandonment window), formatted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_at_all: Option<String>,
    /// When the median plan works on it: `2026-12-07 – 2026-12-08`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<String>,
    /// Whether it is more likely never done than done: its range then falls far past the plan's days,
    /// which the page says (a standup naming it as next work beside "not within 2 years" read as a
    /// contradiction: audit 64).
    pub rarely_done: bool,
    /// What it waits for that is itself often never done (in under 80% of the futures), with that
    /// share: where such work is never done, neither is this (audit 131: the page put its rarity down to
    /// the history alone).
    pub rare_blockers: Vec<Related>,
    /// Whether its p50 falls before the plan's first day: in many futures the work planned ahead of it
    /// is never done, and it starts sooner (audit 68: an unexplained range earlier than the plan).
    pub sooner_than_plan: bool,
    /// Whether its p50 falls more than a week after the plan's last day: the plan takes every estimate as
    /// given, the range weighs what such work really took (an audit read three weeks between the two for
    /// 3.5 hours of work, with one line of definition).
    pub later_than_plan: bool,
    /// Remaining hours (median), formatted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<String>,
    /// What a reader should know about its forecast, in words.
    pub flag_notes: Vec<String>,
    /// Each lifecycle column's title by its id (`in_review` → "In review"), for the badges.
    pub column_titles: BTreeMap<String, String>,
}

/// When a milestone closed, said against its due date.
fn closed_words(day: chrono::NaiveDate, due: Option<chrono::NaiveDate>) -> String {
    let days = |n: i64| crate::prose::count(n.unsigned_abs() as usize, "day", "days");
    match due.map(|due| (due, (day - due).num_days())) {
        None => format!("on {day}"),
        Some((_, 0)) => format!("on {day}, its due date"),
        Some((due, n)) if n < 0 => format!("on {day}, {} before its due date {due}", days(n)),
        Some((due, n)) => format!("on {day}, {} after its due date {due}", days(n)),
    }
}

/// One comment, rendered.
#[derive(Debug, Clone, Serialize)]
pub struct CommentPage {
    /// Author.
    pub user: String,
    /// Day.
    pub at: String,
    /// Sanitised HTML.
    pub html: String,
}

/// One milestone's page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MilestonePage {
    /// Its file.
    pub path: String,
    /// The milestone on Gitea.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitea: Option<String>,
    /// The milestone view (every open issue).
    pub view: MilestoneView,
    /// The cone chart (SVG).
    pub chart: String,
    /// The burn-up chart (SVG), continued by the forecast cone; empty when there is no history.
    pub burnup: String,
    /// The burn-up's points as text, for a reader who cannot see the chart: `[day, in scope, done]`.
    pub burnup_rows: Vec<[String; 3]>,
    /// The probability of done by date (SVG), empty for a closed milestone or one without work.
    pub fan: String,
    /// How its forecast moved across the committed forecasts, oldest first (only the changes).
    pub drift: Vec<crate::views::history::DriftPoint>,
    /// The same as a chart (SVG), empty with fewer than two points.
    pub drift_chart: String,
    /// The cut line, with titles.
    pub cut_line: Vec<Link>,
    /// The cut line's hours, its p80 without them and P(on time), as the runway gives them (audit 110:
    /// the milestone page listed the issues with none of it).
    pub cut_hours: Option<String>,
    /// The milestone's p80 without the cut.
    pub cut_p80: Option<String>,
    /// P(on time) without the cut.
    pub cut_on_time: Option<String>,
    /// Its open issues as links.
    pub issues: Vec<Link>,
    /// Its closed issues, most recently closed first, each with its day: their pages' only links that
    /// need no script (audit 96: 2,318 of 5,043 pages had none).
    pub closed_issues: Vec<ClosedLink>,
    /// Each lifecycle column's title by its id (`in_review` → "In review"), as the issue pages have it.
    pub column_titles: BTreeMap<String, String>,
    /// P(on time), formatted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_time: Option<String>,
    /// Slack in working days, signed, only when p80 is within the horizon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack: Option<String>,
    /// What p80 means in words: a date, or "not within the horizon".
    pub p80_words: String,
    /// Remaining hours, formatted.
    pub remaining: String,
    /// P(all the work planned in it is done within the horizon), formatted, when that work's p80 is
    /// beyond it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_within_horizon: Option<String>,
    /// What the fan chart's last point, at the horizon, is the probability of (`the work that stays`,
    /// `all planned work`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_end: Option<String>,
    /// How many open issues are expected to leave it, such as `about 3 open issues expected to leave`,
    /// beside the planned-scope cone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaving: Option<String>,
    /// Whether its due date passed with work still open (audit 102: said on the overview and the runway,
    /// not on its own page).
    pub overdue: bool,
    /// When a closed milestone closed, against its due date: `on 2026-10-30, 5 days before its due date`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<String>,
    /// How it moved since the forecast the standup compares with, and why (the standup's row), when it
    /// moved or changed: the page said nothing where its drift chart merges a day's forecasts (an audit
    /// read "+2 working days" on the standup and nothing here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<MovedRow>,
    /// The day 0 of the forecast compared with, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_since: Option<String>,
}

/// One person's page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersonPage {
    /// Their file.
    pub path: String,
    /// Their Gitea profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitea: Option<String>,
    /// The person view.
    pub view: PersonView,
    /// Their queue as links, in planned order, with each item's milestone link.
    pub queue: Vec<QueueLink>,
    /// The load chart (SVG).
    pub chart: String,
    /// The chart's weeks as text, for a reader who cannot see it: `[week, hours planned, hours available]`.
    pub load_rows: Vec<[String; 3]>,
    /// Planned hours, formatted.
    pub planned: String,
}

/// One queued issue as links.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueLink {
    /// The issue.
    pub issue: Link,
    /// Its milestone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<Link>,
    /// The chance it is done at all, formatted, where its median date is beyond the horizon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_at_all: Option<String>,
}

/// The page of an issue, relative to the site root.
pub(crate) fn issue_path(key: &IssueKey) -> String {
    format!("issues/{}/{}.html", key.repo, key.number)
}

/// The page of a milestone.
pub(crate) fn milestone_path(id: u64) -> String {
    format!("milestones/{id}.html")
}

/// The page of a person whose name is a Gitea username ([`crate::ledger::format::valid_username`]);
/// anything else gets no page.
pub(crate) fn person_path(name: &str) -> Option<String> {
    crate::ledger::format::valid_username(name).then(|| format!("people/{name}.html"))
}

/// A reason, when there is one, as [`linked_words`].
fn linked_reason(why: Option<String>, issue_link: &dyn Fn(&str) -> Link) -> Vec<Link> {
    why.map(|w| linked_words(&w, issue_link))
        .unwrap_or_default()
}

/// `text` in pieces, the issues (`owner/repo#N`) and directives or op files (`D-0006`, `C-0004`) it names
/// linked to their pages and the rest plain: the standup's reasons named them as text, to be searched for
/// by hand (an audit's finding).
pub(crate) fn linked_words(text: &str, issue_link: &dyn Fn(&str) -> Link) -> Vec<Link> {
    let c: Vec<char> = text.chars().collect();
    let word = |ch: char| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-');
    let digits_from = |mut j: usize| {
        while j < c.len() && c[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let mut out: Vec<Link> = Vec::new();
    let mut plain = String::new();
    let mut i = 0;
    while i < c.len() {
        // Not inside a word, nor inside a path or an address (`https://host/acme/api#1`).
        let starts_word = i == 0 || !(word(c[i - 1]) || c[i - 1] == '/');
        // `owner/repo#N`: a word, a slash, a word, `#` and digits.
        let key_end = starts_word.then(|| {
            let mut j = i;
            while j < c.len() && word(c[j]) {
                j += 1;
            }
            (j > i && c.get(j) == Some(&'/')).then_some(())?;
            let mut k = j + 1;
            while k < c.len() && word(c[k]) {
                k += 1;
            }
            (k > j + 1 && c.get(k) == Some(&'#')).then_some(())?;
            let end = digits_from(k + 1);
            (end > k + 1 && c.get(end).is_none_or(|ch| !ch.is_alphanumeric())).then_some(end)
        });
        // `D-0006`, `C-0004`: the letter, a dash and four digits or more (as ids are written), as a word
        // of its own (a username `D-42` is none).
        let id_end = (starts_word && matches!(c[i], 'D' | 'C') && c.get(i + 1) == Some(&'-'))
            .then(|| digits_from(i + 2))
            .filter(|e| *e >= i + 6 && c.get(*e).is_none_or(|ch| !word(*ch)));
        let found = match (key_end.flatten(), id_end) {
            (Some(end), _) => {
                let key: String = c[i..end].iter().collect();
                Some((end, issue_link(&key)))
            }
            (None, Some(end)) => {
                let id: String = c[i..end].iter().collect();
                let page = if c[i] == 'D' { "directives" } else { "changes" };
                Some((
                    end,
                    Link {
                        href: Some(format!("{page}.html#{id}")),
                        text: id,
                        title: None,
                    },
                ))
            }
            (None, None) => None,
        };
        match found {
            Some((end, link)) => {
                if !plain.is_empty() {
                    out.push(Link {
                        text: std::mem::take(&mut plain),
                        title: None,
                        href: None,
                    });
                }
                out.push(Link {
                    title: None,
                    ..link
                });
                i = end;
            }
            None => {
                plain.push(c[i]);
                i += 1;
            }
        }
    }
    if !plain.is_empty() {
        out.push(Link {
            text: plain,
            title: None,
            href: None,
        });
    }
    out
}

/// A move's reason with the directives behind it: `queue of bjorn (D-0010 withdrawn)`.
fn with_directives(why: Option<String>, directives: &[String]) -> Option<String> {
    if directives.is_empty() {
        return why;
    }
    let ids = crate::prose::and_list(directives);
    Some(match why {
        Some(w) => format!("{w} ({ids})"),
        None => ids,
    })
}

/// The status as the class the stylesheet knows.
pub(crate) fn status_class(s: crate::views::runway::MilestoneStatus) -> &'static str {
    use crate::views::runway::MilestoneStatus as S;
    match s {
        S::OnTrack => "on_track",
        S::AtRisk => "at_risk",
        S::Late => "late",
        S::NoDueDate => "no_due_date",
        S::NothingOpen => "nothing_open",
    }
}

fn date(s: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

/// Builds the pages. `past` are the earlier committed forecasts (for each milestone's drift), `gitea`
/// the server's base URL (links to Gitea are left out without it).
pub fn build(
    inputs: Inputs<'_>,
    snapshot: &Snapshot,
    past: &[crate::views::history::PastForecast],
    changes: Changes,
    gitea: Option<&str>,
    standup: crate::views::standup::Standup,
    board: &crate::views::Board,
) -> Detail {
    let gitea = gitea.map(|g| g.trim_end_matches('/').to_owned());
    // The cards the board page shows: an issue past a long column's cut, or closed before its weeks,
    // is found elsewhere (audit 155: 865 open issues' breadcrumbs led to a column that did not show them).
    let on_board = super::pages::shown_on_board(board);
    let plan = inputs.plan;
    let report = inputs.report;
    let with_page: HashSet<&IssueKey> = plan.issues.iter().map(|i| &i.key).collect();
    let titles: HashMap<String, &str> = plan
        .issues
        .iter()
        .map(|i| (i.key.to_string(), i.title.as_str()))
        .collect();
    let people_with_page: HashSet<&str> = report.people.iter().map(|p| p.name.as_str()).collect();
    // Each milestone's closed issues, most recently closed first.
    let mut closed_in: HashMap<u64, Vec<(NaiveDate, &IssueKey)>> = HashMap::new();
    for i in &plan.issues {
        if let (Some(m), Some(c)) = (i.milestone, i.closed_at) {
            closed_in
                .entry(m)
                .or_default()
                .push((plan.zone.date_of(c), &i.key));
        }
    }
    for list in closed_in.values_mut() {
        list.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    }
    let issue_link = |key: &str| -> Link {
        let parsed: Option<IssueKey> = key.parse().ok();
        Link {
            text: key.to_owned(),
            title: titles.get(key).map(|t| (*t).to_owned()),
            href: parsed
                .filter(|k| with_page.contains(k))
                .map(|k| issue_path(&k)),
        }
    };
    let person_link = |name: &str| Link {
        text: name.to_owned(),
        title: None,
        href: people_with_page
            .contains(name)
            .then(|| person_path(name))
            .flatten(),
    };
    // A title two repositories share is named with its repository (audit 168).
    let milestone_names = inputs.plan.milestone_names();
    let milestone_link = |id: u64, title: &str| Link {
        text: milestone_names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| title.to_owned()),
        title: None,
        href: Some(milestone_path(id)),
    };
    let forecasts: HashMap<&IssueKey, &crate::forecast::IssueForecast> =
        report.issues.iter().map(|f| (&f.issue, f)).collect();
    let blocked = crate::views::focus::blocked_by_map(inputs);
    // What a dependency's note needs: which issues are closed, which repositories synced (a blocker of
    // one that has no issue file is a pull request).
    let closed: HashSet<&IssueKey> = plan
        .issues
        .iter()
        .filter(|i| i.closed_at.is_some())
        .map(|i| &i.key)
        .collect();
    let synced: HashSet<&crate::domain::RepoName> =
        plan.issues.iter().map(|i| &i.key.repo).collect();
    // An issue's or pull request's page on Gitea (`kind`: `issues`, `pulls`), where the server is known.
    let on_gitea = |k: &IssueKey, kind: &str| {
        gitea
            .as_ref()
            .map(|g| format!("{g}/{}/{kind}/{}", k.repo, k.number))
    };
    let column_titles: BTreeMap<String, String> = crate::domain::Lifecycle::ALL
        .iter()
        .map(|c| (c.as_str().to_owned(), c.title().to_owned()))
        .collect();

    // One page per issue, built side by side (the bodies' markdown is most of it); the order is the plan's.
    let issues = plan
        .issues
        .par_iter()
        .filter_map(|i| {
            let f = forecasts.get(&i.key).copied();
            let blocks = blocked.get(&i.key).cloned().unwrap_or_default();
            let view = crate::views::issue::issue_in_full(inputs, snapshot, &i.key, f, &blocks)?;
            let raw = snapshot.issues.get(&i.key)?;
            // The plan gives an open issue one person, its first assignee: the others' part is said where
            // they are listed (audit 129: "amara, bjorn" with bjorn's part in no plan, said only on the
            // overview).
            let planned = view.derived.planned_assignee.as_deref();
            let mut people: Vec<Link> = view
                .intent
                .assignee
                .iter()
                .map(|a| {
                    let mut l = person_link(a);
                    if let Some(p) = planned.filter(|p| *p != a && view.intent.assignee.len() > 1) {
                        l.title = Some(format!("not planned: the plan gives it to {p} alone"));
                    }
                    l
                })
                .collect();
            if let Some(p) = &view.derived.planned_assignee
                && !view.intent.assignee.contains(p)
            {
                let mut l = person_link(p);
                l.title = Some("planned".to_owned());
                people.push(l);
            }
            Some(IssuePage {
                path: issue_path(&i.key),
                gitea: on_gitea(&i.key, "issues"),
                body_html: super::text::markdown(&raw.body),
                comments: raw
                    .comments
                    .iter()
                    .map(|c| CommentPage {
                        user: c.user.clone(),
                        at: plan.zone.date_of(c.created_at).to_string(),
                        html: super::text::markdown(&c.body),
                    })
                    .collect(),
                depends_on: view
                    .derived
                    .depends_on
                    .iter()
                    .map(|k| {
                        let link = issue_link(k);
                        let key: Option<IssueKey> = k.parse().ok();
                        let outside = key.as_ref().and_then(|key| {
                            raw.outside_blockers.iter().find(|b| &b.issue == key)
                        });
                        // What the wait is (audit 128: a closed blocker in another repository, and an
                        // open pull request, read as live waits on issues, with no state and no link).
                        let state = outside.map(|b| b.state);
                        let note = match key.as_ref() {
                            Some(key) if closed.contains(key) => Some("closed".to_owned()),
                            Some(_) if link.href.is_some() => None,
                            Some(key) if synced.contains(&key.repo) => Some(match state {
                                Some(s) => format!("pull request, {}", s.as_str()),
                                None => "pull request".to_owned(),
                            }),
                            Some(key) if state == Some(crate::domain::OpenState::Closed) => {
                                Some(format!("closed, in {}", key.repo))
                            }
                            Some(key) => Some(format!(
                                "{}in {}, which is not synced: its dates assume that wait is over; add \
                                 {} to the repositories in commitea.yaml to plan it",
                                if state.is_some() { "open, " } else { "" },
                                key.repo,
                                key.repo
                            )),
                            None => None,
                        };
                        Related {
                            gitea: key
                                .as_ref()
                                .filter(|_| link.href.is_none())
                                .and_then(|k| on_gitea(k, "issues")),
                            link,
                            note,
                        }
                    })
                    .collect(),
                blocks: view.derived.blocks.iter().map(|k| issue_link(k)).collect(),
                cycle: view.derived.cycle.iter().map(|k| issue_link(k)).collect(),
                // The pull request that puts it in review, named and linked (audit 129: "In review"
                // with no word of which).
                pulls: crate::views::issue::pulls(raw, &i.key)
                    .into_iter()
                    .map(|(k, p)| Related {
                        gitea: on_gitea(&k, "pulls"),
                        link: Link {
                            text: k.to_string(),
                            title: Some(p.title.clone()),
                            href: None,
                        },
                        note: Some(p.state_word().to_owned()),
                    })
                    .collect(),
                crumb: {
                    let listed_at = if i.closed_at.is_some() {
                        "closed"
                    } else {
                        "issues-title"
                    };
                    match &view.intent.milestone {
                        _ if on_board.contains(&view.issue) => Link {
                            text: "Board".to_owned(),
                            title: None,
                            href: Some(format!("board.html#{}", view.derived.lifecycle)),
                        },
                        Some(m) => Link {
                            text: m.title.clone(),
                            title: None,
                            href: Some(format!("{}#{listed_at}", milestone_path(m.id))),
                        },
                        // Closed with no milestone: the month it closed in, reached without script.
                        None if let Some(at) = i.closed_at => {
                            let day = plan.zone.date_of(at);
                            Link {
                                text: format!("Closed in {}", month_words(day)),
                                title: None,
                                href: Some(closed_month_path(day)),
                            }
                        }
                        None => Link {
                            text: "Search".to_owned(),
                            title: None,
                            // A key's `/` and `#` escaped: `#` would start the address's fragment.
                            href: Some(format!(
                                "search.html?q={}",
                                i.key.to_string().replace('/', "%2F").replace('#', "%23")
                            )),
                        },
                    }
                },
                milestone: view
                    .intent
                    .milestone
                    .as_ref()
                    .map(|m| milestone_link(m.id, &m.title)),
                people,
                by_due: view.derived.probability_by_due.map(super::pages::percent),
                done_at_all: view.derived.probability_done.map(super::pages::percent),
                planned: view
                    .derived
                    .planned
                    .as_ref()
                    .map(|s| format!("{} – {}", s.from, s.to)),
                rarely_done: view.derived.probability_done.is_some_and(|p| p < 0.5),
                rare_blockers: view
                    .derived
                    .depends_on
                    .iter()
                    .filter_map(|k| {
                        let key: IssueKey = k.parse().ok()?;
                        let p = forecasts.get(&key)?.probability_done.filter(|p| *p < 0.8)?;
                        Some(Related {
                            link: issue_link(k),
                            note: Some(super::pages::percent(p)),
                            gitea: None,
                        })
                    })
                    .collect(),
                sooner_than_plan: f.is_some_and(|f| {
                    matches!((f.p50, f.planned_start), (crate::forecast::When::Date(p50), crate::forecast::When::Date(start)) if p50 < start)
                }),
                later_than_plan: f.is_some_and(|f| {
                    matches!((f.p50, f.planned_end), (crate::forecast::When::Date(p50), crate::forecast::When::Date(end)) if (p50 - end).num_days() > 7)
                }),
                remaining: f.map(|f| super::pages::hours(f.remaining_hours)),
                flag_notes: view
                    .derived
                    .flags
                    .iter()
                    .map(|f| f.words().to_owned())
                    .collect(),
                column_titles: column_titles.clone(),
                view,
            })
        })
        .collect();

    let histories = crate::views::history::histories(report, past, snapshot, &plan.zone);
    // Made before the milestone pages, which give their own row of it.
    let standup = standup_page(standup, inputs, &person_link, &issue_link);
    let all = crate::views::Selection {
        limit: usize::MAX,
        ..crate::views::Selection::default()
    };
    let milestones: Vec<MilestonePage> = report
        .milestones
        .iter()
        .filter_map(|m| {
            let view = crate::views::milestone::milestone(inputs, m.id, &all)?;
            let status = status_class(crate::views::runway::MilestoneStatus::of(
                m.probability_on_time,
                m.open_issues,
            ));
            // The page's title names the milestone: its rows name the work each range is of.
            let row = charts::RangeRow {
                label: if m.planned.is_some() {
                    "the work that stays"
                } else {
                    "all planned work"
                }
                .to_owned(),
                href: None,
                // An open milestone with nothing open has no dates: they would be today's.
                p10: m.p10.date().filter(|_| m.has_dates()),
                p50: m.p50.date().filter(|_| m.has_dates()),
                p80: m.p80.date().filter(|_| m.has_dates()),
                due: m.due,
                hard: m.hard,
                status: status.to_owned(),
                words: if m.has_dates() {
                    format!(
                        "p10 {}, p50 {}, p80 {}{}",
                        m.p10,
                        m.p50,
                        m.p80,
                        m.due.map(|d| format!(", due {d}")).unwrap_or_default()
                    )
                } else {
                    charts::undated_words(false).to_owned()
                },
                undated: charts::undated_words(m.has_dates()),
            };
            let mut rows = vec![row];
            if let Some(s) = m.planned {
                rows.push(charts::RangeRow {
                    label: "all planned work".to_owned(),
                    href: None,
                    p10: s.p10.date(),
                    p50: s.p50.date(),
                    p80: s.p80.date(),
                    due: m.due,
                    hard: m.hard,
                    status: status.to_owned(),
                    words: format!(
                        "all planned work: p10 {}, p50 {}, p80 {}",
                        s.p10, s.p50, s.p80
                    ),
                    undated: charts::undated_words(true),
                });
            }
            let end = charts::ranges_end(
                &rows,
                report.as_of,
                report.horizon.min(
                    report.as_of + chrono::Days::new(u64::from(super::pages::OPEN_ENDED_DAYS)),
                ),
            );
            let burn: Vec<charts::BurnPoint> = histories
                .iter()
                .find(|h| h.milestone == m.id)
                .map(|h| {
                    h.burnup
                        .iter()
                        .filter_map(|p| {
                            Some(charts::BurnPoint {
                                day: date(&p.day)?,
                                scope: p.scope,
                                done: p.done,
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            let drift: Vec<crate::views::history::DriftPoint> = histories
                .iter()
                .find(|h| h.milestone == m.id)
                .map(|h| h.drift.clone())
                .unwrap_or_default();
            let drift_points: Vec<charts::DriftPoint> = drift
                .iter()
                .filter_map(|p| {
                    Some(charts::DriftPoint {
                        as_of: date(&p.as_of)?,
                        p50: date(&p.p50),
                        p80: date(&p.p80),
                    })
                })
                .collect();
            let closed = m.closed.map(|c| closed_words(c, m.due));
            let path = milestone_path(m.id);
            Some(MilestonePage {
                closed,
                moved: standup
                    .milestones
                    .iter()
                    .find(|r| r.link.href.as_deref() == Some(path.as_str()))
                    .cloned(),
                moved_since: standup.view.drift.since_as_of.clone(),
                path: milestone_path(m.id),
                gitea: gitea
                    .as_ref()
                    .map(|g| format!("{g}/{}/milestone/{}", m.repo, m.id)),
                chart: charts::ranges(
                    &rows,
                    report.as_of,
                    end,
                    &format!("Forecast of {}", m.title),
                ),
                burnup_rows: if burn.len() > 1 {
                    burn.iter()
                        .map(|b| [b.day.to_string(), b.scope.to_string(), b.done.to_string()])
                        .collect()
                } else {
                    Vec::new()
                },
                burnup: if burn.len() > 1 {
                    let cone = (m.state == crate::domain::OpenState::Open && m.open_issues > 0)
                        .then(|| charts::BurnCone {
                            today: report.as_of,
                            horizon: report.horizon,
                            scope: m.open_issues + m.closed_issues,
                            done: m.closed_issues,
                            p10: m.p10.date(),
                            p50: m.p50.date(),
                            p80: m.p80.date(),
                            staying: m.planned.is_some(),
                        });
                    let title = if cone.is_some() {
                        format!("Burn-up of {}, continued by the forecast", m.title)
                    } else {
                        format!("Burn-up of {}", m.title)
                    };
                    charts::burnup_with_cone(&burn, cone, &title)
                } else {
                    String::new()
                },
                fan: fan_chart(m, report),
                drift_chart: if drift_points.len() > 1 {
                    charts::drift(
                        &drift_points,
                        m.due,
                        &format!("How the forecast of {} moved", m.title),
                    )
                } else {
                    String::new()
                },
                drift,
                cut_line: view.cut_line.iter().map(|k| issue_link(k)).collect(),
                cut_hours: m
                    .cut_line
                    .as_ref()
                    .map(|c| super::pages::cut_hours(c.hours)),
                cut_p80: m.cut_line.as_ref().map(|c| c.p80.to_string()),
                cut_on_time: m
                    .cut_line
                    .as_ref()
                    .map(|c| super::pages::percent(c.probability_on_time)),
                issues: view.issues.iter().map(|i| issue_link(&i.issue)).collect(),
                closed_issues: closed_in.get(&m.id).map_or_else(Vec::new, |list| {
                    list.iter()
                        .map(|(day, key)| ClosedLink {
                            link: issue_link(&key.to_string()),
                            closed: day.to_string(),
                        })
                        .collect()
                }),
                column_titles: column_titles.clone(),
                on_time: m.probability_on_time.map(super::pages::percent),
                slack: m.stated_slack().map(super::pages::signed),
                p80_words: m
                    .p80
                    .date()
                    .map_or_else(|| super::pages::NOT_WITHIN.to_owned(), |d| d.to_string()),
                remaining: super::pages::hours(m.remaining_hours),
                done_within_horizon: m
                    .probability_done
                    .filter(|_| m.planned.is_some_and(|p| p.p80.date().is_none()))
                    .map(super::pages::percent),
                fan_end: done_at_horizon(m).map(|(_, what)| what.to_owned()),
                overdue: m.overdue(report.as_of),
                leaving: m
                    .expected_leaving
                    .filter(|_| m.planned.is_some())
                    .map(|n| super::pages::leaving_words(n, m.open_issues)),
                view,
            })
        })
        .collect();

    let person_views = crate::views::person::people(inputs);
    let people = person_views
        .iter()
        .cloned()
        .filter_map(|p| {
            let path = person_path(&p.person)?;
            let weeks: Vec<charts::WeekBar> = p
                .weeks
                .iter()
                .filter_map(|w| {
                    Some(charts::WeekBar {
                        week: date(&w.week)?,
                        planned: w.planned_hours,
                        capacity: w.capacity_hours,
                    })
                })
                .collect();
            Some(PersonPage {
                path,
                gitea: gitea.as_ref().map(|g| format!("{g}/{}", p.person)),
                queue: p
                    .queue
                    .iter()
                    .map(|q| QueueLink {
                        issue: issue_link(&q.issue),
                        milestone: q.milestone.as_ref().map(|m| milestone_link(m.id, &m.title)),
                        done_at_all: q.probability_done.map(super::pages::percent),
                    })
                    .collect(),
                chart: charts::load(&weeks, &format!("Load of {} per week", p.person)),
                load_rows: weeks
                    .iter()
                    .map(|w| {
                        [
                            w.week.to_string(),
                            format!("{:.0}", w.planned),
                            format!("{:.0}", w.capacity),
                        ]
                    })
                    .collect(),
                planned: super::pages::hours(p.planned_hours),
                view: p,
            })
        })
        .collect();

    let milestone_page = |id: u64| {
        let path = milestone_path(id);
        milestones.iter().any(|m| m.path == path).then_some(path)
    };
    let row = |c: crate::views::changes::Change| ChangeRow {
        created_label: super::text::moment(&c.created_at),
        applied_label: c.applied_at.as_deref().map(super::text::moment),
        change: c,
    };
    let changes =
        ChangesPage {
            pending: changes.pending.into_iter().map(row).collect(),
            applied: changes.applied.into_iter().map(row).collect(),
            open_pull_requests: changes.open_pull_requests,
            pulls_checked: changes.pulls_checked,
            unreadable: changes.unreadable,
            directives: changes
                .directives
                .into_iter()
                .map(|d| LedgerRow {
                    target_link: d.target_kind.as_deref().zip(d.target.as_deref()).map(
                        |(kind, id)| match (kind, id.parse::<u64>()) {
                            ("issue", _) => issue_link(id),
                            ("milestone", Ok(n)) => Link {
                                // The row says "milestone" before it: its id alone where Gitea has
                                // none (audit 132: "milestone milestone 4").
                                text: snapshot.milestone(n).map_or_else(
                                    || format!("{id} (not on Gitea)"),
                                    |(_, m)| m.title.clone(),
                                ),
                                title: None,
                                href: milestone_page(n),
                            },
                            _ => person_link(id),
                        },
                    ),
                    directive: d,
                })
                .collect(),
        };

    let roadmap = roadmap_page(inputs, &person_views, &person_link, &issue_link);
    let (closed, closed_months) = closed_pages(plan, &milestone_link, &issue_link);
    Detail {
        issues,
        milestones,
        people,
        changes,
        index: crate::views::index::search_index(inputs),
        standup,
        roadmap,
        closed,
        closed_months,
    }
}

/// The closed-work index and its month pages (audit 183: without script, a closed milestone and the
/// issues closed long ago with none were reached by no link, 123 of the demo's 341 pages).
fn closed_pages(
    plan: &crate::plan::Plan,
    milestone_link: &dyn Fn(u64, &str) -> Link,
    issue_link: &dyn Fn(&str) -> Link,
) -> (ClosedPage, Vec<ClosedMonthPage>) {
    // Each milestone's issues closed and open, counted in one pass (thousands of issues, hundreds of
    // milestones).
    let mut counts: HashMap<u64, (usize, usize)> = HashMap::new();
    for i in &plan.issues {
        if let Some(m) = i.milestone {
            let c = counts.entry(m).or_default();
            if i.closed_at.is_some() {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
    }
    let mut milestones: Vec<(NaiveDate, ClosedMilestoneRow)> = plan
        .milestones
        .iter()
        .filter_map(|m| {
            let closed = m.closed?;
            let (closed_issues, open_issues) = counts.get(&m.id).copied().unwrap_or_default();
            Some((
                closed,
                ClosedMilestoneRow {
                    link: milestone_link(m.id, &m.title),
                    repo: m.repo.to_string(),
                    closed: closed.to_string(),
                    due: m.due.map(|d| d.to_string()),
                    closed_issues,
                    open_issues,
                },
            ))
        })
        .collect();
    milestones.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.link.text.cmp(&b.1.link.text)));
    let titles: HashMap<u64, &str> = plan
        .milestones
        .iter()
        .map(|m| (m.id, m.title.as_str()))
        .collect();
    let mut by_month: BTreeMap<NaiveDate, Vec<(NaiveDate, ClosedIssueRow)>> = BTreeMap::new();
    for i in &plan.issues {
        let Some(at) = i.closed_at else { continue };
        let day = plan.zone.date_of(at);
        let month = day.with_day(1).unwrap_or(day);
        by_month.entry(month).or_default().push((
            day,
            ClosedIssueRow {
                link: issue_link(&i.key.to_string()),
                title: i.title.clone(),
                closed: day.to_string(),
                milestone: i
                    .milestone
                    .and_then(|id| Some(milestone_link(id, titles.get(&id)?))),
            },
        ));
    }
    let link = |month: NaiveDate, count: usize| ClosedMonthLink {
        label: month_words(month),
        path: closed_month_path(month),
        count,
    };
    let months: Vec<(NaiveDate, usize)> = by_month
        .iter()
        .rev()
        .map(|(m, rows)| (*m, rows.len()))
        .collect();
    let pages = months
        .iter()
        .enumerate()
        .map(|(n, (month, _))| {
            let mut rows = by_month.remove(month).unwrap_or_default();
            rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.link.text.cmp(&b.1.link.text)));
            ClosedMonthPage {
                path: closed_month_path(*month),
                label: month_words(*month),
                issues: rows.into_iter().map(|(_, r)| r).collect(),
                earlier: months.get(n + 1).map(|(m, c)| link(*m, *c)),
                later: n
                    .checked_sub(1)
                    .and_then(|k| months.get(k))
                    .map(|(m, c)| link(*m, *c)),
            }
        })
        .collect();
    (
        ClosedPage {
            milestones: milestones.into_iter().map(|(_, r)| r).collect(),
            months: months.iter().map(|(m, c)| link(*m, *c)).collect(),
        },
        pages,
    )
}

/// A `p50 – p80` band in words, "not within the horizon" said once.
fn band_words(b: Option<&crate::views::Band>) -> String {
    b.map_or_else(
        || "—".to_owned(),
        |b| super::pages::band_label(&b.p50, &b.p80),
    )
}

fn moved_words(m: &crate::views::standup::Moved) -> String {
    moved_status(m).unwrap_or_else(|| super::pages::signed(m.moved))
}

/// [`moved_words`] in a sentence: a count says its unit (`+2 working days`).
fn moved_in_words(m: &crate::views::standup::Moved) -> String {
    moved_status(m).unwrap_or_else(|| {
        let unit = if m.moved.abs() == 1 {
            "working day"
        } else {
            "working days"
        };
        format!("{} {unit}", super::pages::signed(m.moved))
    })
}

/// A move that is no count of days: new, gone (or closed), or across the horizon.
fn moved_status(m: &crate::views::standup::Moved) -> Option<String> {
    match (&m.before, &m.after) {
        (None, Some(_)) => Some("new".to_owned()),
        // `closed`, or `gone` from Gitea: the reason says which.
        (Some(_), None) => Some(m.why.clone().unwrap_or_else(|| "gone".to_owned())),
        // A p80 past the horizon has no day to count to: the count would run to the horizon, which the
        // runway refuses to do for slack (audit 68: "+518").
        (Some(b), Some(a)) => crate::prose::across_horizon(&b.p80, &a.p80).map(ToOwned::to_owned),
        (None, None) => None,
    }
}

fn standup_page(
    view: crate::views::standup::Standup,
    inputs: Inputs<'_>,
    person_link: &dyn Fn(&str) -> Link,
    issue_link: &dyn Fn(&str) -> Link,
) -> StandupPage {
    let names = inputs.plan.milestone_names();
    let report = inputs.report;
    let milestones = view
        .drift
        .milestones
        .iter()
        .map(|m| MovedRow {
            link: Link {
                text: m.subject.clone(),
                title: None,
                // The standup names a milestone as the plan does (its title, with its repository where
                // another has the same title): found by that name, not the title alone.
                href: report
                    .milestones
                    .iter()
                    .find(|x| names.get(&x.id) == Some(&m.subject))
                    .map(|x| milestone_path(x.id)),
            },
            before: band_words(m.before.as_ref()),
            after: band_words(m.after.as_ref()),
            moved: moved_words(m),
            moved_words: moved_in_words(m),
            why: linked_reason(
                with_directives(
                    match (&m.changed, &m.why) {
                        (Some(c), Some(w)) => Some(format!("{c}; {w}")),
                        (c, w) => c.clone().or_else(|| w.clone()),
                    },
                    &m.directives,
                ),
                issue_link,
            ),
        })
        .collect();
    let mut groups: std::collections::BTreeMap<String, Vec<MovedRow>> = Default::default();
    let mut shown = 0;
    for m in view.drift.issues.iter().take(STANDUP_MOVED) {
        shown += 1;
        groups
            .entry(m.person.clone().unwrap_or_default())
            .or_default()
            .push(MovedRow {
                link: issue_link(&m.subject),
                before: band_words(m.before.as_ref()),
                after: band_words(m.after.as_ref()),
                moved: moved_words(m),
                moved_words: moved_in_words(m),
                // A new or gone issue says so in the Moved column already.
                why: linked_reason(
                    with_directives(
                        m.before.as_ref().and(m.after.as_ref()).and(m.why.clone()),
                        &m.directives,
                    ),
                    issue_link,
                ),
            });
    }
    let moved_by_person = groups
        .into_iter()
        .map(|(p, rows)| PersonMoves {
            person: if p.is_empty() {
                Link {
                    text: "nobody planned".to_owned(),
                    title: None,
                    href: None,
                }
            } else {
                person_link(&p)
            },
            rows,
        })
        .collect();
    // Work more likely never done than done, by key: the next working days say so beside it.
    let rarely_done: HashMap<String, f64> = report
        .issues
        .iter()
        .filter_map(|f| {
            Some((
                f.issue.to_string(),
                f.probability_done.filter(|p| *p < 0.5)?,
            ))
        })
        .collect();
    let people = view
        .people
        .iter()
        .map(|p| PersonPlanRow {
            person: person_link(&p.person),
            starts: p.starts.clone(),
            work: p
                .plan
                .iter()
                .map(|w| PlannedRow {
                    link: issue_link(&w.issue),
                    from: w.from.clone(),
                    to: w.to.clone(),
                    done_at_all: rarely_done
                        .get(w.issue.as_str())
                        .map(|p| super::pages::percent(*p)),
                })
                .collect(),
        })
        .collect();
    let stale_total = view.stale_blockers_total.max(view.stale_blockers.len());
    let stale = view
        .stale_blockers
        .iter()
        .take(STANDUP_STALE)
        .map(|b| StaleRow {
            link: issue_link(&b.issue),
            idle_days: b.idle_days,
            blocks: b.blocks.iter().map(|k| issue_link(k)).collect(),
            assignee: b.assignee.as_deref().map(person_link),
            in_cycle: b.in_cycle,
        })
        .collect();
    StandupPage {
        since_then: view
            .drift
            .since_then
            .as_ref()
            .map(|s| linked_words(&s.words(), issue_link))
            .unwrap_or_default(),
        moved_total: view.drift.issues_moved,
        moved_shown: shown,
        milestones,
        moved_by_person,
        people,
        stale,
        stale_total,
        view,
    }
}

fn roadmap_page(
    inputs: Inputs<'_>,
    people: &[PersonView],
    person_link: &dyn Fn(&str) -> Link,
    issue_link: &dyn Fn(&str) -> Link,
) -> RoadmapPage {
    let report = inputs.report;
    let today = report.as_of;
    let window = (today + chrono::Days::new(ROADMAP_DAYS)).min(report.horizon);
    // The axis ends at the last p80 shown, within the window.
    let mut total = 0;
    let mut shown = 0;
    let lanes: Vec<charts::Lane> = people
        .iter()
        .map(|p| {
            total += p.queue.len();
            let bars: Vec<charts::GanttBar> = p
                .queue
                .iter()
                .filter_map(|q| {
                    let start = date(&q.planned_start)?;
                    (start <= window).then(|| {
                        let l = issue_link(&q.issue);
                        charts::GanttBar {
                            key: q.issue.clone(),
                            title: q.title.clone(),
                            href: l.href,
                            start,
                            // The forecast's own days: a bar is drawn from its start, but the words
                            // say the p50 every other page says (audit 68: one shifted to the start
                            // read as a second p50).
                            p50: date(&q.p50),
                            p80: date(&q.p80),
                            end: date(&q.planned_end),
                            done_at_all: q.probability_done,
                        }
                    })
                })
                .take(ROADMAP_BARS)
                .collect();
            shown += bars.len();
            charts::Lane {
                person: p.person.clone(),
                href: person_link(&p.person).href,
                bars,
                off: p
                    .time_off
                    .iter()
                    .filter_map(|t| Some((date(&t.from)?, date(&t.to)?)))
                    .collect(),
            }
        })
        .collect();
    let end = lanes
        .iter()
        .flat_map(|l| &l.bars)
        .map(|b| b.ends(window).1)
        .max()
        .unwrap_or(window)
        .min(window);
    // Among the open ones it draws, as the runway names them.
    let names = crate::plan::milestone_names(
        report
            .milestones
            .iter()
            .filter(|m| m.state == crate::domain::OpenState::Open)
            .map(|m| (m.id, m.title.as_str(), m.repo.clone())),
    );
    let dues: Vec<charts::DueMark> = report
        .milestones
        .iter()
        .filter(|m| m.state == crate::domain::OpenState::Open)
        .filter_map(|m| {
            Some(charts::DueMark {
                title: names.get(&m.id).cloned().unwrap_or_else(|| m.title.clone()),
                due: m.due?,
                hard: m.hard,
            })
        })
        .collect();
    RoadmapPage {
        chart: charts::roadmap(
            &lanes,
            &dues,
            today,
            end,
            "Roadmap: the median plan per person",
        ),
        shown,
        total,
        until: end.to_string(),
        per_person: ROADMAP_BARS,
    }
}

/// Beyond its p80 a milestone's curve is known only at the horizon: the probability that the headline's
/// work is done within it, when the model gives it, and what that work is (the work that stays, or all the
/// planned work).
fn done_at_horizon(m: &crate::forecast::MilestoneForecast) -> Option<(f64, &'static str)> {
    if m.p80.date().is_some() {
        return None;
    }
    match m.planned {
        Some(_) => m.staying_done.map(|p| (p, "the work that stays")),
        None => m.probability_done.map(|p| (p, "all planned work")),
    }
}

/// The milestone fan chart from the forecast's stored points (see [`charts::fan`]).
fn fan_chart(
    m: &crate::forecast::MilestoneForecast,
    report: &crate::forecast::ForecastReport,
) -> String {
    if m.state != crate::domain::OpenState::Open || m.open_issues == 0 {
        return String::new();
    }
    let mut points: Vec<charts::FanPoint> = [
        (m.p10, 0.1, "p10"),
        (m.p50, 0.5, "p50"),
        (m.p80, 0.8, "p80"),
    ]
    .into_iter()
    .filter_map(|(w, p, label)| {
        Some(charts::FanPoint {
            day: w.date()?,
            p,
            label,
        })
    })
    .collect();
    if let (Some(due), Some(p)) = (m.due, m.probability_on_time)
        && due >= report.as_of
        && due <= report.horizon
    {
        points.push(charts::FanPoint {
            day: due,
            p,
            label: "at due",
        });
    }
    // A curve through points that disagree (P(on time) is counted by the due day, the quantiles by the
    // day they fall on) keeps the quantiles and drops the point that would make it fall.
    points.sort_by(|a, b| a.day.cmp(&b.day).then(a.p.total_cmp(&b.p)));
    let mut kept: Vec<charts::FanPoint> = Vec::new();
    for p in points {
        if kept.last().is_some_and(|k| p.p < k.p) {
            if p.label == "at due" {
                continue;
            }
            kept.retain(|k| k.label != "at due" || k.p <= p.p);
        }
        kept.push(p);
    }
    let beyond = done_at_horizon(m).map(|(p, _)| p);
    charts::fan(
        &kept,
        report.as_of,
        report.horizon,
        m.due,
        beyond,
        &if m.planned.is_some() {
            // The headline leaves out the issues expected never to be done: say so where it is read.
            format!(
                "Probability that the work that stays in {} is done, by date",
                m.title
            )
        } else {
            format!("Probability that {} is done, by date", m.title)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::closed_words;
    use chrono::NaiveDate;

    #[test]
    fn a_closed_milestone_is_said_against_its_due_date() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let closed = d("2026-10-30");
        assert_eq!(
            closed_words(closed, Some(d("2026-11-04"))),
            "on 2026-10-30, 5 days before its due date 2026-11-04"
        );
        assert_eq!(
            closed_words(closed, Some(d("2026-10-29"))),
            "on 2026-10-30, 1 day after its due date 2026-10-29"
        );
        assert_eq!(
            closed_words(closed, Some(closed)),
            "on 2026-10-30, its due date"
        );
        assert_eq!(closed_words(closed, None), "on 2026-10-30");
    }

    #[test]
    fn a_move_past_the_horizon_is_said_not_counted_to_it() {
        let band = |p80: &str| crate::views::Band {
            p50: "2026-12-01".into(),
            p80: p80.into(),
        };
        let moved = |before: &str, after: &str, days: i64| crate::views::standup::Moved {
            subject: "acme/web#29".into(),
            before: Some(band(before)),
            after: Some(band(after)),
            moved: days,
            why: Some("queue of dana".into()),
            changed: None,
            directives: vec![],
            person: None,
        };
        let beyond = crate::forecast::When::BeyondHorizon.to_string();
        assert_eq!(
            super::moved_words(&moved("2026-12-02", &beyond, 518)),
            "left the horizon"
        );
        assert_eq!(
            super::moved_words(&moved(&beyond, "2026-12-02", -518)),
            "came within the horizon"
        );
        assert_eq!(
            super::moved_words(&moved("2026-12-02", "2026-12-04", 2)),
            "+2"
        );
    }
}

#[cfg(test)]
mod linked_words_tests {
    use super::{Link, linked_words};

    /// The issues and directives a reason names are linked, the rest kept as it was.
    #[test]
    fn a_reason_names_its_issues_and_directives_as_links() {
        let issue = |key: &str| Link {
            text: key.to_owned(),
            title: Some("a title".to_owned()),
            href: Some(format!("issues/{}.html", key.replace('#', "/"))),
        };
        let parts = linked_words(
            "capacity of gus (D-0006); acme/mobile#90 left it, C-0004 pending. XD-12 and a/b#c stay, \
             as do D-42, https://x/acme/api#1 and acme/api#12abc",
            &issue,
        );
        let shown: Vec<(String, Option<String>)> = parts
            .iter()
            .map(|l| (l.text.clone(), l.href.clone()))
            .collect();
        let link = |t: &str, h: &str| (t.to_owned(), Some(h.to_owned()));
        let text = |t: &str| (t.to_owned(), None);
        assert_eq!(
            shown,
            vec![
                text("capacity of gus ("),
                link("D-0006", "directives.html#D-0006"),
                text("); "),
                link("acme/mobile#90", "issues/acme/mobile/90.html"),
                text(" left it, "),
                link("C-0004", "changes.html#C-0004"),
                text(
                    " pending. XD-12 and a/b#c stay, as do D-42, https://x/acme/api#1 and acme/api#12abc"
                ),
            ]
        );
        assert!(
            parts.iter().all(|l| l.title.is_none()),
            "no second line in a sentence"
        );
        assert_eq!(
            parts.iter().map(|l| l.text.as_str()).collect::<String>(),
            "capacity of gus (D-0006); acme/mobile#90 left it, C-0004 pending. XD-12 and a/b#c stay, \
             as do D-42, https://x/acme/api#1 and acme/api#12abc"
        );
    }
}
