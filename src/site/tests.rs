//! Tests of the site renderer on a small hand-built site.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::views::{
    Band, Board, BoardCard, BoardColumn, Capacity, ColumnCount, Overview, Runway, RunwayMilestone,
};

const NASTY: &str = "<script>alert(\"x\")</script> & Co";

fn band(p50: &str, p80: &str) -> Band {
    Band {
        p50: p50.to_owned(),
        p80: p80.to_owned(),
    }
}

fn card(issue: &str, title: &str) -> BoardCard {
    BoardCard {
        issue: issue.to_owned(),
        title: title.to_owned(),
        assignee: None,
        planned: false,
        priority: None,
        estimate: None,
        native_estimate: false,
        milestone: None,
        forecast: None,
        cycle: false,
        closed: None,
        waits_on: Vec::new(),
        waits_on_more: 0,
        hidden_blockers: 0,
    }
}

fn column(state: &str, title: &str, count: usize, issues: Vec<BoardCard>) -> BoardColumn {
    BoardColumn {
        state: state.to_owned(),
        title: title.to_owned(),
        count,
        issues,
    }
}

#[allow(clippy::too_many_arguments)]
fn milestone(
    id: u64,
    title: &str,
    due: Option<&str>,
    hard: bool,
    p10: &str,
    p50: &str,
    p80: &str,
    slack: Option<i64>,
    probability: Option<f64>,
    status: &str,
) -> RunwayMilestone {
    RunwayMilestone {
        milestone: id,
        title: title.to_owned(),
        repo: "acme/app".to_owned(),
        due: due.map(str::to_owned),
        hard,
        band: Some(band(p50, p80)),
        p10: Some(p10.to_owned()),
        slack,
        probability_on_time: probability,
        open_issues: 3,
        closed_issues: 2,
        remaining_hours: 17.5,
        unestimated_issues: 0,
        status: serde_json::from_value(serde_json::Value::String(status.to_owned()))
            .expect("a status"),
        cut_line: None,
        planned: None,
        staying_done: None,
        expected_leaving: None,
        probability_done: None,
        overdue: false,
    }
}

fn data() -> SiteData {
    let as_of = "2025-03-03".to_owned();
    let board = Board {
        as_of: as_of.clone(),
        columns: vec![
            column(
                "diagnosis",
                "Diagnosis",
                1,
                vec![card("acme/app#7", "Crash on start")],
            ),
            column(
                "triage",
                "Triage",
                3,
                vec![BoardCard {
                    assignee: Some("bob".to_owned()),
                    planned: true,
                    ..card("acme/app#8", "Export to CSV")
                }],
            ),
            column(
                "steeping",
                "Steeping",
                2,
                vec![
                    BoardCard {
                        assignee: Some("alice".to_owned()),
                        priority: Some("p/0".to_owned()),
                        estimate: Some("est/2d".to_owned()),
                        native_estimate: false,
                        milestone: Some("v1.0".to_owned()),
                        forecast: Some(band("2025-03-05", "2025-03-07")),
                        ..card("acme/app#9", NASTY)
                    },
                    BoardCard {
                        priority: Some("p/3".to_owned()),
                        forecast: Some(band("2025-03-12", "2025-03-19")),
                        ..card("acme/lib#2", "Tidy the docs")
                    },
                ],
            ),
            column(
                "in_review",
                "In review",
                1,
                vec![BoardCard {
                    assignee: Some("carol".to_owned()),
                    forecast: Some(band("2025-04-28", "beyond horizon")),
                    ..card("acme/app#10", "Rewrite the parser")
                }],
            ),
            column(
                "done",
                "Done",
                1,
                vec![BoardCard {
                    closed: Some("2025-02-27".to_owned()),
                    ..card("acme/app#3", "Add a logo")
                }],
            ),
        ],
    };
    let overview = Overview {
        as_of: as_of.clone(),
        columns: board
            .columns
            .iter()
            .map(|c| ColumnCount {
                state: c.state.clone(),
                title: c.title.clone(),
                count: c.count,
            })
            .collect(),
        open_issues: 7,
        trials: 2000,
        seed: 42,
        cold_start: false,
        warnings: vec![format!("estimate missing on acme/app#7 {NASTY}")],
    };
    let mut hard_late = milestone(
        4,
        "Launch",
        Some("2025-03-14"),
        true,
        "2025-03-12",
        "2025-03-20",
        "2025-03-28",
        Some(-9),
        Some(0.12),
        "late",
    );
    hard_late.cut_line = Some(crate::views::RunwayCutLine {
        issues: vec!["acme/app#41".to_owned(), "acme/app#40".to_owned()],
        issues_omitted: 0,
        hours: 18.0,
        p80: "2025-03-13".to_owned(),
        probability_on_time: 0.83,
        meets_deadline: true,
        untrimmed: false,
        empties_milestone: false,
    });
    // The abandonment model says: the band above is the work that stays, and the planned scope is given.
    hard_late.planned = Some(band("2025-04-02", "beyond horizon"));
    hard_late.probability_done = Some(0.4);
    hard_late.expected_leaving = Some(2.6);
    let runway = Runway {
        as_of,
        milestones: vec![
            milestone(
                1,
                "v1.0",
                Some("2025-03-31"),
                true,
                "2025-03-10",
                "2025-03-17",
                "2025-03-24",
                Some(5),
                Some(0.93),
                "on_track",
            ),
            milestone(
                2,
                NASTY,
                Some("2025-04-10"),
                false,
                "2025-03-20",
                "2025-05-01",
                "beyond horizon",
                None,
                Some(0.3),
                "late",
            ),
            milestone(
                3,
                "Someday",
                None,
                false,
                "2025-04-01",
                "2025-04-20",
                "2025-05-12",
                None,
                None,
                "no_due_date",
            ),
            hard_late,
        ],
        capacity: vec![
            Capacity {
                person: "alice".to_owned(),
                hours_per_week: 30.0,
                queued: 2,
                planned_hours: 22.5,
                busy_until: "2025-03-19".to_owned(),
                capacity_changes: vec![crate::views::person::CapacityChange {
                    from: "2025-03-10".to_owned(),
                    to: Some("2025-03-14".to_owned()),
                    hours_per_week: 17.5,
                    directive: Some("D-0002".to_owned()),
                }],
            },
            Capacity {
                person: "bob".to_owned(),
                hours_per_week: 15.0,
                queued: 1,
                planned_hours: 6.0,
                busy_until: "2025-03-05".to_owned(),
                capacity_changes: Vec::new(),
            },
        ],
        milestones_omitted: 0,
        capacity_omitted: 0,
    };
    SiteData {
        title: format!("Acme {NASTY}"),
        overview,
        board,
        runway,
        directives: crate::views::directives::Directives {
            pending: None,
            recent: vec![crate::views::directives::RecentDirective {
                id: "D-0001".to_owned(),
                kind: "reprioritize".to_owned(),
                at: "2025-03-01T10:00:00Z".to_owned(),
                quote: format!("Checkout first.\nSearch can wait {NASTY}"),
                target: Some("issue acme/app#7".to_owned()),
                target_kind: Some("issue".to_owned()),
                target_id: Some("acme/app#7".to_owned()),
                target_title: Some(format!("Checkout {NASTY}")),
                effect: Some("priority p/0".to_owned()),
                rationale: Some(format!("because {NASTY}")),
                quote_cut: 0,
                rationale_cut: 0,
                status: "active".to_owned(),
                by: Some("pat".to_owned()),
                not_on_gitea: vec![format!("acme/app#7 is p/0 by it and {NASTY} on Gitea")],
                skipped: Some(format!("target issue {NASTY} does not exist")),
                replaced_by: None,
                ended: None,
            }],
            earlier_in_force: Vec::new(),
            problems_omitted: 0,
            notices: Vec::new(),
            notices_omitted: 0,
            also_pending_omitted: 0,
            proposed_changes: Vec::new(),
            proposed_changes_omitted: 0,
            earlier_omitted: 0,
            also_pending: Vec::new(),
            problems: vec![format!("ledger line 9: unknown directive kind \"{NASTY}\"")],
        },
        calibration: crate::views::calibration::CalibrationView {
            n: 0,
            cold_start: true,
            samples_needed: 6,
            global_multiplier: 1.0,
            sigma: 0.6,
            by_label_bias: Vec::new(),
            by_person_bias: Vec::new(),
            by_label_bias_omitted: 0,
            by_person_bias_omitted: 0,
            abandonment: None,
            backtest: Some(crate::views::calibration::BacktestView {
                cuts: 3,
                from: Some("2025-01-01".to_owned()),
                to: Some("2025-02-26".to_owned()),
                horizon_days: 60,
                trials: 500,
                seed: 1,
                history_through: Some("2025-04-27".to_owned()),
                unscored_days: None,
                methods: vec![crate::views::calibration::MethodScore {
                    method: format!("commitea {NASTY}"),
                    n: 40,
                    coverage: vec![Some([0.1, 0.05, 0.15]), Some([0.5, 0.4, 0.6]), None],
                    pinball80: Some([12.0, 10.0, 14.0]),
                    n_resolved: 30,
                    pinball80_censored: None,
                    dated_coverage: vec![None, Some([0.32, 0.28, 0.37]), Some([0.38, 0.3, 0.45])],
                    n_dated: vec![40, 30, 25],
                    reliability: vec![crate::views::calibration::ReliabilityView {
                        lo: 0.8,
                        hi: 0.9,
                        n: 120,
                        promised: 0.85,
                        observed: [0.62, 0.55, 0.69],
                    }],
                }],
                by_pace: [
                    (crate::backtest::Pace::Held, 2, 0.77),
                    (crate::backtest::Pace::Fell, 1, 0.41),
                ]
                .into_iter()
                .map(|(pace, cuts, held)| crate::views::calibration::PaceView {
                    pace,
                    cuts,
                    score: crate::views::calibration::MethodScore {
                        method: "commitea".to_owned(),
                        n: 20 * cuts,
                        coverage: vec![None, None, Some([held + 0.05, held, held + 0.1])],
                        pinball80: None,
                        n_resolved: 0,
                        pinball80_censored: None,
                        dated_coverage: vec![
                            None,
                            Some([0.5, 0.4, 0.6]),
                            Some([held, held - 0.1, held + 0.05]),
                        ],
                        n_dated: vec![0, 10, 12 * cuts],
                        reliability: Vec::new(),
                    },
                })
                .collect(),
                cuts_assuming_all_done: Some(2),
                never_closed: Some(17),
                ledger_ignored: true,
                none_resolved: false,
                after_last_activity: Some(crate::views::calibration::AfterLastActivity {
                    cuts: 2,
                    last: "2025-02-01".to_owned(),
                }),
            }),
        },
        horizon_days: 730,
        detail: None,
        preview: None,
    }
}

