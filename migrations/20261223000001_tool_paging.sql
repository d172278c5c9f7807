-- P14: what walks learned about a tool's paging (its first page number, a page size the
-- API caps silently, where the next position and the total live, paging seen only in
-- responses), kept with the tool for every replica, with when a walk last confirmed it;
-- gone with the tool.
CREATE TABLE tool_paging (
    org_id       TEXT NOT NULL,
    tool_id      TEXT NOT NULL,
    learned      JSONB NOT NULL,
    confirmed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, tool_id),
    FOREIGN KEY (org_id, tool_id) REFERENCES tools (org_id, id) ON DELETE CASCADE
);
