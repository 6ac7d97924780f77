//! Parser properties shared by the integration tests (a modest number of cases) and `benches/props.rs`
//! (100,000 per parser): every parser of outside input gives a value or an error, never a panic, and what
//! CommiTea writes reads back as written.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use commitea::domain::{Estimate, IssueKey, Priority, RepoName};
use commitea::ledger::format::{DirectiveId, NewDirective, Params, Target};
use proptest::prelude::*;
use serde_json::Value;

/// Text a person might type, with the awkward parts: other scripts, markup, blank lines, CRs, and the
/// ledger's own syntax.
pub fn prose() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ,.!?'\"-]{1,60}",
        "[ -~]{1,40}",
        "\\PC{1,30}",
        Just("> quoted\n## D-0001 · note · 2026-01-01T00:00:00Z".to_owned()),
        Just("- status: withdrawn\n- params: {\"x\": 1}".to_owned()),
        Just("line one\r\n\r\nline three".to_owned()),
        Just("héllo — 日本語 ✓ <b>&amp;</b> `code`".to_owned()),
    ]
    .prop_filter("not blank", |s| !s.trim().is_empty())
}

fn date() -> impl Strategy<Value = NaiveDate> {
    (2020i32..2032, 1u32..13, 1u32..29)
        .prop_map(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d).expect("a valid date"))
}

fn time() -> impl Strategy<Value = DateTime<Utc>> {
    (1_577_836_800i64..1_956_528_000).prop_map(|s| Utc.timestamp_opt(s, 0).single().unwrap())
}

fn username() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9._-]{0,12}"
}

fn params() -> impl Strategy<Value = Params> {
    prop_oneof![
        (0u8..4).prop_map(|p| Params::Reprioritize {
            priority: Priority::new(p).unwrap()
        }),
        prop_oneof![Just("1h"), Just("4h"), Just("2d"), Just("1w"), Just("2w")].prop_map(|e| {
            Params::Reestimate {
                estimate: e.parse::<Estimate>().unwrap(),
            }
        }),
        (date(), any::<bool>()).prop_map(|(due, hard)| Params::SetDeadline { due, hard }),
        any::<bool>().prop_map(|included| Params::Scope { included }),
        (date(), proptest::option::of(date()), 0u32..60).prop_map(|(from, to, h)| {
            let to = to.filter(|t| *t >= from);
            Params::Capacity {
                from,
                to,
                hours_per_week: f64::from(h),
            }
        }),
        Just(Params::Note),
    ]
}

fn target(params: &Params) -> BoxedStrategy<Option<Target>> {
    use commitea::ledger::format::DirectiveKind as K;
    match params.kind() {
        K::Reprioritize | K::Reestimate => (1u64..500)
            .prop_map(|n| Some(Target::Issue(RepoName::new("acme", "api").issue(n))))
            .boxed(),
        K::SetDeadline => (1u64..20).prop_map(|m| Some(Target::Milestone(m))).boxed(),
        K::Scope => prop_oneof![
            (1u64..500).prop_map(|n| Some(Target::Issue(IssueKey {
                repo: RepoName::new("acme", "web"),
                number: n
            }))),
            (1u64..20).prop_map(|m| Some(Target::Milestone(m))),
        ]
        .boxed(),
        K::Capacity => username().prop_map(|u| Some(Target::Member(u))).boxed(),
        K::Note => proptest::option::of(username().prop_map(Target::Member)).boxed(),
    }
}

/// A directive as `record_directive` would append it.
pub fn directive() -> impl Strategy<Value = NewDirective> {
    params().prop_flat_map(|p| {
        (
            Just(p.clone()),
            target(&p),
            time(),
            prose(),
            proptest::option::of("[a-zA-Z0-9,.'-][a-zA-Z0-9 ,.'-]{0,38}[a-zA-Z0-9,.'-]"),
            proptest::option::of(username()),
        )
            .prop_map(|(params, target, at, quote, rationale, by)| NewDirective {
                at,
                quote,
                target,
                params,
                rationale,
                by,
            })
    })
}

