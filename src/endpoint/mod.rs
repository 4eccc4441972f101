//! OpenAI-compatible client: chat and raw completions, retries, response parsing, fingerprints.

mod client;
mod logprobs;
mod pace;
mod reply_cap;
mod response;
mod retry;
mod secret;
mod split_secret;

pub use client::{is_endpoint_name, Client, ClientOptions, EndpointSpec, Exchange, ModelsInfo};
pub(crate) use logprobs::{logprob_value, short, sort_best_first};
pub use logprobs::{parse_logprobs, LogprobToken};
pub use reply_cap::{cut_body, cut_too_long, REPLY_PART_BYTES};
pub use response::{parse_completion, Completion, Failure, FailureKind, Text, ToolCall};
pub use retry::RetryPolicy;
pub use secret::{shown_var_name, ApiKey};
