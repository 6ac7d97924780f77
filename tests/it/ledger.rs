//! The directive ledger (`pm-state.md`): parse, render and append, on `tests/fixtures/ledger/pm-state.md`.

use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};
use commitea::domain::{Estimate, IssueKey, Priority};
use commitea::ledger::format::{
    DirectiveEntry, DirectiveId, DirectiveKind, Entry, NewDirective, Params, Status, Target,
};
use commitea::ledger::parse::{AppendError, append, next_id, parse, render};

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

fn fixture() -> String {
    read("tests/fixtures/ledger/pm-state.md")
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn date(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn directives(text: &str) -> Vec<DirectiveEntry> {
    parse(text).ledger.directives().cloned().collect()
}

#[test]
fn fixture_parses_every_kind_and_status_without_problems() {
    let text = fixture();
    let parsed = parse(&text);
    assert!(parsed.problems.is_empty(), "{:#?}", parsed.problems);
    let ds: Vec<_> = parsed.ledger.directives().collect();
    assert_eq!(ds.len(), 8);
    let ids: Vec<u32> = ds.iter().map(|d| d.id.0).collect();
    assert_eq!(ids, (1..=8).collect::<Vec<_>>());
    for kind in DirectiveKind::ALL {
        assert!(
            ds.iter().any(|d| d.kind == kind),
            "no {kind} in the fixture"
        );
    }
    for status in [Status::Active, Status::Superseded, Status::Withdrawn] {
        assert!(
            ds.iter().any(|d| d.status == status),
            "no {status} in the fixture"
        );
    }
    for d in &ds {
        assert_eq!(d.kind, d.params.kind());
        assert!(d.raw.starts_with("## D-"), "{:?}", d.raw);
        assert_eq!(
            text.lines().nth(d.line - 1).unwrap(),
            d.raw.lines().next().unwrap()
        );
    }

    let d1 = ds[0];
    assert_eq!(d1.line, 6);
    assert_eq!(d1.at, at("2026-11-02T09:00:00Z"));
    assert_eq!(
        d1.quote,
        "The public launch is January 15th. Marketing has booked the venue,\nso that date does not move."
    );
    assert_eq!(d1.target, Some(Target::Milestone(3)));
    assert_eq!(
        d1.params,
        Params::SetDeadline {
            due: date("2027-01-15"),
            hard: true
        }
    );
    assert_eq!(d1.rationale.as_deref(), Some("launch event is booked"));
    assert_eq!(d1.by.as_deref(), Some("ann"));

    // An offset timestamp is normalised to UTC.
    assert_eq!(ds[1].at, at("2026-11-03T13:30:00Z"));
    assert_eq!(
        ds[1].target,
        Some(Target::Issue("acme/api#12".parse::<IssueKey>().unwrap()))
    );
    assert_eq!(
        ds[1].params,
        Params::Reprioritize {
            priority: Priority::new(1).unwrap()
        }
    );
    // A multi-paragraph quote keeps its blank line.
    assert_eq!(
        ds[3].quote,
        "Drop the CSV export from this release.\n\nWe can do it in the spring."
    );
    assert_eq!(ds[3].params, Params::Scope { included: false });
    assert_eq!(
        ds[4].params,
        Params::Capacity {
            from: date("2026-12-21"),
            to: Some(date("2027-01-01")),
            hours_per_week: 0.0
        }
    );
    assert_eq!(ds[5].params, Params::Note);
    assert_eq!(ds[5].target, None);
    // A wrapped list item is joined with a space.
    assert_eq!(
        ds[6].rationale.as_deref(),
        Some("replaces D-0003 after the backfill test took four hours on staging")
    );
    // No status line means active; an open-ended capacity has no `to`.
    assert_eq!(ds[7].status, Status::Active);
    assert_eq!(
        ds[7].params,
        Params::Capacity {
            from: date("2026-12-01"),
            to: None,
            hours_per_week: 20.0
        }
    );

    // Prose is kept: the introduction, the notes with their own list, the non-directive heading.
    let prose: String = parsed
        .ledger
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Prose(p) => Some(p.as_str()),
            Entry::Directive(_) => None,
        })
        .collect();
    assert!(prose.starts_with("# PM directives: Acme Platform\n"));
    assert!(prose.contains("* Bob asked about the search rewrite.\n"));
    assert!(prose.contains("## Open questions\n"));
}

