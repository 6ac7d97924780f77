//! The bundled demo's project-management history: directives in the ledger, an applied history of op files
//! and two op files still pending, so that `commitea demo` opens on populated pages.
//!
//! Everything is picked from the generated snapshot by rule (key order, lifecycle facts), never by hard-coded
//! issue numbers, so the same state always gives the same files. The applied files describe changes that
//! the snapshot already shows (the priority and estimate an issue has now, a dependency it has now), so the
//! history agrees with the data; their consequences were not computed and say so. The pending changes
//! carry none here: `commitea demo` files them through `apply_changes`, which computes it.

use std::path::Path;

use chrono::{DateTime, Duration, Utc};

use super::DemoState;
use crate::apply::{AppliedFile, ApplyRecord, Outcome};
use crate::domain::{EventKind, Issue, IssueKey, IssueRef, TimelineEvent};
use crate::ops::{DirectiveRecord, Op, OpFile, Source};

/// What a consequence-less demo op file says instead of a computed consequence.
const NO_CONSEQUENCE: &str = "Part of the demo's made-up history: its consequence was not computed (a change filed through apply_changes carries one)";

/// Adds the ledger's directives, `ops/applied/` and `ops/pending/` to a generated demo state.
pub fn populate(state: &mut DemoState) {
    let now = state.snapshot.meta.synced_at;
    let open: Vec<(&IssueKey, &Issue)> = state
        .snapshot
        .issues
        .iter()
        .filter(|(_, i)| !i.is_closed())
        .collect();
    let in_milestone = |m: u64| open.iter().filter(move |(_, i)| i.milestone == Some(m));
    let has = |i: &Issue, prefix: &str| i.labels.iter().find(|l| l.starts_with(prefix)).cloned();
    // Open milestones by due date: (id, title, hard).
    let mut milestones: Vec<(Option<DateTime<Utc>>, u64, String, bool)> = state
        .snapshot
        .milestones
        .values()
        .flatten()
        .filter(|m| m.state == crate::domain::OpenState::Open)
        .map(|m| {
            (
                m.due_on,
                m.id,
                m.title.clone(),
                m.description.contains("deadline/hard"),
            )
        })
        .collect();
    milestones.sort();
    let hard = milestones.iter().find(|m| m.3);
    let soft: Vec<_> = milestones.iter().filter(|m| !m.3).collect();

    let mut ledger = state.ledger.replace("No directives yet.\n", "");
    let mut n = 0;
    // The directives whose change Gitea holds, to carry out as an approved pull request would.
    // Each directive carried out on Gitea: its id, when, the op, its record and who gave it.
    let mut carried: Vec<(String, DateTime<Utc>, Op, DirectiveRecord, &str)> = Vec::new();
    let mut entry =
        |kind: &str, days_ago: i64, quote: &str, lines: &[(&str, String)], ledger: &mut String| {
            n += 1;
            let at = (now - Duration::days(days_ago))
                .format("%Y-%m-%dT10:00:00Z")
                .to_string();
            let id = format!("D-{n:04}");
            let record = DirectiveRecord {
                kind: kind.to_owned(),
                quote: quote.to_owned(),
                target: field(lines, "target"),
                params: field(lines, "params"),
                rationale: field(lines, "rationale"),
            };
            let at_time = DateTime::parse_from_rfc3339(&at).map_or(now, |t| t.with_timezone(&Utc));
            ledger.push_str(&format!("\n## {id} · {kind} · {at}\n\n"));
            for l in quote.lines() {
                ledger.push_str(format!("> {l}").trim_end());
                ledger.push('\n');
            }
            ledger.push('\n');
            for (k, v) in lines {
                ledger.push_str(&format!("- {k}: {v}\n"));
            }
            (id, at_time, record)
        };
    if let Some((Some(due), id, title, _)) = hard {
        let due = due.date_naive().to_string();
        {
            entry(
                "set-deadline",
                60,
                &format!(
                    "The audit for {title} is booked with the external auditor.\nThat date does not move, whatever else does."
                ),
                &[
                    ("target", format!("milestone {id}")),
                    ("params", format!("{{\"due\": \"{due}\", \"hard\": true}}")),
                    (
                        "rationale",
                        "the audit date is in the customer contract".to_owned(),
                    ),
                    ("status", "active".to_owned()),
                    ("by", "amara".to_owned()),
                ],
                &mut ledger,
            );
        }
    }
    // A reprioritisation said twice: the first superseded by the second.
    // The latest milestone gets a reprioritisation, the earliest (soonest due) a re-estimate and a cut.
    let api = soft.last().map(|m| m.1);
    let bump = api
        .and_then(|m| in_milestone(m).find(|(_, i)| i.assignees.is_empty()))
        .map(|(k, _)| (*k).clone());
    if let Some(k) = &bump {
        entry(
            "reprioritize",
            40,
            "Let's do this one soon, partners keep asking.",
            &[
                ("target", format!("issue {k}")),
                ("params", "{\"priority\": 1}".to_owned()),
                (
                    "rationale",
                    "two partners asked in the same week".to_owned(),
                ),
                ("status", "superseded".to_owned()),
                ("by", "amara".to_owned()),
            ],
            &mut ledger,
        );
        let (id, at, record) = entry(
            "reprioritize",
            12,
            "Make it the first thing we pick up for the API.\nThe partner launch depends on it.",
            &[
                ("target", format!("issue {k}")),
                ("params", "{\"priority\": 0}".to_owned()),
                (
                    "rationale",
                    "the partner launch is blocked on it, see https://gitea.example.com/acme/api/issues"
                        .to_owned(),
                ),
                ("status", "active".to_owned()),
                ("by", "amara".to_owned()),
            ],
            &mut ledger,
        );
        let op = Op::SetPriority {
            issue: IssueRef::Key(k.to_string()),
            priority: "p/0".to_owned(),
        };
        carried.push((id, at, op, record, "amara"));
    }
    let late = soft.first().map(|m| m.1);
    let bigger = late.and_then(|m| {
        in_milestone(m).find(|(_, i)| {
            matches!(has(i, "est/").as_deref(), Some("est/1d" | "est/2d"))
                && !i.assignees.is_empty()
        })
    });
    if let Some((k, _)) = bigger {
        let (id, at, record) = entry(
            "reestimate",
            9,
            "After the spike this is more like three days.",
            &[
                ("target", format!("issue {k}")),
                ("params", "{\"estimate\": \"3d\"}".to_owned()),
                (
                    "rationale",
                    "the spike found two more screens to port".to_owned(),
                ),
                ("status", "active".to_owned()),
                ("by", "farah".to_owned()),
            ],
            &mut ledger,
        );
        let op = Op::SetEstimate {
            issue: IssueRef::Key(k.to_string()),
            estimate: "est/3d".to_owned(),
        };
        carried.push((id, at, op, record, "farah"));
    }
    let dropped = late.and_then(|m| {
        in_milestone(m).rfind(|(_, i)| i.assignees.is_empty() && i.depends_on.is_empty())
    });
    if let Some((k, _)) = dropped {
        let (id, at, record) = entry(
            "scope",
            6,
            "Drop this from the holiday release.\n\nWe can ship it in January, nobody is waiting for it.",
            &[
                ("target", format!("issue {k}")),
                ("params", "{\"in\": false}".to_owned()),
                (
                    "rationale",
                    "the release is late and this is a nice-to-have".to_owned(),
                ),
                ("status", "active".to_owned()),
                ("by", "amara".to_owned()),
            ],
            &mut ledger,
        );
        let op = Op::SetMilestone {
            issue: IssueRef::Key(k.to_string()),
            milestone: None,
        };
        carried.push((id, at, op, record, "amara"));
    }
    if let Some(m) = state.config.team.iter().find(|m| m.starts.is_some()) {
        let from = m.starts.map(|d| d.to_string()).unwrap_or_default();
        entry(
            "capacity",
            5,
            &format!(
                "{} starts half-time for the first month, onboarding takes the rest.",
                capitalised(&m.name)
            ),
            &[
                ("target", format!("member {}", m.name)),
                (
                    "params",
                    format!(
                        "{{\"from\": \"{from}\", \"to\": \"2027-01-08\", \"hours_per_week\": 15}}"
                    ),
                ),
                (
                    "rationale",
                    "onboarding plan agreed with the team".to_owned(),
                ),
                ("status", "active".to_owned()),
                ("by", "amara".to_owned()),
            ],
            &mut ledger,
        );
    }
    entry(
        "note",
        2,
        "Let's look at the roadmap again after the holiday release.",
        &[("status", "active".to_owned()), ("by", "amara".to_owned())],
        &mut ledger,
    );
    state.ledger = ledger;

    // The applied history: changes the snapshot shows today.
    let mut applied = Vec::new();
    let labelled: Vec<&(&IssueKey, &Issue)> = open
        .iter()
        .filter(|(_, i)| has(i, "p/").is_some() && has(i, "est/").is_some())
        .take(2)
        .collect();
    if let [a, b] = labelled.as_slice() {
        let ops = vec![
            Op::SetPriority {
                issue: IssueRef::Key(a.0.to_string()),
                priority: has(a.1, "p/").unwrap_or_default(),
            },
            Op::SetEstimate {
                issue: IssueRef::Key(b.0.to_string()),
                estimate: has(b.1, "est/").unwrap_or_default(),
            },
        ];
        applied.push(applied_file(
            "C-0001",
            now - Duration::days(30),
            "chen",
            ops,
            Some((4, "amara")),
            vec![
                Outcome::Applied { over: None },
                Outcome::Applied { over: None },
            ],
        ));
    }
    let dep = open.iter().find(|(_, i)| !i.depends_on.is_empty());
    if let Some((k, i)) = dep {
        let ops = vec![Op::AddDep {
            issue: IssueRef::Key(k.to_string()),
            depends_on: IssueRef::Key(i.depends_on[0].to_string()),
        }];
        applied.push(applied_file(
            "C-0002",
            now - Duration::days(16),
            "bjorn",
            ops,
            None,
            vec![Outcome::Applied { over: None }],
        ));
    }
    if let Some((k, i)) = open.iter().rev().find(|(_, i)| has(i, "p/").is_some()) {
        let ops = vec![
            Op::SetPriority {
                issue: IssueRef::Key(k.to_string()),
                priority: has(i, "p/").unwrap_or_default(),
            },
            Op::RemoveLabel {
                issue: IssueRef::Key(k.to_string()),
                label: "deadline/hard".to_owned(),
            },
        ];
        applied.push(applied_file(
            "C-0003",
            now - Duration::days(8),
            "amara",
            ops,
            Some((7, "amara")),
            vec![
                Outcome::AlreadySo,
                Outcome::Skipped {
                    reason: "the issue has no label deadline/hard".to_owned(),
                },
            ],
        ));
    }
    state.applied = applied
        .iter()
        .filter_map(|a| {
            let rel = format!("{}/{}.yaml", crate::ops::APPLIED_PATH, a.proposal.id);
            crate::yamlfile::to_string(a, Path::new(&rel))
                .ok()
                .map(|t| (rel, t))
        })
        .collect();

    // Pending: one additive file awaiting `commitea propose`, one destructive that needs its pull request.
    let mut pending = Vec::new();
    if let Some((k, _)) = open.iter().find(|(_, i)| has(i, "est/").is_none()) {
        pending.push(op_file(
            "C-0004",
            now - Duration::days(1),
            "dana",
            vec![Op::SetEstimate {
                issue: IssueRef::Key(k.to_string()),
                estimate: "est/2d".to_owned(),
            }],
        ));
    }
    let stale = open
        .iter()
        .filter(|(_, i)| i.assignees.is_empty() && i.milestone.is_none())
        .min_by_key(|(_, i)| i.updated_at);
    if let Some((k, _)) = stale {
        pending.push(op_file(
            "C-0005",
            now - Duration::hours(3),
            "amara",
            vec![Op::CloseIssue {
                issue: IssueRef::Key(k.to_string()),
            }],
        ));
    }
    state.pending = pending;
    carry_out(state, carried);
}

