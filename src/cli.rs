//! Command-line flags (clap derive), typed so that clap's own errors name the flag. `commands`
//! turns them into plans; no layer below it sees a flag.

mod bounds;

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand};

use crate::bench::sizes::token_count;
use crate::bench::traffic::Kind;
use crate::catalogue::generator::{Levels, MAX_ITEMS};
use crate::catalogue::{Suite, SuiteChoice};
use crate::distribution::limits::{MAX_PERMUTATIONS, MAX_SAMPLES, MIN_PERMUTATIONS, MIN_SAMPLES};
use crate::error::{exit_codes_help, Exit};
use crate::gate::Gate;

#[derive(Debug, Parser)]
#[command(
    name = "coherence",
    version,
    about = "Prove whether two deployments of the same LLM behave like the same model",
    after_help = exit_codes_help(&[])
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The clap command of [`Cli`], its version line naming the built-in catalogue's hash:
/// `coherence 0.1.0 (catalogue 1a2b3c4d5e6f)`.
pub fn command() -> clap::Command {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let version = VERSION.get_or_init(|| {
        let hash = crate::catalogue::embedded::hash();
        format!(
            "{} (catalogue {})",
            env!("CARGO_PKG_VERSION"),
            &hash[..hash.len().min(12)]
        )
    });
    let cmd = <Cli as clap::CommandFactory>::command().version(version.as_str());
    with_exit_codes(negative_numbers_reach_parsers(each_help_its_own_flags(cmd)))
}

/// Flags one of compare and determinism refuses (they share [`CompareArgs`]).
const DETERMINISM_ONLY: [&str; 4] = ["under_load", "cache_states", "samples", "filler_tokens"];
const COMPARE_ONLY: [&str; 3] = ["until_decided", "max_items", "round_items"];

/// compare and determinism share one set of flags; each help hides the flags the other command
/// alone takes (they are still parsed, and refused with a message naming the right command).
fn each_help_its_own_flags(cmd: clap::Command) -> clap::Command {
    let hide = |names: &'static [&'static str]| {
        move |mut sub: clap::Command| {
            for name in names {
                sub = sub.mut_arg(*name, |a| a.hide(true));
            }
            sub
        }
    };
    cmd.mut_subcommand("compare", hide(&DETERMINISM_ONLY))
        .mut_subcommand("determinism", hide(&COMPARE_ONLY))
}

/// Every (sub)command without an exit-code table of its own gets the general one.
fn with_exit_codes(cmd: clap::Command) -> clap::Command {
    let cmd = if cmd.get_after_help().is_none() {
        cmd.after_help(exit_codes_help(&[]))
    } else {
        cmd
    };
    cmd.mut_subcommands(with_exit_codes)
}

/// Let a negative number reach every flag's value parser, so `--concurrency -1` is refused
/// naming the flag ("invalid value '-1' for '--concurrency <N>'") instead of being read as an
/// unknown flag `-1`.
fn negative_numbers_reach_parsers(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        if arg.get_action().takes_values() {
            arg.allow_negative_numbers(true)
        } else {
            arg
        }
    })
    .mut_subcommands(negative_numbers_reach_parsers)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Send the catalogue to two or more endpoints and report where they diverge.
    Compare(Box<CompareArgs>),
    /// Repeat the catalogue on one or more endpoints to measure sampler determinism at temperature 0
    /// (compare with --repeats 5 by default; one endpoint is enough).
    Determinism(Box<CompareArgs>),
    /// Controls for one endpoint: against itself (must not read `different`) and against itself
    /// at a higher temperature (should read `different`); says whether the catalogue at this
    /// size can tell them apart, and the smallest quality difference it can detect.
    #[command(after_help = help_with_exits(SELFTEST_HELP, SELFTEST_EXITS))]
    Selftest(Box<SelftestArgs>),
    /// Re-score a run folder from its saved records (no network) and rewrite its reports.
    Score(ScoreArgs),
    /// Re-render a run folder's reports from its results.json (no network); with --issue, print
    /// a Markdown bug report instead.
    Report(ReportArgs),
    /// Compare two saved runs offline (no network): one endpoint of each, written as a new run
    /// folder with the same reports and verdicts as a live comparison.
    #[command(after_help = help_with_exits(DIFF_HELP, DIFF_EXITS))]
    Diff(Box<DiffArgs>),
    /// List or check the prompt catalogue.
    Prompts {
        #[command(subcommand)]
        command: PromptsCommand,
    },
    /// Benchmark endpoints (one after the other, side by side): decode, concurrency sweep, prefill,
    /// speculative-decoding acceptance.
    #[command(after_help = help_with_exits(BENCH_HELP, BENCH_EXITS))]
    Bench(Box<BenchArgs>),
    /// Soak one endpoint with mixed agent-shaped traffic for a fixed time, closed loop or at an
    /// arrival rate (a list of rates sweeps to saturation), optionally graded.
    #[command(after_help = help_with_exits(SOAK_HELP, SOAK_EXITS))]
    Soak(Box<SoakArgs>),
    /// Token-level evidence: teacher-forced KL, same top token and Δp between endpoints on a
    /// text corpus, and decode-vs-prefill self-consistency of each endpoint.
    #[command(after_help = help_with_exits(LOGPROBS_HELP, LOGPROBS_EXITS))]
    Logprobs(Box<LogprobsArgs>),
    /// Check that endpoints list a model and answer an exact-reply chat test.
    #[command(after_help = exit_codes_help(SMOKE_EXITS))]
    Smoke(SmokeArgs),
    /// Does each server keep the API's promises? Usage arithmetic, max_tokens and
    /// finish_reason, stop, streaming, n, seed, logprobs, top_k/top_p, reasoning-only replies and
    /// tool calls: each probe passed, failed or not supported, with the evidence.
    #[command(after_help = exit_codes_help(CONTRACT_EXITS))]
    Contract(ContractArgs),
    /// Send a long project task (a specification with a checklist) to each endpoint, run each
    /// artifact headless in the JS sandbox and count the requirements met.
    #[command(after_help = help_with_exits(PROJECT_HELP, PROJECT_EXITS))]
    Project(Box<ProjectArgs>),
    /// Whether two endpoints sample the same distribution at a served temperature: N samples
    /// per prompt from each, a kernel two-sample test (MMD, permutation p-values) pooled over
    /// prompts, an A-vs-A control per endpoint and accuracy at temperature.
    #[command(after_help = help_with_exits(DISTRIBUTION_HELP, DISTRIBUTION_EXITS))]
    Distribution(Box<DistributionArgs>),
    /// Check an endpoint against a pinned baseline run, once (--once, for cron and CI) or on a
    /// schedule (--every): a small probe of sensitive prompts per check, both verdicts, the
    /// share of requests that do not look like the baseline; every check kept in the history.
    #[command(after_help = help_with_exits(WATCH_HELP, WATCH_EXITS))]
    Watch(Box<WatchArgs>),
    /// The checks `coherence watch` recorded, oldest first: a table, JSON, or a trend page
    /// (one self-contained HTML file) with links to each check's report.
    #[command(after_help = exit_codes_help(HISTORY_EXITS))]
    History(HistoryArgs),
    /// Print a shell completion script, e.g. `coherence completions bash > /etc/bash_completion.d/coherence`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Internal: the sandboxed JS test runner (job on stdin, results on stdout).
    #[command(name = "__js-worker", hide = true)]
    JsWorker,
}

