-- Issue 15: a cache hit's presented text is stored once and referenced by its records.
-- Every hit of one cache entry version, presented the same way, gets the same text but for
-- its `_resultId`; the text is kept here as the parts between the id's places, and a record
-- holds only which body (`body_id`) and the id it was filled with (`body_fill`). Readers
-- rebuild the text as `array_to_string(parts, body_fill)`.
--
-- `id` is a digest of the parts, so replicas converge on one row per org. `created_at` is
-- refreshed by every writer that upserts the body (at least hourly while in use): that is
-- what lets retention delete old unreferenced bodies without racing a writer (see
-- `src/store/retention.rs`). No foreign key from `tool_calls`: its check would lock the
-- body row for every record (shared locks by many writers at once become multixacts).
CREATE TABLE tool_call_bodies (
    org_id      TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    parts       TEXT[] NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id)
);
CREATE INDEX tool_call_bodies_created_idx ON tool_call_bodies (created_at);
ALTER TABLE tool_calls ADD COLUMN body_id TEXT, ADD COLUMN body_fill TEXT;
-- retention's "no record references it", one index probe per body
CREATE INDEX tool_calls_body_idx ON tool_calls (org_id, body_id) WHERE body_id IS NOT NULL;
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        BEGIN
            EXECUTE 'ALTER TABLE tool_call_bodies ALTER COLUMN parts SET COMPRESSION lz4';
        EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
            RAISE NOTICE 'lz4 is not available: tool_call_bodies.parts keeps the default compression';
        END;
    END IF;
END $$;
