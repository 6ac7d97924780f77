//! The Gitea API emulator: auth, the spec's JSON shapes, pagination, `since`, the timeline's quirks,
//! dependencies, fault injection, write endpoints and request counting, over real loopback HTTP.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use commitea::domain::{IssueKey, RepoName};
use commitea::state::{Layout, Snapshot};
use commitea_testkit::gitea::{
    Anonymous, Dataset, Emulator, EmulatorOptions, FUTURE_FIELD, Fault, FaultKind,
};
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

/// The bundled Gitea 1.27.1 OpenAPI (Swagger 2.0) subset; see `tests/fixtures/gitea/README.md`.
fn spec() -> Value {
    let read = |name: &str| -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gitea")
            .join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap()
    };
    // The operations CommiTea came to use after the subset was cut, cut from the same spec (README.md).
    let mut spec = read("swagger-subset.json");
    let additions = read("swagger-additions.json");
    assert_eq!(additions["info"]["version"], spec["info"]["version"]);
    for part in ["paths", "definitions", "responses"] {
        for (k, v) in additions[part].as_object().unwrap() {
            let had = spec[part]
                .as_object_mut()
                .unwrap()
                .insert(k.clone(), v.clone());
            assert!(had.is_none(), "{part}/{k} is in both files");
        }
    }
    spec
}

/// Scalar or array properties that Gitea sends as `null` (a Go pointer or a slice left nil) although the spec, which
/// cannot say "nullable", gives a plain type: (definition, property).
const GO_POINTERS: &[(&str, &str)] = &[
    // `MergedCommitID *string`: null until the pull request is merged.
    ("PullRequest", "merge_commit_sha"),
    // Built by appending to a nil slice: null when nobody is assigned (services/convert/issue.go).
    ("Issue", "assignees"),
    ("PullRequest", "assignees"),
    // `Projects []*Project`, set only when the issue is in a project (services/convert/issue.go).
    ("Issue", "projects"),
    // Left nil in the placeholder of a hidden blocker (routers/api/v1/repo/issue_dependency.go).
    ("Issue", "labels"),
    // Copied from nil slices in the list (services/convert/pull.go `ToAPIPullRequests`).
    ("PullRequest", "requested_reviewers"),
    ("PullRequest", "requested_reviewers_teams"),
];

/// Properties Gitea leaves out (`omitempty` on a pointer): (definition, property). The pull request list
/// never sends the diff counts (services/convert/pull.go `ToAPIPullRequests`).
const OMITTED: &[(&str, &str)] = &[
    ("PullRequest", "additions"),
    ("PullRequest", "deletions"),
    ("PullRequest", "changed_files"),
];

/// Strict JSON-Schema (draft 4) validators for the emulator's answers, compiled from the spec's `definitions`.
///
/// Swagger 2.0 schemas are draft-4 JSON Schema plus a few keywords of its own; [`strict`] converts each one:
/// - `x-go-*`, `description`, `title` and `example` are dropped; `format` is kept only for `date-time` (checked as
///   RFC 3339); the others (`int64`, `email`) are dropped, as Swagger's formats are hints more than rules.
/// - every object definition gets `additionalProperties: false` (a field the spec lacks fails) and lists all its
///   properties as `required` (a field the spec has but the answer lacks fails): Gitea always serialises them,
///   since its API structs do not use `omitempty`. Maps (`additionalProperties` given by the spec) stay open.
/// - nullability: Swagger 2.0 cannot say "nullable", and Go writes a nil pointer or a nil slice as `null`. A
///   property may be `null` when its schema is a `$ref` or an object (`*Struct` in Go) or a `date-time` string
///   (`*time.Time`, e.g. `closed_at`, `due_date`, `merged_at`). Numbers, booleans, other strings and arrays may
///   not be `null`, except the few Go pointers and nil slices listed in [`GO_POINTERS`].
/// - `$ref: "#/definitions/X"` resolves because the root schema embeds every converted definition under
///   `definitions`.
struct Shapes {
    spec: Value,
    definitions: serde_json::Map<String, Value>,
}

impl Shapes {
    fn new() -> Self {
        let spec = spec();
        let definitions = spec["definitions"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let mut converted = strict(v);
                for (_, prop) in GO_POINTERS.iter().filter(|(d, _)| d == k) {
                    let p = &mut converted["properties"][*prop];
                    assert!(p.is_object(), "{k}.{prop} is not in the spec");
                    *p = json!({ "anyOf": [{ "type": "null" }, p.take()] });
                }
                for (_, prop) in OMITTED.iter().filter(|(d, _)| d == k) {
                    let required = converted["required"].as_array_mut().unwrap();
                    assert!(
                        required.iter().any(|r| r == prop),
                        "{k}.{prop} is not in the spec"
                    );
                    required.retain(|r| r != prop);
                }
                (k.clone(), converted)
            })
            .collect();
        Shapes { spec, definitions }
    }

    /// The spec's (converted) 200 schema of `GET path`, following a `$ref` to `#/responses/X`.
    fn response(&self, path: &str) -> Value {
        let ok = &self.spec["paths"][path]["get"]["responses"]["200"];
        assert!(ok.is_object(), "GET {path}: no 200 response in the spec");
        let ok = match ok["$ref"].as_str() {
            Some(r) => &self.spec["responses"][r.strip_prefix("#/responses/").unwrap()],
            None => ok,
        };
        assert!(ok["schema"].is_object(), "GET {path}: no schema");
        strict(&ok["schema"])
    }

    /// A validator for `schema`, with every definition embedded for `$ref`s.
    fn validator(&self, schema: Value) -> jsonschema::Validator {
        let root = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "definitions": self.definitions,
            "allOf": [schema],
        });
        jsonschema::draft4::options()
            .should_validate_formats(true)
            .build(&root)
            .unwrap()
    }

    fn definition(&self, name: &str) -> jsonschema::Validator {
        assert!(self.definitions.contains_key(name), "no definition {name}");
        self.validator(json!({"$ref": format!("#/definitions/{name}")}))
    }
}

/// The problems `validator` finds in `v`, one line each (empty when valid).
fn problems(validator: &jsonschema::Validator, v: &Value) -> Vec<String> {
    validator
        .iter_errors(v)
        .map(|e| format!("at {}: {e}", e.instance_path()))
        .collect()
}

fn assert_valid(validator: &jsonschema::Validator, what: &str, v: &Value) {
    let p = problems(validator, v);
    assert!(
        p.is_empty(),
        "{what} does not match the spec:\n{}\n{v:#}",
        p.join("\n")
    );
}

/// Checks `v` against the spec's definition `name` (for nested values, or shapes no operation in the subset has).
fn assert_shape(shapes: &Shapes, name: &str, v: &Value) {
    assert_valid(&shapes.definition(name), name, v);
}

/// One Swagger schema as a strict draft-4 schema; see [`Shapes`] for the rules.
fn strict(s: &Value) -> Value {
    let Some(obj) = s.as_object() else {
        return s.clone();
    };
    if let Some(r) = obj.get("$ref") {
        // Swagger ignores a `$ref`'s siblings.
        return json!({ "$ref": r });
    }
    let mut out = serde_json::Map::new();
    for (k, v) in obj {
        match k.as_str() {
            "type" | "enum" | "uniqueItems" => {
                out.insert(k.clone(), v.clone());
            }
            "format" if v == "date-time" => {
                out.insert(k.clone(), v.clone());
            }
            "items" => {
                out.insert(k.clone(), strict(v));
            }
            "additionalProperties" => {
                let v = if v.is_object() { strict(v) } else { v.clone() };
                out.insert(k.clone(), v);
            }
            "properties" => {
                let props: serde_json::Map<String, Value> = v
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(name, p)| (name.clone(), nullable(p, strict(p))))
                    .collect();
                let names: Vec<Value> = props.keys().cloned().map(Value::String).collect();
                if !names.is_empty() {
                    out.insert("required".into(), Value::Array(names));
                }
                out.insert(k.clone(), Value::Object(props));
            }
            // `required` is replaced by "all properties"; `x-go-*`, descriptions, examples, other formats dropped.
            _ => {}
        }
    }
    let is_object =
        obj.get("type").is_some_and(|t| t == "object") || obj.contains_key("properties");
    if is_object && !obj.contains_key("additionalProperties") {
        out.insert("additionalProperties".into(), Value::Bool(false));
        // The one field the emulator adds as a newer Gitea would: allowed, never required.
        if let Some(props) = out.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert(FUTURE_FIELD.into(), json!({}));
        }
    }
    out.into()
}

