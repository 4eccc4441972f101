//! The HTML writer of the document model: sections, folded details, tables (sortable, with
//! data for the filters), inline SVG charts. Every string is escaped here, once.

use std::fmt::Write;

use super::chart;
use super::escape::{anchor, esc};
use super::{Align, Block, Figure, Fold, Inline, Line, Part, Style, Table};

/// The document as an HTML fragment (the page around it is the caller's).
#[cfg(test)]
pub fn to_html(blocks: &[Block]) -> String {
    super::written(|out| write_html(out, blocks))
}

/// The blocks as HTML, streamed into `out` as they are written.
#[cfg(test)]
fn write_html(out: &mut dyn std::io::Write, blocks: &[Block]) -> std::io::Result<()> {
    let mut writer = HtmlWriter::new(out);
    writer.write(blocks);
    writer.finish()
}

/// Written HTML is passed on once this much has gathered.
const SPILL_BYTES: usize = 64 * 1024;

/// A document written as HTML a few blocks at a time: gathered and passed on between blocks once
/// [`SPILL_BYTES`] have gathered, so neither the page nor a whole section is held as text. The
/// first write error is kept (later text is dropped) and returned by [`HtmlWriter::finish`].
pub struct HtmlWriter<'a> {
    buf: String,
    sink: &'a mut dyn std::io::Write,
    error: Option<std::io::Error>,
}

impl<'a> HtmlWriter<'a> {
    pub fn new(sink: &'a mut dyn std::io::Write) -> Self {
        HtmlWriter {
            buf: String::new(),
            sink,
            error: None,
        }
    }

    /// The next blocks of the document.
    pub fn write(&mut self, blocks: &[Block]) {
        for b in blocks {
            block(self, b);
        }
    }

    pub fn finish(mut self) -> std::io::Result<()> {
        self.spill(0);
        self.error.map_or(Ok(()), Err)
    }

    /// Pass the gathered text on when it holds more than `at_least` bytes.
    fn spill(&mut self, at_least: usize) {
        if self.buf.len() <= at_least {
            return;
        }
        if self.error.is_none() {
            if let Err(e) = self.sink.write_all(self.buf.as_bytes()) {
                self.error = Some(e);
            }
        }
        self.buf.clear();
    }
}

fn block(out: &mut HtmlWriter, b: &Block) {
    if let Block::Part(p) = b {
        return part(out, p);
    }
    leaf(&mut out.buf, b);
    out.spill(SPILL_BYTES);
}

/// A block other than a part.
fn leaf(out: &mut String, b: &Block) {
    match b {
        Block::Part(_) => {}
        Block::Paragraph(l) => {
            let _ = writeln!(out, "<p>{}</p>", inline_html(l));
        }
        Block::Callout { bad, text } => {
            let _ = writeln!(
                out,
                "<p class=\"callout{}\">{}</p>",
                if *bad { " bad" } else { "" },
                inline_html(text)
            );
        }
        Block::Quote(l) => {
            let _ = writeln!(
                out,
                "<blockquote class=\"text\">{}</blockquote>",
                inline_html(l)
            );
        }
        Block::List(items) => {
            out.push_str("<ul class=\"facts\">\n");
            for l in items {
                let _ = writeln!(out, "<li>{}</li>", inline_html(l));
            }
            out.push_str("</ul>\n");
        }
        Block::Table(t) => table(out, t),
        Block::Preformatted(s) => {
            let _ = writeln!(out, "<pre class=\"text\">{}</pre>", esc(s.trim_end()));
        }
        Block::Figure(Figure::Caption(line)) => {
            let _ = writeln!(out, "<p class=\"hist-name\">{}</p>", inline_html(line));
        }
        Block::Figure(f) => {
            out.push_str("<div class=\"figure\">");
            chart::figure(out, f);
            out.push_str("</div>\n");
        }
        Block::Filters { table, selects } => filters(out, table, selects),
    }
}