#[derive(Debug, Subcommand)]
pub enum PromptsCommand {
    /// One line per prompt: id, category, scorer, expected answer.
    List(ListArgs),
    /// Validate the catalogue and prove every reference answer scores correct and every
    /// wrong answer does not.
    Check(CheckArgs),
    /// Write the built-in catalogue to DIR/prompts and its JS test suites to DIR/scorers, to
    /// extend and use with --catalogue DIR/prompts.
    Export(ExportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// The folder to write into (created if missing; must be empty unless --force).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Write into a non-empty folder, overwriting files of the same name.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub catalogue: CatalogueArgs,
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Skip the per-category count check (for a custom catalogue that is not the full 100).
    #[arg(long)]
    pub any_counts: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CatalogueArgs {
    /// Folder of `*.toml` prompt files, with its JS suites in `scorers/` beside it (default: the
    /// catalogue built into coherence; `coherence prompts export DIR` writes it out).
    #[arg(long, value_name = "DIR")]
    pub catalogue: Option<PathBuf>,
}

/// Which suites to send or list: `--suite`, `--items`, `--seed`.
#[derive(Debug, Clone, Args)]
pub struct SuiteArgs {
    /// Suites, comma-separated: `core` (the catalogue's prompts), `generated` (seeded items
    /// with exact answers in 14 families) and/or `long` (the long-context retrieval ladder, see
    /// --lengths) [default: core; on --resume, the run's own; a plain
    /// `compare` (built-in catalogue, nothing selected) adds `generated` until decided, see
    /// --until-decided]. `tools`: chat prompts that offer functions, scored by their calls.
    #[arg(long = "suite", value_name = "SUITE,SUITE", value_delimiter = ',', value_parser = parse_suite)]
    pub suites: Vec<Suite>,
    /// How many generated items [default: 1000; on --resume, the run's own].
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_ITEMS as u64))]
    pub items: Option<usize>,
    /// Seed of the generated items: the same seed gives the same items [default: 1; on
    /// --resume, the run's own].
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Level of the generated items, 1 (a three-letter word, a one-digit sum) to 8 (beyond a
    /// frontier model): `auto` (calibrated on the reference before the measured items, the
    /// default for a compare with the generated suite), `N` for every family, or
    /// `family=N,family=N` (the others as `auto` would leave them) [default: auto; on
    /// --resume and --baseline, the run's own; `prompts list`: 4].
    #[arg(long, value_name = "auto|N|FAMILY=N,...", value_parser = parse_difficulty)]
    pub difficulty: Option<Difficulty>,
    #[command(flatten)]
    pub long: LongArgs,
}

/// `--difficulty`: calibrated on the reference, or fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difficulty {
    Auto,
    /// The flag's text, checked; families it does not name keep their levels.
    Fixed(String),
}

fn parse_difficulty(raw: &str) -> Result<Difficulty, String> {
    if raw.trim() == "auto" {
        return Ok(Difficulty::Auto);
    }
    Levels::parse(raw, &Levels::default())?;
    Ok(Difficulty::Fixed(raw.to_string()))
}

impl SuiteArgs {
    /// The suites the flags choose; what they leave out comes from `base` (a resumed run's own
    /// choice, else the default).
    pub fn choice(&self, base: &SuiteChoice) -> Result<SuiteChoice, String> {
        let suites = if self.suites.is_empty() {
            base.suites().to_vec()
        } else {
            self.suites.clone()
        };
        let choice = SuiteChoice::new(
            suites,
            self.seed.unwrap_or(base.seed),
            self.items.unwrap_or(base.items),
        )
        .map_err(|e| format!("--items: {e}"))
        .map(|choice| self.long.apply(choice, base))?;
        let mut choice = choice;
        choice.levels = match &self.difficulty {
            Some(Difficulty::Fixed(raw)) => {
                Levels::parse(raw, &base.levels).map_err(|e| format!("--difficulty: {e}"))?
            }
            _ => base.levels.clone(),
        };
        if let Some(flag) = self.long.first_given() {
            if !choice.includes(Suite::Long) {
                return Err(format!(
                    "{flag} shapes the long suite, which this run does not send: add --suite long"
                ));
            }
        }
        choice.long.check()?;
        Ok(choice)
    }
}

fn parse_suite(raw: &str) -> Result<Suite, String> {
    Suite::parse(raw.trim()).ok_or_else(|| {
        let known: Vec<&str> = Suite::ALL.iter().map(|s| s.name()).collect();
        format!("unknown suite `{raw}` (known: {})", known.join(", "))
    })
}

