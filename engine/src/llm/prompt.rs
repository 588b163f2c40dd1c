//! Prompt texts and what fills them: the compact graph view and the turns.
//!
//! The texts live in `prompts/` (compiled in) and can be overridden by a file
//! of the same name in `$ROLLGRAPH_HOME/prompts/`. A template is split at the
//! line `<!-- user -->` into the system and the user message; `{{name}}`
//! placeholders are filled by [`fill`]. Everything that goes into a prompt is
//! redacted here and again by the client before it is sent.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::graph::{Graph, Node, NodeId, normalize_name};
use crate::patch::PATCH_SCHEMA;
use crate::redact::redact_owned;
use crate::store::Home;
use crate::transcript::Turn;

/// The compiled-in probe prompt (`prompts/probe.md`).
pub const PROBE_PROMPT: &str = include_str!("../../../prompts/probe.md");
/// The compiled-in adjudication prompt (`prompts/reconcile.md`).
pub const RECONCILE_PROMPT: &str = include_str!("../../../prompts/reconcile.md");
/// The compiled-in graduation prompt (`prompts/graduate.md`).
pub const GRADUATE_PROMPT: &str = include_str!("../../../prompts/graduate.md");

/// The line that separates the system message from the user message.
pub const USER_MARKER: &str = "<!-- user -->";

/// Nodes shown by weight in the compact view (plus every node the turns name).
pub const VIEW_TOP_NODES: usize = 60;
/// Most nodes in the compact view.
pub const VIEW_MAX_NODES: usize = 100;
/// Most edges in the compact view.
pub const VIEW_MAX_EDGES: usize = 120;

/// The prompt texts in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompts {
    /// The probe prompt.
    pub probe: String,
    /// The reconciler's adjudication prompt.
    pub reconcile: String,
    /// The graduation prompt.
    pub graduate: String,
}

impl Default for Prompts {
    fn default() -> Self {
        Prompts {
            probe: PROBE_PROMPT.to_owned(),
            reconcile: RECONCILE_PROMPT.to_owned(),
            graduate: GRADUATE_PROMPT.to_owned(),
        }
    }
}

impl Prompts {
    /// The built-in prompts, each replaced by `<home>/prompts/<name>.md` when
    /// that file exists and is not empty.
    pub fn load(home: &Home) -> Prompts {
        let dir = home.root().join("prompts");
        let read = |name: &str, default: &str| -> String {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(t) if !t.trim().is_empty() => t,
                Ok(_) => default.to_owned(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => default.to_owned(),
                Err(e) => {
                    tracing::warn!(
                        "prompt override {} unreadable ({e}); using the built-in one",
                        path.display()
                    );
                    default.to_owned()
                }
            }
        };
        Prompts {
            probe: read("probe.md", PROBE_PROMPT),
            reconcile: read("reconcile.md", RECONCILE_PROMPT),
            graduate: read("graduate.md", GRADUATE_PROMPT),
        }
    }
}

/// Fills `{{name}}` placeholders and splits the template into (system, user).
pub fn fill(template: &str, vars: &[(&str, &str)]) -> (String, String) {
    let mut text = template.to_owned();
    for (k, v) in vars {
        text = text.replace(&format!("{{{{{k}}}}}"), v);
    }
    match text.split_once(USER_MARKER) {
        Some((system, user)) => (system.trim().to_owned(), user.trim().to_owned()),
        None => (String::new(), text.trim().to_owned()),
    }
}

/// Most operations asked of the model (the full schema allows 64).
pub const REQUEST_MAX_OPS: usize = 24;
/// Longest string the model may generate (grammar-constrained servers expand
/// every `maxLength` into that many nested rules: long bounds are slow).
pub const REQUEST_MAX_STRING: u64 = 120;
/// Most aliases (and array items) the model may generate.
pub const REQUEST_MAX_ARRAY: u64 = 4;
/// A path the model may write: real ids and keys only, no placeholders.
pub const REQUEST_PATH_PATTERN: &str = "^/(nodes|edges)/[a-z0-9|_-]+(/[a-z_]+)?$";

