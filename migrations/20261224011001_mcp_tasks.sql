-- M3: tasks of the agents' MCP servers (MCP 2025-11-25): a `tools/call` answered as a
-- task runs as a live tool call (its `tool_calls` row says running, succeeded or
-- failed); this row is what the client names (`task_…`, random), in the session that
-- created it, and what only a task has: its TTL, its last progress and its cancel. Every
-- replica reads it, so any replica answers `tasks/get`, `tasks/result`, `tasks/cancel`.
CREATE TABLE mcp_tasks (
    id             TEXT PRIMARY KEY,
    org_id         TEXT NOT NULL,
    session_id     TEXT NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
    -- the tool call's record (`tool_calls.id`, same org); no foreign key: retention
    -- deletes calls on their own schedule, and a task without its call is not found
    call_id        TEXT NOT NULL,
    -- milliseconds from creation the task is kept (the client's ask, bounded)
    ttl_ms         BIGINT NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- the walk's last progress, as `statusMessage`
    status_message TEXT,
    -- set once by `tasks/cancel`: the task is `cancelled` from then on, whatever its call did
    cancelled_at   TIMESTAMPTZ
);
CREATE INDEX mcp_tasks_session_idx ON mcp_tasks (session_id, id);
