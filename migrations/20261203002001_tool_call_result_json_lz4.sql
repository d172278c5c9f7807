-- Issue 15: a tool call's result is stored as the text the engine wrote (json, not jsonb:
-- nobody queries inside it, and parsing 25 KB into jsonb cost Postgres more than the rest of
-- the write), compressed with lz4 where the server has it (pglz otherwise). Measured with
-- `cargo test --test api record_write_cost -- --ignored --nocapture`: Postgres CPU per
-- record with a 25 KB result, 32 at once, 0.59 ms (jsonb, pglz) -> 0.17 ms (json, lz4).
ALTER TABLE tool_calls ALTER COLUMN result TYPE json USING result::json;
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        BEGIN
            EXECUTE 'ALTER TABLE tool_calls ALTER COLUMN result SET COMPRESSION lz4';
        EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
            RAISE NOTICE 'lz4 is not available: tool_calls.result keeps the default compression';
        END;
    END IF;
END $$;
