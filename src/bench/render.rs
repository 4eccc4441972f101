//! Pure renderers: bench and soak reports to JSON, and to Markdown through the document model
//! (`crate::doc`): each section returns its blocks.

use super::baseline::{flatten, Comparison};
use super::concurrency::Level;
use super::decode::Decode;
use super::metrics::{SpecDecode, SpecStatus};
use super::schema::{BenchReport, BenchStatus};
use super::soak_report::{
    Example, Goodput, GradedSlice, GradedSummary, KindSummary, Sanity, SoakReport, StepSummary,
};
use super::stats::Percentiles;
use super::warmup::WarmupSummary;
use crate::doc::{code, para, t, text, to_markdown, Block, Line, Part, Table};

pub fn bench_json(r: &BenchReport) -> String {
    serde_json::to_string_pretty(r).expect("report serialises") + "\n"
}

/// `--json` of a bench: the report itself for one endpoint, `{"endpoints": [...]}` for more.
pub fn benches_json(reports: &[BenchReport]) -> String {
    match reports {
        [one] => bench_json(one),
        _ => {
            let all = serde_json::json!({ "endpoints": reports });
            serde_json::to_string_pretty(&all).expect("report serialises") + "\n"
        }
    }
}

/// A table of plain-text cells.
fn table<S: AsRef<str>>(headers: &[S], rows: Vec<Vec<String>>) -> Block {
    let mut table = Table::new(headers);
    for r in rows {
        table.text_row(&r);
    }
    table.into()
}

/// A section: a heading over its blocks.
fn section(title: impl Into<String>, body: Vec<Block>) -> Block {
    Part::new(2, None, vec![text(title)], body).into()
}

/// A document: its title over its blocks, as Markdown.
fn document(title: Line, body: Vec<Block>) -> String {
    to_markdown(&[Part::new(1, None, title, body).into()])
}

/// The top `bench.md` of a bench of several endpoints: who was benched, then every metric any of
/// them measured, one column per endpoint and the ratio of each to the first. `names` lists every
/// endpoint asked for, so one an interruption left out is named too.
pub fn side_by_side_markdown(reports: &[BenchReport], names: &[&str]) -> String {
    let mut body = vec![para(t(
        "Each endpoint was benched on its own, one after the other, with the same phases and \
         `stream: false`; its full report is in its own folder. A ratio is the endpoint's number \
         over the first endpoint's: above 1 is faster for tok/s and acceptance, slower for ttft_ms.",
        &[],
    ))];
    let mut who = Table::new(&["endpoint", "URL", "model", "status", "problems", "report"]);
    for r in reports {
        who.row(vec![
            vec![text(&r.endpoint.name)],
            vec![text(&r.endpoint.base_url)],
            vec![code(&r.endpoint.model)],
            vec![text(match r.status {
                BenchStatus::Finished => "finished",
                BenchStatus::Interrupted => "interrupted",
            })],
            vec![text(r.problems.len().to_string())],
            vec![text(format!("{}/bench.md", r.endpoint.name))],
        ]);
    }
    body.push(who.into());
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| !reports.iter().any(|r| r.endpoint.name == **n))
        .copied()
        .collect();
    if !missing.is_empty() {
        body.push(para(vec![text(format!(
            "Not benched (interrupted before): {}",
            missing.join(", ")
        ))]));
    }
    let title = vec![text(format!("Bench side by side: {}", names.join(" vs ")))];
    let flat: Vec<Vec<(String, f64)>> = reports
        .iter()
        .map(|r| flatten(&serde_json::to_value(r).expect("report serialises")))
        .collect();
    let mut metrics: Vec<&str> = Vec::new();
    for (key, _) in flat.iter().flatten() {
        if !metrics.contains(&key.as_str()) {
            metrics.push(key);
        }
    }
    if metrics.is_empty() || reports.len() < 2 {
        return document(title, body);
    }
    let value = |i: usize, key: &str| flat[i].iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    let first = &reports[0].endpoint.name;
    let mut headers: Vec<String> = vec!["metric".into()];
    headers.extend(reports.iter().map(|r| r.endpoint.name.clone()));
    headers.extend(
        reports[1..]
            .iter()
            .map(|r| format!("{}/{first}", r.endpoint.name)),
    );
    let rows: Vec<Vec<String>> = metrics
        .iter()
        .map(|key| {
            let mut row = vec![key.to_string()];
            row.extend((0..reports.len()).map(|i| num(value(i, key), 2)));
            row.extend(
                (1..reports.len()).map(|i| match (value(0, key), value(i, key)) {
                    (Some(a), Some(b)) if a != 0.0 => format!("{:.2}x", b / a),
                    _ => "–".into(),
                }),
            );
            row
        })
        .collect();
    body.push(section("Metrics", vec![table(&headers, rows)]));
    document(title, body)
}

