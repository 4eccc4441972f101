//! String helpers every layer uses: one-line clipping with an ellipsis for display, block
//! clipping that says how much was cut, and one shared copy of each distinct string for data
//! held many times over.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

/// The first `max` characters of `s` on one line, with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// The longest start of `s` of at most `max` bytes that ends on a character boundary.
pub fn head_bytes(s: &str, max: usize) -> &str {
    let mut cut = max.min(s.len());
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

/// `s` whole when it has at most `max` characters; else its first `max` characters, line breaks
/// kept, and a last line saying how many more there were.
pub fn clip_block(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((cut, _)) => {
            let more = s[cut..].chars().count();
            Cow::Owned(format!(
                "{}\n[… clipped: {more} more characters]",
                &s[..cut]
            ))
        }
    }
}

/// One shared copy of each distinct string: a long run repeats the same names and answers
/// thousands of times, and each repeat then holds a pointer rather than a copy.
#[derive(Debug, Default)]
pub struct Strings(HashSet<Arc<str>>);

impl Strings {
    /// The shared copy of `text`, made on first sight.
    pub fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(kept) = self.0.get(text) {
            return Arc::clone(kept);
        }
        let kept: Arc<str> = text.into();
        self.0.insert(Arc::clone(&kept));
        kept
    }

    /// Point `text` at the shared copy of what it says (kept as the copy on first sight).
    pub fn share(&mut self, text: &mut Arc<str>) {
        match self.0.get(&**text) {
            Some(kept) => *text = Arc::clone(kept),
            None => {
                self.0.insert(Arc::clone(text));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_to_one_line_with_an_ellipsis() {
        assert_eq!(clip("a  b\nc", 10), "a b c");
        assert_eq!(clip("abcdefghij", 5), "abcd…");
        assert_eq!(clip("ééééé", 3), "éé…");
    }

    #[test]
    fn a_clipped_block_keeps_its_lines_and_says_how_much_was_cut() {
        assert_eq!(clip_block("a\nb", 3), "a\nb");
        assert_eq!(
            clip_block("a\nbcé€", 3),
            "a\nb\n[… clipped: 3 more characters]"
        );
    }

    #[test]
    fn equal_strings_share_one_copy() {
        let mut strings = Strings::default();
        let a = strings.get("42");
        assert!(Arc::ptr_eq(&a, &strings.get("42")));
        assert!(!Arc::ptr_eq(&a, &strings.get("41")));
        let mut own: Arc<str> = "42".into();
        strings.share(&mut own);
        assert!(Arc::ptr_eq(&a, &own));
    }
}
