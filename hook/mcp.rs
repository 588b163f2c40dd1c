//! `rollgraph mcp`: a stdio MCP server with `memory_expand` and
//! `memory_query`, the same as `rollgraph expand` and `rollgraph query`.
//!
//! Nothing but protocol goes to stdout (logs go to stderr). Each call
//! resolves the session the way the CLI does (the latest one in the
//! server's directory, else the latest) and runs in a blocking task, since
//! it may open the session's files.

use anyhow::{Context, Result};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use rollgraph_engine::Config;
use rollgraph_engine::store::Home;
use serde::Deserialize;

use crate::{common, expand, query};

/// Serve the memory tools over MCP (stdio).
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Always address this session (default: the latest one in the server's directory).
    #[arg(long)]
    pub session: Option<String>,
}

/// `memory_expand` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ExpandParams {
    /// A handle from the rolling-memory block (like `technical/queue` or `personal/other`), a node id, or an id from a memory_query answer.
    pub handle: String,
    /// Token budget of the answer (cl100k tokens, 60 to 20000).
    #[serde(default = "default_budget")]
    #[schemars(transform = no_format)]
    pub budget: u32,
}

/// `memory_query` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct QueryParams {
    /// The question or words to look for: names, topics, decisions, what someone said.
    pub text: String,
    /// Most results listed.
    #[serde(default = "default_limit")]
    #[schemars(transform = no_format)]
    pub limit: u32,
    /// Token budget of the answer (cl100k tokens, 60 to 20000).
    #[serde(default = "default_budget")]
    #[schemars(transform = no_format)]
    pub budget: u32,
    /// What to search: `session`, `project` (the project's memory across sessions), `session-project` (the default), or `all`.
    #[serde(default = "default_scope")]
    pub scope: String,
}

fn default_scope() -> String {
    "session-project".into()
}

fn default_limit() -> u32 {
    12
}

fn default_budget() -> u32 {
    rollgraph_engine::search::DEFAULT_BUDGET as u32
}

/// Drops schemars' `"format": "uint"` (not a JSON Schema format: Gemini CLI
/// warns `unknown format "uint" ignored` on every tool call); the type and
/// `minimum` stay.
fn no_format(schema: &mut schemars::Schema) {
    schema.remove("format");
}

/// The MCP server.
#[derive(Clone)]
pub struct MemoryServer {
    home: Home,
    config: Config,
    session: Option<String>,
    tool_router: ToolRouter<MemoryServer>,
}

fn text_result(r: Result<String>) -> CallToolResult {
    match r {
        Ok(t) => CallToolResult::success(vec![ContentBlock::text(t)]),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("{e:#}"))]),
    }
}

#[tool_router]
impl MemoryServer {
    fn new(home: Home, config: Config, session: Option<String>) -> MemoryServer {
        MemoryServer {
            home,
            config,
            session,
            tool_router: Self::tool_router(),
        }
    }

