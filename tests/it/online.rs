//! `commitea run` and `commitea sync` against the Gitea emulator, as a user runs them: the binary, a state
//! repo, the token in the environment.

use std::path::Path;
use std::process::Command;

use commitea::state::{Layout, Snapshot};
use commitea_testkit::gitea::{Anonymous, Dataset, Emulator, EmulatorOptions, Fault, FaultKind};

use crate::pipeline::{git, state_from_fixture, tree};

const TOKEN: &str = "tok-Very-Secret-7781";

fn emulator_for(fixture: &str) -> Emulator {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture);
    let snapshot = Snapshot::load(&Layout::new(dir)).unwrap();
    let options = EmulatorOptions {
        token: TOKEN.into(),
        ..EmulatorOptions::default()
    };
    Emulator::start(Dataset::from_snapshot(&snapshot), options).unwrap()
}

fn commitea(args: &[&str], state: &Path, server: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(args)
        .arg("-s")
        .arg(state)
        .env("COMMITEA_SERVER", server)
        .env("COMMITEA_GITEA_TOKEN", TOKEN)
        .env("COMMITEA_LOG", "debug")
        .env_remove("GITEA_TOKEN")
        .env_remove("FORGEJO_TOKEN")
        .env_remove("COMMITEA_TOKEN")
        .env_remove("GITHUB_TOKEN")
        .output()
        .expect("the binary runs")
}

/// Everything the run left behind, git objects decompressed, plus what it printed.
fn everything_written(state: &Path, out: &std::process::Output) -> String {
    let mut all = String::new();
    for (path, bytes) in tree(state) {
        all.push_str(&path);
        all.push_str(&String::from_utf8_lossy(&bytes));
    }
    let objects = Command::new("git")
        .arg("-C")
        .arg(state)
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()
        .unwrap();
    all.push_str(&String::from_utf8_lossy(&objects.stdout));
    for entry in walkdir::WalkDir::new(state.join(".git"))
        .into_iter()
        .filter_map(Result::ok)
    {
        if entry.file_type().is_file() && !entry.path().to_string_lossy().contains("/objects/") {
            all.push_str(&String::from_utf8_lossy(
                &std::fs::read(entry.path()).unwrap(),
            ));
        }
    }
    all.push_str(&String::from_utf8_lossy(&out.stdout));
    all.push_str(&String::from_utf8_lossy(&out.stderr));
    all
}

#[test]
fn run_syncs_forecasts_and_commits_without_leaking_the_token() {
    let emulator = emulator_for("small");
    let state = state_from_fixture("small");
    let out = commitea(&["run"], state.path(), &emulator.url());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sync: 8 issues from 2 repositories"),
        "{stderr}"
    );
    // The synced issues are the fixture's issues.
    let synced = Snapshot::load(&Layout::new(state.path())).unwrap();
    let fixture = Snapshot::load(&Layout::new(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small"),
    ))
    .unwrap();
    assert_eq!(synced.issues, fixture.issues);
    assert_eq!(synced.meta.server.as_deref(), Some(emulator.url().as_str()));
    let log = git(state.path(), &["log", "--format=%s"]);
    assert!(log.starts_with("commitea: forecast as of"), "{log}");
    assert!(state.path().join("forecast/forecast.json").exists());
    let written = everything_written(state.path(), &out);
    assert!(!written.contains(TOKEN), "the token leaked");
    assert!(
        written.contains("acme/api#3"),
        "the search covers the written files"
    );
}

#[test]
fn sync_commits_the_snapshot_and_a_failed_sync_touches_nothing() {
    let emulator = emulator_for("small");
    let state = state_from_fixture("small");
    let out = commitea(&["sync"], state.path(), &emulator.url());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        git(state.path(), &["log", "-1", "--format=%s"])
            .starts_with("commitea: sync of 2 repositories (8 issues)")
    );
    assert!(!everything_written(state.path(), &out).contains(TOKEN));
    // A sync's message says what it brought (audit 99: the same line, whatever changed).
    let key: commitea::domain::IssueKey = "acme/api#3".parse().unwrap();
    emulator.with_dataset(|d| d.update_issue(&key, |i| i.title = "Renamed on Gitea".into()));
    let out = commitea(&["sync"], state.path(), &emulator.url());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = git(state.path(), &["log", "-1", "--format=%B"]);
    assert!(
        body.contains("- issues changed (1): acme/api#3\n"),
        "{body}"
    );

    let before = tree(state.path());
    let head = git(state.path(), &["rev-parse", "HEAD"]);
    emulator.inject(
        Fault::new(FaultKind::Status(500))
            .times(1000)
            .on("/milestones"),
    );
    let out = commitea(&["run"], state.path(), &emulator.url());
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sync failed, the snapshot is as it was") && stderr.contains("milestones"),
        "{stderr}"
    );
    assert!(stderr.contains("`commitea run --offline`"), "{stderr}");
    assert!(!stderr.contains(TOKEN));
    assert_eq!(
        tree(state.path()),
        before,
        "a failed sync leaves every file as it was"
    );
    assert_eq!(git(state.path(), &["rev-parse", "HEAD"]), head);
}

