//! The `changes` view: every proposed and applied change to Gitea, and every directive in the ledger, as
//! the site's changes and directives pages show them.
//!
//! A pending op file is in one of three places: on the branch (merged, or additive ops pushed straight:
//! the next run applies it), or only in the checkout — a destructive op or a directive then waits for its
//! pull request from `commitea/ID`, an additive one for `commitea propose` to push it. An applied file says
//! when, through which pull request and who merged it, and what became of each op.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::apply::AppliedFile;
use crate::ledger::record::ConsequencePair;
use crate::ops::{OpFile, Source};

/// Every change and every directive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// Op files awaiting approval or the next run, in id order.
    pub pending: Vec<Change>,
    /// Op files the apply stage carried out, newest first.
    pub applied: Vec<Change>,
    /// Every directive in the ledger, newest first.
    pub directives: Vec<DirectiveItem>,
    /// The proposals awaiting approval in open pull requests (on their branches, which the site is not
    /// drawn from), when the run that drew it asked the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_pull_requests: Vec<crate::apply::propose::OpenProposal>,
    /// Whether the run that drew it asked the server for those pull requests (none open is then known,
    /// not merely unasked: offline, or the server did not answer).
    #[serde(default)]
    pub pulls_checked: bool,
    /// Op files under `ops/pending/` that do not read, left out whole until fixed or deleted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<Unreadable>,
}

/// An op file that does not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Unreadable {
    /// Its path in the state repo, `ops/pending/C-0009.yaml`.
    pub path: String,
    /// Why it does not read (the file, line and field, and what is wrong).
    pub reason: String,
}

/// Where a pending op file stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeState {
    /// On the branch: approved, the next run carries it out.
    OnBranch,
    /// Only in the checkout, destructive or a directive: waits for its pull request to be merged.
    AwaitingPullRequest,
    /// Only in the checkout, additive: `commitea propose` puts it on the branch.
    AwaitingPropose,
    /// Carried out by the apply stage.
    Applied,
}

impl ChangeState {
    /// The state in words.
    pub fn label(self) -> &'static str {
        match self {
            Self::OnBranch => "approved: applied at the next run",
            Self::AwaitingPullRequest => "needs a pull request: commitea propose opens it",
            Self::AwaitingPropose => "goes to the branch when proposed",
            Self::Applied => "applied",
        }
    }
}

/// One op file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// `C-0001` or `D-0009`.
    pub id: String,
    /// `apply_changes`, `directive` or `capture_work`.
    pub source: String,
    /// When it was written.
    pub created_at: String,
    /// Who asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Whether any op takes something away.
    pub destructive: bool,
    /// Where it stands.
    pub state: ChangeState,
    /// The state in words.
    pub state_label: String,
    /// The branch its pull request comes from (`commitea/ID`).
    pub branch: String,
    /// The pull request that approved it, once applied through one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<u64>,
    /// Who merged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_by: Option<String>,
    /// When it was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_at: Option<String>,
    /// The PM's words, for a directive's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// The ops in words, each with what became of it once applied.
    pub ops: Vec<OpLine>,
    /// The consequence in one line.
    pub summary: String,
    /// The consequence, subject by subject.
    pub consequence: Vec<ConsequencePair>,
}

/// One op in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpLine {
    /// What it does.
    pub what: String,
    /// Whether it takes something away.
    pub destructive: bool,
    /// `what` split around the issue it changes (`owner/repo#N`), so the page can link the key where it
    /// stands; none when the op changes no existing issue or names it by a bare number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<OpLink>,
    /// What became of it (`applied`, `already so`, `skipped: …`), once applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// An op's words around the issue key they name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpLink {
    /// The words before the key.
    pub lead: String,
    /// The issue, `owner/repo#N`.
    pub issue: String,
    /// The words after it.
    pub tail: String,
}

impl OpLink {
    /// `what` split at the first mention of the issue `op` changes, when it names it in full (as a
    /// checked op file does).
    fn of(what: &str, op: &crate::ops::Op) -> Option<Self> {
        let key = op.issue()?.resolve(&[]).ok()?.to_string();
        let at = what.find(&key)?;
        Some(Self {
            lead: what[..at].to_owned(),
            tail: what[at + key.len()..].to_owned(),
            issue: key,
        })
    }
}

/// One directive of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DirectiveItem {
    /// `D-0007`.
    pub id: String,
    /// The kind.
    pub kind: String,
    /// When it was given (day).
    pub at: String,
    /// Who gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The PM's words.
    pub quote: String,
    /// `issue`, `milestone` or `member`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kind: Option<String>,
    /// The issue key, milestone id or username.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The params as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
    /// What it sets, in words (`priority p/0`); none for a note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// `active`, `superseded` or `withdrawn`.
    pub status: String,
    /// Whether it is only in the checkout, not yet on the branch.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// Why the forecast leaves it out though it is active (its target is not on Gitea, an estimate off
    /// the ladder…): it changes nothing (the Directives page says it at length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