pub fn soak_json(r: &SoakReport) -> String {
    serde_json::to_string_pretty(r).expect("report serialises") + "\n"
}

fn num(v: Option<f64>, decimals: usize) -> String {
    v.map(|x| format!("{x:.decimals$}"))
        .unwrap_or_else(|| "–".into())
}

fn int(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "–".into())
}

pub fn bench_markdown(r: &BenchReport) -> String {
    let mut body = vec![bench_header(r)];
    body.extend(bench_status(r));
    if let Some(c) = &r.baseline {
        body.push(baseline_section(c));
    }
    if let Some(d) = &r.decode {
        body.push(decode_section(d));
    }
    if !r.concurrency.is_empty() {
        body.push(concurrency_section(&r.concurrency));
    }
    if !r.prefill.is_empty() || !r.prefill_skipped.is_empty() {
        body.push(prefill_section(r));
    }
    if let Some(s) = &r.spec_decode {
        body.push(spec_decode_section(s));
    }
    if let Some(w) = &r.warmup {
        body.push(warmup_section(w));
    }
    if !r.problems.is_empty() {
        body.push(problems_section(&r.problems));
    }
    let title = vec![text(format!("Bench: {} ({})", r.endpoint.name, r.tool))];
    document(title, body)
}

/// The paragraph saying what was measured how.
fn bench_header(r: &BenchReport) -> Block {
    para(t(
        &format!(
            "Model `$` at $, max_model_len {}. Started {}, {} requests with `stream: false`; \
             tok/s is the server's `usage.completion_tokens` over wall time.",
            r.endpoint
                .max_model_len
                .map(|n| n.to_string())
                .unwrap_or_else(|| "not reported".into()),
            r.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
            if r.settings.warmup > 0 {
                "warm-up first, then"
            } else {
                "no warm-up;"
            },
        ),
        &[&r.endpoint.model, &r.endpoint.base_url],
    ))
}

/// The interrupted status and the notes.
fn bench_status(r: &BenchReport) -> Vec<Block> {
    let mut out = Vec::new();
    if r.status == BenchStatus::Interrupted {
        out.push(para(t(
            "Status **interrupted**: the sections below hold only what was measured before.",
            &[],
        )));
    }
    for n in &r.notes {
        out.push(para(vec![text(format!("Note: {n}"))]));
    }
    out
}

/// Claim vs measured vs delta, with `--baseline`.
fn baseline_section(c: &Comparison) -> Block {
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|row| {
            vec![
                row.metric.clone(),
                format!("{}", row.claim),
                num(row.measured, 2),
                row.delta_pct
                    .map(|d| format!("{d:+.1}%"))
                    .unwrap_or_else(|| "not measured".into()),
            ]
        })
        .collect();
    section(
        format!("Claim vs measured ({})", c.source),
        vec![table(&["metric", "claim", "measured", "delta"], rows)],
    )
}