/// Directives recorded fewer days ago than this are the demo's last week: `commitea demo` commits them
/// after a first forecast (from `D-0004` on, the id `commitea demo` splits the ledger at), on the snapshot
/// as Gitea was before they were carried out.
const LAST_WEEK_DAYS: i64 = 10;

/// Carries out the directives that change Gitea as `commitea run` does once their pull request is merged:
/// the label or milestone changes on Gitea (with its timeline event, by the bot, two hours after the
/// directive), and `ops/applied/` records it. Done last, so that the picks above see the snapshot as it
/// was generated. The snapshot before the last week's directives were carried out is kept in
/// [`DemoState::before_last_week`].
fn carry_out(
    state: &mut DemoState,
    carried: Vec<(String, DateTime<Utc>, Op, DirectiveRecord, &str)>,
) {
    let now = state.snapshot.meta.synced_at;
    let mut next_event = state
        .snapshot
        .issues
        .values()
        // Gitea's comments and timeline events share one id space.
        .flat_map(|i| {
            i.timeline
                .iter()
                .map(|e| e.id)
                .chain(i.comments.iter().map(|c| c.id))
        })
        .max()
        .unwrap_or(0);
    let mut before_last_week = None;
    let mut week_files = Vec::new();
    for (pull, (id, at, op, record, by)) in (8u64..).zip(carried) {
        let week = now - at < Duration::days(LAST_WEEK_DAYS);
        if week && before_last_week.is_none() {
            before_last_week = Some(state.snapshot.clone());
        }
        let when = at + Duration::hours(2);
        let key = op.issue().and_then(IssueRef::key);
        let Some(issue) = key.and_then(|k| state.snapshot.issues.get_mut(&k)) else {
            continue;
        };
        let mut event = |kind: EventKind| {
            next_event += 1;
            TimelineEvent::new(next_event, kind, when, BOT)
        };
        let mut relabel = |prefix: &str, new: &str, issue: &mut Issue| {
            for old in issue.labels.iter().filter(|l| l.starts_with(prefix)) {
                let mut e = event(EventKind::Label);
                e.label = Some(old.clone());
                e.removed = true;
                issue.timeline.push(e);
            }
            let mut e = event(EventKind::Label);
            e.label = Some(new.to_owned());
            issue.timeline.push(e);
            issue.labels.retain(|l| !l.starts_with(prefix));
            issue.labels.push(new.to_owned());
            issue.labels.sort();
        };
        match &op {
            Op::SetPriority { priority, .. } => relabel("p/", priority, issue),
            Op::SetEstimate { estimate, .. } => relabel("est/", estimate, issue),
            Op::SetMilestone { milestone, .. } => {
                let mut e = event(EventKind::Milestone);
                e.milestone = *milestone;
                e.old_milestone = issue.milestone;
                issue.timeline.push(e);
                issue.milestone = *milestone;
            }
            _ => continue,
        }
        issue.updated_at = issue.updated_at.max(when);
        let mut file = applied_file(
            &id,
            at,
            by,
            vec![op],
            Some((pull, "amara")),
            vec![Outcome::Applied { over: None }],
        );
        file.proposal.source = Source::Directive;
        file.proposal.directive = Some(record);
        let rel = format!("{}/{id}.yaml", crate::ops::APPLIED_PATH);
        if let Ok(text) = crate::yamlfile::to_string(&file, Path::new(&rel)) {
            if week {
                week_files.push(rel.clone());
            }
            state.applied.insert(rel, text);
        }
    }
    let ids = event_order(&state.snapshot);
    renumber_events(&mut state.snapshot, &ids);
    state.before_last_week = before_last_week.map(|mut s| {
        renumber_events(&mut s, &ids);
        (s, week_files)
    });
}

