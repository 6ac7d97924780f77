//! The approval loop end to end: an agent proposes through MCP, `commitea propose` opens the pull request,
//! a person merges it, and the real workflow file — run by nektos/act on the host — applies it to Gitea,
//! commits, pushes and publishes. Against the emulator (answering as Gitea does) and a bare git repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use commitea::demo::{self, DemoSpec};
use commitea::domain::{IssueKey, OpenState, RepoName};
use commitea_testkit::gitea::{Dataset, Emulator, EmulatorOptions, Fault, FaultKind, MergeStyle};
use serde_json::Value;

use crate::toolcli::TRIALS;

const TOKEN: &str = "emulator-token";

fn state_repo() -> RepoName {
    RepoName::new("acme", "state")
}

/// Commits what is staged in `dir` as the PM would, with `message`.
fn commit_as_pm(dir: &Path, message: &str) {
    git(
        dir,
        &[
            "-c",
            "user.name=pat",
            "-c",
            "user.email=p@example.com",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A state repo (checkout and its bare remote) and the emulator serving its issues and its pull requests.
struct Setup {
    emu: Emulator,
    bare: PathBuf,
    work: PathBuf,
    snapshot: commitea::state::Snapshot,
    _tmp: tempfile::TempDir,
}

fn setup(spec: &DemoSpec) -> Setup {
    setup_with(spec, EmulatorOptions::default())
}

/// [`setup`] against a Gitea of `version`: an older one answers as it did.
fn setup_on(spec: &DemoSpec, version: &str) -> Setup {
    setup_with(
        spec,
        EmulatorOptions {
            version: version.into(),
            ..EmulatorOptions::default()
        },
    )
}

/// [`setup`] with the emulator's `options` (its state repository added).
fn setup_with(spec: &DemoSpec, mut options: EmulatorOptions) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let state = demo::generate(spec);
    demo::write(&state, &work).unwrap();
    // The server comes from the environment (COMMITEA_SERVER, or the job's GITHUB_SERVER_URL).
    let config = std::fs::read_to_string(work.join("commitea.yaml")).unwrap();
    let config: String = config
        .lines()
        .filter(|l| !l.starts_with("server:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(
        work.join("commitea.yaml"),
        format!("{config}approvals:\n  state_repository: acme/state\n"),
    )
    .unwrap();
    std::fs::write(work.join(".gitignore"), "public/\n").unwrap();
    let repo = commitea::state::git::open_or_init(&work).unwrap();
    let sig = commitea::state::git::Signature {
        name: "pat".into(),
        email: "pat@example.com".into(),
        time: state.snapshot.meta.synced_at,
    };
    commitea::state::git::commit_all(&repo, &["public"], "the state repo\n", &sig).unwrap();
    let bare = tmp.path().join("state.git");
    git(
        tmp.path(),
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    git(&work, &["remote", "add", "origin", bare.to_str().unwrap()]);
    git(&work, &["push", "-q", "origin", "HEAD:main"]);
    options.state_repos.insert(state_repo(), bare.clone());
    let emu = Emulator::start(Dataset::from_snapshot(&state.snapshot), options).unwrap();
    Setup {
        emu,
        bare,
        work,
        snapshot: state.snapshot,
        _tmp: tmp,
    }
}

impl Setup {
    fn commitea(&self, dir: &Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_commitea"))
            .args(args)
            .arg("-s")
            .arg(dir)
            .env_remove("COMMITEA_STATE")
            .env("COMMITEA_SERVER", self.emu.url())
            .env("COMMITEA_GITEA_TOKEN", TOKEN)
            .env(TRIALS.0, TRIALS.1)
            .output()
            .expect("the binary runs")
    }

    /// Open issues nothing depends on and that depend on nothing, with a priority label.
    fn quiet_issues(&self, n: usize) -> Vec<IssueKey> {
        let s = &self.snapshot;
        s.issues
            .iter()
            .filter(|(k, i)| {
                i.state == OpenState::Open
                    && i.depends_on.is_empty()
                    && i.labels.iter().any(|l| l.starts_with("p/"))
                    && !s.issues.values().any(|o| o.depends_on.contains(k))
            })
            .map(|(k, _)| k.clone())
            .take(n)
            .collect()
    }

    /// A quiet issue (see [`Setup::quiet_issues`]) that does not have `label`.
    fn quiet_issue_without(&self, label: &str) -> IssueKey {
        self.quiet_issues(10)
            .into_iter()
            .find(|k| !self.issue(k).labels.iter().any(|l| l == label))
            .expect("a quiet issue without the label")
    }

    /// Records in the work checkout a directive that gives `key` the priority `p/0`, in `quote`; its id.
    fn p0_directive(&self, key: &IssueKey, quote: &str) -> String {
        self.directive(
            &self.work,
            "reprioritize",
            quote,
            &key.to_string(),
            r#"{"priority": 0}"#,
        )
    }

    /// Records a directive in the checkout `dir` with `commitea directive`; its id.
    fn directive(&self, dir: &Path, kind: &str, quote: &str, target: &str, params: &str) -> String {
        let out = self.commitea(
            dir,
            &[
                "directive",
                "--kind",
                kind,
                "--quote",
                quote,
                "--target",
                target,
                "--params",
                params,
            ],
        );
        let v: Value = serde_json::from_str(&ok(&out)).unwrap();
        v["directiveId"].as_str().unwrap().to_owned()
    }

    /// An estimate `key` does not have yet (`set_estimate` of the one it has changes nothing, and is
    /// refused).
    fn new_estimate(&self, key: &IssueKey) -> &'static str {
        let has = |e: &str| self.snapshot.issues[key].labels.iter().any(|l| l == e);
        if has("est/2d") { "est/3d" } else { "est/2d" }
    }

    fn issue(&self, key: &IssueKey) -> commitea::domain::Issue {
        self.emu.with_dataset(|d| d.issue(key).unwrap().clone())
    }

    /// `path` on the bare repository's branch, if it is there.
    fn on_branch(&self, branch: &str, path: &str) -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.bare)
            .args(["show", &format!("{branch}:{path}")])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Calls one tool the way an agent does: over MCP with the official Python SDK (`tests/mcp/call.py`); with
/// no SDK installed (and COMMITEA_REQUIRE_EXTERNAL unset), through `commitea tool`.
fn agent_call(setup: &Setup, tool: &str, input: &str) -> Value {
    let sdk = Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !sdk && std::env::var("COMMITEA_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1") {
        panic!(
            "the MCP Python SDK is required (COMMITEA_REQUIRE_EXTERNAL=1): pip install 'mcp==2.3.0'"
        );
    }
    let out = if sdk {
        Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/call.py"))
            .arg(env!("CARGO_BIN_EXE_commitea"))
            .arg(&setup.work)
            .arg(tool)
            .arg(input)
            .args(["--by", "pat"])
            .env("COMMITEA_SERVER", setup.emu.url())
            .env("COMMITEA_GITEA_TOKEN", TOKEN)
            .env(TRIALS.0, TRIALS.1)
            .output()
            .unwrap()
    } else {
        eprintln!(
            "\n!!!!!!!! the MCP Python SDK is missing: calling through `commitea tool` !!!!!!!!\n"
        );
        setup.commitea(&setup.work, &["tool", tool, input, "--by", "pat"])
    };
    serde_json::from_str(ok(&out).trim()).unwrap()
}

/// The stand-in for `actions/checkout` act is given: it checks out the state repo from `ACT_STATE_REMOTE`
/// (a server would be asked for `GITHUB_REPOSITORY`).
fn checkout_action(dir: &Path) -> PathBuf {
    let action = dir.join("checkout-action");
    std::fs::create_dir_all(&action).unwrap();
    std::fs::write(
        action.join("action.yml"),
        r#"name: checkout (local stand-in)
description: Checks out the state repo from ACT_STATE_REMOTE, as actions/checkout does from the server.
inputs:
  fetch-depth:
    description: ignored (the whole history is fetched)
    default: "1"
  persist-credentials:
    description: ignored
    default: "true"
runs:
  using: composite
  steps:
    - shell: bash
      run: |
        set -eu
        git init -q .
        git remote remove origin 2>/dev/null || true
        git remote add origin "$ACT_STATE_REMOTE"
        git fetch -q origin
        git checkout -q -f -B main origin/main
        git clean -q -fdx
"#,
    )
    .unwrap();
    action
}

/// A stand-in for `actions/cache`: act fetches every action a workflow names before it runs, even a step
/// whose `if` skips it (the cache step is skipped when a prebuilt binary is given, as here).
fn cache_action(dir: &Path) -> PathBuf {
    let action = dir.join("cache-action");
    std::fs::create_dir_all(&action).unwrap();
    std::fs::write(
        action.join("action.yml"),
        r#"name: cache (local stand-in)
description: Does nothing.
inputs:
  path:
    description: ignored
  key:
    description: ignored
runs:
  using: composite
  steps:
    - shell: bash
      run: "true"
"#,
    )
    .unwrap();
    action
}

/// Runs the repository's workflow file with act on the host, as a push to main.
fn act(setup: &Setup, scratch: &Path) -> Output {
    let runner = scratch.join("runner");
    let _ = std::fs::remove_dir_all(&runner);
    git(
        scratch,
        &[
            "clone",
            "-q",
            setup.bare.to_str().unwrap(),
            runner.to_str().unwrap(),
        ],
    );
    let workflow = runner.join(".gitea/workflows/commitea.yml");
    std::fs::create_dir_all(workflow.parent().unwrap()).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".gitea/workflows/commitea.yml"),
        &workflow,
    )
    .unwrap();
    let action = checkout_action(scratch);
    // The stand-ins answer for the versions the workflow names.
    let text = std::fs::read_to_string(&workflow).unwrap();
    let uses = |name: &str| {
        text.lines()
            .filter_map(|l| l.trim().trim_start_matches("- ").strip_prefix("uses: "))
            .find(|u| u.starts_with(name))
            .unwrap_or_else(|| panic!("the workflow uses no {name}"))
            .to_owned()
    };
    Command::new("act")
        .arg("push")
        .args(["-P", "ubuntu-latest=-self-hosted"])
        .args(["-W", ".gitea/workflows/commitea.yml"])
        .arg("--local-repository")
        .arg(format!(
            "{}={}",
            uses("actions/checkout@"),
            action.display()
        ))
        .arg("--local-repository")
        .arg(format!(
            "{}={}",
            uses("actions/cache@"),
            cache_action(scratch).display()
        ))
        .args([
            "--action-cache-path",
            scratch.join("act-cache").to_str().unwrap(),
        ])
        .arg("--env")
        .arg(format!("ACT_STATE_REMOTE={}", setup.bare.display()))
        .arg("--env")
        .arg(format!("GITHUB_SERVER_URL={}", setup.emu.url()))
        .arg("--env")
        .arg(format!("{}={}", TRIALS.0, TRIALS.1))
        .arg("--var")
        .arg(format!(
            "COMMITEA_BINARY_URL=file://{}",
            env!("CARGO_BIN_EXE_commitea")
        ))
        .arg("-s")
        .arg(format!("COMMITEA_TOKEN={TOKEN}"))
        .current_dir(&runner)
        .stdin(Stdio::null())
        .output()
        .expect("act runs")
}

#[test]
fn the_whole_loop_from_an_agent_to_gitea_through_a_merged_pull_request() {
    if !crate::support::external("act") || !crate::support::external("git") {
        return;
    }
    let s = setup(&DemoSpec::bundled());
    let scratch = tempfile::tempdir().unwrap();
    let [closing, reprioritised] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let before_labels = s.issue(&reprioritised).labels;
    assert!(!before_labels.contains(&"p/0".to_owned()));

    // An agent proposes a destructive close and a priority change, approved after seeing the consequence.
    let input = format!(
        r#"{{"ops":[{{"op":"close_issue","issue":"{closing}"}},{{"op":"set_priority","issue":"{reprioritised}","priority":"p/0"}}],"approved":true}}"#
    );
    let answer = agent_call(&s, "apply_changes", &input);
    assert_eq!(answer["applied"], 2, "{answer}");
    assert_eq!(answer["opsFile"], "ops/pending/C-0001.yaml");
    assert!(s.emu.writes().is_empty(), "nothing reached Gitea yet");

    // `commitea propose` pushes the branch and opens the pull request.
    let t = Instant::now();
    let proposed = ok(&s.commitea(&s.work, &["propose"]));
    eprintln!("propose: {:?}", t.elapsed());
    assert_eq!(proposed.trim(), "C-0001 pull-request 1 commitea/C-0001");
    assert!(
        !s.work.join("ops/pending/C-0001.yaml").exists(),
        "the proposal left the checkout"
    );
    let pulls = s.emu.state_pulls(&state_repo());
    assert_eq!(pulls.len(), 1);
    assert!(pulls[0].title.starts_with("C-0001: "), "{}", pulls[0].title);
    // A tab, not a space, after the keyword: Gitea closes what a merged body names so (audit 159).
    assert!(
        pulls[0]
            .body
            .contains(&format!("close\t{closing} (destructive)")),
        "{}",
        pulls[0].body
    );
    assert!(
        pulls[0].body.contains("**Asked by:** pat"),
        "{}",
        pulls[0].body
    );
    assert!(
        s.on_branch("commitea/C-0001", "ops/pending/C-0001.yaml")
            .is_some()
    );
    assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_none());
    // A second propose has nothing new to propose.
    assert_eq!(ok(&s.commitea(&s.work, &["propose"])).trim(), "");

    // A person merges it: the approval.
    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    assert!(
        s.emu
            .writes()
            .iter()
            .all(|w| w.contains("/repos/acme/state/"))
    );

    // The workflow, run by act as a push to main would run it.
    let t = Instant::now();
    let out = act(&s, scratch.path());
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("act, first run: {:?}", t.elapsed());
    assert!(out.status.success(), "act failed:\n{log}");
    assert!(!log.contains(TOKEN), "the token reached act's log");

    // Gitea has the change: the issue closed, the priority label replaced within its scope.
    assert_eq!(s.issue(&closing).state, OpenState::Closed);
    let labels = s.issue(&reprioritised).labels;
    assert!(labels.contains(&"p/0".to_owned()), "{labels:?}");
    assert_eq!(
        labels.iter().filter(|l| l.starts_with("p/")).count(),
        1,
        "{labels:?}"
    );
    // Only namespace labels and native fields were touched.
    for w in s.emu.write_log() {
        if w.target.contains("/repos/acme/state/") {
            continue;
        }
        let ok_write = match w.method.as_str() {
            "PATCH" => w
                .body
                .as_object()
                .is_some_and(|o| o.keys().all(|k| k == "state" || k == "milestone")),
            "POST" | "DELETE" => w.target.contains("/labels"),
            _ => false,
        };
        assert!(ok_write, "an unexpected write: {w:?}");
    }
    // The branch records both ops, the pull request and who merged it; the pending file left it.
    let applied = s
        .on_branch("main", "ops/applied/C-0001.yaml")
        .expect("ops/applied/C-0001.yaml on main");
    assert!(applied.contains("pull_request: 1"), "{applied}");
    assert!(applied.contains("merged_by: pat"), "{applied}");
    assert_eq!(applied.matches("result: applied").count(), 2, "{applied}");
    assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_none());
    // The site is on the pages branch.
    let index = s
        .on_branch("pages", "index.html")
        .expect("the site on pages");
    assert!(index.contains("<html"), "{index}");

    // A second run writes nothing to Gitea.
    let writes = s.emu.writes().len();
    let out = act(&s, scratch.path());
    assert!(
        out.status.success(),
        "act, second run: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        s.emu
            .writes()
            .iter()
            .filter(|w| !w.contains("/repos/acme/state/"))
            .count(),
        s.emu.writes()[..writes]
            .iter()
            .filter(|w| !w.contains("/repos/acme/state/"))
            .count(),
        "the second run wrote to Gitea"
    );
}