/// A ledger built by appending `directives` to `preamble`, as CommiTea writes it; then it must read back
/// byte for byte and directive by directive.
pub fn ledger_round_trips(preamble: &str, directives: &[NewDirective]) -> Result<(), String> {
    use commitea::ledger::parse::{append, parse, render};
    let mut text = preamble.to_owned();
    let mut ids = Vec::new();
    for d in directives {
        let a = append(&text, d, DirectiveId(1)).map_err(|e| format!("append: {e}"))?;
        text = a.text;
        ids.push(a.id);
    }
    let parsed = parse(&text);
    if render(&parsed.ledger) != text {
        return Err(format!("render(parse(text)) != text for {text:?}"));
    }
    for (d, id) in directives.iter().zip(&ids) {
        let back = parsed
            .ledger
            .directives()
            .find(|e| e.id == *id)
            .ok_or_else(|| format!("{id} not read back from {text:?}"))?;
        let quote = commitea::ledger::format::normalise_quote(&d.quote);
        if back.quote != quote || back.params != d.params || back.target != d.target {
            return Err(format!("{id} read back as {back:?}, not {d:?}"));
        }
    }
    Ok(())
}

/// Any text as a ledger: problems, never a panic; and the text always renders back as it was.
pub fn ledger_takes_anything(text: &str) -> Result<(), String> {
    let parsed = commitea::ledger::parse::parse(text);
    if commitea::ledger::parse::render(&parsed.ledger) != text {
        return Err(format!("the ledger did not keep every byte of {text:?}"));
    }
    for p in &parsed.problems {
        let _ = p.to_string();
    }
    Ok(())
}

/// YAML-ish text: mappings, lists, scalars, the state repo's own keys, and garbage.
pub fn yamlish() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("number"),
        Just("title"),
        Just("state"),
        Just("labels"),
        Just("timeline"),
        Just("forecast"),
        Just("trials"),
        Just("team"),
        Just("site"),
        Just("output"),
        Just("ops"),
        Just("op"),
        Just("id"),
        Just("x"),
    ];
    let scalar = prop_oneof![
        Just("1".to_owned()),
        Just("-3".to_owned()),
        Just("open".to_owned()),
        Just("~".to_owned()),
        Just("2026-11-30T09:00:00Z".to_owned()),
        Just("[1, 2]".to_owned()),
        Just("{a: b}".to_owned()),
        Just("&anchor x".to_owned()),
        Just("*anchor".to_owned()),
        Just("!!binary aGk=".to_owned()),
        "[ -~]{0,12}",
    ];
    proptest::collection::vec((key, 0usize..3, any::<bool>(), scalar), 0..12).prop_map(|lines| {
        lines
            .into_iter()
            .map(|(k, indent, list, v)| {
                format!(
                    "{}{}{k}: {v}\n",
                    "  ".repeat(indent),
                    if list { "- " } else { "" }
                )
            })
            .collect()
    })
}

/// Any text as each YAML file CommiTea reads: a value or an error naming the file, never a panic.
pub fn yaml_files_take_anything(text: &str) -> Result<(), String> {
    let rel = Path::new("snapshot/issues/acme/api/1.yaml");
    let _ =
        commitea::yamlfile::parse::<commitea::domain::Issue>(text, rel).map_err(|e| e.to_string());
    let _ = commitea::config::Config::parse(text, Path::new("commitea.yaml"))
        .map_err(|e| e.to_string());
    let _ = commitea::ops::OpFile::parse(text, Path::new("ops/pending/C-0001.yaml"))
        .map_err(|e| e.to_string());
    let _ =
        commitea::yamlfile::parse::<commitea::state::Meta>(text, Path::new("snapshot/meta.yaml"))
            .map_err(|e| e.to_string());
    Ok(())
}

