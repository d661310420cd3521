import { request } from 'undici';
import pRetry, { AbortError } from 'p-retry';
import { tool, type RunContext } from '@openai/agents';
import { z } from 'zod';
import { withBudget, type DeskContext } from '../context.js';

function ctxOf(runContext?: RunContext<DeskContext>): DeskContext {
  if (!runContext) throw new Error('desk tools need a run context');
  return runContext.context;
}

function authHeaders(ctx: DeskContext): Record<string, string> {
  return {
    authorization: `Bearer ${ctx.ticketToken}`,
    'content-type': 'application/json',
    'user-agent': 'desk-agent/0.4',
  };
}

export const lookupAsset = tool({
  name: 'lookup_asset',
  description: 'Look up a laptop, phone or monitor in the asset inventory by asset tag or serial number.',
  parameters: z.object({ tag: z.string().min(3) }),
  execute: async ({ tag }, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    const res = await request(`${ctx.ticketApi}/assets/${encodeURIComponent(tag)}`, {
      method: 'GET',
      headers: authHeaders(ctx),
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`inventory returned ${res.statusCode} for ${tag}`);
    }
    const asset = (await res.body.json()) as Record<string, unknown>;
    return JSON.stringify(asset);
  },
});

export const getTicket = tool({
  name: 'get_ticket',
  description: 'Fetch a helpdesk ticket and its latest comments.',
  parameters: z.object({ id: z.string().regex(/^HD-\d+$/) }),
  execute: async ({ id }, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    return pRetry(
      async () => {
        const res = await request(`${ctx.ticketApi}/tickets/${id}?include=comments`, {
          method: 'GET',
          headers: authHeaders(ctx),
          signal: ctx.signal,
          headersTimeout: 15_000,
          bodyTimeout: 15_000,
        });
        if (res.statusCode === 404) {
          await res.body.dump();
          throw new AbortError(`ticket ${id} does not exist`);
        }
        if (res.statusCode >= 500) {
          await res.body.dump();
          throw new Error(`ticket service answered ${res.statusCode}`);
        }
        return JSON.stringify(await res.body.json());
      },
      { retries: 3, minTimeout: 500, signal: ctx.signal },
    );
  },
});

export const createTicket = tool({
  name: 'create_ticket',
  description: 'Open a new helpdesk ticket on behalf of the requester. Returns the ticket id.',
  parameters: z.object({
    title: z.string().max(120),
    body: z.string(),
    priority: z.enum(['low', 'normal', 'high']),
  }),
  execute: async (input, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    const created = await pRetry(
      async () => {
        const res = await request(`${ctx.ticketApi}/tickets`, {
          method: 'POST',
          headers: authHeaders(ctx),
          body: JSON.stringify({ ...input, requester: ctx.requester, source: 'desk-agent' }),
          signal: ctx.signal,
          headersTimeout: 10_000,
        });
        if (res.statusCode >= 300) {
          const text = await res.body.text();
          throw new Error(`create failed (${res.statusCode}): ${text.slice(0, 200)}`);
        }
        return (await res.body.json()) as { id: string; url: string };
      },
      { retries: 4, factor: 2, minTimeout: 1_000 },
    );
    return `Created ${created.id}: ${created.url}`;
  },
});

const STATUS_PAGES: Record<string, string> = {
  vpn: 'https://status.vpn-provider.example.com/api/v2/status.json',
  email: 'https://status.mail-provider.example.com/api/v2/status.json',
  sso: 'https://sso-status.example.com/api/v2/status.json',
  wifi: 'https://netops.internal.example/status.json',
};

export const checkServices = tool({
  name: 'check_services',
  description: 'Check the status pages of company services before troubleshooting a single device.',
  parameters: z.object({
    services: z.array(z.enum(['vpn', 'email', 'sso', 'wifi'])).min(1),
  }),
  execute: async ({ services }, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    const lines = await Promise.all(
      services.map(async (name) => {
        const res = await request(STATUS_PAGES[name], {
          signal: ctx.signal,
          headersTimeout: 8_000,
          bodyTimeout: 8_000,
        });
        const data = (await res.body.json()) as { status: { indicator: string; description: string } };
        return `${name}: ${data.status.description} (${data.status.indicator})`;
      }),
    );
    return lines.join('\n');
  },
});

export const probeEndpoints = tool({
  name: 'probe_endpoints',
  description: 'HEAD-probe a few intranet URLs and report which ones answer.',
  parameters: z.object({ urls: z.array(z.string().url()).min(1).max(10) }),
  execute: async ({ urls }, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    const outcomes = await Promise.allSettled(
      urls.map(async (u) => {
        const res = await request(u, { method: 'HEAD', signal: ctx.signal, headersTimeout: 5_000 });
        await res.body.dump();
        return res.statusCode;
      }),
    );
    return outcomes
      .map((o, i) =>
        o.status === 'fulfilled'
          ? `${urls[i]}: HTTP ${o.value}`
          : `${urls[i]}: no answer (${(o.reason as Error).message})`,
      )
      .join('\n');
  },
});

export const fetchDeviceLogs = tool({
  name: 'fetch_device_logs',
  description: 'Download the tail of the latest diagnostic bundle uploaded by the device management agent.',
  parameters: z.object({
    tag: z.string(),
    lines: z.number().int().min(1).max(2000).default(300),
  }),
  execute: async ({ tag, lines }, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    return withBudget('fetch_device_logs', 60_000, ctx.signal, async (signal) => {
      const res = await request(`${ctx.ticketApi}/assets/${encodeURIComponent(tag)}/logs/latest`, {
        headers: authHeaders(ctx),
        signal,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      const text = await res.body.text();
      return text.split('\n').slice(-lines).join('\n');
    });
  },
});
