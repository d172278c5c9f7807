-- P9: how many requests one walk may keep in flight against this provider (NULL: the
-- deployment's default). The provider's rate limit still spaces them.
ALTER TABLE providers ADD COLUMN concurrency integer NULL CHECK (concurrency BETWEEN 1 AND 32);