#[test]
fn untouched_ledgers_round_trip_byte_for_byte() {
    for text in [fixture(), read("state/pm-state.md"), String::new()] {
        let parsed = parse(&text);
        assert!(parsed.problems.is_empty(), "{:#?}", parsed.problems);
        assert_eq!(render(&parsed.ledger), text);
    }
    // Odd inputs too: no final newline, trailing spaces, a heading only.
    for text in [
        "## D-0001 · note · 2026-11-01T00:00:00Z\n\n> hi",
        "intro  \n\n\n## D-0001 · note · 2026-11-01T00:00:00Z\n> hi\n- status: active   \n\n\n",
        "## D-0001 · note · 2026-11-01T00:00:00Z",
    ] {
        assert_eq!(render(&parse(text).ledger), text);
    }
}

#[test]
fn crlf_line_endings_survive_the_round_trip() {
    let text = fixture().replace('\n', "\r\n");
    let parsed = parse(&text);
    assert!(parsed.problems.is_empty(), "{:#?}", parsed.problems);
    assert_eq!(render(&parsed.ledger), text);
    let crlf: Vec<_> = parsed.ledger.directives().cloned().collect();
    let lf = directives(&fixture());
    assert_eq!(crlf.len(), lf.len());
    for (a, b) in crlf.iter().zip(&lf) {
        assert!(!a.quote.contains('\r'));
        assert_eq!(a.raw, b.raw.replace('\n', "\r\n"));
        let strip = |d: &DirectiveEntry| DirectiveEntry {
            raw: String::new(),
            ..d.clone()
        };
        assert_eq!(strip(a), strip(b));
    }

    // Appending to a CRLF ledger writes CRLF.
    let out = append(&text, &new_note(), DirectiveId(1)).unwrap();
    assert!(out.text.starts_with(&text));
    let added = &out.text[text.len()..];
    assert!(added.contains("\r\n") && !added.replace("\r\n", "").contains('\n'));
    assert_eq!(directives(&out.text).len(), 9);
}

fn new_note() -> NewDirective {
    NewDirective {
        at: at("2026-11-30T10:15:00Z"),
        quote: "Remember the retro on Friday.".into(),
        target: None,
        params: Params::Note,
        rationale: None,
        by: None,
    }
}

fn new_directives() -> Vec<NewDirective> {
    let base = NewDirective {
        at: at("2026-11-30T10:15:00Z"),
        quote: "Search can wait.\n\nReally, it can wait until March.\n> quoting Bob: \"fine\""
            .into(),
        target: Some(Target::Issue("acme/api#44".parse().unwrap())),
        params: Params::Reprioritize {
            priority: Priority::new(3).unwrap(),
        },
        rationale: Some("checkout first; see D-0002".into()),
        by: Some("ann".into()),
    };
    vec![
        base.clone(),
        NewDirective {
            params: Params::Reestimate {
                estimate: "1w".parse::<Estimate>().unwrap(),
            },
            rationale: None,
            ..base.clone()
        },
        NewDirective {
            at: at("2026-11-30T10:15:00.250Z"),
            target: Some(Target::Milestone(4)),
            params: Params::SetDeadline {
                due: date("2027-03-01"),
                hard: false,
            },
            ..base.clone()
        },
        NewDirective {
            target: Some(Target::Milestone(4)),
            params: Params::SetDeadline {
                due: date("2027-03-01"),
                hard: true,
            },
            by: None,
            ..base.clone()
        },
        NewDirective {
            params: Params::Scope { included: true },
            ..base.clone()
        },
        NewDirective {
            target: Some(Target::Member("bob".into())),
            params: Params::Capacity {
                from: date("2027-01-04"),
                to: Some(date("2027-01-29")),
                hours_per_week: 12.5,
            },
            ..base.clone()
        },
        NewDirective {
            target: Some(Target::Member("carol".into())),
            params: Params::Capacity {
                from: date("2027-01-04"),
                to: None,
                hours_per_week: 30.0,
            },
            ..base.clone()
        },
        new_note(),
        NewDirective {
            params: Params::Note,
            ..base
        },
    ]
}

