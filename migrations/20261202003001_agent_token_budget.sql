-- Issue 15: the size guard's conversation budget per agent (G1), in tokens; NULL: the
-- service-wide `limit_token_budget`. Same range as the API accepts (bounds::AGENT_TOKEN_BUDGET).
ALTER TABLE agents
    ADD COLUMN token_budget INTEGER CHECK (token_budget BETWEEN 1000 AND 1000000);
