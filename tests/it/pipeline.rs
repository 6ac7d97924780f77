//! The whole pipeline on the small fixture: files, commits, errors, and what real `git` makes of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{TimeZone, Utc};
use commitea::config::Overrides;
use commitea::pipeline::{self, RunOptions};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Copies a fixture into a fresh temp dir and commits it as the state repo's first commit.
pub fn state_from_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture(name), dir.path());
    let repo = commitea::state::git::open_or_init(dir.path()).unwrap();
    let sig = commitea::state::git::Signature {
        name: "Test".into(),
        email: "test@example.com".into(),
        time: Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap(),
    };
    commitea::state::git::commit_all(&repo, &["public"], "fixture\n", &sig).unwrap();
    dir
}

/// The `small` fixture with `edits` (text, replacement) made to its commitea.yaml, uncommitted.
pub fn small_with(edits: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = state_from_fixture("small");
    let config = dir.path().join("commitea.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from} in {text}");
        text = text.replace(from, to);
    }
    std::fs::write(&config, text).unwrap();
    dir
}

/// The edits of [`small_with`] that limit both of the `small` fixture's members to acme/api.
pub const BOTH_ON_API_ONLY: [(&str, &str); 2] = [
    (
        "    hours_per_week: 30\n",
        "    hours_per_week: 30\n    repositories: [acme/api]\n",
    ),
    (
        "    hours_per_week: 18\n",
        "    hours_per_week: 18\n    repositories: [acme/api]\n",
    ),
];

/// A run in a state folder that is no git repository yet makes one and commits the whole state repo, its
/// config too, and says so (audit 120: commitea.yaml was left out, and every run after warned of its
/// "edits that are not committed").
#[test]
fn a_run_in_a_folder_without_git_commits_the_config_with_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("small"), dir.path());
    let out = crate::cli::commitea(&["run", "--offline", "-s", "."], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("was not a git repository: made one"),
        "{stderr}"
    );
    let files = git(dir.path(), &["ls-files"]);
    for f in [
        "commitea.yaml",
        "pm-state.md",
        "snapshot/meta.yaml",
        "forecast/forecast.json",
    ] {
        assert!(files.lines().any(|l| l == f), "{f}: {files}");
    }
    let out = crate::cli::commitea(&["run", "--offline", "-s", "."], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not committed"), "{stderr}");
}

/// Copies the folder `from` into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        let target = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub fn options(dir: &Path) -> RunOptions {
    RunOptions {
        state_dir: dir.to_path_buf(),
        now: None,
        clock: Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap(),
        offline: true,
        full_sync: false,
        token: None,
        server_fallback: None,
        overrides: Overrides::default(),
        env: Vec::new(),
        commit: true,
        render: true,
        applied_before: Vec::new(),
        skip_ci: false,
    }
}