/// Which endpoints to talk to and how to authenticate.
#[derive(Debug, Clone, Args)]
pub struct EndpointArgs {
    /// Endpoints named in the config file (`[endpoint.NAME]`), in order; the first is the
    /// reference. `--endpoint`, `--model` and `--api-key-env` override what the file says.
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// The config file of named endpoints (default: coherence.toml in the working directory,
    /// when there is one).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
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
    /// Seconds allowed per request attempt, including reading the body (1 to 86400).
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=bounds::MAX_TIMEOUT_SECS))]
    pub timeout: u64,
    /// Retries after a connection error, timeout, 429 or 5xx.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub retries: u32,
    /// First backoff between retries in milliseconds; doubles each retry (with jitter), capped at 30 s.
    /// A server's Retry-After takes precedence (0 to 30000).
    #[arg(long, value_name = "MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(0..=bounds::MAX_BACKOFF_MS))]
    pub backoff_ms: u64,
    /// Largest response body accepted; a larger one is recorded as a failure. Within it, a reply
    /// whose text, reasoning or one tool call's arguments passes 1 MiB is recorded cut to 1 MiB
    /// (with the body's first 64 KiB) as "reply too long", scored as no answer.
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024, value_parser = RangedU64ValueParser::<usize>::new().range(1024..))]
    pub max_response_bytes: usize,
    /// At most this many requests per second to each endpoint, retries included (default: no
    /// limit; from 0.001 to 1000); for an endpoint that serves production traffic.
    #[arg(long, value_name = "RPS", value_parser = bounds::requests_per_second)]
    pub max_rps: Option<f64>,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    #[command(flatten)]
    pub catalogue: CatalogueArgs,
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Only these prompt ids (comma-separated or repeated).
    #[arg(long, value_name = "ID,ID", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Only these categories (comma-separated or repeated).
    #[arg(long, value_name = "CAT,CAT", value_delimiter = ',')]
    pub category: Vec<String>,
    /// Token budget for every prompt (default: the prompt's own `max_tokens`, else 1024).
    /// On --resume: the run keeps the budget it was started with unless this is given.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// Independent requests per prompt and endpoint [default: 1 for compare, 5 for determinism].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub repeats: Option<u32>,
    /// Order of repeats: `interleaved` sends repeat r of every prompt before repeat r+1 of any,
    /// so no repeat inherits the previous one's prompt cache; `back-to-back` sends a prompt's
    /// repeats one after the other.
    #[arg(long, value_enum, value_name = "ORDER", default_value_t = RepeatOrderArg::Interleaved)]
    pub repeat_order: RepeatOrderArg,
    /// Requests in flight per endpoint, 1 to 1024 [default: the config file's `concurrency` of
    /// the chosen endpoints (the smallest, when they differ), else 4].
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..=crate::engine::MAX_CONCURRENCY as u64))]
    pub concurrency: Option<usize>,
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
    /// Send the generated suite in rounds (it is added when not chosen) and stop as soon as every
    /// pair's anytime-valid verdict is `equivalent` or `different` against --margin, or at
    /// --max-items (then `undecided`). On by default for a compare of the built-in catalogue with
    /// no --suite, --items, --only or --category (`--suite core` sends the 100 prompts alone).
    #[arg(long)]
    pub until_decided: bool,
    /// The reference's accuracy calibration aims each generated family's level at (with
    /// `--difficulty auto`): 0.8 or 80% [default: 80%; on --resume, the run's own].
    #[arg(long, value_name = "SHARE", value_parser = parse_target_accuracy)]
    pub target_accuracy: Option<f64>,
    /// With --until-decided (given or by default): generated items to send at most, in all
    /// [default: 2000].
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_ITEMS as u64))]
    pub max_items: Option<usize>,
    /// With --until-decided (given or by default): generated items added per round (the first
    /// round sends this many unless --items says otherwise) [default: 200].
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_ITEMS as u64))]
    pub round_items: Option<usize>,
    /// Request token logprobs so divergences are located by token index, and teacher-force
    /// the reference's completions on every endpoint (results.json `token_agreement`). Without
    /// it, decode logprobs are still requested where a probe shows every endpoint returns them
    /// and gives the same greedy text with and without them (the identity axis reads them).
    #[arg(long, overrides_with = "no_logprobs")]
    pub logprobs: bool,
    /// Never request logprobs (the identity axis then compares greedy texts alone). Of
    /// --logprobs and --no-logprobs, the last given wins.
    #[arg(long, overrides_with = "logprobs")]
    pub no_logprobs: bool,
    /// The A-vs-A control: the reference answers prompts a second time, interleaved with the
    /// run's other requests, so identity is judged against its own nondeterminism. `auto`
    /// starts with the first 30 prompts and answers more after each look until identity is
    /// `identical` or `perturbed`, or --control-max is reached; N fixes it at the first N
    /// prompts; 0 turns it off (identity is then undecided unless the artifact differs). With
    /// --repeats 2 or more every prompt has one already.
    #[arg(long, value_name = "auto|N", default_value = "auto", value_parser = parse_control)]
    pub control: ControlArg,
    /// With --control auto: the most prompts the reference answers a second time (never more
    /// than the run's prompts).
    #[arg(long, value_name = "N", default_value_t = 300, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub control_max: usize,
    /// With --logprobs: the model's chat template, to render chat prompts for teacher forcing:
    /// a GGUF model file, a tokenizer_config.json, or a Jinja file (kept in the run folder for
    /// --resume).
    #[arg(long, value_name = "FILE")]
    pub chat_template: Option<PathBuf>,
    /// Run folder to create (default: runs/<UTC timestamp>-<names>/).
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Continue the run in DIR: send only what is missing (or what the flags add).
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// A saved run whose reference endpoint's answers (every repeat, every suite it ran) play the
    /// reference: nothing is sent to it, only --endpoint's are sent, with the baseline's
    /// sampling, budget rule, suites, items, seed and repeats. Repeatable: runs of the same
    /// deployment pool their repeats into the reference's noise floor.
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["resume", "repeats", "max_tokens", "params", "suites", "items", "seed", "only", "category", "until_decided", "logprobs"])]
    pub baseline: Vec<PathBuf>,
    /// With --baseline: compare even when the catalogue (or the generated items) differ from
    /// the baseline's, on the prompts both have (the results' warnings say so).
    #[arg(long, requires = "baseline")]
    pub allow_catalogue_change: bool,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub load: LoadArgs,
    /// Send nothing, not even GET /models: print the plan (requests per endpoint and in all, the
    /// token ceiling, a time estimate and, with --resume, what is missing).
    #[arg(long)]
    pub dry_run: bool,
    /// Tokens per second of one request that the --dry-run time estimate assumes.
    #[arg(long, value_name = "TOK/S", default_value_t = 30.0, value_parser = parse_tps)]
    pub assume_tps: f64,
    /// Prompt tokens per second of one request that the --dry-run prompt-processing estimate
    /// assumes (long prompts, `--suite long`, dominate it).
    #[arg(long, value_name = "TOK/S", default_value_t = 1000.0, value_parser = parse_tps)]
    pub assume_prefill_tps: f64,
    /// Print results.json to stdout instead of the summary (with --dry-run, the plan as JSON).
    #[arg(long)]
    pub json: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The probe phases of `coherence determinism` (batch invariance, cache state, samples); each
/// runs after the repeats and writes load.jsonl.
#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    /// determinism only: send every prompt --repeats times alone and amid K concurrent long
    /// filler requests to the same endpoint, for each K (0, alone, is always included), and say
    /// at which load the answers change; when they do, the default gate exits 1
    /// (changes_at_load>0). E.g. 0,4,16.
    #[arg(long, value_name = "K,K", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=256))]
    pub under_load: Vec<u32>,
    /// determinism only: send every prompt --repeats times cold (after an unrelated prompt),
    /// warm (immediately repeated) and behind a long shared preamble (cold, then cached), and
    /// say whether the answer depends on the prompt cache; when it does, the default gate exits
    /// 1 (cache_dependent>0).
    #[arg(long)]
    pub cache_states: bool,
    /// determinism only: N completions of the one prompt named by --only, --concurrency in
    /// flight, reported as unique completions, identical prefix and divergence points.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub samples: Option<u32>,
    /// Token budget of each --under-load filler request.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    pub filler_tokens: u32,
}

/// `--control`: grown until decided, or a fixed number of prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlArg {
    Auto,
    Fixed(usize),
}

fn parse_control(raw: &str) -> Result<ControlArg, String> {
    match raw.trim() {
        "auto" => Ok(ControlArg::Auto),
        n => n.parse().map(ControlArg::Fixed).map_err(|_| {
            format!("`{raw}` is not a control: give `auto` or a number of prompts, e.g. 60")
        }),
    }
}

fn parse_tps(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "`{raw}` is not a rate: give tokens per second above 0, e.g. 30"
        )),
    }
}

/// `--repeat-order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RepeatOrderArg {
    Interleaved,
    BackToBack,
}

const SELFTEST_HELP: &str = "\
Runs two comparisons into DIR/negative and DIR/positive: the endpoint against itself with
identical sampling, and against itself with temperature raised for the second side only (the
manifest records that override). Writes DIR/selftest.json.";

const SELFTEST_EXITS: &[(Exit, &str)] = &[
    (
        Exit::Success,
        "the negative control did not read `different`",
    ),
    (
        Exit::GateFailed,
        "it did: the endpoint disagrees with itself beyond the margin, so verdicts against it \
         cannot be trusted",
    ),
];

const SOAK_HELP: &str =
    "Writes soak.jsonl (one flushed line per request), soak-run.json, soak.json and soak.md.";

const SOAK_EXITS: &[(Exit, &str)] = &[
    (Exit::Success, "clean"),
    (
        Exit::GateFailed,
        "errors, soft-empty or degenerate replies (with --sanity also wrong graded answers)",
    ),
    (
        Exit::Incomplete,
        "interrupted or killed (re-render with --report DIR), or nothing was sent",
    ),
];

