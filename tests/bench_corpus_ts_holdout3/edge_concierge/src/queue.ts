import type { Env, NotifyJob } from "./tools";

async function sendEmail(env: Env, job: NotifyJob): Promise<void> {
  const res = await fetch("https://api.mailchannels.net/tx/v1/send", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      personalizations: [{ to: [{ email: job.email }] }],
      from: { email: "concierge@example.com" },
      subject: "Your booking is confirmed",
      content: [{ type: "text/plain", value: job.summary }],
    }),
  });
  if (!res.ok) throw new Error(`mail ${res.status}`);
}

async function postWebhook(env: Env, job: NotifyJob): Promise<void> {
  const res = await fetch(job.webhook, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${env.BOOKINGS_TOKEN}` },
    body: JSON.stringify({ bookingId: job.bookingId, event: "confirmed" }),
  });
  if (!res.ok) throw new Error(`webhook ${res.status}`);
}

async function handle(env: Env, job: NotifyJob): Promise<void> {
  await sendEmail(env, job);
  await postWebhook(env, job);
  await env.KV.put(`notified:${job.bookingId}`, "1");
}

export async function consume(batch: MessageBatch<NotifyJob>, env: Env): Promise<void> {
  try {
    await Promise.all(batch.messages.map((m) => handle(env, m.body)));
    batch.ackAll();
  } catch (err) {
    console.error("notify batch failed", err);
    batch.retryAll({ delaySeconds: 30 });
  }
}
