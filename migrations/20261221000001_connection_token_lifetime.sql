-- D4: an OAuth connection's access token lifetime (the refresh margin scales with it)
-- and whether the authorization server granted a refresh token (shown on the connection).
ALTER TABLE connections
    ADD COLUMN token_lifetime_seconds INTEGER,
    ADD COLUMN refresh_token_held BOOLEAN;
