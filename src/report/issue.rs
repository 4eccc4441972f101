//! A bug report to paste into an inference engine's tracker (`coherence report RUN_DIR --issue`):
//! for each chosen prompt, the answers side by side, where they first diverge (with each side's
//! top-k there, when logprobs were recorded), every endpoint's served model, fingerprint, server
//! header and sampling, and a `curl` per endpoint that sends the recorded request again, its key
//! left as `$OPENAI_API_KEY`. Each endpoint's tool calls are quoted with its answer; quoted texts
//! are clipped (marked) and the whole report is bounded under an issue's size limit.

use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::{PromptResult, Results, Verdict};
use crate::catalogue::Catalogue;
use crate::doc::{code, para, text, to_markdown, Block, Line, Part, Table};
use crate::endpoint::ToolCall;
use crate::run::journal::{effective, Slot};
use crate::run::request::{endpoint_request, request_hash};
use crate::run::Line as _;
use crate::run::{Manifest, Record};
use crate::text::{clip, clip_block};

/// Alternatives shown per side at the first divergent token.
const TOP_SHOWN: usize = 5;

/// The most characters of one quoted text (the question, an answer, a call's arguments); the
/// whole text is in the run's records.jsonl.
const QUOTE_MAX: usize = 4_000;

/// The longest request body a `curl` quotes; a longer one is named, not quoted.
const CURL_BODY_MAX: usize = 8_000;

/// The most characters of the whole report, under GitHub's 65,536 for an issue body: prompts
/// past it are named, not shown (the first is always shown, its texts clipped).
const ISSUE_MAX: usize = 60_000;

/// The most characters of a table cell.
const CELL_MAX: usize = 200;

/// The run a report is written from: its folder, manifest, results, catalogue and records.
pub struct IssueRun<'a> {
    pub dir: &'a Path,
    pub manifest: &'a Manifest,
    pub results: &'a Results,
    pub catalogue: &'a Catalogue,
    pub records: &'a [Record],
}

/// Which prompts the report is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IssueChoice {
    Prompt(String),
    /// Every prompt whose verdict is `different`.
    AllDifferent,
}

impl IssueChoice {
    /// `all-different`, else a prompt id.
    pub fn parse(raw: &str) -> IssueChoice {
        match raw {
            "all-different" => IssueChoice::AllDifferent,
            id => IssueChoice::Prompt(id.to_string()),
        }
    }
}

/// The Markdown report, or why there is nothing to report.
pub fn render(run: &IssueRun, choice: &IssueChoice) -> Result<String, String> {
    let chosen: Vec<&PromptResult> = match choice {
        IssueChoice::Prompt(id) => {
            let p = run.results.prompts.iter().find(|p| &p.id == id);
            vec![p.ok_or_else(|| {
                format!(
                    "--issue {id}: the run {} has no prompt `{id}`",
                    run.dir.display()
                )
            })?]
        }
        IssueChoice::AllDifferent => run
            .results
            .prompts
            .iter()
            .filter(|p| p.verdict == Verdict::Diff)
            .collect(),
    };
    if chosen.is_empty() {
        return Err(format!(
            "--issue all-different: no prompt of {} reads `different`",
            run.dir.display()
        ));
    }
    let slots = effective(run.records);
    let mut out = String::new();
    for (shown, p) in chosen.iter().enumerate() {
        let part = to_markdown(&[Block::Part(prompt_part(run, &slots, p))]);
        if shown > 0 && out.len() + part.len() > ISSUE_MAX {
            let left: Vec<String> = chosen[shown..].iter().map(|p| p.id.clone()).collect();
            out += &format!(
                "\n{} more prompt(s) left out to keep this report under {ISSUE_MAX} characters \
                 (an issue's limit); report each with --issue PROMPT_ID: {}\n",
                left.len(),
                crate::text::clip(&left.join(", "), 2_000)
            );
            break;
        }
        if shown > 0 {
            out.push('\n');
        }
        out += &part;
    }
    Ok(out)
}

/// The record shown for a prompt on an endpoint: its first repeat with an answer, else its first.
fn record_of<'a>(
    slots: &BTreeMap<Slot, &'a Record>,
    prompt: &str,
    endpoint: &str,
) -> Option<&'a Record> {
    let of_endpoint = || {
        slots
            .iter()
            .filter(move |(s, _)| s.prompt == prompt && s.endpoint == endpoint)
            .map(|(_, r)| *r)
    };
    of_endpoint()
        .find(|r| r.is_usable())
        .or_else(|| of_endpoint().next())
}

