-- D5: a tool's sentence vector, kept with the tool: computed once per embedded text and
-- model (any replica, any restart reads it back), gone with the tool.
CREATE TABLE tool_vectors (
    org_id      TEXT NOT NULL,
    tool_id     TEXT NOT NULL,
    model       TEXT NOT NULL,
    text_sha256 BYTEA NOT NULL CHECK (length(text_sha256) = 32),
    vector      BYTEA NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, tool_id, model),
    FOREIGN KEY (org_id, tool_id) REFERENCES tools (org_id, id) ON DELETE CASCADE
);
