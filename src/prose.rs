//! Counts and lists in the sentences CommiTea writes: warnings, commit messages, the views' reasons.
//!
//! One definition, so a message never reads "15 issue(s)" in one place and "15 issues" in another.

/// `text` as one line for a log or a commit message: control characters (a newline or an escape
/// sequence in a milestone's title, say) and bidirectional overrides become spaces. Names come from
/// anyone who can write on Gitea; one with a newline forged log lines (" ERROR token leaked") and one
/// with an escape sequence cleared the terminal of whoever read `git log`.
pub(crate) fn one_line(text: &str) -> String {
    crate::site::text::clean(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Logs `message` as a warning once per process for `key`, however often the code that finds it runs (a
/// command resolves its config, and reads the committed forecast, more than once).
pub(crate) fn warn_once(key: &str, message: &str) {
    static SAID: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut said = SAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if said.insert(key.to_owned()) {
        tracing::warn!("{message}");
    }
}

/// Text cut to at most `max` characters, an ellipsis ending what was cut, and never inside what a reader
/// sees as one character (a grapheme cluster: a family emoji, a letter and its accents, a flag), which is
/// kept whole or left out whole (audit 95: a cut left half a flag, a bare "e" of an "é", a dangling
/// joiner).
pub(crate) fn clip(text: &str, max: usize) -> String {
    cut_whole(text, max, |s| s.chars().count())
}

/// Text cut to at most `columns` terminal columns (a CJK character takes two, a combining mark none),
/// whole grapheme clusters, an ellipsis ending what was cut; and padded with spaces to `columns` when
/// `pad` (a table's column: `{:<width$}` pads by characters, and a Japanese title came out four columns
/// too wide; audit 95).
pub(crate) fn fit_columns(text: &str, columns: usize, pad: bool) -> String {
    let mut out = cut_whole(text, columns, self::columns);
    if pad {
        let w = self::columns(&out);
        out.extend(std::iter::repeat_n(' ', columns.saturating_sub(w)));
    }
    out
}

/// `text` whole when its `size` is at most `max`, else its first grapheme clusters whose sizes sum to at
/// most `max` less one, and an ellipsis (of size one, as a character and a column).
fn cut_whole(text: &str, max: usize, size: impl Fn(&str) -> usize) -> String {
    use unicode_segmentation::UnicodeSegmentation;
    if size(text) <= max {
        return text.to_owned();
    }
    let room = max.saturating_sub(1);
    let (mut kept, mut used) = (String::new(), 0);
    for g in text.graphemes(true) {
        let n = size(g);
        if used + n > room {
            break;
        }
        used += n;
        kept.push_str(g);
    }
    format!("{}…", kept.trim_end())
}

/// How many terminal columns `text` takes.
pub(crate) fn columns(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// A count and its noun: `1 issue`, `15 issues`, `0 issues`.
pub(crate) fn count<N: std::fmt::Display + PartialEq + From<u8>>(
    n: N,
    one: &str,
    many: &str,
) -> String {
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}

/// A move in working days, signed and said in full (a bare "d" read as calendar days): `+1 working
/// day`, `−11 working days` (the minus sign), `0 working days`.
pub(crate) fn working_days_moved(n: i64) -> String {
    format!(
        "{} {}",
        signed(n),
        if n.unsigned_abs() == 1 {
            "working day"
        } else {
            "working days"
        }
    )
}

/// A day count with its sign, the minus sign (−) as typeset for negatives: `+3`, `−2`, `0`. One sign
/// for the site, the CLI and the consequence ("-1" beside "−1" read as two styles: audits 110, 115).
pub(crate) fn signed(n: i64) -> String {
    match n {
        0 => "0".to_owned(),
        n if n > 0 => format!("+{n}"),
        n => format!("\u{2212}{}", n.unsigned_abs()),
    }
}

/// A p80 that went between a date and beyond the horizon, in words (`left the horizon`, `came within
/// the horizon`): such a move has no day to count to — counted, it runs to the horizon (audit 101 read
/// "+451 working days", audit 104 "-300"). `None` for a move between two dates, or two beyonds.
pub(crate) fn across_horizon(before_p80: &str, after_p80: &str) -> Option<&'static str> {
    let beyond = crate::forecast::When::BeyondHorizon.to_string();
    match (before_p80 == beyond, after_p80 == beyond) {
        (false, true) => Some("left the horizon"),
        (true, false) => Some("came within the horizon"),
        _ => None,
    }
}

/// A p80's move: [`across_horizon`] where it crossed it, else [`working_days_moved`].
pub(crate) fn p80_moved(before_p80: &str, after_p80: &str, working_days: i64) -> String {
    across_horizon(before_p80, after_p80)
        .map_or_else(|| working_days_moved(working_days), ToOwned::to_owned)
}

/// Hours: whole numbers without decimals, others with one.
pub(crate) fn hours(h: f64) -> String {
    // `+ 0.0` turns a negative zero (a rounded -0.04) into a plain 0.
    let tenths = (h * 10.0).round() / 10.0 + 0.0;
    if tenths.fract() == 0.0 {
        format!("{tenths:.0}")
    } else {
        format!("{tenths:.1}")
    }
}

/// [`and_list`] of the first `named` items, the rest counted: `a, b and 3 more`.
pub(crate) fn and_list_at_most(items: &[String], named: usize) -> String {
    let mut shown: Vec<String> = items.iter().take(named).cloned().collect();
    if items.len() > named {
        shown.push(format!("{} more", items.len() - named));
    }
    and_list(&shown)
}

/// Joins names as prose: `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A probability as a whole percentage that never rounds to certainty it does not have, nor up to a
/// milestone status's line it is below (0.497 beside "late" was "50%"; audit 96).
pub fn percent(p: f64) -> String {
    use crate::views::runway::MilestoneStatus;
    let n = (p * 100.0).round();
    let under = [
        MilestoneStatus::AT_RISK_FROM,
        MilestoneStatus::ON_TRACK_FROM,
    ]
    .into_iter()
    .find(|line| p < *line && n >= (line * 100.0).round());
    if n >= 100.0 && p < 1.0 {
        ">99%".to_owned()
    } else if n <= 0.0 && p > 0.0 {
        "<1%".to_owned()
    } else if let Some(line) = under {
        format!("<{:.0}%", line * 100.0)
    } else {
        format!("{n:.0}%")
    }
}

/// A serde error in words a caller can act on: Rust's type names said plainly, and the place in a text
/// the caller never typed (`at line 1 column 17`) left out.
pub(crate) fn serde_message(message: &str) -> String {
    let cut = message
        .rfind(" at line ")
        .filter(|&i| message[i..].contains(" column "))
        .map_or(message, |i| &message[..i]);
    type_words(&cut.replace('`', "\""))
}

/// A serde message's Rust types in words: `expected u32` is `expected a whole number from 0`, an
/// integer read `as u128` is one too large.
pub(crate) fn type_words(message: &str) -> String {
    let mut s = message
        .replace("floating point", "number")
        .replace(" as u128", " (too large)")
        .replace(" as i128", " (too large)")
        // A null (`~`, or a key with nothing after it) is no "unit value" to a reader (audit 153).
        .replace(
            "invalid type: unit value, expected ",
            "is empty (~ or nothing): leave the key out for its default, or give ",
        );
    // `expected struct BacktestConfig` names a Rust type: it is a section of keys.
    while let Some(i) = s.find("expected struct ") {
        let name_at = i + "expected struct ".len();
        let end = s[name_at..]
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .map_or(s.len(), |n| name_at + n);
        s.replace_range(i..end, "expected a section of keys");
    }
    for (rust, words) in [
        ("u8", "a whole number from 0 to 255"),
        ("u16", "a whole number from 0 to 65535"),
        ("u32", "a whole number from 0"),
        ("u64", "a whole number from 0"),
        ("usize", "a whole number from 0"),
        ("i32", "a whole number"),
        ("i64", "a whole number"),
        ("f32", "a number"),
        ("f64", "a number"),
    ] {
        s = s.replace(&format!("expected {rust}"), &format!("expected {words}"));
    }
    s
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_null_and_a_section_are_said_in_words() {
        assert_eq!(
            super::type_words("forecast.trials: invalid type: unit value, expected a whole number"),
            "forecast.trials: is empty (~ or nothing): leave the key out for its default, or give a \
             whole number"
        );
        assert_eq!(
            super::type_words(
                "backtest: invalid type: string \"x\", expected struct BacktestConfig"
            ),
            "backtest: invalid type: string \"x\", expected a section of keys"
        );
    }

    #[test]
    fn a_cut_never_splits_what_a_reader_sees_as_one_character() {
        let family = "👩\u{200d}👩\u{200d}👧";
        assert_eq!(
            super::clip(&format!("ab{family}cd"), 8),
            format!("ab{family}…")
        );
        assert_eq!(super::clip(&format!("ab{family}cd"), 6), "ab…");
        assert_eq!(super::clip("abe\u{301}\u{302}fg", 6), "abe\u{301}\u{302}…");
        assert_eq!(super::clip("abe\u{301}\u{302}fg", 4), "ab…");
        assert_eq!(super::clip("🇯🇵🇯🇵🇯🇵", 4), "🇯🇵…");
        assert_eq!(super::clip("short", 5), "short");
        // Columns: a CJK character takes two, padded to the width asked.
        assert_eq!(super::fit_columns("新用户登录", 7, false), "新用户…");
        assert_eq!(super::columns(&super::fit_columns("新用户", 8, true)), 8);
        assert_eq!(super::fit_columns("Cafe\u{301}", 6, true), "Cafe\u{301}  ");
    }

    #[test]
    fn a_percentage_never_rounds_up_to_a_status_line_it_is_below() {
        assert_eq!(super::percent(0.497), "<50%");
        assert_eq!(super::percent(0.5), "50%");
        assert_eq!(super::percent(0.796), "<80%");
        assert_eq!(super::percent(0.8), "80%");
        assert_eq!(super::percent(0.494), "49%");
        assert_eq!(super::percent(0.9996), ">99%");
        assert_eq!(super::percent(0.004), "<1%");
    }

    use super::*;

    #[test]
    fn counts_say_one_in_the_singular_and_every_other_number_in_the_plural() {
        assert_eq!(count(1, "issue", "issues"), "1 issue");
        assert_eq!(count(0, "issue", "issues"), "0 issues");
        assert_eq!(count(15_i64, "day", "days"), "15 days");
        assert_eq!(count(-1_i64, "day", "days"), "-1 days");
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(working_days_moved(1), "+1 working day");
        assert_eq!(working_days_moved(-11), "\u{2212}11 working days");
        assert_eq!(working_days_moved(0), "0 working days");
        assert_eq!(and_list(&names(&[])), "");
        assert_eq!(and_list(&names(&["a"])), "a");
        assert_eq!(and_list(&names(&["a", "b", "c"])), "a, b and c");
    }
}
