//! The Gitea API emulator: auth, the spec's JSON shapes, pagination, `since`, the timeline's quirks,
//! dependencies, fault injection, write endpoints and request counting, over real loopback HTTP.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use commitea::domain::{IssueKey, RepoName};
use commitea::gitea::emulator::{Dataset, Emulator, EmulatorOptions, Fault, FaultKind};
use commitea::state::{Layout, Snapshot};
use serde_json::{Value, json};

const TOKEN: &str = "emulator-token";

fn load(dir: &str) -> Snapshot {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    Snapshot::load(&Layout::new(root)).unwrap()
}

fn small() -> Emulator {
    Emulator::start(
        Dataset::from_snapshot(&load("tests/fixtures/small")),
        EmulatorOptions::default(),
    )
    .unwrap()
}

fn demo() -> Emulator {
    Emulator::start(
        Dataset::from_snapshot(&load("state")),
        EmulatorOptions::default(),
    )
    .unwrap()
}

/// One HTTP answer.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&self.body));
        })
    }
    fn total(&self) -> usize {
        self.header("X-Total-Count").unwrap().parse().unwrap()
    }
}

/// A tiny HTTP/1.1 client: one request per connection, reads to EOF.
fn raw(
    base: &str,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: Option<&Value>,
) -> std::io::Result<Resp> {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n");
    if let Some(a) = auth {
        req.push_str(&format!("Authorization: {a}\r\n"));
    }
    if !body.is_empty() {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    s.write_all(req.as_bytes())?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no response head"))?;
    let head = String::from_utf8_lossy(&buf[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other("bad status line"))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Ok(Resp {
        status,
        headers,
        body: buf[split + 4..].to_vec(),
    })
}

fn call(emu: &Emulator, method: &str, path: &str, body: Option<&Value>) -> Resp {
    let auth = format!("token {TOKEN}");
    raw(
        &emu.url(),
        method,
        &format!("/api/v1{path}"),
        Some(&auth),
        body,
    )
    .unwrap()
}

fn get(emu: &Emulator, path: &str) -> Resp {
    call(emu, "GET", path, None)
}

fn get_json(emu: &Emulator, path: &str) -> Value {
    let r = get(emu, path);
    assert_eq!(
        r.status,
        200,
        "{path}: {}",
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

/// The spec's definitions; `None` (with a loud message) when the shared spec is not beside the crate, unless
/// `COMMITEA_REQUIRE_EXTERNAL=1` makes that a failure.
fn definitions() -> Option<BTreeMap<String, Value>> {
    let candidates = [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/gitea/swagger-subset.json"),
        Path::new("/work/shared/gitea/swagger-subset.json").to_path_buf(),
    ];
    let Some(text) = candidates
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
    else {
        assert!(
            std::env::var("COMMITEA_REQUIRE_EXTERNAL").as_deref() != Ok("1"),
            "swagger-subset.json not found at {candidates:?}"
        );
        eprintln!("SKIPPED: swagger-subset.json not found at {candidates:?}; shape checks not run");
        return None;
    };
    let spec: Value = serde_json::from_str(&text).unwrap();
    Some(serde_json::from_value(spec["definitions"].clone()).unwrap())
}

/// The object's top-level fields are exactly the schema's properties (and every `required` one is there).
fn assert_shape(defs: &BTreeMap<String, Value>, name: &str, v: &Value) {
    let def = &defs[name];
    let props: BTreeSet<&str> = def["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let got: BTreeSet<&str> = v
        .as_object()
        .unwrap_or_else(|| panic!("{name}: not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(got, props, "{name}: fields differ from the spec");
    for r in def["required"].as_array().into_iter().flatten() {
        assert!(got.contains(r.as_str().unwrap()), "{name}: missing {r}");
    }
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn auth_needs_the_token_as_token_or_bearer() {
    let emu = small();
    let base = emu.url();
    let none = raw(&base, "GET", "/api/v1/version", None, None).unwrap();
    assert_eq!(none.status, 401);
    let err = none.json();
    assert!(
        err["message"].is_string() && err["url"].is_string(),
        "{err}"
    );
    let wrong = raw(&base, "GET", "/api/v1/version", Some("token nope"), None).unwrap();
    assert_eq!(wrong.status, 401);
    let token = raw(
        &base,
        "GET",
        "/api/v1/version",
        Some(&format!("token {TOKEN}")),
        None,
    )
    .unwrap();
    assert_eq!(token.status, 200);
    assert_eq!(token.json()["version"], "1.27.1");
    let bearer = raw(
        &base,
        "GET",
        "/api/v1/user",
        Some(&format!("Bearer {TOKEN}")),
        None,
    )
    .unwrap();
    assert_eq!(bearer.status, 200);
    assert_eq!(bearer.json()["login"], "commitea-bot");
    let unknown = get(&emu, "/nothing/here");
    assert_eq!(unknown.status, 404);
    assert!(unknown.json()["message"].is_string());
    assert_eq!(get(&emu, "/repos/acme/nope").status, 404);
    assert_eq!(get(&emu, "/repos/acme/api/issues/999").status, 404);
}

#[test]
fn responses_have_the_spec_fields() {
    let emu = small();
    let Some(defs) = definitions() else { return };
    assert_shape(&defs, "ServerVersion", &get_json(&emu, "/version"));
    let settings = get_json(&emu, "/settings/api");
    assert_shape(&defs, "GeneralAPISettings", &settings);
    assert_eq!(settings["max_response_items"], 50);
    assert_shape(&defs, "User", &get_json(&emu, "/user"));
    let repo = get_json(&emu, "/repos/acme/api");
    assert_shape(&defs, "Repository", &repo);
    assert_eq!(repo["internal_tracker"]["enable_issue_dependencies"], true);
    let labels = get_json(&emu, "/repos/acme/api/labels");
    assert_shape(&defs, "Label", &labels[0]);
    let ms = get_json(&emu, "/repos/acme/api/milestones?state=all");
    assert_shape(&defs, "Milestone", &ms[0]);
    let issue = get_json(&emu, "/repos/acme/api/issues/1");
    assert_shape(&defs, "Issue", &issue);
    assert_shape(&defs, "User", &issue["user"]);
    assert_shape(&defs, "Label", &issue["labels"][0]);
    assert_shape(&defs, "Milestone", &issue["milestone"]);
    assert_shape(&defs, "RepositoryMeta", &issue["repository"]);
    assert_shape(&defs, "User", &issue["assignees"][0]);
    assert_eq!(issue["labels"][0]["name"], "est/2d");
    assert_eq!(issue["state"], "closed");
    assert_eq!(issue["pull_request"], Value::Null);
    assert_eq!(issue["created_at"], "2026-10-02T09:00:00Z");
    let listing = get_json(&emu, "/repos/acme/api/issues?state=all");
    let pull = listing
        .as_array()
        .unwrap()
        .iter()
        .find(|i| !i["pull_request"].is_null())
        .unwrap();
    assert_shape(&defs, "Issue", pull);
    assert_shape(&defs, "PullRequestMeta", &pull["pull_request"]);
    let timeline = get_json(&emu, "/repos/acme/api/issues/1/timeline");
    for t in timeline.as_array().unwrap() {
        assert_shape(&defs, "TimelineComment", t);
    }
    let times = get_json(&emu, "/repos/acme/api/issues/1/times");
    assert_shape(&defs, "TrackedTime", &times[0]);
    assert_eq!(times[0]["time"], 39600);
    let comments = get_json(&emu, "/repos/acme/api/issues/3/comments");
    assert_shape(&defs, "Comment", &comments[0]);
    let pulls = get_json(&emu, "/repos/acme/api/pulls?state=all");
    assert_shape(&defs, "PullRequest", &pulls[0]);
    assert_shape(&defs, "PRBranchInfo", &pulls[0]["base"]);
    let pr = get_json(&emu, "/repos/acme/api/pulls/2");
    assert_shape(&defs, "PullRequest", &pr);
    assert!(
        pr["body"].as_str().unwrap().contains("Closes #1"),
        "{}",
        pr["body"]
    );
    assert_eq!(pr["merged"], true);
}

#[test]
fn pagination_caps_links_and_counts() {
    let emu = demo();
    let all = get(
        &emu,
        "/repos/acme/api/issues?state=all&type=issues&limit=1000",
    );
    let total = all.total();
    assert!(
        total > 50,
        "the demo repo should have more than 50 issues, has {total}"
    );
    assert_eq!(
        all.json().as_array().unwrap().len(),
        50,
        "limit is capped at 50"
    );
    let link = all.header("Link").unwrap();
    assert!(
        link.contains("rel=\"next\"") && link.contains("rel=\"last\""),
        "{link}"
    );
    assert!(link.contains("page=2"), "{link}");
    assert!(!link.contains("rel=\"prev\""), "{link}");
    // Default page size is 30.
    let default = get_json(&emu, "/repos/acme/api/issues?state=all&type=issues");
    assert_eq!(default.as_array().unwrap().len(), 30);
    // Page through with limit 7: every issue once, newest created first.
    let mut seen = Vec::new();
    let mut page = 1;
    loop {
        let r = get(
            &emu,
            &format!("/repos/acme/api/issues?state=all&type=issues&limit=7&page={page}"),
        );
        assert_eq!(r.total(), total);
        let items = r.json();
        let items = items.as_array().unwrap();
        if items.is_empty() {
            break;
        }
        let last_page = total.div_ceil(7);
        if page < last_page {
            let link = r.header("Link").unwrap();
            assert!(
                link.contains(&format!("page={last_page}>; rel=\"last\"")),
                "{link}"
            );
        } else {
            assert!(r.header("Link").is_none_or(|l| !l.contains("rel=\"next\"")));
        }
        seen.extend(
            items
                .iter()
                .map(|i| (time(&i["created_at"]), i["number"].as_u64().unwrap())),
        );
        page += 1;
    }
    assert_eq!(seen.len(), total);
    let unique: BTreeSet<u64> = seen.iter().map(|s| s.1).collect();
    assert_eq!(unique.len(), total);
    assert!(seen.windows(2).all(|w| w[0] >= w[1]), "sorted newest first");
    let beyond = get(
        &emu,
        &format!(
            "/repos/acme/api/issues?state=all&type=issues&limit=7&page={}",
            page + 3
        ),
    );
    assert_eq!(beyond.json(), json!([]));
    assert_eq!(beyond.total(), total);
    // Open is the default state.
    let open = get(&emu, "/repos/acme/api/issues?type=issues&limit=50");
    assert!(open.total() < total);
    assert!(
        open.json()
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["state"] == "open")
    );
}

#[test]
fn since_is_inclusive_at_second_resolution() {
    let emu = demo();
    let all = get_json(
        &emu,
        "/repos/acme/web/issues?state=all&type=issues&limit=50",
    );
    let pick = &all[3];
    let t = time(&pick["updated_at"]);
    let n = pick["number"].as_u64().unwrap();
    let numbers = |since: DateTime<Utc>| -> Vec<(u64, DateTime<Utc>)> {
        let mut out = Vec::new();
        for page in 1.. {
            let q = since.to_rfc3339().replace(':', "%3A").replace('+', "%2B");
            let v = get_json(
                &emu,
                &format!("/repos/acme/web/issues?state=all&since={q}&limit=50&page={page}"),
            );
            if v.as_array().unwrap().is_empty() {
                break;
            }
            out.extend(
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|i| (i["number"].as_u64().unwrap(), time(&i["updated_at"]))),
            );
        }
        out
    };
    let at = numbers(t);
    assert!(
        at.iter().any(|(m, _)| *m == n),
        "since equal to updated_at includes the issue"
    );
    assert!(at.iter().all(|(_, u)| *u >= t));
    let fraction = numbers(t + chrono::Duration::milliseconds(500));
    assert!(
        fraction.iter().any(|(m, _)| *m == n),
        "second resolution: T+0.5s still includes T"
    );
    let later = numbers(t + chrono::Duration::seconds(1));
    assert!(later.iter().all(|(m, u)| *m != n || *u > t));
    assert!(later.iter().all(|(_, u)| *u > t));
    // `before` is inclusive too.
    let q = commitea_time(t);
    let upto = get_json(
        &emu,
        &format!("/repos/acme/web/issues?state=all&before={q}&limit=50"),
    );
    assert!(upto.as_array().unwrap().iter().any(|i| i["number"] == n));
    assert!(
        upto.as_array()
            .unwrap()
            .iter()
            .all(|i| time(&i["updated_at"]) <= t)
    );
    // A bad time is a 422 that names the parameter.
    let bad = get(&emu, "/repos/acme/web/issues?since=yesterday");
    assert_eq!(bad.status, 422);
    assert!(bad.json()["message"].as_str().unwrap().contains("since"));
}

#[test]
fn issue_type_filter_and_pulls() {
    let emu = small();
    let issues = get_json(&emu, "/repos/acme/api/issues?state=all&type=issues");
    assert!(
        issues
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["pull_request"].is_null())
    );
    let numbers: BTreeSet<u64> = issues
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, BTreeSet::from([1, 3, 4, 5]));
    let both = get_json(&emu, "/repos/acme/api/issues?state=all");
    let pulls: Vec<&Value> = both
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| !i["pull_request"].is_null())
        .collect();
    assert!(!pulls.is_empty());
    assert!(
        pulls
            .iter()
            .all(|p| !numbers.contains(&p["number"].as_u64().unwrap()))
    );
    let only = get_json(&emu, "/repos/acme/api/issues?state=all&type=pulls");
    assert_eq!(only.as_array().unwrap().len(), pulls.len());
    let listed = get(&emu, "/repos/acme/api/pulls?state=all");
    assert_eq!(listed.total(), pulls.len());
}

#[test]
fn timeline_label_quirk_and_short_pages_without_link() {
    let emu = small();
    let whole = get(&emu, "/repos/acme/api/issues/1/timeline?limit=50");
    assert!(whole.header("Link").is_none());
    assert!(whole.header("X-Total-Count").is_none());
    let whole = whole.json();
    let label = whole
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "label")
        .unwrap();
    assert_eq!(label["body"], "1");
    assert_eq!(label["label"]["name"], "est/2d");
    let pull_ref = whole
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "pull_ref")
        .unwrap();
    assert_eq!(pull_ref["ref_issue"]["number"], 2);
    assert!(!pull_ref["ref_issue"]["pull_request"].is_null());
    let ms = whole
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "milestone")
        .unwrap();
    assert_eq!(ms["milestone"]["id"], 1);
    let asg = whole
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "assignees")
        .unwrap();
    assert_eq!(asg["assignee"]["login"], "ann");
    assert_eq!(asg["removed_assignee"], false);
    // Paged by 2, some pages come back short, yet paging until empty gets everything once.
    let mut got = Vec::new();
    let mut short = false;
    for page in 1.. {
        let v = get_json(
            &emu,
            &format!("/repos/acme/api/issues/1/timeline?limit=2&page={page}"),
        );
        let n = v.as_array().unwrap().len();
        if n == 0 {
            break;
        }
        short |= n < 2;
        got.extend(
            v.as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_u64().unwrap()),
        );
    }
    let all: Vec<u64> = whole
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    assert_eq!(got, all);
    assert!(short, "a short page before the end");
    // Removed labels have an empty body (demo data has some).
    let emu = demo();
    let ds = emu.dataset();
    let (repo, n) = ds
        .repositories()
        .into_iter()
        .find_map(|r| {
            ds.issues(&r)
                .iter()
                .find(|i| i.timeline.iter().any(|e| e.kind == "label" && e.removed))
                .map(|i| (r.clone(), i.number))
        })
        .unwrap();
    let mut removed = false;
    for page in 1.. {
        let v = get_json(
            &emu,
            &format!("/repos/{repo}/issues/{n}/timeline?page={page}"),
        );
        if v.as_array().unwrap().is_empty() {
            break;
        }
        for e in v.as_array().unwrap() {
            if e["type"] == "label" && e["body"] == "" {
                removed = true;
                assert!(e["label"]["name"].is_string());
            }
        }
    }
    assert!(removed);
}

