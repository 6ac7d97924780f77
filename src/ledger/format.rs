//! The directive ledger's types and the renderer for a new directive.
//!
//! The format itself (one Markdown section per directive, prose allowed between them) is described in
//! `docs/ledger.md`; [`super::parse`] reads it. A parsed [`Ledger`] keeps the exact source text of every
//! entry, so rendering an untouched ledger gives back the same bytes.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde_json::Value;

use crate::domain::{Estimate, IssueKey, Priority};

/// The separator between the parts of a directive heading: `## D-0007 · reprioritize · 2026-11-30T10:15:00Z`.
pub(crate) const HEADING_SEPARATOR: &str = " · ";

/// A parsed ledger: its entries in source order, prose and directives alike.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ledger {
    /// Every piece of the source text, in order; concatenated they are the whole text.
    pub entries: Vec<Entry>,
}

impl Ledger {
    /// The well-formed directives, in source order.
    pub fn directives(&self) -> impl Iterator<Item = &DirectiveEntry> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Directive(d) => Some(d),
            Entry::Prose(_) => None,
        })
    }
}

/// One piece of the ledger.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// Text that is not a well-formed directive (introductions, notes, malformed entries), byte for byte.
    Prose(String),
    /// A well-formed directive.
    Directive(DirectiveEntry),
}

impl Entry {
    /// The exact source text of this entry.
    pub fn raw(&self) -> &str {
        match self {
            Entry::Prose(s) => s,
            Entry::Directive(d) => &d.raw,
        }
    }
}

/// A directive's id, `D-0007`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DirectiveId(pub u32);

impl DirectiveId {
    /// The id after this one.
    pub fn next(self) -> Self {
        Self(self.0.saturating_add(1))
    }
}

impl fmt::Display for DirectiveId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "D-{:04}", self.0)
    }
}

impl FromStr for DirectiveId {
    type Err = ();
    /// `D-` followed by one or more ASCII digits.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits = s.strip_prefix("D-").ok_or(())?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(());
        }
        digits.parse().map(Self).map_err(|_| ())
    }
}

/// What a directive does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DirectiveKind {
    /// Set an issue's priority.
    Reprioritize,
    /// Set an issue's estimate.
    Reestimate,
    /// Set the due date of a milestone or issue, possibly hard.
    SetDeadline,
    /// Put an issue or milestone in or out of scope.
    Scope,
    /// Set a member's capacity for a period.
    Capacity,
    /// A note with no effect on the plan.
    Note,
}

impl DirectiveKind {
    /// Every kind, in documentation order.
    pub const ALL: [DirectiveKind; 6] = [
        Self::Reprioritize,
        Self::Reestimate,
        Self::SetDeadline,
        Self::Scope,
        Self::Capacity,
        Self::Note,
    ];

    /// The kind's name in the ledger and in `record_directive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reprioritize => "reprioritize",
            Self::Reestimate => "reestimate",
            Self::SetDeadline => "set-deadline",
            Self::Scope => "scope",
            Self::Capacity => "capacity",
            Self::Note => "note",
        }
    }

    /// Whether a directive of this kind may have this target (or none).
    pub(crate) fn allows_target(self, target: Option<&Target>) -> bool {
        matches!(
            (self, target),
            (
                Self::Reprioritize | Self::Reestimate,
                Some(Target::Issue(_))
            ) | (
                Self::SetDeadline | Self::Scope,
                Some(Target::Issue(_) | Target::Milestone(_))
            ) | (Self::Capacity, Some(Target::Member(_)))
                | (Self::Note, _)
        )
    }

    /// The targets this kind takes, for messages.
    pub(crate) fn target_help(self) -> &'static str {
        match self {
            Self::Reprioritize | Self::Reestimate => "an issue (issue owner/repo#N)",
            Self::SetDeadline | Self::Scope => {
                "an issue or a milestone (issue owner/repo#N or milestone ID)"
            }
            Self::Capacity => "a member (member USERNAME)",
            Self::Note => "any target or none",
        }
    }
}

impl fmt::Display for DirectiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DirectiveKind {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|k| k.as_str() == s).ok_or(())
    }
}

/// What a directive is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// `issue owner/repo#N`.
    Issue(IssueKey),
    /// `milestone ID`, Gitea's milestone id.
    Milestone(u64),
    /// `member USERNAME`, a Gitea username.
    Member(String),
}

