//! A tiny JavaScript-aware character scan: which bytes are code (not inside a string, template
//! literal or comment), and bracket matching over those bytes. Regex literals are not recognised;
//! that is accepted for the short functions models write.

/// For each byte of `src`: true when it is code. Quoted strings end at a newline, so an
/// apostrophe in prose around the code only affects its own line.
pub fn code_mask(src: &str) -> Vec<bool> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Code,
        Quote(u8),
        Template,
        LineComment,
        BlockComment,
    }
    let bytes = src.as_bytes();
    let mut mask = vec![false; bytes.len()];
    let mut state = State::Code;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        match state {
            State::Code => match (b, next) {
                (b'/', Some(b'/')) => state = State::LineComment,
                (b'/', Some(b'*')) => {
                    state = State::BlockComment;
                    i += 1;
                }
                (b'\'' | b'"', _) => state = State::Quote(b),
                (b'`', _) => state = State::Template,
                _ => mask[i] = true,
            },
            State::Quote(q) => {
                if b == b'\\' && next.is_some_and(|n| n != b'\n') {
                    i += 1;
                } else if b == q || b == b'\n' {
                    state = State::Code;
                }
            }
            State::Template => {
                if b == b'\\' {
                    i += 1;
                } else if b == b'`' {
                    state = State::Code;
                }
            }
            State::LineComment => {
                if b == b'\n' {
                    state = State::Code;
                    mask[i] = true;
                }
            }
            State::BlockComment => {
                if b == b'*' && next == Some(b'/') {
                    state = State::Code;
                    i += 1;
                }
            }
        }
        i += 1;
    }
    mask
}

/// Net bracket depth change of the code bytes in `range`.
pub fn depth_delta(src: &str, mask: &[bool], range: std::ops::Range<usize>) -> i64 {
    src.as_bytes()[range.clone()]
        .iter()
        .zip(&mask[range])
        .filter(|(_, code)| **code)
        .map(|(b, _)| match b {
            b'(' | b'[' | b'{' => 1,
            b')' | b']' | b'}' => -1,
            _ => 0,
        })
        .sum()
}

/// The index of the bracket closing the one at `open` (code bytes only).
pub fn matching_close(src: &str, mask: &[bool], open: usize) -> Option<usize> {
    let bytes = src.as_bytes();
    let mut depth = 0i64;
    for i in open..bytes.len() {
        if !mask[i] {
            continue;
        }
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_comments_and_templates_are_not_code() {
        let src = "f('(', \"}\", `{`) // (\n/* { */ g()";
        let mask = code_mask(src);
        assert_eq!(depth_delta(src, &mask, 0..src.len()), 0);
        assert_eq!(matching_close(src, &mask, 1), src.find(") //"));
        assert!(mask[src.find("g()").unwrap()]);
    }

    #[test]
    fn a_quote_in_prose_ends_at_the_line() {
        let src = "Here's the code:\nfunction f() {";
        let mask = code_mask(src);
        assert_eq!(depth_delta(src, &mask, 0..src.len()), 1);
    }
}