const CONTRACT_EXITS: &[(Exit, &str)] = &[
    (Exit::Success, "no probe failed on any endpoint"),
    (Exit::GateFailed, "a probe failed on an endpoint"),
    (
        Exit::Incomplete,
        "an endpoint could not be probed: not reached, no model listed, or every probe request \
         refused (a 401 on every one: check the API key)",
    ),
];

const SMOKE_EXITS: &[(Exit, &str)] = &[
    (Exit::Success, "every endpoint passed"),
    (
        Exit::GateFailed,
        "a reply was not exactly `COHERENCE SMOKE OK`",
    ),
    (Exit::Incomplete, "an endpoint could not be reached"),
];

const HISTORY_EXITS: &[(Exit, &str)] = &[
    (
        Exit::Success,
        "the checks were printed, or the page written",
    ),
    (
        Exit::Usage,
        "no history database at the path (`coherence watch` creates it), or the file is not a \
         coherence history (the message names it)",
    ),
    (Exit::Incomplete, "the page or stdout could not be written"),
];

/// A command's help text followed by its exit-code table.
fn help_with_exits(text: &str, exits: &[(Exit, &str)]) -> String {
    format!("{}\n\n{}", text.trim_end(), exit_codes_help(exits))
}

/// `coherence selftest`: the compare flags, one endpoint, and the perturbation.
#[derive(Debug, Clone, Args)]
pub struct SelftestArgs {
    #[command(flatten)]
    pub run: CompareArgs,
    /// Temperature of the perturbed side of the positive control.
    #[arg(long, value_name = "T", default_value_t = 1.0)]
    pub hot_temperature: f64,
}

#[derive(Debug, Clone, Args)]
pub struct GateArgs {
    /// Conditions that make the exit code 1, comma-separated METRIC OP NUMBER; any one holding fails
    /// the gate. Metrics: same, diff, review, fail, nondeterministic, deployment, p, flip,
    /// answer, format, no_answer, different, inconclusive, parity, changes_at_load and
    /// cache_dependent (endpoints whose under-load or cache-states verdict says so; they never
    /// hold on a run without that phase), text_changes_at_load (endpoints whose completion text changed under
    /// load, answers changed or not), not_same_model, same_model_undecided, families_different,
    /// tool_f1 and schema_invalid (tool items; e.g. tool_f1<0.98), long_different (pairs whose
    /// long-context needles differ), identity_perturbed, identity_different and
    /// identity_undecided (pairs with that identity verdict).
    /// [default: different>0,fail>0 for compare;
    /// nondeterministic>0,fail>0,changes_at_load>0,cache_dependent>0 for determinism]
    #[arg(long, value_name = "EXPR", value_parser = Gate::from_flag)]
    pub fail_on: Option<Gate>,
    /// Equivalence margin of the quality verdict, in accuracy points: two endpoints are
    /// `equivalent` when the 90% interval of their accuracy difference lies inside ±POINTS
    /// [default: 5, or the run's own]
    #[arg(long, value_name = "POINTS", value_parser = parse_margin)]
    pub margin: Option<f64>,
}

fn parse_target_accuracy(raw: &str) -> Result<f64, String> {
    let text = raw.trim();
    let (number, percent) = match text.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (text, false),
    };
    let value = number
        .parse::<f64>()
        .ok()
        .map(|v| if percent || v > 1.0 { v / 100.0 } else { v })
        .filter(|v| (0.05..=0.95).contains(v));
    value.ok_or_else(|| {
        format!(
            "`{raw}` is not a target accuracy: give a share between 5% and 95%, e.g. 0.8 or 80%"
        )
    })
}

fn parse_margin(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v),
        _ => Err(format!(
            "`{raw}` is not a margin: give accuracy points between 0 and 100, e.g. 5"
        )),
    }
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
    /// Print results.json to stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The run folder.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    /// Print results.json to stdout instead of the summary.
    #[arg(long, conflicts_with = "issue")]
    pub json: bool,
    /// Print a Markdown bug report for an inference engine's tracker instead: the prompt's answers
    /// side by side, served models, fingerprints, server headers, sampling, and a `curl` per
    /// endpoint that sends the exact request again. PROMPT_ID, or `all-different` for every
    /// prompt whose verdict is `different`.
    #[arg(long, value_name = "PROMPT_ID")]
    pub issue: Option<String>,
}

const WATCH_HELP: &str = "\
Each check is a comparison of the probe against the baseline, written as a run folder beside the
history (DB_DIR/checks/NAME/TIME, with report.html); the baseline's reference is replayed, only the
watched endpoint is sent to. Identity is decided against the baseline's own repeat at --alpha per
check (an anytime-valid test by betting: an unchanged deployment is flagged on at most that share of
checks). Make the baseline with `coherence determinism --repeats 2` or `coherence compare` (its default
--control answers prompts twice); decode logprobs are requested where a probe finds them harmless,
and a watch warns when its baseline has none but the endpoint offers them.
Example, for cron: coherence watch prod --baseline runs/prod-baseline --once
A fleet: each [endpoint.NAME] of coherence.toml with `baseline = \"DIR\"` (relative to the file),
checked side by side, the metrics for Prometheus written after each round:
  coherence watch --all --once --metrics-file /var/lib/node_exporter/textfile/coherence.prom";

const WATCH_EXITS: &[(Exit, &str)] = &[
    (
        Exit::GateFailed,
        "a check was flagged: identity perturbed or different, or behaviour different (with --all or several rounds: any check)",
    ),
    (
        Exit::Usage,
        "a bad flag or name, an unreadable baseline, a baseline without a control, a config file problem (or --all with no endpoint naming a baseline), or a history another watch is writing",
    ),
    (
        Exit::Incomplete,
        "a check's requests failed after retries (nothing decided), it was interrupted, or the history or --metrics-file cannot be written",
    ),
];

