-- What a provider is (issue 12): an upstream HTTP API ('api'), an MCP server over
-- streamable HTTP ('mcp', its endpoint kept in base_url), or a connected-app toolkit ('app').
ALTER TABLE providers
    ADD COLUMN kind TEXT NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'mcp', 'app'));