impl Changes {
    /// Marks the directives the forecast's replay left out, by their ledger line in `ledger` (the one
    /// replayed), with why (audit 175: listed as "active" with their effects, as if in force).
    pub fn mark_left_out(
        &mut self,
        ledger: Option<&str>,
        why: &std::collections::BTreeMap<usize, String>,
    ) {
        if why.is_empty() {
            return;
        }
        let parsed = crate::ledger::parse::parse(ledger.unwrap_or(""));
        for d in parsed.ledger.directives() {
            let Some(reason) = why.get(&d.line) else {
                continue;
            };
            let id = d.id.to_string();
            if let Some(item) = self.directives.iter_mut().find(|i| i.id == id) {
                item.left_out = Some(reason.clone());
            }
        }
    }
}

fn source(s: Source) -> &'static str {
    match s {
        Source::ApplyChanges => "apply_changes",
        Source::Directive => "directive",
        Source::CaptureWork => "capture_work",
    }
}

fn change(f: &OpFile, state: ChangeState) -> Change {
    Change {
        id: f.id.clone(),
        source: source(f.source).to_owned(),
        created_at: f.created_at.clone(),
        by: f.by.clone(),
        destructive: f.destructive,
        state,
        state_label: state.label().to_owned(),
        branch: format!("{}{}", crate::apply::propose::BRANCH_PREFIX, f.id),
        pull_request: None,
        merged_by: None,
        applied_at: None,
        quote: f.directive.as_ref().map(|d| d.quote.clone()),
        ops: f
            .ops
            .iter()
            .map(|o| OpLine {
                what: o.describe(),
                destructive: o.is_destructive(),
                link: OpLink::of(&o.describe(), o),
                result: None,
            })
            .collect(),
        summary: f.summary.clone(),
        consequence: f.consequence.clone(),
    }
}

/// The view: `pending` op files with whether each is on the branch, `applied` files, and the ledger's
/// text on the branch and in the checkout (a directive only in the checkout is pending).
pub fn changes(
    pending: &[(OpFile, bool)],
    applied: &[AppliedFile],
    branch_ledger: Option<&str>,
    checkout_ledger: Option<&str>,
    zone: &crate::config::Zone,
) -> Changes {
    let pending = pending
        .iter()
        .map(|(f, on_branch)| {
            let state = if *on_branch {
                ChangeState::OnBranch
            } else if f.destructive || f.source == Source::Directive {
                ChangeState::AwaitingPullRequest
            } else {
                ChangeState::AwaitingPropose
            };
            change(f, state)
        })
        .collect();
    let mut applied: Vec<Change> = applied
        .iter()
        .map(|a| {
            let mut c = change(&a.proposal, ChangeState::Applied);
            c.pull_request = a.applied.pull_request;
            c.merged_by.clone_from(&a.applied.merged_by);
            c.applied_at = Some(a.applied.at.clone());
            for (line, outcome) in c.ops.iter_mut().zip(&a.applied.results) {
                line.result = Some(crate::apply::outcome_text(outcome));
            }
            if let Some(label) = crate::apply::shortfall(&a.applied.results) {
                c.state_label = label.to_owned();
            }
            c
        })
        .collect();
    applied.sort_by(|a, b| b.applied_at.cmp(&a.applied_at).then(b.id.cmp(&a.id)));

    let on_branch = crate::ledger::parse::parse(branch_ledger.unwrap_or(""));
    let known: std::collections::HashSet<String> = on_branch
        .ledger
        .directives()
        .map(|d| d.id.to_string())
        .collect();
    let all = crate::ledger::parse::parse(checkout_ledger.or(branch_ledger).unwrap_or(""));
    let mut directives: Vec<DirectiveItem> = all
        .ledger
        .directives()
        .map(|d| {
            let (target_kind, target) = d.target.as_ref().map(|t| t.parts()).unzip();
            DirectiveItem {
                id: d.id.to_string(),
                kind: d.kind.to_string(),
                at: zone.date_of(d.at).to_string(),
                by: d.by.clone(),
                quote: d.quote.clone(),
                target_kind: target_kind.map(str::to_owned),
                target,
                params: d.params.to_inline_json(),
                effect: d.params.describe(),
                rationale: d.rationale.clone(),
                status: d.status.to_string(),
                pending: branch_ledger.is_some() && !known.contains(&d.id.to_string()),
                left_out: None,
            }
        })
        .collect();
    directives.sort_by(|a, b| b.at.cmp(&a.at).then(b.id.cmp(&a.id)));
    Changes {
        pending,
        applied,
        directives,
        open_pull_requests: Vec::new(),
        pulls_checked: false,
        unreadable: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::IssueRef;
    use crate::ops::Op;

    #[test]
    fn an_op_is_split_around_the_issue_key_it_names_in_full() {
        let op = Op::SetEstimate {
            issue: IssueRef::Key("acme/api#64".into()),
            estimate: "est/2d".into(),
        };
        let what = op.describe();
        let link = OpLink::of(&what, &op).expect("a key in full is linked");
        assert_eq!(link.issue, "acme/api#64");
        assert_eq!(format!("{}{}{}", link.lead, link.issue, link.tail), what);
        // A bare number names no repository: nothing to link.
        let bare = Op::SetEstimate {
            issue: IssueRef::Number(64),
            estimate: "est/2d".into(),
        };
        assert!(OpLink::of(&bare.describe(), &bare).is_none());
    }
}
