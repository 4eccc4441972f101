//! The run header every manifest opens with (compare, distribution, project): which coherence
//! started the run, when it started and was last written, where it stands, and every invocation
//! that wrote the folder. Manifests flatten it (`#[serde(flatten)]`), so its fields stand at the
//! top of each manifest's JSON. Manifests written before distribution and project had a header
//! still read: the time they lack is [`UNKNOWN_TIME`], their status `running`.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// `coherence <version>`: the `tool` field of every file a run writes.
pub fn tool_version() -> String {
    format!("coherence {}", env!("CARGO_PKG_VERSION"))
}

/// A time a manifest did not record: the Unix epoch, 1970-01-01T00:00:00Z. Distribution and
/// project manifests written before they had a header have it as their `created_at` and
/// `updated_at`, and as the `at` of each invocation they list.
pub const UNKNOWN_TIME: DateTime<Utc> = DateTime::<Utc>::UNIX_EPOCH;

/// What every run manifest starts with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    /// `coherence <version>` of the invocation that started the run.
    pub tool: String,
    #[serde(default = "unknown_time")]
    pub created_at: DateTime<Utc>,
    /// When the manifest was last written.
    #[serde(default = "unknown_time")]
    pub updated_at: DateTime<Utc>,
    /// A manifest without one was written only as its run started (distribution and project
    /// before they had a header), so it reads as it would have then: `running`.
    #[serde(default = "running")]
    pub status: RunStatus,
    /// Each invocation that wrote to this folder, oldest first, with its arguments (which never
    /// hold a key).
    pub invocations: Vec<Invocation>,
}

/// Where a run stands, as its manifest says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Requests are being sent (or the process was killed while sending).
    Running,
    /// Stopped by Ctrl-C or SIGTERM; every finished request is in the journal.
    Interrupted,
    /// Every planned request was sent (some may have failed: see the results).
    Finished,
}

/// One invocation that wrote to a run folder: when it started and its command line, keys
/// redacted (`run::redacted_argv`). Written as `{"at": …, "args": [...]}`; an entry that is a
/// bare list of arguments (distribution and project manifests before the header) reads as those
/// arguments at [`UNKNOWN_TIME`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Invocation {
    pub at: DateTime<Utc>,
    pub args: Vec<String>,
}

impl RunHeader {
    /// The header's fields, in the order every manifest opens with them.
    pub const FIELDS: [&'static str; 5] =
        ["tool", "created_at", "updated_at", "status", "invocations"];

    /// The header as this invocation starts writing the folder: `previous`, the header of the
    /// run being resumed, continued; else a new run's, started now. Either way it is running,
    /// updated now, and lists this invocation last. `args` is the command line with its keys
    /// already redacted (`run::redacted_argv`).
    pub fn begin(previous: Option<RunHeader>, args: Vec<String>) -> Self {
        let now = Utc::now();
        let mut header = previous.unwrap_or_else(|| RunHeader {
            tool: tool_version(),
            created_at: now,
            updated_at: now,
            status: RunStatus::Running,
            invocations: Vec::new(),
        });
        header.updated_at = now;
        header.status = RunStatus::Running;
        header.invocations.push(Invocation { at: now, args });
        header
    }

    /// Mark the manifest written again now, the run still where it stands.
    pub fn touch(&mut self) {
        self.updated_at = Utc::now();
    }

    /// Mark the run's sending over now: interrupted (Ctrl-C, SIGTERM) or finished.
    pub fn end(&mut self, interrupted: bool) {
        self.touch();
        self.status = if interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Finished
        };
    }
}

/// `manifest` (a manifest's JSON) without the header's fields: what its kind adds.
#[cfg(test)]
pub(crate) fn without_header(mut manifest: serde_json::Value) -> serde_json::Value {
    if let Some(fields) = manifest.as_object_mut() {
        for k in RunHeader::FIELDS {
            fields.remove(k);
        }
    }
    manifest
}

fn unknown_time() -> DateTime<Utc> {
    UNKNOWN_TIME
}

fn running() -> RunStatus {
    RunStatus::Running
}

/// An invocation as written since the header: its time and arguments.
#[derive(Deserialize)]
struct Timed {
    at: DateTime<Utc>,
    args: Vec<String>,
}

impl<'de> Deserialize<'de> for Invocation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(InvocationVisitor)
    }
}

/// Reads either form of an invocation (see [`Invocation`]).
struct InvocationVisitor;