fn text(files: &BTreeMap<String, Vec<u8>>, name: &str) -> String {
    String::from_utf8(files.get(name).cloned().unwrap_or_default()).unwrap()
}

fn rendered() -> BTreeMap<String, Vec<u8>> {
    render(&data(), None).unwrap()
}

#[test]
fn every_page_and_the_stylesheet_are_produced() {
    let files = rendered();
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "board.html",
            "calibration.html",
            "directives.html",
            "index.html",
            "people.html",
            "runway.html",
            "style.css"
        ]
    );
    assert_eq!(
        template_names(),
        [
            "base.html",
            "index.html",
            "board.html",
            "capacity.html",
            "runway.html",
            "people.html",
            "directives.html",
            "calibration.html",
            "issue.html",
            "milestone.html",
            "person.html",
            "changes.html",
            "search.html",
            "standup.html",
            "roadmap.html",
            "closed.html",
            "closed-month.html",
            "style.css",
            "board.js",
            "search.js",
            "charts.js"
        ]
    );
    assert_eq!(
        files["style.css"],
        include_bytes!("../../site-templates/style.css")
    );
    for page in [
        "index.html",
        "board.html",
        "runway.html",
        "calibration.html",
    ] {
        let html = text(&files, page);
        assert!(html.starts_with("<!DOCTYPE html>"), "{page}");
        assert!(
            html.contains("As of 2025-03-03 · 2000 trials · seed 42"),
            "{page}"
        );
        assert!(html.contains("Every date is a range"), "{page}");
        let current = format!("href=\"{page}\" aria-current=\"page\"");
        assert!(
            html.contains(&current),
            "{page} marks itself in the navigation"
        );
        assert_eq!(html.matches("aria-current").count(), 1, "{page}");
    }
}

#[test]
fn pages_show_the_issues_and_milestones() {
    let files = rendered();
    let board = text(&files, "board.html");
    for key in [
        "acme/app#7",
        "acme/app#8",
        "acme/app#9",
        "acme/lib#2",
        "acme/app#10",
        "acme/app#3",
    ] {
        assert!(board.contains(key), "{key} on the board");
    }
    for title in [
        "Crash on start",
        "Export to CSV",
        "Tidy the docs",
        "Rewrite the parser",
        "Add a logo",
    ] {
        assert!(board.contains(title), "{title} on the board");
    }
    for state in ["diagnosis", "triage", "steeping", "in_review", "done"] {
        assert!(
            board.contains(&format!("id=\"{state}\"")),
            "anchor for {state}"
        );
    }
    assert!(board.contains("showing 1 of 3"));
    assert_eq!(
        board.matches("showing ").count(),
        1,
        "only the cut column says so"
    );
    assert!(board.contains("bob</bdi> (planned)"));
    assert!(
        board.contains("alice</bdi></span>"),
        "a real assignee is not marked planned"
    );
    assert!(board.contains("data-p=\"p/0\""));
    assert!(board.contains("est/2d"));
    assert!(board.contains("2025-03-05 – 2025-03-07"));
    assert!(board.contains("2025-04-28 – not within 2 years"));
    assert!(board.contains("closed</span> <span class=\"band\">2025-02-27</span>"));

    let index = text(&files, "index.html");
    for c in [
        "board.html#diagnosis",
        "board.html#triage",
        "board.html#steeping",
        "board.html#in_review",
    ] {
        assert!(index.contains(c), "{c}");
    }
    assert!(index.contains("board.html#done"));
    assert!(index.contains("half of simulated futures finish by p50, 80% by p80"));
    assert!(index.contains("v1.0") && index.contains("Someday"));
    assert!(index.contains("93%") && index.contains("30%"));
    assert!(index.contains("+5"));
    assert!(
        index.contains("status-late")
            && index.contains("status-on_track")
            && index.contains("status-no_due_date")
    );
    assert!(index.contains("class=\"badge hard\""));
    assert!(index.contains("2025-05-01 – not within 2 years"));
    assert!(index.contains("estimate missing on acme/app#7"));

    let runway = text(&files, "runway.html");
    assert!(runway.contains("v1.0") && runway.contains("Someday"));
    assert!(runway.contains("17.5"));
    assert!(runway.contains("3 / 2"));
    assert!(
        runway.contains("<bdi>alice</bdi></td>")
            && runway.contains("22.5")
            && runway.contains("2025-03-19")
    );
    assert!(runway.contains("range open-ended"));
}

