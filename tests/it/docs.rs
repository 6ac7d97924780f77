//! `docs/tools.md` against the code: its JSON Schema blocks are exactly what `commitea::tools::specs()`
//! publishes, and it names every view and every op.
//!
//! After a schema change, regenerate the blocks in place with
//! `COMMITEA_BLESS_DOCS=1 cargo test --test it docs::`.

use std::path::{Path, PathBuf};

use commitea::tools::{self, ToolSpec};
use serde_json::Value;

/// The closing marker of every schema block.
const END: &str = "<!-- /schema -->";

fn tools_md() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/tools.md")
}

fn blessing() -> bool {
    std::env::var("COMMITEA_BLESS_DOCS").is_ok_and(|v| v == "1")
}

/// The eight blocks: `(marker, body)` with the body as it must stand between the markers.
fn blocks(specs: &[ToolSpec]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in specs {
        for (side, schema) in [("input", &s.input_schema), ("output", &s.output_schema)] {
            let pretty = serde_json::to_string_pretty(schema).unwrap();
            out.push((
                format!("<!-- schema:{}:{side} -->", s.name),
                format!("\n```json\n{pretty}\n```\n"),
            ));
        }
    }
    out
}

/// The text between `marker` and the next [`END`], as a byte range of `text`.
fn block_range(text: &str, marker: &str) -> std::ops::Range<usize> {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("docs/tools.md lacks the marker {marker}"))
        + marker.len();
    let len = text[start..]
        .find(END)
        .unwrap_or_else(|| panic!("docs/tools.md: {marker} is not closed by {END}"));
    start..start + len
}

#[test]
fn tools_md_schemas_are_current() {
    let _one = TOOLS_MD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = tools_md();
    let mut text = std::fs::read_to_string(&path).unwrap();
    let specs = tools::specs();
    let mut stale = Vec::new();
    for (marker, want) in blocks(&specs) {
        let range = block_range(&text, &marker);
        if text[range.clone()] != want {
            if blessing() {
                text.replace_range(range, &want);
            } else {
                stale.push(marker);
            }
        }
    }
    if blessing() {
        std::fs::write(&path, &text).unwrap();
    }
    assert!(
        stale.is_empty(),
        "docs/tools.md's schema blocks differ from commitea::tools::specs(): {stale:?}; \
         regenerate them with `COMMITEA_BLESS_DOCS=1 cargo test --test it docs::`"
    );
}

/// The `const` values of a `oneOf` in a schema's `$defs`, read at `pointer` inside each alternative.
fn consts(schema: &Value, def: &str, pointer: &str) -> Vec<String> {
    let alternatives = schema["$defs"][def]["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("$defs/{def} is not a oneOf"));
    alternatives
        .iter()
        .map(|a| {
            a.pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("$defs/{def}: no {pointer} in {a}"))
                .to_owned()
        })
        .collect()
}

#[test]
fn tools_md_names_every_view_and_op() {
    let text = std::fs::read_to_string(tools_md()).unwrap();
    let specs = tools::specs();
    let spec = |name: &str| specs.iter().find(|s| s.name == name).unwrap();
    let views = consts(&spec(tools::QUERY_PROJECT).input_schema, "View", "/const");
    let ops = consts(
        &spec(tools::APPLY_CHANGES).input_schema,
        "Op",
        "/properties/op/const",
    );
    assert_eq!(views.len(), 9, "{views:?}");
    assert_eq!(ops.len(), 10, "{ops:?}");
    // Every view has its own section and every op its own row, outside the schema blocks too.
    let prose = {
        let mut p = text.clone();
        for (marker, _) in &blocks(&specs) {
            let range = block_range(&p, marker);
            p.replace_range(range, "");
        }
        p
    };
    for v in &views {
        assert!(
            prose.contains(&format!("### `{v}`")),
            "docs/tools.md has no section for view {v}"
        );
    }
    for op in &ops {
        assert!(
            prose.contains(&format!("`{op}`")),
            "docs/tools.md does not name op {op}"
        );
    }
    for name in tools::NAMES {
        assert!(prose.contains(&format!("`{name}`")), "{name}");
    }
}

