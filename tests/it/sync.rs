//! Full sync against the Gitea emulator: the bundled demo and the small fixture round-trip byte for byte,
//! auth errors are clear, injected faults are survived by retries, and the token never leaks.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use commitea::domain::{IssueKey, RepoName};
use commitea::gitea::client::{Client, ClientError, ClientOptions};
use commitea::gitea::sync::{SyncError, full_sync};
use commitea::state::{Layout, Snapshot};
use commitea_testkit::gitea::{Dataset, Emulator, EmulatorOptions, Fault, FaultKind};

const TOKEN: &str = "emulator-token";

fn root(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
}

fn load(dir: &str) -> Snapshot {
    Snapshot::load(&Layout::new(root(dir))).unwrap()
}

fn start(snapshot: &Snapshot) -> Emulator {
    Emulator::start(Dataset::from_snapshot(snapshot), EmulatorOptions::default()).unwrap()
}

/// Fast retries for tests: short backoffs, a 20 s budget.
fn fast() -> ClientOptions {
    ClientOptions {
        max_retries: 5,
        max_retry_time: Duration::from_secs(20),
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(200),
        request_timeout: Duration::from_secs(2),
        jitter_seed: 7,
        ..ClientOptions::default()
    }
}

fn client(emu: &Emulator, token: &str, options: ClientOptions) -> Client {
    Client::new(&emu.url(), Some(token.to_owned()), options).unwrap()
}

fn repos(snapshot: &Snapshot) -> Vec<RepoName> {
    snapshot
        .meta
        .repositories
        .iter()
        .map(|r| r.name.clone())
        .collect()
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    out.sort();
    out
}

/// Asserts that `got/snapshot` holds exactly the files of `want/snapshot`, byte for byte.
fn assert_same_snapshot(want: &Path, got: &Path) {
    let (w, g) = (want.join("snapshot"), got.join("snapshot"));
    let (wf, gf) = (files(&w), files(&g));
    let missing: Vec<_> = wf.iter().filter(|f| !gf.contains(f)).collect();
    let extra: Vec<_> = gf.iter().filter(|f| !wf.contains(f)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing files {missing:?}, extra files {extra:?}"
    );
    for f in &wf {
        let a = std::fs::read_to_string(w.join(f)).unwrap();
        let b = std::fs::read_to_string(g.join(f)).unwrap();
        if a != b {
            let line = a
                .lines()
                .zip(b.lines())
                .position(|(x, y)| x != y)
                .unwrap_or_else(|| a.lines().count().min(b.lines().count()));
            panic!(
                "snapshot/{} differs at line {}:\n  want: {:?}\n  got:  {:?}",
                f.display(),
                line + 1,
                a.lines().nth(line),
                b.lines().nth(line)
            );
        }
    }
}

/// Checks that every cursor of `got` is on the server's clock — a minute before the emulator's clock when
/// the sync began (its clock starts at the newest change and runs on in real time) — then sets them to
/// `want`'s, so the rest of the snapshot can be compared byte for byte.
fn same_cursors(got: &mut Snapshot, want: &Snapshot, emu: &Emulator) {
    let server_now = emu.with_dataset(|d| d.clock());
    for r in &got.meta.repositories {
        let cursor = r.cursor.expect("a cursor");
        let behind = server_now - cursor;
        assert!(
            behind >= chrono::Duration::seconds(60) && behind < chrono::Duration::seconds(120),
            "{}: cursor {cursor} is not a minute behind the server's clock {server_now}",
            r.name
        );
    }
    got.meta.repositories.clone_from(&want.meta.repositories);
}

/// Syncs the emulator loaded with `dir`'s snapshot, saves it and compares every file with `dir`'s (`exact`)
/// or with a canonical re-save of `dir`'s snapshot.
fn round_trip(dir: &str, exact: bool) -> (Emulator, Snapshot) {
    let want = load(dir);
    let emu = start(&want);
    let c = client(&emu, TOKEN, fast());
    let started = Instant::now();
    let mut got = full_sync(&c, &repos(&want), want.meta.synced_at).unwrap();
    eprintln!(
        "{dir}: full sync of {} issues: {} requests (client {}), {:?}; by endpoint: {:#?}",
        got.issues.len(),
        emu.request_count(),
        c.request_count(),
        started.elapsed(),
        emu.counts()
    );
    assert_eq!(emu.request_count(), c.request_count());
    // The emulator's URL is a loopback address; the snapshot names the real server.
    assert_eq!(got.meta.server.as_deref(), Some(emu.url().as_str()));
    got.meta.server.clone_from(&want.meta.server);
    same_cursors(&mut got, &want, &emu);
    let tmp = tempfile::tempdir().unwrap();
    got.save(&Layout::new(tmp.path())).unwrap();
    if exact {
        assert_same_snapshot(&root(dir), tmp.path());
    } else {
        // A hand-written fixture need not be in canonical form: compare with its canonical re-save.
        let canonical = tempfile::tempdir().unwrap();
        want.save(&Layout::new(canonical.path())).unwrap();
        assert_same_snapshot(canonical.path(), tmp.path());
    }
    assert_eq!(got, want);
    (emu, got)
}

#[test]
fn demo_round_trips_byte_for_byte() {
    let (emu, got) = round_trip("state", true);
    // One listing each per repository, then one timeline page past the end per issue at least; comments come
    // with the timeline, dependencies only where the timeline shows one.
    let issues = got.issues.len() as u64;
    assert_eq!(emu.count("GET /settings/api"), 1);
    assert!(emu.count("GET /repos/{owner}/{repo}/issues/{index}/timeline") > issues);
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/comments"),
        0
    );
    let with = |f: &dyn Fn(&commitea::domain::Issue) -> bool| {
        got.issues.values().filter(|i| f(i)).count() as u64
    };
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/dependencies"),
        with(&|i| i.timeline.iter().any(|e| e.kind.is_dependency()))
    );
    // Every tracked time comes with the timeline entry that added it; none was deleted.
    assert!(with(&|i| !i.tracked_times.is_empty()) > 50);
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/times"),
        0
    );
}

#[test]
fn dangling_references_are_left_out_and_a_hidden_blocker_is_counted() {
    // Gitea answers a `null` timeline element for a reference to a deleted pull request and a placeholder
    // (number 0, no repository) for a blocker the token cannot see. The first is left out; the second
    // still holds its issue up, so it is counted (it had been dropped without a word).
    let mut want = load("state");
    let emu = start(&want);
    crate::emulator::add_dangling_references(&emu);
    let c = client(&emu, TOKEN, fast());
    let mut got = full_sync(&c, &repos(&want), want.meta.synced_at).unwrap();
    got.meta.server.clone_from(&want.meta.server);
    same_cursors(&mut got, &want, &emu);
    let blocked: Vec<&IssueKey> = got
        .issues
        .iter()
        .filter(|(_, i)| i.hidden_blockers > 0)
        .map(|(k, _)| k)
        .collect();
    assert_eq!(blocked.len(), 1, "{blocked:?}");
    assert_eq!(got.issues[blocked[0]].hidden_blockers, 1);
    want.issues.get_mut(blocked[0]).unwrap().hidden_blockers = 1;
    for (k, i) in &want.issues {
        assert_eq!(got.issues.get(k), Some(i), "{k}");
    }
    assert_eq!(got, want);
}

/// A pull request an issue waits on keeps its state in the snapshot, as a blocker no issue file holds, and
/// Gitea (the emulator, as its `IssueNoDependenciesLeft` joins the issue table) refuses to close the issue
/// while it is open (audit 116: the emulator let the close through).
#[test]
fn a_pull_request_an_issue_waits_on_keeps_its_state_and_holds_its_close() {
    use commitea::domain::{EventKind, OpenState, TimelineEvent};
    let want = load("state");
    let emu = start(&want);
    let repos = repos(&want);
    let (waiting, pull) = emu.with_dataset(|ds| {
        let repo = ds.repositories()[0].clone();
        let number = (1..10_000)
            .find(|n| {
                ds.pull(&repo, *n)
                    .is_some_and(|p| p.state == OpenState::Open)
            })
            .expect("an open pull request");
        let mut w = ds
            .issues(&repo)
            .iter()
            .find(|i| i.state == OpenState::Open && i.depends_on.is_empty())
            .map(|i| (*i).clone())
            .unwrap();
        w.depends_on = vec![repo.issue(number)];
        w.timeline.push(TimelineEvent::new(
            9_000_003,
            EventKind::AddDependency,
            w.updated_at,
            &w.author,
        ));
        let key = repo.issue(w.number);
        ds.insert_issue(&repo, w);
        (key, repo.issue(number))
    });
    let c = client(&emu, TOKEN, fast());
    let got = full_sync(&c, &repos, want.meta.synced_at).unwrap();
    let held: Vec<(String, OpenState)> = got.issues[&waiting]
        .outside_blockers
        .iter()
        .map(|b| (b.issue.to_string(), b.state))
        .collect();
    assert_eq!(held, [(pull.to_string(), OpenState::Open)]);
    let path = format!("/repos/{}/issues/{}", waiting.repo, waiting.number);
    let refused = c.send_json::<serde_json::Value>(
        reqwest::Method::PATCH,
        &path,
        Some(&serde_json::json!({"state": "closed"})),
        false,
    );
    assert!(format!("{refused:?}").contains("412"), "{refused:?}");
}