#[test]
fn append_keeps_every_earlier_byte_and_reads_back_equal() {
    let text = fixture();
    for new in new_directives() {
        let out = append(&text, &new, DirectiveId(1)).unwrap();
        assert_eq!(out.id, DirectiveId(9));
        assert!(out.text.starts_with(&text), "earlier bytes changed");
        let parsed = parse(&out.text);
        assert!(parsed.problems.is_empty(), "{:#?}", parsed.problems);
        let ds: Vec<_> = parsed.ledger.directives().collect();
        assert_eq!(ds.len(), 9);
        let back = ds[8];
        assert_eq!(back.id, DirectiveId(9));
        assert_eq!(back.at, new.at);
        assert_eq!(back.kind, new.kind());
        assert_eq!(back.quote, new.quote);
        assert_eq!(back.target, new.target);
        assert_eq!(back.params, new.params);
        assert_eq!(back.rationale, new.rationale);
        assert_eq!(back.status, Status::Active);
        assert_eq!(back.by, new.by);
        assert_eq!(render(&parsed.ledger), out.text);
        // The earlier directives are untouched.
        assert_eq!(&directives(&out.text)[..8], &directives(&text)[..]);
    }
}

#[test]
fn append_renders_the_documented_shape_and_chains_ids() {
    let first = append("", &new_directives()[0], DirectiveId(1)).unwrap();
    assert_eq!(first.id, DirectiveId(1));
    assert_eq!(
        first.text,
        "## D-0001 · reprioritize · 2026-11-30T10:15:00Z\n\
         \n\
         > Search can wait.\n\
         >\n\
         > Really, it can wait until March.\n\
         > > quoting Bob: \"fine\"\n\
         \n\
         - target: issue acme/api#44\n\
         - params: {\"priority\": 3}\n\
         - rationale: checkout first; see D-0002\n\
         - status: active\n\
         - by: ann\n"
    );
    let second = append(&first.text, &new_note(), DirectiveId(1)).unwrap();
    assert_eq!(second.id, DirectiveId(2));
    assert!(second.text.starts_with(&first.text));
    // A text without a final newline gets one and a blank line before the entry.
    let third = append("intro", &new_note(), DirectiveId(1)).unwrap();
    assert!(third.text.starts_with("intro\n\n## D-0001 · note · "));
}

#[test]
fn append_rejects_what_would_not_read_back() {
    let text = fixture();
    let mut n = new_note();
    n.quote = "  \n ".into();
    assert_eq!(
        append(&text, &n, DirectiveId(1)),
        Err(AppendError::EmptyQuote)
    );
    let mut n = new_note();
    n.rationale = Some("two\nlines".into());
    assert_eq!(
        append(&text, &n, DirectiveId(1)),
        Err(AppendError::MultiLine("rationale"))
    );
    let mut n = new_note();
    n.target = Some(Target::Member("not a username".into()));
    assert!(matches!(
        append(&text, &n, DirectiveId(1)),
        Err(AppendError::NotReadBack(_))
    ));
    let mut n = new_note();
    n.params = Params::Scope { included: true };
    assert!(matches!(
        append(&text, &n, DirectiveId(1)),
        Err(AppendError::NotReadBack(_))
    ));
}

/// Inserts `entry` before `## D-0003` in the fixture; returns the text and the line the entry starts on.
fn with_entry(entry: &str) -> (String, usize) {
    let text = fixture();
    let at = text.find("## D-0003").unwrap();
    let line = text[..at].matches('\n').count() + 1;
    (format!("{}{entry}\n{}", &text[..at], &text[at..]), line)
}

