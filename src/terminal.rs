//! Whether a person watches the log: what decides progress that updates in place and colour.

use std::io::IsTerminal;

/// Whether stderr is a terminal a person watches: a terminal, and not a CI job's. Gitea's and Forgejo's
/// runners (and act's host mode) give a step a pseudo-terminal, and their log viewer turns every `\r`
/// of a progress line into a line of its own, and shows colour codes as text (audit 172: 241 lines of
/// "sync acme/api: n/241 issues" in one job's log).
pub fn watched() -> bool {
    std::io::stderr().is_terminal() && !in_ci()
}

/// Whether the process runs as a CI job: `CI`, `GITHUB_ACTIONS` or `GITEA_ACTIONS` set (and not to
/// `false`), as Gitea's and Forgejo's runners, GitHub's and most others set them.
fn in_ci() -> bool {
    ["CI", "GITHUB_ACTIONS", "GITEA_ACTIONS"].iter().any(|k| {
        std::env::var(k)
            .is_ok_and(|v| !v.is_empty() && !v.eq_ignore_ascii_case("false") && v != "0")
    })
}