/// `converted`, or `null` too when the Swagger property `p` is a Go pointer (see [`Shapes`]).
fn nullable(p: &Value, converted: Value) -> Value {
    let pointer = p.get("$ref").is_some()
        || p["type"] == "object"
        || (p["type"] == "string" && p["format"] == "date-time");
    if pointer {
        json!({ "anyOf": [{ "type": "null" }, converted] })
    } else {
        converted
    }
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn auth_needs_the_token_as_token_or_bearer() {
    let emu = small();
    let base = emu.url();
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

/// Gitea lets an anonymous request past sign-in unless `REQUIRE_SIGNIN_VIEW` is set; then a private
/// repository is not found (`repoAssignment`) and a `reqToken` route (every write, tracked times, `/user`)
/// answers 401 "token is required".
#[test]
fn a_read_scoped_token_is_refused_the_user_and_every_write() {
    // routers/api/v1/api.go: `/user` wants `read:user`, an issue write `write:issue` (audit 184: the
    // emulator answered `/user` to a token of issue and repository scopes).
    let emu = Emulator::start(
        Dataset::from_snapshot(&load("tests/fixtures/small")),
        EmulatorOptions {
            read_scoped_token: true,
            ..EmulatorOptions::default()
        },
    )
    .unwrap();
    let user = get(&emu, "/user");
    assert_eq!(user.status, 403);
    assert!(
        user.json()["message"]
            .as_str()
            .unwrap()
            .contains("required=[read:user]"),
        "{:?}",
        user.json()
    );
    assert_eq!(get(&emu, "/repos/acme/api/issues").status, 200);
    let write = call(
        &emu,
        "POST",
        "/repos/acme/api/issues",
        Some(&serde_json::json!({"title": "x"})),
    );
    assert_eq!(write.status, 403);
    assert!(
        write.json()["message"]
            .as_str()
            .unwrap()
            .contains("required=[write:issue]")
    );
    // Without scopes the user is answered.
    assert_eq!(get(&small(), "/user").status, 200);
}

#[test]
fn a_request_without_a_token_is_answered_as_gitea_answers_it() {
    let anonymous = |mode: Anonymous, method: &str, path: &str| -> (u16, Value) {
        let snapshot = load("tests/fixtures/small");
        let emu = Emulator::start(
            Dataset::from_snapshot(&snapshot),
            EmulatorOptions {
                anonymous: mode,
                ..EmulatorOptions::default()
            },
        )
        .unwrap();
        let body = (method != "GET").then(|| json!({"title": "x"}));
        let r = raw(
            &emu.url(),
            method,
            &format!("/api/v1{path}"),
            None,
            body.as_ref(),
        )
        .unwrap();
        (r.status, r.json())
    };
    // The default: private repositories.
    assert_eq!(anonymous(Anonymous::Private, "GET", "/version").0, 200);
    assert_eq!(anonymous(Anonymous::Private, "GET", "/settings/api").0, 200);
    let (status, body) = anonymous(Anonymous::Private, "GET", "/repos/acme/api/issues");
    assert_eq!(status, 404);
    assert_eq!(body["message"], "The target couldn't be found.");
    assert_eq!(
        anonymous(Anonymous::Private, "GET", "/repos/acme/api").0,
        404
    );
    let (status, body) = anonymous(Anonymous::Private, "GET", "/user");
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some("token is required"))
    );
    // Public repositories: reads answer, writes and tracked times want a token.
    let (status, body) = anonymous(Anonymous::Public, "GET", "/repos/acme/api");
    assert_eq!((status, &body["private"]), (200, &json!(false)));
    assert_eq!(
        anonymous(Anonymous::Public, "GET", "/repos/acme/api/issues").0,
        200
    );
    let (status, body) = anonymous(Anonymous::Public, "POST", "/repos/acme/api/issues");
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some("token is required"))
    );
    assert_eq!(
        anonymous(Anonymous::Public, "GET", "/repos/acme/api/issues/1/times").0,
        401
    );
    // REQUIRE_SIGNIN_VIEW: nothing answers.
    let (status, body) = anonymous(Anonymous::SignInRequired, "GET", "/version");
    assert_eq!(
        (status, body["message"].as_str()),
        (403, Some("Only signed in user is allowed to call APIs."))
    );
    // A private repository says so to its own token.
    let emu = small();
    assert_eq!(get_json(&emu, "/repos/acme/api")["private"], true);
}

