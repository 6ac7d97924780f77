//! Reading, re-writing and appending to the directive ledger (`pm-state.md`).
//!
//! [`parse`] walks the Markdown's top-level blocks with pulldown-cmark's offset iterator and cuts the text
//! into entries exactly, so [`render`] of an untouched ledger gives back the same bytes. A level-2 heading whose
//! text starts with `D-` and a digit opens a directive; the directive is that heading, the blockquote after it
//! and the key/value list after that. Everything else is prose. A directive that is malformed becomes a
//! [`LedgerProblem`] and stays in the ledger as prose, so nothing is lost or reordered.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use chrono::{DateTime, NaiveDate, Utc};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::Deserialize;

use super::format::{
    DirectiveEntry, DirectiveId, DirectiveKind, Entry, Ledger, NewDirective, Params, Status,
    Target, valid_username,
};
use crate::domain::{Estimate, IssueKey, Priority};

pub use super::format::LedgerProblem;

/// Why a new directive could not be appended.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AppendError {
    /// The quote is empty or only whitespace.
    #[error("new directive: the quote is empty; record the PM's words verbatim")]
    EmptyQuote,
    /// Rationale or `by` spans lines.
    #[error("new directive: {0} must be a single line")]
    MultiLine(&'static str),
    /// The ledger ends inside a code or HTML block, so the new entry would be read as part of it: said of
    /// the file as it is (audit 185: the refusal quoted the entry it would have written, on a line the file
    /// did not have), with the directives the block hides already.
    #[error(
        "new directive: pm-state.md ends inside {inside} that starts on line {opened}, so a new entry would \
         be read as part of it{}; close that block (a ``` fence needs its closing ```, a <!-- comment its \
         -->) and record again",
        match hidden.as_slice() {
            [] => String::new(),
            [one] => format!(" (it hides the directive heading on line {one} already)"),
            many => format!(
                " (it hides the directive headings on lines {} already)",
                crate::prose::and_list(many)
            ),
        }
    )]
    Swallowed {
        /// What the block is, in words.
        inside: &'static str,
        /// The line the block starts on.
        opened: usize,
        /// The lines of the directive headings it hides already.
        hidden: Vec<String>,
    },
    /// The rendered entry does not read back as the same directive.
    #[error("new directive: the appended entry does not read back as written: {0}")]
    NotReadBack(String),
}

/// A ledger as parsed, with what was wrong in it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLedger {
    /// The entries; malformed directives are kept as prose.
    pub ledger: Ledger,
    /// One problem per malformed directive, in source order.
    pub problems: Vec<LedgerProblem>,
}

/// The result of [`append`]: the new text and the id given to the directive.
#[derive(Debug, Clone, PartialEq)]
pub struct Appended {
    /// The ledger text with the new entry after every earlier byte.
    pub text: String,
    /// The new directive's id.
    pub id: DirectiveId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    DirectiveHeading,
    Quote,
    List,
    Other,
}

#[derive(Debug)]
struct Block {
    kind: BlockKind,
    /// Whole lines: from the start of its first line to past the line ending of its last line.
    range: Range<usize>,
    /// For a directive heading, its text; for a list, its items' ranges.
    heading: String,
    items: Vec<Range<usize>>,
    /// For a block whose inside is not read as markdown (code, HTML), what it is, in words.
    opaque: Option<&'static str>,
}

// Positions are byte offsets that may fall inside a multi-byte character (`end - 1`): these helpers look
// at bytes, never slice the text there, and only return positions next to a `\n` (a char boundary).

