//! The agent tools on the bundled demo: every view snapshotted, every filter, the size budget, every
//! `apply_changes` rejection reason, the op file round trip, and schema checks of inputs and outputs.

use std::path::Path;
use std::sync::OnceLock;

use chrono::{DateTime, TimeZone, Utc};
use commitea::demo::{self, DemoSpec};
use commitea::ops::OpFile;
use commitea::tools::{self, Context, ToolError};
use serde_json::{Value, json};

/// Fewer trials than the default keeps the suite quick; the payloads' shapes do not depend on it.
const TRIALS: &str = "2000";

fn clock() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 9, 30, 0).unwrap()
}

fn demo_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    static STATE: OnceLock<demo::DemoState> = OnceLock::new();
    let state = STATE.get_or_init(|| demo::generate(&DemoSpec::bundled()));
    demo::write(state, tmp.path()).unwrap();
    tmp
}

/// The standup of the state at `dir` as of the working day after its forecast's day 0 (Monday after a
/// Friday), with that day.
fn standup_a_working_day_later(dir: &Path) -> (chrono::NaiveDate, Value) {
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "runway" })).unwrap();
    let today = chrono::NaiveDate::parse_from_str(v["asOf"].as_str().unwrap(), "%Y-%m-%d").unwrap();
    let mut next = today + chrono::Days::new(1);
    while matches!(
        chrono::Datelike::weekday(&next),
        chrono::Weekday::Sat | chrono::Weekday::Sun
    ) {
        next = next + chrono::Days::new(1);
    }
    let later = Context {
        as_of: Some(next.and_hms_opt(17, 0, 0).unwrap().and_utc()),
        ..ctx(dir)
    };
    let v = tools::call(
        &later,
        "query_project",
        &json!({ "view": "standup", "filters": { "limit": 100 } }),
    )
    .unwrap();
    (next, v)
}

fn ctx(dir: &Path) -> Context {
    Context {
        state_dir: dir.to_path_buf(),
        env: vec![("COMMITEA_FORECAST_TRIALS".into(), TRIALS.into())],
        clock: Some(clock()),
        by: Some("pat".into()),
        ..Context::new(dir)
    }
}

/// One demo state shared by the read-only tests (the reads never write): the demo with its forecast
/// committed, then one directive recorded, so the directives view has a pending consequence and the standup
/// has drift to report.
fn shared() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = demo_dir();
        commitea::pipeline::run(&run_options(tmp.path())).unwrap();
        tools::call(
            &ctx(tmp.path()),
            "record_directive",
            &json!({
                "kind": "reprioritize",
                "quote": "Idempotency keys first, the bank is waiting.",
                "target": { "issue": "acme/api#102" },
                "params": { "priority": 0 }
            }),
        )
        .unwrap();
        tmp
    })
    .path()
}

fn run_options(dir: &Path) -> commitea::pipeline::RunOptions {
    commitea::pipeline::RunOptions {
        state_dir: dir.to_path_buf(),
        now: None,
        clock: clock(),
        offline: true,
        full_sync: false,
        token: None,
        server_fallback: None,
        overrides: Default::default(),
        env: vec![("COMMITEA_FORECAST_TRIALS".to_owned(), TRIALS.to_owned())],
        commit: true,
        render: false,
        applied_before: Vec::new(),
        skip_ci: false,
    }
}

/// The demo as a git repository, imported by the PM, with its forecast committed by a run.
/// The demo's `commitea.yaml` with the abandonment model on, as `commitea init` leaves it (the demo keeps
/// it off for its generated history).
fn abandonment_model_on(dir: &Path) {
    let path = dir.join("commitea.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("abandonment_min_history_days: 365"), "{text}");
    std::fs::write(
        &path,
        text.replace(
            "abandonment_min_history_days: 365",
            "abandonment_min_history_days: 90",
        ),
    )
    .unwrap();
}

fn committed_demo() -> tempfile::TempDir {
    let tmp = demo_dir();
    crate::pipeline::git(tmp.path(), &["init", "-q"]);
    crate::pipeline::commit_all_as_pm(tmp.path(), false, "Import");
    commitea::pipeline::run(&run_options(tmp.path())).unwrap();
    tmp
}

fn query(view: &str, filters: Value) -> Value {
    tools::call(
        &ctx(shared()),
        "query_project",
        &json!({ "view": view, "filters": filters }),
    )
    .unwrap_or_else(|e| panic!("{view} {filters}: {e}"))
}

fn query_err(input: Value) -> ToolError {
    tools::call(&ctx(shared()), "query_project", &input).unwrap_err()
}

fn output_validator(name: &str) -> jsonschema::Validator {
    let spec = tools::specs().into_iter().find(|s| s.name == name).unwrap();
    jsonschema::validator_for(&spec.output_schema).unwrap()
}

pub(crate) fn assert_valid_output(name: &str, v: &Value) {
    let validator = output_validator(name);
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{name} output breaks its schema: {errors:?}"
    );
}

/// The inputs every view is snapshotted with.
pub(crate) fn all_views() -> Vec<(&'static str, Value)> {
    vec![
        ("focus", json!({})),
        ("issue", json!({ "issueId": "acme/api#102" })),
        ("milestone", json!({ "milestoneId": 4 })),
        ("board", json!({})),
        ("runway", json!({})),
        ("calibration", json!({})),
        ("directives", json!({})),
        ("standup", json!({})),
        ("search", json!({ "query": "idempotency keys" })),
    ]
}

#[test]
fn every_view_on_the_demo() {
    for (view, filters) in all_views() {
        let mut v = query(view, filters);
        assert_valid_output("query_project", &v);
        // The commit compared with: its id changes with every build (a forecast records its engine).
        if let Some(since) = v.pointer_mut("/drift/since") {
            assert!(
                since
                    .as_str()
                    .is_some_and(|c| c.len() == 12 && c.bytes().all(|b| b.is_ascii_hexdigit())),
                "{since}"
            );
            *since = json!("[the commit compared with]");
        }
        insta::assert_json_snapshot!(format!("view_{view}"), v);
    }
}

#[test]
fn size_budget_at_the_default_limit() {
    let mut report = Vec::new();
    for (view, filters) in all_views() {
        let v = query(view, filters);
        let bytes = serde_json::to_vec(&v).unwrap().len();
        report.push(format!("{view}: {bytes} B"));
        let budget = if view == "focus" { 2048 } else { 8192 };
        assert!(
            bytes < budget,
            "{view} is {bytes} bytes at the default limit, over its budget of {budget}"
        );
    }
    eprintln!("view sizes on the demo: {}", report.join(", "));
}

