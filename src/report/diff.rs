//! An inline word diff between two answers, in Markdown: ~~only in the first~~ **only in the second**.

use similar::{ChangeTag, TextDiff};

/// Longest text (in characters) fed to the diff; longer answers are cut first.
const MAX_CHARS: usize = 2000;

pub fn inline_word_diff(old: &str, new: &str) -> String {
    let cut = |s: &str| s.chars().take(MAX_CHARS).collect::<String>();
    let (old, new) = (cut(old), cut(new));
    let old_words: Vec<&str> = old.split_whitespace().collect();
    let new_words: Vec<&str> = new.split_whitespace().collect();
    let diff = TextDiff::from_slices(&old_words, &new_words);
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut tag = ChangeTag::Equal;
    let flush = |tag: ChangeTag, run: &mut Vec<&str>, out: &mut Vec<String>| {
        if run.is_empty() {
            return;
        }
        let text = escape(&run.join(" "));
        out.push(match tag {
            ChangeTag::Equal => text,
            ChangeTag::Delete => format!("~~{text}~~"),
            ChangeTag::Insert => format!("**{text}**"),
        });
        run.clear();
    };
    for change in diff.iter_all_changes() {
        if change.tag() != tag {
            flush(tag, &mut run, &mut out);
            tag = change.tag();
        }
        run.push(change.value());
    }
    flush(tag, &mut run, &mut out);
    out.join(" ")
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