/// The patch schema as sent in `response_format`, derived from the shared
/// one: without the keywords servers choke on (`$schema`, `$id`, the
/// `if`/`then` rule) and tighter where generation needs it (fewer ops,
/// shorter strings and arrays, no `provenance`, paths without placeholders
/// such as `<id>`). Replies are still validated against the full schema.
pub fn request_schema() -> Value {
    let mut v: Value = serde_json::from_str(PATCH_SCHEMA).unwrap_or(Value::Null);
    if let Some(obj) = v.as_object_mut() {
        obj.remove("$schema");
        obj.remove("$id");
    }
    if let Some(items) = v
        .pointer_mut("/properties/ops/items")
        .and_then(Value::as_object_mut)
    {
        items.remove("allOf");
    }
    if let Some(ops) = v
        .pointer_mut("/properties/ops")
        .and_then(Value::as_object_mut)
    {
        ops.insert("maxItems".into(), Value::from(REQUEST_MAX_OPS));
    }
    if let Some(path) = v
        .pointer_mut("/properties/ops/items/properties/path")
        .and_then(Value::as_object_mut)
    {
        path.insert("pattern".into(), Value::from(REQUEST_PATH_PATTERN));
    }
    if let Some(props) = v
        .pointer_mut("/$defs/node/properties")
        .and_then(Value::as_object_mut)
    {
        props.remove("provenance");
    }
    tighten(&mut v);
    if let Some(ops) = v
        .pointer_mut("/properties/ops")
        .and_then(Value::as_object_mut)
    {
        ops.insert("maxItems".into(), Value::from(REQUEST_MAX_OPS));
    }
    v
}

/// Caps every `maxLength` and `maxItems` (the ops list's is set afterwards).
fn tighten(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                match (k.as_str(), child.as_u64()) {
                    ("maxLength", Some(n)) => *child = Value::from(n.min(REQUEST_MAX_STRING)),
                    ("maxItems", Some(n)) => *child = Value::from(n.min(REQUEST_MAX_ARRAY)),
                    _ => tighten(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tighten),
        _ => {}
    }
}

/// Existing nodes whose names occur in the turns (word-bounded, normalised).
pub fn mentioned_nodes(graph: &Graph, turns: &[Turn]) -> Vec<NodeId> {
    let mut text = String::from(" ");
    for t in turns {
        for part in [&t.user, &t.assistant] {
            text.push_str(&normalize_name(part));
            text.push(' ');
        }
        for f in &t.files {
            text.push_str(&normalize_name(f));
            text.push(' ');
        }
    }
    let mut out: Vec<NodeId> = graph
        .nodes_unordered()
        .filter(|n| {
            n.names()
                .any(|name| name.chars().count() >= 3 && text.contains(&format!(" {name} ")))
        })
        .map(|n| n.id.clone())
        .collect();
    out.sort();
    out
}

/// The compact graph view: (node lines, edge lines, nodes shown). The top
/// nodes by weight plus every mentioned node; edges among the shown nodes.
pub fn graph_view(graph: &Graph, mentioned: &[NodeId]) -> (String, String, usize) {
    let mut nodes: Vec<&Node> = graph.nodes_unordered().collect();
    nodes.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.id.cmp(&b.id)));
    let mut shown: BTreeSet<&NodeId> = nodes.iter().take(VIEW_TOP_NODES).map(|n| &n.id).collect();
    for id in mentioned {
        if shown.len() >= VIEW_MAX_NODES {
            break;
        }
        if let Some(n) = graph.node(id) {
            shown.insert(&n.id);
        }
    }
    let mut lines = String::new();
    for n in nodes.iter().filter(|n| shown.contains(&n.id)) {
        lines.push_str(&format!(
            "{} | {} | {} | {} | {:.2}\n",
            n.id,
            one_line(&redact_owned(&n.label), 80),
            n.domain.as_str(),
            n.kind.as_str(),
            n.weight
        ));
    }
    if lines.is_empty() {
        lines.push_str("(empty)\n");
    }
    let mut edges: Vec<_> = graph
        .edges()
        .into_iter()
        .filter(|e| shown.contains(&e.source) && shown.contains(&e.target))
        .collect();
    edges.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then_with(|| a.key().cmp(&b.key()))
    });
    let mut elines = String::new();
    for e in edges.iter().take(VIEW_MAX_EDGES) {
        elines.push_str(&format!("{} {:.2}\n", e.key(), e.weight));
    }
    if elines.is_empty() {
        elines.push_str("(none)\n");
    }
    (
        lines.trim_end().to_owned(),
        elines.trim_end().to_owned(),
        shown.len(),
    )
}