/// An op as `apply_changes` accepts it.
pub fn op() -> impl Strategy<Value = commitea::ops::Op> {
    use commitea::domain::IssueRef;
    use commitea::ops::Op;
    let issue = (1u64..500).prop_map(|n| IssueRef::Key(format!("acme/api#{n}")));
    prop_oneof![
        (prose(), prose(), proptest::option::of(1u64..9)).prop_map(|(title, body, milestone)| {
            Op::CreateIssue {
                title: title.replace(['\n', '\r'], " "),
                body,
                labels: vec!["est/2d".into(), "p/1".into()],
                milestone,
                deps: vec![IssueRef::Key("acme/api#1".into())],
                repo: Some("acme/api".into()),
                depends_on_new: Vec::new(),
            }
        }),
        issue.clone().prop_map(|issue| Op::SetEstimate {
            issue,
            estimate: "est/1d".into()
        }),
        (issue.clone(), 0u8..4).prop_map(|(issue, p)| Op::SetPriority {
            issue,
            priority: format!("p/{p}")
        }),
        (issue.clone(), proptest::option::of(1u64..9))
            .prop_map(|(issue, milestone)| Op::SetMilestone { issue, milestone }),
        (1u64..9, any::<bool>())
            .prop_map(|(milestone, hard)| Op::SetDeadlineHard { milestone, hard }),
        (issue.clone(), issue.clone())
            .prop_map(|(issue, depends_on)| Op::AddDep { issue, depends_on }),
        issue.clone().prop_map(|issue| Op::CloseIssue { issue }),
        issue.prop_map(|issue| Op::RemoveLabel {
            issue,
            label: "p/3".into()
        }),
    ]
}

/// An op file of `ops`, rendered and read back: the same file, byte for byte.
pub fn op_file_round_trips(ops: Vec<commitea::ops::Op>, by: Option<String>) -> Result<(), String> {
    let file = commitea::ops::OpFile {
        id: "C-0007".into(),
        source: commitea::ops::Source::ApplyChanges,
        created_at: "2026-11-30T09:00:00Z".into(),
        by,
        model: false,
        approved: true,
        destructive: ops.iter().any(commitea::ops::Op::is_destructive),
        directive: None,
        seen: [("acme/api#3".to_owned(), 12)].into_iter().collect(),
        ops,
        summary: "a summary".into(),
        consequence: Vec::new(),
    };
    let rel = Path::new("ops/pending/C-0007.yaml");
    let text = file.render(rel).map_err(|e| e.to_string())?;
    let back = commitea::ops::OpFile::parse(&text, rel).map_err(|e| format!("{e}\n{text}"))?;
    if back != file {
        return Err(format!("read back differently:\n{text}"));
    }
    if back.render(rel).map_err(|e| e.to_string())? != text {
        return Err("rendered differently the second time".into());
    }
    Ok(())
}

/// Any JSON value.
pub fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "\\PC{0,10}".prop_map(Value::String),
        Just(Value::String("2026-11-30T09:00:00+02:00".into())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The fields the sync reads, at every level it reads them.
pub const GITEA_FIELDS: &[&str] = &[
    "number",
    "title",
    "body",
    "state",
    "user",
    "created_at",
    "updated_at",
    "closed_at",
    "assignees",
    "labels",
    "milestone",
    "time_estimate",
    "comments",
    "pull_request",
    "repository",
    "id",
    "type",
    "ref_issue",
    "label",
    "assignee",
    "dependent_issue",
    "old_milestone",
    "tracked_time",
    "login",
    "name",
    "color",
    "due_on",
    "full_name",
    "merged",
    "user_name",
    "created",
    "time",
    "issue_url",
];

/// A valid Gitea issue and timeline page with `value` put in `field` (at the top and nested): the decoder
/// gives a value or an error that names where, never a panic.
pub fn gitea_json_takes_anything(field: &str, value: &Value) -> Result<(), String> {
    use commitea::gitea::wire::{GIssue, GTimeline, List, decode};
    let mut issue = serde_json::json!({
        "number": 3, "title": "t", "body": "b", "state": "open", "user": {"login": "ann"},
        "created_at": "2026-11-01T09:00:00Z", "updated_at": "2026-11-02T09:00:00Z",
        "closed_at": null, "assignees": null, "labels": [{"id": 1, "name": "p/1", "color": "ee0701"}],
        "milestone": {"id": 1, "title": "v1", "state": "open", "due_on": null},
        "pull_request": null, "repository": {"full_name": "acme/api"},
    });
    issue[field] = value.clone();
    let mut event = serde_json::json!({
        "id": 7, "type": "label", "user": {"login": "ann"}, "body": "1",
        "created_at": "2026-11-01T09:00:00Z", "label": {"id": 1, "name": "p/1"},
        "ref_issue": issue.clone(), "tracked_time": {"id": 1, "user_name": "ann", "time": 60},
    });
    event[field] = value.clone();
    if event["label"].is_object() {
        event["label"][field] = value.clone();
    }
    let page = Value::Array(vec![event, Value::Null]);
    for (what, bytes) in [
        ("issue", serde_json::to_vec(&issue).unwrap()),
        ("timeline", serde_json::to_vec(&page).unwrap()),
    ] {
        let result = if what == "issue" {
            decode::<GIssue>(&bytes).map(|_| ())
        } else {
            decode::<List<GTimeline>>(&bytes).map(|_| ())
        };
        if let Err(e) = result
            && e.path.is_empty()
        {
            return Err(format!("{what}: an error that names no field: {e}"));
        }
    }
    Ok(())
}

/// CSV-ish text for the Jira importer: quoted fields, embedded commas, newlines and quotes.
pub fn csvish() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        "[a-zA-Z0-9 ._:-]{0,12}",
        Just("\"a, b\"".to_owned()),
        Just("\"line\nbreak\"".to_owned()),
        Just("\"say \"\"hi\"\"\"".to_owned()),
        Just("\"open".to_owned()),
        Just("x\"y".to_owned()),
        Just("2026-11-30 09:00:00".to_owned()),
        Just("open".to_owned()),
        Just("closed".to_owned()),
        Just("3.5".to_owned()),
    ];
    proptest::collection::vec(proptest::collection::vec(field, 0..8), 0..6).prop_map(|rows| {
        rows.into_iter()
            .map(|r| r.join(","))
            .collect::<Vec<_>>()
            .join("\r\n")
    })
}