#[test]
fn dependencies_and_blocks_or_404_when_disabled() {
    let emu = small();
    let deps = get_json(&emu, "/repos/acme/api/issues/4/dependencies");
    assert_eq!(deps.as_array().unwrap().len(), 1);
    assert_eq!(deps[0]["number"], 3);
    assert_eq!(deps[0]["repository"]["full_name"], "acme/api");
    let blocks = get_json(&emu, "/repos/acme/api/issues/3/blocks");
    let blocked: BTreeSet<(String, u64)> = blocks
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["repository"]["full_name"].as_str().unwrap().to_owned(),
                i["number"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        blocked,
        BTreeSet::from([("acme/api".into(), 4), ("acme/web".into(), 1)])
    );

    let options = EmulatorOptions {
        dependencies_disabled: BTreeSet::from([RepoName::new("acme", "api")]),
        ..EmulatorOptions::default()
    };
    let off = Emulator::start(
        Dataset::from_snapshot(&load("tests/fixtures/small")),
        options,
    )
    .unwrap();
    assert_eq!(
        get(&off, "/repos/acme/api/issues/4/dependencies").status,
        404
    );
    assert_eq!(get(&off, "/repos/acme/api/issues/3/blocks").status, 404);
    assert_eq!(
        get_json(&off, "/repos/acme/api")["internal_tracker"]["enable_issue_dependencies"],
        false
    );
    assert_eq!(
        get(&off, "/repos/acme/web/issues/1/dependencies").status,
        200
    );
}

