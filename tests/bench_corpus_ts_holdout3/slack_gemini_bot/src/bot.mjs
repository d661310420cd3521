import { GoogleGenAI } from "@google/genai";
import { setTimeout as sleep } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import { App } from "@slack/bolt";
import { openStore } from "./store.mjs";
import { buildTools, toFunctionDeclarations } from "./tools.mjs";

const MODEL = process.env.GEMINI_MODEL ?? "gemini-2.0-flash";
const ai = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY });
const store = openStore(process.env.BOT_DB ?? "bot.sqlite");

const app = new App({
  token: process.env.SLACK_BOT_TOKEN,
  signingSecret: process.env.SLACK_SIGNING_SECRET,
});

const running = new Map();

function log(event, fields = {}) {
  process.stdout.write(JSON.stringify({ t: Date.now(), event, ...fields }) + "\n");
}

function systemInstruction(channel) {
  const notes = store.recentNotes(channel);
  return [
    "You are Pip, an engineering helper living in Slack.",
    "Use tools when you need facts from the repository or the web.",
    `Today is ${new Date().toISOString()}.`,
    notes.length ? `Things the team asked you to remember:\n- ${notes.join("\n- ")}` : "",
  ]
    .filter(Boolean)
    .join("\n\n");
}

async function postReply(client, channel, thread_ts, text) {
  let lastErr;
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      return await client.chat.postMessage({ channel, thread_ts, text });
    } catch (err) {
      lastErr = err;
      log("slack_post_retry", { attempt, message: String(err?.message ?? err) });
      await sleep(500 * 2 ** attempt);
    }
  }
  throw lastErr;
}

async function streamTurn(contents, tools, channel, signal) {
  const stream = await ai.models.generateContentStream({
    model: MODEL,
    contents,
    config: {
      systemInstruction: systemInstruction(channel),
      tools: [{ functionDeclarations: toFunctionDeclarations(tools) }],
      abortSignal: signal,
    },
  });

  const parts = [];
  let finishReason;
  for await (const chunk of stream) {
    const cand = chunk.candidates?.[0];
    if (!cand) continue;
    if (cand.finishReason) finishReason = cand.finishReason;
    for (const p of cand.content?.parts ?? []) {
      if (p.text && parts.length && parts[parts.length - 1].text !== undefined) {
        parts[parts.length - 1] = { text: parts[parts.length - 1].text + p.text };
      } else {
        parts.push(p.text !== undefined ? { text: p.text } : p);
      }
    }
  }
  return { parts, finishReason };
}

async function runJob({ jobId, channel, thread_ts, text, client, controller }) {
  const tools = buildTools({ workspace: process.env.WORKSPACE ?? ".", store, channel });
  const byName = new Map(tools.map((t) => [t.name, t]));
  const contents = store.loadHistory(channel);
  const firstNew = contents.length;
  contents.push({ role: "user", parts: [{ text }] });
  store.markJob(jobId, channel, "running");

  let answer = "";
  while (true) {
    const { parts, finishReason } = await streamTurn(contents, tools, channel, controller.signal);
    contents.push({ role: "model", parts });

    const calls = parts.filter((p) => p.functionCall).map((p) => p.functionCall);
    if (calls.length === 0) {
      answer = parts.map((p) => p.text ?? "").join("");
      const lastModel = contents.findLastIndex((c) => c.role === "model");
      contents.splice(lastModel, 1, { role: "model", parts: parts.filter((p) => !p.thought) });
      log("turn_done", { jobId, finishReason });
      break;
    }

    const responses = [];
    for (const call of calls) {
      const tool = byName.get(call.name);
      if (!tool) {
        log("unknown_tool", { jobId, name: call.name });
        continue;
      }
      log("tool", { name: call.name });
      let response;
      try {
        response = await tool.handler(call.args ?? {}, { signal: controller.signal });
      } catch (err) {
        response = { error: String(err?.message ?? err) };
      }
      responses.push({
        functionResponse: { id: call.id, name: call.name, response },
      });
    }
    contents.push({ role: "user", parts: responses });
  }

  store.saveHistory(channel, contents);
  store.markJob(jobId, channel, "done");
  await postReply(client, channel, thread_ts, answer || "(no answer)");
  log("job_saved", { jobId, newTurns: contents.length - firstNew });
}

async function notifyWatchers(client, watchers, text) {
  const results = await Promise.allSettled(
    watchers.map((w) => client.chat.postEphemeral({ channel: w.channel, user: w.user, text }))
  );
  results.forEach((r, i) => {
    if (r.status === "rejected") {
      log("watch_notify_failed", { user: watchers[i].user, reason: String(r.reason) });
    }
  });
  return results.filter((r) => r.status === "fulfilled").length;
}

async function typingHeartbeat(client, channel, ts, signal) {
  try {
    for (let i = 0; ; i++) {
      await sleep(8000, undefined, { signal });
      await client.reactions.add({ channel, timestamp: ts, name: i % 2 ? "hourglass" : "hourglass_flowing_sand" }).catch(() => {});
    }
  } catch (err) {
    if (err?.name !== "AbortError") throw err;
  }
}

app.message(async ({ message, client }) => {
  if (message.subtype || !message.text) return;
  const jobId = randomUUID();
  const controller = new AbortController();
  const key = `${message.channel}:${message.ts}`;
  running.set(key, controller);

  const heartbeat = typingHeartbeat(client, message.channel, message.ts, controller.signal);
  try {
    await runJob({
      jobId,
      channel: message.channel,
      thread_ts: message.thread_ts ?? message.ts,
      text: message.text,
      client,
      controller,
    });
    const watchers = JSON.parse(process.env.WATCHERS ?? "[]");
    if (watchers.length) await notifyWatchers(client, watchers, `Answered ${key}`);
  } catch (err) {
    store.markJob(jobId, message.channel, "failed");
    log("job_failed", { jobId, message: String(err?.message ?? err) });
  } finally {
    controller.abort();
    await heartbeat;
    running.delete(key);
  }
});

app.command("/pip-stop", async ({ command, ack }) => {
  await ack();
  for (const [key, controller] of running) {
    if (key.startsWith(`${command.channel_id}:`)) controller.abort();
  }
});

app.command("/pip-remember", async ({ command, ack, respond }) => {
  await ack();
  store.addNote(command.channel_id, command.text);
  await respond({ text: "Noted." });
});

await app.start(Number(process.env.PORT ?? 3000));
log("started", { model: MODEL });
