//! The state one `coherence bench` shares with its phases: where to send, the time origin, the
//! request log, the live line and the stop flag. A phase asks the session for request bodies and
//! sends them as rounds; the session logs every sample, collects every problem and, once Ctrl-C
//! or SIGTERM arrives, sends nothing more.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::plan::BenchPlan;
use super::prompts::{chat_body, decode_prompt, sized_prompt, user};
use super::round::Round;
use super::sample::{measure, Sample};
use crate::engine::{self, drive, Keep, Lane, Progress};
use crate::run::Target;
use crate::run_folder::JsonLines;

/// One bench in progress.
pub struct Session<'a> {
    target: &'a Target,
    plan: &'a BenchPlan,
    origin: Instant,
    log: JsonLines,
    live: Progress,
    sent: u64,
    /// When the interruption came (`during <round>` or `before <round>`); once set, no
    /// request is sent.
    stopped_in: Option<String>,
    /// One line per failed or unusable request.
    problems: Vec<String>,
}

/// What a session leaves once its last round is done.
pub struct Ended {
    /// One line per failed or unusable request.
    pub problems: Vec<String>,
    /// Where an interruption stopped the bench, when one did.
    pub stopped_in: Option<String>,
}

/// One line of `bench.jsonl`: a sample and the round it belongs to.
#[derive(Serialize)]
struct Line<'a> {
    phase: &'a str,
    n: usize,
    round: u32,
    #[serde(flatten)]
    sample: &'a Sample,
}

impl<'a> Session<'a> {
    /// Start a session logging to `log`; Ctrl-C and SIGTERM are watched from now on.
    pub fn start(target: &'a Target, plan: &'a BenchPlan, log: JsonLines) -> Self {
        engine::watch();
        Session {
            target,
            plan,
            origin: Instant::now(),
            log,
            live: Progress::status_line(plan.quiet, Duration::from_secs(10)),
            sent: 0,
            stopped_in: None,
            problems: Vec::new(),
        }
    }

    /// A decode-shaped request: a long essay, `--max-tokens` budget.
    pub fn decode_body(&mut self) -> Value {
        self.sent += 1;
        chat_body(
            &self.target.model,
            user(&decode_prompt(self.sent)),
            self.plan.settings.max_tokens,
            0.0,
            &self.plan.settings.params,
        )
    }

    /// A prompt of about `tokens` tokens, unique to this request, answered with one token.
    pub fn prefill_body(&mut self, tokens: u64) -> Value {
        self.sent += 1;
        let nonce = self.origin.elapsed().as_nanos() as u64 ^ (self.sent << 48);
        chat_body(
            &self.target.model,
            user(&sized_prompt(tokens, nonce)),
            1,
            0.0,
            &self.plan.settings.params,
        )
    }

    /// Send `bodies` together; log every sample and remember every problem. None, with nothing
    /// sent or logged, once the bench is interrupted (also while this round is in flight).
    pub async fn round(&mut self, phase: &str, index: u32, bodies: Vec<Value>) -> Option<Round> {
        let at = format!("{phase} (n={}, round {})", bodies.len(), index + 1);
        if self.stopped() {
            if self.stopped_in.is_none() {
                self.stop_at(format!("before {at}"));
            }
            return None;
        }
        self.live.activity(&format!(
            "{phase}: {} request(s) in flight, {:.0} s elapsed",
            bodies.len(),
            self.origin.elapsed().as_secs_f64()
        ));
        // A round is one lane on the engine with every body in flight at once.
        let mut samples: Vec<Option<Sample>> = bodies.iter().map(|_| None).collect();
        let (client, origin) = (&self.target.client, self.origin);
        let driven = drive(
            vec![Lane::new(bodies.iter().enumerate(), bodies.len())],
            |(i, body), _| async move { (i, measure(client, body, origin).await) },
            &mut Keep(|(i, sample)| {
                samples[i] = Some(sample);
                Ok(())
            }),
        )
        .await;
        if !matches!(driven, Ok(ref d) if !d.interrupted) {
            self.stop_at(format!(
                "during {at}; the requests then in flight were abandoned and are not counted"
            ));
            return None;
        }
        let r = Round {
            samples: samples.into_iter().flatten().collect(),
        };
        for s in &r.samples {
            let line = Line {
                phase,
                n: bodies.len(),
                round: index,
                sample: s,
            };
            if let Err(e) = self.log.append(&line) {
                self.problems.push(format!("{e:#}"));
            }
            // A prompt the server rejects as too long becomes a skipped size, not a failure.
            let skipped_size = phase == "prefill" && s.rejection().is_some();
            if let Some(t) = unmeasurable(s).filter(|_| !skipped_size) {
                self.problems.push(format!("{at}: {t}"));
                self.live.note(&format!("  {phase}: {t}"));
            }
        }
        Some(r)
    }

    pub fn note(&self, line: &str) {
        self.live.note(line);
    }

    pub fn stopped(&self) -> bool {
        self.stopped_in.is_some() || engine::is_interrupted()
    }

    /// Clear the live line and hand back what the session collected.
    pub fn finish(self) -> Ended {
        self.live.finish();
        Ended {
            problems: self.problems,
            stopped_in: self.stopped_in,
        }
    }

    fn stop_at(&mut self, when: String) {
        self.live.note(&format!(
            "interrupted {when}: writing the report from what was measured"
        ));
        self.stopped_in = Some(when);
    }
}

/// Why a sample cannot be measured: no completion, or no token count. An empty reply is not a
/// problem here: the server generated (and counted) its tokens all the same.
fn unmeasurable(s: &Sample) -> Option<String> {
    if !s.has_completion() {
        s.problem_line()
    } else if s.completion_tokens.is_none() || s.prompt_tokens.is_none() {
        Some("the server reported no usage token counts; rates cannot be computed".into())
    } else {
        None
    }
}
