'use strict';

const CHECKPOINT_TTL_S = 3 * 24 * 3600;
const MAX_CONTEXT_CHARS = 120_000;
const PAN_RE = /\b(?:\d[ -]?){13,19}\b/g;

function scrub(text) {
  return typeof text === 'string' ? text.replace(PAN_RE, '[card number removed]') : text;
}

// Card numbers must never be persisted, so tool output is scrubbed before every save.
function scrubToolOutputs(messages) {
  messages.forEach((m, i) => {
    if (m.role !== 'tool') return;
    messages[i] = {
      ...m,
      content: m.content.map((c) =>
        c.type === 'document' ? { ...c, document: { ...c.document, data: scrub(c.document.data) } } : c,
      ),
    };
  });
}

async function saveCheckpoint(redis, runId, state) {
  scrubToolOutputs(state.messages);
  await redis
    .multi()
    .set(`run:${runId}:messages`, JSON.stringify(state.messages), 'EX', CHECKPOINT_TTL_S)
    .set(`run:${runId}:turn`, String(state.turn), 'EX', CHECKPOINT_TTL_S)
    .exec();
}

async function loadCheckpoint(redis, runId) {
  const [messages, turn] = await redis.mget(`run:${runId}:messages`, `run:${runId}:turn`);
  if (!messages) return null;
  return { messages: JSON.parse(messages), turn: Number(turn ?? 0) };
}

function size(message) {
  return JSON.stringify(message).length;
}

// Keep the system prompt and drop the oldest turns until the request fits.
function trimHistory(messages) {
  const [system, ...rest] = messages;
  let total = rest.reduce((n, m) => n + size(m), size(system));
  const kept = [...rest];
  while (total > MAX_CONTEXT_CHARS && kept.length > 1) {
    total -= size(kept.shift());
  }
  return [system, ...kept];
}

module.exports = { saveCheckpoint, loadCheckpoint, trimHistory };
