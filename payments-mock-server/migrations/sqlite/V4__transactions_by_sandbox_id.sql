-- A sandbox's transactions in id order (a page of `GET /_mock/transactions`
-- and of the console): read from here a page at a time, with no sort of
-- the whole sandbox. Released: never edit; a change is a new V<n> file.
CREATE INDEX mock_transactions_sandbox_id ON mock_transactions (sandbox, id);
