import express from "express";
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { RealtimeSession } from "./realtime.js";
import { LocalHistory } from "./history.js";
import { Transcript, readEvents } from "./transcript.js";

const app = express();
app.use(express.json({ limit: "256kb" }));

const calls = new Map<string, { transcript: Transcript; history: LocalHistory; session?: RealtimeSession }>();

app.post("/api/calls", (req, res) => {
  const callId = randomUUID();
  const callerId = String(req.body?.callerId ?? "anonymous");
  calls.set(callId, { transcript: new Transcript(callId), history: new LocalHistory() });
  res.json({ callId, callerId, socket: `/voice?call=${callId}&caller=${encodeURIComponent(callerId)}` });
});

app.get("/api/calls/:id/events", (req, res) => res.json(readEvents(req.params.id)));

// Staff dashboard: one-paragraph summary of a finished call.
app.post("/api/calls/:id/summary", async (req, res) => {
  const call = calls.get(req.params.id);
  if (!call) return res.status(404).json({ error: "no such call" });
  const ac = new AbortController();
  res.on("close", () => {
    if (!res.writableEnded) ac.abort();
  });
  try {
    const r = await fetch("https://api.openai.com/v1/chat/completions", {
      method: "POST",
      signal: ac.signal,
      headers: { Authorization: `Bearer ${process.env.OPENAI_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        messages: [
          { role: "system", content: "Summarise this phone call for clinic staff in one paragraph." },
          { role: "user", content: call.transcript.all().map((e) => `${e.role}: ${e.text}`).join("\n") },
        ],
      }),
    });
    const body = await r.json();
    res.json({ summary: body.choices?.[0]?.message?.content ?? "" });
  } catch (err) {
    if (!ac.signal.aborted) res.status(502).json({ error: "summary failed" });
  }
});

const server = createServer(app);
const wss = new WebSocketServer({ server, path: "/voice" });

wss.on("connection", async (browser, req) => {
  const url = new URL(req.url ?? "", "http://localhost");
  const call = calls.get(url.searchParams.get("call") ?? "");
  if (!call) {
    browser.close(4404, "unknown call");
    return;
  }
  const session = new RealtimeSession(
    url.searchParams.get("caller") ?? "anonymous",
    {
      sendJson: (ev) => browser.send(JSON.stringify(ev)),
      sendAudio: (b64) => browser.send(Buffer.from(b64, "base64")),
    },
    call.transcript,
    call.history,
  );
  call.session = session;
  try {
    await session.connect();
  } catch {
    browser.close(1011, "model unavailable");
    return;
  }
  browser.on("message", (data, isBinary) => isBinary && session.appendAudio(data as Buffer));
  browser.on("close", () => session.close());
});

server.listen(Number(process.env.PORT ?? 8080), () => {
  console.log(`voice agent listening on ${process.env.PORT ?? 8080}`);
});
