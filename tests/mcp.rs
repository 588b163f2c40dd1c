//! `rollgraph mcp` over stdio: initialize, tools/list, tools/call for both tools.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Stdio};

use serde_json::{Value, json};

use crate::hookenv::TestEnv;

fn send(stdin: &mut ChildStdin, v: &Value) {
    let mut line = serde_json::to_string(v).unwrap_or_default();
    line.push('\n');
    stdin
        .write_all(line.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    stdin.flush().unwrap_or_else(|e| panic!("{e}"));
}

fn recv(out: &mut impl BufRead, id: u64) -> Value {
    loop {
        let mut line = String::new();
        let n = out.read_line(&mut line).unwrap_or_else(|e| panic!("{e}"));
        assert!(n > 0, "the server closed stdout before answering {id}");
        // Everything on stdout must be protocol.
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("non-JSON on stdout: {line:?}: {e}"));
        if v["id"] == json!(id) {
            return v;
        }
    }
}

#[test]
fn initialize_list_and_call_both_tools() {
    let env = TestEnv::new();
    env.seed_session(
        "s1",
        &[
            "Let's go with Resend for transactional email.",
            "Priya Raman reviews the dunning retries in src/billing/dunning.rs.",
        ],
    );
    let mut child = env
        .cmd(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let mut out = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("no stdout")));

    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let init = recv(&mut out, 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "rollgraph", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );

    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let list = recv(&mut out, 2);
    let tools = list["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names.len(), 2, "{list}");
    assert!(
        names.contains(&"memory_expand") && names.contains(&"memory_query"),
        "{names:?}"
    );
    let schema = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["inputSchema"].clone())
            .unwrap_or_default()
    };
    assert_eq!(schema("memory_expand")["required"], json!(["handle"]));
    assert_eq!(schema("memory_query")["required"], json!(["text"]));
    // Only standard JSON Schema formats (Gemini CLI warns on "uint").
    assert!(
        schema("memory_query")["properties"]["limit"]
            .get("format")
            .is_none(),
        "{list}"
    );
    // Hosts that gate unannotated tools run these without asking: Codex
    // refuses an unannotated MCP tool under `approval_policy = "never"`
    // unless it is read-only, or neither destructive nor open-world.
    let hints = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["annotations"].clone())
            .unwrap_or_default()
    };
    assert_eq!(hints("memory_query")["readOnlyHint"], true, "{list}");
    assert_eq!(hints("memory_query")["openWorldHint"], false, "{list}");
    assert_eq!(hints("memory_expand")["readOnlyHint"], false, "{list}");
    assert_eq!(hints("memory_expand")["destructiveHint"], false, "{list}");
    assert_eq!(hints("memory_expand")["openWorldHint"], false, "{list}");

    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_query", "arguments": {"text": "who reviews the retries"}}}),
    );
    let q = recv(&mut out, 3);
    let text = q["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(q["result"]["isError"], false, "{q}");
    assert!(
        text.contains("Priya Raman")
            && text.contains("why: a person was asked for")
            && text.contains("retries"),
        "{text}"
    );

    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "memory_expand", "arguments": {"handle": "priya-raman"}}}),
    );
    let e = recv(&mut out, 4);
    let text = e["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(e["result"]["isError"], false, "{e}");
    assert!(text.contains("**Priya Raman**"), "{text}");

    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "memory_expand", "arguments": {"handle": "technical/no-such-thing"}}}),
    );
    let bad = recv(&mut out, 5);
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(
        bad["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown handle"),
        "{bad}"
    );

    // Parameters are plain integers with defaults (an Inspector sends them as numbers).
    let qs = schema("memory_query");
    for key in ["limit", "budget"] {
        assert_eq!(qs["properties"][key]["type"], "integer", "{qs}");
        assert!(qs["properties"][key]["default"].is_number(), "{qs}");
    }
    assert_eq!(
        qs["properties"]["scope"]["default"], "session-project",
        "{qs}"
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "memory_query", "arguments": {"text": "retries", "limit": 2, "budget": 120, "scope": "session"}}}),
    );
    let small = recv(&mut out, 6);
    let text = small["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(small["result"]["isError"], false, "{small}");
    assert!(text.contains("/120 tokens"), "{text}");
    // Params that are not an object get a JSON-RPC error, not silence.
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "memory_query"}),
    );
    let err = recv(&mut out, 7);
    assert!(err["error"]["code"].is_number(), "{err}");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "memory_query", "arguments": "retries"}}),
    );
    let err = recv(&mut out, 8);
    assert!(err["error"]["code"].is_number(), "{err}");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "memory_query", "arguments": {"text": "retries", "scope": "everywhere"}}}),
    );
    let bad_scope = recv(&mut out, 9);
    assert_eq!(bad_scope["result"]["isError"], true, "{bad_scope}");

    drop(stdin);
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{status:?}");
    let st: Value = serde_json::from_slice(
        &std::fs::read(env.state.join("sessions/s1/state.json")).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(st["stats"]["expansions"], 1, "{st}");
    assert_eq!(st["stats"]["queries"], 2, "{st}");
}
