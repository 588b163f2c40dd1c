//! `rollgraph export`: the stored graph as Graphviz DOT, JSON or GraphML,
//! for Graphviz, Gephi and scripts. Read-only, and deterministic: the same
//! state gives the same bytes (nodes and edges in key order, no clock).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use rollgraph_engine::graph::{Domain, EdgeKind, Graph, GraphDoc, NodeId};

use crate::common::{home_and_config, out};
use crate::view::source::{self, ScopeArgs};

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Graphviz (`dot -Tsvg`): one cluster per domain, supersedes dashed, the old side faded.
    Dot,
    /// The graph document (`schemas/graph.schema.json`), as `show --json` prints it.
    Json,
    /// GraphML (Gephi, yEd, networkx) with every node and edge attribute.
    Graphml,
}

/// Arguments of `rollgraph export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Which graph.
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
}

/// Runs `rollgraph export`.
pub fn run(args: ExportArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let started = std::time::Instant::now();
    let src = source::load(&home, &config, &args.scope)?;
    for p in &src.problems {
        eprintln!("warning: {p}");
    }
    let loaded = started.elapsed();
    let text = export(&src.graph, &src.focus, args.format, &src.name)?;
    // `ROLLGRAPH_LOG=debug` shows where the time goes.
    tracing::debug!(
        "export: {} nodes read in {:.1} ms, written as {:?} in {:.1} ms",
        src.graph.node_count(),
        loaded.as_secs_f64() * 1e3,
        args.format,
        (started.elapsed() - loaded).as_secs_f64() * 1e3
    );
    match &args.out {
        Some(path) => std::fs::write(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display())),
        None => out(&text),
    }
}

/// The graph in one format. `focus` is ringed in DOT and flagged in GraphML.
pub fn export(g: &Graph, focus: &[NodeId], format: Format, name: &str) -> Result<String> {
    let doc = g.to_doc();
    Ok(match format {
        Format::Json => serde_json::to_string_pretty(&doc)?,
        Format::Dot => dot(g, &doc, focus, name),
        Format::Graphml => graphml(g, &doc, focus),
    })
}

/// Fill colours of the four domains (the same as the page's).
pub fn domain_colour(d: Domain) -> &'static str {
    match d {
        Domain::Relationship => "#e07a5f",
        Domain::Project => "#3d85c6",
        Domain::Technical => "#6aa84f",
        Domain::Personal => "#a64d79",
    }
}

/// A DOT string literal: quotes and backslashes escaped, line breaks as `\n`.
fn dot_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn dot(g: &Graph, doc: &GraphDoc, focus: &[NodeId], name: &str) -> String {
    let focus: std::collections::BTreeSet<&str> = focus.iter().map(NodeId::as_str).collect();
    let mut s = String::with_capacity(doc.nodes.len() * 160 + doc.edges.len() * 80);
    let _ = writeln!(s, "digraph rollgraph {{");
    let _ = writeln!(
        s,
        "  graph [label={}, labelloc=t, fontname=\"Helvetica\", rankdir=LR, overlap=false];",
        dot_str(&format!("rollgraph: {name}"))
    );
    let _ = writeln!(
        s,
        "  node [shape=ellipse, style=filled, fontname=\"Helvetica\", fontsize=10];"
    );
    let _ = writeln!(s, "  edge [fontname=\"Helvetica\", fontsize=8];");
    for d in Domain::ALL {
        let members: Vec<_> = doc.nodes.values().filter(|n| n.domain == d).collect();
        if members.is_empty() {
            continue;
        }
        let _ = writeln!(s, "  subgraph cluster_{} {{", d.as_str());
        let _ = writeln!(
            s,
            "    label={}; color={}; fontcolor={};",
            dot_str(d.as_str()),
            dot_str(domain_colour(d)),
            dot_str(domain_colour(d))
        );
        for n in members {
            let superseded = g.superseded_by(&n.id).is_some();
            let mut attrs = vec![
                format!("label={}", dot_str(&n.label)),
                format!(
                    "fillcolor={}",
                    dot_str(&format!(
                        "{}{}",
                        domain_colour(d),
                        if superseded { "40" } else { "cc" }
                    ))
                ),
                format!("width={:.2}", 0.3 + n.weight * 1.2),
                format!("rg_weight={:.3}", n.weight),
                format!("rg_kind={}", dot_str(n.kind.as_str())),
            ];
            let mut style = vec!["filled"];
            if superseded {
                style.push("dashed");
                attrs.push("fontcolor=\"#888888\"".into());
            }
            if n.anchor {
                attrs.push("shape=box".into());
                style.push("rounded");
            }
            if focus.contains(n.id.as_str()) {
                attrs.push("peripheries=2".into());
                attrs.push("penwidth=2".into());
            }
            attrs.push(format!("style={}", dot_str(&style.join(","))));
            if let Some(d) = &n.detail {
                attrs.push(format!("tooltip={}", dot_str(d)));
            }
            let _ = writeln!(s, "    {} [{}];", dot_str(n.id.as_str()), attrs.join(", "));
        }
        let _ = writeln!(s, "  }}");
    }
    for e in doc.edges.values() {
        let mut attrs = vec![
            format!("label={}", dot_str(e.kind.as_str())),
            format!("penwidth={:.2}", 0.5 + e.weight * 2.0),
        ];
        if e.kind == EdgeKind::Supersedes {
            attrs.push("style=dashed".into());
            attrs.push("color=\"#cc0000\"".into());
        } else if e.kind == EdgeKind::Contradicts {
            attrs.push("color=\"#e69138\"".into());
        }
        let _ = writeln!(
            s,
            "  {} -> {} [{}];",
            dot_str(e.source.as_str()),
            dot_str(e.target.as_str()),
            attrs.join(", ")
        );
    }
    s.push_str("}\n");
    s
}