#[test]
fn each_malformed_entry_is_one_problem_on_its_line_and_kept_as_prose() {
    const OK_LIST: &str = "- target: issue acme/api#1\n- params: {\"priority\": 1}\n";
    // (entry, line offset of the problem within the entry, text the message must contain)
    let cases: Vec<(String, usize, &str)> = vec![
        (
            format!("## D-0020 · reprio · 2026-11-20T10:00:00Z\n\n> Do it.\n\n{OK_LIST}"),
            0,
            "unknown directive kind \"reprio\"",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-13-40\n\n> Do it.\n\n{OK_LIST}"),
            0,
            "bad date \"2026-13-40\"",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-11-20\n\n> Do it.\n\n{OK_LIST}"),
            0,
            "bad date \"2026-11-20\"",
        ),
        (
            format!("## D-0020 · reprioritize\n\n> Do it.\n\n{OK_LIST}"),
            0,
            "malformed directive heading",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n{OK_LIST}"),
            0,
            "directive D-0020 has no quote",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\nDo it.\n\n{OK_LIST}"),
            0,
            "directive D-0020 has no quote",
        ),
        (
            "## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n- target: issue acme/api#1\n- params: {\"priority\": 7}\n".into(),
            5,
            "params for reprioritize are wrong: priority 7 is not 0, 1, 2 or 3",
        ),
        (
            "## D-0020 · reestimate · 2026-11-20T10:00:00Z\n\n> Two days.\n\n- target: issue acme/api#1\n- params: {\"estimate\": 2}\n".into(),
            5,
            "params for reestimate are wrong",
        ),
        (
            // YAML's way of writing it, not JSON (audit 120: "key must be a string").
            "## D-0020 · reestimate · 2026-11-20T10:00:00Z\n\n> Three days.\n\n- target: issue acme/api#1\n- params: {estimate: 3d}\n".into(),
            5,
            "params for reestimate are wrong: {estimate: 3d} is not JSON (",
        ),
        (
            "## D-0020 · scope · 2026-11-20T10:00:00Z\n\n> Out.\n\n- target: milestone 2\n- params: {\"in\": false, \"why\": 1}\n".into(),
            5,
            "unknown field \"why\"",
        ),
        (
            "## D-0020 · capacity · 2026-11-20T10:00:00Z\n\n> Off.\n\n- target: member ann\n- params: {\"from\": \"2026-12-10\", \"to\": \"2026-12-01\", \"hours_per_week\": 0}\n".into(),
            5,
            "is before from",
        ),
        (
            "## D-0020 · capacity · 2026-11-20T10:00:00Z\n\n> All of it.\n\n- target: member ann\n- params: {\"from\": \"2026-12-10\", \"hours_per_week\": 1e308}\n".into(),
            5,
            "is not 0 (away) or a number of hours from 0.1 to 168",
        ),
        (
            "## D-0020 · note · 2026-11-20T10:00:00Z\n\n> Hm.\n\n- params: {\"priority\": 1}\n".into(),
            4,
            "params for note are wrong",
        ),
        (
            "## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n- target: issue acme/api#1\n".into(),
            0,
            "params for reprioritize are wrong: no \"- params",
        ),
        (
            "## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n- target: issue acme-api-12\n- params: {\"priority\": 1}\n".into(),
            4,
            "malformed target \"issue acme-api-12\"",
        ),
        (
            "## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n- target: epic 4\n- params: {\"priority\": 1}\n".into(),
            4,
            "malformed target \"epic 4\"",
        ),
        (
            "## D-0020 · capacity · 2026-11-20T10:00:00Z\n\n> Off.\n\n- target: issue acme/api#1\n- params: {\"from\": \"2026-12-10\", \"hours_per_week\": 0}\n".into(),
            0,
            "capacity needs a member",
        ),
        (
            format!("## D-0002 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n{OK_LIST}"),
            0,
            "duplicate directive id D-0002 (already used on line 17)",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n{OK_LIST}- priority: 1\n"),
            6,
            "unknown key \"priority\"",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n{OK_LIST}- status: paused\n"),
            6,
            "unknown status \"paused\"",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n{OK_LIST}- target: issue acme/api#2\n"),
            6,
            "key \"target\" given twice",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n{OK_LIST}- just words\n"),
            6,
            "is not \"key: value\"",
        ),
        (
            format!("## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n{OK_LIST}- by: Ann Smith\n"),
            6,
            "\"by\" must be a Gitea username",
        ),
    ];
    let good = directives(&fixture());
    for (entry, offset, needle) in cases {
        let (text, line) = with_entry(&entry);
        let parsed = parse(&text);
        assert_eq!(parsed.problems.len(), 1, "{entry}: {:#?}", parsed.problems);
        let problem = &parsed.problems[0];
        let msg = problem.to_string();
        assert_eq!(problem.line(), line + offset, "{msg}");
        assert!(
            msg.starts_with(&format!("ledger line {}: ", line + offset)),
            "{msg}"
        );
        assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
        // Every other directive still parses, identically apart from lines after the insertion.
        let ds: Vec<_> = parsed.ledger.directives().collect();
        assert_eq!(ds.len(), good.len(), "{msg}");
        for (a, b) in ds.iter().zip(&good) {
            assert_eq!((a.id, &a.raw, &a.params), (b.id, &b.raw, &b.params));
        }
        // Nothing is lost or reordered, and the malformed entry is prose.
        assert_eq!(render(&parsed.ledger), text);
        assert!(parsed.ledger.entries.iter().any(|e| matches!(
            e,
            Entry::Prose(p) if p.contains(entry.trim_end())
        )));
    }
}

