//! Gitea's JSON as CommiTea reads it: only the fields it uses, every one of them tolerant of `null`.
//!
//! Gitea writes Go's nil slices and nil pointers as `null` (an empty timeline page is `null`, an issue
//! nobody is assigned to has `"assignees": null`), leaves `omitempty` fields out, and a newer Gitea adds
//! fields. So every field here has a default, `null` reads as the default, a list may be `null` (empty)
//! and may hold `null` elements (a timeline entry whose referenced row is gone), and unknown fields are
//! ignored. What still cannot be read — a string where a number belongs — is an error that names the
//! field (`[3].labels[0].id`). `docs/gitea.md` lists, per endpoint and field, what Gitea's handlers and
//! converters can send, with the source file of each.

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

/// Reads `null` as the type's default: Gitea's nil pointers and nil slices.
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An RFC 3339 time (any offset: Gitea writes the server's zone); `null` and `""` are none.
fn opt_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    match s.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(serde::de::Error::custom),
    }
}

/// A due date as Gitea writes it, the end of a day in the server's zone (`2026-12-18T23:59:59-08:00`): the end
/// of that same day in UTC (`2026-12-18T23:59:59Z`), as CommiTea keeps due dates. Turned into UTC first, a due
/// date from a server west of UTC would fall on the next day. `null` and `""` are none.
fn opt_due<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    match s.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| Some(crate::domain::end_of_day(t.date_naive())))
            .map_err(serde::de::Error::custom),
    }
}

/// A JSON list that may be `null` (empty) and may hold `null` elements (skipped).
#[derive(Debug)]
pub struct List<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Page::deserialize(d).map(|p| Self(p.items))
    }
}

/// One page of a paged list: its readable items, and how many elements Gitea sent (`null` ones too).
/// Gitea converts after paging and writes an element it cannot convert as `null`: a page is short only
/// when it *sent* fewer elements than asked for, not when some of them were `null`.
#[derive(Debug)]
pub struct Page<T> {
    /// The elements that are not `null`.
    pub items: Vec<T>,
    /// Every element sent.
    pub sent: usize,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Page<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items: Vec<Option<T>> = Option::deserialize(d)?.unwrap_or_default();
        let sent = items.len();
        Ok(Self {
            items: items.into_iter().flatten().collect(),
            sent,
        })
    }
}

impl<T> Default for List<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

/// A list field inside an object: `null`, missing or with `null` elements.
fn list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(List::<T>::deserialize(d)?.0)
}

/// Why an answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at {path}: {message}")]
pub struct DecodeError {
    /// Where in the answer, e.g. `[3].labels[0].id` (`.` for the whole answer).
    pub path: String,
    /// What was wrong.
    pub message: String,
}

/// Decodes a JSON answer, naming the field that does not fit.
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, DecodeError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let mut message = e.into_inner().to_string();
        // serde_json appends " at line L column C"; the path says where more usefully.
        if let Some(i) = message.rfind(" at line ") {
            message.truncate(i);
        }
        DecodeError { path, message }
    })?;
    de.end().map_err(|e| DecodeError {
        path: ".".into(),
        message: e.to_string(),
    })?;
    Ok(value)
}

/// A user (`login` only).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GUser {
    /// The username.
    #[serde(deserialize_with = "nullable")]
    pub login: String,
}

/// The login of an optional user, `""` when absent.
pub fn login(u: Option<&GUser>) -> String {
    u.map(|u| u.login.clone()).unwrap_or_default()
}

/// A label.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GLabel {
    /// Gitea's id.
    #[serde(deserialize_with = "nullable")]
    pub id: u64,
    /// The name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Six hex digits (Gitea sends them without `#`; older servers with).
    #[serde(deserialize_with = "nullable")]
    pub color: String,
    /// The description.
    #[serde(deserialize_with = "nullable")]
    pub description: String,
}

/// A milestone.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GMilestone {
    /// Gitea's id.
    #[serde(deserialize_with = "nullable")]
    pub id: u64,
    /// The title.
    #[serde(deserialize_with = "nullable")]
    pub title: String,
    /// The description (carries the `deadline/hard` marker).
    #[serde(deserialize_with = "nullable")]
    pub description: String,
    /// `open` or `closed`.
    #[serde(deserialize_with = "nullable")]
    pub state: String,
    /// The due date, as the end of its day (see `opt_due`); null when there is none.
    #[serde(deserialize_with = "opt_due")]
    pub due_on: Option<DateTime<Utc>>,
    /// When it was created.
    #[serde(deserialize_with = "opt_time")]
    pub created_at: Option<DateTime<Utc>>,
    /// When it was closed; null while open.
    #[serde(deserialize_with = "opt_time")]
    pub closed_at: Option<DateTime<Utc>>,
}

