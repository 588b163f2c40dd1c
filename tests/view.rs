//! `rollgraph view` and `rollgraph export`: the page's embedded data agrees
//! with the stored state, hostile labels stay data, odd and huge graphs
//! work, both commands are read-only and export is deterministic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{TestEnv, example_prefix, stderr, stdout, walk};

const NOW: &str = "2026-11-02T12:00:00Z";

/// Runs and insists on success.
fn ok(env: &TestEnv, args: &[&str]) -> String {
    let o = env.run(args);
    assert!(
        o.status.success(),
        "rollgraph {args:?} failed: {}",
        stderr(&o)
    );
    stdout(&o)
}

/// The JSON embedded in a page, parsed.
fn page_data(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"rollgraph-data\">";
    let start = html
        .find(open)
        .map(|i| i + open.len())
        .unwrap_or_else(|| panic!("no data element"));
    let end = start
        + html[start..]
            .find("</script>")
            .unwrap_or_else(|| panic!("data not closed"));
    serde_json::from_str(&html[start..end]).unwrap_or_else(|e| panic!("page data is not JSON: {e}"))
}

fn view(env: &TestEnv, extra: &[&str]) -> (String, Value) {
    let out = env.dir.path().join("page.html");
    let mut args = vec!["view", "--out", out.to_str().unwrap_or_default()];
    args.extend_from_slice(extra);
    let said = ok(env, &args);
    assert!(said.contains("wrote "), "{said}");
    let html = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{e}"));
    let data = page_data(&html);
    (html, data)
}

/// Every file under the state directory with its bytes.
fn state_files(env: &TestEnv) -> BTreeMap<PathBuf, Vec<u8>> {
    walk(&env.state())
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap_or_default();
            (p, b)
        })
        .collect()
}

/// Node weights at the last frame (the stored state), by id.
fn final_weights(data: &Value) -> BTreeMap<String, i64> {
    let mut w: BTreeMap<usize, i64> = BTreeMap::new();
    for f in data["frames"].as_array().into_iter().flatten() {
        for c in f["w"].as_array().into_iter().flatten() {
            let ix = c[0].as_u64().unwrap_or(0) as usize;
            w.insert(ix, c[1].as_i64().unwrap_or(-1));
        }
    }
    w.into_iter()
        .filter(|(_, v)| *v >= 0)
        .map(|(ix, v)| (data["nodes"][ix]["id"].as_str().unwrap_or("").to_owned(), v))
        .collect()
}