fn prompt_part(run: &IssueRun, slots: &BTreeMap<Slot, &Record>, p: &PromptResult) -> Part {
    let names = run.manifest.endpoint_names();
    let records: Vec<(&str, Option<&Record>)> = names
        .iter()
        .map(|n| (n.as_str(), record_of(slots, &p.id, n)))
        .collect();
    let mut body = vec![
        para(vec![
            text(format!(
                "{} sent the same prompt to {} endpoints at temperature {} (run ",
                run.results.tool,
                names.len(),
                run.manifest.sampling.temperature,
            )),
            code(run.dir.display().to_string()),
            text(format!("); verdict: {}.", p.verdict.as_str())),
        ]),
        Block::Quote(vec![text(clip_block(&p.question, QUOTE_MAX).into_owned())]),
    ];
    body.extend(p.pairs.iter().map(|pair| {
        para(vec![text(format!(
            "{} against {}: {} ({})",
            pair.other,
            pair.reference,
            pair.verdict.as_str(),
            pair.reason
        ))])
    }));
    body.push(Block::Part(Part::new(
        3,
        None,
        vec![text("Answers")],
        answers(p, &records),
    )));
    let divergence = divergence(p, &records);
    if !divergence.is_empty() {
        body.push(Block::Part(Part::new(
            3,
            None,
            vec![text("First divergence")],
            divergence,
        )));
    }
    body.push(Block::Part(Part::new(
        3,
        None,
        vec![text("Endpoints")],
        vec![Block::Table(endpoints(run, &records))],
    )));
    body.push(Block::Part(Part::new(
        3,
        None,
        vec![text("Reproduce")],
        reproduce(run, &p.id, &records),
    )));
    Part::new(
        2,
        None,
        vec![
            code(p.id.clone()),
            text(format!(": {}", p.verdict.as_str())),
        ],
        body,
    )
}

/// Each endpoint's scored answer, then its whole completion.
fn answers(p: &PromptResult, records: &[(&str, Option<&Record>)]) -> Vec<Block> {
    let mut table = Table::new(&["endpoint", "answer read", "correct", "finish", "tokens"]);
    let mut blocks = Vec::new();
    for (name, record) in records {
        let a = p.answers.get(*name);
        table.text_row(&[
            name.to_string(),
            clip(
                a.and_then(|a| a.extracted.as_deref().or(a.error.as_deref()))
                    .unwrap_or_default(),
                CELL_MAX,
            ),
            a.and_then(|a| a.correct)
                .map_or(String::new(), |c| c.to_string()),
            a.and_then(|a| a.finish_reason.clone()).unwrap_or_default(),
            a.and_then(|a| a.completion_tokens)
                .map_or(String::new(), |n| n.to_string()),
        ]);
        let content = record
            .and_then(|r| r.completion.content.as_deref())
            .map_or("(no content)".into(), |c| clip_block(c, QUOTE_MAX));
        blocks.push(para(vec![code(name.to_string()), text(" answered:")]));
        blocks.push(Block::Preformatted(content.into_owned()));
        let calls = record.map_or(&[][..], |r| &r.completion.tool_calls[..]);
        if !calls.is_empty() {
            blocks.push(para(vec![
                code(name.to_string()),
                text(format!(" made {} tool call(s):", calls.len())),
            ]));
            blocks.push(Block::Preformatted(tool_calls_text(calls)));
        }
    }
    blocks.insert(0, Block::Table(table));
    blocks
}

/// Each call as `name(arguments)`, one a line, the arguments clipped together to [`QUOTE_MAX`];
/// arguments sent as another JSON type than a string are said to be.
fn tool_calls_text(calls: &[ToolCall]) -> String {
    let lines: Vec<String> = calls
        .iter()
        .map(|c| {
            let sent_as = c.arguments_type.as_deref().map_or(String::new(), |t| {
                format!("  (arguments sent as a JSON {t}, not a string)")
            });
            format!(
                "{}({}){sent_as}",
                c.name.as_deref().unwrap_or("(no name)"),
                c.arguments.as_deref().unwrap_or("")
            )
        })
        .collect();
    clip_block(&lines.join("\n"), QUOTE_MAX).into_owned()
}

/// Where each pair's texts first differ, and each side's top-k at the first differing token
/// when logprobs were recorded.
fn divergence(p: &PromptResult, records: &[(&str, Option<&Record>)]) -> Vec<Block> {
    let record = |name: &str| {
        records
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, r)| *r)
    };
    let mut blocks = Vec::new();
    for pair in &p.pairs {
        let Some(d) = &pair.first_divergence else {
            continue;
        };
        let mut line: Line = vec![text(format!(
            "{} against {}: after {} shared characters (",
            pair.other, pair.reference, d.char_offset
        ))];
        line.push(code(d.before.clone()));
        line.push(text("), "));
        line.push(code(d.left.clone()));
        line.push(text(" against "));
        line.push(code(d.right.clone()));
        if let Some(t) = &pair.token_divergence {
            line.push(text(format!(
                "; token {}: {:?} against {:?}{}",
                t.index,
                t.reference_token,
                t.other_token,
                if t.near_tie { " (a near tie)" } else { "" }
            )));
        }
        blocks.push(para(line));
        let index = pair
            .token_divergence
            .as_ref()
            .map(|t| t.index)
            .or(d.token_index);
        if let Some(i) = index {
            let mut table = Table::new(&["endpoint", "token", "top alternatives (logprob)"]);
            for name in [&pair.reference, &pair.other] {
                let Some(token) = record(name)
                    .and_then(|r| r.completion.logprobs.as_ref())
                    .and_then(|t| t.get(i))
                else {
                    continue;
                };
                let top: Vec<String> = token
                    .top
                    .iter()
                    .take(TOP_SHOWN)
                    .map(|(t, lp)| format!("{t:?} {lp:.3}"))
                    .collect();
                table.text_row(&[name.clone(), format!("{:?}", token.token), top.join(", ")]);
            }
            if !table.rows.is_empty() {
                blocks.push(Block::Table(table));
            }
        }
    }
    blocks
}

