-- Schedules (LOOP_ENGINE W6) and webhook delivery (W7).

-- A schedule on a workflow. `next_due_at` is the earliest due time not yet handled:
-- the scheduler claims a row whose `next_due_at` has passed (FOR UPDATE SKIP LOCKED),
-- records the run(s) for it and moves `next_due_at` past now, in one transaction.
CREATE TABLE schedules (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    cron         TEXT NOT NULL,
    timezone     TEXT NOT NULL,
    input        JSONB NOT NULL,
    run_as_user  TEXT,
    overlap      TEXT NOT NULL CHECK (overlap IN ('skip', 'allow')),
    catch_up     TEXT NOT NULL CHECK (catch_up IN ('none', 'latest')),
    paused       BOOLEAN NOT NULL DEFAULT FALSE,
    next_due_at  TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    FOREIGN KEY (org_id, workflow_id) REFERENCES workflows (org_id, id) ON DELETE CASCADE
);
CREATE INDEX schedules_workflow_idx ON schedules (org_id, workflow_id, created_at DESC, id DESC);
CREATE INDEX schedules_due_idx ON schedules (next_due_at) WHERE NOT paused;

-- Runs made by a schedule: at most one per (schedule, due time), whatever the replicas do.
-- A scheduled run holds a lease its replica renews; a run whose lease ran out (its
-- replica died) is closed as `interrupted`, never run a second time.
ALTER TABLE workflow_runs
    ADD COLUMN trigger       TEXT NOT NULL DEFAULT 'api' CHECK (trigger IN ('api', 'schedule')),
    ADD COLUMN schedule_id   TEXT,
    ADD COLUMN scheduled_for TIMESTAMPTZ,
    ADD COLUMN lease_until   TIMESTAMPTZ,
    DROP CONSTRAINT workflow_runs_status_check,
    ADD CONSTRAINT workflow_runs_status_check
        CHECK (status IN ('running', 'succeeded', 'failed', 'skipped', 'interrupted'));
CREATE UNIQUE INDEX workflow_runs_schedule_due_idx ON workflow_runs (schedule_id, scheduled_for)
    WHERE schedule_id IS NOT NULL;
CREATE INDEX workflow_runs_schedule_list_idx ON workflow_runs (org_id, schedule_id, created_at DESC, id DESC)
    WHERE schedule_id IS NOT NULL;
CREATE INDEX workflow_runs_lease_idx ON workflow_runs (lease_until)
    WHERE status = 'running' AND lease_until IS NOT NULL;

-- Where finished runs are delivered. The signing secret is sealed (AES-256-GCM, bound to
-- the endpoint id); after a rotation the previous one also signs until `previous_until`.
CREATE TABLE webhook_endpoints (
    id               TEXT PRIMARY KEY,
    org_id           TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    events           TEXT[] NOT NULL,
    description      TEXT,
    secret           BYTEA NOT NULL,
    previous_secret  BYTEA,
    previous_until   TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (org_id, id)
);
CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (org_id, created_at DESC, id DESC);

-- One message (a finished run, one event) to one endpoint. `payload` is the exact body
-- every attempt sends; the id is the `webhook-id`. A replica claims a due delivery by
-- setting `sending_until` (FOR UPDATE SKIP LOCKED), so no two replicas send one attempt.
CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    org_id           TEXT NOT NULL,
    endpoint_id      TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    run_id           TEXT NOT NULL,
    payload          TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error       TEXT,
    next_attempt_at  TIMESTAMPTZ,
    sending_until    TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    FOREIGN KEY (org_id, endpoint_id) REFERENCES webhook_endpoints (org_id, id) ON DELETE CASCADE,
    UNIQUE (endpoint_id, run_id, event_type)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (org_id, endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

-- Every attempt of a delivery, as it went.
CREATE TABLE webhook_attempts (
    delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt      INTEGER NOT NULL,
    status_code  INTEGER,
    error        TEXT,
    duration_ms  INTEGER NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (delivery_id, attempt)
);