/// XML text and attribute escaping; characters XML 1.0 forbids are dropped.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

fn graphml(g: &Graph, doc: &GraphDoc, focus: &[NodeId]) -> String {
    let focus: std::collections::BTreeSet<&str> = focus.iter().map(NodeId::as_str).collect();
    let mut s = String::with_capacity(doc.nodes.len() * 400 + doc.edges.len() * 200);
    s.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str("<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n");
    let keys: [(&str, &str, &str, &str); 14] = [
        ("label", "node", "label", "string"),
        ("domain", "node", "domain", "string"),
        ("kind", "node", "kind", "string"),
        ("weight", "node", "weight", "double"),
        ("last_activated", "node", "last_activated", "string"),
        ("detail", "node", "detail", "string"),
        ("aliases", "node", "aliases", "string"),
        ("anchor", "node", "anchor", "boolean"),
        ("superseded", "node", "superseded", "boolean"),
        ("focus", "node", "focus", "boolean"),
        ("sessions", "node", "sessions", "string"),
        ("color", "node", "color", "string"),
        ("ekind", "edge", "kind", "string"),
        ("eweight", "edge", "weight", "double"),
    ];
    for (id, target, name, ty) in keys {
        let _ = writeln!(
            s,
            "  <key id=\"{id}\" for=\"{target}\" attr.name=\"{name}\" attr.type=\"{ty}\"/>"
        );
    }
    s.push_str("  <graph id=\"rollgraph\" edgedefault=\"directed\">\n");
    for n in doc.nodes.values() {
        let _ = writeln!(s, "    <node id=\"{}\">", xml(n.id.as_str()));
        let mut data = |k: &str, v: &str| {
            let _ = writeln!(s, "      <data key=\"{k}\">{}</data>", xml(v));
        };
        data("label", &n.label);
        data("domain", n.domain.as_str());
        data("kind", n.kind.as_str());
        data("weight", &format!("{}", n.weight));
        data("last_activated", &n.last_activated.to_rfc3339());
        if let Some(d) = &n.detail {
            data("detail", d);
        }
        if !n.aliases.is_empty() {
            data("aliases", &n.aliases.join("; "));
        }
        data("anchor", if n.anchor { "true" } else { "false" });
        data(
            "superseded",
            if g.superseded_by(&n.id).is_some() {
                "true"
            } else {
                "false"
            },
        );
        data(
            "focus",
            if focus.contains(n.id.as_str()) {
                "true"
            } else {
                "false"
            },
        );
        if !n.provenance.is_empty() {
            let p: Vec<String> = n
                .provenance
                .iter()
                .map(|p| format!("{}:{}-{}", p.session, p.first_turn, p.last_turn))
                .collect();
            data("sessions", &p.join("; "));
        }
        data("color", domain_colour(n.domain));
        s.push_str("    </node>\n");
    }
    for (key, e) in &doc.edges {
        let _ = writeln!(
            s,
            "    <edge id=\"{}\" source=\"{}\" target=\"{}\">\n      <data key=\"ekind\">{}</data>\n      <data key=\"eweight\">{}</data>\n    </edge>",
            xml(key),
            xml(e.source.as_str()),
            xml(e.target.as_str()),
            e.kind.as_str(),
            e.weight
        );
    }
    s.push_str("  </graph>\n</graphml>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_strings_cannot_break_out() {
        assert_eq!(dot_str("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    }

    #[test]
    fn xml_escapes_markup_and_drops_forbidden_controls() {
        assert_eq!(
            xml("<script>&\"'\u{1}x"),
            "&lt;script&gt;&amp;&quot;&apos;x"
        );
    }
}