/// Commits an op file straight to the checkout's branch (no pull request) and pushes it.
fn push_straight(s: &Setup, id: &str, yaml: &str) {
    let path = s.work.join(format!("ops/pending/{id}.yaml"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, yaml).unwrap();
    git(&s.work, &["add", "ops"]);
    git(
        &s.work,
        &[
            "-c",
            "user.name=mallory",
            "-c",
            "user.email=m@example.com",
            "commit",
            "-q",
            "-m",
            "straight to main",
        ],
    );
    git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
}

/// Pushes `C-0001`, giving `key` the priority `p/0`, straight to the state repo's main.
fn push_priority(s: &Setup, key: &IssueKey) {
    let ops = format!("- op: set_priority\n  issue: {key}\n  priority: p/0\n");
    push_straight(s, "C-0001", &op_file("C-0001", &ops, false));
}

fn op_file(id: &str, ops: &str, destructive: bool) -> String {
    format!(
        "id: {id}\nsource: apply_changes\ncreated_at: 2026-11-27T17:00:00Z\napproved: true\ndestructive: {destructive}\n\
         ops:\n{ops}summary: hand-written\nconsequence: []\n"
    )
}

/// A label deleted on Gitea between the sync and the run: Gitea drops an unknown label id and answers 200,
/// so the run makes the label again and gives it, rather than reporting as given what was not.
#[test]
fn a_label_deleted_since_the_sync_is_made_again_not_reported_as_given() {
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    let p0 = s
        .snapshot
        .labels
        .get(&key.repo)
        .and_then(|ls| ls.iter().find(|l| l.name == "p/0"))
        .map(|l| l.id)
        .expect("the demo has p/0");
    push_priority(&s, &key);
    // The run syncs first; the label goes after its sync, just before its write.
    s.emu.inject(
        Fault::new(FaultKind::DeleteLabelFirst {
            repo: key.repo.clone(),
            id: p0,
        })
        .on(format!("/issues/{}/labels", key.number)),
    );
    let out = s.commitea(&s.work, &["run"]);
    ok(&out);
    assert!(
        s.issue(&key).labels.contains(&"p/0".to_owned()),
        "{:?}",
        s.issue(&key).labels
    );
    let remade = s.emu.with_dataset(|d| {
        d.labels(&key.repo)
            .iter()
            .find(|l| l.name == "p/0")
            .map(|l| l.id)
    });
    assert!(remade.is_some_and(|id| id != p0), "{remade:?}");
    let applied = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml")).unwrap();
    assert!(applied.contains("result: applied"), "{applied}");
}

/// An op file carried out and then put back on the branch (a checkout of an older commit, a revert) is
/// not carried out again: it wrote an old priority over a later one, and was called a concurrent run's
/// (audit 192).
#[test]
fn an_op_file_put_back_after_it_was_carried_out_is_not_carried_out_again() {
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    push_priority(&s, &key);
    ok(&s.commitea(&s.work, &["run"]));
    assert!(s.issue(&key).labels.contains(&"p/0".to_owned()));
    // Someone gives it p/2 on Gitea since.
    s.emu.with_dataset(|d| {
        assert!(d.update_issue(&key, |i| {
            i.labels.retain(|l| l != "p/0");
            i.labels.push("p/2".into());
        }));
    });
    let added = git(
        &s.work,
        &[
            "log",
            "--diff-filter=A",
            "--format=%H",
            "--",
            "ops/pending/C-0001.yaml",
        ],
    );
    git(
        &s.work,
        &["checkout", added.trim(), "--", "ops/pending/C-0001.yaml"],
    );
    // Its summary edited on the way: the same proposal all the same (audit 195: carried out again).
    let restored = s.work.join("ops/pending/C-0001.yaml");
    let text = std::fs::read_to_string(&restored).unwrap();
    assert!(text.contains("summary: hand-written"), "{text}");
    std::fs::write(
        &restored,
        text.replace("summary: hand-written", "summary: edited note"),
    )
    .unwrap();
    git(&s.work, &["commit", "-qam", "restore op files (oops)"]);
    let out = s.commitea(&s.work, &["run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("C-0001 was carried out already")
            && stderr.contains("delete ops/pending/C-0001.yaml")
            && !stderr.contains("at the same time"),
        "{stderr}"
    );
    let labels = s.issue(&key).labels;
    assert!(
        labels.contains(&"p/2".to_owned()) && !labels.contains(&"p/0".to_owned()),
        "{labels:?}"
    );
    assert!(!s.work.join("ops/applied/C-0001.2.yaml").exists());
}

/// A checkout behind the branch only (another checkout's run carried out a file and pushed) is brought up
/// to it before its run: on its old head the file was still pending, and went to Gitea again over a change
/// made since (audit 195).
#[test]
fn a_run_from_a_checkout_behind_the_branch_carries_out_nothing_again() {
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    push_priority(&s, &key);
    let other = clone_as(&s, "other");
    ok(&s.commitea(&other, &["run", "--push"]));
    assert!(s.issue(&key).labels.contains(&"p/0".to_owned()));
    s.emu.with_dataset(|d| {
        assert!(d.update_issue(&key, |i| {
            i.labels.retain(|l| l != "p/0");
            i.labels.push("p/2".into());
        }));
    });
    assert!(s.work.join("ops/pending/C-0001.yaml").exists());
    // A plain run, fetched but behind: the remote's record is read (audit 197: it wrote p/0 again).
    git(&s.work, &["fetch", "-q", "origin"]);
    let out = s.commitea(&s.work, &["run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("C-0001 was carried out already by a run on origin/main")
            && !stderr.contains("C-0001: set the priority"),
        "{stderr}"
    );
    assert!(!s.issue(&key).labels.contains(&"p/0".to_owned()));
    // Back behind, for `run --push`, after a run that committed nothing left the snapshot and the
    // forecast changed (audit 197: they stood in the way, "commit them or set them aside").
    git(&s.work, &["reset", "-q", "--hard", "HEAD~1"]);
    ok(&s.commitea(&s.work, &["run", "--no-commit"]));
    assert!(
        !git(
            &s.work,
            &["status", "--porcelain", "--", "snapshot", "forecast"]
        )
        .is_empty()
    );
    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("this checkout is behind origin/main: brought up to it before the run")
            && !stderr.contains("C-0001: set the priority"),
        "{stderr}"
    );
    let labels = s.issue(&key).labels;
    assert!(
        labels.contains(&"p/2".to_owned()) && !labels.contains(&"p/0".to_owned()),
        "{labels:?}"
    );
    assert!(s.on_branch("main", "ops/applied/C-0001.2.yaml").is_none());
}

/// A PM's own change on Gitea is named with its issue in the run's "since then", moved or not (audit 193:
/// "1 issue re-estimated", and which nowhere).
#[test]
fn a_change_made_on_gitea_is_named_with_its_issue() {
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run"]));
    let key = s.quiet_issue_without("p/0");
    let was = s
        .issue(&key)
        .labels
        .into_iter()
        .find(|l| l.starts_with("est/"))
        .unwrap_or_else(|| "none".into());
    let to = if was == "est/2w" { "est/1d" } else { "est/2w" };
    s.emu.with_dataset(|d| {
        assert!(d.update_issue(&key, |i| {
            i.labels.retain(|l| !l.starts_with("est/"));
            i.labels.push(to.into());
        }));
    });
    ok(&s.commitea(&s.work, &["run"]));
    let message = git(&s.work, &["log", "-1", "--format=%B"]);
    let bare = |l: &str| l.trim_start_matches("est/").to_owned();
    assert!(
        message.contains(&format!(
            "on Gitea, {key} re-estimated {} → {}",
            bare(&was),
            bare(to)
        )),
        "{message}"
    );
}

/// An organisation's labels: Gitea lists them apart from the repository's, but an issue may carry them.
/// A write uses the organisation's `p/0` rather than making a repository label of the same name.
#[test]
fn an_organisation_label_is_used_not_duplicated_in_the_repository() {
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    let org_p0 = s.emu.with_dataset(|d| {
        let own = d
            .labels(&key.repo)
            .iter()
            .find(|l| l.name == "p/0")
            .map(|l| l.id);
        if let Some(id) = own {
            d.delete_label(&key.repo, id);
        }
        d.create_org_label(&key.repo.owner, "p/0", "e11d21", true)
            .id
    });
    push_priority(&s, &key);
    ok(&s.commitea(&s.work, &["run"]));
    assert!(
        s.issue(&key).labels.contains(&"p/0".to_owned()),
        "{:?}",
        s.issue(&key).labels
    );
    let own = s
        .emu
        .with_dataset(|d| d.labels(&key.repo).iter().any(|l| l.name == "p/0"));
    assert!(
        !own,
        "a repository label p/0 was made beside the organisation's"
    );
    // The snapshot knows the organisation's label under the repository, with its id.
    let labels = std::fs::read_to_string(s.work.join("snapshot/labels.yaml")).unwrap();
    assert!(
        labels.contains(&format!("id: {org_p0}\n  name: p/0")),
        "{labels}"
    );
    // A token that may not read the organisation (no read:organization scope): the sync goes on.
    s.emu
        .inject(Fault::new(FaultKind::Status(403)).times(100).on("/orgs/"));
    let out = s.commitea(&s.work, &["run", "--full"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("scope read:organization"), "{stderr}");
}

#[test]
fn a_destructive_op_pushed_straight_to_main_with_approved_true_is_refused() {
    let s = setup(&DemoSpec::scaled(40));
    let [victim, other] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    push_straight(
        &s,
        "C-0001",
        &op_file(
            "C-0001",
            &format!(
                "- op: close_issue\n  issue: {victim}\n- op: set_priority\n  issue: {other}\n  priority: p/0\n"
            ),
            true,
        ),
    );
    let out = s.commitea(&s.work, &["run"]);
    ok(&out);
    // The close is refused and said so, as a warning of the run (audit 94: an info line); the additive op
    // on the same file is applied.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("WARN") && l.contains("is no merged pull request")),
        "{stderr}"
    );
    assert_eq!(s.issue(&victim).state, OpenState::Open);
    assert!(s.issue(&other).labels.contains(&"p/0".to_owned()));
    let applied = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml")).unwrap();
    assert!(applied.contains("result: skipped"), "{applied}");
    assert!(applied.contains("is no merged pull request"), "{applied}");
    // The file is used up: the way forward is a new one (audit 92: told to propose this one).
    assert!(
        applied.contains("This file is used up: to carry it out, file the op again"),
        "{applied}"
    );
    assert!(!applied.contains("pull_request:"), "{applied}");
    // The Changes page does not call the file applied when one of its ops was not.
    let page = std::fs::read_to_string(s.work.join("public/changes.html")).unwrap();
    assert!(page.contains("partly applied"), "{page}");
    assert!(
        !s.emu
            .writes()
            .iter()
            .any(|w| w.starts_with("PATCH") && w.contains(&format!("/issues/{}", victim.number))),
        "{:?}",
        s.emu.writes()
    );
}

/// What an applied op file changed on Gitea is the file's: the standup says it was applied, and does not
/// count its issue as edited on Gitea.
#[test]
fn the_standup_says_an_op_file_was_applied_not_that_gitea_was_edited() {
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run"]));
    let [a] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    push_straight(
        &s,
        "C-0001",
        &op_file(
            "C-0001",
            &format!("- op: set_priority\n  issue: {a}\n  priority: p/0\n"),
            false,
        ),
    );
    ok(&s.commitea(&s.work, &["run"]));
    assert!(s.issue(&a).labels.contains(&"p/0".to_owned()));
    let out = s.commitea(&s.work, &["tool", "query_project", r#"{"view":"standup"}"#]);
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    let since = &v["drift"]["sinceThen"];
    assert_eq!(since["applied"], serde_json::json!(["C-0001"]), "{since}");
    assert!(since.get("edited").is_none(), "{since}");
}

#[test]
fn the_standup_does_not_say_a_file_gitea_did_not_take_was_applied() {
    // Every file the apply stage recorded was "applied" in the standup, a refused one too.
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run"]));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    // A close pushed straight to the branch is refused whole (no pull request approved it); of the
    // other file Gitea takes one op of two.
    push_straight(
        &s,
        "C-0001",
        &op_file(
            "C-0001",
            &format!("- op: close_issue\n  issue: {a}\n"),
            true,
        ),
    );
    push_straight(
        &s,
        "C-0002",
        &op_file(
            "C-0002",
            &format!(
                "- op: set_priority\n  issue: {b}\n  priority: p/0\n- op: close_issue\n  issue: {a}\n"
            ),
            true,
        ),
    );
    ok(&s.commitea(&s.work, &["run"]));
    let out = s.commitea(&s.work, &["tool", "query_project", r#"{"view":"standup"}"#]);
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    let since = &v["drift"]["sinceThen"];
    assert!(since.get("applied").is_none(), "{since}");
    assert_eq!(
        since["notWhole"],
        serde_json::json!(["C-0001 (nothing applied)", "C-0002 (partly applied)"]),
        "{since}"
    );
    let page = std::fs::read_to_string(s.work.join("public/standup.html")).unwrap();
    assert!(
        page.contains(r#"not whole on Gitea: <a href="changes.html#C-0001"><bdi>C-0001</bdi></a> (nothing applied)"#)
            && !page.contains(" applied;"),
        "{page}"
    );
}

#[test]
fn a_directive_merged_under_a_rebased_local_forecast_is_said_recorded() {
    // A local run's commit, rebased onto a merged directive as docs/approvals.md says (`git pull
    // --rebase`), carried that directive in its ledger: the next run said "no directive recorded"
    // (audit 92).
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    // Gitea changes, and a local run commits its forecast without pushing it.
    push_priority(&s, &a);
    ok(&s.commitea(&s.work, &["run"]));
    // Meanwhile a directive is merged on the server.
    let other = s.work.with_file_name("other");
    git(
        s.work.parent().unwrap(),
        &[
            "clone",
            "-q",
            s.bare.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    let ledger = std::fs::read_to_string(other.join("pm-state.md")).unwrap();
    std::fs::write(
        other.join("pm-state.md"),
        format!(
            "{ledger}\n## D-0001 · reprioritize · 2026-11-27T10:00:00Z\n\n> {b} first.\n\n- target: issue {b}\n- params: {{\"priority\": 0}}\n- status: active\n"
        ),
    )
    .unwrap();
    git(&other, &["add", "pm-state.md"]);
    commit_as_pm(&other, "D-0001: merged");
    git(&other, &["push", "-q", "origin", "HEAD:main"]);
    git(
        &s.work,
        &["pull", "-q", "--rebase", "--autostash", "origin", "main"],
    );
    ok(&s.commitea(&s.work, &["run"]));
    let message = git(&s.work, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("1 directive recorded (D-0001)"),
        "{message}"
    );
}

#[test]
fn an_op_file_whose_id_is_not_its_name_is_refused_and_never_applied() {
    let s = setup(&DemoSpec::scaled(40));
    let [a] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    let op = format!("- op: set_priority\n  issue: {a}\n  priority: p/0\n");
    // A copy not renamed (its record would overwrite C-0001's), and an id that is a path.
    push_straight(&s, "C-0003", &op_file("C-0001", &op, false));
    push_straight(&s, "C-0004", &op_file("../../pm-state", &op, false));
    let out = s.commitea(&s.work, &["run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    ok(&out);
    for name in ["C-0003", "C-0004"] {
        assert!(
            stderr.contains(&format!("ops/pending/{name}.yaml is refused whole")),
            "{stderr}"
        );
        assert!(s.work.join(format!("ops/pending/{name}.yaml")).exists());
    }
    assert!(
        stderr.contains("its id is C-0001 but the file is named C-0003.yaml"),
        "{stderr}"
    );
    assert!(stderr.contains("is not an op file's id"), "{stderr}");
    assert!(s.emu.writes().is_empty(), "{:?}", s.emu.writes());
    assert!(!s.work.join("ops/applied").exists());
}

#[test]
fn a_state_repo_the_server_does_not_have_fails_the_run_instead_of_dropping_approved_ops() {
    let s = setup(&DemoSpec::scaled(40));
    let [victim] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    push_straight(
        &s,
        "C-0001",
        &op_file(
            "C-0001",
            &format!("- op: close_issue\n  issue: {victim}\n"),
            true,
        ),
    );
    // approvals.state_repository names a repository the server does not have (a typo, or a token that
    // cannot see a private one): every lookup answers 404, which must not read as "not approved".
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["run", "-s"])
        .arg(&s.work)
        .env_remove("COMMITEA_STATE")
        .env("COMMITEA_SERVER", s.emu.url())
        .env("COMMITEA_GITEA_TOKEN", TOKEN)
        .env("COMMITEA_APPROVALS_STATE_REPOSITORY", "acme/no-such-state")
        .env(TRIALS.0, TRIALS.1)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("acme/no-such-state") && stderr.contains("404"),
        "{stderr}"
    );
    assert!(
        s.work.join("ops/pending/C-0001.yaml").exists(),
        "the file stays pending"
    );
    assert!(!s.work.join("ops/applied/C-0001.yaml").exists());
    assert!(s.emu.writes().is_empty(), "{:?}", s.emu.writes());
}

#[test]
fn a_hand_edited_op_file_touches_nothing_outside_the_namespaces() {
    let s = setup(&DemoSpec::scaled(40));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    // A label outside the namespaces, and a file with a comment CommiTea does not know: neither reaches Gitea.
    push_straight(
        &s,
        "C-0001",
        &op_file(
            "C-0001",
            &format!(
                "- op: remove_label\n  issue: {a}\n  label: bug\n- op: create_issue\n  title: Injected\n  labels: [wontfix]\n  repo: {}\n",
                a.repo
            ),
            true,
        ),
    );
    push_straight(
        &s,
        "C-0002",
        &format!(
            "{}comment: pwned\n",
            op_file(
                "C-0002",
                &format!("- op: set_priority\n  issue: {b}\n  priority: p/0\n"),
                false
            )
        ),
    );
    let out = s.commitea(&s.work, &["run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    ok(&out);
    assert!(
        stderr.contains("ops/pending/C-0002.yaml is refused whole"),
        "{stderr}"
    );
    // Once: the apply stage said it; the changes page, reading the same file, does not say it again.
    assert_eq!(
        stderr.lines().filter(|l| l.contains("C-0002.yaml")).count(),
        1,
        "{stderr}"
    );
    assert!(s.emu.writes().is_empty(), "{:?}", s.emu.writes());
    let applied = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml")).unwrap();
    assert_eq!(applied.matches("outside CommiTea").count(), 2, "{applied}");
    // The refused file stays where it is, for a person to see.
    assert!(s.work.join("ops/pending/C-0002.yaml").exists());
}

#[test]
fn propose_checks_the_state_repo_and_the_remote_before_it_pushes_anything() {
    let s = setup(&DemoSpec::scaled(40));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    for input in [
        format!(r#"{{"ops":[{{"op":"set_priority","issue":"{a}","priority":"p/0"}}]}}"#),
        format!(r#"{{"ops":[{{"op":"close_issue","issue":"{b}"}}],"approved":true}}"#),
    ] {
        ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    }
    // A hand edit that calls the close not destructive does not send it straight to main.
    let close = s.work.join("ops/pending/C-0002.yaml");
    let text = std::fs::read_to_string(&close).unwrap();
    assert!(text.contains("destructive: true"), "{text}");
    std::fs::write(
        &close,
        text.replace("destructive: true", "destructive: false"),
    )
    .unwrap();
    let propose = |env: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_commitea"));
        c.args(["propose", "-s"])
            .arg(&s.work)
            .env_remove("COMMITEA_STATE")
            .env_remove("GITEA_TOKEN")
            .env_remove("FORGEJO_TOKEN")
            .env_remove("COMMITEA_TOKEN")
            .env_remove("GITHUB_TOKEN")
            .env("COMMITEA_SERVER", s.emu.url())
            .env("COMMITEA_GITEA_TOKEN", TOKEN)
            .env("COMMITEA_APPROVALS_ADDITIVE_DIRECT", "true");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let main_before = git(&s.bare, &["rev-parse", "main"]);
    let untouched = |s: &Setup| {
        assert_eq!(git(&s.bare, &["rev-parse", "main"]), main_before);
        assert_eq!(git(&s.bare, &["branch", "--list", "commitea/*"]), "");
        assert!(s.emu.state_pulls(&state_repo()).is_empty());
        for id in ["C-0001", "C-0002"] {
            assert!(
                s.work.join(format!("ops/pending/{id}.yaml")).exists(),
                "{id}"
            );
        }
    };

    // No token (it was given to `init` inline, and this shell has none): said before anything is pushed.
    let out = propose(&[("COMMITEA_GITEA_TOKEN", "")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no Gitea token is set")
            && stderr.contains("COMMITEA_GITEA_TOKEN")
            && stderr.contains("nothing was pushed")
            && !stderr.contains("is not on the server"),
        "{stderr}"
    );
    untouched(&s);
    // Its origin on the server, as `init` says to add it: without a token the fetch fails first, and the
    // token is still what is said to set, git's failure after it (audit 109 read only git's "not found").
    let origin = git(&s.work, &["remote", "get-url", "origin"]);
    git(
        &s.work,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("{}/{}.git", s.emu.url(), state_repo()),
        ],
    );
    let out = propose(&[("COMMITEA_GITEA_TOKEN", "")]);
    git(&s.work, &["remote", "set-url", "origin", origin.trim()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: no Gitea token is set")
            && stderr.contains("nothing was pushed (git fetch origin main failed"),
        "{stderr}"
    );
    untouched(&s);

    // A state repo the server does not have: said before anything is pushed (the additive file went
    // straight to main, and the destructive one's branch was pushed, before the pull request failed).
    let out = propose(&[("COMMITEA_APPROVALS_STATE_REPOSITORY", "acme/no-such-state")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("acme/no-such-state is not on the server")
            && stderr.contains("approvals.state_repository")
            && stderr.contains("nothing was pushed"),
        "{stderr}"
    );
    untouched(&s);

    // No remote: what to do, not git's "does not appear to be a git repository".
    git(&s.work, &["remote", "rename", "origin", "upstream"]);
    let out = propose(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no git remote \"origin\"") && stderr.contains("git remote add origin"),
        "{stderr}"
    );
    assert!(!stderr.contains("fatal:"), "{stderr}");
    untouched(&s);
    git(&s.work, &["remote", "rename", "upstream", "origin"]);

    // Both go through; the additive one is on main, and the checkout can pull it (its copy left). The
    // token is given under the workflow secret's name, as a person copying the README does.
    let out = propose(&[("COMMITEA_GITEA_TOKEN", ""), ("COMMITEA_TOKEN", TOKEN)]);
    let stdout = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("C-0001 direct "), "{stdout}");
    assert!(
        stdout.contains("C-0002 pull-request 1 commitea/C-0002"),
        "{stdout}"
    );
    // Where to review it, on stderr (stdout's lines stay for scripts).
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("proposed C-0002 as pull request #1: http")
                && l.ends_with("/pulls/1")),
        "{stderr}"
    );
    assert!(
        stderr.contains("`git fetch origin && git rebase --autostash origin/main`"),
        "{stderr}"
    );
    let subject = git(&s.bare, &["log", "-1", "--format=%s", "main"]);
    assert!(subject.contains("applied at the next run"), "{subject}");
    assert!(!s.work.join("ops/pending/C-0001.yaml").exists());
    assert!(!s.work.join("ops/pending/C-0002.yaml").exists());
    git(&s.work, &["pull", "-q", "--rebase", "origin", "main"]);
    assert!(s.work.join("ops/pending/C-0001.yaml").exists());
    assert_eq!(ok(&propose(&[])).trim(), "", "nothing is left to propose");
}

#[test]
fn a_new_proposal_never_takes_the_id_of_one_already_proposed() {
    let s = setup(&DemoSpec::scaled(40));
    let [a, b, c] = <[IssueKey; 3]>::try_from(s.quiet_issues(3)).unwrap();
    // A second checkout, cloned before anything was proposed: it knows none of the proposals' branches.
    let other = s.work.parent().unwrap().join("other");
    git(
        s.work.parent().unwrap(),
        &["clone", "-q", s.bare.to_str().unwrap(), "other"],
    );
    let directive = |dir: &Path, key: &IssueKey, quote: &str| -> String {
        s.directive(
            dir,
            "reprioritize",
            quote,
            &key.to_string(),
            r#"{"priority": 0}"#,
        )
    };
    let propose = |dir: &Path| -> Vec<String> {
        ok(&s.commitea(dir, &["propose"]))
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let first = directive(&s.work, &a, "A first.");
    assert_eq!(
        propose(&s.work),
        [format!("{first} pull-request 1 commitea/{first}")]
    );
    // Two directives append to the ledger: the pull request says what merging another first does to it
    // (audit 104: a "409 Merge Conflict" with no word of why).
    let body = &s.emu.state_pulls(&state_repo())[0].body;
    assert!(
        body.contains("conflict on `pm-state.md`") && body.contains("merge it after that run"),
        "{body}"
    );
    // The same checkout: the proposal left it, its id did not come free.
    let second = directive(&s.work, &b, "B first.");
    assert_ne!(second, first);
    assert_eq!(
        propose(&s.work),
        [format!("{second} pull-request 2 commitea/{second}")]
    );
    // The old clone gives the first id again; propose sees the branch is another proposal's.
    assert_eq!(directive(&other, &c, "C first."), first);
    let third = propose(&other);
    assert_eq!(third.len(), 1, "{third:?}");
    assert!(
        !third[0].starts_with(&first) && !third[0].starts_with(&second),
        "{third:?}"
    );
    assert!(third[0].contains("pull-request 3"), "{third:?}");
    let third_id = third[0].split(' ').next().unwrap().to_owned();
    // Each branch holds its own directive: nothing was replaced.
    for (id, quote) in [
        (&first, "A first."),
        (&second, "B first."),
        (&third_id, "C first."),
    ] {
        let ledger = s
            .on_branch(&format!("commitea/{id}"), "pm-state.md")
            .unwrap();
        assert!(ledger.contains(&format!("## {id} ")), "{id}: {ledger}");
        assert!(ledger.contains(quote), "{id}: {ledger}");
        let file = s
            .on_branch(&format!("commitea/{id}"), &format!("ops/pending/{id}.yaml"))
            .unwrap();
        assert!(file.contains(&format!("id: {id}\n")), "{id}: {file}");
    }
    assert_eq!(s.emu.state_pulls(&state_repo()).len(), 3);
    // The old clone's checkout is clean again: its renumbered file left it.
    assert!(!other.join(format!("ops/pending/{first}.yaml")).exists());

    // Op files too: an additive one goes straight to main, and the old clone's next one, numbered the
    // same, is proposed under the next free id instead of replacing it there.
    let apply = |dir: &Path, key: &IssueKey| -> String {
        let input = format!(
            r#"{{"ops":[{{"op":"set_estimate","issue":"{key}","estimate":"{}"}}]}}"#,
            s.new_estimate(key)
        );
        let v: Value =
            serde_json::from_str(&ok(&s.commitea(dir, &["tool", "apply_changes", &input])))
                .unwrap();
        v["opsFile"].as_str().unwrap().to_owned()
    };
    let mine = apply(&s.work, &a);
    assert!(propose(&s.work)[0].contains(" direct "));
    assert_eq!(apply(&other, &b), mine);
    let theirs = propose(&other);
    assert!(theirs[0].contains(" direct "), "{theirs:?}");
    let id = |path: &str| {
        path.trim_start_matches("ops/pending/")
            .trim_end_matches(".yaml")
            .to_owned()
    };
    assert!(!theirs[0].starts_with(&id(&mine)), "{theirs:?}");
    let main_file = s.on_branch("main", &mine).unwrap();
    assert!(main_file.contains(&a.to_string()) && !main_file.contains(&b.to_string()));
}

#[test]
fn the_run_that_applies_a_directive_no_longer_shows_it_awaiting_approval() {
    let s = setup(&DemoSpec::scaled(40));
    let [a] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    let id = s.p0_directive(&a, "A first.");
    // And a new due date for an open milestone.
    let (milestone, title) = s
        .snapshot
        .milestones
        .values()
        .flatten()
        .find(|m| m.state == OpenState::Open && m.due_on.is_some())
        .map(|m| (m.id, m.title.clone()))
        .unwrap();
    let deadline = s.directive(
        &s.work,
        "set-deadline",
        "Give it until June.",
        &format!("milestone {milestone}"),
        r#"{"due": "2027-06-30"}"#,
    );
    ok(&s.commitea(&s.work, &["propose"]));
    // Merged one at a time: each appends to the ledger, so the second is rebuilt by the run between.
    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    git(&s.work, &["pull", "-q", "--no-rebase", "origin", "main"]);
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("pushed "),
        "{out:?}"
    );
    let message = git(&s.work, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(&format!("Applied on Gitea: {id} (pull request #1).")),
        "{message}"
    );
    // Run again with nothing new: no commit, and the push is said to be a no-op.
    let head = git(&s.work, &["rev-parse", "HEAD"]);
    let again = s.commitea(&s.work, &["run", "--push"]);
    ok(&again);
    assert_eq!(git(&s.work, &["rev-parse", "HEAD"]), head);
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains("nothing new to push") && !said.contains("pushed "),
        "{said}"
    );
    // The page and the committed view drawn by the run that applied it: applied, not awaiting approval.
    let page = std::fs::read_to_string(s.work.join("public/directives.html")).unwrap();
    assert!(
        !page.contains(&format!("Awaiting approval: {id}")),
        "{page}"
    );
    let view = git(&s.work, &["show", "HEAD:forecast/views/directives.json"]);
    let view: Value = serde_json::from_str(&view).unwrap();
    assert!(view["pending"].is_null(), "{view}");
    // The other proposal awaits approval on its branch: the Changes page lists its pull request.
    let changes = std::fs::read_to_string(s.work.join("public/changes.html")).unwrap();
    assert!(
        !changes.contains("was not checked"),
        "the run asked the server"
    );
    assert!(
        changes.contains("Awaiting approval on Gitea")
            && changes.contains("pull request #2</a>: <bdi>")
            && changes.contains(&format!("{deadline}: ")),
        "{changes}"
    );
    assert!(!changes.contains("Nothing pending."), "{changes}");
    // A render does not ask the server: its page says so, not "Nothing pending" while #2 waits (audit
    // 109).
    ok(&s.commitea(&s.work, &["render"]));
    let rendered = std::fs::read_to_string(s.work.join("public/changes.html")).unwrap();
    assert!(
        rendered
            .contains("Whether a change awaits approval in an open pull request was not checked")
            && rendered.contains("Nothing pending in this checkout.")
            && !rendered.contains("Nothing pending.</p>"),
        "{rendered}"
    );
    s.emu.merge_pull(&state_repo(), 2, "pat").unwrap();
    git(&s.work, &["pull", "-q", "--no-rebase", "origin", "main"]);
    ok(&s.commitea(&s.work, &["run"]));
    // The commit says what it carried out and what that did to the milestone, though its p80 may not move.
    let message = git(&s.work, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(&format!("Applied on Gitea: {deadline} (pull request #2).")),
        "{message}"
    );
    assert!(
        message
            .lines()
            .any(|l| l.starts_with(&format!("- {title}: ")) && l.contains("→ 2027-06-30")),
        "{message}"
    );
    assert!(s.issue(&a).labels.contains(&"p/0".to_owned()));
    assert!(s.work.join(format!("ops/applied/{id}.yaml")).exists());
    // The page and the committed view drawn by that run: applied, not awaiting approval.
    let page = std::fs::read_to_string(s.work.join("public/directives.html")).unwrap();
    assert!(
        !page.contains(&format!("Awaiting approval: {id}")),
        "{page}"
    );
    let view = git(&s.work, &["show", "HEAD:forecast/views/directives.json"]);
    let view: Value = serde_json::from_str(&view).unwrap();
    assert!(view["pending"].is_null(), "{view}");
}

#[test]
fn a_merged_directive_withdrawn_before_a_run_carried_it_out_changes_nothing_on_gitea() {
    let s = setup(&DemoSpec::scaled(40));
    let [a] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    assert!(!s.issue(&a).labels.contains(&"p/0".to_owned()));
    let id = s.p0_directive(&a, "A first.");
    // Merged with its op file, then withdrawn on the branch before any run carried it out.
    let ledger = std::fs::read_to_string(s.work.join("pm-state.md")).unwrap();
    std::fs::write(
        s.work.join("pm-state.md"),
        ledger.replace("- status: active", "- status: withdrawn"),
    )
    .unwrap();
    git(&s.work, &["add", "pm-state.md", "ops"]);
    commit_as_pm(&s.work, "merged, then withdrawn");
    git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
    ok(&s.commitea(&s.work, &["run"]));
    assert!(
        !s.issue(&a).labels.contains(&"p/0".to_owned()),
        "a withdrawn directive's change reached Gitea"
    );
    let applied = std::fs::read_to_string(s.work.join(format!("ops/applied/{id}.yaml"))).unwrap();
    assert!(
        applied.contains(&format!("{id} is withdrawn in pm-state.md"))
            && applied.contains("result: skipped")
            && !applied.contains("result: applied"),
        "{applied}"
    );
    assert!(!s.work.join(format!("ops/pending/{id}.yaml")).exists());
}

/// `commitea run` in the work checkout, which must succeed; what it said on stderr.
fn run_err(s: &Setup) -> String {
    let out = s.commitea(&s.work, &["run"]);
    ok(&out);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Two PMs appending at once give two directives one id; merged by hand, the ledger keeps both entries
/// and the folder one op file. A directive's op file is carried out only while the ledger holds in force
/// under its id the directive it was written for (audit 119: the left-out directive's change was carried
/// out, "applied", in place of the one in force).
#[test]
fn a_directive_op_file_waits_while_the_ledger_gives_its_id_to_another_directive() {
    let s = setup(&DemoSpec::scaled(40));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let id = s.p0_directive(&a, "A first.");
    let path = s.work.join("pm-state.md");
    let ledger = std::fs::read_to_string(&path).unwrap();
    let start = ledger.find(&format!("## {id}")).unwrap();
    let entry = ledger[start..].to_owned();
    let for_b = entry
        .replace(&a.to_string(), &b.to_string())
        .replace("A first.", "B first.");
    let push = |message: &str| {
        git(&s.work, &["add", "pm-state.md", "ops"]);
        commit_as_pm(&s.work, message);
        git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
    };
    let p0 = |k: &IssueKey| s.issue(k).labels.contains(&"p/0".to_owned());
    let pending = s.work.join(format!("ops/pending/{id}.yaml"));

    // The ledger's entry under the id is the other PM's (B's), the op file A's.
    std::fs::write(&path, format!("{}{for_b}", &ledger[..start])).unwrap();
    push("merged by hand: B's entry, A's op file");
    let err = run_err(&s);
    assert!(
        err.contains(&format!(
            "ops/pending/{id}.yaml was written for directive {id} \"reprioritize issue {a}"
        )) && err.contains(&format!("is \"reprioritize issue {b}")),
        "{err}"
    );
    assert!(
        !p0(&a) && !p0(&b),
        "a change no directive in force asks for reached Gitea"
    );
    assert!(pending.exists(), "the file waits");
    // B's directive, in force and not on Gitea, names the file of its id as another's, not "none".
    assert!(
        err.contains(&format!(
            "and its id's op file ops/pending/{id}.yaml was written for another directive"
        )),
        "{err}"
    );

    // Both entries kept, one id: which one the file carries out cannot be told.
    std::fs::write(&path, format!("{ledger}{for_b}")).unwrap();
    push("merged by hand: both entries, one id");
    let err = run_err(&s);
    assert!(
        err.contains("which pm-state.md has 2 times (lines"),
        "{err}"
    );
    assert!(!p0(&a) && !p0(&b));
    assert!(pending.exists(), "the file waits");

    // B's entry renumbered, as the ledger's warning says: A's directive is in force under its id, and its
    // file is carried out; B's, with no op file, is said not carried to Gitea.
    let n: u32 = id.trim_start_matches("D-").parse().unwrap();
    let free = format!("D-{:04}", n + 1);
    std::fs::write(&path, format!("{ledger}{}", for_b.replacen(&id, &free, 1))).unwrap();
    push("B's directive renumbered");
    let err = run_err(&s);
    assert!(p0(&a), "{err}");
    assert!(!p0(&b));
    assert!(!pending.exists());
    assert!(
        err.contains(&format!("{free} is in force but Gitea does not carry it")),
        "{err}"
    );
}

#[test]
fn a_proposal_says_what_merging_it_does_not_what_the_checkout_previewed() {
    let s = setup(&DemoSpec::scaled(40));
    // An open milestone with open work, and a deadline directive on it that nobody approved.
    let (milestone, issue) = s
        .snapshot
        .issues
        .iter()
        .filter(|(_, i)| i.state == OpenState::Open)
        .find_map(|(k, i)| {
            let m = i.milestone?;
            let (_, ms) = s.snapshot.milestone(m)?;
            (ms.state == OpenState::Open).then(|| (m, k.clone()))
        })
        .unwrap();
    s.directive(
        &s.work,
        "set-deadline",
        "It ships next week, hard.",
        &format!("milestone {milestone}"),
        r#"{"due": "2026-12-11", "hard": true}"#,
    );
    // The op file is written with that unapproved directive in the checkout's ledger.
    let input = format!(r#"{{"ops":[{{"op":"close_issue","issue":"{issue}"}}],"approved":true}}"#);
    let v: Value =
        serde_json::from_str(&ok(&s.commitea(&s.work, &["tool", "apply_changes", &input])))
            .unwrap();
    let path = v["opsFile"].as_str().unwrap().to_owned();
    let id = path
        .trim_start_matches("ops/pending/")
        .trim_end_matches(".yaml")
        .to_owned();
    // Then the directive is dropped (its entry and op file deleted), and only the op file is proposed.
    git(&s.work, &["checkout", "--", "pm-state.md"]);
    for e in std::fs::read_dir(s.work.join("ops/pending")).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with("D-") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let proposed = ok(&s.commitea(&s.work, &["propose"]));
    assert_eq!(
        proposed.trim(),
        format!("{id} pull-request 1 commitea/{id}")
    );
    // The file on the branch carries the consequence the pull request states: on the branch's ledger.
    let file = s
        .on_branch(&format!("commitea/{id}"), &format!("ops/pending/{id}.yaml"))
        .unwrap();
    let summary = file
        .lines()
        .find_map(|l| l.strip_prefix("summary: "))
        .unwrap()
        .trim_matches('\'')
        .to_owned();
    let pull = s
        .emu
        .state_pulls(&state_repo())
        .into_iter()
        .find(|p| p.title.starts_with(&format!("{id}: ")))
        .unwrap();
    assert_eq!(pull.title, format!("{id}: {summary}"), "{file}");
}

#[test]
fn withdrawing_a_directive_by_its_status_line_is_proposed_as_an_edit() {
    let s = setup(&DemoSpec::scaled(40));
    // A directive on the branch (a note, committed by hand here; any merged one would do).
    ok(&s.commitea(
        &s.work,
        &[
            "directive",
            "--kind",
            "note",
            "--quote",
            "Freeze after the 20th.",
        ],
    ));
    git(&s.work, &["add", "pm-state.md"]);
    commit_as_pm(&s.work, "a note");
    git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
    let main_ledger = std::fs::read_to_string(s.work.join("pm-state.md")).unwrap();
    let entry = commitea::ledger::parse::parse(&main_ledger)
        .ledger
        .directives()
        .find(|d| d.raw.contains("- status: active"))
        .map(|d| (d.id.to_string(), d.raw.clone()))
        .unwrap();
    let (id, raw) = entry;
    let withdrawn = raw.replacen("- status: active", "- status: withdrawn", 1);
    std::fs::write(
        s.work.join("pm-state.md"),
        main_ledger.replacen(&raw, &withdrawn, 1),
    )
    .unwrap();
    // A run says how the edit gets in.
    let out = s.commitea(&s.work, &["run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("has edits of entries the branch has ({id})"))
            && stderr.contains("`commitea propose` sends them for approval"),
        "{stderr}"
    );
    // propose sends it, as an edit of the entry on its own branch.
    let proposed = ok(&s.commitea(&s.work, &["propose"]));
    assert_eq!(
        proposed.trim(),
        format!("{id} pull-request 1 commitea/edit-{id}")
    );
    let on_branch = s
        .on_branch(&format!("commitea/edit-{id}"), "pm-state.md")
        .unwrap();
    let on_main = s.on_branch("main", "pm-state.md").unwrap();
    assert_eq!(on_branch, on_main.replacen(&raw, &withdrawn, 1));
    let pull = &s.emu.state_pulls(&state_repo())[0];
    assert!(
        pull.title.starts_with(&format!("{id} (edit): ")),
        "{}",
        pull.title
    );
    assert!(pull.body.contains("No change to Gitea"), "{}", pull.body);
    // The checkout is back to the branch's ledger: the edit lives on its branch now.
    assert_eq!(
        std::fs::read_to_string(s.work.join("pm-state.md")).unwrap(),
        on_main
    );
    // Merged, it is the branch's ledger. A directive recorded before pulling is proposed from a
    // checkout behind the branch: its ledger becomes the branch's, which the checkout's commit lacks,
    // so a plain `git pull --rebase` would refuse the changed file; propose says the pull that works.
    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    ok(&s.commitea(
        &s.work,
        &["directive", "--kind", "note", "--quote", "Demo on Friday."],
    ));
    let out = s.commitea(&s.work, &["propose"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(ok(&out).contains("pull-request 2"), "{stderr}");
    assert!(
        stderr.contains("pm-state.md now holds main's ledger")
            && stderr.contains("`git fetch origin && git rebase --autostash origin/main`"),
        "{stderr}"
    );
    git(
        &s.work,
        &["pull", "-q", "--rebase", "--autostash", "origin", "main"],
    );
    let ledger = std::fs::read_to_string(s.work.join("pm-state.md")).unwrap();
    assert!(ledger.contains(&withdrawn), "{ledger}");
    assert_eq!(git(&s.work, &["status", "--porcelain", "pm-state.md"]), "");
    assert_eq!(ok(&s.commitea(&s.work, &["propose"])).trim(), "");
}

#[test]
fn propose_keeps_the_notes_and_malformed_entries_it_does_not_send() {
    let s = setup(&DemoSpec::scaled(40));
    let ledger = s.work.join("pm-state.md");
    let mut text = std::fs::read_to_string(&ledger).unwrap();
    let note = "Meeting notes: ask Bo about the webhooks.";
    let malformed = "## D-0041 · reprio · 2026-11-30T11:00:00Z\n\n> Webhooks first, the PM said.";
    text.push_str(&format!("\n{note}\n\n{malformed}\n"));
    std::fs::write(&ledger, &text).unwrap();
    // The run names what does not read, not just "edits that are not committed".
    let out = s.commitea(&s.work, &["run", "--offline"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.contains("is a directive entry that does not read")
            && stderr.contains("unknown directive kind \"reprio\""),
        "{stderr}"
    );
    let [a] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    let id = s.p0_directive(&a, "Freeze after the 20th.");
    let out = s.commitea(&s.work, &["propose"]);
    let proposed = ok(&out);
    assert!(
        proposed.contains(&format!("{id} pull-request")),
        "{proposed}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.contains("stays in the checkout") && stderr.contains("unknown directive kind"),
        "{stderr}"
    );
    // The branch of the proposal has the new entry and nothing else of the checkout's.
    let on_branch = s
        .on_branch(&format!("commitea/{id}"), "pm-state.md")
        .unwrap();
    assert!(on_branch.contains("Freeze after the 20th."), "{on_branch}");
    assert!(
        !on_branch.contains(note) && !on_branch.contains("· reprio ·"),
        "{on_branch}"
    );
    // The checkout keeps, byte for byte, what was not sent; the proposed entry left it.
    let after = std::fs::read_to_string(&ledger).unwrap();
    assert!(after.contains(note) && after.contains(malformed), "{after}");
    assert!(!after.contains("Freeze after the 20th."), "{after}");
    // An op file that does not read is not "nothing new".
    let mut file = op_file(
        "C-0009",
        &format!("- op: set_priority\n  issue: {a}\n  priority: p/1\n"),
        false,
    );
    file.push_str("note: hand-written\n");
    std::fs::write(s.work.join("ops/pending/C-0009.yaml"), file).unwrap();
    let out = s.commitea(&s.work, &["propose"]);
    assert_eq!(ok(&out).trim(), "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("nothing proposed: 1 op file does not read in ops/pending")
            && !stderr.contains("nothing to propose"),
        "{stderr}"
    );
}

#[test]
fn a_hand_written_op_file_is_held_to_apply_changes_rules() {
    let s = setup(&DemoSpec::scaled(40));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let closed = s
        .snapshot
        .issues
        .iter()
        .find(|(k, i)| i.state == OpenState::Closed && k.repo == a.repo)
        .map(|(k, _)| k.clone())
        .unwrap();
    // Each op passes the namespace check and is refused by a rule `apply_changes` would have applied;
    // the two fine ones go through.
    let rung = ["est/1h", "est/2w"]
        .into_iter()
        .find(|e| !s.issue(&b).labels.iter().any(|l| l == e))
        .unwrap();
    let ops = format!(
        "- op: add_dep\n  issue: {a}\n  dependsOn: {a}\n\
         - op: set_estimate\n  issue: {a}\n  estimate: est/5d\n\
         - op: set_milestone\n  issue: {a}\n  milestone: 999\n\
         - op: set_priority\n  issue: {closed}\n  priority: p/0\n\
         - op: close_issue\n  issue: {b}\n\
         - op: set_estimate\n  issue: {b}\n  estimate: {rung}\n\
         - op: create_issue\n  title: Follow-up\n  labels: [est/9h]\n  repo: {}\n\
         - op: create_issue\n  title: After the follow-up\n  dependsOnNew: [1]\n  repo: {}\n\
         - op: set_priority\n  issue: {a}\n  priority: p/0\n",
        a.repo, a.repo
    );
    let labels_before = s.emu.with_dataset(|d| d.labels(&a.repo).len());
    // Approved and merged would not make these acceptable; the close needs the merge, which a push is not.
    push_straight(&s, "C-0001", &op_file("C-0001", &ops, true));
    let out = s.commitea(&s.work, &["run"]);
    ok(&out);
    let applied = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml")).unwrap();
    for reason in [
        "cannot depend on itself",
        "\"est/5d\" is not on the estimate ladder",
        "unknown milestone 999",
        &format!("{closed} is closed: its priority plans nothing any more"),
        "is no merged pull request",
        "\"est/9h\" is not on the estimate ladder",
        "that create_issue was rejected",
    ] {
        assert!(applied.contains(reason), "{reason}: {applied}");
    }
    assert_eq!(applied.matches("result: skipped").count(), 7, "{applied}");
    assert_eq!(applied.matches("result: applied").count(), 2, "{applied}");
    // Gitea saw the two good ops and nothing else: no est/5d label created, no issue filed.
    assert!(s.issue(&a).labels.contains(&"p/0".to_owned()));
    assert!(s.issue(&b).labels.contains(&rung.to_owned()));
    assert!(s.issue(&a).depends_on.is_empty());
    assert_eq!(s.issue(&b).state, OpenState::Open);
    assert_eq!(
        s.emu.with_dataset(|d| d.labels(&a.repo).len()),
        labels_before
    );
    assert!(
        s.emu
            .writes()
            .iter()
            .all(|w| !w.starts_with("POST /api/v1/repos") || w.contains("/labels")),
        "{:?}",
        s.emu.writes()
    );
}

#[test]
fn killed_after_each_op_of_a_twenty_op_file_every_op_is_applied_exactly_once() {
    let s = setup(&DemoSpec::scaled(60));
    let issues = s.quiet_issues(12);
    assert!(issues.len() >= 12, "{}", issues.len());
    // An open one: no op moves work into a closed milestone.
    let milestone = s.snapshot.milestones[&issues[0].repo]
        .iter()
        .find(|m| m.state == OpenState::Open)
        .unwrap()
        .id;
    let mut ops = String::new();
    for k in &issues[..8] {
        ops.push_str(&format!(
            "- op: set_priority\n  issue: {k}\n  priority: p/0\n"
        ));
    }
    for k in &issues[8..12] {
        ops.push_str(&format!(
            "- op: set_estimate\n  issue: {k}\n  estimate: est/2w\n"
        ));
    }
    let same_repo: Vec<&IssueKey> = issues.iter().filter(|k| k.repo == issues[0].repo).collect();
    for k in same_repo.iter().take(4) {
        ops.push_str(&format!(
            "- op: set_milestone\n  issue: {k}\n  milestone: {milestone}\n"
        ));
    }
    ops.push_str(&format!(
        "- op: add_dep\n  issue: {}\n  dependsOn: {}\n",
        same_repo[0], same_repo[1]
    ));
    ops.push_str(&format!(
        "- op: add_dep\n  issue: {}\n  dependsOn: {}\n",
        same_repo[2], same_repo[3]
    ));
    for n in 0..2 {
        ops.push_str(&format!(
            "- op: create_issue\n  title: Captured task {n}\n  labels: [est/1d]\n  repo: {}\n",
            issues[0].repo
        ));
    }
    // The second new issue waits for the first, as a captured proposal files them.
    ops.push_str("  dependsOnNew: [1]\n");
    let count = ops.matches("- op:").count();
    assert_eq!(count, 20);
    // Merged through a pull request, as a proposal is.
    let repo = commitea::state::git::open_or_init(&s.work).unwrap();
    let base = commitea::state::git::head(&repo).unwrap();
    let sig = commitea::state::git::Signature {
        name: "pat".into(),
        email: "pat@example.com".into(),
        time: chrono::Utc::now(),
    };
    let file = op_file("C-0001", &ops, false);
    let commit = commitea::state::git::commit_onto(
        &repo,
        base,
        &[("ops/pending/C-0001.yaml".into(), Some(file.into_bytes()))],
        "propose\n",
        &sig,
    )
    .unwrap();
    git(
        &s.work,
        &[
            "push",
            "-q",
            "origin",
            &format!("{commit}:refs/heads/commitea/C-0001"),
        ],
    );
    // The binary installs its TLS provider when it builds a client; a test's own client must too.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let pr: Value = reqwest::blocking::Client::new()
        .post(format!("{}/api/v1/repos/acme/state/pulls", s.emu.url()))
        .header("Authorization", format!("token {TOKEN}"))
        .json(&serde_json::json!({"title": "C-0001", "body": "", "head": "commitea/C-0001", "base": "main"}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    s.emu
        .merge_pull(&state_repo(), pr["number"].as_u64().unwrap(), "pat")
        .unwrap();
    git(&s.work, &["pull", "-q", "origin", "main"]);
    let issue_writes = |emu: &Emulator| -> Vec<String> {
        emu.writes()
            .into_iter()
            .filter(|w| !w.contains("/repos/acme/state/"))
            .collect()
    };

    // Kill the run after the k-th write, for every k; then let the next run finish. Each issue write is
    // applied at once and its answer held, so the run is killed waiting for it, before it can send
    // another, however slow the machine is to notice (a 1 ms poll alone missed writes under load).
    for repo in [
        "/repos/acme/api/",
        "/repos/acme/web/",
        "/repos/acme/mobile/",
    ] {
        s.emu.inject(Fault {
            kind: FaultKind::HoldAnswer(Duration::from_secs(3)),
            path_contains: Some(repo.to_owned()),
            times: 1_000,
        });
    }
    let mut k = 1;
    let mut kills = 0;
    loop {
        let done = issue_writes(&s.emu).len();
        let mut child = Command::new(env!("CARGO_BIN_EXE_commitea"))
            .args(["run", "-s"])
            .arg(&s.work)
            .env("COMMITEA_SERVER", s.emu.url())
            .env("COMMITEA_GITEA_TOKEN", TOKEN)
            .env(TRIALS.0, TRIALS.1)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let killed = loop {
            if issue_writes(&s.emu).len() > done {
                let _ = child.kill();
                break true;
            }
            if child.try_wait().unwrap().is_some() || started.elapsed() > Duration::from_secs(60) {
                break false;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        let _ = child.wait();
        if !killed {
            break;
        }
        kills += 1;
        k += 1;
        assert!(k < 100, "the runs never finish");
    }
    s.emu.clear_faults();
    eprintln!("{kills} runs killed after a write, then one ran through");
    // Writes to different repositories may be in flight together, so a kill can follow two of them; with
    // the answers held, every run still dies within its first writes (28-31 kill points of 31 writes on
    // a loaded machine, where the poll alone once saw only 10).
    assert!(kills >= 20, "only {kills} kill points");
    // Every op done exactly once.
    let writes = issue_writes(&s.emu);
    for (i, key) in issues[..12].iter().enumerate() {
        let n = key.number;
        let wanted = if i < 8 { "p/0" } else { "est/2w" };
        let label_adds = writes
            .iter()
            .filter(|w| {
                w.starts_with("POST")
                    && w.contains(&format!("/repos/{}/issues/{n}/labels", key.repo))
            })
            .count();
        // An issue that already carries the label needs no write at all.
        let expected = usize::from(!s.snapshot.issues[key].labels.iter().any(|l| l == wanted));
        assert_eq!(label_adds, expected, "{key}: {writes:#?}");
    }
    let created = writes
        .iter()
        .filter(|w| w.starts_with("POST") && w.ends_with("/issues"))
        .count();
    assert_eq!(created, 2, "{writes:#?}");
    let deps = writes
        .iter()
        .filter(|w| w.contains("/dependencies"))
        .count();
    assert_eq!(deps, 3, "{writes:#?}");
    // The last run synced what it wrote: the second new issue depends on the first.
    let after = commitea::state::Snapshot::load(&commitea::state::Layout::new(&s.work)).unwrap();
    let new_issue = |title: &str| {
        after
            .issues
            .iter()
            .find(|(_, i)| i.title == title)
            .map(|(k, i)| (k.clone(), i.depends_on.clone()))
            .unwrap()
    };
    let (first, _) = new_issue("Captured task 0");
    let (_, waits) = new_issue("Captured task 1");
    assert_eq!(waits, vec![first.clone()], "{writes:#?}");
    let moves = writes.iter().filter(|w| w.starts_with("PATCH")).count();
    assert_eq!(
        moves,
        same_repo
            .iter()
            .take(4)
            .filter(|k| s.snapshot.issues[k].milestone != Some(milestone))
            .count()
    );
    let applied = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml")).unwrap();
    assert_eq!(applied.matches("result:").count(), 20, "{applied}");
    assert!(!applied.contains("result: failed"), "{applied}");
    // The record names the issues it filed, whichever run filed them.
    assert_eq!(applied.matches("result: created").count(), 2, "{applied}");
    let (second, _) = new_issue("Captured task 1");
    for key in [&first, &second] {
        assert!(
            applied.contains(&format!("issue: {key}\n")),
            "{key}: {applied}"
        );
    }
}

#[test]
fn a_thousand_random_op_files_touch_only_namespace_labels_and_native_fields() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let s = setup(&DemoSpec::scaled(40));
    let keys: Vec<String> = s.snapshot.issues.keys().map(ToString::to_string).collect();
    let repo = s.snapshot.issues.keys().next().unwrap().repo.clone();
    let label = prop_oneof![
        Just("p/0".to_owned()),
        Just("est/2d".to_owned()),
        Just("deadline/hard".to_owned()),
        Just("bug".to_owned()),
        Just("p/9".to_owned()),
        Just("est/3x".to_owned()),
        Just("estimate".to_owned()),
        "[a-z/]{1,10}",
    ];
    let issue = proptest::sample::select(keys);
    let op = prop_oneof![
        (issue.clone(), label.clone())
            .prop_map(|(i, l)| format!("- op: set_priority\n  issue: {i}\n  priority: {l}\n")),
        (issue.clone(), label.clone())
            .prop_map(|(i, l)| format!("- op: set_estimate\n  issue: {i}\n  estimate: {l}\n")),
        (issue.clone(), label.clone())
            .prop_map(|(i, l)| format!("- op: remove_label\n  issue: {i}\n  label: {l}\n")),
        (issue.clone(), 0u64..8)
            .prop_map(|(i, m)| format!("- op: set_milestone\n  issue: {i}\n  milestone: {m}\n")),
        (issue.clone(), issue.clone())
            .prop_map(|(i, d)| format!("- op: add_dep\n  issue: {i}\n  dependsOn: {d}\n")),
        issue
            .clone()
            .prop_map(|i| format!("- op: close_issue\n  issue: {i}\n")),
        (label.clone(), "[A-Za-z ]{1,20}").prop_map(move |(l, t)| format!(
            "- op: create_issue\n  title: {t}\n  labels: [{l}]\n  repo: {repo}\n"
        )),
        (0u64..8, any::<bool>())
            .prop_map(|(m, h)| format!("- op: set_deadline_hard\n  milestone: {m}\n  hard: {h}\n")),
        // Hostile: a field the format does not have (a comment, a title change).
        issue.prop_map(|i| format!(
            "- op: close_issue\n  issue: {i}\n  comment: bye\n  title: renamed\n"
        )),
    ];
    let file = proptest::collection::vec(op, 1..5);
    let mut runner = TestRunner::new(Config {
        cases: 1_000,
        failure_persistence: None,
        ..Config::default()
    });
    let client =
        commitea::gitea::client::Client::new(&s.emu.url(), Some(TOKEN.into()), Default::default())
            .unwrap();
    let approvals = AlwaysApproved;
    let config = commitea::config::Config::load(&s.work, Vec::new(), &Default::default()).unwrap();
    let files = std::cell::Cell::new(0usize);
    let refused = std::cell::Cell::new(0usize);
    runner
        .run(&file, |ops| {
            files.set(files.get() + 1);
            let text = op_file("C-0001", &ops.concat(), true);
            let parsed = commitea::ops::OpFile::parse(&text, Path::new("ops/pending/C-0001.yaml"))
                .map_err(|e| e.to_string());
            if parsed.is_err() {
                refused.set(refused.get() + 1);
            }
            let pending = vec![commitea::apply::PendingOnBranch {
                path: "ops/pending/C-0001.yaml".into(),
                file: parsed,
                commit: "0".repeat(40),
                later: Vec::new(),
                committed_at: chrono::Utc::now(),
            }];
            let snapshot = s.emu.with_dataset(|d| dataset_snapshot(d, &s.snapshot));
            commitea::apply::apply_pending(
                &client,
                &approvals,
                &config,
                &snapshot,
                &pending,
                &Default::default(),
                chrono::Utc::now(),
                &mut |_| {},
            )
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Ok(())
        })
        .unwrap();
    // The request log: only namespace labels and native fields, whatever the files said.
    let mut other = Vec::new();
    let own = |name: &str| commitea::domain::in_own_namespace(name);
    let label_names = |body: &Value| -> Vec<String> {
        body["labels"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let writes = s.emu.write_log();
    for w in &writes {
        let path = w.target.split('?').next().unwrap_or("");
        let segs: Vec<&str> = path.trim_start_matches("/api/v1/").split('/').collect();
        let fine = match (w.method.as_str(), segs.as_slice()) {
            ("POST", ["repos", _, _, "labels"]) => w.body["name"].as_str().is_some_and(own),
            ("POST", ["repos", _, _, "issues", _, "labels"]) => true, // by id: of labels CommiTea checked
            ("DELETE", ["repos", _, _, "issues", _, "labels", _]) => true,
            ("PATCH", ["repos", _, _, "issues", _]) => w
                .body
                .as_object()
                .is_some_and(|o| o.keys().all(|k| k == "state" || k == "milestone")),
            ("PATCH", ["repos", _, _, "milestones", _]) => w
                .body
                .as_object()
                .is_some_and(|o| o.keys().all(|k| k == "due_on" || k == "description")),
            ("POST" | "DELETE", ["repos", _, _, "issues", _, "dependencies"]) => true,
            ("POST", ["repos", _, _, "issues"]) => {
                label_names(&w.body).is_empty()
                    || w.body["labels"]
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_u64))
            }
            _ => false,
        };
        if !fine {
            other.push(w.clone());
        }
    }
    // Labels added by id must be labels with a namespace name.
    let labels: Vec<(u64, String)> = s.emu.with_dataset(|d| {
        d.repositories()
            .iter()
            .flat_map(|r| {
                d.labels(r)
                    .iter()
                    .map(|l| (l.id, l.name.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    });
    for w in &writes {
        if w.method == "POST" && (w.target.ends_with("/labels") || w.target.ends_with("/issues")) {
            for id in w.body["labels"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
            {
                let name = &labels.iter().find(|(i, _)| *i == id).unwrap().1;
                assert!(own(name), "label {name} added: {w:?}");
            }
        }
    }
    let (files, refused) = (files.get(), refused.get());
    eprintln!(
        "{files} op files ({refused} refused whole), {} writes, {} outside namespace labels and native fields",
        writes.len(),
        other.len()
    );
    assert_eq!(files, 1_000);
    // Most ops are refused by the rules (random milestones, cycles, closed issues): enough still write.
    assert!(
        refused > 50 && writes.len() > 250,
        "{refused} refused, {} writes",
        writes.len()
    );
    assert!(other.is_empty(), "{other:#?}");
}

/// Every commit counts as a merged pull request: the zero-pollution check must hold even for approved ops.
struct AlwaysApproved;

impl commitea::apply::Approvals for AlwaysApproved {
    fn merged_pull(
        &self,
        _commit: &str,
    ) -> Result<Option<commitea::apply::Approval>, commitea::gitea::client::ClientError> {
        Ok(Some(commitea::apply::Approval {
            number: 1,
            merged_by: Some("pat".into()),
        }))
    }

    fn pull_commits(
        &self,
        _number: u64,
    ) -> Result<Vec<commitea::apply::PullCommit>, commitea::gitea::client::ClientError> {
        Ok(Vec::new())
    }
}

/// The emulator's data as a snapshot (what a sync would read), on the original's meta.
fn dataset_snapshot(
    d: &Dataset,
    original: &commitea::state::Snapshot,
) -> commitea::state::Snapshot {
    let mut s = original.clone();
    s.issues.clear();
    s.labels.clear();
    s.milestones.clear();
    for r in d.repositories() {
        for i in d.issues(&r) {
            s.issues.insert(r.issue(i.number), i.clone());
        }
        s.labels.insert(r.clone(), d.labels(&r).to_vec());
        s.milestones.insert(r.clone(), d.milestones(&r).to_vec());
    }
    s
}

#[test]
fn init_refuses_a_gitea_older_than_it_reads_and_takes_a_forgejo_on_a_newer_one() {
    // Audit 198: on 1.19 init went through, and told the team to make a token with scopes 1.19 lacks.
    for (version, refused) in [("1.19.4", true), ("11.0.1+gitea-1.22.0", false)] {
        let s = setup_on(&DemoSpec::scaled(40), version);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plan");
        let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
            .arg("init")
            .arg(&dir)
            .args(["--server", &s.emu.url(), "--repo", "acme/api"])
            .env(TRIALS.0, TRIALS.1)
            .env("COMMITEA_GITEA_TOKEN", TOKEN)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if refused {
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(
                stderr.contains(
                    "is Gitea 1.19.4 (GET /api/v1/version), and CommiTea reads Gitea 1.20 or newer"
                ) && stderr.contains("nothing was created"),
                "{stderr}"
            );
            assert!(!dir.exists());
        } else {
            assert!(out.status.success(), "{version}: {stderr}");
        }
    }
}

#[test]
fn init_against_the_server_makes_a_site_in_one_command() {
    let s = setup(&DemoSpec::bundled());
    let tmp = tempfile::tempdir().unwrap();
    let init_to = |dir: &Path, token: Option<&str>, state: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_commitea"));
        c.arg("init")
            .arg(dir)
            .args(["--server", &s.emu.url()])
            .args([
                "--repo",
                "acme/api",
                "--repo",
                "acme/web",
                "--repo",
                "acme/mobile",
            ])
            .args(state.map(|s| ["--state-repo", s]).into_iter().flatten())
            .env(TRIALS.0, TRIALS.1)
            .env_remove("COMMITEA_SERVER")
            .env_remove("COMMITEA_GITEA_TOKEN")
            .env_remove("GITEA_TOKEN")
            .env_remove("FORGEJO_TOKEN")
            .env_remove("COMMITEA_TOKEN")
            .env_remove("GITHUB_TOKEN");
        if let Some(t) = token {
            c.env("COMMITEA_GITEA_TOKEN", t);
        }
        c.output().unwrap()
    };
    let init = |dir: &Path, token: Option<&str>| init_to(dir, token, Some("acme/state"));
    // A failed first sync leaves no folder behind.
    let failed = tmp.path().join("failed");
    let out = init(&failed, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(!failed.exists());
    // Said as init's: nothing made, init to run again (audit 184: only `run --offline` was advised).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("created nothing in") && stderr.contains("run `commitea init` again"),
        "{stderr}"
    );
    // A repository given twice is the flags' mistake, not a file's (audit 184: "dupr/commitea.yaml
    // line 3", a file that did not exist).
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .arg("init")
        .arg(&failed)
        .args([
            "--server",
            &s.emu.url(),
            "--repo",
            "acme/api",
            "--repo",
            "Acme/API",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--repo Acme/API names acme/api again")
            && !stderr.contains("commitea.yaml"),
        "{stderr}"
    );
    assert!(!failed.exists());
    // A planned repository as the state repo is refused before anything (audit 184: init went on, and its
    // next steps said both to create another and to push to this one).
    let out = init_to(&failed, Some(TOKEN), Some("acme/api"));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--state-repo acme/api is acme/api, one of the repositories to plan"),
        "{stderr}"
    );
    assert!(!failed.exists());
    // Inside another checkout, said (audit 184: "was not a git repository", and a nested repository).
    let outer = tmp.path().join("app");
    std::fs::create_dir_all(&outer).unwrap();
    git(&outer, &["init", "-q"]);
    // A repository spelt otherwise than the server spells it is written as the server's (audit 184: the
    // first correction moved every snapshot file and left empty folders behind).
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .arg("init")
        .arg(outer.join("plan"))
        .args(["--server", &s.emu.url(), "--repo", "Acme/API"])
        .args(["--state-repo", "acme/state"])
        .env(TRIALS.0, TRIALS.1)
        .env("COMMITEA_GITEA_TOKEN", TOKEN)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Acme/API is acme/api on the server: written as acme/api"),
        "{stderr}"
    );
    let config = std::fs::read_to_string(outer.join("plan/commitea.yaml")).unwrap();
    assert!(
        config.contains("  - acme/api\n") && !config.contains("Acme/API"),
        "{config}"
    );
    assert!(outer.join("plan/snapshot/issues/acme/api").is_dir());
    assert!(!outer.join("plan/snapshot/issues/Acme").exists());
    assert!(
        stderr.contains(&format!(
            "plan is inside the git work tree of {}",
            outer.display()
        )),
        "{stderr}"
    );

    // The state repo made on the server first and cloned, empty: its clone holds only `.git`, on the
    // server's first branch (`master` here; init commits on `main` all the same, which the workflow and
    // the runs use: on `master` the state repo split in two).
    let bare = tmp.path().join("new-state.git");
    git(
        tmp.path(),
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "master",
            bare.to_str().unwrap(),
        ],
    );
    git(
        tmp.path(),
        &["clone", "-q", bare.to_str().unwrap(), "new-state"],
    );
    let dir = tmp.path().join("new-state");
    // A login Gitea would refuse today but an LDAP-synced server holds: said and left out, not written
    // into a config that then fails (which had left the folder behind).
    let odd = s.quiet_issue_without("p/0");
    s.emu.with_dataset(|d| {
        assert!(d.update_issue(&odd, |i| i.assignees.push("jürgen".into())));
    });
    // A deleted user's issues show Gitea's placeholder, Ghost: no one to plan work for.
    let orphan = s.quiet_issues(2)[1].clone();
    s.emu.with_dataset(|d| {
        assert!(d.update_issue(&orphan, |i| i.assignees = vec!["Ghost".into()]));
    });
    let t = Instant::now();
    let out = init(&dir, Some(TOKEN));
    let took = t.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let index = ok(&out);
    assert!(
        stderr.contains("\"jürgen\" is assigned issues but is not a username"),
        "{stderr}"
    );
    eprintln!("init: a site in {took:?}");
    assert!(Path::new(index.trim()).exists(), "{index}");
    let config = std::fs::read_to_string(dir.join("commitea.yaml")).unwrap();
    assert!(config.contains("# to confirm"), "{config}");
    assert!(!config.contains("jürgen"), "{config}");
    assert!(!config.contains("Ghost"), "{config}");
    let forecast = std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap();
    assert!(
        forecast.contains(
            "1 open issue is assigned to Ghost (a user deleted from Gitea, or its Actions bot)"
        ),
        "{forecast}"
    );
    // Who works in some of the repositories only is planned there only; who works in all, anywhere.
    for (person, repos) in [("dana", "[acme/web]"), ("farah", "[acme/mobile]")] {
        let entry = config
            .split("- name: ")
            .find(|e| e.starts_with(person))
            .unwrap();
        assert!(entry.contains(&format!("repositories: {repos}")), "{entry}");
    }
    let amara = config
        .split("- name: ")
        .find(|e| e.starts_with("amara"))
        .unwrap();
    assert!(!amara.contains("repositories:"), "{amara}");
    assert!(config.contains("state_repository: acme/state"), "{config}");
    // The demo's team is found from who is assigned open issues and issues closed lately.
    for person in ["amara", "chen"] {
        assert!(
            config.contains(&format!("- name: {person}")),
            "{person}: {config}"
        );
    }
    assert!(dir.join(".gitea/workflows/commitea.yml").exists());
    assert!(dir.join("pm-state.md").exists());
    assert!(stderr.contains("COMMITEA_TOKEN"), "{stderr}");
    assert!(!stderr.contains("goes to the team"), "{stderr}");
    assert_eq!(
        git(&dir, &["status", "--porcelain"]),
        "",
        "everything committed"
    );
    assert!(stderr.contains("git push -u origin HEAD"), "{stderr}");
    assert!(!stderr.contains("is not readable"), "{stderr}");
    // The server has the state repository: not to be created again (audit 104).
    assert!(
        stderr.contains("acme/state's settings, enable Actions (the repository is there already)")
            && !stderr.contains("Create "),
        "{stderr}"
    );
    git(&dir, &["push", "-q", "-u", "origin", "HEAD"]);
    assert_eq!(
        git(&bare, &["rev-parse", "main"]),
        git(&dir, &["rev-parse", "HEAD"])
    );
    // Twice: it says what the folder already is.
    let out = init(&dir, Some(TOKEN));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is already a CommiTea state repo") && stderr.contains("commitea run -s"),
        "{stderr}"
    );
    // A state repository with commits already cannot take this one's history: said, not a push that
    // is refused (audit 106).
    let out = init_to(&tmp.path().join("again"), Some(TOKEN), Some("acme/state"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    ok(&out);
    assert!(
        stderr.contains("acme/state has commits already")
            && stderr.contains("Create an empty repository"),
        "{stderr}"
    );
    // A state repository the server lacks is said at once, and a missing one names the setting.
    let out = init_to(&tmp.path().join("typo"), Some(TOKEN), Some("acme/nope"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    ok(&out);
    assert!(
        stderr.contains("the state repository acme/nope is not readable")
            && stderr.contains("create it there")
            && stderr.contains("1. Create "),
        "{stderr}"
    );
    let out = init_to(&tmp.path().join("none"), Some(TOKEN), None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    ok(&out);
    assert!(
        stderr.contains("no --state-repo: set approvals.state_repository"),
        "{stderr}"
    );
}

#[test]
fn the_workflow_file_is_valid_under_actionlint() {
    if !crate::support::external("actionlint") {
        return;
    }
    // GitHub's hosted runners drop node20; Gitea's and Forgejo's run it, and refuse node24 before
    // Forgejo runner 9.1: the workflow keeps the node20 versions, and that one check is GitHub's alone.
    let out = Command::new("actionlint")
        .args([
            "-ignore",
            r#"runtime "node20" is deprecated in GitHub Actions"#,
        ])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(".gitea/workflows/commitea.yml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Pull requests on the state repo, straight from the emulator's API (as a person's browser would).
fn close_pull(s: &Setup, number: u64) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let status = reqwest::blocking::Client::new()
        .patch(format!(
            "{}/api/v1/repos/acme/state/pulls/{number}",
            s.emu.url()
        ))
        .header("Authorization", format!("token {TOKEN}"))
        .json(&serde_json::json!({"state": "closed"}))
        .send()
        .unwrap()
        .status();
    assert!(status.is_success(), "closing #{number}: {status}");
}

/// The branches of the bare state repository.
fn remote_branches(s: &Setup) -> Vec<String> {
    git(
        &s.bare,
        &["for-each-ref", "--format=%(refname:short)", "refs/heads"],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

#[test]
fn open_proposals_follow_the_world_and_a_closed_one_leaves_nothing() {
    let s = setup(&DemoSpec::scaled(60));
    let milestoned: Vec<IssueKey> = s
        .quiet_issues(40)
        .into_iter()
        .filter(|k| s.snapshot.issues[k].milestone.is_some())
        .collect();
    let [kept, dropped] = <[IssueKey; 2]>::try_from(milestoned[..2].to_vec()).unwrap();
    for key in [&kept, &dropped] {
        let input =
            format!(r#"{{"ops":[{{"op":"close_issue","issue":"{key}"}}],"approved":true}}"#);
        ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    }
    let proposed = ok(&s.commitea(&s.work, &["propose"]));
    assert_eq!(proposed.lines().count(), 2, "{proposed}");
    let body_before = s.emu.state_pulls(&state_repo())[0].body.clone();

    // The world moves: every other open issue of the kept proposal's milestone grows to two weeks.
    let milestone = s.snapshot.issues[&kept].milestone;
    let grown: Vec<IssueKey> = s
        .snapshot
        .issues
        .iter()
        .filter(|(k, i)| **k != kept && i.milestone == milestone && i.state == OpenState::Open)
        .map(|(k, _)| k.clone())
        .collect();
    assert!(!grown.is_empty());
    s.emu.with_dataset(|d| {
        for k in &grown {
            d.update_issue(k, |i| {
                i.labels.retain(|l| !l.starts_with("est/"));
                i.labels.push("est/2w".into());
            });
        }
    });
    // And a person closes the other proposal without merging it.
    close_pull(&s, 2);

    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out);
    let pulls = s.emu.state_pulls(&state_repo());
    assert_ne!(
        pulls[0].body, body_before,
        "the open proposal's consequence was not recomputed"
    );
    assert!(stderr.contains("updated 1 open proposals"), "{stderr}");
    // Rebuilt on the new tip of main, so it stays mergeable.
    let main = git(&s.bare, &["rev-parse", "main"]);
    git(
        &s.bare,
        &["merge-base", "--is-ancestor", &main, "commitea/C-0001"],
    );
    // The closed one left nothing: no branch, no write to Gitea, the issue still open.
    let branches = remote_branches(&s);
    assert!(
        branches.contains(&"commitea/C-0001".to_owned()),
        "{branches:?}"
    );
    assert!(
        !branches.contains(&"commitea/C-0002".to_owned()),
        "{branches:?}"
    );
    assert_eq!(s.issue(&dropped).state, OpenState::Open);
    assert_eq!(
        s.issue(&kept).state,
        OpenState::Open,
        "not merged, not applied"
    );
    assert!(
        s.emu
            .writes()
            .iter()
            .all(|w| w.contains("/repos/acme/state/")),
        "{:?}",
        s.emu.writes()
    );
    // A second run finds nothing to update and nothing to delete.
    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out);
    assert!(!stderr.contains("open proposals"), "{stderr}");
    assert!(!stderr.contains("branch deleted"), "{stderr}");
}

#[test]
fn a_merge_while_the_run_runs_makes_it_run_again_on_the_new_head() {
    let s = setup(&DemoSpec::scaled(60));
    let [key] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    push_priority(&s, &key);
    // Someone else moves main while the job runs: the job's push cannot be a fast-forward.
    let other = clone_as(&s, "other");
    std::fs::write(other.join("NOTES.md"), "merged meanwhile\n").unwrap();
    git(&other, &["add", "NOTES.md"]);
    commit_as_pm(&other, "notes");
    let out = run_racing(&s, || {
        git(&other, &["push", "-q", "origin", "HEAD:main"]);
    });
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out);
    assert!(
        stderr.contains("running again on the new head (1 of 3)"),
        "{stderr}"
    );
    // Both survive on main: the other commit, and the run's record of what it applied (applied, not
    // "already so": the second attempt keeps what the first one did).
    assert_eq!(
        s.on_branch("main", "NOTES.md").as_deref(),
        Some("merged meanwhile\n")
    );
    let applied = s
        .on_branch("main", "ops/applied/C-0001.yaml")
        .expect("the apply record on main");
    assert!(applied.contains("result: applied"), "{applied}");
    assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_none());
    git(&s.bare, &["merge-base", "--is-ancestor", "main~1", "main"]);
    let label_writes = s
        .emu
        .writes()
        .iter()
        .filter(|w| w.starts_with("POST") && w.contains(&format!("/issues/{}/labels", key.number)))
        .count();
    assert_eq!(label_writes, 1, "{:?}", s.emu.writes());
}

/// Another run's record of the op file `file` (C-0001), its `results` (YAML list items), pushed to main
/// first with the file taken out of ops/pending, as a run beside this one would.
fn push_other_runs_record(s: &Setup, file: &str, results: &str) {
    let other = clone_as(s, "other");
    std::fs::remove_file(other.join("ops/pending/C-0001.yaml")).unwrap();
    std::fs::create_dir_all(other.join("ops/applied")).unwrap();
    let proposal: String = file.lines().map(|l| format!("  {l}\n")).collect();
    std::fs::write(
        other.join("ops/applied/C-0001.yaml"),
        format!(
            "proposal:\n{proposal}applied:\n  at: 2026-11-27T18:00:00Z\n  commit: {}\n  results:\n{results}",
            git(&other, &["rev-parse", "HEAD"]).trim()
        ),
    )
    .unwrap();
    git(&other, &["add", "-A", "ops"]);
    commit_as_pm(&other, "the other run's record");
    git(&other, &["push", "-q", "origin", "HEAD:main"]);
}

/// A checkout with commits of its own while the remote's branch moved on: `run --push` refuses before
/// anything, naming them, and drops none (audit 193: reset to the remote's tip, a PM's config commit was
/// gone, and the run said "nothing new to push").
#[test]
fn a_run_that_would_push_onto_a_branch_that_moved_keeps_the_checkouts_own_commits() {
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let other = clone_as(&s, "other");
    std::fs::write(other.join("NOTES.md"), "a note\n").unwrap();
    git(&other, &["add", "NOTES.md"]);
    commit_as_pm(&other, "a note from elsewhere");
    git(&other, &["push", "-q", "origin", "HEAD:main"]);
    let config = std::fs::read_to_string(s.work.join("commitea.yaml")).unwrap();
    std::fs::write(
        s.work.join("commitea.yaml"),
        format!("{config}# bjorn is 20h\n"),
    )
    .unwrap();
    git(&s.work, &["add", "commitea.yaml"]);
    commit_as_pm(&s.work, "bjorn is 20h a week");
    let mine = git(&s.work, &["rev-parse", "HEAD"]);
    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("this checkout's main has 1 commit that origin/main has not (")
            && stderr.contains("\"bjorn is 20h a week\"")
            && stderr.contains("git pull --rebase origin main"),
        "{stderr}"
    );
    assert_eq!(git(&s.work, &["rev-parse", "HEAD"]), mine);
    assert_eq!(
        git(&s.bare, &["log", "-1", "--format=%s", "main"]),
        "a note from elsewhere"
    );
    // Rebased, it runs and pushes both.
    git(&s.work, &["pull", "-q", "--rebase", "origin", "main"]);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let pushed = git(&s.bare, &["log", "--format=%s", "main"]);
    assert!(
        pushed.contains("bjorn is 20h a week") && pushed.contains("a note from elsewhere"),
        "{pushed}"
    );
}

/// Runs `commitea run --push` in the checkout while `race` moves main on the server once the run has
/// fetched and begun (its first request to a repository is held meanwhile): a merge, or another run's
/// push, that lands while a job runs. (Before the run, the run would be brought up to it first.)
fn run_racing(s: &Setup, race: impl FnOnce()) -> Output {
    let first = "/api/v1/repos/";
    s.emu
        .inject(Fault::new(FaultKind::Slow(Duration::from_secs(3))).on(first));
    let child = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["run", "--push", "-s"])
        .arg(&s.work)
        .env_remove("COMMITEA_STATE")
        .env("COMMITEA_SERVER", s.emu.url())
        .env("COMMITEA_GITEA_TOKEN", TOKEN)
        .env(TRIALS.0, TRIALS.1)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let started = Instant::now();
    while !s.emu.requests().iter().any(|r| r.contains(first)) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the run never asked the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    race();
    child.wait_with_output().expect("the run ends")
}

/// Two runs at once (a forge that does not queue them) both carry out an approved create_issue: the one
/// that loses the push race and runs again on the other's head keeps its record of the issue it filed
/// beside the other's, and says it is a duplicate (audit 134: it was in no record).
#[test]
fn a_run_that_loses_the_push_race_keeps_the_record_of_what_it_filed() {
    let s = setup(&DemoSpec::scaled(60));
    let repo = RepoName::new("acme", "api");
    let title = "Filed by two runs at once";
    let ops = format!("- op: create_issue\n  title: {title}\n  labels: [est/1d]\n  repo: {repo}\n");
    let file = op_file("C-0001", &ops, false);
    push_straight(&s, "C-0001", &file);
    // The other run filed its own (acme/api#1 here stands for it: both asked Gitea before either filed)
    // and pushed its record first.
    let out = run_racing(&s, || {
        push_other_runs_record(
            &s,
            &file,
            &format!("  - result: created\n    issue: {repo}#1\n"),
        );
    });
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out);
    let filed: Vec<u64> = s.emu.with_dataset(|d| {
        d.issues(&repo)
            .iter()
            .filter(|i| i.title == title)
            .map(|i| i.number)
            .collect()
    });
    let [ours] = <[u64; 1]>::try_from(filed).unwrap();
    assert!(
        stderr.contains("running again on the new head (1 of 3)")
            && stderr.contains(&format!(
                "C-0001 was carried out by another run at the same time (ops/applied/C-0001.yaml); what this run did too is recorded in ops/applied/C-0001.2.yaml: it filed {repo}#{ours} as well"
            )),
        "{stderr}"
    );
    let theirs = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(theirs.contains(&format!("issue: {repo}#1\n")), "{theirs}");
    let kept = s
        .on_branch("main", "ops/applied/C-0001.2.yaml")
        .expect("this run's record on main");
    assert!(kept.contains(&format!("issue: {repo}#{ours}\n")), "{kept}");
}

/// Two runs at once, the second finding the issue the first filed: it neither files it again nor calls
/// it a duplicate to close, and keeps no record beside the first's when it did nothing more (audit 152:
/// "it filed acme/api#212 as well … close the duplicate on Gitea" of the only copy).
#[test]
fn a_run_that_finds_the_issue_another_run_filed_calls_it_no_duplicate() {
    let s = setup(&DemoSpec::scaled(60));
    let repo = RepoName::new("acme", "api");
    let title = "Filed by the run beside";
    // Its dependency too, which the other run added (on Gitea, out of this run's sight: see
    // `a_dependency_gitea_holds_already_is_already_so_not_failed`).
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    assert!(
        s.emu
            .with_dataset(|d| d.update_issue(&a, |i| i.depends_on.push(b.clone())))
    );
    let ops = format!(
        "- op: create_issue\n  title: {title}\n  labels: [est/1d]\n  repo: {repo}\n- op: add_dep\n  issue: {a}\n  dependsOn: {b}\n"
    );
    let file = op_file("C-0001", &ops, false);
    push_straight(&s, "C-0001", &file);
    s.emu.with_dataset(|d| d.set_clock(chrono::Utc::now()));
    let number = s.emu.with_dataset(|d| d.next_number(&repo));
    // The other run files it after this one's sync and pushes its record first.
    s.emu.inject(
        Fault::new(FaultKind::CreateIssue {
            repo: repo.clone(),
            title: title.into(),
        })
        .on("/api/v1/user"),
    );
    let out = run_racing(&s, || {
        push_other_runs_record(
            &s,
            &file,
            &format!("  - result: created\n    issue: {repo}#{number}\n  - result: applied\n"),
        );
    });
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out);
    assert!(
        stderr.contains(&format!(
            "{repo}#{number} was filed by another run since this one synced"
        )) && stderr.contains("running again on the new head (1 of 3)"),
        "{stderr}"
    );
    assert!(!stderr.contains("close the duplicate"), "{stderr}");
    let filed = s
        .emu
        .with_dataset(|d| d.issues(&repo).iter().filter(|i| i.title == title).count());
    assert_eq!(filed, 1);
    assert!(s.on_branch("main", "ops/applied/C-0001.2.yaml").is_none());
    let theirs = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        theirs.contains(&format!("issue: {repo}#{number}\n")),
        "{theirs}"
    );
}

/// A run on another branch than the one approvals are merged into carries out none of its op files, and
/// `run --push` there is refused: it would carry an unmerged proposal onto main (audit 134).
#[test]
fn a_run_off_the_approvals_branch_applies_nothing_and_pushes_nothing() {
    let s = setup(&DemoSpec::scaled(60));
    let [key] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    git(&s.work, &["checkout", "-q", "-b", "commitea/C-0001"]);
    let ops = format!("- op: set_priority\n  issue: {key}\n  priority: p/0\n");
    let path = s.work.join("ops/pending/C-0001.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, op_file("C-0001", &ops, false)).unwrap();
    git(&s.work, &["add", "ops"]);
    commit_as_pm(&s.work, "C-0001: a proposal, not merged");
    let main_before = git(&s.bare, &["rev-parse", "main"]);
    s.emu.reset_counts();

    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "this checkout is on commitea/C-0001, not main: `commitea run --push` pushes"
        ),
        "{stderr}"
    );
    let out = s.commitea(&s.work, &["run"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("this checkout is on commitea/C-0001, not main: its op files (ops/pending/C-0001.yaml) are approved by nothing here"),
        "{stderr}"
    );
    assert!(
        s.emu.writes().iter().all(|w| !w.contains("/labels")),
        "{:?}",
        s.emu.writes()
    );
    assert_eq!(git(&s.bare, &["rev-parse", "main"]), main_before);
    assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_none());
}

#[test]
fn an_issue_a_run_beside_this_one_filed_since_its_sync_is_not_filed_again() {
    // A forge that does not queue runs (Forgejo before v14) lets two runs overlap: both sync before either
    // files an approved create_issue. The second asks Gitea, not its snapshot, whether it was filed.
    let s = setup(&DemoSpec::scaled(60));
    let repo = RepoName::new("acme", "api");
    let title = "Filed beside this run";
    let ops = format!("- op: create_issue\n  title: {title}\n  labels: [est/1d]\n  repo: {repo}\n");
    push_straight(&s, "C-0001", &op_file("C-0001", &ops, false));
    // The server's clock is the commit's (git stamps the push with the machine's).
    s.emu.with_dataset(|d| d.set_clock(chrono::Utc::now()));
    // The other run files it after this one's sync, as this one asks who the token is (just before
    // it would file it).
    s.emu.inject(
        Fault::new(FaultKind::CreateIssue {
            repo: repo.clone(),
            title: title.into(),
        })
        .on("/api/v1/user"),
    );
    let out = s.commitea(&s.work, &["run"]);
    ok(&out);
    let filed: Vec<u64> = s.emu.with_dataset(|d| {
        d.issues(&repo)
            .iter()
            .filter(|i| i.title == title)
            .map(|i| i.number)
            .collect()
    });
    assert_eq!(filed.len(), 1, "filed twice: {filed:?}");
    let applied = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml")).unwrap();
    assert!(
        applied.contains(&format!("{repo}#{}", filed[0])),
        "the op names the issue filed beside it: {applied}"
    );
}

#[test]
fn a_dependency_gitea_holds_already_is_already_so_not_failed() {
    // Gitea answers 500 to a dependency it holds already: a run beside this one added it after this
    // one's sync, and the record said "failed: 500", the file "partly applied" while whole on Gitea
    // (audit 152). Here the dependency is on Gitea without its timeline entry, so this run's sync does
    // not read it, as it would not have read one added after it.
    let s = setup(&DemoSpec::scaled(40));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    assert!(
        s.emu
            .with_dataset(|d| d.update_issue(&a, |i| i.depends_on.push(b.clone())))
    );
    let ops = format!("- op: add_dep\n  issue: {a}\n  dependsOn: {b}\n");
    push_straight(&s, "C-0001", &op_file("C-0001", &ops, false));
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let applied = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        applied.contains("result: already_so") && !applied.contains("failed"),
        "{applied}"
    );
    let message = git(&s.bare, &["log", "-1", "--format=%B", "main"]);
    assert!(!message.contains("partly applied"), "{message}");
    // A 500 for anything else is still a failure: Gitea holds no such dependency.
    let [c] = <[IssueKey; 1]>::try_from(
        s.quiet_issues(3)
            .into_iter()
            .filter(|k| *k != a && *k != b)
            .take(1)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    s.emu.inject(
        Fault::new(FaultKind::Status(500)).on(format!("/issues/{}/dependencies", c.number)),
    );
    let ops = format!("- op: add_dep\n  issue: {c}\n  dependsOn: {b}\n");
    push_straight(&s, "C-0002", &op_file("C-0002", &ops, false));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let applied = s.on_branch("main", "ops/applied/C-0002.yaml").unwrap();
    assert!(applied.contains("result: failed"), "{applied}");
}

#[test]
fn what_a_run_carried_out_is_on_disk_before_the_rest_of_the_run_can_fail() {
    // The records were written only with the commit: a run that failed after its apply stage (the
    // server gone in the sync after it, a full disk, a kill) left Gitea changed and no record, and the
    // next run recorded its writes, an approved close among them, as "already so" (audit 152).
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let key = s.quiet_issue_without("p/0");
    push_priority(&s, &key);
    // The sync after the apply reads the issue it changed (the one before it, nothing changed, does
    // not): the server fails there.
    s.emu.inject(Fault {
        kind: FaultKind::Status(500),
        path_contains: Some(format!(
            "/repos/{}/issues/{}/timeline",
            key.repo, key.number
        )),
        times: 1_000,
    });
    let out = s.commitea(&s.work, &["run", "--push"]);
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        s.issue(&key).labels.contains(&"p/0".to_owned()),
        "the write reached Gitea"
    );
    let record = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml"))
        .expect("the record is on disk");
    assert!(record.contains("result: applied"), "{record}");
    assert!(s.on_branch("main", "ops/applied/C-0001.yaml").is_none());
    s.emu.clear_faults();
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ops/applied/C-0001.yaml was written by a run that did not commit it"),
        "{stderr}"
    );
    let committed = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        committed.contains("result: applied") && !committed.contains("already_so"),
        "{committed}"
    );
}

#[test]
fn a_server_gone_partway_through_the_approved_files_keeps_what_was_carried_out() {
    // The server stopped answering at the second approved file: the first, carried out whole, was lost
    // with the error, and the next run recorded it "already so" (audit 152).
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    for (id, key) in [("C-0001", &a), ("C-0002", &b)] {
        let ops = format!("- op: set_priority\n  issue: {key}\n  priority: p/0\n");
        push_straight(&s, id, &op_file(id, &ops, false));
    }
    s.emu.inject(Fault {
        kind: FaultKind::Drop,
        path_contains: Some(format!("/repos/{}/issues/{}/labels", b.repo, b.number)),
        times: 1_000,
    });
    let out = s.commitea(&s.work, &["run", "--push"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "the apply stage stopped in C-0002, partway: C-0001 carried out whole before it, recorded \
             in ops/applied/C-0001.yaml for the next run to commit"
        ),
        "{err}"
    );
    let record = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml")).unwrap();
    assert!(record.contains("result: applied"), "{record}");
    s.emu.clear_faults();
    ok(&s.commitea(&s.work, &["run", "--push"]));
    for id in ["C-0001", "C-0002"] {
        let committed = s
            .on_branch("main", &format!("ops/applied/{id}.yaml"))
            .unwrap();
        assert!(
            committed.contains("result: applied") && !committed.contains("already_so"),
            "{id}: {committed}"
        );
    }
}

#[test]
fn runs_that_do_not_commit_keep_one_record_of_what_they_applied() {
    // Without a repository to ask, any record on disk was taken for a committed one: a second
    // `--no-commit` run wrote a `.2` beside the first ("an id given twice"), and the Changes page listed
    // both (audit 156).
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    push_priority(&s, &key);
    for _ in 0..2 {
        let out = s.commitea(&s.work, &["run", "--no-commit"]);
        ok(&out);
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("an id given twice"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let records: Vec<String> = std::fs::read_dir(s.work.join("ops/applied"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("C-0001"))
        .collect();
    assert_eq!(records, vec!["C-0001.yaml".to_owned()]);
    let record = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml")).unwrap();
    assert!(record.contains("result: applied"), "{record}");
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let committed = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(committed.contains("result: applied"), "{committed}");
    assert!(!s.work.join("ops/applied/C-0001.2.yaml").exists());
}

#[test]
fn a_file_carried_out_before_a_kill_in_the_apply_stage_keeps_its_record() {
    // The records were written once the whole stage was done: a run killed between two files lost the
    // first's, and the next recorded its writes as "already so" (audit 156).
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    for (id, key) in [("C-0001", &a), ("C-0002", &b)] {
        let ops = format!("- op: set_priority\n  issue: {key}\n  priority: p/0\n");
        push_straight(&s, id, &op_file(id, &ops, false));
    }
    let second = format!("/repos/{}/issues/{}/labels", b.repo, b.number);
    s.emu.inject(Fault {
        kind: FaultKind::HoldAnswer(Duration::from_secs(5)),
        path_contains: Some(second.clone()),
        times: 1,
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["run", "-s"])
        .arg(&s.work)
        .env("COMMITEA_SERVER", s.emu.url())
        .env("COMMITEA_GITEA_TOKEN", TOKEN)
        .env(TRIALS.0, TRIALS.1)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !s.emu.writes().iter().any(|w| w.contains(&second)) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the second file's write never came"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.kill();
    let _ = child.wait();
    let record = std::fs::read_to_string(s.work.join("ops/applied/C-0001.yaml"))
        .expect("the first file's record is on disk");
    assert!(record.contains("result: applied"), "{record}");
    s.emu.clear_faults();
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let first = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        first.contains("result: applied") && !first.contains("already_so"),
        "{first}"
    );
    assert!(s.on_branch("main", "ops/applied/C-0002.yaml").is_some());
}

#[test]
fn a_models_file_pushed_straight_to_the_branch_is_not_carried_out() {
    // A model's op file (text on Gitea can steer a model) goes through a pull request whatever its ops;
    // pushed straight to main, it was carried out (audit 159).
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    let ops = format!("- op: set_priority\n  issue: {key}\n  priority: p/0\n");
    let file =
        op_file("C-0001", &ops, false).replace("approved: true\n", "approved: true\nmodel: true\n");
    assert!(file.contains("model: true"));
    push_straight(&s, "C-0001", &file);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert!(!s.issue(&key).labels.contains(&"p/0".to_owned()));
    let record = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        record.contains("C-0001 was written by a model, and the commit that brought it"),
        "{record}"
    );
}

#[test]
fn a_linked_records_folder_stops_the_run_before_anything_reaches_gitea() {
    // With `ops/applied` a link the run wrote to Gitea, then failed to record it (audit 159).
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    push_priority(&s, &key);
    let elsewhere = tempfile::tempdir().unwrap();
    let applied = s.work.join("ops/applied");
    if applied.exists() {
        std::fs::remove_dir_all(&applied).unwrap();
    }
    std::os::unix::fs::symlink(elsewhere.path(), &applied).unwrap();
    let out = s.commitea(&s.work, &["run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("ops/applied") && err.contains("symbolic link"),
        "{err}"
    );
    assert!(
        s.emu.writes().iter().all(|w| !w.contains("/labels")),
        "{:?}",
        s.emu.writes()
    );
}

#[test]
fn a_run_whose_site_fails_after_its_commit_still_pushes_it() {
    // `run --push` committed, failed to write the site and pushed nothing: in a job the checkout, and
    // with it the record of what the apply stage did on Gitea, was thrown away (audit 152).
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let key = s.quiet_issue_without("p/0");
    push_priority(&s, &key);
    // A folder where the site writes its front page: the site cannot be written.
    let index = s.work.join("public/index.html");
    std::fs::remove_file(&index).unwrap();
    // (A `.git` in it is no file of the site's, which it would remove.)
    std::fs::create_dir_all(index.join(".git")).unwrap();
    let out = s.commitea(&s.work, &["run", "--push"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let head = git(&s.work, &["rev-parse", "HEAD"]);
    assert!(
        err.contains(&format!(
            "the run's commit {} is pushed to origin main",
            head.trim()
        )) && err.contains("the site was not written whole"),
        "{err}"
    );
    assert_eq!(git(&s.bare, &["rev-parse", "main"]), head);
    assert!(s.on_branch("main", "ops/applied/C-0001.yaml").is_some());
}

#[test]
fn a_fork_pull_request_named_as_a_proposal_is_never_taken_for_one() {
    let s = setup(&DemoSpec::scaled(60));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let close = |key: &IssueKey| {
        let input =
            format!(r#"{{"ops":[{{"op":"close_issue","issue":"{key}"}}],"approved":true}}"#);
        ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    };
    close(&a);
    ok(&s.commitea(&s.work, &["propose"]));
    close(&b);
    let pending: Vec<String> = std::fs::read_dir(s.work.join("ops/pending"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .replace(".yaml", "")
        })
        .collect();
    let [next] = <[String; 1]>::try_from(pending).unwrap();
    // Anyone who may fork the state repo can name a branch as the next proposal, and as one proposed.
    let squat = s.emu.fork_pull(
        &state_repo(),
        "mallory",
        &format!("commitea/{next}"),
        "mallory: tidy the workflow",
        true,
    );
    let closed = s.emu.fork_pull(
        &state_repo(),
        "mallory",
        "commitea/C-0001",
        "mallory",
        false,
    );
    s.emu.reset_counts();
    ok(&s.commitea(&s.work, &["propose"]));
    let pulls = s.emu.state_pulls(&state_repo());
    let theirs = pulls.iter().find(|p| p.number == squat).unwrap();
    assert_eq!(theirs.title, "mallory: tidy the workflow");
    assert!(theirs.body.is_empty(), "{}", theirs.body);
    let ours: Vec<_> = pulls.iter().filter(|p| p.fork.is_none()).collect();
    assert_eq!(ours.len(), 2, "{pulls:?}");
    assert!(
        ours.iter().any(|p| p.head == format!("commitea/{next}")),
        "{pulls:?}"
    );
    for n in [squat, closed] {
        assert!(
            !s.emu
                .writes()
                .iter()
                .any(|w| w.contains(&format!("/pulls/{n}"))),
            "{:?}",
            s.emu.writes()
        );
    }
    // A fork's closed pull request does not close the proposal of the same name.
    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out);
    assert!(!stderr.contains("branch deleted"), "{stderr}");
    let branches = remote_branches(&s);
    for id in ["C-0001", next.as_str()] {
        assert!(
            branches.contains(&format!("commitea/{id}")),
            "{id}: {branches:?}"
        );
    }
}

/// `approvals.propose_on_write`: a write tool proposes what it wrote at once, and a proposal that cannot
/// be made leaves the file in the checkout and says why in the answer.
#[test]
fn propose_on_write_proposes_each_write_and_says_why_when_it_cannot() {
    let s = setup(&DemoSpec::scaled(60));
    let config = std::fs::read_to_string(s.work.join("commitea.yaml")).unwrap();
    std::fs::write(
        s.work.join("commitea.yaml"),
        format!("{config}  propose_on_write: true\n"),
    )
    .unwrap();
    git(&s.work, &["add", "commitea.yaml"]);
    commit_as_pm(&s.work, "propose on write");
    git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
    let keys = s.quiet_issues(2);
    let apply = |key: &IssueKey| -> Value {
        let input = format!(
            r#"{{"ops":[{{"op":"set_estimate","issue":"{key}","estimate":"{}"}}]}}"#,
            s.new_estimate(key)
        );
        serde_json::from_str(&ok(
            &s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"])
        ))
        .unwrap()
    };
    // A person's additive op goes straight to the branch, proposed by the call itself.
    let first = apply(&keys[0]);
    let proposed = first["proposed"].as_array().unwrap();
    assert_eq!(proposed.len(), 1, "{first}");
    assert!(
        proposed[0].as_str().unwrap().starts_with("C-0001 direct "),
        "{first}"
    );
    assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_some());

    // The server fails: the op file stays for `commitea propose`, and the answer says why, whole.
    s.emu.inject(
        Fault::new(FaultKind::Status(503))
            .times(1000)
            .on("/repos/acme/state"),
    );
    let second = apply(&keys[1]);
    let said = second["proposed"][0].as_str().unwrap();
    assert!(said.starts_with("not proposed yet ("), "{second}");
    assert!(
        said.contains("503"),
        "the reason, not only the request: {said}"
    );
    assert!(said.ends_with("; `commitea propose` will"), "{said}");
    // Numbered after the one on the branch, though the checkout no longer holds that one.
    let file = second["opsFile"].as_str().unwrap();
    assert_eq!(file, "ops/pending/C-0002.yaml", "{second}");
    assert!(s.work.join(file).exists(), "{second}");
}

/// A pull request whose head branch is deleted: Gitea then sends `head.ref` as `refs/pull/N/head` and
/// keeps the branch's name in `head.label` (`services/convert/pull.go`). It is still the proposal's.
#[test]
fn a_proposal_whose_branch_is_deleted_is_closed_and_the_run_goes_on() {
    let s = setup(&DemoSpec::scaled(40));
    let [key] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    let id = s.p0_directive(&key, "Do it first.");
    let out = ok(&s.commitea(&s.work, &["propose"]));
    assert!(
        out.contains(&format!("{id} pull-request 1 commitea/{id}")),
        "{out}"
    );
    git(&s.bare, &["branch", "-D", &format!("commitea/{id}")]);
    // Gitea closes a pull request whose branch is deleted (`CloseBranchPulls`), unmerged.
    let pulls = s.emu.state_pulls(&state_repo());
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0].state, OpenState::Closed);
    assert!(!pulls[0].merged);
    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("branch deleted"), "{stderr}");
    assert!(!s.issue(&key).labels.contains(&"p/0".to_owned()));
}

/// The PM's own clone of the state repo, made once and fetched up to date.
fn pm_clone(s: &Setup) -> PathBuf {
    let dir = s._tmp.path().join("pm-edits");
    if !dir.exists() {
        git(
            s._tmp.path(),
            &[
                "clone",
                "-q",
                s.bare.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
    }
    git(&dir, &["fetch", "-q", "origin"]);
    dir
}

/// One more commit on `branch` of the state repo, as a PM editing a proposal on Gitea makes one: `path` with
/// `from` replaced by `to`.
fn edit_on_branch(s: &Setup, branch: &str, path: &str, from: &str, to: &str) {
    let dir = pm_clone(s);
    git(
        &dir,
        &["checkout", "-q", "-B", "edit", &format!("origin/{branch}")],
    );
    let file = dir.join(path);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(from), "{text}");
    std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
    git(&dir, &["add", path]);
    commit_as_pm(&dir, "edit the proposal");
    git(&dir, &["push", "-q", "origin", &format!("HEAD:{branch}")]);
}

/// A commit on `branch` adding `name` (one line), after whatever the branch has.
fn add_on_branch(s: &Setup, branch: &str, name: &str) {
    let dir = pm_clone(s);
    git(
        &dir,
        &["checkout", "-q", "-B", "add", &format!("origin/{branch}")],
    );
    std::fs::write(dir.join(name), "a note\n").unwrap();
    git(&dir, &["add", name]);
    commit_as_pm(&dir, "a note");
    git(&dir, &["push", "-q", "origin", &format!("HEAD:{branch}")]);
}

/// Someone else's commit on main (`name` with one line).
fn move_main(s: &Setup, name: &str) {
    let dir = pm_clone(s);
    git(&dir, &["checkout", "-q", "-B", "other", "origin/main"]);
    std::fs::write(dir.join(name), "meanwhile\n").unwrap();
    git(&dir, &["add", name]);
    commit_as_pm(&dir, "meanwhile");
    git(&dir, &["push", "-q", "origin", "HEAD:main"]);
}

/// The checkout at the state repo's main, as a job's checkout is.
fn check_out_main(s: &Setup) {
    git(&s.work, &["fetch", "-q", "origin"]);
    git(&s.work, &["reset", "-q", "--hard", "origin/main"]);
}

/// Proposes closing `key` through `apply_changes` and `propose`: the op file's id and the pull request's number.
fn propose_close(s: &Setup, key: &IssueKey) -> (String, u64) {
    let input = format!(r#"{{"ops":[{{"op":"close_issue","issue":"{key}"}}],"approved":true}}"#);
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    let out = ok(&s.commitea(&s.work, &["propose"]));
    let words: Vec<&str> = out.split_whitespace().collect();
    assert!(
        matches!(words.as_slice(), [_, "pull-request", _, _]),
        "{out}"
    );
    (words[0].to_owned(), words[2].parse().unwrap())
}

#[test]
fn merging_a_proposal_closes_nothing_on_its_own() {
    // Gitea closes on a merge the issues its pull request's title and body name after a closing keyword:
    // the body's own op line, "close acme/api#114", closed the issue at the merge, before any check of
    // the run's, and an issue title with "fixes acme/api#12" would close that one (audit 159).
    let s = setup(&DemoSpec::scaled(40));
    let [key] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    let (_, number) = propose_close(&s, &key);
    let pull = s
        .emu
        .state_pulls(&state_repo())
        .into_iter()
        .find(|p| p.number == number)
        .unwrap();
    assert!(
        pull.body.contains(&format!("close\t{key}")),
        "{}",
        pull.body
    );
    s.emu.merge_pull(&state_repo(), number, "pat").unwrap();
    assert_eq!(
        s.issue(&key).state,
        OpenState::Open,
        "closed by the merge itself"
    );
    // The run that follows carries it out, as approved.
    check_out_main(&s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert_eq!(s.issue(&key).state, OpenState::Closed);
}

/// Someone's request to Gitea's API (`path` after `/api/v1`), as the engineer makes one; its answer.
fn on_gitea(s: &Setup, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut request = reqwest::blocking::Client::new()
        .request(method, format!("{}/api/v1{path}", s.emu.url()))
        .header("Authorization", format!("token {TOKEN}"));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let answer = request.send().unwrap();
    assert!(answer.status().is_success(), "{path}: {}", answer.status());
    answer.json().unwrap_or(Value::Null)
}

/// Someone's label `name` given to `key` on Gitea, as the API takes it (by the label's id).
fn label_on_gitea(s: &Setup, key: &IssueKey, name: &str) {
    let labels = on_gitea(
        s,
        reqwest::Method::GET,
        &format!("/repos/{}/labels", key.repo),
        None,
    );
    let id = labels
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap()["id"]
        .clone();
    on_gitea(
        s,
        reqwest::Method::POST,
        &format!("/repos/{}/issues/{}/labels", key.repo, key.number),
        Some(serde_json::json!({ "labels": [id] })),
    );
}

/// Someone's edit of `key` on Gitea (`PATCH` of the issue with `body`).
fn edit_on_gitea(s: &Setup, key: &IssueKey, body: Value) {
    on_gitea(
        s,
        reqwest::Method::PATCH,
        &format!("/repos/{}/issues/{}", key.repo, key.number),
        Some(body),
    );
}

/// A proposal from a checkout behind the branch's last run is computed on the checkout's older snapshot:
/// said, with the way to the branch's (audit 119: +29 working days where the branch gave +113).
#[test]
fn propose_from_a_checkout_behind_the_last_run_says_its_numbers_are_of_an_older_snapshot() {
    let s = setup(&DemoSpec::scaled(40));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let pm = pm_clone(&s);
    git(&pm, &["checkout", "-q", "-B", "main", "origin/main"]);
    edit_on_gitea(&s, &b, serde_json::json!({"title": "Renamed on Gitea"}));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    // A p/0 directive for `key` recorded in the clone and proposed: what propose said.
    let propose_p0 = |key: &IssueKey| {
        s.directive(
            &pm,
            "reprioritize",
            "First.",
            &key.to_string(),
            r#"{"priority": 0}"#,
        );
        let out = s.commitea(&pm, &["propose"]);
        ok(&out);
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = propose_p0(&a);
    assert!(
        stderr.contains("the checkout's snapshot is not main's (2 files differ)")
            && stderr.contains("git fetch origin && git rebase --autostash origin/main"),
        "{stderr}"
    );
    // Up to date, or ahead of the branch with a run of its own not pushed, nothing is said (audit 121).
    git(
        &pm,
        &["pull", "-q", "--rebase", "--autostash", "origin", "main"],
    );
    edit_on_gitea(&s, &a, serde_json::json!({"title": "Renamed again"}));
    ok(&s.commitea(&pm, &["run"]));
    let stderr = propose_p0(&b);
    assert!(!stderr.contains("snapshot is not"), "{stderr}");
}

/// Approved ops over changes made on Gitea after the proposal: a close of an issue someone reassigned and
/// retitled since is not carried out, and says why; a priority over one given since is written as approved,
/// and the change it writes over is said (audit 119: an issue retitled "NOT done" and reassigned was closed
/// by a close proposed before, without a word).
#[test]
fn an_approved_op_over_a_change_made_on_gitea_since_is_held_or_said() {
    let s = setup(&DemoSpec::scaled(40));
    let (prio, target, closing) = priority_and_close(&s);
    let file = std::fs::read_to_string(s.work.join("ops/pending/C-0001.yaml")).unwrap();
    assert!(
        file.contains("\nseen:\n") && file.contains(&format!("\n  {closing}: ")),
        "{file}"
    );
    let out = ok(&s.commitea(&s.work, &["propose"]));
    assert!(out.contains("C-0001 pull-request 1"), "{out}");

    // The engineer, on Gitea, after the proposal.
    let someone = s
        .snapshot
        .issues
        .values()
        .flat_map(|i| i.assignees.iter())
        .find(|a| !s.issue(&closing).assignees.contains(a))
        .unwrap()
        .clone();
    edit_on_gitea(
        &s,
        &closing,
        serde_json::json!({"title": "Taken over, NOT done", "assignees": [someone]}),
    );
    label_on_gitea(&s, &prio, "p/0");
    // The next run's refresh of the pull request says so before anyone merges (audit 192: it still
    // promised the close).
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let body = s.emu.state_pulls(&state_repo())[0].body.clone();
    assert!(
        body.starts_with(
            "> **Not carried out as it is:** ops/pending/C-0001.yaml would be skipped in part"
        ) && body.contains(&format!(
            "{closing} changed on Gitea after this was proposed (retitled"
        )) && body.contains("is not carried out over a change its approval did not see"),
        "{body}"
    );

    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    check_out_main(&s);
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "C-0001: {prio} changed on Gitea after this was proposed (p/0 given by "
        )) && stderr.contains("the approved change is written over it"),
        "{stderr}"
    );
    assert_eq!(s.issue(&closing).state, OpenState::Open, "{stderr}");
    assert!(s.issue(&prio).labels.contains(&target.to_owned()));
    let applied = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    // The record says over what the approved change was written, not the log alone (audit 135).
    assert!(
        applied.contains(&format!(
            "- result: applied\n    over: {prio} changed on Gitea after this was proposed (p/0 given by "
        )),
        "{applied}"
    );
    assert!(
        applied.contains(&format!(
            "{closing} changed on Gitea after this was proposed (retitled and {someone} assigned by "
        ))
            && applied
                .contains("close_issue is not carried out over a change its approval did not see"),
        "{applied}"
    );
}

/// A destructive op retargeted by hand in its pull request, onto an issue its proposal never saw, is not
/// carried out: neither the consequence its approval saw nor the check for changes since covers that issue
/// (audit 135: the edited close went through on an issue reassigned and retitled "NOT done").
#[test]
fn a_destructive_op_retargeted_by_hand_in_its_pull_request_is_not_carried_out() {
    let s = setup(&DemoSpec::scaled(40));
    let [proposed, edited] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let input =
        format!(r#"{{"ops":[{{"op":"close_issue","issue":"{proposed}"}}],"approved":true}}"#);
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    ok(&s.commitea(&s.work, &["propose"]));
    // Someone edits the file on the proposal's branch before the merge.
    let ed = branch_clone(&s, "commitea/C-0001");
    let file = ed.join("ops/pending/C-0001.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let retargeted = text.replacen(
        &format!("  issue: {proposed}\n"),
        &format!("  issue: {edited}\n"),
        1,
    );
    assert_ne!(text, retargeted);
    std::fs::write(&file, retargeted).unwrap();
    git(&ed, &["add", "ops"]);
    commit_as_pm(&ed, "close the other one instead");
    git(&ed, &["push", "-q", "origin", "HEAD:commitea/C-0001"]);
    // A run before the merge says so in the pull request (audit 137).
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let body = s.emu.state_pulls(&state_repo())[0].body.clone();
    assert!(
        body.starts_with("> **Not carried out as it is:**")
            && body.contains("does not match its ops, so it was edited after the proposal"),
        "{body}"
    );

    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    check_out_main(&s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert_eq!(s.issue(&edited).state, OpenState::Open);
    assert_eq!(s.issue(&proposed).state, OpenState::Open);
    let applied = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        applied.contains(&format!(
            "does not match its ops, so it was edited after the proposal: close_issue of {edited} is not carried out"
        )),
        "{applied}"
    );
}

/// An op file edited on its proposal's branch so that a run would not carry it out is said in the run's
/// log and leads its pull request's body, before anyone approves it (audit 135: a mistyped priority and a
/// renamed field read as sound proposals until the run after the merge).
#[test]
fn a_proposal_edited_into_one_a_run_refuses_says_so_in_its_pull_request() {
    let s = setup(&DemoSpec::scaled(40));
    // With a close beside it, the change goes through a pull request.
    let (_, target, _) = priority_and_close(&s);
    ok(&s.commitea(&s.work, &["propose"]));
    let ed = branch_clone(&s, "commitea/C-0001");
    let edit_branch = |from: &str, to: &str| {
        let file = ed.join("ops/pending/C-0001.yaml");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(from), "{text}");
        std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
        git(&ed, &["add", "ops"]);
        commit_as_pm(&ed, "edited by hand");
        git(&ed, &["push", "-q", "-f", "origin", "HEAD:commitea/C-0001"]);
    };
    let body = || s.emu.state_pulls(&state_repo())[0].body.clone();
    assert!(!body().contains("Not carried out"), "{}", body());

    edit_branch(&format!("  priority: {target}\n"), "  priority: p/7\n");
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pull request #1 (commitea/C-0001): ops/pending/C-0001.yaml would be skipped in part: op 1"),
        "{stderr}"
    );
    assert!(
        body().starts_with(
            "> **Not carried out as it is:** ops/pending/C-0001.yaml would be skipped in part: op 1"
        ),
        "{}",
        body()
    );
    // The hand edit is credited: in the pull request, and in the rebuilt branch's commit (audit 135: it
    // was folded into one commit of CommiTea's, naming only who asked).
    assert!(
        body().contains(
            "**Edited on its branch by:** pat (what is merged is the file as it is on this branch)"
        ),
        "{}",
        body()
    );
    let message = git(&s.bare, &["log", "-1", "--format=%B", "commitea/C-0001"]);
    assert!(
        message.contains("Co-authored-by: pat <p@example.com>"),
        "{message}"
    );

    git(
        &ed,
        &["pull", "-q", "--rebase", "origin", "commitea/C-0001"],
    );
    edit_branch("  priority: p/7\n", "  priorty: p/1\n");
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pull request #1 (commitea/C-0001): ops/pending/C-0001.yaml line"),
        "{stderr}"
    );
    let now = body();
    assert!(
        now.starts_with("> **Not carried out as it is:** ops/pending/C-0001.yaml line")
            && now.contains("priorty")
            && now.matches("Not carried out as it is").count() == 1,
        "{now}"
    );
}

/// An approved `remove_dep` whose dependency someone removed on Gitea meanwhile is already so, not refused
/// as a change its approval did not see (audit 128: proposing it again would have been refused as "does not
/// depend on").
#[test]
fn an_approved_removal_gitea_made_meanwhile_is_already_so() {
    let s = setup(&DemoSpec::scaled(40));
    let [key, dep] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let dependency =
        serde_json::json!({"owner": dep.repo.owner, "repo": dep.repo.name, "index": dep.number});
    let deps = format!("/repos/{}/issues/{}/dependencies", key.repo, key.number);
    on_gitea(&s, reqwest::Method::POST, &deps, Some(dependency.clone()));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let input = format!(
        r#"{{"ops":[{{"op":"remove_dep","issue":"{key}","dependsOn":"{dep}"}}],"approved":true}}"#
    );
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    let out = ok(&s.commitea(&s.work, &["propose"]));
    assert!(out.contains("C-0001 pull-request 1"), "{out}");
    // Someone removes it on Gitea first.
    on_gitea(&s, reqwest::Method::DELETE, &deps, Some(dependency));
    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    check_out_main(&s);
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let applied = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        applied.contains("already_so") && !applied.contains("not carried out"),
        "{applied}"
    );
    assert!(!stderr.contains("written over"), "{stderr}");
}

/// The first of `candidates` that `key` does not carry on Gitea.
fn lacking(s: &Setup, key: &IssueKey, candidates: [&'static str; 2]) -> &'static str {
    candidates
        .into_iter()
        .find(|p| !s.issue(key).labels.iter().any(|l| l == p))
        .unwrap()
}

/// Records one approved `apply_changes` call giving a quiet issue a priority it lacks and closing another:
/// that issue, its new priority and the issue closed.
fn priority_and_close(s: &Setup) -> (IssueKey, &'static str, IssueKey) {
    let [closing, prio] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let target = lacking(s, &prio, ["p/1", "p/3"]);
    let input = format!(
        r#"{{"ops":[{{"op":"set_priority","issue":"{prio}","priority":"{target}"}},{{"op":"close_issue","issue":"{closing}"}}],"approved":true}}"#
    );
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    (prio, target, closing)
}

/// A clone of the state repo at `branch`, as someone editing a proposal on its branch has.
/// A clone of the state repository's main into `name` under the setup's directory: a teammate's.
fn clone_as(s: &Setup, name: &str) -> PathBuf {
    let dir = s._tmp.path().join(name);
    git(
        s._tmp.path(),
        &[
            "clone",
            "-q",
            s.bare.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    );
    dir
}

fn branch_clone(s: &Setup, branch: &str) -> PathBuf {
    let dir = s._tmp.path().join("ed");
    git(
        s._tmp.path(),
        &[
            "clone",
            "-q",
            "-b",
            branch,
            s.bare.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    );
    dir
}

/// Op files giving `key` the priorities in `order`, made at one snapshot (C-0001, C-0002, …) and sent
/// as pull requests; what `propose` printed.
fn priorities_proposed(s: &Setup, key: &IssueKey, order: &[&str]) -> String {
    for p in order {
        let input =
            format!(r#"{{"ops":[{{"op":"set_priority","issue":"{key}","priority":"{p}"}}]}}"#);
        ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["propose", "-s"])
        .arg(&s.work)
        .env_remove("COMMITEA_STATE")
        .env("COMMITEA_SERVER", s.emu.url())
        .env("COMMITEA_GITEA_TOKEN", TOKEN)
        .env("COMMITEA_APPROVALS_ADDITIVE_DIRECT", "false")
        .output()
        .unwrap();
    ok(&out)
}

/// Two proposals made at one snapshot, merged and carried out one run apart: the second writes over the
/// first's change, and says it is the first file's, carried out by CommiTea — not a change someone made on
/// Gitea (audit 121).
#[test]
fn writing_over_an_earlier_approved_change_names_that_file() {
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    let other = lacking(&s, &key, ["p/3", "p/1"]);
    let proposed = priorities_proposed(&s, &key, &[other, "p/0"]);
    assert!(proposed.contains("C-0002 pull-request 2"), "{proposed}");
    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    check_out_main(&s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert!(s.issue(&key).labels.contains(&other.to_owned()));
    // By hand, with the token CommiTea writes with: a label C-0001 did not write is no carrying out of
    // it (audit 124: a p/2 added so was credited to the file that wrote another).
    let hand = ["p/2", "p/3", "p/1"]
        .into_iter()
        .find(|p| *p != other)
        .unwrap();
    label_on_gitea(&s, &key, hand);
    // And C-0001's own label taken off by hand: no carrying out of C-0001 either, which gave it (audit
    // 139: credited to the directive that had set it).
    let labels = on_gitea(
        &s,
        reqwest::Method::GET,
        &format!("/repos/{}/labels", key.repo),
        None,
    );
    let id = labels
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == other)
        .unwrap()["id"]
        .clone();
    on_gitea(
        &s,
        reqwest::Method::DELETE,
        &format!("/repos/{}/issues/{}/labels/{id}", key.repo, key.number),
        None,
    );
    s.emu.merge_pull(&state_repo(), 2, "pat").unwrap();
    check_out_main(&s);
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "C-0002: {key} changed on Gitea after this was proposed ({other} given and "
        )) && stderr.contains(" taken off by commitea-bot carrying out C-0001 ")
            && stderr.contains(&format!("{hand} given by commitea-bot 20"))
            // Taken off by hand, C-0001's label is what C-0002 writes: no change it writes over.
            && !stderr.contains(&format!("{other} taken off by commitea-bot")),
        "{stderr}"
    );
    assert!(s.issue(&key).labels.contains(&"p/0".to_owned()));
}

/// A run stopped partway through an approved op (p/0 given, the old priority not yet taken off) left a
/// change by CommiTea's own hand toward what the op writes: the next run finishes the op and says nothing
/// was written over (audit 160: "changed on Gitea after this was proposed (p/0 given by commitea-bot …);
/// the approved change is written over it", kept as `over:` in the record).
#[test]
fn an_op_a_stopped_run_left_half_done_is_finished_not_written_over() {
    let s = setup(&DemoSpec::scaled(40));
    let key = s
        .quiet_issues(10)
        .into_iter()
        .find(|k| {
            let labels = &s.issue(k).labels;
            labels.iter().any(|l| l.starts_with("p/")) && !labels.iter().any(|l| l == "p/0")
        })
        .expect("a quiet issue with a priority other than p/0");
    let old = s
        .issue(&key)
        .labels
        .into_iter()
        .find(|l| l.starts_with("p/"))
        .unwrap();
    let proposed = priorities_proposed(&s, &key, &["p/0"]);
    assert!(proposed.contains("C-0001 pull-request 1"), "{proposed}");
    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    check_out_main(&s);
    // What a run killed between its two writes leaves on Gitea, by the token CommiTea writes with.
    label_on_gitea(&s, &key, "p/0");
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("changed on Gitea after this was proposed"),
        "{stderr}"
    );
    let labels = s.issue(&key).labels;
    assert!(
        labels.contains(&"p/0".to_owned()) && !labels.contains(&old),
        "{labels:?}"
    );
    let applied = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        applied.contains("- result: applied\n") && !applied.contains("over:"),
        "{applied}"
    );
}

/// Two merged proposals giving one issue two priorities: the one merged last is what Gitea ends with,
/// whatever their ids (audit 94: applied in file-name order, the earlier merge won).
#[test]
fn proposals_are_applied_in_the_order_they_were_merged() {
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    let other = lacking(&s, &key, ["p/3", "p/1"]);
    let proposed = priorities_proposed(&s, &key, &["p/0", other]);
    assert!(
        proposed.contains("C-0001 pull-request 1") && proposed.contains("C-0002 pull-request 2"),
        "{proposed}"
    );
    // C-0002 merged first, C-0001 (p/0) last: p/0 is the decision that stands.
    s.emu.merge_pull(&state_repo(), 2, "pat").unwrap();
    s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
    check_out_main(&s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let labels = s.issue(&key).labels;
    assert!(labels.contains(&"p/0".to_owned()), "{labels:?}");
    assert!(!labels.contains(&other.to_owned()), "{labels:?}");
    // The earlier merge is not written first only to be written over, and says so (audit 119: both
    // "applied", the label flipping twice on Gitea).
    let earlier = s.on_branch("main", "ops/applied/C-0002.yaml").unwrap();
    assert!(
        earlier.contains("result: skipped")
            && earlier.contains(&format!("C-0001, merged after this, sets {key}"))
            && earlier.contains("priority too: the later decision stands"),
        "{earlier}"
    );
    assert!(
        !s.emu.writes().iter().any(|w| w.contains(other)),
        "{:?}",
        s.emu.writes()
    );
}

/// A merged proposal edited afterwards by a push straight to the branch: the merge approved the text it
/// merged, not the edit (audit 94: the edit closed another issue under the pull request's approval).
#[test]
fn a_merged_proposal_edited_by_a_straight_push_is_not_approved_by_the_merge() {
    let s = setup(&DemoSpec::scaled(40));
    let [approved, other] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let (id, number) = propose_close(&s, &approved);
    s.emu.merge_pull(&state_repo(), number, "pat").unwrap();
    check_out_main(&s);
    let path = format!("ops/pending/{id}.yaml");
    let merged = std::fs::read_to_string(s.work.join(&path)).unwrap();
    let edited = merged.replace(
        &format!("issue: {approved}\n"),
        &format!("issue: {other}\n"),
    );
    assert_ne!(edited, merged);
    push_straight(&s, &id, &edited);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert_eq!(s.issue(&other).state, OpenState::Open);
    assert_eq!(s.issue(&approved).state, OpenState::Open);
    let applied = s
        .on_branch("main", &format!("ops/applied/{id}.yaml"))
        .expect("the file is used up");
    assert!(
        applied.contains("result: skipped") && applied.contains("is no merged pull request"),
        "{applied}"
    );
    assert!(
        !applied.contains(&format!("pull_request: {number}")),
        "{applied}"
    );
}

#[test]
fn a_proposal_edited_on_its_branch_is_approved_by_its_merge_in_every_gitea_merge_style() {
    let s = setup(&DemoSpec::scaled(60));
    let issues = s.quiet_issues(5);
    let styles = [
        MergeStyle::Merge,
        MergeStyle::Rebase,
        MergeStyle::RebaseMerge,
        MergeStyle::Squash,
        MergeStyle::FastForwardOnly,
    ];
    for (key, style) in issues.iter().zip(styles) {
        close_by_an_edited_proposal_merged(&s, key, style);
    }
}

/// Proposes closing `key`, edits the proposal on its branch, moves main on, merges it in `style` as pat,
/// runs, and checks that the merge approved it.
fn close_by_an_edited_proposal_merged(s: &Setup, key: &IssueKey, style: MergeStyle) {
    let version = s.emu.options().version.clone();
    let (id, number) = propose_close(s, key);
    // The PM edits the proposal on its branch: the file comes from the branch's second commit.
    let path = format!("ops/pending/{id}.yaml");
    edit_on_branch(
        s,
        &format!("commitea/{id}"),
        &path,
        "summary: ",
        "# edited by hand\nsummary: ",
    );
    // And adds a note after: the file's text comes from a commit before the branch's tip.
    add_on_branch(s, &format!("commitea/{id}"), &format!("note-{id}.md"));
    // With main moved on, a rebase replays the branch's commits as new ones.
    if style != MergeStyle::FastForwardOnly {
        move_main(s, &format!("{id}.md"));
    }
    s.emu
        .merge_pull_as(&state_repo(), number, "pat", style)
        .unwrap();
    check_out_main(s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let applied = s
        .on_branch("main", &format!("ops/applied/{id}.yaml"))
        .unwrap_or_else(|| panic!("{version} {style:?}: no ops/applied/{id}.yaml"));
    assert!(
        applied.contains(&format!("pull_request: {number}")),
        "{version} {style:?}: {applied}"
    );
    assert!(
        applied.contains("merged_by: pat"),
        "{version} {style:?}: {applied}"
    );
    assert_eq!(
        s.issue(key).state,
        OpenState::Closed,
        "{version} {style:?}: {applied}"
    );
}

#[test]
fn a_gitea_older_than_the_merged_commit_endpoint_still_approves_by_merge() {
    // `commits/{sha}/pull` came in Gitea 1.22; 1.20 also lists a pull request's commits without files,
    // and a file without a status. Each older server: a merge, a rebase and a squash still approve.
    for version in ["1.21.11", "1.20.6"] {
        let s = setup_on(&DemoSpec::scaled(40), version);
        let issues = s.quiet_issues(3);
        let styles = [MergeStyle::Merge, MergeStyle::Rebase, MergeStyle::Squash];
        for (key, style) in issues.iter().zip(styles) {
            close_by_an_edited_proposal_merged(&s, key, style);
        }
        // Asked where it is not: the router's plain 404, which the run took for the old server it is.
        let asked = s
            .emu
            .counts()
            .iter()
            .filter(|(k, _)| k.contains("/commits/") && k.ends_with("/pull"))
            .map(|(_, n)| *n)
            .sum::<u64>();
        assert!(asked > 0, "{version}: {:?}", s.emu.counts());
        // On 1.20 the rebased proposal's commits were each asked for their files.
        let files_asked = s.emu.counts().keys().any(|k| k.contains("/git/commits/"));
        assert_eq!(files_asked, version == "1.20.6", "{:?}", s.emu.counts());
    }
}

#[test]
fn a_file_pushed_straight_before_a_rebased_pull_request_is_not_approved_by_it() {
    let s = setup(&DemoSpec::scaled(40));
    let [approved, victim] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let (id, number) = propose_close(&s, &approved);
    let path = format!("ops/pending/{id}.yaml");
    let branch = format!("commitea/{id}");
    edit_on_branch(&s, &branch, &path, "summary: ", "summary: (edited) ");
    edit_on_branch(&s, &branch, &path, "summary: ", "summary: (again) ");
    // Mallory pushes a destructive file straight to main; then the PM's three-commit proposal is rebased onto it.
    push_straight(
        &s,
        "C-0099",
        &op_file(
            "C-0099",
            &format!("- op: close_issue\n  issue: {victim}\n"),
            true,
        ),
    );
    s.emu
        .merge_pull_as(&state_repo(), number, "pat", MergeStyle::Rebase)
        .unwrap();
    check_out_main(&s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert_eq!(s.issue(&approved).state, OpenState::Closed);
    assert_eq!(s.issue(&victim).state, OpenState::Open);
    let refused = s.on_branch("main", "ops/applied/C-0099.yaml").unwrap();
    assert!(refused.contains("is no merged pull request"), "{refused}");
    assert!(!refused.contains("pull_request:"), "{refused}");
}

#[test]
fn a_protected_main_sends_additive_proposals_through_pull_requests_and_the_run_says_what_to_do() {
    let s = setup(&DemoSpec::scaled(40));
    s.emu.protect_branch(&state_repo(), "main").unwrap();
    let [key] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    let input = format!(
        r#"{{"ops":[{{"op":"set_priority","issue":"{key}","priority":"p/0"}}],"approved":true}}"#
    );
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    let out = s.commitea(&s.work, &["propose"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        ok(&out).trim(),
        "C-0001 pull-request 1 commitea/C-0001",
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "the server refuses pushes to main (Gitea: Not allowed to push to protected branch main)"
        ),
        "{stderr}"
    );
    let main = git(&s.bare, &["rev-parse", "main"]);
    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "the server refused the run's commit on main: Gitea: Not allowed to push to protected branch main"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("push allowlist"), "{stderr}");
    assert!(
        !stderr.contains("running again"),
        "a refusal is no race: {stderr}"
    );
    assert_eq!(git(&s.bare, &["rev-parse", "main"]), main);
}

#[test]
fn protected_proposal_branches_are_said_plainly_and_a_kept_branch_stops_nothing() {
    let s = setup(&DemoSpec::scaled(40));
    let [first, second] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let (id, number) = propose_close(&s, &first);
    s.emu.protect_branch(&state_repo(), "commitea/*").unwrap();
    close_pull(&s, number);
    // Closed without merging: its branch cannot be deleted, which is said, and the run goes on.
    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "Gitea: branch commitea/{id} is protected from deletion"
        )),
        "{stderr}"
    );
    assert!(remote_branches(&s).contains(&format!("commitea/{id}")));
    // A new proposal cannot be pushed: the error says why and what to change.
    let input = format!(r#"{{"ops":[{{"op":"close_issue","issue":"{second}"}}],"approved":true}}"#);
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    let out = s.commitea(&s.work, &["propose"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Gitea: Not allowed to push to protected branch commitea/C-0002"),
        "{stderr}"
    );
    assert!(stderr.contains("leave those branches out"), "{stderr}");
    assert!(
        s.work.join("ops/pending/C-0002.yaml").exists(),
        "a proposal that could not be pushed stays in the checkout"
    );
}

#[test]
fn a_due_date_keeps_its_day_on_a_server_west_or_east_of_utc() {
    for hours in [-8, 13] {
        let zone = chrono::FixedOffset::east_opt(hours * 3600).unwrap();
        let s = setup_with(
            &DemoSpec::scaled(40),
            EmulatorOptions {
                zone,
                ..EmulatorOptions::default()
            },
        );
        let (id, repo, day) = s
            .snapshot
            .milestones
            .iter()
            .flat_map(|(r, ms)| ms.iter().map(move |m| (r, m)))
            .find(|(_, m)| m.state == OpenState::Open && m.due_on.is_some())
            .map(|(r, m)| (m.id, r.clone(), m.due_date().unwrap()))
            .unwrap();
        let shown = |s: &Setup| {
            s.emu.with_dataset(|d| {
                d.milestones(&repo)
                    .iter()
                    .find(|m| m.id == id)
                    .and_then(|m| m.due_on)
                    .map(|t| t.with_timezone(&zone).date_naive())
            })
        };
        // Gitea shows the day in its zone (the end of it, as its web UI stores a deadline).
        assert_eq!(shown(&s), Some(day), "UTC{hours:+}");
        // The sync reads the day Gitea shows, not the day of the same moment in UTC.
        ok(&s.commitea(&s.work, &["run", "--push"]));
        let synced =
            commitea::state::Snapshot::load(&commitea::state::Layout::new(&s.work)).unwrap();
        let read = synced.milestones[&repo]
            .iter()
            .find(|m| m.id == id)
            .unwrap();
        assert_eq!(read.due_date(), Some(day), "UTC{hours:+}");
        // A new due date reaches Gitea as that day in its zone, and is then already so.
        s.directive(
            &s.work,
            "set-deadline",
            "Give it until June.",
            &format!("milestone {id}"),
            r#"{"due": "2027-06-30"}"#,
        );
        ok(&s.commitea(&s.work, &["propose"]));
        s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
        check_out_main(&s);
        ok(&s.commitea(&s.work, &["run", "--push"]));
        let june = chrono::NaiveDate::from_ymd_opt(2027, 6, 30);
        assert_eq!(shown(&s), june, "UTC{hours:+}");
        let edits = |s: &Setup| {
            s.emu
                .writes()
                .iter()
                .filter(|w| w.starts_with("PATCH") && w.contains("/milestones/"))
                .count()
        };
        // Noon UTC is the 30th up to UTC+11; further east the answer shows the 1st, and noon there is sent.
        assert_eq!(edits(&s), if hours > 11 { 2 } else { 1 }, "UTC{hours:+}");
        let applied = s
            .on_branch("main", "ops/applied/D-0001.yaml")
            .unwrap_or_default();
        assert!(
            applied.contains("result: applied"),
            "UTC{hours:+}: {applied}"
        );
        check_out_main(&s);
        let out = s.commitea(&s.work, &["run", "--push"]);
        ok(&out);
        assert_eq!(edits(&s), if hours > 11 { 2 } else { 1 }, "UTC{hours:+}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("does not carry"), "UTC{hours:+}: {stderr}");
    }
}

#[test]
fn a_run_killed_between_its_apply_and_its_commit_leaves_one_true_record() {
    // A job killed after the apply stage wrote `ops/applied/C-0001.yaml` and before its commit: HEAD
    // still has the pending file, the disk has the record, Gitea has the changes. The next run found
    // everything "already so", kept the true record as "another proposal's" and left it untracked.
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    let ops = format!(
        "- op: set_priority\n  issue: {key}\n  priority: p/0\n\
         - op: create_issue\n  title: Captured after a kill\n  repo: {}\n",
        key.repo
    );
    // The pusher's clock is five minutes ahead of the server's: the issue the killed run filed is dated
    // before the commit that brought its file.
    s.emu
        .with_dataset(|d| d.set_clock(chrono::Utc::now() - chrono::Duration::minutes(5)));
    push_straight(&s, "C-0001", &op_file("C-0001", &ops, false));
    ok(&s.commitea(&s.work, &["run"]));
    // The state a kill between the record and the commit leaves.
    git(&s.work, &["reset", "-q", "--mixed", "HEAD~1"]);
    crate::support::killed_writer(&s.work, "commitea run");
    assert!(s.work.join("ops/applied/C-0001.yaml").exists());
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let record = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert_eq!(record.matches("result: applied").count(), 1, "{record}");
    assert_eq!(record.matches("result: created").count(), 1, "{record}");
    assert!(!record.contains("already_so"), "{record}");
    assert!(
        s.on_branch("main", "ops/applied/C-0001.2.yaml").is_none(),
        "{out:?}"
    );
    assert_eq!(git(&s.work, &["status", "--porcelain"]), "", "{out:?}");
    // One issue filed, not two.
    let filed = s.emu.with_dataset(|d| {
        d.issues(&key.repo)
            .iter()
            .filter(|i| i.title == "Captured after a kill")
            .count()
    });
    assert_eq!(filed, 1);
    // Another file asking for an issue of the same title the same day gets its own: the first is on
    // record as C-0001's.
    let again = format!(
        "- op: create_issue\n  title: Captured after a kill\n  repo: {}\n",
        key.repo
    );
    push_straight(&s, "C-0002", &op_file("C-0002", &again, false));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let numbers = s.emu.with_dataset(|d| {
        d.issues(&key.repo)
            .iter()
            .filter(|i| i.title == "Captured after a kill")
            .map(|i| i.number)
            .collect::<Vec<_>>()
    });
    assert_eq!(numbers.len(), 2, "{numbers:?}");
    let second = s.on_branch("main", "ops/applied/C-0002.yaml").unwrap();
    assert!(
        second.contains(&format!("{}#{}", key.repo, numbers.iter().max().unwrap())),
        "{second}"
    );
}

#[test]
fn after_a_kill_a_second_proposal_of_the_same_title_gets_its_own_issue() {
    // C-0002 filed an issue and the run was killed before its commit; then C-0001, of the same title,
    // was approved. The next run gave C-0002's issue to C-0001 and filed C-0002 a second one: crossed
    // records, and advice to close one of two issues two proposals asked for.
    let s = setup(&DemoSpec::scaled(40));
    let repo = s.quiet_issue_without("p/0").repo;
    s.emu
        .with_dataset(|d| d.set_clock(chrono::Utc::now() - chrono::Duration::minutes(5)));
    let file = |id: &str, estimate: &str| {
        op_file(
            id,
            &format!(
                "- op: create_issue\n  title: Add a resume button\n  labels: [{estimate}]\n  repo: {repo}\n"
            ),
            false,
        )
    };
    push_straight(&s, "C-0002", &file("C-0002", "est/1d"));
    ok(&s.commitea(&s.work, &["run"]));
    git(&s.work, &["reset", "-q", "--mixed", "HEAD~1"]);
    crate::support::killed_writer(&s.work, "commitea run");
    let stopped = std::fs::read_to_string(s.work.join("ops/applied/C-0002.yaml")).unwrap();
    // Approved beside the stopped record, which stays uncommitted on disk.
    std::fs::write(
        s.work.join("ops/pending/C-0001.yaml"),
        file("C-0001", "est/2d"),
    )
    .unwrap();
    git(&s.work, &["add", "ops/pending/C-0001.yaml"]);
    git(&s.work, &["commit", "-qm", "approve C-0001"]);
    git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
    assert!(git(&s.work, &["status", "--porcelain"]).contains("?? ops/applied/"));
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("duplicate"),
        "{out:?}"
    );
    let issues: Vec<(u64, Vec<String>)> = s.emu.with_dataset(|d| {
        d.issues(&repo)
            .iter()
            .filter(|i| i.title == "Add a resume button")
            .map(|i| (i.number, i.labels.clone()))
            .collect()
    });
    assert_eq!(issues.len(), 2, "{issues:?}");
    let first = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    let second = s.on_branch("main", "ops/applied/C-0002.yaml").unwrap();
    // C-0002 keeps the issue its stopped run filed; C-0001's is another, with its own estimate.
    let filed_by = |record: &str| {
        issues
            .iter()
            .find(|(n, _)| record.contains(&format!("{repo}#{n}\n")))
            .cloned()
            .unwrap_or_else(|| panic!("{record}"))
    };
    assert!(stopped.contains(&format!("{repo}#{}\n", filed_by(&second).0)));
    assert_ne!(filed_by(&first).0, filed_by(&second).0);
    assert!(
        filed_by(&first).1.contains(&"est/2d".to_owned()),
        "{issues:?}"
    );
    assert!(
        filed_by(&second).1.contains(&"est/1d".to_owned()),
        "{issues:?}"
    );
}

#[test]
fn a_later_file_about_what_a_held_file_changes_waits_behind_it() {
    // C-0001 (held: it also names a repository taken out of the config) set an estimate that C-0002
    // then changed; C-0002 was carried out, and when the repository came back C-0001 undid it.
    let s = setup(&DemoSpec::scaled(40));
    let keys = s.quiet_issues(8);
    let a = keys[0].clone();
    let b = keys
        .iter()
        .find(|k| k.repo != a.repo)
        .cloned()
        .expect("two repositories");
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let config = std::fs::read_to_string(s.work.join("commitea.yaml")).unwrap();
    let line = format!("  - {}\n", b.repo);
    std::fs::write(s.work.join("commitea.yaml"), config.replacen(&line, "", 1)).unwrap();
    git(&s.work, &["commit", "-qam", "leave a repository out"]);
    push_straight(
        &s,
        "C-0001",
        &op_file(
            "C-0001",
            &format!(
                "- op: set_estimate\n  issue: {a}\n  estimate: est/2d\n\
                 - op: set_estimate\n  issue: {b}\n  estimate: est/2d\n"
            ),
            false,
        ),
    );
    push_straight(
        &s,
        "C-0002",
        &op_file(
            "C-0002",
            &format!("- op: set_estimate\n  issue: {a}\n  estimate: est/1w\n"),
            false,
        ),
    );
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "ops/pending/C-0002.yaml changes {a}, as C-0001 does, which waits: it waits behind C-0001"
        )),
        "{err}"
    );
    assert!(s.on_branch("main", "ops/pending/C-0002.yaml").is_some());
    // Back in the config: both, in their order; the later decision stands.
    std::fs::write(s.work.join("commitea.yaml"), &config).unwrap();
    git(&s.work, &["commit", "-qam", "the repository is back"]);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let labels = s.issue(&a).labels;
    assert!(labels.contains(&"est/1w".to_owned()), "{labels:?}");
    assert!(s.issue(&b).labels.contains(&"est/2d".to_owned()));
}

#[test]
fn an_approved_file_about_a_repository_taken_out_of_the_config_waits_for_it() {
    // Taking a repository out of `repositories:` had its approved ops used up as "not on the server",
    // which they were not; putting it back then found them gone for good.
    let s = setup(&DemoSpec::scaled(40));
    let key = s.quiet_issue_without("p/0");
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let config = std::fs::read_to_string(s.work.join("commitea.yaml")).unwrap();
    let line = format!("  - {}\n", key.repo);
    assert!(config.contains(&line), "{config}");
    std::fs::write(s.work.join("commitea.yaml"), config.replacen(&line, "", 1)).unwrap();
    git(&s.work, &["commit", "-qam", "leave a repository out"]);
    push_priority(&s, &key);
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "ops/pending/C-0001.yaml names {}, which commitea.yaml does not name: it stays pending",
            key.repo
        )),
        "{err}"
    );
    assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_some());
    assert!(s.on_branch("main", "ops/applied/C-0001.yaml").is_none());
    assert!(!s.issue(&key).labels.contains(&"p/0".to_owned()));
    // The changes page says why it waits, not "applied at the next run" (audit 168).
    let page = std::fs::read_to_string(s.work.join("public/changes.html")).unwrap();
    assert!(
        page.contains(&format!(
            "approved, but it names {}, which commitea.yaml does not name: it stays pending",
            key.repo
        )) && !page.contains("applied at the next run"),
        "{page}"
    );
    // What changed is said as what it is: the repository left the plan, its issues are not "gone".
    let message = git(&s.work, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(&format!("{} no longer synced (", key.repo))
            && !message.contains("gone from Gitea"),
        "{message}"
    );
    // And so does the standup (audit 133: "… left it (gone from Gitea)", "37 issues gone").
    let standup = std::fs::read_to_string(s.work.join("public/standup.html")).unwrap();
    assert!(
        !standup.contains("gone from Gitea") && !standup.contains("issues gone"),
        "{standup}"
    );
    // Back in the config, the file is carried out.
    std::fs::write(s.work.join("commitea.yaml"), &config).unwrap();
    git(&s.work, &["commit", "-qam", "the repository is back"]);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert!(s.issue(&key).labels.contains(&"p/0".to_owned()));
    assert!(s.on_branch("main", "ops/applied/C-0001.yaml").is_some());
    // Its issues joined the plan with it: not "new" (audit 168: "51 new" of a repository put in).
    let message = git(&s.work, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(&format!("{} now synced (", key.repo))
            && message.contains(" joined the plan with it)")
            && message.contains("; 0 new"),
        "{message}"
    );
}

#[test]
fn an_approved_file_gitea_refuses_as_archived_waits_and_the_sync_says_the_repository_is_archived() {
    // Gitea answers 423 to a new issue or dependency in an archived repository (before 1.22, 404): the
    // approved file was used up as "failed", lost when the repository is unarchived.
    for version in ["1.27.1", "1.21.11"] {
        let s = setup_on(&DemoSpec::scaled(40), version);
        let key = push_create_into_archive(&s);
        let main_before = git(&s.bare, &["rev-parse", "main"]);
        let out = s.commitea(&s.work, &["run", "--push", "--full"]);
        let err = String::from_utf8_lossy(&out.stderr);
        // The run's work is pushed, and the job fails: the reason stays until someone acts (audit
        // 134: a green job on every run hid it).
        assert_eq!(out.status.code(), Some(1), "{version}: {err}");
        assert_ne!(
            git(&s.bare, &["rev-parse", "main"]),
            main_before,
            "{version}: pushed"
        );
        assert!(
            err.contains("the run's forecast and site are done, but approved changes did not reach Gitea: C-0001 (Gitea refuses to file a new issue"),
            "{version}: {err}"
        );
        assert!(
            err.contains(&format!("{} is archived on Gitea (read-only)", key.repo)),
            "{version}: {err}"
        );
        assert!(
            err.contains("ops/pending/C-0001.yaml: Gitea refuses to file a new issue")
                && err.contains("it is archived (read-only)")
                && err.contains("the file stays pending"),
            "{version}: {err}"
        );
        assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_some());
        assert!(s.on_branch("main", "ops/applied/C-0001.yaml").is_none());
        // The Changes page says so, not "applied at the next run" (audit 146).
        let page = std::fs::read_to_string(s.work.join("public/changes.html")).unwrap();
        assert!(
            page.contains("approved, but Gitea refuses to file a new issue"),
            "{version}: {page}"
        );
    }
}

/// Archives the repository of a quiet issue and pushes C-0001, filing a new issue there, straight to the
/// branch: an approved file Gitea refuses whole (423). The issue whose repository it is.
fn push_create_into_archive(s: &Setup) -> IssueKey {
    let key = s.quiet_issue_without("p/0");
    s.emu.with_dataset(|d| d.archive(&key.repo));
    let ops = format!(
        "- op: create_issue\n  title: Filed into an archive\n  repo: {}\n",
        key.repo
    );
    push_straight(s, "C-0001", &op_file("C-0001", &ops, false));
    key
}

#[test]
fn a_refusal_stands_on_the_pages_until_a_run_carries_the_file_out() {
    // Only the refused run's own page said so: `commitea render` after it called the file "approved:
    // applied at the next run" (audit 149), as the refusal was in no file but the commit message.
    let s = setup(&DemoSpec::scaled(40));
    let key = push_create_into_archive(&s);
    assert_eq!(
        s.commitea(&s.work, &["run", "--push"]).status.code(),
        Some(1)
    );
    let record = s
        .on_branch("main", "forecast/refused.json")
        .expect("recorded");
    assert!(
        record.contains("\"id\": \"C-0001\"")
            && record.contains("Gitea refuses to file a new issue"),
        "{record}"
    );
    ok(&s.commitea(&s.work, &["render"]));
    let page = std::fs::read_to_string(s.work.join("public/changes.html")).unwrap();
    assert!(
        page.contains("approved, but Gitea refuses to file a new issue")
            && page.contains("(since ")
            && !page.contains("applied at the next run"),
        "{page}"
    );
    // Met again, the refusal keeps its day: the record, and the branch, change only with Gitea's answer.
    let head = git(&s.bare, &["rev-parse", "main"]);
    assert_eq!(
        s.commitea(&s.work, &["run", "--push"]).status.code(),
        Some(1)
    );
    assert_eq!(
        s.on_branch("main", "forecast/refused.json").as_deref(),
        Some(record.as_str())
    );
    assert_eq!(
        git(&s.bare, &["rev-parse", "main"]),
        head,
        "no commit for the same refusal"
    );
    // Unarchived, the file is carried out and the record leaves.
    s.emu.with_dataset(|d| d.unarchive(&key.repo));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert!(s.on_branch("main", "ops/applied/C-0001.yaml").is_some());
    assert!(s.on_branch("main", "forecast/refused.json").is_none());
    ok(&s.commitea(&s.work, &["render"]));
    let page = std::fs::read_to_string(s.work.join("public/changes.html")).unwrap();
    assert!(!page.contains("Gitea refuses"), "{page}");
}

#[test]
fn a_refused_file_taken_out_by_hand_takes_its_refusal_with_it() {
    // The record outlived the file, until some other file was carried out (audit 156).
    let s = setup(&DemoSpec::scaled(40));
    push_create_into_archive(&s);
    assert_eq!(
        s.commitea(&s.work, &["run", "--push"]).status.code(),
        Some(1)
    );
    assert!(s.on_branch("main", "forecast/refused.json").is_some());
    git(&s.work, &["rm", "-q", "ops/pending/C-0001.yaml"]);
    commit_as_pm(&s.work, "drop the change Gitea refuses");
    git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert!(s.on_branch("main", "forecast/refused.json").is_none());
}

#[test]
fn an_approved_file_a_read_scoped_token_cannot_write_waits_whole() {
    // A token made with read scopes (or a user who only reads the issues) got 403 on every write, and
    // every approved file was used up as "failed", each to be proposed and approved again.
    let s = setup_with(
        &DemoSpec::scaled(40),
        EmulatorOptions {
            read_scoped_token: true,
            ..EmulatorOptions::default()
        },
    );
    let key = s.quiet_issue_without("p/0");
    push_priority(&s, &key);
    let out = s.commitea(&s.work, &["run", "--push"]);
    assert_eq!(out.status.code(), Some(1));
    // The pushed commit says it too (audit 147: only the failed job's log did).
    let message = git(&s.bare, &["log", "-1", "--format=%B", "main"]);
    assert!(
        message.contains(
            "Refused by Gitea, still pending: C-0001 (Gitea refuses to set the priority of"
        ),
        "{message}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ops/pending/C-0001.yaml: Gitea refuses to set the priority of")
            && err.contains("required=[write:issue]")
            && err.contains("it needs write access to its issues")
            && err.contains("the file stays pending"),
        "{err}"
    );
    assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_some());
    assert!(s.on_branch("main", "ops/applied/C-0001.yaml").is_none());
    assert!(!s.issue(&key).labels.contains(&"p/0".to_owned()));
}

#[test]
fn a_new_issue_whose_dependency_gitea_refuses_is_recorded_as_filed_and_said() {
    // The issue was filed, yet its record said "failed" with no issue: no proposal owned it, and the
    // commit said "Applied" (audit 79).
    let key = setup(&DemoSpec::scaled(40)).quiet_issue_without("p/0");
    let s = setup_with(
        &DemoSpec::scaled(40),
        EmulatorOptions {
            dependencies_disabled: [key.repo.clone()].into(),
            ..EmulatorOptions::default()
        },
    );
    let ops = format!(
        "- op: create_issue\n  title: Waits on another\n  repo: {}\n  deps: [{key}]\n",
        key.repo
    );
    push_straight(&s, "C-0001", &op_file("C-0001", &ops, false));
    let out = s.commitea(&s.work, &["run", "--push"]);
    // Pushed, and failed: the file is used up, so this run is the one that can say it (audit 192: exit
    // 0, while the same cause on a set_milestone failed the run).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("issues were filed short of their approval: C-0001 (filed ")
            && stderr.contains("Those files are used up"),
        "{stderr}"
    );
    let applied = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        applied.contains("result: created")
            && applied.contains(&format!("issue: {}#", key.repo))
            && applied.contains(&format!("its dependency on {key} failed")),
        "{applied}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("WARN") && err.contains(&format!("but its dependency on {key} failed")),
        "{err}"
    );
    let message = git(&s.work, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(
            "Not whole on Gitea (see ops/applied/ and the Changes page): C-0001, partly applied."
        ) && !message.contains("Applied on Gitea"),
        "{message}"
    );
}

#[test]
fn a_new_issue_gitea_files_without_its_labels_and_milestone_says_so() {
    // Gitea files an issue for a user who may not write the issues and drops its labels and milestone
    // with a 201 (`CreateIssue`): the record said it was filed as asked.
    let s = setup_with(
        &DemoSpec::scaled(40),
        EmulatorOptions {
            issues_read_only: true,
            ..EmulatorOptions::default()
        },
    );
    let repo = s.quiet_issue_without("p/0").repo;
    let milestone = s.snapshot.milestones[&repo]
        .iter()
        .find(|m| m.state == OpenState::Open)
        .unwrap()
        .id;
    let ops = format!(
        "- op: create_issue\n  title: Filed by a reader\n  repo: {repo}\n  labels: [est/1d]\n  milestone: {milestone}\n"
    );
    push_straight(&s, "C-0001", &op_file("C-0001", &ops, false));
    let out = s.commitea(&s.work, &["run", "--push"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("issues were filed short of their approval: C-0001 (filed ")
            && stderr.contains("Gitea dropped its label est/1d"),
        "{stderr}"
    );
    let applied = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(
        applied.contains("result: created")
            && applied.contains(&format!(
                "Gitea dropped its label est/1d, milestone {milestone}"
            )),
        "{applied}"
    );
    let message = git(&s.work, &["log", "-1", "--format=%B"]);
    assert!(message.contains("C-0001, partly applied"), "{message}");
}

/// A token whose user may only read the issues: Gitea refuses a label on someone else's issue (403), and
/// on the user's own issue answers 201 while keeping its milestone. Neither is reported applied; both
/// files wait, whole, for a token that can write (audit 94: the emulator took both writes).
#[test]
fn writes_of_a_user_who_may_only_read_the_issues_wait_and_are_not_reported_applied() {
    let s = setup_with(
        &DemoSpec::scaled(40),
        EmulatorOptions {
            issues_read_only: true,
            ..EmulatorOptions::default()
        },
    );
    let [theirs, own, other, fourth] = <[IssueKey; 4]>::try_from(s.quiet_issues(4)).unwrap();
    s.emu.with_dataset(|d| {
        d.issue_mut(&own).unwrap().author = "commitea-bot".into();
    });
    // Out of its milestone, or into one.
    let milestone = match s.issue(&own).milestone {
        Some(_) => None,
        None => s.snapshot.milestones[&own.repo]
            .iter()
            .find(|m| m.state == OpenState::Open)
            .map(|m| m.id),
    };
    let said = milestone.map_or_else(|| "null".to_owned(), |m| m.to_string());
    let priority = if s.issue(&theirs).labels.iter().any(|l| l == "p/0") {
        "p/1"
    } else {
        "p/0"
    };
    push_straight(
        &s,
        "C-0001",
        &op_file(
            "C-0001",
            &format!("- op: set_priority\n  issue: {theirs}\n  priority: {priority}\n"),
            false,
        ),
    );
    push_straight(
        &s,
        "C-0002",
        &op_file(
            "C-0002",
            &format!("- op: set_milestone\n  issue: {own}\n  milestone: {said}\n"),
            false,
        ),
    );
    // Someone else's issue edited: `EditIssue` answers a bare 403, and the advice is said without an
    // "(empty body)" before it (audit 107).
    let other_milestone = s.issue(&other).milestone;
    push_straight(
        &s,
        "C-0003",
        &op_file(
            "C-0003",
            &format!(
                "- op: set_milestone\n  issue: {other}\n  milestone: {}\n",
                match other_milestone {
                    Some(_) => "null".to_owned(),
                    None => s.snapshot.milestones[&other.repo]
                        .iter()
                        .find(|m| m.state == OpenState::Open)
                        .map(|m| m.id.to_string())
                        .unwrap(),
                }
            ),
            false,
        ),
    );
    // A dependency: Gitea's bare 404 for a user who may not write the issues (audit 197: "enable
    // dependencies", where the sync had just read them, and used up).
    push_straight(
        &s,
        "C-0004",
        &op_file(
            "C-0004",
            &format!("- op: add_dep\n  issue: {fourth}\n  dependsOn: {other}\n"),
            false,
        ),
    );
    let out = s.commitea(&s.work, &["run", "--push"]);
    // The run's work is pushed; the files Gitea refused fail it (audit 134).
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!s.issue(&theirs).labels.iter().any(|l| l == priority));
    assert_ne!(s.issue(&own).milestone, milestone);
    assert_eq!(s.issue(&other).milestone, other_milestone);
    assert!(
        stderr.contains("write permission is required")
            && stderr.contains(&format!("kept {own}'s milestone")),
        "{stderr}"
    );
    // Gitea's "write permission is required" is the user's rights, not a scope (audit 192: told to add
    // write:issue, which the token had).
    let theirs_line = stderr
        .lines()
        .find(|l| l.contains("write permission is required"))
        .unwrap();
    assert!(
        theirs_line.contains("the token's user may not change its issues of")
            && theirs_line.contains("the token's scopes are not the cause")
            && !theirs_line.contains("scope write:issue"),
        "{theirs_line}"
    );
    let bare = stderr
        .lines()
        .find(|l| l.contains("ops/pending/C-0003.yaml"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        bare.contains(&format!("the token may not change {}", other.repo))
            && !bare.contains("empty body"),
        "{bare}"
    );
    assert!(
        stderr.contains("or the token's user may not write its issues"),
        "{stderr}"
    );
    for id in ["C-0001", "C-0002", "C-0003", "C-0004"] {
        assert!(
            s.on_branch("main", &format!("ops/pending/{id}.yaml"))
                .is_some(),
            "{id} waits"
        );
        assert!(
            s.on_branch("main", &format!("ops/applied/{id}.yaml"))
                .is_none(),
            "{id} is not used up"
        );
    }
}

#[test]
fn publish_refuses_a_site_that_shows_proposals_not_yet_committed() {
    // A site rendered from a checkout shows its new ledger entries and op files as pending: published,
    // a draft nobody proposed went to everyone who reads the pages (audit 80).
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let ledger = std::fs::read_to_string(s.work.join("pm-state.md")).unwrap();
    std::fs::write(
        s.work.join("pm-state.md"),
        format!("{ledger}\n## D-0001 · note · 2026-11-27T10:00:00Z\n\n> A draft for nobody yet.\n\n- status: active\n"),
    )
    .unwrap();
    ok(&s.commitea(&s.work, &["render"]));
    let out = s.commitea(&s.work, &["publish"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("changes that are not committed (pm-state.md: D-0001 (new))")
            && err.contains("--allow-uncommitted"),
        "{err}"
    );
    assert!(s.on_branch("pages", "index.html").is_none());
    // Set aside after the render, the draft is still on the site's pages (audit 191: published).
    std::fs::write(s.work.join("pm-state.md"), &ledger).unwrap();
    let out = s.commitea(&s.work, &["publish"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("was drawn with changes that were not committed (pm-state.md: D-0001 (new))"),
        "{err}"
    );
    assert!(s.on_branch("pages", "index.html").is_none());
    ok(&s.commitea(&s.work, &["publish", "--allow-uncommitted"]));
    assert!(
        s.on_branch("pages", "changes.html")
            .unwrap()
            .contains("A draft for nobody yet.")
    );
    // A config edited and not committed drives every figure of a run: said by the run, and refused by
    // publish as a draft is (audit 114: a trial `forecast.trials` reached the commit and the pages).
    git(&s.work, &["checkout", "--", "pm-state.md"]);
    let config = std::fs::read_to_string(s.work.join("commitea.yaml")).unwrap();
    std::fs::write(
        s.work.join("commitea.yaml"),
        format!("{config}# a trial edit\n"),
    )
    .unwrap();
    let out = s.commitea(&s.work, &["run", "--offline"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("commitea.yaml has edits that are not committed: this forecast follows them"),
        "{said}"
    );
    let out = s.commitea(&s.work, &["publish"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("changes that are not committed (commitea.yaml (edited))"),
        "{err}"
    );
}

#[test]
fn publish_leaves_a_site_of_an_older_forecast_unpublished() {
    // Two runs overlapped: the older one's publish came last and put its site over the newer's (audit
    // 172). A site says which forecast it shows, and only the branch's newest is published.
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let older = s.work.parent().unwrap().join("older-site");
    copy_dir(&s.work.join("public"), &older);
    ok(&s.commitea(&s.work, &["run", "--push", "--now", "2026-12-09"]));
    ok(&s.commitea(&s.work, &["publish"]));
    let newest = s.on_branch("pages", "index.html").unwrap();
    std::fs::remove_dir_all(s.work.join("public")).unwrap();
    copy_dir(&older, &s.work.join("public"));
    let out = s.commitea(&s.work, &["publish"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("shows an older forecast of main than its newest")
            && err.contains("not published"),
        "{err}"
    );
    assert_eq!(s.on_branch("pages", "index.html").unwrap(), newest);
    // A run committed here and not pushed yet is the newest forecast: its site is published (audit 173:
    // refused, with advice to render, which drew the same).
    ok(&s.commitea(&s.work, &["run", "--offline", "--now", "2026-12-10"]));
    ok(&s.commitea(&s.work, &["publish"]));
    let published = s.on_branch("pages", "index.html").unwrap();
    assert_ne!(published, newest);
    // A preview is refused as one, and fails (audit 191: exit 0, and "a later run's, or a preview's").
    ok(&s.commitea(&s.work, &["render", "--now", "2026-12-14"]));
    let out = s.commitea(&s.work, &["publish"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is a preview"), "{err}");
    // A commit that changes what is forecast and commits no forecast: its render shows a forecast no
    // commit has, and the way out is a run, not another render (audit 191: the advice looped).
    let config = std::fs::read_to_string(s.work.join("commitea.yaml")).unwrap();
    let edited = config.replacen("hours_per_week: 30", "hours_per_week: 20", 1);
    assert_ne!(edited, config);
    std::fs::write(s.work.join("commitea.yaml"), edited).unwrap();
    git(&s.work, &["commit", "-qam", "Confirm the hours"]);
    ok(&s.commitea(&s.work, &["render"]));
    let out = s.commitea(&s.work, &["publish"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("(\"Confirm the hours\") came after main's last forecast")
            && err.contains("`commitea run`"),
        "{err}"
    );
    assert_eq!(s.on_branch("pages", "index.html").unwrap(), published);
    // An empty commit after it changes nothing: the commit named is the one that changed the config
    // (audit 195: the newest was named, whatever it was).
    git(
        &s.work,
        &["commit", "-q", "--allow-empty", "-m", "empty after"],
    );
    let out = s.commitea(&s.work, &["publish"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(\"Confirm the hours\") came after main's last forecast")
            && !err.contains("empty after"),
        "{err}"
    );
    // A run that commits nothing draws a preview (audit 195: it was blamed on the newest commit).
    ok(&s.commitea(&s.work, &["run", "--offline", "--now", "2026-12-10"]));
    ok(&s.commitea(
        &s.work,
        &["run", "--offline", "--no-commit", "--now", "2026-12-11"],
    ));
    let out = s.commitea(&s.work, &["publish"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a preview (drawn by `run --no-commit`"),
        "{err}"
    );
    // A checkout of the pages branch in the site's folder is no content of it (audit 191: its `.git`,
    // and the credentials in its config, went onto the branch); hidden pages below the top, a repository
    // named `.github`'s, are the site's and go when it does.
    ok(&s.commitea(&s.work, &["run", "--offline", "--now", "2026-12-10"]));
    let public = s.work.join("public");
    std::fs::create_dir_all(public.join(".git/refs")).unwrap();
    std::fs::write(public.join(".git/config"), "[remote]\n").unwrap();
    std::fs::create_dir_all(public.join("issues/acme/.github")).unwrap();
    std::fs::write(public.join("issues/acme/.github/1.html"), "old").unwrap();
    ok(&s.commitea(&s.work, &["render", "--now", "2026-12-10"]));
    assert!(public.join(".git/config").exists());
    assert!(!public.join("issues/acme/.github").exists());
    ok(&s.commitea(&s.work, &["publish"]));
    assert!(s.on_branch("pages", "index.html").is_some());
    assert!(s.on_branch("pages", ".git/config").is_none());
}

fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from)
        .into_iter()
        .filter_map(Result::ok)
    {
        let rel = e.path().strip_prefix(from).unwrap();
        if e.file_type().is_dir() {
            std::fs::create_dir_all(to.join(rel)).unwrap();
        } else {
            std::fs::copy(e.path(), to.join(rel)).unwrap();
        }
    }
}

#[test]
fn a_remote_name_git_would_read_as_an_option_is_refused_before_git_sees_it() {
    // `approvals.remote: "--upload-pack=CMD;"` reached `git fetch` as an option, and `propose` ran CMD
    // (audit 153), from the file or from COMMITEA_APPROVALS_REMOTE.
    let s = setup(&DemoSpec::scaled(40));
    let marker = s.work.parent().unwrap().join("ran");
    let remote = format!("--upload-pack=touch {};", marker.display());
    let config = std::fs::read_to_string(s.work.join("commitea.yaml")).unwrap();
    for how in ["file", "env"] {
        let out = if how == "file" {
            let line = format!("approvals:\n  remote: \"{remote}\"\n");
            let edited = if config.contains("\napprovals:\n") {
                config.replace("\napprovals:\n", &format!("\n{line}"))
            } else {
                format!("{config}{line}")
            };
            std::fs::write(s.work.join("commitea.yaml"), edited).unwrap();
            s.commitea(&s.work, &["propose"])
        } else {
            std::fs::write(s.work.join("commitea.yaml"), &config).unwrap();
            Command::new(env!("CARGO_BIN_EXE_commitea"))
                .args(["propose", "-s"])
                .arg(&s.work)
                .env("COMMITEA_SERVER", s.emu.url())
                .env("COMMITEA_GITEA_TOKEN", TOKEN)
                .env("COMMITEA_APPROVALS_REMOTE", &remote)
                .output()
                .unwrap()
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{how}: {err}");
        assert!(
            err.contains("approvals.remote") && err.contains("would be read as an option"),
            "{how}: {err}"
        );
        assert!(!marker.exists(), "{how}: git ran the command");
    }
}

#[test]
fn publish_never_puts_the_site_on_a_branch_that_holds_the_state() {
    // `--branch main` replaced the state's files on the server with the site's (audit 89).
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    git(
        &s.work,
        &["push", "-q", "origin", "HEAD:refs/heads/other-team"],
    );
    for (branch, says) in [
        ("main", "that is the state's branch (approvals.branch)"),
        (
            "other-team",
            "that branch holds a state repository (commitea.yaml is on it)",
        ),
        ("HEAD", "is not a branch name git accepts"),
        ("refs/heads/main", "is a full ref name"),
        ("-x", "would be read as an option"),
        ("a..b", "is not a branch name git accepts"),
    ] {
        let out = s.commitea(&s.work, &["publish", &format!("--branch={branch}")]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{branch}: {err}");
        assert!(err.contains(says), "{branch}: {err}");
    }
    for branch in ["main", "other-team"] {
        assert!(s.on_branch(branch, "commitea.yaml").is_some(), "{branch}");
    }
    ok(&s.commitea(&s.work, &["publish", "--branch", "site/v1"]));
    assert!(s.on_branch("site/v1", "index.html").is_some());
}

#[test]
fn a_repository_the_server_stops_showing_is_carried_said_and_its_approved_files_wait() {
    // One repository answering 404 (made private, the token's access gone) stopped every run of every
    // repository until someone edited the config.
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let key = s.quiet_issue_without("p/0");
    let held = |dir: &Path| {
        std::fs::read_dir(dir.join("snapshot/issues").join(key.repo.to_string()))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let before = held(&s.work);
    assert!(before > 0);
    s.emu.with_dataset(|d| d.hide_repository(&key.repo));
    push_priority(&s, &key);
    // A milestone's op names its repository through the milestone.
    let milestone = s.snapshot.milestones[&key.repo][0].id;
    push_straight(
        &s,
        "C-0002",
        &op_file(
            "C-0002",
            &format!("- op: set_milestone_due\n  milestone: {milestone}\n  due: 2027-03-01\n"),
            false,
        ),
    );
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{} cannot be read", key.repo)),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "ops/pending/C-0001.yaml names {}, which the server does not show to the token now",
            key.repo
        )),
        "{err}"
    );
    assert_eq!(held(&s.work), before, "its issues are carried");
    let meta = std::fs::read_to_string(s.work.join("snapshot/meta.yaml")).unwrap();
    assert!(meta.contains("unreached_since"), "{meta}");
    let forecast = std::fs::read_to_string(s.work.join("forecast/forecast.json")).unwrap();
    assert!(
        forecast.contains(&format!("{} could not be read since", key.repo)),
        "said on every reader's page"
    );
    assert!(s.on_branch("main", "ops/pending/C-0001.yaml").is_some());
    assert!(
        s.on_branch("main", "ops/pending/C-0002.yaml").is_some(),
        "{err}"
    );
    // Shown again: read, the marker gone, the approved file carried out.
    s.emu.with_dataset(|d| d.show_repository(&key.repo));
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let meta = std::fs::read_to_string(s.work.join("snapshot/meta.yaml")).unwrap();
    assert!(!meta.contains("unreached_since"), "{meta}");
    assert!(s.issue(&key).labels.contains(&"p/0".to_owned()));
    // Every repository out of reach is an error, not a plan carried on in silence.
    for r in s.emu.with_dataset(|d| d.repositories()) {
        s.emu.with_dataset(|d| d.hide_repository(&r));
    }
    let out = s.commitea(&s.work, &["run"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn an_applied_record_of_an_id_given_twice_is_kept_not_written_over() {
    // An older CommiTea could give one id to two proposals; the second one's apply wrote over the record
    // of what the first had done.
    let s = setup(&DemoSpec::scaled(40));
    let [first, second] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    push_priority(&s, &first);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let before = s.on_branch("main", "ops/applied/C-0001.yaml").unwrap();
    assert!(before.contains(&first.to_string()), "{before}");
    push_priority(&s, &second);
    let out = s.commitea(&s.work, &["run", "--push"]);
    ok(&out);
    assert!(s.issue(&second).labels.contains(&"p/0".to_owned()));
    assert_eq!(
        s.on_branch("main", "ops/applied/C-0001.yaml").unwrap(),
        before
    );
    let kept = s
        .on_branch("main", "ops/applied/C-0001.2.yaml")
        .unwrap_or_default();
    assert!(kept.contains(&second.to_string()), "{kept}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("already records another proposal of that id"),
        "{out:?}"
    );
}

/// What an op file says merging it does is what the run after the merge forecasts: its consequence is
/// computed on the snapshot as the sync will read it back, events and all. (Audit 67: the consequence
/// moved a label without the timeline event Gitea writes, so the history the abandonment model reads
/// kept the issue in its old column, and an approved "a day earlier" came out "four days later".)
#[test]
fn the_consequence_an_op_file_shows_is_what_the_run_after_its_merge_forecasts() {
    consequence_then_run(false);
}

#[test]
fn a_close_approved_and_applied_the_same_day_forecasts_as_its_consequence_said() {
    // The close the apply stage made was stamped after the run's own snapshot moment, so the run left
    // it out of the closing history its what-if had counted: the approved change read as "EAA slipped a
    // day", and its promised 25 working days came the next day, put down to another cause (audit 184).
    consequence_then_run(true);
}

/// Proposes priority changes (and, `same_day`, a close) on the demo with the abandonment model on, merges
/// the op file and runs: the run forecasts what the op file's consequence said, milestone for milestone.
/// `same_day`: the run after the merge is of the proposal's day; else of the next.
fn consequence_then_run(same_day: bool) {
    let s = setup(&DemoSpec::bundled());
    // The model of work never done on, as `commitea init` leaves it (the demo turns it off).
    let config = std::fs::read_to_string(s.work.join("commitea.yaml")).unwrap();
    let on: String = config
        .lines()
        .filter(|l| !l.contains("abandonment_min_history_days"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(on, config);
    std::fs::write(s.work.join("commitea.yaml"), on).unwrap();
    git(&s.work, &["add", "commitea.yaml"]);
    commit_as_pm(&s.work, "the abandonment model on");
    git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
    let now = (s.emu.with_dataset(|d| d.clock())
        + chrono::Duration::days(if same_day { 0 } else { 1 }))
    .to_rfc3339();
    ok(&s.commitea(&s.work, &["run", "--now", &now]));

    // Issues of an open milestone whose priority label came by a timeline event: the model reads an
    // issue's priority and column then from its history, which the consequence must extend as Gitea does.
    let forecast = |dir: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap()
    };
    let open_milestones: Vec<u64> = forecast(&s.work)["milestones"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["state"] == "open")
        .filter_map(|m| m["id"].as_u64())
        .collect();
    let candidates: Vec<IssueKey> = s
        .snapshot
        .issues
        .iter()
        .filter(|(_, i)| {
            i.state == OpenState::Open
                && i.milestone.is_some_and(|m| open_milestones.contains(&m))
                && i.labels.iter().any(|l| l.starts_with("p/") && l != "p/0")
                && i.timeline
                    .iter()
                    .any(|e| e.label.as_deref().is_some_and(|l| l.starts_with("p/")) && !e.removed)
        })
        .map(|(k, _)| k.clone())
        .take(5)
        .collect();
    assert_eq!(
        candidates.len(),
        5,
        "issues given their priority by an event"
    );
    let mut ops: Vec<Value> = candidates
        .iter()
        .map(|k| serde_json::json!({ "op": "set_priority", "issue": k.to_string(), "priority": "p/0" }))
        .collect();
    // A close with nothing waiting on it: the closing history the abandonment model learns from grows.
    let closed = same_day.then(|| {
        let key = s
            .snapshot
            .issues
            .iter()
            .find(|(k, i)| {
                i.state == OpenState::Open
                    && !candidates.contains(k)
                    && i.milestone.is_none()
                    && !s.snapshot.issues.values().any(|o| o.depends_on.contains(k))
                    && i.depends_on.is_empty()
            })
            .map(|(k, _)| k.clone())
            .unwrap();
        ops.push(serde_json::json!({ "op": "close_issue", "issue": key.to_string() }));
        key
    });
    let input = serde_json::json!({ "ops": ops, "approved": true }).to_string();
    let out = s.commitea(&s.work, &["tool", "--now", &now, "apply_changes", &input]);
    let answer: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(answer["applied"], ops.len(), "{answer}");
    let text = if same_day {
        // A close is destructive: approved by merging its pull request, onto the forecast the run made.
        git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
        ok(&s.commitea(&s.work, &["propose"]));
        let text = s
            .on_branch("commitea/C-0001", "ops/pending/C-0001.yaml")
            .unwrap();
        s.emu.merge_pull(&state_repo(), 1, "pat").unwrap();
        git(&s.work, &["pull", "-q", "--no-rebase", "origin", "main"]);
        text
    } else {
        let text = std::fs::read_to_string(s.work.join("ops/pending/C-0001.yaml")).unwrap();
        push_straight(&s, "C-0001", &text);
        text
    };
    let file = commitea::ops::OpFile::parse(&text, Path::new("ops/pending/C-0001.yaml")).unwrap();
    let ran = s.commitea(&s.work, &["run", "--now", &now]);
    ok(&ran);
    for k in &candidates {
        assert!(
            s.issue(k).labels.contains(&"p/0".to_owned()),
            "{k} is p/0 on Gitea"
        );
    }
    if let Some(k) = &closed {
        assert_eq!(
            s.issue(k).state,
            OpenState::Closed,
            "{k} is closed on Gitea: {}",
            String::from_utf8_lossy(&ran.stderr)
        );
    }

    // Every milestone the consequence names, as it said, and every issue it moved.
    let after = forecast(&s.work);
    let mut compared = 0;
    for pair in &file.consequence {
        let Some(said) = pair.after.as_ref() else {
            // Only the issue closed leaves the plan.
            let gone = closed.as_ref().map(|k| format!("issue {k} "));
            assert!(
                gone.is_some_and(|g| pair.subject.starts_with(&g)),
                "{} stays in the plan",
                pair.subject
            );
            continue;
        };
        let got = if let Some(rest) = pair.subject.strip_prefix("milestone ") {
            let id: u64 = rest.split(' ').next().unwrap().parse().unwrap();
            after["milestones"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["id"] == id)
                .map(|m| (m["p80"].clone(), m["probability_on_time"].clone()))
        } else {
            let key = pair
                .subject
                .strip_prefix("issue ")
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            after["issues"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["issue"] == key)
                .map(|i| (i["p80"].clone(), Value::Null))
        };
        let (p80, on_time) = got.unwrap_or_else(|| panic!("{} is in the forecast", pair.subject));
        assert_eq!(
            said["p80"], p80,
            "{}: said {said}, the run forecast {p80}",
            pair.subject
        );
        if let Some(p) = said.get("probabilityOnTime") {
            assert_eq!(*p, on_time, "{}: said {said}", pair.subject);
        }
        compared += 1;
    }
    assert!(
        compared >= 3,
        "the consequence names the milestones and the moved issues: {compared}\n{text}"
    );
}

/// A run with no token at all: every private repository answers 404, and that is the missing token, not
/// one repository out of reach whose issues are carried (audit 64: the first was carried with a warning,
/// then the second failed the run).
#[test]
fn a_run_with_no_token_says_the_token_is_missing_and_carries_nothing() {
    let s = setup(&DemoSpec::scaled(40));
    ok(&s.commitea(&s.work, &["run"]));
    let head = git(&s.work, &["rev-parse", "HEAD"]);
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["run", "-s"])
        .arg(&s.work)
        .env_remove("COMMITEA_STATE")
        .env("COMMITEA_SERVER", s.emu.url())
        .env_remove("COMMITEA_GITEA_TOKEN")
        .env_remove("GITEA_TOKEN")
        .env_remove("FORGEJO_TOKEN")
        .env_remove("COMMITEA_TOKEN")
        .env_remove("GITHUB_TOKEN")
        .env(TRIALS.0, TRIALS.1)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("no Gitea token is set"), "{stderr}");
    assert!(!stderr.contains("stay in the plan"), "{stderr}");
    assert_eq!(
        git(&s.work, &["rev-parse", "HEAD"]),
        head,
        "nothing committed"
    );
}

/// The Actions job's own push says `[skip ci]`: Gitea starts the workflow for a push made with a personal
/// token, and every change ran twice (an audit's finding); the job publishes the site itself. A push from
/// anywhere else starts the workflow as before, which then publishes it.
#[test]
fn a_push_from_the_actions_job_does_not_start_the_workflow_again() {
    let s = setup(&DemoSpec::scaled(40));
    let keys = s.quiet_issues(2);
    let run_push = |key: &IssueKey, in_actions: bool| {
        s.emu.with_dataset(|d| {
            d.update_issue(key, |i| i.title.push_str(" (renamed)"));
        });
        let mut c = Command::new(env!("CARGO_BIN_EXE_commitea"));
        c.args(["run", "--push", "-s"])
            .arg(&s.work)
            .env_remove("COMMITEA_STATE")
            .env_remove("GITHUB_ACTIONS")
            .env("COMMITEA_SERVER", s.emu.url())
            .env("COMMITEA_GITEA_TOKEN", TOKEN)
            .env(TRIALS.0, TRIALS.1);
        if in_actions {
            c.env("GITHUB_ACTIONS", "true");
        }
        ok(&c.output().unwrap());
        git(&s.bare, &["log", "-1", "--format=%B", "main"])
    };
    let from_actions = run_push(&keys[0], true);
    assert!(
        from_actions.trim_end().ends_with("[skip ci]"),
        "{from_actions}"
    );
    let from_a_laptop = run_push(&keys[1], false);
    assert!(!from_a_laptop.contains("[skip ci]"), "{from_a_laptop}");
}

/// A checkout cloned while an op file was pending still holds it after a run carried it out: proposing
/// from it does not propose the file again under a new id (audit 141: renumbered C-0013, it filed its
/// issue on Gitea a second time).
#[test]
fn a_stale_checkout_does_not_propose_again_what_a_run_carried_out() {
    let s = setup(&DemoSpec::scaled(60));
    let repo = RepoName::new("acme", "api");
    let title = "Filed once only";
    let input = format!(
        r#"{{"ops":[{{"op":"create_issue","repo":"{repo}","title":"{title}","labels":["est/1d"]}}]}}"#
    );
    ok(&s.commitea(&s.work, &["tool", "--by", "pat", "apply_changes", &input]));
    let proposed = ok(&s.commitea(&s.work, &["propose"]));
    assert!(proposed.starts_with("C-0001 direct "), "{proposed}");
    // A teammate clones now: the clone holds ops/pending/C-0001.yaml.
    let stale = clone_as(&s, "stale");
    assert!(stale.join("ops/pending/C-0001.yaml").exists());
    check_out_main(&s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    let filed = || -> usize {
        s.emu
            .with_dataset(|d| d.issues(&repo).iter().filter(|i| i.title == title).count())
    };
    assert_eq!(filed(), 1);

    // The teammate proposes a change of their own without pulling first.
    let [key] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    let theirs = format!(r#"{{"ops":[{{"op":"set_priority","issue":"{key}","priority":"p/0"}}]}}"#);
    ok(&s.commitea(&stale, &["tool", "--by", "dana", "apply_changes", &theirs]));
    let out = s.commitea(&stale, &["propose"]);
    let stdout = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "the teammate's own change, and the stale file said: {stdout}"
    );
    assert!(lines[0].starts_with("C-0002 direct "), "{stdout}");
    assert_eq!(lines[1], "C-0001 applied-already", "{stdout}");
    assert!(
        stderr.contains(
            "C-0001 was carried out already (ops/applied/C-0001.yaml on main): not proposed again"
        ),
        "{stderr}"
    );
    // Left as the checkout's commit holds it, for a pull to take out: deleted, it was an unstaged
    // deletion the advised rebase could stop on (audit 144).
    assert_eq!(git(&stale, &["status", "--porcelain", "ops/pending"]), "");
    // The next run files nothing twice.
    check_out_main(&s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert_eq!(filed(), 1);
    assert!(s.issue(&key).labels.contains(&"p/0".to_owned()));
}

/// A call retried after its first answer was proposed asks the same again: `propose` does not open a
/// second pull request for it, nor push it straight a second time (audit 135: two pull requests for one
/// change, one doing nothing once the other was merged).
#[test]
fn a_retried_call_is_not_proposed_twice() {
    let s = setup(&DemoSpec::scaled(60));
    let [closing, raised] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let (id, _) = propose_close(&s, &closing);
    let input =
        format!(r#"{{"ops":[{{"op":"close_issue","issue":"{closing}"}}],"approved":true}}"#);
    // The checkout no longer holds the first file: the tool files the retry.
    let answer: Value = serde_json::from_str(&ok(
        &s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"])
    ))
    .unwrap();
    let again = answer["opsFile"].as_str().unwrap().to_owned();
    let again_id = again
        .trim_start_matches("ops/pending/")
        .trim_end_matches(".yaml");
    let out = s.commitea(&s.work, &["propose"]);
    let stdout = ok(&out);
    assert_eq!(stdout.trim(), format!("{again_id} duplicate-of {id}"));
    assert!(!s.work.join(&again).exists(), "taken out of the checkout");
    assert_eq!(s.emu.state_pulls(&state_repo()).len(), 1);
    // Closed without merging, its branch still there, it swallows no new proposal of the same change
    // (audit 147: the new one was dropped as its duplicate, and then the branch was deleted).
    close_pull(&s, 1);
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    let out = ok(&s.commitea(&s.work, &["propose"]));
    assert!(out.contains(" pull-request 2 "), "{out}");
    // Additive ops pushed straight to the branch: a retry is not pushed again either.
    let input =
        format!(r#"{{"ops":[{{"op":"set_priority","issue":"{raised}","priority":"p/0"}}]}}"#);
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    let first = ok(&s.commitea(&s.work, &["propose"]));
    let first_id = first.split_whitespace().next().unwrap().to_owned();
    assert!(first.contains(" direct "), "{first}");
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    let second = ok(&s.commitea(&s.work, &["propose"]));
    assert!(
        second
            .trim()
            .ends_with(&format!(" duplicate-of {first_id}")),
        "{second}"
    );
    // The same ops in another order ask the same (audit 147: a second proposal).
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(4)[2..].to_vec()).unwrap();
    let ops = |x: &IssueKey, y: &IssueKey| {
        format!(
            r#"{{"ops":[{{"op":"set_priority","issue":"{x}","priority":"p/0"}},{{"op":"set_priority","issue":"{y}","priority":"p/0"}}]}}"#
        )
    };
    ok(&s.commitea(
        &s.work,
        &["tool", "apply_changes", &ops(&a, &b), "--by", "pat"],
    ));
    let first = ok(&s.commitea(&s.work, &["propose"]));
    let first_id = first.split_whitespace().next().unwrap().to_owned();
    ok(&s.commitea(
        &s.work,
        &["tool", "apply_changes", &ops(&b, &a), "--by", "pat"],
    ));
    let second = ok(&s.commitea(&s.work, &["propose"]));
    assert!(
        second
            .trim()
            .ends_with(&format!(" duplicate-of {first_id}")),
        "{second}"
    );
    // New issues too, where none waits on another of the call (audit 149: filed twice).
    let creates = |x: &str, y: &str| {
        format!(
            r#"{{"ops":[{{"op":"create_issue","repo":"acme/api","title":"{x}"}},{{"op":"create_issue","repo":"acme/api","title":"{y}"}}]}}"#
        )
    };
    let call = |input: &str| {
        ok(&s.commitea(&s.work, &["tool", "apply_changes", input, "--by", "pat"]));
        ok(&s.commitea(&s.work, &["propose"]))
    };
    let first = call(&creates("Two A", "Two B"));
    let first_id = first.split_whitespace().next().unwrap().to_owned();
    let second = call(&creates("Two B", "Two A"));
    assert!(
        second
            .trim()
            .ends_with(&format!(" duplicate-of {first_id}")),
        "{second}"
    );
}

/// A stale checkout's copy of a directive's op file, edited after the directive was carried out, is not
/// proposed: it asks what no decision recorded (audit 144: it went out again under its own id, its pull
/// request quoting the directive's words over another date).
#[test]
fn an_edited_stale_copy_of_a_carried_out_directive_is_not_proposed() {
    let s = setup(&DemoSpec::scaled(60));
    let [key] = <[IssueKey; 1]>::try_from(s.quiet_issues(1)).unwrap();
    let id = s.directive(
        &s.work,
        "reprioritize",
        "This one first, the bank is waiting.",
        &key.to_string(),
        r#"{"priority": 0}"#,
    );
    let proposed = ok(&s.commitea(&s.work, &["propose"]));
    let number: u64 = proposed.split_whitespace().nth(2).unwrap().parse().unwrap();
    s.emu.merge_pull(&state_repo(), number, "pat").unwrap();
    // A teammate clones now: the directive's op file is pending on main.
    let stale = clone_as(&s, "stale");
    check_out_main(&s);
    ok(&s.commitea(&s.work, &["run", "--push"]));
    assert!(s.issue(&key).labels.contains(&"p/0".to_owned()));
    let path = stale.join(format!("ops/pending/{id}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("priority: p/0", "priority: p/2")).unwrap();
    let pulls = s.emu.state_pulls(&state_repo()).len();
    let out = s.commitea(&stale, &["propose"]);
    let stdout = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stdout.trim(), format!("{id} applied-already"), "{stderr}");
    assert!(
        stderr.contains(
            "this checkout's copy of its op file asks otherwise (edited since?): not proposed"
        ),
        "{stderr}"
    );
    assert_eq!(s.emu.state_pulls(&state_repo()).len(), pulls);
}

/// A pull request the token may not open is said to need the repository's scope, not the issues'
/// (audit 147: the advice named write:issue beside Gitea's `required=[write:repository]`).
#[test]
fn a_proposal_a_read_scoped_token_cannot_open_names_the_repository_scope() {
    let s = setup_with(
        &DemoSpec::scaled(40),
        EmulatorOptions {
            read_scoped_token: true,
            ..EmulatorOptions::default()
        },
    );
    let key = s.quiet_issue_without("p/0");
    let input = format!(r#"{{"ops":[{{"op":"close_issue","issue":"{key}"}}],"approved":true}}"#);
    ok(&s.commitea(&s.work, &["tool", "apply_changes", &input, "--by", "pat"]));
    let out = s.commitea(&s.work, &["propose"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("(scope write:repository)") && !stderr.contains("(scope write:issue)"),
        "{stderr}"
    );
}

/// A checkout whose line endings git turns to CRLF (`core.autocrlf`, Git for Windows' default) holds the
/// branch's text: no entry of the ledger, no op file and not `commitea.yaml` is an edit (audits 167, 169:
/// every entry read as edited, and `propose` opened a pull request for each and sent approved op files
/// again), and what it proposes is written in the branch's line endings.
#[test]
fn a_checkout_with_crlf_line_endings_proposes_nothing_it_did_not_change() {
    let s = setup(&DemoSpec::scaled(40));
    let [a, b] = <[IssueKey; 2]>::try_from(s.quiet_issues(2)).unwrap();
    let merged = s.p0_directive(&b, "Billing first.");
    let approved = s.work.join("ops/pending/C-0009.yaml");
    std::fs::create_dir_all(approved.parent().unwrap()).unwrap();
    std::fs::write(
        &approved,
        op_file(
            "C-0009",
            &format!("- op: set_priority\n  issue: {a}\n  priority: p/1\n"),
            false,
        ),
    )
    .unwrap();
    git(&s.work, &["add", "-A"]);
    git(&s.work, &["commit", "-q", "-m", "approved"]);
    git(&s.work, &["push", "-q", "origin", "HEAD:main"]);
    let ledger = s.work.join("pm-state.md");
    assert!(
        std::fs::read_to_string(&ledger)
            .unwrap()
            .contains(&format!("## {merged}"))
    );
    // What a converting checkout writes; git itself sees no change in it (its index refreshed).
    git(&s.work, &["config", "core.autocrlf", "true"]);
    for f in [&ledger, &approved, &s.work.join("commitea.yaml")] {
        let text = std::fs::read_to_string(f).unwrap();
        std::fs::write(f, text.replace('\n', "\r\n")).unwrap();
    }
    git(&s.work, &["add", "-A"]);
    assert_eq!(git(&s.work, &["status", "--porcelain"]), "");

    let out = s.commitea(&s.work, &["run", "--offline"]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("has edits of entries")
            && !stderr.contains("commitea.yaml has edits")
            && !stderr.contains("pm-state.md has edits"),
        "{stderr}"
    );
    let out = s.commitea(&s.work, &["propose"]);
    assert_eq!(ok(&out).trim(), "");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing to propose"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A new entry, recorded in the checkout's CRLF, reaches the branch in its LF.
    let id = s.p0_directive(&a, "Freeze after the 20th.");
    assert!(
        std::fs::read_to_string(&ledger)
            .unwrap()
            .contains("Freeze after the 20th.\r\n")
    );
    let proposed = ok(&s.commitea(&s.work, &["propose"]));
    assert!(
        proposed.contains(&format!("{id} pull-request")) && !proposed.contains(&merged),
        "{proposed}"
    );
    let on_branch = s
        .on_branch(&format!("commitea/{id}"), "pm-state.md")
        .unwrap();
    assert!(
        on_branch.contains("Freeze after the 20th.") && !on_branch.contains('\r'),
        "{on_branch:?}"
    );
}