#[test]
fn cone_positions_share_one_axis() {
    let d = data();
    let page = pages::page_context(&d);
    // The axis runs from as_of (2025-03-03) to the latest date shown (2025-05-12): 70 days.
    let axis = page.axis.clone().unwrap();
    assert_eq!(
        (axis.start.as_str(), axis.end.as_str(), axis.today),
        ("2025-03-03", "2025-05-12", 0.0)
    );
    let ticks: Vec<(&str, f64)> = axis
        .ticks
        .iter()
        .map(|t| (t.date.as_str(), t.pct))
        .collect();
    assert_eq!(
        ticks,
        [
            ("2025-03-03", 0.0),
            ("2025-04-07", 50.0),
            ("2025-05-12", 100.0)
        ]
    );
    let cones: Vec<Cone> = page
        .milestones
        .iter()
        .map(|m| m.cone.clone().unwrap())
        .collect();
    assert_eq!(
        cones[0],
        Cone {
            p10: 10.0,
            p50: 20.0,
            p80: 30.0,
            width: 20.0,
            open_ended: false,
            due: Some(40.0)
        }
    );
    assert_eq!(
        cones[1],
        Cone {
            p10: 24.3,
            p50: 84.3,
            p80: 100.0,
            width: 75.7,
            open_ended: true,
            due: Some(54.3)
        }
    );
    assert_eq!(
        cones[2],
        Cone {
            p10: 41.4,
            p50: 68.6,
            p80: 100.0,
            width: 58.6,
            open_ended: false,
            due: None
        }
    );

    // The page draws the same positions as one SVG (no inline styles: the CSP forbids them): the date
    // axis runs over 690 units from x = 250.
    let runway = text(&rendered(), "runway.html");
    assert!(!runway.contains("style="), "{runway}");
    assert!(
        runway.contains("<rect class=\"range\" x=\"319\" y=\"37\" width=\"138\""),
        "{runway}"
    );
    assert!(
        runway.contains("<path class=\"due hard\" d=\"M526 "),
        "{runway}"
    );
    assert!(
        runway.contains("<path class=\"due\" d=\"M624.6 "),
        "{runway}"
    );
    assert_eq!(
        runway.matches("<g class=\"row ").count(),
        page.milestones.len()
    );
}

#[test]
fn a_milestone_wholly_beyond_the_horizon_has_no_cone() {
    let mut d = data();
    d.runway.milestones[1].p10 = Some("beyond horizon".to_owned());
    d.runway.milestones[1].band = Some(band("beyond horizon", "beyond horizon"));
    // A due date before day 0 stretches the axis back and puts day 0 inside it.
    d.runway.milestones[0].due = Some("2025-02-21".to_owned());
    let page = pages::page_context(&d);
    assert!(page.milestones[1].cone.is_none());
    let axis = page.axis.clone().unwrap();
    assert_eq!(axis.start, "2025-02-21");
    assert!(axis.today > 0.0);
    assert_eq!(
        page.milestones[0].cone.as_ref().and_then(|c| c.due),
        Some(0.0)
    );
    let runway = text(&render(&d, None).unwrap(), "runway.html");
    // Said once, not three times, and no slack counted to the horizon.
    assert!(runway.contains("<span class=\"sub band\">not within 2 years</span>"));
    assert!(!runway.contains("beyond horizon · <strong>beyond horizon</strong>"));
    assert!(page.milestones[1].slack_label.is_none());
    assert!(runway.contains("class=\"today\""));
    // The overview's slack column says no slack rather than the status again (audit 92: "at risk"
    // twice in one row).
    let files = render(&d, None).unwrap();
    let index = text(&files, "index.html");
    assert!(
        index.contains("title=\"no slack to state: p80 is beyond the horizon\">—</span>"),
        "{index}"
    );
}

#[test]
fn user_text_is_escaped() {
    let files = rendered();
    for page in [
        "index.html",
        "board.html",
        "runway.html",
        "calibration.html",
    ] {
        let html = without_own_scripts(&text(&files, page));
        assert!(!html.contains("<script"), "{page} has a raw script tag");
        assert!(!html.contains("& Co"), "{page} has a raw ampersand");
        assert!(
            html.contains("Acme &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co"),
            "{page} title"
        );
    }
    assert!(text(&files, "board.html").contains("<span class=\"title\"><bdi>&lt;script&gt;"));
    assert!(
        text(&files, "index.html").contains("<li>estimate missing on acme/app#7 &lt;script&gt;")
    );
    assert!(
        text(&files, "runway.html")
            .contains("<td data-label=\"Milestone\"><bdi>&lt;script&gt;alert")
    );
}

#[test]
fn an_overdue_milestone_with_no_slack_to_state_says_since_when() {
    // Due before day 0, its p80 beyond the horizon: "—" said nothing of a due date long gone (audit 101).
    let mut d = data();
    d.runway.milestones[1].due = Some("2025-02-10".to_owned());
    d.runway.milestones[1].overdue = true;
    let files = render(&d, None).unwrap();
    for page in ["runway.html", "index.html"] {
        let html = text(&files, page);
        assert!(html.contains("overdue since 2025-02-10"), "{page}: {html}");
    }
    // Not said of one due later.
    let files = render(&data(), None).unwrap();
    assert!(!text(&files, "runway.html").contains("overdue since"));
}

#[test]
fn the_runway_headlines_the_work_that_stays_beside_the_planned_scope() {
    let files = rendered();
    let html = text(&files, "runway.html");
    // The headline (the cone, P(on time), slack) is the work that stays; the planned scope says how much
    // is expected to leave and its chance within the horizon.
    assert!(
        html.contains("2025-03-12 · <strong>2025-03-20</strong> · 2025-03-28</span>\n          <span class=\"sub\">the work that stays</span>"),
        "{html}"
    );
    assert!(
        html.contains("all planned work: 2025-04-02 – not within 2 years (40% chance within 2 years); nearly all of 3 open issues expected to leave: under one is expected to stay"),
        "{html}"
    );
    assert_eq!(
        text(&files, "runway.html")
            .matches("all planned work")
            .count(),
        1,
        "only where the model says"
    );
    // The overview, at a glance: the headline and how much is expected to leave; the planned scope's
    // range (often "0% chance within 2 years" beside every milestone, audit 104) is the runway's.
    let overview = text(&files, "index.html");
    assert!(!overview.contains("all planned work"), "{overview}");
    assert!(
        overview.contains("the work that stays; nearly all of 3 open issues expected to leave: under one is expected to stay, so its dates are those of one close that may not come"),
        "{overview}"
    );
    // Its status says what it is of (audit 166: "on track" beside 6 of 8 expected to leave).
    assert!(
        overview.contains("late, for under one of its 3 open issues"),
        "{overview}"
    );
}

#[test]
fn the_calibration_page_says_how_many_cuts_fall_after_the_last_activity() {
    // Said on stderr only, while the page's headline rows were mostly a stopped project's (audit 171).
    let html = text(&rendered(), "calibration.html");
    assert!(
        html.contains(
            "2 of these 3 cuts fall after the history's last activity (2025-02-01): nothing happens there"
        ),
        "{html}"
    );
    // Plural where it is, singular where not (audit 171: "1 past cuts").
    assert!(html.contains("3 past cuts"), "{html}");
}

