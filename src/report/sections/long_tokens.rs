//! The long-context section's token-level part (`--suite long --logprobs`): per pair, the
//! passages' KL, p99 KL and same top token by position bucket, the reference's control (its own
//! second request) beside them, and whether the KL grows with position.

use std::collections::BTreeSet;

use crate::analysis::long::long_context::{LongTokens, PositionBucket, PositionPair};
use crate::doc::{para, t, text, Block, Table};

/// The blocks that follow the long-context section's needle tables.
pub(super) fn blocks(tokens: &LongTokens) -> Vec<Block> {
    let control = &tokens.control;
    let mut body = vec![para(t(
        &format!(
            "Token-level evidence by position: each long item's passage (its text, no chat template) teacher-forced as plain text on every endpoint with prompt logprobs (top-{}), {}. KL is KL(reference ‖ other) in nats over the reference's top-k plus one tail bucket, bucketed by the token's position in the passage. The control is `$` against its own second request of the same passages, sent after the others: 0 on a deterministic server (or one that served it from its prompt cache), otherwise the server's own noise floor ({}).",
            tokens.top_k,
            passages(tokens.passages),
            control.statement
        ),
        &[&control.reference],
    ))];
    for pair in &tokens.pairs {
        body.push(para(t(
            &format!(
                "`$` against `$`, {}: {}.",
                passages(pair.passages_compared),
                pair.statement
            ),
            &[&pair.other, &pair.reference],
        )));
        body.push(table(pair, control).into());
    }
    if !tokens.problems.is_empty() {
        let kinds: BTreeSet<&str> = tokens.problems.iter().map(|p| p.kind.as_str()).collect();
        body.push(para(vec![text(format!(
            "{} passage scorings not compared ({}); see results.json `long_context.token_agreement.problems`.",
            tokens.problems.len(),
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        ))]));
    }
    body
}

fn passages(n: usize) -> String {
    format!("{n} passage{}", if n == 1 { "" } else { "s" })
}

/// Rows: the position buckets of the pair or of the control; columns: the pair's figures, then
/// the control's.
fn table(pair: &PositionPair, control: &PositionPair) -> Table {
    let mut table = Table::new(&[
        "position (tokens)",
        "tokens",
        "mean KL",
        "p99 KL",
        "same top token",
        "control tokens",
        "control mean KL",
        "control p99 KL",
        "control same top",
    ])
    .right(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let starts: BTreeSet<u64> = pair
        .buckets
        .iter()
        .chain(&control.buckets)
        .map(|b| b.from_tokens)
        .collect();
    for start in starts {
        let find = |p: &'_ PositionPair| p.buckets.iter().find(|b| b.from_tokens == start).cloned();
        let (ours, theirs) = (find(pair), find(control));
        let Some(label) = ours.as_ref().or(theirs.as_ref()).map(PositionBucket::label) else {
            continue;
        };
        let mut row = vec![label];
        row.extend(figures(ours.as_ref()));
        row.extend(figures(theirs.as_ref()));
        table.text_row(&row);
    }
    table
}

/// tokens, mean KL, p99 KL and same top token of a bucket, or dashes.
fn figures(bucket: Option<&PositionBucket>) -> [String; 4] {
    let Some(b) = bucket else {
        return ["—", "—", "—", "—"].map(String::from);
    };
    let kl = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.4}"));
    [
        b.summary.tokens.to_string(),
        kl(b.summary.mean_kld),
        kl(b.summary.p99_kld),
        b.summary
            .top1_agreement
            .map_or("—".to_string(), |s| format!("{:.1}%", s * 100.0)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::to_markdown;
    use crate::logprobs::metrics::Summary;

    fn bucket(from: u64, to: Option<u64>, tokens: usize, kl: f64) -> PositionBucket {
        PositionBucket {
            from_tokens: from,
            to_tokens: to,
            summary: Summary {
                tokens,
                mean_kld: Some(kl),
                p99_kld: Some(kl * 3.0),
                top1_agreement: Some(0.995),
                ..Summary::default()
            },
        }
    }

    #[test]
    fn each_pair_gets_its_buckets_with_the_control_beside_them() {
        let pair = PositionPair {
            reference: "ref".into(),
            other: "other".into(),
            passages_compared: 2,
            buckets: vec![bucket(0, Some(512), 1024, 0.0), bucket(512, Some(2048), 376, 0.02)],
            statement: "mean KL grows with position: 0.0000 nats at positions 0–512 to 0.0200 at 512–2k (+0.0200 nats)".into(),
        };
        let control = PositionPair {
            reference: "ref".into(),
            other: "ref".into(),
            passages_compared: 2,
            buckets: vec![bucket(0, Some(512), 1024, 0.0)],
            statement: "mean KL is 0 at every position".into(),
        };
        let tokens = LongTokens {
            top_k: 10,
            passages: 2,
            pairs: vec![pair],
            control,
            problems: Vec::new(),
            missing: 0,
        };
        let md = to_markdown(&blocks(&tokens));
        assert!(
            md.contains("`other` against `ref`, 2 passages: mean KL grows"),
            "{md}"
        );
        assert!(
            md.contains(
                "| 0–512 | 1024 | 0.0000 | 0.0000 | 99.5% | 1024 | 0.0000 | 0.0000 | 99.5% |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| 512–2k | 376 | 0.0200 | 0.0600 | 99.5% | — | — | — | — |"),
            "{md}"
        );
        assert!(md.contains("mean KL is 0 at every position"), "{md}");
        assert!(md.contains("The control is `ref` against its own"), "{md}");
    }
}