/// The start of the line holding byte `pos`.
fn line_start(text: &str, pos: usize) -> usize {
    let bytes = text.as_bytes();
    bytes[..pos.min(bytes.len())]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// Past the line ending of the line that holds the byte before `pos` (or `pos` if it already ends a line).
fn line_end(text: &str, pos: usize) -> usize {
    let bytes = text.as_bytes();
    if pos == 0 || bytes.get(pos - 1) == Some(&b'\n') {
        return pos;
    }
    bytes[pos.min(bytes.len())..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| pos + i + 1)
}

/// Cuts trailing blank lines off a whole-line range.
fn trim_blank_tail(text: &str, range: Range<usize>) -> Range<usize> {
    let bytes = text.as_bytes();
    let mut end = range.end;
    while end > range.start {
        let ls = line_start(text, end.saturating_sub(1));
        if ls < range.start || !bytes[ls..end].iter().all(u8::is_ascii_whitespace) {
            break;
        }
        end = ls;
    }
    range.start..end
}

fn whole_lines(text: &str, r: Range<usize>) -> Range<usize> {
    trim_blank_tail(text, line_start(text, r.start)..line_end(text, r.end))
}

fn is_directive_heading(s: &str) -> bool {
    let mut c = s.trim_start().chars();
    c.next() == Some('D') && c.next() == Some('-') && c.next().is_some_and(|d| d.is_ascii_digit())
}

/// The top-level blocks of the text, with whole-line ranges.
fn blocks(text: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut depth = 0usize;
    let mut current: Option<Block> = None;
    for (ev, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match ev {
            Event::Start(tag) => {
                if depth == 0 {
                    let kind = match tag {
                        Tag::Heading {
                            level: HeadingLevel::H2,
                            ..
                        } => BlockKind::DirectiveHeading,
                        Tag::BlockQuote(_) => BlockKind::Quote,
                        Tag::List(_) => BlockKind::List,
                        _ => BlockKind::Other,
                    };
                    let opaque = match &tag {
                        Tag::CodeBlock(CodeBlockKind::Fenced(_)) => Some("a fenced code block"),
                        Tag::HtmlBlock => Some("an HTML block or comment"),
                        _ => None,
                    };
                    current = Some(Block {
                        kind,
                        range: whole_lines(text, range.clone()),
                        heading: String::new(),
                        items: Vec::new(),
                        opaque,
                    });
                } else if depth == 1
                    && matches!(tag, Tag::Item)
                    && let Some(b) = current.as_mut()
                    && b.kind == BlockKind::List
                {
                    b.items.push(range.clone());
                }
                depth += 1;
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some(mut b) = current.take()
                {
                    if matches!(end, TagEnd::Heading(_)) && !is_directive_heading(&b.heading) {
                        b.kind = BlockKind::Other;
                    }
                    out.push(b);
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(b) = current.as_mut()
                    && b.kind == BlockKind::DirectiveHeading
                {
                    b.heading.push_str(&t);
                }
            }
            _ if depth == 0 => out.push(Block {
                kind: BlockKind::Other,
                range: whole_lines(text, range),
                heading: String::new(),
                items: Vec::new(),
                opaque: None,
            }),
            _ => {}
        }
    }
    out
}

/// Where each line of a text starts, to turn a byte position into a line number without counting the
/// text again for each entry (a ledger of thousands of entries took minutes: audit 66).
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(text: &str) -> Self {
        Self(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }

    /// The line (1 is the first) of the byte at `pos`.
    fn line(&self, pos: usize) -> usize {
        self.0.partition_point(|&newline| newline < pos) + 1
    }
}

/// `text` as its Markdown is read: a byte-order mark (Notepad's) and the lines of a merge conflict git
/// left in turned to spaces of the same length, so that byte offsets hold in both. Unmasked, a mark
/// before the first heading made it no heading, and a marker line ran into the list of the entry before
/// it (`by: amara <<<<<<< HEAD`) or made the line before it a heading (`=======`).
/// The marker lines come with it, each with its line (1 is the first).
fn masked(text: &str) -> (Cow<'_, str>, Vec<(usize, &'static str)>) {
    let bom = text.starts_with('\u{feff}');
    let markers = conflict_markers(text);
    if !bom && markers.is_empty() {
        return (Cow::Borrowed(text), Vec::new());
    }
    let mut out = String::with_capacity(text.len());
    for (n, whole) in text.split_inclusive('\n').enumerate() {
        let line = whole.trim_end_matches(['\n', '\r']);
        if markers.iter().any(|(at, _)| *at == n + 1) {
            out.extend(std::iter::repeat_n(' ', line.len()));
        } else {
            out.push_str(line);
        }
        out.push_str(&whole[line.len()..]);
    }
    if bom {
        out.replace_range(..'\u{feff}'.len_utf8(), "   ");
    }
    (Cow::Owned(out), markers)
}

/// The lines of `text` that are git's merge-conflict markers, each with its line (1 is the first) and
/// marker: a conflict git left in a file it merged (the ledger, an op file, `commitea.yaml`).
pub(crate) fn conflict_markers(text: &str) -> Vec<(usize, &'static str)> {
    if !text.lines().any(|l| conflict_marker(l, false).is_some()) {
        return Vec::new();
    }
    let mut markers: Vec<(usize, &'static str)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let in_conflict = markers.last().is_some_and(|(_, m)| *m != ">>>>>>>");
        if let Some(m) = conflict_marker(line.trim_end_matches('\r'), in_conflict) {
            markers.push((n + 1, m));
        }
    }
    markers
}

/// The merge-conflict marker `line` is, if it is one: `<<<<<<< ours`, and, once a conflict is open,
/// `|||||||`, `=======` and `>>>>>>> theirs` (a lone `=======` is Markdown's heading underline).
fn conflict_marker(line: &str, in_conflict: bool) -> Option<&'static str> {
    let marks: &[&'static str] = if in_conflict {
        &["<<<<<<<", "|||||||", "=======", ">>>>>>>"]
    } else {
        &["<<<<<<<"]
    };
    marks.iter().copied().find(|m| {
        line.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || (rest.starts_with(' ') && *m != "======="))
    })
}

/// The highest directive id among `blocks`' headings (well-formed or not).
fn highest_id(blocks: &[Block]) -> Option<DirectiveId> {
    blocks
        .iter()
        .filter(|b| b.kind == BlockKind::DirectiveHeading)
        .filter_map(|b| {
            b.heading
                .split(['·', '|'])
                .next()
                .and_then(|s| s.trim().parse::<DirectiveId>().ok())
        })
        .max()
}

/// The next free id, for one suggestion: the next suggestion gets the one after.
fn take(free: &std::cell::Cell<DirectiveId>) -> DirectiveId {
    let id = free.get();
    free.set(id.next());
    id
}

