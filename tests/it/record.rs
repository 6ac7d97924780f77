//! `record_directive` on copies of the bundled demo: the ledger grows append-only, the op file proposes the
//! Gitea change, the consequence is deterministic, and bad input writes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use commitea::demo::{self, DemoSpec};
use commitea::ledger::record::{
    RecordError, RecordInput, RecordOptions, RecordTarget, record_directive,
};
use commitea::state::Layout;
use serde_json::json;

/// An open issue of the at-risk milestone (Mobile 3.0 holiday release, P(on time) 0%) at p/2.
const AT_RISK_ISSUE: &str = "acme/mobile#90";

fn clock() -> DateTime<Utc> {
    "2026-11-30T09:00:00Z".parse().unwrap()
}

fn fresh_demo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    demo::write(&demo::generate(&DemoSpec::bundled()), tmp.path()).unwrap();
    tmp
}

/// Every file under `dir`, relative path → bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.file_name().is_some_and(|n| n == ".commitea.lock") {
                // The writer lock of a state folder without git: not state.
            } else {
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A forecast of the checkout's state as `commitea plan` makes it: offline, nothing committed or drawn.
fn offline(dir: &Path) -> commitea::pipeline::RunOptions {
    commitea::pipeline::RunOptions {
        state_dir: dir.to_path_buf(),
        now: None,
        clock: clock(),
        offline: true,
        full_sync: false,
        token: None,
        server_fallback: None,
        overrides: Default::default(),
        env: vec![],
        commit: false,
        render: false,
        applied_before: Vec::new(),
        skip_ci: false,
    }
}

fn reprioritize() -> RecordInput {
    RecordInput {
        kind: "reprioritize".into(),
        quote: "Pull to refresh ships with the holiday release.\nDrop everything else for it."
            .into(),
        target: Some(RecordTarget {
            issue: Some(AT_RISK_ISSUE.into()),
            ..Default::default()
        }),
        params: Some(json!({"priority": 0})),
        rationale: Some("the release notes promise it".into()),
        by: Some("ann".into()),
    }
}

#[test]
fn a_reprioritize_appends_to_the_ledger_and_proposes_set_priority() {
    let tmp = fresh_demo();
    let layout = Layout::new(tmp.path());
    let before = std::fs::read(layout.ledger()).unwrap();
    let out = record_directive(
        tmp.path(),
        &reprioritize(),
        &RecordOptions::new(clock(), vec![]),
    )
    .unwrap();

    let after = std::fs::read(layout.ledger()).unwrap();
    assert!(after.starts_with(&before), "the ledger lost earlier bytes");
    let added = String::from_utf8(after[before.len()..].to_vec()).unwrap();
    assert!(
        added.contains(&format!(
            "## {} · reprioritize · 2026-11-30T09:00:00Z",
            out.directive_id
        )),
        "{added}"
    );
    assert!(added.contains(&format!("- target: issue {AT_RISK_ISSUE}")));

    let op_file = layout
        .ops_dir()
        .join("pending")
        .join(format!("{}.yaml", out.directive_id));
    let ops = std::fs::read_to_string(&op_file).unwrap();
    assert!(ops.contains("op: set_priority"), "{ops}");
    assert!(ops.contains(&format!("issue: {AT_RISK_ISSUE}")), "{ops}");
    assert!(ops.contains("priority: p/0"), "{ops}");
    assert_eq!(
        out.ops_file.as_deref(),
        Some(format!("ops/pending/{}.yaml", out.directive_id).as_str())
    );

    assert!(!out.summary.trim().is_empty());
    assert_eq!(out.summary, out.detail.summary);
    assert!(
        out.consequence
            .iter()
            .any(|p| p.subject.starts_with("milestone 3 ")),
        "{:?}",
        out.consequence
    );
    // The issue itself comes earlier.
    let own = out
        .detail
        .issues
        .iter()
        .find(|i| i.issue == AT_RISK_ISSUE)
        .unwrap();
    assert!(own.moved_working_days < 0, "{own:?}");
}

#[test]
fn a_directive_recorded_with_an_earlier_clock_is_dated_after_the_ledgers_entries() {
    // `commitea directive --now 2026-11-30` stamped that day's midnight, before an entry of the same day,
    // and the run warned that the entry just written was given before the one it replaced (audit 175).
    let tmp = fresh_demo();
    let layout = Layout::new(tmp.path());
    let first = record_directive(
        tmp.path(),
        &reprioritize(),
        &RecordOptions::new(clock(), vec![]),
    )
    .unwrap();
    let midnight: DateTime<Utc> = "2026-11-30T00:00:00Z".parse().unwrap();
    let mut again = reprioritize();
    again.params = Some(json!({"priority": 1}));
    let out = record_directive(tmp.path(), &again, &RecordOptions::new(midnight, vec![])).unwrap();
    assert_ne!(out.directive_id, first.directive_id);
    let after = std::fs::read_to_string(layout.ledger()).unwrap();
    let heading = format!(
        "## {} · reprioritize · 2026-11-30T09:00:00Z",
        out.directive_id
    );
    assert!(after.contains(&heading), "{heading} in\n{after}");
    // An entry of a later day (a typo'd year) is no floor (audit 179).
    std::fs::write(
        layout.ledger(),
        format!(
            "{after}\n## D-0099 · note · 2062-11-25T10:00:00Z\n\n> Typo.\n\n- status: active\n- by: ann\n"
        ),
    )
    .unwrap();
    let mut third = reprioritize();
    third.params = Some(json!({"priority": 3}));
    let later: DateTime<Utc> = "2026-12-01T08:00:00Z".parse().unwrap();
    let out = record_directive(tmp.path(), &third, &RecordOptions::new(later, vec![])).unwrap();
    let ledger = std::fs::read_to_string(layout.ledger()).unwrap();
    let heading = format!(
        "## {} · reprioritize · 2026-12-01T08:00:00Z",
        out.directive_id
    );
    assert!(ledger.contains(&heading), "{heading} in\n{ledger}");
}

#[test]
fn an_estimate_off_the_ladder_is_quoted_as_typed_with_the_rung_to_write() {
    // `{"estimate": "9d"}` was answered `estimate "est/9d"`, and `est/9d` then `"9d"`; neither named
    // the rung (audits 175, 179).
    let tmp = fresh_demo();
    for typed in ["9d", "est/9d"] {
        let input = RecordInput {
            kind: "reestimate".into(),
            quote: "Nine days.".into(),
            target: Some(RecordTarget {
                issue: Some(AT_RISK_ISSUE.into()),
                ..Default::default()
            }),
            params: Some(json!({ "estimate": typed })),
            rationale: None,
            by: Some("ann".into()),
        };
        let err = record_directive(tmp.path(), &input, &RecordOptions::new(clock(), vec![]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!(
                "estimate \"{typed}\" is not on the estimate ladder"
            )) && err.contains("pick the nearest rung (2w)"),
            "{typed}: {err}"
        );
    }
}

#[test]
fn the_same_directive_gives_the_same_bytes() {
    let (a, b) = (fresh_demo(), fresh_demo());
    let out_a = record_directive(
        a.path(),
        &reprioritize(),
        &RecordOptions::new(clock(), vec![]),
    )
    .unwrap();
    let out_b = record_directive(
        b.path(),
        &reprioritize(),
        &RecordOptions::new(clock(), vec![]),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string_pretty(&out_a).unwrap(),
        serde_json::to_string_pretty(&out_b).unwrap()
    );
    assert_eq!(files(a.path()), files(b.path()));
}

#[test]
fn snapshots_of_the_output_and_the_directives_view() {
    let tmp = fresh_demo();
    let out = record_directive(
        tmp.path(),
        &reprioritize(),
        &RecordOptions::new(clock(), vec![]),
    )
    .unwrap();
    insta::assert_json_snapshot!("record_reprioritize_output", out);
    let view = commitea::views::directives::load(&Layout::new(tmp.path()), None).unwrap();
    assert_eq!(view.recent.len(), 1);
    assert_eq!(
        view.pending.as_ref().map(|p| p.id.as_str()),
        Some(out.directive_id.as_str())
    );
    insta::assert_json_snapshot!("record_directives_view", view);
}

#[test]
fn a_capacity_cut_of_a_busy_member_pushes_their_issues_later() {
    let tmp = fresh_demo();
    // amara, the tech lead, has the most planned work in the demo.
    let opts = offline(tmp.path());
    let computed = commitea::pipeline::compute(&opts).unwrap();
    let theirs: Vec<String> = computed
        .report
        .issues
        .iter()
        .filter(|i| i.planned_assignee.as_deref() == Some("amara"))
        .map(|i| i.issue.to_string())
        .collect();
    assert!(theirs.len() > 5, "{theirs:?}");

    let input = RecordInput {
        kind: "capacity".into(),
        quote: "Amara is on the platform migration until February.".into(),
        target: Some(RecordTarget {
            member: Some("amara".into()),
            ..Default::default()
        }),
        params: Some(json!({"from": "2026-11-30", "to": "2027-01-31", "hours_per_week": 0})),
        rationale: None,
        by: Some("ann".into()),
    };
    let out = record_directive(tmp.path(), &input, &RecordOptions::new(clock(), vec![])).unwrap();
    assert_eq!(out.ops_file, None, "capacity lives only in the ledger");
    let moved: Vec<i64> = out
        .detail
        .issues
        .iter()
        .filter(|i| theirs.contains(&i.issue))
        .map(|i| i.moved_working_days)
        .collect();
    assert!(
        moved.iter().filter(|d| **d > 0).count() * 2 > theirs.len(),
        "most of amara's issues should move later: {moved:?} of {}",
        theirs.len()
    );
    assert!(moved.iter().sum::<i64>() > 0, "{moved:?}");
}

#[test]
fn bad_input_errors_naming_the_field_and_writes_nothing() {
    let tmp = fresh_demo();
    let before = files(tmp.path());
    let field = |input: &RecordInput| match record_directive(
        tmp.path(),
        input,
        &RecordOptions::new(clock(), vec![]),
    ) {
        Err(RecordError::Invalid { field, message }) => {
            assert!(!message.is_empty());
            field
        }
        other => panic!("expected an input error, got {other:?}"),
    };

    let mut unknown = reprioritize();
    unknown.target = Some(RecordTarget {
        issue: Some("acme/mobile#9999".into()),
        ..Default::default()
    });
    assert_eq!(field(&unknown), "target");

    let mut kind = reprioritize();
    kind.kind = "reprio".into();
    assert_eq!(field(&kind), "kind");

    let mut params = reprioritize();
    params.params = Some(json!({"priority": "high"}));
    assert_eq!(field(&params), "params");

    // What the proposed op would be refused for by apply_changes: a closed issue, an estimate off the ladder.
    let mut closed = reprioritize();
    closed.target = Some(RecordTarget {
        issue: Some("acme/api#1".into()),
        ..Default::default()
    });
    assert_eq!(field(&closed), "target");
    let mut off_ladder = reprioritize();
    off_ladder.kind = "reestimate".into();
    off_ladder.params = Some(json!({"estimate": "5d"}));
    assert_eq!(field(&off_ladder), "params");

    let mut closed_milestone = reprioritize();
    closed_milestone.kind = "set-deadline".into();
    closed_milestone.target = Some(RecordTarget {
        milestone: Some(1),
        ..Default::default()
    });
    closed_milestone.params = Some(json!({"due": "2027-01-15"}));
    assert_eq!(field(&closed_milestone), "target");

    let mut milestone = reprioritize();
    milestone.kind = "set-deadline".into();
    milestone.target = Some(RecordTarget {
        milestone: Some(4242),
        ..Default::default()
    });
    milestone.params = Some(json!({"due": "2027-01-15"}));
    assert_eq!(field(&milestone), "target");

    assert_eq!(files(tmp.path()), before, "nothing may be written");
}

#[test]
fn the_directive_command_prints_the_output_and_exits_2_on_bad_input() {
    let tmp = fresh_demo();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_commitea"))
            .arg("directive")
            .arg("-s")
            .arg(tmp.path())
            .args(args)
            .env_remove("COMMITEA_STATE")
            .output()
            .unwrap()
    };
    let bad = run(&[
        "--kind",
        "reprioritize",
        "--quote",
        "x",
        "--target",
        "acme/mobile#9999",
        "--params",
        r#"{"priority": 0}"#,
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("invalid target"), "{stderr}");
    assert!(!tmp.path().join("ops").exists());

    let ok = run(&[
        "--kind",
        "reprioritize",
        "--quote",
        "Pull to refresh first.",
        "--target",
        &format!("issue {AT_RISK_ISSUE}"),
        "--params",
        r#"{"priority": 0}"#,
        "--by",
        "ann",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let out: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(out["directiveId"], "D-0001");
    assert!(!out["summary"].as_str().unwrap().is_empty());
    assert!(out["consequence"].as_array().unwrap().len() > 1);

    // A milestone by its title, as the pages name it, case aside; a wrong title lists the milestones.
    let deadline = |target: &str, due: &str| {
        run(&[
            "--kind",
            "set-deadline",
            "--quote",
            "The API ships end of May.",
            "--target",
            target,
            "--params",
            &format!(r#"{{"due": "{due}"}}"#),
        ])
    };
    let titled = deadline("milestone public api v2", "2027-05-28");
    assert!(
        titled.status.success(),
        "{}",
        String::from_utf8_lossy(&titled.stderr)
    );
    let ledger = std::fs::read_to_string(tmp.path().join("pm-state.md")).unwrap();
    let snapshot = commitea::state::Snapshot::load(&Layout::new(tmp.path())).unwrap();
    let api = snapshot
        .milestones
        .values()
        .flatten()
        .find(|m| m.title == "Public API v2")
        .unwrap();
    assert!(
        ledger.contains(&format!("- target: milestone {}\n", api.id)),
        "{ledger}"
    );
    let wrong = deadline("milestone Public API v3", "2027-05-28");
    assert_eq!(wrong.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        stderr.contains("no milestone is titled \"Public API v3\"")
            && stderr.contains(&format!("{} (Public API v2)", api.id)),
        "{stderr}"
    );
    // A bare name is not taken for an issue: the error says the form that names it.
    for (target, hint) in [
        ("bjorn", "for the team member, say `member bjorn`"),
        (
            "Public API v2",
            &format!("for the milestone, say `milestone {}`", api.id),
        ),
        ("nobody-at-all", "a target is `issue owner/repo#N`"),
    ] {
        let out = deadline(target, "2027-05-28");
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(hint), "{target}: {stderr}");
    }
    // A due date already past is refused: far more often a typo than a decision.
    let past = deadline("milestone public api v2", "2020-05-28");
    assert_eq!(past.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&past.stderr);
    assert!(
        stderr.contains("due 2020-05-28 is before the forecast's day (2026-11-27)"),
        "{stderr}"
    );
    // So is a capacity period that ended before it; one that reaches it is taken.
    let capacity = |to: &str| {
        run(&[
            "--kind",
            "capacity",
            "--quote",
            "Bjorn was out that week.",
            "--target",
            "member bjorn",
            "--params",
            &format!(r#"{{"from": "2026-11-16", "to": "{to}", "hours_per_week": 0}}"#),
        ])
    };
    let ended = capacity("2026-11-20");
    assert_eq!(ended.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert!(
        stderr.contains(
            "capacity from 2026-11-16 to 2026-11-20 ended before the forecast's day (2026-11-27)"
        ),
        "{stderr}"
    );
    let reaching = capacity("2026-11-27");
    assert!(
        reaching.status.success(),
        "{}",
        String::from_utf8_lossy(&reaching.stderr)
    );
}

#[test]
fn a_directive_op_file_is_the_one_op_file_format_and_the_old_one_still_reads() {
    use commitea::ops::{OpFile, Source};
    let tmp = fresh_demo();
    let layout = Layout::new(tmp.path());
    let out = record_directive(
        tmp.path(),
        &reprioritize(),
        &RecordOptions::new(clock(), vec![]),
    )
    .unwrap();
    let path = layout.root().join(out.ops_file.unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    let file = OpFile::read(&layout, &path).unwrap();
    assert_eq!(file.source, Source::Directive);
    assert!(
        !file.approved,
        "a directive is approved by its pull request"
    );
    assert_eq!(file.directive.as_ref().unwrap().kind, "reprioritize");
    assert!(
        text.starts_with(&format!("id: {}\nsource: directive\n", out.directive_id)),
        "{text}"
    );
    assert!(!file.seen.is_empty(), "{text}");
    // The format before one op-file format: no source, approved, destructive or seen.
    let mut in_seen = false;
    let legacy: String = text
        .lines()
        .filter(|l| {
            in_seen = l.starts_with("seen:") || (in_seen && l.starts_with("  "));
            !in_seen
                && !["source:", "approved:", "destructive:"]
                    .iter()
                    .any(|k| l.starts_with(k))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, &legacy).unwrap();
    assert_eq!(
        OpFile::read(&layout, &path).unwrap(),
        OpFile {
            seen: Default::default(),
            ..file
        },
        "migrated on read"
    );
    let view = commitea::views::directives::load(&layout, None).unwrap();
    assert_eq!(view.pending.unwrap().id, out.directive_id);
}

/// A large plan's what-if measures the change on twin forecasts of fewer trials and applies it to the full
/// forecast before: the same issues move, by nearly as much, and what the change does not reach keeps the
/// full forecast's figures exactly.
#[test]
fn a_what_if_on_twin_forecasts_names_what_the_full_forecasts_name() {
    let run = |budget: &str| {
        let tmp = fresh_demo();
        let env = vec![(
            "COMMITEA_FORECAST_WHAT_IF_ISSUE_TRIALS".to_string(),
            budget.to_string(),
        )];
        record_directive(
            tmp.path(),
            &reprioritize(),
            &RecordOptions::new(clock(), env),
        )
        .unwrap()
        .detail
    };
    // 0: always full size; 1: the fewest twin trials (1,000 of the demo's 10,000).
    let (full, twins) = (run("0"), run("1"));
    let moves = |c: &commitea::consequence::Consequence| -> BTreeMap<String, i64> {
        c.issues
            .iter()
            .map(|i| (i.issue.clone(), i.moved_working_days))
            .collect()
    };
    let (mf, mt) = (moves(&full), moves(&twins));
    assert!(!mf.is_empty());
    // Every move of more than a working day is named on both sides, the same way, within two days.
    for (a, b) in [(&mf, &mt), (&mt, &mf)] {
        for (issue, m) in a.iter().filter(|(_, m)| m.abs() > 1) {
            let other = b.get(issue).copied().unwrap_or(0);
            assert!(
                other.signum() == m.signum() && (other - m).abs() <= 2,
                "{issue}: {m} against {other}"
            );
        }
    }
    let own = |c: &commitea::consequence::Consequence| {
        c.issues
            .iter()
            .find(|i| i.issue == AT_RISK_ISSUE)
            .cloned()
            .unwrap()
    };
    assert_eq!(own(&full).before, own(&twins).before);
    for (f, t) in full.milestones.iter().zip(&twins.milestones) {
        assert_eq!(f.milestone, t.milestone);
        // The side before is the full forecast on both.
        assert_eq!(f.before, t.before, "milestone {}", f.milestone);
        assert!(
            (f.moved_working_days - t.moved_working_days).abs() <= 2,
            "milestone {}: {} against {}",
            f.milestone,
            f.moved_working_days,
            t.moved_working_days
        );
    }
}

#[test]
fn a_directive_in_force_that_gitea_does_not_carry_is_said_unless_its_op_file_is_pending() {
    let tmp = fresh_demo();
    let out = record_directive(
        tmp.path(),
        &reprioritize(),
        &RecordOptions::new(clock(), vec![]),
    )
    .unwrap();
    let opts = commitea::pipeline::RunOptions {
        now: Some(clock()),
        env: vec![("COMMITEA_FORECAST_TRIALS".to_owned(), "200".to_owned())],
        ..offline(tmp.path())
    };
    let said = |c: &commitea::pipeline::Computed| -> Vec<String> {
        c.plan
            .warnings
            .iter()
            .map(ToString::to_string)
            .filter(|w| w.contains("Gitea does not carry it"))
            .collect()
    };
    // Awaiting approval, its op file pending: nothing to say. The demo's own directives were carried out
    // on its Gitea, so they say nothing either.
    assert_eq!(
        said(&commitea::pipeline::compute(&opts).unwrap()),
        Vec::<String>::new()
    );
    // Its op file dropped (a pull request merged without it): the plan follows the directive while Gitea
    // keeps its label, and the run says so on the directive's line, with what to do.
    std::fs::remove_file(tmp.path().join(out.ops_file.as_deref().unwrap())).unwrap();
    let warnings = said(&commitea::pipeline::compute(&opts).unwrap());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert!(w.starts_with("ledger line "), "{w}");
    assert!(
        w.contains(&format!("{} is in force", out.directive_id))
            && w.contains(&format!("{AT_RISK_ISSUE} is p/0 by it and p/"))
            && w.contains("withdraw"),
        "{w}"
    );
    // Closed on Gitea, its priority plans nothing: nothing to settle.
    let key: commitea::domain::IssueKey = AT_RISK_ISSUE.parse().unwrap();
    let file = tmp
        .path()
        .join(format!("snapshot/issues/{}/{}.yaml", key.repo, key.number));
    let text = std::fs::read_to_string(&file).unwrap();
    let closed = text
        .replacen("state: open\n", "state: closed\n", 1)
        .replacen(
            "\nassignees:",
            "\nclosed_at: 2026-11-29T10:00:00Z\nassignees:",
            1,
        );
    std::fs::write(&file, closed).unwrap();
    assert_eq!(
        said(&commitea::pipeline::compute(&opts).unwrap()),
        Vec::<String>::new()
    );
}

#[test]
fn a_directives_summary_names_the_milestone_it_is_about_as_apply_changes_does() {
    let tmp = fresh_demo();
    let input = RecordInput {
        kind: "reprioritize".into(),
        quote: "This can wait.".into(),
        target: Some(RecordTarget {
            issue: Some("acme/api#87".into()),
            ..Default::default()
        }),
        params: Some(json!({"priority": 3})),
        rationale: None,
        by: Some("ann".into()),
    };
    let out = record_directive(tmp.path(), &input, &RecordOptions::new(clock(), vec![])).unwrap();
    // A small change moves no milestone's p80, and the line still says where the issue's stands.
    assert!(
        out.summary.contains("Public API v2 p80 "),
        "{}",
        out.summary
    );
}

#[test]
fn a_member_is_read_case_aside_and_a_typo_of_one_is_no_new_hire() {
    let tmp = fresh_demo();
    let capacity = |member: &str, hours: u32| RecordInput {
        kind: "capacity".into(),
        quote: "Bjorn drops to 20 hours from January.".into(),
        target: Some(RecordTarget {
            member: Some(member.into()),
            ..Default::default()
        }),
        params: Some(json!({"from": "2027-01-18", "hours_per_week": hours})),
        rationale: None,
        by: None,
    };
    let opts = RecordOptions::new(clock(), vec![]);
    // One typo from a member's name: refused, naming the member meant and the team; nothing written.
    let before = files(tmp.path());
    for (typo, hours) in [("bjorm", 20), ("bjorm", 0), ("Bjrn", 20)] {
        match record_directive(tmp.path(), &capacity(typo, hours), &opts) {
            Err(RecordError::Invalid { field, message }) => {
                assert_eq!(field, "target");
                assert!(
                    message.contains(&format!(
                        "member {typo} is not in the team (did you mean bjorn?)"
                    )) && message.contains("the team is amara, bjorn"),
                    "{message}"
                );
            }
            other => panic!("{typo}: {other:?}"),
        }
    }
    assert_eq!(files(tmp.path()), before, "nothing may be written");
    // Gitea's usernames are case-insensitive: "Bjorn" is bjorn, and the ledger says so.
    record_directive(tmp.path(), &capacity("Bjorn", 20), &opts).unwrap();
    let ledger = std::fs::read_to_string(tmp.path().join("pm-state.md")).unwrap();
    assert!(ledger.contains("member bjorn"), "{ledger}");
    assert!(!ledger.contains("member Bjorn"), "{ledger}");
    // A name like no member's is a new hire, as before.
    record_directive(tmp.path(), &capacity("zoltan", 20), &opts).unwrap();
    let ledger = std::fs::read_to_string(tmp.path().join("pm-state.md")).unwrap();
    assert!(ledger.contains("member zoltan"), "{ledger}");
    // A hand-typed entry for a typo is skipped at replay with the same words, the others kept.
    let typed = format!(
        "{ledger}\n## D-0099 · capacity · 2026-11-30T10:00:00Z\n\n> Typo.\n\n- target: member bjorm\n- params: \
         {{\"from\": \"2027-01-18\", \"hours_per_week\": 20}}\n- status: active\n"
    );
    let snapshot = commitea::state::Snapshot::load(&Layout::new(tmp.path())).unwrap();
    let config =
        commitea::config::Config::load(tmp.path(), Vec::new(), &Default::default()).unwrap();
    let replayed = commitea::ledger::replay(&snapshot, &config, Some(&typed), clock());
    assert!(
        replayed.problems.iter().any(|p| p
            .to_string()
            .contains("member bjorm is not in the team (did you mean bjorn?)")),
        "{:?}",
        replayed.problems
    );
    assert!(replayed.plan.team.iter().any(|m| m.name == "zoltan"));
    assert!(!replayed.plan.team.iter().any(|m| m.name == "bjorm"));
}

#[test]
fn the_directives_view_lists_every_pending_directive_and_marks_one_replay_skipped() {
    let tmp = fresh_demo();
    let opts = RecordOptions::new(clock(), vec![]);
    let first = record_directive(tmp.path(), &reprioritize(), &opts).unwrap();
    let mut second = reprioritize();
    second.kind = "reestimate".into();
    second.params = Some(json!({"estimate": "1w"}));
    let second = record_directive(tmp.path(), &second, &opts).unwrap();
    // A hand-typed entry that reads but names an issue the snapshot lacks.
    let ledger_path = tmp.path().join("pm-state.md");
    let mut ledger = std::fs::read_to_string(&ledger_path).unwrap();
    ledger.push_str(
        "\n## D-0099 · reestimate · 2026-11-30T10:00:00Z\n\n> Four hours.\n\n- target: issue \
         acme/api#9999\n- params: {\"estimate\": \"4h\"}\n- status: active\n",
    );
    std::fs::write(&ledger_path, ledger).unwrap();
    let run = offline(tmp.path());
    let d = commitea::pipeline::compute(&run).unwrap().directives;
    assert_eq!(d.pending.as_ref().unwrap().id, second.directive_id);
    assert_eq!(
        d.also_pending
            .iter()
            .map(|o| (o.id.as_str(), o.summary.as_str()))
            .collect::<Vec<_>>(),
        [(first.directive_id.as_str(), first.summary.as_str())]
    );
    let typed = d.recent.iter().find(|r| r.id == "D-0099").unwrap();
    assert_eq!(typed.status, "active");
    assert!(
        typed
            .skipped
            .as_deref()
            .is_some_and(|why| why.contains("acme/api#9999 does not exist")),
        "{typed:?}"
    );
    assert!(
        d.recent
            .iter()
            .filter(|r| r.id != "D-0099")
            .all(|r| r.skipped.is_none())
    );
}

#[test]
fn someone_who_joins_the_team_gets_work_in_the_what_if_and_in_the_next_run() {
    let tmp = fresh_demo();
    let dir = tmp.path();
    crate::pipeline::commit_all_as_pm(dir, true, "Import");
    // A committed forecast: what the next plan keeps its people from.
    let run = commitea::pipeline::RunOptions {
        commit: true,
        ..offline(dir)
    };
    commitea::pipeline::run(&run).unwrap();
    let queue_of = |report: &commitea::forecast::ForecastReport, name: &str| {
        report
            .people
            .iter()
            .find(|p| p.name == name)
            .map_or(0, |p| p.queue.len())
    };
    // A hire by directive: the what-if shares the unassigned work out again, so the consequence has
    // issues that move earlier (kept with their planned people, the hire would get nothing).
    let hire = RecordInput {
        kind: "capacity".into(),
        quote: "Zoe joins us on Monday, full time.".into(),
        target: Some(RecordTarget {
            member: Some("zoe".into()),
            ..Default::default()
        }),
        params: Some(json!({"from": "2026-11-30", "hours_per_week": 30})),
        rationale: None,
        by: Some("pat".into()),
    };
    let out = commitea::ledger::record::preview_directive(
        dir,
        &hire,
        &RecordOptions::new(clock(), vec![]),
    )
    .unwrap();
    let earlier = out
        .detail
        .issues
        .iter()
        .filter(|i| i.moved_working_days < 0)
        .count();
    assert!(earlier > 5, "{}: {earlier} issues earlier", out.summary);
    // Added to commitea.yaml: the next run plans work for her, and says why the plan moved.
    let path = dir.join("commitea.yaml");
    let config = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        config.replacen(
            "team:\n",
            "team:\n  - name: zoe\n    hours_per_week: 30\n",
            1,
        ),
    )
    .unwrap();
    crate::pipeline::commit_all_as_pm(dir, false, "Zoe");
    // A run, and the forecast it committed.
    let run_and_read = || -> commitea::forecast::ForecastReport {
        commitea::pipeline::run(&run).unwrap();
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap()
    };
    let report = run_and_read();
    assert!(queue_of(&report, "zoe") > 5, "{:?}", report.people);
    // With her in the committed forecast, the next run keeps the plan as it is.
    let again = run_and_read();
    assert_eq!(
        commitea::forecast::planned_people(&again),
        commitea::forecast::planned_people(&report)
    );
}
