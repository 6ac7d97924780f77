//! Reading and writing the YAML files of the state repo and the config, with errors that name file, line and field.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Where in which file a YAML document went wrong, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// The file, as the user knows it (relative to the state repo where possible).
    pub file: PathBuf,
    /// 1-based line, when the parser knows it.
    pub line: Option<usize>,
    /// 1-based column, when the parser knows it.
    pub column: Option<usize>,
    /// The field path and the problem, e.g. `team[1].hours_per_week: invalid type: string "x", expected a number`.
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, " line {l}")?;
            if let Some(c) = self.column {
                write!(f, " column {c}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for YamlError {}

/// How far past its own size a YAML text may expand through aliases (`*name` repeating what `&name`
/// anchored), in bytes of scalars.
const EXPANSION_ALLOWANCE: u64 = 64 * 1024;

/// Refuses a text whose aliases repeat more than [`EXPANSION_ALLOWANCE`] bytes past its own size: a file
/// anyone may send in a pull request (an op file, a record) is read whole, and an anchored megabyte
/// repeated two thousand times took 3 GB and filed 406 issues of a megabyte each before it was stopped
/// (audit 136). Only a text that may hold an anchor is measured, so a snapshot's files cost nothing more.
fn within_expansion(text: &str, file: &Path) -> Result<(), YamlError> {
    if !may_anchor(text) {
        return Ok(());
    }
    let budget = std::cell::Cell::new(Some(
        u64::try_from(text.len())
            .unwrap_or(u64::MAX)
            .saturating_add(EXPANSION_ALLOWANCE),
    ));
    let measured = serde::de::DeserializeSeed::deserialize(
        Measure(&budget),
        yaml_serde::Deserializer::from_str(text),
    );
    match measured {
        // The budget spent, or the parser's own bound on aliases followed (`repetition limit exceeded`,
        // which it gives no kind of its own): the same trouble, said the same way, not as broken syntax
        // (audit 136).
        Err(e) if budget.get().is_none() || e.to_string().contains("repetition limit exceeded") => {
            Err(YamlError {
                file: file.to_path_buf(),
                line: None,
                column: None,
                message: format!(
                    "its aliases (`*name`) repeat what they anchor (`&name`) too much (past {} KiB more \
                 than the file holds, or more often than the parser follows): write each value out once, \
                 without anchors",
                    EXPANSION_ALLOWANCE / 1024
                ),
            })
        }
        // Any other error is the parser's own, and the typed parse says it with its place.
        _ => Ok(()),
    }
}

/// Whether `text` may hold a YAML anchor: a `&` that starts a token (after a space, a line's start, `[`,
/// `{` or `,`) and is followed by a name.
fn may_anchor(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, c)| {
        *c == b'&'
            && (i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b','))
            && b.get(i + 1).is_some_and(|n| !n.is_ascii_whitespace())
    })
}

/// Walks a YAML document as its aliases expand it, spending the budget on each scalar's bytes, and stops
/// once it is spent, leaving `None` there; nothing is kept.
struct Measure<'a>(&'a std::cell::Cell<Option<u64>>);

impl Measure<'_> {
    fn spend<E: serde::de::Error>(&self, bytes: usize) -> Result<(), E> {
        let left = self
            .0
            .get()
            .and_then(|left| left.checked_sub(u64::try_from(bytes).unwrap_or(u64::MAX).max(1)));
        self.0.set(left);
        left.map(|_| ())
            .ok_or_else(|| E::custom("the YAML expands past its allowance"))
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Measure<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Measure<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.spend(1)
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.spend(1)
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.spend(1)
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        self.spend(1)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.spend(v.len())
    }
    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<(), E> {
        self.spend(v.len())
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.spend(1)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.spend(1)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        serde::de::DeserializeSeed::deserialize(self, d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Measure(self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Measure(self.0))?.is_some() {
            map.next_value_seed(Measure(self.0))?;
        }
        Ok(())
    }
    fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        use serde::de::VariantAccess;
        let ((), variant) = data.variant_seed(Measure(self.0))?;
        variant.newtype_variant_seed(Measure(self.0))
    }
}

