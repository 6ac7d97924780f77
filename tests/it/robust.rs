//! Surviving what real people and real machines do: two writers at once, a run killed at any moment, a
//! configuration that points the site at the state itself.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use commitea::state::lock::StateLock;
use serde_json::Value;

use crate::pipeline::{git, state_from_fixture, tree};
use crate::toolcli::TRIALS;

fn commitea(state: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(args)
        .arg("-s")
        .arg(state)
        .env_remove("COMMITEA_STATE")
        .env(TRIALS.0, TRIALS.1)
        .envs(env.iter().copied())
        .output()
        .expect("the binary runs")
}

const SET_PRIORITY: &str =
    r#"{"ops":[{"op":"set_priority","issue":"acme/api#3","priority":"p/0"}]}"#;

#[test]
fn a_second_writer_waits_then_says_who_holds_the_lock() {
    let state = state_from_fixture("small");
    let held = StateLock::acquire(
        state.path(),
        "commitea run (held by the test)",
        Duration::ZERO,
        chrono::Utc::now(),
    )
    .unwrap();
    let started = Instant::now();
    let out = commitea(
        state.path(),
        &["tool", "apply_changes", SET_PRIORITY],
        &[("COMMITEA_LOCK_WAIT_SECONDS", "1")],
    );
    let waited = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("busy"), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {}", std::process::id())),
        "{stderr}"
    );
    assert!(
        stderr.contains("commitea run (held by the test)"),
        "{stderr}"
    );
    assert!(stderr.contains(" since 20"), "{stderr}");
    assert!(waited >= Duration::from_secs(1), "it waited {waited:?}");
    assert!(
        !state.path().join("ops/pending").exists(),
        "nothing written"
    );
    // Once the holder is done the same call goes through.
    drop(held);
    let out = commitea(
        state.path(),
        &["tool", "apply_changes", SET_PRIORITY],
        &[("COMMITEA_LOCK_WAIT_SECONDS", "1")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn two_writers_at_once_both_land_one_after_the_other() {
    let state = state_from_fixture("small");
    let spawn = |issue: &str| {
        let input = SET_PRIORITY.replace("acme/api#3", issue);
        Command::new(env!("CARGO_BIN_EXE_commitea"))
            .args(["tool", "apply_changes", &input, "-s"])
            .arg(state.path())
            .env(TRIALS.0, TRIALS.1)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let writers: Vec<_> = ["acme/api#3", "acme/api#4", "acme/web#3", "acme/web#5"]
        .into_iter()
        .map(spawn)
        .collect();
    let mut files: Vec<String> = writers
        .into_iter()
        .map(|w| {
            let out = w.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            v["opsFile"].as_str().unwrap().to_owned()
        })
        .collect();
    files.sort();
    // Without the lock two writers read the same highest number and one op file overwrote the other.
    assert_eq!(
        files,
        [
            "ops/pending/C-0001.yaml",
            "ops/pending/C-0002.yaml",
            "ops/pending/C-0003.yaml",
            "ops/pending/C-0004.yaml"
        ]
    );
}

#[test]
fn a_site_output_over_the_state_is_refused_before_anything_is_touched() {
    let state = state_from_fixture("small");
    let before = tree(state.path());
    for output in [".", "snapshot", "..", "/tmp/site", "forecast/site"] {
        let out = commitea(
            state.path(),
            &["run", "--offline"],
            &[("COMMITEA_SITE_OUTPUT", output)],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{output}: {stderr}");
        assert!(stderr.contains("site.output"), "{output}: {stderr}");
        assert_eq!(tree(state.path()), before, "{output}: the state changed");
    }
}

/// A ledger an editor saved with bytes that are not UTF-8 still applies every directive, the bad bytes
/// read as `�` with a warning naming their line; recording refuses to write it back (that would replace
/// those bytes for good) and says which line to fix.
#[test]
fn a_ledger_with_bytes_that_are_not_utf8_still_applies_and_is_never_written_back() {
    let state = state_from_fixture("small");
    let ledger = state.path().join("pm-state.md");
    let mut text = std::fs::read(&ledger).unwrap();
    text.extend_from_slice(
        b"\n## D-0001 \xc2\xb7 note \xc2\xb7 2026-11-30T10:00:00Z\n\n> caf\xe9 \xff\n\n          ## D-0002 \xc2\xb7 reprioritize \xc2\xb7 2026-11-30T11:00:00Z\n\n> Now.\n\n          - target: issue acme/api#3\n- params: {\"priority\": 0}\n- status: active\n",
    );
    std::fs::write(&ledger, &text).unwrap();
    let line = 1 + text[..text.iter().position(|&b| b == 0xe9).unwrap()]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    let out = commitea(state.path(), &["plan", "--json"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("pm-state.md line {line} is not UTF-8 text")),
        "{stderr}"
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p0 = plan["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["issue"] == "acme/api#3")
        .map(|i| i["effective_priority"].clone());
    assert_eq!(p0, Some(Value::from(0)), "D-0002 applies: {plan}");
    // A run reads it for the forecast and again for the pages: said once (audit 167: twice).
    let out = commitea(state.path(), &["run", "--offline", "--no-commit"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("is not UTF-8 text").count(), 1, "{stderr}");

    let out = commitea(
        state.path(),
        &["directive", "--kind", "note", "--quote", "Hi."],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("line {line} is not UTF-8 text")),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&ledger).unwrap(),
        text,
        "the ledger is as it was"
    );
}

/// A state repo written by a newer CommiTea (a teammate's newer build, while CI is pinned to a release) is
/// refused by every command, with what to do, before anything is read into the older form or written.
#[test]
fn a_state_repo_of_a_newer_format_is_refused_and_left_as_it_is() {
    let state = state_from_fixture("small");
    let meta = state.path().join("snapshot/meta.yaml");
    let text = std::fs::read_to_string(&meta).unwrap();
    assert!(
        !text.contains("format:"),
        "format 1 is written without the field: {text}"
    );
    // A newer format may bring fields this one does not know: the format is what is reported.
    std::fs::write(&meta, format!("format: 2\nnewer_field: yes\n{text}")).unwrap();
    let head = git(state.path(), &["rev-parse", "HEAD"]);
    let before = tree(state.path());
    // The online run reads the state before it asks the server (nothing listens there).
    let server = [("COMMITEA_SERVER", "http://127.0.0.1:9")];
    type Env<'a> = &'a [(&'a str, &'a str)];
    // Those that do not read the snapshot themselves refuse too: `publish` (it pushed the site and
    // fetched into .git), `ask` (it asked the model first and exited 0) and `mcp` (it served a client).
    let commands: [(&[&str], Env<'_>); 9] = [
        (&["run", "--offline"], &[]),
        (&["run"], &server),
        (&["plan"], &[]),
        (&["render"], &[]),
        (&["tool", "query_project", r#"{"view":"runway"}"#], &[]),
        (&["directive", "--kind", "note", "--quote", "Ship it."], &[]),
        (&["publish"], &[]),
        (&["ask", "Is v2 on time?"], &[]),
        (&["mcp"], &[]),
    ];
    for (args, env) in commands {
        let out = commitea(state.path(), args, env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains("snapshot/meta.yaml: the state repo is in format 2")
                && stderr.contains("reads format 1 and older")
                && stderr.contains("upgrade commitea"),
            "{args:?}: {stderr}"
        );
        assert_eq!(tree(state.path()), before, "{args:?}: the state changed");
        assert_eq!(git(state.path(), &["rev-parse", "HEAD"]), head, "{args:?}");
    }
    // Format 0 never was one.
    std::fs::write(&meta, format!("format: 0\n{text}")).unwrap();
    let out = commitea(state.path(), &["plan"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("format: 0 is no state repo format"),
        "{stderr}"
    );
    // The format this CommiTea writes, written out, reads as before.
    std::fs::write(&meta, format!("format: 1\n{text}")).unwrap();
    let out = commitea(state.path(), &["plan"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A name from Gitea cannot forge log lines or reach the terminal of whoever reads `git log`.
#[test]
fn a_name_cannot_forge_log_lines_or_escape_into_the_commit_message() {
    let state = state_from_fixture("small");
    let path = state.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "title: v1.0",
        r#"title: "v1.0\e[2J\n ERROR token leaked\u202E""#,
    );
    std::fs::write(&path, text).unwrap();
    crate::pipeline::commit_snapshot(state.path());
    let out = commitea(state.path(), &["run", "--offline"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.lines().any(|l| l.trim_start().starts_with("ERROR")),
        "{stderr}"
    );
    let message = git(state.path(), &["log", "-1", "--format=%B"]);
    assert!(
        message
            .lines()
            .any(|l| l.starts_with("- v1.0") && l.contains("ERROR token leaked")),
        "{message}"
    );
    assert!(
        !message.contains('\u{1b}') && !message.contains('\u{202E}'),
        "{message:?}"
    );
    assert!(
        !message.lines().any(|l| l.trim_start().starts_with("ERROR")),
        "{message}"
    );
}

/// Symbolic links in the state repo are refused, never followed: each arrives through a pull request, and
/// is easy to miss in one.
#[cfg(unix)]
#[test]
fn symbolic_links_in_the_state_are_refused_never_followed() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("environ");
    std::fs::write(&secret, "GITEA_TOKEN=secret-from-outside\n").unwrap();
    let victim = outside.path().join("victim");
    std::fs::create_dir_all(victim.join("sub")).unwrap();
    std::fs::write(victim.join("a.txt"), "keep me").unwrap();
    std::fs::write(victim.join("sub/b.txt"), "keep me too").unwrap();
    let refused = |state: &Path, args: &[&str], what: &str| {
        let out = commitea(state, args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "{what}: {stderr}");
        assert!(
            stderr.contains(what) && stderr.contains("symbolic link"),
            "{what}: {stderr}"
        );
        assert!(!stderr.contains("secret-from-outside"), "{stderr}");
        let public = state.join("public");
        if public.is_dir() && !public.is_symlink() {
            for e in walkdir::WalkDir::new(&public) {
                let e = e.unwrap();
                if e.file_type().is_file() {
                    let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                    assert!(
                        !text.contains("secret-from-outside"),
                        "{}",
                        e.path().display()
                    );
                }
            }
        }
    };

    // A template override that links to a file outside: its content would be published.
    let state = state_from_fixture("small");
    std::fs::create_dir_all(state.path().join("site-templates")).unwrap();
    symlink(&secret, state.path().join("site-templates/style.css")).unwrap();
    refused(state.path(), &["run", "--offline"], "style.css");
    // The templates folder itself a link.
    let state = state_from_fixture("small");
    symlink(outside.path(), state.path().join("site-templates")).unwrap();
    refused(state.path(), &["run", "--offline"], "site-templates");

    // The site folder a link: the clean-up would delete what it points to.
    let state = state_from_fixture("small");
    symlink(&victim, state.path().join("public")).unwrap();
    refused(state.path(), &["run", "--offline"], "public");
    assert_eq!(
        std::fs::read_to_string(victim.join("a.txt")).unwrap(),
        "keep me"
    );
    assert!(victim.join("sub/b.txt").exists());

    // The snapshot, the ledger and the config: a parse error would quote the linked file.
    for linked in [
        "snapshot/meta.yaml",
        "snapshot/issues/acme/api/1.yaml",
        "pm-state.md",
        "commitea.yaml",
    ] {
        let state = state_from_fixture("small");
        let path = state.path().join(linked);
        let _ = std::fs::remove_file(&path);
        symlink(&secret, &path).unwrap();
        // Committed, as a link arrives: through a pull request.
        if linked.starts_with("snapshot/") {
            crate::pipeline::commit_snapshot(state.path());
        }
        refused(
            state.path(),
            &["run", "--offline"],
            linked.rsplit('/').next().unwrap(),
        );
    }

    // A folder on the way a link: an op file would be written, or the forecast, wherever it points.
    let write = serde_json::json!(
        {"ops": [{"op": "set_priority", "issue": "acme/api#3", "priority": "p/0"}]}
    )
    .to_string();
    let tool = ["tool", "apply_changes", write.as_str()];
    for (folder, args) in [
        ("ops/pending", &tool[..]),
        ("ops", &tool[..]),
        ("forecast", &["run", "--offline"][..]),
    ] {
        let state = state_from_fixture("small");
        let target = outside.path().join(folder.replace('/', "-"));
        std::fs::create_dir_all(&target).unwrap();
        let path = state.path().join(folder);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        symlink(&target, &path).unwrap();
        refused(state.path(), args, folder.rsplit('/').next().unwrap());
        assert_eq!(
            std::fs::read_dir(&target).unwrap().count(),
            0,
            "{folder}: nothing written where the link points"
        );
    }
}

/// The run, killed at `after` (or left to finish when `after` is `None`): each line it printed with the
/// time it came.
fn run_killed(state: &Path, server: &str, after: Option<Duration>) -> Vec<(Duration, String)> {
    use std::io::BufRead;
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["run", "--now", "2026-11-30T09:00:00Z", "-s"])
        .arg(state)
        .env("COMMITEA_SERVER", server)
        .env("COMMITEA_GITEA_TOKEN", "emulator-token")
        .env(TRIALS.0, TRIALS.1)
        .env("COMMITEA_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .map(|l| (started.elapsed(), l))
            .collect::<Vec<_>>()
    });
    if let Some(after) = after {
        std::thread::sleep(after.saturating_sub(started.elapsed()));
        // SIGKILL: no destructor, no clean-up, as when a CI runner is torn down.
        let _ = child.kill();
    }
    let _ = child.wait();
    reader.join().unwrap()
}

/// The stage a run had reached by the last line it printed.
fn stage(log: &[(Duration, String)]) -> &'static str {
    match log.iter().rev().find_map(|(_, l)| stage_of(l)) {
        Some(s) => s,
        None => "start",
    }
}

fn stage_of(line: &str) -> Option<&'static str> {
    if line.contains("site:") {
        Some("render")
    } else if line.contains("commit:") {
        Some("commit")
    } else if line.contains("forecast:") {
        Some("write")
    } else if line.contains("sync") || line.contains("GET ") {
        Some("sync")
    } else {
        None
    }
}

/// When the reference run printed the first line of `stage`.
fn when(log: &[(Duration, String)], stage: &str) -> Duration {
    log.iter()
        .find(|(_, l)| stage_of(l) == Some(stage))
        .map(|(t, _)| *t)
        .unwrap_or_else(|| panic!("the run never reached {stage}"))
}

#[test]
fn a_run_killed_at_any_moment_leaves_the_old_commit_or_the_new_one() {
    use commitea::state::{Layout, Snapshot};
    use commitea_testkit::gitea::{Dataset, Emulator, EmulatorOptions};

    if Command::new("git").arg("--version").output().is_err() {
        panic!("git is needed for this test (git fsck)");
    }
    // The demo's 320 issues, answered a little slowly so that the sync takes a while too.
    let demo = crate::toolcli::demo_state();
    let snapshot = Snapshot::load(&Layout::new(demo.path())).unwrap();
    let options = EmulatorOptions {
        latency: Duration::from_millis(2),
        ..EmulatorOptions::default()
    };
    let emulator = Emulator::start(Dataset::from_snapshot(&snapshot), options).unwrap();
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        crate::pipeline::copy_tree(demo.path(), dir.path());
        let repo = commitea::state::git::open_or_init(dir.path()).unwrap();
        let sig = commitea::state::git::Signature {
            name: "Test".into(),
            email: "test@example.com".into(),
            time: chrono::DateTime::parse_from_rfc3339("2026-11-30T08:00:00Z")
                .unwrap()
                .into(),
        };
        commitea::state::git::commit_all(&repo, &["public"], "demo\n", &sig).unwrap();
        dir
    };

    // The uninterrupted run: how long it takes, and what it leaves.
    let reference = fresh();
    let base = git(reference.path(), &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let log = run_killed(reference.path(), &emulator.url(), None);
    let full = log.last().map(|(t, _)| *t).unwrap_or_default();
    let finished = normalised(tree(reference.path()));
    // Kill points spread over each stage: the sync, then writing the files and committing (short, so as
    // many points as the sync), then rendering the site.
    let (write, commit) = (when(&log, "write"), when(&log, "commit"));
    let mut kills: Vec<Duration> = Vec::new();
    for (from, to, n) in [
        (Duration::ZERO, write, 4),
        (write, commit, 5),
        (commit, full, 3),
    ] {
        kills.extend((0..n).map(|k| from + (to - from).mul_f64(f64::from(k) / f64::from(n))));
    }
    let mut queue: std::collections::VecDeque<Duration> = kills.into();
    let (mut points, mut extra) = (0, 0);
    let mut outcomes: std::collections::BTreeMap<(&str, &str), usize> = Default::default();
    while let Some(after) = queue.pop_front() {
        points += 1;
        let state = fresh();
        let log = run_killed(state.path(), &emulator.url(), Some(after));
        let reached = stage(&log);
        let head = git(state.path(), &["rev-parse", "HEAD"]).trim().to_owned();
        let at = if head == base {
            "old commit"
        } else {
            // A new commit is the whole new state on top of the old one, never part of it.
            assert_eq!(git(state.path(), &["rev-parse", "HEAD^"]).trim(), base);
            for path in ["forecast/forecast.json", "snapshot/issues/acme/api/1.yaml"] {
                assert_eq!(
                    git_show(state.path(), "HEAD", path).as_ref(),
                    finished.get(path),
                    "kill at {after:?} ({reached}): the commit's {path} is not the run's"
                );
            }
            "new commit"
        };
        let fsck = Command::new("git")
            .args(["fsck", "--full", "--strict"])
            .current_dir(state.path())
            .output()
            .unwrap();
        assert!(
            fsck.status.success(),
            "kill at {after:?} ({reached}): git fsck: {}",
            String::from_utf8_lossy(&fsck.stderr)
        );
        // Nothing CommiTea owns is half-written: every file is as the finished run left it, or as it was,
        // or a temporary file the next run removes.
        for (path, bytes) in normalised(tree(state.path())) {
            if temporary(&path) || path.starts_with("public/") {
                continue;
            }
            let old = git_show(state.path(), &base, &path).map(|b| normalise(&path, b));
            assert!(
                finished.get(&path) == Some(&bytes) || old.as_ref() == Some(&bytes),
                "kill at {after:?} ({reached}): {path} is neither old nor new"
            );
        }
        // The next run converges to what the uninterrupted run left.
        let log = run_killed(state.path(), &emulator.url(), None);
        assert!(
            log.iter().any(|(_, l)| l.contains("commit:")),
            "kill at {after:?} ({reached}): the next run failed: {log:?}"
        );
        let again = normalised(tree(state.path()));
        assert!(
            !again.keys().any(|p| temporary(p)),
            "kill at {after:?}: temporary files left"
        );
        for (path, bytes) in &finished {
            assert_eq!(
                again.get(path),
                Some(bytes),
                "kill at {after:?} ({reached}): {path} differs after the next run"
            );
        }
        assert_eq!(
            again.len(),
            finished.len(),
            "kill at {after:?}: other files"
        );
        let status = git(
            state.path(),
            &[
                "status",
                "--porcelain",
                "--",
                "snapshot",
                "forecast",
                "ops",
                "pm-state.md",
            ],
        );
        assert!(
            status.is_empty(),
            "kill at {after:?} ({reached}): the next run left changes uncommitted:\n{status}\nits log: {log:?}"
        );
        *outcomes.entry((reached, at)).or_default() += 1;
        // On a loaded machine the stages shift from the reference run's timings: add later points until
        // the kills have landed before and after the commit and in three stages (a few at most).
        let stages: std::collections::BTreeSet<&str> = outcomes.keys().map(|(s, _)| *s).collect();
        let new_commit = outcomes.keys().any(|(_, at)| *at == "new commit");
        if queue.is_empty() && extra < 6 && (!new_commit || stages.len() < 3) {
            extra += 1;
            queue.push_back(if new_commit {
                write + (commit - write).mul_f64(0.3 * f64::from(extra))
            } else {
                full.mul_f64(1.0 + 0.4 * f64::from(extra))
            });
        }
    }
    eprintln!("{points} kill points over a {full:?} run: {outcomes:?}");
    assert!(
        outcomes.keys().any(|(_, at)| *at == "old commit")
            && outcomes.keys().any(|(_, at)| *at == "new commit"),
        "kills landed both before and after the commit: {outcomes:?}"
    );
    assert!(
        outcomes
            .keys()
            .map(|(s, _)| *s)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            >= 3,
        "kills landed in several stages: {outcomes:?}"
    );
}

/// `bytes` of `path`, without what depends on when the sync ran: the cursors in `snapshot/meta.yaml` are
/// the server's clock, which runs on between two runs.
fn normalise(path: &str, bytes: Vec<u8>) -> Vec<u8> {
    if path != "snapshot/meta.yaml" {
        return bytes;
    }
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|l| !l.trim_start().starts_with("cursor:"))
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}

fn normalised(
    files: std::collections::BTreeMap<String, Vec<u8>>,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    files
        .into_iter()
        .map(|(p, b)| {
            let b = normalise(&p, b);
            (p, b)
        })
        .collect()
}

fn git_show(dir: &Path, commit: &str, path: &str) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .args(["show", &format!("{commit}:{path}")])
        .current_dir(dir)
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// Whether `path` is a temporary file of a write or inside a folder being staged (a first site render).
fn temporary(path: &str) -> bool {
    path.split('/')
        .any(|part| part.ends_with(commitea::state::TMP_SUFFIX))
}

/// The token goes only to the Gitea server: a remote elsewhere (a mirror, another forge, a mistyped
/// host) never gets it, and the failure says why. An audit's header-logging remote received it.
#[test]
fn the_token_is_sent_to_the_gitea_server_only() {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    // A git HTTP server that records whether each request carried an Authorization header, and refuses.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<bool>::new()));
    {
        let seen = std::sync::Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                let mut auth = false;
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    auth |= line.to_ascii_lowercase().starts_with("authorization:");
                }
                seen.lock().unwrap().push(auth);
                let _ = stream.write_all(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        assert!(
            Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .status()
                .unwrap()
                .success()
        );
    };
    git(&["init", "-q"]);
    let elsewhere = format!("http://127.0.0.1:{port}/acme/plan.git");
    git(&["remote", "add", "origin", &elsewhere]);
    let fetch = |servers: &[String]| {
        seen.lock().unwrap().clear();
        let remote = commitea::state::remote::Remote::new(
            dir.path(),
            "origin",
            Some("tok-3f9a1c".into()),
            servers,
        );
        let err = remote.fetch("main").unwrap_err().to_string();
        (err, seen.lock().unwrap().clone())
    };
    // The Gitea server is elsewhere: the remote gets no token, and the error says so.
    let (err, seen_auth) = fetch(&["https://gitea.example.com/".to_owned()]);
    assert!(!seen_auth.is_empty(), "the remote was asked");
    assert!(
        seen_auth.iter().all(|a| !a),
        "the token reached another host"
    );
    assert!(
        err.contains(&format!(
            "origin is {elsewhere}, not on the Gitea server https://gitea.example.com"
        )) && !err.contains("tok-3f9a1c"),
        "{err}"
    );
    // The remote is on the server: the token goes with the request.
    let (_, seen_auth) = fetch(&[format!("http://127.0.0.1:{port}")]);
    assert!(seen_auth.iter().any(|a| *a), "the server got no token");
}

#[test]
fn an_empty_token_secret_in_actions_is_said_before_the_jobs_own_token_is_used() {
    // The workflow passes the COMMITEA_TOKEN secret as COMMITEA_GITEA_TOKEN, empty when unset; the
    // runner's own token (FORGEJO_TOKEN, GITHUB_TOKEN) then went to every repository, which answered "not
    // visible to the token" with no word of the secret (audit 81).
    let state = state_from_fixture("small");
    let server = ("COMMITEA_SERVER", "http://127.0.0.1:9");
    let out = commitea(
        state.path(),
        &["sync"],
        &[
            server,
            ("COMMITEA_GITEA_TOKEN", ""),
            ("FORGEJO_TOKEN", "job-token-4f2a"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.matches("COMMITEA_GITEA_TOKEN is empty (is the repository secret COMMITEA_TOKEN set?): using FORGEJO_TOKEN").count() == 1,
        "said once: {err}"
    );
    assert!(!err.contains("job-token-4f2a"), "{err}");
    // A token given some other way is no such case.
    let out = commitea(
        state.path(),
        &["sync"],
        &[server, ("FORGEJO_TOKEN", "job-token-4f2a")],
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("is empty"));
}

#[test]
fn an_override_of_no_template_is_said_with_the_name_it_is_near() {
    // `site-templates/directive.html` (for directives.html) was read by nothing, without a word (audit 80).
    let state = state_from_fixture("small");
    let dir = state.path().join("site-templates");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("directive.html"), "{% extends \"base.html\" %}").unwrap();
    let out = commitea(state.path(), &["render"], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "directive.html overrides nothing and is not read (did you mean directives.html?)"
        ),
        "{err}"
    );
    // A layout written before the People page existed leaves it unlinked: said (audit 86).
    let base = include_str!("../../site-templates/base.html");
    let old: Vec<&str> = base
        .lines()
        .filter(|l| !l.contains("people.html"))
        .collect();
    std::fs::write(dir.join("base.html"), old.join("\n")).unwrap();
    let out = commitea(state.path(), &["render"], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("base.html links no people.html (the default layout does)"),
        "{err}"
    );
    std::fs::write(dir.join("base.html"), base).unwrap();
    let out = commitea(state.path(), &["render"], &[]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("links no"));
}