#[test]
fn responses_have_the_spec_fields() {
    let emu = small();
    let defs = Shapes::new();
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
    // Gitea's total is only this page's length.
    let page_len = whole.json().as_array().unwrap().len();
    assert_eq!(whole.total(), page_len);
    // Past the end the page is a nil slice: `null`, not `[]`.
    let past = get(&emu, "/repos/acme/api/issues/1/timeline?limit=50&page=2");
    assert_eq!(past.body, b"null");
    assert_eq!(past.total(), 0);
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
        if v.is_null() {
            break;
        }
        let n = v.as_array().unwrap().len();
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
                .find(|i| {
                    i.timeline
                        .iter()
                        .any(|e| e.kind == commitea::domain::EventKind::Label && e.removed)
                })
                .map(|i| (r.clone(), i.number))
        })
        .unwrap();
    let mut removed = false;
    for page in 1.. {
        let v = get_json(
            &emu,
            &format!("/repos/{repo}/issues/{n}/timeline?page={page}"),
        );
        if v.is_null() {
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
fn an_organisation_lists_its_labels_and_a_user_has_none() {
    let emu = small();
    assert_eq!(
        get(&emu, "/orgs/acme/labels").status,
        404,
        "a user, not an organisation"
    );
    let label = emu.with_dataset(|d| d.create_org_label("acme", "p/3", "cccccc", true));
    let listed = get_json(&emu, "/orgs/acme/labels");
    assert_eq!(listed[0]["name"], "p/3");
    assert_eq!(listed[0]["exclusive"], true);
    // Not among the repository's, but an issue of the organisation may carry it, by id or by name.
    assert!(
        get_json(&emu, "/repos/acme/api/labels")
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["id"] != label.id)
    );
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/issues/5/labels",
        Some(&json!({"labels": [label.id]})),
    );
    assert!(names(&r.json()).contains(&"p/3"), "{}", r.json());
    let path = format!("/repos/acme/api/issues/5/labels/{}", label.id);
    assert_eq!(call(&emu, "DELETE", &path, None).status, 204);
    assert!(!names(&get_json(&emu, "/repos/acme/api/issues/5/labels")).contains(&"p/3"));
    // A new issue keeps it too (`NewIssueWithIndex` takes the repository's and the organisation's).
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/issues",
        Some(&json!({"title": "With an organisation's label", "labels": [label.id]})),
    );
    assert_eq!(r.status, 201);
    assert!(names(&r.json()["labels"]).contains(&"p/3"), "{}", r.json());
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
    // Gitea drops unknown label names silently (routers/api/v1/repo/issue_label.go).
    assert_eq!(bad.status, 200);
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
    // An edit without a due date, or with null, keeps it (`EditMilestone` sets it only when given).
    for body in [json!({"description": ""}), json!({"due_on": null})] {
        let r = call(&emu, "PATCH", "/repos/acme/api/milestones/1", Some(&body));
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["due_on"], "2027-01-15T00:00:00Z", "{body}");
    }
    // A label id of no repository is 422; one of another repository deletes nothing, 204.
    let r = call(
        &emu,
        "DELETE",
        "/repos/acme/api/issues/5/labels/987654",
        None,
    );
    assert_eq!(r.status, 422);
    let web: Vec<u64> = get_json(&emu, "/repos/acme/web/labels")
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_u64().unwrap())
        .collect();
    let api: Vec<u64> = get_json(&emu, "/repos/acme/api/labels")
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_u64().unwrap())
        .collect();
    if let Some(other) = web.iter().find(|id| !api.contains(id)) {
        let path = format!("/repos/acme/api/issues/5/labels/{other}");
        assert_eq!(call(&emu, "DELETE", &path, None).status, 204);
    }
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
    // Closing an issue with an open dependency is refused, as `closeOrReopenIssue` refuses it.
    assert_eq!(get_json(&emu, "/repos/acme/api/issues/3")["state"], "open");
    let on_3 = json!({"owner": "acme", "repo": "api", "index": 3});
    let path = "/repos/acme/api/issues/5/dependencies";
    assert_eq!(call(&emu, "POST", path, Some(&on_3)).status, 201);
    let open = json!({"state": "open"});
    assert_eq!(
        call(&emu, "PATCH", "/repos/acme/api/issues/5", Some(&open)).status,
        201
    );
    let close = json!({"state": "closed"});
    let r = call(&emu, "PATCH", "/repos/acme/api/issues/5", Some(&close));
    assert_eq!(r.status, 412, "{}", r.json());
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("still has open dependencies")
    );
    assert_eq!(get_json(&emu, "/repos/acme/api/issues/5")["state"], "open");
    assert_eq!(call(&emu, "DELETE", path, Some(&on_3)).status, 201);
    assert_eq!(
        call(&emu, "PATCH", "/repos/acme/api/issues/5", Some(&close)).status,
        201
    );
    let blocks = get_json(&emu, "/repos/acme/api/issues/1/blocks");
    assert!(blocks.as_array().unwrap().iter().any(|i| i["number"] == 5));
    // Gitea writes the event in both issues, and both change (`createIssueDependencyComment`).
    let mirror = get_json(&emu, "/repos/acme/api/issues/1/timeline?limit=50");
    let added = mirror
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "add_dependency" && e["dependent_issue"]["number"] == 5)
        .unwrap_or_else(|| panic!("{mirror}"));
    assert_eq!(
        get_json(&emu, "/repos/acme/api/issues/1")["updated_at"],
        added["created_at"]
    );
    let r = call(
        &emu,
        "DELETE",
        "/repos/acme/api/issues/5/dependencies",
        Some(&meta),
    );
    // Removing a dependency answers 201 too (issue_dependency.go `RemoveIssueDependency`).
    assert_eq!(r.status, 201);
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
    let open = get(&emu, "/repos/acme/api/milestones?state=open");
    let closed = get(&emu, "/repos/acme/api/milestones?state=closed");
    assert_eq!(all.total(), open.total() + closed.total());
    assert!(open.total() > 0 && closed.total() > 0);
    // No state lists them all, as Gitea's `ListMilestones` filters only on open or closed (audit 116);
    // a name is a case-insensitive part of the title.
    assert_eq!(get(&emu, "/repos/acme/api/milestones").total(), all.total());
    let title = all.json()[0]["title"].as_str().unwrap().to_owned();
    let part: String = title.chars().take(4).collect::<String>().to_uppercase();
    let named = get_json(&emu, &format!("/repos/acme/api/milestones?name={part}"));
    assert!(
        named
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["title"] == title.as_str()),
        "{part}: {named}"
    );
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
    let defs = Shapes::new();
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

/// Validates every answer of the read endpoints the sync uses against the spec, counting bodies and items.
struct Audit<'a> {
    emu: &'a Emulator,
    shapes: &'a Shapes,
    /// Per spec path: the validator for the body (or, for a list, for each item) and whether it is a list.
    validators: BTreeMap<&'static str, (jsonschema::Validator, bool)>,
    /// Per spec path: (bodies, list items) validated.
    counts: BTreeMap<&'static str, (usize, usize)>,
    /// (spec path, field path) where a `null` was seen; `(the page)` is a whole list body, `[]` an element.
    nulls: BTreeSet<(String, String)>,
}

