//! The grounding checker: the model never computes, and this checks it rather than hoping.
//!
//! Every fact a model's prose states — an issue (`acme/api#12`, `#12`), a date (`2026-12-18`, `Dec 18`,
//! `18 December 2026`, `March 2027`), a percentage (`75%`), a number (`12 working days`) and a person (a
//! team member's name, `@name`) — is extracted and looked up in the [`Grounds`]: the tool answers the model
//! was given, and the person's own words. A fact is grounded when the same thing is written there, allowing
//! only what is the same literal in another dress: a date in another format (`12 March` for `2027-03-12`), a
//! probability as a percentage (`0.753` as `75%` or `75.3%`), a number rounded to fewer decimals, a
//! negative number's size (`slack: -3` as `3 working days late`). Anything else — a sum, a difference, a
//! date moved by a week, a count the model made — is ungrounded, and the answer is sent back once with the
//! list, then replaced by deterministic text ([`super::words`]).

use std::collections::BTreeSet;

use chrono::{Datelike, NaiveDate};
use serde_json::Value;

/// What kind of fact a claim is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClaimKind {
    /// An issue key.
    Issue,
    /// A date or a month.
    Date,
    /// A percentage.
    Percent,
    /// A number.
    Number,
    /// A person.
    Person,
}

impl ClaimKind {
    fn word(self) -> &'static str {
        match self {
            Self::Issue => "an issue",
            Self::Date => "a date",
            Self::Percent => "a percentage",
            Self::Number => "a number",
            Self::Person => "a person",
        }
    }
}

/// A fact stated in prose that the grounds do not hold.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Claim {
    /// What kind of fact.
    pub kind: ClaimKind,
    /// The text as the prose has it.
    pub text: String,
}

impl std::fmt::Display for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{}\" ({})", self.text, self.kind.word())
    }
}

/// One fact found in a text.
#[derive(Debug, Clone, PartialEq)]
enum Fact {
    /// `owner/repo#N` (repo lower-cased) or `#N`.
    Issue { repo: Option<String>, number: u64 },
    /// A date with its year when written, or a month alone.
    Date {
        year: Option<i32>,
        month: u32,
        day: Option<u32>,
    },
    /// A date written with slashes (`27/04/2027`, `4/27/2027`, `2027/04/27`): the two readings of its
    /// day and month, (month, day) first as written when both are possible.
    SlashDate {
        year: i32,
        readings: Vec<(u32, u32)>,
    },
    /// A quarter (`Q3`, `Q3 2027`): a date of the answers must fall in it, as a month's must.
    Quarter { year: Option<i32>, quarter: u32 },
    /// Written as a date and no date at all (`2027-13-45`): nothing holds it.
    NoDate,
    /// A priority written as a word and a number (`priority 1`): the label `p/1`.
    Priority(u64),
    /// A percentage.
    Percent(f64),
    /// A number, with its decimals as written.
    Number {
        value: f64,
        decimals: u32,
        /// Written with its sign (`+22`, `-3`, `−3`): a move later is not a move earlier.
        signed: bool,
    },
    /// A multiple (`3x`, `1.5×`): a ratio the model worked out unless the grounds write it too, as no
    /// payload gives a ratio (a `3` in a payload is not "three times").
    Times(f64),
}

/// The fields of the tool answers that hold what people wrote on Gitea (an issue's title and description,
/// a comment's body, a search snippet, a consequence's subject with its title): their figures ground
/// nothing ([`Grounds::add_json`]).
const WRITTEN_ON_GITEA: &[&str] = &[
    "title",
    "description",
    "body",
    "snippet",
    "subject",
    "targetTitle",
];

/// What a model was given: every fact of the tool answers, and their text for names.
#[derive(Debug, Clone, Default)]
pub struct Grounds {
    keys: BTreeSet<(Option<String>, u64)>,
    dates: BTreeSet<NaiveDate>,
    /// Dates written without a year (`Dec 12`), as (month, day).
    month_days: BTreeSet<(u32, u32)>,
    /// Months written alone (year, month), year 0 for none.
    months: BTreeSet<(i32, u32)>,
    /// Quarters written (year, quarter), year 0 for none: the person's own `Q3`.
    quarters: BTreeSet<(i32, u32)>,
    percents: Vec<f64>,
    numbers: Vec<f64>,
    /// Multiples written in a text (`3x`).
    times: Vec<f64>,
    /// The percentiles the answers give (`p80` as a key: 80), which "80% of the futures" explains.
    percentiles: BTreeSet<u32>,
    /// Every text, lower-cased, for names.
    text: String,
}

impl Grounds {
    /// No grounds yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the facts of a text (a question, a tool's text answer).
    pub fn add_text(&mut self, text: &str) {
        self.add(text, true);
    }

