//! A small document model for every report: blocks (parts with a heading, paragraphs, callouts,
//! lists, tables, preformatted text, figures) of inline text (plain, code, strong, in-page
//! links), written as Markdown ([`markdown`]) or as HTML ([`html`]).
//!
//! Every string in the model is plain text, whoever wrote it (a server, a model, a catalogue):
//! the writers escape it for their format, once, and show control characters as visible
//! symbols. A renderer builds the model; it never writes markup itself.

mod chart;
mod escape;
mod html;
mod markdown;
mod template;
mod terminal;

pub use chart::{fmt_num, fmt_signed, quartiles};
pub(crate) use escape::visible;
#[cfg(test)]
pub use html::to_html;
pub use html::{html_text, HtmlWriter};
pub use markdown::{to_markdown, MarkdownWriter};
pub use template::t;
pub use terminal::{tables_for_terminal, terminal_width};

/// A run of inline text.
pub type Line = Vec<Inline>;

/// What `write` writes, as a string: the in-memory form of a writer that streams into a file.
/// Writing into memory cannot fail, and every writer here writes UTF-8.
pub fn written(write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> String {
    let mut bytes = Vec::new();
    let _ = write(&mut bytes);
    String::from_utf8(bytes).unwrap_or_default()
}

/// Where a document goes as it is rendered, a piece at a time: a writer (Markdown, HTML) writes
/// each piece and lets it go, so a long part (every prompt's details) is never held whole;
/// `Blocks` (in tests) keeps them all. A part given by `open` holds everything given until its `close`.
pub trait Sink {
    /// The next blocks.
    fn blocks(&mut self, blocks: Vec<Block>);
    /// The start of `part` (its body is ignored: what follows until `close` is its body).
    fn open(&mut self, part: &Part);
    /// The end of the part opened last.
    fn close(&mut self, part: &Part);
}

/// A [`Sink`] that keeps the document as blocks (for tests that look at them).
#[cfg(test)]
#[derive(Debug, Default)]
pub struct Blocks {
    done: Vec<Block>,
    /// The parts opened and not yet closed, outermost first.
    open: Vec<Part>,
}

#[cfg(test)]
impl Blocks {
    pub fn into_blocks(mut self) -> Vec<Block> {
        while let Some(part) = self.open.pop() {
            self.push(vec![part.into()]);
        }
        self.done
    }

    fn push(&mut self, blocks: Vec<Block>) {
        match self.open.last_mut() {
            Some(part) => part.body.extend(blocks),
            None => self.done.extend(blocks),
        }
    }
}

#[cfg(test)]
impl Sink for Blocks {
    fn blocks(&mut self, blocks: Vec<Block>) {
        self.push(blocks);
    }

    fn open(&mut self, part: &Part) {
        self.open.push(Part {
            body: Vec::new(),
            ..part.clone()
        });
    }

    fn close(&mut self, _: &Part) {
        if let Some(part) = self.open.pop() {
            self.push(vec![part.into()]);
        }
    }
}

/// Inline text.
#[derive(Debug, Clone, PartialEq)]
pub enum Inline {
    Text(String),
    Code(String),
    Styled(Style, Line),
    /// A link to an element of the same document (a part's id).
    Link {
        anchor: String,
        text: Line,
    },
    /// A line break inside a table cell or paragraph.
    Break,
    /// A small chart inside text (HTML); Markdown writes its numbers.
    Figure(Figure),
}

/// How styled text looks. Markdown knows only strong, struck and plain; the classes are HTML's.
#[derive(Debug, Clone, PartialEq)]
pub enum Style {
    Strong,
    /// Strong text with an element id (the browser check finds the headline by it).
    StrongWithId(&'static str),
    /// Only in the first text of a comparison: struck through in Markdown, `<del>` in HTML.
    Deleted,
    /// Only in the second text: strong in Markdown, `<ins>` in HTML.
    Inserted,
    /// A CSS class on a `<span>` (a badge, a muted note, a mark); plain text in Markdown.
    Class(&'static str),
    /// Shown in HTML only (a figure that varies from run to run, such as a latency, which
    /// would make report.md differ between identical runs).
    HtmlOnly,
}

/// A block of the document.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Part(Part),
    Paragraph(Line),
    /// A note that needs attention: a Markdown quote, an HTML callout (`bad`: in red).
    Callout {
        bad: bool,
        text: Line,
    },
    /// A quoted text (a question, a word diff): a Markdown quote, an HTML blockquote.
    Quote(Line),
    List(Vec<Line>),
    Table(Table),
    /// Text shown as written (line breaks kept), monospace.
    Preformatted(String),
    /// A chart (HTML); Markdown writes nothing, as the figures it draws are stated beside it.
    Figure(Figure),
    /// Filter controls over a table's rows by their data (HTML, with its script); Markdown
    /// writes nothing.
    Filters {
        table: &'static str,
        selects: Vec<(&'static str, Vec<String>)>,
    },
}

/// A part of the document under a heading: a section, a subsection, a prompt's details.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// 1: the title; 2: a section; 3 and below: within a section.
    pub level: u8,
    pub id: Option<String>,
    pub title: Line,
    pub fold: Fold,
    pub body: Vec<Block>,
}

/// Whether a part starts open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    Open,
    /// Folded in HTML (`<details>`), a heading in Markdown.
    FoldedInHtml,
    /// Folded in both (`<details>` in Markdown too).
    Folded,
}

impl Part {
    /// An open part.
    pub fn new(level: u8, id: Option<&str>, title: Line, body: Vec<Block>) -> Part {
        Part {
            level,
            id: id.map(str::to_string),
            title,
            fold: Fold::Open,
            body,
        }
    }

    /// A section (level 2) with an id.
    pub fn section(id: &str, title: Line, body: Vec<Block>) -> Part {
        Part::new(2, Some(id), title, body)
    }

    pub fn folded(mut self, fold: Fold) -> Part {
        self.fold = fold;
        self
    }
}

impl From<Part> for Block {
    fn from(p: Part) -> Block {
        Block::Part(p)
    }
}

/// A table: columns, rows of cells, and optionally an id, sortable headers (HTML) and a CSS
/// class.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub id: Option<&'static str>,
    pub class: Option<String>,
    pub sortable: bool,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

/// A column: its header and how its cells sit.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub header: Line,
    pub align: Align,
    /// Drawn in HTML only (a chart whose numbers other columns state, or figures that vary from
    /// run to run); a table with no other column is left out of Markdown.
    pub html_only: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    #[default]
    Left,
    Right,
}

