//! The words of the demo: issue titles and bodies, comments, milestone and label texts.

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;

/// What kind of work an issue is; its label is the kind's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Kind {
    #[default]
    Bug,
    Feature,
    Chore,
    Docs,
    Ux,
    Perf,
    Security,
}

impl Kind {
    /// The label of this kind.
    pub fn label(self) -> &'static str {
        match self {
            Self::Bug => "bug",
            Self::Feature => "feature",
            Self::Chore => "chore",
            Self::Docs => "docs",
            Self::Ux => "ux",
            Self::Perf => "perf",
            Self::Security => "security",
        }
    }

    /// A kind for an issue of repository `repo`, weighted like a real tracker.
    pub fn draw(rng: &mut Xoshiro256PlusPlus, repo: &str) -> Self {
        let frontend = matches!(repo, "web" | "mobile");
        let weights: [(Self, u32); 7] = [
            (Self::Bug, 35),
            (Self::Feature, 28),
            (Self::Chore, 12),
            (Self::Docs, if repo == "api" { 8 } else { 4 }),
            (Self::Ux, if frontend { 12 } else { 1 }),
            (Self::Perf, 6),
            (Self::Security, 3),
        ];
        let total: u32 = weights.iter().map(|w| w.1).sum();
        let mut x = rng.random_range(0..total);
        for (k, w) in weights {
            if x < w {
                return k;
            }
            x -= w;
        }
        Self::Bug
    }
}

/// Every ordinary (non-CommiTea) label with its colour and description, in the order repositories create them.
pub(super) const ORDINARY_LABELS: &[(&str, &str, &str)] = &[
    ("bug", "d73a4a", "Something is broken"),
    ("feature", "a2eeef", "New functionality"),
    (
        "chore",
        "c5def5",
        "Maintenance: upgrades, clean-ups, tooling",
    ),
    ("docs", "0075ca", "Documentation"),
    ("ux", "d4c5f9", "User experience and design"),
    ("perf", "f9d0c4", "Performance"),
    ("security", "b60205", "Security hardening"),
    ("regression", "e11d21", "Worked before, broken by a change"),
    ("tech-debt", "5319e7", "Code that slows us down"),
    (
        "needs-info",
        "fef2c0",
        "Waiting for details from the reporter",
    ),
    ("needs-diagnosis", "fbca04", "Nobody knows the cause yet"),
    ("wontfix", "ffffff", "Will not be worked on"),
    ("duplicate", "cfd3d7", "Already reported elsewhere"),
];

/// The colour of an estimate label: lighter for smaller estimates.
pub(super) const EST_COLORS: [&str; 8] = [
    "e6f4ea", "cdeccf", "a8dcb0", "7fcb8c", "5ab56b", "3d9a51", "2a7d3c", "1b5e2b",
];

/// Priority labels: colour and description.
pub(super) const PRIORITY_LABELS: [(&str, &str); 4] = [
    ("b60205", "Drop everything"),
    ("d93f0b", "High: next up"),
    ("fbca04", "Normal (the default without a label)"),
    ("0e8a16", "Low: someday"),
];

fn pick<'a>(rng: &mut Xoshiro256PlusPlus, list: &[&'a str]) -> &'a str {
    list.get(rng.random_range(0..list.len().max(1)))
        .copied()
        .unwrap_or("")
}

fn subjects(repo: &str) -> &'static [&'static str] {
    match repo {
        "api" => &[
            "POST /orders",
            "GET /invoices",
            "the token refresh endpoint",
            "webhook delivery",
            "the rate limiter",
            "GET /search",
            "the customer import job",
            "the billing worker",
            "session cleanup",
            "the OpenAPI spec",
            "idempotency keys",
            "PATCH /users/:id",
            "the email queue",
            "the audit log",
            "GET /reports/monthly",
            "password reset",
            "the tax calculation",
            "refunds",
        ],
        "web" => &[
            "the checkout page",
            "the login form",
            "the dashboard charts",
            "the settings page",
            "the invoice list",
            "the date picker",
            "the navigation menu",
            "the onboarding wizard",
            "the order history table",
            "the search box",
            "the cookie banner",
            "the profile page",
            "the admin panel",
            "the pricing page",
            "the notifications drawer",
            "the file uploader",
        ],
        "mobile" => &[
            "push notifications",
            "offline sync",
            "the iOS share sheet",
            "the Android back button",
            "the login screen",
            "photo upload",
            "deep links",
            "biometric unlock",
            "app startup",
            "the order tracking map",
            "the settings screen",
            "in-app purchases",
            "the cart screen",
            "the onboarding carousel",
            "background refresh",
            "the home screen widget",
        ],
        "infra" => &[
            "the CI pipeline",
            "the staging cluster",
            "Postgres backups",
            "TLS certificates",
            "log shipping",
            "the Grafana dashboards",
            "the Helm charts",
            "the deploy script",
            "Redis failover",
            "DNS records",
            "secrets rotation",
            "load balancer health checks",
            "the container registry",
            "autoscaling",
            "the on-call alerts",
            "the build cache",
        ],
        _ => &[
            "the service",
            "the worker",
            "the admin page",
            "the API client",
            "the settings",
            "the export",
            "the import",
            "the scheduler",
            "the cache",
            "the database schema",
            "the public endpoints",
            "the nightly job",
        ],
    }
}