/// Every file under `dir` except `.git`, with its bytes.
pub fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// Everything in `dir` committed as the PM (pat), with `message`; `git init` first where `init`.
pub fn commit_all_as_pm(dir: &Path, init: bool, message: &str) {
    if init {
        git(dir, &["init", "-q"]);
    }
    git(dir, &["add", "-A"]);
    git(
        dir,
        &[
            "-c",
            "user.name=pat",
            "-c",
            "user.email=pat@example.com",
            "commit",
            "-qm",
            message,
        ],
    );
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Commits `snapshot/` as it is on disk, as the sync that brought it would have: a test that edits the
/// snapshot stands in for Gitea's answer, and a run refuses edits there that are not committed.
pub fn commit_snapshot(dir: &Path) {
    let as_test = |args: &[&str]| {
        let mut all = vec!["-c", "user.name=Test", "-c", "user.email=test@example.com"];
        all.extend_from_slice(args);
        git(dir, &all);
    };
    as_test(&["add", "-A", "snapshot"]);
    as_test(&["commit", "-qm", "as synced"]);
}

fn text(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn small_fixture_forecast_views_and_pages() {
    let dir = state_from_fixture("small");
    let summary = pipeline::run(&options(dir.path())).unwrap();
    assert!(summary.commit.is_some());
    assert_eq!(summary.issues, 8);
    assert_eq!(summary.open, 7);
    // The engine and the reuse key change with every build of the source: checked, then left out.
    let forecast = text(dir.path(), "forecast/forecast.json");
    let v: serde_json::Value = serde_json::from_str(&forecast).unwrap();
    assert_eq!(v["engine"], commitea::forecast::ENGINE);
    assert!(
        v["inputs"]
            .as_str()
            .is_some_and(|k| k.len() == 40 && k.bytes().all(|b| b.is_ascii_hexdigit())),
        "{}",
        v["inputs"]
    );
    let stable: String = forecast
        .lines()
        .map(|l| match l.trim_start() {
            t if t.starts_with("\"inputs\": ") => "  \"inputs\": \"[the reuse key]\",\n".to_owned(),
            t if t.starts_with("\"engine\": ") => "  \"engine\": \"[this build]\"\n".to_owned(),
            _ => format!("{l}\n"),
        })
        .collect();
    insta::assert_snapshot!("small_forecast_json", stable);
    insta::assert_snapshot!(
        "small_board_json",
        text(dir.path(), "forecast/views/board.json")
    );
    insta::assert_snapshot!(
        "small_runway_json",
        text(dir.path(), "forecast/views/runway.json")
    );
    insta::assert_snapshot!(
        "small_overview_json",
        text(dir.path(), "forecast/views/overview.json")
    );
    insta::assert_snapshot!("small_index_html", text(dir.path(), "public/index.html"));
    insta::assert_snapshot!("small_board_html", text(dir.path(), "public/board.html"));
    insta::assert_snapshot!("small_runway_html", text(dir.path(), "public/runway.html"));
}

#[test]
fn snapshot_files_are_written_in_canonical_form() {
    let dir = state_from_fixture("small");
    let layout = commitea::state::Layout::new(dir.path());
    let snap = commitea::state::Snapshot::load(&layout).unwrap();
    let out = tempfile::tempdir().unwrap();
    let out_layout = commitea::state::Layout::new(out.path());
    snap.save(&out_layout).unwrap();
    insta::assert_snapshot!("small_state_meta", text(out.path(), "snapshot/meta.yaml"));
    insta::assert_snapshot!(
        "small_state_milestones",
        text(out.path(), "snapshot/milestones.yaml")
    );
    insta::assert_snapshot!(
        "small_state_issue_api_1",
        text(out.path(), "snapshot/issues/acme/api/1.yaml")
    );
    insta::assert_snapshot!(
        "small_state_issue_web_1",
        text(out.path(), "snapshot/issues/acme/web/1.yaml")
    );
    // Canonical form is a fixed point: loading and saving again changes nothing.
    let again = commitea::state::Snapshot::load(&out_layout).unwrap();
    assert_eq!(again, snap);
    assert_eq!(again.save(&out_layout).unwrap(), 0);
}

#[test]
fn a_second_run_makes_no_commit_and_git_reads_what_gix_wrote() {
    let dir = state_from_fixture("small");
    let first = pipeline::run(&options(dir.path())).unwrap();
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    assert_eq!(head.trim(), first.commit.as_deref().unwrap());
    let mut later = options(dir.path());
    later.clock = Utc.with_ymd_and_hms(2026, 11, 30, 10, 0, 0).unwrap();
    let second = pipeline::run(&later).unwrap();
    assert!(second.commit.is_none(), "nothing changed, so no commit");
    assert_eq!(
        git(dir.path(), &["rev-list", "--count", "HEAD"]).trim(),
        "2"
    );

    let log = git(dir.path(), &["log", "--format=%an <%ae> %at %s"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines[0],
        "CommiTea <commitea@localhost> 1796029200 commitea: forecast as of 2026-11-30 (7 open issues)"
    );
    let show = git(dir.path(), &["show", "--stat", "HEAD"]);
    assert!(show.contains("forecast/forecast.json"), "{show}");
    assert!(
        show.contains("v1.0: p80"),
        "the message lists milestone ranges: {show}"
    );
    let fsck = Command::new("git")
        .arg("-C")
        .arg(dir.path())
        .args(["fsck", "--strict", "--full"])
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "git fsck: {}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    // The index matches the commit, so the state repo is clean for a person using git.
    assert_eq!(
        git(
            dir.path(),
            &[
                "status",
                "--porcelain",
                "--",
                "forecast",
                "snapshot",
                "pm-state.md"
            ]
        ),
        ""
    );
    // The site is not committed.
    assert!(!git(dir.path(), &["ls-tree", "-r", "--name-only", "HEAD"]).contains("public/"));
}

#[test]
fn malformed_config_names_file_line_and_field_and_touches_nothing() {
    let dir = state_from_fixture("small");
    let cfg = dir.path().join("commitea.yaml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("workday_hours: 6", "workday_hours: six");
    std::fs::write(&cfg, text).unwrap();
    let before = tree(dir.path());
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    let err = pipeline::run(&options(dir.path())).unwrap_err().to_string();
    assert!(
        err.starts_with("commitea.yaml line 15 column 18: calendar.workday_hours:"),
        "{err}"
    );
    assert!(err.contains("invalid type"), "{err}");
    assert_eq!(
        tree(dir.path()),
        before,
        "a failed run leaves every file as it was"
    );
    assert_eq!(git(dir.path(), &["rev-parse", "HEAD"]), head);
}

#[test]
fn malformed_snapshot_names_file_line_and_field_and_touches_nothing() {
    let dir = state_from_fixture("small");
    let f = dir.path().join("snapshot/issues/acme/api/4.yaml");
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("2026-11-25T10:00:00Z\nlabels", "yesterday\nlabels");
    std::fs::write(&f, text).unwrap();
    // Committed, as a malformed file reaches the branch: through a merge.
    commit_snapshot(dir.path());
    let before = tree(dir.path());
    let err = pipeline::run(&options(dir.path())).unwrap_err().to_string();
    assert!(
        err.starts_with("snapshot/issues/acme/api/4.yaml line 6 column 13: updated_at:"),
        "{err}"
    );
    assert_eq!(tree(dir.path()), before);

    let dir = state_from_fixture("small");
    std::fs::write(
        dir.path().join("snapshot/issues/acme/api/9.yaml"),
        "number: 10\ntitle: x\n",
    )
    .unwrap();
    commit_snapshot(dir.path());
    let err = pipeline::run(&options(dir.path())).unwrap_err().to_string();
    assert!(err.contains("snapshot/issues/acme/api/9.yaml"), "{err}");

    let dir = state_from_fixture("small");
    let f = dir.path().join("snapshot/issues/acme/web/3.yaml");
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("labels:", "lables:");
    std::fs::write(&f, text).unwrap();
    // Committed, as a malformed file reaches the branch: through a merge.
    commit_snapshot(dir.path());
    let err = pipeline::run(&options(dir.path())).unwrap_err().to_string();
    assert!(
        err.contains("snapshot/issues/acme/web/3.yaml line 7")
            && err.contains("unknown field `lables`"),
        "{err}"
    );
}

/// A file of `snapshot/` deleted or edited by hand is refused, named, and nothing is touched: a run read
/// the working tree's snapshot and committed the deletions as "issues gone from Gitea" (audit 114). A
/// writer killed before its commit leaves its files behind: the run that takes over its lock puts them
/// back and says so.
#[test]
fn a_hand_edited_snapshot_is_refused_and_a_killed_writers_files_are_put_back() {
    let dir = state_from_fixture("small");
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    let edited = dir.path().join("snapshot/issues/acme/api/5.yaml");
    let original = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, original.replace("title: ", "title: HAND ")).unwrap();
    std::fs::remove_file(dir.path().join("snapshot/issues/acme/web/3.yaml")).unwrap();
    let before = tree(dir.path());
    let err = pipeline::run(&options(dir.path())).unwrap_err().to_string();
    assert!(
        err.starts_with(
            "snapshot/ differs from the last commit in 2 files (snapshot/issues/acme/api/5.yaml changed, \
             snapshot/issues/acme/web/3.yaml deleted)"
        ) && err.contains("git checkout HEAD -- snapshot"),
        "{err}"
    );
    assert_eq!(tree(dir.path()), before);
    assert_eq!(git(dir.path(), &["rev-parse", "HEAD"]), head);
    // Put back as the error says, the run goes on.
    git(dir.path(), &["checkout", "HEAD", "--", "snapshot"]);
    pipeline::run(&options(dir.path())).unwrap();
    let head = git(dir.path(), &["rev-parse", "HEAD"]);

    // A writer killed between writing and committing: its snapshot and forecast files, and the lock file
    // still naming it.
    std::fs::write(&edited, original.replace("title: ", "title: HALF-WRITTEN ")).unwrap();
    let forecast = dir.path().join("forecast/forecast.json");
    std::fs::write(&forecast, "{\"cut\": ").unwrap();
    crate::support::killed_writer(dir.path(), "commitea run");
    pipeline::run(&options(dir.path())).unwrap();
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), original);
    assert_eq!(
        git(
            dir.path(),
            &["show", "HEAD:snapshot/issues/acme/api/5.yaml"]
        ),
        original
    );
    assert_eq!(
        git(dir.path(), &["rev-parse", "HEAD"]),
        head,
        "nothing new to commit"
    );
    assert_eq!(
        git(
            dir.path(),
            &["status", "--porcelain", "--", "snapshot", "forecast"]
        ),
        ""
    );
}

/// The snapshot guard's edges (audit 117): a run that does not commit is refused a hand edit too (it
/// listed the edit as Gitea's word, and the next run committed it); a writer that stopped and wrote no
/// snapshot (a `plan`) has nothing put back, and a file another command left (a backtest) is kept; a
/// checkout whose line endings git turned to CRLF is no edit.
#[test]
fn the_snapshot_guard_holds_for_runs_that_do_not_commit_and_spares_what_it_should() {
    let dir = state_from_fixture("small");
    pipeline::run(&options(dir.path())).unwrap();
    let edited = dir.path().join("snapshot/issues/acme/api/5.yaml");
    let original = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, original.replace("title: ", "title: HAND ")).unwrap();
    let mut no_commit = options(dir.path());
    no_commit.commit = false;
    let err = pipeline::run(&no_commit).unwrap_err().to_string();
    assert!(
        err.starts_with("snapshot/ differs from the last commit in 1 file"),
        "{err}"
    );
    std::fs::write(&edited, &original).unwrap();

    // A `plan` killed while a finished backtest waits in forecast/: the backtest stays.
    let backtest = dir.path().join("forecast/backtest.json");
    std::fs::write(&backtest, "{\"a finished backtest\": true}\n").unwrap();
    crate::support::killed_writer(dir.path(), "commitea plan");
    pipeline::run(&options(dir.path())).unwrap();
    assert_eq!(
        std::fs::read_to_string(&backtest).unwrap(),
        "{\"a finished backtest\": true}\n"
    );
    // Committed with the run, as `backtest --write` then `run` does.
    assert!(git(dir.path(), &["show", "--stat", "HEAD"]).contains("forecast/backtest.json"));
    let head = git(dir.path(), &["rev-parse", "HEAD"]);

    // Line endings git wrote as CRLF: the same text, and nothing to commit.
    std::fs::write(&edited, original.replace('\n', "\r\n")).unwrap();
    pipeline::run(&options(dir.path())).unwrap();
    std::fs::write(&edited, &original).unwrap();
    assert_eq!(git(dir.path(), &["rev-parse", "HEAD"]), head);
}

