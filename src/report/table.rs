//! A Markdown table with cells escaped so that answers cannot break the layout.

/// Render a Markdown table. Pipes and newlines inside cells are escaped.
pub fn markdown_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    out.push_str(&row_line(headers.iter().map(|h| h.to_string())));
    out.push_str(&row_line(headers.iter().map(|_| "---".to_string())));
    for r in rows {
        out.push_str(&row_line(r.iter().cloned()));
    }
    out
}

fn row_line(cells: impl Iterator<Item = String>) -> String {
    let cells: Vec<String> = cells.map(|c| escape(&c)).collect();
    format!("| {} |\n", cells.join(" | "))
}

fn escape(cell: &str) -> String {
    cell.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace("\r\n", " ")
        .replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table() {
        let t = markdown_table(&["a", "b"], &[vec!["x|y".into(), "two\nlines".into()]]);
        assert_eq!(t, "| a | b |\n| --- | --- |\n| x\\|y | two lines |\n");
    }
}
