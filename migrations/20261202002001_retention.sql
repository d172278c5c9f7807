-- Retention (issue 13): rows that grow per call are pruned by age, in bounded batches.
-- A thread is idle from its last use (every call through it touches `last_used_at`);
-- each index below keeps one batch an index range scan however large the table is.
ALTER TABLE threads ADD COLUMN last_used_at TIMESTAMPTZ NOT NULL DEFAULT now();
CREATE INDEX threads_last_used_idx ON threads (last_used_at);
CREATE INDEX tool_calls_created_idx ON tool_calls (created_at);
CREATE INDEX workflow_runs_created_idx ON workflow_runs (created_at);
CREATE INDEX connect_links_expires_idx ON connect_links (expires_at);
CREATE INDEX connect_links_used_idx ON connect_links (used_at) WHERE used_at IS NOT NULL;
CREATE INDEX runtime_token_revocations_expires_idx ON runtime_token_revocations (expires_at);
