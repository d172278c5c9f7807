-- K2's result copies belong to their org like every other row: deleting the org
-- deletes them (copies of orgs already gone are dropped first).
DELETE FROM result_copies c WHERE NOT EXISTS (SELECT 1 FROM orgs o WHERE o.id = c.org_id);
ALTER TABLE result_copies
    ADD CONSTRAINT result_copies_org_fk FOREIGN KEY (org_id) REFERENCES orgs (id) ON DELETE CASCADE;
