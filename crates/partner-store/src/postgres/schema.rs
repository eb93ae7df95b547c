//! The PostgreSQL schema and its migrations: applied in order, in one
//! transaction holding an advisory lock, the version of each recorded in
//! `partner_schema`; a database newer than this binary knows is refused.

use postgres::Client;

use super::failed;
use crate::memory::{MemoryError, MemoryResult};

/// The advisory lock every migration takes ("partner" in ASCII).
const MIGRATION_LOCK: i64 = 0x0070_6172_746e_6572;

/// Every migration, in order; the schema version is the number applied.
pub const MIGRATIONS: &[&str] = &[
    // 1: versioned blocks, archival entries, conversations, each searched
    // through a tsvector the server keeps.
    r#"
    CREATE TABLE blocks (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        label TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('core', 'working', 'archival')),
        description TEXT NOT NULL DEFAULT '',
        value TEXT NOT NULL DEFAULT '',
        char_limit BIGINT NOT NULL DEFAULT 5000,
        permission TEXT NOT NULL DEFAULT 'read_write'
            CHECK (permission IN ('read_only', 'partner', 'human', 'append', 'read_write', 'admin')),
        pinned BOOLEAN NOT NULL DEFAULT FALSE,
        shared BOOLEAN NOT NULL DEFAULT FALSE,
        version BIGINT NOT NULL DEFAULT 1,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        deleted_at BIGINT,
        search tsvector GENERATED ALWAYS AS (to_tsvector('english', label || ' ' || value)) STORED,
        UNIQUE (agent, label)
    );
    CREATE INDEX blocks_search ON blocks USING GIN (search);

    CREATE TABLE block_history (
        block_id BIGINT NOT NULL REFERENCES blocks(id),
        version BIGINT NOT NULL,
        value TEXT NOT NULL,
        deleted BOOLEAN NOT NULL DEFAULT FALSE,
        changed_at BIGINT NOT NULL,
        changed_by TEXT NOT NULL,
        PRIMARY KEY (block_id, version)
    );

    CREATE TABLE archival (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        search tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
    );
    CREATE INDEX archival_agent ON archival (agent, created_at);
    CREATE INDEX archival_search ON archival USING GIN (search);

    CREATE TABLE messages (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        thread TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        search tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
    );
    CREATE INDEX messages_thread ON messages (agent, thread, id);
    CREATE INDEX messages_search ON messages USING GIN (search);
    "#,
    // 2: the queue (requests and their decisions) and standing rules.
    r#"
    CREATE TABLE pending (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        canonical TEXT NOT NULL,
        action_json TEXT NOT NULL,
        verb TEXT NOT NULL,
        marker TEXT,
        reason TEXT NOT NULL,
        authorities TEXT NOT NULL,
        authority_index BIGINT NOT NULL DEFAULT 0,
        turn_id TEXT NOT NULL DEFAULT '',
        thread TEXT NOT NULL DEFAULT '',
        raw_text TEXT NOT NULL DEFAULT '',
        span_start BIGINT NOT NULL DEFAULT 0,
        span_end BIGINT NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'waiting'
            CHECK (status IN ('waiting', 'approved', 'denied', 'cancelled', 'timed_out')),
        decided_by TEXT,
        decision TEXT,
        decision_note TEXT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        decided_at BIGINT,
        on_behalf_of TEXT NOT NULL DEFAULT '[]',
        action_id TEXT,
        result TEXT,
        routed_at BIGINT
    );
    CREATE INDEX pending_waiting ON pending (id) WHERE status = 'waiting';

    CREATE TABLE standing_rules (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        verb TEXT NOT NULL,
        op TEXT,
        target TEXT,
        effect TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
        reason TEXT,
        created_by TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        revoked_at BIGINT
    );
    CREATE INDEX standing_rules_scope ON standing_rules (agent, verb);
    "#,
    // 3: which daemon runs each agent (`leases`).
    r#"
    CREATE TABLE agent_leases (
        agent TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        epoch BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        acquired_at BIGINT NOT NULL
    );
    "#,
    // 4: the execution trace (the record whole as JSON, and the columns
    // a page is filtered by).
    r#"
    CREATE TABLE trace (
        seq BIGINT PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        time BIGINT NOT NULL,
        agent TEXT NOT NULL,
        verb TEXT NOT NULL,
        canonical TEXT NOT NULL,
        outcome TEXT NOT NULL,
        action_id TEXT,
        duration_us BIGINT NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX trace_by_agent ON trace (agent, seq);
    "#,
    // 5: the runtime's records of its agents: the roster and each agent's
    // state, intentions, the outbox.
    r#"
    CREATE TABLE agents (
        name TEXT PRIMARY KEY,
        halted BOOLEAN NOT NULL DEFAULT FALSE,
        halt_reason TEXT,
        pulse_secs BIGINT,
        created_at BIGINT NOT NULL
    );

    CREATE TABLE intentions (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        what TEXT NOT NULL,
        due_text TEXT NOT NULL,
        due_at BIGINT,
        next_session BOOLEAN NOT NULL DEFAULT FALSE,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'triggered', 'completed', 'dismissed')),
        note TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE INDEX intentions_due ON intentions (due_at) WHERE status = 'pending';

    CREATE TABLE outbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        channel TEXT NOT NULL,
        target TEXT,
        content TEXT NOT NULL,
        public BOOLEAN NOT NULL DEFAULT FALSE,
        created_at BIGINT NOT NULL,
        delivered_at BIGINT
    );
    "#,
    // 6: rate-limit buckets, one per agent and verb.
    r#"
    CREATE TABLE rate_buckets (
        agent TEXT NOT NULL,
        verb TEXT NOT NULL,
        tokens DOUBLE PRECISION NOT NULL,
        last BIGINT NOT NULL,
        PRIMARY KEY (agent, verb)
    );
    "#,
    // 7: phrasings the partner taught.
    r#"
    CREATE TABLE learned_rules (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        rule TEXT NOT NULL,
        words TEXT NOT NULL,
        action TEXT NOT NULL,
        created_at BIGINT NOT NULL
    );
    "#,
    // 8: partners and what a request needs of them (as on SQLite).
    r#"
    CREATE TABLE partners (
        name TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
    );
    ALTER TABLE pending ADD COLUMN deciders TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE pending ADD COLUMN approvals_needed BIGINT NOT NULL DEFAULT 1;
    ALTER TABLE pending ADD COLUMN approved_by TEXT NOT NULL DEFAULT '[]';
    "#,
    // 9: what an action's transaction writes beside memory (as on
    // SQLite): the lineage of messages between agents, data watches, and
    // the replies agents wrote that did not parse.
    r#"
    ALTER TABLE messages ADD COLUMN lineage TEXT NOT NULL DEFAULT '[]';
    CREATE TABLE data_watches (
        agent TEXT NOT NULL,
        source TEXT NOT NULL,
        active BOOLEAN NOT NULL,
        changed_at BIGINT NOT NULL,
        PRIMARY KEY (agent, source)
    );
    CREATE TABLE parse_failures (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        text TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at BIGINT NOT NULL
    );
    "#,
    // 10: the rest of what SQLite keeps: which authority of a request was
    // told of it, settings (`meta`) and the vectors for search by meaning,
    // per embedder.
    r#"
    ALTER TABLE pending ADD COLUMN notified BIGINT NOT NULL DEFAULT -1;
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE vectors (
        domain TEXT NOT NULL,
        ref_id BIGINT NOT NULL,
        embedder TEXT NOT NULL,
        item_time BIGINT NOT NULL,
        dims BIGINT NOT NULL,
        vec BYTEA NOT NULL,
        PRIMARY KEY (domain, ref_id, embedder)
    );
    "#,
    // 11: vectors numbered as they are written or replaced, so an index
    // in memory reads only what is new (SQLite's rowid does this there).
    r#"
    CREATE SEQUENCE vectors_seq;
    ALTER TABLE vectors ADD COLUMN seq BIGINT NOT NULL DEFAULT nextval('vectors_seq');
    CREATE INDEX vectors_since ON vectors (embedder, seq);
    "#,
    // 12: a request is claimed before an approval runs it (`running`,
    // with who runs it), so that two deciders never run it twice.
    r#"
    ALTER TABLE pending DROP CONSTRAINT IF EXISTS pending_status_check;
    ALTER TABLE pending ADD CONSTRAINT pending_status_check
        CHECK (status IN ('waiting', 'running', 'approved', 'denied', 'cancelled', 'timed_out'));
    ALTER TABLE pending ADD COLUMN claimed_by TEXT;
    "#,
    // 13: the inbox, and each stored message's turn (as on SQLite).
    r#"
    CREATE TABLE inbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent TEXT NOT NULL,
        thread TEXT NOT NULL,
        sender TEXT NOT NULL,
        content TEXT NOT NULL,
        lineage TEXT NOT NULL DEFAULT '[]',
        created_at BIGINT NOT NULL,
        attempts BIGINT NOT NULL DEFAULT 0,
        answered_at BIGINT,
        outcome TEXT
    );
    CREATE INDEX inbox_waiting ON inbox (agent, id) WHERE answered_at IS NULL;
    ALTER TABLE messages ADD COLUMN turn TEXT;
    CREATE INDEX messages_turn ON messages (agent, turn) WHERE turn IS NOT NULL;
    CREATE INDEX trace_by_action ON trace (action_id);
    CREATE INDEX pending_by_action ON pending (action_id);
    "#,
    // 14: what a daemon tells the others about its agents (a failed model
    // call, a halt, a lost lease), for every console of the team.
    r#"
    CREATE TABLE team_notices (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        host TEXT NOT NULL,
        agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        at BIGINT NOT NULL
    );
    -- Each daemon of the team, seen at its every round (an idle daemon
    -- holds no lease, and is a member all the same).
    CREATE TABLE team_members (
        host TEXT PRIMARY KEY,
        pid BIGINT NOT NULL,
        started_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    "#,
];

/// Brings the schema up to date: under the advisory lock, the version is
/// read again, so a second daemon starting at once finds the work done.
pub fn migrate(client: &mut Client) -> MemoryResult<()> {
    let mut tx = client.transaction().map_err(failed)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(failed)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS partner_schema (
             version INTEGER PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )
    .map_err(failed)?;
    let found = version_in(&mut tx)?;
    let known = MIGRATIONS.len() as i64;
    if found > known {
        return Err(MemoryError::NewerSchema { found, known });
    }
    for (i, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch_execute(migration).map_err(failed)?;
        tx.execute(
            "INSERT INTO partner_schema (version) VALUES ($1)",
            &[&(i as i32 + 1)],
        )
        .map_err(failed)?;
    }
    tx.commit().map_err(failed)
}

/// The version recorded (0 for a new database).
pub fn version_in(client: &mut impl postgres::GenericClient) -> MemoryResult<i64> {
    let row = client
        .query_one("SELECT COALESCE(MAX(version), 0) FROM partner_schema", &[])
        .map_err(failed)?;
    Ok(i64::from(row.get::<_, i32>(0)))
}