fn id_attr(id: &Option<String>) -> String {
    id.as_ref()
        .map(|i| format!(" id=\"{}\"", anchor(i)))
        .unwrap_or_default()
}

fn part(out: &mut HtmlWriter, p: &Part) {
    open(out, p);
    for b in &p.body {
        block(out, b);
    }
    close(out, p);
}

/// A part's start: `<details>` when folded, else a header or section with its heading.
fn open(out: &mut HtmlWriter, p: &Part) {
    let id = id_attr(&p.id);
    let title = inline_html(&p.title);
    let _ = match (p.fold, p.level) {
        (Fold::FoldedInHtml | Fold::Folded, _) => write!(
            out.buf,
            "<details class=\"prompt\"{id}>\n<summary>{title}</summary>\n<div class=\"prompt-body\">\n"
        ),
        (Fold::Open, 1) => write!(out.buf, "<header{id}>\n<h1>{title}</h1>\n"),
        (Fold::Open, 2) => write!(out.buf, "<section{id}>\n<h2>{title}</h2>\n"),
        (Fold::Open, n) => {
            let n = n.min(6);
            writeln!(out.buf, "<h{n}{id}>{title}</h{n}>")
        }
    };
}

/// A part's end, matching [`open`].
fn close(out: &mut HtmlWriter, p: &Part) {
    out.buf.push_str(match (p.fold, p.level) {
        (Fold::FoldedInHtml | Fold::Folded, _) => "</div>\n</details>\n",
        (Fold::Open, 1) => "</header>\n",
        (Fold::Open, 2) => "</section>\n",
        (Fold::Open, _) => "",
    });
    out.spill(SPILL_BYTES);
}

impl super::Sink for HtmlWriter<'_> {
    fn blocks(&mut self, blocks: Vec<Block>) {
        self.write(&blocks);
    }

    fn open(&mut self, part: &Part) {
        open(self, part);
    }

    fn close(&mut self, part: &Part) {
        close(self, part);
    }
}

