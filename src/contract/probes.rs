//! The probes of `coherence contract`: each sends its requests and reads one promise of the
//! OpenAI chat API, quoting what the server said.

use serde_json::{json, Value};

use super::ask::{Asker, Reply};
use super::sse::Stream;
use super::{ProbeResult, Status};
use crate::endpoint::parse_logprobs;
use crate::text::clip;

/// Every probe, in the order it runs, with the promise it checks.
pub const PROBES: &[(&str, &str)] = &[
    (
        "usage_arithmetic",
        "usage.total_tokens = prompt_tokens + completion_tokens",
    ),
    (
        "usage_plausible",
        "no more completion tokens than bytes delivered (text, reasoning, calls), plus 8",
    ),
    (
        "max_tokens_honoured",
        "never more completion tokens than max_tokens",
    ),
    (
        "finish_reason_length",
        "finish_reason `length` exactly when completion_tokens reaches max_tokens",
    ),
    (
        "stop_honoured",
        "a `stop` string ends the text just before it, as the unstopped reply had it",
    ),
    (
        "stream_same_text",
        "stream: true at temperature 0 gives the text of stream: false",
    ),
    (
        "stream_prompt_tokens",
        "streamed and non-streamed replies count the same prompt_tokens",
    ),
    (
        "stream_usage_chunk",
        "stream_options.include_usage sends a usage chunk",
    ),
    ("n_choices", "n: 2 returns two choices"),
    (
        "temperature_honoured",
        "temperature 1 without a seed samples: not every reply is the temperature-0 text",
    ),
    (
        "seed_reproducible",
        "the same seed at temperature 1 gives the same text",
    ),
    (
        "logprobs_shape",
        "logprobs with top_logprobs: 3 lists one entry per completion token, 3 alternatives each",
    ),
    (
        "top_k_greedy",
        "top_k: 1 at temperature 1 gives the temperature-0 text",
    ),
    (
        "top_p_greedy",
        "top_p: 1e-6 at temperature 1 gives the temperature-0 text",
    ),
    (
        "no_reasoning_only",
        "at a generous budget the reply has content, not reasoning alone",
    ),
    (
        "tool_choice_required",
        "tool_choice `required` returns a tool call",
    ),
    (
        "tool_call_finish_reason",
        "a reply with a tool call has finish_reason `tool_calls`",
    ),
    (
        "stream_tool_call",
        "stream: true streams the call and finish_reason of stream: false (function named)",
    ),
    (
        "tool_call_cut_off",
        "a call cut by max_tokens says length, streamed as not, with no raw call markup as text",
    ),
    (
        "invalid_tool_arguments",
        "invalid JSON tool arguments in the request get a 4xx, not a 5xx",
    ),
];

const SHORT: &str = "What is the capital of France? Answer in one word.";
const SHORT_BUDGET: u32 = 64;
const LONG: &str = "Write a long story about a lighthouse keeper and a storm.";
/// The cap the long request must reach.
const CAP: u32 = 16;
const COUNT: &str = "Count from 1 to 30, separated by commas.";
const POEM: &str = "Write one line of poetry about the sea.";
const SUM: &str = "What is 2 + 3? Reply with the number only.";
const WEATHER: &str = "What is the weather in Paris right now?";
/// The budget that cuts the forced call of [`WEATHER`] short: `{"city": "Paris"}` alone is more.
const CUT_CALL: u32 = 4;

/// Run every probe against one endpoint's model.
pub async fn run(ask: &Asker<'_>) -> Vec<ProbeResult> {
    let mut out = Vec::with_capacity(PROBES.len());
    let short = ask.send(&ask.body(SHORT, SHORT_BUDGET, json!({}))).await;
    out.push(usage_arithmetic(&short));
    let long = ask.send(&ask.body(LONG, CAP, json!({}))).await;
    out.push(usage_plausible(&short, &long));
    out.push(max_tokens_honoured(&long));
    out.push(finish_reason_length(&short, &long));
    out.push(stop_honoured(ask).await);
    out.extend(streaming(ask, &short).await);
    out.push(n_choices(ask).await);
    out.push(temperature_honoured(ask, &long).await);
    out.push(seed_reproducible(ask).await);
    out.push(logprobs_shape(ask).await);
    let greedy = ask.send(&ask.body(POEM, 32, json!({}))).await;
    let top_k = json!({"temperature": 1.0, "top_k": 1});
    out.push(same_as_greedy("top_k_greedy", ask, &greedy, top_k).await);
    let top_p = json!({"temperature": 1.0, "top_p": 1e-6});
    out.push(same_as_greedy("top_p_greedy", ask, &greedy, top_p).await);
    out.push(no_reasoning_only(ask).await);
    let required = json!({"tools": weather_tools(), "tool_choice": "required"});
    let called = ask.send(&ask.body(WEATHER, 256, required)).await;
    out.extend(tool_call(&called));
    out.push(stream_tool_call(ask).await);
    out.push(tool_call_cut_off(ask).await);
    out.push(invalid_tool_arguments(ask).await);
    out
}

