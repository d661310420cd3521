// IndexedDB persistence for runs (conversation + bookkeeping) and the event log.

const DB_NAME = 'tabpilot';
const DB_VERSION = 3;

let dbPromise = null;

function openDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, DB_VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains('runs')) {
        db.createObjectStore('runs', { keyPath: 'id' });
      }
      if (!db.objectStoreNames.contains('events')) {
        const events = db.createObjectStore('events', { autoIncrement: true });
        events.createIndex('byRun', 'runId');
      }
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function db() {
  dbPromise ??= openDb();
  return dbPromise;
}

async function inTransaction(storeNames, mode, work) {
  const conn = await db();
  return new Promise((resolve, reject) => {
    const tx = conn.transaction(storeNames, mode);
    let result;
    tx.oncomplete = () => resolve(result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('transaction aborted'));
    const req = work(tx);
    if (req) req.onsuccess = () => { result = req.result; };
  });
}

export async function saveRun(run) {
  const snapshot = structuredClone({ ...run, savedAt: Date.now() });
  await inTransaction(['runs'], 'readwrite', (tx) => tx.objectStore('runs').put(snapshot));
}

export function loadRun(id) {
  return inTransaction(['runs'], 'readonly', (tx) => tx.objectStore('runs').get(id));
}

export async function unfinishedRuns() {
  const all = await inTransaction(['runs'], 'readonly', (tx) => tx.objectStore('runs').getAll());
  return (all ?? []).filter((r) => r.status === 'running').sort((a, b) => b.savedAt - a.savedAt);
}

export async function logEvent(runId, event) {
  await inTransaction(['events'], 'readwrite', (tx) =>
    tx.objectStore('events').add({ runId, at: Date.now(), ...event }),
  );
}

export function eventsFor(runId) {
  return inTransaction(['events'], 'readonly', (tx) => tx.objectStore('events').index('byRun').getAll(runId));
}
