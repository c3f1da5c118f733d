-- The merchant of the API key that sent a journaled request (16 bytes, as
-- the transactions' ids), which decides whose view of the journal it is
-- in (CONTRACT section 18). NULL: no bound key sent it (open mode, an
-- admin or unbound key), or written before this version. Released: never
-- edit; a change is a new V<n> file.
ALTER TABLE mock_journal ADD COLUMN caller BLOB;
