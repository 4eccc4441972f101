//! Pure renderers: bench and soak reports to JSON and Markdown.

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
use crate::report::markdown_table;

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

/// The top `bench.md` of a bench of several endpoints: who was benched, then every metric any of
/// them measured, one column per endpoint and the ratio of each to the first. `names` lists every
/// endpoint asked for, so one an interruption left out is named too.
pub fn side_by_side_markdown(reports: &[BenchReport], names: &[&str]) -> String {
    let mut out = format!("# Bench side by side: {}\n\n", names.join(" vs "));
    out.push_str(
        "Each endpoint was benched on its own, one after the other, with the same phases and \
         `stream: false`; its full report is in its own folder. A ratio is the endpoint's number \
         over the first endpoint's: above 1 is faster for tok/s and acceptance, slower for ttft_ms.\n\n",
    );
    let rows: Vec<Vec<String>> = reports
        .iter()
        .map(|r| {
            vec![
                r.endpoint.name.clone(),
                r.endpoint.base_url.clone(),
                format!("`{}`", r.endpoint.model),
                match r.status {
                    BenchStatus::Finished => "finished".into(),
                    BenchStatus::Interrupted => "interrupted".into(),
                },
                r.problems.len().to_string(),
                format!("{}/bench.md", r.endpoint.name),
            ]
        })
        .collect();
    out.push_str(&markdown_table(
        &["endpoint", "URL", "model", "status", "problems", "report"],
        &rows,
    ));
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| !reports.iter().any(|r| r.endpoint.name == **n))
        .copied()
        .collect();
    if !missing.is_empty() {
        out.push_str(&format!(
            "\nNot benched (interrupted before): {}\n",
            missing.join(", ")
        ));
    }
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
        return out;
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
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    out.push_str("\n## Metrics\n\n");
    out.push_str(&markdown_table(&headers, &rows));
    out
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
    let mut out = bench_header(r);
    out.push_str(&bench_status(r));
    if let Some(c) = &r.baseline {
        out.push_str(&baseline_section(c));
    }
    if let Some(d) = &r.decode {
        out.push_str(&decode_section(d));
    }
    if !r.concurrency.is_empty() {
        out.push_str(&concurrency_section(&r.concurrency));
    }
    if !r.prefill.is_empty() || !r.prefill_skipped.is_empty() {
        out.push_str(&prefill_section(r));
    }
    if let Some(s) = &r.spec_decode {
        out.push_str(&spec_decode_section(s));
    }
    if let Some(w) = &r.warmup {
        out.push_str(&warmup_section(w));
    }
    if !r.problems.is_empty() {
        out.push_str(&problems_section(&r.problems));
    }
    out
}

/// The title and the paragraph saying what was measured how.
fn bench_header(r: &BenchReport) -> String {
    format!(
        "# Bench: {} ({})\n\nModel `{}` at {}, max_model_len {}. Started {}, {} requests with `stream: false`; \
         tok/s is the server's `usage.completion_tokens` over wall time.\n\n",
        r.endpoint.name,
        r.tool,
        r.endpoint.model,
        r.endpoint.base_url,
        r.endpoint
            .max_model_len
            .map(|n| n.to_string())
            .unwrap_or_else(|| "not reported".into()),
        r.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
        if r.settings.warmup > 0 { "warm-up first, then" } else { "no warm-up;" },
    )
}

/// The interrupted status and the notes.
fn bench_status(r: &BenchReport) -> String {
    let mut out = String::new();
    if r.status == BenchStatus::Interrupted {
        out.push_str(
            "Status **interrupted**: the sections below hold only what was measured before.\n\n",
        );
    }
    for n in &r.notes {
        out.push_str(&format!("Note: {n}\n\n"));
    }
    out
}

/// Claim vs measured vs delta, with `--baseline`.
fn baseline_section(c: &Comparison) -> String {
    let mut out = format!("## Claim vs measured ({})\n\n", c.source);
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
    out.push_str(&markdown_table(
        &["metric", "claim", "measured", "delta"],
        &rows,
    ));
    out.push('\n');
    out
}