#[test]
fn faults_fire_and_expire() {
    let emu = small();
    emu.inject(Fault::new(FaultKind::Status(503)).times(2).on("/labels"));
    assert_eq!(
        get(&emu, "/version").status,
        200,
        "other paths are untouched"
    );
    assert_eq!(get(&emu, "/repos/acme/api/labels").status, 503);
    let r = get(&emu, "/repos/acme/api/labels");
    assert_eq!(r.status, 503);
    assert!(r.json()["message"].is_string());
    assert_eq!(get(&emu, "/repos/acme/api/labels").status, 200);

    emu.inject(Fault::new(FaultKind::Status(502)));
    assert_eq!(get(&emu, "/version").status, 502);
    emu.inject(Fault::new(FaultKind::Status(500)));
    assert_eq!(get(&emu, "/version").status, 500);

    emu.inject(Fault::new(FaultKind::RateLimit {
        retry_after_secs: 7,
    }));
    let r = get(&emu, "/version");
    assert_eq!(r.status, 429);
    assert_eq!(r.header("Retry-After"), Some("7"));

    emu.inject(Fault::new(FaultKind::Slow(Duration::from_millis(300))));
    let t = Instant::now();
    assert_eq!(get(&emu, "/version").status, 200);
    assert!(t.elapsed() >= Duration::from_millis(300));

    emu.inject(Fault::new(FaultKind::Drop));
    let auth = format!("token {TOKEN}");
    assert!(raw(&emu.url(), "GET", "/api/v1/version", Some(&auth), None).is_err());
    assert_eq!(get(&emu, "/version").status, 200);

    emu.inject(Fault::new(FaultKind::Status(503)).times(5));
    emu.clear_faults();
    assert_eq!(get(&emu, "/version").status, 200);
}

