/// The tables a remote log lives in, created and versioned by `remote init`.
///
/// - `jsonledger_ledgers`: one row per ledger, its head (batch and SHA-256), the first batch its
///   log holds, and its model (the JSON of a model file, version 1): the serialisation point.
///   A write takes this row's lock (`SELECT … FOR UPDATE`), a fair queue.
/// - `jsonledger_log`: each record's exact bytes keyed `(ledger, batch)`, with its SHA-256 and
///   the previous record's (a chain), kind, model version, idempotency key (unique per ledger),
///   writer and commit time.
/// - `jsonledger_followers`: each replica's position, for `remote status`.
/// - `jsonledger_snapshots` (version 2): checkpoints replicas made when they compacted, each
///   standing for the log up to its batch (the SHA-256 of that batch's record in the log, which
///   the next record chains to): a new replica starts from the newest and applies the tail.
///   The log itself is never pruned.
/// - `jsonledger_snapshot_chunks` (version 3): a snapshot's checkpoint in parts of
///   `snapshotChunkBytes`, numbered from 0. Its row then says how many parts there are, and the
///   length and SHA-256 of the whole; its `record` is empty. A checkpoint is as large as the
///   store, and one `bytea` value stops at 1 GB. A row of version 2 (no parts) holds its
///   checkpoint in `record`, and still reads.
///
/// A trigger refuses an insert that is not head + 1 with the previous record's checksum and a
/// checksum that is the record's; it moves the head and announces the batch (`NOTIFY`). Another
/// refuses every update, delete and truncate of the log: it is append-only for everyone.
enum RemoteSchema {
  static let version = 3

  /// The size of a snapshot's parts: small enough that each is one short statement, large
  /// enough that a gigabyte is two thousand rows.
  static let snapshotChunkBytes = 1 << 19

  /// Version 2: snapshots.
  static let snapshots = """
    CREATE TABLE IF NOT EXISTS jsonledger_snapshots (
      ledger text NOT NULL REFERENCES jsonledger_ledgers (ledger),
      batch bigint NOT NULL,
      model_version integer NOT NULL,
      log_sha256 bytea NOT NULL,
      record bytea NOT NULL,
      writer text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (ledger, batch))
    """

  /// Version 3: snapshots in parts.
  static let snapshotChunks = [
    """
    CREATE TABLE IF NOT EXISTS jsonledger_snapshot_chunks (
      ledger text NOT NULL,
      batch bigint NOT NULL,
      chunk integer NOT NULL CHECK (chunk >= 0),
      bytes bytea NOT NULL,
      PRIMARY KEY (ledger, batch, chunk),
      FOREIGN KEY (ledger, batch) REFERENCES jsonledger_snapshots (ledger, batch))
    """,
    "ALTER TABLE jsonledger_snapshots ADD COLUMN IF NOT EXISTS chunks integer NOT NULL DEFAULT 0",
    "ALTER TABLE jsonledger_snapshots ADD COLUMN IF NOT EXISTS record_bytes bigint",
    "ALTER TABLE jsonledger_snapshots ADD COLUMN IF NOT EXISTS record_sha256 bytea",
  ]

  /// What takes the tables from each earlier version to the next, in one transaction.
  static let upgrades: [Int: [String]] = [
    1: [snapshots, "INSERT INTO jsonledger_schema (version) VALUES (2)"],
    2: snapshotChunks + ["INSERT INTO jsonledger_schema (version) VALUES (3)"],
  ]

  /// Every statement that creates the tables, at this version.
  static let statements = tables + snapshotChunks + ["INSERT INTO jsonledger_schema (version) VALUES (3)"]

  /// The tables as version 2 made them.
  private static let tables: [String] = [
    """
    CREATE TABLE jsonledger_schema (version integer NOT NULL)
    """,
    """
    CREATE TABLE jsonledger_ledgers (
      ledger text PRIMARY KEY,
      head bigint NOT NULL DEFAULT 0,
      head_sha256 bytea NOT NULL,
      log_start bigint NOT NULL DEFAULT 1,
      model_version integer NOT NULL,
      model text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())
    """,
    """
    CREATE TABLE jsonledger_log (
      ledger text NOT NULL REFERENCES jsonledger_ledgers (ledger),
      batch bigint NOT NULL CHECK (batch > 0),
      kind text NOT NULL,
      model_version integer NOT NULL,
      idempotency_key text,
      prev_sha256 bytea NOT NULL,
      sha256 bytea NOT NULL,
      writer text NOT NULL,
      committed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      record bytea NOT NULL,
      PRIMARY KEY (ledger, batch))
    """,
    """
    CREATE UNIQUE INDEX jsonledger_log_idempotency ON jsonledger_log (ledger, idempotency_key)
      WHERE idempotency_key IS NOT NULL
    """,
    """
    CREATE TABLE jsonledger_followers (
      ledger text NOT NULL REFERENCES jsonledger_ledgers (ledger),
      follower text NOT NULL,
      head bigint NOT NULL,
      seen_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (ledger, follower))
    """,
    """
    CREATE FUNCTION jsonledger_append() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      current record;
    BEGIN
      SELECT head, head_sha256, model_version INTO current
        FROM jsonledger_ledgers WHERE ledger = NEW.ledger FOR UPDATE;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'no ledger %', NEW.ledger USING ERRCODE = 'JL001';
      END IF;
      IF NEW.batch <> current.head + 1 THEN
        RAISE EXCEPTION 'batch % does not follow the head, batch %', NEW.batch, current.head USING ERRCODE = 'JL002';
      END IF;
      IF NEW.prev_sha256 <> current.head_sha256 THEN
        RAISE EXCEPTION 'batch % does not chain to the head''s checksum', NEW.batch USING ERRCODE = 'JL003';
      END IF;
      IF NEW.sha256 <> sha256(NEW.record) THEN
        RAISE EXCEPTION 'batch %: its checksum is not its record''s', NEW.batch USING ERRCODE = 'JL004';
      END IF;
      IF NEW.model_version <> current.model_version THEN
        RAISE EXCEPTION 'batch % is written under model version %, the ledger''s is %',
          NEW.batch, NEW.model_version, current.model_version USING ERRCODE = 'JL005';
      END IF;
      UPDATE jsonledger_ledgers SET head = NEW.batch, head_sha256 = NEW.sha256, updated_at = now()
        WHERE ledger = NEW.ledger;
      PERFORM pg_notify('jsonledger_' || left(md5(NEW.ledger), 24), NEW.batch::text);
      RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER jsonledger_append BEFORE INSERT ON jsonledger_log
      FOR EACH ROW EXECUTE FUNCTION jsonledger_append()
    """,
    """
    CREATE FUNCTION jsonledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the log is append-only: % refused', TG_OP USING ERRCODE = 'JL006';
    END $$
    """,
    """
    CREATE TRIGGER jsonledger_log_append_only BEFORE UPDATE OR DELETE ON jsonledger_log
      FOR EACH ROW EXECUTE FUNCTION jsonledger_refuse_change()
    """,
    """
    CREATE TRIGGER jsonledger_log_no_truncate BEFORE TRUNCATE ON jsonledger_log
      FOR EACH STATEMENT EXECUTE FUNCTION jsonledger_refuse_change()
    """,
    snapshots,
  ]
}
