//! An inline word diff between two answers: the runs of words, and the inline text that marks
//! what is only in the first and what only in the second.

use similar::{ChangeTag, TextDiff};

use crate::doc::{text, Inline, Line, Style};

/// Longest text (in characters) fed to the diff; longer answers are cut first.
const MAX_CHARS: usize = 2000;

/// The word diff as runs of words: equal, only in the first (`Delete`), only in the second
/// (`Insert`).
pub fn word_diff(old: &str, new: &str) -> Vec<(ChangeTag, String)> {
    let cut = |s: &str| s.chars().take(MAX_CHARS).collect::<String>();
    let (old, new) = (cut(old), cut(new));
    let old_words: Vec<&str> = old.split_whitespace().collect();
    let new_words: Vec<&str> = new.split_whitespace().collect();
    let diff = TextDiff::from_slices(&old_words, &new_words);
    let mut runs: Vec<(ChangeTag, String)> = Vec::new();
    for change in diff.iter_all_changes() {
        match runs.last_mut() {
            Some((tag, text)) if *tag == change.tag() => {
                text.push(' ');
                text.push_str(change.value());
            }
            _ => runs.push((change.tag(), change.value().to_string())),
        }
    }
    runs
}

/// The word diff as inline text: only in the first struck through (`<del>`), only in the second
/// strong (`<ins>`).
pub fn word_diff_line(old: &str, new: &str) -> Line {
    let mut line = Line::new();
    for (i, (tag, run)) in word_diff(old, new).into_iter().enumerate() {
        if i > 0 {
            line.push(text(" "));
        }
        line.push(match tag {
            ChangeTag::Equal => text(run),
            ChangeTag::Delete => Inline::Styled(Style::Deleted, vec![text(run)]),
            ChangeTag::Insert => Inline::Styled(Style::Inserted, vec![text(run)]),
        });
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{para, to_html, to_markdown};

    #[test]
    fn marks_removed_and_added_words() {
        let md = |a: &str, b: &str| to_markdown(&[para(word_diff_line(a, b))]);
        assert_eq!(
            md(
                "The letter r appears 3 times.",
                "The letter r appears 5 times."
            ),
            "The letter r appears ~~3~~ **5** times.\n"
        );
        assert_eq!(md("same text", "same text"), "same text\n");
        assert_eq!(md("**3**", "3"), "~~\\*\\*3\\*\\*~~ **3**\n");
        assert_eq!(
            to_html(&[para(word_diff_line("a <b>", "a c"))]),
            "<p>a <del>&lt;b&gt;</del> <ins>c</ins></p>\n"
        );
    }
}