#[test]
fn forecasts_are_ranges_never_single_dates() {
    let issue = query("issue", json!({ "issueId": "acme/api#102" }));
    let f = &issue["derived"]["forecast"];
    for q in ["p10", "p50", "p80"] {
        assert!(f[q].is_string(), "issue forecast lacks {q}: {f}");
    }
    let m = query("milestone", json!({ "milestoneId": 4 }));
    for q in ["p10", "p50", "p80"] {
        assert!(m["cone"][q].is_string());
    }
    // A list cut to the limit says how many it leaves out (audit 82: 20 of 300 with no word).
    let cut = query("milestone", json!({ "milestoneId": 4, "limit": 2 }));
    let open = cut["stats"]["open"].as_u64().unwrap();
    assert!(open > 2, "{cut}");
    assert_eq!(cut["issues"].as_array().unwrap().len(), 2);
    assert_eq!(cut["issuesOmitted"].as_u64(), Some(open - 2), "{cut}");
    // The two kept are those done last, which set the milestone's date (audit 140: cut by planned order,
    // the list dropped exactly them).
    let all = query("milestone", json!({ "milestoneId": 4, "limit": 100 }));
    let mut p80s: Vec<&str> = all["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["band"]["p80"].as_str().unwrap())
        .collect();
    p80s.sort_unstable();
    let latest = p80s[p80s.len() - 2];
    for i in cut["issues"].as_array().unwrap() {
        assert!(i["band"]["p80"].as_str().unwrap() >= latest, "{cut}");
    }
    assert!(m.get("issuesOmitted").is_none() || m["issues"].as_array().unwrap().len() == 20);
    let r = query("runway", json!({}));
    for m in r["milestones"].as_array().unwrap() {
        assert!(m["band"]["p50"].is_string() && m["band"]["p80"].is_string());
    }
}

#[test]
fn a_stale_blocker_in_a_cycle_is_said_to_be_in_one() {
    // acme/api#121 and #126 wait on each other: the standup named one as blocking the other with no word
    // of the cycle (audit 101).
    let tmp = demo_dir();
    for (n, other) in [(121, 126), (126, 121)] {
        let path = tmp
            .path()
            .join(format!("snapshot/issues/acme/api/{n}.yaml"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("depends_on"), "{text}");
        let text = text.replacen(
            "\nbody: ",
            &format!("\ndepends_on:\n- acme/api#{other}\nbody: "),
            1,
        );
        std::fs::write(&path, text).unwrap();
    }
    let later = Context {
        as_of: Some(Utc.with_ymd_and_hms(2026, 12, 4, 17, 0, 0).unwrap()),
        ..ctx(tmp.path())
    };
    let v = tools::call(
        &later,
        "query_project",
        &json!({ "view": "standup", "filters": { "limit": 100 } }),
    )
    .unwrap();
    let stale = v["staleBlockers"].as_array().unwrap();
    // Cut to half the limit, the count stays whole (audit 153: the list shrank without a word).
    assert_eq!(v["staleBlockersTotal"], json!(stale.len()), "{v}");
    assert!(stale.len() > 1);
    let cut = tools::call(
        &later,
        "query_project",
        &json!({ "view": "standup", "filters": { "limit": 2 } }),
    )
    .unwrap();
    assert_eq!(cut["staleBlockers"].as_array().unwrap().len(), 1);
    assert_eq!(cut["staleBlockersTotal"], json!(stale.len()));
    let cyclic: Vec<&Value> = stale
        .iter()
        .filter(|b| b["issue"] == "acme/api#121" || b["issue"] == "acme/api#126")
        .collect();
    assert!(!cyclic.is_empty(), "{v}");
    assert!(cyclic.iter().all(|b| b["inCycle"] == true), "{cyclic:?}");
    assert!(
        stale.iter().filter(|b| b["inCycle"] == true).count() == cyclic.len(),
        "{stale:?}"
    );
    // The issue itself has no range, and names the cycle (audit 128: "beyond horizon" three times read
    // as a date, for a p/0 bug left out of the forecast).
    let v = tools::call(
        &later,
        "query_project",
        &json!({ "view": "issue", "filters": { "issueId": "acme/api#121" } }),
    )
    .unwrap();
    let derived = &v["derived"];
    assert!(derived.get("forecast").is_none(), "{derived}");
    assert_eq!(derived["cycle"], json!(["acme/api#126"]), "{derived}");
    // Asked again for a dependency of the cycle, the answer is that Gitea has it, not a new cycle.
    let refused = tools::call(
        &later,
        "apply_changes",
        &json!({ "ops": [{ "op": "add_dep", "issue": "acme/api#121", "dependsOn": "acme/api#126" }] }),
    )
    .unwrap();
    let refused = refused["rejected"][0]["reason"].as_str().unwrap();
    assert!(
        refused.starts_with("nothing to change: Gitea already has it")
            && !refused.contains("cycle"),
        "{refused}"
    );
    // Breaking the cycle forecasts them again: said so, not as moves of hundreds of working days from
    // placeholder dates (audit 133: −517).
    let broken = tools::call(
        &later,
        "apply_changes",
        &json!({ "ops": [{ "op": "remove_dep", "issue": "acme/api#121", "dependsOn": "acme/api#126" }], "preview": true }),
    )
    .unwrap();
    let summary = broken["consequence"].as_str().unwrap();
    assert!(
        summary.contains("acme/api#121 and acme/api#126 out of a dependency cycle, forecast again"),
        "{summary}"
    );
}

#[test]
fn an_open_milestone_with_nothing_open_has_no_date_and_says_so() {
    // Its cone was "done today" (audit 101: an assistant would answer "done by 27 Nov").
    let tmp = demo_dir();
    let path = tmp.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replacen(
        "acme/api:\n",
        "acme/api:\n- id: 99\n  title: Nothing yet\n  state: open\n  due_on: 2027-03-01T23:59:59Z\n  created_at: 2026-10-01T09:00:00Z\n",
        1,
    );
    std::fs::write(&path, text).unwrap();
    let m = tools::call(
        &ctx(tmp.path()),
        "query_project",
        &json!({ "view": "milestone", "filters": { "milestoneId": 99 } }),
    )
    .unwrap();
    assert!(m.get("cone").is_none(), "{m}");
    assert_eq!(m["status"], "nothing_open", "{m}");
    assert_eq!(m["stats"]["open"], 0, "{m}");
    // The runway says the same: no band of today's date beside "nothing open" (audit 102).
    let r = tools::call(
        &ctx(tmp.path()),
        "query_project",
        &json!({ "view": "runway", "filters": { "milestoneId": 99 } }),
    )
    .unwrap();
    let row = &r["milestones"][0];
    assert_eq!(row["status"], "nothing_open", "{r}");
    assert!(row.get("band").is_none() && row.get("p10").is_none(), "{r}");
    let dated = query("runway", json!({ "milestoneId": 4 }));
    assert!(
        dated["milestones"][0]["band"]["p80"].is_string()
            && dated["milestones"][0]["p10"].is_string(),
        "{dated}"
    );
    let open = query("milestone", json!({ "milestoneId": 4 }));
    assert!(
        open["status"].is_string() && open["cone"]["p80"].is_string(),
        "{open}"
    );
}

#[test]
fn a_closed_milestone_is_done_the_day_it_closed_not_today() {
    // The demo's Q3 hardening closed on 2026-10-01 (due 2026-09-30); the forecast is weeks later.
    let m = query("milestone", json!({ "milestoneId": 1 }));
    assert_eq!(m["state"], "closed", "{m}");
    assert_eq!(m["closed"], "2026-10-01", "{m}");
    assert_eq!(
        m["cone"],
        json!({ "p10": "2026-10-01", "p50": "2026-10-01", "p80": "2026-10-01" }),
        "{m}"
    );
    assert!(m.get("plannedCone").is_none(), "{m}");
    // An open milestone has no closing day.
    assert!(
        query("milestone", json!({ "milestoneId": 4 }))
            .get("closed")
            .is_none()
    );

    // Closed on Gitea with work still open: the cone is still the day it closed, and the run says what
    // is left in it.
    let tmp = demo_dir();
    let file = tmp.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let at = text.find("- id: 3\n").unwrap();
    let (head, tail) = text.split_at(at);
    let tail = tail.replacen("state: open", "state: closed", 1).replacen(
        "created_at:",
        "closed_at: 2026-11-20T12:00:00Z\n  created_at:",
        1,
    );
    std::fs::write(&file, format!("{head}{tail}")).unwrap();
    let c = commitea::pipeline::compute(&run_options(tmp.path())).unwrap();
    let m = c.report.milestones.iter().find(|m| m.id == 3).unwrap();
    assert_eq!(m.p80.to_string(), "2026-11-20");
    assert!(m.open_issues > 0);
    assert!(
        c.report
            .warnings
            .iter()
            .any(|w| w.contains("closed on Gitea on 2026-11-20 with ")
                && w.contains("move them to an open milestone")),
        "{:?}",
        c.report.warnings
    );
}

#[test]
fn focus_rationales_come_from_engine_facts() {
    let f = query("focus", json!({ "assignee": "bjorn" }));
    assert_eq!(f["assignee"], "bjorn");
    // Typed in another case, the same focus, named as the team spells the person.
    assert_eq!(query("focus", json!({ "assignee": "BJORN" })), f);
    let now = &f["now"];
    assert!(now.is_object(), "bjorn has work: {f}");
    let all: Vec<&Value> = std::iter::once(now)
        .chain(f["next"].as_array().unwrap())
        .chain(f["later"].as_array().unwrap())
        .collect();
    assert!(all.len() > 1 && all.len() <= 7);
    for item in &all {
        let r = item["rationale"].as_str().unwrap();
        assert!(r.contains("p50") || r.contains("beyond the horizon"), "{r}");
    }
    // Something in the demo blocks other work, and the rationale says so with the blocked issue's number.
    let team = query("focus", json!({ "limit": 7 }));
    let text = team.to_string();
    assert!(
        text.contains("working day"),
        "milestone slack is named: {text}"
    );
}

#[test]
fn focus_puts_drop_everything_work_before_review() {
    // amara has p/0 work (and work a p/0 issue waits on) and work in review: the p/0 work comes first,
    // team-wide too, then review.
    for f in [
        query("focus", json!({ "assignee": "amara" })),
        query("focus", json!({})),
    ] {
        let all: Vec<&str> = std::iter::once(&f["now"])
            .chain(f["next"].as_array().unwrap())
            .chain(f["later"].as_array().unwrap())
            .map(|i| i["rationale"].as_str().unwrap())
            .collect();
        let urgent = |r: &&str| {
            r.split("; ")
                .any(|part| part == "p/0" || part.contains("inherits p/0"))
        };
        let first_other = all.iter().position(|r| !urgent(r)).unwrap_or(all.len());
        assert!(first_other > 0, "{all:#?}");
        assert!(all[first_other..].iter().all(|r| !urgent(r)), "{all:#?}");
        assert!(
            all[first_other..]
                .iter()
                .any(|r| r.starts_with("in review")),
            "{all:#?}"
        );
    }
}

#[test]
fn focus_limit_caps_the_items() {
    let f = query("focus", json!({ "limit": 2 }));
    assert!(f["now"].is_object());
    assert_eq!(f["next"].as_array().unwrap().len(), 1);
    assert_eq!(f["later"].as_array().unwrap().len(), 0);
    // A host whose model API keeps numbers as doubles sends 2.0: the same answer, not "expected a whole
    // number".
    assert_eq!(query("focus", json!({ "limit": 2.0 })), f);
}

#[test]
fn filter_state_narrows_the_board_to_one_column() {
    let b = query("board", json!({ "state": "triage", "limit": 100 }));
    let cols = b["columns"].as_array().unwrap();
    assert_eq!(cols.len(), 1);
    assert_eq!(cols[0]["state"], "triage");
    // The column's count is whole; its list is cut to the view's byte budget (a 4B model's context).
    let n = cols[0]["issues"].as_array().unwrap().len();
    assert!(n as u64 <= cols[0]["count"].as_u64().unwrap());
    assert!(n > 0);
    assert!(b.to_string().len() <= commitea::tools::answer_budget("query_project", Some("board")));
}

#[test]
fn filter_assignee_keeps_their_issues() {
    let b = query("board", json!({ "assignee": "farah", "limit": 100 }));
    let mut seen = 0;
    for col in b["columns"].as_array().unwrap() {
        for card in col["issues"].as_array().unwrap() {
            assert_eq!(card["assignee"], "farah", "{card}");
            seen += 1;
        }
    }
    assert!(seen > 0);
    let r = query("runway", json!({ "assignee": "farah" }));
    let cap = r["capacity"].as_array().unwrap();
    assert_eq!(cap.len(), 1);
    assert_eq!(cap[0]["person"], "farah");
    // Gitea compares usernames without case.
    assert_eq!(
        query("board", json!({ "assignee": "FARAH", "limit": 100 })),
        b
    );
}

#[test]
fn filter_label_keeps_issues_with_the_label() {
    let s = query(
        "search",
        json!({ "query": "login", "label": "security", "limit": 100 }),
    );
    let matches = s["matches"].as_array().unwrap();
    assert!(!matches.is_empty(), "{s}");
    let all = query("search", json!({ "query": "login", "limit": 100 }));
    assert!(all["total"].as_u64() > s["total"].as_u64(), "{all}");
    for m in matches {
        let issue = query("issue", json!({ "issueId": m["issue"] }));
        let labels = issue["intent"]["labels"].as_array().unwrap();
        assert!(labels.iter().any(|l| l == "security"), "{m}");
    }
}

#[test]
fn filter_milestone_narrows_board_runway_and_focus() {
    let b = query("board", json!({ "milestoneId": 4, "limit": 100 }));
    for col in b["columns"].as_array().unwrap() {
        for card in col["issues"].as_array().unwrap() {
            assert_eq!(card["milestone"], "Public API v2", "{card}");
        }
    }
    let r = query("runway", json!({ "milestoneId": 4 }));
    assert_eq!(r["milestones"].as_array().unwrap().len(), 1);
    assert_eq!(r["milestones"][0]["milestone"], 4);
    let f = query("focus", json!({ "milestoneId": 4 }));
    let key = f["now"]["issue"].as_str().unwrap();
    let issue = query("issue", json!({ "issueId": key }));
    assert_eq!(issue["intent"]["milestone"]["id"], 4);
}

#[test]
fn board_cards_name_the_open_issues_they_wait_on() {
    // A card planned months out said nothing of why: it waits on another issue, and only the issue's
    // own page said so. A closed dependency is waited on no longer; a milestone's board still names a
    // blocker from outside the milestone.
    let state = |key: &Value| query("issue", json!({ "issueId": key }))["intent"]["state"].clone();
    let mut named = 0;
    for filters in [
        json!({ "limit": 100 }),
        json!({ "milestoneId": 4, "limit": 100 }),
    ] {
        let b = query("board", filters.clone());
        for col in b["columns"].as_array().unwrap() {
            for card in col["issues"].as_array().unwrap() {
                let listed: Vec<Value> = card["waitsOn"]
                    .as_array()
                    .map(|l| l.iter().map(|b| b["issue"].clone()).collect())
                    .unwrap_or_default();
                if col["state"] == "done" {
                    assert!(listed.is_empty(), "{card}");
                    continue;
                }
                let issue = query("issue", json!({ "issueId": card["issue"] }));
                let open: Vec<Value> = issue["derived"]["dependsOn"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|d| state(d) == "open")
                    .cloned()
                    .collect();
                assert_eq!(
                    listed,
                    open.iter().take(3).cloned().collect::<Vec<_>>(),
                    "{filters} {card}"
                );
                assert_eq!(
                    card["waitsOnMore"].as_u64().unwrap_or(0) as usize,
                    open.len().saturating_sub(3),
                    "{card}"
                );
                named += listed.len();
            }
        }
    }
    assert!(named > 0, "the demo has open issues waiting on others");
}

#[test]
fn filter_limit_cuts_lists_and_is_checked() {
    let s = query("search", json!({ "query": "the", "limit": 3 }));
    assert_eq!(s["matches"].as_array().unwrap().len(), 3);
    assert!(s["total"].as_u64().unwrap() > 3);
    let b = query("board", json!({}));
    let cards: usize = b["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["issues"].as_array().unwrap().len())
        .sum();
    assert!(cards <= 20, "the default limit is 20 cards: {cards}");
    for bad in [0, 101, 500] {
        match query_err(json!({ "view": "board", "filters": { "limit": bad } })) {
            ToolError::Invalid { path, message } => {
                assert_eq!(path, "/filters/limit", "{message}");
            }
            e => panic!("limit {bad}: {e}"),
        }
    }
}

#[test]
fn filter_issue_id_accepts_full_keys_and_explains_ambiguous_numbers() {
    let a = query("issue", json!({ "issueId": "acme/api#102" }));
    assert_eq!(a["issue"], "acme/api#102");
    assert_eq!(a["derived"]["dependsOn"], json!(["acme/api#77"]));
    // Three repositories: a bare number is ambiguous, and the error says how to name it.
    match query_err(json!({ "view": "issue", "filters": { "issueId": 102 } })) {
        ToolError::Invalid { path, message } => {
            assert_eq!(path, "/filters/issueId");
            assert!(message.contains("owner/repo#102"), "{message}");
        }
        e => panic!("{e}"),
    }
    match query_err(json!({ "view": "issue", "filters": { "issueId": "acme/api#99999" } })) {
        ToolError::Invalid { path, message } => {
            assert_eq!(path, "/filters/issueId");
            assert!(message.contains("no issue acme/api#99999"), "{message}");
        }
        e => panic!("{e}"),
    }
}

#[test]
fn filter_query_ranks_title_matches_first() {
    let s = query("search", json!({ "query": "idempotency" }));
    let first = &s["matches"][0];
    assert_eq!(first["in"], "title");
    assert!(
        first["title"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("idempotency")
    );
    let scores: Vec<u64> = s["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["score"].as_u64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // A number finds the issue itself, and a reference nothing else.
    let n = query("search", json!({ "query": "acme/web#3" }));
    assert_eq!(n["matches"][0]["issue"], "acme/web#3");
    assert_eq!(n["matches"][0]["in"], "number");
    assert_eq!(n["total"], 1, "{n}");
    let none = query("search", json!({ "query": "acme/web#999" }));
    assert_eq!(none["total"], 0, "{none}");
    // The repository's name alone names it, as people say it ("web#3"); a repository as a word finds its
    // issues, each found in "repository" where nothing else of it matches.
    let n = query("search", json!({ "query": "WEB#3" }));
    assert_eq!(
        (&n["matches"][0]["issue"], n["total"].as_u64()),
        (&json!("acme/web#3"), Some(1)),
        "{n}"
    );
    let mobile = query("search", json!({ "query": "acme/mobile", "limit": 100 }));
    let keys: Vec<&str> = mobile["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["issue"].as_str().unwrap())
        .collect();
    assert!(
        !keys.is_empty() && keys.iter().all(|k| k.starts_with("acme/mobile#")),
        "{keys:?}"
    );
    let files = std::fs::read_dir(shared().join("snapshot/issues/acme/mobile"))
        .unwrap()
        .count();
    assert_eq!(mobile["total"].as_u64(), Some(files as u64), "{mobile}");
    assert_eq!(
        query("search", json!({ "query": "mobile" }))["total"],
        mobile["total"]
    );
    // A reference anywhere in the query, with other words, and the repository without case; a bare
    // number after `issue`.
    for q in ["issue 102 idempotency", "#102 keys", "a ACME/API#102"] {
        let s = query("search", json!({ "query": q }));
        assert_eq!(s["matches"][0]["issue"], "acme/api#102", "{q}: {s}");
        assert_eq!(s["matches"][0]["in"], "number", "{q}: {s}");
    }
    // Among other words a bare number is a word: no issue is found by its number.
    let s = query("search", json!({ "query": "idempotency 102" }));
    assert!(
        s["matches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["in"] != "number"),
        "{s}"
    );
    // A word matches where a word starts, not inside one; one-letter words are named as left out.
    let s = query("search", json!({ "query": "paginat a" }));
    assert!(s["total"].as_u64() > Some(0), "{s}");
    assert_eq!(s["ignored"], json!(["a"]), "{s}");
    let inside = query("search", json!({ "query": "agination" }));
    assert_eq!(inside["total"], 0, "{inside}");
    // Nothing to look for: one-letter words, or symbols and emoji only (audit 95: "no word of two
    // characters" of a seven-character query).
    for q in ["a b", "👩\u{200d}👩\u{200d}👧 ✨"] {
        match query_err(json!({ "view": "search", "filters": { "query": q } })) {
            ToolError::Invalid { path, message } => {
                assert_eq!(path, "/filters/query");
                assert!(
                    message.contains("no word to look for")
                        && message.contains("symbols and emoji are not searched"),
                    "{message}"
                );
            }
            e => panic!("{e}"),
        }
    }
}

#[test]
fn views_that_need_a_filter_say_which() {
    for (view, field) in [
        ("issue", "/filters/issueId"),
        ("milestone", "/filters/milestoneId"),
        ("search", "/filters/query"),
    ] {
        match query_err(json!({ "view": view })) {
            ToolError::Invalid { path, .. } => assert_eq!(path, field),
            e => panic!("{view}: {e}"),
        }
    }
    match query_err(json!({ "view": "milestone", "filters": { "milestoneId": 77 } })) {
        ToolError::Invalid { path, message } => {
            assert_eq!(path, "/filters/milestoneId");
            assert!(
                message.contains("Public API v2"),
                "lists the milestones: {message}"
            );
        }
        e => panic!("{e}"),
    }
}

#[test]
fn bad_inputs_name_the_field() {
    let cases = [
        (json!({ "view": "roadmap" }), "/view"),
        (json!({}), "/"),
        (
            json!({ "view": "board", "filters": { "colour": "red" } }),
            "/filters",
        ),
        (
            json!({ "view": "board", "filters": { "state": "doing" } }),
            "/filters/state",
        ),
        (
            json!({ "view": "board", "filters": { "limit": "ten" } }),
            "/filters/limit",
        ),
        // A name or a label nobody has is a typo, not "nobody has work".
        (
            json!({ "view": "focus", "filters": { "assignee": "nobody" } }),
            "/filters/assignee",
        ),
        (
            json!({ "view": "board", "filters": { "label": "nope" } }),
            "/filters/label",
        ),
    ];
    for (input, want) in cases {
        match query_err(input.clone()) {
            ToolError::Invalid { path, message } => {
                assert_eq!(path, want, "{input}: {message}");
                assert!(!message.is_empty());
            }
            e => panic!("{input}: {e}"),
        }
    }
    // An optional field's message is about the value, never "expected null".
    let said = [
        (
            json!({ "view": "focus", "filters": { "state": "bogus" } }),
            "\"bogus\" is not one of the valid values: diagnosis, triage, steeping, in_review, done",
        ),
        (
            json!({ "view": "issue", "filters": { "issueId": "api#1" } }),
            "\"api#1\" is not an issue: write owner/repo#N, #N or N",
        ),
        (
            json!({ "view": "issue", "filters": { "issueId": -1 } }),
            "-1 is less than the minimum of 1",
        ),
    ];
    for (input, want) in said {
        match query_err(input.clone()) {
            ToolError::Invalid { message, .. } => assert_eq!(message, want, "{input}"),
            e => panic!("{input}: {e}"),
        }
    }
    // A swapped pair of letters of someone's name is said a typo of it, as a directive's target says it.
    match query_err(json!({ "view": "focus", "filters": { "assignee": "gsu" } })) {
        ToolError::Invalid { message, .. } => assert!(
            message.starts_with(
                "\"gsu\" is not on the team and is assigned no issue (did you mean gus?); the people are "
            ),
            "{message}"
        ),
        e => panic!("{e}"),
    }
    let e = tools::call_str(&ctx(shared()), "query_project", "{\"view\": ").unwrap_err();
    assert!(matches!(e, ToolError::BadJson(_)) && e.is_input(), "{e}");
    let e = tools::call(&ctx(shared()), "query_projects", &json!({})).unwrap_err();
    assert!(
        matches!(e, ToolError::UnknownTool(_)) && e.is_input(),
        "{e}"
    );
}

#[test]
fn every_input_bound_names_the_field_and_the_limit_and_quotes_little() {
    let long = |n: usize| "é".repeat(n);
    let op = |title: &str| json!({ "op": "create_issue", "title": title, "repo": "acme/api" });
    let many_ops: Vec<Value> = (0..201).map(|n| op(&format!("Issue {n}"))).collect();
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "record_directive",
            json!({ "kind": "note", "quote": long(2_001) }),
            "/quote",
            "2001 characters, more than the limit of 2000",
        ),
        (
            "record_directive",
            json!({ "kind": "note", "quote": "Fine.", "rationale": long(501) }),
            "/rationale",
            "more than the limit of 500",
        ),
        (
            "record_directive",
            json!({ "kind": "note", "quote": "Ship it.\u{1b}[8m hidden" }),
            "/quote",
            "holds the control character U+001B; write the words as plain text",
        ),
        (
            "record_directive",
            json!({ "kind": "note", "quote": "Ship it.\nNow.", "rationale": "r\u{7}" }),
            "/rationale",
            "holds the control character U+0007",
        ),
        (
            "record_directive",
            json!({ "kind": "note", "quote": "Ship \u{202e}it.", "rationale": "r" }),
            "/quote",
            "holds the bidirectional formatting character U+202E",
        ),
        (
            "record_directive",
            json!({ "kind": "note", "quote": "x".repeat(1 << 20) }),
            "/",
            "more than the limit of 262144 for one call",
        ),
        (
            "capture_work",
            json!({ "braindump": long(20_001) }),
            "/braindump",
            "more than the limit of 20000",
        ),
        (
            "capture_work",
            json!({ "braindump": "x", "answers": vec![json!({"question": "q", "answer": "a"}); 21] }),
            "/answers",
            "21 items, more than the limit of 20",
        ),
        (
            "apply_changes",
            json!({ "ops": [op(&long(256))] }),
            "/ops/0/title",
            "256 characters, more than the limit of 255",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "op": "create_issue", "title": "t", "body": long(20_001) }] }),
            "/ops/0/body",
            "more than the limit of 20000",
        ),
        (
            "apply_changes",
            json!({ "ops": many_ops }),
            "/ops",
            "201 items, more than the limit of 100 in one call",
        ),
        // A rung or a label is a name: bounded (audit 158: a 1,000-digit rung came back whole).
        (
            "apply_changes",
            json!({ "ops": [{ "op": "set_estimate", "issue": "acme/api#3", "estimate": format!("est/{}d", "9".repeat(1_000)) }] }),
            "/ops/0/estimate",
            "more than the limit of 200",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "op": "create_issue", "title": "t", "repo": "acme/api", "labels": [format!("est/{}", "9".repeat(4_000))] }] }),
            "/ops/0/labels/0",
            "more than the limit of 200",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "op": "rename_issue", "issue": 3, "title": "x" }] }),
            "/ops/0/op",
            "\"rename_issue\" is not an op; the ops are create_issue, set_estimate",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "issue": 3 }] }),
            "/ops/0/op",
            "missing the field \"op\"",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "op": "set_priority", "issue": "acme/api#3", "priority": "urgent" }] }),
            "/ops/0/priority",
            "\"urgent\" does not match",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "op": "close_issue", "issue": "acme/api#3", "comment": "bye" }] }),
            "/ops/0",
            "unknown field \"comment\"",
        ),
        (
            "query_project",
            json!({ "view": "board", "filters": { "milestone": 4 } }),
            "/filters",
            "unknown field \"milestone\"; the fields here are assignee, issueId, label, limit, milestoneId, query, state",
        ),
        (
            "query_project",
            json!({ "view": "roadmap" }),
            "/view",
            "\"roadmap\" is not one of the valid values: focus, issue, milestone",
        ),
        (
            "query_project",
            json!({ "view": 7 }),
            "/view",
            "7 is not one of the valid values: focus, issue, milestone",
        ),
        (
            "query_project",
            json!({ "view": "milestone", "filters": { "milestoneId": "two" } }),
            "/filters/milestoneId",
            "expected an integer or null, got a string",
        ),
        (
            "query_project",
            json!({ "view": "issue", "filters": { "issueId": 102.5 } }),
            "/filters/issueId",
            "102.5 is not a whole number",
        ),
        (
            "record_directive",
            json!({ "kind": "set-deadline", "quote": "By the end of February.", "target": { "milestone": 2 },
                    "params": { "due": "2027-02-31" } }),
            "/params",
            "\"2027-02-31\" is not a date: expected a real day as YYYY-MM-DD",
        ),
        // A milestone given by its title is told its id (audit 184: a type error naming none).
        (
            "apply_changes",
            json!({ "ops": [{ "op": "set_milestone", "issue": "acme/api#39", "milestone": "public API v2" }] }),
            "/ops/0/milestone",
            "expected an integer or null, got a string; give the id: \"Public API v2\" is milestone 4",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "op": "set_milestone", "issue": "acme/api#39", "milestone": "Q3 hardening" }] }),
            "/ops/0/milestone",
            "\"Q3 hardening\" is milestone 1, which is closed on Gitea",
        ),
        // An object where an issue goes is said at the issue, not as an op (audit 190: "missing the
        // field op" at /ops/0/issue/op).
        (
            "apply_changes",
            json!({ "ops": [{ "op": "add_dep", "issue": { "n": 3 }, "dependsOn": "acme/api#4" }] }),
            "/ops/0/issue",
            "got an object",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "op": "set_milestone", "issue": "acme/api#39", "milestone": "5" }] }),
            "/ops/0/milestone",
            "give the id as a number: 5, not \"5\"",
        ),
        (
            "apply_changes",
            json!({ "ops": [{ "op": "set_milestone", "issue": "acme/api#39", "milestone": "Billing v2" }] }),
            "/ops/0/milestone",
            "no milestone is titled \"Billing v2\": the open ones are 4 (Public API v2), ",
        ),
        // Out of a milestone it is not in: told how to drop it (audit 194: recorded, and nothing changed).
        (
            "record_directive",
            json!({ "kind": "scope", "quote": "Drop it.", "target": { "issue": "acme/web#157" },
                    "params": { "in": false } }),
            "/target",
            "acme/web#157 is in no milestone on Gitea",
        ),
        (
            "query_project",
            json!({ "view": "search", "filters": { "query": long(201) } }),
            "/filters/query",
            "more than the limit of 200",
        ),
    ];
    for (tool, input, want_path, want) in cases {
        match tools::call(&ctx(shared()), tool, &input) {
            Err(ToolError::Invalid { path, message }) => {
                assert_eq!(path, want_path, "{tool}: {message}");
                assert!(message.contains(want), "{tool} {want_path}: {message}");
                assert!(
                    message.len() < 400,
                    "{tool} {want_path}: a long error: {message}"
                );
                assert!(
                    !message.contains("not valid under any of the schemas"),
                    "{message}"
                );
            }
            other => panic!("{tool} {want_path}: {other:?}"),
        }
    }
    // The command line's `directive` checks the same bounds without the tool schema.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["directive", "--kind", "note", "--quote"])
        // (A single argument can hold at most 128 KiB on Linux.)
        .arg("q".repeat(100_000))
        .arg("-s")
        .arg(shared())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("quote") && stderr.contains("more than the limit of 2000"),
        "{stderr}"
    );
    assert!(stderr.len() < 400, "{stderr}");
}