#[test]
fn problem_messages_name_the_line_and_the_fault() {
    let (text, line) = with_entry(
        "## D-0020 · reprio · 2026-11-20T10:00:00Z\n\n> Do it.\n\n- target: issue acme/api#1\n- params: {\"priority\": 1}\n",
    );
    let parsed = parse(&text);
    assert_eq!(
        parsed.problems[0].to_string(),
        format!(
            "ledger line {line}: unknown directive kind \"reprio\" (expected reprioritize, reestimate, \
             set-deadline, scope, capacity or note), so this directive is left out"
        )
    );
    // A key mistyped, in capitals, or in a numbered list says what was meant, and that the directive is
    // left out (audit 185: "unknown key \"traget\"" read as one field ignored).
    for (item, said) in [
        (
            "- traget: issue acme/api#1",
            "unknown key \"traget\" (expected target, params, rationale, status or by); did you mean target?, so this directive is left out",
        ),
        (
            "- Target: issue acme/api#1",
            "did you mean target? (keys are lower case)",
        ),
        (
            "1. target: issue acme/api#1",
            "a numbered list reads \"target\" as \"1. target\": write the items with `- ` bullets",
        ),
    ] {
        let (text, _) = with_entry(&format!(
            "## D-0020 · reprioritize · 2026-11-20T10:00:00Z\n\n> Do it.\n\n{item}\n- params: {{\"priority\": 1}}\n"
        ));
        let parsed = parse(&text);
        let got = parsed
            .problems
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(got.contains(said), "{item}: {got}");
    }
}

#[test]
fn next_id_follows_the_highest_including_malformed_entries() {
    assert_eq!(next_id(""), DirectiveId(1));
    assert_eq!(next_id(&fixture()), DirectiveId(9));
    let (text, _) = with_entry("## D-0042 · reprio · 2026-11-20T10:00:00Z\n\n> Do it.\n");
    assert_eq!(next_id(&text), DirectiveId(43));
    assert_eq!(
        append(&text, &new_note(), DirectiveId(1)).unwrap().id,
        DirectiveId(43)
    );
    // Ids that proposals on their branches took are not given again.
    assert_eq!(
        append(&text, &new_note(), DirectiveId(50)).unwrap().id,
        DirectiveId(50)
    );
    assert_eq!(DirectiveId(43).to_string(), "D-0043");
    assert_eq!(DirectiveId(12345).to_string(), "D-12345");
}

#[test]
fn the_documented_example_is_the_fixture() {
    let doc = read("docs/ledger.md");
    let start = doc.find("## A full example").unwrap();
    let body = &doc[start..];
    let open = body.find("```markdown\n").unwrap() + "```markdown\n".len();
    let close = body[open..].find("\n```\n").unwrap() + 1;
    assert_eq!(&body[open..open + close], fixture());
}

#[test]
fn compact_entries_without_blank_lines_parse() {
    let text = "## D-0001 · scope · 2026-11-01T00:00:00Z ##\n> Out.\n- target: milestone 2\n- params: {\"in\": false}\n\nAfter.\n\n## D-0002 | note | 2026-11-02T00:00:00Z\n> Hm.\n";
    let parsed = parse(text);
    assert!(parsed.problems.is_empty(), "{:#?}", parsed.problems);
    let ds: Vec<_> = parsed.ledger.directives().collect();
    assert_eq!(ds.len(), 2);
    assert_eq!(ds[0].quote, "Out.");
    assert_eq!(ds[0].params, Params::Scope { included: false });
    assert_eq!(ds[0].raw.lines().last(), Some("- params: {\"in\": false}"));
    assert_eq!(ds[1].kind, DirectiveKind::Note);
    assert_eq!(render(&parsed.ledger), text);

    // Prose right after the list, without a blank line, continues its last item (Markdown's lazy
    // continuation): here it spoils the params, which is reported.
    let glued = text.replace("false}\n\nAfter.", "false}\nAfter.");
    let parsed = parse(&glued);
    assert_eq!(parsed.problems.len(), 1);
    assert_eq!(parsed.problems[0].line(), 4);
    assert_eq!(render(&parsed.ledger), glued);
}

