-- Nothing lost under faults (K1, K2).
-- K1: a replica's heartbeat, so the records of calls it was running when it died are
-- closed by whichever replica notices (call::call_records), not left `running` for ever.
CREATE TABLE replica_leases (
    replica_id TEXT PRIMARY KEY,
    seen_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- the replica running a streamed call (NULL for calls written once, finished)
ALTER TABLE tool_calls ADD COLUMN replica_id TEXT;
CREATE INDEX tool_calls_running_idx ON tool_calls (replica_id) WHERE status = 'running';
-- K2: stored results made while Redis is out of reach, so every replica reads them
-- (results::stored_results); pruned once expired (store::retention).
CREATE TABLE result_copies (
    org_id     TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org_id, key)
);
CREATE INDEX result_copies_expiry_idx ON result_copies (expires_at);