fn pass(probe: &'static str, evidence: impl Into<String>) -> ProbeResult {
    ProbeResult::new(probe, Status::Pass, evidence)
}

fn fail(probe: &'static str, evidence: impl Into<String>) -> ProbeResult {
    ProbeResult::new(probe, Status::Fail, evidence)
}

fn unsupported(probe: &'static str, evidence: impl Into<String>) -> ProbeResult {
    ProbeResult::new(probe, Status::Unsupported, evidence)
}

/// A text quoted in evidence: one line, clipped.
fn quote(text: &str) -> String {
    format!("`{}`", clip(text, 80))
}

/// A value the reply may lack, as evidence prints it: the value, or `none`.
fn plain(value: Option<impl std::fmt::Display>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

fn usage_arithmetic(r: &Reply) -> ProbeResult {
    const P: &str = "usage_arithmetic";
    if let Some(bad) = r.unusable(P) {
        return bad;
    }
    match r.usage() {
        (Some(p), Some(c), Some(t)) if p + c == t => {
            pass(P, format!("total {t} = prompt {p} + completion {c}"))
        }
        (Some(p), Some(c), Some(t)) => fail(P, format!("total {t} ≠ prompt {p} + completion {c}")),
        (None, None, None) => fail(P, "the reply has no usage object"),
        (p, c, t) => fail(
            P,
            format!(
                "usage lacks a count: prompt {}, completion {}, total {}",
                plain(p),
                plain(c),
                plain(t)
            ),
        ),
    }
}

/// Tokens a reply may count beyond the bytes it delivers: an end-of-turn token, call markup a
/// template strips.
const UNSEEN_TOKENS: u64 = 8;

/// The completion tokens each reply counts against what it delivered: every token but a few
/// ([`UNSEEN_TOKENS`]) carries at least a byte of text, reasoning or call, so more is a count of
/// tokens nobody received (opencode#43379: 859 counted, about 8 delivered). Reasoning a server
/// keeps to itself but declares (`usage.completion_tokens_details.reasoning_tokens`, with no
/// reasoning text sent) is counted as delivered: declared, not phantom.
fn usage_plausible(short: &Reply, long: &Reply) -> ProbeResult {
    const P: &str = "usage_plausible";
    let counted: Vec<Counted> = [("short", short), ("long", long)]
        .into_iter()
        .filter_map(|(name, r)| Counted::of(name, r))
        .collect();
    if counted.is_empty() {
        return short
            .unusable(P)
            .unwrap_or_else(|| unsupported(P, "no usage.completion_tokens to check"));
    }
    let each: Vec<String> = counted.iter().map(Counted::text).collect();
    let each = format!("completion_tokens {}", each.join(", "));
    if counted.iter().any(Counted::beyond) {
        fail(
            P,
            format!("{each} delivered: more tokens counted than were sent back"),
        )
    } else {
        pass(P, format!("{each} delivered"))
    }
}

/// One reply's counted completion tokens and what it delivered.
struct Counted {
    name: &'static str,
    tokens: u64,
    bytes: u64,
    /// Reasoning tokens the usage declares, where no reasoning text was sent.
    declared_reasoning: u64,
}

impl Counted {
    fn of(name: &'static str, r: &Reply) -> Option<Counted> {
        let c = r.completion.as_ref()?;
        let text = |t: &Option<crate::endpoint::Text>| t.as_deref().map_or(0, str::len);
        let part = |t: &Option<String>| t.as_deref().map_or(0, str::len);
        let calls = c.tool_calls.iter();
        let calls: usize = calls.map(|t| part(&t.name) + part(&t.arguments)).sum();
        let declared = r.json.as_ref().and_then(|j| {
            j.pointer("/usage/completion_tokens_details/reasoning_tokens")?
                .as_u64()
        });
        Some(Counted {
            name,
            tokens: c.usage.as_ref()?.completion_tokens?,
            bytes: (text(&c.content) + text(&c.reasoning) + calls) as u64,
            declared_reasoning: if text(&c.reasoning) == 0 {
                declared.unwrap_or(0)
            } else {
                0
            },
        })
    }

    /// More tokens than the bytes, the unseen few and the declared reasoning account for.
    fn beyond(&self) -> bool {
        self.tokens > self.bytes + UNSEEN_TOKENS + self.declared_reasoning
    }

    fn text(&self) -> String {
        let declared = match self.declared_reasoning {
            0 => String::new(),
            n => format!(" and {n} declared reasoning tokens not sent"),
        };
        format!(
            "{} for {} bytes{declared} ({})",
            self.tokens, self.bytes, self.name
        )
    }
}

fn max_tokens_honoured(long: &Reply) -> ProbeResult {
    const P: &str = "max_tokens_honoured";
    if let Some(bad) = long.unusable(P) {
        return bad;
    }
    match long.usage().1 {
        Some(c) if c <= u64::from(CAP) => {
            pass(P, format!("{c} completion tokens at max_tokens {CAP}"))
        }
        Some(c) => fail(P, format!("{c} completion tokens at max_tokens {CAP}")),
        None => unsupported(P, "no usage.completion_tokens to check"),
    }
}

/// `length` on either reply must mean the cap was reached; the long story must reach it and say
/// `length`, never `stop`.
fn finish_reason_length(short: &Reply, long: &Reply) -> ProbeResult {
    const P: &str = "finish_reason_length";
    if let Some(bad) = long.unusable(P) {
        return bad;
    }
    if short.finish_reason() == Some("length") {
        if let Some(c) = short.usage().1.filter(|&c| c < u64::from(SHORT_BUDGET)) {
            return fail(
                P,
                format!("finish_reason length after {c} of max_tokens {SHORT_BUDGET} tokens"),
            );
        }
    }
    let cap = u64::from(CAP);
    match (long.finish_reason(), long.usage().1) {
        (_, None) => unsupported(P, "no usage.completion_tokens to check"),
        (Some("length"), Some(c)) if c == cap => pass(
            P,
            format!("finish_reason length at {c} of max_tokens {CAP} tokens"),
        ),
        (Some("length"), Some(c)) => fail(
            P,
            format!("finish_reason length at {c} tokens, max_tokens {CAP}"),
        ),
        (reason, Some(c)) if c >= cap => fail(
            P,
            format!("finish_reason {} at {c} tokens, the max_tokens cap of {CAP}: a cut-off not reported as `length`", plain(reason)),
        ),
        (reason, Some(c)) => unsupported(
            P,
            format!("finish_reason {} after {c} tokens: the model ended before the cap of {CAP}, nothing to check", plain(reason)),
        ),
    }
}

/// Ask for a count, then again with a word of that reply as `stop`: the stopped reply must be the
/// unstopped one up to that word.
async fn stop_honoured(ask: &Asker<'_>) -> ProbeResult {
    const P: &str = "stop_honoured";
    let free = ask.send(&ask.body(COUNT, 160, json!({}))).await;
    if let Some(bad) = free.unusable(P) {
        return bad;
    }
    let text = free.text();
    let Some((word, at)) = stop_word(text) else {
        return unsupported(
            P,
            format!(
                "the reply without stop, {}, has no word to stop at",
                quote(text)
            ),
        );
    };
    let stopped = ask
        .send(&ask.body(COUNT, 160, json!({"stop": [word]})))
        .await;
    if let Some(bad) = stopped.unusable(P) {
        return bad;
    }
    let stop = json!([word]);
    let expected = text[..at].trim_end();
    let got = stopped.text().trim_end();
    let finish = stopped.finish_reason();
    if got == expected && finish == Some("stop") {
        pass(P, format!("stop {stop} ended the reply at {}", quote(got)))
    } else {
        fail(
            P,
            format!(
                "stop {stop}: got {} (finish_reason {}); the text before it was {}",
                quote(got),
                plain(finish),
                quote(expected)
            ),
        )
    }
}

/// The first word whose first occurrence starts past the first third of the text, with its byte
/// offset.
fn stop_word(text: &str) -> Option<(&str, usize)> {
    let third = text.len() / 3;
    let mut start = None;
    for (i, ch) in text.char_indices().chain([(text.len(), ' ')]) {
        match (ch.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let word = &text[s..i];
                start = None;
                if s >= third.max(1) && text.find(word) == Some(s) {
                    return Some((word, s));
                }
            }
            _ => {}
        }
    }
    None
}

