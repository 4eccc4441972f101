#!/usr/bin/env python3
"""A fake OpenAI-compatible server whose every reply is huge: the load behind
scripts/reply-cost.sh (what one reply can cost coherence).

    hostile-replies.py PORT tool-args MB   every chat reply calls a tool with MB megabytes of arguments
    hostile-replies.py PORT content MB     every chat reply is MB megabytes of text ending "The answer is 3."

Standard library only; serves until killed.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, MODE, MB = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
SIZE = int(MB * 1024 * 1024)
FILLER = "lorem ipsum dolor sit amet "
WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime", "date", "peach"]


class Handler(BaseHTTPRequestHandler):
    calls = 0

    def log_message(self, *_):
        pass

    def send_json(self, value):
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send_json({"object": "list", "data": [{"id": "hostile", "object": "model"}]})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        Handler.calls += 1
        filler = FILLER * (SIZE // len(FILLER))
        if MODE == "tool-args":
            args = json.dumps({"location": filler})
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": args},
                    }
                ],
            }
            finish = "tool_calls"
        else:
            word = WORDS[Handler.calls % len(WORDS)]
            message = {"role": "assistant", "content": f"{word} {filler} The answer is 3."}
            finish = "stop"
        self.send_json(
            {
                "id": "x",
                "object": "chat.completion",
                "model": "hostile",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        )


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