#[test]
fn the_calibration_page_says_where_the_backtest_assumed_every_issue_done() {
    let html = text(&rendered(), "calibration.html");
    assert!(
        html.contains("At 2 of these cuts the history was too short for the abandonment model"),
        "{html}"
    );
    assert!(
        html.contains("17 of the targets scored are of issues that were never closed"),
        "{html}"
    );
    let mut d = data();
    if let Some(b) = d.calibration.backtest.as_mut() {
        b.cuts_assuming_all_done = Some(3);
    }
    let every = text(&render(&d, None).unwrap(), "calibration.html");
    assert!(every.contains("At every one of these cuts"), "{every}");
    if let Some(b) = d.calibration.backtest.as_mut() {
        b.cuts_assuming_all_done = None;
        b.never_closed = None;
    }
    let none = text(&render(&d, None).unwrap(), "calibration.html");
    assert!(
        !none.contains("abandonment model (<code>"),
        "only where it was off"
    );
}

#[test]
fn the_runway_says_how_many_of_a_milestones_open_issues_have_no_estimate() {
    assert!(!text(&rendered(), "runway.html").contains("unestimated"));
    let mut d = data();
    d.runway.milestones[0].unestimated_issues = 2;
    let html = text(&render(&d, None).unwrap(), "runway.html");
    assert!(html.contains(">2 unestimated</span>"), "{html}");
}

#[test]
fn the_calibration_page_says_when_the_backtest_left_days_unscored() {
    let html = text(&rendered(), "calibration.html");
    assert!(html.contains("(history read up to 2025-04-27)"), "{html}");
    assert!(!html.contains("are not scored"), "{html}");
    let mut d = data();
    if let Some(b) = d.calibration.backtest.as_mut() {
        b.unscored_days = Some(45);
    }
    let due = text(&render(&d, None).unwrap(), "calibration.html");
    assert!(
        due.contains("up to 2025-04-27: the 45 days since are not scored. Run <code>commitea backtest --write</code> again"),
        "{due}"
    );
}

#[test]
fn a_backtest_group_reads_as_words() {
    use super::pages::method_words;
    assert_eq!(method_words("commitea"), "CommiTea — issues");
    assert_eq!(
        method_words("throughput milestone planned-shipped"),
        "Throughput Monte Carlo — milestones, against their planned scope shipped"
    );
    assert_eq!(
        method_words("ebs milestone closed"),
        "EBS — milestones, against their close"
    );
    assert_eq!(
        method_words(crate::backtest::run::STAYING_CLOSED),
        "CommiTea — milestones, the work that stays, against their close"
    );
}

#[test]
fn the_calibration_page_publishes_the_hit_rates() {
    let files = rendered();
    let html = text(&files, "calibration.html");
    assert!(
        html.contains("3 past cuts from 2025-01-01 to 2025-02-26"),
        "{html}"
    );
    assert!(
        html.contains("<td class=\"num\">10% (5–15%)</td>"),
        "{html}"
    );
    assert!(
        html.contains("<td class=\"num\">50% (40–60%)</td>"),
        "{html}"
    );
    assert!(
        html.contains("<td class=\"num\">12 d (10–14)</td>"),
        "{html}"
    );
    // No row scores the work that stays in a milestone: the note does not explain one.
    assert!(
        !html.contains("&quot;staying&quot;") && !html.contains("\"staying\""),
        "{html}"
    );
    assert!(
        html.contains("<tr class=\"ours\">"),
        "CommiTea's row is marked"
    );
    // Rows say their method in words, not the backtest's group names (audit 115).
    assert!(html.contains("&amp; Co — issues</th>"), "{html}");
    // A missing figure is a dash, not an empty cell.
    assert!(html.contains("<td class=\"num\">—</td>"), "{html}");
    // How often a date held when one was given, and the probabilities checked.
    assert!(html.contains("When a date was given"), "{html}");
    assert!(
        html.contains("<td class=\"num\">38% (30–45%)</td>"),
        "{html}"
    );
    assert!(html.contains("<td class=\"num\">80–90%</td>"), "{html}");
    assert!(
        html.contains("<td class=\"num\">62% (55–69%)</td>"),
        "{html}"
    );
    assert!(html.contains("Not enough history yet to learn how much open work is never done"));
    // The same forecasts where the team kept its pace after the cut, and where it slowed.
    assert!(html.contains("When the team kept its pace"), "{html}");
    for (after, dated80) in [
        ("kept its pace", "77% (67–82%)"),
        ("slowed by more than a quarter", "41% (31–46%)"),
    ] {
        let row = html
            .split("<tr>")
            .find(|r| r.contains(&format!("<th scope=\"row\">{after}</th>")))
            .unwrap_or_else(|| panic!("no row for {after}: {html}"));
        assert!(
            row.contains(&format!("<td class=\"num\">{dated80}</td>")),
            "{row}"
        );
    }
    // The backtest's own trials and seed, not only the forecast's in the footer (audit 118).
    assert!(
        html.contains("(500 trials a method and cut, seed 1: the backtest&#x27;s own")
            || html.contains("(500 trials a method and cut, seed 1: the backtest's own"),
        "{html}"
    );
    // What the figures leave out is said: the directives, and why a close counts as done (audit 111).
    assert!(
        html.contains("The PM&#x27;s directives are not in these forecasts")
            || html.contains("The PM's directives are not in these forecasts"),
        "{html}"
    );
    assert!(html.contains("such a close counts as done"), "{html}");
    assert!(html.contains("which rewards optimism"), "{html}");
    // What the rows say is read from them: here the slowed cuts' dates held less often.
    assert!(
        html.contains("Fewer dated p80s held where the team slowed (41% of"),
        "{html}"
    );
}

#[test]
fn a_pace_row_of_few_dated_forecasts_says_its_counts_not_a_share() {
    // Audit 118: "100% (44–100%)" over 3 dated p80s, where the table above says "6 of 8".
    let mut d = data();
    let b = d.calibration.backtest.as_mut().unwrap();
    let fell = b
        .by_pace
        .iter_mut()
        .find(|p| p.pace == crate::backtest::Pace::Fell)
        .unwrap();
    fell.score.n_dated = vec![0, 3, 3];
    fell.score.dated_coverage = vec![None, Some([2.0 / 3.0, 0.2, 0.9]), Some([1.0, 0.44, 1.0])];
    let rows = super::pages::pace_rows(&d.calibration);
    let row = rows
        .iter()
        .find(|r| r.after == "slowed by more than a quarter")
        .unwrap();
    assert_eq!(row.dated_coverage, ["2 of 3", "3 of 3"]);
    let held = rows.iter().find(|r| r.after == "kept its pace").unwrap();
    assert_eq!(held.dated_coverage[1], "77% (67–82%)");
}

#[test]
fn the_pace_note_blames_a_slowdown_only_where_the_intervals_part_and_a_side_misses() {
    // Audit 111: "Fewer dated p80s held where the team slowed (82% of 66, against 90% of 77)", though
    // both held more than promised and their intervals overlapped widely.
    let note = |held: [f64; 3], fell: [f64; 3]| {
        let mut d = data();
        let b = d.calibration.backtest.as_mut().unwrap();
        for p in &mut b.by_pace {
            p.score.dated_coverage[2] = Some(match p.pace {
                crate::backtest::Pace::Held => held,
                crate::backtest::Pace::Fell => fell,
            });
        }
        super::pages::pace_note(&d.calibration)
    };
    let both_held = note([0.90, 0.81, 0.96], [0.82, 0.71, 0.93]);
    assert!(
        both_held
            .starts_with("Dated p80s held at least as often as promised either way (90% of 24"),
        "{both_held}"
    );
    let alike = note([0.77, 0.67, 0.82], [0.70, 0.55, 0.80]);
    assert!(
        alike.starts_with("Dated p80s held about as often either way"),
        "{alike}"
    );
    // Far apart, yet overlapping: too few to tell, not "about as often" (audit 171: 90% of 10 and 43%
    // of 28).
    let apart = note([0.90, 0.60, 0.98], [0.43, 0.0, 0.64]);
    assert!(
        apart.contains("but their intervals overlap: too few forecasts to tell")
            && !apart.contains("about as often"),
        "{apart}"
    );
    let parted = note([0.77, 0.67, 0.82], [0.41, 0.31, 0.46]);
    assert!(
        parted.starts_with("Fewer dated p80s held where the team slowed (41% of"),
        "{parted}"
    );
    let other_way = note([0.41, 0.31, 0.46], [0.77, 0.67, 0.82]);
    assert!(
        other_way.starts_with("Dated p80s held more often where the team slowed"),
        "{other_way}"
    );
}