/// Records every place in `v` that is `null`, as a field path (`[].milestone`, `.closed_at`).
fn null_paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Null => {
            out.insert(at.to_owned());
        }
        Value::Array(items) => {
            for item in items {
                null_paths(item, &format!("{at}[]"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                null_paths(x, &format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

impl<'a> Audit<'a> {
    fn new(emu: &'a Emulator, shapes: &'a Shapes) -> Self {
        Audit {
            emu,
            shapes,
            validators: BTreeMap::new(),
            counts: BTreeMap::new(),
            nulls: BTreeSet::new(),
        }
    }

    /// `GET path` (an instance of the spec's `template`), validated; returns the body.
    fn check(&mut self, template: &'static str, path: &str) -> Value {
        let body = get_json(self.emu, path);
        let shapes = self.shapes;
        let (validator, list) = self.validators.entry(template).or_insert_with(|| {
            let schema = if template == TIMES {
                // issueTrackedTimes is not in the subset (CommiTea's sync reads times but the subset was cut
                // before); Gitea's 200 there is `TrackedTimeList`, an array of `TrackedTime`.
                json!({"type": "array", "items": {"$ref": "#/definitions/TrackedTime"}})
            } else {
                shapes.response(template)
            };
            match schema["type"].as_str() {
                Some("array") => (shapes.validator(schema["items"].clone()), true),
                _ => (shapes.validator(schema), false),
            }
        });
        let count = self.counts.entry(template).or_default();
        count.0 += 1;
        let mut seen = BTreeSet::new();
        if *list {
            if body.is_null() {
                // Only the timeline builds its list as a nil slice (see docs/gitea.md).
                assert!(template.ends_with("/timeline"), "{path}: a null list");
                self.nulls
                    .insert((template.to_owned(), "(the page)".to_owned()));
                return json!([]);
            }
            let items = body
                .as_array()
                .unwrap_or_else(|| panic!("{path}: not a list: {body}"));
            for (n, item) in items.iter().enumerate() {
                if item.is_null() {
                    assert!(template.ends_with("/timeline"), "{path}: a null element");
                    continue;
                }
                assert_valid(validator, &format!("{path} [{n}]"), item);
            }
            count.1 += items.len();
            null_paths(&body, "", &mut seen);
        } else {
            assert_valid(validator, path, &body);
            null_paths(&body, "", &mut seen);
        }
        self.nulls
            .extend(seen.into_iter().map(|p| (template.to_owned(), p)));
        body
    }

    /// Every page of a paginated list (`limit=50`), each validated, until an empty page (the timeline may send
    /// short pages before the end).
    fn check_pages(&mut self, template: &'static str, path: &str) -> Vec<Value> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut out: Vec<Value> = Vec::new();
        for page in 1..=1000 {
            let body = self.check(template, &format!("{path}{sep}limit=50&page={page}"));
            let items: Vec<Value> = body
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| !v.is_null())
                .cloned()
                .collect();
            if items.is_empty() {
                return out;
            }
            assert!(
                out.first() != items.first(),
                "{path}: page {page} repeats page 1"
            );
            out.extend(items.iter().cloned());
        }
        panic!("{path}: more than 1000 pages");
    }
}

const TIMES: &str = "/repos/{owner}/{repo}/issues/{index}/times";

/// The rows of docs/gitea.md's null table: (endpoint, field).
fn documented_nulls() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/gitea.md"))
        .unwrap();
    let strip = |c: &str| c.trim().trim_matches('`').to_owned();
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("What Gitea sends as `null`"))
        .expect("docs/gitea.md has the null table");
    let rows: Vec<(String, String)> = section
        .lines()
        .filter(|l| l.starts_with("| `/"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').collect();
            assert!(cells[2].contains("`null`"), "{l}");
            let field = strip(cells[1]);
            (strip(cells[0]), field)
        })
        .collect();
    assert!(
        rows.len() >= 20,
        "the null table of docs/gitea.md is missing"
    );
    rows
}

/// Adds to the demo what a real server has and the demo lacks: a timeline entry whose referenced pull
/// request is gone (Gitea answers a `null` element) and a blocker in a repository the token cannot see (Gitea
/// answers a placeholder). The sync must leave both out.
pub(crate) fn add_dangling_references(emu: &Emulator) {
    emu.with_dataset(|ds| {
        let repo = ds.repositories()[0].clone();
        let key = ds
            .issues(&repo)
            .iter()
            .find(|i| {
                i.timeline
                    .iter()
                    .any(|e| e.kind == commitea::domain::EventKind::AddDependency)
            })
            .map(|i| repo.issue(i.number))
            .unwrap();
        let hidden = RepoName::new("secret", "vault").issue(7);
        // Inserted as it is: the references were there all along, nothing changed `updated_at`.
        let mut i = ds.issue(&key).unwrap().clone();
        let mut gone = commitea::domain::TimelineEvent::new(
            9_000_001,
            commitea::domain::EventKind::PullRef,
            i.created_at,
            &i.author,
        );
        gone.pull = Some(repo.issue(99_999));
        i.timeline.push(gone);
        i.depends_on.push(hidden);
        ds.insert_issue(&repo, i);
    });
}

#[test]
fn every_demo_answer_of_the_sync_endpoints_matches_the_spec() {
    let emu = demo();
    add_dangling_references(&emu);
    // The demo's milestones all have a due date; Gitea sends `null` for one without.
    emu.with_dataset(|ds| {
        let id = ds.milestones(&ds.repositories()[0])[0].id;
        ds.update_milestone(id, |m| m.due_on = None);
    });
    let shapes = Shapes::new();
    let mut audit = Audit::new(&emu, &shapes);
    audit.check("/settings/api", "/settings/api");
    audit.check("/version", "/version");
    audit.check("/user", "/user");
    for repo in emu.dataset().repositories() {
        let base = format!("/repos/{repo}");
        let r = audit.check("/repos/{owner}/{repo}", &base);
        let deps = r["internal_tracker"]["enable_issue_dependencies"] == true;
        audit.check_pages("/repos/{owner}/{repo}/labels", &format!("{base}/labels"));
        audit.check_pages(
            "/repos/{owner}/{repo}/milestones",
            &format!("{base}/milestones?state=all"),
        );
        audit.check_pages(
            "/repos/{owner}/{repo}/issues/comments",
            &format!("{base}/issues/comments"),
        );
        let issues = audit.check_pages(
            "/repos/{owner}/{repo}/issues",
            &format!("{base}/issues?state=all"),
        );
        for i in &issues {
            let n = &i["number"];
            let at = format!("{base}/issues/{n}");
            audit.check("/repos/{owner}/{repo}/issues/{index}", &at);
            // Not paginated in Gitea: one answer holds them all.
            audit.check(
                "/repos/{owner}/{repo}/issues/{index}/comments",
                &format!("{at}/comments"),
            );
            audit.check_pages(
                "/repos/{owner}/{repo}/issues/{index}/timeline",
                &format!("{at}/timeline"),
            );
            audit.check_pages(TIMES, &format!("{at}/times"));
            if deps {
                audit.check_pages(
                    "/repos/{owner}/{repo}/issues/{index}/dependencies",
                    &format!("{at}/dependencies"),
                );
                audit.check_pages(
                    "/repos/{owner}/{repo}/issues/{index}/blocks",
                    &format!("{at}/blocks"),
                );
            }
        }
        let pulls = audit.check_pages(
            "/repos/{owner}/{repo}/pulls",
            &format!("{base}/pulls?state=all"),
        );
        for p in &pulls {
            audit.check(
                "/repos/{owner}/{repo}/pulls/{index}",
                &format!("{base}/pulls/{}", p["number"]),
            );
        }
    }
    let (bodies, items): (usize, usize) = audit
        .counts
        .values()
        .fold((0, 0), |(b, i), (nb, ni)| (b + nb, i + ni));
    eprintln!("validated {bodies} bodies ({items} list items) against the spec:");
    for (template, (b, i)) in &audit.counts {
        eprintln!("  GET {template}: {b} bodies, {i} items");
    }
    // Every null position docs/gitea.md lists occurred in these answers.
    let missing: Vec<_> = documented_nulls()
        .into_iter()
        .filter(|row| !audit.nulls.contains(row))
        .collect();
    assert!(
        missing.is_empty(),
        "documented null positions never seen: {missing:?}\nseen: {:#?}",
        audit.nulls
    );
    // Every endpoint was exercised, and every list endpoint with at least one item.
    assert_eq!(audit.counts.len(), 16, "{:?}", audit.counts.keys());
    for (template, (b, i)) in &audit.counts {
        let (_, list) = &audit.validators[template];
        assert!(
            *b > 0 && (!list || *i > 0),
            "GET {template}: nothing validated"
        );
    }
}

#[test]
fn strict_schemas_catch_unknown_missing_and_mistyped_fields() {
    let emu = small();
    let shapes = Shapes::new();
    let schema = shapes.response("/repos/{owner}/{repo}/issues/{index}");
    let validator = shapes.validator(schema);
    let issue = get_json(&emu, "/repos/acme/api/issues/1");
    assert_valid(&validator, "issue 1", &issue);
    let fails = |mutate: &dyn Fn(&mut Value), needle: &str| {
        let mut v = issue.clone();
        mutate(&mut v);
        let p = problems(&validator, &v);
        assert!(
            p.iter().any(|e| e.contains(needle)),
            "expected a problem mentioning {needle:?}, got {p:?}"
        );
    };
    // An extra field, at the top and nested.
    fails(&|v| v["estimate_hours"] = json!(3), "estimate_hours");
    fails(&|v| v["user"]["nickname"] = json!("x"), "nickname");
    // A dropped field, at the top and nested.
    fails(
        &|v| drop(v.as_object_mut().unwrap().remove("title")),
        "title",
    );
    fails(
        &|v| drop(v["labels"][0].as_object_mut().unwrap().remove("color")),
        "color",
    );
    // A wrong type, and null where Go never sends it (a plain string, a number).
    fails(&|v| v["number"] = json!("1"), "/number");
    fails(&|v| v["title"] = Value::Null, "/title");
    fails(&|v| v["comments"] = Value::Null, "/comments");
    fails(&|v| v["body"] = Value::Null, "/body");
    // A malformed date-time.
    fails(&|v| v["created_at"] = json!("yesterday"), "/created_at");
    // Null is fine for pointers: a milestone, a closing time, a nil slice.
    let mut v = issue.clone();
    v["milestone"] = Value::Null;
    v["closed_at"] = Value::Null;
    v["assignees"] = Value::Null;
    v["labels"] = Value::Null;
    assert_valid(&validator, "issue 1 with nulls", &v);
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect()
}

#[test]
fn label_issue_dependency_and_milestone_writes_follow_gitea() {
    let emu = small();
    let shapes = Shapes::new();
    // Creating labels: a new id past the dataset's highest (14), colours normalised, no duplicate-name check.
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/labels",
        Some(&json!({"name": "kind/feature", "color": "#ABC", "exclusive": true})),
    );
    assert_eq!(r.status, 201);
    let feature = r.json();
    assert_shape(&shapes, "Label", &feature);
    assert_eq!(feature["id"], 15);
    assert_eq!(feature["color"], "aabbcc");
    assert_eq!(feature["exclusive"], true);
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/labels",
        Some(
            &json!({"name": "kind/bug", "color": "00FF00", "exclusive": true, "description": "d"}),
        ),
    );
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["id"], 16);
    assert_eq!(r.json()["color"], "00ff00");
    let r = call(
        &emu,
        "POST",
        "/repos/acme/web/labels",
        Some(&json!({"name": "needs-info", "color": "123456"})),
    );
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["exclusive"], false);
    assert_eq!(
        names(&get_json(&emu, "/repos/acme/web/labels"))
            .iter()
            .filter(|n| **n == "needs-info")
            .count(),
        2
    );
    for bad in ["red", "#12345", "1234567"] {
        let r = call(
            &emu,
            "POST",
            "/repos/acme/api/labels",
            Some(&json!({"name": "x", "color": bad})),
        );
        assert_eq!(r.status, 422, "{bad}");
        assert!(
            r.json()["message"]
                .as_str()
                .unwrap()
                .starts_with("bad color code")
        );
    }
    let listed = get_json(&emu, "/repos/acme/api/labels");
    let feature_listed = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "kind/feature")
        .unwrap();
    assert_eq!(feature_listed["exclusive"], true);

    // Adding labels to issue 5 (which has `bug`): ids or names, never both; unknown ones dropped.
    let add = |labels: Value| {
        call(
            &emu,
            "POST",
            "/repos/acme/api/issues/5/labels",
            Some(&json!({ "labels": labels })),
        )
    };
    let r = add(json!([1, "bug"]));
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["message"],
        "labels should be an array of strings or integers"
    );
    let r = add(json!(["kind/feature", "nope"]));
    assert_eq!(r.status, 200);
    assert_eq!(names(&r.json()), ["bug", "kind/feature"]);
    // An exclusive label pushes out the other of its scope.
    let r = add(json!(["kind/bug"]));
    assert_eq!(r.status, 200);
    assert_eq!(names(&r.json()), ["bug", "kind/bug"]);
    let r = add(json!([999]));
    assert_eq!(r.status, 200);
    assert_eq!(names(&r.json()), ["bug", "kind/bug"]);
    let tl = get_json(&emu, "/repos/acme/api/issues/5/timeline?limit=50");
    let feature_events: Vec<&str> = tl
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "label" && e["label"]["name"] == "kind/feature")
        .map(|e| e["body"].as_str().unwrap())
        .collect();
    assert_eq!(feature_events, ["1", ""], "added, then removed");
    // Replacing: of one scope only the label whose name sorts last stays.
    let r = call(
        &emu,
        "PUT",
        "/repos/acme/api/issues/5/labels",
        Some(&json!({"labels": ["kind/bug", "kind/feature", "p/2"]})),
    );
    assert_eq!(r.status, 200);
    assert_eq!(names(&r.json()), ["kind/feature", "p/2"]);
    // Removing: an unknown label is 422 (`DeleteIssueLabel`: `GetLabelByID`, `ErrLabelNotExist`); a label
    // not on the issue is 204 and changes nothing.
    let r = call(&emu, "DELETE", "/repos/acme/api/issues/5/labels/999", None);
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["message"], "label does not exist [label_id: 999]");
    let before = get_json(&emu, "/repos/acme/api/issues/5");
    let events_before = get_json(&emu, "/repos/acme/api/issues/5/timeline?limit=50")
        .as_array()
        .unwrap()
        .len();
    let r = call(&emu, "DELETE", "/repos/acme/api/issues/5/labels/1", None);
    assert_eq!(r.status, 204);
    let after = get_json(&emu, "/repos/acme/api/issues/5");
    assert_eq!(after["updated_at"], before["updated_at"]);
    assert_eq!(
        get_json(&emu, "/repos/acme/api/issues/5/timeline?limit=50")
            .as_array()
            .unwrap()
            .len(),
        events_before
    );

    // Editing issue 5.
    let patch = |body: Value| call(&emu, "PATCH", "/repos/acme/api/issues/5", Some(&body));
    let r = patch(json!({"state": "done"}));
    assert_eq!(r.status, 412);
    assert_eq!(r.json()["message"], "unknown state: done");
    // Milestone 2 is acme/web's: not in this repository.
    let r = patch(json!({"milestone": 2}));
    assert_eq!(r.status, 500);
    assert_eq!(r.json()["message"], "");
    // The title is changed before the milestone fails, and stays changed.
    let r = patch(json!({"title": "Renamed", "milestone": 99}));
    assert_eq!(r.status, 500);
    assert_eq!(
        get_json(&emu, "/repos/acme/api/issues/5")["title"],
        "Renamed"
    );
    let r = patch(json!({"milestone": 1}));
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["milestone"]["id"], 1);
    let r = patch(json!({"milestone": 0}));
    assert_eq!(r.status, 201);
    assert!(r.json()["milestone"].is_null());
    let r = patch(json!({"state": "closed"}));
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["state"], "closed");
    assert!(r.json()["closed_at"].is_string());
    let r = patch(json!({"state": "open"}));
    assert_eq!(r.status, 201);
    assert!(r.json()["closed_at"].is_null());
    let unchanged = get_json(&emu, "/repos/acme/api/issues/5");
    let r = patch(json!({"title": null, "body": null, "milestone": null}));
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["updated_at"], unchanged["updated_at"]);
    let kinds: Vec<String> = get_json(&emu, "/repos/acme/api/issues/5/timeline?limit=50")
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    assert!(kinds.iter().any(|k| k == "close") && kinds.iter().any(|k| k == "reopen"));

    // Creating an issue: next number, the token's user, unknown labels and milestone dropped, exclusivity kept.
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/issues",
        Some(
            &json!({"title": "New one", "body": "b", "labels": [2, 999, 15, 16], "milestone": 99}),
        ),
    );
    assert_eq!(r.status, 201);
    let created = r.json();
    assert_shape(&shapes, "Issue", &created);
    assert_eq!(created["number"], 6);
    assert_eq!(created["user"]["login"], "commitea-bot");
    assert_eq!(created["created_at"], created["updated_at"]);
    assert!(created["milestone"].is_null());
    assert_eq!(names(&created["labels"]), ["est/1d", "kind/bug"]);
    assert!(time(&created["created_at"]) > time(&unchanged["updated_at"]));
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/issues",
        Some(&json!({"title": "x", "labels": ["bug"]})),
    );
    assert_eq!(r.status, 422);
    let r = call(
        &emu,
        "POST",
        "/repos/acme/api/issues",
        Some(&json!({"body": "no title"})),
    );
    assert_eq!(r.status, 422);
    assert_eq!(
        get_json(&emu, "/repos/acme/api/issues?state=all&type=issues")[0]["number"],
        6
    );

    // Dependencies: both directions answer 201 with the issue; a repeat or a missing one is 500.
    let dep = |method: &str, meta: Value| {
        call(
            &emu,
            method,
            "/repos/acme/api/issues/5/dependencies",
            Some(&meta),
        )
    };
    let one = json!({"owner": "acme", "repo": "api", "index": 1});
    let r = dep("POST", one.clone());
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["number"], 5);
    assert_eq!(dep("POST", one.clone()).status, 500);
    assert_eq!(
        dep(
            "DELETE",
            json!({"owner": "acme", "repo": "api", "index": 3})
        )
        .status,
        500
    );
    let r = dep("POST", json!({"owner": "acme", "repo": "api", "index": 77}));
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["message"], "IsErrIssueNotExist");
    // Another spelling is another repository to `getFormIssue`, looked up by its lower-cased name
    // (`GetRepositoryByOwnerAndName`): `Acme/api` is acme/api, whose #1 this one depends on already.
    assert_eq!(
        dep("POST", json!({"owner": "Acme", "repo": "api", "index": 1})).status,
        500
    );
    assert_eq!(
        dep(
            "POST",
            json!({"owner": "acme", "repo": "nothing", "index": 1})
        )
        .status,
        404
    );
    let r = dep("DELETE", one);
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["number"], 5);
    let tl = get_json(&emu, "/repos/acme/api/issues/5/timeline?limit=50");
    let deps: Vec<(&str, u64)> = tl
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_str().unwrap().ends_with("_dependency"))
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["dependent_issue"]["number"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(deps, [("add_dependency", 1), ("remove_dependency", 1)]);

    // Milestones: by id or title; `due_on` left out, or null, keeps the due date (`EditMilestone` sets
    // it only when given and not zero: the API cannot clear one).
    let due_before = get_json(&emu, "/repos/acme/api/milestones?state=all")
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == 1)
        .unwrap()["due_on"]
        .clone();
    let ms = |id: &str, body: Value| {
        let r = call(
            &emu,
            "PATCH",
            &format!("/repos/acme/api/milestones/{id}"),
            Some(&body),
        );
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()
    };
    let m = ms("v1.0", json!({"description": "new"}));
    assert_eq!(m["description"], "new");
    assert_eq!(m["title"], "v1.0");
    assert_eq!(m["due_on"], due_before, "no due_on keeps it");
    let m = ms(
        "1",
        json!({"title": "", "description": null, "due_on": "2027-01-15T00:00:00Z"}),
    );
    assert_eq!(m["title"], "v1.0");
    assert_eq!(m["description"], "new");
    assert_eq!(m["due_on"], "2027-01-15T00:00:00Z");
    let m = ms("1", json!({"state": "closed", "title": "v1"}));
    assert_eq!(m["state"], "closed");
    assert_eq!(m["title"], "v1");
    assert!(m["closed_at"].is_string());
    assert_eq!(m["due_on"], "2027-01-15T00:00:00Z");
    let m = ms("v1", json!({"state": "anything"}));
    assert_eq!(m["state"], "open");
    assert!(m["closed_at"].is_null());
    assert_eq!(
        call(
            &emu,
            "PATCH",
            "/repos/acme/api/milestones/nope",
            Some(&json!({}))
        )
        .status,
        404
    );
}