#[test]
fn page_shift_makes_a_naive_client_see_one_twice() {
    let emu = small();
    let repo = RepoName::new("acme", "api");
    emu.inject(
        Fault::new(FaultKind::PageShift { repo: repo.clone() }).on("/repos/acme/api/issues?"),
    );
    let p1 = get_json(
        &emu,
        "/repos/acme/api/issues?state=all&type=issues&limit=2&page=1",
    );
    let p2 = get_json(
        &emu,
        "/repos/acme/api/issues?state=all&type=issues&limit=2&page=2",
    );
    assert_eq!(
        p1[1]["number"], p2[0]["number"],
        "the last of page 1 is now first of page 2"
    );
    let now = get_json(
        &emu,
        "/repos/acme/api/issues?state=all&type=issues&limit=2&page=1",
    );
    assert_eq!(now[0]["title"], "Inserted between two pages");
    assert_eq!(now[0]["number"], 6, "next free number after issues 1-5");
}

#[test]
fn writes_change_later_reads() {
    let emu = small();
    let before = get_json(&emu, "/repos/acme/api/issues/5");
    let t0 = time(&before["updated_at"]);
    // Issue 5 has `bug`: remove it, add it back by name, add another by id, remove `bug` again.
    assert_eq!(
        call(&emu, "DELETE", "/repos/acme/api/issues/5/labels/1", None).status,
        204
    );
    assert_eq!(
        get_json(&emu, "/repos/acme/api/issues/5")["labels"],
        json!([])
    );
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/issues/5/labels",
        Some(&json!({"labels": ["bug"]})),
    );
    assert_eq!(r.status, 200);
    assert!(
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["name"] == "bug")
    );
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/issues/5/labels",
        Some(&json!({"labels": [2]})),
    );
    assert!(
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["name"] == "est/1d")
    );
    let bad = call(
        &emu,
        "POST",
        "/repos/acme/api/issues/5/labels",
        Some(&json!({"labels": ["nope"]})),
    );
    assert_eq!(bad.status, 422);
    // Remove one.
    let r = call(&emu, "DELETE", "/repos/acme/api/issues/5/labels/1", None);
    assert_eq!(r.status, 204);
    let issue = get_json(&emu, "/repos/acme/api/issues/5");
    assert!(
        issue["labels"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["name"] != "bug")
    );
    assert!(time(&issue["updated_at"]) > t0);
    let tl = get_json(&emu, "/repos/acme/api/issues/5/timeline?limit=50");
    let bug: Vec<&Value> = tl
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "label" && e["label"]["name"] == "bug")
        .collect();
    assert_eq!(
        bug.iter()
            .map(|e| e["body"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["", "1", ""]
    );
    // Replace.
    let r = call(
        &emu,
        "PUT",
        "/repos/acme/api/issues/5/labels",
        Some(&json!({"labels": ["p/1"]})),
    );
    assert_eq!(r.json().as_array().unwrap().len(), 1);
    assert_eq!(
        get_json(&emu, "/repos/acme/api/issues/5/labels")[0]["name"],
        "p/1"
    );
    // Close, set milestone, retitle.
    let r = call(
        &emu,
        "PATCH",
        "/repos/acme/api/issues/5",
        Some(&json!({"state": "closed", "milestone": 1, "title": "New title"})),
    );
    assert_eq!(r.status, 201);
    let issue = r.json();
    assert_eq!(issue["state"], "closed");
    assert!(issue["closed_at"].is_string());
    assert_eq!(issue["milestone"]["id"], 1);
    assert_eq!(issue["title"], "New title");
    let since = issue["updated_at"].as_str().unwrap().replace(':', "%3A");
    let changed = get_json(
        &emu,
        &format!("/repos/acme/api/issues?state=all&type=issues&since={since}"),
    );
    assert_eq!(changed.as_array().unwrap().len(), 1);
    assert_eq!(changed[0]["number"], 5);
    let tl = get_json(&emu, "/repos/acme/api/issues/5/timeline?limit=50");
    let kinds: BTreeSet<&str> = tl
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains("close") && kinds.contains("change_title") && kinds.contains("milestone")
    );
    // Milestone edit.
    let r = call(
        &emu,
        "PATCH",
        "/repos/acme/api/milestones/1",
        Some(&json!({"description": "deadline/hard", "due_on": "2027-01-15T00:00:00Z"})),
    );
    assert_eq!(r.status, 200);
    let ms = get_json(&emu, "/repos/acme/api/milestones?state=all");
    let m1 = ms
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == 1)
        .unwrap();
    assert_eq!(m1["description"], "deadline/hard");
    assert_eq!(m1["due_on"], "2027-01-15T00:00:00Z");
    // Dependencies.
    let meta = json!({"owner": "acme", "repo": "api", "index": 1});
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/issues/5/dependencies",
        Some(&meta),
    );
    assert_eq!(r.status, 201);
    let deps = get_json(&emu, "/repos/acme/api/issues/5/dependencies");
    assert_eq!(deps[0]["number"], 1);
    let blocks = get_json(&emu, "/repos/acme/api/issues/1/blocks");
    assert!(blocks.as_array().unwrap().iter().any(|i| i["number"] == 5));
    let r = call(
        &emu,
        "DELETE",
        "/repos/acme/api/issues/5/dependencies",
        Some(&meta),
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        get_json(&emu, "/repos/acme/api/issues/5/dependencies"),
        json!([])
    );
    // Clear labels.
    assert_eq!(
        call(&emu, "DELETE", "/repos/acme/api/issues/5/labels", None).status,
        204
    );
    assert_eq!(
        get_json(&emu, "/repos/acme/api/issues/5")["labels"],
        json!([])
    );
}