/// The short question streamed with a usage chunk asked for, against its non-streamed reply.
async fn streaming(ask: &Asker<'_>, plain: &Reply) -> Vec<ProbeResult> {
    const TEXT: &str = "stream_same_text";
    const PROMPT: &str = "stream_prompt_tokens";
    const USAGE: &str = "stream_usage_chunk";
    let extra = json!({"stream": true, "stream_options": {"include_usage": true}});
    let (r, stream) = ask.stream(&ask.body(SHORT, SHORT_BUDGET, extra)).await;
    let s = match stream_of(TEXT, &r, stream) {
        Ok(s) => s,
        // Without a stream none of the three can be read: each gets the same verdict.
        Err(bad) => {
            return [TEXT, PROMPT, USAGE]
                .into_iter()
                .map(|p| ProbeResult {
                    probe: p,
                    ..bad.clone()
                })
                .collect()
        }
    };
    let mut out = Vec::with_capacity(3);
    out.push(match plain.unusable(TEXT) {
        Some(_) => unsupported(TEXT, "no non-streamed reply to compare with"),
        None if plain.text() == s.text => pass(TEXT, format!("both {}", quote(&s.text))),
        None => fail(
            TEXT,
            format!(
                "streamed {}, not streamed {}",
                quote(&s.text),
                quote(plain.text())
            ),
        ),
    });
    let streamed_prompt = s
        .usage
        .as_ref()
        .and_then(|u| u.get("prompt_tokens"))
        .and_then(Value::as_u64);
    out.push(match (streamed_prompt, plain.usage().0) {
        (Some(a), Some(b)) if a == b => pass(PROMPT, format!("both {a}")),
        (Some(a), Some(b)) => fail(PROMPT, format!("streamed {a}, not streamed {b}")),
        _ => unsupported(PROMPT, "no prompt_tokens on one side to compare"),
    });
    out.push(match &s.usage {
        Some(u) => pass(USAGE, format!("usage {u}")),
        None => fail(
            USAGE,
            format!(
                "none of {} events carried usage, though stream_options.include_usage was true",
                s.events
            ),
        ),
    });
    out
}

