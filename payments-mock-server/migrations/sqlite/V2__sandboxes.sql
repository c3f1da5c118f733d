-- Sandboxes (CONTRACT section 19) kept across restarts: each sandbox's
-- transactions and journal live in the same tables as the root's, told
-- apart by a `sandbox` column (empty for the root, the sandbox id's 16
-- bytes otherwise); a reference is unique per merchant within a sandbox.
-- Released: never edit; a change is a new V<n> file.

-- What each sandbox is, its clock and its journal's last number. Times
-- are milliseconds since the epoch (wall clock: a sandbox's time to live
-- is real time, never its virtual clock).
CREATE TABLE mock_sandboxes (
    id BLOB PRIMARY KEY NOT NULL,
    owner BLOB,
    label TEXT,
    created_at INTEGER NOT NULL,
    ttl_ms INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    offset_nanos INTEGER NOT NULL DEFAULT 0,
    journal_last_seq INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- SQLite cannot change a table's UNIQUE constraint: the transactions move
-- to a new table, the root's rows with an empty sandbox.
CREATE TABLE mock_transactions_v2 (
    id BLOB PRIMARY KEY NOT NULL,
    merchant_id BLOB NOT NULL,
    reference_no TEXT NOT NULL,
    description TEXT,
    amount_minor INTEGER NOT NULL,
    currency_code TEXT NOT NULL,
    currency_exponent INTEGER NOT NULL,
    product_code TEXT NOT NULL,
    quantity INTEGER,
    country_code TEXT,
    store_id TEXT NOT NULL,
    device_id TEXT,
    payer_id TEXT,
    return_url TEXT,
    extra_properties TEXT,
    initial TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    confirmed_at INTEGER,
    result TEXT,
    settles_at INTEGER,
    error_message TEXT,
    provider_reference TEXT,
    confirm_extra TEXT,
    page_token TEXT,
    page_deadline INTEGER,
    decision TEXT,
    decided_at INTEGER,
    later_submits INTEGER NOT NULL DEFAULT 0,
    sandbox BLOB NOT NULL DEFAULT x'',
    UNIQUE (sandbox, merchant_id, reference_no)
) WITHOUT ROWID;

INSERT INTO mock_transactions_v2 (
    id, merchant_id, reference_no, description, amount_minor, currency_code,
    currency_exponent, product_code, quantity, country_code, store_id,
    device_id, payer_id, return_url, extra_properties, initial, created_at,
    expires_at, confirmed_at, result, settles_at, error_message,
    provider_reference, confirm_extra, page_token, page_deadline, decision,
    decided_at, later_submits, sandbox)
SELECT
    id, merchant_id, reference_no, description, amount_minor, currency_code,
    currency_exponent, product_code, quantity, country_code, store_id,
    device_id, payer_id, return_url, extra_properties, initial, created_at,
    expires_at, confirmed_at, result, settles_at, error_message,
    provider_reference, confirm_extra, page_token, page_deadline, decision,
    decided_at, later_submits, x''
FROM mock_transactions;

DROP TABLE mock_transactions;
ALTER TABLE mock_transactions_v2 RENAME TO mock_transactions;

-- Status by reference without a merchant scope, within a sandbox.
CREATE INDEX mock_transactions_reference ON mock_transactions (sandbox, reference_no);
-- Payment pages by token.
CREATE UNIQUE INDEX mock_transactions_page ON mock_transactions (page_token)
    WHERE page_token IS NOT NULL;

-- Each sandbox's journal numbers from 1: the key is (sandbox, seq).
CREATE TABLE mock_journal_v2 (
    sandbox BLOB NOT NULL DEFAULT x'',
    seq INTEGER NOT NULL,
    at INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT,
    headers TEXT NOT NULL,
    body TEXT NOT NULL,
    status INTEGER,
    error_code TEXT,
    request_id TEXT NOT NULL,
    fault TEXT,
    replica TEXT NOT NULL,
    PRIMARY KEY (sandbox, seq)
) WITHOUT ROWID;

INSERT INTO mock_journal_v2 (
    sandbox, seq, at, method, path, query, headers, body, status,
    error_code, request_id, fault, replica)
SELECT x'', seq, at, method, path, query, headers, body, status,
    error_code, request_id, fault, replica
FROM mock_journal;

DROP TABLE mock_journal;
ALTER TABLE mock_journal_v2 RENAME TO mock_journal;