/// A row: its cells and `data-*` values (HTML, for the filters).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row {
    pub cells: Vec<Line>,
    pub data: Vec<(&'static str, String)>,
}

impl Column {
    pub fn new(header: Line) -> Column {
        Column {
            header,
            align: Align::Left,
            html_only: false,
        }
    }
}

impl Table {
    /// A table whose headers are plain text.
    pub fn new<S: AsRef<str>>(headers: &[S]) -> Table {
        Table {
            columns: headers
                .iter()
                .map(|h| Column::new(vec![text(h.as_ref())]))
                .collect(),
            ..Table::default()
        }
    }

    /// Append a row of cells.
    pub fn row(&mut self, cells: Vec<Line>) {
        self.rows.push(Row {
            cells,
            data: Vec::new(),
        });
    }

    /// Append a row of plain-text cells.
    pub fn text_row<S: AsRef<str>>(&mut self, cells: &[S]) {
        self.row(cells.iter().map(|c| vec![text(c.as_ref())]).collect());
    }

    /// Right-align the columns at these positions (numbers).
    pub fn right(mut self, columns: &[usize]) -> Table {
        for i in columns {
            if let Some(c) = self.columns.get_mut(*i) {
                c.align = Align::Right;
            }
        }
        self
    }
}

impl From<Table> for Block {
    fn from(t: Table) -> Block {
        Block::Table(t)
    }
}