async fn n_choices(ask: &Asker<'_>) -> ProbeResult {
    const P: &str = "n_choices";
    let r = ask.send(&ask.body(SHORT, 16, json!({"n": 2}))).await;
    if let Some(bad) = r.unusable(P) {
        return bad;
    }
    let choices = r
        .json
        .as_ref()
        .and_then(|j| j.get("choices"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if choices == 2 {
        pass(P, "2 choices")
    } else {
        fail(P, format!("n: 2 was answered with {choices} choice(s)"))
    }
}

/// Replies sampled at temperature 1 to compare with the greedy one.
const SAMPLES: usize = 4;

/// At temperature 1 with no seed, a server that samples gives a text other than the greedy one
/// on one of [`SAMPLES`] replies (each of [`CAP`] tokens would have to be the most likely one
/// every time); one that ignores `temperature` gives the greedy text every time, and then the
/// seed, top_k and top_p probes pass without proving anything.
async fn temperature_honoured(ask: &Asker<'_>, greedy: &Reply) -> ProbeResult {
    const P: &str = "temperature_honoured";
    if let Some(bad) = greedy.unusable(P) {
        return bad;
    }
    let body = ask.body(LONG, CAP, json!({"temperature": 1.0}));
    for i in 1..=SAMPLES {
        let r = ask.send(&body).await;
        if let Some(bad) = r.unusable(P) {
            return bad;
        }
        if r.text() != greedy.text() {
            return pass(
                P,
                format!(
                    "sample {i} at temperature 1: {}; temperature 0: {}",
                    quote(r.text()),
                    quote(greedy.text())
                ),
            );
        }
    }
    fail(
        P,
        format!(
            "{SAMPLES} replies at temperature 1 were all the temperature-0 text {}: the server \
             ignores `temperature` (so the seed, top_k and top_p probes prove nothing)",
            quote(greedy.text())
        ),
    )
}

async fn seed_reproducible(ask: &Asker<'_>) -> ProbeResult {
    const P: &str = "seed_reproducible";
    let body = ask.body(POEM, 32, json!({"temperature": 1.0, "seed": 1234}));
    let first = ask.send(&body).await;
    if let Some(bad) = first.unusable(P) {
        return bad;
    }
    let second = ask.send(&body).await;
    if let Some(bad) = second.unusable(P) {
        return bad;
    }
    if first.text() == second.text() {
        pass(P, format!("seed 1234 twice: {}", quote(first.text())))
    } else {
        fail(
            P,
            format!(
                "seed 1234 twice: {} then {}",
                quote(first.text()),
                quote(second.text())
            ),
        )
    }
}

async fn logprobs_shape(ask: &Asker<'_>) -> ProbeResult {
    const P: &str = "logprobs_shape";
    const TOP: usize = 3;
    let extra = json!({"logprobs": true, "top_logprobs": TOP});
    let r = ask.send(&ask.body(SHORT, 8, extra)).await;
    if let Some(bad) = r.unusable(P) {
        return bad;
    }
    let choice = r.json.as_ref().and_then(|j| j.pointer("/choices/0"));
    let listed = choice
        .and_then(|c| c.get("logprobs"))
        .filter(|l| !l.is_null());
    let Some(choice) = choice.filter(|_| listed.is_some()) else {
        return unsupported(P, "the reply carries no logprobs");
    };
    let tokens = match parse_logprobs(choice) {
        Ok(t) => t,
        Err(e) => return fail(P, format!("malformed logprobs: {e}")),
    };
    if let Some(c) = r.usage().1.filter(|&c| c != tokens.len() as u64) {
        return fail(
            P,
            format!("{} logprob entries for {c} completion tokens", tokens.len()),
        );
    }
    // Counted as the server listed them: parsing keeps at most the best 100.
    let listed = |i: usize, kept: usize| {
        choice
            .pointer(&format!("/logprobs/content/{i}/top_logprobs"))
            .and_then(Value::as_array)
            .map_or(kept, Vec::len)
    };
    let wrong = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (i, t, listed(i, t.top.len())))
        .find(|(_, _, n)| *n != TOP);
    if let Some((i, t, n)) = wrong {
        return fail(
            P,
            format!(
                "token {i} ({}) lists {n} alternatives, not {TOP}",
                quote(&t.token)
            ),
        );
    }
    pass(
        P,
        format!("{} tokens, {TOP} alternatives each", tokens.len()),
    )
}

/// A sampled request that must collapse to the greedy reply.
async fn same_as_greedy(
    probe: &'static str,
    ask: &Asker<'_>,
    greedy: &Reply,
    sampling: Value,
) -> ProbeResult {
    if let Some(bad) = greedy.unusable(probe) {
        return bad;
    }
    let r = ask.send(&ask.body(POEM, 32, sampling.clone())).await;
    if let Some(bad) = r.unusable(probe) {
        return bad;
    }
    if r.text() == greedy.text() {
        pass(probe, format!("{sampling}: {}", quote(r.text())))
    } else {
        fail(
            probe,
            format!(
                "{sampling}: {}; temperature 0: {}",
                quote(r.text()),
                quote(greedy.text())
            ),
        )
    }
}

async fn no_reasoning_only(ask: &Asker<'_>) -> ProbeResult {
    const P: &str = "no_reasoning_only";
    let r = ask.send(&ask.body(SUM, 1024, json!({}))).await;
    if let Some(bad) = r.unusable(P) {
        return bad;
    }
    let reasoning = r
        .completion
        .as_ref()
        .and_then(|c| c.reasoning.as_deref())
        .map_or(0, |t| t.chars().count());
    match (r.text().trim().is_empty(), reasoning) {
        (false, _) => pass(P, format!("content {}", quote(r.text()))),
        (true, 0) => fail(
            P,
            format!("empty content (finish_reason {})", plain(r.finish_reason())),
        ),
        (true, n) => fail(
            P,
            format!(
                "reasoning only: {n} characters of reasoning, no content (finish_reason {})",
                plain(r.finish_reason())
            ),
        ),
    }
}

fn weather_tools() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city name."}},
                "required": ["city"]
            }
        }
    }])
}