#[test]
fn a_wrong_token_says_which_variable_to_set() {
    let emulator = emulator_for("small");
    let state = state_from_fixture("small");
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["sync", "-s"])
        .arg(state.path())
        .env("COMMITEA_SERVER", emulator.url())
        .env("COMMITEA_GITEA_TOKEN", "wrong")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("COMMITEA_GITEA_TOKEN"), "{stderr}");
}

#[test]
fn a_second_run_with_no_server_change_rewrites_nothing_and_costs_few_requests() {
    let emulator = emulator_for("small");
    let state = state_from_fixture("small");
    let first = commitea(&["run"], state.path(), &emulator.url());
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let commits = git(state.path(), &["rev-list", "--count", "HEAD"]);
    let before = tree(state.path());
    emulator.reset_counts();
    let second = commitea(&["run"], state.path(), &emulator.url());
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let requests = emulator.request_count();
    eprintln!("no-change re-sync of 2 repositories: {requests} requests");
    assert!(requests <= 4 * 2 + 2, "{requests} requests");
    assert_eq!(
        git(state.path(), &["rev-list", "--count", "HEAD"]),
        commits,
        "no new commit"
    );
    let after = tree(state.path());
    let changed: Vec<&String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        changed.iter().all(|k| k.starts_with("public/")),
        "rewritten: {changed:?}"
    );

    // One issue changes on the server: the next run re-reads it alone and commits the change.
    emulator.with_dataset(|ds| {
        ds.update_issue(&"acme/api#4".parse().unwrap(), |i| {
            i.title = "Rate limiting per token".into()
        });
    });
    emulator.reset_counts();
    let third = commitea(&["run"], state.path(), &emulator.url());
    assert!(
        third.status.success(),
        "{}",
        String::from_utf8_lossy(&third.stderr)
    );
    let requests = emulator.request_count();
    eprintln!("re-sync after one change: {requests} requests");
    assert!(requests <= 4 * 2 + 2 + 6, "{requests} requests");
    let issue =
        std::fs::read_to_string(state.path().join("snapshot/issues/acme/api/4.yaml")).unwrap();
    assert!(issue.contains("title: Rate limiting per token"), "{issue}");
    assert!(
        git(state.path(), &["show", "--stat", "HEAD"]).contains("snapshot/issues/acme/api/4.yaml")
    );
}

/// A run after a sync and every later reader of the state (the tools, `plan`) forecast from one day zero,
/// so the readers reuse the committed forecast rather than computing another one with other numbers —
/// also on the next day, when the sync found nothing new and the snapshot kept its old time.
#[test]
fn readers_reuse_the_forecast_of_an_online_run_on_its_day_and_the_next() {
    use chrono::TimeZone;
    use commitea::pipeline::{RunOptions, run};
    let emulator = emulator_for("small");
    let state = state_from_fixture("small");
    let online = |clock: chrono::DateTime<chrono::Utc>| {
        run(&RunOptions {
            state_dir: state.path().to_path_buf(),
            now: None,
            clock,
            offline: false,
            full_sync: false,
            token: Some(TOKEN.into()),
            server_fallback: None,
            overrides: commitea::config::Overrides::default(),
            env: vec![("COMMITEA_SERVER".into(), emulator.url())],
            commit: true,
            render: false,
            applied_before: Vec::new(),
            skip_ci: false,
        })
        .unwrap()
    };
    let read = || {
        let out = commitea(&["plan", "--json"], state.path(), &emulator.url());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let committed: commitea::forecast::ForecastReport = serde_json::from_slice(
            &std::fs::read(state.path().join("forecast/forecast.json")).unwrap(),
        )
        .unwrap();
        let planned: commitea::forecast::ForecastReport =
            serde_json::from_slice(&out.stdout).unwrap();
        (
            String::from_utf8_lossy(&out.stderr).into_owned(),
            planned,
            committed,
        )
    };
    const REUSED: &str = "the committed forecast is reused";
    // The first run syncs everything: its day zero is the moment of the sync.
    online(
        chrono::Utc
            .with_ymd_and_hms(2026, 12, 14, 15, 30, 0)
            .unwrap(),
    );
    let (log, planned, committed) = read();
    assert!(log.contains(REUSED), "{log}");
    assert_eq!(planned, committed);
    // The next day the sync finds nothing new: the forecast moves to that day, and readers follow it.
    online(
        chrono::Utc
            .with_ymd_and_hms(2026, 12, 15, 9, 10, 0)
            .unwrap(),
    );
    let (log, planned, committed) = read();
    assert_eq!(committed.as_of.to_string(), "2026-12-15");
    assert!(log.contains(REUSED), "{log}");
    assert_eq!(planned, committed);
}