#[test]
fn a_blocker_outside_the_configured_repositories_keeps_its_state_and_the_forecast_says_what_it_assumes()
 {
    use commitea::domain::{EventKind, OpenState, TimelineEvent};
    let want = load("state");
    let emu = start(&want);
    let repos = repos(&want);
    let infra = RepoName::new("acme", "infra");
    let waiting = emu.with_dataset(|ds| {
        let repo = ds.repositories()[0].clone();
        let base = ds
            .issues(&repo)
            .iter()
            .find(|i| i.state == OpenState::Open && i.depends_on.is_empty())
            .map(|i| (*i).clone())
            .unwrap();
        // Two issues of a repository the config does not name: one still open, one closed.
        ds.add_repository(&infra);
        for (number, state) in [(5, OpenState::Open), (6, OpenState::Closed)] {
            let mut i = base.clone();
            i.number = number;
            i.title = format!("infra {number}");
            i.depends_on.clear();
            i.timeline.clear();
            i.state = state;
            i.closed_at = (state == OpenState::Closed).then_some(i.updated_at);
            ds.insert_issue(&infra, i);
        }
        let mut w = base.clone();
        w.depends_on = vec![infra.issue(5), infra.issue(6)];
        w.timeline.push(TimelineEvent::new(
            9_000_002,
            EventKind::AddDependency,
            w.updated_at,
            &w.author,
        ));
        ds.insert_issue(&repo, w);
        repo.issue(base.number)
    });
    crate::emulator::add_dangling_references(&emu);
    let c = client(&emu, TOKEN, fast());
    let got = full_sync(&c, &repos, want.meta.synced_at).unwrap();
    assert!(!got.issues.keys().any(|k| k.repo == infra));
    let outside: Vec<(String, OpenState)> = got.issues[&waiting]
        .outside_blockers
        .iter()
        .map(|b| (b.issue.to_string(), b.state))
        .collect();
    assert_eq!(
        outside,
        [
            ("acme/infra#5".to_owned(), OpenState::Open),
            ("acme/infra#6".to_owned(), OpenState::Closed)
        ]
    );
    // Made private: to a token that may write the blocked issue Gitea still names each blocker and its
    // state (its "confidential" form), so nothing changes.
    emu.with_dataset(|d| d.hide_repository(&infra));
    let private = full_sync(&c, &repos, want.meta.synced_at).unwrap();
    assert_eq!(
        private.issues[&waiting].outside_blockers,
        got.issues[&waiting].outside_blockers
    );
    assert_eq!(
        private.issues[&waiting].hidden_blockers,
        got.issues[&waiting].hidden_blockers
    );
    emu.with_dataset(|d| d.show_repository(&infra));
    // Closed since: an incremental sync reads nothing of the blocked issue (Gitea does not mark it
    // changed), yet the blocker it waits on is closed in the snapshot.
    emu.with_dataset(|d| {
        assert!(d.update_issue(&infra.issue(5), |i| {
            i.state = OpenState::Closed;
            i.closed_at = Some(i.updated_at);
        }));
    });
    let later = commitea::gitea::sync::sync(
        &c,
        &repos,
        Some(&got),
        want.meta.synced_at + chrono::Duration::hours(1),
        &commitea::gitea::sync::SyncOptions::default(),
    )
    .unwrap();
    assert!(later.full.is_empty(), "an incremental sync");
    assert!(later.changed);
    let states: Vec<OpenState> = later.snapshot.issues[&waiting]
        .outside_blockers
        .iter()
        .map(|b| b.state)
        .collect();
    assert_eq!(states, [OpenState::Closed, OpenState::Closed]);
    // A server failing for it keeps its last state: a repository outside the plan does not stop the sync.
    emu.inject(
        Fault::new(FaultKind::Status(500))
            .times(1000)
            .on("/repos/acme/infra/issues/5"),
    );
    let failing = commitea::gitea::sync::sync(
        &c,
        &repos,
        Some(&later.snapshot),
        want.meta.synced_at + chrono::Duration::hours(2),
        &commitea::gitea::sync::SyncOptions::default(),
    )
    .expect("the sync goes on");
    assert_eq!(
        failing.snapshot.issues[&waiting].outside_blockers,
        later.snapshot.issues[&waiting].outside_blockers
    );
    emu.clear_faults();
    // The forecast: the open one is said, with what the dates assume and what to do; the closed one is
    // not; the hidden blocker is said and flagged.
    let config = commitea::config::Config::load(&root("state"), [], &Default::default()).unwrap();
    let plan = commitea::plan::Plan::from_snapshot(&got, &config, want.meta.synced_at);
    let report = commitea::forecast::run(
        &plan,
        &commitea::forecast::Settings {
            trials: 50,
            seed: 1,
            horizon_days: 200,
        },
    );
    let about = |k: &IssueKey| -> Vec<&String> {
        report
            .warnings
            .iter()
            .filter(|w| w.starts_with(&format!("{k}:")))
            .collect()
    };
    let said: Vec<&String> = about(&waiting)
        .into_iter()
        .filter(|w| w.contains("acme/infra"))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("waits on acme/infra#5, open in acme/infra")
            && said[0].contains("add acme/infra to repositories"),
        "{said:?}"
    );
    let flags = |k: &IssueKey| {
        report
            .issues
            .iter()
            .find(|f| &f.issue == k)
            .map(|f| f.flags.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        flags(&waiting)
            .iter()
            .filter(|f| **f == commitea::forecast::Flag::UnknownDependency)
            .count(),
        1
    );
    let hidden = got
        .issues
        .iter()
        .find(|(_, i)| i.hidden_blockers > 0)
        .map(|(k, _)| k.clone())
        .unwrap();
    if got.issues[&hidden].state == OpenState::Open {
        assert!(flags(&hidden).contains(&commitea::forecast::Flag::HiddenDependency));
        let said = about(&hidden);
        assert!(
            said.iter()
                .any(|w| w.contains("waits on 1 issue the token may not read")),
            "{said:?}"
        );
    }
    // acme/infra added to the repositories: every repository is read in full, so the issue that waits
    // on it names its blocker as a dependency, not one outside (audit 168: the old form stayed until the
    // weekly full read, and after a rename the wait was dropped as "not in the snapshot").
    let mut more = repos.clone();
    more.push(infra.clone());
    let added = commitea::gitea::sync::sync(
        &c,
        &more,
        Some(&later.snapshot),
        want.meta.synced_at + chrono::Duration::hours(3),
        &commitea::gitea::sync::SyncOptions::default(),
    )
    .unwrap();
    assert_eq!(added.full.len(), more.len(), "{:?}", added.full);
    let read = &added.snapshot.issues[&waiting];
    assert!(read.outside_blockers.is_empty(), "{read:?}");
    assert!(read.depends_on.contains(&infra.issue(5)), "{read:?}");
}

/// Records a deletion of one of `key`'s tracked times in its timeline, as Gitea does: the sync must then
/// read `/times`, since the deletion does not say which time it removed.
fn delete_a_time(ds: &mut Dataset, key: &commitea::domain::IssueKey) {
    let mut i = ds.issue(key).unwrap().clone();
    let at = i.tracked_times[0].created;
    i.timeline.push(commitea::domain::TimelineEvent::new(
        199,
        commitea::domain::EventKind::from("delete_time_manual"),
        at,
        "ann",
    ));
    ds.insert_issue(&key.repo, i);
}

#[test]
fn a_deleted_time_sends_the_sync_to_times_unless_they_would_be_partial_or_are_off() {
    let snap = load("tests/fixtures/small");
    let api = RepoName::new("acme", "api");
    let key = api.issue(1);
    let sync = |emu: &Emulator| {
        full_sync(
            &client(emu, TOKEN, fast()),
            &repos(&snap),
            snap.meta.synced_at,
        )
        .unwrap()
    };
    let with_deletion = |options: EmulatorOptions| {
        let emu = Emulator::start(Dataset::from_snapshot(&snap), options).unwrap();
        emu.with_dataset(|ds| delete_a_time(ds, &key));
        emu
    };
    // The deletion does not say which time it removed: `/times` is asked, once, for that issue only.
    let emu = with_deletion(EmulatorOptions::default());
    let got = sync(&emu);
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/times"),
        1
    );
    assert_eq!(
        got.issues[&key].tracked_times,
        snap.issues[&key].tracked_times
    );
    // With time tracking off, Gitea answers 404 "timetracker is disabled": a warning, not a failure.
    let mut options = EmulatorOptions::default();
    options.time_tracking_disabled.insert(api.clone());
    let emu = with_deletion(options);
    let got = sync(&emu);
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/times"),
        0
    );
    // The times the timeline shows are kept, as for every other issue of the repository.
    assert_eq!(
        got.issues[&key].tracked_times,
        snap.issues[&key].tracked_times
    );
    assert_eq!(got.issues.len(), snap.issues.len());
    // A token whose user may only read: Gitea's `/times` would list that user's own entries alone
    // (nobody else's), so it is not asked, and the timeline's times are kept.
    let emu = with_deletion(EmulatorOptions {
        read_only: true,
        ..EmulatorOptions::default()
    });
    let got = sync(&emu);
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/times"),
        0
    );
    assert!(!snap.issues[&key].tracked_times.is_empty());
    assert_eq!(
        got.issues[&key].tracked_times,
        snap.issues[&key].tracked_times
    );
}

#[test]
fn small_fixture_round_trips_byte_for_byte() {
    // The fixture is hand-written: some files leave out `assignees: []`, which `Snapshot::save` always writes.
    round_trip("tests/fixtures/small", false);
}

#[test]
fn wrong_token_is_a_clear_error() {
    let snap = load("tests/fixtures/small");
    let emu = start(&snap);
    let c = client(&emu, "not-the-token", fast());
    let err = full_sync(&c, &repos(&snap), snap.meta.synced_at).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, SyncError::Client(ClientError::Unauthorized { .. })),
        "{err:?}"
    );
    assert!(msg.contains("COMMITEA_GITEA_TOKEN"), "{msg}");
    assert!(
        msg.contains("GITEA_TOKEN") && msg.contains("GITHUB_TOKEN"),
        "{msg}"
    );
    assert!(msg.contains("acme/api"), "{msg}");
    assert!(!msg.contains("not-the-token"), "{msg}");
    // No retries on 401: settings (which falls back) and the first repository request.
    assert!(emu.request_count() <= 2, "{}", emu.request_count());
}

#[test]
fn unknown_repository_is_named() {
    let snap = load("tests/fixtures/small");
    let emu = start(&snap);
    let c = client(&emu, TOKEN, fast());
    let err = full_sync(&c, &[RepoName::new("acme", "nope")], snap.meta.synced_at).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("acme/nope") && msg.contains("404"), "{msg}");
}

#[test]
fn disabled_dependencies_are_a_warning_not_a_failure() {
    let snap = load("tests/fixtures/small");
    let mut options = EmulatorOptions::default();
    options
        .dependencies_disabled
        .insert(RepoName::new("acme", "api"));
    let emu = Emulator::start(Dataset::from_snapshot(&snap), options).unwrap();
    let c = client(&emu, TOKEN, fast());
    let got = full_sync(&c, &repos(&snap), snap.meta.synced_at).unwrap();
    // Read only for issues whose timeline shows a dependency, and never again in a disabled repository.
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/dependencies"),
        snap.issues
            .iter()
            .filter(|(k, i)| k.repo.name != "api" && !i.depends_on.is_empty())
            .count() as u64
    );
    for (k, i) in &got.issues {
        if k.repo.name == "api" {
            assert!(i.depends_on.is_empty());
        } else {
            assert_eq!(i.depends_on, snap.issues[k].depends_on);
        }
    }
}

