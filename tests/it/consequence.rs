//! The consequence diff on the small fixture: what raising one estimate does to the forecast.

use std::path::Path;

use commitea::config::Config;
use commitea::consequence::{Consequence, diff};
use commitea::forecast::{self, ForecastReport, Settings};
use commitea::plan::Plan;
use commitea::state::{Layout, Snapshot};

const SETTINGS: Settings = Settings {
    trials: 2000,
    seed: 42,
    horizon_days: 730,
};

fn small_plan() -> Plan {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small");
    let snapshot = Snapshot::load(&Layout::new(&dir)).unwrap();
    let config = Config::load(&dir, vec![], &Default::default()).unwrap();
    Plan::from_snapshot(&snapshot, &config, snapshot.meta.synced_at)
}

/// The small plan with acme/api#3's estimate four times as big.
fn bigger_api3(plan: &Plan) -> Plan {
    let mut after = plan.clone();
    let issue = after
        .issues
        .iter_mut()
        .find(|i| i.key.to_string() == "acme/api#3")
        .unwrap();
    issue.estimate_hours = issue.estimate_hours.map(|h| h * 4.0);
    after
}

fn reports() -> (Plan, ForecastReport, Plan, ForecastReport) {
    let before = small_plan();
    let after = bigger_api3(&before);
    let (rb, ra) = (
        forecast::run(&before, &SETTINGS),
        forecast::run(&after, &SETTINGS),
    );
    (before, rb, after, ra)
}

fn consequence() -> Consequence {
    let (before, rb, after, ra) = reports();
    diff(&rb, &ra, &before, &after)
}

#[test]
fn a_bigger_estimate_moves_the_issue_what_waits_on_it_and_its_milestone() {
    let c = consequence();
    let issue = |key: &str| {
        c.issues
            .iter()
            .find(|i| i.issue == key)
            .unwrap_or_else(|| panic!("{key} did not move: {c:#?}"))
    };
    let api3 = issue("acme/api#3");
    assert_eq!(api3.why, "own change");
    assert!(api3.moved_working_days > 0, "{api3:?}");
    let api4 = issue("acme/api#4");
    assert_eq!(api4.why, "waits on acme/api#3");
    assert!(api4.moved_working_days > 0, "{api4:?}");
    // Sorted by the size of the move, then by key.
    for w in c.issues.windows(2) {
        let (x, y) = (&w[0], &w[1]);
        assert!(
            x.moved_working_days.abs() > y.moved_working_days.abs()
                || (x.moved_working_days.abs() == y.moved_working_days.abs() && x.issue < y.issue),
            "{x:?} before {y:?}"
        );
    }

    let v1 = c.milestones.iter().find(|m| m.title == "v1.0").unwrap();
    let (before, after) = (v1.before.as_ref().unwrap(), v1.after.as_ref().unwrap());
    assert!(after.p80 > before.p80, "{v1:?}");
    assert!(v1.moved_working_days > 0);
    let (pb, pa) = (
        before.probability_on_time.unwrap(),
        after.probability_on_time.unwrap(),
    );
    assert!(pa <= pb, "{pb} → {pa}");
    let ids: Vec<u64> = c.milestones.iter().map(|m| m.milestone).collect();
    assert_eq!(ids, [1, 2]);

    // The summary names v1.0, a positive move and both dates, then how many issues moved.
    let short = |d: &str| {
        chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .unwrap()
            .format("%b %-d")
            .to_string()
    };
    let expected = format!(
        "v1.0 p80 +{} working days ({} → {})",
        v1.moved_working_days,
        short(&before.p80),
        short(&after.p80)
    );
    assert!(c.summary.starts_with(&expected), "{}", c.summary);
    assert!(c.summary.contains("P(on time) "), "{}", c.summary);
    // The count, with the biggest move: the first issue of the diff.
    let most = &c.issues[0];
    assert!(
        c.summary.ends_with(&format!(
            "; {} issues moved (the most: {}, p80 +{} working days)",
            c.issues.len(),
            most.issue,
            most.moved_working_days
        )),
        "{}",
        c.summary
    );
}