/// Peak, mean and cold decode tok/s, and every run.
fn decode_section(d: &Decode) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "## Decode ({} runs, max_tokens {})\n\n",
        d.runs.len(),
        d.max_tokens
    ));
    out.push_str(&markdown_table(
        &["peak tok/s", "mean tok/s", "cold tok/s", "cold from"],
        &[vec![
            num(d.peak_tps, 1),
            num(d.mean_tps, 1),
            num(d.cold_tps, 1),
            d.cold_source.clone(),
        ]],
    ));
    let runs: Vec<String> = d.runs.iter().map(|x| num(x.tps, 1)).collect();
    out.push_str(&format!("\nRuns (tok/s): {}\n\n", runs.join(", ")));
    out
}

/// One row per concurrency level.
fn concurrency_section(levels: &[Level]) -> String {
    let mut out = String::from("## Concurrency\n\n");
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
    out.push_str(&markdown_table(
        &[
            "level",
            "aggregate tok/s",
            "range",
            "per stream tok/s",
            "cold aggregate",
            "errors",
        ],
        &rows,
    ));
    out.push('\n');
    out
}

/// One row per prefill size, measured or skipped.
fn prefill_section(r: &BenchReport) -> String {
    let mut out = String::from("## Prefill (max_tokens 1)\n\n");
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
    out.push_str(&markdown_table(
        &[
            "size",
            "prompt tokens",
            "TTFT ms",
            "prompt tok/s",
            "first TTFT ms",
            "errors",
        ],
        &rows,
    ));
    out.push('\n');
    out
}

/// The cold numbers of the warm-up.
fn warmup_section(w: &WarmupSummary) -> String {
    let mut out = String::new();
    let tps: Vec<String> = w.decode_tps.iter().map(|t| num(*t, 1)).collect();
    out.push_str(&format!(
        "\n## Warm-up (cold numbers)\n\n{} sequential requests: {} tok/s.",
        w.requests,
        tps.join(", ")
    ));
    let levels: Vec<String> = w
        .concurrency
        .iter()
        .map(|l| format!("c{} {}", l.n, num(l.aggregate_tps, 1)))
        .collect();
    if !levels.is_empty() {
        out.push_str(&format!(
            " Rounds (aggregate tok/s): {}.",
            levels.join(", ")
        ));
    }
    out.push('\n');
    out
}

/// One line per failed or unusable request.
fn problems_section(problems: &[String]) -> String {
    let mut out = format!("\n## Problems ({})\n\n", problems.len());
    for p in problems {
        out.push_str(&format!("- {p}\n"));
    }
    out
}

/// The acceptance rate over the measured phases, or why there is none.
fn spec_decode_section(s: &SpecDecode) -> String {
    let mut out = String::from("## Speculative decoding\n\n");
    out.push_str(&match s.status {
        SpecStatus::Measured => format!(
            "Acceptance {:.1}% ({:.0}/{:.0} drafted tokens){} over the measured phases, from {}.\n",
            s.acceptance.unwrap_or(0.0) * 100.0,
            s.accepted.unwrap_or(0.0),
            s.drafted.unwrap_or(0.0),
            s.mean_acceptance_length
                .map(|m| format!(", mean acceptance length {m:.2}"))
                .unwrap_or_default(),
            s.url
        ),
        SpecStatus::NotExposed => format!("Not exposed at {}.\n", s.url),
        SpecStatus::NoDrafts | SpecStatus::Reset => format!("Not measured at {}.\n", s.url),
    });
    if let Some(note) = &s.note {
        out.push_str(&format!("({note})\n"));
    }
    out
}