fn table(out: &mut String, t: &Table) {
    let mut classes: Vec<&str> = Vec::new();
    if t.sortable {
        classes.push("sortable");
    }
    if let Some(c) = &t.class {
        classes.push(c);
    }
    let _ = write!(
        out,
        "<div class=\"scroll\"><table{}{}>\n<thead><tr>",
        t.id.map(|i| format!(" id=\"{}\"", esc(i)))
            .unwrap_or_default(),
        if classes.is_empty() {
            String::new()
        } else {
            format!(" class=\"{}\"", esc(&classes.join(" ")))
        }
    );
    for c in &t.columns {
        let _ = write!(out, "<th>{}</th>", inline_html(&c.header));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        out.push_str("<tr");
        for (k, v) in &r.data {
            let _ = write!(out, " data-{}=\"{}\"", esc(k), esc(v));
        }
        out.push('>');
        for (i, c) in t.columns.iter().enumerate() {
            let cell = r.cells.get(i).map(inline_html).unwrap_or_default();
            match c.align {
                Align::Left => {
                    let _ = write!(out, "<td>{cell}</td>");
                }
                Align::Right => {
                    let _ = write!(out, "<td class=\"num\">{cell}</td>");
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
}

/// The filter controls, hidden until the page's script shows them (they do nothing without it).
fn filters(out: &mut String, table: &str, selects: &[(&'static str, Vec<String>)]) {
    let _ = write!(
        out,
        "<div class=\"filters\" data-table=\"{}\" hidden>",
        esc(table)
    );
    for (key, values) in selects {
        let _ = write!(
            out,
            "<label>{} <select data-key=\"{}\"><option value=\"\">all</option>",
            esc(key),
            esc(key)
        );
        for v in values {
            let _ = write!(
                out,
                "<option value=\"{}\">{}</option>",
                esc(v),
                esc(&v.replace('_', " "))
            );
        }
        out.push_str("</select></label>");
    }
    out.push_str(
        "<label>text <input type=\"search\" data-key=\"text\" placeholder=\"prompt, answer…\"></label>\
         <span class=\"count\" aria-live=\"polite\"></span></div>\n",
    );
}

/// Plain text escaped for HTML (a page's title or footer).
pub fn html_text(s: &str) -> String {
    esc(s).to_string()
}

/// Inline text as HTML.
pub(super) fn inline_html(line: &Line) -> String {
    let mut out = String::new();
    for i in line {
        one(&mut out, i);
    }
    out
}

fn one(out: &mut String, i: &Inline) {
    match i {
        Inline::Text(s) => {
            let _ = write!(out, "{}", esc(s));
        }
        Inline::Code(s) => {
            let _ = write!(out, "<code>{}</code>", esc(s));
        }
        Inline::Styled(style, l) => {
            let inner = inline_html(l);
            let _ = match style {
                Style::Strong => write!(out, "<strong>{inner}</strong>"),
                Style::StrongWithId(id) => {
                    write!(out, "<strong id=\"{}\">{inner}</strong>", esc(id))
                }
                Style::Deleted => write!(out, "<del>{inner}</del>"),
                Style::Inserted => write!(out, "<ins>{inner}</ins>"),
                Style::Class(c) => write!(out, "<span class=\"{}\">{inner}</span>", esc(c)),
                Style::HtmlOnly => write!(out, "<span>{inner}</span>"),
            };
        }
        Inline::Link { anchor: a, text } => {
            let _ = write!(out, "<a href=\"#{}\">{}</a>", anchor(a), inline_html(text));
        }
        Inline::Break => out.push_str("<br>"),
        Inline::Figure(Figure::Caption(line)) => out.push_str(&inline_html(line)),
        Inline::Figure(f) => chart::figure(out, f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{code, para, span, text, Table};

    #[test]
    fn a_long_document_is_streamed_in_pieces_and_reads_the_same() {
        // Rows enough for several spills of SPILL_BYTES: the written text is the whole text.
        let body: Vec<Block> = (0..400)
            .map(|i| {
                let mut t = Table::new(&["n", "text"]);
                t.text_row(&[i.to_string(), "y".repeat(300)]);
                t.into()
            })
            .collect();
        let doc = vec![crate::doc::Part::section("all", vec![text("All")], body).into()];
        /// Counts the writes it is given.
        struct Pieces(Vec<u8>, usize);
        impl std::io::Write for Pieces {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.1 += 1;
                self.0.extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut out = Pieces(Vec::new(), 0);
        write_html(&mut out, &doc).unwrap();
        let text = String::from_utf8(out.0).unwrap();
        assert!(out.1 > 1, "written in one piece");
        assert!(text.len() > 2 * SPILL_BYTES, "{}", text.len());
        // Every row once, in order: nothing lost or repeated at a spill.
        assert_eq!(text.matches(&"y".repeat(300)).count(), 400);
        let at: Vec<usize> = (0..400)
            .map(|i| text.find(&format!("<td>{i}</td>")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]));
        assert!(text.starts_with("<section id=\"all\">\n<h2>All</h2>\n"));
        assert!(text.ends_with("</section>\n"));
    }

    #[test]
    fn hostile_text_is_inert_everywhere() {
        let evil = "</pre><script>alert(\"x\")</script><img src=x onerror=alert(1)>\u{1b}[2J";
        let mut t = Table::new(&[evil]);
        t.rows.push(crate::doc::Row {
            cells: vec![vec![code(evil)]],
            data: vec![("category", evil.into())],
        });
        let html = to_html(&[
            para(vec![text(evil), span("muted", vec![text(evil)])]),
            Block::Quote(vec![text(evil)]),
            Block::Preformatted(evil.into()),
            t.into(),
        ]);
        assert!(
            !html.contains("<script") && !html.contains("<img"),
            "{html}"
        );
        assert!(!html.contains('\u{1b}'), "{html}");
        assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
        assert!(html.contains("␛[2J"));
    }
}
