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
    /// A handle from the rolling-memory block (like `technical/sqlx` or `personal/other`) or a node id.
    pub handle: String,
}

/// `memory_query` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct QueryParams {
    /// What to look for in the session's memory (names, topics, decisions).
    pub text: String,
    /// Most results (default 8).
    #[serde(default)]
    pub limit: Option<usize>,
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
        description = "Show in full a part of the session's rolling memory that the <rolling-memory> block collapsed. Pass a handle shown there (e.g. technical/sqlx, personal/other) or a node id. The expanded items gain weight."
    )]
    async fn memory_expand(
        &self,
        Parameters(p): Parameters<ExpandParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let (home, config, session) =
            (self.home.clone(), self.config.clone(), self.session.clone());
        let r = tokio::task::spawn_blocking(move || -> Result<String> {
            let id = common::pick_session(&home, session.as_deref())?;
            Ok(expand::expand(&home, &config, &id, &p.handle)?.text)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(text_result(r))
    }

    /// Searches the session's memory graph.
    #[tool(
        name = "memory_query",
        description = "Search the session's rolling memory graph (people, projects, technical choices, preferences, decisions) and say why each result matched: which words, through which relation, how recent."
    )]
    async fn memory_query(
        &self,
        Parameters(p): Parameters<QueryParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let (home, config, session) =
            (self.home.clone(), self.config.clone(), self.session.clone());
        let r = tokio::task::spawn_blocking(move || -> Result<String> {
            let id = common::pick_session(&home, session.as_deref())?;
            Ok(query::query(&home, &config, &id, &p.text, p.limit.unwrap_or(8))?.to_text())
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
        let server = MemoryServer::new(home, config, args.session)
            .serve(rmcp::transport::stdio())
            .await
            .context("starting the MCP server")?;
        server.waiting().await.context("serving MCP")?;
        Ok(())
    })
}