/// `coherence watch NAME --baseline RUN_DIR`.
#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// The watch's name: the history keeps its checks under it (letters, digits, `.`, `_`, `-`).
    /// When the config file has `[endpoint.NAME]`, its URL, model, key variable, concurrency and
    /// baseline are the watch's (the flags override them).
    #[arg(value_name = "NAME", required_unless_present = "all")]
    pub name: Option<String>,
    /// Watch every `[endpoint.NAME]` of the config file that names a `baseline`, in one process
    /// on one schedule: each round checks them side by side (one check per endpoint at a time,
    /// at most --total-concurrency requests in flight); the exit code is the worst check's.
    #[arg(long, conflicts_with_all = ["name", "baseline", "endpoint", "model", "api_key_env"])]
    pub all: bool,
    /// The config file of named endpoints (default: coherence.toml in the working directory,
    /// when there is one).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The pinned baseline: a compare run folder of the deployment as it should be; its
    /// reference endpoint is the one compared with (default: `baseline` of [endpoint.NAME]).
    #[arg(long, value_name = "RUN_DIR")]
    pub baseline: Option<PathBuf>,
    /// The base URL to check (default: [endpoint.NAME]'s, else the baseline reference's).
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// The model to request (default: [endpoint.NAME]'s, else the baseline's).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The environment variable holding the endpoint's API key (default: [endpoint.NAME]'s,
    /// else the baseline's, else OPENAI_API_KEY when set). The key is never stored.
    #[arg(long, value_name = "ENVVAR")]
    pub api_key_env: Option<String>,
    /// One check, then exit (for cron and CI).
    #[arg(long, conflicts_with = "every")]
    pub once: bool,
    /// Time between the starts of checks, e.g. 30m or 6h, from 100ms to 1y (default 1h).
    #[arg(long, value_name = "DURATION", value_parser = bounds::every)]
    pub every: Option<std::time::Duration>,
    /// Stop after this many checks (default: until Ctrl-C).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub checks: Option<u32>,
    /// Prompts per check, at most: the requests one check sends.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = RangedU64ValueParser::<usize>::new().range(5..=2000))]
    pub probe: usize,
    /// The identity test's level per check: an unchanged deployment is flagged on at most this
    /// share of checks.
    #[arg(long, value_name = "A", default_value_t = 0.01, value_parser = parse_alpha)]
    pub alpha: f64,
    /// The history database (default: $COHERENCE_DATA_DIR/history.sqlite, else
    /// $XDG_DATA_HOME/coherence/history.sqlite, else ~/.local/share/coherence/history.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Keep the run folders of the newest N unchanged checks of this watch and remove older
    /// ones (a flagged or incomplete check keeps its folder; the history keeps every check).
    /// Default: keep every run folder.
    #[arg(long, value_name = "N")]
    pub keep_runs: Option<usize>,
    /// Requests in flight at once to each watched endpoint [default: [endpoint.NAME]'s
    /// `concurrency`, else 2].
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..=crate::engine::MAX_CONCURRENCY as u64))]
    pub concurrency: Option<usize>,
    /// Requests in flight at once over every watch of a round (--all): checks wait for room.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = RangedU64ValueParser::<usize>::new().range(1..=crate::engine::MAX_CONCURRENCY as u64))]
    pub total_concurrency: usize,
    /// After every round, write the latest check of every watch in the history to PATH in the
    /// Prometheus text format (for node_exporter's textfile collector), atomically: written
    /// beside it, then renamed.
    #[arg(long, value_name = "PATH")]
    pub metrics_file: Option<PathBuf>,
    /// After a check that is flagged or incomplete, run CMD through `sh -c` with the check as
    /// one JSON object on its stdin and COHERENCE_WATCH, COHERENCE_STATUS, COHERENCE_RUN_DIR and
    /// COHERENCE_REPORT set (e.g. a curl to a webhook). Its output goes to stderr; a failure or
    /// a run over 60 s is warned about, never fatal.
    #[arg(long, value_name = "CMD")]
    pub on_alert: Option<String>,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Print each check as one JSON object per line.
    #[arg(long)]
    pub json: bool,
    /// Say nothing on stderr about the probe and the schedule.
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_alpha(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 0.5 => Ok(v),
        _ => Err(format!(
            "`{raw}` is not a level: give a share between 0 and 0.5, e.g. 0.01"
        )),
    }
}

const DIFF_HELP: &str = "\
Writes a normal run folder (manifest.json, records.jsonl, results.json, reports): RUN_A's
endpoint is the reference. Both runs must have the same catalogue hash and generated items
(generator version and seed); --allow-catalogue-change compares the prompts both have instead.";

const DIFF_EXITS: &[(Exit, &str)] = &[
    (
        Exit::Usage,
        "a bad flag, an unreadable run folder, or runs of different catalogues",
    ),
    (
        Exit::Incomplete,
        "an answer is missing or failed in either run, or the folder cannot be written",
    ),
];

/// `coherence diff RUN_A RUN_B`.
#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The saved run whose endpoint is the reference.
    #[arg(value_name = "RUN_A")]
    pub run_a: PathBuf,
    /// The saved run compared with it.
    #[arg(value_name = "RUN_B")]
    pub run_b: PathBuf,
    /// The endpoint of RUN_A to compare (needed when RUN_A has several).
    #[arg(long = "a", value_name = "NAME")]
    pub a: Option<String>,
    /// The endpoint of RUN_B to compare (needed when RUN_B has several).
    #[arg(long = "b", value_name = "NAME")]
    pub b: Option<String>,
    /// Compare runs whose catalogue hash or generated items differ, on the prompts both have
    /// (the results' warnings say so).
    #[arg(long)]
    pub allow_catalogue_change: bool,
    /// Catalogue to score with (default: RUN_A's own catalogue folder).
    #[arg(long, value_name = "DIR")]
    pub catalogue: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Run folder to create (default: runs/diff-<UTC timestamp>-<a>-vs-<b>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print results.json to stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
}

/// `coherence history`: which checks, from which database, printed how.
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// Only the checks of this watch (`coherence watch NAME`).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// The history database. Default: $COHERENCE_DATA_DIR/history.sqlite, else
    /// $XDG_DATA_HOME/coherence/history.sqlite, else ~/.local/share/coherence/history.sqlite.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print the checks as a JSON array (each with its id) instead of the table.
    #[arg(long, conflicts_with = "html")]
    pub json: bool,
    /// Write the trend page to FILE (one self-contained HTML file: a timeline per watch and a
    /// table linking each check's report.html) and print its path.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub catalogue: CatalogueArgs,
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Print the prompts as a JSON array instead of the table.
    #[arg(long)]
    pub json: bool,
    /// List the calibration items instead (generated suite): per family and level, the first
    /// --items of the stream calibration draws from (never measured items).
    #[arg(long)]
    pub calibration: bool,
}