/// The turns as prompt text, redacted, newest kept within `max_chars`.
/// `asked` is the prompt a first turn holding only its reply answers (read
/// by the last probe): shown as context, marked as already read.
pub fn turns_text(
    turns: &[Turn],
    root: Option<&str>,
    max_chars: usize,
    asked: Option<&str>,
) -> String {
    let mut blocks: Vec<String> = Vec::new();
    let mut total = 0usize;
    let day = |t: &Turn| t.timestamp.map(|at| at.format("%Y-%m-%d (%A)").to_string());
    for (i, t) in turns.iter().enumerate().rev() {
        let mut b = String::new();
        // The day, where it changes: "the 20th" is dated by it.
        if let Some(d) = day(t).filter(|d| i == 0 || day(&turns[i - 1]).as_ref() != Some(d)) {
            b.push_str(&format!("[day {d}]\n"));
        }
        if !t.user.trim().is_empty() {
            b.push_str(&format!("[turn {}] USER: {}\n", t.index, t.user.trim()));
        } else if i == 0
            && let Some(q) = asked.map(str::trim).filter(|q| !q.is_empty())
        {
            b.push_str(&format!(
                "[turn {}] USER (read before; context only): {q}\n",
                t.index
            ));
        }
        if !t.assistant.trim().is_empty() {
            b.push_str(&format!(
                "[turn {}] ASSISTANT: {}\n",
                t.index,
                t.assistant.trim()
            ));
        }
        if !t.files.is_empty() {
            let files: Vec<String> = t
                .files
                .iter()
                .map(|f| match root {
                    Some(r) => f
                        .strip_prefix(r.trim_end_matches('/'))
                        .unwrap_or(f)
                        .trim_start_matches('/')
                        .to_owned(),
                    None => f.clone(),
                })
                .collect();
            b.push_str(&format!("[turn {}] FILES: {}\n", t.index, files.join(", ")));
        }
        let b = redact_owned(&b);
        let len = b.chars().count();
        if total + len > max_chars {
            if blocks.is_empty() {
                blocks.push(b.chars().take(max_chars).collect());
            }
            break;
        }
        total += len;
        blocks.push(b);
    }
    blocks.reverse();
    let text = blocks.concat();
    if text.trim().is_empty() {
        "(no new turns)".into()
    } else {
        text.trim_end().to_owned()
    }
}

/// A node described for the adjudication and graduation prompts (redacted).
pub fn describe_node(n: &Node) -> String {
    let mut s = format!(
        "label: {}\ndomain: {}\nkind: {}\n",
        n.label,
        n.domain.as_str(),
        n.kind.as_str()
    );
    if let Some(d) = &n.detail {
        s.push_str(&format!("detail: {d}\n"));
    }
    if !n.aliases.is_empty() {
        s.push_str(&format!("aliases: {}\n", n.aliases.join(", ")));
    }
    redact_owned(s.trim_end())
}

/// Builds the probe's (system, user) messages for one probe's input.
pub fn probe_messages(
    template: &str,
    input: &crate::probe::ProbeInput<'_>,
    mentioned: &[NodeId],
    max_chars: usize,
) -> (String, String) {
    let graph = input.graph;
    let (nodes, edges, shown) = graph_view(graph, mentioned);
    let turns = turns_text(input.turns, input.root, max_chars, input.asked);
    let now = input.now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let count = graph.node_count().to_string();
    let shown = shown.to_string();
    fill(
        template,
        &[
            ("now", &now),
            ("node_count", &count),
            ("shown", &shown),
            ("nodes", &nodes),
            ("edges", &edges),
            ("turns", &turns),
        ],
    )
}

