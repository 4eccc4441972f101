//! The long suite's shape: which prompt lengths (`--lengths`, else a ladder up to the context),
//! which needle depths (`--depths`), how many items per cell, and which cells fit the context.

use serde::{Deserialize, Serialize};

/// Planned prompt length from text: characters per token of English prose under common BPE
/// tokenizers (an estimate; the measured length is the server's `usage.prompt_tokens`).
pub const CHARS_PER_TOKEN: usize = 4;
/// The answer budget of a long item (a six-digit code).
pub const ANSWER_TOKENS: u32 = 32;
/// Tokens a chat template adds around the user message, allowed for when checking a fit.
pub const TEMPLATE_TOKENS: u64 = 16;
/// The context assumed when neither `GET /models` nor `--max-context` says otherwise.
pub const DEFAULT_CONTEXT: u64 = 8192;
/// Depths when `--depths` is not given: the needle at the start, a quarter, the middle…
pub const DEFAULT_DEPTHS: [u8; 5] = [0, 25, 50, 75, 100];
/// Items per (length, depth) cell when `--per-cell` is not given.
pub const DEFAULT_PER_CELL: usize = 2;
/// The shortest length a long item can have: the question and frame alone take this much.
pub const MIN_LENGTH: u32 = 128;

/// How the long suite is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LongChoice {
    /// Planned prompt lengths in tokens, ascending without repeats; empty: the default ladder up
    /// to `context`.
    #[serde(default)]
    pub lengths: Vec<u32>,
    /// Needle depths in percent of the haystack, ascending without repeats.
    pub depths: Vec<u8>,
    /// Items per (length, depth) cell.
    pub per_cell: usize,
    /// The context window items must fit in (prompt plus answer budget), in tokens.
    pub context: u64,
}

impl Default for LongChoice {
    fn default() -> Self {
        LongChoice {
            lengths: Vec::new(),
            depths: DEFAULT_DEPTHS.to_vec(),
            per_cell: DEFAULT_PER_CELL,
            context: DEFAULT_CONTEXT,
        }
    }
}

/// A (length, depth) cell that does not fit the context, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub tokens: u32,
    pub reason: String,
}

impl LongChoice {
    /// The lengths asked for: `lengths`, else the default ladder up to the context.
    pub fn ladder(&self) -> Vec<u32> {
        if self.lengths.is_empty() {
            default_ladder(self.context)
        } else {
            self.lengths.clone()
        }
    }

    /// The lengths whose items fit the context (planned prompt, template and answer budget),
    /// and the notes for those that do not: they are never sent.
    pub fn fitting(&self) -> (Vec<u32>, Vec<Skipped>) {
        let mut keep = Vec::new();
        let mut skipped = Vec::new();
        for tokens in self.ladder() {
            let needed = u64::from(tokens) + TEMPLATE_TOKENS + u64::from(ANSWER_TOKENS);
            if needed > self.context {
                skipped.push(Skipped {
                    tokens,
                    reason: format!(
                        "long items of {tokens} tokens skipped: {tokens} planned prompt tokens + {TEMPLATE_TOKENS} for the chat template + {ANSWER_TOKENS} to answer exceed the {} token context",
                        self.context
                    ),
                });
            } else {
                keep.push(tokens);
            }
        }
        (keep, skipped)
    }
}

/// Powers of two from 1k below 7/8 of the context, then 7/8 of the context itself (rounded down
/// to 1k when above it): 1k, 2k, 4k, 7k for an 8k context.
pub fn default_ladder(context: u64) -> Vec<u32> {
    let top = context.saturating_mul(7) / 8;
    let top = if top >= 1024 { top / 1024 * 1024 } else { top };
    let mut ladder = Vec::new();
    let mut rung: u64 = 1024;
    while rung < top {
        ladder.extend(u32::try_from(rung).ok());
        rung *= 2;
    }
    if top >= u64::from(MIN_LENGTH) {
        ladder.extend(u32::try_from(top).ok());
    }
    ladder
}

/// One `--lengths` value: tokens, with `k` for 1024 (`512`, `4k`, `1.5k`).
pub fn parse_length(raw: &str) -> Result<u32, String> {
    let raw = raw.trim();
    let lower = raw.to_ascii_lowercase();
    let (number, unit) = match lower.strip_suffix('k') {
        Some(n) => (n, 1024.0),
        None => (lower.as_str(), 1.0),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{raw}` is not a length in tokens (like 512 or 4k)"))?;
    let tokens = (value * unit).round();
    if !(f64::from(MIN_LENGTH)..=f64::from(u32::MAX)).contains(&tokens) {
        return Err(format!(
            "`{raw}`: a long item holds at least {MIN_LENGTH} tokens"
        ));
    }
    Ok(tokens as u32)
}

/// One `--depths` value: a percentage from 0 (the start of the haystack) to 100 (its end).
pub fn parse_depth(raw: &str) -> Result<u8, String> {
    let raw = raw.trim();
    match raw.trim_end_matches('%').parse::<u8>() {
        Ok(d) if d <= 100 => Ok(d),
        _ => Err(format!("`{raw}` is not a depth from 0 to 100")),
    }
}

/// Sorted, without repeats.
pub fn sorted<T: Ord>(mut values: Vec<T>) -> Vec<T> {
    values.sort_unstable();
    values.dedup();
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_ladder_climbs_to_seven_eighths_of_the_context() {
        assert_eq!(default_ladder(8192), vec![1024, 2048, 4096, 7168]);
        assert_eq!(default_ladder(4096), vec![1024, 2048, 3072]);
        assert_eq!(default_ladder(1024), vec![896]);
        assert!(default_ladder(100).is_empty());
        assert_eq!(default_ladder(1 << 20).last(), Some(&917_504));
    }

    #[test]
    fn lengths_and_depths_parse_with_k_for_1024() {
        assert_eq!(parse_length("4k"), Ok(4096));
        assert_eq!(parse_length(" 512 "), Ok(512));
        assert_eq!(parse_length("1.5K"), Ok(1536));
        assert!(parse_length("64").is_err());
        assert!(parse_length("lots").is_err());
        assert_eq!(parse_depth("50"), Ok(50));
        assert_eq!(parse_depth("75%"), Ok(75));
        assert!(parse_depth("101").is_err());
    }

    #[test]
    fn a_length_that_would_not_fit_is_skipped_with_a_note() {
        let choice = LongChoice {
            lengths: vec![1024, 4096, 8192],
            context: 8192,
            ..LongChoice::default()
        };
        let (keep, skipped) = choice.fitting();
        assert_eq!(keep, vec![1024, 4096]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].tokens, 8192);
        assert!(skipped[0].reason.contains("8192 token context"));
    }
}
