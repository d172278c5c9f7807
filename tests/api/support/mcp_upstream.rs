//! A real MCP server (rmcp, streamable HTTP, stateful sessions) for the M1 tests:
//! `tools/list` pages by cursor (two tools a page); `list_contacts` pages its 45 rows by
//! cursor (`cursor`/`limit` in, `nextCursor` out in `structuredContent`); `report` answers
//! with about 800 KB of JSON as text content; `greet` answers plain text; `broken` answers
//! `isError: true`; `slow_contacts` pages like `list_contacts`, five rows and 250 ms a page. It records the `Authorization` header of every request.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};

pub const CONTACTS: usize = 45;

#[derive(Clone, Default)]
pub struct McpUpstream {
    pub auth: Arc<Mutex<Vec<String>>>,
    pub calls: Arc<Mutex<Vec<(String, Value)>>>,
    /// Extra tools listed (for re-sync tests).
    pub extra: Arc<Mutex<Vec<&'static str>>>,
}

fn schema(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn tools(extra: &[&'static str]) -> Vec<Tool> {
    let mut all = vec![
        Tool::new(
            "list_contacts",
            "List contacts, a page at a time",
            schema(json!({"type": "object", "properties": {
                "cursor": {"type": "string", "description": "from nextCursor"},
                "limit": {"type": "integer", "maximum": 20}}})),
        ),
        Tool::new(
            "report",
            "The yearly report",
            schema(json!({"type": "object", "properties": {}})),
        ),
        Tool::new(
            "greet",
            "Says hello",
            schema(json!({"type": "object", "properties": {"who": {"type": "string"}}})),
        ),
        Tool::new("broken", "Always fails", schema(json!({"type": "object"}))),
        Tool::new(
            "slow_contacts",
            "List contacts slowly, five a page",
            schema(json!({"type": "object", "properties": {
                "cursor": {"type": "string"}, "limit": {"type": "integer", "maximum": 5}}})),
        ),
        Tool::new(
            "docs.search",
            "A dotted name",
            schema(json!({"type": "object", "properties": {"q": {"type": "string"}}})),
        ),
    ];
    for name in extra {
        all.push(Tool::new(
            *name,
            "added later",
            schema(json!({"type": "object"})),
        ));
    }
    all
}

fn contact(i: usize) -> Value {
    json!({"id": i, "name": format!("Contact {i}"), "email": format!("c{i}@example.com")})
}

impl ServerHandler for McpUpstream {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.record_auth(&ctx);
        let all = tools(&self.extra.lock().unwrap());
        let start: usize = request
            .and_then(|r| r.cursor)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let end = (start + 2).min(all.len());
        let mut page = ListToolsResult::with_all_items(all[start.min(end)..end].to_vec());
        page.next_cursor = (end < all.len()).then(|| end.to_string());
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.record_auth(&ctx);
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        self.calls
            .lock()
            .unwrap()
            .push((request.name.to_string(), args.clone()));
        let result = match request.name.as_ref() {
            "list_contacts" | "slow_contacts" => {
                let slow = request.name == "slow_contacts";
                if slow {
                    // long enough a walk for progress reports (S1), no timing asserted
                    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                }
                let max = if slow { 5 } else { 20 };
                let limit = args["limit"].as_u64().unwrap_or(10).min(max) as usize;
                let start: usize = args["cursor"]
                    .as_str()
                    .and_then(|c| c.strip_prefix("c-"))
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let end = (start + limit).min(CONTACTS);
                let items: Vec<Value> = (start..end).map(contact).collect();
                let mut body = json!({"items": items});
                if end < CONTACTS {
                    body["nextCursor"] = json!(format!("c-{end}"));
                }
                CallToolResult::structured(body)
            }
            "report" => {
                let rows: Vec<Value> = (0..4000)
                    .map(|i| {
                        json!({"id": i, "region": if i % 2 == 0 { "north" } else { "south" },
                        "note": "x".repeat(150)})
                    })
                    .collect();
                let text = json!({"title": "Yearly report", "rows": rows}).to_string();
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            "greet" => CallToolResult::success(vec![ContentBlock::text(format!(
                "Hello, {}!",
                args["who"].as_str().unwrap_or("world")
            ))]),
            "broken" => CallToolResult::error(vec![ContentBlock::text(
                "the archive is offline until Monday",
            )]),
            // extra tools named `echo…` (secrets test): the Authorization header seen,
            // echoed in structured content, JSON text, plain text or an error text
            "echo_structured" => CallToolResult::structured(
                json!({"items": [{"id": 1, "seen": auth_of(&ctx)}], "note": auth_of(&ctx)}),
            ),
            "echo_json_text" => CallToolResult::success(vec![ContentBlock::text(
                json!({"items": [{"id": 1, "seen": auth_of(&ctx)}]}).to_string(),
            )]),
            "echo_text" => CallToolResult::success(vec![ContentBlock::text(format!(
                "you sent {}",
                auth_of(&ctx)
            ))]),
            "echo_error" => CallToolResult::error(vec![ContentBlock::text(format!(
                "refused the key {}",
                auth_of(&ctx)
            ))]),
            _ => CallToolResult::success(vec![ContentBlock::text("[]")]),
        };
        Ok(result.into())
    }
}

/// The `Authorization` header of the HTTP request carrying this MCP request.
fn auth_of(ctx: &RequestContext<RoleServer>) -> String {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.headers.get("authorization"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

impl McpUpstream {
    fn record_auth(&self, ctx: &RequestContext<RoleServer>) {
        if ctx.extensions.get::<http::request::Parts>().is_some() {
            self.auth.lock().unwrap().push(auth_of(ctx));
        }
    }

    /// Every request so far carried exactly this `Authorization` header.
    pub fn assert_auth(&self, expected: &str) {
        let seen = self.auth.lock().unwrap();
        assert!(
            !seen.is_empty() && seen.iter().all(|a| a == expected),
            "{seen:?}"
        );
    }

    /// Serves it on 127.0.0.1; the endpoint is `http://{addr}/mcp`.
    pub async fn start(&self) -> String {
        let handler = self.clone();
        let service: StreamableHttpService<McpUpstream, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(handler.clone()),
                Default::default(),
                StreamableHttpServerConfig::default(),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let svc = TowerToHyperService::new(service.clone());
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        format!("http://{addr}/mcp")
    }
}