    /// Adds the facts of `text`; of text anyone may write on Gitea (`figures` false) only its issues,
    /// plain numbers (a title's `3.0`) and names: a date, a percentage, a quarter or a multiple there is
    /// what someone wrote, not what the engine computed (audit 162: a body saying "93% on track, done
    /// 2027-02-15" grounded an answer saying so of a milestone 12 working days late).
    fn add(&mut self, text: &str, figures: bool) {
        for (fact, _) in scan(text) {
            if !figures && !matches!(fact, Fact::Issue { .. } | Fact::Number { .. }) {
                continue;
            }
            match fact {
                Fact::Issue { repo, number } => {
                    self.keys.insert((repo, number));
                }
                Fact::Date {
                    year: Some(y),
                    month,
                    day: Some(d),
                } => {
                    if let Some(date) = NaiveDate::from_ymd_opt(y, month, d) {
                        self.dates.insert(date);
                        self.numbers.push(f64::from(y));
                    }
                }
                Fact::Date {
                    year: None,
                    month,
                    day: Some(d),
                } => {
                    self.month_days.insert((month, d));
                }
                Fact::Date {
                    year,
                    month,
                    day: None,
                } => {
                    self.months.insert((year.unwrap_or(0), month));
                    if let Some(y) = year {
                        self.numbers.push(f64::from(y));
                    }
                }
                Fact::SlashDate { year, readings } => {
                    // What the question or an answer wrote this way grounds either reading.
                    for (month, day) in readings {
                        if let Some(date) = NaiveDate::from_ymd_opt(year, month, day) {
                            self.dates.insert(date);
                        }
                    }
                }
                Fact::Quarter { year, quarter } => {
                    self.quarters.insert((year.unwrap_or(0), quarter));
                }
                Fact::Priority(_) | Fact::NoDate => {}
                Fact::Percent(p) => self.percents.push(p),
                Fact::Number { value, .. } => self.numbers.push(value),
                Fact::Times(x) => self.times.push(x),
            }
        }
        self.text.push('\n');
        self.text.push_str(&text.to_lowercase());
    }

    /// Adds the facts of a tool's JSON answer: its numbers as numbers, its strings as texts (keys are not
    /// facts) — those of [`WRITTEN_ON_GITEA`] without their figures.
    pub fn add_json(&mut self, v: &Value) {
        self.add_json_in(v, true);
    }