/// The reply to the weather question with `tool_choice: required` must be a call, and a reply
/// with a call must say `tool_calls`.
fn tool_call(r: &Reply) -> [ProbeResult; 2] {
    const CALL: &str = "tool_choice_required";
    const FINISH: &str = "tool_call_finish_reason";
    if let Some(bad) = r.unusable(CALL) {
        let finish = ProbeResult {
            probe: FINISH,
            ..bad.clone()
        };
        return [bad, finish];
    }
    let calls = r
        .completion
        .as_ref()
        .map(|c| c.tool_calls.as_slice())
        .unwrap_or_default();
    let Some(first) = calls.first() else {
        return [
            fail(
                CALL,
                format!(
                    "no tool call; content {} (finish_reason {})",
                    quote(r.text()),
                    plain(r.finish_reason())
                ),
            ),
            unsupported(FINISH, "no call was made to check"),
        ];
    };
    let called = call_text(
        first.name.as_deref().unwrap_or("?"),
        first.arguments.as_deref().unwrap_or(""),
    );
    let finish = match r.finish_reason() {
        Some("tool_calls") => pass(FINISH, format!("tool_calls with {called}")),
        other => fail(
            FINISH,
            format!("finish_reason {} with {called}", plain(other)),
        ),
    };
    [pass(CALL, format!("called {called}")), finish]
}