fn upgrades(repo: &str) -> &'static [&'static str] {
    match repo {
        "api" => &[
            "tokio to 1.45",
            "the Postgres driver",
            "OpenSSL to 3.4",
            "axum to 0.8",
            "serde",
        ],
        "web" => &[
            "React to 19",
            "Vite to 6",
            "TypeScript to 5.7",
            "the date library",
            "Playwright",
        ],
        "mobile" => &[
            "Kotlin to 2.1",
            "Swift to 6",
            "React Native to 0.77",
            "the Firebase SDK",
            "Gradle to 8.12",
        ],
        "infra" => &[
            "Kubernetes to 1.32",
            "Terraform to 1.10",
            "Postgres to 17",
            "Grafana to 11",
            "cert-manager",
        ],
        _ => &[
            "the base image",
            "the logging library",
            "the CI runners",
            "the HTTP client",
        ],
    }
}

fn conditions(repo: &str) -> &'static [&'static str] {
    match repo {
        "api" => &[
            "for EU customers",
            "with more than 1000 rows",
            "under load",
            "with non-ASCII names",
            "after a timezone change",
            "during deploys",
            "when the token has expired",
            "for accounts with many users",
            "on retries",
            "for customers without a VAT id",
        ],
        "web" => &[
            "on Safari 17",
            "with two tabs open",
            "in dark mode",
            "after the session expires",
            "when the cart is empty",
            "on small screens",
            "with a screen reader",
            "for users without an email address",
            "with non-ASCII names",
        ],
        "mobile" => &[
            "on first launch",
            "on slow networks",
            "on Android 15",
            "on iOS 18",
            "after an app update",
            "in airplane mode",
            "with large fonts",
            "after logging out",
        ],
        "infra" => &[
            "during deploys",
            "under load",
            "after a node restart",
            "at midnight UTC",
            "when the disk is full",
            "in the eu-west region",
            "after a failover",
        ],
        _ => &[
            "under load",
            "during deploys",
            "for EU customers",
            "after a timezone change",
            "on retries",
        ],
    }
}

