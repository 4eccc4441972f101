//! An inline word diff between two answers: the runs of words, and their Markdown rendering
//! ~~only in the first~~ **only in the second**.

use similar::{ChangeTag, TextDiff};

/// Longest text (in characters) fed to the diff; longer answers are cut first.
const MAX_CHARS: usize = 2000;

/// The word diff as runs of words: equal, only in the first (`Delete`), only in the second
/// (`Insert`). Each renderer marks the runs its own way (Markdown here, HTML in `report::html`).
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

pub fn inline_word_diff(old: &str, new: &str) -> String {
    word_diff(old, new)
        .into_iter()
        .map(|(tag, run)| {
            let text = escape(&run);
            match tag {
                ChangeTag::Equal => text,
                ChangeTag::Delete => format!("~~{text}~~"),
                ChangeTag::Insert => format!("**{text}**"),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Keep the model's own markup from interfering with the diff marks.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '*' | '~' | '_' | '`' | '|' | '\\' | '<' | '>' | '[' | ']'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_removed_and_added_words() {
        assert_eq!(
            inline_word_diff(
                "The letter r appears 3 times.",
                "The letter r appears 5 times."
            ),
            "The letter r appears ~~3~~ **5** times."
        );
        assert_eq!(inline_word_diff("same text", "same text"), "same text");
        assert_eq!(inline_word_diff("**3**", "3"), "~~\\*\\*3\\*\\*~~ **3**");
    }
}
