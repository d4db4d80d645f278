import PostgresNIO

/// The PostgreSQL tables of the replicated log (`schema/replicated-log.md`), created when
/// missing, and the schema version this binary reads and writes.
enum Schema {
    /// The version in `herald_schema`; a database with a newer one is refused.
    static let version = 1

    /// The channel `NOTIFY` wakes followers on (payload: the log id).
    static let channel = "herald_log"

    /// Creates the tables unless there (under an advisory lock, so two nodes starting at once
    /// do not race), and returns the version the database holds.
    static func prepare(_ link: PostgresLink) throws -> Int {
        if let found = try existingVersion(link) { return found }
        _ = try link.rows("BEGIN")
        do {
            _ = try link.rows("SELECT pg_advisory_xact_lock(7206174261)")
            for statement in statements { _ = try link.rows(PostgresQuery(unsafeSQL: statement)) }
            _ = try link.rows("INSERT INTO herald_schema (id, version) VALUES (1, \(version)) ON CONFLICT (id) DO NOTHING")
            _ = try link.rows("COMMIT")
        } catch {
            _ = try? link.rows("ROLLBACK")
            throw error
        }
        return try existingVersion(link) ?? version
    }

    /// The version recorded, or `nil` when the database has no Herald schema.
    static func existingVersion(_ link: PostgresLink) throws -> Int? {
        let exists = try link.rows("SELECT to_regclass('herald_schema') IS NOT NULL")
        guard try exists.first?.decode(Bool.self) == true else { return nil }
        return try link.rows("SELECT version FROM herald_schema WHERE id = 1").first?.decode(Int.self)
    }

    static let statements = [
        "CREATE TABLE IF NOT EXISTS herald_schema (id int PRIMARY KEY CHECK (id = 1), version int NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS herald_logs (
            log_id text PRIMARY KEY,
            epoch bigint NOT NULL,
            owner text NOT NULL,
            owner_seen_at timestamptz NOT NULL,
            pruned_through bigint NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE IF NOT EXISTS herald_records (
            log_id text NOT NULL,
            seq bigint NOT NULL,
            epoch bigint NOT NULL,
            record bytea NOT NULL,
            PRIMARY KEY (log_id, seq))
        """,
        """
        CREATE TABLE IF NOT EXISTS herald_service (
            log_id text NOT NULL,
            tbl text NOT NULL,
            key bytea NOT NULL,
            value bytea NOT NULL,
            PRIMARY KEY (log_id, tbl, key))
        """,
        """
        CREATE TABLE IF NOT EXISTS herald_followers (
            log_id text NOT NULL,
            node text NOT NULL,
            applied_seq bigint NOT NULL,
            seen_at timestamptz NOT NULL,
            PRIMARY KEY (log_id, node))
        """,
    ]
}