impl<'de> Visitor<'de> for InvocationVisitor {
    type Value = Invocation;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an invocation: {\"at\": time, \"args\": [...]}, or a list of arguments")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Invocation, A::Error> {
        let Timed { at, args } = Timed::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Invocation { at, args })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Invocation, A::Error> {
        let args = Vec::<String>::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(Invocation {
            at: UNKNOWN_TIME,
            args,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_new_header_starts_running_with_this_invocation_at_its_start() {
        let before = Utc::now();
        let h = RunHeader::begin(None, args(&["coherence", "distribution"]));
        assert_eq!(h.tool, tool_version());
        assert_eq!(h.status, RunStatus::Running);
        assert!(h.created_at >= before, "{h:?}");
        assert_eq!(h.updated_at, h.created_at);
        assert_eq!(
            h.invocations,
            [Invocation {
                at: h.created_at,
                args: args(&["coherence", "distribution"])
            }]
        );
    }

    #[test]
    fn a_continued_header_keeps_its_start_and_appends_this_invocation() {
        let mut first = RunHeader::begin(None, args(&["first"]));
        first.end(true);
        first.tool = "coherence 0.0.1".into();
        let started = first.created_at;
        let resumed = RunHeader::begin(Some(first), args(&["second"]));
        assert_eq!(resumed.tool, "coherence 0.0.1", "the tool that started it");
        assert_eq!(resumed.created_at, started);
        assert_eq!(resumed.status, RunStatus::Running);
        let ats: Vec<_> = resumed.invocations.iter().map(|i| i.at).collect();
        assert_eq!(ats.len(), 2);
        assert!(ats[1] >= ats[0]);
        assert_eq!(resumed.updated_at, ats[1]);
        assert_eq!(resumed.invocations[1].args, args(&["second"]));
    }

    #[test]
    fn ending_says_finished_or_interrupted_and_when() {
        let mut h = RunHeader::begin(None, args(&["x"]));
        let begun = h.updated_at;
        h.end(false);
        assert_eq!(h.status, RunStatus::Finished);
        assert!(h.updated_at >= begun);
        h.end(true);
        assert_eq!(h.status, RunStatus::Interrupted);
        assert_eq!(h.created_at, begun, "ending never moves the start");
    }

    #[test]
    fn a_header_round_trips_with_its_fields_in_order() {
        let mut h = RunHeader::begin(None, args(&["coherence", "project"]));
        h.end(false);
        let text = serde_json::to_string(&h).unwrap();
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
                .unwrap()
                .keys()
                .cloned()
                .collect();
        assert_eq!(keys, RunHeader::FIELDS);
        assert!(text.contains("\"status\":\"finished\""), "{text}");
        assert_eq!(serde_json::from_str::<RunHeader>(&text).unwrap(), h);
    }

    #[test]
    fn a_header_written_before_timestamps_reads_with_unknown_times_and_running() {
        let old = json!({
            "tool": "coherence 0.1.0",
            "invocations": [["coherence", "distribution", "--quiet"], ["coherence", "x"]]
        });
        let h: RunHeader = serde_json::from_value(old).unwrap();
        assert_eq!(h.created_at, UNKNOWN_TIME);
        assert_eq!(h.updated_at, UNKNOWN_TIME);
        assert_eq!(h.status, RunStatus::Running);
        assert_eq!(h.invocations.len(), 2);
        assert!(h.invocations.iter().all(|i| i.at == UNKNOWN_TIME));
        assert_eq!(
            h.invocations[0].args,
            args(&["coherence", "distribution", "--quiet"])
        );
        assert_eq!(
            serde_json::to_value(UNKNOWN_TIME).unwrap(),
            json!("1970-01-01T00:00:00Z")
        );
    }

    #[test]
    fn both_forms_of_invocation_read_in_one_list() {
        let list = json!([
            ["old", "form"],
            {"at": "2026-01-02T03:04:05Z", "args": ["new", "form"]}
        ]);
        let read: Vec<Invocation> = serde_json::from_value(list).unwrap();
        assert_eq!(read[0].at, UNKNOWN_TIME);
        assert_eq!(read[1].at.to_rfc3339(), "2026-01-02T03:04:05+00:00");
        assert_eq!(read[1].args, args(&["new", "form"]));
    }

    #[test]
    fn a_malformed_invocation_is_an_error_naming_what_is_wrong() {
        for (bad, says) in [
            (json!({"args": ["x"]}), "missing field `at`"),
            (
                json!({"at": "yesterday", "args": []}),
                "input contains invalid characters",
            ),
            (
                json!([1, 2]),
                "invalid type: integer `1`, expected a string",
            ),
            (json!("coherence compare"), "expected an invocation"),
            (json!(null), "expected an invocation"),
        ] {
            let e = serde_json::from_value::<Invocation>(bad.clone()).unwrap_err();
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }
}