/// Each endpoint's URL, requested and served model, fingerprint, server header and sampling.
fn endpoints(run: &IssueRun, records: &[(&str, Option<&Record>)]) -> Table {
    let mut table = Table::new(&[
        "endpoint",
        "base URL",
        "model requested",
        "model served",
        "system_fingerprint",
        "Server header",
        "sampling",
    ]);
    let shared = sampling_text(run, &serde_json::Map::new());
    for (e, (_, record)) in run.manifest.endpoints.iter().zip(records) {
        let own = sampling_text(run, &e.spec.sampling_override);
        table.text_row(&[
            e.spec.name.clone(),
            e.spec.base_url.clone(),
            e.spec.model.clone().unwrap_or_default(),
            record
                .and_then(|r| r.completion.model.clone())
                .unwrap_or_default(),
            record
                .and_then(|r| r.completion.system_fingerprint.clone())
                .unwrap_or_default(),
            record.and_then(|r| r.server.clone()).unwrap_or_default(),
            if own == shared {
                own
            } else {
                format!("{own} (this endpoint's own)")
            },
        ]);
    }
    table
}

/// The sampling fields every request carried, with an endpoint's own `overrides` on top.
fn sampling_text(run: &IssueRun, overrides: &serde_json::Map<String, serde_json::Value>) -> String {
    let s = &run.manifest.sampling;
    let mut fields = serde_json::Map::new();
    fields.insert("temperature".into(), s.temperature.into());
    fields.insert("stream".into(), s.stream.into());
    for (k, v) in s.params.iter().chain(overrides) {
        fields.insert(k.clone(), v.clone());
    }
    serde_json::Value::Object(fields).to_string()
}

/// A `curl` per endpoint that sends the recorded request again.
fn reproduce(run: &IssueRun, id: &str, records: &[(&str, Option<&Record>)]) -> Vec<Block> {
    let Some(prompt) = run.catalogue.get(id) else {
        return vec![para(vec![text(format!(
            "The prompt `{id}` is no longer in the catalogue {}: its request cannot be rebuilt.",
            run.catalogue.dir.display()
        ))])];
    };
    let mut blocks = vec![para(vec![text(
        "Each command sends the exact request body the endpoint was sent (set OPENAI_API_KEY, or drop the header, for an endpoint without a key):",
    )])];
    for (e, (_, record)) in run.manifest.endpoints.iter().zip(records) {
        let Some(record) = record else {
            continue;
        };
        let model = e.spec.model.clone().unwrap_or_default();
        let (path, body) = endpoint_request(
            prompt,
            &model,
            record.max_tokens,
            &run.manifest.sampling,
            &e.spec.sampling_override,
        );
        let hash = request_hash(&body);
        blocks.push(para(vec![code(e.spec.name.clone())]));
        if hash != record.request_hash {
            blocks.push(Block::Callout {
                bad: true,
                text: vec![text(format!(
                    "This body hashes to {hash}, the recorded request to {}: the prompt changed since the run.",
                    record.request_hash
                ))],
            });
        }
        let body = body.to_string();
        if body.chars().count() > CURL_BODY_MAX {
            blocks.push(para(vec![text(format!(
                "The request body has {} characters, too many to quote here: it is the request of hash {hash}.",
                body.chars().count()
            ))]));
            continue;
        }
        blocks.push(Block::Preformatted(curl(&e.spec.base_url, path, &body)));
    }
    blocks
}

/// `curl` posting `body` to `base/path`, with the key read from `$OPENAI_API_KEY`.
fn curl(base: &str, path: &str, body: &str) -> String {
    let url = format!("{}/{path}", base.trim_end_matches('/'));
    format!(
        "curl -sS {} -H 'Content-Type: application/json' -H \"Authorization: Bearer $OPENAI_API_KEY\" -d {}",
        shell_quote(&url),
        shell_quote(body)
    )
}

/// `s` as one single-quoted shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curl_quotes_the_body_as_one_shell_word() {
        let c = curl("http://h:1/v1/", "chat/completions", r#"{"q":"it's"}"#);
        assert_eq!(
            c,
            r#"curl -sS 'http://h:1/v1/chat/completions' -H 'Content-Type: application/json' -H "Authorization: Bearer $OPENAI_API_KEY" -d '{"q":"it'\''s"}'"#
        );
    }

    #[test]
    fn all_different_is_a_choice_and_anything_else_a_prompt_id() {
        assert_eq!(
            IssueChoice::parse("all-different"),
            IssueChoice::AllDifferent
        );
        assert_eq!(
            IssueChoice::parse("eggs"),
            IssueChoice::Prompt("eggs".into())
        );
    }
}