#[test]
fn the_calibration_page_says_what_the_abandonment_model_knows() {
    let page = |abandonment| {
        let mut d = data();
        d.calibration.abandonment = abandonment;
        text(&render(&d, None).unwrap(), "calibration.html")
    };
    let view = |cold_start| crate::views::calibration::AbandonmentView {
        events: 3,
        cold_start,
        window_days: 365,
        open: 57,
        expected_done: 28.4,
    };
    let young = page(None);
    assert!(
        young.contains("every open issue is assumed to be done"),
        "{young}"
    );
    let undecided = page(Some(view(true)));
    assert!(
        undecided.contains("Too few issues have been closed yet")
            && undecided.contains(
                "each of the 57 open issues is given even odds of being closed within 1 year"
            ),
        "{undecided}"
    );
    assert!(!undecided.contains("expects about"), "{undecided}");
    let learnt = page(Some(view(false)));
    assert!(
        learnt.contains(
            "Of the 57 open issues, the history of the last year (3 closes) expects about 28"
        ),
        "{learnt}"
    );
    assert!(!learnt.contains("even odds"), "{learnt}");
}

/// `html` without the tags that load the site's own scripts (`charts.js` keeps a chart's labels in view
/// on a phone), so that any other script tag shows.
fn without_own_scripts(html: &str) -> String {
    let mut out = html.to_owned();
    for own in ["charts.js", "board.js", "search.js"] {
        for root in ["", "../", "../../", "../../../"] {
            out = out.replace(&format!("<script src=\"{root}{own}\"></script>"), "");
        }
    }
    out
}

#[test]
fn links_are_relative_and_nothing_is_fetched_from_elsewhere() {
    let files = rendered();
    for page in ["index.html", "board.html", "runway.html"] {
        let html = text(&files, page);
        for attr in ["href=\"", "src=\""] {
            for target in html.split(attr).skip(1) {
                let target = target.split('"').next().unwrap_or_default();
                assert!(
                    !target.is_empty()
                        && !target.starts_with('/')
                        && !target.contains("://")
                        && !target.starts_with("javascript:"),
                    "{page}: {attr}{target}"
                );
            }
        }
        let html = without_own_scripts(&html);
        assert!(
            !html.contains("<script"),
            "{page} needs no script but the site's own"
        );
        assert!(!html.contains("src=\""), "{page} loads nothing else");
    }
    let css = text(&files, "style.css");
    assert!(
        !css.contains("url(") && !css.contains("@import"),
        "the stylesheet loads nothing"
    );
}

#[test]
fn an_override_replaces_exactly_that_template() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("index.html"),
        "{% extends \"base.html\" %}{% block content %}<p>CUSTOM {{ overview.openIssues }} {{ title }}</p>{% endblock content %}",
    )
    .unwrap();
    std::fs::write(dir.path().join("style.css"), "body { color: teal; }\n").unwrap();
    std::fs::write(dir.path().join("unrelated.html"), "{% if %}").unwrap();
    let default = rendered();
    let custom = render(&data(), Some(dir.path())).unwrap();
    assert_eq!(
        custom.keys().collect::<Vec<_>>(),
        default.keys().collect::<Vec<_>>()
    );
    let index = text(&custom, "index.html");
    assert!(index.contains("<p>CUSTOM 7 Acme &lt;script&gt;"), "{index}");
    assert!(
        index.contains("href=\"board.html\""),
        "the default layout is still there"
    );
    assert!(!index.contains("Milestones"));
    assert_eq!(custom["style.css"], b"body { color: teal; }\n");
    assert_eq!(custom["board.html"], default["board.html"]);
    assert_eq!(custom["runway.html"], default["runway.html"]);

    // Overriding the layout changes every page.
    std::fs::write(
        dir.path().join("base.html"),
        "<title>{% block title %}{% endblock title %}</title>LAYOUT[{% block content %}{% endblock content %}]",
    )
    .unwrap();
    let relaid = render(&data(), Some(dir.path())).unwrap();
    let board = text(&relaid, "board.html");
    assert!(
        board.starts_with("<title>Board · Acme")
            && board.contains("</title>LAYOUT[\n<div class=\"page-head\">"),
        "{board}"
    );
    assert!(text(&relaid, "index.html").ends_with(
        "LAYOUT[<p>CUSTOM 7 Acme &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co</p>]"
    ));
    assert!(!board.contains("site-nav"));
}

#[test]
fn a_missing_override_folder_means_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("site-templates");
    assert_eq!(render(&data(), Some(&missing)).unwrap(), rendered());
}

#[test]
fn a_broken_override_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("board.html");
    std::fs::write(
        &path,
        "{% extends \"base.html\" %}{% block content %}{% if %}{% endblock content %}",
    )
    .unwrap();
    let err = render(&data(), Some(dir.path())).unwrap_err();
    assert!(matches!(err, SiteError::Parse { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("board.html") && msg.contains(&path.display().to_string()),
        "{msg}"
    );

    // A template that parses but fails to render is named too.
    std::fs::write(&path, "{{ no_such_thing.at_all }}").unwrap();
    let err = render(&data(), Some(dir.path())).unwrap_err();
    assert!(matches!(err, SiteError::Render { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );

    // A layout override without a block the pages fill is named beside the page that needs it.
    std::fs::remove_file(&path).unwrap();
    let layout = dir.path().join("base.html");
    std::fs::write(&layout, "{% block content %}{% endblock content %}").unwrap();
    let err = render(&data(), Some(dir.path())).unwrap_err().to_string();
    assert!(
        err.contains("index.html") && err.contains(&layout.display().to_string()),
        "{err}"
    );
    std::fs::remove_file(&layout).unwrap();

    // A child of a missing parent is named.
    std::fs::write(&path, "{% extends \"layout.html\" %}").unwrap();
    let err = render(&data(), Some(dir.path())).unwrap_err();
    assert!(err.to_string().contains("board.html"), "{err}");
}

#[test]
fn write_refuses_a_folder_that_holds_a_state_repo() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("commitea.yaml"), "").unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let err = write(&rendered(), dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("commitea.yaml") && err.contains("nothing was written"),
        "{err}"
    );
    assert!(dir.path().join("keep.txt").exists());
    assert!(!dir.path().join("index.html").exists());
}

#[test]
fn write_refuses_a_site_folder_under_a_linked_folder_of_the_state_repo() {
    // `web -> /anywhere` with `site.output: web/site`: the writer wrote, and deleted, outside the state
    // repo (audit 159).
    let state = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(state.path().join("commitea.yaml"), "").unwrap();
    std::fs::create_dir_all(elsewhere.path().join("site")).unwrap();
    std::fs::write(elsewhere.path().join("site/important.txt"), "mine").unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), state.path().join("web")).unwrap();
    let err = write(&rendered(), &state.path().join("web/site"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("symbolic link") && err.contains("web"),
        "{err}"
    );
    assert!(elsewhere.path().join("site/important.txt").exists());
    assert!(!elsewhere.path().join("site/index.html").exists());
}

