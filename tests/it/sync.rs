//! Full sync against the Gitea emulator: the bundled demo and the small fixture round-trip byte for byte,
//! auth errors are clear, injected faults are survived by retries, and the token never leaks.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use commitea::domain::RepoName;
use commitea::gitea::client::{Client, ClientError, ClientOptions};
use commitea::gitea::emulator::{Dataset, Emulator, EmulatorOptions, Fault, FaultKind};
use commitea::gitea::sync::{SyncError, full_sync};
use commitea::state::{Layout, Snapshot};

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
    // One listing each per repository, then one timeline page past the end per issue at least.
    let issues = got.issues.len() as u64;
    assert_eq!(emu.count("GET /settings/api"), 1);
    assert!(emu.count("GET /repos/{owner}/{repo}/issues/{index}/timeline") > issues);
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/dependencies"),
        issues
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
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/dependencies"),
        snap.issues.keys().filter(|k| k.repo.name != "api").count() as u64
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
    let faults = [
        Fault::new(FaultKind::Status(500)).times(3).on("/issues?"),
        Fault::new(FaultKind::Status(502)).times(2).on("/timeline"),
        Fault::new(FaultKind::Status(503)).times(3).on("/labels"),
        Fault::new(FaultKind::Slow(Duration::from_millis(2500))).on("/milestones"),
        Fault::new(FaultKind::RateLimit {
            retry_after_secs: 1,
        })
        .on("/times"),
        Fault::new(FaultKind::Drop).times(2).on("/comments"),
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
        assert_eq!(got, clean, "{fault:?}");
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
    use commitea::gitea::emulator::Pull;

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