#[test]
fn a_directive_says_a_pending_change_that_sets_the_same_otherwise() {
    // Audit 190: apply_changes said a change under a directive puts Gitea at odds with it; a directive
    // recorded over a pending change said nothing, and merging both left Gitea at p/1 under "p/0".
    let tmp = demo_dir();
    let dir = tmp.path();
    let out = tools::call(
        &ctx(dir),
        "apply_changes",
        &json!({ "ops": [{ "op": "set_priority", "issue": "acme/api#102", "priority": "p/1" }] }),
    )
    .unwrap();
    let file = out["opsFile"].as_str().unwrap().to_owned();
    let id = file
        .trim_start_matches("ops/pending/")
        .trim_end_matches(".yaml");
    let out = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({ "kind": "reprioritize", "quote": "API v2 first.", "target": { "issue": "acme/api#102" },
                 "params": { "priority": 0 } }),
    )
    .unwrap();
    let summary = out["summary"].as_str().unwrap();
    let directive = out["directiveId"].as_str().unwrap();
    assert!(
        summary.contains(&format!(
            "{id} (pending) would set the priority of acme/api#102 to p/1: merged, it puts acme/api#102's \
             priority at odds with {directive}"
        )),
        "{summary}"
    );
    // One that sets the same value is no clash.
    let out = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({ "kind": "reprioritize", "quote": "Back to p/1.", "target": { "issue": "acme/api#102" },
                 "params": { "priority": 1 } }),
    )
    .unwrap();
    assert!(
        !out["summary"].as_str().unwrap().contains("(pending)"),
        "{out}"
    );
}

#[test]
fn capture_work_is_declared_and_says_no_model() {
    let e = tools::call(
        &ctx(shared()),
        "capture_work",
        &json!({ "braindump": "we need dark mode on the web app" }),
    )
    .unwrap_err();
    assert!(matches!(e, ToolError::NoModel(_)), "{e}");
    assert!(e.to_string().contains("models.big"), "{e}");
    assert!(e.to_string().contains("no model configured"));
    // Its input is still checked first.
    let e = tools::call(&ctx(shared()), "capture_work", &json!({ "brain": "x" })).unwrap_err();
    assert!(matches!(e, ToolError::Invalid { .. }), "{e}");
}

#[test]
fn schemas_are_objects_and_published_for_all_four_tools() {
    let specs = tools::specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "query_project",
            "capture_work",
            "apply_changes",
            "record_directive"
        ]
    );
    for s in &specs {
        assert_eq!(s.input_schema["type"], "object", "{}", s.name);
        jsonschema::validator_for(&s.input_schema).unwrap();
        jsonschema::validator_for(&s.output_schema).unwrap();
        assert!(!s.description.is_empty());
    }
    let q = &specs[0].input_schema;
    let text = q.to_string();
    for field in [
        "issueId",
        "milestoneId",
        "state",
        "assignee",
        "label",
        "query",
        "limit",
    ] {
        assert!(text.contains(field), "query_project schema lacks {field}");
    }
    assert!(
        text.contains("owner/repo#N"),
        "the schema says how to name issues"
    );
}

// ---- apply_changes ----

fn apply(dir: &Path, input: Value) -> Value {
    let v = tools::call(&ctx(dir), "apply_changes", &input).unwrap();
    assert_valid_output("apply_changes", &v);
    v
}