fn render_text(lines: &Value) -> String {
    lines
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| l["t"].as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_page_shows_the_stored_session_and_replays_its_turns() {
    let env = TestEnv::new();
    let prefix = example_prefix(env.dir.path(), 30);
    ok(
        &env,
        &[
            "replay",
            prefix.to_str().unwrap_or_default(),
            "--session",
            "ex",
        ],
    );
    let before = state_files(&env);
    let (html, data) = view(&env, &[]);
    assert_eq!(
        before,
        state_files(&env),
        "view changed the state directory"
    );

    let show: Value = serde_json::from_str(&ok(&env, &["show", "--json"])).unwrap_or_default();
    let stored = show["nodes"].as_object().map(|m| m.len()).unwrap_or(0);
    assert!(stored > 20, "{stored}");
    assert_eq!(data["meta"]["node_count"], stored);
    assert_eq!(
        data["meta"]["edge_count"],
        show["edges"].as_object().map(|m| m.len()).unwrap_or(0)
    );
    // At the last position every stored node is there, with its weight.
    let w = final_weights(&data);
    assert_eq!(w.len(), stored);
    for (id, n) in show["nodes"].as_object().into_iter().flatten() {
        let want = (n["weight"].as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
        assert_eq!(w.get(id), Some(&want), "{id}");
    }
    // The timeline is the session's, turn by turn, ending at the stored graph.
    let frames = data["frames"].as_array().cloned().unwrap_or_default();
    assert_eq!(frames.len(), 30 + 2, "start, 30 turns, now");
    assert_eq!(
        data["meta"]["timeline_matches"], true,
        "{}",
        data["meta"]["timeline"]
    );
    let fired: Vec<&Value> = frames
        .iter()
        .filter(|f| f["gate"]["fire"] == true)
        .collect();
    assert!(fired.len() >= 3, "probes in 30 turns: {}", fired.len());
    for f in &fired {
        assert!(f["probe"].is_object(), "{f}");
        assert!(
            !f["gate"]["triggers"]
                .as_array()
                .map(Vec::is_empty)
                .unwrap_or(true)
                || f["gate"]["reason"].as_str().is_some_and(|r| !r.is_empty())
        );
    }
    assert!(frames.iter().any(|f| f["gate"]["fire"] == false
        && f["gate"]["reason"].as_str().is_some_and(|r| !r.is_empty())));
    // The focus moves along the timeline.
    let focuses: std::collections::BTreeSet<String> =
        fired.iter().map(|f| f["f"].to_string()).collect();
    assert!(focuses.len() >= 2, "the focus never moved: {focuses:?}");
    // The injection at the last position is `rollgraph render`'s.
    let render: Value = serde_json::from_str(&ok(&env, &["render", "--json"])).unwrap_or_default();
    let last = frames.last().cloned().unwrap_or_default();
    assert_eq!(last["title"], "now");
    let r = &data["renders"][last["r"].as_u64().unwrap_or(0) as usize];
    assert_eq!(
        render_text(&r["lines"]),
        render["text"].as_str().unwrap_or("").trim_end()
    );
    assert_eq!(r["tokens"], render["tokens"]);
    // Every focus line of the injection is linked to the node it names.
    let mut focus_lines = 0;
    for l in r["lines"].as_array().into_iter().flatten() {
        let t = l["t"].as_str().unwrap_or("");
        if let Some(rest) = t.strip_prefix("- **") {
            focus_lines += 1;
            let ix = l["n"][0]
                .as_u64()
                .unwrap_or_else(|| panic!("focus line not linked: {t}"))
                as usize;
            let label = data["nodes"][ix]["label"].as_str().unwrap_or("");
            assert!(rest.starts_with(label), "{t} linked to {label}");
        }
        if t.starts_with("- [") {
            assert!(
                l["h"].is_string() && l["n"].as_array().is_some_and(|n| !n.is_empty()),
                "{t}"
            );
        }
    }
    assert!(focus_lines > 0);
    // Self-contained: no external resource, a policy that forbids the network.
    for bad in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "@import",
        "url(http",
    ] {
        assert!(!html.contains(bad), "page refers to the network: {bad}");
    }
    assert!(html.contains("default-src 'none'"));
}

#[test]
fn the_full_example_has_supersedes_edges_with_the_old_side() {
    let env = TestEnv::new();
    ok(
        &env,
        &[
            "replay",
            crate::common::example().to_str().unwrap_or_default(),
        ],
    );
    let (_, data) = view(&env, &[]);
    let nodes = data["nodes"].as_array().cloned().unwrap_or_default();
    // The side panel's evidence: the sentences that named a node, with turns.
    let bento = nodes
        .iter()
        .find(|n| n["label"] == "Bento")
        .unwrap_or_else(|| panic!("no Bento node"));
    let ev = bento["ev"].as_array().cloned().unwrap_or_default();
    assert!(!ev.is_empty(), "{bento}");
    assert!(
        ev.iter().all(|e| e["turn"].as_u64().is_some_and(|t| t > 0)),
        "{bento}"
    );
    assert!(
        ev.iter()
            .any(|e| e["text"].as_str().is_some_and(|t| t.contains("Bento"))),
        "{bento}"
    );
    let sup: Vec<&Value> = data["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["k"] == "supersedes" && e["to"].is_null())
        .collect();
    assert!(sup.len() >= 2, "{}", sup.len());
    let labels: Vec<(&str, &str)> = sup
        .iter()
        .map(|e| {
            let s = e["s"].as_u64().unwrap_or(0) as usize;
            let t = e["t"].as_u64().unwrap_or(0) as usize;
            (
                nodes[s]["label"].as_str().unwrap_or(""),
                nodes[t]["label"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(
        labels
            .iter()
            .any(|(new, old)| new.contains("Bento") && old.contains("Resend")),
        "{labels:?}"
    );
    // Every item line of every injection along the timeline names its
    // nodes; a near line names one node per label.
    let mut items = 0;
    for r in data["renders"].as_array().into_iter().flatten() {
        let mut section = "";
        for l in r["lines"].as_array().into_iter().flatten() {
            let t = l["t"].as_str().unwrap_or("");
            if let Some(h) = t.strip_prefix("## ") {
                section = h;
                continue;
            }
            if !t.starts_with("- ") {
                continue;
            }
            items += 1;
            let linked = l["n"].as_array().map(Vec::len).unwrap_or(0);
            assert!(linked > 0, "unlinked line in {section}: {t}");
            if section == "Near" {
                let labels = t
                    .split_once(": ")
                    .map_or(0, |(_, list)| list.split(" · ").count());
                assert_eq!(linked, labels, "{t}");
            }
        }
    }
    assert!(items > 100, "{items}");
    // The far clusters of the injection are the page's collapsed groups.
    let last = data["frames"]
        .as_array()
        .and_then(|f| f.last())
        .cloned()
        .unwrap_or_default();
    let r = &data["renders"][last["r"].as_u64().unwrap_or(0) as usize];
    let groups: Vec<&str> = data["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["h"].as_str())
        .collect();
    for l in r["lines"].as_array().into_iter().flatten() {
        if let Some(h) = l["h"].as_str() {
            assert!(
                groups.contains(&h),
                "far handle {h} is not a group: {groups:?}"
            );
        }
    }
}

/// Writes a hot session directly: a snapshot with these nodes and edges.
fn write_session(env: &TestEnv, id: &str, nodes: &[Value], edges: &[Value], state: Value) {
    let dir = env.state().join("sessions").join(id);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let doc = doc(nodes, edges);
    if !nodes.is_empty() {
        std::fs::write(
            dir.join("snapshot.json"),
            json!({"seq": 0, "doc": doc, "applied": []}).to_string(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(dir.join("state.json"), state.to_string()).unwrap_or_else(|e| panic!("{e}"));
}

fn doc(nodes: &[Value], edges: &[Value]) -> Value {
    let n: serde_json::Map<String, Value> = nodes
        .iter()
        .map(|n| (n["id"].as_str().unwrap_or("").to_owned(), n.clone()))
        .collect();
    let e: serde_json::Map<String, Value> = edges
        .iter()
        .map(|e| {
            (
                format!(
                    "{}|{}|{}",
                    e["source"].as_str().unwrap_or(""),
                    e["kind"].as_str().unwrap_or(""),
                    e["target"].as_str().unwrap_or("")
                ),
                e.clone(),
            )
        })
        .collect();
    json!({"version": 1, "nodes": n, "edges": e})
}

fn node(id: &str, label: &str, domain: &str, weight: f64) -> Value {
    json!({"id": id, "label": label, "domain": domain, "weight": weight, "last_activated": NOW})
}

#[test]
fn hostile_labels_stay_data() {
    let env = TestEnv::new();
    let evil = [
        ("script", "</script><script>alert(1)</script>"),
        ("img", "<img src=x onerror=alert(2)>"),
        ("quotes", "\"quoted\" & 'single' \\ back"),
        (
            "rtl",
            "\u{202E}gnp.exe \u{05e9}\u{05dc}\u{05d5}\u{05dd} \u{0627}\u{0644}\u{0633}\u{0644}\u{0627}\u{0645}",
        ),
        ("comment", "<!-- x --> ]]> {{DATA}} {{SCRIPT}}"),
    ];
    let mut nodes: Vec<Value> = evil
        .iter()
        .map(|(id, label)| {
            let mut n = node(id, label, "technical", 0.9);
            n["detail"] = json!(format!("detail of {label}"));
            n["aliases"] = json!([format!("{label} alias")]);
            n
        })
        .collect();
    nodes.push(node("plain", "Plain node", "project", 0.5));
    let edges =
        vec![json!({"source": "script", "target": "img", "kind": "supersedes", "weight": 0.8})];
    write_session(
        &env,
        "evil",
        &nodes,
        &edges,
        json!({"session": "evil", "turn": 4, "last_focus": ["script", "rtl"]}),
    );
    let (html, data) = view(&env, &[]);
    // Exactly the page's own two script elements close; no injected markup.
    assert_eq!(
        html.matches("</script>").count(),
        2,
        "a label closed a script element"
    );
    assert!(!html.contains("<img"), "a label became an element");
    assert!(!html.contains("<!-- x"), "a label became a comment");
    assert!(
        !html.contains('\u{202E}'),
        "a raw bidi override reached the HTML"
    );
    // ...and the data comes back intact.
    let labels: Vec<&str> = data["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["label"].as_str())
        .collect();
    for (_, label) in evil {
        assert!(labels.contains(&label), "{label:?} lost: {labels:?}");
    }
    // Export escapes them for each format.
    let dot = ok(&env, &["export", "--format", "dot"]);
    assert!(
        dot.contains(r#"label="\"quoted\" & 'single' \\ back""#),
        "{dot}"
    );
    let graphml = ok(&env, &["export", "--format", "graphml"]);
    assert!(graphml.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!graphml.contains("<script>") && !graphml.contains("<img"));
    assert!(graphml.contains("&quot;quoted&quot; &amp; &apos;single&apos;"));
    let j: Value =
        serde_json::from_str(&ok(&env, &["export", "--format", "json"])).unwrap_or_default();
    assert_eq!(
        j["nodes"]["script"]["label"],
        "</script><script>alert(1)</script>"
    );
}

#[test]
fn a_project_name_with_markup_is_escaped_in_the_title() {
    let env = TestEnv::new();
    let dir = env.dir.path().join("<b>proj\"");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let key = warm_key(&env, &dir);
    write_warm(&env, &key, &[node("a", "Alpha", "project", 0.7)], &[]);
    let (html, data) = view(&env, &["--project", dir.to_str().unwrap_or_default()]);
    assert!(html.contains("&lt;b&gt;proj&quot;"), "title not escaped");
    assert!(!html.contains("<b>proj"));
    assert_eq!(data["meta"]["kind"], "project");
    assert_eq!(data["meta"]["node_count"], 1);
}

/// The warm store key of a project directory, as the engine computes it
/// (found by asking `view` for a missing store: its error names the key).
fn warm_key(env: &TestEnv, dir: &Path) -> String {
    let o = env.run(&["view", "--project", dir.to_str().unwrap_or_default()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    let key = err
        .split("(key ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no key in {err}"));
    assert!(err.contains("no warm graph for"), "{err}");
    key.to_owned()
}

fn write_warm(env: &TestEnv, key: &str, nodes: &[Value], edges: &[Value]) {
    let dir = env.state().join("warm").join(key);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.join("snapshot.json"),
        json!({"seq": 0, "doc": doc(nodes, edges), "meta": {}}).to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

/// A synthetic graph: four domains, hubs, supersedes chains, anchors.
fn synthetic(n: usize) -> (Vec<Value>, Vec<Value>) {
    let domains = ["relationship", "project", "technical", "personal"];
    let kinds = [
        "entity",
        "person",
        "project",
        "file",
        "identifier",
        "decision",
        "fact",
    ];
    let mut nodes = Vec::with_capacity(n);
    let mut edges = Vec::with_capacity(n * 2);
    for i in 0..n {
        let id = format!("component-{i}-of-the-billing-pipeline");
        let mut v = node(
            &id,
            &format!("Component {i} of the billing pipeline"),
            domains[i % 4],
            0.05 + (i % 19) as f64 * 0.05,
        );
        v["kind"] = json!(kinds[i % kinds.len()]);
        v["detail"] = json!(format!(
            "Detail sentence number {i} on why it matters for invoices."
        ));
        if i % 97 == 0 {
            v["anchor"] = json!(true);
        }
        nodes.push(v);
        if i > 0 {
            let j = (i * 7) % i;
            edges.push(json!({"source": id, "target": format!("component-{j}-of-the-billing-pipeline"), "kind": "relates_to", "weight": 0.5}));
        }
        if i >= 4 && i % 40 == 0 {
            edges.push(json!({"source": id, "target": format!("component-{}-of-the-billing-pipeline", i - 4), "kind": "supersedes", "weight": 0.9}));
        }
    }
    (nodes, edges)
}

#[test]
fn export_is_deterministic_and_complete_in_every_format() {
    let env = TestEnv::new();
    let (nodes, edges) = synthetic(5_000);
    write_warm(&env, "global", &nodes, &edges);
    let before = state_files(&env);
    for format in ["dot", "json", "graphml"] {
        let a = ok(&env, &["export", "--format", format, "--global"]);
        let b = ok(&env, &["export", "--format", format, "--global"]);
        assert_eq!(a, b, "{format} export is not deterministic");
        match format {
            "json" => {
                let v: Value = serde_json::from_str(&a).unwrap_or_default();
                assert_eq!(v["nodes"].as_object().map(|m| m.len()), Some(5_000));
                assert_eq!(v["edges"].as_object().map(|m| m.len()), Some(edges.len()));
            }
            "dot" => {
                assert!(a.starts_with("digraph rollgraph {"));
                assert_eq!(a.matches(" -> ").count(), edges.len());
                for d in ["relationship", "project", "technical", "personal"] {
                    assert!(a.contains(&format!("subgraph cluster_{d} {{")), "{d}");
                }
                assert!(
                    a.contains("style=dashed, color=\"#cc0000\""),
                    "supersedes not dashed"
                );
            }
            _ => {
                assert!(a.starts_with("<?xml"));
                assert_eq!(a.matches("<node id=").count(), 5_000);
                assert_eq!(a.matches("<edge id=").count(), edges.len());
                assert!(a.trim_end().ends_with("</graphml>"));
            }
        }
    }
    // --out writes the same bytes.
    let out = env.dir.path().join("g.dot");
    ok(
        &env,
        &[
            "export",
            "--format",
            "dot",
            "--global",
            "--out",
            out.to_str().unwrap_or_default(),
        ],
    );
    let file = std::fs::read_to_string(&out).unwrap_or_default();
    assert_eq!(
        file.trim_end(),
        ok(&env, &["export", "--format", "dot", "--global"]).trim_end()
    );
    assert_eq!(
        before,
        state_files(&env),
        "export changed the state directory"
    );
}

#[test]
fn a_twenty_thousand_node_graph_opens_collapsed_by_domain() {
    let env = TestEnv::new();
    let (nodes, edges) = synthetic(20_000);
    write_warm(&env, "global", &nodes, &edges);
    let (html, data) = view(&env, &["--global"]);
    assert_eq!(data["meta"]["node_count"], 20_000);
    let collapse_at = data["meta"]["domain_collapse_at"]
        .as_u64()
        .unwrap_or(u64::MAX);
    assert!(collapse_at < 20_000);
    assert_eq!(final_weights(&data).len(), 20_000);
    assert_eq!(
        data["frames"].as_array().map(Vec::len),
        Some(1),
        "a warm graph has one position"
    );
    // The injection of the warm graph is there and within budget.
    let r = &data["renders"][0];
    assert!(
        r["tokens"].as_u64().is_some_and(|t| t > 0 && t <= 800),
        "{}",
        r["tokens"]
    );
    // Far nodes sit in the injection's clusters, not one group each.
    let groups = data["groups"].as_array().map(Vec::len).unwrap_or(0);
    assert!(groups > 4 && groups < 20_000, "{groups}");
    assert!(html.len() < 12 * 1024 * 1024, "{} bytes", html.len());
}

#[test]
fn empty_never_probed_and_one_node_sessions_all_render() {
    let env = TestEnv::new();
    // A session the hook created that never probed: state only, no snapshot, no journal.
    write_session(
        &env,
        "fresh",
        &[],
        &[],
        json!({"session": "fresh", "turn": 3}),
    );
    let (_, data) = view(&env, &["--session", "fresh"]);
    assert_eq!(data["meta"]["node_count"], 0);
    let frames = data["frames"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        frames.last().map(|f| f["title"].clone()),
        Some(json!("now"))
    );
    assert!(
        frames.last().is_some_and(|f| f["r"].is_null()),
        "an empty graph injects nothing"
    );
    assert!(
        data["meta"]["timeline"]
            .as_str()
            .is_some_and(|t| t.contains("only the stored state"))
    );

    // One node.
    write_session(
        &env,
        "one",
        &[node("only", "The only node", "personal", 0.6)],
        &[],
        json!({"session": "one", "turn": 1, "last_focus": ["only"]}),
    );
    let (_, data) = view(&env, &["--session", "one"]);
    assert_eq!(data["meta"]["node_count"], 1);
    let last = data["frames"]
        .as_array()
        .and_then(|f| f.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["f"], json!([0]));
    let lines = &data["renders"][last["r"].as_u64().unwrap_or(99) as usize]["lines"];
    assert!(render_text(lines).contains("The only node"));
    for fmt in ["dot", "json", "graphml"] {
        assert!(!ok(&env, &["export", "--session", "one", "--format", fmt]).is_empty());
    }

    // A session whose transcript is gone: the journal's cycles make the timeline.
    let prefix = example_prefix(env.dir.path(), 12);
    ok(
        &env,
        &[
            "replay",
            prefix.to_str().unwrap_or_default(),
            "--session",
            "gone",
        ],
    );
    std::fs::remove_file(&prefix).unwrap_or_else(|e| panic!("{e}"));
    let o = env.run(&[
        "view",
        "--session",
        "gone",
        "--out",
        env.dir.path().join("g.html").to_str().unwrap_or_default(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let data =
        page_data(&std::fs::read_to_string(env.dir.path().join("g.html")).unwrap_or_default());
    assert!(
        data["meta"]["timeline"]
            .as_str()
            .is_some_and(|t| t.contains("is not a readable regular file")),
        "{}",
        data["meta"]["timeline"]
    );
    assert!(data["meta"]["node_count"].as_u64().is_some_and(|n| n > 0));
}

#[test]
fn a_fifo_as_the_transcript_does_not_block_the_viewer() {
    let env = TestEnv::new();
    let fifo = env.dir.path().join("transcript.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(made.success());
    write_session(
        &env,
        "fifo",
        &[node("a", "Alpha", "project", 0.5)],
        &[],
        json!({"session": "fifo", "turn": 2, "transcript": fifo.to_str().unwrap_or_default()}),
    );
    let (_, data) = view(&env, &["--session", "fifo"]);
    assert!(
        data["meta"]["timeline"]
            .as_str()
            .is_some_and(|t| t.contains("is not a readable regular file")),
        "{}",
        data["meta"]["timeline"]
    );
}

#[test]
fn bad_input_gets_a_clear_error() {
    let env = TestEnv::new();
    let o = env.run(&["view", "--session", "nope"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no session \"nope\""), "{}", stderr(&o));
    let o = env.run(&["view", "--session", "../etc"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("invalid session id"), "{}", stderr(&o));
    let o = env.run(&["view"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no sessions under"), "{}", stderr(&o));
    let o = env.run(&["export", "--format", "svg"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("invalid value 'svg'"), "{}", stderr(&o));
    let o = env.run(&["export", "--format", "dot", "--session", "a", "--global"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    let o = env.run(&["view", "--project", "/no/such/dir"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));
    let o = env.run(&["view", "--global"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no warm graph for global"),
        "{}",
        stderr(&o)
    );
    // A damaged snapshot is reported, never moved aside.
    write_session(
        &env,
        "bad",
        &[node("a", "A", "project", 0.5)],
        &[],
        json!({"session": "bad"}),
    );
    let snap = env.state().join("sessions/bad/snapshot.json");
    std::fs::write(&snap, "{\"seq\": 0, \"doc\": {\"nodes\": ").unwrap_or_else(|e| panic!("{e}"));
    let o = env.run(&["export", "--session", "bad", "--format", "json"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is corrupt"), "{}", stderr(&o));
    assert!(snap.exists(), "a read-only command moved the snapshot");
    // An unwritable --out is an error naming the file.
    write_session(
        &env,
        "fine",
        &[node("a", "A", "project", 0.5)],
        &[],
        json!({"session": "fine"}),
    );
    let o = env.run(&[
        "view",
        "--session",
        "fine",
        "--out",
        "/no/such/dir/page.html",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("writing /no/such/dir/page.html"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn dot_and_graphml_of_a_small_graph() {
    let env = TestEnv::new();
    let mut new = node("use-bento", "Use Bento instead of Resend", "technical", 0.9);
    new["kind"] = json!("decision");
    let mut old = node(
        "use-resend",
        "Use Resend for transactional email",
        "technical",
        0.4,
    );
    old["kind"] = json!("decision");
    let mut pref = node("short-answers", "Keep explanations short", "personal", 0.6);
    pref["kind"] = json!("preference");
    pref["anchor"] = json!(true);
    let dana = node("dana", "Dana \"the PM\" Okafor", "relationship", 0.8);
    let edges = vec![
        json!({"source": "use-bento", "target": "use-resend", "kind": "supersedes", "weight": 0.9}),
        json!({"source": "dana", "target": "use-bento", "kind": "owns", "weight": 0.5}),
    ];
    write_session(
        &env,
        "small",
        &[new, old, pref, dana],
        &edges,
        json!({"session": "small", "turn": 3, "last_focus": ["use-bento"]}),
    );
    crate::snap!("export_dot_small", ok(&env, &["export", "--format", "dot"]));
    crate::snap!(
        "export_graphml_small",
        ok(&env, &["export", "--format", "graphml"])
    );
}

#[test]
fn a_torn_journal_is_reported_and_left_as_it_is() {
    let env = TestEnv::new();
    let prefix = example_prefix(env.dir.path(), 10);
    ok(
        &env,
        &[
            "replay",
            prefix.to_str().unwrap_or_default(),
            "--session",
            "torn",
        ],
    );
    let journal = env.state().join("sessions/torn/journal.jsonl");
    let mut bytes = std::fs::read(&journal).unwrap_or_default();
    bytes.extend_from_slice(b"{\"seq\":99,\"crc\":1,\"entry\":{\"type\":\"to");
    std::fs::write(&journal, &bytes).unwrap_or_else(|e| panic!("{e}"));
    let before = state_files(&env);
    let o = env.run(&["export", "--session", "torn", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("torn or corrupt"), "{}", stderr(&o));
    let o = env.run(&[
        "view",
        "--session",
        "torn",
        "--out",
        env.dir.path().join("t.html").to_str().unwrap_or_default(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        before,
        state_files(&env),
        "a read-only command repaired the journal"
    );
    assert_eq!(std::fs::read(&journal).unwrap_or_default(), bytes);
}