#[test]
fn a_plan_that_moved_where_no_p80_did_is_said() {
    // Someone put on leave: their work moved ten days in the median plan and no p80 or P(on time) did,
    // and the consequence said "no forecast change" (audit 92).
    let plan = small_plan();
    let before = forecast::run(&plan, &SETTINGS);
    let mut after = before.clone();
    let f = after
        .issues
        .iter_mut()
        .find(|f| matches!(f.planned_end, forecast::When::Date(_)))
        .unwrap();
    let forecast::When::Date(end) = f.planned_end else {
        unreachable!()
    };
    f.planned_end = forecast::When::Date(end + chrono::Days::new(14));
    let key = f.issue.to_string();
    let c = diff(&before, &after, &plan, &plan);
    assert!(
        c.summary.starts_with(&format!(
            "no p80 moved; the median plan moved 1 issue (the most: {key}, planned to end "
        )),
        "{}",
        c.summary
    );
}

#[test]
fn an_unchanged_plan_has_no_consequence() {
    let plan = small_plan();
    let report = forecast::run(&plan, &SETTINGS);
    let c = diff(&report, &report, &plan, &plan);
    assert_eq!(c.summary, "no forecast change");
    assert!(c.issues.is_empty(), "{:?}", c.issues);
    assert!(c.milestones.iter().all(|m| m.moved_working_days == 0));
    assert_eq!(c.milestones.len(), 2);
}

#[test]
fn an_issue_that_closes_is_closed_one_deleted_is_gone_and_one_that_opens_is_new() {
    let before = small_plan();
    let mut after = before.clone();
    let issue = after
        .issues
        .iter_mut()
        .find(|i| i.key.to_string() == "acme/api#5")
        .unwrap();
    issue.state = commitea::domain::OpenState::Closed;
    let (rb, ra) = (
        forecast::run(&before, &SETTINGS),
        forecast::run(&after, &SETTINGS),
    );
    let c = diff(&rb, &ra, &before, &after);
    let closed = c.issues.iter().find(|i| i.issue == "acme/api#5").unwrap();
    assert_eq!(closed.why, "closed");
    assert!(closed.before.is_some() && closed.after.is_none());
    assert!(c.summary.contains("1 issue closed"), "{}", c.summary);
    // Deleted on Gitea (not in the plan at all): gone.
    let mut deleted = before.clone();
    deleted.issues.retain(|i| i.key.to_string() != "acme/api#5");
    let rd = forecast::run(&deleted, &SETTINGS);
    let c = diff(&rb, &rd, &before, &deleted);
    let gone = c.issues.iter().find(|i| i.issue == "acme/api#5").unwrap();
    assert_eq!(gone.why, "gone");
    assert!(c.summary.contains("1 issue gone"), "{}", c.summary);
    let back = diff(&ra, &rb, &after, &before);
    let new = back
        .issues
        .iter()
        .find(|i| i.issue == "acme/api#5")
        .unwrap();
    assert_eq!(new.why, "new");
    assert!(new.before.is_none() && new.after.is_some());
}

#[test]
fn the_diff_is_deterministic() {
    let (before, rb, after, ra) = reports();
    let once = serde_json::to_string(&diff(&rb, &ra, &before, &after)).unwrap();
    let twice = serde_json::to_string(&diff(&rb, &ra, &before, &after)).unwrap();
    assert_eq!(once, twice);
    let (before, rb, after, ra) = reports();
    let again = serde_json::to_string(&diff(&rb, &ra, &before, &after)).unwrap();
    assert_eq!(once, again);
}

#[test]
fn the_consequence_of_a_bigger_estimate() {
    insta::assert_json_snapshot!(consequence());
}