#[test]
fn a_missing_token_a_refused_one_a_wrong_scheme_and_a_login_page_are_each_said_once_with_what_to_do()
 {
    let emulator = emulator_for("small");
    let state = state_from_fixture("small");
    let run = |server: &str, token: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_commitea"));
        c.args(["run", "-s"])
            .arg(state.path())
            .env("COMMITEA_SERVER", server)
            .env_remove("COMMITEA_GITEA_TOKEN")
            .env_remove("GITEA_TOKEN")
            .env_remove("FORGEJO_TOKEN")
            .env_remove("COMMITEA_TOKEN")
            .env_remove("GITHUB_TOKEN");
        if let Some(t) = token {
            c.env("COMMITEA_GITEA_TOKEN", t);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let url = emulator.url();

    // Without a token Gitea answers a private repository 404, as if it did not exist: the message says
    // the token is missing, not that the name may be wrong.
    let stderr = run(&url, None);
    assert!(
        stderr.contains("404 Not Found")
            && stderr.contains("no Gitea token is set")
            && stderr.contains("or is private"),
        "{stderr}"
    );
    assert!(!stderr.contains("not visible to the token"), "{stderr}");
    // Said once, and only as the error (the server's address is left out: its random port may hold
    // "404").
    assert_eq!(
        stderr.replace(&url, "").matches("404").count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("page size"), "{stderr}");
    // A server that lets only signed-in users call its API (REQUIRE_SIGNIN_VIEW) answers 403.
    let signin = Emulator::start(
        Dataset::from_snapshot(&Snapshot::load(&Layout::new(state.path())).unwrap()),
        EmulatorOptions {
            token: TOKEN.into(),
            anonymous: Anonymous::SignInRequired,
            ..EmulatorOptions::default()
        },
    )
    .unwrap();
    let stderr = run(&signin.url(), None);
    assert!(
        stderr.contains("403 Forbidden")
            && stderr.contains("lets only signed-in users call its API")
            && stderr.contains("no Gitea token is set")
            && stderr.contains("COMMITEA_GITEA_TOKEN"),
        "{stderr}"
    );
    assert!(!stderr.contains("the token may not read"), "{stderr}");
    assert_eq!(
        stderr.replace(&signin.url(), "").matches("403").count(),
        1,
        "{stderr}"
    );
    // Public repositories are read without a token, as Gitea lets a visitor read them; what a visitor
    // cannot read or do is said.
    let public = Emulator::start(
        Dataset::from_snapshot(&Snapshot::load(&Layout::new(state.path())).unwrap()),
        EmulatorOptions {
            token: TOKEN.into(),
            anonymous: Anonymous::Public,
            ..EmulatorOptions::default()
        },
    )
    .unwrap();
    // An approved op file on the branch waits for a run with a token; the run itself goes on.
    let filed = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["tool", "apply_changes", "-s"])
        .arg(state.path())
        .arg(r#"{"ops":[{"op":"set_priority","issue":"acme/api#3","priority":"p/0"}]}"#)
        .output()
        .unwrap();
    assert!(filed.status.success(), "{filed:?}");
    git(state.path(), &["add", "ops"]);
    git(state.path(), &["commit", "-qm", "approved"]);
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["run", "--no-commit", "-s"])
        .arg(state.path())
        .env("COMMITEA_SERVER", public.url())
        .env_remove("COMMITEA_GITEA_TOKEN")
        .env_remove("GITEA_TOKEN")
        .env_remove("FORGEJO_TOKEN")
        .env_remove("COMMITEA_TOKEN")
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("without a token") && stderr.contains("only what it shows the public"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 approved op file on the branch (C-0001) stays pending"),
        "{stderr}"
    );
    assert!(state.path().join("ops/pending/C-0001.yaml").exists());

    let stderr = run(&url, Some("tok-wrong"));
    assert!(
        stderr.contains("the server refused the Gitea token")
            && stderr.contains("the token sent was COMMITEA_GITEA_TOKEN's, the first of them set"),
        "{stderr}"
    );

    // https against a plain-HTTP server: said at once (not retried six times), with the fix.
    let stderr = run(&url.replacen("http://", "https://", 1), Some(TOKEN));
    assert!(
        stderr.contains("no TLS connection") && stderr.contains("give its URL with http://"),
        "{stderr}"
    );
    assert!(!stderr.contains("times over"), "{stderr}");

    // A sign-in page in front of the API is a web page, not a Gitea answer to report.
    emulator.inject(Fault::new(FaultKind::LoginPage).times(1000));
    let stderr = run(&url, Some(TOKEN));
    assert!(
        stderr.contains("answered a web page, not Gitea's API"),
        "{stderr}"
    );
    assert!(!stderr.contains("please report"), "{stderr}");
}