/// Runs git in `dir` with a fixed identity and no user configuration; its trimmed stdout.
fn run_git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Tess", "-c", "user.email=tess@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Commits `file` with `text` in `work` on the branch checked out, and pushes `branch` to the bare repository.
fn commit_and_push(work: &Path, file: &str, text: &str, branch: &str) -> String {
    std::fs::write(work.join(file), text).unwrap();
    run_git(work, &["add", file]);
    run_git(work, &["commit", "-q", "-m", &format!("add {file}")]);
    run_git(
        work,
        &["push", "-q", "origin", &format!("HEAD:refs/heads/{branch}")],
    );
    run_git(work, &["rev-parse", "HEAD"])
}

/// A bare state repository with one commit on `main`, and a checkout of it: (the folder, the bare
/// repository, the checkout, that commit).
fn state_repo_with_a_checkout() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    String,
) {
    let tmp = tempfile::tempdir().unwrap();
    let bare = tmp.path().join("state.git");
    let work = tmp.path().join("work");
    run_git(
        tmp.path(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    run_git(tmp.path(), &["init", "-q", work.to_str().unwrap()]);
    run_git(&work, &["remote", "add", "origin", bare.to_str().unwrap()]);
    let main0 = commit_and_push(&work, "ledger.md", "start\n", "main");
    (tmp, bare, work, main0)
}

/// The emulator with the small fixture and `bare` as the state repository `acme/state`.
fn state_emulator(bare: &Path) -> (RepoName, Emulator) {
    let state = RepoName::new("acme", "state");
    let mut options = EmulatorOptions::default();
    options
        .state_repos
        .insert(state.clone(), bare.to_path_buf());
    let emu = Emulator::start(
        Dataset::from_snapshot(&load("tests/fixtures/small")),
        options,
    )
    .unwrap();
    (state, emu)
}

#[test]
fn a_state_repo_is_empty_until_its_first_push() {
    // Gitea's `empty` is `repo.IsEmpty`: always false here, so `init` told of a new state repository
    // that it had commits already and a push would be refused (audit 172).
    let tmp = tempfile::tempdir().unwrap();
    let bare = tmp.path().join("state.git");
    run_git(
        tmp.path(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    let (_, emu) = state_emulator(&bare);
    assert_eq!(get_json(&emu, "/repos/acme/state")["empty"], true);
    let work = tmp.path().join("work");
    run_git(tmp.path(), &["init", "-q", work.to_str().unwrap()]);
    run_git(&work, &["remote", "add", "origin", bare.to_str().unwrap()]);
    commit_and_push(&work, "ledger.md", "start\n", "main");
    assert_eq!(get_json(&emu, "/repos/acme/state")["empty"], false);
}

#[test]
fn pull_requests_of_a_state_repo_merge_for_real() {
    let (_tmp, bare, work, main0) = state_repo_with_a_checkout();
    run_git(&work, &["checkout", "-q", "-b", "feature"]);
    let feature = commit_and_push(&work, "a.md", "a\n", "feature");
    run_git(&work, &["checkout", "-q", "-b", "feature2", &main0]);
    let feature2 = commit_and_push(&work, "b.md", "b\n", "feature2");
    run_git(&work, &["checkout", "-q", "-b", "feature3", &main0]);
    commit_and_push(&work, "c.md", "c\n", "feature3");

    let (state, emu) = state_emulator(&bare);
    let shapes = Shapes::new();
    assert_eq!(
        get_json(&emu, "/repos/acme/state")["full_name"],
        "acme/state"
    );

    // Opening.
    let open = |head: &str, base: &str| {
        call(
            &emu,
            "POST",
            "/repos/acme/state/pulls",
            Some(
                &json!({"title": format!("Propose {head}"), "body": "why", "head": head, "base": base}),
            ),
        )
    };
    let r = open("feature", "main");
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let pr = r.json();
    assert_shape(&shapes, "PullRequest", &pr);
    assert_eq!(pr["number"], 1);
    assert_eq!(pr["user"]["login"], "commitea-bot");
    assert_eq!(pr["head"]["ref"], "feature");
    assert_eq!(pr["head"]["label"], "feature");
    assert_eq!(pr["head"]["sha"], feature);
    assert_eq!(pr["base"]["ref"], "main");
    assert_eq!(pr["base"]["sha"], main0);
    assert_eq!(pr["merge_base"], main0);
    assert_eq!(pr["merged"], false);
    assert_eq!(open("feature", "main").status, 409);
    assert_eq!(open("main", "main").status, 422);
    assert_eq!(open("nope", "main").status, 404);
    assert_eq!(open("feature", "nope").status, 404);

    // Listing and editing.
    let list = get_json(&emu, "/repos/acme/state/pulls");
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["head"]["ref"], "feature");
    assert!(list[0]["merged_by"].is_null());
    assert_eq!(
        get_json(&emu, "/repos/acme/state/pulls?state=closed"),
        json!([])
    );
    let r = call(
        &emu,
        "PATCH",
        "/repos/acme/state/pulls/1",
        Some(&json!({"body": "new body"})),
    );
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["body"], "new body");
    assert_eq!(r.json()["title"], "Propose feature");

    // Merging over HTTP: a real merge commit on main.
    let merge = |n: u64, body: Value| {
        call(
            &emu,
            "POST",
            &format!("/repos/acme/state/pulls/{n}/merge"),
            Some(&body),
        )
    };
    assert_eq!(merge(1, json!({})).status, 422);
    let r = merge(1, json!({"Do": "merge"}));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.body.is_empty());
    let merged = run_git(&bare, &["rev-parse", "refs/heads/main"]);
    let parents = run_git(&bare, &["rev-list", "--parents", "-n", "1", &merged]);
    assert_eq!(parents, format!("{merged} {main0} {feature}"));
    assert!(
        run_git(&bare, &["log", "-1", "--format=%s", &merged]).starts_with("Merge pull request")
    );
    let pr = get_json(&emu, "/repos/acme/state/pulls/1");
    assert_shape(&shapes, "PullRequest", &pr);
    assert_eq!(pr["merged"], true);
    assert_eq!(pr["state"], "closed");
    assert_eq!(pr["merged_by"]["login"], "commitea-bot");
    assert_eq!(pr["merge_commit_sha"], merged);
    let found = get_json(&emu, &format!("/repos/acme/state/commits/{merged}/pull"));
    assert_eq!(found["number"], 1);
    assert_eq!(found["merged"], true);
    assert_eq!(found["merged_by"]["login"], "commitea-bot");
    let r = get(&emu, &format!("/repos/acme/state/commits/{feature}/pull"));
    assert_eq!(r.status, 404);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .starts_with("pull request does not exist [")
    );
    assert_eq!(merge(1, json!({"Do": "merge"})).status, 405);

    // Merging as a named person, and a closed one cannot be merged.
    assert_eq!(open("feature2", "main").json()["number"], 2);
    let sha = emu.merge_pull(&state, 2, "alice").unwrap();
    assert_eq!(run_git(&bare, &["rev-parse", "refs/heads/main"]), sha);
    assert_eq!(
        run_git(&bare, &["log", "-1", "--format=%an", &sha]),
        "alice"
    );
    assert_eq!(
        run_git(&bare, &["rev-list", "--parents", "-n", "1", &sha]),
        format!("{sha} {merged} {feature2}")
    );
    assert_eq!(
        get_json(&emu, "/repos/acme/state/pulls/2")["merged_by"]["login"],
        "alice"
    );
    assert!(emu.merge_pull(&state, 2, "alice").is_err());
    assert_eq!(open("feature3", "main").json()["number"], 3);
    let r = call(
        &emu,
        "PATCH",
        "/repos/acme/state/pulls/3",
        Some(&json!({"state": "closed"})),
    );
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["state"], "closed");
    assert_eq!(r.json()["merged"], false);
    assert_eq!(merge(3, json!({"do": "merge"})).status, 404);
    let all = get_json(&emu, "/repos/acme/state/pulls?state=all");
    assert_eq!(
        all.as_array()
            .unwrap()
            .iter()
            .map(|p| p["number"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [3, 2, 1],
        "newest first"
    );
    assert_eq!(emu.state_pulls(&state).len(), 3);

    // Every request that is not a GET, in order.
    let p = "/api/v1/repos/acme/state/pulls";
    assert_eq!(
        emu.writes(),
        [
            format!("POST {p}"),
            format!("POST {p}"),
            format!("POST {p}"),
            format!("POST {p}"),
            format!("POST {p}"),
            format!("PATCH {p}/1"),
            format!("POST {p}/1/merge"),
            format!("POST {p}/1/merge"),
            format!("POST {p}/1/merge"),
            format!("POST {p}"),
            format!("POST {p}"),
            format!("PATCH {p}/3"),
            format!("POST {p}/3/merge"),
        ]
    );
}

/// `git args` in `dir` that may fail: (success, stderr).
fn try_git(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_state_pull_request_merges_in_each_gitea_style_and_closes_when_its_branch_goes() {
    let (_tmp, bare, work, main0) = state_repo_with_a_checkout();
    let (state, emu) = state_emulator(&bare);
    let shapes = Shapes::new();
    let open = |head: &str| {
        let r = call(
            &emu,
            "POST",
            "/repos/acme/state/pulls",
            Some(&json!({"title": format!("Propose {head}"), "head": head, "base": "main"})),
        );
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        r.json()["number"].as_u64().unwrap()
    };
    let merge = |n: u64, style: &str| {
        call(
            &emu,
            "POST",
            &format!("/repos/acme/state/pulls/{n}/merge"),
            Some(&json!({ "Do": style })),
        )
    };
    let main = || run_git(&bare, &["rev-parse", "refs/heads/main"]);
    // A branch of two commits from `from`.
    let branch = |name: &str, from: &str| -> [String; 2] {
        run_git(&work, &["fetch", "-q", "origin"]);
        run_git(&work, &["checkout", "-q", "-b", name, from]);
        [
            commit_and_push(&work, &format!("{name}-1.md"), "1\n", name),
            commit_and_push(&work, &format!("{name}-2.md"), "2\n", name),
        ]
    };

    // Rebase, with main moved since: the two commits are replayed on it (new ids, authors kept), and the new
    // tip is the merge commit Gitea records.
    let [r1, r2] = branch("rb", &main0);
    run_git(&work, &["checkout", "-q", "-b", "m1", &main0]);
    let main1 = commit_and_push(&work, "m1.md", "m\n", "main");
    let n = open("rb");
    let commits = get_json(&emu, &format!("/repos/acme/state/pulls/{n}/commits"));
    let listed: Vec<&str> = commits
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sha"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [r2.as_str(), r1.as_str()], "newest first");
    for c in commits.as_array().unwrap() {
        assert_shape(&shapes, "Commit", c);
    }
    assert_eq!(commits[0]["parents"][0]["sha"], r1);
    assert_eq!(
        commits[0]["files"],
        json!([{"filename": "rb-2.md", "status": "added"}])
    );
    assert_eq!(commits[0]["stats"]["additions"], 1);
    let r = get(
        &emu,
        &format!("/repos/acme/state/pulls/{n}/commits?files=false&verification=false"),
    );
    assert!(r.json()[0]["files"].is_null() && r.json()[0]["commit"]["verification"].is_null());
    assert_eq!(
        get(&emu, &format!("/repos/acme/state/pulls/{n}/merge")).status,
        404
    );
    assert_eq!(merge(n, "manually-merged").status, 405);
    assert_eq!(merge(n, "rebase").status, 200);
    let tip = main();
    assert_eq!(run_git(&bare, &["rev-parse", &format!("{tip}~2")]), main1);
    assert_ne!(tip, r2, "replayed, not moved");
    assert_eq!(
        run_git(&bare, &["log", "-1", "--format=%an %s", &tip]),
        "Tess add rb-2.md"
    );
    assert_eq!(
        run_git(&bare, &["log", "-1", "--format=%cn", &tip]),
        "commitea-bot"
    );
    let pr = get_json(&emu, &format!("/repos/acme/state/pulls/{n}"));
    assert_eq!(pr["merge_commit_sha"], tip);
    assert_eq!(
        get(&emu, &format!("/repos/acme/state/pulls/{n}/merge")).status,
        204
    );
    assert_eq!(
        get_json(&emu, &format!("/repos/acme/state/commits/{tip}/pull"))["number"],
        n
    );
    assert_eq!(
        get(&emu, &format!("/repos/acme/state/commits/{tip}~1/pull")).status,
        404
    );
    // Once merged, its commits are still the branch's own, from the merge base Gitea kept.
    assert_eq!(
        get_json(&emu, &format!("/repos/acme/state/pulls/{n}/commits"))
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Squash: one commit whose only parent is the old tip.
    let before = main();
    branch("sq", &before);
    let n = open("sq");
    assert_eq!(merge(n, "squash").status, 200);
    let tip = main();
    assert_eq!(
        run_git(&bare, &["rev-list", "--parents", "-n", "1", &tip]),
        format!("{tip} {before}")
    );
    assert_eq!(
        run_git(&bare, &["log", "-1", "--format=%s", &tip]),
        format!("Propose sq (#{n})")
    );

    // Fast-forward only: main moves to the head as it is; refused when main is not under it.
    let before = main();
    let [_, head] = branch("ff", &before);
    let n = open("ff");
    assert_eq!(merge(n, "fast-forward-only").status, 200);
    assert_eq!(main(), head);
    branch("diverged", &main0);
    let n = open("diverged");
    assert_eq!(merge(n, "fast-forward-only").status, 500);
    assert_eq!(
        get_json(&emu, &format!("/repos/acme/state/pulls/{n}"))["state"],
        "open"
    );

    // Rebase and merge: the replayed commits, then a merge commit over them.
    let before = main();
    assert_eq!(merge(n, "rebase-merge").status, 200);
    let tip = main();
    let parents = run_git(&bare, &["rev-list", "--parents", "-n", "1", &tip]);
    let parents: Vec<&str> = parents.split(' ').skip(1).collect();
    assert_eq!(parents[0], before);
    assert_eq!(
        run_git(&bare, &["rev-parse", &format!("{}~2", parents[1])]),
        before
    );

    // A deleted head branch closes its pull request, unmerged, as Gitea's `CloseBranchPulls` does.
    branch("gone", &main());
    let n = open("gone");
    run_git(&bare, &["branch", "-D", "gone"]);
    let pr = get_json(&emu, &format!("/repos/acme/state/pulls/{n}"));
    assert_eq!(pr["state"], "closed");
    assert_eq!(pr["merged"], false);
    assert_eq!(pr["head"]["ref"], format!("refs/pull/{n}/head"));
    assert_eq!(pr["head"]["label"], "gone");
    assert!(
        emu.state_pulls(&state)
            .iter()
            .any(|p| p.number == n && !p.merged)
    );
    let r = call(
        &emu,
        "PATCH",
        &format!("/repos/acme/state/pulls/{n}"),
        Some(&json!({"state": "reopened"})),
    );
    assert_eq!(r.status, 412);
    assert_eq!(r.json()["message"], "unknown state: reopened");

    // Protected branches refuse pushes and deletions with Gitea's words; merges through the API still land.
    run_git(&work, &["fetch", "-q", "origin"]);
    run_git(&work, &["checkout", "-q", "-b", "keep-it", &main()]);
    commit_and_push(&work, "k.md", "k\n", "keep/one");
    emu.protect_branch(&state, "main").unwrap();
    emu.protect_branch(&state, "keep/*").unwrap();
    let (pushed, said) = try_git(&work, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    assert!(!pushed);
    assert!(
        said.contains("Gitea: Not allowed to push to protected branch main"),
        "{said}"
    );
    assert!(said.contains("pre-receive hook declined"), "{said}");
    let (deleted, said) = try_git(&work, &["push", "-q", "origin", "--delete", "keep/one"]);
    assert!(!deleted);
    assert!(
        said.contains("Gitea: branch keep/one is protected from deletion"),
        "{said}"
    );
    branch("late", &main());
    let n = open("late");
    assert_eq!(merge(n, "merge").status, 200);
}

/// A label's events follow it as Gitea's do: renamed, they read the new name (`LoadLabel` by id);
/// deleted, they are gone (`DeleteLabel` deletes its comments). The emulator kept the old name, and a
/// stand-in label of id 0 (audit 116).
#[test]
fn a_labels_events_read_its_new_name_and_go_with_it() {
    let emu = demo();
    let events = |key: &IssueKey, name: &str| -> usize {
        get_json(
            &emu,
            &format!(
                "/repos/{}/issues/{}/timeline?limit=50",
                key.repo, key.number
            ),
        )
        .as_array()
        .map_or(0, |a| {
            a.iter()
                .filter(|e| e["type"] == "label" && e["label"]["name"] == name)
                .count()
        })
    };
    let (repo, id, old, key) = emu.with_dataset(|d| {
        let repo = d.repositories()[0].clone();
        let (key, old) = d
            .issues(&repo)
            .iter()
            .find_map(|i| {
                i.timeline
                    .iter()
                    .find(|e| e.kind == commitea::domain::EventKind::Label)
                    .and_then(|e| e.label.clone())
                    .map(|l| (repo.issue(i.number), l))
            })
            .expect("a label event");
        let id = d.labels(&repo).iter().find(|l| l.name == old).unwrap().id;
        (repo, id, old, key)
    });
    let before = events(&key, &old);
    assert!(before > 0);
    emu.with_dataset(|d| d.rename_label(&repo, id, "renamed/label"));
    assert_eq!(events(&key, &old), 0);
    assert_eq!(events(&key, "renamed/label"), before);
    emu.with_dataset(|d| d.delete_label(&repo, id));
    let left = get_json(
        &emu,
        &format!(
            "/repos/{}/issues/{}/timeline?limit=50",
            key.repo, key.number
        ),
    );
    assert!(
        !left.as_array().unwrap().iter().any(|e| e["type"] == "label"
            && (e["label"]["name"] == "renamed/label" || e["label"]["id"] == 0)),
        "{left}"
    );
}

#[test]
fn names_are_found_in_any_case_and_answered_in_the_servers() {
    // Gitea finds owners and repositories by their lower-cased names (`GetUserByName`,
    // `GetRepositoryByName` on `lower_name`) and spells them its own way in every answer; the emulator
    // answered 404, and hid that a sync read such references as another repository's (audit 154).
    let emu = small();
    let repo = get_json(&emu, "/repos/ACME/Api");
    assert_eq!(repo["full_name"], "acme/api");
    let issue = get_json(&emu, "/repos/Acme/API/issues/3");
    assert_eq!(issue["repository"]["full_name"], "acme/api");
    assert_eq!(call(&emu, "GET", "/repos/acme/nothing", None).status, 404);
}

#[test]
fn forgejo_opens_an_issue_for_any_state_but_closed() {
    // Gitea's `closeOrReopenIssue` answers 412 "unknown state"; Forgejo's `EditIssue` takes anything
    // but `closed` as open (`isClosed := api.StateClosed == …`, audit 154).
    for (version, status) in [("1.27.1", 412), ("11.0.1+gitea-1.22.0", 201)] {
        let emu = Emulator::start(
            Dataset::from_snapshot(&load("tests/fixtures/small")),
            EmulatorOptions {
                version: version.into(),
                ..EmulatorOptions::default()
            },
        )
        .unwrap();
        let path = "/repos/acme/api/issues/3";
        let closed = call(&emu, "PATCH", path, Some(&json!({"state": "closed"})));
        assert_eq!(closed.status, 201, "{version}");
        let r = call(&emu, "PATCH", path, Some(&json!({"state": "reopened"})));
        assert_eq!(r.status, status, "{version}");
        let want = if status == 201 { "open" } else { "closed" };
        assert_eq!(get_json(&emu, path)["state"], want, "{version}");
    }
}