#[test]
fn same_state_and_seed_give_byte_identical_output() {
    let a = state_from_fixture("small");
    let b = state_from_fixture("small");
    pipeline::run(&options(a.path())).unwrap();
    pipeline::run(&options(b.path())).unwrap();
    let ta: BTreeMap<_, _> = tree(a.path())
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".git"))
        .collect();
    assert_eq!(ta, tree(b.path()));
    assert_eq!(
        git(a.path(), &["rev-parse", "HEAD"]),
        git(b.path(), &["rev-parse", "HEAD"])
    );
}

#[test]
fn ledger_problems_reach_the_run_summary_and_the_directives_page() {
    let dir = state_from_fixture("replay/small-with-ledger");
    let summary = pipeline::run(&options(dir.path())).unwrap();
    let problems: Vec<&String> = summary
        .warnings
        .iter()
        .filter(|w| w.starts_with("ledger line"))
        .collect();
    assert!(problems.len() >= 2, "{:?}", summary.warnings);
    let page = text(dir.path(), "public/directives.html");
    assert!(page.contains("Problems in the ledger"), "{page}");
    let first = problems[0].replace('"', "&quot;");
    assert!(page.contains(first.split(':').next().unwrap()), "{page}");
    // The well-formed directives are listed with the PM's words.
    assert!(page.contains("D-0001"), "{page}");
    // Nothing in the ledger was lost or reordered.
    let ledger = std::fs::read(dir.path().join("pm-state.md")).unwrap();
    let original = std::fs::read(fixture("replay/small-with-ledger").join("pm-state.md")).unwrap();
    assert_eq!(ledger, original);
    insta::assert_snapshot!(
        "small_directives_html",
        text(dir.path(), "public/directives.html")
    );
}