#[test]
fn a_server_that_echoes_the_token_never_gets_it_printed() {
    let emulator = emulator_for("small");
    let state = state_from_fixture("small");
    // A refusal (not retried) and an overload (retried, logged at each retry, then given up on), each
    // quoting the request's Authorization header, as a proxy in front of Gitea may.
    for (status, times) in [(422, 1), (502, 1000)] {
        emulator.clear_faults();
        emulator.inject(
            Fault::new(FaultKind::EchoAuthorization(status))
                .times(times)
                .on("/milestones"),
        );
        let out = commitea(&["run"], state.path(), &emulator.url());
        assert_eq!(out.status.code(), Some(1), "{status}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("{status}")) && stderr.contains("Authorization: token ***"),
            "the server's message is shown, masked: {stderr}"
        );
        assert!(
            !everything_written(state.path(), &out).contains(TOKEN),
            "{status}: the token leaked: {stderr}"
        );
    }
    // A long message is cut short: the token must be masked before the cut, or the part of it before
    // the cut is shown (the token here starts ten characters before it).
    emulator.clear_faults();
    emulator.inject(
        Fault::new(FaultKind::EchoAuthorizationAfter(422, 141))
            .times(1)
            .on("/milestones"),
    );
    let out = commitea(&["run"], state.path(), &emulator.url());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Authorization: token ***"), "{stderr}");
    assert!(
        !everything_written(state.path(), &out).contains(&TOKEN[..8]),
        "part of the token leaked: {stderr}"
    );
}