/// A call as the evidence quotes it: `get_weather({"city": "Paris"})`, its arguments clipped.
fn call_text(name: &str, arguments: &str) -> String {
    format!("{}({})", clip(name, 40), clip(arguments, 60))
}

/// Why a streamed call's name is not the one sent whole, when the stream sent the whole name in
/// every delta: the API sends a name once, in the call's first delta, and clients join the pieces.
fn repeated_name(streamed: &[(String, String)], unstreamed: &[(String, String)]) -> Option<String> {
    streamed
        .iter()
        .zip(unstreamed)
        .find_map(|((got, _), (name, _))| {
            let times = got.len().checked_div(name.len())?;
            (times > 1 && *got == name.repeat(times)).then(|| {
                format!(
                "; the stream sent the name `{name}` whole in {times} deltas, where the API sends \
                 it once: a client that joins the pieces reads `{}`",
                clip(got, 40)
            )
            })
        })
}

/// A reply's calls as (name, arguments) text.
fn calls_of(r: &Reply) -> Vec<(String, String)> {
    let calls = r.completion.as_ref().map(|c| c.tool_calls.as_slice());
    calls
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let part = |s: &Option<String>| s.clone().unwrap_or_default();
            (part(&c.name), part(&c.arguments))
        })
        .collect()
}

fn streamed_calls(s: &Stream) -> Vec<(String, String)> {
    let calls = s.tool_calls.iter();
    calls
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect()
}

/// Two call lists are the same call for call: names equal, arguments equal as JSON when both
/// parse (`{"a":1}` and `{"a": 1}` are one call), else as text.
fn same_calls(a: &[(String, String)], b: &[(String, String)]) -> bool {
    let same_arguments = |x: &str, y: &str| match (
        serde_json::from_str::<Value>(x),
        serde_json::from_str::<Value>(y),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => x.trim() == y.trim(),
    };
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((n1, a1), (n2, a2))| n1 == n2 && same_arguments(a1, a2))
}

/// `get_weather({...})`, each call; `no call` when there is none.
fn calls_text(calls: &[(String, String)]) -> String {
    if calls.is_empty() {
        return "no call".into();
    }
    let each: Vec<String> = calls.iter().map(|(n, a)| call_text(n, a)).collect();
    each.join(", ")
}

/// The weather question with `get_weather` named in `tool_choice` (more servers force a named
/// function than take `required`), streamed and not: the assembled call and the finish reason
/// must be those of the reply sent whole (a stream that ended with `stop` after the call while
/// the reply said `tool_calls` is a reported bug of 2026, python-genai#2868).
async fn stream_tool_call(ask: &Asker<'_>) -> ProbeResult {
    const P: &str = "stream_tool_call";
    let body = ask.body(WEATHER, 256, named_call());
    let r = ask.send(&body).await;
    if let Some(bad) = r.unusable(P) {
        return bad;
    }
    let unstreamed = calls_of(&r);
    if unstreamed.is_empty() {
        return unsupported(
            P,
            format!(
                "no call though the function was named; text {}",
                quote(r.text())
            ),
        );
    }
    let (sr, stream) = ask.stream(&streamed(body)).await;
    let s = match stream_of(P, &sr, stream) {
        Ok(s) => s,
        Err(bad) => return bad,
    };
    let calls = streamed_calls(&s);
    let finish = (s.finish_reason.as_deref(), r.finish_reason());
    if same_calls(&calls, &unstreamed) && finish.0 == finish.1 {
        return pass(
            P,
            format!(
                "both {}, finish_reason {}",
                calls_text(&calls),
                plain(finish.0)
            ),
        );
    }
    fail(
        P,
        format!(
            "streamed {}, finish_reason {} (text {}); not streamed {}, finish_reason {}{}",
            calls_text(&calls),
            plain(finish.0),
            quote(&s.text),
            calls_text(&unstreamed),
            plain(finish.1),
            repeated_name(&calls, &unstreamed).unwrap_or_default()
        ),
    )
}