const BENCH_HELP: &str = "\
Writes bench.json, bench.md and bench.jsonl (one line per request) into the run folder. With
several --endpoint NAME=URL, each is benched in turn (never at once) into DIR/NAME/, and
DIR/bench.md sets them side by side with the ratio of each metric to the first endpoint;
--json then prints {\"endpoints\": [one bench.json per endpoint]}.
tok/s counts the tokens the server reports (usage.completion_tokens) over wall time; add
--param ignore_eos=true (vLLM, llama.cpp) to keep every run at the full --max-tokens.

--baseline accepts an earlier bench.json, or a claims file:
  {\"source\": \"guide\", \"claims\": {\"decode.peak_tps\": 84.3,
    \"concurrency.c6.aggregate_tps\": 197.3, \"prefill.8k.prompt_tps\": 1513,
    \"spec_decode.acceptance\": 0.602}}
  keys: decode.{peak_tps,mean_tps,cold_tps}, concurrency.c<N>.{aggregate_tps,per_stream_tps,
        cold_aggregate_tps}, prefill.<SIZE>.{prompt_tps,ttft_ms}, spec_decode.acceptance

Ctrl-C or SIGTERM stops sending and writes both reports from what was measured
(status \"interrupted\").";

const BENCH_EXITS: &[(Exit, &str)] = &[
    (Exit::Success, "every request measured"),
    (Exit::GateFailed, "not used by bench"),
    (
        Exit::Incomplete,
        "some requests failed, an endpoint could not be reached, a report could not be written, \
         or the bench was interrupted (the rest is reported)",
    ),
];

/// `coherence bench`. All requests are `stream: false`: tok/s is the server's
/// `usage.completion_tokens` over wall time (streamed deltas count speculative steps, not tokens).
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    /// Warm-up decode requests before measuring (0 disables all warm-up). With warm-up on, one
    /// round per concurrency level is also sent first; the cold numbers are reported, not hidden.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub warmup: u32,
    /// Measured decode requests, one at a time (0 skips the decode phase).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub runs: u32,
    /// Tokens to generate per decode and concurrency request.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: u32,
    /// Concurrency levels to sweep, comma-separated (each 1 to 1024), or `none`.
    // A `None` item is a `none`; commands/bench_plan.rs turns the items into the levels.
    #[arg(long, value_name = "N,N", default_value = "1,2,4,6", value_delimiter = ',', value_parser = level_or_none)]
    pub concurrency: Vec<Option<u32>>,
    /// Measured rounds per concurrency level.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Prompt sizes for time to first token, comma-separated (`k` = 1024), or `none`.
    // A `None` item is a `none`; commands/bench_plan.rs turns the items into the sizes.
    #[arg(long, value_name = "SIZES", default_value = "8k,32k,100k", value_delimiter = ',', value_parser = size_or_none)]
    pub prefill: Vec<Option<u64>>,
    /// Requests per prefill size, each with a unique prompt so a prefix cache cannot answer it.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub prefill_runs: u32,
    /// Prometheus metrics URL (default: the server root of the endpoint + `/metrics`).
    #[arg(long, value_name = "URL", value_parser = http_url)]
    pub metrics_url: Option<String>,
    /// Compare with published claims or an earlier bench.json (see `coherence bench --help`).
    #[arg(long, value_name = "FILE.json")]
    pub baseline: Option<PathBuf>,
    /// KEY=VALUE: an extra request field (VALUE is JSON when it parses), e.g. ignore_eos=true.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Run folder to create (default: runs/bench-<UTC timestamp>-<name>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print bench.json to stdout instead of the Markdown summary.
    #[arg(long)]
    pub json: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `coherence soak`.
#[derive(Debug, Clone, Args)]
pub struct SoakArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    /// How long to send traffic, e.g. 40m, 90s, 1h30m (a bare number is seconds). Requests in
    /// flight at the end are awaited. From 1s to 30 days.
    #[arg(long, value_name = "DURATION", default_value = "40m", value_parser = bounds::soak_duration)]
    pub duration: Duration,
    /// Closed loop: workers, each with one request in flight (1 to 1024).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=crate::engine::MAX_CONCURRENCY as i64))]
    pub concurrency: u32,
    /// Open loop instead of --concurrency: requests arrive at R per second whether or not earlier
    /// ones were answered. A list (1,2,4,8) runs each rate for --duration in turn and stops at
    /// the first the server cannot keep up with (achieved < 90% of offered, p50 latency over 3x
    /// the first rate's, or the --max-in-flight cap reached).
    #[arg(long, value_name = "R,R", value_delimiter = ',', value_parser = arrival_rate, conflicts_with = "concurrency")]
    pub rate: Vec<f64>,
    /// With --rate: the shape of the gamma-distributed gaps between arrivals, as in vLLM's
    /// benchmark_serving (1 = Poisson; below 1 burstier, above 1 more even). Mean gap 1/R.
    #[arg(long, value_name = "F", default_value_t = 1.0, value_parser = positive_rate, requires = "rate")]
    pub burstiness: f64,
    /// With --rate: the most requests outstanding at once; an arrival beyond it waits for a slot
    /// (counted as delayed) and one still waiting when the rate's time is up is dropped (counted).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = RangedU64ValueParser::<usize>::new().range(1..=crate::engine::MAX_CONCURRENCY as u64), requires = "rate")]
    pub max_in_flight: usize,
    /// Goodput objective: end-to-end latency of a request, in milliseconds.
    #[arg(long, value_name = "MS", value_parser = positive_rate)]
    pub slo_e2e_ms: Option<f64>,
    /// Goodput objective: latency per output token, in milliseconds, without streaming: fitted as
    /// e2e ≈ a + b·tokens from the shortest and longest budgets, a request's is (e2e − a)/tokens.
    #[arg(long, value_name = "MS", value_parser = positive_rate)]
    pub slo_tpot_ms: Option<f64>,
    /// Mix graded catalogue prompts into the traffic (temperature 0, each prompt's own budget)
    /// and report accuracy and answer stability per time window and per load level. Prompts whose
    /// scorer runs code (JS) and open-ended ones are left out.
    #[arg(long)]
    pub graded: bool,
    /// With --graded or --sanity: the share of requests that are graded prompts (default 0.25).
    #[arg(long, value_name = "F", value_parser = share)]
    pub graded_share: Option<f64>,
    /// With --graded or --sanity: the catalogue folder (default: prompts/ here).
    #[arg(long, value_name = "DIR")]
    pub catalogue: Option<PathBuf>,
    /// Agent-sanity sweep: closed loop at each of --sanity-levels in turn, each for --duration,
    /// graded; fails (exit 1) on any bad output at any level: an error, an empty or degenerate
    /// reply, or a wrong answer to a graded prompt.
    #[arg(long, conflicts_with_all = ["concurrency", "rate"])]
    pub sanity: bool,
    /// With --sanity: the concurrency levels, comma-separated (each 1 to 1024).
    #[arg(long, value_name = "N,N", default_value = "1,2,4,6", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=crate::engine::MAX_CONCURRENCY as i64), requires = "sanity")]
    pub sanity_levels: Vec<u32>,
    /// Traffic kinds to mix, comma-separated: tool, code, json, reasoning, long, chat.
    #[arg(
        long,
        value_name = "KIND,KIND",
        default_value = "tool,code,json,reasoning,long,chat",
        value_delimiter = ',',
        value_parser = traffic_kind
    )]
    pub kinds: Vec<Kind>,
    /// Approximate prompt size of the `long` kind (`k` = 1024).
    #[arg(long, value_name = "SIZE", default_value = "4k", value_parser = token_size)]
    pub long_context: u64,
    /// KEY=VALUE: an extra request field (VALUE is JSON when it parses).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Run folder to create (default: runs/soak-<UTC timestamp>-<name>/).
    #[arg(long, value_name = "DIR", conflicts_with = "report")]
    pub out: Option<PathBuf>,
    /// Send nothing: re-render the report of the soak in DIR from its soak.jsonl (works for an
    /// interrupted or killed soak).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Print soak.json to stdout instead of the Markdown summary.
    #[arg(long)]
    pub json: bool,
    /// No progress line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `coherence smoke`.
#[derive(Debug, Clone, Args)]
pub struct SmokeArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    /// Budget for the exact-reply test; generous because reasoning endpoints spend it first.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: u32,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `coherence contract`.
#[derive(Debug, Clone, Args)]
pub struct ContractArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    #[command(flatten)]
    pub client: ClientArgs,
    /// The most time every probe of one endpoint may take together, e.g. 2m (1s to 1 day): an
    /// endpoint whose replies never end is reported as not probed within it, not waited on.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = bounds::deadline)]
    pub deadline: Duration,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

// Value parsers of the bench, soak and smoke flags: clap reports their errors with the flag.

/// One `--concurrency` item: a level from 1 to the engine's cap, or `none` (None) for no sweep.
fn level_or_none(raw: &str) -> Result<Option<u32>, String> {
    if is_none(raw) {
        return Ok(None);
    }
    match raw.trim().parse::<u32>() {
        Ok(n) if (1..=crate::engine::MAX_CONCURRENCY as u32).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "expected a level from 1 to {}, or `none`",
            crate::engine::MAX_CONCURRENCY
        )),
    }
}