/// Parses `text` (the contents of `file`) as YAML into `T`.
pub fn parse<T: DeserializeOwned>(text: &str, file: &Path) -> Result<T, YamlError> {
    // A byte order mark (Notepad and other Windows editors write one) is not YAML's: the parser read it
    // as content, left an op file out as "broken" and called a config "more than one document".
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    within_expansion(text, file)?;
    // Tracking the path costs time on every value (reading 5,000 issue files: 155-162 ms -> 142-144 ms
    // without it), and a snapshot's files are almost always well formed: parse plainly, and only a file
    // that fails is parsed again for the error's exact path (the same text and parser, the same failure).
    if let Ok(value) = T::deserialize(yaml_serde::Deserializer::from_str(text)) {
        return Ok(value);
    }
    // A conflict git left in a file it merged: the markers are the reason, wherever the parser stopped
    // (audit 167: "line 4" of an op file whose marker was on line 3, and no word of a conflict).
    if let Some((line, marker)) = crate::ledger::parse::conflict_markers(text).first() {
        return Err(YamlError {
            file: file.to_path_buf(),
            line: Some(*line),
            column: Some(1),
            message: format!(
                "a git merge-conflict marker ({marker}): the file was merged with a conflict left in; \
                 keep what should stand of both sides and delete the marker lines"
            ),
        });
    }
    let de = yaml_serde::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        // A path the parser could not follow ends in `?` segments (`site.?`): name the part it knows.
        let path = e.path().to_string();
        let path = path
            .split('.')
            .take_while(|seg| !seg.starts_with('?'))
            .collect::<Vec<_>>()
            .join(".");
        let e = e.into_inner();
        let loc = e.location();
        // The parser writes positions into its message (a syntax error has two: the problem's and its
        // context's); we print the problem's up front instead.
        let mut message = without_positions(&e.to_string());
        let mut loc = loc.map(|l| (l.line(), l.column()));
        // A key given twice: the parser points at the start of the mapping and the text is no broken
        // YAML; name the lines that give it and what to do.
        let twice = duplicate_key(&message)
            .map(|key| (key.to_owned(), lines_of_key(text, key)))
            .filter(|(_, lines)| lines.len() > 1);
        // An unknown key in a list item: the parser points at the item's first line (`- op: …`), not at
        // the key (audit 114: "line 8" for a `note:` on line 11). The key's own line, from there on.
        if let Some(key) = message
            .split("unknown field `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            && let Some((line, _)) = loc
            && let Some(found) = key_line(text, line, key)
        {
            loc = Some(found);
        }
        // A value refused at a key the path names, where the parser points at the start of its mapping
        // (audit 127: "line 63" for the `timezone:` of line 65): the key's own line, from there on.
        else if let Some(key) = path
            .rsplit('.')
            .next()
            .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'))
            && let Some((line, _)) = loc
            && key_line(text, line, key).is_some_and(|(n, _)| n != line)
        {
            loc = key_line(text, line, key);
        }
        if let Some((key, lines)) = twice {
            let listed: Vec<String> = lines.iter().map(ToString::to_string).collect();
            message = format!(
                "`{key}` is given more than once (lines {}): keep one, with everything it should hold",
                crate::prose::and_list(&listed)
            );
            loc = lines.get(1).map(|l| (*l, 1));
        } else if !message.contains(" as u128")
            && !message.contains(" as i128")
            && yaml_serde::from_str::<yaml_serde::Value>(text).is_err()
        {
            // Text that is no YAML at all (rather than YAML of the wrong shape) fails as any value too
            // (a number too large for any value also does: that is no broken syntax, audit 89). A tab
            // in the indentation of that line or the one before is the usual cause, and is invisible in
            // most editors (audit 120): named.
            let tabbed = loc.and_then(|(line, _)| {
                (line.saturating_sub(1).max(1)..=line).find(|n| {
                    text.lines().nth(n - 1).is_some_and(|l| {
                        l.chars()
                            .take_while(|c| c.is_whitespace())
                            .any(|c| c == '\t')
                    })
                })
            });
            match tabbed {
                Some(n) => message.push_str(&format!(
                    " — line {n} is indented with a tab: YAML indents with spaces only"
                )),
                None => message.push_str(
                    " — the YAML syntax is broken: check the indentation and the quotes on that line and the one before",
                ),
            }
        }
        // The parser also prefixes the path it knows, which stops at the parent of a failing value;
        // the tracked path is exact, so use that.
        if let Some((prefix, rest)) = message.split_once(": ")
            && !prefix.contains(' ')
            && path.starts_with(prefix)
        {
            message = rest.to_owned();
        }
        // In words, not Rust's types: "expected u32" is "a whole number from 0".
        let mut message = crate::prose::type_words(&message);
        if path != "." && !path.is_empty() {
            message = format!("{path}: {message}");
        }
        YamlError {
            file: file.to_path_buf(),
            line: loc.map(|l| l.0),
            column: loc.map(|l| l.1),
            message,
        }
    })
}