/// Peak, mean and cold decode tok/s, and every run.
fn decode_section(d: &Decode) -> Block {
    let runs: Vec<String> = d.runs.iter().map(|x| num(x.tps, 1)).collect();
    section(
        format!(
            "Decode ({} runs, max_tokens {})",
            d.runs.len(),
            d.max_tokens
        ),
        vec![
            table(
                &["peak tok/s", "mean tok/s", "cold tok/s", "cold from"],
                vec![vec![
                    num(d.peak_tps, 1),
                    num(d.mean_tps, 1),
                    num(d.cold_tps, 1),
                    d.cold_source.clone(),
                ]],
            ),
            para(vec![text(format!("Runs (tok/s): {}", runs.join(", ")))]),
        ],
    )
}

/// One row per concurrency level.
fn concurrency_section(levels: &[Level]) -> Block {
    let rows: Vec<Vec<String>> = levels
        .iter()
        .map(|l| {
            vec![
                format!("c{}", l.n),
                num(l.aggregate_tps, 1),
                match (l.min_aggregate_tps, l.max_aggregate_tps) {
                    (Some(a), Some(b)) => format!("{a:.1}–{b:.1}"),
                    _ => "–".into(),
                },
                num(l.per_stream_tps, 1),
                num(l.cold_aggregate_tps, 1),
                l.errors.to_string(),
            ]
        })
        .collect();
    let headers = [
        "level",
        "aggregate tok/s",
        "range",
        "per stream tok/s",
        "cold aggregate",
        "errors",
    ];
    section("Concurrency", vec![table(&headers, rows)])
}

/// One row per prefill size, measured or skipped.
fn prefill_section(r: &BenchReport) -> Block {
    let mut rows: Vec<Vec<String>> = r
        .prefill
        .iter()
        .map(|p| {
            vec![
                p.tokens.to_string(),
                int(p.prompt_tokens),
                num(p.ttft_ms, 0),
                num(p.prompt_tps, 0),
                num(p.first_ttft_ms, 0),
                p.errors.to_string(),
            ]
        })
        .collect();
    rows.extend(r.prefill_skipped.iter().map(|s| {
        vec![
            s.tokens.to_string(),
            "–".into(),
            format!("skipped: {}", s.reason),
            "–".into(),
            "–".into(),
            "0".into(),
        ]
    }));
    let headers = [
        "size",
        "prompt tokens",
        "TTFT ms",
        "prompt tok/s",
        "first TTFT ms",
        "errors",
    ];
    section("Prefill (max_tokens 1)", vec![table(&headers, rows)])
}

/// The cold numbers of the warm-up.
fn warmup_section(w: &WarmupSummary) -> Block {
    let tps: Vec<String> = w.decode_tps.iter().map(|t| num(*t, 1)).collect();
    let mut words = format!(
        "{} sequential requests: {} tok/s.",
        w.requests,
        tps.join(", ")
    );
    let levels: Vec<String> = w
        .concurrency
        .iter()
        .map(|l| format!("c{} {}", l.n, num(l.aggregate_tps, 1)))
        .collect();
    if !levels.is_empty() {
        words.push_str(&format!(
            " Rounds (aggregate tok/s): {}.",
            levels.join(", ")
        ));
    }
    section("Warm-up (cold numbers)", vec![para(vec![text(words)])])
}

/// One line per failed or unusable request.
fn problems_section(problems: &[String]) -> Block {
    let items = problems.iter().map(|p| vec![text(p)]).collect();
    section(
        format!("Problems ({})", problems.len()),
        vec![Block::List(items)],
    )
}