#[test]
fn faults_are_survived_by_retries() {
    let snap = load("tests/fixtures/small");
    let emu = start(&snap);
    let clean = full_sync(
        &client(&emu, TOKEN, fast()),
        &repos(&snap),
        snap.meta.synced_at,
    )
    .unwrap();
    let content = |s: &Snapshot| (s.labels.clone(), s.milestones.clone(), s.issues.clone());
    let faults = [
        Fault::new(FaultKind::Status(500)).times(3).on("/issues?"),
        Fault::new(FaultKind::Status(502)).times(2).on("/timeline"),
        Fault::new(FaultKind::Status(503)).times(3).on("/labels"),
        Fault::new(FaultKind::Slow(Duration::from_millis(2500))).on("/milestones"),
        Fault::new(FaultKind::RateLimit {
            retry_after_secs: 1,
        })
        .on("/dependencies"),
        Fault::new(FaultKind::Drop).times(2).on("/timeline?"),
        Fault::new(FaultKind::Drop).on("/dependencies"),
    ];
    for fault in faults {
        emu.clear_faults();
        emu.reset_counts();
        emu.inject(fault.clone());
        let c = client(&emu, TOKEN, fast());
        let started = Instant::now();
        let got = full_sync(&c, &repos(&snap), snap.meta.synced_at)
            .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
        assert_eq!(content(&got), content(&clean), "{fault:?}");
        let extra = fault.times as u64;
        let faulted = emu.request_count();
        emu.clear_faults();
        emu.reset_counts();
        full_sync(
            &client(&emu, TOKEN, fast()),
            &repos(&snap),
            snap.meta.synced_at,
        )
        .unwrap();
        assert_eq!(faulted, emu.request_count() + extra, "{fault:?}");
        if matches!(fault.kind, FaultKind::RateLimit { .. }) {
            assert!(
                started.elapsed() >= Duration::from_secs(1),
                "Retry-After ignored"
            );
        }
    }
}

#[test]
fn a_fault_that_never_stops_names_the_request() {
    let snap = load("tests/fixtures/small");
    let emu = start(&snap);
    emu.inject(
        Fault::new(FaultKind::Status(503))
            .times(1000)
            .on("/milestones"),
    );
    let c = client(&emu, TOKEN, fast());
    let err = full_sync(&c, &repos(&snap), snap.meta.synced_at).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            SyncError::Client(ClientError::GaveUp { attempts: 6, .. })
        ),
        "{err:?}"
    );
    assert!(
        msg.contains("GET /api/v1/repos/acme/api/milestones?state=all"),
        "{msg}"
    );
    assert!(msg.contains("503") && msg.contains("6 times"), "{msg}");

    // The time budget bounds it too.
    emu.clear_faults();
    emu.inject(
        Fault::new(FaultKind::RateLimit {
            retry_after_secs: 5,
        })
        .times(1000)
        .on("/labels"),
    );
    let c = client(
        &emu,
        TOKEN,
        ClientOptions {
            max_retry_time: Duration::from_secs(3),
            ..fast()
        },
    );
    let started = Instant::now();
    let err = full_sync(&c, &repos(&snap), snap.meta.synced_at).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3), "{err}");
    assert!(err.to_string().contains("429"), "{err}");
}

#[test]
fn the_token_never_leaks() {
    let snap = load("tests/fixtures/small");
    let emu = start(&snap);
    let secret = "super-secret-token-value";
    let c = client(&emu, secret, fast());
    assert!(!format!("{c:?}").contains(secret));
    let err = full_sync(&c, &repos(&snap), snap.meta.synced_at).unwrap_err();
    assert!(!err.to_string().contains(secret));
    assert!(!format!("{err:?}").contains(secret));

    // The right token, with faults: no error or Debug output carries it either.
    let c = client(&emu, TOKEN, fast());
    assert!(!format!("{c:?}").contains(TOKEN));
    emu.inject(Fault::new(FaultKind::Drop).times(1000).on("/labels"));
    let err = full_sync(&c, &repos(&snap), snap.meta.synced_at).unwrap_err();
    assert!(!err.to_string().contains(TOKEN), "{err}");
    assert!(!format!("{err:?}").contains(TOKEN), "{err:?}");
    assert!(!format!("{c:?}").contains(TOKEN));
}

#[test]
fn open_pulls_link_issues_by_closing_keyword() {
    use commitea::domain::OpenState;
    use commitea_testkit::gitea::Pull;

    let snap = load("tests/fixtures/small");
    let emu = start(&snap);
    let api = RepoName::new("acme", "api");
    let web = RepoName::new("acme", "web");
    let target = snap.issues.keys().find(|k| k.repo == web).unwrap().clone();
    let own = snap.issues.keys().find(|k| k.repo == api).unwrap().clone();
    let number = emu.with_dataset(|ds| {
        let number = ds.next_number(&api);
        let at = snap.meta.synced_at;
        let pull = |n: u64, state: OpenState, body: String| Pull {
            number: n,
            title: format!("PR {n}"),
            body,
            state,
            merged: false,
            author: "cy".into(),
            created_at: at,
            updated_at: at,
            closed_at: (state == OpenState::Closed).then_some(at),
        };
        ds.insert_pull(
            &api,
            pull(
                number,
                OpenState::Open,
                format!("Fixes: {target}\r\nresolves #{}", own.number),
            ),
        );
        // Closed pull requests are linked by their `pull_ref` events only.
        ds.insert_pull(
            &api,
            pull(number + 1, OpenState::Closed, format!("Closes {target}")),
        );
        number
    });
    let c = client(&emu, TOKEN, fast());
    let got = full_sync(&c, &repos(&snap), snap.meta.synced_at).unwrap();
    assert!(
        !got.issues.contains_key(&api.issue(number)),
        "a pull became an issue"
    );
    let cross = &got.issues[&target].pull_requests;
    assert!(
        cross
            .iter()
            .any(|p| p.number == number && p.repository.as_ref() == Some(&api)),
        "{cross:?}"
    );
    assert!(!cross.iter().any(|p| p.number == number + 1), "{cross:?}");
    let same = &got.issues[&own].pull_requests;
    assert!(
        same.iter()
            .any(|p| p.number == number && p.repository.is_none() && p.state == OpenState::Open),
        "{same:?}"
    );
}

// ---- incremental sync ----

mod incremental {
    use chrono::{DateTime, Duration, Utc};
    use commitea::domain::{Comment, IssueKey, OpenState, RepoName};
    use commitea::gitea::client::Client;
    use commitea::gitea::sync::{SyncOptions, SyncOutcome, full_sync, sync};
    use commitea::state::Snapshot;
    use commitea_testkit::gitea::{Dataset, Emulator, EmulatorOptions, Pull};

    use super::{TOKEN, client, fast, load, repos, start};

    /// The emulated server's next second: what a sync started now passes as `now`.
    fn tick(emu: &Emulator) -> DateTime<Utc> {
        emu.with_dataset(Dataset::tick)
    }

    /// The emulator loaded with the bundled demo, and a first (full) sync of it.
    fn demo() -> (Emulator, Vec<RepoName>, Snapshot) {
        let want = load("state");
        let emu = start(&want);
        let repos = repos(&want);
        let c = client(&emu, TOKEN, fast());
        let out = sync(&c, &repos, None, tick(&emu), &SyncOptions::default()).unwrap();
        assert_eq!(out.full, repos);
        assert!(out.changed);
        (emu, repos, out.snapshot)
    }

    /// One sync with a fresh client (so its `/settings/api` read counts) and the emulator's request count.
    fn resync(
        emu: &Emulator,
        repos: &[RepoName],
        previous: &Snapshot,
        options: &SyncOptions,
    ) -> (SyncOutcome, u64) {
        emu.reset_counts();
        let c: Client = client(emu, TOKEN, fast());
        let out = sync(&c, repos, Some(previous), tick(emu), options).unwrap();
        (out, emu.request_count())
    }

    #[test]
    fn a_snapshot_is_never_stamped_before_what_it_holds() {
        // A run's clock is taken before its apply stage, and `--now` may be given before the data: the
        // snapshot was stamped before the changes it read, and the forecast left them out of the
        // history it learns from (audits 179, 184).
        let want = load("state");
        let emu = start(&want);
        let repos = repos(&want);
        let newest = |s: &Snapshot| s.issues.values().map(|i| i.updated_at).max().unwrap();
        let c = client(&emu, TOKEN, fast());
        let early = tick(&emu) - Duration::days(400);
        let out = sync(&c, &repos, None, early, &SyncOptions::default()).unwrap();
        assert_eq!(out.snapshot.meta.synced_at, newest(&out.snapshot));
        // A change the server stamps after the run's clock, read by the sync that follows it.
        let clock = tick(&emu);
        let key = out.snapshot.issues.keys().next().unwrap().clone();
        emu.with_dataset(|d| {
            d.set_clock(clock + Duration::seconds(30));
            assert!(d.update_issue(&key, |i| i.title = "Edited during the run".into()));
        });
        let after = sync(
            &c,
            &repos,
            Some(&out.snapshot),
            clock,
            &SyncOptions::default(),
        )
        .unwrap();
        let edited = after.snapshot.issues[&key].updated_at;
        assert!(edited > clock, "{edited} after {clock}");
        assert_eq!(after.snapshot.meta.synced_at, edited);
    }

