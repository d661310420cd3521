import Database from "better-sqlite3";

export function openStore(file) {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec(`
    CREATE TABLE IF NOT EXISTS turns (
      channel TEXT NOT NULL,
      seq INTEGER NOT NULL,
      role TEXT NOT NULL,
      parts TEXT NOT NULL,
      PRIMARY KEY (channel, seq)
    );
    CREATE TABLE IF NOT EXISTS jobs (
      id TEXT PRIMARY KEY,
      channel TEXT NOT NULL,
      status TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS notes (
      channel TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
  `);

  const insertTurn = db.prepare(
    "INSERT INTO turns (channel, seq, role, parts) VALUES (?, ?, ?, ?)"
  );
  const clearTurns = db.prepare("DELETE FROM turns WHERE channel = ?");
  const selectTurns = db.prepare(
    "SELECT role, parts FROM turns WHERE channel = ? ORDER BY seq"
  );
  const upsertJob = db.prepare(
    "INSERT INTO jobs (id, channel, status, updated_at) VALUES (?, ?, ?, ?) " +
      "ON CONFLICT(id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at"
  );
  const insertNote = db.prepare(
    "INSERT INTO notes (channel, body, created_at) VALUES (?, ?, ?)"
  );
  const selectNotes = db.prepare(
    "SELECT body FROM notes WHERE channel = ? ORDER BY created_at DESC LIMIT ?"
  );

  const appendMany = db.transaction((channel, startSeq, contents) => {
    let seq = startSeq;
    for (const c of contents) {
      insertTurn.run(channel, seq++, c.role, JSON.stringify(c.parts));
    }
  });

  return {
    loadHistory(channel, keep = 40) {
      const rows = selectTurns.all(channel);
      return rows
        .slice(-keep)
        .map((r) => ({ role: r.role, parts: JSON.parse(r.parts) }));
    },

    appendTurns(channel, startSeq, contents) {
      appendMany(channel, startSeq, contents);
    },

    saveHistory(channel, contents) {
      clearTurns.run(channel);
      contents.forEach((c, i) => {
        insertTurn.run(channel, i, c.role, JSON.stringify(c.parts));
      });
    },

    countTurns(channel) {
      return selectTurns.all(channel).length;
    },

    markJob(id, channel, status) {
      upsertJob.run(id, channel, status, Date.now());
    },

    addNote(channel, body) {
      insertNote.run(channel, body, Date.now());
    },

    recentNotes(channel, n = 5) {
      return selectNotes.all(channel, n).map((r) => r.body);
    },

    close() {
      db.close();
    },
  };
}
