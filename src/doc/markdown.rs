//! The Markdown writer of the document model (GitHub-flavoured: tables, `<details>`, in-page
//! anchors). Blocks are separated by one blank line; text is escaped so that no value can open
//! markup, and table cells so that none can break the row.

use std::io::Write;

use super::escape::{anchor, markdown_text, visible};
use super::{Align, Block, Figure, Fold, Inline, Line, Part, Style, Table};

/// The document as Markdown.
pub fn to_markdown(blocks: &[Block]) -> String {
    super::written(|out| write_markdown(out, blocks))
}

/// The document as Markdown, streamed into `out` chunk by chunk (a long run's report is never
/// held whole).
fn write_markdown(out: &mut dyn Write, blocks: &[Block]) -> std::io::Result<()> {
    let mut writer = MarkdownWriter::new(out);
    writer.write(blocks);
    writer.finish()
}

/// A document written as Markdown a few blocks at a time, each chunk as it is made, a blank line
/// between two: a report written section by section holds one section at a time. The first
/// write error is kept (later chunks are dropped) and returned by [`MarkdownWriter::finish`].
pub struct MarkdownWriter<'a> {
    out: &'a mut dyn Write,
    first: bool,
    error: Option<std::io::Error>,
}

impl<'a> MarkdownWriter<'a> {
    pub fn new(out: &'a mut dyn Write) -> Self {
        MarkdownWriter {
            out,
            first: true,
            error: None,
        }
    }

    /// The next blocks of the document.
    pub fn write(&mut self, blocks: &[Block]) {
        for b in blocks {
            block(b, self);
        }
    }

    pub fn finish(self) -> std::io::Result<()> {
        self.error.map_or(Ok(()), Err)
    }

    fn push(&mut self, chunk: String) {
        if self.error.is_some() {
            return;
        }
        let separator: &[u8] = if self.first { b"" } else { b"\n" };
        self.first = false;
        if let Err(e) = self
            .out
            .write_all(separator)
            .and_then(|()| self.out.write_all(chunk.as_bytes()))
        {
            self.error = Some(e);
        }
    }
}

/// One block as chunks of lines, each ending in a newline (nothing for an HTML-only block).
fn block(b: &Block, chunks: &mut MarkdownWriter) {
    match b {
        Block::Part(p) => part(p, chunks),
        Block::Paragraph(l) => chunks.push(format!("{}\n", inline(l))),
        Block::Callout { text, .. } => chunks.push(format!("> {}\n", inline(text))),
        Block::Quote(l) => chunks.push(format!("> {}\n", inline(l))),
        Block::List(items) => {
            chunks.push(items.iter().map(|l| format!("- {}\n", inline(l))).collect())
        }
        Block::Table(t) if t.columns.iter().any(|c| !c.html_only) => chunks.push(table(t)),
        Block::Table(_) => {}
        Block::Preformatted(s) => {
            let s = visible(s);
            let fence = "`".repeat((longest_run(&s, '`') + 1).max(3));
            chunks.push(format!("{fence}text\n{}\n{fence}\n", s.trim_end()));
        }
        Block::Figure(_) | Block::Filters { .. } => {}
    }
}

fn part(p: &Part, chunks: &mut MarkdownWriter) {
    open(p, chunks);
    for b in &p.body {
        block(b, chunks);
    }
    close(p, chunks);
}

/// A part's start: its heading, or `<details>` when folded in Markdown too.
fn open(p: &Part, chunks: &mut MarkdownWriter) {
    if p.fold == Fold::Folded {
        chunks.push(format!(
            "<details><summary>{}</summary>\n",
            super::html::inline_html(&p.title)
        ));
        return;
    }
    let target = match (&p.id, p.level) {
        (Some(id), 3..) => format!("<a id=\"{}\"></a>", anchor(id)),
        _ => String::new(),
    };
    chunks.push(format!(
        "{} {target}{}\n",
        "#".repeat(p.level.clamp(1, 6).into()),
        inline(&p.title)
    ));
}

/// A part's end (only a folded one has any).
fn close(p: &Part, chunks: &mut MarkdownWriter) {
    if p.fold == Fold::Folded {
        chunks.push("</details>\n".into());
    }
}

impl super::Sink for MarkdownWriter<'_> {
    fn blocks(&mut self, blocks: Vec<Block>) {
        self.write(&blocks);
    }

    fn open(&mut self, part: &Part) {
        open(part, self);
    }

    fn close(&mut self, part: &Part) {
        close(part, self);
    }
}