/// A chart. Each is drawn as inline SVG in HTML; Markdown writes the numbers of an inline one.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// A horizontal stacked bar `width` wide for a total of `scale`.
    Stacked {
        segments: Vec<Segment>,
        scale: usize,
        width: f64,
    },
    /// A bar filled to `part / whole`, then "part/whole".
    Proportion {
        part: usize,
        whole: usize,
        class: &'static str,
    },
    /// An estimate with its interval over an equivalence band ±margin, all in points.
    Interval {
        estimate: f64,
        low: f64,
        high: f64,
        margin: f64,
    },
    /// Box plots of one quantity per series on a shared axis, under a caption.
    BoxPlots {
        caption: String,
        unit: String,
        series: Vec<(String, Vec<f64>)>,
    },
    /// Answers as horizontal bars, each as long as how many of `repeats` gave it.
    Histogram {
        bars: Vec<(String, u32)>,
        repeats: u32,
        series: usize,
    },
    /// The verdict colour key.
    VerdictLegend,
    /// A line naming the figure after it (HTML).
    Caption(Line),
}

/// One segment of a stacked bar: its count, CSS class and label.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub count: usize,
    pub class: &'static str,
    pub label: &'static str,
}

impl From<Figure> for Block {
    fn from(f: Figure) -> Block {
        Block::Figure(f)
    }
}

/// Plain text.
pub fn text(s: impl Into<String>) -> Inline {
    Inline::Text(s.into())
}

/// Code (an id, a name, a value).
pub fn code(s: impl Into<String>) -> Inline {
    Inline::Code(s.into())
}

/// Strong text.
pub fn strong(line: Line) -> Inline {
    Inline::Styled(Style::Strong, line)
}

/// A `<span class=…>` in HTML; the text alone in Markdown.
pub fn span(class: &'static str, line: Line) -> Inline {
    Inline::Styled(Style::Class(class), line)
}

/// A link to the part with this id.
pub fn link(anchor: impl Into<String>, line: Line) -> Inline {
    Inline::Link {
        anchor: anchor.into(),
        text: line,
    }
}

/// A paragraph.
pub fn para(line: Line) -> Block {
    Block::Paragraph(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A section of folded parts, as a whole part and as the pieces a sink is handed.
    fn section(fold: Fold) -> (Part, Vec<Block>) {
        let inner: Vec<Block> = (0..3)
            .map(|i| {
                Part::new(
                    3,
                    Some(&format!("p{i}")),
                    vec![text(format!("prompt {i}"))],
                    vec![para(vec![text("body")])],
                )
                .folded(fold)
                .into()
            })
            .collect();
        let whole = Part::section("all", vec![text("All")], inner.clone());
        (whole, inner)
    }

    /// Hand `pieces` to `sink` inside `whole`'s opening and closing.
    fn in_pieces(sink: &mut dyn Sink, whole: &Part, pieces: &[Block]) {
        sink.open(whole);
        sink.blocks(vec![para(vec![text("intro")])]);
        for b in pieces {
            sink.blocks(vec![b.clone()]);
        }
        sink.close(whole);
    }

    #[test]
    fn a_part_handed_on_in_pieces_reads_as_the_whole_part() {
        for fold in [Fold::Open, Fold::FoldedInHtml, Fold::Folded] {
            let (mut whole, pieces) = section(fold);
            whole.body.insert(0, para(vec![text("intro")]));
            let doc: Vec<Block> = vec![whole.clone().into()];

            let mut kept = Blocks::default();
            in_pieces(&mut kept, &whole, &pieces);
            assert_eq!(kept.into_blocks(), doc, "{fold:?}");

            let mut md = Vec::new();
            let mut writer = MarkdownWriter::new(&mut md);
            in_pieces(&mut writer, &whole, &pieces);
            writer.finish().unwrap();
            assert_eq!(
                String::from_utf8(md).unwrap(),
                to_markdown(&doc),
                "{fold:?}"
            );

            let mut html = Vec::new();
            let mut writer = HtmlWriter::new(&mut html);
            in_pieces(&mut writer, &whole, &pieces);
            writer.finish().unwrap();
            assert_eq!(String::from_utf8(html).unwrap(), to_html(&doc), "{fold:?}");
        }
    }
}