/// `repository` inside an issue: where it lives.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GRepoMeta {
    /// `owner/repo`.
    #[serde(deserialize_with = "nullable")]
    pub full_name: String,
}

/// `pull_request` inside an issue shape: present only on pull requests.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GPullMeta {
    /// Whether it was merged.
    #[serde(deserialize_with = "nullable")]
    pub merged: bool,
}

/// An issue (or a pull request in the issue shape).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GIssue {
    /// The number (0 in Gitea's placeholder for an issue the token may not see).
    #[serde(deserialize_with = "nullable")]
    pub number: u64,
    /// The title.
    #[serde(deserialize_with = "nullable")]
    pub title: String,
    /// The description.
    #[serde(deserialize_with = "nullable")]
    pub body: String,
    /// Its web address (`ROOT/owner/repo/issues/N`, `…/pulls/N` for a pull request).
    #[serde(deserialize_with = "nullable")]
    pub html_url: String,
    /// `open` or `closed`.
    #[serde(deserialize_with = "nullable")]
    pub state: String,
    /// The opener.
    pub user: Option<GUser>,
    /// When it was opened.
    #[serde(deserialize_with = "opt_time")]
    pub created_at: Option<DateTime<Utc>>,
    /// When it last changed.
    #[serde(deserialize_with = "opt_time")]
    pub updated_at: Option<DateTime<Utc>>,
    /// When it was closed; null while open.
    #[serde(deserialize_with = "opt_time")]
    pub closed_at: Option<DateTime<Utc>>,
    /// Assignees; null when nobody is assigned.
    #[serde(deserialize_with = "list")]
    pub assignees: Vec<GUser>,
    /// Labels.
    #[serde(deserialize_with = "list")]
    pub labels: Vec<GLabel>,
    /// The milestone; null when none.
    pub milestone: Option<GMilestone>,
    /// Gitea's native estimate, seconds.
    #[serde(deserialize_with = "nullable")]
    pub time_estimate: u64,
    /// The number of comments (`comment` and `review` entries).
    pub comments: Option<u64>,
    /// Present only on pull requests.
    pub pull_request: Option<GPullMeta>,
    /// Where it lives.
    pub repository: Option<GRepoMeta>,
}

/// A tracked-time entry (`/times`, and embedded in a timeline's time events).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GTime {
    /// Gitea's id.
    #[serde(deserialize_with = "nullable")]
    pub id: u64,
    /// Who logged it.
    #[serde(deserialize_with = "nullable")]
    pub user_name: String,
    /// When it was logged.
    #[serde(deserialize_with = "opt_time")]
    pub created: Option<DateTime<Utc>>,
    /// Seconds.
    #[serde(deserialize_with = "nullable")]
    pub time: i64,
}

/// One entry of an issue's timeline: a comment or an event.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GTimeline {
    /// Gitea's comment id.
    #[serde(deserialize_with = "nullable")]
    pub id: u64,
    /// The entry's type: `comment`, `label`, `close`, …
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub kind: String,
    /// Who.
    pub user: Option<GUser>,
    /// A comment's text; `"1"` or `""` on label events.
    #[serde(deserialize_with = "nullable")]
    pub body: String,
    /// When.
    #[serde(deserialize_with = "opt_time")]
    pub created_at: Option<DateTime<Utc>>,
    /// When a comment was last edited.
    #[serde(deserialize_with = "opt_time")]
    pub updated_at: Option<DateTime<Utc>>,
    /// `change_title`: before.
    #[serde(deserialize_with = "nullable")]
    pub old_title: String,
    /// `change_title`: after.
    #[serde(deserialize_with = "nullable")]
    pub new_title: String,
    /// `pull_ref` and other references: the referencing issue or pull request.
    pub ref_issue: Option<GIssue>,
    /// `label`: the label.
    pub label: Option<GLabel>,
    /// `assignees`: who.
    pub assignee: Option<GUser>,
    /// `assignees`: true when unassigned.
    #[serde(deserialize_with = "nullable")]
    pub removed_assignee: bool,
    /// Dependency events: the other issue.
    pub dependent_issue: Option<GIssue>,
    /// `milestone`: the new one.
    pub milestone: Option<GMilestone>,
    /// `milestone`: the old one.
    pub old_milestone: Option<GMilestone>,
    /// Time events (`add_time_manual`, `stop_tracking`): the tracked time they recorded.
    pub tracked_time: Option<GTime>,
}

/// A comment of the repository-wide listing: which issue it belongs to.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GCommentRef {
    /// The issue's web URL; `""` for a comment on a pull request.
    #[serde(deserialize_with = "nullable")]
    pub issue_url: String,
}