/// Parses a ledger. Every byte of `text` ends up in exactly one entry, in order.
pub fn parse(original: &str) -> ParsedLedger {
    let (text, markers) = masked(original);
    let text = &*text;
    let blocks = blocks(text);
    // The next free id, taken by each problem that suggests one: two suggestions of one id made a new
    // duplicate of a PM who followed both (audit 189).
    let free = std::cell::Cell::new(highest_id(&blocks).map_or(DirectiveId(1), DirectiveId::next));
    let line_index = LineIndex::new(text);
    let mut entries: Vec<Entry> = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashMap<DirectiveId, usize> = HashMap::new();
    let mut cursor = 0usize;
    let push_prose = |entries: &mut Vec<Entry>, s: &str| {
        if s.is_empty() {
            return;
        }
        if let Some(Entry::Prose(p)) = entries.last_mut() {
            p.push_str(s);
        } else {
            entries.push(Entry::Prose(s.to_owned()));
        }
    };
    let mut i = 0;
    while i < blocks.len() {
        let b = &blocks[i];
        if b.kind != BlockKind::DirectiveHeading || b.range.start < cursor {
            i += 1;
            continue;
        }
        let quote = blocks.get(i + 1).filter(|q| q.kind == BlockKind::Quote);
        let list = quote
            .and_then(|_| blocks.get(i + 2))
            .filter(|l| l.kind == BlockKind::List);
        let last = list.or(quote).unwrap_or(b);
        let span = b.range.start..last.range.end.max(b.range.end);
        let consumed = 1 + usize::from(quote.is_some()) + usize::from(list.is_some());
        push_prose(&mut entries, &original[cursor..span.start]);
        // A heading of the PM's own where the quote or the list was due, with it just after: the entry
        // ends at that heading, and is said so (audit 189: "malformed target \"\"" of a target in plain
        // sight, or "no quote" above one).
        let heading_at = |k: usize, then: BlockKind| {
            let h = blocks.get(k).filter(|h| {
                h.kind == BlockKind::Other && text[h.range.clone()].trim_start().starts_with('#')
            })?;
            blocks.get(k + 1).filter(|n| n.kind == then)?;
            Some(h)
        };
        let cut = match (quote, list) {
            (None, _) => heading_at(i + 1, BlockKind::Quote).map(|h| ("quote", h)),
            (Some(_), None) => heading_at(i + 2, BlockKind::List).map(|h| ("key/value list", h)),
            _ => None,
        };
        match directive(text, &line_index, b, quote, list, &seen, &free).map_err(|p| {
            let id = b
                .heading
                .split(['·', '|'])
                .next()
                .and_then(|s| s.trim().parse().ok());
            match (cut, id) {
                (Some((missing, h)), Some(id)) => LedgerProblem::CutByHeading {
                    line: line_index.line(b.range.start),
                    id,
                    missing,
                    heading_line: line_index.line(h.range.start),
                    heading: text[h.range.clone()].trim().to_owned(),
                },
                _ => p,
            }
        }) {
            Ok(mut d) => {
                d.raw = original[span.clone()].to_owned();
                seen.insert(d.id, d.line);
                entries.push(Entry::Directive(d));
            }
            Err(p) => {
                problems.push(p);
                push_prose(&mut entries, &original[span.clone()]);
            }
        }
        cursor = span.end;
        i += consumed;
    }
    push_prose(&mut entries, &original[cursor..]);
    problems.extend(swallowed(text, &line_index, &blocks));
    let read: HashSet<u32> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Directive(d) => Some(d.id.0),
            Entry::Prose(_) => None,
        })
        .collect();
    problems.extend(misshapen(text, &blocks, &read, &free));
    problems.extend(
        markers
            .into_iter()
            .map(|(line, m)| LedgerProblem::ConflictMarker {
                line,
                marker: m.to_owned(),
            }),
    );
    if let Some(at) = text
        .as_bytes()
        .windows(2)
        .position(|w| w[0] == b'\r' && w[1] != b'\n')
    {
        problems.push(LedgerProblem::LoneCarriageReturn {
            line: line_index.line(at),
        });
    }
    problems.sort_by_key(LedgerProblem::line);
    ParsedLedger {
        ledger: Ledger { entries },
        problems,
    }
}

/// A directive heading written inside a code or HTML block is not a heading: an unclosed ``` fence or
/// `<!--` in the notes turns every directive after it into the block's text. Each such line is said, with
/// the line the block starts on, so that a typo never drops directives without a word.
fn swallowed(text: &str, line_index: &LineIndex, blocks: &[Block]) -> Vec<LedgerProblem> {
    let mut out = Vec::new();
    for (n, start, body, indent) in heading_lines(text) {
        // Four spaces on, markdown reads code of its own: [`misshapen`] says it.
        if indent > 3 {
            continue;
        }
        let Some(rest) = body.strip_prefix("##") else {
            continue;
        };
        if !rest.starts_with([' ', '\t']) || !is_directive_heading(rest) {
            continue;
        }
        // The blocks are the top level's, in order: the one holding the line starts last before it (a
        // scan of them all for each heading took minutes on a ledger of thousands: audit 66).
        let before = blocks.partition_point(|b| b.range.start <= start);
        let Some(block) = blocks[before.saturating_sub(2)..before]
            .iter()
            .find(|b| start < b.range.end && b.range.start != start)
        else {
            continue;
        };
        let Some(what) = block.opaque else {
            continue;
        };
        // A closed block holds what it holds on purpose (an example, a directive commented out).
        if !unclosed(text, block) {
            continue;
        }
        out.push(LedgerProblem::Swallowed {
            line: n + 1,
            heading: crate::limits::excerpt(rest.trim()).to_string(),
            inside: what,
            opened: line_index.line(block.range.start),
        });
    }
    out
}