/// `tools` with `get_weather` forced by name.
fn named_call() -> Value {
    json!({"tools": weather_tools(),
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}}})
}

/// The event stream of a streamed probe request, or the probe's verdict when the request failed
/// or was answered without one.
fn stream_of(
    probe: &'static str,
    r: &Reply,
    stream: Option<Stream>,
) -> Result<Stream, ProbeResult> {
    if let Some(bad) = r.refused(probe) {
        return Err(bad);
    }
    stream.ok_or_else(|| {
        fail(
            probe,
            format!(
                "stream: true was answered without an event stream: {}",
                quote(&r.body)
            ),
        )
    })
}

/// Markup of a chat template's tool call that belongs in `tool_calls`, never in `content`.
const CALL_MARKUP: &[&str] = &[
    "<tool_call>",
    "<|tool_call",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<function=",
    "<｜tool▁call",
];

/// The named call at a budget that cuts it ([`CUT_CALL`] tokens), streamed and not: each must
/// say `finish_reason: length` (a cut call that says `tool_calls` hands the client arguments
/// that are not JSON as if complete), both must agree (text, calls, finish reason), and neither
/// may return the call's raw markup as text (vllm#47903: a cut call differed between the two and
/// leaked `<tool_call>` into content).
async fn tool_call_cut_off(ask: &Asker<'_>) -> ProbeResult {
    const P: &str = "tool_call_cut_off";
    let body = ask.body(WEATHER, CUT_CALL, named_call());
    let r = ask.send(&body).await;
    if let Some(bad) = r.unusable(P) {
        return bad;
    }
    let calls = calls_of(&r);
    let leaked = |text: &str| CALL_MARKUP.iter().find(|m| text.contains(**m)).copied();
    if calls.is_empty() && leaked(r.text()).is_none() {
        return unsupported(
            P,
            format!(
                "no call at max_tokens {CUT_CALL} though the function was named; text {}",
                quote(r.text())
            ),
        );
    }
    let parses = |a: &str| serde_json::from_str::<Value>(a).is_ok();
    let reached = r.usage().1.is_some_and(|n| n >= u64::from(CUT_CALL));
    if !reached && calls.iter().all(|(_, a)| parses(a)) {
        return unsupported(
            P,
            format!(
                "the call fit in max_tokens {CUT_CALL}: {}",
                calls_text(&calls)
            ),
        );
    }
    let (sr, stream) = ask.stream(&streamed(body)).await;
    let s = match stream_of(P, &sr, stream) {
        Ok(s) => s,
        Err(bad) => return bad,
    };
    let streamed = streamed_calls(&s);
    let side = |text: &str, calls: &[(String, String)], finish: Option<&str>| {
        format!(
            "{}, text {}, finish_reason {}",
            calls_text(calls),
            quote(text),
            plain(finish)
        )
    };
    let unstreamed = side(r.text(), &calls, r.finish_reason());
    let stream_side = side(&s.text, &streamed, s.finish_reason.as_deref());
    let same = r.text() == s.text
        && same_calls(&calls, &streamed)
        && r.finish_reason() == s.finish_reason.as_deref();
    let mut faults = Vec::new();
    if !same {
        faults.push(format!(
            "streamed {stream_side}; not streamed {unstreamed}{}",
            repeated_name(&streamed, &calls).unwrap_or_default()
        ));
    }
    if let Some(m) = leaked(r.text()).or(leaked(&s.text)) {
        faults.push(format!("raw call markup `{m}` in the text"));
    }
    if r.finish_reason() != Some("length") || s.finish_reason.as_deref() != Some("length") {
        faults.push(format!(
            "cut at max_tokens {CUT_CALL} but finish_reason {}, not length",
            plain(r.finish_reason().or(s.finish_reason.as_deref()))
        ));
    }
    if faults.is_empty() {
        pass(P, format!("both at max_tokens {CUT_CALL}: {unstreamed}"))
    } else if same {
        fail(P, format!("{}: both {unstreamed}", faults.join("; ")))
    } else {
        fail(P, faults.join("; "))
    }
}

/// `body` with `stream: true` and the usage chunk asked for.
fn streamed(mut body: Value) -> Value {
    body["stream"] = true.into();
    body["stream_options"] = json!({"include_usage": true});
    body
}

