//! Markdown output made to read in a terminal: every pipe table becomes an aligned table drawn by
//! `tabled`, as wide as the terminal at most (the widest columns wrap first); everything else is
//! left as written. Only what goes to a terminal is changed: a pipe or a file gets the Markdown.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::peaker::PriorityMax;
use tabled::settings::{Alignment, Style, Width};

/// `markdown` with each pipe table drawn for a terminal `width` columns wide.
pub fn tables_for_terminal(markdown: &str, width: usize) -> String {
    let lines: Vec<&str> = markdown.split_inclusive('\n').collect();
    let mut out = String::with_capacity(markdown.len());
    let mut i = 0;
    while i < lines.len() {
        let rule = lines.get(i + 1).and_then(|l| alignments(l));
        match (is_row(lines[i]), rule) {
            (true, Some(aligns)) if cells(lines[i]).len() == aligns.len() => {
                let mut end = i + 2;
                while end < lines.len() && is_row(lines[end]) {
                    end += 1;
                }
                let rows: Vec<Vec<String>> = std::iter::once(lines[i])
                    .chain(lines[i + 2..end].iter().copied())
                    .map(cells)
                    .collect();
                out.push_str(&draw(&rows, &aligns, width));
                out.push('\n');
                i = end;
            }
            _ => {
                out.push_str(lines[i]);
                i += 1;
            }
        }
    }
    out
}

/// The terminal's width in columns, when stdout is one.
pub fn terminal_width() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0))
}

fn is_row(line: &str) -> bool {
    let l = line.trim_end();
    l.len() >= 2 && l.starts_with('|') && l.ends_with('|') && !l.ends_with("\\|")
}

/// A table's rule line (`| --- | ---: |`): each column's alignment (true: right).
fn alignments(line: &str) -> Option<Vec<bool>> {
    if !is_row(line) {
        return None;
    }
    cells(line)
        .iter()
        .map(|c| {
            let dashes = c.trim_start_matches(':').trim_end_matches(':');
            (!dashes.is_empty() && dashes.chars().all(|ch| ch == '-')).then(|| c.ends_with(':'))
        })
        .collect()
}

/// A row's cells, unescaped for reading (`\|` is a pipe, `\*` a star, `<br>` a line break).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim_end();
    let inner = &inner[1..inner.len() - 1];
    let mut cells = vec![String::new()];
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) if next.is_ascii_punctuation() => cells.last_mut().unwrap().push(next),
                Some(next) => cells.last_mut().unwrap().extend(['\\', next]),
                None => cells.last_mut().unwrap().push('\\'),
            },
            '|' => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    cells
        .into_iter()
        .map(|c| c.trim().replace("<br>", "\n"))
        .collect()
}

fn draw(rows: &[Vec<String>], right: &[bool], width: usize) -> String {
    let mut builder = Builder::default();
    for row in rows {
        builder.push_record(row.iter().map(String::as_str));
    }
    let mut table = builder.build();
    table.with(Style::sharp());
    for (i, _) in right.iter().enumerate().filter(|(_, r)| **r) {
        table.modify(Columns::one(i), Alignment::right());
    }
    table.with(
        Width::wrap(width.max(20))
            .keep_words(true)
            .priority(PriorityMax::right()),
    );
    table.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "Intro line.\n\n| id | n | prompt |\n| --- | ---: | --- |\n| a\\|b | 7 | What is 2+2? |\n| long | 12 | two<br>lines |\n\n3 prompts\n";

    #[test]
    fn a_pipe_table_is_drawn_aligned_and_the_rest_is_kept() {
        let out = tables_for_terminal(MD, 80);
        assert!(out.starts_with("Intro line.\n\n┌"), "{out}");
        assert!(out.ends_with("┘\n\n3 prompts\n"), "{out}");
        assert!(out.contains("│ a|b  │  7 │ What is 2+2? │"), "{out}");
        assert!(out.contains("│ long │ 12 │ two          │"), "{out}");
        assert!(!out.contains("---"), "{out}");
        // Every line of the table is as wide as the others.
        let widths: Vec<usize> = out
            .lines()
            .filter(|l| l.starts_with(['┌', '│', '├', '└']))
            .map(|l| l.chars().count())
            .collect();
        assert!(widths.windows(2).all(|w| w[0] == w[1]), "{widths:?}");
    }

    #[test]
    fn a_table_wider_than_the_terminal_wraps_to_fit() {
        let long = "word ".repeat(40);
        let md = format!("| id | prompt |\n| --- | --- |\n| x | {long} |\n");
        let out = tables_for_terminal(&md, 40);
        assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
        assert_eq!(out.matches("word").count(), 40, "{out}");
    }

    #[test]
    fn text_that_only_looks_like_a_table_is_left_alone() {
        for md in [
            "| not a table |\nplain\n",
            "| a | b |\n| --- |\n",
            "|x|\n",
            "{\n  \"a\": \"|\"\n}\n",
        ] {
            assert_eq!(tables_for_terminal(md, 80), md);
        }
    }
}