/// Ids for the snapshot's comments and timeline events in the order they happened, as Gitea's shared
/// comment table gives them (the events [`carry_out`] adds came after the generated history was
/// numbered): old id → new id.
fn event_order(snapshot: &crate::state::Snapshot) -> std::collections::HashMap<u64, u64> {
    let mut order: Vec<(DateTime<Utc>, u64)> = snapshot
        .issues
        .values()
        .flat_map(|i| {
            i.timeline
                .iter()
                .map(|e| (e.created_at, e.id))
                .chain(i.comments.iter().map(|c| (c.created_at, c.id)))
        })
        .collect();
    order.sort_unstable();
    order
        .iter()
        .zip(1u64..)
        .map(|(&(_, old), n)| (old, n))
        .collect()
}

fn renumber_events(
    snapshot: &mut crate::state::Snapshot,
    ids: &std::collections::HashMap<u64, u64>,
) {
    for i in snapshot.issues.values_mut() {
        for e in &mut i.timeline {
            e.id = ids.get(&e.id).copied().unwrap_or(e.id);
        }
        for c in &mut i.comments {
            c.id = ids.get(&c.id).copied().unwrap_or(c.id);
        }
    }
}

/// Who carries out approved changes on the demo's Gitea.
const BOT: &str = "commitea-bot";