/// A tool-result exchange whose call carries `arguments`.
fn tool_exchange(arguments: &str) -> Value {
    json!([
        {"role": "user", "content": WEATHER},
        {"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": arguments}
        }]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 C and sunny"}
    ])
}

/// The exchange with invalid arguments must get a client error; the same exchange with valid
/// arguments is sent first, so the evidence says whether the server takes tool results at all.
async fn invalid_tool_arguments(ask: &Asker<'_>) -> ProbeResult {
    const P: &str = "invalid_tool_arguments";
    let extra = json!({"tools": weather_tools()});
    let valid = ask
        .send(&ask.body_with(tool_exchange("{\"city\": \"Paris\"}"), 32, extra.clone()))
        .await;
    let control = match valid.status {
        Some(s) => format!("valid arguments: HTTP {s}"),
        None => "valid arguments: no reply".to_string(),
    };
    let r = ask
        .send(&ask.body_with(tool_exchange("{\"city\": "), 32, extra))
        .await;
    let said = r
        .failure
        .as_ref()
        .map_or_else(|| quote(&r.body), ToString::to_string);
    match r.status {
        Some(s) if (400..500).contains(&s) => pass(P, format!("HTTP {s} ({control}): {said}")),
        Some(s) if (200..300).contains(&s) => unsupported(
            P,
            format!(
                "accepted (HTTP {s}; {control}): the server does not check tool-call arguments"
            ),
        ),
        Some(s) => fail(P, format!("HTTP {s} ({control}): {said}")),
        None => fail(P, format!("{said} ({control})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_word_is_a_first_occurrence_past_the_first_third() {
        let text = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12";
        let (word, at) = stop_word(text).unwrap();
        assert_eq!(word, "5");
        assert_eq!(&text[..at], "1, 2, 3, 4, ");
        assert_eq!(stop_word("a b c"), Some(("b", 2)));
        assert_eq!(stop_word("abc"), None, "one word, at the start");
        assert_eq!(stop_word(""), None);
        // A word met before the first third is not a first occurrence later on.
        let (word, _) = stop_word("ab cd ef ab gh ij").unwrap();
        assert_eq!(word, "ef");
    }

    #[test]
    fn every_probe_is_listed_once() {
        let mut names: Vec<&str> = PROBES.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROBES.len());
    }

    /// A reply of `content` (and `reasoning`) whose usage counts `tokens` and declares
    /// `declared` reasoning tokens, read as a server's JSON is read.
    fn counted(content: &str, reasoning: Option<&str>, tokens: u64, declared: u64) -> Counted {
        let body = json!({
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": content, "reasoning_content": reasoning}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": tokens, "total_tokens": 9 + tokens,
                "completion_tokens_details": {"reasoning_tokens": declared}}
        });
        let reply = Reply {
            status: Some(200),
            body: body.to_string(),
            completion: Some(crate::endpoint::parse_completion(&body.to_string()).unwrap()),
            json: Some(body),
            failure: None,
        };
        Counted::of("short", &reply).unwrap()
    }

    #[test]
    fn declared_hidden_reasoning_is_counted_and_phantom_tokens_are_not() {
        // 300 tokens for "Paris": phantom, unless 296 are declared as reasoning kept back.
        assert!(counted("Paris", None, 300, 0).beyond());
        let hidden = counted("Paris", None, 300, 296);
        assert!(!hidden.beyond());
        assert_eq!(
            hidden.text(),
            "300 for 5 bytes and 296 declared reasoning tokens not sent (short)"
        );
        // Reasoning that was sent counts as its bytes; a declaration beside it adds nothing.
        assert!(counted("Paris", Some("think"), 300, 296).beyond());
        assert!(!counted("Paris", None, 13, 0).beyond());
        assert!(counted("Paris", None, 14, 0).beyond());
    }

    #[test]
    fn a_name_sent_whole_in_every_delta_is_told_apart_from_another_name() {
        let call = |name: &str| vec![(name.to_string(), "{}".to_string())];
        let told = repeated_name(
            &call("get_weatherget_weatherget_weather"),
            &call("get_weather"),
        );
        assert!(told
            .unwrap()
            .contains("the name `get_weather` whole in 3 deltas"),);
        for other in ["get_weather", "get_time", "get_weatherget_", ""] {
            assert_eq!(
                repeated_name(&call(other), &call("get_weather")),
                None,
                "{other}"
            );
        }
        assert_eq!(repeated_name(&call("x"), &call("")), None);
    }
}