/// Every file under `out`, as paths relative to it.
fn files_under(out: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(out)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(out)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn write_removes_stale_files_and_keeps_unchanged_ones() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("public");
    let files = rendered();
    write(&files, &out).unwrap();
    for (name, bytes) in &files {
        assert_eq!(&std::fs::read(out.join(name)).unwrap(), bytes, "{name}");
    }

    // Stale files and folders go; hidden ones stay; unchanged files are not rewritten.
    std::fs::write(out.join("stale.html"), "old").unwrap();
    std::fs::create_dir_all(out.join("old/deeper")).unwrap();
    std::fs::write(out.join("old/deeper/x.css"), "old").unwrap();
    std::fs::create_dir_all(out.join(".git")).unwrap();
    std::fs::write(out.join(".git/HEAD"), "ref").unwrap();
    std::fs::write(out.join(".nojekyll"), "").unwrap();
    let past = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    for name in files.keys() {
        std::fs::File::options()
            .write(true)
            .open(out.join(name))
            .unwrap()
            .set_modified(past)
            .unwrap();
    }
    let mut changed = files.clone();
    changed.insert("board.html".to_owned(), b"new board".to_vec());
    changed.insert("sub/extra.txt".to_owned(), b"extra".to_vec());
    write(&changed, &out).unwrap();

    assert!(!out.join("stale.html").exists());
    assert!(!out.join("old").exists());
    assert!(out.join(".git/HEAD").exists() && out.join(".nojekyll").exists());
    assert_eq!(std::fs::read(out.join("board.html")).unwrap(), b"new board");
    assert_eq!(std::fs::read(out.join("sub/extra.txt")).unwrap(), b"extra");
    for name in ["index.html", "runway.html", "style.css"] {
        let meta = std::fs::metadata(out.join(name)).unwrap();
        assert_eq!(meta.modified().unwrap(), past, "{name} was rewritten");
        assert_eq!(std::fs::read(out.join(name)).unwrap(), files[name]);
    }
    assert_eq!(
        files_under(&out).into_iter().collect::<Vec<_>>(),
        [
            ".git/HEAD",
            ".nojekyll",
            "board.html",
            "calibration.html",
            "directives.html",
            "index.html",
            "people.html",
            "runway.html",
            "style.css",
            "sub/extra.txt"
        ]
    );
}

#[test]
fn a_first_render_appears_whole_and_a_killed_one_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("deep/public");
    // What a run killed while staging its first render left beside the folder.
    let staging = dir.path().join("deep/.public.tmp-commitea");
    std::fs::create_dir_all(staging.join("issues")).unwrap();
    std::fs::write(staging.join("issues/half.html"), "<html><bo").unwrap();

    let mut files = rendered();
    files.insert("issues/acme/app/7.html".to_owned(), b"seven".to_vec());
    write(&files, &out).unwrap();
    assert!(
        !staging.exists(),
        "the staging folder is renamed into place"
    );
    assert_eq!(
        files_under(&out),
        files.keys().cloned().collect::<BTreeSet<_>>()
    );
    for (name, bytes) in &files {
        assert_eq!(&std::fs::read(out.join(name)).unwrap(), bytes, "{name}");
    }

    // A leftover beside a site that exists goes too, and the site is updated in place.
    std::fs::create_dir_all(&staging).unwrap();
    files.insert(
        "issues/acme/app/7.html".to_owned(),
        b"seven, edited".to_vec(),
    );
    write(&files, &out).unwrap();
    assert!(!staging.exists());
    assert_eq!(
        std::fs::read(out.join("issues/acme/app/7.html")).unwrap(),
        b"seven, edited"
    );

    // Nothing to write still makes the folder.
    let empty = dir.path().join("empty");
    write(&BTreeMap::new(), &empty).unwrap();
    assert!(empty.is_dir());
}

#[test]
fn write_refuses_names_that_leave_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["../escape.html", "/abs.html", ""] {
        let files = BTreeMap::from([(name.to_owned(), b"x".to_vec())]);
        let err = write(&files, &dir.path().join("out")).unwrap_err();
        assert!(matches!(err, SiteError::BadPath { .. }), "{name}: {err:?}");
    }
    assert!(!Path::new(&dir.path().join("escape.html")).exists());
}

#[test]
fn rendering_is_deterministic() {
    assert_eq!(rendered(), rendered());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("runway.html"),
        include_str!("../../site-templates/runway.html"),
    )
    .unwrap();
    assert_eq!(
        render(&data(), Some(dir.path())).unwrap(),
        rendered(),
        "an identical override changes nothing"
    );
}

#[test]
fn a_missed_hard_deadline_shows_its_cut_line_on_the_runway() {
    let files = render(&data(), None).unwrap();
    let runway = String::from_utf8(files["runway.html"].clone()).unwrap();
    assert!(runway.contains("Cut line."), "{runway}");
    let text = runway.split("Cut line.").nth(1).unwrap_or_default();
    // Hours are rounded as people read them.
    assert!(text.contains("Taking 2 issues (about 18 h)"), "{text}");
    assert!(
        // The abandonment model is on there: the cut line says it is the schedule's answer.
        text.contains(
            "out of this milestone brings the schedule's p80, with the work kept committed, to 2025-03-13"
        ),
        "{text}"
    );
    assert!(runway.contains("<code>acme/app#41</code>, <code>acme/app#40</code>"));
    assert_eq!(runway.matches("class=\"cut-line\"").count(), 1);
    assert!(
        text.contains("inside the hard deadline (83% on time):"),
        "{text}"
    );
    // A cut too long to check issue by issue says so; one that falls short says by how much.
    let mut d = data();
    let mut long = d
        .runway
        .milestones
        .iter()
        .find_map(|m| m.cut_line.clone())
        .unwrap();
    let with_cut = |d: &mut SiteData, cut: &crate::views::RunwayCutLine| {
        d.runway
            .milestones
            .iter_mut()
            .filter(|m| m.cut_line.is_some())
            .for_each(|m| m.cut_line = Some(cut.clone()));
        String::from_utf8(render(d, None).unwrap()["runway.html"].clone()).unwrap()
    };
    long.untrimmed = true;
    let page = with_cut(&mut d, &long);
    assert!(
        page.contains("so long a cut says the date is what has to move"),
        "{page}"
    );
    // A long cut shows its first ten keys, and the milestone page's list for all of them (audit 125: 315
    // bare keys in one paragraph).
    long.issues = (1..=25).map(|n| format!("acme/app#{n}")).collect();
    let page = with_cut(&mut d, &long);
    let cut = page
        .split("class=\"cut-issues\"")
        .nth(1)
        .unwrap_or_default();
    let cut = cut.split("</td>").next().unwrap_or_default();
    assert_eq!(cut.matches("<code>").count(), 10, "{cut}");
    assert!(
        cut.contains("<code>acme/app#10</code>, and 15 more</span>"),
        "{cut}"
    );
    let mut short = long;
    short.untrimmed = false;
    short.meets_deadline = false;
    short.probability_on_time = 0.62;
    let page = with_cut(&mut d, &short);
    assert!(
        page.contains(
            "done by the deadline in 62% of the futures, short of the 80% a cut must reach"
        ),
        "{page}"
    );
}

#[test]
fn the_directives_page_quotes_the_pm_escaped_and_lists_ledger_problems() {
    let files = render(&data(), None).unwrap();
    let page = String::from_utf8(files["directives.html"].clone()).unwrap();
    assert!(page.contains("D-0001"), "{page}");
    assert!(page.contains("Checkout first.<br>"), "{page}");
    assert!(!page.contains("<script>"), "user text is escaped: {page}");
    assert!(page.contains("ledger line 9: unknown directive kind"));
    assert!(page.contains("Problems in the ledger"));
    // A directive Gitea does not carry says so where it is listed, with what differs.
    assert!(
        page.contains("<strong>Not on Gitea.</strong> <bdi>acme/app#7 is p/0 by it and "),
        "{page}"
    );
}