/// The acceptance rate over the measured phases, or why there is none.
fn spec_decode_section(s: &SpecDecode) -> Block {
    let mut body = vec![para(vec![text(match s.status {
        SpecStatus::Measured => format!(
            "Acceptance {:.1}% ({:.0}/{:.0} drafted tokens){} over the measured phases, from {}.",
            s.acceptance.unwrap_or(0.0) * 100.0,
            s.accepted.unwrap_or(0.0),
            s.drafted.unwrap_or(0.0),
            s.mean_acceptance_length
                .map(|m| format!(", mean acceptance length {m:.2}"))
                .unwrap_or_default(),
            s.url
        ),
        SpecStatus::NotExposed => format!("Not exposed at {}.", s.url),
        SpecStatus::NoDrafts | SpecStatus::Reset => format!("Not measured at {}.", s.url),
    })])];
    if let Some(note) = &s.note {
        body.push(para(vec![text(format!("({note})"))]));
    }
    section("Speculative decoding", body)
}

pub fn soak_markdown(r: &SoakReport) -> String {
    let mut body = vec![soak_header(r), soak_totals(r)];
    body.extend(soak_latency(r.latency_ms.as_ref()));
    let workers: Vec<String> = r.per_worker_tps.iter().map(|t| format!("{t:.1}")).collect();
    body.push(para(vec![text(format!(
        "Per worker tok/s: {}",
        workers.join(", ")
    ))]));
    if !r.steps.is_empty() {
        body.push(steps_section(&r.steps));
    }
    if let Some(s) = &r.sweep {
        body.push(para(vec![text(format!("Sweep: {}", s.verdict))]));
    }
    if let Some(g) = &r.goodput {
        body.push(goodput_section(g));
    }
    if let Some(g) = &r.graded {
        body.push(graded_section(g));
    }
    if let Some(s) = &r.sanity {
        body.push(sanity_section(s));
    }
    if !r.by_kind.is_empty() {
        body.push(kinds_section(&r.by_kind));
    }
    if !r.error_kinds.is_empty() {
        let kinds: Vec<String> = r
            .error_kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        body.push(para(vec![text(format!(
            "Errors by kind: {}",
            kinds.join(", ")
        ))]));
    }
    if !r.examples.is_empty() {
        body.push(examples_section(&r.examples));
    }
    for n in &r.notes {
        body.push(para(vec![text(format!("Note: {n}"))]));
    }
    let title = vec![text(format!("Soak: {} ({})", r.endpoint.name, r.tool))];
    document(title, body)
}

/// One row per step of an open-loop sweep: offered against achieved.
fn steps_section(steps: &[StepSummary]) -> Block {
    let rows: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            vec![
                match (s.rate, s.concurrency) {
                    (Some(r), _) => format!("{r} req/s"),
                    (None, Some(c)) => format!("c{c}"),
                    _ => "–".into(),
                },
                s.requests.to_string(),
                num(s.offered_rps, 2),
                num(s.achieved_rps, 2),
                num(s.latency_ms.map(|p| p.p50), 0),
                num(s.latency_ms.map(|p| p.p99), 0),
                format!("{} / {}", s.delayed, s.dropped),
                s.errors.to_string(),
                s.saturated.clone().unwrap_or_else(|| "kept up".into()),
            ]
        })
        .collect();
    let headers = [
        "load",
        "requests",
        "offered req/s",
        "achieved req/s",
        "p50 ms",
        "p99 ms",
        "delayed / dropped",
        "errors",
        "saturation",
    ];
    section("Load steps", vec![table(&headers, rows)])
}

/// The requests within the objectives, and the latency fit the per-token one is checked on.
fn goodput_section(g: &Goodput) -> Block {
    let mut slo = Vec::new();
    if let Some(ms) = g.slo.e2e_ms {
        slo.push(format!("e2e ≤ {ms} ms"));
    }
    if let Some(ms) = g.slo.tpot_ms {
        slo.push(format!("per output token ≤ {ms} ms"));
    }
    let mut words = vec![text(format!(
        "{} of {} requests ({:.1}%) were usable within the objectives: {:.2} req/s.",
        g.within_slo,
        g.requests,
        g.within_slo_share * 100.0,
        g.requests_per_s
    ))];
    if let Some(f) = &g.fit {
        words.push(crate::doc::Inline::Break);
        words.push(text(format!(
            "Latency fit e2e ≈ a + b·tokens from the medians at budgets {} and {} ({} and {} requests): \
             a = {:.0} ms fixed, b = {:.2} ms per output token.",
            f.budgets[0], f.budgets[1], f.requests[0], f.requests[1], f.fixed_ms, f.per_token_ms
        )));
    }
    section(format!("Goodput ({})", slo.join(", ")), vec![para(words)])
}

