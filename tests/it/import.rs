//! `commitea import jira`: the mini fixture mapped field by field, forecast offline, imported twice to the
//! same bytes; and every real project with at least 50 issues imported, loaded and replayed (skips loudly
//! without the real data folder; fails under `COMMITEA_REQUIRE_EXTERNAL=1`).

use std::path::{Path, PathBuf};
use std::process::Command;

use commitea::domain::lifecycle::{Lifecycle, Rules};
use commitea::domain::{OpenState, RepoName};
use commitea::import::jira::timeline_consistent;
use commitea::import::{load_dataset, to_state, write_state};
use commitea::pipeline;
use commitea::state::{Layout, Snapshot};

use crate::pipeline::{git, options, tree};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jira")
}

fn import_cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_commitea"))
        .arg("import")
        .arg("jira")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn mini_fixture_maps_fields_and_history() {
    let ds = load_dataset(&fixture(), "mini").unwrap();
    assert_eq!(
        ds.projects(),
        vec![("MINI".to_string(), 5), ("OTHER".to_string(), 1)]
    );
    let p = to_state(&ds, "MINI").unwrap();
    assert_eq!(p.issues, 5);
    let repo = RepoName::new("jira", "MINI");
    let snap = &p.snapshot;
    assert_eq!(
        snap.meta.synced_at.to_rfc3339(),
        "2014-01-20T10:00:00+00:00"
    );

    let i1 = &snap.issues[&repo.issue(1)];
    assert_eq!(i1.title, "Set up the build, \"fast\"");
    assert_eq!(i1.state, OpenState::Closed);
    assert_eq!(i1.author, "bob");
    assert_eq!(i1.assignees, vec!["alice"]);
    assert_eq!(i1.labels, vec!["backend", "est/2d", "p/2"]);
    assert_eq!(i1.milestone, Some(101));
    assert_eq!(
        i1.closed_at.map(|t| t.to_rfc3339()).as_deref(),
        Some("2014-01-10T17:00:00+00:00")
    );
    assert_eq!(i1.tracked_seconds(), 36_000);

    let i2 = &snap.issues[&repo.issue(2)];
    assert_eq!(i2.title, "Crash on start\nwhen offline");
    assert_eq!(i2.state, OpenState::Open);
    assert_eq!(i2.closed_at, None);
    assert_eq!(i2.labels, vec!["est/4h", "p/1"]);
    assert_eq!(i2.milestone, Some(102));
    assert_eq!(i2.depends_on, vec![repo.issue(1)]);
    let story: Vec<String> = i2
        .timeline
        .iter()
        .map(|e| {
            let what = e
                .label
                .clone()
                .or(e.assignee.clone())
                .or(e
                    .milestone
                    .map(|m| format!("{m} (was {:?})", e.old_milestone)))
                .unwrap_or_default();
            format!(
                "{} {}{} {what}",
                e.created_at.format("%d %H:%M"),
                if e.removed { "-" } else { "" },
                e.kind
            )
        })
        .collect();
    assert_eq!(
        story,
        vec![
            // Gitea records a dependency as an event; the link has no date, so it is the earliest possible.
            format!(
                "{} add_dependency ",
                snap.issues[&repo.issue(2)].created_at.format("%d %H:%M")
            )
            .as_str(),
            "08 09:00 -label p/2",
            "08 09:00 label p/1",
            "09 09:00 milestone 101 (was None)",
            "12 09:00 close ",
            "15 09:00 milestone 102 (was Some(101))",
            "15 09:00 reopen ",
            "16 09:00 assignees carol",
            "16 09:00 label est/4h",
        ]
    );

    // An unknown fixVersion added and removed leaves no trace but the count; the Jira label gets an event.
    let i3 = &snap.issues[&repo.issue(3)];
    assert_eq!(i3.milestone, None);
    assert_eq!(i3.labels, vec!["p/3", "ui"]);
    assert_eq!(i3.timeline.len(), 1);
    assert_eq!(i3.timeline[0].label.as_deref(), Some("ui"));

    // Closed without history: one close at the resolution.
    let i4 = &snap.issues[&repo.issue(4)];
    assert_eq!(i4.timeline.len(), 1);
    assert_eq!(i4.timeline[0].kind, commitea::domain::EventKind::Close);
    assert_eq!(
        i4.timeline[0].created_at.to_rfc3339(),
        "2014-01-06T12:00:00+00:00"
    );

    // Zero story points is no estimate.
    let i5 = &snap.issues[&repo.issue(5)];
    assert_eq!(i5.labels, vec!["p/0"]);
    assert!(!i5.has_estimate());

    let s = &p.stats;
    assert_eq!(
        (s.open, s.with_milestone, s.with_estimate),
        (3, 3, 2),
        "{s:?}"
    );
    assert_eq!(s.dependencies_other_project, 1);
    assert_eq!(s.unknown_milestone_refs, 2);
    assert_eq!(s.in_progress_dropped, 1);
    assert_eq!(s.history_rows_ignored, 2);
    assert_eq!(s.closes_added, 1);

    let ms = &snap.milestones[&repo];
    assert_eq!(ms.len(), 2);
    assert_eq!((ms[0].id, ms[0].title.as_str()), (101, "1.0"));
    assert_eq!(ms[0].state, OpenState::Closed);
    assert_eq!(ms[1].state, OpenState::Open);
    assert_eq!(
        ms[1].due_on.map(|t| t.to_rfc3339()).as_deref(),
        Some("2014-02-28T23:59:59+00:00")
    );
    assert!(
        p.config_yaml
            .contains("team:\n  - name: alice\n  - name: carol\n")
    );

    for issue in snap.issues.values() {
        timeline_consistent(issue).unwrap_or_else(|e| panic!("#{}: {e}", issue.number));
    }
    let spans = Rules::default().timeline(i2);
    let cols: Vec<Lifecycle> = spans.iter().map(|s| s.column).collect();
    assert_eq!(
        cols,
        vec![
            Lifecycle::Triage,
            Lifecycle::Done,
            Lifecycle::Triage,
            Lifecycle::Steeping
        ]
    );
}