#[test]
fn the_horizon_is_said_in_years_months_weeks_or_days_and_never_as_a_bare_phrase() {
    assert_eq!(super::text::horizon_words(730), "2 years");
    assert_eq!(super::text::horizon_words(365), "1 year");
    assert_eq!(super::text::horizon_words(90), "3 months");
    assert_eq!(super::text::horizon_words(42), "6 weeks");
    assert_eq!(super::text::horizon_words(100), "100 days");
    assert_eq!(super::text::horizon_words(1), "1 day");
    let mut d = data();
    d.runway.milestones[1].p10 = Some("beyond horizon".to_owned());
    d.runway.milestones[1].band = Some(band("beyond horizon", "beyond horizon"));
    d.runway.milestones[1].probability_done = Some(0.35);
    d.runway.milestones[1].planned = Some(band("beyond horizon", "beyond horizon"));
    d.runway.milestones[1].staying_done = Some(0.6);
    d.horizon_days = 90;
    let files = render(&d, None).unwrap();
    for (name, bytes) in &files {
        let page = String::from_utf8_lossy(bytes);
        for phrase in ["beyond horizon", "within the horizon"] {
            let at = page.find(phrase);
            assert!(
                at.is_none(),
                "{name}: {}",
                at.map(|i| &page[i.saturating_sub(200)..(i + 40).min(page.len())])
                    .unwrap_or_default()
            );
        }
    }
    assert!(text(&files, "runway.html").contains("not within 3 months"));
    // Instead of a slack counted to the horizon: the chance of being done within it, of the work that
    // stays (the headline) and of all the planned work.
    for page in ["runway.html", "index.html"] {
        assert!(
            text(&files, page).contains("the work that stays (60% chance within 3 months)"),
            "{page}"
        );
    }
    assert!(
        text(&files, "runway.html")
            .contains("all planned work: not within 3 months (35% chance within 3 months)")
    );
    assert!(text(&files, "board.html").contains("not within 3 months"));
}

/// The stylesheet's custom properties in one `:root { … }` block: name → `#rrggbb`.
fn palette(block: &str) -> BTreeMap<String, [f64; 3]> {
    block
        .split(';')
        .filter_map(|d| {
            let (k, v) = d.split_once(':')?;
            let (k, v) = (k.trim(), v.trim());
            let hex = v.strip_prefix('#').filter(|h| h.len() == 6)?;
            let c = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok().map(f64::from);
            Some((k.strip_prefix("--")?.to_owned(), [c(0)?, c(2)?, c(4)?]))
        })
        .collect()
}

/// WCAG 2 relative luminance of an sRGB colour (0–255 channels).
fn luminance(c: [f64; 3]) -> f64 {
    let lin = |v: f64| {
        let v = v / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])
}