/// Lines shaped like a directive's heading that are not one: another heading level (`### D-0004 · …`), no
/// space after `##`, a lower-case `d-`, the id in bold (`**D-0004** · …`). Each dropped its directive
/// without a word (audit 114). A line counts as shaped so where it starts with `#` or a bold id, then
/// `D-` and digits (either case) and a separator (`·`, `-`, `–`, `|`, `:`); a list item or a sentence
/// that starts with an id ("* D-0002: superseded", "D-0006: leave confirmed") is prose, and so is a
/// heading naming an id the ledger reads as a directive elsewhere (`read`): a note about it, not a lost
/// one (audit 117 had notes flagged, with advice that would have made duplicates). Code and HTML blocks
/// hold what they hold (an unclosed one is [`swallowed`]'s to say).
fn misshapen(
    text: &str,
    blocks: &[Block],
    read: &HashSet<u32>,
    free: &std::cell::Cell<DirectiveId>,
) -> Vec<LedgerProblem> {
    let mut out = Vec::new();
    for (n, start, body, indent) in heading_lines(text) {
        let Some(id) = shaped_like_a_heading(body) else {
            continue;
        };
        if id.is_some_and(|id| read.contains(&id)) {
            continue;
        }
        let before = blocks.partition_point(|b| b.range.start <= start);
        let block = before
            .checked_sub(1)
            .and_then(|i| blocks.get(i))
            .filter(|b| start < b.range.end);
        if block.is_some_and(|b| {
            b.opaque.is_some() || (b.kind == BlockKind::DirectiveHeading && b.range.start == start)
        }) {
            continue;
        }
        // A well-written heading out of place: indented, markdown reads it as part of what is above it
        // (a list item's text, or code from four spaces on), and the directive never reached the parse
        // (audit 185: it took the entry above with it, or went without a word).
        let fix = if indent > 0 && body.strip_prefix("## ").is_some_and(is_directive_heading) {
            format!(
                "it is indented {}, so markdown reads it as part of {}; start it at the beginning of the \
                 line and the directive counts",
                crate::prose::count(indent, "space", "spaces"),
                if indent >= 4 {
                    "a code block"
                } else {
                    "what is above it (a list item)"
                }
            )
        } else if id.is_none() {
            format!(
                "a directive's heading is \"## D-NNNN · kind · time\" and this one has no id; give it the \
                 next free one, {}, and the directive counts",
                take(free)
            )
        } else {
            "a directive's heading is \"## D-NNNN · kind · time\" (two #, a space, a capital D, a plain \
             hyphen and the number); write it so and the directive counts"
                .to_owned()
        };
        out.push(LedgerProblem::Misshapen {
            line: n + 1,
            text: crate::limits::excerpt(body.trim()).to_string(),
            fix,
        });
    }
    out
}

/// The lines of `text` that could be headings: `(index from 0, byte offset of the line, the line without
/// its ending and its indent, the indent in spaces)`. An indented one is no heading to markdown (part of
/// a list item, or code from four spaces on), which [`misshapen`] says.
fn heading_lines(text: &str) -> impl Iterator<Item = (usize, usize, &str, usize)> {
    text.split_inclusive('\n')
        .scan(0, |next, whole| {
            let start = *next;
            *next += whole.len();
            Some((start, whole))
        })
        .enumerate()
        .map(|(n, (start, whole))| {
            let line = whole.trim_end_matches(['\n', '\r']);
            let body = line.trim_start_matches([' ', '\t']);
            (n, start, body, line.len() - body.len())
        })
}

/// Whether a line (its indent cut) looks like a directive's heading, well written or not, and its id
/// where it has one: `Some(None)` for a heading with a kind and a time but no id (`## reprioritize ·
/// 2026-11-26T11:00:00Z`). An id is `D`, a hyphen or any dash an editor's smart punctuation puts in its
/// place (or none: `D0021`), and digits (audit 185: `D–0008` with an en dash was prose, without a word).
fn shaped_like_a_heading(line: &str) -> Option<Option<u32>> {
    const DASHES: [char; 6] = [
        '-', '\u{2010}', '\u{2011}', '\u{2013}', '\u{2014}', '\u{2212}',
    ];
    let hashes = line.len() - line.trim_start_matches('#').len();
    let rest = if hashes > 0 {
        line[hashes..].trim_start()
    } else {
        line.strip_prefix("**")
            .or_else(|| line.strip_prefix("__"))?
    };
    let id = rest
        .strip_prefix(['D', 'd'])
        .map(|r| r.trim_start_matches(DASHES))
        .and_then(|id| {
            let digits = id.len() - id.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let number = id[..digits].parse().ok()?;
            id[digits..]
                .trim_start_matches(['*', '_'])
                .trim_start()
                .starts_with(['·', '-', '–', '|', ':'])
                .then_some(number)
        });
    if id.is_some() {
        return Some(id);
    }
    // A heading with a directive's kind and a time between its separators is one without its id, or with
    // words before it (`## Directive D-0023 · note · …`).
    if hashes == 0 {
        return None;
    }
    let parts: Vec<&str> = rest.split(['·', '|']).map(str::trim).collect();
    let kind = parts.iter().any(|p| {
        DirectiveKind::ALL
            .iter()
            .any(|k| p.eq_ignore_ascii_case(k.as_str()))
    });
    let time = parts.iter().any(|p| {
        let b = p.as_bytes();
        b.len() >= 10 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[7] == b'-'
    });
    (kind && time).then(|| {
        rest.split_once("D-").and_then(|(_, after)| {
            let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            after[..digits].parse().ok()
        })
    })
}

/// Whether `block` (code or HTML) runs to the end of the text for want of its closer: a ``` fence with no
/// closing fence, a `<!--` with no `-->`. Only such a block swallows what follows it by mistake.
fn unclosed(text: &str, block: &Block) -> bool {
    if !text[block.range.end..].trim().is_empty() {
        return false;
    }
    let body: Vec<&str> = lines(text, block.range.clone())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let (Some(first), Some(last)) = (body.first(), body.last()) else {
        return false;
    };
    let first = first.trim_start();
    let fence: String = first
        .chars()
        .take_while(|c| *c == '`' || *c == '~')
        .collect();
    if fence.len() >= 3 {
        let closer = last.trim();
        let closed = body.len() > 1
            && closer.len() >= fence.len()
            && closer.chars().all(|c| fence.starts_with(c));
        return !closed;
    }
    if first.starts_with("<!--") {
        return !last.trim_end().ends_with("-->");
    }
    true
}