/// One `--prefill` item: a token size, or `none` (None) for no prefill phase.
fn size_or_none(raw: &str) -> Result<Option<u64>, String> {
    if is_none(raw) {
        return Ok(None);
    }
    token_size(raw).map(Some)
}

fn is_none(raw: &str) -> bool {
    let raw = raw.trim();
    raw.is_empty() || raw.eq_ignore_ascii_case("none")
}

/// A token count: `512`, `8k` (8 × 1024) or `1m` (1024 × 1024).
fn token_size(raw: &str) -> Result<u64, String> {
    token_count(raw).ok_or_else(|| "expected a token count like 512, 8k or 1m".into())
}

/// A share in (0, 1].
fn share(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 1.0 => Ok(x),
        _ => Err("expected a share above 0 and at most 1, e.g. 0.25".into()),
    }
}

/// A positive finite number (a rate, a burstiness).
fn positive_rate(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err("expected a positive number".into()),
    }
}

/// An open-loop arrival rate: positive, at most `engine::MAX_RATE` requests per second.
fn arrival_rate(raw: &str) -> Result<f64, String> {
    let max = crate::engine::MAX_RATE;
    match positive_rate(raw)? {
        r if r <= max => Ok(r),
        _ => Err(format!("at most {max} requests per second")),
    }
}

fn traffic_kind(raw: &str) -> Result<Kind, String> {
    Kind::parse(raw.trim()).ok_or_else(|| format!("expected one of {}", Kind::names()))
}

/// Why `raw` cannot be a URL as typed, before parsing: a space or control character, which a URL
/// parser would quietly percent-encode or drop (a space in it is a quoting mistake).
pub fn url_blemish(raw: &str) -> Option<&'static str> {
    raw.chars()
        .any(|c| c.is_whitespace() || c.is_control())
        .then_some("the URL holds a space or a control character (percent-encode one that belongs in it, e.g. %20)")
}

/// An `http://` or `https://` URL.
fn http_url(raw: &str) -> Result<String, String> {
    if let Some(why) = url_blemish(raw) {
        return Err(why.into());
    }
    let parsed = reqwest::Url::parse(raw).map_err(|e| format!("invalid URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("the URL must start with http:// or https://".into());
    }
    Ok(raw.to_string())
}

#[cfg(test)]
mod bench_flag_tests {
    use clap::Parser;

    use super::*;

    fn bench(flags: &[&str]) -> Result<BenchArgs, String> {
        let argv = ["coherence", "bench", "--endpoint", "a=http://x/v1"];
        match Cli::try_parse_from(argv.iter().chain(flags)) {
            Ok(Cli {
                command: Command::Bench(args),
            }) => Ok(*args),
            Ok(_) => unreachable!("a bench command line"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn lists_accept_none_and_errors_name_the_flag() {
        let args = bench(&["--concurrency", "1,2,4,6", "--prefill", "none"]).unwrap();
        assert_eq!(args.concurrency, vec![Some(1), Some(2), Some(4), Some(6)]);
        assert_eq!(args.prefill, vec![None]);
        let args = bench(&[]).unwrap();
        assert_eq!(args.prefill, vec![Some(8192), Some(32_768), Some(102_400)]);
        let err = bench(&["--concurrency", "1,0"]).unwrap_err();
        assert!(
            err.contains("--concurrency") && err.contains("'0'"),
            "{err}"
        );
        // Capped as every other command's concurrency is (soak's levels too).
        assert!(bench(&["--concurrency", "1024"]).is_ok());
        let soak = Cli::try_parse_from([
            "coherence",
            "soak",
            "--endpoint",
            "a=http://x/v1",
            "--sanity",
            "--sanity-levels",
            "1,1000000",
        ])
        .unwrap_err()
        .to_string();
        assert!(soak.contains("--sanity-levels"), "{soak}");
        let err = bench(&["--concurrency", "1,1000000"]).unwrap_err();
        assert!(
            err.contains("--concurrency") && err.contains("from 1 to 1024"),
            "{err}"
        );
        let err = bench(&["--prefill", "8q"]).unwrap_err();
        assert!(err.contains("--prefill"), "{err}");
        let err = bench(&["--rounds", "0"]).unwrap_err();
        assert!(err.contains("--rounds"), "{err}");
        let err = bench(&["--metrics-url", "ftp://x/metrics"]).unwrap_err();
        assert!(err.contains("--metrics-url"), "{err}");
    }
}

const LOGPROBS_HELP: &str = "\
Every endpoint re-scores the same passages with prompt logprobs (/v1/completions with echo, or
vLLM's prompt_logprobs; detected per endpoint). The first endpoint is the reference. KL is
KL(reference || other) in nats over the reference's top-k plus one tail bucket. Each endpoint's
prompt-logprob offset is checked against its own decode logprobs first: llama-cpp-python's echo
is one position off and is compensated; an offset that cannot be established is refused.
llama-cpp-python needs --logits_all true.";

const LOGPROBS_EXITS: &[(Exit, &str)] = &[
    (Exit::Success, "measured"),
    (Exit::GateFailed, "not used by logprobs"),
    (
        Exit::Incomplete,
        "an endpoint was unreachable or supports no prompt logprobs, a request failed (the rest \
         is reported), or a report could not be written",
    ),
];

/// `coherence logprobs`.
#[derive(Debug, Clone, Args)]
pub struct LogprobsArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    /// Passages to score: TOML (`[[passage]]` with id, category, text) or `.jsonl`
    /// (default: the corpus shipped with coherence).
    #[arg(long, value_name = "FILE")]
    pub corpus: Option<PathBuf>,
    /// Only the first N passages.
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub limit: Option<usize>,
    /// Logprobs listed per position (vLLM allows 20 by default, OpenAI 5).
    #[arg(long, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub top_k: u32,
    /// Tokens generated per self-consistency prompt.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=512))]
    pub self_check_tokens: u32,
    /// Requests in flight per endpoint.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub concurrency: usize,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Write logprobs.json and logprobs.md into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the JSON to stdout instead of the Markdown report.
    #[arg(long)]
    pub json: bool,
}

const PROJECT_HELP: &str = "\
Tasks live in prompts/projects/<id>/ (task.toml, spec.md, playthrough.js), beside the catalogue
and not counted in it. Writes records.jsonl (one flushed line per answer; --resume DIR sends only
what is missing), project.json (settings), results.json and report.md into the run folder.";

const PROJECT_EXITS: &[(Exit, &str)] = &[
    (Exit::Success, "every answer received and playable"),
    (Exit::GateFailed, "an answer is not playable"),
    (Exit::Usage, "usage error (bad flag, broken task file)"),
];

/// `coherence project`.
#[derive(Debug, Clone, Args)]
pub struct ProjectArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    /// Only these task ids (comma-separated or repeated) [default: every task].
    #[arg(long = "task", value_name = "ID,ID", value_delimiter = ',')]
    pub tasks: Vec<String>,
    /// Folder of project tasks (default: `prompts/projects`).
    #[arg(long, value_name = "DIR")]
    pub projects: Option<PathBuf>,
    /// Token budget per answer (default: the task's own `max_tokens`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// KEY=VALUE: an extra request field sent identically to every endpoint (VALUE is JSON when
    /// it parses). Repeatable.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Run folder to create (default: runs/project-<UTC timestamp>-<names>/).
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Continue the project run in DIR: send only the answers still missing, then re-evaluate.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

const DISTRIBUTION_HELP: &str = "\
The prompt set is built in: 8 graded prompts of the core catalogue (compared on the scored
answer) and 8 short open prompts (compared as text). Writes distribution.json (the manifest:
endpoints, sampling parameters, test), records.jsonl (one flushed line per sample; --resume DIR
sends only what is missing), results.json, report.md and report.html into the run folder.";

const DISTRIBUTION_EXITS: &[(Exit, &str)] = &[
    (Exit::Success, "every sample received and the gate passed"),
    (
        Exit::GateFailed,
        "the gate failed (by default: the samples read different)",
    ),
];

/// `coherence distribution`.
#[derive(Debug, Clone, Args)]
pub struct DistributionArgs {
    #[command(flatten)]
    pub endpoints: EndpointArgs,
    /// Sampling temperature sent to both endpoints (required, except on --resume).
    #[arg(long, value_name = "T", value_parser = parse_temperature)]
    pub temperature: Option<f64>,
    /// top_p sent to both endpoints (default: not sent).
    #[arg(long, value_name = "P", value_parser = parse_top_p)]
    pub top_p: Option<f64>,
    /// top_k sent to both endpoints (default: not sent).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub top_k: Option<u32>,
    /// Samples per prompt and endpoint [default: 10, or the run's own on --resume; a larger N
    /// on --resume adds samples].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(i64::from(MIN_SAMPLES)..=i64::from(MAX_SAMPLES)))]
    pub samples: Option<u32>,
    /// Token budget for every prompt (default: the prompt's own).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// KEY=VALUE: an extra request field sent identically to both endpoints (VALUE is JSON when
    /// it parses). Repeatable.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Label permutations of the test [default: 1000].
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(i64::from(MIN_PERMUTATIONS)..=i64::from(MAX_PERMUTATIONS)))]
    pub permutations: Option<u32>,
    /// Seed of the permutations [default: 0].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Requests in flight per endpoint.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = RangedU64ValueParser::<usize>::new().range(1..=crate::engine::MAX_CONCURRENCY as u64))]
    pub concurrency: usize,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Conditions that make the exit code 1, comma-separated METRIC OP NUMBER. Metrics:
    /// distribution_p (the pooled p-value), distribution_different (1 when the samples read
    /// different), not_same_model, same_model_undecided. [default: distribution_different>0]
    #[arg(long, value_name = "EXPR", value_parser = Gate::from_flag)]
    pub fail_on: Option<Gate>,
    /// Run folder to create (default: runs/distribution-<UTC timestamp>-<names>/).
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Continue the distribution run in DIR with its manifest: send only the samples still
    /// missing, then test again.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_temperature(raw: &str) -> Result<f64, String> {
    let value: f64 = raw
        .trim()
        .parse()
        .map_err(|_| format!("`{raw}` is not a number, e.g. 0.7"))?;
    crate::distribution::limits::check_temperature(value).map(|()| value)
}