#[test]
fn a_move_of_chance_an_empty_milestone_and_a_closed_one_are_said_for_what_they_are() {
    // Three things a daily run met (an audit of fifty days): an issue whose plan held while its chance
    // of being done moved was put down to the queue of its person, in which nothing moved; a milestone
    // with nothing open "slipped a day" every day (its p80 is each forecast's day); a milestone closed on
    // Gitea was "gone".
    use commitea::domain::OpenState;
    use commitea::forecast::When;
    let plan = small_plan();
    let before = forecast::run(&plan, &SETTINGS);
    let mut after = before.clone();
    let issue = after
        .issues
        .iter_mut()
        .find(|i| matches!(i.p80, When::Date(_)))
        .unwrap();
    let key = issue.issue.to_string();
    let b = before
        .issues
        .iter()
        .find(|i| i.issue == issue.issue)
        .unwrap();
    issue.p80 = When::BeyondHorizon;
    issue.probability_done = Some(0.796);
    let mut before = before.clone();
    before
        .issues
        .iter_mut()
        .find(|i| i.issue == b.issue)
        .unwrap()
        .probability_done = Some(0.803);
    // Another whose p80 stays dated and moves while its chance falls by whole percents.
    let other = after
        .issues
        .iter_mut()
        .find(|i| {
            i.issue.to_string() != key
                && matches!(i.p80, When::Date(_))
                && plan
                    .issue(&i.issue)
                    .is_some_and(|p| p.depends_on.is_empty())
        })
        .unwrap();
    let other_key = other.issue.to_string();
    if let When::Date(d) = other.p80 {
        other.p80 = When::Date(d + chrono::Days::new(20));
    }
    other.probability_done = Some(0.85);
    before
        .issues
        .iter_mut()
        .find(|i| i.issue.to_string() == other_key)
        .unwrap()
        .probability_done = Some(0.9);
    // A third whose p80 moves two weeks earlier as its chance rises, while its plan moves a day later
    // (audit 193: "queue of farah", whose queue was the same on both sides).
    let third = after
        .issues
        .iter_mut()
        .find(|i| {
            ![&key, &other_key].contains(&&i.issue.to_string())
                && matches!(i.p80, When::Date(_))
                && matches!(i.planned_end, When::Date(_))
                && i.planned_assignee.is_some()
                && plan
                    .issue(&i.issue)
                    .is_some_and(|p| p.depends_on.is_empty())
        })
        .unwrap();
    let third_key = third.issue.to_string();
    if let (When::Date(d), When::Date(s), When::Date(e)) =
        (third.p80, third.planned_start, third.planned_end)
    {
        third.p80 = When::Date(d - chrono::Days::new(14));
        third.planned_start = When::Date(s + chrono::Days::new(1));
        third.planned_end = When::Date(e + chrono::Days::new(1));
    }
    third.probability_done = Some(0.93);
    before
        .issues
        .iter_mut()
        .find(|i| i.issue.to_string() == third_key)
        .unwrap()
        .probability_done = Some(0.918);
    assert!(before.milestones.len() >= 2, "{:?}", before.milestones);
    // The first milestone: nothing open on either side, its "p80" each side's day.
    for (r, day) in [(&mut before, 0), (&mut after, 1)] {
        let m = &mut r.milestones[0];
        m.open_issues = 0;
        m.p80 = When::Date(r.as_of + chrono::Days::new(day));
    }
    // The second: closed on Gitea in the forecast after.
    after.milestones[1].state = OpenState::Closed;
    let (empty, closed) = (before.milestones[0].id, before.milestones[1].id);
    before.milestones[1].state = OpenState::Open;
    let c = diff(&before, &after, &plan, &plan);
    let moved = c.issues.iter().find(|i| i.issue == key).expect("moved");
    // Its p80 left the horizon as its chance crossed 80%: whole percents would read "80% → 80%".
    assert_eq!(
        moved.why, "chance of being done 80.3% → 79.6% (a p80 needs 80%)",
        "{moved:?}"
    );
    let other = c
        .issues
        .iter()
        .find(|i| i.issue == other_key)
        .expect("moved");
    assert_eq!(other.why, "chance of being done 90% → 85%", "{other:?}");
    let third = c
        .issues
        .iter()
        .find(|i| i.issue == third_key)
        .expect("moved");
    assert_eq!(third.why, "chance of being done 92% → 93%", "{third:?}");
    assert!(
        c.milestones.iter().all(|m| m.milestone != empty),
        "{:?}",
        c.milestones
    );
    // Closed with nothing open in it: said all the same.
    let mut emptied = before.clone();
    emptied.milestones[1].open_issues = 0;
    let mut closed_empty = after.clone();
    closed_empty.milestones[1].open_issues = 0;
    let c2 = diff(&emptied, &closed_empty, &plan, &plan);
    assert!(
        c2.milestones
            .iter()
            .any(|m| m.milestone == closed && m.closed),
        "{:?}",
        c2.milestones
    );
    let gone = c.milestones.iter().find(|m| m.milestone == closed).unwrap();
    assert!(gone.closed, "{gone:?}");
    assert!(
        c.summary.contains(&format!("{} closed", gone.title)),
        "{}",
        c.summary
    );
    // Open, its work all closed since: nothing open in it any more, with no date after and no move
    // counted to the forecast's own day (audit 106: "p80 -75 working days (Mar 18 2027 → Nov 27)").
    let mut now_empty = before.clone();
    now_empty.milestones[1].state = OpenState::Open;
    now_empty.milestones[1].open_issues = 0;
    now_empty.milestones[1].p80 = When::Date(now_empty.as_of);
    let c3 = diff(&before, &now_empty, &plan, &plan);
    let m = c3
        .milestones
        .iter()
        .find(|m| m.milestone == closed)
        .unwrap();
    assert!(
        m.emptied && m.after.is_none() && m.before.is_some(),
        "{m:?}"
    );
    assert_eq!(m.moved_working_days, 0, "{m:?}");
    assert!(
        c3.summary
            .contains(&format!("{} has nothing open any more", m.title)),
        "{}",
        c3.summary
    );
}