/// An accuracy as a percentage, "–" when none.
fn accuracy_pct(a: Option<f64>) -> String {
    a.map(|a| format!("{:.1}%", a * 100.0))
        .unwrap_or_else(|| "–".into())
}

/// A table of graded slices, the first column headed `first` and filled by `label`.
fn graded_table(
    first: &str,
    slices: &[GradedSlice],
    label: impl Fn(&GradedSlice) -> String,
) -> Block {
    let headers = [
        first,
        "requests",
        "correct",
        "wrong",
        "accuracy",
        "answer changed",
    ];
    let rows = slices
        .iter()
        .map(|s| {
            vec![
                label(s),
                s.requests.to_string(),
                s.correct.to_string(),
                s.wrong.to_string(),
                accuracy_pct(s.accuracy),
                s.changed.to_string(),
            ]
        })
        .collect();
    table(&headers, rows)
}

/// The prompts that gave different answers, each with its answers counted.
fn unstable_list(g: &GradedSummary) -> Option<Block> {
    let unstable: Vec<Line> = g
        .stability
        .unstable
        .iter()
        .map(|u| {
            let answers: Vec<String> = u
                .answers
                .iter()
                .map(|(a, n)| format!("{a:?} ×{n}"))
                .collect();
            vec![
                code(&u.prompt),
                text(format!(" answered {}", answers.join(", "))),
            ]
        })
        .collect();
    (!unstable.is_empty()).then_some(Block::List(unstable))
}

/// Accuracy overall, per load level and per time window, and the prompts whose answer changed.
fn graded_section(g: &GradedSummary) -> Block {
    let mut body = vec![para(vec![
        text(format!(
            "{} graded requests: {} correct, {} wrong, {} unscored (failed); accuracy {}.",
            g.requests,
            g.correct,
            g.wrong,
            g.unscored,
            accuracy_pct(g.accuracy),
        )),
        crate::doc::Inline::Break,
        text(format!(
            "Answer stability: {} of {} prompts asked more than once gave the same answer every time.",
            g.stability.stable, g.stability.prompts
        )),
    ])];
    if g.by_level.len() > 1 {
        body.push(graded_table("load", &g.by_level, |s| {
            match (s.rate, s.concurrency) {
                (Some(r), _) => format!("{r} req/s"),
                (None, Some(c)) => format!("c{c}"),
                _ => "–".into(),
            }
        }));
    }
    body.push(graded_table("window (s)", &g.by_window, |s| {
        format!("{}–{}", num(s.start_s, 0), num(s.end_s, 0))
    }));
    body.extend(unstable_list(g));
    section("Graded prompts", body)
}

/// Bad outputs per level of the agent-sanity sweep.
fn sanity_section(s: &Sanity) -> Block {
    let rows: Vec<Vec<String>> = s
        .levels
        .iter()
        .map(|l| {
            vec![
                l.concurrency
                    .map(|c| format!("c{c}"))
                    .unwrap_or_else(|| "–".into()),
                l.requests.to_string(),
                l.errors.to_string(),
                l.empty.to_string(),
                l.degenerate.to_string(),
                l.wrong.to_string(),
                l.bad.to_string(),
            ]
        })
        .collect();
    let headers = [
        "level",
        "requests",
        "errors",
        "empty",
        "degenerate",
        "wrong",
        "bad",
    ];
    let title = t(
        &format!(
            "Agent sanity: **{}** ({} bad outputs)",
            if s.passed { "passed" } else { "failed" },
            s.bad
        ),
        &[],
    );
    Part::new(2, None, title, vec![table(&headers, rows)]).into()
}