    #[test]
    fn an_edit_behind_a_client_clock_that_runs_ahead_is_seen() {
        // The client's clock runs three days ahead of the server's. The cursor must come from the server:
        // with the client's clock as the cursor, the edit below (stamped by the server, days earlier than
        // the client thinks it is) would be skipped until the next full resync.
        let want = load("state");
        let emu = start(&want);
        let repos = repos(&want);
        let ahead = Duration::days(3);
        let c = client(&emu, TOKEN, fast());
        let first = sync(
            &c,
            &repos,
            None,
            tick(&emu) + ahead,
            &SyncOptions::default(),
        )
        .unwrap();
        let server_now = emu.with_dataset(|d| d.clock());
        for r in &first.snapshot.meta.repositories {
            assert!(
                r.cursor.unwrap() <= server_now,
                "{}: cursor ahead of the server",
                r.name
            );
        }
        let key = quiet_issue(&first.snapshot);
        let edited_at = emu.with_dataset(|d| {
            d.update_issue(&key, |i| i.title = "Renamed at the server's time".into());
            d.issue(&key).unwrap().updated_at
        });
        assert!(edited_at < tick(&emu) + ahead);
        // The client's clock is still ahead at the next sync.
        let before = emu.request_count();
        let second = sync(
            &c,
            &repos,
            Some(&first.snapshot),
            tick(&emu) + ahead,
            &SyncOptions::default(),
        )
        .unwrap();
        let requests = emu.request_count() - before;
        assert!(second.full.is_empty(), "an incremental sync");
        assert_eq!(
            second.snapshot.issues[&key].title, "Renamed at the server's time",
            "the edit was missed ({requests} requests)"
        );
        assert_eq!(differing(&first.snapshot, &second.snapshot), vec![key]);
    }

    /// An incremental sync of a repository whose Issues unit was switched off since: its listing (no
    /// `type`) holds pull requests only, and an issue read again answers 404, which dropped the issue as
    /// deleted. It stays as last read, and the sync says why.
    #[test]
    fn issues_switched_off_keep_their_last_read_in_an_incremental_sync() {
        let (_before, repos, first) = demo();
        let off = repos.iter().find(|r| r.name == "mobile").unwrap().clone();
        let options = EmulatorOptions {
            issues_disabled: [off.clone()].into(),
            ..EmulatorOptions::default()
        };
        let emu = Emulator::start(Dataset::from_snapshot(&load("state")), options).unwrap();
        let mut previous = first.clone();
        previous.meta.server = Some(emu.url());
        // A renamed label: the issues that carry it are read again.
        let label = emu.with_dataset(|d| {
            d.labels(&off)
                .iter()
                .find(|l| l.name.starts_with("est/"))
                .map(|l| l.id)
                .unwrap()
        });
        emu.with_dataset(|d| d.rename_label(&off, label, "size/large"));
        let (second, _) = resync(&emu, &repos, &previous, &SyncOptions::default());
        assert!(second.full.is_empty(), "an incremental sync");
        let dropped: Vec<&IssueKey> = first
            .issues
            .keys()
            .filter(|k| k.repo == off && !second.snapshot.issues.contains_key(*k))
            .collect();
        assert!(dropped.is_empty(), "dropped as deleted: {dropped:?}");
    }

    #[test]
    fn a_renamed_label_and_a_deleted_milestone_reach_the_issues_that_carried_them() {
        // Gitea renames a label and deletes a milestone without marking any issue changed, so no `since`
        // listing names the issues: they are found by what they carry.
        let (emu, repos, first) = demo();
        let repo = repos[0].clone();
        let (label, old_name) = emu.with_dataset(|d| {
            d.labels(&repo)
                .iter()
                .find(|l| l.name.starts_with("est/"))
                .map(|l| (l.id, l.name.clone()))
                .unwrap()
        });
        let milestone = first.milestones[&repo][0].id;
        let carriers: Vec<IssueKey> = first
            .issues
            .iter()
            .filter(|(k, i)| {
                k.repo == repo && (i.labels.contains(&old_name) || i.milestone == Some(milestone))
            })
            .map(|(k, _)| k.clone())
            .collect();
        let in_timelines = first
            .issues
            .iter()
            .filter(|(k, i)| {
                k.repo == repo
                    && !carriers.contains(k)
                    && i.timeline.iter().any(|e| {
                        e.label.as_ref() == Some(&old_name)
                            || e.milestone == Some(milestone)
                            || e.old_milestone == Some(milestone)
                    })
            })
            .count();
        assert!(!carriers.is_empty());
        emu.with_dataset(|d| {
            d.rename_label(&repo, label, "size/large");
            d.delete_milestone(&repo, milestone);
        });
        let (second, _) = resync(&emu, &repos, &first, &SyncOptions::default());
        assert!(second.full.is_empty(), "an incremental sync");
        for key in &carriers {
            let issue = &second.snapshot.issues[key];
            assert!(
                !issue.labels.contains(&old_name),
                "{key}: {:?}",
                issue.labels
            );
            assert_ne!(issue.milestone, Some(milestone), "{key}");
        }
        let c = client(&emu, TOKEN, fast());
        let fresh = full_sync(&c, &repos, tick(&emu)).unwrap();
        assert_eq!(differing(&second.snapshot, &fresh), Vec::<IssueKey>::new());
        assert_eq!(second.refreshed, carriers.len() + in_timelines);
    }

    #[test]
    fn a_renamed_repository_is_followed_and_its_issues_stay_the_configured_ones() {
        // Gitea answers a renamed repository's old name through a redirect, and every reference to its
        // issues names the new one: read back as the configured name, nothing changes but a warning.
        let (emu, repos, first) = demo();
        let old = repos[0].clone();
        let new = RepoName::new(&old.owner, format!("{}-v2", old.name));
        let referenced = first.issues.values().any(|i| {
            i.depends_on.iter().any(|d| d.repo == old)
                && i.timeline.iter().any(|e| e.dependency.is_some())
        });
        assert!(referenced, "the demo has dependencies on {old}");
        emu.with_dataset(|d| d.rename_repository(&old, &new));
        // Nothing in it changed: the redirect alone says it, and the snapshot keeps it for the pages
        // (audit 168: a quiet renamed repository went unsaid, and the log was the only place).
        let (quiet, _) = resync(&emu, &repos, &first, &SyncOptions::default());
        assert!(quiet.changed);
        let renamed = |s: &Snapshot| -> Vec<(String, String)> {
            s.meta
                .repositories
                .iter()
                .filter_map(|r| Some((r.name.to_string(), r.renamed_to.as_ref()?.to_string())))
                .collect()
        };
        assert_eq!(
            renamed(&quiet.snapshot),
            [(old.to_string(), new.to_string())]
        );
        assert_eq!(
            differing(&first, &quiet.snapshot),
            Vec::<IssueKey>::new(),
            "its issues are kept as {old}'s"
        );
        let config = commitea::config::Config::default();
        let plan = commitea::plan::Plan::from_snapshot(&quiet.snapshot, &config, tick(&emu));
        assert!(
            plan.warnings
                .iter()
                .any(|w| w.to_string().contains(&format!(
                    "{old} is {new} on the server now (renamed or transferred"
                ))),
            "{:?}",
            plan.warnings
        );
        // Both names configured (audit 170: every issue of it was planned twice): read once, as the new
        // name's, and said.
        let both: Vec<RepoName> = repos.iter().cloned().chain([new.clone()]).collect();
        let c = client(&emu, TOKEN, fast());
        let doubled = sync(&c, &both, Some(&first), tick(&emu), &SyncOptions::default()).unwrap();
        let in_repo = |s: &Snapshot, r: &RepoName| s.issues.keys().filter(|k| &k.repo == r).count();
        assert_eq!(in_repo(&doubled.snapshot, &old), 0);
        assert_eq!(
            in_repo(&doubled.snapshot, &new),
            in_repo(&first, &old),
            "each issue once, under its new name"
        );
        // So is the new name spelt in another case than the server's, before the old (audit 173: read
        // twice, without a word).
        let shouted = RepoName::new(&new.owner, new.name.to_uppercase());
        let both: Vec<RepoName> = [shouted.clone()]
            .into_iter()
            .chain(repos.iter().cloned())
            .collect();
        let c = client(&emu, TOKEN, fast());
        let spelt = sync(&c, &both, Some(&first), tick(&emu), &SyncOptions::default()).unwrap();
        assert_eq!(in_repo(&spelt.snapshot, &old), 0);
        assert_eq!(in_repo(&spelt.snapshot, &shouted), in_repo(&first, &old));
        let plan = commitea::plan::Plan::from_snapshot(&doubled.snapshot, &config, tick(&emu));
        assert!(
            plan.warnings.iter().any(|w| w.to_string().contains(&format!(
                "{old} is {new} on the server now (renamed or transferred), and commitea.yaml names both"
            ))),
            "{:?}",
            plan.warnings
        );
        let key = quiet_issue(&first);
        let on_server = if key.repo == old {
            new.issue(key.number)
        } else {
            key.clone()
        };
        emu.with_dataset(|d| {
            assert!(d.update_issue(&on_server, |i| i.title = "Edited after the rename".into()));
        });
        let (second, _) = resync(&emu, &repos, &first, &SyncOptions::default());
        assert!(second.full.is_empty(), "an incremental sync");
        assert_eq!(differing(&first, &second.snapshot), vec![key.clone()]);
        let full = SyncOptions {
            force_full: true,
            ..SyncOptions::default()
        };
        let (third, _) = resync(&emu, &repos, &second.snapshot, &full);
        assert_eq!(third.full, repos);
        assert_eq!(
            differing(&second.snapshot, &third.snapshot),
            Vec::<IssueKey>::new()
        );
        let text = format!("{:?}", third.snapshot.issues);
        assert!(
            !text.contains(&format!("{}-v2", old.name)),
            "a reference names {new}"
        );
    }