/// The reasons a month of daily runs found untrue (an audit): a capacity cut said as "calibration", a
/// person's time off that changed nothing named as the cause of a re-estimate's slip, a day passing with
/// nothing done said as the queue.
#[test]
fn a_move_is_put_down_to_what_really_made_it() {
    let before = small_plan();
    let rb = forecast::run(&before, &SETTINGS);
    let planned_for = |r: &ForecastReport, key: &str| {
        r.issues
            .iter()
            .find(|i| i.issue.to_string() == key)
            .and_then(|i| i.planned_assignee.clone())
    };
    let queue = |r: &ForecastReport, name: &str| {
        r.people
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.queue.clone())
            .unwrap_or_default()
    };
    let person = rb
        .people
        .iter()
        .max_by_key(|p| p.queue.len())
        .unwrap()
        .name
        .clone();
    // Half their hours: what was theirs moves for that, whatever its remaining effort did.
    let mut halved = before.clone();
    {
        let m = halved.team.iter_mut().find(|m| m.name == person).unwrap();
        m.calendar.hours_per_day /= 2.0;
        m.hours_per_week /= 2.0;
    }
    let ra = forecast::run(&halved, &SETTINGS);
    let c = diff(&rb, &ra, &before, &halved);
    let theirs: Vec<_> = c
        .issues
        .iter()
        .filter(|i| {
            [planned_for(&rb, &i.issue), planned_for(&ra, &i.issue)].contains(&Some(person.clone()))
        })
        .collect();
    // The first of their work moved for their hours, what the plan gave to someone else says so (and
    // that it was their hours), the rest moved behind them in their queue; none for "calibration".
    assert!(theirs.len() >= 2, "{c:#?}");
    assert!(
        theirs
            .iter()
            .any(|i| i.why == format!("capacity of {person}")),
        "{c:#?}"
    );
    for i in theirs {
        // Their hours first where they alone account for half the move (audit 123).
        if i.why.ends_with(&format!("capacity of {person}"))
            || i.why.starts_with(&format!("capacity of {person}; "))
            || i.why.starts_with("planned for ")
        {
            assert_eq!(i.people, vec![person.clone()], "{i:#?}");
        } else {
            assert!(
                i.why == format!("queue of {person}") || i.why.starts_with("waits on"),
                "{i:#?}"
            );
        }
    }
    // Time off after all their work ends, and four times the estimate of the first issue in their queue:
    // the time off moves nothing, the estimate everything behind it.
    let head = queue(&rb, &person)[0].clone();
    let mut after = before.clone();
    {
        let m = after.team.iter_mut().find(|m| m.name == person).unwrap();
        let far = rb.as_of + chrono::Days::new(600);
        m.calendar.time_off.push((far, far + chrono::Days::new(4)));
        let i = after.issues.iter_mut().find(|i| i.key == head).unwrap();
        i.estimate_hours = Some(i.estimate_hours.unwrap_or(8.0) * 4.0);
    }
    let ra = forecast::run(&after, &SETTINGS);
    let c = diff(&rb, &ra, &before, &after);
    let moved_head = c.issues.iter().find(|i| i.issue == head.to_string());
    assert_eq!(
        moved_head.map(|i| i.why.as_str()),
        Some("own change"),
        "{c:#?}"
    );
    let behind: Vec<_> = c
        .issues
        .iter()
        .filter(|i| {
            queue(&rb, &person)[1..]
                .iter()
                .any(|k| k.to_string() == i.issue)
        })
        .collect();
    assert!(!behind.is_empty(), "{c:#?}");
    for i in c.issues.iter() {
        assert!(!i.why.starts_with("capacity of"), "{i:#?}");
        assert!(i.people.is_empty(), "{i:#?}");
    }
    for i in behind {
        assert!(
            i.why == format!("queue of {person}") || i.why.starts_with("waits on"),
            "{i:#?}"
        );
    }
    // Day 0 a working day on, nothing done: the first issue in a queue that moved a day says so.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small");
    let snapshot = Snapshot::load(&Layout::new(&dir)).unwrap();
    let config = Config::load(&dir, vec![], &Default::default()).unwrap();
    let now = snapshot.meta.synced_at + chrono::Days::new(1);
    let later = Plan::from_snapshot(&snapshot, &config, now);
    let rl = forecast::run(&later, &SETTINGS);
    let c = diff(&rb, &rl, &before, &later);
    let passed: Vec<_> = c
        .issues
        .iter()
        .filter(|i| i.why == "1 working day passed with no progress recorded")
        .collect();
    assert!(!passed.is_empty(), "{c:#?}");
    // (By a day, or more where that day pushed it past a weekend or someone's leave.)
    assert!(passed.iter().all(|i| i.moved_working_days >= 1), "{c:#?}");
    // Never a move far past it (audit 132: "+28" put down to one day).
    assert!(passed.iter().all(|i| i.moved_working_days <= 7), "{c:#?}");
    assert!(passed.iter().any(|i| i.moved_working_days == 1), "{c:#?}");
    // Someone away on the day that passed, on both sides: it was none of theirs (audit 90: "1 working
    // day passed with no progress recorded" of someone on leave).
    let c_away = |who: &str| {
        let away = |plan: &Plan| {
            let mut p = plan.clone();
            let m = p.team.iter_mut().find(|m| m.name == who).unwrap();
            m.calendar.time_off.push((later.as_of, later.as_of));
            p
        };
        let (b, l) = (away(&before), away(&later));
        diff(
            &forecast::run(&b, &SETTINGS),
            &forecast::run(&l, &SETTINGS),
            &b,
            &l,
        )
    };
    // Away on the new day 0, not on the day that passed (the old day 0): that day was theirs, and their
    // work that waited it says so (audit 148: the new day was counted, and a Thursday called none of a
    // Monday-to-Thursday person's days).
    let mut said = false;
    for p in &rb.people {
        let c = c_away(&p.name);
        let wrong = format!(
            "1 working day passed, none of them {}'s working days",
            p.name
        );
        assert!(
            c.issues.iter().all(|i| i.why != wrong),
            "{}: {c:#?}",
            p.name
        );
        said |= c
            .issues
            .iter()
            .any(|i| i.why == "1 working day passed with no progress recorded");
    }
    assert!(said, "no one's waited day was said");
    // The same day on both sides: nothing passed.
    let c = diff(&rb, &ra, &before, &after);
    assert!(c.issues.iter().all(|i| !i.why.contains("passed")), "{c:#?}");
}

