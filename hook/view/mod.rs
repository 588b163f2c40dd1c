//! `rollgraph view`: one self-contained HTML page to look at the memory.
//!
//! The page holds the graph (domains as colour groups, size by weight, the
//! focus ringed, far clusters collapsed as in the injection, supersedes
//! edges with the old side faded, anchors marked), a turn slider replaying
//! the session, a side panel for the selected node, the injection with each
//! line linked to its node, and a search box. Everything is in the file: the
//! script and style are embedded from `hook/view/page.*`, the data is JSON
//! in a non-executable `<script type="application/json">` with `<`, `>`
//! and `&` escaped, and the page only ever inserts text with `textContent`.
//! A Content-Security-Policy forbids any network access.
//!
//! Read-only: the stored state is read with `rollgraph_engine::peek`; the
//! timeline's re-run happens in a scratch directory that is removed.

pub mod data;
pub mod source;
pub mod timeline;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use rollgraph_engine::clock;
use rollgraph_engine::render::{self, RenderContext};

use crate::common::{home_and_config, out};
use data::{Builder, FrameInfo, Meta};
use source::{Kind, ScopeArgs, Source};

/// Over this many nodes the page opens with each domain collapsed.
pub const DOMAIN_COLLAPSE_AT: usize = 2_000;

const PAGE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// Arguments of `rollgraph view`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// Which graph.
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Where to write the page (default: rollgraph-<session or store>.html in the system temp directory).
    #[arg(long, short, value_name = "FILE.html")]
    pub out: Option<PathBuf>,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
}

/// Runs `rollgraph view`.
pub fn run(args: ViewArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let src = source::load(&home, &config, &args.scope)?;
    for p in &src.problems {
        eprintln!("warning: {p}");
    }
    let data = build(&src, &config)?;
    let html = page(&data)?;
    let path = match args.out {
        Some(p) => p,
        None => {
            std::env::temp_dir().join(format!("rollgraph-{}-{}.html", src.kind.as_str(), src.id))
        }
    };
    std::fs::write(&path, html.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    out(&format!(
        "wrote {} ({} nodes, {} edges, {} timeline positions, {} KB)\ntimeline: {}",
        path.display(),
        data.meta.node_count,
        data.meta.edge_count,
        data.frames.len(),
        html.len().div_ceil(1024),
        data.meta.timeline
    ))?;
    if args.open {
        open_in_browser(&path);
    }
    Ok(())
}

/// Builds the page's data for a source: the timeline (sessions), then the
/// stored state now as the last frame.
pub fn build(src: &Source, config: &rollgraph_engine::Config) -> Result<data::Data> {
    let now = clock::now();
    let mut b = Builder::default();
    let mut meta = Meta {
        kind: src.kind.as_str().to_owned(),
        name: src.name.clone(),
        generated: now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        node_count: src.graph.node_count(),
        edge_count: src.graph.edge_count(),
        problems: src.problems.clone(),
        domain_collapse_at: DOMAIN_COLLAPSE_AT,
        ..Meta::default()
    };
    let (session_name, turn) = match (&src.session, src.kind) {
        (Some(s), Kind::Session) => {
            let made = timeline::session_frames(&mut b, s, &src.graph, config)?;
            meta.timeline = made.note;
            meta.timeline_matches = made.matches;
            (s.state.session.clone(), s.state.turn)
        }
        _ => {
            meta.timeline = format!(
                "a warm graph has no turns: only its state now ({} store)",
                src.kind.as_str()
            );
            (src.kind.as_str().to_owned(), 0)
        }
    };
    // The stored state now, rendered exactly as `rollgraph render` does.
    let r = render::render(
        &src.graph,
        &src.focus,
        &RenderContext {
            session: &session_name,
            turn,
            now,
        },
        &config.render,
    );
    let focus = if src.kind == Kind::Session {
        src.focus.clone()
    } else {
        r.focus.clone()
    };
    b.frame(
        FrameInfo {
            title: "now".into(),
            turn,
            time: Some(now),
            ..FrameInfo::default()
        },
        Some(&src.graph),
        &src.graph,
        &focus,
        (!r.text.is_empty()).then_some((r.text.as_str(), r.tokens)),
    );
    Ok(b.finish(&src.graph, meta))
}

/// JSON safe inside a `<script>` element: no `<`, `>`, `&`, line
/// separators or bidi controls survive unescaped, so no label can close the
/// element or reorder the page's source.
pub fn script_json<T: serde::Serialize>(value: &T) -> Result<String> {
    let raw = serde_json::to_string(value)?;
    let mut s = String::with_capacity(raw.len() + raw.len() / 16);
    for c in raw.chars() {
        match c {
            '<' => s.push_str("\\u003c"),
            '>' => s.push_str("\\u003e"),
            '&' => s.push_str("\\u0026"),
            // Line separators, and bidi controls so the page's source reads as it runs.
            '\u{2028}'
            | '\u{2029}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{061C}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}' => {
                s.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => s.push(c),
        }
    }
    Ok(s)
}

/// Text for an HTML element or attribute.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page: the template with its slots filled in one pass (a slot
/// name inside the data is never expanded).
pub fn page(data: &data::Data) -> Result<String> {
    let json = script_json(data)?;
    let title = html_escape(&format!(
        "rollgraph — {} {}",
        data.meta.kind, data.meta.name
    ));
    let mut html = String::with_capacity(PAGE.len() + STYLE.len() + SCRIPT.len() + json.len());
    let mut rest = PAGE;
    while let Some(start) = rest.find("{{") {
        html.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            html.push_str(&rest[start..]);
            rest = "";
            break;
        };
        match &after[..end] {
            "TITLE" => html.push_str(&title),
            "STYLE" => html.push_str(STYLE),
            "SCRIPT" => html.push_str(SCRIPT),
            "DATA" => html.push_str(&json),
            other => anyhow::bail!("page template has an unknown slot {other:?}"),
        }
        rest = &after[end + 2..];
    }
    html.push_str(rest);
    Ok(html)
}

/// Opens a file in the desktop's browser; says so when it cannot.
fn open_in_browser(path: &std::path::Path) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    match std::process::Command::new(opener)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        Ok(_) => {}
        Err(e) => eprintln!(
            "could not start {opener} ({e}); open {} in a browser",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_script_element() {
        let evil = "</script><script>alert(1)</script>&\u{2028}\u{202E}x\u{2066}";
        let s = script_json(&serde_json::json!({ "l": evil })).unwrap_or_default();
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{202E}') && !s.contains('\u{2066}') && !s.contains('\u{2028}'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap_or_default();
        assert_eq!(back["l"], evil);
    }

    #[test]
    fn html_escape_escapes_markup() {
        assert_eq!(
            html_escape("<a href=\"x\">'&"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
        );
    }
}