impl Target {
    /// The target's kind and bare id: `("issue", "acme/api#3")`, `("milestone", "2")`, `("member", "gus")`.
    pub fn parts(&self) -> (&'static str, String) {
        match self {
            Target::Issue(k) => ("issue", k.to_string()),
            Target::Milestone(id) => ("milestone", id.to_string()),
            Target::Member(u) => ("member", u.clone()),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Issue(k) => write!(f, "issue {k}"),
            Target::Milestone(id) => write!(f, "milestone {id}"),
            Target::Member(u) => write!(f, "member {u}"),
        }
    }
}

/// Whether `s` is a plausible Gitea username: ASCII letters, digits, `-`, `_` and `.`, not starting with
/// `.` (Gitea reserves `.` and `..`; a name that starts with one would be a hidden file or a way up).
pub(crate) fn valid_username(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// What [`valid_username`] takes, in words, for the messages that refuse a name.
pub(crate) const USERNAME_RULE: &str =
    "ASCII letters (a–z, A–Z), digits, `-`, `_` and `.`, not first";

/// The message for `s`, which is not a username: quoted short and on one line.
pub(crate) fn not_a_username(s: &str) -> String {
    format!(
        "\"{}\" is not a Gitea username ({USERNAME_RULE})",
        crate::prose::one_line(&crate::limits::excerpt(s))
    )
}

/// A directive's structured effect; its variant determines the directive's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    /// `{"priority": 0..3}`.
    Reprioritize {
        /// The new priority.
        priority: Priority,
    },
    /// `{"estimate": "2d"}`.
    Reestimate {
        /// The new estimate.
        estimate: Estimate,
    },
    /// `{"due": "2026-12-15", "hard": true}`; `hard` is optional and defaults to false.
    SetDeadline {
        /// The new due date.
        due: NaiveDate,
        /// Whether the date cannot move.
        hard: bool,
    },
    /// `{"in": true}`.
    Scope {
        /// True to put the target in scope, false to drop it.
        included: bool,
    },
    /// `{"from": "2026-12-21", "to": "2027-01-01", "hours_per_week": 0}`; `to` is optional (open-ended).
    Capacity {
        /// The first day the capacity applies.
        from: NaiveDate,
        /// The last day it applies, if it ends.
        to: Option<NaiveDate>,
        /// Working hours per week in the period.
        hours_per_week: f64,
    },
    /// A note: no params.
    Note,
}

impl Params {
    /// The kind of directive these params belong to.
    pub fn kind(&self) -> DirectiveKind {
        match self {
            Params::Reprioritize { .. } => DirectiveKind::Reprioritize,
            Params::Reestimate { .. } => DirectiveKind::Reestimate,
            Params::SetDeadline { .. } => DirectiveKind::SetDeadline,
            Params::Scope { .. } => DirectiveKind::Scope,
            Params::Capacity { .. } => DirectiveKind::Capacity,
            Params::Note => DirectiveKind::Note,
        }
    }

    /// What the directive sets, in words: `priority p/0`, `due 2027-01-29, hard`; `None` for a note.
    pub fn describe(&self) -> Option<String> {
        Some(match self {
            Params::Reprioritize { priority } => format!("priority {priority}"),
            Params::Reestimate { estimate } => format!("estimate {estimate}"),
            Params::SetDeadline { due, hard: true } => format!("due {due}, hard"),
            Params::SetDeadline { due, hard: false } => format!("due {due}"),
            Params::Scope { included: true } => "in scope".to_owned(),
            Params::Scope { included: false } => "out of scope".to_owned(),
            Params::Capacity {
                from,
                to: Some(to),
                hours_per_week,
            } => format!("{hours_per_week} h/week from {from} to {to}"),
            Params::Capacity {
                from,
                to: None,
                hours_per_week,
            } => format!("{hours_per_week} h/week from {from} on"),
            Params::Note => return None,
        })
    }

    /// The params as inline JSON, `{"priority": 1}`; `None` for a note.
    pub(crate) fn to_inline_json(&self) -> Option<String> {
        let date = |d: &NaiveDate| Value::String(d.format("%Y-%m-%d").to_string());
        let fields: Vec<(&str, Value)> = match self {
            Params::Reprioritize { priority } => {
                vec![("priority", Value::from(priority.level()))]
            }
            Params::Reestimate { estimate } => {
                vec![("estimate", Value::String(estimate.to_string()))]
            }
            Params::SetDeadline { due, hard } => {
                let mut v = vec![("due", date(due))];
                if *hard {
                    v.push(("hard", Value::Bool(true)));
                }
                v
            }
            Params::Scope { included } => vec![("in", Value::Bool(*included))],
            Params::Capacity {
                from,
                to,
                hours_per_week,
            } => {
                let mut v = vec![("from", date(from))];
                if let Some(to) = to {
                    v.push(("to", date(to)));
                }
                v.push(("hours_per_week", Value::from(*hours_per_week)));
                v
            }
            Params::Note => return None,
        };
        let body: Vec<String> = fields
            .into_iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        Some(format!("{{{}}}", body.join(", ")))
    }
}