#[test]
fn dataset_changes_between_syncs_show_up() {
    let emu = small();
    let key: IssueKey = "acme/web#3".parse().unwrap();
    let at = emu.with_dataset(|ds| {
        assert!(ds.update_issue(&key, |i| i.title = "Changed offline".into()));
        ds.issue(&key).unwrap().updated_at
    });
    let q = commitea_time(at);
    let v = get_json(&emu, &format!("/repos/acme/web/issues?state=all&since={q}"));
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["title"], "Changed offline");
    let new = emu.with_dataset(|ds| ds.create_issue(&key.repo, "Brand new", "bob"));
    let got = get_json(&emu, &format!("/repos/acme/web/issues/{}", new.number));
    assert_eq!(got["user"]["login"], "bob");
}

fn commitea_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        .replace(':', "%3A")
}

#[test]
fn requests_are_counted_and_stop_closes_the_port() {
    let mut emu = small();
    get(&emu, "/version");
    get(&emu, "/repos/acme/api/issues/1/timeline?page=1");
    get(&emu, "/repos/acme/api/issues/3/timeline?page=2");
    let _ = raw(&emu.url(), "GET", "/api/v1/version", None, None);
    assert_eq!(emu.request_count(), 4);
    assert_eq!(emu.count("GET /version"), 2);
    assert_eq!(
        emu.count("GET /repos/{owner}/{repo}/issues/{index}/timeline"),
        2
    );
    assert_eq!(
        emu.requests()[1],
        "GET /api/v1/repos/acme/api/issues/1/timeline?page=1"
    );
    emu.reset_counts();
    assert_eq!(emu.request_count(), 0);
    let url = emu.url();
    emu.stop();
    assert!(raw(&url, "GET", "/api/v1/version", None, None).is_err());
}