/// A dependency added on Gitea is the issue's own change, also where the standup compares two forecasts
/// with today's issues on both sides (an audit saw "waits on KEY" for a move the new dependency made, the
/// dependency having moved the other way).
#[test]
fn a_new_dependency_is_an_own_change_even_against_todays_plan() {
    let before = small_plan();
    let mut after = before.clone();
    let (waiting, on) = ("acme/web#4", "acme/api#5");
    let issue = after
        .issues
        .iter_mut()
        .find(|i| i.key.to_string() == waiting)
        .unwrap();
    assert!(issue.depends_on.is_empty());
    issue.depends_on = vec![on.parse().unwrap()];
    let (rb, ra) = (
        forecast::run(&before, &SETTINGS),
        forecast::run(&after, &SETTINGS),
    );
    // As the standup diffs: today's plan on both sides.
    let c = diff(&rb, &ra, &after, &after);
    let it = c
        .issues
        .iter()
        .find(|i| i.issue == waiting)
        .unwrap_or_else(|| panic!("{c:#?}"));
    assert_eq!(it.why, "own change", "{it:#?}");
}

/// An estimate a directive holds at the value Gitea has is no change of the issue's own: a move then is
/// another's (audit 148: "own change" of an issue moved by its blocker, its estimate the same 1w).
#[test]
fn a_directive_holding_the_same_estimate_is_no_own_change() {
    let mut before = small_plan();
    let (waiting, on) = ("acme/web#4", "acme/api#5");
    let waiter = before
        .issues
        .iter_mut()
        .find(|i| i.key.to_string() == waiting)
        .unwrap();
    waiter.depends_on = vec![on.parse().unwrap()];
    let mut after = before.clone();
    for i in &mut after.issues {
        if i.key.to_string() == waiting {
            i.estimate_source = commitea::plan::EstimateSource::Directive;
        }
        // Its blocker grows: the waiter moves for that.
        if i.key.to_string() == on {
            i.estimate_hours = Some(200.0);
        }
    }
    let c = diff(
        &forecast::run(&before, &SETTINGS),
        &forecast::run(&after, &SETTINGS),
        &before,
        &after,
    );
    let it = c
        .issues
        .iter()
        .find(|i| i.issue == waiting)
        .unwrap_or_else(|| panic!("{c:#?}"));
    assert_eq!(it.why, format!("waits on {on}"), "{it:#?}");
}