/// Whether a directive is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Status {
    /// In force (the default when a directive has no `status` line).
    #[default]
    Active,
    /// Replaced by a later directive.
    Superseded,
    /// Taken back by the PM.
    Withdrawn,
}

impl Status {
    /// The status's name in the ledger.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Superseded => "superseded",
            Status::Withdrawn => "withdrawn",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Status::Active, Status::Superseded, Status::Withdrawn]
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s))
            .ok_or(())
    }
}

/// A well-formed directive as it stands in the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectiveEntry {
    /// Its id, unique in the ledger.
    pub id: DirectiveId,
    /// When it was given.
    pub at: DateTime<Utc>,
    /// What it does; always `params.kind()`.
    pub kind: DirectiveKind,
    /// The PM's words, verbatim: the blockquote's lines without their `> ` markers, joined by `\n`.
    pub quote: String,
    /// What it is about; only a note may have none.
    pub target: Option<Target>,
    /// Its structured effect.
    pub params: Params,
    /// Why, if given.
    pub rationale: Option<String>,
    /// Whether it is in force.
    pub status: Status,
    /// Who gave it (a Gitea username), if recorded.
    pub by: Option<String>,
    /// The 1-based line of its heading in the ledger.
    pub line: usize,
    /// The exact source text of the entry, heading to last list item, line endings included.
    pub raw: String,
}

/// A directive to add to the ledger: what `record_directive` (or a person) wants recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDirective {
    /// When it was given.
    pub at: DateTime<Utc>,
    /// The PM's words, verbatim; may span lines, must not be blank.
    pub quote: String,
    /// What it is about.
    pub target: Option<Target>,
    /// Its structured effect, which also gives its kind.
    pub params: Params,
    /// Why, on one line.
    pub rationale: Option<String>,
    /// Who gave it (a Gitea username).
    pub by: Option<String>,
}

/// A quote's line endings as the ledger keeps them: `\r\n` and a lone `\r` are `\n` (Markdown reads all
/// three as a line ending, so they are the same words), and no line ends in spaces or tabs (an editor
/// that trims them changes no words).
pub fn normalise_quote(quote: &str) -> String {
    quote
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .split('\n')
        .map(|l| l.trim_end_matches([' ', '\t']))
        .collect::<Vec<_>>()
        .join("\n")
}

impl NewDirective {
    /// The kind of the directive.
    pub fn kind(&self) -> DirectiveKind {
        self.params.kind()
    }

    /// The directive's text as a ledger entry with id `id`, lines ended by `newline` (`"\n"` or `"\r\n"`).
    ///
    /// The text starts with the heading and ends with a line ending; the parser reads it back to the same
    /// directive (status active).
    pub fn render(&self, id: DirectiveId, newline: &str) -> String {
        let mut out = String::new();
        let mut line = |s: &str| {
            out.push_str(s);
            out.push_str(newline);
        };
        line(&format!(
            "## {id}{HEADING_SEPARATOR}{}{HEADING_SEPARATOR}{}",
            self.kind(),
            self.at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
        ));
        line("");
        for q in normalise_quote(&self.quote).split('\n') {
            if q.is_empty() {
                line(">");
            } else {
                line(&format!("> {q}"));
            }
        }
        line("");
        if let Some(t) = &self.target {
            line(&format!("- target: {t}"));
        }
        if let Some(p) = self.params.to_inline_json() {
            line(&format!("- params: {p}"));
        }
        if let Some(r) = &self.rationale {
            line(&format!("- rationale: {r}"));
        }
        line(&format!("- status: {}", Status::Active));
        if let Some(b) = &self.by {
            line(&format!("- by: {b}"));
        }
        out
    }
}