fn pending(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir.join("ops/pending"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn reasons(v: &Value) -> Vec<String> {
    v["rejected"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| r["reason"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_consequence_says_what_happens_to_the_milestone_the_change_is_about() {
    let tmp = demo_dir();
    // A hard deadline on Public API v2 moves it by weeks; a priority in Mobile 3.0 barely moves that:
    // the line still says where Mobile 3.0 stands, after the milestone that moved most.
    let v = apply(
        tmp.path(),
        json!({ "ops": [
            { "op": "set_deadline_hard", "milestone": 4, "hard": true },
            { "op": "set_priority", "issue": "acme/mobile#101", "priority": "p/3" },
        ] }),
    );
    let line = v["consequence"].as_str().unwrap();
    assert!(line.starts_with("Public API v2 p80 \u{2212}"), "{line}");
    assert!(line.contains("; Mobile 3.0 holiday release p80 "), "{line}");
    // The op file's summary is the same line.
    let file = std::fs::read_to_string(tmp.path().join(v["opsFile"].as_str().unwrap())).unwrap();
    assert!(file.contains("Mobile 3.0 holiday release p80"), "{file}");
    // Subject by subject too, as the op file holds it (audit 140: the line alone hid an issue the op
    // was about slipping 51 working days): every milestone, then the moved issues.
    let detail = v["detail"].as_array().expect("detail");
    let subjects: Vec<&str> = detail
        .iter()
        .map(|p| p["subject"].as_str().unwrap())
        .collect();
    assert!(
        subjects.contains(&"milestone 4 Public API v2"),
        "{subjects:?}"
    );
    assert!(
        subjects.iter().any(|s| s.starts_with("issue ")),
        "{subjects:?}"
    );
    let api = &detail[subjects
        .iter()
        .position(|s| *s == "milestone 4 Public API v2")
        .unwrap()];
    assert!(api["after"]["p80"].is_string(), "{api}");
    // The line names the biggest issue move, and it is the first issue of the detail.
    let first_issue = subjects.iter().find(|s| s.starts_with("issue ")).unwrap();
    let key = first_issue.split(' ').nth(1).unwrap();
    assert!(
        line.contains(&format!("(the most: {key}, p80 ")),
        "{line} / {key}"
    );
}

#[test]
fn an_op_on_what_a_directive_in_force_sets_says_so() {
    let tmp = demo_dir();
    let d = tools::call(
        &ctx(tmp.path()),
        "record_directive",
        &json!({ "kind": "set-deadline", "quote": "Mobile ships Jan 22.", "target": { "milestone": 3 }, "params": { "due": "2027-01-22" } }),
    )
    .unwrap();
    let id = d["directiveId"].as_str().unwrap();
    let v = apply(
        tmp.path(),
        json!({ "ops": [{ "op": "set_milestone_due", "milestone": 3, "due": "2027-06-01" }], "preview": true }),
    );
    let line = v["consequence"].as_str().unwrap();
    assert!(
        line.contains(&format!(
            "{id} in force sets the due date of milestone 3: the forecast follows it, not this op"
        )),
        "{line}"
    );
    // The directive's own value brings Gitea into line (audit 149: `--carry-out` read "at odds").
    let v = apply(
        tmp.path(),
        json!({ "ops": [{ "op": "set_milestone_due", "milestone": 3, "due": "2027-01-22" }], "preview": true }),
    );
    let line = v["consequence"].as_str().unwrap();
    assert!(!line.contains("in force sets"), "{line}");
}

#[test]
fn a_due_day_moved_is_said_with_both_days_and_where_the_p80_stands() {
    let tmp = demo_dir();
    // Mobile 3.0 is due 2026-12-18 and late: moved to Jan 22 it is said so, with its slack then.
    let v = apply(
        tmp.path(),
        json!({ "ops": [{ "op": "set_milestone_due", "milestone": 3, "due": "2027-01-22" }], "preview": true }),
    );
    let line = v["consequence"].as_str().unwrap();
    assert!(line.contains(", due Dec 18 → Jan 22 2027, p80 "), "{line}");
    let mobile = v["detail"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["subject"].as_str().unwrap().starts_with("milestone 3 "))
        .expect("Mobile 3.0 in the detail");
    assert_eq!(mobile["before"]["due"], "2026-12-18", "{mobile}");
    assert_eq!(mobile["after"]["due"], "2027-01-22", "{mobile}");
    let (b, a) = (
        mobile["before"]["slackWorkingDays"].as_i64().unwrap(),
        mobile["after"]["slackWorkingDays"].as_i64().unwrap(),
    );
    // Five weeks later with the p80 where it was: about 24 working days more slack.
    assert!(a - b >= 20 && a - b <= 25, "{mobile}");
    let stands = if a < 0 {
        format!("p80 {} working days late", -a)
    } else {
        format!("p80 {a} working days early")
    };
    assert!(line.contains(&stands), "{line} / {stands}");
}

#[test]
fn a_priority_is_taken_as_its_level_as_a_capture_proposal_takes_it() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let v = apply(
        dir,
        json!({ "ops": [{ "op": "set_priority", "issue": "acme/api#102", "priority": "7" }] }),
    );
    assert!(reasons(&v)[0].contains("out of range"), "{v}");
    let v = apply(
        dir,
        json!({ "ops": [{ "op": "set_priority", "issue": "acme/api#102", "priority": "0" }] }),
    );
    assert_eq!(v["applied"], 1, "{v}");
    let file = std::fs::read_to_string(dir.join(v["opsFile"].as_str().unwrap())).unwrap();
    assert!(
        file.contains("priority: p/0"),
        "written as the label: {file}"
    );
    // As a number too, as a small model sends it (audit 102: the whole call failed).
    let v = apply(
        dir,
        json!({ "ops": [{ "op": "set_priority", "issue": "acme/api#102", "priority": 1 }] }),
    );
    assert_eq!(v["applied"], 1, "{v}");
    let file = std::fs::read_to_string(dir.join(v["opsFile"].as_str().unwrap())).unwrap();
    assert!(
        file.contains("priority: p/1"),
        "written as the label: {file}"
    );
}

#[test]
fn a_null_optional_list_is_an_empty_one_as_a_null_scalar_is_none() {
    let tmp = demo_dir();
    let v = apply(
        tmp.path(),
        json!({ "ops": [{
            "op": "create_issue", "title": "Rate-limit the export", "repo": "acme/api",
            "labels": null, "deps": null, "dependsOnNew": null, "milestone": null
        }] }),
    );
    assert_eq!(v["applied"], 1, "{v}");
    let file = std::fs::read_to_string(tmp.path().join(v["opsFile"].as_str().unwrap())).unwrap();
    let ops = file.split("summary:").next().unwrap();
    assert!(
        ops.contains("title: Rate-limit the export") && !ops.contains("null"),
        "nothing of the nulls is written: {ops}"
    );
}

/// A runway too big for its budget at the limit asked: the largest limit that fits answers, so a larger
/// limit never gives less, and what it leaves out is counted (audit 96: limit 100 gave 3 milestones and 3
/// people where 20 gave 5, and nothing said any were missing).
#[test]
fn a_runway_cut_to_its_budget_never_answers_less_for_a_larger_limit_and_counts_what_it_left() {
    let tmp = tempfile::tempdir().unwrap();
    let state = demo::generate(&DemoSpec::scaled(4000));
    demo::write(&state, tmp.path()).unwrap();
    let runway = |limit: usize| {
        tools::call(
            &ctx(tmp.path()),
            "query_project",
            &json!({ "view": "runway", "filters": { "limit": limit } }),
        )
        .unwrap()
    };
    let len = |v: &Value| v.as_array().map_or(0, Vec::len);
    let n = |v: &Value| v.as_u64().unwrap_or(0) as usize;
    // Each list with what was left of it: milestones, people, and each milestone's cut line.
    let counts = |v: &Value| {
        let mut c = vec![
            (len(&v["milestones"]), n(&v["milestonesOmitted"])),
            (len(&v["capacity"]), n(&v["capacityOmitted"])),
        ];
        for m in v["milestones"].as_array().unwrap() {
            c.push((
                len(&m["cutLine"]["issues"]),
                n(&m["cutLine"]["issuesOmitted"]),
            ));
        }
        c
    };
    let whole = counts(&runway(100));
    let total: Vec<usize> = whole.iter().map(|(s, o)| s + o).collect();
    assert!(
        whole.iter().any(|(_, o)| *o > 0),
        "the test wants a runway over its budget at 100: {whole:?}"
    );
    let mut before: Vec<usize> = vec![0; total.len()];
    for limit in [1, 2, 5, 20, 50, 100] {
        let v = runway(limit);
        assert!(
            serde_json::to_vec(&v).unwrap().len()
                <= tools::answer_budget("query_project", Some("runway")),
            "limit {limit}"
        );
        let c = counts(&v);
        // The milestones shown are a prefix of the whole list; each list shown plus left is whole.
        for (k, ((shown, left), was)) in c.iter().zip(&before).enumerate() {
            assert!(
                shown >= was,
                "limit {limit}: list {k} gave {shown}, a smaller limit {was}"
            );
            if k < 2 {
                assert_eq!(shown + left, total[k], "limit {limit}: list {k}");
            }
        }
        for (k, (shown, left)) in c.iter().enumerate().skip(2) {
            assert_eq!(
                shown + left,
                total[k],
                "limit {limit}: cut line of milestone {k}"
            );
        }
        before = c.iter().map(|(s, _)| *s).collect();
    }
}

#[test]
fn every_rejection_reason() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({ "op": "set_priority", "issue": "acme/api#9999", "priority": "p/1" }),
            "unknown issue acme/api#9999",
        ),
        // Closed ones said so: an op on one is refused all the same (audit 184).
        (
            json!({ "op": "set_milestone", "issue": "acme/api#102", "milestone": 42 }),
            "unknown milestone 42; the milestones are 1 (Q3 hardening, closed), ",
        ),
        (
            json!({ "op": "set_deadline_hard", "milestone": 42, "hard": true }),
            "unknown milestone 42",
        ),
        (
            json!({ "op": "set_estimate", "issue": "acme/api#102", "estimate": "est/5d" }),
            "not on the estimate ladder",
        ),
        (
            json!({ "op": "set_priority", "issue": "acme/api#102", "priority": "p/7" }),
            "out of range",
        ),
        // Milestone 1 (Q3 hardening) is closed: no work goes into it, no date is given to it.
        (
            json!({ "op": "set_milestone", "issue": "acme/api#102", "milestone": 1 }),
            "milestone 1 (Q3 hardening) is closed on Gitea",
        ),
        (
            json!({ "op": "set_milestone_due", "milestone": 1, "due": "2027-03-01" }),
            "milestone 1 (Q3 hardening) is closed on Gitea",
        ),
        // acme/api#1 is closed: nothing plans it any more.
        (
            json!({ "op": "set_priority", "issue": "acme/api#1", "priority": "p/0" }),
            "acme/api#1 is closed: its priority plans nothing",
        ),
        (
            json!({ "op": "set_estimate", "issue": "acme/api#1", "estimate": "est/2d" }),
            "acme/api#1 is closed: its estimate plans nothing",
        ),
        (
            json!({ "op": "add_dep", "issue": "acme/api#77", "dependsOn": "acme/api#102" }),
            "would make a cycle",
        ),
        (
            json!({ "op": "add_dep", "issue": "acme/api#102", "dependsOn": "acme/api#102" }),
            "cannot depend on itself",
        ),
        (
            json!({ "op": "add_dep", "issue": "acme/api#102", "dependsOn": "acme/docs#5" }),
            "unknown issue acme/docs#5: acme/docs is not one of the repositories synced",
        ),
        (
            json!({ "op": "create_issue", "title": "Dark mode", "labels": ["frontend"], "repo": "acme/web" }),
            "outside CommiTea's namespaces",
        ),
        (
            json!({ "op": "remove_label", "issue": "acme/api#102", "label": "feature" }),
            "outside CommiTea's namespaces",
        ),
        (
            json!({ "op": "set_priority", "issue": 102, "priority": "p/1" }),
            "ambiguous",
        ),
        (
            json!({ "op": "create_issue", "title": "Dark mode" }),
            "several repositories",
        ),
        // An op naming itself, or one after it (audit 140: both read "there is no earlier create_issue
        // number 1 … (1 is the first)").
        (
            json!({ "op": "create_issue", "title": "Self", "repo": "acme/web", "dependsOnNew": [1] }),
            "dependsOnNew 1: an issue cannot wait for itself; this is create_issue 1 of the call, and \
             dependsOnNew names only earlier ones (there is none before it)",
        ),
        (
            json!({ "op": "create_issue", "title": "Later", "repo": "acme/web", "dependsOnNew": [2] }),
            "dependsOnNew 2: it comes later in the call",
        ),
    ];
    for (op, want) in &cases {
        let v = apply(dir, json!({ "ops": [op] }));
        assert_eq!(v["applied"], 0, "{op}");
        let r = reasons(&v);
        assert_eq!(r.len(), 1, "{op}: {v}");
        assert!(
            r[0].contains(want),
            "{op}: reason {:?} lacks {want:?}",
            r[0]
        );
        assert_eq!(v["rejected"][0]["op"]["op"], op["op"]);
    }
    assert!(pending(dir).is_empty(), "a rejected batch writes nothing");
}

#[test]
fn destructive_ops_need_approval_and_never_reach_a_file_without_it() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let destructive = [
        json!({ "op": "remove_dep", "issue": "acme/api#102", "dependsOn": "acme/api#77" }),
        json!({ "op": "close_issue", "issue": "acme/api#102" }),
        json!({ "op": "remove_label", "issue": "acme/api#102", "label": "p/2" }),
    ];
    let additive = json!({ "op": "set_priority", "issue": "acme/api#102", "priority": "p/1" });
    let mut ops = destructive.to_vec();
    ops.push(additive.clone());
    let v = apply(dir, json!({ "ops": ops }));
    assert_eq!(v["applied"], 1);
    let r = reasons(&v);
    assert_eq!(r.len(), 3);
    assert!(r.iter().all(|r| r.contains("approved")), "{r:?}");
    let files = pending(dir);
    assert_eq!(files, ["C-0001.yaml"]);
    let text = std::fs::read_to_string(dir.join("ops/pending/C-0001.yaml")).unwrap();
    for word in ["remove_dep", "close_issue", "remove_label"] {
        assert!(!text.contains(word), "{word} reached the op file:\n{text}");
    }
    // A preview answers their consequence and writes nothing (audit 122: an agent could not show a
    // close's consequence before asking for the approval it needs).
    let v = apply(dir, json!({ "ops": destructive, "preview": true }));
    assert_eq!(
        (v["applied"].as_u64(), v["previewed"].as_u64()),
        (Some(0), Some(3)),
        "{v}"
    );
    let said = v["consequence"].as_str().unwrap();
    assert!(said.starts_with("preview, nothing written: "), "{v}");
    assert!(said.len() > "preview, nothing written: ".len() + 10, "{v}");
    assert!(v["asOf"].as_str().is_some_and(|d| d.len() == 10), "{v}");
    assert!(
        v.get("opsFile").is_none() && v.get("rejected").is_none(),
        "{v}"
    );
    assert_eq!(pending(dir), ["C-0001.yaml"]);
    // With approval they go through, in one file, marked destructive.
    let v = apply(dir, json!({ "ops": destructive, "approved": true }));
    assert_eq!(v["applied"], 3, "{v}");
    assert_eq!(v["opsFile"], "ops/pending/C-0002.yaml");
    let file = OpFile::parse(
        &std::fs::read_to_string(dir.join("ops/pending/C-0002.yaml")).unwrap(),
        Path::new("ops/pending/C-0002.yaml"),
    )
    .unwrap();
    assert!(file.destructive && file.approved);
    assert_eq!(file.ops.len(), 3);
}

#[test]
fn closing_an_issue_with_an_open_dependency_is_refused_as_gitea_refuses_it() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let snapshot = commitea::state::Snapshot::load(&commitea::state::Layout::new(dir)).unwrap();
    let open = |k: &commitea::domain::IssueKey| {
        snapshot
            .issues
            .get(k)
            .is_some_and(|i| i.state == commitea::domain::OpenState::Open)
    };
    // An open issue with exactly one dependency, which is open and depends on nothing open.
    let (key, blocker) = snapshot
        .issues
        .iter()
        .filter(|(k, i)| open(k) && i.depends_on.len() == 1 && open(&i.depends_on[0]))
        .map(|(k, i)| (k.clone(), i.depends_on[0].clone()))
        .find(|(_, b)| snapshot.issues[b].depends_on.iter().all(|d| !open(d)))
        .expect("the demo has such an issue");
    let close =
        |k: &commitea::domain::IssueKey| json!({ "op": "close_issue", "issue": k.to_string() });
    let v = apply(dir, json!({ "ops": [close(&key)], "approved": true }));
    assert_eq!(v["applied"], 0, "{v}");
    let r = reasons(&v);
    assert!(
        r[0].contains(&format!("{key} depends on {blocker}, which is open"))
            && r[0].contains("remove_dep"),
        "{r:?}"
    );
    // Its dependency closed first, or removed first, in the same batch: then it may close.
    let v = apply(
        dir,
        json!({ "ops": [close(&blocker), close(&key)], "approved": true }),
    );
    assert_eq!(v["applied"], 2, "{v}");
    // (That proposal dropped: a second one closing the same issue would be refused as proposed already.)
    std::fs::remove_file(dir.join(v["opsFile"].as_str().unwrap())).unwrap();
    let unlink =
        json!({ "op": "remove_dep", "issue": key.to_string(), "dependsOn": blocker.to_string() });
    let v = apply(
        dir,
        json!({ "ops": [unlink, close(&key)], "approved": true }),
    );
    assert_eq!(v["applied"], 2, "{v}");
}

/// An open issue waiting on `blocker` (a blocker no issue file holds, open): its close is refused with
/// `says` (given the issue's key and the blocker's), then allowed once the blocker is closed.
fn close_waits_for(
    blocker: impl Fn(&commitea::domain::IssueKey) -> commitea::domain::IssueKey,
    says: &str,
) {
    let tmp = demo_dir();
    let dir = tmp.path();
    let layout = commitea::state::Layout::new(dir);
    let mut snapshot = commitea::state::Snapshot::load(&layout).unwrap();
    let (key, issue) = snapshot
        .issues
        .iter_mut()
        .find(|(_, i)| i.state == commitea::domain::OpenState::Open && i.depends_on.is_empty())
        .unwrap();
    let key = key.clone();
    let outside = blocker(&key);
    issue.depends_on.push(outside.clone());
    issue
        .outside_blockers
        .push(commitea::domain::OutsideBlocker {
            issue: outside.clone(),
            state: commitea::domain::OpenState::Open,
        });
    snapshot.save(&layout).unwrap();
    let close =
        json!({ "ops": [{ "op": "close_issue", "issue": key.to_string() }], "approved": true });
    let v = apply(dir, close.clone());
    assert_eq!(v["applied"], 0, "{v}");
    let r = reasons(&v);
    let said = says
        .replace("{key}", &key.to_string())
        .replace("{blocker}", &outside.to_string());
    assert!(r[0].contains(&said), "{said}: {r:?}");
    // Closed there (merged, for a pull request), it may close.
    let mut snapshot = commitea::state::Snapshot::load(&layout).unwrap();
    snapshot.issues.get_mut(&key).unwrap().outside_blockers[0].state =
        commitea::domain::OpenState::Closed;
    snapshot.save(&layout).unwrap();
    assert_eq!(apply(dir, close)["applied"], 1);
}

#[test]
fn closing_an_issue_whose_blocker_is_outside_the_synced_repositories_is_refused_too() {
    // Gitea counts every open blocker (`IssueNoDependenciesLeft`); the check saw only the synced ones, and
    // the approval was spent on a 412 at the run (audit 79).
    close_waits_for(
        |_| "acme/ops#7".parse().unwrap(),
        "{key} depends on {blocker}, which is open (in a repository",
    );
}

/// An issue that waits on an open pull request: Gitea refuses its close (its dependency check joins the
/// issue table, which holds pull requests too), so the check refuses it first, naming the pull request
/// (audit 116: the close was let through, and the approval spent on a 412 at the run).
#[test]
fn closing_an_issue_that_waits_on_an_open_pull_request_is_refused() {
    // A number of the issue's own repository that no issue file holds: a pull request.
    close_waits_for(
        |key| key.repo.issue(9_001),
        "{key} depends on pull request {blocker}, which is open",
    );
}

#[test]
fn a_batch_cannot_build_a_cycle_one_edge_at_a_time() {
    let tmp = demo_dir();
    let v = apply(
        tmp.path(),
        json!({ "ops": [
            { "op": "add_dep", "issue": "acme/web#3", "dependsOn": "acme/web#4" },
            { "op": "add_dep", "issue": "acme/web#4", "dependsOn": "acme/web#3" },
        ] }),
    );
    assert_eq!(v["applied"], 1);
    let r = reasons(&v);
    assert!(
        r[0].contains("acme/web#4 → acme/web#3 → acme/web#4"),
        "{r:?}"
    );
}

#[test]
fn an_op_that_changes_nothing_is_refused_not_filed() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let issue = |k: &str| {
        let snapshot = commitea::state::Snapshot::load(&commitea::state::Layout::new(dir)).unwrap();
        snapshot.issues[&k.parse::<commitea::domain::IssueKey>().unwrap()].clone()
    };
    let api102 = issue("acme/api#102");
    let has = |p: &str| api102.labels.iter().find(|l| l.starts_with(p)).cloned();
    let (Some(estimate), Some(priority)) = (has("est/"), has("p/")) else {
        panic!(
            "acme/api#102 has an estimate and a priority: {:?}",
            api102.labels
        );
    };
    let dep = api102
        .depends_on
        .first()
        .expect("acme/api#102 waits for something")
        .to_string();
    let v = apply(
        dir,
        json!({ "ops": [
            { "op": "set_estimate", "issue": "acme/api#102", "estimate": estimate },
            { "op": "set_priority", "issue": "acme/api#102", "priority": priority },
            { "op": "set_milestone", "issue": "acme/api#102", "milestone": api102.milestone },
            { "op": "add_dep", "issue": "acme/api#102", "dependsOn": dep },
            { "op": "set_priority", "issue": "acme/api#102", "priority": "p/0" },
            { "op": "set_priority", "issue": "acme/api#102", "priority": "p/3" },
            { "op": "create_issue", "title": "Dark mode", "repo": "acme/web" },
            // Twice in one call: two issues of one name (audit 91).
            { "op": "create_issue", "title": "  Dark mode  ", "repo": "acme/web" },
        ] }),
    );
    assert_eq!(v["applied"], 2, "{v}");
    let r = reasons(&v);
    assert_eq!(r.len(), 6, "{r:?}");
    assert!(
        r[5].contains("op 7 of this call already files a new issue titled \"Dark mode\" there"),
        "{r:?}"
    );
    for (i, what) in [
        "set the estimate of acme/api#102",
        "set the priority of acme/api#102",
        "move acme/api#102 to milestone",
        "make acme/api#102 wait for",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            r[i].starts_with("nothing to change: Gitea already has it") && r[i].contains(what),
            "{r:?}"
        );
    }
    assert!(
        r[4].contains("op 5 of this call already changes the priority of acme/api#102"),
        "{r:?}"
    );
    let file = std::fs::read_to_string(dir.join("ops/pending/C-0001.yaml")).unwrap();
    assert!(file.contains("p/0") && !file.contains("p/3"), "{file}");

    // The same call again, as a retry after a timeout would: C-0001 already proposes it all.
    let again = apply(
        dir,
        json!({ "ops": [
            { "op": "set_priority", "issue": "acme/api#102", "priority": "p/0" },
            { "op": "create_issue", "title": " Dark mode ", "repo": "acme/web" },
        ] }),
    );
    assert_eq!(again["applied"], 0, "{again}");
    let r = reasons(&again);
    assert!(
        r.iter()
            .all(|x| x.starts_with("C-0001 (ops/pending/C-0001.yaml) already proposes")),
        "{r:?}"
    );
    assert!(!dir.join("ops/pending/C-0002.yaml").exists());
    // The same title in another repository is another issue.
    let other = apply(
        dir,
        json!({ "ops": [{ "op": "create_issue", "title": "Dark mode", "repo": "acme/api" }] }),
    );
    assert_eq!(other["applied"], 1, "{other}");
}

