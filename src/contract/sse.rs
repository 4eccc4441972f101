//! A streamed chat reply read whole: the `data:` events of a server-sent-events body.

use serde_json::Value;

/// What a streamed reply said.
#[derive(Debug, Default, PartialEq)]
pub struct Stream {
    /// `choices[0].delta.content` of every event, joined.
    pub text: String,
    /// The `usage` object of the event that carried one (the final chunk when asked).
    pub usage: Option<Value>,
    /// JSON events read.
    pub events: usize,
    /// Whether the stream ended with `data: [DONE]`.
    pub done: bool,
    /// The last `choices[0].finish_reason` that was not null.
    pub finish_reason: Option<String>,
    /// The tool calls of `choices[0].delta.tool_calls`, assembled by `index` in the order each
    /// first appeared: a call's name and arguments arrive in pieces.
    pub tool_calls: Vec<StreamedCall>,
}

/// One tool call put together from its deltas.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StreamedCall {
    pub index: u64,
    pub name: String,
    pub arguments: String,
}

/// Read an event-stream body; None when it holds no JSON `data:` event (not a stream).
pub fn read(body: &str) -> Option<Stream> {
    let mut out = Stream::default();
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            continue;
        };
        if data == "[DONE]" {
            out.done = true;
            continue;
        }
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        out.events += 1;
        if let Some(piece) = event
            .pointer("/choices/0/delta/content")
            .and_then(Value::as_str)
        {
            out.text.push_str(piece);
        }
        if let Some(usage) = event.get("usage").filter(|u| u.is_object()) {
            out.usage = Some(usage.clone());
        }
        if let Some(reason) = event
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
        {
            out.finish_reason = Some(reason.to_string());
        }
        let deltas = event.pointer("/choices/0/delta/tool_calls");
        for delta in deltas.and_then(Value::as_array).into_iter().flatten() {
            out.add_call_delta(delta);
        }
    }
    (out.events > 0).then_some(out)
}

impl Stream {
    /// One `delta.tool_calls` entry: its pieces appended to the call of its `index` (0 when
    /// absent), which is opened when this is its first piece.
    fn add_call_delta(&mut self, delta: &Value) {
        let index = delta.get("index").and_then(Value::as_u64).unwrap_or(0);
        let at = match self.tool_calls.iter().position(|c| c.index == index) {
            Some(at) => at,
            None => {
                self.tool_calls.push(StreamedCall {
                    index,
                    ..StreamedCall::default()
                });
                self.tool_calls.len() - 1
            }
        };
        let call = &mut self.tool_calls[at];
        let piece = |field: &str| delta.pointer(field).and_then(Value::as_str);
        call.name
            .push_str(piece("/function/name").unwrap_or_default());
        call.arguments
            .push_str(piece("/function/arguments").unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn joins_deltas_and_keeps_the_usage_chunk() {
        let body = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n\
                    data: {\"choices\":[{\"delta\":{\"content\":\"Par\"}}]}\n\n\
                    data: {\"choices\":[{\"delta\":{\"content\":\"is\"}}],\"usage\":null}\n\n\
                    data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9}}\n\n\
                    data: [DONE]\n\n";
        let s = read(body).unwrap();
        assert_eq!(s.text, "Paris");
        assert_eq!(s.usage.unwrap()["prompt_tokens"], 9);
        assert_eq!(s.events, 4);
        assert!(s.done);
    }

    #[test]
    fn assembles_tool_calls_from_their_pieces_by_index_and_keeps_the_finish_reason() {
        let events = [
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c0", "type": "function",
                "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": null}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "{\"city\": "}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 1,
                "function": {"name": "get_time", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "\"Paris\"}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
        ];
        let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        let s = read(&body).unwrap();
        let call = |index, name: &str, arguments: &str| StreamedCall {
            index,
            name: name.into(),
            arguments: arguments.into(),
        };
        assert_eq!(
            s.tool_calls,
            [
                call(0, "get_weather", "{\"city\": \"Paris\"}"),
                call(1, "get_time", "{}")
            ]
        );
        assert_eq!(s.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(s.text, "");
    }

    #[test]
    fn a_json_body_is_not_a_stream() {
        assert_eq!(read("{\"choices\":[]}"), None);
        assert_eq!(read(""), None);
    }
}