/// What is wrong with one directive in the ledger; the line is 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerProblem {
    /// The heading is not `## D-NNNN · kind · timestamp`.
    #[error(
        "ledger line {line}: malformed directive heading \"{}\": expected \"D-NNNN · kind · 2026-11-30T10:15:00Z\", so this directive is left out until it reads so",
        crate::limits::excerpt(.heading)
    )]
    Heading {
        /// The heading's line.
        line: usize,
        /// The heading's text.
        heading: String,
    },
    /// The kind is not one of the six.
    #[error(
        "ledger line {line}: unknown directive kind \"{kind}\" (expected reprioritize, reestimate, set-deadline, scope, capacity or note), so this directive is left out"
    )]
    UnknownKind {
        /// The heading's line.
        line: usize,
        /// The kind as written.
        kind: String,
    },
    /// The timestamp is not RFC 3339.
    #[error(
        "ledger line {line}: bad date \"{}\" in directive heading: expected an RFC 3339 time such as 2026-11-30T10:15:00Z, so this directive is left out",
        crate::limits::excerpt(.text)
    )]
    BadTime {
        /// The heading's line.
        line: usize,
        /// The timestamp as written.
        text: String,
    },
    /// Two directives share an id.
    #[error(
        "ledger line {line}: duplicate directive id {id} (already used on line {first}), so this entry is left out: two entries got one id (two PMs appending at once, or a paste); if both are meant, give this one the next free id, {free} (and its op file's `directive:`, if it has one)"
    )]
    DuplicateId {
        /// The later heading's line.
        line: usize,
        /// The id.
        id: DirectiveId,
        /// The line of the first directive with that id.
        first: usize,
        /// The id the next directive would get.
        free: DirectiveId,
    },
    /// A line git writes into a file it could not merge: the entries around it are read, the marker is not.
    #[error(
        "ledger line {line}: a git merge-conflict marker ({marker}): the ledger was merged with a conflict left in; keep the entries of both sides (a later one with an id already used needs the next free id) and delete the marker lines"
    )]
    ConflictMarker {
        /// The marker's line.
        line: usize,
        /// The marker (`<<<<<<<`, `|||||||`, `=======` or `>>>>>>>`).
        marker: String,
    },
    /// A heading of the PM's own inside an entry, before its quote or its list: it ends the entry there.
    #[error(
        "ledger line {line}: directive {id} has no {missing} before the heading on line {heading_line} (\"{}\"), \
         which ends the entry there, so it is left out: move that heading after the entry's list",
        crate::limits::excerpt(.heading)
    )]
    CutByHeading {
        /// The directive's heading line.
        line: usize,
        /// The directive's id.
        id: DirectiveId,
        /// What the heading comes before: `quote` or `key/value list`.
        missing: &'static str,
        /// The cutting heading's line.
        heading_line: usize,
        /// Its text.
        heading: String,
    },
    /// No blockquote follows the heading.
    #[error(
        "ledger line {line}: directive {id} has no quote, so it is left out: the PM's words must follow the heading as a blockquote (> …)"
    )]
    MissingQuote {
        /// The heading's line.
        line: usize,
        /// The directive's id.
        id: DirectiveId,
    },
    /// A list item is not `key: value`.
    #[error(
        "ledger line {line}: list item is not \"key: value\": {:?}, so this directive is left out; write each item \
         `- key: value`",
        crate::limits::excerpt(.text)
    )]
    BadItem {
        /// The item's line.
        line: usize,
        /// The item's text.
        text: String,
    },
    /// A key the format does not know.
    #[error(
        "ledger line {line}: unknown key \"{key}\" (expected target, params, rationale, status or by){hint}, so this \
         directive is left out"
    )]
    UnknownKey {
        /// What was likely meant (`; did you mean target?`), or empty.
        hint: String,
        /// The item's line.
        line: usize,
        /// The key as written.
        key: String,
    },
    /// A key given twice in one directive.
    #[error(
        "ledger line {line}: key \"{key}\" given twice in one directive, so it is left out; keep one"
    )]
    DuplicateKey {
        /// The second item's line.
        line: usize,
        /// The key.
        key: String,
    },
    /// The target is not `issue owner/repo#N`, `milestone ID` or `member USERNAME`.
    #[error(
        "ledger line {line}: malformed target \"{}\": {reason}, so this directive is left out",
        crate::limits::excerpt(.text)
    )]
    BadTarget {
        /// The item's line (the heading's when the target is missing).
        line: usize,
        /// The target as written.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// The params are not valid JSON of the shape the kind needs.
    #[error(
        "ledger line {line}: params for {kind} are wrong: {reason}, so this directive is left out"
    )]
    BadParams {
        /// The item's line (the heading's when params are missing).
        line: usize,
        /// The directive's kind.
        kind: DirectiveKind,
        /// What is wrong.
        reason: String,
    },
    /// The status is not active, superseded or withdrawn.
    #[error(
        "ledger line {line}: unknown status \"{text}\" (expected active, superseded or withdrawn), so this directive is left out; fix the word and it counts again"
    )]
    BadStatus {
        /// The item's line.
        line: usize,
        /// The status as written.
        text: String,
    },
    /// A directive heading inside a code or HTML block, which reads it as text: the directive does not count.
    #[error(
        "ledger line {line}: \"## {heading}\" is not read as a directive: it is inside {inside} that starts on \
         line {opened}; close that block (a ``` fence needs its closing ```, a <!-- comment its -->) and the \
         directives after it count again"
    )]
    Swallowed {
        /// The heading's line.
        line: usize,
        /// The heading's text (cut when long).
        heading: String,
        /// What the block is, in words.
        inside: &'static str,
        /// The line the block starts on.
        opened: usize,
    },
    /// A line shaped like a directive's heading that markdown does not read as one (`### D-0004 · …`,
    /// `##D-0004`, `## d-0004`, `**D-0004** · …`, `## D–0004` with an en dash, an indented heading, one
    /// with no id): the directive does not count.
    #[error("ledger line {line}: \"{text}\" is not read as a directive: {fix}")]
    Misshapen {
        /// The line.
        line: usize,
        /// The line as written (cut when long).
        text: String,
        /// What is wrong with it, and what to write.
        fix: String,
    },
    /// A line ends in a lone carriage return (the old Mac line ending): the lines around it read as one.
    #[error(
        "ledger line {line}: a line ends in a lone carriage return (the old Mac line ending), so the lines \
         around it are read as one and the directives in them do not count; save pm-state.md with LF or \
         CRLF line endings"
    )]
    LoneCarriageReturn {
        /// The line (counted in line feeds) holding the first lone carriage return.
        line: usize,
    },
    /// `by` is not a username.
    #[error(
        "ledger line {line}: \"by\" must be a Gitea username, not \"{text}\", so this directive is left out; write \
         the login of who recorded it, or leave the line out"
    )]
    BadBy {
        /// The item's line.
        line: usize,
        /// The value as written.
        text: String,
    },
}

