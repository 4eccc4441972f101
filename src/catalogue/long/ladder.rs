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
/// The smallest window a long item fits in: the shortest length, the chat template and the
/// answer budget.
pub const MIN_FITTING_CONTEXT: u64 = MIN_LENGTH as u64 + TEMPLATE_TOKENS + ANSWER_TOKENS as u64;
/// The smallest context `--max-context` takes.
pub const MIN_CONTEXT: u64 = 256;
/// The largest context window the ladder plans for, in tokens: 1 Mi, the largest window served
/// models advertise today. `--max-context` above it is refused; a larger `max_model_len` from
/// `GET /models` is clamped to it with a warning (a server's absurd window must not make the
/// ladder build gigabytes of text). The default ladder's top rung is then 917,504 tokens,
/// about 3.7 MB of text per item.
pub const MAX_CONTEXT: u64 = 1 << 20;
/// The most planned tokens the long suite holds in all (each length × depths × items per cell):
/// 64 Mi tokens, about 256 MB of text held while the run sends it; three full default ladders
/// at [`MAX_CONTEXT`] fit.
pub const MAX_SUITE_TOKENS: u64 = 64 << 20;

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

    /// The longest planned length whose items fit the context (with the chat template and the
    /// answer budget), if any can.
    pub fn longest_fitting(&self) -> Option<u64> {
        (self.context >= MIN_FITTING_CONTEXT)
            .then(|| self.context - TEMPLATE_TOKENS - u64::from(ANSWER_TOKENS))
    }

    /// Planned tokens of every item the choice makes (the lengths that fit, each at every depth,
    /// `per_cell` times).
    pub fn planned_tokens(&self) -> u64 {
        let per_length = (self.depths.len() as u64).saturating_mul(self.per_cell as u64);
        self.fitting()
            .0
            .iter()
            .map(|&t| u64::from(t).saturating_mul(per_length))
            .fold(0, u64::saturating_add)
    }

    /// What the flags' value parsers check, for a choice read back from a manifest, and the
    /// bound on the suite's whole size ([`MAX_SUITE_TOKENS`]) that no single flag can check.
    pub fn check(&self) -> Result<(), String> {
        if !(MIN_CONTEXT..=MAX_CONTEXT).contains(&self.context) {
            return Err(format!(
                "the long suite's context is {} tokens; it plans for {MIN_CONTEXT} to {MAX_CONTEXT} (--max-context)",
                self.context
            ));
        }
        if let Some(t) = self.lengths.iter().find(|&&t| !valid_length(t)) {
            return Err(format!(
                "the long suite's length {t} is not between {MIN_LENGTH} and {MAX_CONTEXT} tokens (--lengths)"
            ));
        }
        if let Some(d) = self.depths.iter().find(|&&d| d > 100) {
            return Err(format!(
                "the long suite's depth {d} is not from 0 to 100 (--depths)"
            ));
        }
        if !(1..=MAX_PER_CELL).contains(&self.per_cell) {
            return Err(format!(
                "the long suite's {} items per cell are not from 1 to {MAX_PER_CELL} (--per-cell)",
                self.per_cell
            ));
        }
        let planned = self.planned_tokens();
        if planned > MAX_SUITE_TOKENS {
            return Err(format!(
                "the long suite would plan {planned} prompt tokens in all ({} lengths × {} depths × {} per cell); it holds at most {MAX_SUITE_TOKENS} (about {} MB of text): lower --per-cell, --depths or --lengths",
                self.fitting().0.len(),
                self.depths.len(),
                self.per_cell,
                (MAX_SUITE_TOKENS * CHARS_PER_TOKEN as u64) >> 20
            ));
        }
        Ok(())
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

/// Items per (length, depth) cell at most (`--per-cell`).
pub const MAX_PER_CELL: usize = 1000;

/// A planned length a long item can have: from [`MIN_LENGTH`] to [`MAX_CONTEXT`] tokens.
fn valid_length(tokens: u32) -> bool {
    (u64::from(MIN_LENGTH)..=MAX_CONTEXT).contains(&u64::from(tokens))
}

/// One `--lengths` value: tokens, with `k` for 1024 (`512`, `4k`, `1.5k`), from [`MIN_LENGTH`]
/// to [`MAX_CONTEXT`].
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
    if !(f64::from(MIN_LENGTH)..=MAX_CONTEXT as f64).contains(&tokens) {
        return Err(format!(
            "`{raw}`: a long item holds from {MIN_LENGTH} to {MAX_CONTEXT} tokens"
        ));
    }
    Ok(tokens as u32)
}

/// `--max-context`: a window from [`MIN_CONTEXT`] to [`MAX_CONTEXT`] tokens.
pub fn parse_context(raw: &str) -> Result<u64, String> {
    let tokens: u64 = raw
        .trim()
        .parse()
        .map_err(|_| format!("`{raw}` is not a number of tokens"))?;
    if tokens < MIN_CONTEXT {
        return Err(format!("{tokens} tokens: give at least {MIN_CONTEXT}"));
    }
    if tokens > MAX_CONTEXT {
        return Err(format!(
            "{tokens} tokens is above the {MAX_CONTEXT} the long ladder plans for; give at most \
             {MAX_CONTEXT}"
        ));
    }
    Ok(tokens)
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
    fn contexts_and_lengths_above_the_bound_are_refused() {
        assert_eq!(parse_context("1048576"), Ok(MAX_CONTEXT));
        let e = parse_context("18446744073709551615").unwrap_err();
        assert!(e.contains("above the 1048576"), "{e}");
        assert!(parse_context("18446744073709551616").is_err());
        assert!(parse_context("100").is_err());
        assert!(parse_length("1025k").is_err());
        assert_eq!(parse_length("1024k"), Ok(1 << 20));
    }

    #[test]
    fn a_choice_read_back_is_checked_whole() {
        assert_eq!(LongChoice::default().check(), Ok(()));
        let huge = LongChoice {
            context: u64::MAX,
            ..LongChoice::default()
        };
        assert!(huge.check().unwrap_err().contains("--max-context"));
        let wide = LongChoice {
            context: MAX_CONTEXT,
            per_cell: MAX_PER_CELL,
            ..LongChoice::default()
        };
        let e = wide.check().unwrap_err();
        assert!(e.contains("lower --per-cell"), "{e}");
        let full = LongChoice {
            context: MAX_CONTEXT,
            ..LongChoice::default()
        };
        assert_eq!(full.check(), Ok(()), "the default ladder at the bound fits");
        assert_eq!(full.longest_fitting(), Some(MAX_CONTEXT - 48));
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
