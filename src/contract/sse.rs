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
    }
    (out.events > 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_json_body_is_not_a_stream() {
        assert_eq!(read("{\"choices\":[]}"), None);
        assert_eq!(read(""), None);
    }
}