fn parse_top_p(raw: &str) -> Result<f64, String> {
    let value: f64 = raw
        .trim()
        .parse()
        .map_err(|_| format!("`{raw}` is not a number, e.g. 0.95"))?;
    crate::distribution::limits::check_top_p(value).map(|()| value)
}

#[cfg(test)]
mod definition_tests {
    #[test]
    fn every_command_line_definition_is_consistent() {
        // clap checks its definitions (unique names, valid defaults) only when a command is built.
        <super::Cli as clap::CommandFactory>::command().debug_assert();
        super::command().debug_assert();
    }

    #[test]
    fn a_negative_number_is_refused_naming_its_flag() {
        let endpoints = ["--endpoint", "a=http://h/v1"];
        let cases: &[&[&str]] = &[
            &["compare", "--concurrency", "-1"],
            &["compare", "--repeats", "-1"],
            &["compare", "--max-tokens", "-3"],
            &["compare", "--timeout", "-5"],
            &["compare", "--retries", "-1"],
            &["compare", "--backoff-ms", "-1"],
            &["bench", "--runs", "-2"],
            &["logprobs", "--top-k", "-1"],
        ];
        for case in cases {
            let argv = ["coherence"].iter().chain(*case).chain(&endpoints);
            let err = super::command()
                .try_get_matches_from(argv)
                .expect_err("a negative count is refused");
            let flag = case[1];
            let text = err.to_string();
            assert!(
                text.contains(&format!("'{flag} <")) && text.contains("invalid value"),
                "{case:?}: {text}"
            );
        }
    }
}

/// The long suite's shape (`--suite long`): `--lengths`, `--depths`, `--per-cell`,
/// `--max-context`; what they leave out comes from the resumed run, else the defaults.
#[derive(Debug, Clone, Args)]
pub struct LongArgs {
    /// With --suite long: planned prompt lengths in tokens, comma-separated, `k` for 1024
    /// (`1k,4k,16k`) [default: 1k, 2k, 4k… up to 7/8 of the context].
    #[arg(long, value_name = "LEN,LEN", value_delimiter = ',', value_parser = crate::catalogue::long::parse_length)]
    pub lengths: Vec<u32>,
    /// With --suite long: needle depths in percent of the haystack, comma-separated
    /// [default: 0,25,50,75,100].
    #[arg(long, value_name = "PCT,PCT", value_delimiter = ',', value_parser = crate::catalogue::long::parse_depth)]
    pub depths: Vec<u8>,
    /// With --suite long: items per (length, depth) cell [default: 2].
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..=crate::catalogue::long::MAX_PER_CELL as u64))]
    pub per_cell: Option<usize>,
    /// With --suite long: the context window in tokens when `GET /models` reports no
    /// `max_model_len`; items that would not fit (prompt + answer budget) are skipped, never
    /// sent; at most 1048576 (a larger `max_model_len` is clamped to it) [default: 8192].
    #[arg(long, value_name = "TOKENS", value_parser = crate::catalogue::long::parse_context)]
    pub max_context: Option<u64>,
}

impl LongArgs {
    /// `choice` with the long suite's shape from these flags, else from `base`.
    fn apply(&self, mut choice: SuiteChoice, base: &SuiteChoice) -> SuiteChoice {
        use crate::catalogue::long::sorted;
        choice.long = base.long.clone();
        if !self.lengths.is_empty() {
            choice.long.lengths = sorted(self.lengths.clone());
        }
        if !self.depths.is_empty() {
            choice.long.depths = sorted(self.depths.clone());
        }
        if let Some(n) = self.per_cell {
            choice.long.per_cell = n;
        }
        if let Some(c) = self.max_context {
            choice.long.context = c;
        }
        choice
    }

    /// Whether `--max-context` was given (it then wins over `GET /models`).
    pub fn context_given(&self) -> bool {
        self.max_context.is_some()
    }

    /// The first of these flags given, which only the long suite reads.
    fn first_given(&self) -> Option<&'static str> {
        [
            (!self.lengths.is_empty(), "--lengths"),
            (!self.depths.is_empty(), "--depths"),
            (self.per_cell.is_some(), "--per-cell"),
            (self.max_context.is_some(), "--max-context"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}