/// The lines of a range without their line endings.
fn lines(text: &str, r: Range<usize>) -> impl Iterator<Item = &str> {
    text[r].split_inclusive('\n').map(|l| {
        let l = l.strip_suffix('\n').unwrap_or(l);
        l.strip_suffix('\r').unwrap_or(l)
    })
}

fn directive(
    text: &str,
    line_index: &LineIndex,
    heading: &Block,
    quote: Option<&Block>,
    list: Option<&Block>,
    seen: &HashMap<DirectiveId, usize>,
    free: &std::cell::Cell<DirectiveId>,
) -> Result<DirectiveEntry, LedgerProblem> {
    let line = line_index.line(heading.range.start);
    let h = heading.heading.trim();
    let bad_heading = || LedgerProblem::Heading {
        line,
        heading: h.to_owned(),
    };
    let parts: Vec<&str> = h.split(['·', '|']).map(str::trim).collect();
    let [id, kind, at] = parts[..] else {
        return Err(bad_heading());
    };
    let id: DirectiveId = id.parse().map_err(|()| bad_heading())?;
    let kind: DirectiveKind = kind.parse().map_err(|()| LedgerProblem::UnknownKind {
        line,
        kind: kind.to_owned(),
    })?;
    let at = DateTime::parse_from_rfc3339(at)
        .map_err(|_| LedgerProblem::BadTime {
            line,
            text: at.to_owned(),
        })?
        .with_timezone(&Utc);
    if let Some(&first) = seen.get(&id) {
        return Err(LedgerProblem::DuplicateId {
            line,
            id,
            first,
            free: take(free),
        });
    }
    let quote = quote.ok_or(LedgerProblem::MissingQuote { line, id })?;
    let quote = quote_text(text, quote.range.clone());

    let mut target = None;
    let mut params_raw: Option<(usize, String)> = None;
    let mut rationale = None;
    let mut status = Status::Active;
    let mut by = None;
    let mut keys_seen: Vec<String> = Vec::new();
    for item in list.map(|l| l.items.as_slice()).unwrap_or_default() {
        let iline = line_index.line(item.start);
        let item_text = item_text(text, item.clone());
        let Some((key, value)) = item_text.split_once(':') else {
            return Err(LedgerProblem::BadItem {
                line: iline,
                text: item_text,
            });
        };
        let (key, value) = (key.trim(), value.trim());
        if keys_seen.iter().any(|k| k == key) {
            return Err(LedgerProblem::DuplicateKey {
                line: iline,
                key: key.to_owned(),
            });
        }
        keys_seen.push(key.to_owned());
        match key {
            "target" => target = Some(parse_target(value, iline)?),
            "params" => params_raw = Some((iline, value.to_owned())),
            "rationale" => rationale = Some(value.to_owned()),
            "status" => {
                status = value.parse().map_err(|()| LedgerProblem::BadStatus {
                    line: iline,
                    text: value.to_owned(),
                })?;
            }
            "by" => {
                if !valid_username(value) {
                    return Err(LedgerProblem::BadBy {
                        line: iline,
                        text: value.to_owned(),
                    });
                }
                by = Some(value.to_owned());
            }
            _ => {
                return Err(LedgerProblem::UnknownKey {
                    hint: key_hint(key),
                    line: iline,
                    key: key.to_owned(),
                });
            }
        }
    }
    if !kind.allows_target(target.as_ref()) {
        return Err(LedgerProblem::BadTarget {
            line,
            text: target.as_ref().map(ToString::to_string).unwrap_or_default(),
            reason: format!("{kind} needs {}", kind.target_help()),
        });
    }
    let params = match params_raw {
        Some((pline, raw)) => {
            parse_params(kind, &raw).map_err(|reason| LedgerProblem::BadParams {
                line: pline,
                kind,
                reason,
            })?
        }
        None if kind == DirectiveKind::Note => Params::Note,
        None => {
            return Err(LedgerProblem::BadParams {
                line,
                kind,
                reason: "no \"- params: {…}\" line".to_owned(),
            });
        }
    };
    Ok(DirectiveEntry {
        id,
        at,
        kind,
        quote,
        target,
        params,
        rationale,
        status,
        by,
        line,
        raw: String::new(),
    })
}

/// The blockquote's lines without their `>` markers (and one space or tab after, as CommonMark reads
/// it) nor trailing spaces, joined by `\n`: an editor that trims lines, or puts a tab after `>`, does not
/// change what the PM said.
fn quote_text(text: &str, r: Range<usize>) -> String {
    let out: Vec<&str> = lines(text, r)
        .map(|l| {
            let t = l.trim_start_matches(' ');
            match t.strip_prefix('>') {
                Some(rest) => rest.strip_prefix([' ', '\t']).unwrap_or(rest),
                None => t,
            }
            .trim_end_matches([' ', '\t'])
        })
        .collect();
    out.join("\n")
}

/// A list item's text: the marker dropped, continuation lines trimmed and joined by spaces. A directive's
/// heading indented under it ends it: markdown reads that heading as the item's, and the entry above was
/// lost with a message about its own `by` (audit 185); the heading is [`misshapen`]'s to say.
fn item_text(text: &str, r: Range<usize>) -> String {
    let r = trim_blank_tail(text, r.start..line_end(text, r.end));
    let mut parts: Vec<&str> = Vec::new();
    for (n, l) in lines(text, r).enumerate() {
        let l = l.trim();
        if n > 0 && shaped_like_a_heading(l).is_some() {
            break;
        }
        let l = if n == 0 {
            l.strip_prefix(['-', '*', '+']).unwrap_or(l).trim_start()
        } else {
            l
        };
        if !l.is_empty() {
            parts.push(l);
        }
    }
    parts.join(" ")
}

