//! The identity section: per pair, which evidence the comparison rests on (decode logprobs or
//! text alone), the A-vs-A control beside the pair (prompts, tokens compared, equal logprobs,
//! mean and max |Δ logprob|, identical texts, where the answers part), and what decided the
//! verdict and when (`analysis/numerics.rs`).

use crate::analysis::numerics::{Closeness, Level, PairIdentity};
use crate::analysis::Results;
use crate::doc::{para, t, text, Block, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    let Some(identity) = &results.summary.identity else {
        return Vec::new();
    };
    let mut body = vec![para(t(
        "Does each endpoint compute what the reference computes? Each pair is set against the reference answering the same prompts a second time in the same run (the control), so the reference's own nondeterminism is not read as a difference. **Verdict: $.**",
        &[identity.verdict.as_str()],
    ))];
    if let Some(note) = &results.sampling.logprobs {
        body.push(para(vec![text(format!("Decode logprobs: {note}."))]));
    }
    for pair in &identity.evidence {
        body.extend(pair_blocks(pair));
    }
    vec![Part::section("identity", vec![text("Identity")], body).into()]
}

fn pair_blocks(pair: &PairIdentity) -> Vec<Block> {
    let level = match pair.level {
        Level::DecodeLogprobs => "decode logprobs on every answer",
        Level::Text => "greedy text only (the answers carried no logprobs)",
        Level::Mixed => "decode logprobs where all three answers carried them, text elsewhere",
    };
    let mut out = vec![para(t(
        &format!(
            "`$` against `$`: **{}**, from {level}, over {} prompts the reference answered twice. {}",
            pair.verdict.as_str(),
            pair.control_prompts,
            pair.because.join("; ")
        ),
        &[&pair.other, &pair.reference],
    ))];
    if pair.control_prompts == 0 {
        return out;
    }
    let mut table = Table::new(&[
        "",
        "prompts",
        "identical text",
        "tokens compared",
        "equal logprob",
        "mean |Δ logprob|",
        "max |Δ logprob|",
        "median first divergence",
    ])
    .right(&[1, 2, 3, 4, 5, 6, 7]);
    let control = format!("control: {} against itself", pair.reference);
    let versus = format!("pair: {} against {}", pair.other, pair.reference);
    table.text_row(&row(&control, &pair.control));
    table.text_row(&row(&versus, &pair.pair));
    out.push(table.into());
    let test = &pair.test;
    out.push(para(vec![text(format!(
        "Sign test over prompts: the pair further apart than the control on {}, the control further on {}, tied on {}; e-value {:.1} (decides at {:.0}; false-positive rate at most {:.0}% by Ville's inequality){}.",
        test.pair_further,
        test.control_further,
        test.ties,
        test.e_value,
        1.0 / test.alpha,
        100.0 * test.alpha,
        match (test.decided_at_prompt, test.decided_at_tokens) {
            (Some(p), Some(k)) => format!("; decided after {p} prompts and {k} tokens"),
            _ => String::new(),
        }
    ))]));
    out
}

fn row(label: &str, c: &Closeness) -> Vec<String> {
    let nats = |x: Option<f64>| match x {
        None => "—".to_string(),
        Some(0.0) => "0".to_string(),
        Some(v) if v >= 0.01 => format!("{v:.3}"),
        Some(v) => format!("{v:.1e}"),
    };
    let share = |n: usize, of: usize| {
        if of == 0 {
            "—".to_string()
        } else {
            format!("{n} ({:.0}%)", 100.0 * n as f64 / of as f64)
        }
    };
    vec![
        label.to_string(),
        c.prompts.to_string(),
        share(c.exact_text, c.prompts),
        c.tokens_compared.to_string(),
        share(c.equal_logprob_tokens, c.tokens_compared),
        nats(c.mean_abs_delta_logprob),
        nats(c.max_abs_delta_logprob),
        c.median_first_divergence
            .map_or("—".to_string(), |d| d.to_string()),
    ]
}