/// How the soak loaded the endpoint, in words.
fn load_words(r: &SoakReport) -> String {
    let s = &r.settings;
    if s.levels.len() > 1 {
        let levels: Vec<String> = s.levels.iter().map(|n| n.to_string()).collect();
        return format!(
            "closed loop at concurrency {}, each level for the duration",
            levels.join(", ")
        );
    }
    if s.rates.is_empty() {
        return format!("{} workers", s.concurrency);
    }
    let rates: Vec<String> = s.rates.iter().map(|r| r.to_string()).collect();
    format!(
        "open loop at {} req/s (burstiness {}, at most {} in flight){}",
        rates.join(", "),
        s.burstiness.unwrap_or(1.0),
        s.max_in_flight
            .map(|n| n.to_string())
            .unwrap_or_else(|| "?".into()),
        if rates.len() > 1 {
            ", each rate for the duration"
        } else {
            ""
        }
    )
}

/// The paragraph saying how the soak ended and what it sent.
fn soak_header(r: &SoakReport) -> Block {
    para(t(
        &format!(
            "Model `$` at $. Status **{}**: {:.0} s of {:.0} s, {}, kinds {}, `stream: false`.",
            r.status.report_label(),
            r.wall_s,
            r.settings.duration_s
                * r.settings.rates.len().max(r.settings.levels.len()).max(1) as f64,
            load_words(r),
            r.settings
                .kinds
                .iter()
                .map(|k| k.label())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        &[&r.endpoint.model, &r.endpoint.base_url],
    ))
}

/// One row of totals: requests, tokens, tok/s and problems.
fn soak_totals(r: &SoakReport) -> Block {
    table(
        &[
            "requests",
            "completion tokens",
            "prompt tokens",
            "aggregate tok/s",
            "errors",
            "soft-empty",
            "degenerate",
        ],
        vec![vec![
            r.requests.to_string(),
            r.completion_tokens.to_string(),
            r.prompt_tokens.to_string(),
            format!("{:.1}", r.aggregate_tps),
            r.errors.to_string(),
            r.soft_empty.to_string(),
            r.degenerate.to_string(),
        ]],
    )
}

/// Wall latency percentiles of the requests with a completion.
fn soak_latency(lat: Option<&Percentiles>) -> Vec<Block> {
    let ms = |f: fn(&Percentiles) -> f64| num(lat.map(f), 0);
    vec![
        para(vec![text("Wall latency (ms, requests with a completion):")]),
        table(
            &["p50", "p90", "p95", "p99", "max", "mean"],
            vec![vec![
                ms(|p| p.p50),
                ms(|p| p.p90),
                ms(|p| p.p95),
                ms(|p| p.p99),
                ms(|p| p.max),
                ms(|p| p.mean),
            ]],
        ),
    ]
}

/// One row per traffic kind.
fn kinds_section(kinds: &[KindSummary]) -> Block {
    let rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| {
            vec![
                k.kind.label().to_string(),
                k.requests.to_string(),
                k.errors.to_string(),
                k.soft_empty.to_string(),
                k.degenerate.to_string(),
                num(k.p50_ms, 0),
                num(k.mean_completion_tokens, 0),
            ]
        })
        .collect();
    table(
        &[
            "kind",
            "requests",
            "errors",
            "soft-empty",
            "degenerate",
            "p50 ms",
            "mean tokens",
        ],
        rows,
    )
}

