-- The tenant table: the ULID text is the primary key.
CREATE TABLE tenant (id TEXT PRIMARY KEY);