#[test]
fn comments_per_issue_and_per_repository_honour_since() {
    let emu = demo();
    let r = get(&emu, "/repos/acme/api/issues/comments?limit=50");
    let total = r.total();
    assert!(total > 0);
    let first = r.json();
    let times: Vec<DateTime<Utc>> = first
        .as_array()
        .unwrap()
        .iter()
        .map(|c| time(&c["created_at"]))
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "oldest first");
    // Page through: every comment once.
    let mut ids = BTreeSet::new();
    for page in 1.. {
        let v = get_json(
            &emu,
            &format!("/repos/acme/api/issues/comments?limit=50&page={page}"),
        );
        if v.as_array().unwrap().is_empty() {
            break;
        }
        ids.extend(
            v.as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_u64().unwrap()),
        );
    }
    assert_eq!(ids.len(), total);
    // `since` keeps comments updated at or after it.
    let pick = &first[first.as_array().unwrap().len() / 2];
    let t = time(&pick["updated_at"]);
    let q = commitea_time(t);
    let later = get(
        &emu,
        &format!("/repos/acme/api/issues/comments?since={q}&limit=50"),
    );
    assert!(later.total() < total);
    assert!(
        later
            .json()
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == pick["id"])
    );
    // Per issue: the issue's comment count matches its comments.
    let n = pick["issue_url"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap();
    let issue = get_json(&emu, &format!("/repos/acme/api/issues/{n}"));
    let comments = get_json(&emu, &format!("/repos/acme/api/issues/{n}/comments"));
    assert_eq!(issue["comments"], comments.as_array().unwrap().len());
    let since_pick = get_json(
        &emu,
        &format!("/repos/acme/api/issues/{n}/comments?since={q}"),
    );
    assert!(
        since_pick
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == pick["id"])
    );
    assert!(
        since_pick
            .as_array()
            .unwrap()
            .iter()
            .all(|c| time(&c["updated_at"]) >= t)
    );
}