/// The first line from `line` on (1-based) that gives `key` (`key:`, or `- key:` in a list), with the
/// key's column.
fn key_line(text: &str, line: usize, key: &str) -> Option<(usize, usize)> {
    text.lines()
        .enumerate()
        .skip(line.saturating_sub(1))
        .find_map(|(n, l)| {
            let body = l.trim_start();
            let body = body.strip_prefix("- ").map_or(body, str::trim_start);
            body.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
                .then(|| (n + 1, l.len() - body.len() + 1))
        })
}

/// The key a parser's "duplicate field `KEY`" (or "duplicate entry with key \"KEY\"") names.
fn duplicate_key(message: &str) -> Option<&str> {
    if let Some(rest) = message.split("duplicate field `").nth(1) {
        return rest.split('`').next();
    }
    message
        .split("duplicate entry with key \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
}

/// The lines (from 1) of `text` that give `key` at the same indentation as its first.
fn lines_of_key(text: &str, key: &str) -> Vec<usize> {
    let mut indent = None;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let at = line.len() - trimmed.len();
        let gives = trimmed
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'));
        if gives && indent.is_none_or(|i| i == at) {
            indent = Some(at);
            out.push(n + 1);
        }
    }
    out
}

/// `message` without its ` at line N column M` positions.
fn without_positions(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" at line ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " at line ".len()..];
        let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let n = digits(after);
        match after[n..].strip_prefix(" column ") {
            Some(col) if n > 0 && digits(col) > 0 => rest = &col[digits(col)..],
            _ => {
                out.push_str(" at line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Serialises `value` as YAML text in the state repo's canonical form (struct field order, block style).
pub fn to_string<T: Serialize>(value: &T, file: &Path) -> Result<String, YamlError> {
    yaml_serde::to_string(value).map_err(|e| YamlError {
        file: file.to_path_buf(),
        line: None,
        column: None,
        message: format!("cannot serialise: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Aliases that repeat an anchored value far past the file's own size are refused before the file is
    /// read (audit 136: a megabyte repeated two thousand times took 3 GB); a few small ones read.
    #[test]
    fn aliases_that_expand_a_file_far_past_its_size_are_refused() {
        let big = "x".repeat(10_000);
        let bomb = format!("items:\n- &b {big}\n{}", "- *b\n".repeat(20));
        let Err(e) = parse::<serde_json::Value>(&bomb, Path::new("ops/pending/C-0001.yaml")) else {
            panic!("not refused");
        };
        assert!(e.message.contains("aliases (`*name`) repeat"), "{e}");
        let nested = format!(
            "a: &a [{big}, {big}]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c]\n"
        );
        assert!(
            parse::<serde_json::Value>(&nested, Path::new("f.yaml")).is_err(),
            "nested"
        );
        // Small values, repeated level by level (audit 136's crafted op file): refused as aliases too,
        // not as broken syntax.
        let mut laughs = "- &o0 {op: set_priority, issue: acme/api#1, priority: p/0}\n".to_owned();
        for n in 1..7 {
            laughs.push_str(&format!(
                "- &o{n} [{}]\n",
                vec![format!("*o{}", n - 1); 10].join(",")
            ));
        }
        let Err(e) = parse::<serde_json::Value>(&laughs, Path::new("f.yaml")) else {
            panic!("not refused");
        };
        assert!(e.message.contains("aliases (`*name`) repeat"), "{e}");
        let fine = "a: &a {x: 1, y: two}\nb: *a\nc: *a\n";
        let v = parse::<serde_json::Value>(fine, Path::new("f.yaml")).unwrap();
        assert_eq!(v["c"]["y"], "two");
        assert!(!may_anchor("title: R & D\nbody: a&b, a &\n"));
        assert!(may_anchor("a: &x 1\n") && may_anchor("- [&x 1]\n"));
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Config {
        team: Vec<Member>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Member {
        name: String,
        hours_per_week: f64,
    }

    #[test]
    fn a_byte_order_mark_is_not_content() {
        let config = "forecast:\n  trials: 500\n";
        let read = |text: &str| crate::config::Config::parse(text, Path::new("commitea.yaml"));
        let marked = read(&format!("\u{feff}{config}"));
        assert_eq!(marked.ok(), read(config).ok());
        let op = "id: C-0005\nsource: apply_changes\ncreated_at: 2026-11-27T14:00:00Z\nby: amara\napproved: true\n\
                  destructive: true\nops:\n- op: close_issue\n  issue: acme/web#83\nsummary: close it\nconsequence: []\n";
        let file = parse::<crate::ops::OpFile>(&format!("\u{feff}{op}"), Path::new("C-0005.yaml"));
        assert!(file.is_ok(), "{file:?}");
    }

    #[test]
    fn a_key_given_twice_names_both_lines_and_says_to_keep_one() {
        let text = "team:\n  - name: a\n    hours_per_week: 40\n\nteam:\n  - name: b\n    hours_per_week: 20\n";
        let e = parse::<Config>(text, Path::new("commitea.yaml")).unwrap_err();
        assert_eq!(
            e.message,
            "`team` is given more than once (lines 1 and 5): keep one, with everything it should hold"
        );
        assert_eq!(e.line, Some(5));
        assert!(!e.message.contains("syntax"), "{}", e.message);
    }

    #[test]
    fn a_bad_value_is_named_by_its_whole_path_file_and_line() {
        let good =
            "team:\n  - name: a\n    hours_per_week: 40\n  - name: b\n    hours_per_week: 20\n";
        let config: Config = parse(good, Path::new("commitea.yaml")).unwrap();
        assert_eq!(config.team[1].name, "b");
        assert_eq!(config.team[1].hours_per_week, 20.0);

        let bad = good.replace("20", "lots");
        let e = parse::<Config>(&bad, Path::new("commitea.yaml")).unwrap_err();
        assert_eq!(
            e.message,
            "team[1].hours_per_week: invalid type: string \"lots\", expected a number"
        );
        assert_eq!((e.line, e.column), (Some(5), Some(21)));
        assert_eq!(e.file, Path::new("commitea.yaml"));

        let unknown = good.replace("    hours_per_week: 40", "    hours: 40");
        let e = parse::<Config>(&unknown, Path::new("commitea.yaml")).unwrap_err();
        assert!(
            e.message
                .starts_with("team[0].hours: unknown field `hours`"),
            "{}",
            e.message
        );
        assert_eq!(e.line, Some(3));
        // An unknown key below an item's first line is named at its own line (audit 114: the item's).
        let later = good.replace(
            "    hours_per_week: 40\n",
            "    hours_per_week: 40\n    note: x\n",
        );
        let e = parse::<Config>(&later, Path::new("commitea.yaml")).unwrap_err();
        assert!(
            e.message.starts_with("team[0].note: unknown field `note`"),
            "{}",
            e.message
        );
        assert_eq!((e.line, e.column), (Some(4), Some(5)));
    }

    #[test]
    fn a_number_of_the_wrong_kind_is_said_in_words_and_not_as_broken_syntax() {
        // "as u128, expected u64 — the YAML syntax is broken" for a seed too large (audit 89).
        for (yaml, said) in [
            (
                "forecast:\n  seed: 18446744073709551616\n",
                "forecast.seed: invalid type: integer `18446744073709551616` (too large), expected a whole number from 0",
            ),
            (
                "forecast:\n  trials: -5\n",
                // The range the key takes, not serde's "from 0" (audit 150).
                "forecast.trials: invalid value: integer `-5`, expected a whole number between 1 and 1000000",
            ),
        ] {
            let e = parse::<crate::config::Config>(yaml, Path::new("commitea.yaml")).unwrap_err();
            assert_eq!(e.message, said);
            assert_eq!(e.line, Some(2), "{said}");
        }
        assert!(crate::config::Config::parse("~\n", Path::new("commitea.yaml")).is_ok());
    }

    #[test]
    fn a_syntax_error_names_what_the_parser_knows_and_one_position() {
        let broken = "team:\n  - name: a\n     hours_per_week: 40\n";
        let e = parse::<Config>(broken, Path::new("commitea.yaml")).unwrap_err();
        let text = e.to_string();
        assert!(!text.contains('?'), "{text}");
        assert_eq!(text.matches(" column ").count(), 1, "{text}");
        assert!(text.contains("the YAML syntax is broken"), "{text}");
        assert_eq!(
            without_positions("x at line 3 column 4, while y at line 2 column 1"),
            "x, while y"
        );
        assert_eq!(without_positions("at line of fire"), "at line of fire");
        // A value refused below a mapping's first key is placed at its own key (audit 127: the line of
        // `working_days:` for a bad `timezone:`).
        let zone =
            "calendar:\n  working_days: [mon, tue]\n  workday_hours: 6\n  timezone: Mars/Olympus\n";
        let e = parse::<crate::config::Config>(zone, Path::new("commitea.yaml")).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.to_string().contains("calendar.timezone"), "{e}");
        assert!(
            parse::<crate::config::Config>("calendar:\n  timezone: Z\n", Path::new("c")).is_ok()
        );
        // A tab in the indentation is named, with its line (audit 120).
        let tabbed = "team:\n  - name: a\n\thours_per_week: 40\n";
        let e = parse::<Config>(tabbed, Path::new("commitea.yaml")).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("line 3 is indented with a tab: YAML indents with spaces only"),
            "{text}"
        );
    }
}