fn table(t: &Table) -> String {
    let shown: Vec<usize> = (0..t.columns.len())
        .filter(|i| !t.columns[*i].html_only)
        .collect();
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = line(shown.iter().map(|i| cell(&t.columns[*i].header)).collect());
    out.push_str(&line(
        shown
            .iter()
            .map(|i| match t.columns[*i].align {
                Align::Left => "---".to_string(),
                Align::Right => "---:".to_string(),
            })
            .collect(),
    ));
    for r in &t.rows {
        out.push_str(&line(
            shown
                .iter()
                .map(|i| r.cells.get(*i).map(cell).unwrap_or_default())
                .collect(),
        ));
    }
    out
}

/// A table cell: its inline text with pipes escaped (also inside code, as GFM reads them).
fn cell(l: &Line) -> String {
    inline(l).replace('|', "\\|")
}

/// Inline text as Markdown.
pub(super) fn inline(line: &Line) -> String {
    line.iter().map(one).collect()
}

fn one(i: &Inline) -> String {
    match i {
        Inline::Text(s) => markdown_text(s),
        Inline::Code(s) => code(s),
        Inline::Styled(style, l) => {
            let inner = inline(l);
            if inner.is_empty() {
                return inner;
            }
            match style {
                Style::Strong | Style::StrongWithId(_) | Style::Inserted => format!("**{inner}**"),
                Style::Deleted => format!("~~{inner}~~"),
                Style::Class(_) => inner,
                Style::HtmlOnly => String::new(),
            }
        }
        Inline::Link { anchor: a, text } => format!("[{}](#{})", inline(text), anchor(a)),
        Inline::Break => "<br>".into(),
        Inline::Figure(f) => figure_text(f),
    }
}

/// A code span on one line, fenced by more backticks than it contains.
fn code(s: &str) -> String {
    let s = visible(s).replace(['\n', '\r'], " ");
    let fence = "`".repeat(longest_run(&s, '`') + 1);
    if s.starts_with('`') || s.ends_with('`') {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// The numbers an inline chart draws.
fn figure_text(f: &Figure) -> String {
    match f {
        Figure::Proportion { part, whole, .. } => format!("{part}/{whole}"),
        Figure::Stacked { segments, .. } => segments
            .iter()
            .filter(|s| s.count > 0)
            .map(|s| format!("{} {}", s.count, s.label))
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{code as c, link, strong, text, Table};

    /// A writer that takes `room` bytes, then fails.
    struct Full {
        room: usize,
        taken: Vec<u8>,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.taken.len() + buf.len() > self.room {
                return Err(std::io::Error::other("disk full"));
            }
            self.taken.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn streamed_markdown_is_the_same_text_and_a_write_error_comes_back() {
        let mut t = Table::new(&["a", "b"]);
        for i in 0..50 {
            t.text_row(&[format!("row {i}"), "x".into()]);
        }
        let doc = vec![
            crate::doc::para(vec![text("first")]),
            t.into(),
            crate::doc::para(vec![text("last")]),
        ];
        let mut streamed = Vec::new();
        write_markdown(&mut streamed, &doc).unwrap();
        let whole = to_markdown(&doc);
        assert_eq!(String::from_utf8(streamed).unwrap(), whole);
        assert!(whole.starts_with("first\n\n| a | b |"), "{whole}");
        let mut full = Full {
            room: 20,
            taken: Vec::new(),
        };
        let err = write_markdown(&mut full, &doc).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(full.taken, b"first\n\n", "what fitted before the error");
    }

    #[test]
    fn cells_cannot_break_the_table() {
        let mut t = Table::new(&["a", "b"]);
        t.text_row(&["x|y", "two\nlines"]);
        t.row(vec![
            vec![c("p|q")],
            vec![text("a"), crate::doc::Inline::Break, text("b")],
        ]);
        assert_eq!(
            to_markdown(&[t.right(&[1]).into()]),
            "| a | b |\n| --- | ---: |\n| x\\|y | two lines |\n| `p\\|q` | a<br>b |\n"
        );
    }

    #[test]
    fn code_spans_hold_backticks_and_hostile_text_stays_text() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        let evil = "</script><script>alert(1)</script>";
        let md = to_markdown(&[
            crate::doc::para(vec![text(evil), strong(vec![c(evil)])]),
            crate::doc::para(vec![link("prompt-a\"><x", vec![text("\u{1b}[2J")])]),
        ]);
        assert_eq!(
            md,
            "\\</script>\\<script>alert(1)\\</script>**`</script><script>alert(1)</script>`**\n\n\
             [␛[2J](#prompt-a---x)\n"
        );
    }
}