/// WCAG 2 contrast ratio of two colours.
fn contrast(a: [f64; 3], b: [f64; 3]) -> f64 {
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

/// The text of the block that opens at `open` (the index of its `{`), braces balanced.
fn block_at(css: &str, open: usize) -> &str {
    let mut depth = 0;
    for (i, ch) in css[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &css[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    ""
}

#[test]
fn every_chart_colour_reaches_3_to_1_and_chart_text_4_5_to_1_in_light_and_dark() {
    let css = include_str!("../../site-templates/style.css");
    // Comments out.
    let mut plain = String::new();
    let mut rest = css;
    while let Some(i) = rest.find("/*") {
        plain.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    plain.push_str(rest);
    let light_root = plain
        .find(":root {")
        .map(|i| block_at(&plain, i + 6))
        .unwrap_or("");
    let dark_at = plain
        .find("@media (prefers-color-scheme: dark)")
        .unwrap_or(0);
    let dark_block = block_at(&plain, dark_at + plain[dark_at..].find('{').unwrap_or(0));
    let dark_root = dark_block
        .find('{')
        .map(|i| block_at(dark_block, i))
        .unwrap_or("");
    let light = palette(light_root);
    let mut dark = light.clone();
    dark.extend(palette(dark_root));
    assert!(light.len() > 15 && dark.len() > 15, "{light:?}");
    // The chart rules outside any @media block (print has its own palette, narrow screens no colours).
    let mut top = String::new();
    let mut i = 0;
    while i < plain.len() {
        match plain[i..].find("@media") {
            Some(j) => {
                top.push_str(&plain[i..i + j]);
                let open = i + j + plain[i + j..].find('{').unwrap_or(0);
                i = open + block_at(&plain, open).len() + 2;
            }
            None => {
                top.push_str(&plain[i..]);
                break;
            }
        }
    }
    // Backgrounds a chart mark can sit on: the page, a surface, the range chart's track.
    let grounds = ["bg", "surface", "surface-2"];
    // Decorative: grid lines, the track and what hides the plot under a label held in view are
    // backgrounds, not marks a reader needs.
    let decorative = [".grid", ".track", ".axis-bg", ".label-bg"];
    // A rule that only changes opacity (`.range.open-ended`) paints the colour of the rule it refines.
    let fills: BTreeMap<String, String> = top
        .split('}')
        .filter_map(|r| {
            let (sel, d) = r.split_once('{')?;
            let f = d.split(';').find_map(|x| {
                let (k, v) = x.split_once(':')?;
                (k.trim() == "fill").then(|| v.trim().to_owned())
            })?;
            Some((sel.trim().to_owned(), f))
        })
        .collect();
    let mut checked = 0;
    let mut lowest = f64::MAX;
    for rule in top.split('}') {
        let Some((selector, decls)) = rule.split_once('{') else {
            continue;
        };
        let selector = selector.trim();
        if !selector.starts_with(".chart") || decorative.iter().any(|d| selector.ends_with(d)) {
            continue;
        }
        let decl = |name: &str| -> Option<String> {
            decls.split(';').find_map(|d| {
                let (k, v) = d.split_once(':')?;
                (k.trim() == name).then(|| v.trim().to_owned())
            })
        };
        let var = |v: Option<String>| -> Option<String> {
            v.as_deref()?
                .strip_prefix("var(--")?
                .strip_suffix(')')
                .map(str::to_owned)
        };
        let inherited = || {
            let base = selector.rsplit_once('.').map(|(b, _)| b)?;
            fills.get(base).cloned()
        };
        let opacity: f64 = decl("fill-opacity")
            .and_then(|o| o.parse().ok())
            .unwrap_or(1.0);
        let text = selector.contains("text")
            || [
                ".label",
                ".tick",
                "-label",
                ".beyond",
                ".over-mark",
                ".gkey",
            ]
            .iter()
            .any(|t| selector.ends_with(t));
        for (scheme, colours) in [("light", &light), ("dark", &dark)] {
            let fill = var(decl("fill").or_else(inherited)).and_then(|n| colours.get(&n).copied());
            let stroke = var(decl("stroke")).and_then(|n| colours.get(&n).copied());
            // Bar keys sit on the bar, everything else on a background.
            let on: Vec<[f64; 3]> = if selector.ends_with(".gkey") {
                vec![colours["cone-strong"]]
            } else {
                grounds.iter().map(|g| colours[*g]).collect()
            };
            let need = if text { 4.5 } else { 3.0 };
            // A mark is seen when its fill or its outline stands out against every background.
            let best = on
                .iter()
                .map(|bg| {
                    let f = fill.map(|f| {
                        let blended = [0, 1, 2].map(|k| f[k] * opacity + bg[k] * (1.0 - opacity));
                        contrast(blended, *bg)
                    });
                    let s = stroke.map(|s| contrast(s, *bg));
                    f.into_iter().chain(s).fold(0.0_f64, f64::max)
                })
                .fold(f64::MAX, f64::min);
            if fill.is_none() && stroke.is_none() {
                continue;
            }
            checked += 1;
            lowest = lowest.min(best / need);
            eprintln!("{scheme:<5} {selector:<40} {best:>5.2}:1 (needs {need}:1)");
            assert!(
                best >= need,
                "{selector} in {scheme}: {best:.2}:1 against its background, needs {need}:1"
            );
        }
    }
    assert!(checked > 40, "only {checked} chart colours checked");
    assert!(lowest >= 1.0);
}

#[test]
fn a_milestone_with_nothing_open_reads_nothing_open_not_todays_date() {
    let mut d = data();
    let mut empty = milestone(
        7,
        "Old release",
        Some("2011-10-18"),
        false,
        "2025-03-03",
        "2025-03-03",
        "2025-03-03",
        None,
        None,
        "nothing_open",
    );
    empty.open_issues = 0;
    empty.band = None;
    empty.p10 = None;
    d.runway.milestones.push(empty);
    let page = pages::page_context(&d);
    let row = page
        .milestones
        .iter()
        .find(|m| m.milestone.milestone == 7)
        .unwrap();
    assert_eq!(row.band_label, "nothing open");
    assert!(row.cone.is_none());
    let runway = text(&render(&d, None).unwrap(), "runway.html");
    let at = runway.find("Old release").unwrap();
    assert!(
        !runway[at..].contains("2025-03-03 · <strong>2025-03-03</strong>"),
        "{runway}"
    );
    // The chart's row says so where its bar would be, and its words give no dates.
    let chart = &runway[..runway.find("</svg>").unwrap()];
    assert!(
        chart.contains("<title>Old release: nothing open</title>"),
        "{chart}"
    );
    assert!(chart.contains(">nothing open</text>"), "{chart}");
}

#[test]
fn a_share_of_few_forecasts_is_a_count_not_a_certain_looking_interval() {
    use super::pages::share_of;
    // One forecast that held: "1 of 1", not "100% (100–100%)".
    assert_eq!(share_of(&Some([1.0, 1.0, 1.0]), 1), "1 of 1");
    assert_eq!(share_of(&Some([0.667, 0.0, 1.0]), 3), "2 of 3");
    assert_eq!(share_of(&Some([0.5, 0.4, 0.6]), 10), "50% (40–60%)");
    assert_eq!(share_of(&None, 0), "—");
    // A loss over so few resolved targets says so instead of a point interval (audit 171: "68.2 d
    // (68.2–68.2)" over 1 of 61).
    use super::pages::loss_over;
    assert_eq!(
        loss_over(&Some([68.2, 68.2, 68.2]), 1, 31),
        "68.2 d (over 1)"
    );
    assert_eq!(loss_over(&Some([12.0, 9.0, 15.0]), 40, 5), "12 d (9–15)");
    assert_eq!(
        loss_over(&Some([3.8, 3.8, 3.8]), 40, 1),
        "3.8 d (over 40, one cut)"
    );
}

/// Where the dates held far less (or more) often than they claim when replayed on the project's history,
/// the Overview and the Runway say so where the dates are read, not only the Calibration page.
#[test]
fn the_overview_and_the_runway_say_how_far_the_dates_held() {
    let mut d = data();
    if let Some(b) = d.calibration.backtest.as_mut() {
        b.methods[0].method = "commitea".to_owned();
    }
    let files = render(&d, None).unwrap();
    for page in ["index.html", "runway.html"] {
        let html = text(&files, page);
        assert!(
            html.contains("the p80 dates of forecasts 2 months ahead held 38% of the time (25 dated forecasts, 3 cuts; 80% is the aim): read them as later than they say"),
            "{page}: {html}"
        );
    }
    // An interval that reaches into 70–90%, nothing to say.
    if let Some(b) = d.calibration.backtest.as_mut() {
        for m in &mut b.methods {
            m.dated_coverage[2] = Some([0.6, 0.45, 0.72]);
        }
    }
    let html = text(&render(&d, None).unwrap(), "index.html");
    assert!(!html.contains("the p80 dates held"), "{html}");
}

#[test]
fn the_people_page_lists_the_team_as_the_runway_does_and_is_in_the_navigation() {
    // Audit 76: the person pages were reached only through the Runway's capacity table.
    let files = rendered();
    let table = |page: &str| {
        let t = text(&files, page);
        let at = t
            .find("id=\"capacity-title\"")
            .expect("the capacity section");
        let start = at + t[at..].find("<table").expect("a table");
        let end = start + t[start..].find("</table>").expect("its end");
        t[start..end].to_owned()
    };
    let people = table("people.html");
    assert!(!data().runway.capacity.is_empty() && people.contains("<tbody>"));
    assert_eq!(people, table("runway.html"), "one table, one definition");
    assert!(
        text(&files, "people.html")
            .contains("href=\"people.html\" aria-current=\"page\">People</a>")
    );
    assert!(text(&files, "index.html").contains("href=\"people.html\">People</a>"));
}

#[test]
fn a_directive_a_later_one_replaced_says_so_with_a_link_to_it() {
    let mut d = data();
    let mut later = d.directives.recent[0].clone();
    later.id = "D-0002".to_owned();
    later.skipped = None;
    let mut replaced = d.directives.recent[0].clone();
    replaced.skipped = None;
    replaced.replaced_by = Some("D-0002".to_owned());
    d.directives.recent = vec![later, replaced];
    let page = text(&render(&d, None).unwrap(), "directives.html");
    assert_eq!(
        page.matches("replaced by <a href=\"#D-0002\">D-0002</a>")
            .count(),
        1,
        "{page}"
    );
}

/// A late bar and an at-risk bar differ by more than colour: the runway's red and amber were the only
/// difference inside the chart (audit 115; the module's promise: "colour is never the only signal").
#[test]
fn late_and_at_risk_bars_differ_by_outline_too() {
    let css = text(&rendered(), "style.css");
    let rule = |selector: &str| -> String {
        let at = css
            .find(&format!("{selector} {{"))
            .unwrap_or_else(|| panic!("{selector}"));
        css[at..css[at..].find('}').map_or(css.len(), |e| at + e)].to_owned()
    };
    let late = rule(".chart .status-late .range");
    let risk = rule(".chart .status-at_risk .range");
    let shape = |r: &str| {
        r.split(';')
            .map(str::trim)
            .filter(|d| d.starts_with("stroke"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert!(!shape(&late).is_empty(), "{late}");
    assert_ne!(shape(&late), shape(&risk), "{late} / {risk}");
}

#[test]
fn a_card_that_waits_only_on_issues_the_token_may_not_read_says_so() {
    // The template looped over a list the view leaves out when empty: every run failed on such a card
    // (audit 156).
    let mut d = data();
    let steeping = &mut d.board.columns[2].issues;
    steeping[0].hidden_blockers = 2;
    steeping[1].waits_on = vec![crate::views::board::Blocker {
        issue: "acme/app#7".to_owned(),
        outside: false,
    }];
    steeping[1].waits_on_more = 2;
    steeping[1].hidden_blockers = 1;
    let files = render(&d, None).expect("renders");
    let board = text(&files, "board.html");
    assert!(
        board.contains(
            "<span class=\"label\">waits on</span> 2 issues the token may not read</div>"
        ),
        "{board}"
    );
    assert!(
        board.contains(
            "<span class=\"label\">waits on</span> acme/app#7 and 2 more; 1 issue the token may not read</div>"
        ),
        "{board}"
    );
}
