-- M2: sessions of the agents' MCP servers, issued at `initialize`. The source of truth
-- for every replica: a session is live while not ended and used within the server's
-- idle TTL (`mcp_server_session_idle_seconds`).
CREATE TABLE mcp_sessions (
    id               TEXT PRIMARY KEY,
    org_id           TEXT NOT NULL,
    agent_id         TEXT NOT NULL,
    -- the caller that opened it (`user:<id>` or `key:<id>`): nobody else reaches it
    owner            TEXT NOT NULL,
    protocol_version TEXT NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    ended_at         TIMESTAMPTZ,
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE CASCADE
);
CREATE INDEX mcp_sessions_last_seen_idx ON mcp_sessions (last_seen_at);

-- M2: what an upstream MCP tool's `tools/list` entry says beyond name, description and
-- schema (`title`, `annotations`, `outputSchema`), served again in the agent's tools/list.
ALTER TABLE tools ADD COLUMN mcp_meta JSONB CHECK (mcp_meta IS NULL OR jsonb_typeof(mcp_meta) = 'object');