/// The first few problem requests.
fn examples_section(examples: &[Example]) -> Block {
    let items = examples
        .iter()
        .map(|e| {
            vec![text(format!(
                "#{} (worker {}, {}): {}",
                e.seq,
                e.worker,
                e.kind.label(),
                e.problem
            ))]
        })
        .collect();
    section("Problem requests (first few)", vec![Block::List(items)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bench of every phase, with a baseline, a skipped prefill size, problems and notes.
    fn bench(name: &str, tps: f64) -> BenchReport {
        serde_json::from_value(serde_json::json!({
            "tool": "coherence 0.0.0", "kind": "bench", "status": "interrupted",
            "endpoint": {"name": name, "base_url": "http://x/v1", "model": "m</b>", "max_model_len": 4096, "server": null},
            "started_at": "2025-01-01T00:00:00Z", "finished_at": "2025-01-01T00:01:00Z",
            "settings": {"warmup": 2, "runs": 2, "max_tokens": 64, "concurrency": [1, 4], "rounds": 2,
                         "prefill": [1024, 8192], "prefill_runs": 1, "stream": false, "params": {}},
            "warmup": {"requests": 2, "decode_tps": [40.0, 45.5],
                       "concurrency": [{"n": 4, "aggregate_tps": 150.25, "per_stream_tps": 37.5, "rounds": [], "errors": 0}]},
            "decode": {"max_tokens": 64, "peak_tps": tps, "mean_tps": tps - 2.0, "cold_tps": 41.0,
                       "cold_source": "warm-up", "errors": 0,
                       "runs": [{"completion_tokens": 64, "seconds": 1.2, "tps": tps},
                                {"completion_tokens": 64, "seconds": 1.3, "tps": null}]},
            "concurrency": [{"n": 1, "aggregate_tps": tps, "per_stream_tps": tps, "min_aggregate_tps": 49.0,
                             "max_aggregate_tps": 51.0, "rounds": [], "errors": 0},
                            {"n": 4, "aggregate_tps": 160.0, "per_stream_tps": 40.0, "rounds": [], "errors": 1}],
            "prefill": [{"tokens": 1024, "prompt_tokens": 1030, "ttft_ms": 120.4, "prompt_tps": 8500.0,
                         "first_ttft_ms": 300.0, "runs": [], "errors": 0}],
            "prefill_skipped": [{"tokens": 8192, "reason": "exceeds max_model_len 4096"}],
            "spec_decode": {"status": "measured", "url": "http://x/metrics", "acceptance": 0.6,
                            "accepted": 12.0, "drafted": 20.0, "mean_acceptance_length": 2.5, "note": "a note"},
            "problems": ["c4 round 2: HTTP 500 | <script>"],
            "baseline": {"source": "the guide", "rows": [
                {"metric": "decode.peak_tps", "claim": 55.0, "measured": tps, "delta_pct": -9.1},
                {"metric": "prefill.8192.prompt_tps", "claim": 1513.0, "measured": null, "delta_pct": null}]},
            "notes": ["prefill 8192 not reached"]
        }))
        .unwrap()
    }

    #[test]
    fn bench_report_has_every_section() {
        insta::assert_snapshot!(bench_markdown(&bench("fast", 50.0)));
    }

    #[test]
    fn side_by_side_sets_each_metric_against_the_first() {
        let md = side_by_side_markdown(
            &[bench("fast", 50.0), bench("slow", 25.0)],
            &["fast", "slow", "gone"],
        );
        insta::assert_snapshot!(md.clone());
        assert!(
            md.contains("| decode.peak_tps | 50.00 | 25.00 | 0.50x |"),
            "{md}"
        );
        assert!(
            md.contains("Not benched (interrupted before): gone"),
            "{md}"
        );
    }

    #[test]
    fn a_bench_of_nothing_has_its_header_only() {
        let mut r = bench("a", 1.0);
        r.status = BenchStatus::Finished;
        (r.warmup, r.decode, r.spec_decode, r.baseline) = (None, None, None, None);
        r.concurrency.clear();
        r.prefill.clear();
        r.prefill_skipped.clear();
        r.problems.clear();
        r.notes.clear();
        let md = bench_markdown(&r);
        assert!(!md.contains("## "), "{md}");
        assert!(
            md.starts_with("# Bench: a (coherence 0.0.0)\n\nModel `m</b>` at http://x/v1"),
            "{md}"
        );
    }
}