/// A day's slip that lands an issue's p80 after its person's two weeks' leave moves it by the leave's
/// working days too: the reason says the leave, not only the day that passed (audit 108: +11 working
/// days said "1 working day passed with no progress recorded").
#[test]
fn a_move_across_someones_time_off_says_the_time_off() {
    let before = small_plan();
    let rb = forecast::run(&before, &SETTINGS);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small");
    let snapshot = Snapshot::load(&Layout::new(&dir)).unwrap();
    let config = Config::load(&dir, vec![], &Default::default()).unwrap();
    let later = Plan::from_snapshot(
        &snapshot,
        &config,
        snapshot.meta.synced_at + chrono::Days::new(1),
    );
    let rl = forecast::run(&later, &SETTINGS);
    // Each issue the day moved later, with its person's leave put from the day after its p80 then: the
    // first whose p80 now lands after the leave.
    // The consequence of two plans forecast as twins.
    let twins = |b: &Plan, l: &Plan| {
        diff(
            &forecast::run(b, &SETTINGS),
            &forecast::run(l, &SETTINGS),
            b,
            l,
        )
    };
    let c = diff(&rb, &rl, &before, &later);
    for by_directive in [false, true] {
        let said = c
            .issues
            .iter()
            .filter(|i| i.moved_working_days >= 1)
            .find_map(|i| {
                let f = rb.issues.iter().find(|f| f.issue.to_string() == i.issue)?;
                let person = f.planned_assignee.clone().or(f.assignee.clone())?;
                let commitea::forecast::When::Date(p80) = f.p80 else {
                    return None;
                };
                let leave = (p80 + chrono::Days::new(1), p80 + chrono::Days::new(14));
                let away = |plan: &Plan| {
                    let mut p = plan.clone();
                    let m = p.team.iter_mut().find(|m| m.name == person).unwrap();
                    if by_directive {
                        // A capacity directive's period of no hours is time off too (audit 123).
                        m.calendar
                            .overrides
                            .push(commitea::engine::CapacityOverride {
                                from: leave.0,
                                to: Some(leave.1),
                                hours_per_day: 0.0,
                            });
                    } else {
                        m.calendar.time_off.push(leave);
                    }
                    p
                };
                let moved = twins(&away(&before), &away(&later))
                    .issues
                    .into_iter()
                    .find(|x| x.issue == i.issue)?;
                moved
                    .why
                    .contains("'s time off")
                    .then_some((moved, person, leave))
            });
        let (moved, person, (first, last)) = said.expect("a day's slip across a leave");
        assert!(
            moved.why.ends_with(&format!(
                "; its p80 now after {person}'s time off {} – {}",
                first.format("%b %-d"),
                last.format("%b %-d")
            )),
            "{moved:#?}"
        );
        // The leave's working days are in the move: more than the day that passed.
        assert!(moved.moved_working_days > 5, "{moved:#?}");
    }
    // With nobody's leave, no reason says one.
    let none = |plan: &Plan| {
        let mut p = plan.clone();
        for m in &mut p.team {
            m.calendar.time_off.clear();
        }
        p
    };
    let c = twins(&none(&before), &none(&later));
    assert!(c.issues.iter().any(|i| i.moved_working_days >= 1), "{c:#?}");
    assert!(
        c.issues.iter().all(|i| !i.why.contains("time off")),
        "{c:#?}"
    );
}

