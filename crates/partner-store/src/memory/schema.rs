//! The database schema and its migrations. Migrations run in order on open,
//! all in one exclusive transaction that re-reads the version first (so
//! any number of processes may open a database at once), and record the
//! version in `user_version`. A database whose version is newer than this
//! binary knows, negative, or zero with tables already in it is refused.

/// Every migration, in order; the schema version is the number applied.
pub const MIGRATIONS: &[&str] = &[
    // 1: memory, conversations, intentions, outbox, agents, permission
    // state, trace index, parse failures.
    r#"
    CREATE TABLE agents (
        name TEXT PRIMARY KEY,
        halted INTEGER NOT NULL DEFAULT 0,
        halt_reason TEXT,
        pulse_secs INTEGER,
        created_at INTEGER NOT NULL
    );

    CREATE TABLE blocks (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        label TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('core', 'working', 'archival')),
        description TEXT NOT NULL DEFAULT '',
        value TEXT NOT NULL DEFAULT '',
        char_limit INTEGER NOT NULL DEFAULT 5000,
        permission TEXT NOT NULL DEFAULT 'read_write'
            CHECK (permission IN ('read_only', 'partner', 'human', 'append', 'read_write', 'admin')),
        pinned INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        deleted_at INTEGER,
        UNIQUE (agent, label)
    );

    CREATE TABLE block_history (
        block_id INTEGER NOT NULL REFERENCES blocks(id),
        version INTEGER NOT NULL,
        value TEXT NOT NULL,
        deleted INTEGER NOT NULL DEFAULT 0,
        changed_at INTEGER NOT NULL,
        changed_by TEXT NOT NULL,
        PRIMARY KEY (block_id, version)
    );

    CREATE VIRTUAL TABLE blocks_fts USING fts5(
        label, value, content = 'blocks', content_rowid = 'id', tokenize = 'porter unicode61'
    );
    CREATE TRIGGER blocks_fts_insert AFTER INSERT ON blocks BEGIN
        INSERT INTO blocks_fts(rowid, label, value) VALUES (new.id, new.label, new.value);
    END;
    CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks BEGIN
        INSERT INTO blocks_fts(blocks_fts, rowid, label, value) VALUES ('delete', old.id, old.label, old.value);
    END;
    CREATE TRIGGER blocks_fts_update AFTER UPDATE OF label, value ON blocks BEGIN
        INSERT INTO blocks_fts(blocks_fts, rowid, label, value) VALUES ('delete', old.id, old.label, old.value);
        INSERT INTO blocks_fts(rowid, label, value) VALUES (new.id, new.label, new.value);
    END;

    CREATE TABLE archival (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX archival_agent ON archival(agent, created_at);
    CREATE VIRTUAL TABLE archival_fts USING fts5(
        content, content = 'archival', content_rowid = 'id', tokenize = 'porter unicode61'
    );
    CREATE TRIGGER archival_fts_insert AFTER INSERT ON archival BEGIN
        INSERT INTO archival_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER archival_fts_delete AFTER DELETE ON archival BEGIN
        INSERT INTO archival_fts(archival_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;

    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        thread TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX messages_thread ON messages(agent, thread, id);
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content = 'messages', content_rowid = 'id', tokenize = 'porter unicode61'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;

    CREATE TABLE intentions (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        what TEXT NOT NULL,
        due_text TEXT NOT NULL,
        due_at INTEGER,
        next_session INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'triggered', 'completed', 'dismissed')),
        note TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );

    CREATE TABLE outbox (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        channel TEXT NOT NULL,
        target TEXT,
        content TEXT NOT NULL,
        public INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        delivered_at INTEGER
    );

    CREATE TABLE pending (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        canonical TEXT NOT NULL,
        action_json TEXT NOT NULL,
        verb TEXT NOT NULL,
        marker TEXT,
        reason TEXT NOT NULL,
        authorities TEXT NOT NULL,
        authority_index INTEGER NOT NULL DEFAULT 0,
        turn_id TEXT NOT NULL DEFAULT '',
        thread TEXT NOT NULL DEFAULT '',
        raw_text TEXT NOT NULL DEFAULT '',
        span_start INTEGER NOT NULL DEFAULT 0,
        span_end INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'waiting'
            CHECK (status IN ('waiting', 'approved', 'denied', 'cancelled', 'timed_out')),
        decided_by TEXT,
        decision TEXT,
        decision_note TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        decided_at INTEGER
    );
    CREATE INDEX pending_status ON pending(status, id);

    CREATE TABLE standing_rules (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        verb TEXT NOT NULL,
        target TEXT,
        effect TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
        reason TEXT,
        created_by TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
    );

    CREATE TABLE trace_index (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        time INTEGER NOT NULL,
        agent TEXT NOT NULL,
        verb TEXT NOT NULL,
        canonical TEXT NOT NULL,
        outcome TEXT NOT NULL,
        duration_us INTEGER NOT NULL
    );
    CREATE INDEX trace_agent ON trace_index(agent, seq);

    CREATE TABLE data_watches (
        agent TEXT NOT NULL,
        source TEXT NOT NULL,
        active INTEGER NOT NULL,
        changed_at INTEGER NOT NULL,
        PRIMARY KEY (agent, source)
    );

    CREATE TABLE parse_failures (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        text TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    "#,
    // 2: who a request was made on behalf of (so none of them may decide
    // it), the op a standing rule covers, the lineage of agent messages,
    // and blocks other agents may read.
    r#"
    ALTER TABLE pending ADD COLUMN on_behalf_of TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE standing_rules ADD COLUMN op TEXT;
    ALTER TABLE messages ADD COLUMN lineage TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE blocks ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
    "#,
    // 3: the trace inside the database (each record written in the same
    // transaction as its effect, its seq allocated there); what crosses
    // processes: a decided request's result and whether the runtime routed
    // it, the authority last told about a request, the action id; rate
    // limit buckets shared by every process.
    r#"
    CREATE TABLE trace (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        time INTEGER NOT NULL,
        agent TEXT NOT NULL,
        verb TEXT NOT NULL,
        canonical TEXT NOT NULL,
        outcome TEXT NOT NULL,
        action_id TEXT,
        duration_us INTEGER NOT NULL,
        record TEXT
    );
    INSERT INTO trace (seq, id, time, agent, verb, canonical, outcome, duration_us)
        SELECT seq, id, time, agent, verb, canonical, outcome, duration_us FROM trace_index;
    DROP TABLE trace_index;
    CREATE INDEX trace_by_agent ON trace(agent, seq);
    CREATE INDEX trace_by_action ON trace(action_id);

    ALTER TABLE pending ADD COLUMN action_id TEXT;
    ALTER TABLE pending ADD COLUMN result TEXT;
    ALTER TABLE pending ADD COLUMN routed_at INTEGER;
    ALTER TABLE pending ADD COLUMN notified INTEGER NOT NULL DEFAULT -1;
    UPDATE pending SET routed_at = decided_at WHERE status != 'waiting';
    CREATE INDEX pending_unrouted ON pending(routed_at) WHERE routed_at IS NULL;

    CREATE TABLE rate_buckets (
        agent TEXT NOT NULL,
        verb TEXT NOT NULL,
        tokens REAL NOT NULL,
        last INTEGER NOT NULL,
        PRIMARY KEY (agent, verb)
    );

    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    "#,
    // 4: nothing reads the trace by action id yet; the index cost every
    // action a page write.
    r#"
    DROP INDEX IF EXISTS trace_by_action;
    "#,
    // 5: phrasings the partner taught: each an action grammar rule, the
    // words it came from and the dialect action it stands for.
    r#"
    CREATE TABLE learned_rules (
        id INTEGER PRIMARY KEY,
        rule TEXT NOT NULL,
        words TEXT NOT NULL,
        action TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    "#,
    // 6: vectors for search by meaning: one per block, archival entry and
    // message, for the embedder that made it and the item's time then (an
    // item changed since, or a vector of another embedder, is embedded
    // again). Rows are replaced, so a new row's rowid is above every
    // other's: a reader catches up from the last rowid it saw.
    r#"
    CREATE TABLE vectors (
        domain TEXT NOT NULL,
        ref_id INTEGER NOT NULL,
        embedder TEXT NOT NULL,
        item_time INTEGER NOT NULL,
        dims INTEGER NOT NULL,
        vec BLOB NOT NULL,
        PRIMARY KEY (domain, ref_id)
    );
    "#,
    // 7: vectors kept per embedder: reindexing with another embedder no
    // longer replaces the first one's, so going back to it finds what it
    // found before (its index catches up from the rowid it saw).
    r#"
    CREATE TABLE vectors_by_embedder (
        domain TEXT NOT NULL,
        ref_id INTEGER NOT NULL,
        embedder TEXT NOT NULL,
        item_time INTEGER NOT NULL,
        dims INTEGER NOT NULL,
        vec BLOB NOT NULL,
        PRIMARY KEY (domain, ref_id, embedder)
    );
    INSERT INTO vectors_by_embedder (domain, ref_id, embedder, item_time, dims, vec)
        SELECT domain, ref_id, embedder, item_time, dims, vec FROM vectors ORDER BY rowid;
    DROP TABLE vectors;
    ALTER TABLE vectors_by_embedder RENAME TO vectors;
    "#,
    // 8: partners, each with a token of their own (only its SHA-256 is
    // kept), and what a request needs of them: which partners may decide
    // it (none named: any), how many must approve it, and who has.
    r#"
    CREATE TABLE partners (
        name TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
    );
    ALTER TABLE pending ADD COLUMN deciders TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE pending ADD COLUMN approvals_needed INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE pending ADD COLUMN approved_by TEXT NOT NULL DEFAULT '[]';
    "#,
    // 9: the text index written once per commit. A commit that several
    // transactions share (a group of them from its second on, a batch of
    // replay's) holds a row in `text_index_deferral`, never committed, so
    // only its own connection sees it: while it is there, the triggers
    // note each change in `text_index_pending` instead of writing the
    // index (FTS5 writes a segment at every savepoint), and the notes are
    // applied before the commit and before any search
    // (`memory::deferred`). Every other writer indexes at once, as before.
    r#"
    CREATE TABLE text_index_deferral (
        one INTEGER PRIMARY KEY CHECK (one = 1)
    );
    CREATE TABLE text_index_pending (
        seq INTEGER PRIMARY KEY,
        tbl TEXT NOT NULL,
        added INTEGER NOT NULL,
        row INTEGER NOT NULL,
        a TEXT,
        b TEXT
    );
    DROP TRIGGER blocks_fts_insert;
    DROP TRIGGER blocks_fts_delete;
    DROP TRIGGER blocks_fts_update;
    DROP TRIGGER archival_fts_insert;
    DROP TRIGGER archival_fts_delete;
    DROP TRIGGER messages_fts_insert;
    DROP TRIGGER messages_fts_delete;

    CREATE TRIGGER blocks_fts_insert AFTER INSERT ON blocks
    WHEN NOT EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO blocks_fts(rowid, label, value) VALUES (new.id, new.label, new.value);
    END;
    CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks
    WHEN NOT EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO blocks_fts(blocks_fts, rowid, label, value) VALUES ('delete', old.id, old.label, old.value);
    END;
    CREATE TRIGGER blocks_fts_update AFTER UPDATE OF label, value ON blocks
    WHEN NOT EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO blocks_fts(blocks_fts, rowid, label, value) VALUES ('delete', old.id, old.label, old.value);
        INSERT INTO blocks_fts(rowid, label, value) VALUES (new.id, new.label, new.value);
    END;
    CREATE TRIGGER archival_fts_insert AFTER INSERT ON archival
    WHEN NOT EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO archival_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER archival_fts_delete AFTER DELETE ON archival
    WHEN NOT EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO archival_fts(archival_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
    WHEN NOT EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
    WHEN NOT EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;

    CREATE TRIGGER blocks_noted_insert AFTER INSERT ON blocks
    WHEN EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO text_index_pending(tbl, added, row, a, b) VALUES ('blocks', 1, new.id, new.label, new.value);
    END;
    CREATE TRIGGER blocks_noted_delete AFTER DELETE ON blocks
    WHEN EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO text_index_pending(tbl, added, row, a, b) VALUES ('blocks', 0, old.id, old.label, old.value);
    END;
    CREATE TRIGGER blocks_noted_update AFTER UPDATE OF label, value ON blocks
    WHEN EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO text_index_pending(tbl, added, row, a, b) VALUES ('blocks', 0, old.id, old.label, old.value);
        INSERT INTO text_index_pending(tbl, added, row, a, b) VALUES ('blocks', 1, new.id, new.label, new.value);
    END;
    CREATE TRIGGER archival_noted_insert AFTER INSERT ON archival
    WHEN EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO text_index_pending(tbl, added, row, a) VALUES ('archival', 1, new.id, new.content);
    END;
    CREATE TRIGGER archival_noted_delete AFTER DELETE ON archival
    WHEN EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO text_index_pending(tbl, added, row, a) VALUES ('archival', 0, old.id, old.content);
    END;
    CREATE TRIGGER messages_noted_insert AFTER INSERT ON messages
    WHEN EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO text_index_pending(tbl, added, row, a) VALUES ('messages', 1, new.id, new.content);
    END;
    CREATE TRIGGER messages_noted_delete AFTER DELETE ON messages
    WHEN EXISTS (SELECT 1 FROM text_index_deferral) BEGIN
        INSERT INTO text_index_pending(tbl, added, row, a) VALUES ('messages', 0, old.id, old.content);
    END;
    "#,
    // 10: a request is claimed before an approval runs it (`running`,
    // with who runs it), so that two deciders never run it twice. SQLite
    // cannot change a CHECK: the table is made again with its rows.
    r#"
    CREATE TABLE pending_next (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        canonical TEXT NOT NULL,
        action_json TEXT NOT NULL,
        verb TEXT NOT NULL,
        marker TEXT,
        reason TEXT NOT NULL,
        authorities TEXT NOT NULL,
        authority_index INTEGER NOT NULL DEFAULT 0,
        turn_id TEXT NOT NULL DEFAULT '',
        thread TEXT NOT NULL DEFAULT '',
        raw_text TEXT NOT NULL DEFAULT '',
        span_start INTEGER NOT NULL DEFAULT 0,
        span_end INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'waiting'
            CHECK (status IN ('waiting', 'running', 'approved', 'denied', 'cancelled', 'timed_out')),
        decided_by TEXT,
        decision TEXT,
        decision_note TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        decided_at INTEGER,
        on_behalf_of TEXT NOT NULL DEFAULT '[]',
        action_id TEXT,
        result TEXT,
        routed_at INTEGER,
        notified INTEGER NOT NULL DEFAULT -1,
        deciders TEXT NOT NULL DEFAULT '[]',
        approvals_needed INTEGER NOT NULL DEFAULT 1,
        approved_by TEXT NOT NULL DEFAULT '[]',
        claimed_by TEXT
    );
    INSERT INTO pending_next (id, agent, canonical, action_json, verb, marker, reason, authorities,
        authority_index, turn_id, thread, raw_text, span_start, span_end, status, decided_by,
        decision, decision_note, created_at, expires_at, decided_at, on_behalf_of, action_id,
        result, routed_at, notified, deciders, approvals_needed, approved_by)
    SELECT id, agent, canonical, action_json, verb, marker, reason, authorities,
        authority_index, turn_id, thread, raw_text, span_start, span_end, status, decided_by,
        decision, decision_note, created_at, expires_at, decided_at, on_behalf_of, action_id,
        result, routed_at, notified, deciders, approvals_needed, approved_by
    FROM pending;
    DROP TABLE pending;
    ALTER TABLE pending_next RENAME TO pending;
    CREATE INDEX pending_status ON pending(status, id);
    CREATE INDEX pending_unrouted ON pending(routed_at) WHERE routed_at IS NULL;
    "#,
    // 11: the inbox — every message sent to an agent, kept until a turn
    // has answered it (delivery at least once, across a crash or a
    // takeover) — and, on each message a turn stores, the turn's id (a
    // turn cut short and run again takes back what it had stored).
    r#"
    CREATE TABLE inbox (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        thread TEXT NOT NULL,
        sender TEXT NOT NULL,
        content TEXT NOT NULL,
        lineage TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        answered_at INTEGER,
        outcome TEXT
    );
    CREATE INDEX inbox_waiting ON inbox(agent, id) WHERE answered_at IS NULL;
    ALTER TABLE messages ADD COLUMN turn TEXT;
    CREATE INDEX messages_turn ON messages(agent, turn) WHERE turn IS NOT NULL;
    CREATE INDEX pending_by_action ON pending(action_id);
    "#,
];

/// The schema version this binary writes.
pub fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}
