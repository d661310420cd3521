'use strict';

const fs = require('node:fs');
const path = require('node:path');

const AUDIT_FILE = process.env.RELAY_AUDIT || path.join(process.cwd(), 'data', 'audit.jsonl');

function append(event) {
  fs.mkdirSync(path.dirname(AUDIT_FILE), { recursive: true });
  fs.appendFileSync(AUDIT_FILE, `${JSON.stringify({ ts: Date.now(), ...event })}\n`);
}

function readAll() {
  if (!fs.existsSync(AUDIT_FILE)) return [];
  const lines = fs.readFileSync(AUDIT_FILE, 'utf8').split('\n');
  const events = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === '') continue;
    try {
      events.push(JSON.parse(lines[i]));
    } catch (err) {
      if (i === lines.length - 1) break;
      throw new Error(`audit log corrupt at line ${i + 1}: ${err.message}`);
    }
  }
  return events;
}

function historyOf(jobId) {
  return readAll().filter((e) => e.job === jobId);
}

module.exports = { append, readAll, historyOf };
