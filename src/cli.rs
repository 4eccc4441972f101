//! Command-line flags (clap derive). `run::plan` turns them into a validated plan.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "coherence",
    version,
    about = "Prove whether two deployments of the same LLM behave like the same model",
    after_help = "Exit codes: 0 coherent, 1 divergence found, 2 usage or configuration error, 3 incomplete run."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Send the catalogue to two or more endpoints and report where they diverge.
    Compare(Box<CompareArgs>),
    /// Repeat the catalogue on one or more endpoints to measure sampler determinism at temperature 0
    /// (compare with --repeats 5 by default; one endpoint is enough).
    Determinism(Box<CompareArgs>),
    /// Re-score a run folder from its saved records (no network) and rewrite its reports.
    Score(ScoreArgs),
    /// Re-render a run folder's reports from its results.json (no network).
    Report(ReportArgs),
    /// List or check the prompt catalogue.
    Prompts {
        #[command(subcommand)]
        command: PromptsCommand,
    },
    /// Internal: the sandboxed JS test runner (job on stdin, results on stdout).
    #[command(name = "__js-worker", hide = true)]
    JsWorker,
}

#[derive(Debug, Subcommand)]
pub enum PromptsCommand {
    /// One line per prompt: id, category, scorer, expected answer.
    List(CatalogueArgs),
    /// Validate the catalogue and prove every reference answer scores correct and every
    /// wrong answer does not.
    Check(CheckArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub catalogue: CatalogueArgs,
    /// Skip the per-category count check (for a custom catalogue that is not the full 100).
    #[arg(long)]
    pub any_counts: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CatalogueArgs {
    /// Folder of `*.toml` prompt files (default: `prompts/` here, else the one shipped with the source).
    #[arg(long, value_name = "DIR")]
    pub catalogue: Option<PathBuf>,
}

/// Which endpoints to talk to and how to authenticate.
#[derive(Debug, Clone, Args)]
pub struct EndpointArgs {
    /// NAME=URL of an OpenAI-compatible base (e.g. spark=http://10.0.0.1:8000/v1). Repeatable;
    /// the first is the reference.
    #[arg(long = "endpoint", value_name = "NAME=URL")]
    pub endpoints: Vec<String>,
    /// NAME=MODEL: the model to request from endpoint NAME (default: the first id from GET /models).
    #[arg(long = "model", value_name = "NAME=MODEL")]
    pub models: Vec<String>,
    /// NAME=ENVVAR: read endpoint NAME's API key from ENVVAR (default: OPENAI_API_KEY when set).
    #[arg(long = "api-key-env", value_name = "NAME=ENVVAR")]
    pub api_key_envs: Vec<String>,
}

/// How each request is sent.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// Seconds allowed per request attempt, including reading the body.
    #[arg(long, value_name = "SECS", default_value_t = 900)]
    pub timeout: u64,
    /// Retries after a connection error, timeout, 429 or 5xx.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub retries: u32,
    /// First backoff between retries in milliseconds; doubles each retry (with jitter), capped at 30 s.
    /// A server's Retry-After takes precedence.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub backoff_ms: u64,
    /// Largest response body accepted; a larger one is recorded as a failure.
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_response_bytes: usize,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    #[command(flatten)]
    pub catalogue: CatalogueArgs,
    /// Only these prompt ids (comma-separated or repeated).
    #[arg(long, value_name = "ID,ID", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Only these categories (comma-separated or repeated).
    #[arg(long, value_name = "CAT,CAT", value_delimiter = ',')]
    pub category: Vec<String>,
    /// Token budget for every prompt (default: the prompt's own `max_tokens`, else 1024).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Independent requests per prompt and endpoint [default: 1 for compare, 5 for determinism].
    #[arg(long, value_name = "N")]
    pub repeats: Option<u32>,
    /// Requests in flight per endpoint.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub concurrency: usize,
    #[command(flatten)]
    pub client: ClientArgs,
    /// KEY=VALUE: an extra request field sent identically to every endpoint (VALUE is JSON when it
    /// parses as JSON, else a string). Repeatable.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// When an answer comes back empty because the reasoning used the whole budget (content null,
    /// finish_reason length, reasoning present), re-run that prompt once at this budget. 0 disables.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub reasoning_retry_budget: u32,
    /// Request token logprobs so divergences are also located by token index.
    #[arg(long)]
    pub logprobs: bool,
    /// Run folder to create (default: runs/<UTC timestamp>-<names>/).
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Continue the run in DIR: send only what is missing (or what the flags add).
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Args)]
pub struct GateArgs {
    /// Conditions that make the exit code 1, comma-separated METRIC OP NUMBER; any one holding fails
    /// the gate. Metrics: same, diff, review, fail, nondeterministic, deployment, p.
    /// [default: diff>0,fail>0 for compare; nondeterministic>0,fail>0 for determinism]
    #[arg(long, value_name = "EXPR")]
    pub fail_on: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ScoreArgs {
    /// The run folder.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    /// Catalogue to score with (default: the run's own catalogue folder).
    #[arg(long, value_name = "DIR")]
    pub catalogue: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The run folder.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
}