/// Rows of a Jira issues file: mostly plausible, sometimes not, so the import goes deep before it fails.
pub fn jira_rows() -> impl Strategy<Value = String> {
    let time = prop_oneof![
        Just("2026-01-05T09:00:00Z".to_owned()),
        Just("2026-03-01T10:30:00Z".to_owned()),
        Just("".to_owned()),
        Just("yesterday".to_owned()),
    ];
    let row = (
        1u64..30,
        prop_oneof![Just("open"), Just("closed"), Just("??")],
        (time.clone(), time.clone(), time.clone()),
        prop_oneof![Just(""), Just("ann"), Just("bo")],
        prop_oneof![Just(""), Just("a;b"), Just("bug")],
        prop_oneof![Just(""), Just("v1"), Just("v2;v1")],
        prop_oneof![Just(""), Just("2"), Just("-1"), Just("x")],
        prop_oneof![Just(""), Just("P-1"), Just("P-2;Q-9"), Just("P-99")],
        "[a-z ]{0,10}",
    );
    proptest::collection::vec(row, 0..12).prop_map(|rows| {
        rows.into_iter()
            .map(|(n, state, (created, updated, resolved), who, labels, ms, sp, deps, title)| {
                format!(
                    "P-{n},P,{n},Bug,Major,Done,{state},Fixed,{created},{updated},{resolved},,{who},{who},\
                     {labels},{ms},{ms},{sp},{sp},{sp},{deps},{title}"
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// Any CSV text, alone and as the rows of a dataset's three files: records or an error, never a panic.
pub fn jira_takes_anything(dir: &Path, rows: &str) -> Result<(), String> {
    let _ = commitea::import::parse_csv(rows);
    let issues = "key,project,number,type,priority,status,state,resolution,created,updated,resolved,\
                  first_in_progress,assignee,reporter,labels,milestone,milestones,story_points,\
                  original_estimate_h,time_spent_h,depends_on,title";
    let history = "key,at,author,field,from,to";
    let milestones = "project,milestone_id,name,released,archived,release_date";
    for (name, header) in [
        ("p_issues.csv", issues),
        ("p_history.csv", history),
        ("p_milestones.csv", milestones),
    ] {
        std::fs::write(dir.join(name), format!("{header}\n{rows}\n")).map_err(|e| e.to_string())?;
    }
    if let Ok(ds) = commitea::import::load_dataset(dir, "p") {
        for (project, _) in ds.projects() {
            let _ = commitea::import::to_state(&ds, &project);
        }
    }
    Ok(())
}