impl LedgerProblem {
    /// The 1-based ledger line the problem is on.
    pub fn line(&self) -> usize {
        match self {
            Self::Heading { line, .. }
            | Self::UnknownKind { line, .. }
            | Self::BadTime { line, .. }
            | Self::DuplicateId { line, .. }
            | Self::MissingQuote { line, .. }
            | Self::CutByHeading { line, .. }
            | Self::BadItem { line, .. }
            | Self::UnknownKey { line, .. }
            | Self::DuplicateKey { line, .. }
            | Self::BadTarget { line, .. }
            | Self::BadParams { line, .. }
            | Self::BadStatus { line, .. }
            | Self::Swallowed { line, .. }
            | Self::Misshapen { line, .. }
            | Self::LoneCarriageReturn { line }
            | Self::ConflictMarker { line, .. }
            | Self::BadBy { line, .. } => *line,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_say_what_they_set_in_words() {
        let day = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let said = |p: Params| p.describe().unwrap_or_default();
        assert_eq!(
            said(Params::Reprioritize {
                priority: Priority::new(0).unwrap()
            }),
            "priority p/0"
        );
        assert_eq!(
            said(Params::Reestimate {
                estimate: "3d".parse().unwrap()
            }),
            "estimate 3d"
        );
        let due = day("2027-01-29");
        assert_eq!(
            said(Params::SetDeadline { due, hard: true }),
            "due 2027-01-29, hard"
        );
        assert_eq!(
            said(Params::SetDeadline { due, hard: false }),
            "due 2027-01-29"
        );
        assert_eq!(said(Params::Scope { included: false }), "out of scope");
        assert_eq!(said(Params::Scope { included: true }), "in scope");
        let from = day("2026-12-07");
        assert_eq!(
            said(Params::Capacity {
                from,
                to: Some(day("2027-01-08")),
                hours_per_week: 15.0
            }),
            "15 h/week from 2026-12-07 to 2027-01-08"
        );
        assert_eq!(
            said(Params::Capacity {
                from,
                to: None,
                hours_per_week: 17.5
            }),
            "17.5 h/week from 2026-12-07 on"
        );
        assert_eq!(Params::Note.describe(), None);
        let (kind, id) = Target::Milestone(2).parts();
        assert_eq!((kind, id.as_str()), ("milestone", "2"));
    }
}