#[test]
fn a_missing_or_partial_team_is_said_once_with_the_people_to_add() {
    let dir = state_from_fixture("small");
    let config_path = dir.path().join("commitea.yaml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    let (head, rest) = config.split_once("team:\n").unwrap();
    let (team, tail) = rest.split_once("calendar:\n").unwrap();

    // No team at all: one warning, naming whom the open work is assigned to.
    std::fs::write(&config_path, format!("{head}team: []\ncalendar:\n{tail}")).unwrap();
    let summary = pipeline::run(&options(dir.path())).unwrap();
    let about_team: Vec<&String> = summary
        .warnings
        .iter()
        .filter(|w| w.contains("team"))
        .collect();
    assert_eq!(about_team.len(), 1, "{:?}", summary.warnings);
    assert!(
        about_team[0].contains("the team in commitea.yaml is empty"),
        "{about_team:?}"
    );
    assert!(
        about_team[0].contains("ann") && about_team[0].contains("bo"),
        "{about_team:?}"
    );

    // Only the first person: one warning, naming the other.
    let first = team
        .split_inclusive('\n')
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("- name:"))
        .collect::<String>();
    let ann = format!("{}{first}", team.lines().next().unwrap().to_owned() + "\n");
    std::fs::write(&config_path, format!("{head}team:\n{ann}calendar:\n{tail}")).unwrap();
    let summary = pipeline::run(&options(dir.path())).unwrap();
    let about_team: Vec<&String> = summary
        .warnings
        .iter()
        .filter(|w| w.contains("team"))
        .collect();
    assert_eq!(about_team.len(), 1, "{:?}", summary.warnings);
    assert!(
        about_team[0].starts_with("bo has open work assigned"),
        "{about_team:?}"
    );
    assert!(
        about_team[0].contains("add them under `team:`"),
        "{about_team:?}"
    );

    // Someone who has left, with work still assigned: said, with the date, not left silently beyond the horizon.
    let gone = team.replacen("  - name: bo\n", "  - name: bo\n    ends: 2026-11-20\n", 1);
    std::fs::write(
        &config_path,
        format!("{head}team:\n{gone}calendar:\n{tail}"),
    )
    .unwrap();
    let summary = pipeline::run(&options(dir.path())).unwrap();
    let left: Vec<&String> = summary
        .warnings
        .iter()
        .filter(|w| w.starts_with("bo has"))
        .collect();
    assert_eq!(left.len(), 1, "{:?}", summary.warnings);
    assert!(
        left[0].contains("open issue")
            // bo works Monday to Wednesday: the Friday given is not a day worked.
            && left[0].contains("no working hour in the forecast's horizon (their last day, team[].ends: 2026-11-20, was 2026-11-18)")
            && left[0].contains("until reassigned on Gitea"),
        "{left:?}"
    );

    // Starting inside the horizon but away for all of it: the calendar is why, not the start (the
    // warning had said "they start on 2026-12-07, past it").
    let away = team.replacen(
        "  - name: bo\n",
        "  - name: bo\n    starts: 2026-12-07\n    time_off:\n      - { from: 2026-12-07, to: 2031-12-31 }\n",
        1,
    );
    std::fs::write(
        &config_path,
        format!("{head}team:\n{away}calendar:\n{tail}"),
    )
    .unwrap();
    let summary = pipeline::run(&options(dir.path())).unwrap();
    let away: Vec<&String> = summary
        .warnings
        .iter()
        .filter(|w| w.starts_with("bo has"))
        .collect();
    assert_eq!(away.len(), 1, "{:?}", summary.warnings);
    assert!(
        away[0].contains(
            "(their calendar (working days, time off, holidays) gives them no working hours in it)"
        ) && !away[0].contains("past it"),
        "{away:?}"
    );
}

#[test]
fn a_site_folder_that_cannot_be_written_fails_the_run_before_it_commits() {
    let dir = state_from_fixture("small");
    std::fs::write(dir.path().join("public"), "a file where the site goes").unwrap();
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    let before = tree(dir.path());
    let err = pipeline::run(&options(dir.path())).unwrap_err().to_string();
    assert!(
        err.contains("public is a file, not a folder") && err.contains("site.output"),
        "{err}"
    );
    assert_eq!(
        git(dir.path(), &["rev-parse", "HEAD"]),
        head,
        "nothing committed"
    );
    assert_eq!(tree(dir.path()), before, "nothing written");
}

