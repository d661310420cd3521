import type Anthropic from "@anthropic-ai/sdk";

export interface Env {
  ANTHROPIC_API_KEY: string;
  CONCIERGE: DurableObjectNamespace;
  BOOKINGS_API: string;
  BOOKINGS_TOKEN: string;
  NOTIFY_QUEUE: Queue<NotifyJob>;
  KV: KVNamespace;
}

export interface NotifyJob {
  bookingId: string;
  email: string;
  webhook: string;
  summary: string;
}

export type ToolFailure =
  | { kind: "timeout"; tool: string; afterMs: number }
  | { kind: "denied"; tool: string }
  | { kind: "upstream"; tool: string; status: number; retryable: boolean }
  | { kind: "invalid_input"; tool: string; detail: string };

export type ToolOutcome = { ok: true; value: unknown } | { ok: false; failure: ToolFailure };

export interface ToolContext {
  env: Env;
  signal: AbortSignal;
  sessionId: string;
}

export interface ConciergeTool {
  spec: Anthropic.Tool;
  needsApproval: boolean;
  run(input: Record<string, any>, ctx: ToolContext): Promise<ToolOutcome>;
}

async function timed(tool: string, ms: number, parent: AbortSignal, fn: (s: AbortSignal) => Promise<Response>): Promise<Response | ToolFailure> {
  const signal = AbortSignal.any([parent, AbortSignal.timeout(ms)]);
  try {
    return await fn(signal);
  } catch (err) {
    if ((err as Error).name === "TimeoutError") return { kind: "timeout", tool, afterMs: ms };
    throw err;
  }
}

export const TOOLS: Record<string, ConciergeTool> = {
  search_availability: {
    needsApproval: false,
    spec: {
      name: "search_availability",
      description: "Search free slots for a venue on a date",
      input_schema: {
        type: "object",
        properties: { venue: { type: "string" }, date: { type: "string" } },
        required: ["venue", "date"],
      },
    },
    async run(input, ctx) {
      const url = `${ctx.env.BOOKINGS_API}/availability?venue=${encodeURIComponent(input.venue)}&date=${encodeURIComponent(input.date)}`;
      const res = await timed("search_availability", 20_000, ctx.signal, (signal) =>
        fetch(url, { headers: { authorization: `Bearer ${ctx.env.BOOKINGS_TOKEN}` }, signal })
      );
      if (!(res instanceof Response)) return { ok: false, failure: res };
      if (!res.ok) {
        return { ok: false, failure: { kind: "upstream", tool: "search_availability", status: res.status, retryable: res.status >= 500 } };
      }
      return { ok: true, value: await res.json() };
    },
  },

  venue_info: {
    needsApproval: false,
    spec: {
      name: "venue_info",
      description: "Public web page of a venue",
      input_schema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
    },
    async run(input) {
      const res = await fetch(input.url, { cf: { cacheTtl: 300 } } as RequestInit);
      if (!res.ok) throw new Error(`venue_info failed with ${res.status}`);
      const html = await res.text();
      return { ok: true, value: html.replace(/<[^>]+>/g, " ").slice(0, 12000) };
    },
  },

  create_booking: {
    needsApproval: true,
    spec: {
      name: "create_booking",
      description: "Book a slot for the guest",
      input_schema: {
        type: "object",
        properties: { venue: { type: "string" }, slot: { type: "string" }, guests: { type: "integer" }, email: { type: "string" } },
        required: ["venue", "slot", "guests", "email"],
      },
    },
    async run(input, ctx) {
      const idempotencyKey = `${ctx.sessionId}:${input.venue}:${input.slot}`;
      let lastStatus = 0;
      for (let attempt = 0; attempt < 3; attempt++) {
        const res = await fetch(`${ctx.env.BOOKINGS_API}/bookings`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${ctx.env.BOOKINGS_TOKEN}`,
            "content-type": "application/json",
            "idempotency-key": idempotencyKey,
          },
          body: JSON.stringify(input),
          signal: ctx.signal,
        });
        if (res.ok) {
          const booking = (await res.json()) as { id: string };
          await ctx.env.NOTIFY_QUEUE.send({ bookingId: booking.id, email: input.email, webhook: `${ctx.env.BOOKINGS_API}/hooks/confirmed`, summary: `${input.guests} guests at ${input.venue}, ${input.slot}` });
          return { ok: true, value: booking };
        }
        lastStatus = res.status;
        if (res.status < 500) break;
        await new Promise((r) => setTimeout(r, 400 * (attempt + 1)));
      }
      return { ok: false, failure: { kind: "upstream", tool: "create_booking", status: lastStatus, retryable: lastStatus >= 500 } };
    },
  },
};