pub fn soak_markdown(r: &SoakReport) -> String {
    let mut out = soak_header(r);
    out.push_str(&soak_totals(r));
    out.push_str(&soak_latency(r.latency_ms.as_ref()));
    let workers: Vec<String> = r.per_worker_tps.iter().map(|t| format!("{t:.1}")).collect();
    out.push_str(&format!("\nPer worker tok/s: {}\n\n", workers.join(", ")));
    if !r.steps.is_empty() {
        out.push_str(&steps_section(&r.steps));
    }
    if let Some(s) = &r.sweep {
        out.push_str(&format!("Sweep: {}\n\n", s.verdict));
    }
    if let Some(g) = &r.goodput {
        out.push_str(&goodput_section(g));
    }
    if let Some(g) = &r.graded {
        out.push_str(&graded_section(g));
    }
    if let Some(s) = &r.sanity {
        out.push_str(&sanity_section(s));
    }
    if !r.by_kind.is_empty() {
        out.push_str(&kinds_section(&r.by_kind));
    }
    if !r.error_kinds.is_empty() {
        let kinds: Vec<String> = r
            .error_kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        out.push_str(&format!("Errors by kind: {}\n\n", kinds.join(", ")));
    }
    if !r.examples.is_empty() {
        out.push_str(&examples_section(&r.examples));
    }
    for n in &r.notes {
        out.push_str(&format!("Note: {n}\n"));
    }
    out
}

/// One row per step of an open-loop sweep: offered against achieved.
fn steps_section(steps: &[StepSummary]) -> String {
    let mut out = String::from("## Load steps\n\n");
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
    out.push_str(&markdown_table(
        &[
            "load",
            "requests",
            "offered req/s",
            "achieved req/s",
            "p50 ms",
            "p99 ms",
            "delayed / dropped",
            "errors",
            "saturation",
        ],
        &rows,
    ));
    out.push('\n');
    out
}

/// The requests within the objectives, and the latency fit the per-token one is checked on.
fn goodput_section(g: &Goodput) -> String {
    let mut slo = Vec::new();
    if let Some(ms) = g.slo.e2e_ms {
        slo.push(format!("e2e ≤ {ms} ms"));
    }
    if let Some(ms) = g.slo.tpot_ms {
        slo.push(format!("per output token ≤ {ms} ms"));
    }
    let mut out = format!(
        "## Goodput ({})\n\n{} of {} requests ({:.1}%) were usable within the objectives: {:.2} req/s.\n",
        slo.join(", "),
        g.within_slo,
        g.requests,
        g.within_slo_share * 100.0,
        g.requests_per_s
    );
    if let Some(f) = &g.fit {
        out.push_str(&format!(
            "Latency fit e2e ≈ a + b·tokens from the medians at budgets {} and {} ({} and {} requests): \
             a = {:.0} ms fixed, b = {:.2} ms per output token.\n",
            f.budgets[0], f.budgets[1], f.requests[0], f.requests[1], f.fixed_ms, f.per_token_ms
        ));
    }
    out.push('\n');
    out
}

/// Accuracy overall, per load level and per time window, and the prompts whose answer changed.
fn graded_section(g: &GradedSummary) -> String {
    let pct = |a: Option<f64>| {
        a.map(|a| format!("{:.1}%", a * 100.0))
            .unwrap_or_else(|| "–".into())
    };
    let mut out = format!(
        "## Graded prompts\n\n{} graded requests: {} correct, {} wrong, {} unscored (failed); accuracy {}.\n\
         Answer stability: {} of {} prompts asked more than once gave the same answer every time.\n\n",
        g.requests,
        g.correct,
        g.wrong,
        g.unscored,
        pct(g.accuracy),
        g.stability.stable,
        g.stability.prompts
    );
    let rows =
        |slices: &[GradedSlice], label: &dyn Fn(&GradedSlice) -> String| -> Vec<Vec<String>> {
            slices
                .iter()
                .map(|s| {
                    vec![
                        label(s),
                        s.requests.to_string(),
                        s.correct.to_string(),
                        s.wrong.to_string(),
                        pct(s.accuracy),
                        s.changed.to_string(),
                    ]
                })
                .collect()
        };
    let headers = [
        "",
        "requests",
        "correct",
        "wrong",
        "accuracy",
        "answer changed",
    ];
    if g.by_level.len() > 1 {
        let mut h = headers;
        h[0] = "load";
        out.push_str(&markdown_table(
            &h,
            &rows(&g.by_level, &|s| match (s.rate, s.concurrency) {
                (Some(r), _) => format!("{r} req/s"),
                (None, Some(c)) => format!("c{c}"),
                _ => "–".into(),
            }),
        ));
        out.push('\n');
    }
    let mut h = headers;
    h[0] = "window (s)";
    out.push_str(&markdown_table(
        &h,
        &rows(&g.by_window, &|s| {
            format!("{}–{}", num(s.start_s, 0), num(s.end_s, 0))
        }),
    ));
    for u in &g.stability.unstable {
        let answers: Vec<String> = u
            .answers
            .iter()
            .map(|(a, n)| format!("{a:?} ×{n}"))
            .collect();
        out.push_str(&format!(
            "\n- `{}` answered {}",
            u.prompt,
            answers.join(", ")
        ));
    }
    out.push_str("\n\n");
    out
}

