-- A journal entry whose body the journal cut (its newest bodies are kept
-- whole up to 512 KiB in all, an older one over 1 KiB keeps its first KiB):
-- the whole body's length in bytes. NULL: the body is whole (every entry
-- written before this version). Released: never edit; a change is a new
-- V<n> file.
ALTER TABLE mock_journal ADD COLUMN body_length INTEGER;