/// A pull request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GPull {
    /// The number.
    #[serde(deserialize_with = "nullable")]
    pub number: u64,
    /// The title.
    #[serde(deserialize_with = "nullable")]
    pub title: String,
    /// The description.
    #[serde(deserialize_with = "nullable")]
    pub body: String,
    /// Its web address (`ROOT/owner/repo/pulls/N`), which tells the forge's own address.
    #[serde(deserialize_with = "nullable")]
    pub html_url: String,
    /// `open` or `closed`.
    #[serde(deserialize_with = "nullable")]
    pub state: String,
    /// Whether it was merged.
    #[serde(deserialize_with = "nullable")]
    pub merged: bool,
    /// When it was opened.
    #[serde(deserialize_with = "opt_time")]
    pub created_at: Option<DateTime<Utc>>,
    /// When it was closed or merged.
    #[serde(deserialize_with = "opt_time")]
    pub closed_at: Option<DateTime<Utc>>,
}

/// `internal_tracker` of a repository: omitted when the issues unit is off.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GTracker {
    /// Whether issue dependencies are enabled.
    pub enable_issue_dependencies: Option<bool>,
    /// Whether time tracking is enabled in the repository.
    pub enable_time_tracker: Option<bool>,
}

/// A repository (`GET /repos/{o}/{r}`), the parts the sync needs.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GRepo {
    /// `owner/name` as the server names it now (a repository renamed or transferred keeps answering to its
    /// old name through a redirect).
    #[serde(deserialize_with = "nullable")]
    pub full_name: String,
    /// The issue tracker's settings.
    pub internal_tracker: Option<GTracker>,
    /// Whether the Issues unit is on: off, the issue list answers 404 to `type=issues`.
    pub has_issues: Option<bool>,
    /// Whether the pull requests unit is on.
    pub has_pull_requests: Option<bool>,
    /// A mirror: Gitea serves no pull request list for one (`CanEnablePulls`).
    pub mirror: Option<bool>,
    /// A repository without commits: no pull request list either.
    pub empty: Option<bool>,
    /// Archived: read-only, every write refused with 423.
    pub archived: Option<bool>,
    /// What the token's user may do there.
    pub permissions: Option<GPermissions>,
}

/// A repository's `permissions` for the token's user.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GPermissions {
    /// Administers the repository.
    pub admin: Option<bool>,
    /// May push (write access).
    pub push: Option<bool>,
}

impl GRepo {
    /// Whether `/times` may list everyone's entries to this token: Gitea lists only the token user's own
    /// unless that user may write the Issues unit (or is a site admin; `cantSetUser` in
    /// issue_tracked_time.go). The API says no more than `permissions.push`, which is the Code unit's
    /// (`innerToRepo`): a token without it lists only its own, and one with it may still (the sync checks
    /// the answer against the timeline, [`crate::gitea::sync`]).
    pub fn lists_every_time(&self) -> bool {
        self.permissions
            .as_ref()
            .is_none_or(|p| p.push != Some(false) || p.admin == Some(true))
    }

    /// Whether `GET /pulls` answers: Gitea's `mustAllowPulls` answers 404 for a repository with pull
    /// requests switched off, a mirror and an empty repository (Forgejo the same).
    pub fn serves_pulls(&self) -> bool {
        self.has_pull_requests != Some(false)
            && self.mirror != Some(true)
            && self.empty != Some(true)
    }
}

/// `GET /settings/api`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GSettings {
    /// The largest page Gitea serves.
    #[serde(deserialize_with = "nullable")]
    pub max_response_items: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_lists_and_null_elements_read_as_empty() {
        let v: List<GTimeline> = decode(b"null").unwrap();
        assert!(v.0.is_empty());
        let v: List<GTimeline> = decode(br#"[null, {"id": 3, "type": "close"}, null]"#).unwrap();
        assert_eq!(v.0.len(), 1);
        assert_eq!(v.0[0].kind, "close");
        let i: GIssue = decode(
            br#"{"number": 1, "title": null, "assignees": null, "labels": [null], "milestone": null,
                 "closed_at": null, "pull_request": null, "time_estimate": null, "a_new_field": {"x": [1]}}"#,
        )
        .unwrap();
        assert_eq!((i.number, i.title.as_str()), (1, ""));
        assert!(i.assignees.is_empty() && i.labels.is_empty() && i.milestone.is_none());
    }

    #[test]
    fn a_wrong_type_names_the_field() {
        let e = decode::<List<GIssue>>(br#"[{"number": 1}, {"labels": [{"id": "seven"}]}]"#)
            .unwrap_err();
        assert_eq!(e.path, "[1].labels[0].id");
        assert!(e.message.contains("invalid type"), "{e}");
    }

    #[test]
    fn times_take_any_offset() {
        let m: GMilestone = decode(br#"{"created_at": "2026-11-02T10:00:00+02:00"}"#).unwrap();
        assert_eq!(
            m.created_at.unwrap().to_rfc3339(),
            "2026-11-02T08:00:00+00:00"
        );
    }
}
