-- Runtime tokens revoked one by one (issue 10). A token is also dead when the API key
-- that minted it is revoked or deleted; rows can be dropped once `expires_at` passed.
CREATE TABLE runtime_token_revocations (
    org_id     TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    token_id   TEXT NOT NULL,
    revoked_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org_id, token_id)
);
