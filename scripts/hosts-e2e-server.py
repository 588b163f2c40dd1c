#!/usr/bin/env python3
"""A scripted stand-in for the model APIs Codex CLI and Gemini CLI call, for
scripts/hosts-e2e.sh. Offline, stdlib only.

- OpenAI Responses API (Codex): POST .../responses, answered as a
  server-sent event stream (response.created, response.output_item.done,
  response.completed).
- Gemini API: POST .../models/<model>:streamGenerateContent (SSE),
  :generateContent and :countTokens.

Every request is appended to the log file as one JSON line {path, body}.
The reply is scripted by the conversation:
- the last user text contains CALL_MEMORY_QUERY and a tool whose name ends
  in memory_query is offered: call it with {"text": <words after the marker>};
- the request carries that tool's result: answer "TOOL RESULT: <first 300
  characters of it>";
- otherwise: answer "OK".

Usage: hosts-e2e-server.py LOG_FILE PORT_FILE (the chosen port is written to
PORT_FILE once listening).
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG, PORT_FILE = sys.argv[1], sys.argv[2]
MARKER = "CALL_MEMORY_QUERY"


def log(entry):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def texts(value):
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from texts(v)


def query_words(text):
    rest = text.rsplit(MARKER, 1)[1].strip()
    return rest.splitlines()[0].strip() if rest else "email"


# ---------------------------------------------------------------- Codex


def codex_reply(body):
    items = body.get("input") or []
    # (namespace, name): MCP tools come as {"type": "namespace", "name":
    # "mcp__<server>", "tools": [...]}; plain tools have no namespace.
    tools = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if t.get("name"):
            tools.append((None, t["name"]))
        for sub in t.get("tools") or []:
            if isinstance(sub, dict) and sub.get("name"):
                tools.append((t.get("name"), sub["name"]))
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if outputs:
        out = outputs[-1].get("output")
        text = out if isinstance(out, str) else json.dumps(out)
        return {"type": "message", "role": "assistant", "id": "msg_2",
                "content": [{"type": "output_text", "text": "TOOL RESULT: " + text[:300]}]}
    users = [i for i in items if isinstance(i, dict) and i.get("role") == "user"]
    last = " ".join(texts(users[-1].get("content"))) if users else ""
    tool = next((t for t in tools if t[1].endswith("memory_query")), None)
    if MARKER in last and tool:
        call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": tool[1],
                "arguments": json.dumps({"text": query_words(last)})}
        if tool[0]:
            call["namespace"] = tool[0]
        return call
    return {"type": "message", "role": "assistant", "id": "msg_1",
            "content": [{"type": "output_text", "text": "OK"}]}


def sse(handler, events):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.end_headers()
    for name, data in events:
        chunk = ""
        if name:
            chunk += f"event: {name}\n"
        chunk += f"data: {json.dumps(data)}\n\n"
        handler.wfile.write(chunk.encode())
        handler.wfile.flush()


def codex_stream(handler, body):
    item = codex_reply(body)
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 12}
    sse(handler, [
        ("response.created", {"type": "response.created", "response": {"id": "resp_1"}}),
        ("response.output_item.done",
         {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed",
         {"type": "response.completed", "response": {"id": "resp_1", "usage": usage}}),
    ])


# ---------------------------------------------------------------- Gemini


def gemini_candidate(body):
    contents = body.get("contents") or []
    tools = []
    for t in body.get("tools") or []:
        for d in t.get("functionDeclarations") or []:
            tools.append(d.get("name", ""))
    last = contents[-1] if contents else {}
    for part in last.get("parts") or []:
        if "functionResponse" in part:
            text = json.dumps(part["functionResponse"].get("response"))
            return {"role": "model", "parts": [{"text": "TOOL RESULT: " + text[:300]}]}
    last_text = " ".join(texts(last.get("parts"))) if last.get("role") == "user" else ""
    tool = next((t for t in tools if t.endswith("memory_query")), None)
    if MARKER in last_text and tool:
        return {"role": "model",
                "parts": [{"functionCall": {"name": tool, "args": {"text": query_words(last_text)}}}]}
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        # Gemini CLI's own side questions (model routing, next speaker).
        return {"role": "model", "parts": [{"text": json.dumps(
            {"reasoning": "scripted", "model_choice": "flash", "next_speaker": "user",
             "complexity_reasoning": "scripted", "complexity_score": 1})}]}
    return {"role": "model", "parts": [{"text": "OK"}]}


def gemini_response(body):
    return {"candidates": [{"content": gemini_candidate(body), "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2,
                              "totalTokenCount": 12},
            "modelVersion": "fake"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        if self.path.split("?")[0].endswith("/models"):
            return self.json(200, {"object": "list", "data": [], "models": []})
        self.json(404, {"error": {"message": "not scripted: GET " + self.path}})

    def do_POST(self):
        body = self.body()
        log({"method": "POST", "path": self.path, "body": body})
        path = self.path.split("?")[0]
        if path.endswith("/responses"):
            self.close_connection = True
            return codex_stream(self, body)
        if path.endswith(":streamGenerateContent"):
            self.close_connection = True
            return sse(self, [(None, gemini_response(body))])
        if path.endswith(":generateContent"):
            return self.json(200, gemini_response(body))
        if path.endswith(":countTokens"):
            return self.json(200, {"totalTokens": 10})
        self.json(404, {"error": {"message": "not scripted: POST " + self.path}})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(PORT_FILE, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