#[test]
fn an_unclosed_fence_or_comment_in_the_notes_is_said_for_every_directive_it_swallows() {
    let text = fixture();
    let total = directives(&text).len();
    let at = text.find("## D-0003").unwrap();
    let opened = text[..at].matches('\n').count() + 1;
    for (opening, inside) in [
        ("```\nsome log output\n\n", "a fenced code block"),
        ("<!-- TODO ask bob\n\n", "an HTML block or comment"),
    ] {
        let broken = format!("{}{opening}{}", &text[..at], &text[at..]);
        let parsed = parse(&broken);
        let read = parsed.ledger.directives().count();
        assert!(read < total, "{opening:?} swallowed nothing");
        // Every directive the block swallowed is one problem on its own line, naming the block's start.
        let swallowed: Vec<String> = parsed
            .problems
            .iter()
            .filter(|p| matches!(p, commitea::ledger::format::LedgerProblem::Swallowed { .. }))
            .map(ToString::to_string)
            .collect();
        assert_eq!(swallowed.len(), total - read, "{opening:?}: {swallowed:?}");
        assert!(
            swallowed[0].starts_with(&format!(
                "ledger line {}: \"## D-0003 ·",
                opened + opening.matches('\n').count()
            )) && swallowed[0].contains(&format!("inside {inside} that starts on line {opened}")),
            "{swallowed:?}"
        );
        // Nothing can be appended after it until it is closed: the new entry would be swallowed too.
        // Said of the file as it is: the block's start and the headings it hides, not the line the new
        // entry would have had (audit 185: "line 92" of a 90-line file).
        match append(&broken, &new_note(), DirectiveId(1)) {
            Err(e @ AppendError::Swallowed { .. }) => {
                let hidden_at = broken[..broken.find("## D-0003").unwrap()]
                    .matches('\n')
                    .count()
                    + 1;
                let said = e.to_string();
                assert!(
                    said.contains(&format!(
                        "ends inside {inside} that starts on line {opened}"
                    )) && said.contains(&format!(
                        "hides the directive headings on lines {hidden_at}, "
                    )),
                    "{said}"
                );
                assert!(
                    !said.contains(&format!("line {}", broken.lines().count() + 2)),
                    "{said}"
                );
            }
            other => panic!("{opening:?}: {other:?}"),
        }
    }
    // A closed block says nothing, even with a directive in it on purpose: an example in a fence, a
    // directive commented out (a closed `<!-- -->`), at the end of the file or before the others.
    let example = "## D-0099 · note · 2026-11-30T10:00:00Z\n\n> An example.\n";
    for block in [
        "```\nlog\n```\n".to_owned(),
        format!("```markdown\n{example}```\n"),
        format!("<!--\n{example}-->\n"),
    ] {
        for closed in [
            format!("{}{block}\n{}", &text[..at], &text[at..]),
            format!("{text}\n{block}"),
        ] {
            let problems = parse(&closed).problems;
            assert!(problems.is_empty(), "{block}: {problems:?}");
            assert_eq!(directives(&closed).len(), total);
        }
    }
    // Old Mac line endings make the file one line: said once, and no message quotes the whole file.
    let cr = text.replace('\n', "\r");
    let parsed = parse(&cr);
    assert!(
        parsed.problems.iter().any(|p| matches!(
            p,
            commitea::ledger::format::LedgerProblem::LoneCarriageReturn { line: 1 }
        )),
        "{:?}",
        parsed.problems
    );
    assert!(
        parsed
            .problems
            .iter()
            .all(|p| p.to_string().chars().count() < 400),
        "{:?}",
        parsed.problems
    );
}

#[test]
fn an_editors_whitespace_in_a_quote_changes_no_words() {
    let text = fixture();
    let plain = directives(&text);
    // Trailing spaces on the quote's lines and a tab after `>`, as editors and IDEs leave them.
    let edited: String = text
        .split_inclusive('\n')
        .map(|l| match l.strip_prefix("> ") {
            Some(rest) => format!(">\t{}", rest.replace('\n', "  \n")),
            None => l.to_owned(),
        })
        .collect();
    assert_ne!(edited, text);
    let quotes = |ds: &[DirectiveEntry]| ds.iter().map(|d| d.quote.clone()).collect::<Vec<_>>();
    assert_eq!(quotes(&directives(&edited)), quotes(&plain));
    // A new quote with trailing spaces is appended and reads back as the same words.
    let mut n = new_note();
    n.quote = "Freeze the API.   \nNo exceptions.\t".into();
    let appended = append(&text, &n, DirectiveId(1)).unwrap();
    let back = directives(&appended.text);
    assert_eq!(
        back.last().unwrap().quote,
        "Freeze the API.\nNo exceptions."
    );
}

#[test]
fn a_byte_order_mark_before_the_first_directive_hides_nothing() {
    // Notepad saves UTF-8 with a mark: "\u{feff}## D-0001 …" was no heading, and its directive vanished
    // without a word (audit 80).
    let text = "\u{feff}## D-0001 · reprioritize · 2026-11-01T00:00:00Z\n\n> First.\n\n- target: issue acme/web#150\n- params: {\"priority\": \"p/0\"}\n- status: Active\n";
    let parsed = parse(text);
    assert!(parsed.problems.is_empty(), "{:#?}", parsed.problems);
    let ds: Vec<_> = parsed.ledger.directives().collect();
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].status, Status::Active, "a status in any case");
    assert_eq!(
        render(&parsed.ledger),
        text,
        "every byte kept, the mark too"
    );
    assert_eq!(next_id(text), DirectiveId(2));
}