/// Bad outputs per level of the agent-sanity sweep.
fn sanity_section(s: &Sanity) -> String {
    let mut out = format!(
        "## Agent sanity: **{}** ({} bad outputs)\n\n",
        if s.passed { "passed" } else { "failed" },
        s.bad
    );
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
    out.push_str(&markdown_table(
        &[
            "level",
            "requests",
            "errors",
            "empty",
            "degenerate",
            "wrong",
            "bad",
        ],
        &rows,
    ));
    out.push('\n');
    out
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

/// The title and the paragraph saying how the soak ended and what it sent.
fn soak_header(r: &SoakReport) -> String {
    format!(
        "# Soak: {} ({})\n\nModel `{}` at {}. Status **{}**: {:.0} s of {:.0} s, {}, kinds {}, \
         `stream: false`.\n\n",
        r.endpoint.name,
        r.tool,
        r.endpoint.model,
        r.endpoint.base_url,
        r.status.report_label(),
        r.wall_s,
        r.settings.duration_s * r.settings.rates.len().max(r.settings.levels.len()).max(1) as f64,
        load_words(r),
        r.settings
            .kinds
            .iter()
            .map(|k| k.label())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// One row of totals: requests, tokens, tok/s and problems.
fn soak_totals(r: &SoakReport) -> String {
    markdown_table(
        &[
            "requests",
            "completion tokens",
            "prompt tokens",
            "aggregate tok/s",
            "errors",
            "soft-empty",
            "degenerate",
        ],
        &[vec![
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
fn soak_latency(lat: Option<&Percentiles>) -> String {
    let ms = |f: fn(&Percentiles) -> f64| num(lat.map(f), 0);
    let mut out = String::from("\nWall latency (ms, requests with a completion):\n\n");
    out.push_str(&markdown_table(
        &["p50", "p90", "p95", "p99", "max", "mean"],
        &[vec![
            ms(|p| p.p50),
            ms(|p| p.p90),
            ms(|p| p.p95),
            ms(|p| p.p99),
            ms(|p| p.max),
            ms(|p| p.mean),
        ]],
    ));
    out
}

/// One row per traffic kind.
fn kinds_section(kinds: &[KindSummary]) -> String {
    let mut out = String::new();
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
    out.push_str(&markdown_table(
        &[
            "kind",
            "requests",
            "errors",
            "soft-empty",
            "degenerate",
            "p50 ms",
            "mean tokens",
        ],
        &rows,
    ));
    out.push('\n');
    out
}

/// The first few problem requests.
fn examples_section(examples: &[Example]) -> String {
    let mut out = String::from("## Problem requests (first few)\n\n");
    for e in examples {
        out.push_str(&format!(
            "- #{} (worker {}, {}): {}\n",
            e.seq,
            e.worker,
            e.kind.label(),
            e.problem
        ));
    }
    out.push('\n');
    out
}