#[test]
fn architecture_md_lists_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let src = root.join("src");
    let missing: Vec<String> = walkdir::WalkDir::new(&src)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            e.path()
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .filter(|rel| !text.contains(&format!("| `{rel}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md does not list {missing:?}: add a line for each"
    );
}

/// Every leaf key of `commitea.yaml` (`forecast.trials`; a team member's as `team[].name`), from the
/// config's own serialisation, with a member and a big model so that their keys are there too.
fn config_keys() -> Vec<String> {
    fn walk(v: &Value, prefix: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(o) if !o.is_empty() => {
                for (k, x) in o {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(x, &key, out);
                }
            }
            Value::Array(a) if a.first().is_some_and(Value::is_object) => {
                walk(&a[0], &format!("{prefix}[]"), out);
            }
            _ => out.push(prefix.to_owned()),
        }
    }
    let config = commitea::config::Config::parse(
        "team:\n  - name: ann\n    hours_per_week: 30\n    working_days: [mon]\n    starts: 2026-01-01\n    ends: 2027-01-01\n    time_off: [2026-12-24]\n    repositories: [acme/app]\nmodels:\n  big: { url: \"http://x\", model: m }\nbacktest:\n  horizon_days: 30\napprovals:\n  state_repository: acme/plan\nserver: https://x\nforecast:\n  seed: 1\n",
        Path::new("commitea.yaml"),
    )
    .unwrap();
    let mut out = Vec::new();
    walk(&serde_json::to_value(&config).unwrap(), "", &mut out);
    out
}

#[test]
fn state_format_md_lists_every_config_key() {
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/state-format.md"),
    )
    .unwrap();
    let section = &doc[doc.find("## `commitea.yaml`").expect("the config section")..];
    let keys = config_keys();
    assert!(keys.len() > 30, "{keys:?}");
    // A model's own keys are listed in one row (`models.small`), as docs/models.md gives them, and a
    // time-off range's `from` and `to` in its row.
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| {
            !["models.small.", "models.big.", "team[].time_off[]."]
                .iter()
                .any(|p| k.starts_with(p))
        })
        .filter(|k| !section.contains(&format!("`{k}`")))
        .collect();
    assert!(missing.is_empty(), "docs/state-format.md lacks {missing:?}");
}

/// An example docs/tools.md calls complete is a real answer: it fits the published schema (audit 91:
/// the calibration example lacked a field the schema requires, and its figures were an older engine's).
#[test]
fn the_complete_examples_of_tools_md_fit_the_schema() {
    let text = std::fs::read_to_string(tools_md()).unwrap();
    let mut checked = 0;
    let mut rest = text.as_str();
    while let Some(at) = rest.find("```json\n") {
        let body = &rest[at + 8..];
        let end = body.find("```\n").unwrap();
        let after = &body[end + 4..];
        if after.trim_start().starts_with("(Complete") {
            let v: serde_json::Value = serde_json::from_str(&body[..end]).unwrap();
            crate::tools::assert_valid_output("query_project", &v);
            checked += 1;
        }
        rest = &body[end + 4..];
    }
    assert!(checked >= 1);
}

/// Blessing rewrites docs/tools.md from more than one test: one at a time.
static TOOLS_MD: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// How many entries of a long array an example shows, before a `"… N more"` string.
const SHOWN: usize = 3;

/// `v` as tools.md shows it: keys in alphabetical order and, unless `whole`, every array of more than
/// [`SHOWN`] + 1 entries cut to its first [`SHOWN`] and a `"… N more"` string.
fn as_shown(v: &Value, whole: bool) -> Value {
    match v {
        Value::Array(a) if !whole && a.len() > SHOWN + 1 => {
            let mut out: Vec<Value> = a[..SHOWN].iter().map(|e| as_shown(e, whole)).collect();
            out.push(Value::String(format!("… {} more", a.len() - SHOWN)));
            Value::Array(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|e| as_shown(e, whole)).collect()),
        Value::Object(o) => {
            let mut entries: Vec<(&String, &Value)> = o.iter().collect();
            entries.sort_by_key(|(k, _)| *k);
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, e)| (k.clone(), as_shown(e, whole)))
                    .collect(),
            )
        }
        v => v.clone(),
    }
}

/// The body of an insta snapshot file: what follows its header.
fn snapshot_body(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/it/snapshots/it__tools__{name}.snap"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut parts = text.splitn(3, "---\n");
    let (_, _, body) = (parts.next(), parts.next(), parts.next());
    body.unwrap_or_else(|| panic!("{} has no header", path.display()))
        .to_owned()
}

/// The byte range of the first fenced block of `lang` after `heading` in `text`, its fences excluded.
fn fenced_after(text: &str, heading: &str, lang: &str) -> std::ops::Range<usize> {
    let at = text
        .find(heading)
        .unwrap_or_else(|| panic!("docs/tools.md lacks {heading}"));
    let open = format!("```{lang}\n");
    let start = at
        + text[at..]
            .find(&open)
            .unwrap_or_else(|| panic!("docs/tools.md: no {lang} block after {heading}"))
        + open.len();
    let len = text[start..]
        .find("```\n")
        .unwrap_or_else(|| panic!("docs/tools.md: the block after {heading} is not closed"));
    start..start + len
}