/// What an unknown item key likely meant (audit 185: `traget`, `Target`, a numbered list's `1. target`).
fn key_hint(key: &str) -> String {
    const KEYS: [&str; 5] = ["target", "params", "rationale", "status", "by"];
    let bare = key
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .strip_prefix(['.', ')'])
        .map(str::trim);
    if let Some(k) = bare.filter(|b| KEYS.contains(&b.to_ascii_lowercase().as_str())) {
        return format!(
            "; a numbered list reads \"{k}\" as \"{key}\": write the items with `- ` bullets"
        );
    }
    crate::plan::nearest(key, KEYS.into_iter())
        .map(|(d, k)| {
            // The case note only where the case is the mistake (audit 187: said of "taget").
            let case = if d == 0 { " (keys are lower case)" } else { "" };
            format!("; did you mean {k}?{case}")
        })
        .unwrap_or_default()
}

fn parse_target(value: &str, line: usize) -> Result<Target, LedgerProblem> {
    let bad = |reason: &str| LedgerProblem::BadTarget {
        line,
        text: value.to_owned(),
        reason: reason.to_owned(),
    };
    let (kind, rest) = value
        .split_once(char::is_whitespace)
        .map(|(k, r)| (k, r.trim()))
        .ok_or_else(|| {
            bad("expected \"issue owner/repo#N\", \"milestone ID\" or \"member USERNAME\"")
        })?;
    match kind {
        "issue" => rest
            .parse::<IssueKey>()
            .map(Target::Issue)
            .map_err(|e| bad(&e.to_string())),
        "milestone" => rest
            .parse::<u64>()
            .map(Target::Milestone)
            .map_err(|_| bad("a milestone is given by its numeric Gitea id")),
        "member" if valid_username(rest) => Ok(Target::Member(rest.to_owned())),
        "member" => Err(bad("a member is given by their Gitea username")),
        _ => Err(bad(
            "expected \"issue owner/repo#N\", \"milestone ID\" or \"member USERNAME\"",
        )),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReprioritizeJson {
    priority: PriorityJson,
}

/// A priority in params: `1`, as the ledger writes it, or its label `p/1`, as the ops and pages say it.
#[derive(Deserialize)]
#[serde(untagged)]
enum PriorityJson {
    Number(u64),
    Label(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReestimateJson {
    estimate: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetDeadlineJson {
    #[serde(deserialize_with = "date")]
    due: NaiveDate,
    #[serde(default)]
    hard: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScopeJson {
    #[serde(rename = "in")]
    included: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CapacityJson {
    #[serde(deserialize_with = "date")]
    from: NaiveDate,
    #[serde(default, deserialize_with = "some_date")]
    to: Option<NaiveDate>,
    /// `hoursPerWeek` too: the agent tools' fields are camelCase.
    #[serde(alias = "hoursPerWeek")]
    hours_per_week: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoteJson {}

/// A params date: a real day written YYYY-MM-DD; the error quotes what was given (chrono's own says only
/// "input is out of range").
fn date<'de, D: serde::Deserializer<'de>>(d: D) -> Result<NaiveDate, D::Error> {
    day(&String::deserialize(d)?)
}

/// An optional params date (`null` or absent: none).
fn some_date<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<NaiveDate>, D::Error> {
    Option::<String>::deserialize(d)?
        .as_deref()
        .map(day)
        .transpose()
}

fn day<E: serde::de::Error>(text: &str) -> Result<NaiveDate, E> {
    crate::domain::parse_day(text).map_err(E::custom)
}

/// Parses a kind's params from inline JSON; the error says what is wrong.
pub(crate) fn parse_params(kind: DirectiveKind, raw: &str) -> Result<Params, String> {
    fn de<T: for<'a> Deserialize<'a>>(raw: &str) -> Result<T, String> {
        serde_json::from_str(raw).map_err(|e| {
            // Not JSON at all (`{estimate: 3d}`, as YAML would have it): said as such, with the way
            // (audit 120: "key must be a string").
            if e.is_syntax() || e.is_eof() {
                format!(
                    "{} is not JSON ({}): write it as JSON, keys and text in double quotes, such as \
                     {{\"estimate\": \"3d\"}}",
                    crate::limits::excerpt(raw),
                    crate::prose::serde_message(&e.to_string())
                )
            } else {
                crate::prose::serde_message(&e.to_string())
            }
        })
    }
    Ok(match kind {
        DirectiveKind::Reprioritize => {
            let p: ReprioritizeJson = de(raw).map_err(|e| {
                if e.contains("did not match any variant") {
                    "priority must be 0, 1, 2 or 3 (or p/0 to p/3)".to_owned()
                } else {
                    e
                }
            })?;
            let priority = match &p.priority {
                PriorityJson::Number(n) => u8::try_from(*n).ok().and_then(Priority::new),
                PriorityJson::Label(l) => Priority::from_said(l),
            }
            .ok_or_else(|| match p.priority {
                PriorityJson::Number(n) => format!("priority {n} is not 0, 1, 2 or 3"),
                PriorityJson::Label(l) => format!(
                    "priority \"{}\" is not 0, 1, 2 or 3 (or p/0 to p/3)",
                    crate::limits::excerpt(&l)
                ),
            })?;
            Params::Reprioritize { priority }
        }
        DirectiveKind::Reestimate => {
            let p: ReestimateJson = de(raw)?;
            let estimate = Estimate::from_said(&p.estimate).map_err(|e| e.to_string())?;
            Params::Reestimate { estimate }
        }
        DirectiveKind::SetDeadline => {
            let p: SetDeadlineJson = de(raw)?;
            Params::SetDeadline {
                due: p.due,
                hard: p.hard,
            }
        }
        DirectiveKind::Scope => {
            let p: ScopeJson = de(raw)?;
            Params::Scope {
                included: p.included,
            }
        }
        DirectiveKind::Capacity => {
            let p: CapacityJson = de(raw)?;
            let h = p.hours_per_week;
            if !(h == 0.0 || (crate::config::MIN_HOURS..=168.0).contains(&h)) {
                return Err(format!(
                    "hours_per_week {h} is not 0 (away) or a number of hours from {} to 168 (a week's)",
                    crate::config::MIN_HOURS
                ));
            }
            if let Some(to) = p.to
                && to < p.from
            {
                return Err(format!("to {to} is before from {}", p.from));
            }
            Params::Capacity {
                from: p.from,
                to: p.to,
                hours_per_week: p.hours_per_week,
            }
        }
        DirectiveKind::Note => {
            let _: NoteJson = de(raw)?;
            Params::Note
        }
    })
}

/// The ledger's text again: every entry's raw text, in order.
pub fn render(ledger: &Ledger) -> String {
    ledger.entries.iter().map(Entry::raw).collect()
}

/// A run of the ledger's text that is not a well-formed directive and that another version of the ledger
/// lacks: a note typed in, or a malformed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// Its first line (1-based).
    pub line: usize,
    /// Its last line.
    pub last_line: usize,
    /// Its text, from its first line to its last.
    pub text: String,
    /// Why it is no directive, when it was meant as one: the problems on its lines.
    pub problems: Vec<LedgerProblem>,
}

impl Stray {
    /// Its lines in words: `line 9`, `lines 9–13`.
    pub fn lines(&self) -> String {
        if self.line == self.last_line {
            format!("line {}", self.line)
        } else {
            format!("lines {}–{}", self.line, self.last_line)
        }
    }
}

/// The text of `text` outside its well-formed directives that `other` does not have (line by line, each
/// line of `other` used once), in runs of lines: what a proposal of the directives leaves behind, which
/// must not be lost when the checkout's ledger becomes the branch's.
pub fn strays(text: &str, other: &str) -> Vec<Stray> {
    fn prose_lines(text: &str) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut line = 1;
        for e in &parse(text).ledger.entries {
            let raw = e.raw();
            if let Entry::Prose(p) = e {
                out.extend(
                    p.lines()
                        .enumerate()
                        .map(|(i, l)| (line + i, l.trim_end().to_owned()))
                        .filter(|(_, l)| !l.is_empty()),
                );
            }
            line += raw.matches('\n').count();
        }
        out
    }
    let mut theirs: HashMap<String, usize> = HashMap::new();
    for (_, l) in prose_lines(other) {
        *theirs.entry(l).or_default() += 1;
    }
    let problems = parse(text).problems;
    let lines: Vec<&str> = text.lines().collect();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (n, l) in prose_lines(text) {
        if let Some(c) = theirs.get_mut(l.as_str()).filter(|c| **c > 0) {
            *c -= 1;
            continue;
        }
        // One run while only blank lines part two stray lines.
        match runs.last_mut() {
            Some((_, last)) if lines[*last..n - 1].iter().all(|l| l.trim().is_empty()) => *last = n,
            _ => runs.push((n, n)),
        }
    }
    runs.into_iter()
        .map(|(first, last)| Stray {
            line: first,
            last_line: last,
            text: lines[first - 1..last].join("\n"),
            problems: problems
                .iter()
                .filter(|p| (first..=last).contains(&p.line()))
                .cloned()
                .collect(),
        })
        .collect()
}

/// The id the next directive gets: one after the highest id in the text (well-formed or not), or `D-0001`.
pub fn next_id(text: &str) -> DirectiveId {
    // Every directive heading counts, so a malformed entry keeps its id reserved.
    highest_id(&blocks(&masked(text).0)).map_or(DirectiveId(1), DirectiveId::next)
}

/// Appends `new` to the ledger text after every existing byte, with the next free id: the next after the
/// text's, and no lower than `floor` (ids that proposals not in the text took).
///
/// The entry is separated from what comes before by a blank line and uses the text's line endings (CRLF if
/// the text has any). The result is parsed back to check that the entry reads as the same directive.
pub fn append(text: &str, new: &NewDirective, floor: DirectiveId) -> Result<Appended, AppendError> {
    if new.quote.trim().is_empty() {
        return Err(AppendError::EmptyQuote);
    }
    if new
        .rationale
        .as_deref()
        .is_some_and(|r| r.contains(['\n', '\r']))
    {
        return Err(AppendError::MultiLine("rationale"));
    }
    if new.by.as_deref().is_some_and(|r| r.contains(['\n', '\r'])) {
        return Err(AppendError::MultiLine("by"));
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let id = next_id(text).max(floor);
    let mut out = text.to_owned();
    if !out.is_empty() {
        if !out.ends_with('\n') {
            out.push_str(newline);
        }
        if !out.ends_with("\n\n") && !out.ends_with("\n\r\n") {
            out.push_str(newline);
        }
    }
    out.push_str(&new.render(id, newline));
    let parsed = parse(&out);
    let back = parsed.ledger.directives().find(|d| d.id == id);
    let Some(back) = back else {
        let old_lines = text.lines().count();
        if let Some(&LedgerProblem::Swallowed { inside, opened, .. }) = parsed
            .problems
            .iter()
            .find(|p| matches!(p, LedgerProblem::Swallowed { .. }) && p.line() > old_lines)
        {
            let hidden = parsed
                .problems
                .iter()
                .filter(|p| matches!(p, LedgerProblem::Swallowed { .. }) && p.line() <= old_lines)
                .map(|p| p.line().to_string())
                .collect();
            return Err(AppendError::Swallowed {
                inside,
                opened,
                hidden,
            });
        }
        let why = parsed
            .problems
            .last()
            .map_or_else(|| "no directive found".to_owned(), ToString::to_string);
        return Err(AppendError::NotReadBack(why));
    };
    let same = back.at == new.at
        && back.kind == new.kind()
        && back.quote == super::format::normalise_quote(&new.quote)
        && back.target == new.target
        && back.params == new.params
        && back.rationale == new.rationale
        && back.status == Status::Active
        && back.by == new.by;
    if !same {
        return Err(AppendError::NotReadBack(format!("read back as {back:?}")));
    }
    Ok(Appended { text: out, id })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BRANCH: &str =
        "# PM directives\n\nIntro.\n\n## D-0001 · note · 2026-11-30T10:00:00Z\n\n> Freeze.\n";

    #[test]
    fn params_errors_say_what_is_wrong_in_words_and_take_the_tools_spelling() {
        let cap = |h: &str| {
            parse_params(
                DirectiveKind::Capacity,
                &format!(r#"{{"from": "2026-12-01", "hours_per_week": {h}}}"#),
            )
        };
        assert!(cap("0").is_ok() && cap("0.1").is_ok() && cap("168").is_ok());
        for bad in ["0.0000001", "169", "-1"] {
            let e = cap(bad).unwrap_err();
            assert!(
                e.contains("is not 0 (away) or a number of hours from 0.1 to 168"),
                "{e}"
            );
        }
        let camel = parse_params(
            DirectiveKind::Capacity,
            r#"{"from": "2026-12-01", "hoursPerWeek": 10}"#,
        );
        assert!(
            matches!(camel, Ok(Params::Capacity { hours_per_week, .. }) if hours_per_week == 10.0),
            "{camel:?}"
        );
        let p = |raw: &str| parse_params(DirectiveKind::Reprioritize, raw);
        assert!(
            matches!(p(r#"{"priority": "p/0"}"#), Ok(Params::Reprioritize { priority }) if priority.level() == 0)
        );
        assert!(
            matches!(p(r#"{"priority": 3}"#), Ok(Params::Reprioritize { priority }) if priority.level() == 3)
        );
        let e = p(r#"{"priority": true}"#).unwrap_err();
        assert_eq!(e, "priority must be 0, 1, 2 or 3 (or p/0 to p/3)");
        let e = p(r#"{"priority": "p/9"}"#).unwrap_err();
        assert!(e.contains(r#"priority "p/9" is not 0, 1, 2 or 3"#), "{e}");
        // serde's words, without Rust's type names or a place in a text the caller never typed.
        let e = parse_params(
            DirectiveKind::SetDeadline,
            r#"{"due": "2027-01-01", "hard": 1}"#,
        )
        .unwrap_err();
        assert!(!e.contains("line 1") && !e.contains('`'), "{e}");
        assert_eq!(
            parse_params(DirectiveKind::Reestimate, r#"{"estimate": "est/2d"}"#),
            parse_params(DirectiveKind::Reestimate, r#"{"estimate": "2d"}"#)
        );
        let e = parse_params(DirectiveKind::Reestimate, r#"{"estimate": 2}"#).unwrap_err();
        assert!(!e.contains("line 1"), "{e}");
    }

    #[test]
    fn strays_are_the_notes_and_malformed_entries_the_other_text_lacks() {
        let text = format!(
            "{BRANCH}\nMeeting notes: ask Bo.\n\n## D-0002 · reprio · 2026-11-30T11:00:00Z\n\n> Now.\n\n\
             ## D-0003 · note · 2026-11-30T12:00:00Z\n\n> Fine.\n"
        );
        let got = strays(&text, BRANCH);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].line, 9);
        assert_eq!(got[0].last_line, 13);
        assert_eq!(got[0].problems.len(), 1, "{got:?}");
        assert!(
            got[0].problems[0]
                .to_string()
                .starts_with("ledger line 11: unknown directive kind \"reprio\""),
            "{got:?}"
        );
        assert_eq!(
            got[0].text,
            "Meeting notes: ask Bo.\n\n## D-0002 · reprio · 2026-11-30T11:00:00Z\n\n> Now."
        );
        // The branch's own prose and well-formed entries are never strays.
        assert!(strays(BRANCH, BRANCH).is_empty());
        // Two notes a directive parts are two runs, the directive in neither.
        let parted = format!(
            "{BRANCH}\nNote one.\n\n## D-0002 · note · 2026-11-30T11:00:00Z\n\n> Ok.\n\nNote two.\n"
        );
        let got = strays(&parted, BRANCH);
        assert_eq!(
            got.iter().map(|s| s.text.as_str()).collect::<Vec<_>>(),
            ["Note one.", "Note two."]
        );
        assert!(
            strays(
                &format!("{BRANCH}\n## D-0002 · note · 2026-11-30T11:00:00Z\n\n> Ok.\n"),
                BRANCH
            )
            .is_empty()
        );
    }
}