#[test]
fn an_accepted_call_writes_one_op_file_with_its_consequence_and_it_round_trips() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let v = apply(
        dir,
        json!({ "ops": [
            { "op": "create_issue", "title": "Dark mode", "body": "Users ask for it.", "labels": ["est/3d", "p/1"], "milestone": 4, "repo": "acme/api", "deps": ["acme/api#102"] },
            { "op": "set_estimate", "issue": "acme/api#102", "estimate": "2w" },
            { "op": "set_milestone", "issue": "acme/web#3", "milestone": 2 },
            { "op": "set_deadline_hard", "milestone": 4, "hard": true },
            { "op": "add_dep", "issue": "acme/web#3", "dependsOn": "acme/web#4" },
        ] }),
    );
    assert_eq!(v["applied"], 5, "{v}");
    assert!(v.get("rejected").is_none());
    let consequence = v["consequence"].as_str().unwrap();
    assert!(
        !consequence.is_empty() && consequence != "no forecast change",
        "{consequence}"
    );
    let rel = Path::new("ops/pending/C-0001.yaml");
    let text = std::fs::read_to_string(dir.join(rel)).unwrap();
    let file = OpFile::parse(&text, rel).unwrap();
    assert_eq!(
        file.render(rel).unwrap(),
        text,
        "the op file round-trips byte for byte"
    );
    assert_eq!(file.id, "C-0001");
    assert_eq!(file.by.as_deref(), Some("pat"));
    assert_eq!(file.created_at, "2026-11-20T09:30:00Z");
    assert_eq!(file.summary, consequence);
    assert!(!file.consequence.is_empty());
    // The estimate is normalised to its label, issues to full keys.
    assert!(text.contains("estimate: est/2w"), "{text}");
    assert!(text.contains("issue: acme/web#3"), "{text}");
    insta::assert_snapshot!("op_file", text);
    // Nothing else changed: the snapshot and the ledger are as they were.
    let again = demo_dir();
    for f in [
        "pm-state.md",
        "snapshot/issues/acme/api/102.yaml",
        "snapshot/milestones.yaml",
    ] {
        assert_eq!(
            std::fs::read(dir.join(f)).unwrap(),
            std::fs::read(again.path().join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn the_issue_view_says_when_an_issue_is_scheduled_above_its_own_priority() {
    let v = query("issue", json!({"issueId": "acme/api#46"}));
    // Its label says p/3; the work that waits for it (acme/api#77) is more urgent, and the scheduler
    // takes it at that priority.
    assert_eq!(v["derived"]["priority"], "p/3", "{v}");
    let scheduled = v["derived"]["scheduledPriority"].as_str().unwrap();
    assert!(["p/0", "p/1", "p/2"].contains(&scheduled), "{v}");
    // An issue at its own priority says nothing more.
    let v = query("issue", json!({"issueId": "acme/api#102"}));
    assert!(v["derived"].get("scheduledPriority").is_none(), "{v}");
}

#[test]
fn the_issue_view_keeps_gitea_s_milestone_and_says_a_directive_scoped_it_out() {
    let tmp = demo_dir();
    let out = commitea::ledger::record::record_directive(
        tmp.path(),
        &commitea::ledger::record::RecordInput {
            kind: "scope".into(),
            quote: "Bulk ops are out of v2.".into(),
            target: Some(commitea::ledger::record::RecordTarget {
                issue: Some("acme/api#102".into()),
                ..Default::default()
            }),
            params: Some(json!({"in": false})),
            rationale: None,
            by: None,
        },
        &commitea::ledger::record::RecordOptions::new(clock(), vec![]),
    );
    assert!(out.is_ok(), "{out:?}");
    let v = tools::call(
        &ctx(tmp.path()),
        "query_project",
        &json!({"view": "issue", "filters": {"issueId": "acme/api#102"}}),
    )
    .unwrap();
    // What people wrote in Gitea stays; what the plan made of it is said beside it.
    let gitea = v["intent"]["milestone"]["id"].as_u64();
    assert!(gitea.is_some(), "{v}");
    assert_eq!(v["derived"]["scopedOutOf"]["id"].as_u64(), gitea, "{v}");
}

#[test]
fn apply_changes_is_deterministic() {
    let input =
        json!({ "ops": [{ "op": "set_priority", "issue": "acme/api#102", "priority": "p/0" }] });
    let a = demo_dir();
    let b = demo_dir();
    let va = apply(a.path(), input.clone());
    let vb = apply(b.path(), input);
    assert_eq!(va, vb);
    assert_eq!(
        std::fs::read(a.path().join("ops/pending/C-0001.yaml")).unwrap(),
        std::fs::read(b.path().join("ops/pending/C-0001.yaml")).unwrap()
    );
}

#[test]
fn record_directive_through_the_tool_and_the_directives_view() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let v = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({
            "kind": "reprioritize",
            "quote": "Idempotency keys first, the bank is waiting.",
            "target": { "issue": "acme/api#102" },
            "params": { "priority": 0 }
        }),
    )
    .unwrap();
    assert_valid_output("record_directive", &v);
    let id = v["directiveId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("D-"));
    assert!(v["summary"].is_string());
    // The day its dates are as of (audit 122: p80s in the past, with nothing to say why).
    let as_of =
        tools::call(&ctx(dir), "query_project", &json!({ "view": "runway" })).unwrap()["asOf"]
            .clone();
    assert_eq!(v["asOf"], as_of, "{v}");
    let second = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({ "kind": "note", "quote": "Bank demo on Friday." }),
    )
    .unwrap();
    let id2 = second["directiveId"].as_str().unwrap().to_owned();
    let d = tools::call(
        &ctx(dir),
        "query_project",
        &json!({ "view": "directives", "filters": { "limit": 1 } }),
    )
    .unwrap();
    assert_eq!(
        d["pending"]["id"],
        id.as_str(),
        "the note proposes no Gitea change"
    );
    let recent = d["recent"].as_array().unwrap();
    assert_eq!(recent.len(), 1, "the limit keeps the newest: {d}");
    assert_eq!(recent[0]["id"], id2.as_str());
    // The reprioritisation it cuts is in force: still in sight (audit 91: in no list and no count).
    assert_eq!(d["earlierInForce"][0]["id"], id.as_str(), "{d}");
    let all = tools::call(&ctx(dir), "query_project", &json!({ "view": "directives" })).unwrap();
    assert_eq!(all["recent"].as_array().unwrap().len(), 2);
    // A field error is an input error naming the field.
    let e = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({ "kind": "reprioritize", "quote": "x", "target": { "issue": "acme/api#102" }, "params": { "priority": 9 } }),
    )
    .unwrap_err();
    match e {
        ToolError::Invalid { path, .. } => assert_eq!(path, "/params"),
        e => panic!("{e}"),
    }
}

#[test]
fn the_directives_view_lists_the_pending_changes_and_the_directives_given_since() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let v = apply(
        dir,
        json!({ "ops": [{ "op": "set_priority", "issue": "acme/api#102", "priority": "p/1" }] }),
    );
    let file = v["opsFile"].as_str().unwrap();
    let id = file
        .trim_start_matches("ops/pending/")
        .trim_end_matches(".yaml");
    let view =
        || tools::call(&ctx(dir), "query_project", &json!({ "view": "directives" })).unwrap();
    let before = view();
    let listed = &before["proposedChanges"][0];
    assert_eq!(listed["id"], id, "{before}");
    assert_eq!(listed["summary"], v["consequence"], "{before}");
    assert_eq!(listed["ops"], 1, "{before}");
    assert!(listed.get("directivesSince").is_none(), "{before}");
    // A directive given an hour later: the file's consequence was computed without it.
    let later = Context {
        clock: Some(clock() + chrono::Duration::hours(1)),
        ..ctx(dir)
    };
    let d = tools::call(
        &later,
        "record_directive",
        &json!({ "kind": "reprioritize", "quote": "Rate limits first.", "target": { "issue": "acme/api#121" }, "params": { "priority": 0 } }),
    )
    .unwrap();
    // A note given since changes no forecast: not listed.
    tools::call(
        &later,
        "record_directive",
        &json!({ "kind": "note", "quote": "Bank demo on Friday." }),
    )
    .unwrap();
    let after = view();
    assert_eq!(
        after["proposedChanges"][0]["directivesSince"],
        json!([d["directiveId"]]),
        "{after}"
    );
    // A year of directives since is counted past the first few (audit 145: 2,000 ids filled the answer).
    let mut ids = vec![d["directiveId"].clone()];
    for due in ["2027-01-22", "2027-01-29", "2027-02-05"] {
        let d = tools::call(
            &later,
            "record_directive",
            &json!({ "kind": "set-deadline", "quote": format!("Mobile ships by {due}."), "target": { "milestone": 3 }, "params": { "due": due } }),
        )
        .unwrap();
        ids.push(d["directiveId"].clone());
    }
    let after = view();
    let listed = &after["proposedChanges"][0];
    ids.reverse();
    assert_eq!(listed["directivesSince"], json!(ids[..3]), "{after}");
    assert_eq!(listed["directivesSinceOmitted"], 1, "{after}");
}

