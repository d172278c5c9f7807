-- Audit trail (issue 27): every write to an org's configuration, by whom, with the
-- before/after of the fields it changed (secret fields as "[secret]", never a value).
-- Listed newest first per org, optionally by resource or actor; pruned by age.
CREATE TABLE audit_events (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    actor_type    TEXT NOT NULL CHECK (actor_type IN ('api_key', 'admin', 'runtime_token')),
    actor_id      TEXT NOT NULL,
    action        TEXT NOT NULL CHECK (action IN ('create', 'update', 'delete')),
    resource_type TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    changes       JSONB NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_org_idx ON audit_events (org_id, created_at DESC, id DESC);
CREATE INDEX audit_events_resource_idx ON audit_events (org_id, resource_id, created_at DESC, id DESC);
CREATE INDEX audit_events_actor_idx ON audit_events (org_id, actor_id, created_at DESC, id DESC);
CREATE INDEX audit_events_created_idx ON audit_events (created_at);
