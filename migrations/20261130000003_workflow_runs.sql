-- One row per workflow run (LOOP_ENGINE W5). `created_at` is the run's start, exposed as
-- `started_at`; it is named so for the shared keyset pagination.
CREATE TABLE workflow_runs (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    caller       TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed')),
    input        JSONB NOT NULL,
    experiment   BOOLEAN NOT NULL DEFAULT FALSE,
    steps        JSONB NOT NULL DEFAULT '{}'::jsonb,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at  TIMESTAMPTZ,
    FOREIGN KEY (org_id, workflow_id) REFERENCES workflows (org_id, id) ON DELETE CASCADE
);
CREATE INDEX workflow_runs_workflow_idx ON workflow_runs (org_id, workflow_id, created_at DESC, id DESC);