#[test]
fn cli_writes_a_committed_state_repo_that_forecasts_and_reimports_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    let data = fixture();
    for out in [&a, &b] {
        let o = import_cli(&[
            "--data",
            data.to_str().unwrap(),
            "--dataset",
            "mini",
            "--project",
            "MINI",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            format!("{}\n", out.display())
        );
    }
    assert_eq!(tree(&a), tree(&b));
    let head = git(&a, &["rev-parse", "HEAD"]);
    assert_eq!(head, git(&b, &["rev-parse", "HEAD"]));
    assert_eq!(git(&a, &["status", "--porcelain"]), "");
    assert_eq!(
        git(&a, &["log", "--format=%an %at %ct"]).trim(),
        "CommiTea 1390212000 1390212000"
    );
    assert!(tree(&a).contains_key("snapshot/issues/jira/MINI/5.yaml"));

    // Importing again into the same folder changes nothing and makes no commit.
    let ds = load_dataset(&data, "mini").unwrap();
    write_state(&a, &to_state(&ds, "MINI").unwrap()).unwrap();
    assert_eq!(git(&a, &["rev-parse", "HEAD"]), head);

    // The pipeline forecasts the imported state offline.
    let summary = pipeline::run(&options(&a)).unwrap();
    assert_eq!((summary.issues, summary.open), (5, 3));
    let forecast = std::fs::read_to_string(a.join("forecast/forecast.json")).unwrap();
    assert!(forecast.contains("jira/MINI#2"), "{forecast}");
    let loaded = Snapshot::load(&Layout::new(&b)).unwrap();
    assert_eq!(loaded, to_state(&ds, "MINI").unwrap().snapshot);

    // Imported again after the team has worked in it: the ledger and config are theirs, a proposal in the
    // checkout waits for its pull request, and only the snapshot is the import's (audit 118: a directive
    // recorded since was wiped, and the demo's proposals committed by an import into its folder).
    let head = git(&a, &["rev-parse", "HEAD"]);
    let mut ledger = std::fs::read_to_string(a.join("pm-state.md")).unwrap();
    ledger.push_str(
        "\n## D-0001 · note · 2014-01-20T10:00:00Z\n\n> Keep it small.\n\n- params: {\"text\": \"small\"}\n",
    );
    std::fs::write(a.join("pm-state.md"), &ledger).unwrap();
    std::fs::write(a.join("commitea.yaml"), {
        let c = std::fs::read_to_string(a.join("commitea.yaml")).unwrap();
        c + "# ours\n"
    })
    .unwrap();
    std::fs::create_dir_all(a.join("ops/pending")).unwrap();
    std::fs::write(a.join("ops/pending/C-0001.yaml"), "id: C-0001\n").unwrap();
    let again = |out: &Path, project: &str| {
        import_cli(&[
            "--data",
            data.to_str().unwrap(),
            "--dataset",
            "mini",
            "--project",
            project,
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let o = again(&a, "MINI");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(a.join("pm-state.md")).unwrap(),
        ledger
    );
    assert!(
        std::fs::read_to_string(a.join("commitea.yaml"))
            .unwrap()
            .ends_with("# ours\n")
    );
    assert!(a.join("ops/pending/C-0001.yaml").exists());
    assert_eq!(
        git(&a, &["rev-parse", "HEAD"]),
        head,
        "nothing of the import changed"
    );
    // A snapshot file lost is the import's again, committed alone.
    std::fs::remove_file(a.join("snapshot/issues/jira/MINI/5.yaml")).unwrap();
    git(&a, &["commit", "-qam", "lost one"]);
    let o = again(&a, "MINI");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(a.join("snapshot/issues/jira/MINI/5.yaml").exists());
    let files = git(&a, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files.trim(), "snapshot/issues/jira/MINI/5.yaml", "{files}");
    assert!(git(&a, &["status", "--porcelain"]).contains("ops/"));

    // Another project's state repo, or the demo's, is not the import's to replace.
    let o = again(&a, "OTHER");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("is the state repo of jira/MINI, not of the Jira project OTHER"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(a.join("pm-state.md")).unwrap(),
        ledger
    );
}

#[test]
fn cli_imports_all_big_enough_projects_and_reports_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let data = fixture();
    let o = import_cli(&[
        "--data",
        data.to_str().unwrap(),
        "--dataset",
        "mini",
        "--project",
        "all",
        "--min-issues",
        "2",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!("{}\n", tmp.path().join("MINI").display())
    );
    assert!(tmp.path().join("MINI/commitea.yaml").exists());
    assert!(!tmp.path().join("OTHER").exists());

    let o = import_cli(&[
        "--data",
        data.to_str().unwrap(),
        "--dataset",
        "mini",
        "--project",
        "NOPE",
        "--out",
        tmp.path().join("x").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("\"NOPE\"") && err.contains("MINI, OTHER"),
        "{err}"
    );

    let bad = tempfile::tempdir().unwrap();
    for f in ["issues", "history", "milestones"] {
        let text = std::fs::read_to_string(data.join(format!("mini_{f}.csv"))).unwrap();
        let text = if f == "history" {
            text.replace("2014-01-12T09:00:00Z,carol", "soon,carol")
        } else {
            text
        };
        std::fs::write(bad.path().join(format!("bad_{f}.csv")), text).unwrap();
    }
    let e = load_dataset(bad.path(), "bad").unwrap_err().to_string();
    assert_eq!(
        e,
        "bad_history.csv line 10: column \"at\": not a timestamp \"soon\""
    );

    // Nothing to import is said, with what there is: an export of headers only printed nothing and
    // exited 0, and `--project` on it listed nothing after "it has:".
    let empty = tempfile::tempdir().unwrap();
    for f in ["issues", "history", "milestones"] {
        let text = std::fs::read_to_string(data.join(format!("mini_{f}.csv"))).unwrap();
        let header = text.lines().next().unwrap();
        std::fs::write(
            empty.path().join(format!("hdr_{f}.csv")),
            format!("{header}\n"),
        )
        .unwrap();
    }
    let run = |data: &Path, dataset: &str, project: &str, min: &str| {
        let out = tmp.path().join(format!("out-{dataset}-{project}-{min}"));
        let o = import_cli(&[
            "--data",
            data.to_str().unwrap(),
            "--dataset",
            dataset,
            "--project",
            project,
            "--min-issues",
            min,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(!o.status.success(), "{dataset} {project}");
        assert!(!out.exists(), "nothing written");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = run(empty.path(), "hdr", "all", "1");
    assert!(
        err.contains(
            "dataset \"hdr\" has no project with 1 issues or more (it has no issues at all)"
        ),
        "{err}"
    );
    let err = run(empty.path(), "hdr", "FOO", "1");
    assert!(
        err.contains("\"FOO\" is not in dataset \"hdr\"; it has no issues at all"),
        "{err}"
    );
    let err = run(&data, "mini", "all", "50");
    assert!(
        err.contains("(it has: MINI 5, OTHER 1); name one with --project, or lower --min-issues"),
        "{err}"
    );
    // Another format, or a missing file, is said with what the import reads.
    let err = run(tmp.path(), "nothere", "all", "1");
    assert!(
        err.contains("nothere_issues.csv") && err.contains("a Jira export is three files"),
        "{err}"
    );
    // Excel's "CSV UTF-8" (a byte-order mark first) imports; a byte that is not UTF-8 is said at its line
    // (audit 118: "column \"key\" is missing", and no line at all).
    let saved = tempfile::tempdir().unwrap();
    for part in ["issues", "history", "milestones"] {
        let text = std::fs::read(data.join(format!("mini_{part}.csv"))).unwrap();
        let mut bom = b"\xef\xbb\xbf".to_vec();
        bom.extend_from_slice(&text);
        std::fs::write(saved.path().join(format!("bom_{part}.csv")), bom).unwrap();
        let mut latin = text.clone();
        if part == "issues" {
            let second = latin.iter().position(|b| *b == b'\n').unwrap();
            let third = second
                + 1
                + latin[second + 1..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .unwrap();
            latin.insert(third + 3, 0xe9);
        }
        std::fs::write(saved.path().join(format!("latin_{part}.csv")), latin).unwrap();
    }
    let out = tmp.path().join("bom");
    let o = import_cli(&[
        "--data",
        saved.path().to_str().unwrap(),
        "--dataset",
        "bom",
        "--project",
        "MINI",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = run(saved.path(), "latin", "MINI", "1");
    assert!(
        err.contains("latin_issues.csv line 3: byte 3 of the line is not UTF-8")
            && err.contains("save the export as UTF-8"),
        "{err}"
    );
    let jira_own = tempfile::tempdir().unwrap();
    for f in ["issues", "history", "milestones"] {
        std::fs::write(
            jira_own.path().join(format!("own_{f}.csv")),
            "Summary,Issue key,Issue id,Status\nCrash,ABC-1,10001,Open\n",
        )
        .unwrap();
    }
    let err = run(jira_own.path(), "own", "all", "1");
    assert!(
        err.contains(
            "line 1: column \"key\" is missing from the header; the import reads the flattened CSV"
        ),
        "{err}"
    );
    // Saved with another separator (a spreadsheet's locale): said as such, not as a stray quote on some
    // later line or a missing column (audit 186).
    let data = fixture();
    for (name, sep, words) in [("semi", ";", "semicolons"), ("tab", "\t", "tabs")] {
        let dir = tempfile::tempdir().unwrap();
        for f in ["issues", "history", "milestones"] {
            let text = std::fs::read_to_string(data.join(format!("mini_{f}.csv"))).unwrap();
            let text = if f == "issues" {
                let (head, rest) = text.split_once('\n').unwrap();
                format!("{}\n{rest}", head.replace(',', sep))
            } else {
                text
            };
            std::fs::write(dir.path().join(format!("{name}_{f}.csv")), text).unwrap();
        }
        let err = run(dir.path(), name, "MINI", "1");
        assert!(
            err.contains(&format!(
                "{name}_issues.csv line 1: the header's columns are separated by {words}"
            )) && err.contains("export it with commas"),
            "{err}"
        );
    }
}

/// What an export must hold for the state repo to be a Gitea one: nothing after now, each issue once,
/// users that are usernames, and project keys that name a folder; the first wrong row is named and nothing
/// is written, not even the projects before it.
#[test]
fn a_hostile_export_is_refused_at_its_row_with_nothing_written() {
    let data = fixture();
    let copy = |name: &str, edit: &dyn Fn(&str, String) -> String| {
        let dir = tempfile::tempdir().unwrap();
        for f in ["issues", "history", "milestones"] {
            let text = std::fs::read_to_string(data.join(format!("mini_{f}.csv"))).unwrap();
            std::fs::write(dir.path().join(format!("{name}_{f}.csv")), edit(f, text)).unwrap();
        }
        dir
    };
    let issue_line = |text: &str, key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key},")))
            .unwrap()
            .to_owned()
    };
    let import = |dir: &Path, name: &str, project: &str| {
        let out = tempfile::tempdir().unwrap();
        let o = import_cli(&[
            "--data",
            dir.to_str().unwrap(),
            "--dataset",
            name,
            "--project",
            project,
            "--min-issues",
            "1",
            "--out",
            out.path().to_str().unwrap(),
        ]);
        let written = std::fs::read_dir(out.path()).unwrap().count();
        (o, written)
    };
    type Edit = Box<dyn Fn(&str, String) -> String>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "future",
            Box::new(|f: &str, t: String| {
                if f == "history" {
                    t + "MINI-1,9999-12-31T23:59:59Z,bob,status,Closed,Open\n"
                } else {
                    t
                }
            }),
            "future_history.csv line 23: column \"at\": 9999-12-31T23:59:59Z is after now",
        ),
        (
            "twice",
            Box::new(move |f: &str, t: String| {
                if f == "issues" {
                    let first = issue_line(&t, "MINI-1");
                    t.clone() + &first + "\n"
                } else {
                    t
                }
            }),
            "the issue's key MINI-1 is on line 2 already; an export lists each issue once",
        ),
        (
            "mismatch",
            Box::new(move |f: &str, t: String| {
                if f == "issues" {
                    let first = issue_line(&t, "MINI-1");
                    t.clone() + &first.replacen("MINI-1,", "MINI-9,", 1) + "\n"
                } else {
                    t
                }
            }),
            "mismatch_issues.csv line 9: column \"key\": not MINI-1 (the row's project and number): \"MINI-9\"",
        ),
        (
            "user",
            Box::new(|f: &str, t: String| {
                if f == "issues" {
                    t.replacen(",alice,bob,", ",../../root,bob,", 1)
                } else {
                    t
                }
            }),
            "user_issues.csv line 2: column \"assignee\": not a username (ASCII letters (a–z, A–Z), digits, `-`, `_` and `.`, not first): \"../../root\"",
        ),
        (
            "key",
            Box::new(|f: &str, t: String| {
                if f == "issues" {
                    t.replace("OTHER-1,OTHER,", "../x-1,../x,")
                } else {
                    t
                }
            }),
            "project key \"../x\" of dataset \"key\" cannot name a repository or a folder",
        ),
    ];
    for (name, edit, expected) in cases {
        let dir = copy(name, &*edit);
        let (o, written) = import(dir.path(), name, "all");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
        assert_eq!(written, 0, "{name}: nothing written");
    }
}

/// The real Jira data folder: `$COMMITEA_REALWORLD_DIR`, else `<crate>/../shared/realworld-issues`; `None`
/// (after a loud message) when it is missing, and a failure instead under `COMMITEA_REQUIRE_EXTERNAL=1`.
pub fn realworld_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("COMMITEA_REALWORLD_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realworld-issues"),
        PathBuf::from,
    );
    if dir.join("duraspace_issues.csv").exists() && dir.join("apache_issues.csv").exists() {
        return Some(dir);
    }
    if std::env::var("COMMITEA_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1") {
        panic!(
            "the real Jira data is required (COMMITEA_REQUIRE_EXTERNAL=1) but {} is missing; \
             set COMMITEA_REALWORLD_DIR",
            dir.display()
        );
    }
    eprintln!(
        "\n!!!!!!!! SKIPPED: no real Jira data at {}; set COMMITEA_REALWORLD_DIR to run this test !!!!!!!!\n",
        dir.display()
    );
    None
}

#[test]
fn real_projects_import_load_and_replay_to_their_final_state() {
    let Some(dir) = realworld_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let mut imported = 0;
    for dataset in ["duraspace", "apache"] {
        let ds = load_dataset(&dir, dataset).unwrap();
        let csv = std::fs::read_to_string(dir.join(format!("{dataset}_issues.csv"))).unwrap();
        for (project, n) in ds.projects() {
            if n < 50 {
                continue;
            }
            // The rows of the project, counted independently of the CSV parser.
            let prefix = format!("{project}-");
            let rows = csv
                .lines()
                .filter(|l| {
                    l.strip_prefix(&prefix).is_some_and(|rest| {
                        let (num, tail) = rest.split_once(',').unwrap_or(("", ""));
                        !num.is_empty()
                            && num.bytes().all(|b| b.is_ascii_digit())
                            && tail.starts_with(&format!("{project},"))
                    })
                })
                .count();
            assert_eq!(n, rows, "{dataset} {project}");
            let p = to_state(&ds, &project).unwrap();
            assert_eq!(p.issues, rows);
            let target = out.path().join(dataset).join(&project);
            write_state(&target, &p).unwrap();
            let snap = Snapshot::load(&Layout::new(&target)).unwrap();
            assert_eq!(snap.issues.len(), rows, "{dataset} {project}");
            assert_eq!(snap, p.snapshot, "{dataset} {project}: the files load back");
            let rules = Rules::default();
            for (key, issue) in &snap.issues {
                timeline_consistent(issue).unwrap_or_else(|e| panic!("{key}: {e}"));
                let spans = rules.timeline(issue);
                assert_eq!(
                    spans.last().map(|s| s.column),
                    Some(rules.current(issue)),
                    "{key}: the lifecycle timeline ends where the issue is"
                );
            }
            eprintln!(
                "{dataset} {project}: {} issues, {} open, {} with a milestone, {} with an estimate",
                p.stats.issues, p.stats.open, p.stats.with_milestone, p.stats.with_estimate
            );
            imported += 1;
        }
    }
    assert_eq!(
        imported, 6,
        "FCREPO, ISLANDORA, DURACLOUD, HYPAT, CB, DRILL"
    );
}