#[test]
fn a_merge_conflict_left_in_the_ledger_is_said_and_eats_no_entry() {
    // Two PMs appended D-0002 at once; the merge was committed with git's markers in. A marker glued to
    // the entry before it spoiled that entry (`by: amara <<<<<<< HEAD`), and `=======` after a line made
    // it a heading (audit 80).
    let entry = |id: &str, by: &str| {
        format!(
            "## {id} · note · 2026-11-0{}T00:00:00Z\n\n> From {by}.\n\n- status: active\n- by: {by}",
            &id[5..]
        )
    };
    let text = format!(
        "{}\n<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> theirs\n",
        entry("D-0001", "amara"),
        entry("D-0002", "ann"),
        entry("D-0002", "bob"),
    );
    let parsed = parse(&text);
    let ds: Vec<_> = parsed.ledger.directives().collect();
    assert_eq!(ds.len(), 2, "{:#?}", parsed.problems);
    assert_eq!(ds[0].by.as_deref(), Some("amara"));
    assert_eq!(ds[1].by.as_deref(), Some("ann"));
    let said: Vec<String> = parsed.problems.iter().map(ToString::to_string).collect();
    assert_eq!(said.len(), 4, "{said:#?}");
    for (line, marker) in [(7, "<<<<<<<"), (14, "======="), (21, ">>>>>>>")] {
        assert!(
            said.iter().any(|s| s.starts_with(&format!(
                "ledger line {line}: a git merge-conflict marker ({marker})"
            ))),
            "{line}: {said:#?}"
        );
    }
    assert!(
        said.iter().any(
            |s| s.starts_with("ledger line 15: duplicate directive id D-0002")
                && s.contains("give this one the next free id, D-0003")
        ),
        "{said:#?}"
    );
    assert_eq!(render(&parsed.ledger), text, "every byte kept");
    // A lone `=======` is Markdown's heading underline, not a marker.
    assert!(parse("Notes\n=======\n").problems.is_empty());
}

/// An indented directive heading is no heading to markdown: two spaces under a list item made it the
/// item's text, and the well-written entry above was lost with a message about its own `by`; four spaces
/// after prose made it code, lost without a word (audit 185). The entry above counts, and the indented
/// one is said at its line.
#[test]
fn an_indented_directive_heading_is_said_and_takes_nothing_with_it() {
    let text = fixture();
    let total = directives(&text).len();
    let above = directives(&text).iter().map(|d| d.id).max().unwrap().next();
    let next = above.next();
    for (indent, after) in [("  ", ""), ("    ", "Some words of the PM's.\n\n")] {
        let entry = format!(
            "\n## {above} · note · 2026-11-30T09:00:00Z\n\n> Ship the beta.\n\n- by: amara\n\n{after}\
             {indent}## {next} · note · 2026-11-30T10:00:00Z\n\n{indent}> Tell the partners.\n"
        );
        let with = format!("{text}{entry}");
        let parsed = parse(&with);
        let read: Vec<String> = parsed
            .ledger
            .directives()
            .map(|d| d.id.to_string())
            .collect();
        assert_eq!(read.len(), total + 1, "{indent:?}: {read:?}");
        assert_eq!(
            read.last(),
            Some(&above.to_string()),
            "{indent:?}: the entry above counts"
        );
        let said: Vec<String> = parsed.problems.iter().map(ToString::to_string).collect();
        let line = with[..with.find(&format!("## {next}")).unwrap()]
            .matches('\n')
            .count()
            + 1;
        assert_eq!(said.len(), 1, "{indent:?}: {said:?}");
        assert!(
            said[0].starts_with(&format!("ledger line {line}: \"## {next} · note"))
                && said[0].contains(&format!("it is indented {} spaces", indent.len())),
            "{said:?}"
        );
    }
}