#[test]
fn milestones_filter_by_state_and_every_demo_issue_has_the_spec_shape() {
    let emu = demo();
    let all = get(&emu, "/repos/acme/api/milestones?state=all");
    let open = get(&emu, "/repos/acme/api/milestones");
    let closed = get(&emu, "/repos/acme/api/milestones?state=closed");
    assert_eq!(all.total(), open.total() + closed.total());
    assert!(
        open.json()
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["state"] == "open")
    );
    assert!(
        closed
            .json()
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["state"] == "closed")
    );
    let Some(defs) = definitions() else { return };
    for repo in emu.dataset().repositories() {
        for page in 1.. {
            let v = get_json(
                &emu,
                &format!("/repos/{repo}/issues?state=all&limit=50&page={page}"),
            );
            if v.as_array().unwrap().is_empty() {
                break;
            }
            for i in v.as_array().unwrap() {
                assert_shape(&defs, "Issue", i);
                for l in i["labels"].as_array().unwrap() {
                    assert_shape(&defs, "Label", l);
                    assert_ne!(
                        l["id"], 0,
                        "every label of {repo}#{} is in labels.yaml",
                        i["number"]
                    );
                }
                if !i["milestone"].is_null() {
                    assert_shape(&defs, "Milestone", &i["milestone"]);
                }
            }
        }
    }
}
