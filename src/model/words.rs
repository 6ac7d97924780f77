//! Deterministic text: a `query_project` payload in plain words, written by code from the payload alone.
//!
//! It is what an answer falls back to when a model's prose states something the tool answers do not hold
//! (see [`super::check`]), and what the standup in words is when no model can write it. Every fact in it
//! is copied from the payload, so it always passes the checker.

use serde_json::Value;

/// The payload of a `query_project` view in words; other JSON as indented lines.
pub fn render(payload: &Value) -> String {
    if payload.get("now").is_some() && payload.get("next").is_some() {
        focus(payload)
    } else if payload.get("drift").is_some() && payload.get("people").is_some() {
        standup(payload)
    } else if payload.get("capacity").is_some() && payload.get("milestones").is_some() {
        runway(payload)
    } else if payload.get("milestone").is_some() && payload.get("stats").is_some() {
        milestone(payload)
    } else {
        let mut out = String::new();
        lines(payload, 0, &mut out);
        out.trim_end().to_owned()
    }
}

/// A count from the payload with its noun, in the singular for one (`1 day`, `3 days`).
fn count(v: &Value, one: &str, many: &str) -> String {
    match v.as_i64() {
        Some(n) => crate::prose::count(n, one, many),
        None => format!("{v} {many}"),
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn item(v: &Value) -> String {
    format!(
        "{} {} — {}",
        str_at(v, "issue"),
        str_at(v, "title"),
        str_at(v, "rationale")
    )
}

/// The focus view: now, next, later.
fn focus(v: &Value) -> String {
    let mut out = Vec::new();
    let whose = v
        .get("assignee")
        .and_then(Value::as_str)
        .map_or_else(String::new, |a| format!(" for {a}"));
    match v.get("now").filter(|n| n.is_object()) {
        Some(now) => out.push(format!("Now{whose}: {}", item(now))),
        None => out.push(format!("Nothing open{whose}.")),
    }
    for (label, key) in [("Next", "next"), ("Later", "later")] {
        for i in v.get(key).and_then(Value::as_array).into_iter().flatten() {
            out.push(format!("{label}: {}", item(i)));
        }
    }
    if let Some(open) = v.get("open").and_then(Value::as_u64) {
        out.push(format!("Open issues: {open}."));
    }
    out.join("\n")
}

fn band(v: &Value) -> String {
    match (
        v.get("p50").and_then(Value::as_str),
        v.get("p80").and_then(Value::as_str),
    ) {
        (Some(a), Some(b)) => format!("p50 {a}, p80 {b}"),
        _ => "gone".to_owned(),
    }
}

/// The strings of a JSON array (none when it is not one).
fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The standup: drift, each person's plan, stale blockers.
fn standup(v: &Value) -> String {
    let mut out = Vec::new();
    out.push(format!("Standup as of {}.", str_at(v, "asOf")));
    let drift = &v["drift"];
    out.push(format!(
        "Since the last forecast: {}.",
        str_at(drift, "summary")
    ));
    // One moved milestone or issue: its band now and before, the move, and why where it says.
    let moved = |m: &Value| {
        // A milestone's due date or chance of meeting it, where they changed, before why it moved.
        let why = ["changed", "why"]
            .iter()
            .filter_map(|k| m.get(*k).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("; ");
        let directives = strings(&m["directives"]);
        let why = match (why.is_empty(), directives.is_empty()) {
            (true, true) => why,
            (false, true) => format!(": {why}"),
            (true, false) => format!(": {}", directives.join(", ")),
            (false, false) => format!(": {why} ({})", directives.join(", ")),
        };
        // A side without a date (new, closed, emptied) is said so, and a move across the horizon is
        // not counted (its count runs to the horizon, audit 106).
        let (before, after) = (m["before"].get("p80"), m["after"].get("p80"));
        let now = if after.is_some() {
            band(&m["after"])
        } else {
            "no date now".to_owned()
        };
        let was = if before.is_some() {
            format!(" (was {})", band(&m["before"]))
        } else {
            " (new)".to_owned()
        };
        let how = match (
            before.and_then(Value::as_str),
            after.and_then(Value::as_str),
            m["moved"].as_i64(),
        ) {
            (Some(b), Some(a), Some(n)) => format!(", {}", crate::prose::p80_moved(b, a, n)),
            _ => String::new(),
        };
        format!("- {}: {now}{was}{how}{why}", str_at(m, "subject"))
    };
    for m in drift["milestones"].as_array().into_iter().flatten() {
        out.push(moved(m));
    }
    // The changes since, without a count the payload does not hold (the checker would refuse it).
    let since = &drift["sinceThen"];
    if since.is_object() {
        let ids = strings(&since["directives"]);
        let directives = if ids.is_empty() {
            "no directive recorded".to_owned()
        } else {
            format!("directives {} recorded", ids.join(", "))
        };
        let ended = strings(&since["ended"]);
        let directives = if ended.is_empty() {
            directives
        } else {
            format!("{directives}; {}", ended.join(", "))
        };
        let mut settings = if since["settingsChanged"] == true {
            "; commitea.yaml changed".to_owned()
        } else {
            String::new()
        };
        let recalibrated = &since["recalibrated"];
        if recalibrated.is_object() {
            settings.push_str(&format!(
                "; calibration fitted again on closed issues: {} now, {} before",
                recalibrated["samples"], recalibrated["samplesBefore"]
            ));
        }
        out.push(format!(
            "What changed since: {directives}; issues closed: {}; new: {}{settings}.",
            since["closed"], since["new"]
        ));
    }
    for m in drift["issues"].as_array().into_iter().flatten() {
        out.push(moved(m));
    }
    for p in v["people"].as_array().into_iter().flatten() {
        let person = str_at(p, "person");
        let plan: Vec<String> = p["plan"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| {
                format!(
                    "{} {} ({} to {})",
                    str_at(w, "issue"),
                    str_at(w, "title"),
                    str_at(w, "from"),
                    str_at(w, "to")
                )
            })
            .collect();
        if plan.is_empty() {
            out.push(match p["starts"].as_str() {
                Some(day) => format!("{person}: nothing planned; starts on {day}."),
                None => format!("{person}: nothing planned."),
            });
        } else {
            out.push(format!("{person}: {}.", plan.join("; ")));
        }
    }
    for b in v["staleBlockers"].as_array().into_iter().flatten() {
        let blocks = strings(&b["blocks"]);
        out.push(format!(
            "Stale blocker: {} {}, idle {}, blocks {}.",
            str_at(b, "issue"),
            str_at(b, "title"),
            count(&b["idleDays"], "day", "days"),
            blocks.join(", ")
        ));
    }
    out.join("\n")
}

/// One milestone: its range, due date and chance, its counts, then its issues (audit 69: "when will it
/// ship?" reads this view, and its fallback was the payload's lines).
fn milestone(v: &Value) -> String {
    let mut out = Vec::new();
    let cone = &v["cone"];
    let due = v.get("due").and_then(Value::as_str).map_or_else(
        || "no due date".to_owned(),
        |d| format!("due {d}{}", if v["hard"] == true { " (hard)" } else { "" }),
    );
    // An open milestone with nothing open has no cone (its dates would be today's): its status says so.
    let range = if cone.is_object() {
        format!(
            "p10 {}, p50 {}, p80 {}",
            str_at(cone, "p10"),
            str_at(cone, "p50"),
            str_at(cone, "p80")
        )
    } else {
        str_at(v, "status").replace('_', " ")
    };
    out.push(format!(
        "{} ({}), {due}: {range}.",
        str_at(v, "title"),
        str_at(v, "repo"),
    ));
    let stats = &v["stats"];
    if let Some(p) = stats.get("probabilityOnTime").and_then(Value::as_f64) {
        out.push(format!("P(on time) {}%.", (p * 100.0).round()));
    }
    if let Some(s) = stats.get("slack").and_then(Value::as_i64) {
        out.push(format!("Slack: {s} working days from p80 to the due date."));
    }
    out.push(format!(
        "Open issues: {}; closed: {}; remaining: {} hours.",
        stats["open"], stats["closed"], stats["remainingHours"]
    ));
    for i in v["issues"].as_array().into_iter().flatten() {
        let who = match (
            i.get("assignee").and_then(Value::as_str),
            i["planned"] == true,
        ) {
            (Some(a), true) => format!(", planned for {a}"),
            (Some(a), false) => format!(", {a}"),
            (None, _) => String::new(),
        };
        out.push(format!(
            "- {} {}: {}{who}",
            str_at(i, "issue"),
            str_at(i, "title"),
            band(&i["band"])
        ));
    }
    out.join("\n")
}

/// The runway: each milestone's band and chance, each person's load.
fn runway(v: &Value) -> String {
    let mut out = Vec::new();
    out.push(format!("Runway as of {}.", str_at(v, "asOf")));
    for m in v["milestones"].as_array().into_iter().flatten() {
        let due = m
            .get("due")
            .and_then(Value::as_str)
            .map_or_else(|| "no due date".to_owned(), |d| format!("due {d}"));
        let chance = m
            .get("probabilityOnTime")
            .and_then(Value::as_f64)
            .map_or_else(String::new, |p| {
                format!(", P(on time) {}%", (p * 100.0).round())
            });
        // A milestone with nothing open has no band: its status is the whole line.
        let band = m
            .get("band")
            .map(|b| format!("{}{chance}, ", band(b)))
            .unwrap_or_default();
        out.push(format!(
            "{} ({due}): {band}{}.",
            str_at(m, "title"),
            str_at(m, "status").replace('_', " ")
        ));
    }
    for c in v["capacity"].as_array().into_iter().flatten() {
        out.push(format!(
            "{}: {} queued, busy until {}.",
            str_at(c, "person"),
            count(&c["queued"], "issue", "issues"),
            str_at(c, "busyUntil")
        ));
    }
    out.join("\n")
}

/// Any JSON as indented `key: value` lines.
fn lines(v: &Value, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match x {
                    Value::Object(_) | Value::Array(_) => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        lines(x, depth + 1, out);
                    }
                    _ => out.push_str(&format!("{pad}{k}: {}\n", scalar(x))),
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                match x {
                    Value::Object(_) | Value::Array(_) => {
                        out.push_str(&format!("{pad}-\n"));
                        lines(x, depth + 1, out);
                    }
                    _ => out.push_str(&format!("{pad}- {}\n", scalar(x))),
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn payload_counts_say_one_in_the_singular() {
        assert_eq!(count(&json!(1), "day", "days"), "1 day");
        assert_eq!(count(&json!(12), "day", "days"), "12 days");
        assert_eq!(count(&Value::Null, "day", "days"), "null days");
    }

    #[test]
    fn the_focus_in_words_passes_the_checker() {
        let payload = json!({"now": {"issue": "acme/api#179", "title": "Clean up flags",
            "rationale": "in review; p/1; blocks #87; done p50 2026-11-27, p80 2026-11-30"},
            "next": [{"issue": "acme/web#3", "title": "Menu", "rationale": "p50 2026-12-01, p80 2026-12-04"}],
            "later": [], "open": 160});
        let text = render(&payload);
        assert!(
            text.starts_with("Now: acme/api#179 Clean up flags"),
            "{text}"
        );
        assert!(text.contains("Next: acme/web#3"), "{text}");
        let mut g = super::super::check::Grounds::new();
        g.add_json(&payload);
        assert!(super::super::check::ungrounded(&text, &g, &[]).is_empty());
    }

    #[test]
    fn the_standup_in_words_says_what_changed_and_why_and_passes_the_checker() {
        let payload = json!({"asOf": "2026-11-27", "drift": {"since": "6010be2aec03",
            "summary": "Public API v2 p80 +2 working days; 2 issues moved",
            "milestones": [{"subject": "Public API v2", "before": {"p50": "2027-04-23", "p80": "2027-05-14"},
                "after": {"p50": "2027-04-27", "p80": "2027-05-18"}, "moved": 2,
                "changed": "due 2027-04-30 → 2027-05-28, P(on time) 56% → 89%"}],
            "issues": [{"subject": "acme/api#77", "before": {"p50": "2027-02-02", "p80": "2027-02-11"},
                "after": {"p50": "2026-12-09", "p80": "2026-12-11"}, "moved": -40,
                "why": "blocks acme/api#102", "directives": ["D-0002 withdrawn"]}],
            "issuesMoved": 2,
            "sinceThen": {"directives": ["D-0004", "D-0005"], "ended": ["D-0002 withdrawn"], "closed": 3,
                "new": 0, "settingsChanged": true, "recalibrated": {"samplesBefore": 61, "samples": 62,
                "multiplierBefore": 1.315, "multiplier": 1.372, "sigmaBefore": 0.503, "sigma": 0.581}}},
            "people": [{"person": "amara", "plan": [], "idle": true},
                {"person": "gus", "plan": [], "idle": true, "starts": "2026-12-07"}], "staleBlockers": []});
        let text = render(&payload);
        assert!(
            text.contains(
                "What changed since: directives D-0004, D-0005 recorded; D-0002 withdrawn; issues closed: 3; new: 0; commitea.yaml changed; calibration fitted again on closed issues: 62 now, 61 before."
            ),
            "{text}"
        );
        assert!(
            text.contains("- acme/api#77: p50 2026-12-09, p80 2026-12-11 (was p50 2027-02-02, p80 2027-02-11), \u{2212}40 working days: blocks acme/api#102 (D-0002 withdrawn)"),
            "{text}"
        );
        assert!(
            text.contains("+2 working days: due 2027-04-30 → 2027-05-28, P(on time) 56% → 89%"),
            "{text}"
        );
        assert!(
            text.contains("gus: nothing planned; starts on 2026-12-07."),
            "{text}"
        );
        let mut g = super::super::check::Grounds::new();
        g.add_json(&payload);
        let claims = super::super::check::ungrounded(&text, &g, &["amara".into(), "gus".into()]);
        assert!(claims.is_empty(), "{claims:?}\n{text}");
    }

    #[test]
    fn a_move_across_the_horizon_or_to_nothing_open_is_said_not_counted() {
        let payload = json!({"asOf": "2026-11-27", "drift": {"since": "abc", "summary": "s",
            "milestones": [
                {"subject": "Far", "before": {"p50": "2027-03-01", "p80": "2027-04-01"},
                    "after": {"p50": "beyond horizon", "p80": "beyond horizon"}, "moved": 395},
                {"subject": "Done", "before": {"p50": "2027-03-01", "p80": "2027-03-18"}, "moved": 0,
                    "why": "nothing open in it any more"}],
            "issues": []},
            "people": [], "staleBlockers": []});
        let text = render(&payload);
        assert!(text.contains("- Far: p50 beyond horizon, p80 beyond horizon (was p50 2027-03-01, p80 2027-04-01), left the horizon"), "{text}");
        assert!(!text.contains("395"), "{text}");
        assert!(
            text.contains("- Done: no date now (was p50 2027-03-01, p80 2027-03-18): nothing open in it any more"),
            "{text}"
        );
    }

    #[test]
    fn the_runway_and_other_views_in_words() {
        let payload = json!({"asOf": "2026-11-27", "milestones": [{"title": "Public API v2",
            "due": "2027-04-30", "band": {"p50": "2027-04-13", "p80": "2027-05-05"},
            "probabilityOnTime": 0.753, "status": "at_risk"}],
            "capacity": [{"person": "amara", "queued": 30, "busyUntil": "2027-03-17"}]});
        let text = render(&payload);
        assert!(text.contains("Public API v2 (due 2027-04-30): p50 2027-04-13, p80 2027-05-05, P(on time) 75%, at risk."), "{text}");
        let mut g = super::super::check::Grounds::new();
        g.add_json(&payload);
        assert!(super::super::check::ungrounded(&text, &g, &["amara".into()]).is_empty());
        let milestone = json!({"cone": {"p10": "2027-04-06", "p50": "2027-04-27", "p80": "2027-05-18"},
            "due": "2027-04-30", "hard": false, "milestone": 4, "repo": "acme/api", "state": "open",
            "title": "Public API v2", "stats": {"closed": 6, "open": 46, "probabilityOnTime": 0.561,
            "remainingHours": 547.46, "slack": -12, "unestimated": 6},
            "issues": [{"assignee": "amara", "band": {"p50": "2026-11-27", "p80": "2026-11-30"},
                "issue": "acme/api#57", "planned": true, "state": "steeping", "title": "Session cleanup"}]});
        let text = render(&milestone);
        assert_eq!(
            text,
            "Public API v2 (acme/api), due 2027-04-30: p10 2027-04-06, p50 2027-04-27, p80 2027-05-18.\n\
             P(on time) 56%.\n\
             Slack: -12 working days from p80 to the due date.\n\
             Open issues: 46; closed: 6; remaining: 547.46 hours.\n\
             - acme/api#57 Session cleanup: p50 2026-11-27, p80 2026-11-30, planned for amara"
        );
        let mut g = super::super::check::Grounds::new();
        g.add_json(&milestone);
        let claims = super::super::check::ungrounded(&text, &g, &["amara".into()]);
        assert!(claims.is_empty(), "{claims:?}\n{text}");
        // A milestone with nothing open has no band or cone: its status, not "gone" or empty dates.
        let empty = json!({"asOf": "2026-11-27", "capacity": [], "milestones": [{"title": "Old",
            "due": "2011-10-18", "status": "nothing_open", "openIssues": 0}]});
        assert_eq!(
            render(&empty),
            "Runway as of 2026-11-27.\nOld (due 2011-10-18): nothing open."
        );
        let empty = json!({"milestone": 7, "repo": "acme/api", "state": "open", "title": "Old",
            "status": "nothing_open", "stats": {"closed": 3, "open": 0, "remainingHours": 0.0},
            "issues": []});
        assert_eq!(
            render(&empty),
            "Old (acme/api), no due date: nothing open.\nOpen issues: 0; closed: 3; remaining: 0.0 hours."
        );
        let other = render(&json!({"n": 3, "list": ["a", {"b": true}]}));
        assert_eq!(other, "list:\n  - a\n  -\n    b: true\nn: 3");
    }
}
