-- loopgate system of record. Every tenant-owned row carries org_id; child rows
-- reference their parents through (org_id, id) so a row can never point into
-- another org, whatever the application does.

CREATE TABLE orgs (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX orgs_created_idx ON orgs (created_at DESC, id DESC);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name         TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- SHA-256 of the secret part; the secret itself is never stored.
    secret_hash  BYTEA NOT NULL CHECK (length(secret_hash) = 32),
    scopes       TEXT[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['studio','mint','runtime']::TEXT[]),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at   TIMESTAMPTZ,
    last_used_at TIMESTAMPTZ
);
CREATE INDEX api_keys_org_created_idx ON api_keys (org_id, created_at DESC, id DESC);

CREATE TABLE deployments (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    cache       TEXT NOT NULL DEFAULT 'on' CHECK (cache IN ('off', 'shadow', 'on')),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, id),
    UNIQUE (org_id, name)
);
CREATE INDEX deployments_org_created_idx ON deployments (org_id, created_at DESC, id DESC);

CREATE TABLE providers (
    id                        TEXT PRIMARY KEY,
    org_id                    TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name                      TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    base_url                  TEXT NOT NULL,
    auth_type                 TEXT NOT NULL CHECK (auth_type IN ('bearer', 'header', 'query', 'none')),
    auth_name                 TEXT,
    -- AEAD ciphertext (nonce || ciphertext || tag) of the org-level credential.
    credential_ciphertext     BYTEA,
    user_credentials_required BOOLEAN NOT NULL DEFAULT FALSE,
    rate_limit_rps            DOUBLE PRECISION CHECK (rate_limit_rps > 0),
    rate_limit_burst          INTEGER CHECK (rate_limit_burst > 0),
    created_at                TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at                TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, id),
    CHECK (auth_type IN ('bearer', 'none') OR auth_name IS NOT NULL),
    CHECK ((rate_limit_rps IS NULL) = (rate_limit_burst IS NULL))
);
CREATE INDEX providers_org_created_idx ON providers (org_id, created_at DESC, id DESC);

CREATE TABLE tools (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL,
    provider_id  TEXT NOT NULL,
    name         TEXT NOT NULL CHECK (name ~ '^[A-Za-z0-9_-]{1,64}$'),
    description  TEXT NOT NULL DEFAULT '',
    method       TEXT NOT NULL CHECK (method IN ('GET','POST','PUT','PATCH','DELETE','HEAD','OPTIONS','TRACE')),
    path         TEXT NOT NULL,
    input_schema JSONB NOT NULL CHECK (jsonb_typeof(input_schema) = 'object'),
    kind         TEXT NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'mcp', 'app')),
    toolkit      TEXT,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, id),
    UNIQUE (org_id, id, provider_id),
    UNIQUE (provider_id, name),
    FOREIGN KEY (org_id, provider_id) REFERENCES providers (org_id, id) ON DELETE CASCADE
);
CREATE INDEX tools_org_created_idx ON tools (org_id, created_at DESC, id DESC);

CREATE TABLE agents (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL,
    deployment_id TEXT NOT NULL,
    name          TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    instructions  TEXT NOT NULL DEFAULT '',
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id) REFERENCES orgs (id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, deployment_id) REFERENCES deployments (org_id, id) ON DELETE RESTRICT
);
CREATE INDEX agents_org_created_idx ON agents (org_id, created_at DESC, id DESC);
CREATE INDEX agents_deployment_idx ON agents (deployment_id);

-- The binding of a tool to an agent; looping is a property of the binding (L1).
CREATE TABLE agent_tools (
    org_id            TEXT NOT NULL,
    agent_id          TEXT NOT NULL,
    tool_id           TEXT NOT NULL,
    provider_id       TEXT NOT NULL,
    loop_responses    BOOLEAN NOT NULL DEFAULT FALSE,
    dataset_ttl_hours INTEGER CHECK (dataset_ttl_hours BETWEEN 1 AND 8760),
    discovery         BOOLEAN,
    position          INTEGER NOT NULL DEFAULT 0,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, tool_id),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE CASCADE,
    -- the binding's provider must be the tool's own provider, in the same org
    FOREIGN KEY (org_id, tool_id, provider_id) REFERENCES tools (org_id, id, provider_id) ON DELETE CASCADE
);
CREATE INDEX agent_tools_tool_idx ON agent_tools (tool_id);
CREATE INDEX agent_tools_org_idx ON agent_tools (org_id);

CREATE TABLE workflows (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    steps       JSONB NOT NULL CHECK (jsonb_typeof(steps) = 'array'),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE CASCADE
);
CREATE INDEX workflows_org_created_idx ON workflows (org_id, created_at DESC, id DESC);

-- A conversation thread: (org, agent, caller, thread key chosen by the caller).
CREATE TABLE threads (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    caller      TEXT NOT NULL,
    thread_key  TEXT NOT NULL CHECK (length(thread_key) BETWEEN 1 AND 200),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, agent_id, caller, thread_key),
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE CASCADE
);