fn features(repo: &str) -> &'static [&'static str] {
    match repo {
        "api" => &[
            "cursor pagination",
            "webhooks",
            "rate limits per customer",
            "bulk operations",
            "ETag caching",
            "audit logging",
            "idempotent retries",
            "field filtering",
            "API keys per project",
        ],
        "web" => &[
            "CSV export",
            "bulk actions",
            "filtering by date",
            "keyboard shortcuts",
            "saved searches",
            "German and French translations",
            "undo",
            "a dark theme",
            "drag and drop",
        ],
        "mobile" => &[
            "offline mode",
            "haptic feedback",
            "German and French translations",
            "a dark theme",
            "biometric login",
            "pull to refresh",
            "share links",
            "tablet layouts",
        ],
        "infra" => &[
            "Prometheus metrics",
            "automatic rollbacks",
            "canary deploys",
            "cost alerts",
            "audit logging",
            "per-branch preview environments",
        ],
        _ => &[
            "CSV export",
            "audit logging",
            "webhooks",
            "Prometheus metrics",
            "bulk actions",
        ],
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A title, the subject it is about, and the rougher title it may have had first.
#[derive(Debug, Clone, Default)]
pub(super) struct Title {
    /// The title.
    pub title: String,
    /// What it is about, e.g. `the checkout page`.
    pub subject: String,
    /// The title as first written, before someone tidied it.
    pub rough: String,
}

/// A title for an issue of `kind` in repository `repo`.
pub(super) fn title(rng: &mut Xoshiro256PlusPlus, kind: Kind, repo: &str) -> Title {
    let s = pick(rng, subjects(repo));
    let c = pick(rng, conditions(repo));
    let f = pick(rng, features(repo));
    let t = match kind {
        Kind::Bug => match rng.random_range(0..8) {
            0 => format!("{s} returns a 500 {c}"),
            1 => format!("{s} fails {c}"),
            2 => format!("{s} shows stale data {c}"),
            3 => format!("Crash in {s} {c}"),
            4 => format!("{s} times out {c}"),
            5 => format!("Wrong totals in {s} {c}"),
            6 => format!("{s} loses input {c}"),
            _ => format!("Duplicate entries in {s} {c}"),
        },
        Kind::Feature => match rng.random_range(0..3) {
            0 => format!("Add {f} to {s}"),
            1 => format!("Support {f} in {s}"),
            _ => format!("{s}: {f}"),
        },
        Kind::Chore => match rng.random_range(0..5) {
            0 => format!("Upgrade {}", pick(rng, upgrades(repo))),
            1 => format!("Remove dead code in {s}"),
            2 => format!("Refactor {s}"),
            3 => format!("Clean up feature flags in {s}"),
            _ => format!("Move {s} to the new config format"),
        },
        Kind::Docs => match rng.random_range(0..4) {
            0 => format!("Document {s}"),
            1 => format!("Write a runbook for {s}"),
            2 => format!("Update the README section on {s}"),
            _ => format!("Add examples for {s}"),
        },
        Kind::Ux => match rng.random_range(0..4) {
            0 => format!("Improve the empty state of {s}"),
            1 => format!("Make {s} usable on small screens"),
            2 => format!("Clearer error messages in {s}"),
            _ => format!("Keyboard navigation for {s}"),
        },
        Kind::Perf => match rng.random_range(0..4) {
            0 => format!("Speed up {s}"),
            1 => format!("Reduce memory use of {s}"),
            2 => format!("{s} takes over 2 s {c}"),
            _ => format!("Cache results of {s}"),
        },
        Kind::Security => match rng.random_range(0..4) {
            0 => format!("Validate input in {s}"),
            1 => format!("Rotate the secrets used by {s}"),
            2 => format!("CSRF protection for {s}"),
            _ => format!("Audit permissions of {s}"),
        },
    };
    let rough = match kind {
        Kind::Bug => format!("{s} broken"),
        Kind::Feature => format!("idea: {f}"),
        _ => format!("{s} stuff"),
    };
    Title {
        title: capitalise(&t),
        subject: s.to_owned(),
        rough,
    }
}

/// A short Markdown description for an issue.
pub(super) fn body(rng: &mut Xoshiro256PlusPlus, kind: Kind, repo: &str, subject: &str) -> String {
    let c = pick(rng, conditions(repo));
    match kind {
        Kind::Bug => {
            let id: u32 = rng.random();
            format!(
                "**Steps to reproduce**\n\n1. Open {subject}.\n2. Try it {c}.\n\n**Expected:** it works as it does \
                 otherwise.\n**Actual:** an error; request id `{id:08x}` in the logs.\n"
            )
        }
        Kind::Feature => {
            let who = pick(
                rng,
                &[
                    "an account admin",
                    "a support agent",
                    "a customer",
                    "an accountant",
                    "a developer",
                ],
            );
            let why = pick(
                rng,
                &[
                    "I do not have to ask support",
                    "I can finish my month-end faster",
                    "we can close the deal with the pilot customer",
                    "I can automate it",
                ],
            );
            format!(
                "As {who}, I want this in {subject}, so that {why}.\n\n**Acceptance criteria**\n\n- [ ] works \
                 {c}\n- [ ] covered by tests\n- [ ] documented\n"
            )
        }
        Kind::Chore => format!("Housekeeping in {subject}; no behaviour change intended.\n"),
        Kind::Docs => {
            format!("The docs for {subject} are out of date; people keep asking in chat.\n")
        }
        Kind::Ux => format!(
            "Feedback from user testing: {subject} is confusing {c}. Design notes in the Figma file.\n"
        ),
        Kind::Perf => format!("p95 latency of {subject} doubled since last month, worst {c}.\n"),
        Kind::Security => {
            format!("Found in the internal review of {subject}. Details in the security tracker.\n")
        }
    }
}

/// A comment while an issue of `kind` is being understood.
pub(super) fn question(rng: &mut Xoshiro256PlusPlus, kind: Kind) -> &'static str {
    match kind {
        Kind::Bug | Kind::Perf | Kind::Security => pick(
            rng,
            &[
                "I can reproduce this on staging.",
                "Is this still happening after yesterday's deploy?",
                "Customers reported this three times this week.",
                "Looks like a regression from the last release.",
                "+1, hit this too.",
                "Probably the same root cause as the caching change.",
                "Sentry has a few hundred events for this.",
            ],
        ),
        Kind::Feature | Kind::Ux => pick(
            rng,
            &[
                "Do we have a design for this yet?",
                "Sales asked about this again.",
                "Could we ship a smaller first version?",
                "Let's talk about it in Thursday's planning.",
                "+1, the pilot customer needs this.",
            ],
        ),
        Kind::Chore | Kind::Docs => pick(
            rng,
            &[
                "Good idea, this keeps coming up.",
                "Let's do it before the next release.",
                "Happy to pair on this.",
            ],
        ),
    }
}

/// A comment while someone works on an issue.
pub(super) fn progress(rng: &mut Xoshiro256PlusPlus) -> &'static str {
    pick(
        rng,
        &[
            "Started on this.",
            "The old code has no tests, adding some first.",
            "Halfway there, the migration is done.",
            "Found the cause: a missing index.",
            "Pairing on this tomorrow.",
            "Blocked for a day on staging, back at it.",
        ],
    )
}