/// The value of `- key: value` among a ledger entry's lines.
fn field(lines: &[(&str, String)], key: &str) -> Option<String> {
    lines
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.clone())
}

fn op_file(id: &str, at: DateTime<Utc>, by: &str, ops: Vec<Op>) -> OpFile {
    let destructive = ops.iter().any(Op::is_destructive);
    OpFile {
        id: id.to_owned(),
        source: Source::ApplyChanges,
        created_at: at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        by: Some(by.to_owned()),
        model: false,
        approved: destructive,
        destructive,
        directive: None,
        seen: Default::default(),
        ops,
        summary: NO_CONSEQUENCE.to_owned(),
        consequence: Vec::new(),
    }
}

fn applied_file(
    id: &str,
    at: DateTime<Utc>,
    by: &str,
    ops: Vec<Op>,
    pull: Option<(u64, &str)>,
    results: Vec<Outcome>,
) -> AppliedFile {
    let when = at + Duration::hours(2);
    AppliedFile {
        proposal: op_file(id, at, by, ops),
        applied: ApplyRecord {
            at: when.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            // A made-up commit id: the demo's history is one import commit.
            commit: format!(
                "{:040x}",
                u128::from(id.bytes().map(u32::from).sum::<u32>())
            ),
            pull_request: pull.map(|p| p.0),
            merged_by: pull.map(|p| p.1.to_owned()),
            results,
        },
    }
}

/// `gus` → `Gus`: a name at the start of a sentence.
fn capitalised(name: &str) -> String {
    let mut c = name.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