/// A directive's heading written at another level, without the space, in lower case or in bold is not a
/// heading the ledger reads: each is said with its line, and every other directive still counts (audit
/// 114: `### D-0004 · reestimate` dropped the directive from the plan without a word).
#[test]
fn a_misshapen_directive_heading_is_said_with_its_line_and_the_others_still_count() {
    let text = fixture();
    let total = directives(&text).len();
    assert!(parse(&text).problems.is_empty());
    let at = text.find("## D-0004").unwrap();
    let line = text[..at].matches('\n').count() + 1;
    for (from, to) in [
        ("## D-0004", "### D-0004"),
        ("## D-0004", "#### D-0004"),
        ("## D-0004", "##D-0004"),
        ("## D-0004", "## d-0004"),
        ("## D-0004 ·", "**D-0004** ·"),
        // Audit 185: an editor's smart dash, no hyphen, words before the id, and no id at all.
        ("## D-0004", "## D\u{2013}0004"),
        ("## D-0004", "## D0004"),
        ("## D-0004", "## Directive D-0004"),
        ("## D-0004 · ", "## "),
    ] {
        let broken = format!("{}{}", &text[..at], &text[at..].replacen(from, to, 1));
        let parsed = parse(&broken);
        assert_eq!(
            parsed.ledger.directives().count(),
            total - 1,
            "{to}: only D-0004 is lost"
        );
        let said: Vec<String> = parsed.problems.iter().map(ToString::to_string).collect();
        assert_eq!(said.len(), 1, "{to}: {said:?}");
        assert!(
            said[0].starts_with(&format!("ledger line {line}: \"{to}")),
            "{said:?}"
        );
        assert!(said[0].contains("\"## D-NNNN · kind · time\""), "{said:?}");
        if to == "## " {
            let free = parse(&text)
                .ledger
                .directives()
                .map(|d| d.id)
                .max()
                .unwrap()
                .next();
            assert!(
                said[0].contains(&format!("has no id; give it the next free one, {free}")),
                "{said:?}"
            );
        }
    }
    // A heading of the PM's own inside an entry ends it: said so, naming the heading (audit 189:
    // "malformed target \"\"" of a target in plain sight, or "no quote" above one).
    for (entry, missing, heading) in [
        (
            "## D-0101 · reprioritize · 2026-11-26T10:00:00Z\n\n### Context\n\n> Between.\n\n- target: issue acme/api#58\n- params: {\"priority\": 1}\n",
            "quote",
            "### Context",
        ),
        (
            "## D-0101 · reprioritize · 2026-11-26T10:00:00Z\n\n> Between.\n\n## Notes\n\n- target: issue acme/api#58\n- params: {\"priority\": 1}\n",
            "key/value list",
            "## Notes",
        ),
    ] {
        let said: Vec<String> = parse(&format!("{text}\n{entry}"))
            .problems
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            said.iter()
                .any(|s| s.contains(&format!(
                    "directive D-0101 has no {missing} before the heading on line"
                )) && s.contains(&format!("(\"{heading}\"), which ends the entry there"))),
            "{said:?}"
        );
    }
    // Two problems that each suggest an id suggest two (audit 189: both said D-0013, and following both
    // made a new duplicate).
    let both = format!(
        "{text}\n## note · 2026-11-30T10:00:00Z\n\n> No id.\n\n## D-0001 · note · 2026-11-30T10:05:00Z\n\n> Twice.\n"
    );
    let said: Vec<String> = parse(&both)
        .problems
        .iter()
        .map(ToString::to_string)
        .collect();
    let suggested: Vec<&str> = said
        .iter()
        .filter_map(|s| s.split("next free ").nth(1))
        .filter_map(|s| s.split([',', ' ']).find(|w| w.starts_with("D-")))
        .collect();
    assert_eq!(suggested.len(), 2, "{said:?}");
    assert_ne!(suggested[0], suggested[1], "{said:?}");
    // Prose that starts with an id, a list item or a quote naming one, and an example in a closed fence,
    // are not headings.
    // So are the notes of audit 117: list items and sentences that start with an id, and a heading
    // about a directive the ledger reads.
    let notes = "D-0004 was withdrawn on Friday.\n\n- D-0002 · see above\n\n> D-0003 · as said\n\n\
                 ```\n### D-0009 · note · 2026-11-30T10:00:00Z\n```\n\n## Notes from the review\n\n\
                 * D-0002: superseded by D-0003 after the partner call\n\
                 * D-0005 – scope cut agreed with sales\n\nD-0006: Carol's leave confirmed by HR.\n\n\
                 - D-0004 - the reestimate was too optimistic\n\n_D-0001_ | see the contract\n\n\
                 ### D-0002: follow-ups\n";
    let with_notes = format!("{text}\n{notes}");
    assert!(
        parse(&with_notes).problems.is_empty(),
        "{:?}",
        parse(&with_notes).problems
    );
}