/// The op file's example: its consequence keeps every milestone, the first issue moved and every new
/// issue; a comment stands for the rest.
fn op_file_shown(yaml: &str) -> String {
    let (head, consequence) = yaml
        .split_once("consequence:\n")
        .expect("the op file has a consequence");
    let mut entries: Vec<String> = Vec::new();
    for line in consequence.lines() {
        match entries.last_mut() {
            Some(entry) if !line.starts_with("- ") => {
                entry.push_str(line);
                entry.push('\n');
            }
            _ => entries.push(format!("{line}\n")),
        }
    }
    let mut out = format!("{head}consequence:\n");
    let (mut first_issue, mut left_out) = (true, 0);
    for entry in &entries {
        let subject = entry.trim_start_matches("- subject: ");
        let issue = subject
            .trim_start_matches(['\'', '"'])
            .starts_with("issue ");
        let new = entry.contains("\n  before: null\n");
        if !issue || new || std::mem::take(&mut first_issue) {
            if left_out > 0 {
                out.push_str(&format!(
                    "# … {left_out} more moved issues, biggest move first …\n"
                ));
                left_out = 0;
            }
            out.push_str(entry);
        } else {
            left_out += 1;
        }
    }
    if left_out > 0 {
        out.push_str(&format!(
            "# … {left_out} more moved issues, biggest move first …\n"
        ));
    }
    out
}

/// The examples of tools.md are the test suite's snapshots (`tools::every_view_on_the_demo`,
/// `it__tools__op_file`), shortened by one rule, with the calls that made them, and its size table their
/// sizes (audit 164: seven of nine
/// were an older program's answers, the focus one in an order the view no longer has).
#[test]
fn tools_md_examples_are_the_snapshots() {
    let _one = TOOLS_MD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = tools_md();
    let mut text = std::fs::read_to_string(&path).unwrap();
    let mut stale = Vec::new();
    for (view, filters) in crate::tools::all_views() {
        let heading = format!("### `{view}`\n");
        let call = if filters.as_object().is_some_and(|f| !f.is_empty()) {
            format!(r#"{{"view":"{view}","filters":{filters}}}"#)
        } else {
            format!(r#"{{"view":"{view}"}}"#)
        };
        let call = format!("`commitea tool -s STATE query_project '{call}'`");
        let at = text.find(&heading).unwrap();
        let range = fenced_after(&text, &heading, "json");
        assert!(
            text[at..range.start].contains(&call),
            "docs/tools.md's {view} example is not introduced by the call that made it: {call}"
        );
        let whole = text[range.end + 4..].trim_start().starts_with("(Complete");
        let answer: Value = serde_json::from_str(&snapshot_body(&format!("view_{view}"))).unwrap();
        let want = format!(
            "{}\n",
            serde_json::to_string_pretty(&as_shown(&answer, whole)).unwrap()
        );
        if text[range.clone()] != want {
            if blessing() {
                text.replace_range(range, &want);
            } else {
                stale.push(view);
            }
        }
    }
    // The size table: each answer's bytes as the CLI prints it (compact), the commit compared with
    // counted as the 12 hex digits it is.
    let mut table = String::from("| view | bytes |\n|---|---|\n");
    for (view, _) in crate::tools::all_views() {
        let mut answer: Value =
            serde_json::from_str(&snapshot_body(&format!("view_{view}"))).unwrap();
        if let Some(since) = answer.pointer_mut("/drift/since") {
            *since = Value::String("0".repeat(12));
        }
        let bytes = serde_json::to_string(&answer).unwrap().len();
        table.push_str(&format!("| `{view}` | {bytes} |\n"));
    }
    let at = text
        .find("| view | bytes |\n")
        .expect("docs/tools.md has the size table");
    let range = at..at + text[at..].find("\n\n").expect("the size table ends") + 1;
    if text[range.clone()] != table {
        if blessing() {
            text.replace_range(range, &table);
        } else {
            stale.push("size table");
        }
    }
    let range = fenced_after(&text, "### The op file", "yaml");
    let want = op_file_shown(&snapshot_body("op_file"));
    if text[range.clone()] != want {
        if blessing() {
            text.replace_range(range, &want);
        } else {
            stale.push("op file");
        }
    }
    if blessing() {
        std::fs::write(&path, &text).unwrap();
    }
    assert!(
        stale.is_empty(),
        "docs/tools.md's examples differ from the snapshots: {stale:?}; regenerate them with \
         `COMMITEA_BLESS_DOCS=1 cargo test --test it docs::`"
    );
}