#[test]
fn standup_reports_drift_against_the_last_committed_forecast() {
    let tmp = demo_dir();
    let dir = tmp.path();
    // Commits `paths` (all when empty) as the PM.
    let commit = |message: &str, paths: &[&str]| {
        let mut args = vec![
            "-c",
            "user.name=pat",
            "-c",
            "user.email=pat@example.com",
            "commit",
            "-qm",
            message,
        ];
        if paths.is_empty() {
            args.push("-a");
        }
        args.extend_from_slice(paths);
        crate::pipeline::git(dir, &args);
    };
    // The state is imported as `commitea demo` does, the settings with it.
    crate::pipeline::git(dir, &["init", "-q"]);
    crate::pipeline::git(dir, &["add", "-A"]);
    commit("Import", &[]);
    commitea::pipeline::run(&run_options(dir)).unwrap();
    let before = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    assert!(
        before["drift"]["since"].is_null(),
        "nothing differs yet: {}",
        before["drift"]
    );
    tools::call(
        &ctx(dir),
        "record_directive",
        &json!({
            "kind": "scope",
            "quote": "Drop the webhooks from API v2.",
            "target": { "milestone": 4 },
            "params": { "remove": ["acme/api#102"] }
        }),
    )
    .ok();
    let recorded = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({
            "kind": "reprioritize",
            "quote": "Idempotency keys first.",
            "target": { "issue": "acme/api#102" },
            "params": { "priority": 0 }
        }),
    )
    .unwrap();
    // The directives are committed on their own, as a merged proposal is: that commit carries the
    // forecast along, and the drift still names the commit that wrote it.
    let forecast_commit = crate::pipeline::git(dir, &["rev-parse", "--short=12", "HEAD"]);
    // Not committed yet: the forecast the tools answer is the checkout's, and so are the directives
    // said to be behind its moves (they were read from the branch, and the moves blamed on the issues).
    let unsaved = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    let ids = unsaved["drift"]["sinceThen"]["directives"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        ids.contains(&recorded["directiveId"]),
        "{}",
        unsaved["drift"]
    );
    // A render forecasts the ledger on the branch, without them: its standup names none of them.
    let out = crate::cli::commitea(&["render", "-s", dir.to_str().unwrap()], dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let standup = std::fs::read_to_string(dir.join("public/standup.html")).unwrap();
    let id = recorded["directiveId"].as_str().unwrap();
    assert!(standup.contains("What moved since"), "{standup}");
    assert!(!standup.contains(id), "{standup}");
    commit("Record the PM's directives", &[]);
    let after = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    assert_valid_output("query_project", &after);
    let drift = &after["drift"];
    assert_eq!(drift["since"], forecast_commit.trim(), "{drift}");
    // What changed since: the directives committed after that forecast, and no issue closed or opened.
    let since_then = &drift["sinceThen"];
    let ids = since_then["directives"].as_array().unwrap();
    assert!(
        ids.contains(&recorded["directiveId"]),
        "{since_then} {recorded}"
    );
    assert_eq!(since_then["closed"], 0, "{since_then}");
    assert_eq!(since_then["new"], 0, "{since_then}");
    assert_eq!(since_then["settingsChanged"], false, "{since_then}");
    assert!(since_then.get("ended").is_none(), "{since_then}");
    // A changed setting is said; an edited comment is not a change of settings.
    let commit_config = |text: &str, message: &str| {
        std::fs::write(dir.join("commitea.yaml"), text).unwrap();
        commit(message, &["commitea.yaml"]);
        let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
        v["drift"]["sinceThen"]["settingsChanged"].clone()
    };
    let config = std::fs::read_to_string(dir.join("commitea.yaml")).unwrap();
    assert_eq!(
        commit_config(&format!("# A note.\n{config}"), "A comment"),
        false
    );
    assert!(config.contains("hours_per_week: 30"), "{config}");
    assert_eq!(
        commit_config(
            &config.replacen("hours_per_week: 30", "hours_per_week: 12", 1),
            "Fewer hours"
        ),
        true
    );
    // Fewer hours on a person's calendar: their work moves for that, whatever the calibration re-measured
    // of its remaining effort on the way (an audit saw a capacity cut put down to "calibration").
    let v = tools::call(
        &ctx(dir),
        "query_project",
        &json!({ "view": "standup", "filters": { "limit": 100 } }),
    )
    .unwrap();
    let moved_now = v["drift"]["issues"].as_array().unwrap();
    let whys: std::collections::BTreeSet<&str> =
        moved_now.iter().filter_map(|m| m["why"].as_str()).collect();
    // Every move of her work says her hours, beside the work that came ahead of it in her queue (the
    // directives since put #102 first), first where her hours alone make half the move (audit 123);
    // none is put down to the calibration.
    assert!(!whys.is_empty());
    assert!(
        whys.iter()
            .all(|w| w.ends_with("capacity of amara") || w.starts_with("capacity of amara; ")),
        "{whys:?}"
    );
    // Her hours are no directive: a move for them alone names none.
    for m in moved_now.iter().filter(|m| m["why"] == "capacity of amara") {
        assert!(m.get("directives").is_none(), "{m}");
    }
    // Only an issue with activity on or after the day the forecast before was made as of may claim a
    // change of its own (time logged on it moves it too).
    let as_of = v["drift"]["sinceAsOf"].as_str().unwrap();
    for m in moved_now.iter().filter(|m| m["why"] == "own change") {
        let key: commitea::domain::IssueKey = m["subject"].as_str().unwrap().parse().unwrap();
        let file = dir.join(format!("snapshot/issues/{}/{}.yaml", key.repo, key.number));
        let text = std::fs::read_to_string(&file).unwrap();
        let updated = text
            .lines()
            .find_map(|l| l.strip_prefix("updated_at: "))
            .unwrap();
        assert!(
            updated[..10] >= *as_of,
            "{key} updated {updated}, before {as_of}"
        );
    }
    assert!(drift["issuesMoved"].as_u64().unwrap() > 0, "{drift}");
    let moved = drift["issues"].as_array().unwrap();
    assert!(moved.iter().any(|m| m["moved"].as_i64().unwrap() != 0));
    // Each moved issue says why, in the consequence diff's words.
    let why = |key: &str| {
        moved
            .iter()
            .find(|m| m["subject"] == key)
            .map(|m| m["why"].as_str().unwrap_or_default().to_owned())
    };
    assert!(moved.iter().all(|m| m["why"].is_string()), "{drift}");
    // The reprioritised issue changed itself; the chain it waits on moved for it: #77 inherits its
    // priority from #102, and #46, which #77 waits on, from #77.
    assert_eq!(
        why("acme/api#102").as_deref(),
        Some("own change"),
        "{drift}"
    );
    assert_eq!(
        why("acme/api#77").as_deref(),
        Some("blocks acme/api#102"),
        "{drift}"
    );
    assert_eq!(
        why("acme/api#46").as_deref(),
        Some("blocks acme/api#77"),
        "{drift}"
    );
    // Each person's plan and the stale blockers are there.
    assert!(!after["people"].as_array().unwrap().is_empty());
    assert!(after["staleBlockers"].is_array());
    // Marks the directive `id` withdrawn in the ledger, as a PM's edit does.
    let withdraw = |id: &str| {
        let ledger = std::fs::read_to_string(dir.join("pm-state.md")).unwrap();
        let at = ledger.find(&format!("## {id}")).unwrap();
        let status = at + ledger[at..].find("- status: active").unwrap();
        std::fs::write(
            dir.join("pm-state.md"),
            format!(
                "{}- status: withdrawn{}",
                &ledger[..status],
                &ledger[status + "- status: active".len()..]
            ),
        )
        .unwrap();
    };
    // A directive in force in a committed forecast and withdrawn since is said too.
    commitea::pipeline::run(&run_options(dir)).unwrap();
    let id = recorded["directiveId"].as_str().unwrap();
    withdraw(id);
    commit("Withdraw one", &["pm-state.md"]);
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    assert_eq!(
        v["drift"]["sinceThen"]["ended"],
        json!([format!("{id} withdrawn")]),
        "{}",
        v["drift"]
    );
    // The issue it was about moved back, and its move names the directive.
    let back = v["drift"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["subject"] == "acme/api#102")
        .unwrap_or_else(|| panic!("{}", v["drift"]));
    assert_eq!(
        back["directives"],
        json!([format!("{id} withdrawn")]),
        "{back}"
    );
    // So do the moves that came from its move, followed to it: #77 blocks #102, #46 blocks #77; and
    // every move that says it blocks or waits on a moved issue names what that issue names.
    let moves = v["drift"]["issues"].as_array().unwrap();
    let named = |key: &str| {
        moves
            .iter()
            .find(|m| m["subject"] == key)
            .map(|m| m["directives"].clone())
    };
    for key in ["acme/api#77", "acme/api#46"] {
        assert_eq!(
            named(key),
            Some(json!([format!("{id} withdrawn")])),
            "{key}: {}",
            v["drift"]
        );
    }
    for m in moves {
        let why = m["why"].as_str().unwrap();
        let from = why
            .strip_prefix("blocks ")
            .or_else(|| why.strip_prefix("waits on "));
        if let Some(from) = from
            && let Some(theirs) = named(from)
        {
            assert_eq!(m["directives"], theirs, "{m} {}", v["drift"]);
        }
    }
    // The priority the withdrawal put back is the directive's doing, not an edit on Gitea.
    assert!(
        v["drift"]["sinceThen"].get("edited").is_none(),
        "{}",
        v["drift"]
    );
    // A re-estimate on Gitea (as a sync brings it) is said, beside the directives: an audit's PM was
    // left to blame their own directives for a slip the team's re-estimate made.
    commitea::pipeline::run(&run_options(dir)).unwrap();
    let issues = dir.join("snapshot/issues/acme/web");
    let (file, text) = std::fs::read_dir(&issues)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap()))
        .find(|(_, t)| t.contains("state: open") && t.contains("- est/1d\n"))
        .unwrap();
    std::fs::write(&file, text.replace("- est/1d\n", "- est/1w\n")).unwrap();
    // And another sent to diagnosis by a label, which the standup said nothing of (audit 163).
    let forecast: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let steeping = forecast["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| {
            i["lifecycle"] == "steeping" && i["issue"].as_str().unwrap().starts_with("acme/api#")
        })
        .map(|i| {
            i["issue"]
                .as_str()
                .unwrap()
                .trim_start_matches("acme/api#")
                .to_owned()
        })
        .unwrap();
    let other = dir.join(format!("snapshot/issues/acme/api/{steeping}.yaml"));
    let text = std::fs::read_to_string(&other).unwrap();
    assert!(text.contains("labels:\n"), "{text}");
    // Reassigned as well: the label's move is a column's all the same (audit 165).
    let someone = if text.contains("- chen\n") {
        "dana"
    } else {
        "chen"
    };
    let text = text.replacen("labels:\n", "labels:\n- needs-info\n", 1);
    let text = match text.find("assignees:\n- ") {
        Some(at) => {
            let start = at + "assignees:\n- ".len();
            let end = start + text[start..].find('\n').unwrap();
            format!("{}{someone}{}", &text[..start], &text[end..])
        }
        None => text.replacen(
            "labels:\n",
            &format!("assignees:\n- {someone}\nlabels:\n"),
            1,
        ),
    };
    std::fs::write(&other, text).unwrap();
    commit("A re-estimate on Gitea", &[]);
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    let since = &v["drift"]["sinceThen"];
    let mut edited = since["edited"].clone();
    // Named one by one too, being few (audit 193).
    let named = edited["named"].take();
    assert_eq!(
        edited,
        json!({"reestimated": 1, "reprioritised": 0, "reassigned": 1, "milestone": 0, "columns": 1, "named": null}),
        "{since}"
    );
    let named: Vec<String> = serde_json::from_value(named).unwrap();
    assert!(
        named.len() == 2
            && named.iter().any(|n| n.contains(" re-estimated 1d → "))
            && named
                .iter()
                .any(|n| n == &format!("acme/api#{steeping} assigned to {someone}")),
        "{named:?}"
    );
    let key = format!("acme/web#{}", file.file_stem().unwrap().to_str().unwrap());
    let its = v["drift"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["subject"] == key.as_str())
        .unwrap_or_else(|| panic!("{key}: {}", v["drift"]));
    assert_eq!(its["why"], "own change", "{its}");
    // A directive recorded and withdrawn since the forecast compared with is said as both.
    let noted = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({ "kind": "note", "quote": "Maybe freeze on Fridays." }),
    )
    .unwrap();
    let id = noted["directiveId"].as_str().unwrap();
    withdraw(id);
    commit("Note, withdrawn", &["pm-state.md"]);
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    assert_eq!(
        v["drift"]["sinceThen"]["directives"],
        json!([format!("{id} withdrawn")]),
        "{}",
        v["drift"]
    );
    // A working day later with nothing done: said in what changed, and by the first work in a queue
    // that moved for it (an audit's PM saw a hundred queue moves under "nothing recorded").
    commitea::pipeline::run(&run_options(dir)).unwrap();
    let (next, v) = standup_a_working_day_later(dir);
    assert_eq!(v["asOf"], next.to_string(), "{}", v["drift"]);
    assert_eq!(
        v["drift"]["sinceThen"]["workingDaysPassed"], 1,
        "{}",
        v["drift"]
    );
    // A due date moved by a PM: the p80 holds, the chance of meeting it does not, and the standup says so.
    commitea::pipeline::run(&run_options(dir)).unwrap();
    let before = tools::call(&ctx(dir), "query_project", &json!({ "view": "runway" })).unwrap();
    let m = before["milestones"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["due"].is_string() && m["probabilityOnTime"].as_f64().is_some_and(|p| p < 0.9))
        .unwrap()
        .clone();
    let due: chrono::NaiveDate = m["due"].as_str().unwrap().parse().unwrap();
    let later = due + chrono::Duration::days(182);
    tools::call(
        &ctx(dir),
        "record_directive",
        &json!({
            "kind": "set-deadline",
            "quote": "Six more months, partners agreed.",
            "target": { "milestone": m["milestone"] },
            "params": { "due": later.to_string() }
        }),
    )
    .unwrap();
    commit("Move a due date", &[]);
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    let moved = v["drift"]["milestones"].as_array().unwrap();
    let it = moved
        .iter()
        .find(|x| x["subject"] == m["title"])
        .unwrap_or_else(|| panic!("{} not in {moved:?}", m["title"]));
    let changed = it["changed"].as_str().unwrap();
    assert!(
        changed.starts_with(&format!("due {due} → {later}, P(on time) ")),
        "{changed}"
    );
}

#[test]
fn standup_says_when_someone_idle_has_not_started_yet() {
    // The demo's new hire (gus) starts after day 0: idle in the next working days, and why.
    let v = query("standup", json!({ "assignee": "gus" }));
    let gus = &v["people"][0];
    assert_eq!(gus["person"], "gus", "{v}");
    assert_eq!(gus["idle"], true, "{v}");
    assert_eq!(gus["starts"], "2026-12-07", "{v}");
    // Someone who has started says nothing of it.
    let v = query("standup", json!({ "assignee": "amara" }));
    assert!(v["people"][0].get("starts").is_none(), "{v}");
}

#[test]
fn standup_stale_blockers_follow_the_configured_days() {
    let lax = query("standup", json!({ "limit": 100 }));
    let n_default = lax["staleBlockers"].as_array().unwrap().len();
    for b in lax["staleBlockers"].as_array().unwrap() {
        assert!(b["idleDays"].as_i64().unwrap() >= 5);
        assert!(!b["blocks"].as_array().unwrap().is_empty());
    }
    let mut c = ctx(shared());
    c.env
        .push(("COMMITEA_STANDUP_STALE_DAYS".into(), "1".into()));
    let strict = tools::call(
        &c,
        "query_project",
        &json!({ "view": "standup", "filters": { "limit": 100 } }),
    )
    .unwrap();
    let n_strict = strict["staleBlockers"].as_array().unwrap().len();
    assert!(
        n_strict >= n_default && n_strict > 0,
        "{n_strict} vs {n_default}"
    );
}

#[test]
fn a_forecast_committed_in_the_earlier_format_reports_no_milestone_move_by_itself() {
    // The demo with the abandonment model on: its milestones' headlines are the work that stays.
    let tmp = demo_dir();
    let dir = tmp.path();
    abandonment_model_on(dir);
    let commit = |message: &str| crate::pipeline::commit_all_as_pm(dir, false, message);
    crate::pipeline::git(dir, &["init", "-q"]);
    commit("Import");
    commitea::pipeline::run(&run_options(dir)).unwrap();
    // HEAD's forecast as a build before the headline change wrote it: the planned scope as the cone,
    // the work that stays beside it as `staying`, and its own inputs key.
    let path = dir.join("forecast/forecast.json");
    let mut forecast: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut rewritten = 0;
    for m in forecast["milestones"].as_array_mut().unwrap() {
        let m = m.as_object_mut().unwrap();
        if let Some(planned) = m.remove("planned") {
            let staying = json!({ "p10": m["p10"], "p50": m["p50"], "p80": m["p80"] });
            for q in ["p10", "p50", "p80"] {
                m.insert(q.to_owned(), planned[q].clone());
            }
            m.insert("staying".to_owned(), staying);
            m.remove("staying_done");
            rewritten += 1;
        }
    }
    assert!(
        rewritten > 0,
        "the model gives a planned scope beside the headline"
    );
    forecast["inputs"] = json!("an earlier build's key");
    std::fs::write(&path, serde_json::to_vec_pretty(&forecast).unwrap()).unwrap();
    commit("A forecast of the earlier format");
    // The next run computes the same forecast in today's format: a commit, but no milestone moved.
    commitea::pipeline::run(&run_options(dir)).unwrap();
    let message = crate::pipeline::git(dir, &["log", "-1", "--format=%B"]);
    assert!(message.starts_with("commitea: forecast as of"), "{message}");
    assert!(!message.lines().any(|l| l.starts_with("- ")), "{message}");
}

