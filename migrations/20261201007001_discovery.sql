-- Tool discovery and connected apps (LOOP_ENGINE D1–D4, issue 11).

-- D1: the agent's own direct-tool budget; NULL means the deployment-wide setting.
ALTER TABLE agents
    ADD COLUMN direct_tool_budget INTEGER CHECK (direct_tool_budget BETWEEN 0 AND 1000);

-- D1: tools loaded with load_tool, per thread (so every replica and a restart agree).
CREATE TABLE thread_loaded_tools (
    org_id     TEXT NOT NULL,
    thread_id  TEXT NOT NULL,
    tool_name  TEXT NOT NULL,
    loaded_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, tool_name),
    FOREIGN KEY (org_id, thread_id) REFERENCES threads (org_id, id) ON DELETE CASCADE
);

-- D3, D4: a provider of kind 'app' is a toolkit that end users connect themselves.
-- `connection` is its public configuration ({type: oauth2, authorize_url, token_url,
-- client_id, scopes} | {type: api_key, instructions}); the OAuth client secret is
-- AEAD ciphertext bound to the provider id, never returned.
ALTER TABLE providers
    ADD COLUMN toolkit TEXT CHECK (toolkit ~ '^[A-Za-z0-9_-]{1,64}$'),
    ADD COLUMN connection JSONB,
    ADD COLUMN connection_secret_ciphertext BYTEA;
CREATE UNIQUE INDEX providers_org_toolkit_idx ON providers (org_id, toolkit) WHERE toolkit IS NOT NULL;

-- D4: one end user's connection of one toolkit. `secret_ciphertext` holds the tokens
-- (or the API key) as AEAD ciphertext bound to the connection id.
CREATE TABLE connections (
    id                TEXT PRIMARY KEY,
    org_id            TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id           TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 300),
    toolkit           TEXT NOT NULL,
    provider_id       TEXT NOT NULL,
    kind              TEXT NOT NULL CHECK (kind IN ('oauth2', 'api_key')),
    secret_ciphertext BYTEA NOT NULL,
    -- when the access token expires (OAuth), else NULL
    expires_at        TIMESTAMPTZ,
    -- a refresh that failed: the next call answers connect_required
    broken            BOOLEAN NOT NULL DEFAULT FALSE,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, user_id, toolkit),
    FOREIGN KEY (org_id, provider_id) REFERENCES providers (org_id, id) ON DELETE CASCADE
);
CREATE INDEX connections_org_created_idx ON connections (org_id, created_at DESC, id DESC);

-- D4: single-use connect links (15 minutes). Only the SHA-256 of the link token is
-- kept; an OAuth flow in progress keeps its `state` hash and PKCE verifier here.
CREATE TABLE connect_links (
    token_hash        BYTEA PRIMARY KEY CHECK (length(token_hash) = 32),
    org_id            TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id           TEXT NOT NULL,
    toolkit           TEXT NOT NULL,
    provider_id       TEXT NOT NULL,
    expires_at        TIMESTAMPTZ NOT NULL,
    used_at           TIMESTAMPTZ,
    state_hash        BYTEA UNIQUE,
    verifier_ciphertext BYTEA,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    FOREIGN KEY (org_id, provider_id) REFERENCES providers (org_id, id) ON DELETE CASCADE
);