    #[test]
    fn what_was_written_under_a_renamed_repositorys_old_name_is_read_as_the_new_ones() {
        // After a rename, doing what the warning says (put the new name in `repositories`) stranded what
        // named the old one: a directive on old#N was "not synced", members limited to it took no work,
        // and an approved op on old#N was used up as "not on the server any more" (audits 168, 173).
        let (emu, repos, first) = demo();
        let old = repos[0].clone();
        let new = RepoName::new(&old.owner, format!("{}-v2", old.name));
        emu.with_dataset(|d| d.rename_repository(&old, &new));
        let (quiet, _) = resync(&emu, &repos, &first, &SyncOptions::default());
        let formerly = |s: &Snapshot| -> Vec<(String, Vec<String>)> {
            s.meta
                .repositories
                .iter()
                .filter(|r| !r.formerly.is_empty())
                .map(|r| {
                    (
                        r.name.to_string(),
                        r.formerly.iter().map(ToString::to_string).collect(),
                    )
                })
                .collect()
        };
        assert_eq!(
            formerly(&quiet.snapshot),
            Vec::new(),
            "only the old name is configured"
        );
        let want = vec![(new.to_string(), vec![old.to_string()])];
        // The old name replaced by the new, and both kept: either way the new one knows its old name.
        let replaced: Vec<RepoName> = repos
            .iter()
            .map(|r| if *r == old { new.clone() } else { r.clone() })
            .collect();
        let both: Vec<RepoName> = repos.iter().cloned().chain([new.clone()]).collect();
        let c = client(&emu, TOKEN, fast());
        let doubled = sync(&c, &both, Some(&first), tick(&emu), &SyncOptions::default()).unwrap();
        assert_eq!(formerly(&doubled.snapshot), want, "both names configured");
        let (moved, _) = resync(&emu, &replaced, &quiet.snapshot, &SyncOptions::default());
        assert_eq!(
            formerly(&moved.snapshot),
            want,
            "the new name in the old's place"
        );
        // Kept from sync to sync, once the old name's own entry is gone.
        let (later, _) = resync(&emu, &replaced, &moved.snapshot, &SyncOptions::default());
        assert_eq!(formerly(&later.snapshot), want);
        assert!(!later.changed, "nothing changed: {:?}", later.snapshot.meta);

        let key = quiet_issue(&first);
        let key = if key.repo == old {
            key
        } else {
            first
                .issues
                .keys()
                .find(|k| k.repo == old && first.issues[*k].state == OpenState::Open)
                .unwrap()
                .clone()
        };
        let ledger = format!(
            "# PM directives\n\n## D-0001 · reprioritize · 2026-11-30T10:15:00Z\n\n> First.\n\n\
             - target: issue {key}\n- params: {{\"priority\": 0}}\n- status: active\n- by: ann\n"
        );
        let mut config: commitea::config::Config = yaml_serde::from_str(&format!(
            "repositories: [{}]\nteam:\n  - name: dana\n    repositories: [{old}]\n",
            replaced
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .unwrap();
        config.repositories = replaced.clone();
        for (name, snapshot) in [("replaced", &later.snapshot), ("both", &doubled.snapshot)] {
            let replayed =
                commitea::ledger::replay::replay(snapshot, &config, Some(&ledger), tick(&emu));
            let plan = replayed.into_plan();
            let now = new.issue(key.number);
            let issue = plan.issues.iter().find(|i| i.key == now).unwrap();
            assert_eq!(
                issue.priority.level(),
                0,
                "{name}: D-0001 counts on {now}: {:?}",
                plan.warnings
            );
            assert!(
                !plan
                    .warnings
                    .iter()
                    .any(|w| w.to_string().contains(&old.to_string())
                        && !w.to_string().contains("on the server now")),
                "{name}: {:?}",
                plan.warnings
            );
            assert_eq!(plan.team[0].repositories, vec![new.clone()], "{name}");
            // An old-name number the renamed repository lacks: the issue is missing, not the repository
            // (audit 179: "no issue of acme/api is synced (is it in commitea.yaml's repositories?)").
            let gone = format!(
                "{ledger}\n## D-0002 · reprioritize · 2026-11-30T10:20:00Z\n\n> Second.\n\n\
                 - target: issue {old}#99999\n- params: {{\"priority\": 1}}\n- status: active\n- by: ann\n"
            );
            let warnings: Vec<String> =
                commitea::ledger::replay::replay(snapshot, &config, Some(&gone), tick(&emu))
                    .into_plan()
                    .warnings
                    .iter()
                    .map(ToString::to_string)
                    .filter(|w| w.contains("99999"))
                    .collect();
            assert!(
                warnings.len() == 1
                    && warnings[0].contains(&format!(
                        "does not exist in the snapshot ({old} is {new} on Gitea now, which has no issue 99999)"
                    )),
                "{name}: {warnings:?}"
            );
            // An approved op file on the old key waits, said with the new name, and is not used up.
            let file = commitea::ops::OpFile::parse(
                &format!(
                    "id: C-0001\nsource: apply_changes\ncreated_at: 2026-11-30T10:00:00Z\napproved: false\n\
                     destructive: false\nops:\n  - op: set_priority\n    issue: {key}\n    \
                     priority: p/1\nsummary: p/1\nconsequence: []\n"
                ),
                std::path::Path::new("ops/pending/C-0001.yaml"),
            )
            .unwrap();
            let holds = commitea::apply::RepoHolds::new(&config, snapshot);
            let why = holds.why(&file).unwrap_or_default();
            assert!(
                why.contains(&format!("names {old}, which is {new} on Gitea now"))
                    && why.contains("carried out; write them again with the new name"),
                "{name}: {why}"
            );
            // Whom the last forecast planned an issue for, and its cut lines, keyed by the old name,
            // are the new name's (audit 179: 17 issues changed hands with nothing else changed).
            let mut plan = commitea::plan::Plan::from_snapshot(snapshot, &config, tick(&emu));
            let kept = commitea::forecast::Kept {
                planned_for: [(key.clone(), "dana".to_owned())].into(),
                cut_before: [(7, vec![key.clone()])].into(),
            };
            plan.keep(&kept, [(key.clone(), "dana".to_owned())].into());
            assert_eq!(
                plan.planned_for.get(&now).map(String::as_str),
                Some("dana"),
                "{name}"
            );
            assert_eq!(
                plan.last_planned.get(&now).map(String::as_str),
                Some("dana"),
                "{name}"
            );
            assert_eq!(plan.cut_before[&7], vec![now.clone()], "{name}");
        }
    }

    #[test]
    fn a_repository_configured_in_another_case_keeps_its_dependencies() {
        // Gitea finds `ACME/API` as `acme/api` and spells every reference its own way: each blocker in
        // it was "outside" the configured repositories, and the forecast left the wait out (audit 154).
        let (emu, repos, first) = demo();
        let old = repos[0].clone();
        let shouted = RepoName::new(old.owner.to_uppercase(), old.name.to_uppercase());
        let configured: Vec<RepoName> = repos
            .iter()
            .map(|r| {
                if *r == old {
                    shouted.clone()
                } else {
                    r.clone()
                }
            })
            .collect();
        let c = client(&emu, TOKEN, fast());
        let out = sync(&c, &configured, None, tick(&emu), &SyncOptions::default()).unwrap();
        let spelt = |k: &IssueKey| {
            if k.repo == old {
                shouted.issue(k.number)
            } else {
                k.clone()
            }
        };
        let waits =
            |s: &Snapshot, k: &IssueKey| -> Vec<IssueKey> { s.issues[k].depends_on.clone() };
        let mut checked = 0;
        for (key, issue) in &first.issues {
            let now = spelt(key);
            assert_eq!(
                waits(&out.snapshot, &now),
                issue.depends_on.iter().map(spelt).collect::<Vec<_>>(),
                "{now}"
            );
            assert!(
                out.snapshot.issues[&now].outside_blockers.len() == issue.outside_blockers.len(),
                "{now}: {:?}",
                out.snapshot.issues[&now].outside_blockers
            );
            checked += issue.depends_on.iter().filter(|d| d.repo == old).count();
        }
        assert!(checked > 0, "the demo has dependencies in {old}");
    }

    /// The issues whose content differs between two snapshots.
    fn differing(a: &Snapshot, b: &Snapshot) -> Vec<IssueKey> {
        let mut keys: Vec<IssueKey> = a.issues.keys().chain(b.issues.keys()).cloned().collect();
        keys.sort();
        keys.dedup();
        keys.retain(|k| a.issues.get(k) != b.issues.get(k));
        keys
    }

    /// An open issue of `snap` without linked pull requests that no issue depends on.
    fn quiet_issue(snap: &Snapshot) -> IssueKey {
        snap.issues
            .iter()
            .find(|(k, i)| {
                i.state == OpenState::Open
                    && i.pull_requests.is_empty()
                    && !snap.issues.values().any(|o| o.depends_on.contains(k))
            })
            .map(|(k, _)| k.clone())
            .unwrap()
    }

    #[test]
    fn no_change_costs_four_requests_per_repository() {
        let (emu, repos, first) = demo();
        let (out, n) = resync(&emu, &repos, &first, &SyncOptions::default());
        eprintln!(
            "no-change incremental sync of {} repositories: {n} requests; by endpoint: {:#?}",
            repos.len(),
            emu.counts()
        );
        assert!(!out.changed);
        assert!(out.full.is_empty());
        assert_eq!(out.refreshed, 0);
        assert_eq!(out.snapshot, first);
        assert!(n <= 4 * repos.len() as u64 + 2, "{n} requests");
    }

    #[test]
    fn a_label_change_refreshes_only_that_issue() {
        let (emu, repos, first) = demo();
        let (_, baseline) = resync(&emu, &repos, &first, &SyncOptions::default());
        let key = quiet_issue(&first);
        let label = first.labels[&key.repo]
            .iter()
            .map(|l| l.name.clone())
            .find(|n| !first.issues[&key].labels.contains(n))
            .unwrap();
        emu.with_dataset(|ds| {
            ds.update_issue(&key, |i| {
                i.labels.push(label.clone());
                i.labels.sort();
            })
        });
        let (out, n) = resync(&emu, &repos, &first, &SyncOptions::default());
        eprintln!(
            "one label change: {n} requests (no change: {baseline}); by endpoint: {:#?}",
            emu.counts()
        );
        assert!(out.changed);
        assert_eq!(out.refreshed, 1);
        assert_eq!(differing(&first, &out.snapshot), vec![key.clone()]);
        assert!(out.snapshot.issues[&key].labels.contains(&label));
        assert_eq!(out.snapshot.labels, first.labels);
        assert_eq!(out.snapshot.milestones, first.milestones);
        assert!(n <= baseline + 6, "{n} requests, {baseline} without change");
        // Cursors move, the last full sync stays.
        for (m, p) in out
            .snapshot
            .meta
            .repositories
            .iter()
            .zip(&first.meta.repositories)
        {
            assert!(m.cursor > p.cursor);
            assert_eq!(m.last_full_sync, p.last_full_sync);
        }
    }

    #[test]
    fn a_comment_edit_is_picked_up() {
        let (emu, repos, first) = demo();
        let key = first
            .issues
            .iter()
            .find(|(_, i)| !i.comments.is_empty())
            .map(|(k, _)| k.clone())
            .unwrap();
        // Gitea does not bump the issue when a comment is edited.
        emu.with_dataset(|ds| {
            let at = ds.tick();
            let mut issue = ds.issue(&key).unwrap().clone();
            issue.comments[0].body = "Edited: the estimate was wrong.".into();
            issue.comments[0].updated_at = at;
            ds.insert_issue(&key.repo, issue);
        });
        let (out, n) = resync(&emu, &repos, &first, &SyncOptions::default());
        eprintln!("one comment edit: {n} requests");
        assert!(out.changed);
        assert_eq!(out.refreshed, 1);
        assert_eq!(differing(&first, &out.snapshot), vec![key.clone()]);
        assert_eq!(
            out.snapshot.issues[&key].comments[0].body,
            "Edited: the estimate was wrong."
        );
        assert_eq!(
            out.snapshot.issues[&key].updated_at,
            first.issues[&key].updated_at
        );
    }

    #[test]
    fn a_new_pull_request_links_its_issue_by_keyword() {
        let (emu, repos, first) = demo();
        let key = quiet_issue(&first);
        let pull = |number: u64, state: OpenState, at: DateTime<Utc>| Pull {
            number,
            title: "Fix it".into(),
            body: format!("This change\n\nCloses #{}", key.number),
            state,
            merged: false,
            author: "cy".into(),
            created_at: at,
            updated_at: at,
            closed_at: (state == OpenState::Closed).then_some(at),
        };
        let number = emu.with_dataset(|ds| {
            let number = ds.next_number(&key.repo);
            let at = ds.tick();
            ds.insert_pull(&key.repo, pull(number, OpenState::Open, at));
            number
        });
        let (out, n) = resync(&emu, &repos, &first, &SyncOptions::default());
        eprintln!("one new pull request: {n} requests");
        assert!(!out.snapshot.issues.contains_key(&key.repo.issue(number)));
        assert_eq!(differing(&first, &out.snapshot), vec![key.clone()]);
        let linked = &out.snapshot.issues[&key].pull_requests;
        assert!(
            linked.iter().any(|p| p.number == number
                && p.repository.is_none()
                && p.state == OpenState::Open),
            "{linked:?}"
        );

        // Closed without a merge: the keyword link goes (as in a full sync).
        let second = out.snapshot;
        emu.with_dataset(|ds| {
            let created = ds.pull(&key.repo, number).unwrap().created_at;
            let at = ds.tick();
            let mut p = pull(number, OpenState::Closed, at);
            p.created_at = created;
            ds.insert_pull(&key.repo, p);
        });
        let (out, _) = resync(&emu, &repos, &second, &SyncOptions::default());
        assert!(out.snapshot.issues[&key].pull_requests.is_empty());
        let c = client(&emu, TOKEN, fast());
        let fresh = full_sync(&c, &repos, tick(&emu)).unwrap();
        assert_eq!(out.snapshot.issues, fresh.issues);

        // Read as Gitea reads them (`references.go`): a full issue URL on the forge's own address in the
        // title closes; a keyword in the description's code closes nothing.
        let third = out.snapshot;
        let other = third
            .issues
            .iter()
            .find(|(k, i)| {
                k.repo == key.repo
                    && **k != key
                    && i.state == OpenState::Open
                    && i.pull_requests.is_empty()
            })
            .map(|(k, _)| k.clone())
            .unwrap();
        let number = emu.with_dataset(|ds| {
            let number = ds.next_number(&key.repo);
            let at = ds.tick();
            let mut p = pull(number, OpenState::Open, at);
            p.title = format!("Fixes {}/{}/issues/{}", emu.url(), other.repo, other.number);
            p.body = format!("Not `Closes #{}`, and not\n\n    Closes #{0}", key.number);
            ds.insert_pull(&key.repo, p);
            number
        });
        let (out, _) = resync(&emu, &repos, &third, &SyncOptions::default());
        let linked = |s: &Snapshot, k: &IssueKey| {
            s.issues[k].pull_requests.iter().any(|p| p.number == number)
        };
        assert!(
            linked(&out.snapshot, &other),
            "{:?}",
            out.snapshot.issues[&other]
        );
        assert!(!linked(&out.snapshot, &key));
        let fresh = full_sync(&c, &repos, tick(&emu)).unwrap();
        assert_eq!(out.snapshot.issues, fresh.issues);
    }

    #[test]
    fn a_deleted_issue_disappears_only_after_a_full_resync() {
        let (emu, repos, first) = demo();
        let key = quiet_issue(&first);
        // Gitea's delete: a server without the issue, at the same address as far as the snapshot knows.
        let mut without = first.clone();
        without.issues.remove(&key);
        let clock = emu.with_dataset(|ds| ds.clock());
        drop(emu);
        let emu =
            Emulator::start(Dataset::from_snapshot(&without), EmulatorOptions::default()).unwrap();
        emu.with_dataset(|ds| ds.set_clock(clock));
        let mut previous = first.clone();
        previous.meta.server = Some(emu.url());

        let (out, _) = resync(&emu, &repos, &previous, &SyncOptions::default());
        assert!(!out.changed);
        assert!(out.snapshot.issues.contains_key(&key));

        let forced = SyncOptions {
            force_full: true,
            ..SyncOptions::default()
        };
        let (out, _) = resync(&emu, &repos, &previous, &forced);
        assert!(out.changed);
        assert_eq!(out.full, repos);
        assert_eq!(differing(&previous, &out.snapshot), vec![key.clone()]);

        // A last full sync stamped after now (a run given a later `--now`) is due: its age is unknown
        // (audit 99: it put the weekly full read off by weeks).
        let now = tick(&emu);
        for r in &mut previous.meta.repositories {
            r.last_full_sync = Some(now + Duration::days(40));
        }
        let (out, _) = resync(&emu, &repos, &previous, &SyncOptions::default());
        assert_eq!(out.full, repos);
        assert!(!out.snapshot.issues.contains_key(&key));

        // A last full sync 8 days old is due again (the default is every 7 days).
        let now = tick(&emu);
        for r in &mut previous.meta.repositories {
            r.last_full_sync = Some(now - Duration::days(8));
        }
        let (out, _) = resync(&emu, &repos, &previous, &SyncOptions::default());
        assert_eq!(out.full, repos);
        assert!(!out.snapshot.issues.contains_key(&key));
        assert!(
            out.snapshot
                .meta
                .repositories
                .iter()
                .all(|r| r.last_full_sync == Some(out.snapshot.meta.synced_at))
        );
    }

    /// An assignment made through the API, as a person or a bot makes one on Gitea, is synced by an
    /// incremental read as by a full one; an unknown login fails the edit (audit 99: the emulator took
    /// `assignees` and ignored it, so no assignment could be synced in a test).
    #[test]
    fn an_assignment_through_the_api_is_synced_incrementally_as_in_full() {
        let (emu, repos, first) = demo();
        let (key, issue) = first
            .issues
            .iter()
            .find(|(_, i)| i.state == OpenState::Open && !i.assignees.is_empty())
            .map(|(k, i)| (k.clone(), i.clone()))
            .unwrap();
        let someone = first
            .issues
            .values()
            .map(|i| i.author.clone())
            .find(|a| !issue.assignees.contains(a))
            .unwrap();
        let c: Client = client(&emu, TOKEN, fast());
        let path = format!("repos/{}/issues/{}", key.repo, key.number);
        let written = c
            .send(
                reqwest::Method::PATCH,
                &path,
                Some(&serde_json::json!({ "assignees": [someone] })),
                true,
            )
            .unwrap();
        assert_eq!(written.status, 201);
        let refused = c.send(
            reqwest::Method::PATCH,
            &path,
            Some(&serde_json::json!({ "assignees": ["nobody-by-this-name"] })),
            true,
        );
        assert!(refused.is_err(), "{refused:?}");
        let (out, _) = resync(&emu, &repos, &first, &SyncOptions::default());
        assert!(out.full.is_empty(), "an incremental sync");
        let synced = &out.snapshot.issues[&key];
        assert_eq!(synced.assignees, vec![someone.clone()]);
        assert!(
            synced
                .timeline
                .iter()
                .any(|e| e.assignee.as_deref() == Some(&someone) && !e.removed)
                && synced
                    .timeline
                    .iter()
                    .any(|e| e.assignee.as_deref() == Some(&issue.assignees[0]) && e.removed),
            "{:?}",
            synced.timeline
        );
        let forced = SyncOptions {
            force_full: true,
            ..SyncOptions::default()
        };
        let (full, _) = resync(&emu, &repos, &first, &forced);
        assert_eq!(
            differing(&out.snapshot, &full.snapshot),
            Vec::<IssueKey>::new()
        );
    }

    #[test]
    fn incremental_equals_full_after_a_series_of_changes() {
        let (emu, repos, first) = demo();
        let open: Vec<IssueKey> = first
            .issues
            .iter()
            .filter(|(_, i)| i.state == OpenState::Open)
            .map(|(k, _)| k.clone())
            .collect();
        let (a, b, c, d) = (&open[0], &open[1], &open[2], &open[3]);
        let mut current = first.clone();
        let mut step = |what: &str, change: &dyn Fn(&mut Dataset)| {
            emu.with_dataset(|ds| change(ds));
            let (out, n) = resync(&emu, &repos, &current, &SyncOptions::default());
            eprintln!("{what}: {n} requests, {} issues re-read", out.refreshed);
            assert!(out.changed, "{what}");
            assert!(out.full.is_empty(), "{what}");
            current = out.snapshot;
        };

        let label = first.labels[&a.repo]
            .iter()
            .map(|l| l.name.clone())
            .find(|n| !first.issues[a].labels.contains(n))
            .unwrap();
        step("labels", &|ds| {
            ds.update_issue(a, |i| {
                i.labels.push(label.clone());
                i.labels.sort();
            });
        });
        let other = first.milestones[&b.repo]
            .iter()
            .map(|m| m.id)
            .find(|id| first.issues[b].milestone != Some(*id))
            .unwrap();
        step("milestone", &|ds| {
            ds.update_issue(b, |i| i.milestone = Some(other));
        });
        step("milestone renamed", &|ds| {
            ds.update_milestone(other, |m| m.title.push_str(" (renamed)"));
        });
        step("close", &|ds| {
            let at = ds.clock() + Duration::seconds(1);
            ds.update_issue(c, |i| {
                i.state = OpenState::Closed;
                i.closed_at = Some(at);
            });
        });
        step("new comment", &|ds| {
            let at = ds.clock() + Duration::seconds(1);
            ds.update_issue(d, |i| {
                i.comments.push(Comment {
                    id: 9_000_001,
                    user: "cy".into(),
                    created_at: at,
                    updated_at: at,
                    body: "Started on this.".into(),
                });
            });
        });
        step("new issue", &|ds| {
            ds.create_issue(&a.repo, "A new issue", "cy");
        });

        let cl = client(&emu, TOKEN, fast());
        let fresh = full_sync(&cl, &repos, tick(&emu)).unwrap();
        assert_eq!(current.labels, fresh.labels);
        assert_eq!(current.milestones, fresh.milestones);
        assert_eq!(differing(&current, &fresh), Vec::<IssueKey>::new());
        assert_eq!(current.issues.len(), first.issues.len() + 1);
    }

    #[test]
    fn pull_request_changes_stay_right_across_repositories_and_modes() {
        let (emu, repos, first) = demo();
        // A linked open pull request gets merged.
        let (issue, merged) = first
            .issues
            .iter()
            .find_map(|(k, i)| {
                i.pull_requests
                    .iter()
                    .find(|p| p.state == OpenState::Open)
                    .map(|p| {
                        let repo = p.repository.clone().unwrap_or_else(|| k.repo.clone());
                        (k.clone(), repo.issue(p.number))
                    })
            })
            .unwrap();
        // A new pull request in another repository closes an issue by keyword.
        let target = quiet_issue(&first);
        let from = repos.iter().find(|r| **r != target.repo).unwrap().clone();
        let new_pull = emu.with_dataset(|ds| {
            let at = ds.tick();
            let mut p = ds.pull(&merged.repo, merged.number).unwrap().clone();
            p.state = OpenState::Closed;
            p.merged = true;
            p.closed_at = Some(at);
            p.updated_at = at;
            ds.insert_pull(&merged.repo, p);
            let number = ds.next_number(&from);
            let at = ds.tick();
            ds.insert_pull(
                &from,
                Pull {
                    number,
                    title: "Cross-repo fix".into(),
                    body: format!("Fixes {target}"),
                    state: OpenState::Open,
                    merged: false,
                    author: "cy".into(),
                    created_at: at,
                    updated_at: at,
                    closed_at: None,
                },
            );
            from.issue(number)
        });
        // One repository has no cursor: it is read in full, the others incrementally.
        let mut previous = first.clone();
        let dropped = previous.meta.repositories.remove(0).name;
        previous.meta.repositories.insert(
            0,
            commitea::state::RepoMeta {
                name: dropped.clone(),
                cursor: None,
                last_full_sync: None,
                unreached_since: None,
                renamed_to: None,
                formerly: Vec::new(),
            },
        );
        let (out, n) = resync(&emu, &repos, &previous, &SyncOptions::default());
        eprintln!(
            "merge + cross-repo pull, {dropped} in full: {n} requests, {} re-read",
            out.refreshed
        );
        assert_eq!(out.full, vec![dropped]);
        let linked = &out.snapshot.issues[&issue].pull_requests;
        assert!(
            linked
                .iter()
                .any(|p| p.number == merged.number && p.merged && p.state == OpenState::Closed),
            "{linked:?}"
        );
        assert!(
            out.snapshot.issues[&target]
                .pull_requests
                .iter()
                .any(|p| p.number == new_pull.number && p.repository.as_ref() == Some(&from)),
            "{:?}",
            out.snapshot.issues[&target].pull_requests
        );
        let c = client(&emu, TOKEN, fast());
        let fresh = full_sync(&c, &repos, tick(&emu)).unwrap();
        assert_eq!(differing(&out.snapshot, &fresh), Vec::<IssueKey>::new());
        assert_eq!(out.snapshot.milestones, fresh.milestones);
    }
}

/// An issue created on the server while the listing is being paged (Gitea pages by offset, so a naive
/// read sees one issue twice and misses another): the sync stays consistent as of its start, and the
/// next incremental sync brings in the new issue, because the cursor is the time the sync began.
#[test]
fn a_page_that_shifts_during_the_sync_is_caught_up_next_time() {
    let demo = load("state");
    let emu = start(&demo);
    let repo: RepoName = "acme/api".parse().unwrap();
    let c = client(&emu, &EmulatorOptions::default().token, fast());
    let repos = repos(&demo);
    let now = demo.meta.synced_at;
    emu.inject(
        Fault::new(FaultKind::PageShift { repo: repo.clone() }).on("/repos/acme/api/issues?"),
    );
    let first = commitea::gitea::sync::sync(
        &c,
        &repos,
        None,
        now,
        &commitea::gitea::sync::SyncOptions::default(),
    )
    .unwrap()
    .snapshot;
    // No duplicates, nothing lost of what existed when the sync began.
    for key in demo.issues.keys() {
        assert!(first.issues.contains_key(key), "{key} lost");
    }
    let inserted: Vec<_> = first
        .issues
        .keys()
        .filter(|k| !demo.issues.contains_key(*k))
        .collect();
    assert!(inserted.len() <= 1, "{inserted:?}");

    let later = now + chrono::Duration::minutes(10);
    let second = commitea::gitea::sync::sync(
        &c,
        &repos,
        Some(&first),
        later,
        &commitea::gitea::sync::SyncOptions::default(),
    )
    .unwrap();
    let new_issues: Vec<_> = second
        .snapshot
        .issues
        .keys()
        .filter(|k| !demo.issues.contains_key(*k))
        .collect();
    assert_eq!(
        new_issues.len(),
        1,
        "the inserted issue is picked up: {new_issues:?}"
    );
    assert_eq!(
        second.snapshot.issues[new_issues[0]].title,
        "Inserted between two pages"
    );
}

#[test]
fn an_issue_deleted_while_the_sync_reads_it_is_left_out_whichever_part_finds_it_gone() {
    // Someone deletes an issue between the listing and the reads of its parts. Gitea answers its timeline
    // 500 (Forgejo 404), its dependencies 404 "IsErrIssueNotExist" with the reason in `errors`, and its
    // times 404 likewise: each time the sync asks for the issue, finds it gone, and leaves it out —
    // neither failing the sync nor taking the 404 for "dependencies are disabled".
    let snap = load("tests/fixtures/small");
    let api = RepoName::new("acme", "api");
    let (with_time, with_deps, forgejo) = (api.issue(1), api.issue(4), api.issue(5));
    let emu = start(&snap);
    emu.with_dataset(|ds| delete_a_time(ds, &with_time));
    assert!(
        snap.issues[&with_deps]
            .timeline
            .iter()
            .any(|e| e.kind.is_dependency())
    );
    // Deleted after the last page of their timeline: the next read is `/times`, `/dependencies`.
    for key in [&with_time, &with_deps] {
        emu.inject(Fault::new(FaultKind::DeleteIssue(key.clone())).on(format!(
            "/repos/acme/api/issues/{}/timeline?limit=50&page=2",
            key.number
        )));
    }
    // Deleted after the listing, and its timeline answered as Forgejo does.
    emu.inject(Fault::new(FaultKind::DeleteIssue(forgejo.clone())).on("/repos/acme/api/issues?"));
    emu.inject(Fault::new(FaultKind::Status(404)).on("/repos/acme/api/issues/5/timeline"));
    // Deleted after its timeline, its dependencies answered with a bare 404, as the newest Gitea's
    // `APIErrorNotFound` answers whatever was not found: not "dependencies are disabled".
    let bare = RepoName::new("acme", "web").issue(5);
    emu.inject(
        Fault::new(FaultKind::DeleteIssue(bare.clone()))
            .on("/repos/acme/web/issues/5/timeline?limit=50&page=2"),
    );
    emu.inject(Fault::new(FaultKind::Status(404)).on("/repos/acme/web/issues/5/dependencies"));
    // Deleted after the listing, its timeline answered 500 as Gitea does: asked once, not retried.
    let gitea = RepoName::new("acme", "web").issue(3);
    emu.inject(Fault::new(FaultKind::DeleteIssue(gitea.clone())).on("/repos/acme/web/issues?"));
    let got = full_sync(
        &client(&emu, TOKEN, fast()),
        &repos(&snap),
        snap.meta.synced_at,
    )
    .unwrap_or_else(|e| panic!("{e}\n{:#?}", emu.requests()));
    for key in [&with_time, &with_deps, &forgejo, &bare, &gitea] {
        assert!(snap.issues.contains_key(key));
        assert!(
            !got.issues.contains_key(key),
            "{key} is gone but was kept: {:#?}",
            emu.requests()
        );
    }
    assert_eq!(got.issues.len(), snap.issues.len() - 5);
    let asked = emu
        .requests()
        .iter()
        .filter(|r| r.contains("/repos/acme/web/issues/3/timeline"))
        .count();
    assert_eq!(asked, 1, "{:#?}", emu.requests());
    // Dependencies were not taken for disabled: every other issue keeps its own.
    for (key, issue) in &got.issues {
        assert_eq!(issue.depends_on, snap.issues[key].depends_on, "{key}");
    }
}

#[test]
fn a_repository_without_pull_requests_syncs_without_asking_for_them() {
    // Gitea answers 404 for the pull request list of a repository with pull requests switched off, a
    // mirror and an empty repository (`mustAllowPulls`): a full sync failed there with "repository does
    // not exist". The repository says so (`has_pull_requests`), and a 404 all the same is no failure.
    let snap = load("tests/fixtures/small");
    let api = RepoName::new("acme", "api");
    let mut options = EmulatorOptions::default();
    options.pulls_disabled.insert(api.clone());
    let every_issue = |emu: &Emulator| {
        let got = full_sync(
            &client(emu, TOKEN, fast()),
            &repos(&snap),
            snap.meta.synced_at,
        )
        .unwrap();
        assert_eq!(got.issues.len(), snap.issues.len());
    };
    let emu = Emulator::start(Dataset::from_snapshot(&snap), options).unwrap();
    every_issue(&emu);
    assert!(
        !emu.requests()
            .iter()
            .any(|r| r.contains("/repos/acme/api/pulls")),
        "{:#?}",
        emu.requests()
    );
    // A token that may not read pull requests meets the 404 on a repository that has them.
    let emu = start(&snap);
    emu.inject(Fault::new(FaultKind::Status(404)).on("/repos/acme/web/pulls"));
    every_issue(&emu);
}

#[test]
fn a_page_of_entries_gitea_cannot_convert_is_not_the_end_of_the_list() {
    // Gitea pages first and converts after, writing an entry it cannot load as `null`: a page of two
    // such entries, two to a page, came back as no entries, and the sync stopped there, missing every
    // later page of the issue's timeline.
    let snap = load("tests/fixtures/small");
    let key = RepoName::new("acme", "api").issue(1);
    let options = EmulatorOptions {
        max_response_items: 2,
        ..EmulatorOptions::default()
    };
    let emu = Emulator::start(Dataset::from_snapshot(&snap), options).unwrap();
    emu.with_dataset(|ds| {
        let mut i = ds.issue(&key).unwrap().clone();
        for id in [1, 2] {
            // References to a pull request that is gone, before everything else on the timeline.
            let mut gone = commitea::domain::TimelineEvent::new(
                id,
                commitea::domain::EventKind::PullRef,
                i.created_at,
                &i.author,
            );
            gone.pull = Some(key.repo.issue(99_999));
            i.timeline.insert(0, gone);
        }
        ds.insert_issue(&key.repo, i);
    });
    let got = full_sync(
        &client(&emu, TOKEN, fast()),
        &repos(&snap),
        snap.meta.synced_at,
    )
    .unwrap();
    assert!(!snap.issues[&key].timeline.is_empty());
    assert_eq!(got.issues[&key].timeline, snap.issues[&key].timeline);
}

/// An issue deleted while the listing is paged: Gitea pages by offset, so every later issue moves up one
/// place and the first issue of the next page lands on the page already read. The sync notices that the
/// listing moved (its pages disagree on `X-Total-Count`) and reads it again, so nothing is skipped.
#[test]
fn an_issue_deleted_while_the_list_is_read_does_not_hide_the_next_one() {
    let demo = load("state");
    let emu = start(&demo);
    let repo: RepoName = "acme/api".parse().unwrap();
    let c = client(&emu, &EmulatorOptions::default().token, fast());
    // The newest issue is on the first page; it is deleted right after that page is answered.
    let newest = demo
        .issues
        .iter()
        .filter(|(k, _)| k.repo == repo)
        .max_by_key(|(k, i)| (i.created_at, k.number))
        .map(|(k, _)| k.clone())
        .unwrap();
    emu.inject(Fault::new(FaultKind::DeleteIssue(newest.clone())).on("/repos/acme/api/issues?"));
    let out = commitea::gitea::sync::sync(
        &c,
        &repos(&demo),
        None,
        demo.meta.synced_at,
        &commitea::gitea::sync::SyncOptions::default(),
    )
    .unwrap()
    .snapshot;
    let missing: Vec<&IssueKey> = demo
        .issues
        .keys()
        .filter(|k| **k != newest && !out.issues.contains_key(*k))
        .collect();
    assert!(missing.is_empty(), "skipped: {missing:?}");
    assert!(!out.issues.contains_key(&newest));
    assert!(
        emu.count("GET /repos/{owner}/{repo}/issues") > 2 * 138_u64.div_ceil(50),
        "the listing was read again: {:?}",
        emu.counts()
    );
}

/// A server that caps pages below the size asked for, its `/settings/api` unread (a proxy answers 404 for
/// it): every page is short, and the sync follows `X-Total-Count` to the end. It stopped after the first
/// page, and `commitea init` wrote 90 of the demo's 320 issues (an audit's finding).
#[test]
fn short_pages_are_followed_while_x_total_count_says_more() {
    let demo = load("state");
    // And behind a proxy that strips the list headers too: then a short page ends nothing while the
    // page size is a guess, and each list is read to an empty page.
    for strip_list_headers in [false, true] {
        let options = EmulatorOptions {
            max_response_items: 30,
            strip_list_headers,
            ..EmulatorOptions::default()
        };
        let emu = Emulator::start(Dataset::from_snapshot(&demo), options).unwrap();
        emu.inject(
            Fault::new(FaultKind::Status(404))
                .on("/settings/api")
                .times(10),
        );
        let c = client(&emu, &EmulatorOptions::default().token, fast());
        let got = full_sync(&c, &repos(&demo), demo.meta.synced_at).unwrap();
        let missing: Vec<&IssueKey> = demo
            .issues
            .keys()
            .filter(|k| !got.issues.contains_key(*k))
            .collect();
        assert!(
            missing.is_empty(),
            "headers stripped: {strip_list_headers}; {} not synced, as {:?}",
            missing.len(),
            missing.first()
        );
        assert_eq!(got.issues.len(), demo.issues.len());
    }
}

/// A repository whose Issues unit is switched off: Gitea answers its issue list (`type=issues`) with a
/// 404, which read as the repository gone and stopped every repository's sync. A first sync says what is
/// off and what to do; a later one keeps its issues as last read, and the other repositories are read.
#[test]
fn a_repository_with_its_issues_switched_off_is_said_and_stops_no_other() {
    let demo = load("state");
    let off: RepoName = "acme/mobile".parse().unwrap();
    let options = EmulatorOptions {
        issues_disabled: [off.clone()].into(),
        ..EmulatorOptions::default()
    };
    let emu = Emulator::start(Dataset::from_snapshot(&demo), options).unwrap();
    let c = client(&emu, &EmulatorOptions::default().token, fast());
    let err = full_sync(&c, &repos(&demo), demo.meta.synced_at)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("acme/mobile has its issues switched off on the server")
            && err.contains("take it out of repositories"),
        "{err}"
    );
    let options = commitea::gitea::sync::SyncOptions {
        force_full: true,
        ..commitea::gitea::sync::SyncOptions::default()
    };
    let mut previous = demo.clone();
    previous.meta.server = Some(emu.url());
    let got = commitea::gitea::sync::sync(
        &c,
        &repos(&demo),
        Some(&previous),
        demo.meta.synced_at,
        &options,
    )
    .unwrap()
    .snapshot;
    assert_eq!(got.issues.len(), demo.issues.len());
    for (key, issue) in &demo.issues {
        assert_eq!(got.issues.get(key), Some(issue), "{key:?}");
    }
    assert!(
        got.meta
            .repositories
            .iter()
            .any(|r| r.name == off && r.unreached_since.is_some()),
        "{:?}",
        got.meta.repositories
    );
}

/// `/times` lists only the token user's own entries to one who may write the code but not the issues
/// (Gitea checks the Issues unit, `permissions.push` is the Code unit's): where the timeline shows a
/// deleted time, the sync read `/times` and lost everyone else's tracked time. The others' entries are
/// taken from the timeline then.
#[test]
fn times_withheld_from_a_code_writer_are_taken_from_the_timeline() {
    let mut demo = load("state");
    // An issue with tracked time from two people, one of whose entries is deleted.
    let key: IssueKey = RepoName::new("acme", "web").issue(107);
    let issue = demo.issues.get_mut(&key).unwrap();
    let first = issue.tracked_times[0].clone();
    assert!(issue.tracked_times.iter().all(|t| t.user == first.user));
    issue.tracked_times.push(commitea::domain::TrackedTime {
        id: 900_001,
        user: "ola".into(),
        created: first.created,
        time: 3_600,
    });
    let issue = &demo.issues[&key];
    let key = &key;
    let gone = first;
    let remaining: u64 = issue.tracked_times[1..].iter().map(|t| t.time).sum();
    let sync_with = |issues_read_only: bool| {
        let options = EmulatorOptions {
            issues_read_only,
            ..EmulatorOptions::default()
        };
        let emu = Emulator::start(Dataset::from_snapshot(&demo), options).unwrap();
        emu.with_dataset(|ds| assert!(ds.delete_tracked_time(key, gone.id, &gone.user)));
        let c = client(&emu, &EmulatorOptions::default().token, fast());
        let got = full_sync(&c, &repos(&demo), demo.meta.synced_at).unwrap();
        got.issues[key].tracked_seconds()
    };
    // Everyone's entries listed: exactly what remains.
    assert_eq!(sync_with(false), remaining);
    // Only the token user's listed (none here): the timeline's entries of the others, the deleted one
    // among them (the timeline still shows it), not nothing.
    let withheld = sync_with(true);
    assert!(
        withheld >= remaining && withheld > 0,
        "{withheld} of {remaining}"
    );
}

#[test]
fn a_forgejo_answers_as_forgejo_does_and_the_sync_takes_it() {
    // Forgejo (its versions do not start with "1.") has no time estimate, and answers 404
    // "IsErrIssueNotExist" for a deleted issue's timeline where Gitea answers 500 (audit 107: the
    // emulator with a Forgejo version answered as Gitea 1.27, time estimates included).
    let snap = load("tests/fixtures/small");
    let api = RepoName::new("acme", "api");
    let (estimated, deleted) = (api.issue(3), api.issue(5));
    // Gitea before 1.23 has none either (audit 161: the emulator's 1.21 sent it).
    for (version, estimate) in [("1.27.1", 7200), ("11.0.1+gitea-1.22.0", 0), ("1.21.11", 0)] {
        let options = EmulatorOptions {
            version: version.into(),
            ..EmulatorOptions::default()
        };
        let emu = Emulator::start(Dataset::from_snapshot(&snap), options).unwrap();
        emu.with_dataset(|ds| {
            assert!(ds.update_issue(&estimated, |i| i.time_estimate = 7200));
        });
        emu.inject(
            Fault::new(FaultKind::DeleteIssue(deleted.clone())).on("/repos/acme/api/issues?"),
        );
        let got = full_sync(
            &client(&emu, TOKEN, fast()),
            &repos(&snap),
            snap.meta.synced_at,
        )
        .unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(got.issues[&estimated].time_estimate, estimate, "{version}");
        assert!(!got.issues.contains_key(&deleted), "{version}");
        let timeline = emu
            .requests()
            .iter()
            .filter(|r| r.contains("/repos/acme/api/issues/5/timeline"))
            .count();
        assert_eq!(timeline, 1, "{version}: {:#?}", emu.requests());
    }
}
