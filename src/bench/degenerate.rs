//! Runaway repetition: a reply whose tail is one unit repeated over and over (the model looped
//! until the budget ran out).

/// The longest repeating unit looked for, in characters.
const MAX_PERIOD: usize = 400;
/// Only the end of a reply is examined.
const WINDOW: usize = 4000;
/// The repeated tail must be at least this long...
const MIN_BLOCK: usize = 200;
/// ...and hold at least this many copies of its unit.
const MIN_COPIES: usize = 3;

/// The repeating unit and how many characters of the tail it covers, if the reply ends in a
/// runaway repetition.
pub fn repetition(text: &str) -> Option<(String, usize)> {
    let chars: Vec<char> = text.trim_end().chars().collect();
    let chars = &chars[chars.len().saturating_sub(WINDOW)..];
    let n = chars.len();
    if n < MIN_BLOCK {
        return None;
    }
    for p in 1..=MAX_PERIOD.min(n / MIN_COPIES) {
        // Count how far back from the end every character equals the one `p` earlier.
        let mut run = 0;
        while run + p < n && chars[n - 1 - run] == chars[n - 1 - run - p] {
            run += 1;
        }
        let block = run + p;
        if block >= MIN_BLOCK && block / p >= MIN_COPIES {
            let unit: String = chars[n - p..].iter().collect();
            return Some((unit, block));
        }
    }
    None
}

pub fn is_degenerate(text: &str) -> bool {
    repetition(text).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_are_caught() {
        assert!(is_degenerate(&"tok ".repeat(80)));
        let looped = format!(
            "Here is the plan. {}",
            "I will check the file again and then I will check it once more. ".repeat(6)
        );
        let (unit, covered) = repetition(&looped).unwrap();
        assert!(unit.contains("check"), "{unit}");
        assert!(covered >= 300);
        assert!(is_degenerate(&"=".repeat(300)));
    }

    #[test]
    fn ordinary_text_is_not() {
        let prose = "The printing press changed how ideas travelled. Books became cheaper, \
                     literacy spread, and scholars could compare identical copies of a text. \
                     Within fifty years presses operated in hundreds of European towns, and \
                     pamphlets carried arguments faster than any courier could.";
        assert!(!is_degenerate(prose));
        let code = "fn main() {\n    let xs = vec![1, 2, 3];\n    for x in xs {\n        println!(\"{x}\");\n    }\n}\n";
        assert!(!is_degenerate(&code.repeat(2)));
        let json = r#"[{"id": 1, "title": "pack books"}, {"id": 2, "title": "book van"}, {"id": 3, "title": "clean flat"}]"#;
        assert!(!is_degenerate(json));
        assert!(!is_degenerate("short short short short"));
    }
}