#[test]
fn a_milestone_closed_on_gitea_is_said_in_the_commit() {
    // It leaves the forecast; the commit said nothing of it (an audit of fifty daily runs).
    let dir = state_from_fixture("small");
    pipeline::run(&options(dir.path())).unwrap();
    let path = dir.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let closed = text.replacen(
        "  title: v1.0\n",
        "  title: v1.0\n  closed_at: 2026-11-30T09:30:00Z\n",
        1,
    );
    let open_state = closed.find("  state: open").unwrap();
    let closed = format!(
        "{}  state: closed{}",
        &closed[..open_state],
        &closed[open_state + "  state: open".len()..]
    );
    std::fs::write(&path, closed).unwrap();
    commit_all_as_pm(dir.path(), false, "v1.0 closed on Gitea");
    let mut later = options(dir.path());
    later.clock = Utc.with_ymd_and_hms(2026, 11, 30, 10, 0, 0).unwrap();
    pipeline::run(&later).unwrap();
    let message = git(dir.path(), &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("- v1.0: closed on Gitea, ") && message.contains("still open in it"),
        "{message}"
    );
}

#[test]
fn a_run_given_a_moment_commits_the_forecast_its_readers_make() {
    // `run --now 2026-12-02T09:00Z` on a state whose sync changed nothing committed a forecast from
    // 09:00; the tools and the standup, knowing only its day, forecast from midnight, and reported
    // drift against the run's own commit. And `--now` before the snapshot's moment committed a forecast
    // the readers dated otherwise.
    let dir = state_from_fixture("small");
    let layout = commitea::state::Layout::new(dir.path());
    let synced_at = commitea::state::Snapshot::load(&layout)
        .unwrap()
        .meta
        .synced_at;
    let committed_key = || {
        let text = std::fs::read_to_string(dir.path().join("forecast/forecast.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        (v["asOf"].clone(), v["inputs"].clone())
    };
    for now in [
        synced_at + chrono::Duration::days(2) + chrono::Duration::hours(9),
        synced_at - chrono::Duration::days(3),
    ] {
        let mut o = options(dir.path());
        o.now = Some(now);
        o.clock = now;
        pipeline::run(&o).unwrap();
        // The commit is dated no earlier than the data its forecast reads.
        let dated = git(dir.path(), &["log", "-1", "--format=%at"]);
        assert_eq!(
            dated.trim().parse::<i64>().unwrap(),
            now.max(synced_at).timestamp(),
            "the commit of a run given {now}"
        );
        let (as_of, key) = committed_key();
        let zone = commitea::config::Config::load(dir.path(), vec![], &Default::default())
            .unwrap()
            .calendar
            .timezone;
        let reader = pipeline::day_zero(&layout, &zone, synced_at);
        let mut read = options(dir.path());
        read.now = Some(reader);
        read.commit = false;
        read.render = false;
        let c = pipeline::compute(&read).unwrap();
        assert_eq!(
            serde_json::to_value(&c.report.inputs).unwrap(),
            key,
            "a reader forecasts from {reader}, the run from {now} ({as_of})"
        );
    }
}

#[test]
fn unassigned_work_nobody_may_take_is_planned_for_nobody_and_said() {
    // Both members limited to acme/api: acme/web's unassigned work went to them all the same (an empty
    // list of who may take it was read as everybody), its dates as if someone would (audit 178).
    let dir = small_with(&BOTH_ON_API_ONLY);
    let mut o = options(dir.path());
    o.commit = false;
    o.render = false;
    let c = pipeline::compute(&o).unwrap();
    let web3: commitea::domain::IssueKey = "acme/web#3".parse().unwrap();
    let f = c.report.issues.iter().find(|f| f.issue == web3).unwrap();
    assert_eq!(f.planned_assignee, None, "{f:?}");
    assert_eq!(f.p80.date(), None, "{f:?}");
    assert!(
        c.report.warnings.iter().any(|w| w.contains(
            "of acme/web, and no member of the team takes work there (team[].repositories): nobody is planned"
        )),
        "{:?}",
        c.report.warnings
    );
    // acme/api's work is planned as before.
    let api3: commitea::domain::IssueKey = "acme/api#3".parse().unwrap();
    let g = c.report.issues.iter().find(|f| f.issue == api3).unwrap();
    assert!(g.p80.date().is_some(), "{g:?}");
}

#[test]
fn a_leavers_last_days_show_the_work_the_plan_gives_them() {
    // ann (6 h a day) leaves on Monday 2026-11-30, day 0, with acme/api#3 (2 days) to do: the plan has
    // her on it that day, and her page showed it free, as the issue ends beyond the horizon (audits 175,
    // 178).
    let dir = small_with(&[(
        "    hours_per_week: 30
",
        "    hours_per_week: 30
    ends: 2026-11-30
",
    )]);
    let mut o = options(dir.path());
    o.commit = false;
    o.render = false;
    let c = pipeline::compute(&o).unwrap();
    let api3: commitea::domain::IssueKey = "acme/api#3".parse().unwrap();
    let f = c.report.issues.iter().find(|f| f.issue == api3).unwrap();
    assert!(
        f.planned_start.date().is_some() && f.planned_end.date().is_none(),
        "{f:?}"
    );
    let people = commitea::views::person::people(commitea::views::Inputs {
        plan: &c.plan,
        report: &c.report,
    });
    let ann = people.iter().find(|p| p.person == "ann").unwrap();
    let first = &ann.weeks[0];
    assert_eq!(first.week, "2026-11-30");
    assert_eq!(first.planned_hours, first.capacity_hours, "{:?}", ann.weeks);
    assert!(first.planned_hours > 0.0, "{:?}", ann.weeks);
}

#[test]
fn a_closed_milestones_due_date_no_longer_drives_its_open_issues() {
    // Web beta closed on Gitea with acme/web#3 open: its issue page still gave "P(done by the
    // milestone's due date)", and the schedule still ranked it by that date (audit 176).
    let dir = state_from_fixture("small");
    let path = dir.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let closed = text.replace(
        "  state: open\n  due_on: 2026-12-23T23:59:59Z\n",
        "  state: closed\n  due_on: 2026-12-23T23:59:59Z\n  closed_at: 2026-11-29T10:00:00Z\n",
    );
    assert_ne!(closed, text);
    std::fs::write(&path, closed).unwrap();
    let mut o = options(dir.path());
    o.commit = false;
    o.render = false;
    let c = pipeline::compute(&o).unwrap();
    let by_due = |k: &str| {
        let key: commitea::domain::IssueKey = k.parse().unwrap();
        c.report
            .issues
            .iter()
            .find(|f| f.issue == key)
            .unwrap()
            .probability_by_due
    };
    assert_eq!(by_due("acme/web#3"), None);
    assert!(by_due("acme/api#3").is_some());
}

#[test]
fn work_a_colleague_may_take_does_not_stay_with_a_leaver_after_the_passes() {
    // Each pass moved the work that slipped past leaver's last day, and the next gave them other work
    // that slipped in turn: after three passes acme/web#23 (two days) stayed with leaver, its p80 beyond
    // the horizon, though webby may take it and is free from the 10th (audit 178).
    let dir = state_from_fixture("leaver-passes");
    let mut o = options(dir.path());
    o.commit = false;
    o.render = false;
    o.now = Some(Utc.with_ymd_and_hms(2026, 11, 30, 0, 0, 0).unwrap());
    o.overrides.seed = Some(7);
    let c = pipeline::compute(&o).unwrap();
    let web23: commitea::domain::IssueKey = "acme/web#23".parse().unwrap();
    let f = c.report.issues.iter().find(|f| f.issue == web23).unwrap();
    assert_ne!(f.planned_assignee.as_deref(), Some("leaver"), "{f:?}");
    assert!(f.p80.date().is_some(), "{f:?}");
    assert!(
        !c.report
            .warnings
            .iter()
            .any(|w| w.contains("planned for leaver may not be done")),
        "{:?}",
        c.report.warnings
    );
}

#[test]
fn a_directive_the_forecast_leaves_out_is_not_listed_as_in_force() {
    // A hand-written directive on an issue Gitea does not have: the Changes page listed it "active"
    // with its effect, as if it counted (audit 175).
    let dir = state_from_fixture("small");
    std::fs::write(
        dir.path().join("pm-state.md"),
        "# PM directives\n\n## D-0001 · reprioritize · 2026-11-29T10:00:00Z\n\n> First.\n\n\
         - target: issue acme/api#999\n- params: {\"priority\": 0}\n- status: active\n- by: ann\n\n\
         ## D-0002 · reprioritize · 2026-11-29T11:00:00Z\n\n> Then this.\n\n\
         - target: issue acme/api#3\n- params: {\"priority\": 0}\n- status: active\n- by: ann\n",
    )
    .unwrap();
    commit_all_as_pm(dir.path(), false, "Two directives");
    pipeline::run(&options(dir.path())).unwrap();
    let page = std::fs::read_to_string(dir.path().join("public/changes.html")).unwrap();
    let row = |id: &str| {
        let at = page.find(&format!(">{id}</td>")).unwrap();
        page[at..at + page[at..].find("</tr>").unwrap()].to_owned()
    };
    assert!(
        row("D-0001").contains("left out: it changes nothing"),
        "{}",
        row("D-0001")
    );
    assert!(!row("D-0002").contains("left out"), "{}", row("D-0002"));
}

#[test]
fn someone_with_nothing_planned_is_not_busy_until_today() {
    // A member on leave for months, their queue empty, read "30 h/week, busy until 2026-11-30" in the
    // team's table, as if free today (audit 178).
    let dir = small_with(&[(
        "team:\n",
        "team:\n  - name: away\n    time_off:\n      - { from: 2026-11-01, to: 2027-06-30 }\n",
    )]);
    let mut o = options(dir.path());
    o.commit = false;
    pipeline::run(&o).unwrap();
    let page = std::fs::read_to_string(dir.path().join("public/people.html")).unwrap();
    let at = page.find("<bdi>away</bdi>").unwrap();
    let row = &page[at..at + page[at..].find("</tr>").unwrap()];
    assert!(row.contains("nothing planned"), "{row}");
    let own = std::fs::read_to_string(dir.path().join("public/people/away.html")).unwrap();
    assert!(own.contains("nothing planned for them"), "{own}");
}

#[test]
fn a_run_dated_before_the_committed_forecast_says_so() {
    // `run --now` a day before the last commit's forecast, with a change on Gitea: the sync stamps the
    // snapshot with that day, and the backdated forecast was committed after the later one silently.
    let dir = state_from_fixture("small");
    let run = |now: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
            .args(["run", "--offline", "--trials", "200", "--now", now, "-s"])
            .arg(dir.path())
            .env_remove("COMMITEA_STATE")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let later = run("2026-12-09");
    assert!(
        !later.contains("before the day of the committed forecast"),
        "{later}"
    );
    let earlier = run("2026-12-07");
    assert!(
        earlier
            .contains("--now 2026-12-07 is before the day of the committed forecast (2026-12-09)"),
        "{earlier}"
    );
}

#[test]
fn a_day_zero_before_the_sync_is_said_not_forecast_silently() {
    let dir = state_from_fixture("small");
    let said = |summary: &pipeline::RunSummary| {
        summary
            .warnings
            .iter()
            .filter(|w| w.starts_with("snapshot: synced on"))
            .cloned()
            .collect::<Vec<_>>()
    };
    let summary = pipeline::run(&options(dir.path())).unwrap();
    assert!(said(&summary).is_empty(), "{:?}", summary.warnings);
    // A preview (`commitea plan`) forecasts from the day it is given; a committing run takes the snapshot's.
    let mut opts = options(dir.path());
    opts.now = Some(Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap());
    opts.commit = false;
    let summary = pipeline::run(&opts).unwrap();
    assert_eq!(
        said(&summary),
        [
            "snapshot: synced on 2026-11-30, after the forecast's day zero 2026-06-01 (--now): the issues \
          are forecast as they stood on 2026-11-30; `commitea backtest` rewinds them to past days"
        ],
        "{:?}",
        summary.warnings
    );
}

#[test]
fn the_as_of_day_is_the_teams_date_in_its_time_zone_for_the_run_and_its_readers() {
    // The fixture was synced 2026-11-30 08:00 UTC. At 20:00 UTC it is already 1 December in Sydney; at
    // 02:00 UTC on 1 December it is still 30 November in Los Angeles.
    for (zone, now, day) in [
        ("UTC", "2026-11-30T20:00:00Z", "2026-11-30"),
        ("Australia/Sydney", "2026-11-30T20:00:00Z", "2026-12-01"),
        ("America/Los_Angeles", "2026-12-01T02:00:00Z", "2026-11-30"),
        ("+13:00", "2026-11-30T12:00:00Z", "2026-12-01"),
        // A day given as a day is that day, whatever the zone.
        ("America/Los_Angeles", "2026-12-02", "2026-12-02"),
    ] {
        let dir = state_from_fixture("small");
        let config = dir.path().join("commitea.yaml");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(
            &config,
            text.replace(
                "calendar:\n",
                &format!("calendar:\n  timezone: \"{zone}\"\n"),
            ),
        )
        .unwrap();
        let commitea = |args: &[&str]| crate::toolcli::commitea_ok(dir.path(), args);
        commitea(&["run", "--offline", "--trials", "200", "--now", now]);
        let forecast = std::fs::read_to_string(dir.path().join("forecast/forecast.json")).unwrap();
        assert!(
            forecast.contains(&format!("\"as_of\": \"{day}\"")),
            "{zone} at {now}: {}",
            &forecast[..300.min(forecast.len())]
        );
        // A reader of the committed state (the tools) answers from the same day.
        let answer = commitea(&["tool", "query_project", r#"{"view":"runway"}"#]);
        assert!(
            answer.contains(&format!("\"asOf\":\"{day}\"")),
            "{zone}: {answer}"
        );
    }
    // A zone this machine does not know is refused, naming the key.
    let dir = state_from_fixture("small");
    let config = dir.path().join("commitea.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("calendar:\n", "calendar:\n  timezone: Mars/Olympus\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["plan", "-s"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("calendar.timezone")
            && err.contains("\"Mars/Olympus\" is not a time zone this machine knows"),
        "{err}"
    );
}

#[test]
fn the_first_run_after_an_upgrade_says_the_moves_are_the_engines_not_the_projects() {
    let dir = state_from_fixture("small");
    let commitea = |args: &[&str]| crate::toolcli::commitea_ok(dir.path(), args);
    commitea(&["run", "--offline", "--now", "2026-11-30"]);
    // The committed forecast as an older CommiTea would have written it: no engine, its own reuse key,
    // and its own numbers (one issue's p80 two months later).
    let path = dir.path().join("forecast/forecast.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("engine");
    v["inputs"] = serde_json::json!("0".repeat(40));
    let moved = v["issues"][0]["issue"].as_str().unwrap().to_owned();
    v["issues"][0]["p80"] = serde_json::json!("2027-02-01");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    git(
        dir.path(),
        &["commit", "-qam", "the forecast of an older CommiTea"],
    );
    // A directive recorded since moves issues too: those keep their reason (audit 86: a capacity
    // directive's slip was put down to the engine).
    let away = v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["issue"] != moved.as_str() && i["assignee"].is_string())
        .unwrap();
    let last = away["issue"].as_str().unwrap().to_owned();
    let person = away["assignee"].as_str().unwrap().to_owned();
    commitea(&[
        "directive",
        "--kind",
        "capacity",
        "--target",
        &format!("member {person}"),
        "--params",
        r#"{"from": "2026-11-30", "to": "2026-12-11", "hours_per_week": 0}"#,
        "--quote",
        "They are away for two weeks.",
        "--by",
        "pat",
        "--yes",
    ]);
    // An issue's own estimate set on Gitea since: that move is the project's whatever the engine
    // (audit 141: after an upgrade every row was put down to the engine).
    let own = v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["issue"].as_str())
        .filter(|k| *k != moved && *k != last)
        .find_map(|k| {
            let (repo, n) = k.split_once('#').unwrap();
            let path = dir.path().join(format!("snapshot/issues/{repo}/{n}.yaml"));
            let text = std::fs::read_to_string(&path).ok()?;
            let edited = text.replacen("\n- est/1d\n", "\n- est/2d\n", 1);
            (edited != text).then(|| {
                std::fs::write(&path, edited).unwrap();
                k.to_owned()
            })
        })
        .expect("an open issue estimated at a day");
    crate::pipeline::commit_all_as_pm(dir.path(), false, "the directive, approved");

    commitea(&["run", "--offline", "--now", "2026-11-30"]);
    let standup: serde_json::Value = serde_json::from_str(&commitea(&[
        "tool",
        "query_project",
        r#"{"view":"standup","filters":{"limit":100}}"#,
    ]))
    .unwrap();
    let drift = &standup["drift"];
    assert_eq!(drift["sinceThen"]["engineChanged"], true, "{drift}");
    let re_estimated = drift["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["subject"] == own.as_str())
        .unwrap_or_else(|| panic!("{own} did not move: {drift}"));
    assert_eq!(
        re_estimated["why"],
        "own change; CommiTea itself changed since that forecast too (another version made it)",
        "{re_estimated}"
    );
    assert!(
        drift["summary"]
            .as_str()
            .unwrap()
            .starts_with("CommiTea itself changed since that forecast"),
        "{drift}"
    );
    // Both versions are named (audit 141: with runners on two builds, which one ran was nowhere).
    assert!(
        drift["summary"].as_str().unwrap().contains(&format!(
            "(a version before 2026-12-05 made it, {} made this one)",
            commitea::forecast::ENGINE
        )),
        "{drift}"
    );
    let issue = drift["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["subject"] == moved.as_str())
        .unwrap_or_else(|| panic!("{moved} did not move: {drift}"));
    assert!(
        issue["why"]
            .as_str()
            .unwrap()
            .contains("the new engine's, not the project's"),
        "{issue}"
    );
    let directed = drift["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["subject"] == last.as_str())
        .unwrap_or_else(|| panic!("{last} did not move: {drift}"));
    assert!(
        directed["directives"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
            && directed["why"]
                .as_str()
                .unwrap()
                .contains("CommiTea itself changed since that forecast too"),
        "{directed}"
    );
    // The next run, by the same CommiTea, compares with this one's forecast: nothing is the engine's.
    // The commit says the directive's reason with the engine's change beside it.
    let message = git(dir.path(), &["log", "-1", "--format=%B"]);
    // (Her hours first where they alone make half the move, audit 123.)
    assert!(
        message.contains(&format!("capacity of {person}"))
            && message.contains("; CommiTea itself changed since that forecast too"),
        "{message}"
    );
    // The commit names both builds (audit 144: only "another version").
    assert!(
        message.contains(&format!(
            "CommiTea itself changed (a version before 2026-12-05 made that forecast, {} this one)",
            commitea::forecast::ENGINE
        )),
        "{message}"
    );
    git(
        dir.path(),
        &["commit", "-q", "--allow-empty", "-m", "nothing"],
    );
    commitea(&["run", "--offline", "--now", "2026-12-01"]);
    let standup: serde_json::Value = serde_json::from_str(&commitea(&[
        "tool",
        "query_project",
        r#"{"view":"standup"}"#,
    ]))
    .unwrap();
    assert!(
        standup["drift"]["sinceThen"].get("engineChanged").is_none(),
        "{}",
        standup["drift"]
    );
}

#[test]
fn a_run_refuses_to_commit_over_a_newer_commiteas_forecast() {
    let dir = state_from_fixture("small");
    crate::toolcli::commitea_ok(dir.path(), &["run", "--offline", "--now", "2026-11-30"]);
    let path = dir.path().join("forecast/forecast.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["engine"] = serde_json::json!("99.0.0+0123456789abcdef");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    git(
        dir.path(),
        &["commit", "-qam", "a newer CommiTea's forecast"],
    );
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["run", "--offline", "--now", "2026-12-01", "-s"])
        .arg(dir.path())
        .env_remove("COMMITEA_STATE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("forecast/forecast.json was made by CommiTea 99.0.0+0123456789abcdef, newer than this one")
            && err.contains("vars.COMMITEA_VERSION"),
        "{err}"
    );
    assert_eq!(
        git(dir.path(), &["rev-parse", "HEAD"]),
        head,
        "nothing is committed"
    );
    // A preview reads it all the same.
    crate::toolcli::commitea_ok(dir.path(), &["plan", "--now", "2026-12-01"]);
}

#[test]
fn an_index_another_git_command_holds_does_not_undo_a_commit_made() {
    // A `.git/index.lock` left by another git command: the run moved the branch, then failed on the
    // index, exited 1 and put the old files back under the new commit.
    let dir = state_from_fixture("small");
    let lock = dir.path().join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args([
            "run",
            "--offline",
            "--trials",
            "200",
            "--now",
            "2026-12-01",
            "-s",
        ])
        .arg(dir.path())
        .env_remove("COMMITEA_STATE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_ne!(git(dir.path(), &["rev-parse", "HEAD"]), head);
    assert!(err.contains("the index was not updated"), "{err}");
    assert!(err.contains(".git/index.lock"), "{err}");
    // The files on disk are the commit's.
    for file in ["forecast/forecast.json", "forecast/views/runway.json"] {
        assert_eq!(
            git(dir.path(), &["show", &format!("HEAD:{file}")]),
            std::fs::read_to_string(dir.path().join(file)).unwrap(),
            "{file}"
        );
    }
    // With the lock gone, the next run with nothing to commit brings the index up to date.
    std::fs::remove_file(&lock).unwrap();
    crate::toolcli::commitea_ok(
        dir.path(),
        &["run", "--offline", "--trials", "200", "--now", "2026-12-01"],
    );
    assert_eq!(
        git(
            dir.path(),
            &["status", "--porcelain", "--untracked-files=no"]
        ),
        ""
    );
}
