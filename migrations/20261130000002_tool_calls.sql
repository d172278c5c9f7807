-- One row per tool call, so a client that disconnected mid-walk can read the outcome.
CREATE TABLE tool_calls (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    thread_id    TEXT NOT NULL,
    caller       TEXT NOT NULL,
    name         TEXT NOT NULL,
    arguments    JSONB NOT NULL,
    status       TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed')),
    result       JSONB,
    error        JSONB,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at  TIMESTAMPTZ,
    FOREIGN KEY (org_id, thread_id) REFERENCES threads (org_id, id) ON DELETE CASCADE
);
CREATE INDEX tool_calls_thread_idx ON tool_calls (org_id, thread_id, created_at DESC);