/// A comment when an issue turned out bigger or smaller than estimated.
pub(super) fn reestimate(bigger: bool) -> &'static str {
    if bigger {
        "This is bigger than it looked: re-estimating."
    } else {
        "Simpler than expected, re-estimating down."
    }
}

/// A comment after the fix shipped.
pub(super) fn shipped(rng: &mut Xoshiro256PlusPlus) -> &'static str {
    pick(
        rng,
        &[
            "Deployed to staging, looks good.",
            "Verified in production.",
            "Thanks!",
            "Confirmed fixed.",
        ],
    )
}

/// A comment when an issue is closed without a fix.
pub(super) fn wontfix(rng: &mut Xoshiro256PlusPlus) -> &'static str {
    pick(
        rng,
        &[
            "Closing: this is replaced next quarter, not worth fixing now.",
            "Closing as won't fix: this works as intended.",
            "Closing, we can't reproduce this any more.",
        ],
    )
}

/// A comment asking the reporter for details.
pub(super) fn needs_info(author: &str) -> String {
    format!("@{author} could you add the steps to reproduce and the app version?")
}

/// The reporter's answer to [`needs_info`].
pub(super) fn info_reply(rng: &mut Xoshiro256PlusPlus) -> &'static str {
    pick(
        rng,
        &[
            "Version 3.14.2, happens every time.",
            "Added a screen recording.",
            "Only on the production account.",
        ],
    )
}

/// An estimate in words: `2 days (12 hours of work)`.
pub(super) fn effort(e: &crate::domain::Estimate, workday_hours: f64) -> String {
    use crate::domain::EstimateUnit;
    let n = e.amount;
    let unit = match (e.unit, n) {
        (EstimateUnit::Hour, 1) => "hour",
        (EstimateUnit::Hour, _) => "hours",
        (EstimateUnit::Day, 1) => "day",
        (EstimateUnit::Day, _) => "days",
        (EstimateUnit::Week, 1) => "week",
        (EstimateUnit::Week, _) => "weeks",
    };
    if e.unit == EstimateUnit::Hour {
        format!("{n} {unit} of work")
    } else {
        format!("{n} {unit} ({} hours of work)", e.hours(workday_hours))
    }
}

/// The title and description of a milestone of repository `repo` with `role`; `nth` counts earlier ones of that role.
pub(super) fn milestone(repo: &str, role: &str, nth: usize) -> (String, String) {
    let (title, description) = match (repo, role, nth) {
        ("api", "closed", 0) => (
            "Q3 hardening",
            "Stability and paper cuts before the autumn launch.",
        ),
        ("api", "closed", _) => ("Q2 stability sprint", "Error budgets back in the green."),
        ("api", "later", _) => (
            "Public API v2",
            "The next major version: cursor pagination, consistent errors, webhooks v2.",
        ),
        ("web", "hard", 0) => (
            "Accessibility compliance (EAA)",
            "Everything the external accessibility audit checks. The audit date is in the contract and \
             cannot move.\n\ndeadline/hard",
        ),
        ("web", "closed", _) => ("Summer redesign", "The new visual design on every page."),
        ("api", "on_track", _) => ("Usage-based billing", "Metering and invoices by usage."),
        ("web", "on_track", _) => (
            "Self-serve onboarding",
            "New customers get going without talking to sales.",
        ),
        ("mobile", "at_risk", 0) => (
            "Mobile 3.0 holiday release",
            "Offline mode and the new cart, for the December app-store release.",
        ),
        ("mobile", "later", _) => (
            "Tablet layouts",
            "Two-pane layouts for tablets and foldables.",
        ),
        ("infra", "later", _) => (
            "Kubernetes migration",
            "Move the remaining VMs to the cluster.",
        ),
        ("infra", "on_track", _) => (
            "Observability baseline",
            "Dashboards and alerts for every service.",
        ),
        _ => ("", ""),
    };
    if !title.is_empty() {
        return (title.to_owned(), description.to_owned());
    }
    let generic = match role {
        "closed" => "Stabilisation",
        "hard" => "Contract delivery",
        "at_risk" => "Year-end release",
        "later" => "Next major version",
        _ => "Quarterly goals",
    };
    let title = if nth == 0 {
        format!("{repo}: {generic}")
    } else {
        format!("{repo}: {generic} {}", nth + 1)
    };
    let description = if role == "hard" {
        format!("{generic} for {repo}; the date is agreed with a customer.\n\ndeadline/hard")
    } else {
        format!("{generic} for {repo}.")
    };
    (title, description)
}