    /// Expands a collapsed part of the rolling memory.
    #[tool(
        name = "memory_expand",
        description = "Show in full a part of the rolling memory that the <rolling-memory> block collapsed or a memory_query answer listed under 'more'. Pass a handle shown there (e.g. technical/queue, personal/other) or a node id. Answers within a token budget (most relevant first, then the rest by name to expand further); what it shows gains a little weight. Call it when the block mentions something you need in detail.",
        // It raises weights in rollgraph's own state: not read-only, never
        // destructive, nothing outside. Hosts that gate unannotated tools
        // (Codex refuses them under `approval_policy = "never"`) let it run.
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn memory_expand(
        &self,
        Parameters(p): Parameters<ExpandParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let (home, config, session) =
            (self.home.clone(), self.config.clone(), self.session.clone());
        let r = tokio::task::spawn_blocking(move || -> Result<String> {
            let id = common::pick_session(&home, session.as_deref())?;
            Ok(expand::expand(&home, &config, &id, &p.handle, p.budget as usize)?.text)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(text_result(r))
    }

    /// Searches the session's memory graph.
    #[tool(
        name = "memory_query",
        description = "Search the memory of this session and project: decisions (current and superseded), people, facts, rules, preferences, and what the user and you actually said, with turn and date. Call it before answering a question about something discussed earlier that the <rolling-memory> block does not show, or to check what was decided before. Answers within a token budget (default 800); a result found through a link, a day or a replaced decision says so.",
        // Reads the graph (the only write is the session's query count).
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_query(
        &self,
        Parameters(p): Parameters<QueryParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let (home, config, session) =
            (self.home.clone(), self.config.clone(), self.session.clone());
        let r = tokio::task::spawn_blocking(move || -> Result<String> {
            let id = common::pick_session(&home, session.as_deref())?;
            let scope = p.scope.parse().map_err(|e: String| anyhow::anyhow!(e))?;
            let ask = query::Ask {
                text: p.text,
                limit: p.limit as usize,
                budget: p.budget as usize,
                scope,
            };
            Ok(query::query(&home, &config, &id, &ask)?.to_text())
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(text_result(r))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rollgraph", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "rollgraph keeps a rolling memory graph of this session and injects a <rolling-memory> summary before each prompt. \
                 Use memory_expand with a handle from that block to see a collapsed part in full, and memory_query to search it.",
            )
    }
}

/// `rollgraph mcp`.
pub fn run(args: McpArgs) -> Result<()> {
    // Queries answered here (no daemon listening) keep their index while
    // the files it came from stay as they were.
    query::keep_indexes();
    let home = Home::from_env();
    let config = Config::load_default(home.root())?;
    let home = home.with_aside_limits(config.store.aside_limits());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(2)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(async move {
        let server = MemoryServer::new(home, config, args.session);
        serve_checked(server).await
    })
}

/// The JSON-RPC error for a line the protocol library would drop without a
/// word: a request whose `params` (or a tool call's `arguments`) is not an
/// object, or a line that is not JSON at all.
fn reject(line: &str) -> Option<String> {
    use serde_json::{Value, json};
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return Some(
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error: not JSON"}})
                .to_string(),
        );
    };
    let id = v.get("id")?;
    v.get("method")?;
    let not_object = |p: Option<&Value>| p.is_some_and(|p| !p.is_object() && !p.is_null());
    let what = if not_object(v.get("params")) {
        "params must be an object"
    } else if v["method"] == "tools/call" && not_object(v["params"].get("arguments")) {
        "arguments must be an object"
    } else {
        return None;
    };
    Some(
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": format!("invalid params: {what}")}})
            .to_string(),
    )
}

/// Serves MCP over stdio, answering malformed requests with a JSON-RPC
/// error instead of silence: stdin lines are checked before the protocol
/// library sees them, and one writer puts its replies and ours on stdout,
/// a whole line at a time.
async fn serve_checked(server: MemoryServer) -> Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let (lines, mut out_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut l) = out_rx.recv().await {
            if !l.ends_with('\n') {
                l.push('\n');
            }
            if stdout.write_all(l.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let relay = {
        let lines = lines.clone();
        tokio::spawn(async move {
            let mut r = BufReader::new(from_server).lines();
            while let Ok(Some(l)) = r.next_line().await {
                if lines.send(l).is_err() {
                    break;
                }
            }
        })
    };
    let feeder = tokio::spawn(async move {
        let mut to_server = to_server;
        let mut stdin = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(l)) = stdin.next_line().await {
            if let Some(err) = reject(&l) {
                if lines.send(err).is_err() {
                    break;
                }
                continue;
            }
            if to_server
                .write_all(format!("{l}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
        // EOF: the server sees its input end and stops.
        let _ = to_server.shutdown().await;
    });
    let running = server
        .serve((server_in, server_out))
        .await
        .context("starting the MCP server")?;
    running.waiting().await.context("serving MCP")?;
    feeder.abort();
    let _ = relay.await;
    let _ = writer.await;
    Ok(())
}