fn one_line(s: &str, max: usize) -> String {
    let s: String = s
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "/");
    if s.chars().count() <= max {
        s
    } else {
        s.chars().take(max).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Domain;
    use chrono::{DateTime, Utc};

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
    }

    fn graph(n: usize) -> Graph {
        let mut g = Graph::new();
        for i in 0..n {
            let label = format!("Node {i}");
            if let Some(id) = NodeId::slug(&label) {
                g.upsert_node(Node::new(
                    id,
                    &label,
                    Domain::Technical,
                    (i as f64) / (n as f64),
                    now(),
                ));
            }
        }
        g
    }

    #[test]
    fn view_keeps_top_nodes_and_mentioned_ones() {
        let g = graph(200);
        let turns = vec![Turn {
            index: 1,
            user: "what about node 3?".into(),
            ..Turn::default()
        }];
        let mentioned = mentioned_nodes(&g, &turns);
        assert_eq!(
            mentioned,
            NodeId::slug("node 3").into_iter().collect::<Vec<_>>()
        );
        let (nodes, _, shown) = graph_view(&g, &mentioned);
        assert_eq!(shown, VIEW_TOP_NODES + 1);
        assert!(nodes.contains("node-199 | Node 199"), "{nodes}");
        assert!(nodes.contains("node-3 | Node 3"), "{nodes}");
        assert!(!nodes.contains("node-4 |"), "{nodes}");
    }

    #[test]
    fn secrets_never_reach_the_prompt() {
        let turns = vec![Turn {
            index: 2,
            user: "use key sk-proj-abcdefghijklmnopqrstuvwx123456 for the test".into(),
            assistant: "ok".into(),
            ..Turn::default()
        }];
        let graph = Graph::new();
        let input = crate::probe::ProbeInput {
            session: "s",
            probe_id: "p".into(),
            turns: &turns,
            graph: &graph,
            now: now(),
            root: None,
            asked: None,
        };
        let (system, user) = probe_messages(PROBE_PROMPT, &input, &[], 10_000);
        assert!(!user.contains("sk-proj-abc"), "{user}");
        assert!(user.contains("[REDACTED:"), "{user}");
        assert!(user.contains("[turn 2] USER:"));
        assert!(
            system.contains("`source|kind|target`")
                || system.contains("/edges/<source>|<kind>|<target>")
        );
        assert!(!user.contains("{{"), "unfilled placeholder in {user}");
    }

    #[test]
    fn each_day_is_named_where_it_changes() {
        let at = |d: &str| {
            DateTime::parse_from_rfc3339(d)
                .map(|t| t.with_timezone(&Utc))
                .ok()
        };
        let turn = |index: u32, when: &str| Turn {
            index,
            user: format!("prompt {index}"),
            timestamp: at(when),
            ..Turn::default()
        };
        let turns = [
            turn(1, "2026-06-05T09:00:00Z"),
            turn(2, "2026-06-05T10:00:00Z"),
            turn(3, "2026-06-08T09:00:00Z"),
        ];
        let text = turns_text(&turns, None, 10_000, None);
        assert_eq!(text.matches("[day ").count(), 2, "{text}");
        assert!(
            text.starts_with("[day 2026-06-05 (Friday)]\n[turn 1] USER: prompt 1"),
            "{text}"
        );
        assert!(
            text.contains("[turn 2] USER: prompt 2\n[day 2026-06-08 (Monday)]\n[turn 3]"),
            "{text}"
        );
    }

    #[test]
    fn turns_are_cut_to_the_newest() {
        let turns: Vec<Turn> = (1..=20)
            .map(|i| Turn {
                index: i,
                user: "x".repeat(100),
                ..Turn::default()
            })
            .collect();
        let text = turns_text(&turns, None, 500, None);
        assert!(text.contains("[turn 20]"));
        assert!(!text.contains("[turn 1]"));
        assert!(text.chars().count() <= 500);
    }

    #[test]
    fn a_reply_on_its_own_comes_with_the_question_it_answers() {
        let turns = vec![
            Turn {
                index: 4,
                assistant: "Run `zeph flash --runner jlink`.".into(),
                ..Turn::default()
            },
            Turn {
                index: 5,
                user: "thanks".into(),
                ..Turn::default()
            },
        ];
        let text = turns_text(&turns, None, 5_000, Some("how do I flash the board?"));
        assert!(
            text.starts_with(
                "[turn 4] USER (read before; context only): how do I flash the board?\n\
                 [turn 4] ASSISTANT: Run"
            ),
            "{text}"
        );
        // Only a first turn without a prompt of its own takes it.
        let text = turns_text(&turns[1..], None, 5_000, Some("how do I flash the board?"));
        assert!(!text.contains("read before"), "{text}");
    }

    #[test]
    fn request_schema_is_the_shared_one_tightened() {
        let s = request_schema();
        assert!(s.get("$id").is_none());
        assert!(s.pointer("/properties/ops/items/allOf").is_none());
        assert_eq!(
            s.pointer("/properties/ops/maxItems"),
            Some(&Value::from(REQUEST_MAX_OPS))
        );
        assert_eq!(
            s.pointer("/$defs/node/properties/detail/maxLength"),
            Some(&Value::from(REQUEST_MAX_STRING))
        );
        assert_eq!(
            s.pointer("/$defs/node/properties/aliases/maxItems"),
            Some(&Value::from(REQUEST_MAX_ARRAY))
        );
        assert_eq!(
            s.pointer("/$defs/node/properties/last_activated/maxLength"),
            Some(&Value::from(40))
        );
        assert!(s.pointer("/$defs/node/properties/provenance").is_none());
        // Every patch the tightened schema admits, the full one admits too.
        let re = regex::Regex::new(REQUEST_PATH_PATTERN).unwrap_or_else(|e| panic!("{e}"));
        for ok in [
            "/nodes/mailvane",
            "/nodes/mailvane/weight",
            "/edges/a|uses|b-c",
        ] {
            assert!(re.is_match(ok), "{ok}");
            let op = serde_json::json!({"ops": [{"op": "remove", "path": ok}]});
            assert!(crate::patch::check_schema(&op).is_ok(), "{ok}");
        }
        for bad in ["/nodes/<id>/weight", "/nodes/<new-id>", "/version"] {
            assert!(!re.is_match(bad), "{bad}");
        }
    }

    #[test]
    fn overrides_come_from_the_home() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        assert_eq!(Prompts::load(&home), Prompts::default());
        std::fs::create_dir_all(dir.path().join("prompts")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("prompts/probe.md"), "custom {{turns}}")
            .unwrap_or_else(|e| panic!("{e}"));
        let p = Prompts::load(&home);
        assert_eq!(p.probe, "custom {{turns}}");
        assert_eq!(p.graduate, GRADUATE_PROMPT);
    }
}
