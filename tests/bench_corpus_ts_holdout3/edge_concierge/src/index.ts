import { Hono } from "hono";
import { ConciergeSession } from "./agent";
import { consume } from "./queue";
import type { Env, NotifyJob } from "./tools";

const app = new Hono<{ Bindings: Env }>();

function stub(env: Env, sessionId: string) {
  return env.CONCIERGE.get(env.CONCIERGE.idFromName(sessionId));
}

app.post("/sessions/:id/messages", async (c) => {
  const body = await c.req.json<{ text: string }>();
  if (!body.text || body.text.length > 4000) return c.json({ error: "text required (max 4000 chars)" }, 400);
  const res = await stub(c.env, c.req.param("id")).fetch("https://do/messages", {
    method: "POST",
    body: JSON.stringify({ text: body.text }),
    signal: c.req.raw.signal,
  });
  return new Response(res.body, res);
});

app.post("/sessions/:id/approve", async (c) => {
  const body = await c.req.json<{ approved: boolean }>();
  const res = await stub(c.env, c.req.param("id")).fetch("https://do/approve", {
    method: "POST",
    body: JSON.stringify({ approved: body.approved === true }),
    signal: c.req.raw.signal,
  });
  return new Response(res.body, res);
});

app.post("/sessions/:id/cancel", async (c) => {
  await stub(c.env, c.req.param("id")).fetch("https://do/cancel", { method: "POST" });
  return c.body(null, 204);
});

export { ConciergeSession };

export default {
  fetch: app.fetch,
  async queue(batch: MessageBatch<NotifyJob>, env: Env): Promise<void> {
    await consume(batch, env);
  },
};
