//! The identity section: per pair, which evidence the comparison rests on (decode logprobs or
//! text alone), the A-vs-A control beside the pair (prompts, identical texts, where the answers
//! part, tokens compared, equal logprobs, mean and max |Δ logprob|), the method (the distance and
//! the two tests by betting), what decided the verdict and when, and how a growing control grew
//! (`analysis/identity/numerics.rs`).

use crate::analysis::identity::numerics::{
    e_text, Closeness, ControlGrowth, IdentityTest, Level, PairIdentity,
};
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
    if let Some(growth) = &identity.control_growth {
        body.push(para(t(&growth_text(growth), &[])));
    }
    if let Some(note) = &results.sampling.logprobs {
        body.push(para(vec![text(format!("Decode logprobs: {note}."))]));
    }
    if let Some(first) = identity.evidence.first() {
        body.push(para(vec![text(method_text(&first.test))]));
    }
    for pair in &identity.evidence {
        body.extend(pair_blocks(pair));
    }
    vec![Part::section("identity", vec![text("Identity")], body).into()]
}

/// "The control grew … 135 prompts over 4 looks (30, 60, 90, 135)", a template for `t`.
fn growth_text(growth: &ControlGrowth) -> String {
    let looks: Vec<String> = growth.looks.iter().map(usize::to_string).collect();
    match growth.looks.last() {
        None => format!(
            "The control grows until identity is decided (`--control auto`, at most {} prompts); no look was taken.",
            growth.max
        ),
        Some(last) => format!(
            "The control grew until identity was decided or its cap was reached (`--control auto`, at most {} prompts, never more than the run's): {last} prompts over {} look{} ({}).",
            growth.max,
            looks.len(),
            if looks.len() == 1 { "" } else { "s" },
            looks.join(", ")
        ),
    }
}

fn pair_blocks(pair: &PairIdentity) -> Vec<Block> {
    let (level, unit) = match pair.level {
        Level::DecodeLogprobs => ("decode logprobs on every answer", "tokens"),
        Level::Text => (
            "greedy text only (the answers carried no logprobs)",
            "characters",
        ),
        Level::Mixed => (
            "decode logprobs where all three answers carried them, text elsewhere",
            "tokens, or characters",
        ),
    };
    let because = pair.because.join("; ");
    let mut initial = because.chars();
    let because: String = initial
        .next()
        .map(|c| c.to_uppercase().chain(initial).collect())
        .unwrap_or_default();
    let mut out = vec![para(t(
        &format!(
            "`$` against `$`: **{}**, from {level}, over {} prompts the reference answered twice. {because}",
            pair.verdict.as_str(),
            pair.control_prompts,
        ),
        &[&pair.other, &pair.reference],
    ))];
    if pair.control_prompts == 0 {
        return out;
    }
    let divergence = format!("median first divergence ({unit})");
    let mut table = Table::new(&[
        "",
        "prompts",
        "identical text",
        "parted",
        &divergence,
        "tokens compared",
        "equal logprob",
        "mean |Δ logprob|",
        "max |Δ logprob|",
    ])
    .right(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let control = format!("control: {} against itself", pair.reference);
    let versus = format!("pair: {} against {}", pair.other, pair.reference);
    table.text_row(&row(&control, &pair.control));
    table.text_row(&row(&versus, &pair.pair));
    out.push(table.into());
    out.push(para(vec![text(tests_text(&pair.test))]));
    out
}

/// The distance, the score and the two tests, said once for the run.
fn method_text(test: &IdentityTest) -> String {
    format!(
        "How it is decided: two answers are further apart the earlier they part (the first divergence: the token index with decode logprobs, the character offset with text alone; parting at the first token is the furthest), and, where they part at the same point, the larger the mean |Δ logprob| over their shared prefix. Per prompt the pair scores +1 when the other endpoint's answer is further from each of the reference's two answers than they are from each other, −1 when it is closer to each, ±½ or 0 in between; the mean score, the excess, is 0 when the two deployments are alike and about the share of answers that part early when some come from something else. Two anytime-valid tests by betting read the scores prompt by prompt: perturbed when the evidence against \"the excess is at most 0\" reaches e = {:.0} (a same-deployment pair reads perturbed on at most {:.0}% of runs, by Ville's inequality); identical when the evidence against \"the excess is at least {:.0}%\" reaches e = {:.0} (a pair that far apart reads identical on at most {:.0}% of runs).",
        1.0 / test.alpha,
        100.0 * test.alpha,
        100.0 * test.margin,
        1.0 / test.identical_alpha,
        100.0 * test.identical_alpha,
    )
}

/// Where the pair's two tests stand.
fn tests_text(test: &IdentityTest) -> String {
    let decided = match (test.decided_at_prompt, test.identical_at_prompt) {
        (Some(p), _) => format!("; perturbed reached after {p} prompts"),
        (None, Some(p)) => format!("; identical reached after {p} prompts"),
        (None, None) => String::new(),
    };
    format!(
        "Further from the reference's first answer than its repeat on {}, closer on {}, tied on {}; excess {:.1}%; e-value {} toward perturbed (decides at {:.0}), {} toward identical (decides at {:.0}){decided}.",
        test.pair_further,
        test.control_further,
        test.ties,
        100.0 * test.excess.unwrap_or(0.0),
        e_text(test.e_value),
        1.0 / test.alpha,
        e_text(test.identical_e_value),
        1.0 / test.identical_alpha,
    )
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
        share(c.parted, c.prompts),
        c.median_first_divergence
            .map_or("—".to_string(), |d| d.to_string()),
        c.tokens_compared.to_string(),
        share(c.equal_logprob_tokens, c.tokens_compared),
        nats(c.mean_abs_delta_logprob),
        nats(c.max_abs_delta_logprob),
    ]
}