/// A time off already running on day 0 is crossed from day 0: work that now waits for someone's return
/// says so, though no p80 can fall before the leave's first day (audit 112: a reassignment onto emeka,
/// away since before day 0, moved ten working days as "own change", six of them his time off).
#[test]
fn a_move_past_a_time_off_running_on_day_0_says_the_time_off() {
    let before = small_plan();
    let rb = forecast::run(&before, &SETTINGS);
    // The soonest dated issue with a person: put that person away from three days before day 0 to a week
    // past its p80.
    let (issue, person, p80) = rb
        .issues
        .iter()
        .filter_map(|f| {
            let person = f.planned_assignee.clone().or(f.assignee.clone())?;
            let commitea::forecast::When::Date(p80) = f.p80 else {
                return None;
            };
            Some((f.issue.to_string(), person, p80))
        })
        .min_by_key(|(_, _, p80)| *p80)
        .expect("a dated issue");
    // Away since before day 0; and away from the day after day 0, which is none of their working days
    // (audit 124: a leave from a Monday, day 0 a Friday the person does not work, was not said).
    for from_next_day in [false, true] {
        let mut before = before.clone();
        let leave = if from_next_day {
            before
                .team
                .iter_mut()
                .find(|m| m.name == person)
                .unwrap()
                .calendar
                .time_off
                .push((before.as_of, before.as_of));
            (
                before.as_of + chrono::Days::new(1),
                p80 + chrono::Days::new(7),
            )
        } else {
            (
                before.as_of - chrono::Days::new(3),
                p80 + chrono::Days::new(7),
            )
        };
        let rb = forecast::run(&before, &SETTINGS);
        let mut after = before.clone();
        after
            .team
            .iter_mut()
            .find(|m| m.name == person)
            .unwrap()
            .calendar
            .time_off
            .push(leave);
        let c = diff(&rb, &forecast::run(&after, &SETTINGS), &before, &after);
        let moved = c
            .issues
            .iter()
            .find(|i| i.issue == issue)
            .unwrap_or_else(|| panic!("{issue} moved: {c:#?}"));
        assert!(moved.moved_working_days > 5, "{moved:#?}");
        assert!(
            moved.why.ends_with(&format!(
                "; its p80 now after {person}'s time off {} – {}",
                leave.0.format("%b %-d"),
                leave.1.format("%b %-d")
            )),
            "{moved:#?}"
        );
    }
}