#[test]
fn a_what_if_given_a_moment_starts_from_the_day_zero_every_reader_takes() {
    // `--now D` on the day of the sync: the run, `plan` and `query_project` forecast from the snapshot's
    // moment; a what-if took D's midnight as given, so with the abandonment model on its "before" was
    // not the committed forecast, nor its "after" what the run committed once approved (audit 177).
    let tmp = demo_dir();
    let dir = tmp.path();
    abandonment_model_on(dir);
    crate::pipeline::git(dir, &["init", "-q"]);
    crate::pipeline::commit_all_as_pm(dir, false, "Import");
    commitea::pipeline::run(&run_options(dir)).unwrap();
    let committed: Value =
        serde_json::from_slice(&std::fs::read(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let synced_at = commitea::state::Snapshot::load(&commitea::state::Layout::new(dir))
        .unwrap()
        .meta
        .synced_at;
    let midnight = synced_at
        .date_naive()
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    for given in [midnight, synced_at - chrono::Duration::hours(1)] {
        let ctx = Context {
            as_of: Some(given),
            ..ctx(dir)
        };
        let v = tools::call(
            &ctx,
            "apply_changes",
            &json!({ "ops": [{ "op": "set_priority", "issue": "acme/api#102", "priority": "p/0" }], "preview": true }),
        )
        .unwrap();
        crate::support::milestones_before_are(&v["detail"], &committed);
    }
}

#[test]
fn the_tools_reuse_their_last_forecast_until_what_it_was_computed_from_changes() {
    use std::sync::Arc;
    let tmp = demo_dir();
    let dir = tmp.path();
    crate::pipeline::commit_all_as_pm(dir, true, "Import");
    let ctx = ctx(dir);
    let first = commitea::tools::query::compute(&ctx).unwrap();
    // Another view of the same state: the same forecast, not a second one.
    let again = commitea::tools::query::compute(&ctx).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    // A directive recorded through the same context is in the next forecast.
    tools::call(
        &ctx,
        "record_directive",
        &json!({"kind": "reprioritize", "quote": "Idempotency keys first.",
            "target": {"issue": "acme/api#102"}, "params": {"priority": 0}}),
    )
    .unwrap();
    let after = commitea::tools::query::compute(&ctx).unwrap();
    assert!(!Arc::ptr_eq(&first, &after));
    let key: commitea::domain::IssueKey = "acme/api#102".parse().unwrap();
    let priority = |c: &commitea::pipeline::Computed| c.plan.issue(&key).unwrap().priority.label();
    assert_eq!(priority(&after), "p/0");
    assert_ne!(priority(&first), "p/0");
    // So is an issue file changed by a sync (or by hand).
    let file = dir.join("snapshot/issues/acme/api/102.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let renamed: String = text
        .lines()
        .map(|l| {
            if l.starts_with("title: ") {
                "title: Renamed by a sync\n".to_owned()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&file, renamed).unwrap();
    let synced = commitea::tools::query::compute(&ctx).unwrap();
    assert!(!Arc::ptr_eq(&after, &synced));
    assert!(
        synced.snapshot.issues[&key].title.starts_with("Renamed "),
        "{}",
        synced.snapshot.issues[&key].title
    );
}

#[test]
fn work_most_futures_leave_undone_says_so_in_the_focus_and_on_the_persons_page() {
    // With the abandonment model on, the demo's stale backlog has issues most futures never do; where
    // such an issue is next in a queue, the focus and the person's page give the chance it is done at
    // all, not only "beyond the horizon".
    let dir = demo_dir();
    abandonment_model_on(dir.path());
    crate::toolcli::commitea_ok(dir.path(), &["render", "--trials", "300"]);
    let row = std::fs::read_dir(dir.path().join("public/people"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find_map(|p| {
            let page = std::fs::read_to_string(&p).unwrap();
            let row = page
                .split("<tr>")
                .find(|r| r.contains("<span class=\"muted\">(done within 1 year in "))?
                .to_owned();
            Some(row)
        })
        .expect("a person page gives the chance beside an issue");
    // So do the standup's next working days, where that work is planned next: its dates are the plan's,
    // should it be done (audit 104 read "planned for tomorrow" beside "done within 1 year in 14%" as a
    // contradiction).
    let standup = std::fs::read_to_string(dir.path().join("public/standup.html")).unwrap();
    let next = standup.split("id=\"next-title\"").nth(1).unwrap();
    assert!(
        next.contains("% of the futures</span></li>")
            && next.contains(", if it is done: done within 1 year in only "),
        "{next}"
    );
    // The issue's focus rationale names the chance too.
    let key = row
        .split("\">")
        .nth(2)
        .and_then(|s| s.split('<').next())
        .unwrap();
    let computed = tools::query::compute(&ctx(dir.path())).unwrap();
    let issue = computed
        .plan
        .issues
        .iter()
        .find(|i| i.key.to_string() == key)
        .unwrap_or_else(|| panic!("{key} from {row}"));
    let f = computed
        .report
        .issues
        .iter()
        .find(|f| f.issue == issue.key)
        .unwrap();
    let window = computed.report.abandonment.as_ref().unwrap().window_days;
    let why = commitea::views::focus::rationale(
        issue,
        f,
        &[],
        &Default::default(),
        &Default::default(),
        window,
    );
    assert!(
        why.contains("done within 1 year in only ") && why.contains("% of the simulated futures"),
        "{why}"
    );
    // Its page gives the plan's days beside the range, and says why the range falls far past them.
    let (repo, number) = key.rsplit_once('#').unwrap();
    let page = std::fs::read_to_string(
        dir.path()
            .join(format!("public/issues/{repo}/{number}.html")),
    )
    .unwrap();
    // The chance is said with its window ("done at all" left it unsaid).
    assert!(page.contains("<dt>P(done within 1 year)</dt>"), "{page}");
    let planned = format!("{} – {}", f.planned_start, f.planned_end);
    assert!(
        page.contains(&format!(
            "<dt>In the median plan</dt><dd class=\"band\">{planned}</dd>"
        )),
        "{key}: {planned}"
    );
    assert!(
        page.contains(&format!(
            "The schedule has it worked on {planned}, but in this project"
        )) && page.contains("more often left undone than done"),
        "{key}"
    );
    // An issue likely done gets the plan's days and no such note.
    let likely = computed
        .report
        .issues
        .iter()
        .find(|g| g.probability_done.is_some_and(|p| p > 0.9))
        .expect("an issue likely done");
    let (repo, number) = (likely.issue.repo.to_string(), likely.issue.number);
    let page = std::fs::read_to_string(
        dir.path()
            .join(format!("public/issues/{repo}/{number}.html")),
    )
    .unwrap();
    assert!(
        page.contains("<dt>In the median plan</dt>"),
        "{}",
        likely.issue
    );
    assert!(!page.contains("more often left undone"), "{}", likely.issue);
    // One whose p50 is before the plan's first day (work ahead of it is often never done) says why.
    use commitea::forecast::When;
    let sooner = computed
        .report
        .issues
        .iter()
        .find(|g| matches!((g.p50, g.planned_start), (When::Date(a), When::Date(b)) if a < b))
        .expect("an issue forecast sooner than its plan");
    let page = std::fs::read_to_string(dir.path().join(format!(
        "public/issues/{}/{}.html",
        sooner.issue.repo, sooner.issue.number
    )))
    .unwrap();
    assert!(
        page.contains("Its p50 is earlier than the days the plan gives it"),
        "{}",
        sooner.issue
    );
}

#[test]
fn a_hard_deadline_at_risk_is_warned_of_whether_or_not_a_cut_would_meet_it() {
    // With the abandonment model on, the headline is the work that stays, timed by the closing pace:
    // a hard date the schedule meets can still be missed at p80 (audit 64: no word of it), and a cut
    // line's chance is the schedule's, not the headline's (audit 68: read as one).
    let dir = demo_dir();
    abandonment_model_on(dir.path());
    let milestones = dir.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&milestones).unwrap();
    let edited = text.replace(
        "  description: 'The next major version: cursor pagination, consistent errors, webhooks v2.'\n  state: open\n  due_on: 2027-04-30T23:59:59Z",
        "  description: |-\n    The next major version.\n\n    deadline/hard\n  state: open\n  due_on: 2027-06-30T23:59:59Z",
    );
    assert_ne!(edited, text);
    std::fs::write(&milestones, edited).unwrap();
    let computed = tools::query::compute(&ctx(dir.path())).unwrap();
    let warnings = &computed.report.warnings;
    let api = computed
        .report
        .milestones
        .iter()
        .find(|m| m.id == 4)
        .unwrap();
    assert!(api.hard && api.cut_line.is_none(), "{api:?}");
    let said = warnings
        .iter()
        .find(|w| w.starts_with("Public API v2: the hard deadline 2027-06-30 is not met at p80 ("))
        .unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(
        said.contains("though the schedule meets it")
            && said.contains("the schedule offers no cut line"),
        "{said}"
    );
    // Only the date can move, and the day the forecast meets is named (audit 166: "start its work
    // sooner" of work the schedule starts today).
    assert!(
        !said.contains("start its work sooner") && said.contains("; move the date (to 20"),
        "{said}"
    );
    let eaa = warnings
        .iter()
        .find(|w| w.starts_with("Accessibility compliance (EAA): the hard deadline"))
        .unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(
        eaa.contains("would meet it with the work kept committed and done (")
            && eaa.contains("counts the issues expected to leave as gone"),
        "{eaa}"
    );
}

#[test]
fn a_change_of_the_forecasts_settings_is_the_reason_for_the_moves_it_made() {
    // The abandonment model switched on in commitea.yaml moves most issues; no queue or day passed is
    // the reason (audit 68: 150 moves put down to queues).
    let tmp = committed_demo();
    let dir = tmp.path();
    abandonment_model_on(dir);
    crate::pipeline::commit_all_as_pm(dir, false, "The abandonment model on");
    let v = tools::call(
        &ctx(dir),
        "query_project",
        &json!({ "view": "standup", "filters": { "limit": 100 } }),
    )
    .unwrap();
    let drift = &v["drift"];
    let said = "the forecast's settings changed since that forecast (commitea.yaml: \
                forecast.abandonment_min_history_days): the move is theirs";
    let issues = drift["issues"].as_array().unwrap();
    assert!(drift["issuesMoved"].as_u64() > Some(100), "{drift}");
    assert!(!issues.is_empty(), "{drift}");
    for i in issues.iter().chain(drift["milestones"].as_array().unwrap()) {
        assert!(i["why"].as_str().unwrap().starts_with(said), "{i}");
    }
    assert!(
        drift["summary"]
            .as_str()
            .unwrap()
            .starts_with("The forecast's settings changed since that forecast"),
        "{drift}"
    );
}

/// A run with its trials set by a variable (or a flag) moves what the settings moved, and says so, naming
/// the values: commitea.yaml has no change to name (audit 120: the moves were put down to queues, there
/// and back).
#[test]
fn a_setting_changed_by_a_variable_is_the_reason_for_the_moves_it_made() {
    let tmp = committed_demo();
    let dir = tmp.path();
    let mut opts = run_options(dir);
    opts.env = vec![
        ("COMMITEA_FORECAST_TRIALS".to_owned(), "50".to_owned()),
        ("COMMITEA_FORECAST_SEED".to_owned(), "7".to_owned()),
    ];
    commitea::pipeline::run(&opts).unwrap();
    let message = crate::pipeline::git(dir, &["log", "-1", "--format=%B"]);
    // The built-in seed is said as that, not as its digits (audit 121).
    assert!(
        message.contains("forecast.seed the default then, 7 now"),
        "{message}"
    );
    let said = format!(
        "settings changed since that forecast (forecast.trials {TRIALS} then, 50 now, set by a flag \
         or a COMMITEA_ variable for one of them; forecast.seed"
    );
    assert!(message.contains(&said), "{message}");
    assert!(!message.contains("queue of"), "{message}");
    // And back: the same words, the other way.
    commitea::pipeline::run(&run_options(dir)).unwrap();
    let message = crate::pipeline::git(dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(&format!("(forecast.trials 50 then, {TRIALS} now")),
        "{message}"
    );
}

#[test]
fn standup_names_the_issues_that_joined_a_milestone_as_why_it_moved() {
    // An issue moved into a milestone moves the milestone without any of its issues moving (its own
    // date may stay beyond the horizon): the standup gave no reason (an audit of fifty daily runs).
    let tmp = committed_demo();
    let dir = tmp.path();
    // Six open unestimated issues of no milestone join Public API v2 on Gitea, two weeks each: enough
    // work to move it.
    let issues = dir.join("snapshot/issues/acme/api");
    let mut joined: Vec<(std::path::PathBuf, u64)> = std::fs::read_dir(&issues)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let n: u64 = p.file_stem().unwrap().to_str().unwrap().parse().unwrap();
            (text.contains("\nstate: open\n")
                && !text.contains("\nmilestone:")
                && !text.contains("- est/")
                && text.contains("\nlabels:\n"))
            .then_some((p, n))
        })
        .collect();
    joined.sort_by_key(|(_, n)| *n);
    joined.truncate(6);
    assert_eq!(joined.len(), 6, "open acme/api issues in no milestone");
    for (path, _) in &joined {
        let text = std::fs::read_to_string(path).unwrap();
        let text = text.replacen("\nlabels:\n", "\nlabels:\n- est/2w\n", 1);
        let at = text.find("\nlabels:").unwrap();
        std::fs::write(
            path,
            format!("{}\nmilestone: 4{}", &text[..at], &text[at..]),
        )
        .unwrap();
    }
    let number = joined[0].1;
    crate::pipeline::commit_all_as_pm(dir, false, "Moved into Public API v2 on Gitea");
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    let milestones = v["drift"]["milestones"].as_array().unwrap();
    let api = milestones
        .iter()
        .find(|m| m["subject"] == "Public API v2")
        .unwrap_or_else(|| panic!("{}", v["drift"]));
    let why = api["why"].as_str().unwrap();
    assert!(
        why.starts_with(&format!("acme/api#{number}, ")) && why.contains(" and 3 more joined it; "),
        "{why}"
    );
}

#[test]
fn standup_counts_the_issues_gone_from_gitea_since_the_last_forecast() {
    // A full resync finds an issue deleted (or moved to a repository not synced): the standup's "since
    // then" counted closed and new issues only, and said nothing of it.
    let tmp = committed_demo();
    let dir = tmp.path();
    let forecast: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let open = forecast["issues"][0]["issue"].as_str().unwrap().to_owned();
    let (repo, number) = open.split_once('#').unwrap();
    std::fs::remove_file(dir.join(format!("snapshot/issues/{repo}/{number}.yaml"))).unwrap();
    crate::pipeline::commit_all_as_pm(dir, false, "Deleted on Gitea");
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    assert_valid_output("query_project", &v);
    let since = &v["drift"]["sinceThen"];
    assert_eq!(since["gone"], 1, "{since}");
    assert_eq!(since["closed"], 0, "{since}");
}

#[test]
fn standup_says_a_milestone_emptied_or_losing_issues_to_a_deletion() {
    // Every open issue of the holiday release closed on Gitea, one of Public API v2's deleted: the
    // milestones moved with no reason given (an audit of fifty daily runs).
    let tmp = committed_demo();
    let dir = tmp.path();
    let open_in = |repo: &str, milestone: u64| -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(format!("snapshot/issues/{repo}")))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let text = std::fs::read_to_string(p).unwrap();
                text.contains("\nstate: open\n")
                    && text.contains(&format!("\nmilestone: {milestone}\n"))
            })
            .collect();
        files.sort();
        files
    };
    let holiday = open_in("acme/mobile", 3);
    assert!(!holiday.is_empty());
    for path in holiday {
        let text = std::fs::read_to_string(&path).unwrap().replacen(
            "\nstate: open\n",
            "\nstate: closed\nclosed_at: 2026-11-27T10:00:00Z\n",
            1,
        );
        std::fs::write(&path, text).unwrap();
    }
    let deleted = open_in("acme/api", 4).remove(0);
    let number = deleted.file_stem().unwrap().to_str().unwrap().to_owned();
    std::fs::remove_file(&deleted).unwrap();
    crate::pipeline::commit_all_as_pm(dir, false, "Closed and deleted on Gitea");
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    let why = |title: &str| {
        v["drift"]["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["subject"] == title)
            .and_then(|m| m["why"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("{title}: {}", v["drift"]))
    };
    assert!(
        why("Mobile 3.0 holiday release").contains("nothing open in it any more"),
        "{}",
        v["drift"]
    );
    assert!(
        why("Public API v2").starts_with(&format!("acme/api#{number} left it (gone from Gitea)")),
        "{}",
        v["drift"]
    );
}

/// A directive is named on a move only where it changed the figure: a day later, moves that are the same
/// without it (the day's drift in the queue it reprioritised) name it not (an audit found it on 31 of 41).
#[test]
fn a_directive_is_named_only_on_moves_it_made() {
    let tmp = demo_dir();
    let with = tmp.path().join("with");
    let without = tmp.path().join("without");
    std::fs::create_dir(&with).unwrap();
    for entry in std::fs::read_dir(tmp.path()).unwrap() {
        let path = entry.unwrap().path();
        if path != with {
            std::fs::rename(&path, with.join(path.file_name().unwrap())).unwrap();
        }
    }
    crate::pipeline::commit_all_as_pm(&with, true, "Import");
    commitea::pipeline::run(&run_options(&with)).unwrap();
    crate::pipeline::git(
        tmp.path(),
        &[
            "clone",
            "-q",
            with.to_str().unwrap(),
            without.to_str().unwrap(),
        ],
    );
    let recorded = tools::call(
        &ctx(&with),
        "record_directive",
        &json!({
            "kind": "reprioritize",
            "quote": "The sign-in work first.",
            "target": { "issue": "acme/web#92" },
            "params": { "priority": 0 }
        }),
    )
    .unwrap();
    let id = recorded["directiveId"].as_str().unwrap().to_owned();
    crate::pipeline::commit_all_as_pm(&with, false, "Record the PM's directive");
    // A working day later, on both.
    let standup = |dir: &Path| {
        let (_, v) = standup_a_working_day_later(dir);
        v["drift"]["issues"].as_array().unwrap().clone()
    };
    let (named, control) = (standup(&with), standup(&without));
    let in_control = |subject: &Value| control.iter().find(|m| m["subject"] == *subject);
    let naming: Vec<&Value> = named
        .iter()
        .filter(|m| {
            m["directives"]
                .as_array()
                .is_some_and(|d| d.iter().any(|x| x == id.as_str()))
        })
        .collect();
    assert!(!naming.is_empty(), "{named:?}");
    for m in naming {
        if let Some(c) = in_control(&m["subject"]) {
            assert_ne!(m["after"], c["after"], "{m} is the same without {id}: {c}");
        }
    }
}

/// Right-to-left words as a chat pastes them, with their isolates, are the PM's words and are recorded as
/// written; only an override (RLO), which makes a line read otherwise than it runs, is refused.
#[test]
fn a_right_to_left_quote_with_its_isolates_is_recorded() {
    let dir = demo_dir();
    let quote = "\u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{2067}\u{5e2}\u{5d5}\u{5dc}\u{5dd}\u{2069}";
    let out = tools::call(
        &ctx(dir.path()),
        "record_directive",
        &json!({ "kind": "note", "quote": quote }),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(out["directiveId"].is_string(), "{out}");
    let ledger = std::fs::read_to_string(dir.path().join("pm-state.md")).unwrap();
    assert!(ledger.contains(quote), "kept as written");
}

/// Two milestones of one title in two repositories (a release cut across them): the standup names each
/// with its repository, and each row still links its milestone's page, which says how it moved. They
/// were found by title alone, so neither row linked and neither page said anything.
#[test]
fn milestones_of_one_title_keep_their_standup_links_and_moves() {
    let dir = committed_demo();
    let path = dir.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("title: Mobile 3.0 holiday release"), "{text}");
    std::fs::write(
        &path,
        text.replace("title: Mobile 3.0 holiday release", "title: Public API v2"),
    )
    .unwrap();
    crate::pipeline::commit_all_as_pm(dir.path(), false, "Same release title in both repositories");
    // Fewer hours for everyone's work: every milestone moves.
    let config = dir.path().join("commitea.yaml");
    let halved: String = std::fs::read_to_string(&config)
        .unwrap()
        .lines()
        .map(|l| match l.split_once("hours_per_week: ") {
            Some((lead, n)) if n.trim().parse::<f64>().is_ok() => {
                format!(
                    "{lead}hours_per_week: {}\n",
                    n.trim().parse::<f64>().unwrap() / 2.0
                )
            }
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&config, halved).unwrap();
    crate::pipeline::commit_all_as_pm(dir.path(), false, "Half time");
    let mut opts = run_options(dir.path());
    opts.render = true;
    commitea::pipeline::run(&opts).unwrap();
    let standup = std::fs::read_to_string(dir.path().join("public/standup.html")).unwrap();
    for (repo, id) in [("acme/api", 4), ("acme/mobile", 3)] {
        assert!(
            standup.contains(&format!(
                "<a href=\"milestones/{id}.html\"><bdi>Public API v2 ({repo})</bdi></a>"
            )),
            "{repo}: {standup}"
        );
        let page = std::fs::read_to_string(dir.path().join(format!("public/milestones/{id}.html")))
            .unwrap();
        assert!(
            page.contains("<h2 id=\"moved-title\">Since the last forecast</h2>"),
            "{id}: {page}"
        );
    }
}

#[test]
fn a_directive_in_force_stays_in_sight_however_many_come_after_it() {
    // The view listed the 20 newest entries: after 25 notes, a priority the plan still follows was on
    // no page (audit 80).
    let tmp = demo_dir();
    let dir = tmp.path();
    let mut ledger = std::fs::read_to_string(dir.join("pm-state.md")).unwrap();
    ledger.push_str(
        "\n## D-0001 · reprioritize · 2026-11-01T10:00:00Z\n\n> acme/api#102 first.\n\n\
         - target: issue acme/api#102\n- params: {\"priority\": 0}\n- status: active\n",
    );
    for n in 2..=27 {
        ledger.push_str(&format!(
            "\n## D-{n:04} · note · 2026-11-26T10:{n:02}:00Z\n\n> Note {n}.\n\n- status: active\n"
        ));
    }
    std::fs::write(dir.join("pm-state.md"), ledger).unwrap();
    let mut options = run_options(dir);
    options.render = true;
    commitea::pipeline::run(&options).unwrap();
    let v = tools::call(
        &ctx(dir),
        "query_project",
        &json!({"view": "directives", "filters": {"limit": 100}}),
    )
    .unwrap();
    let ids = |list: &Value| -> Vec<String> {
        list.as_array()
            .map(|l| {
                l.iter()
                    .map(|d| d["id"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let recent = ids(&v["recent"]);
    assert_eq!((recent.len(), recent[19].as_str()), (20, "D-0008"), "{v}");
    // The earlier one that changes the plan; the notes counted.
    assert_eq!(ids(&v["earlierInForce"]), ["D-0001"], "{v}");
    assert_eq!(v["earlierOmitted"], 6, "D-0002..D-0007, notes: {v}");
    let page = std::fs::read_to_string(dir.join("public/directives.html")).unwrap();
    let earlier_at = page
        .find("Earlier directives still in force")
        .expect("the section");
    assert!(page[earlier_at..].contains("id=\"D-0001\""));
    assert!(page[..earlier_at].contains("id=\"D-0027\""));
    assert!(page.contains(
        "6 earlier entries (notes, periods that ended, withdrawn or superseded ones) are in <code>pm-state.md</code>"
    ));
}

#[test]
fn a_new_issues_title_with_a_control_character_is_refused() {
    // Audit 83: a model's title carrying ESC[31m was filed to Gitea as it was.
    let tmp = demo_dir();
    for (title, said) in [
        (
            "Retry \u{1b}[31mqueue\u{1b}[0m",
            "the control character U+001B",
        ),
        ("Tab\there", "the control character U+0009"),
        ("evil \u{202e}txt.exe", "the bidirectional override U+202E"),
    ] {
        let v = apply(
            tmp.path(),
            json!({ "ops": [{ "op": "create_issue", "title": title, "repo": "acme/api" }] }),
        );
        assert_eq!(v["applied"], 0, "{v}");
        let r = reasons(&v);
        assert!(r[0].contains(&format!("the title holds {said}")), "{r:?}");
    }
    // The body too, but for line breaks and tabs (audit 91: ESC and NUL were filed).
    let v = apply(
        tmp.path(),
        json!({ "ops": [{ "op": "create_issue", "title": "Clear", "repo": "acme/api",
                          "body": "x\u{0}y\u{1b}[2J" }] }),
    );
    assert_eq!(v["applied"], 0, "{v}");
    assert!(
        reasons(&v)[0].contains("the body holds the control character U+0000"),
        "{v}"
    );
    let v = apply(
        tmp.path(),
        json!({ "ops": [{ "op": "create_issue", "title": "Clear", "repo": "acme/api",
                          "body": "- one\r\n- two\n\tindented" }] }),
    );
    assert_eq!(v["applied"], 1, "{v}");
}

#[test]
fn an_issue_and_a_repository_are_found_whatever_their_case_as_on_gitea() {
    // Gitea's names ignore case; `ACME/API#102` was "no issue in the snapshot" (audit 91).
    let v = query("issue", json!({ "issueId": "ACME/Api#102" }));
    assert_eq!(v["issue"], "acme/api#102", "{v}");
    let e = query_err(
        json!({ "view": "issue", "filters": { "issueId": "acme/api#99999999999999999999999" } }),
    );
    assert!(
        e.to_string().contains("is too large for an issue number"),
        "{e}"
    );
    let tmp = demo_dir();
    let v = apply(
        tmp.path(),
        json!({ "ops": [
            { "op": "create_issue", "title": "Case", "repo": "ACME/WEB" },
            { "op": "set_priority", "issue": "Acme/Api#102", "priority": "p/1" },
        ] }),
    );
    assert_eq!(v["applied"], 2, "{v}");
    let file = std::fs::read_to_string(tmp.path().join(v["opsFile"].as_str().unwrap())).unwrap();
    assert!(
        file.contains("repo: acme/web") && file.contains("issue: acme/api#102"),
        "{file}"
    );
}

/// The id `record_directive` gives on the demo with a file of `id` at `ops/<folder>/<id>.yaml` and no
/// ledger entry of it; the file as it is after.
fn id_given_beside(folder: &str, id: &str) -> (serde_json::Value, String) {
    let tmp = demo_dir();
    let dir = tmp.path();
    let file = dir.join(format!("ops/{folder}/{id}.yaml"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, format!("id: {id}\n")).unwrap();
    let v = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({
            "kind": "reprioritize",
            "quote": "Idempotency keys first.",
            "target": { "issue": "acme/api#102" },
            "params": { "priority": 0 }
        }),
    )
    .unwrap();
    (v, std::fs::read_to_string(&file).unwrap())
}

#[test]
fn a_directive_never_takes_the_id_of_an_op_file_in_the_checkout() {
    // A stray ops/pending/D-0008.yaml with no ledger entry was overwritten by the next directive's op
    // file (audit 91).
    let (v, stray) = id_given_beside("pending", "D-0008");
    assert_eq!(v["directiveId"], "D-0009", "{v}");
    assert_eq!(stray, "id: D-0008\n");
}

#[test]
fn a_directive_never_takes_the_id_of_one_carried_out_whose_entry_is_gone() {
    // A reverted directive's entry leaves the ledger, its record under ops/applied stays: its id was
    // given again (audit 167), and the next record would have overwritten the first's.
    let (v, _) = id_given_beside("applied", "D-0012");
    assert_eq!(v["directiveId"], "D-0013", "{v}");
}

/// A capacity directive for a member's name with a suffix is refused as a likely typo, not taken for a
/// new 30 h/week hire (audit 140: `dana.k` got 24 issues, and the answer never said so).
#[test]
fn a_capacity_directive_for_a_members_name_with_a_suffix_is_no_hire() {
    let tmp = demo_dir();
    let dir = tmp.path();
    let e = tools::call(
        &ctx(dir),
        "record_directive",
        &json!({
            "kind": "capacity",
            "quote": "Dana works 30 hours from December.",
            "target": { "member": "dana.k" },
            "params": { "from": "2026-12-01", "hours_per_week": 30 }
        }),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("member dana.k is not in the team (did you mean dana?)"),
        "{e}"
    );
    assert!(
        !std::fs::read_to_string(dir.join("pm-state.md"))
            .unwrap()
            .contains("dana.k")
    );
}

#[test]
fn someone_away_in_the_standups_window_is_away_not_idle() {
    // Someone on approved leave was "nothing planned in the next working days" (audit 92).
    let tmp = demo_dir();
    let dir = tmp.path();
    tools::call(
        &ctx(dir),
        "record_directive",
        &json!({
            "kind": "capacity",
            "quote": "Bjorn is off for three weeks.",
            "target": { "member": "bjorn" },
            "params": { "from": "2026-11-23", "to": "2026-12-11", "hours_per_week": 0 }
        }),
    )
    .unwrap();
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    let bjorn = v["people"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["person"] == "bjorn")
        .unwrap();
    assert_eq!(bjorn["awayUntil"], "2026-12-14", "{bjorn}");
    assert!(bjorn.get("idle").is_none(), "{bjorn}");
}

#[test]
fn the_standup_says_which_new_issues_were_reopened() {
    // A reopened issue was only "new" (audit 92).
    let tmp = committed_demo();
    let dir = tmp.path();
    let path = dir.join("snapshot/issues/acme/api/1.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\nstate: closed\n"), "{text}");
    let reopened: String = text
        .replacen("\nstate: closed\n", "\nstate: open\n", 1)
        .lines()
        .filter(|l| !l.starts_with("closed_at:"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replacen(
            "\ntimeline:\n",
            "\ntimeline:\n- id: 999999\n  type: reopen\n  created_at: 2026-11-27T09:00:00Z\n  user: amara\n",
            1,
        );
    std::fs::write(&path, reopened).unwrap();
    crate::pipeline::commit_all_as_pm(dir, false, "Reopened on Gitea");
    let v = tools::call(&ctx(dir), "query_project", &json!({ "view": "standup" })).unwrap();
    let since = &v["drift"]["sinceThen"];
    assert_eq!(since["new"], 1, "{since}");
    assert_eq!(since["reopened"], 1, "{since}");
    assert!(v["drift"]["summary"].is_string());
}

#[test]
fn directives_are_listed_in_ledger_order_and_one_whose_fields_a_later_took_is_said_replaced() {
    // Two directives on one issue merged the other way round from how they were recorded: the ledger
    // (merge order) has D-0009 (p/0, recorded first) after D-0008 (p/2), so p/0 stands. The page listed
    // D-0008 as the newest and neither as replaced (audit 104).
    let tmp = demo_dir();
    let entry = |id: &str, at: &str, priority: u8| {
        format!(
            "\n## {id} · reprioritize · {at}\n\n> Priority {priority} for session cleanup.\n\n- target: issue \
             acme/api#57\n- params: {{\"priority\": {priority}}}\n- status: active\n- by: amara\n"
        )
    };
    let path = tmp.path().join("pm-state.md");
    let mut ledger = std::fs::read_to_string(&path).unwrap();
    ledger.push_str(&entry("D-0008", "2026-11-26T10:00:00Z", 2));
    ledger.push_str(&entry("D-0009", "2026-11-25T10:00:00Z", 0));
    std::fs::write(&path, ledger).unwrap();
    let v = tools::call(
        &ctx(tmp.path()),
        "query_project",
        &json!({ "view": "directives" }),
    )
    .unwrap();
    let ids: Vec<&str> = v["recent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids[..2], ["D-0009", "D-0008"], "{v}");
    assert_eq!(v["recent"][1]["replacedBy"], "D-0009", "{v}");
    assert!(v["recent"][0].get("replacedBy").is_none(), "{v}");
    let issue = tools::call(
        &ctx(tmp.path()),
        "query_project",
        &json!({ "view": "issue", "filters": { "issueId": "acme/api#57" } }),
    )
    .unwrap();
    assert!(issue.to_string().contains("\"p/0\""), "{issue}");
}

#[test]
fn a_directive_with_long_words_keeps_the_directives_view_within_its_budget() {
    // One quote of 1,995 CJK characters and a rationale of 500 made the view 8.6 KB at every limit, one
    // of 2,000 emoji 11 KB (audit 105): past limit 1, the texts are cut, and the cut counted.
    let tmp = demo_dir();
    for n in 0..5 {
        tools::call(
            &ctx(tmp.path()),
            "record_directive",
            &json!({ "kind": "note", "quote": format!("Short note {n}.") }),
        )
        .unwrap();
    }
    let quote = format!("締切は三月末。{}", "🍵".repeat(1_990));
    let rationale = "理由".repeat(250);
    tools::call(
        &ctx(tmp.path()),
        "record_directive",
        &json!({ "kind": "note", "quote": quote, "rationale": rationale }),
    )
    .unwrap();
    let budget = tools::answer_budget("query_project", Some("directives"));
    for limit in [1, 20] {
        let v = tools::call(
            &ctx(tmp.path()),
            "query_project",
            &json!({ "view": "directives", "filters": { "limit": limit } }),
        )
        .unwrap();
        let bytes = serde_json::to_vec(&v).unwrap().len();
        assert!(bytes <= budget, "limit {limit}: {bytes} bytes");
        let newest = &v["recent"][0];
        let kept = newest["quote"].as_str().unwrap().chars().count();
        let cut = newest["quoteCut"].as_u64().unwrap() as usize;
        // What is kept is the quote's start, and with what was cut (and the ellipsis) it is all of it.
        assert!(quote.starts_with(newest["quote"].as_str().unwrap().trim_end_matches('…')));
        assert_eq!(kept - 1 + cut, quote.chars().count(), "{newest}");
        assert!(newest["rationaleCut"].as_u64().unwrap() > 0, "{newest}");
        // The words are cut before the list is: every directive is listed at limit 20 (audit 106: the
        // long one alone was, at every limit).
        assert_eq!(
            v["recent"].as_array().unwrap().len(),
            limit.min(6),
            "limit {limit}: {v}"
        );
    }
    // The ledger keeps every word.
    let ledger = std::fs::read_to_string(tmp.path().join("pm-state.md")).unwrap();
    assert!(ledger.contains(&quote));
}

#[test]
fn an_issue_with_no_priority_set_says_so_not_the_default_it_is_scheduled_at() {
    // Audit 110: acme/web#122 has no p/ label, and its page and issue view read "p/2" as if someone had
    // triaged it there.
    let unset = query("issue", json!({"issueId": "acme/web#122"}));
    let derived = &unset["derived"];
    assert_eq!(derived["priority"], "p/2", "{derived}");
    assert_eq!(derived["priorityDefault"], true, "{derived}");
    let set = query("issue", json!({"issueId": "acme/api#102"}));
    assert!(
        set["issue"]["derived"].get("priorityDefault").is_none(),
        "{set}"
    );
    let dir = demo_dir();
    crate::toolcli::commitea_ok(dir.path(), &["render", "--trials", "300"]);
    let page = std::fs::read_to_string(dir.path().join("public/issues/acme/web/122.html")).unwrap();
    assert!(
        page.contains("<span class=\"badge prio unset\">no priority</span> <span class=\"muted\">scheduled as p/2, the default</span>"),
        "{page}"
    );
    let page = std::fs::read_to_string(dir.path().join("public/issues/acme/api/102.html")).unwrap();
    assert!(!page.contains("no priority"), "{page}");
}

/// The issue view says the time tracked on an issue, which its remaining effort and its calibration
/// sample are read from (audit 142: shown nowhere, so no figure could be checked).
#[test]
fn the_issue_view_says_the_time_tracked_on_gitea() {
    let tmp = demo_dir();
    let snapshot =
        commitea::state::Snapshot::load(&commitea::state::Layout::new(tmp.path())).unwrap();
    let (key, seconds) = snapshot
        .issues
        .iter()
        .find_map(|(k, i)| (i.tracked_seconds() > 0).then(|| (k.clone(), i.tracked_seconds())))
        .expect("a demo issue with tracked time");
    let v = tools::call(
        &ctx(tmp.path()),
        "query_project",
        &json!({ "view": "issue", "filters": { "issueId": key.to_string() } }),
    )
    .unwrap();
    let hours = (seconds as f64 / 3600.0 * 10.0).round() / 10.0;
    assert_eq!(v["derived"]["trackedHours"].as_f64(), Some(hours), "{v}");
    // None where none was tracked.
    let (other, _) = snapshot
        .issues
        .iter()
        .find(|(_, i)| i.tracked_seconds() == 0)
        .unwrap();
    let v = tools::call(
        &ctx(tmp.path()),
        "query_project",
        &json!({ "view": "issue", "filters": { "issueId": other.to_string() } }),
    )
    .unwrap();
    assert!(v["derived"].get("trackedHours").is_none(), "{v}");
}

#[test]
fn a_directive_names_an_issue_in_any_case() {
    // `ACME/API#102` was "not in the snapshot" to record_directive while apply_changes took it (audit
    // 158); the entry is written as the config spells the repository, and replayed.
    let tmp = demo_dir();
    let out = tools::call(
        &ctx(tmp.path()),
        "record_directive",
        &json!({
            "kind": "reprioritize",
            "quote": "Idempotency keys first.",
            "target": { "issue": "ACME/API#102" },
            "params": { "priority": 0 }
        }),
    )
    .unwrap();
    let ledger = std::fs::read_to_string(tmp.path().join("pm-state.md")).unwrap();
    assert!(ledger.contains("issue acme/api#102"), "{ledger}");
    assert!(!ledger.contains("ACME"), "{ledger}");
    assert!(
        out["consequence"].is_object() || out["consequence"].is_array(),
        "{out}"
    );
}