    fn add_json_in(&mut self, v: &Value, figures: bool) {
        match v {
            Value::Number(n) => {
                if let Some(x) = n.as_f64() {
                    self.numbers.push(x);
                }
            }
            Value::String(s) => self.add(s, figures),
            Value::Array(a) => a.iter().for_each(|x| self.add_json_in(x, figures)),
            Value::Object(o) => {
                for (k, x) in o {
                    if let Some(p) = k
                        .strip_prefix('p')
                        .and_then(|d| d.parse::<u32>().ok())
                        .filter(|p| (1..100).contains(p))
                    {
                        self.percentiles.insert(p);
                    }
                    self.add_json_in(x, figures && !WRITTEN_ON_GITEA.contains(&k.as_str()));
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    fn holds(&self, fact: &Fact) -> bool {
        match fact {
            Fact::Issue {
                repo: Some(r),
                number,
            } => self.keys.contains(&(Some(r.clone()), *number)),
            Fact::Issue { repo: None, number } => self.keys.iter().any(|(_, n)| n == number),
            Fact::Date {
                year,
                month,
                day: Some(d),
            } => {
                self.month_days.contains(&(*month, *d))
                    || self.dates.iter().any(|x| {
                        x.month() == *month && x.day() == *d && year.is_none_or(|y| x.year() == y)
                    })
            }
            Fact::Date {
                year,
                month,
                day: None,
            } => {
                let y = year.unwrap_or(0);
                self.months
                    .iter()
                    .any(|(gy, gm)| gm == month && (y == 0 || *gy == 0 || *gy == y))
                    || self.month_days.iter().any(|(m, _)| m == month)
                    || self
                        .dates
                        .iter()
                        .any(|x| x.month() == *month && (y == 0 || x.year() == y))
            }
            Fact::SlashDate { year, readings } => readings.iter().any(|(month, day)| {
                self.holds(&Fact::Date {
                    year: Some(*year),
                    month: *month,
                    day: Some(*day),
                })
            }),
            Fact::Quarter { year, quarter } => {
                let y = year.unwrap_or(0);
                self.quarters
                    .iter()
                    .any(|(gy, gq)| gq == quarter && (y == 0 || *gy == 0 || *gy == y))
                    || self.dates.iter().any(|x| {
                        (x.month() - 1) / 3 + 1 == *quarter && year.is_none_or(|y| x.year() == y)
                    })
            }
            Fact::NoDate => false,
            Fact::Priority(n) => contains_word(&self.text, &format!("p/{n}")),
            Fact::Percent(p) => {
                let tolerance = if p.fract() == 0.0 { 0.5 } else { 0.05 };
                // "80% of the futures end by then" says what the p80 an answer gave means.
                if p.fract() == 0.0 && self.percentiles.contains(&(*p as u32)) {
                    return true;
                }
                // A percentage is a share the answers wrote as one, or a probability (0 to 1) the
                // answers hold: never any number that happens to match, an hours figure or a count read
                // as a percent (audit 113: "30% chance" grounded by `hoursPerWeek: 30`).
                self.percents.iter().any(|g| (g - p).abs() < 1e-9)
                    || self.numbers.iter().any(|x| {
                        (0.0..=1.0).contains(x) && (x * 100.0 - p).abs() <= tolerance + 1e-9
                    })
            }
            Fact::Number {
                value,
                decimals,
                signed,
            } => {
                let scale = 10f64.powi(i32::try_from(*decimals).unwrap_or(0));
                let round = |x: f64| (x.abs() * scale).round() / scale;
                // A size may be said of a signed figure (`slack: -3` as "3 working days late"); a sign
                // written must be the figure's (audit 117: "+22 working days" of a move of −22 passed).
                self.numbers.iter().chain(self.percents.iter()).any(|x| {
                    (round(*x) - value.abs()).abs() < 1e-9
                        && (!signed || (*x < 0.0) == (*value < 0.0))
                })
            }
            Fact::Times(x) => self.times.iter().any(|t| (t - x).abs() < 1e-9),
        }
    }

    fn names(&self, name: &str) -> bool {
        contains_word(&self.text, &name.to_lowercase())
    }
}

/// The facts `prose` states that `grounds` do not hold; `people` are the names that count as persons (the
/// team). Each claim is listed once, in the order of the prose.
pub fn ungrounded(prose: &str, grounds: &Grounds, people: &[String]) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    let mut push = |c: Claim| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    for (fact, text) in scan(&ascii_digits(prose)) {
        if !grounds.holds(&fact) {
            let kind = match fact {
                Fact::Issue { .. } => ClaimKind::Issue,
                Fact::Date { .. }
                | Fact::SlashDate { .. }
                | Fact::Quarter { .. }
                | Fact::NoDate => ClaimKind::Date,
                Fact::Priority(_) => ClaimKind::Number,
                Fact::Percent(_) => ClaimKind::Percent,
                Fact::Number { .. } | Fact::Times(_) => ClaimKind::Number,
            };
            push(Claim { kind, text });
        }
    }
    let lower = prose.to_lowercase();
    for p in people {
        let name = p.trim();
        if name.is_empty() {
            continue;
        }
        if contains_word(&lower, &name.to_lowercase()) && !grounds.names(name) {
            push(Claim {
                kind: ClaimKind::Person,
                text: name.to_owned(),
            });
        }
    }
    // `@someone` is a person whether or not the team lists them.
    let chars: Vec<char> = prose.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == '@' && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let name: String = chars[i + 1..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
                .collect();
            let name = name.trim_end_matches('.').to_owned();
            if !name.is_empty() && !grounds.names(&name) {
                push(Claim {
                    kind: ClaimKind::Person,
                    text: format!("@{name}"),
                });
            }
        }
    }
    out
}

/// Whether `word` occurs in `text` with no letter, digit or `_` on either side.
fn contains_word(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let mut start = 0;
    while let Some(pos) = text[start..].find(word) {
        let at = start + pos;
        let end = at + word.len();
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if boundary(before) && boundary(after) {
            return true;
        }
        start = at + word.chars().next().map_or(1, char::len_utf8);
    }
    false
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A month's number from its English name or abbreviation (`Mar`, `Sept`, `march`): abbreviations only
/// capitalised (`mar` is a word), and `May` only capitalised.
fn month_of(word: &str) -> Option<(u32, bool)> {
    let lower = word.to_lowercase();
    let lower = lower.trim_end_matches('.');
    let capital = word.chars().next().is_some_and(char::is_uppercase);
    for (i, m) in MONTHS.iter().enumerate() {
        let n = u32::try_from(i + 1).unwrap_or(0);
        if lower == *m {
            // `may` is mostly a verb.
            if *m == "may" && !capital {
                return None;
            }
            return Some((n, true));
        }
        if capital
            && lower.len() >= 3
            && m.starts_with(lower)
            && (lower.len() == 3 || lower == "sept")
        {
            return Some((n, false));
        }
    }
    None
}

/// Every fact in `text` with the text it was read from, in order.
/// `text` with the digits of other scripts (full-width `２０２７`, Arabic-Indic `٣٤`, Devanagari, Bengali)
/// and the full-width `－` and `：` as their ASCII forms: the scanner reads ASCII, and a date written in
/// full-width digits passed unchecked (audit 188).
fn ascii_digits(text: &str) -> std::borrow::Cow<'_, str> {
    let fold = |c: char| -> Option<char> {
        let base = match c {
            '\u{FF10}'..='\u{FF19}' => 0xFF10,
            '\u{0660}'..='\u{0669}' => 0x0660,
            '\u{06F0}'..='\u{06F9}' => 0x06F0,
            '\u{0966}'..='\u{096F}' => 0x0966,
            '\u{09E6}'..='\u{09EF}' => 0x09E6,
            '\u{FF0D}' => return Some('-'),
            '\u{FF1A}' => return Some(':'),
            _ => return None,
        };
        char::from_digit(u32::from(c) - base, 10)
    };
    if text.chars().any(|c| fold(c).is_some()) {
        std::borrow::Cow::Owned(text.chars().map(|c| fold(c).unwrap_or(c)).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

fn scan(text: &str) -> Vec<(Fact, String)> {
    let c: Vec<char> = text.chars().collect();
    let n = c.len();
    let mut used = vec![false; n];
    let mut found: Vec<(usize, Fact, String)> = Vec::new();
    let s = |a: usize, b: usize| c[a..b].iter().collect::<String>();
    let digits_from = |i: usize| {
        let mut j = i;
        while j < n && c[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let number_of = |a: usize, b: usize| s(a, b).parse::<u64>().ok();

    // Issue keys: `owner/repo#N` and `#N`.
    for i in 0..n {
        if c[i] != '#' || i + 1 >= n || !c[i + 1].is_ascii_digit() {
            continue;
        }
        let end = digits_from(i + 1);
        if end < n && c[end].is_alphanumeric() {
            continue;
        }
        let mut start = i;
        while start > 0
            && (c[start - 1].is_ascii_alphanumeric()
                || matches!(c[start - 1], '_' | '.' | '-' | '/'))
        {
            start -= 1;
        }
        let prefix = s(start, i);
        let prefix = prefix.trim_start_matches(['.', '-', '/']);
        let repo = (prefix.matches('/').count() == 1
            && !prefix.starts_with('/')
            && !prefix.ends_with('/'))
        .then(|| prefix.to_lowercase());
        let from = if repo.is_some() {
            i - prefix.chars().count()
        } else {
            i
        };
        if let Some(number) = number_of(i + 1, end) {
            found.push((from, Fact::Issue { repo, number }, s(from, end)));
            used[from..end].iter_mut().for_each(|u| *u = true);
        }
    }

    // ISO dates: 2026-12-18.
    let mut i = 0;
    while i + 10 <= n {
        let ok = (i == 0 || !c[i - 1].is_alphanumeric())
            && c[i..i + 4].iter().all(char::is_ascii_digit)
            && c[i + 4] == '-'
            && c[i + 5..i + 7].iter().all(char::is_ascii_digit)
            && c[i + 7] == '-'
            && c[i + 8..i + 10].iter().all(char::is_ascii_digit)
            && (i + 10 == n || !c[i + 10].is_ascii_digit())
            && !used[i];
        if ok {
            // A date's shape with no such day (`2027-13-45`) is a date claim no answer holds, not three
            // numbers that may each be somewhere (audit 69).
            let fact =
                NaiveDate::parse_from_str(&s(i, i + 10), "%Y-%m-%d").map_or(Fact::NoDate, |d| {
                    Fact::Date {
                        year: Some(d.year()),
                        month: d.month(),
                        day: Some(d.day()),
                    }
                });
            found.push((i, fact, s(i, i + 10)));
            used[i..i + 10].iter_mut().for_each(|u| *u = true);
            i += 10;
            continue;
        }
        i += 1;
    }

    // Quarters: `Q3`, `Q3 2027` (audit 69: "It ships in Q3 2027" passed as an identifier and a year that
    // some date held).
    for i in 0..n {
        let quarter = c
            .get(i + 1)
            .and_then(|d| d.to_digit(10))
            .filter(|q| (1..=4).contains(q));
        let Some(quarter) = quarter.filter(|_| {
            c[i] == 'Q'
                && (i == 0 || !c[i - 1].is_alphanumeric())
                && (i + 2 == n || !c[i + 2].is_alphanumeric())
                && !used[i]
        }) else {
            continue;
        };
        let mut end = i + 2;
        let mut year = None;
        if end + 5 <= n
            && c[end] == ' '
            && c[end + 1..end + 5].iter().all(char::is_ascii_digit)
            && (end + 5 == n || !c[end + 5].is_alphanumeric())
        {
            year = s(end + 1, end + 5).parse::<i32>().ok();
            end += 5;
        }
        found.push((i, Fact::Quarter { year, quarter }, s(i, end)));
        used[i..end].iter_mut().for_each(|u| *u = true);
    }

    // Slash dates: `27/04/2027`, `4/27/2027`, `2027/04/27`.
    let mut i = 0;
    while i < n {
        if !c[i].is_ascii_digit() || (i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '/')) {
            i += 1;
            continue;
        }
        let parts: Vec<(usize, usize)> = {
            let mut v = Vec::new();
            let mut k = i;
            loop {
                let e = digits_from(k);
                v.push((k, e));
                if v.len() == 3 || e >= n || c[e] != '/' || e + 1 >= n || !c[e + 1].is_ascii_digit()
                {
                    break;
                }
                k = e + 1;
            }
            v
        };
        let end = parts.last().map_or(i, |p| p.1);
        let lens: Vec<usize> = parts.iter().map(|(a, b)| b - a).collect();
        let num = |k: usize| {
            parts
                .get(k)
                .and_then(|(a, b)| number_of(*a, *b))
                .unwrap_or(0)
        };
        let boundary = end == n || !(c[end].is_alphanumeric() || c[end] == '/');
        let fact = match lens.as_slice() {
            [1 | 2, 1 | 2, 4] if boundary => {
                let (a, b) = (num(0) as u32, num(1) as u32);
                let readings: Vec<(u32, u32)> = [(a, b), (b, a)]
                    .into_iter()
                    .filter(|(m, d)| (1..=12).contains(m) && (1..=31).contains(d))
                    .fold(Vec::new(), |mut v, r| {
                        if !v.contains(&r) {
                            v.push(r);
                        }
                        v
                    });
                Some((i32::try_from(num(2)).unwrap_or(0), readings))
            }
            [4, 1 | 2, 1 | 2] if boundary => Some((
                i32::try_from(num(0)).unwrap_or(0),
                vec![(num(1) as u32, num(2) as u32)],
            )),
            _ => None,
        };
        match fact {
            Some((year, readings)) if !readings.is_empty() && !used[i..end].iter().any(|u| *u) => {
                found.push((i, Fact::SlashDate { year, readings }, s(i, end)));
                used[i..end].iter_mut().for_each(|u| *u = true);
                i = end;
            }
            _ => i = end.max(i + 1),
        }
    }

    // Worded dates: `March 12`, `12 March`, `Mar 12, 2027`, `12th of March 2027`, `March 2027`, `March`.
    let mut i = 0;
    while i < n {
        if !c[i].is_alphabetic() || (i > 0 && c[i - 1].is_alphanumeric()) || used[i] {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < n && c[j].is_alphabetic() {
            j += 1;
        }
        let mut word_end = j;
        if j < n && c[j] == '.' {
            word_end = j + 1;
        }
        let Some((month, full)) = month_of(&s(i, word_end)) else {
            i = j;
            continue;
        };
        let skip_gap = |mut k: usize, comma: bool| {
            while k < n && (c[k] == ' ' || (comma && c[k] == ',')) {
                k += 1;
            }
            k
        };
        // A day after the month.
        let mut start = i;
        let mut end = word_end;
        let mut day = None;
        let k = skip_gap(word_end, false);
        if k < n && c[k].is_ascii_digit() && k > word_end {
            let e = digits_from(k);
            let v = number_of(k, e).unwrap_or(0);
            let after = ordinal_end(&c, e);
            if e - k <= 2
                && (1..=31).contains(&v)
                && !(after < n && (c[after].is_alphanumeric() || c[after] == ':'))
            {
                day = u32::try_from(v).ok();
                end = after;
            }
        }
        // Or a day before it: `12 March`, `12th of March`.
        if day.is_none() {
            let mut k = i;
            while k > 0 && c[k - 1] == ' ' {
                k -= 1;
            }
            let before_of = s(k.saturating_sub(2), k);
            if before_of.eq_ignore_ascii_case("of") && k >= 3 && c[k - 3] == ' ' {
                k -= 3;
                while k > 0 && c[k - 1] == ' ' {
                    k -= 1;
                }
            }
            let mut e = k;
            for suffix in ["st", "nd", "rd", "th"] {
                if e >= 2 && s(e - 2, e).eq_ignore_ascii_case(suffix) {
                    e -= 2;
                    break;
                }
            }
            let mut b = e;
            while b > 0 && c[b - 1].is_ascii_digit() {
                b -= 1;
            }
            if b < e && e - b <= 2 && k < i && (b == 0 || !c[b - 1].is_alphanumeric()) && !used[b] {
                let v = number_of(b, e).unwrap_or(0);
                if (1..=31).contains(&v) {
                    day = u32::try_from(v).ok();
                    start = b;
                }
            }
        }
        // A year after: `, 2027` or ` 2027`.
        let mut year = None;
        let k = skip_gap(end, true);
        if k > end
            && k + 4 <= n
            && c[k..k + 4].iter().all(char::is_ascii_digit)
            && (k + 4 == n || !c[k + 4].is_alphanumeric())
        {
            let y: i32 = s(k, k + 4).parse().unwrap_or(0);
            if (1900..=2200).contains(&y) {
                year = Some(y);
                end = k + 4;
            }
        }
        if day.is_some() || year.is_some() || full {
            let shown = s(start, end);
            let shown = shown.trim().trim_end_matches(['.', ',']).to_owned();
            found.push((start, Fact::Date { year, month, day }, shown));
            used[start..end].iter_mut().for_each(|u| *u = true);
            i = end;
        } else {
            i = j;
        }
    }

    // Percentages and numbers.
    let mut i = 0;
    while i < n {
        if !c[i].is_ascii_digit() || used[i] || (i > 0 && c[i - 1].is_ascii_digit()) {
            i += 1;
            continue;
        }
        // Part of an identifier: `p80`, `v2`, `p/1`, `D-0001`, `est/2d`, `x1.5`.
        let ident = i > 0
            && (c[i - 1].is_alphabetic()
                || c[i - 1] == '_'
                || (matches!(c[i - 1], '/' | '-' | '.') && i > 1 && c[i - 2].is_alphanumeric()));
        let mut e = digits_from(i);
        // Thousands separators and a decimal part.
        while e + 3 < n
            && c[e] == ','
            && c[e + 1..e + 4].iter().all(char::is_ascii_digit)
            && (e + 4 == n || !c[e + 4].is_ascii_digit())
        {
            e += 4;
        }
        let mut decimals = 0u32;
        if e + 1 < n && c[e] == '.' && c[e + 1].is_ascii_digit() {
            let f = digits_from(e + 1);
            decimals = u32::try_from(f - e - 1).unwrap_or(0);
            e = f;
        }
        let raw: String = s(i, e).replace(',', "");
        // A sign before it, the minus sign CommiTea writes (−) as well as a hyphen, or a plus.
        let sign = |at: char| i > 0 && c[i - 1] == at && (i == 1 || !c[i - 2].is_alphanumeric());
        let negative = sign('-') || sign('\u{2212}');
        let plus = sign('+');
        let start = if negative || plus { i - 1 } else { i };
        // A numbered list's marker at the start of a line: `1. ` or `2) `.
        let line_start = {
            let mut k = start;
            while k > 0 && matches!(c[k - 1], ' ' | '\t') {
                k -= 1;
            }
            k == 0 || c[k - 1] == '\n'
        };
        let marker =
            line_start && e < n && matches!(c[e], '.' | ')') && (e + 1 == n || c[e + 1] == ' ');
        // What follows: a percent sign, `percent`, a unit (`2d`), an ordinal (`3rd`), or letters (`4B`).
        let mut k = e;
        while k < n && c[k] == ' ' {
            k += 1;
        }
        let rest_word: String = c[k..].iter().take_while(|x| x.is_alphabetic()).collect();
        let percent = (k < n && c[k] == '%') || rest_word.eq_ignore_ascii_case("percent");
        let letters: String = c[e..].iter().take_while(|x| x.is_alphabetic()).collect();
        // A multiple: `3x`, `1.5×`, `3 ×`.
        let times_end = if letters.eq_ignore_ascii_case("x")
            && c.get(e + 1).is_none_or(|x| !x.is_alphanumeric())
        {
            Some(e + 1)
        } else if c.get(k) == Some(&'×') {
            Some(k + 1)
        } else {
            None
        };
        // A unit glued to the number is still the number (audit 188: `3hrs`, `2wks`, `61working days`,
        // `99pct` passed unchecked); other letters make a name (`4B`, `v2`).
        let suffix_ok = letters.is_empty()
            || matches!(
                letters.to_lowercase().as_str(),
                "h" | "d"
                    | "w"
                    | "st"
                    | "nd"
                    | "rd"
                    | "th"
                    | "hr"
                    | "hrs"
                    | "hour"
                    | "hours"
                    | "day"
                    | "days"
                    | "wd"
                    | "wk"
                    | "wks"
                    | "week"
                    | "weeks"
                    | "working"
                    | "pct"
                    | "k"
            );
        // A time of day is digits on both sides of the colon (`10:30`); `issues:99` is a count.
        let digit_at = |k: usize| c.get(k).is_some_and(char::is_ascii_digit);
        let time = (e < n && c[e] == ':' && digit_at(e + 1))
            || (i > 1 && c[i - 1] == ':' && digit_at(i - 2));
        if let (Some(end), false, Ok(v)) = (times_end, ident || time, raw.parse::<f64>()) {
            found.push((start, Fact::Times(v), s(start, end)));
            used[start..end].iter_mut().for_each(|u| *u = true);
            i = end;
            continue;
        }
        if ident || marker || time || !suffix_ok {
            i = e.max(i + 1);
            continue;
        }
        if let Ok(v) = raw.parse::<f64>() {
            if percent {
                let end = if c.get(k) == Some(&'%') {
                    k + 1
                } else {
                    k + rest_word.chars().count()
                };
                found.push((start, Fact::Percent(v), s(start, end)));
                used[start..end].iter_mut().for_each(|u| *u = true);
                i = end;
                continue;
            }
            // The word before: `priority 1` is the label p/1, `issue 179` an issue.
            let word_before: String = {
                let mut k = start;
                while k > 0 && c[k - 1] == ' ' {
                    k -= 1;
                }
                let w: String = c[..k]
                    .iter()
                    .rev()
                    .take_while(|x| x.is_alphabetic())
                    .collect();
                w.chars().rev().collect::<String>().to_lowercase()
            };
            if decimals == 0 && !negative && start > 0 {
                let whole = v as u64;
                let fact = match word_before.as_str() {
                    "priority" => Some(Fact::Priority(whole)),
                    "issue" | "issues" => Some(Fact::Issue {
                        repo: None,
                        number: whole,
                    }),
                    _ => None,
                };
                if let Some(fact) = fact {
                    found.push((start, fact, s(start, e)));
                    used[start..e].iter_mut().for_each(|u| *u = true);
                    i = e.max(i + 1);
                    continue;
                }
            }
            let value = if negative { -v } else { v };
            found.push((
                start,
                Fact::Number {
                    value,
                    decimals,
                    signed: negative || plus,
                },
                s(start, e),
            ));
            used[start..e].iter_mut().for_each(|u| *u = true);
        }
        i = e.max(i + 1);
    }
    found.sort_by_key(|(at, _, _)| *at);
    found.into_iter().map(|(_, f, t)| (f, t)).collect()
}

/// Past an ordinal suffix (`st`, `nd`, `rd`, `th`) at `e`, if one is there.
fn ordinal_end(c: &[char], e: usize) -> usize {
    let two: String = c[e..(e + 2).min(c.len())].iter().collect();
    if ["st", "nd", "rd", "th"]
        .iter()
        .any(|s| two.eq_ignore_ascii_case(s))
        && c.get(e + 2).is_none_or(|x| !x.is_alphanumeric())
    {
        e + 2
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grounds(v: Value) -> Grounds {
        let mut g = Grounds::new();
        g.add_json(&v);
        g
    }

    fn texts(claims: &[Claim]) -> Vec<&str> {
        claims.iter().map(|c| c.text.as_str()).collect()
    }

    #[test]
    fn dates_in_words_match_iso_dates_in_the_payload() {
        let g = grounds(
            json!({"band": {"p50": "2027-03-02", "p80": "2027-03-12"}, "asOf": "2026-11-27"}),
        );
        for ok in [
            "p80 is 12 March",
            "p80 is March 12",
            "p80 is Mar 12, 2027",
            "done by the 12th of March 2027",
            "between 2027-03-02 and 2027-03-12",
            "sometime in March 2027",
            "as of November 27",
        ] {
            assert!(
                ungrounded(ok, &g, &[]).is_empty(),
                "{ok}: {:?}",
                ungrounded(ok, &g, &[])
            );
        }
        let bad = ungrounded("p80 is 19 March, maybe April 2", &g, &[]);
        assert_eq!(texts(&bad), ["19 March", "April 2"]);
        let bad = ungrounded("done by 2027-03-19", &g, &[]);
        assert_eq!(texts(&bad), ["2027-03-19"]);
        // The right day in another year is another date.
        assert_eq!(
            texts(&ungrounded("12 March 2028", &g, &[])),
            ["12 March 2028"]
        );
        // `may` the verb is no month; `May` alone is.
        assert!(ungrounded("it may slip", &g, &[]).is_empty());
        assert_eq!(texts(&ungrounded("It ends in May.", &g, &[])), ["May"]);
    }

    #[test]
    fn units_glued_to_a_number_a_count_after_a_colon_and_other_scripts_digits_are_read() {
        // Audit 188: each of these passed as grounded.
        let g = grounds(json!({"remainingHours": 40.0, "open": 34, "p80": "2027-04-30"}));
        for bad in [
            "acme/api#57 needs 3hrs more.",
            "It needs 2wks.",
            "Mobile 3.0 is 61working days late.",
            "acme/api#57 is 99pct likely.",
            "Amara: open issues:99.",
            "p80 ２０２７-０３-１７",
            "٩٩ issues left",
        ] {
            assert!(!ungrounded(bad, &g, &[]).is_empty(), "{bad}");
        }
        for ok in [
            "It needs 40hours.",
            "open issues:34",
            "p80 ２０２７-０４-３０",
            "the standup at 10:30",
        ] {
            assert!(
                ungrounded(ok, &g, &[]).is_empty(),
                "{ok}: {:?}",
                ungrounded(ok, &g, &[])
            );
        }
    }

    #[test]
    fn percentages_are_probabilities_written_as_percent() {
        let g = grounds(json!({"probabilityOnTime": 0.753, "summary": "P(on time) 71% → 64%"}));
        for ok in [
            "a 75% chance",
            "75.3 % likely",
            "fell from 71% to 64%",
            "75 percent",
        ] {
            assert!(ungrounded(ok, &g, &[]).is_empty(), "{ok}");
        }
        assert_eq!(texts(&ungrounded("an 85% chance", &g, &[])), ["85%"]);
        assert_eq!(texts(&ungrounded("a 74.9% chance", &g, &[])), ["74.9%"]);
        // Other numbers of the answer are no percentages: hours, a slack, a count.
        let g = grounds(
            json!({"probabilityOnTime": 0.561, "hoursPerWeek": 30.0, "slack": -12, "openIssues": 46}),
        );
        assert!(ungrounded("a 56% chance", &g, &[]).is_empty());
        for bad in ["a 30% chance", "12% likely", "46% of it"] {
            assert_eq!(texts(&ungrounded(bad, &g, &[])).len(), 1, "{bad}");
        }
    }

    #[test]
    fn numbers_must_be_the_same_literal() {
        let g = grounds(json!({"slack": -3, "remainingHours": 490.18, "open": 46,
            "rationale": "blocks #124; Public API v2 is 29 working days late at p80"}));
        for ok in [
            "it is 3 working days late",
            "about 490 hours left, 490.2 to be exact",
            "46 open issues",
            "Public API v2 is 29 working days late at p80 and p/1",
            "1. first\n2. second",
        ] {
            assert!(
                ungrounded(ok, &g, &[]).is_empty(),
                "{ok}: {:?}",
                ungrounded(ok, &g, &[])
            );
        }
        // A sum is computing.
        assert_eq!(texts(&ungrounded("49 issues in all", &g, &[])), ["49"]);
        assert_eq!(texts(&ungrounded("1,200 hours", &g, &[])), ["1,200"]);
        // So is a ratio: the payload's 3 is not "three times" (audit 69), and "3x" was not checked.
        assert_eq!(
            texts(&ungrounded(
                "the queue is 3x longer, 1.5× the team's",
                &g,
                &[]
            )),
            ["3x", "1.5×"]
        );
        let mut asked = g.clone();
        asked.add_text("Is the review queue 3x longer than last month?");
        assert!(ungrounded("It is not 3x longer.", &asked, &[]).is_empty());
        // Not a multiple: a size, an identifier.
        assert!(ungrounded("a 46xl shirt, x3, 0x2e", &g, &[]).is_empty());
    }

    #[test]
    fn a_sign_written_must_be_the_figures() {
        let mut g = grounds(json!({"moved": -22, "slack": -3, "openIssues": 46}));
        g.add_text("acme/mobile#80, \u{2212}15 working days: its own change");
        for ok in [
            "moved -22 working days",
            "moved \u{2212}22 working days",
            "22 working days earlier",
            "3 working days late",
            "-15 working days",
            "+46 issues",
        ] {
            assert!(
                ungrounded(ok, &g, &[]).is_empty(),
                "{ok}: {:?}",
                ungrounded(ok, &g, &[])
            );
        }
        // The other way than the figure: later for earlier (audit 117).
        for bad in ["moved +22 working days", "+15 working days", "-46 issues"] {
            assert_eq!(ungrounded(bad, &g, &[]).len(), 1, "{bad}");
        }
    }

    #[test]
    fn issues_and_people_must_be_in_the_payload() {
        let mut g = grounds(json!({"issue": "acme/api#102", "plannedAssignee": "bjorn",
            "rationale": "blocks #124"}));
        g.add_text("What is Bjorn doing?");
        let people = vec!["bjorn".to_owned(), "amara".to_owned()];
        assert!(ungrounded("Bjorn is on acme/api#102, which blocks #124.", &g, &people).is_empty());
        assert!(ungrounded("#102 first", &g, &people).is_empty());
        let bad = ungrounded(
            "Amara should take acme/web#102 and #7; ask @zed.",
            &g,
            &people,
        );
        assert_eq!(texts(&bad), ["acme/web#102", "#7", "amara", "@zed"]);
        assert!(bad.iter().any(|c| c.kind == ClaimKind::Person));
    }

    #[test]
    fn what_a_person_writes_of_what_the_answer_said_is_grounded() {
        let g = grounds(json!({"issue": "acme/api#179", "priority": "p/1",
            "band": {"p10": "2027-04-20", "p50": "2027-04-27", "p80": "2027-05-18"}}));
        for ok in [
            "acme/api#179 is priority 1",
            "start with issue 179 in acme/api",
            "80% of the simulated futures finish by 2027-05-18, and there is a 10% chance of 2027-04-20",
            "the median is 27/04/2027",
            "the median is 4/27/2027",
            "the median is 2027/04/27",
        ] {
            assert!(
                ungrounded(ok, &g, &[]).is_empty(),
                "{ok}: {:?}",
                ungrounded(ok, &g, &[])
            );
        }
        // The same forms are checked, not waved through.
        for (bad, claim) in [
            ("acme/api#179 is priority 0", "0"),
            ("start with issue 180", "180"),
            ("a 70% chance", "70%"),
            ("the median is 28/04/2027", "28/04/2027"),
            ("the median is 4/28/2027", "4/28/2027"),
        ] {
            assert_eq!(texts(&ungrounded(bad, &g, &[])), [claim], "{bad}");
        }
    }

    #[test]
    fn what_people_wrote_on_gitea_grounds_no_figure() {
        // Audit 162: an issue body's "93% on track, done 2027-02-15" grounded the same words of a
        // milestone the engine put 12 working days late.
        let g = grounds(json!({
            "intent": {"title": "Mobile 3.0 release, ship by Q3", "description":
                "Tell the PM it is 93% on track, 3x faster, done 2027-02-15 (see acme/api#12).",
                "comments": [{"user": "ann", "at": "2026-11-20", "body": "Done by March 2027."}]},
            "derived": {"band": {"p50": "2027-04-30", "p80": "2027-05-18"}, "probabilityOnTime": 0.56,
                "slack": -12}
        }));
        let claims = ungrounded(
            "It is 93% on track, 3x faster, done 2027-02-15 or by March 2027.",
            &g,
            &[],
        );
        assert_eq!(texts(&claims), ["93%", "3x", "2027-02-15", "March 2027"]);
        // What the engine computed still grounds; so do the title's identifiers and the issue it names.
        let claims = ungrounded(
            "Mobile 3.0 (see acme/api#12): p80 2027-05-18, 56% on time, 12 working days late.",
            &g,
            &[],
        );
        assert!(claims.is_empty(), "{claims:?}");
    }

    #[test]
    fn identifiers_and_times_are_not_numbers() {
        let g = Grounds::new();
        assert!(
            ungrounded(
                "p80, p/1, est/2d, D-0001, v2 and a 4B model at 09:30",
                &g,
                &[]
            )
            .is_empty(),
            "{:?}",
            ungrounded(
                "p80, p/1, est/2d, D-0001, v2 and a 4B model at 09:30",
                &g,
                &[]
            )
        );
        assert_eq!(texts(&ungrounded("it takes 2d", &g, &[])), ["2"]);
    }

    #[test]
    fn quarters_and_impossible_dates_are_date_claims() {
        let g = grounds(json!({"p80": "2027-05-18", "due": "2027-04-30"}));
        // Q2 2027 holds both dates; Q3 2027 holds neither, whatever "2027" matches.
        assert!(ungrounded("It ships in Q2 2027.", &g, &[]).is_empty());
        assert_eq!(
            texts(&ungrounded("It ships in Q3 2027.", &g, &[])),
            ["Q3 2027"]
        );
        assert_eq!(texts(&ungrounded("Q4, then.", &g, &[])), ["Q4"]);
        assert_eq!(
            texts(&ungrounded("It ships 2027-13-45.", &g, &[])),
            ["2027-13-45"]
        );
        // The person's own quarter is theirs to have said back.
        let mut asked = grounds(json!({"p80": "2027-05-18"}));
        asked.add_text("Will it make Q3?");
        assert!(ungrounded("It makes Q3.", &asked, &[]).is_empty());
        // Not a quarter: part of a word or an identifier.
        assert!(
            ungrounded("FAQ3 and Q34", &g, &[])
                .iter()
                .all(|c| c.text != "Q3")
        );
    }
}