#[test]
fn a_full_read_that_finds_most_issues_gone_stops_the_sync_and_commits_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let demo = commitea::demo::generate(&commitea::demo::DemoSpec::scaled(120));
    commitea::demo::write(&demo, &state).unwrap();
    git(tmp.path(), &["init", "-q", state.to_str().unwrap()]);
    git(&state, &["add", "-A"]);
    git(&state, &["commit", "-q", "-m", "demo"]);
    let repo = demo.snapshot.meta.repositories[0].name.clone();
    let held = demo
        .snapshot
        .issues
        .keys()
        .filter(|k| k.repo == repo)
        .count();
    assert!(held >= 20, "{held} issues in {repo}");
    let options = EmulatorOptions {
        token: TOKEN.into(),
        ..EmulatorOptions::default()
    };
    let emulator = Emulator::start(Dataset::from_snapshot(&demo.snapshot), options).unwrap();
    let run = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_commitea"));
        cmd.args(["run", "--full", "-s"])
            .arg(&state)
            .env("COMMITEA_SERVER", emulator.url())
            .env("COMMITEA_GITEA_TOKEN", TOKEN)
            .env("COMMITEA_FORECAST_TRIALS", "200")
            .env_remove("GITEA_TOKEN")
            .env_remove("COMMITEA_TOKEN");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = tree(&state);
    let head = git(&state, &["rev-parse", "HEAD"]);

    // Gitea lists issues through its issue indexer: while the index is rebuilt, the list is empty.
    let listing = format!("/repos/{repo}/issues?");
    emulator.inject(Fault::new(FaultKind::EmptyList).times(1000).on(&listing));
    let out = run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{repo}: a full read of its issues found 0 of the {held} the last snapshot holds"
        )) && stderr.contains("COMMITEA_SYNC_MAX_VANISHED_SHARE=1"),
        "{stderr}"
    );
    assert_eq!(tree(&state), before, "nothing written");
    assert_eq!(git(&state, &["rev-parse", "HEAD"]), head);

    // A person who knows the issues are gone says so for one run.
    let out = run(&[("COMMITEA_SYNC_MAX_VANISHED_SHARE", "1")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let synced = Snapshot::load(&Layout::new(&state)).unwrap();
    assert_eq!(synced.issues.keys().filter(|k| k.repo == repo).count(), 0);
    assert!(!synced.issues.is_empty());
}

/// What a sync that does not commit wrote is Gitea's word, and the next run that commits takes it in:
/// in a worktree too, whose `.git` is a file (audit 117: the list could not be written there, and the
/// next run was refused as if the sync's file were a hand edit). A hand edit after it still is refused.
#[test]
fn a_sync_that_does_not_commit_is_taken_in_by_the_next_run_in_a_worktree_too() {
    let emulator = emulator_for("small");
    let state = state_from_fixture("small");
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(commitea(&["sync"], state.path(), &emulator.url()));
    let tree = tempfile::tempdir().unwrap();
    let wt = tree.path().join("wt");
    git(
        state.path(),
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    assert!(wt.join(".git").is_file());
    let key: commitea::domain::IssueKey = "acme/api#3".parse().unwrap();
    emulator.with_dataset(|d| d.update_issue(&key, |i| i.title = "Renamed on Gitea".into()));
    ok(commitea(&["sync", "--no-commit"], &wt, &emulator.url()));
    let file = wt.join("snapshot/issues/acme/api/3.yaml");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("Renamed on Gitea")
    );
    // A hand edit beside it is still one.
    let other = wt.join("snapshot/issues/acme/api/4.yaml");
    let text = std::fs::read_to_string(&other).unwrap();
    std::fs::write(&other, text.replace("title: ", "title: HAND ")).unwrap();
    let out = commitea(&["run"], &wt, &emulator.url());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains(
            "differs from the last commit in 1 file (snapshot/issues/acme/api/4.yaml changed)"
        ),
        "{said}"
    );
    std::fs::write(&other, text).unwrap();
    ok(commitea(&["run"], &wt, &emulator.url()));
    assert!(
        git(&wt, &["show", "HEAD:snapshot/issues/acme/api/3.yaml"]).contains("Renamed on Gitea")
    );
}

/// A CI runner gives a step a pseudo-terminal (Gitea's and Forgejo's, act's host mode), and its log viewer
/// turns every `\r` of a progress line into a line of its own: under `CI` the sync logs plain lines, as
/// it does with no terminal (audit 172: 241 lines of "sync acme/api: n/241 issues").
#[test]
fn a_ci_job_on_a_pseudo_terminal_gets_plain_log_lines() {
    if !crate::support::external("script") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = commitea::demo::generate(&commitea::demo::DemoSpec::bundled());
    let dir = tmp.path().join("d");
    commitea::demo::write(&state, &dir).unwrap();
    let emulator = Emulator::start(
        Dataset::from_snapshot(&state.snapshot),
        EmulatorOptions {
            token: TOKEN.into(),
            ..EmulatorOptions::default()
        },
    )
    .unwrap();
    let sync = |ci: Option<&str>| {
        let line = format!(
            "{} sync --full --no-commit -s '{}'",
            env!("CARGO_BIN_EXE_commitea"),
            dir.display()
        );
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &line, "/dev/null"])
            .env("COMMITEA_SERVER", emulator.url())
            .env("COMMITEA_GITEA_TOKEN", TOKEN)
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITEA_ACTIONS");
        if let Some(v) = ci {
            cmd.env("CI", v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // On a terminal a person watches, the line updates in place (so the pty is one).
    let watched = sync(None);
    assert!(watched.contains("\rsync acme/"), "{watched:?}");
    let job = sync(Some("true"));
    assert!(job.contains("sync acme/"), "{job:?}");
    assert!(
        !job.contains("\rsync acme/") && !job.contains("\u{1b}["),
        "{job:?}"
    );
}
