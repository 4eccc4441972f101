//! OpenAI-compatible client: chat and raw completions, retries, response parsing, fingerprints.

mod client;
mod response;
mod retry;
mod secret;

pub use client::{Client, ClientOptions, EndpointSpec, Exchange, ModelsInfo};
pub use response::{parse_completion, split_think, Completion, Failure, FailureKind, Usage};
pub use retry::{parse_retry_after, RetryPolicy};
pub use secret::ApiKey;
