//! Token-level evidence over HTTP: teacher-forced comparison of endpoints' prompt logprobs
//! (KL over the top-k, same top token, Δp), decode-versus-prefill self-consistency with offset
//! detection, and near-tie classification of first divergences.
//!
//! Data flow: `mode` asks a server for prompt logprobs, `parse` reads the response, `align`
//! finds the text's tokens and applies the server's offset (which `consistency` establishes),
//! `metrics` compares two endpoints token by token, `run` drives it all (and names the files
//! `--out` writes it to), `report` renders it. `forced` teacher-forces a compare run's completions, rendering chat prompts with `template`
//! (a Jinja template, from a file, a tokenizer_config.json or a GGUF model via `gguf`), and with
//! `--suite long` the long items' passages as plain text (`passages`).

pub mod align;
pub mod consistency;
pub mod corpus;
pub mod forced;
pub mod gguf;
pub mod metrics;
pub mod mode;
pub mod near_tie;
pub mod parse;
pub mod passages;
pub mod report;
pub mod run;
pub mod template;

pub use run::{folder, run, LogprobsSettings, EVIDENCE_JSON, EVIDENCE_MD};