/// Holidays added to the team's calendar are said as such, not as each person's capacity; someone joining
/// is named where the plan gives work to another (audit 123: two holidays read "capacity of amara", and a
/// reassignment zoe's joining made was put down to amara's own hours cut).
#[test]
fn holidays_and_someone_joining_are_named_as_themselves() {
    let before = small_plan();
    let rb = forecast::run(&before, &SETTINGS);
    let first_dated = rb
        .issues
        .iter()
        .filter_map(|f| match f.p80 {
            commitea::forecast::When::Date(d) => Some(d),
            commitea::forecast::When::BeyondHorizon => None,
        })
        .min()
        .unwrap();
    // Two weekdays before the first p80: they move it.
    let days: Vec<chrono::NaiveDate> = (0..10)
        .map(|n| before.as_of + chrono::Days::new(n))
        .filter(|d| chrono::Datelike::weekday(d).num_days_from_monday() < 5 && *d < first_dated)
        .take(2)
        .collect();
    assert_eq!(days.len(), 2, "{days:?}");
    let mut after = before.clone();
    after.team_calendar.holidays.extend(&days);
    for m in &mut after.team {
        m.calendar.holidays.extend(&days);
    }
    let c = diff(&rb, &forecast::run(&after, &SETTINGS), &before, &after);
    assert!(c.issues.iter().any(|i| i.moved_working_days > 0), "{c:#?}");
    let words = format!(
        "holidays {} and {} added",
        days[0].format("%b %-d"),
        days[1].format("%b %-d")
    );
    assert!(
        c.issues.iter().any(|i| i.why.contains(&words)),
        "{words}: {c:#?}"
    );
    assert!(
        c.issues
            .iter()
            .all(|i| !i.why.contains("capacity of") && i.people.is_empty()),
        "{c:#?}"
    );

    // Someone joins: every piece of unassigned work the plan now gives another says so.
    let mut joined = before.clone();
    let mut zoe = joined.team[0].clone();
    zoe.name = "zoe".into();
    zoe.repositories.clear();
    joined.team.push(zoe);
    let ra = forecast::run(&joined, &SETTINGS);
    let c = diff(&rb, &ra, &before, &joined);
    let moved: Vec<_> = c
        .issues
        .iter()
        .filter(|i| i.why.starts_with("planned for "))
        .collect();
    assert!(!moved.is_empty(), "{c:#?}");
    for i in moved {
        let to_zoe = i.why.starts_with("planned for zoe,");
        assert!(
            to_zoe
                || (i.why.ends_with("; zoe joined the team") && i.people.contains(&"zoe".into())),
            "{i:#?}"
        );
    }
}
