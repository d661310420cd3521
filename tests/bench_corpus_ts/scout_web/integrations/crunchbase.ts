import { tool } from "ai";
import { z } from "zod";

export const tools = {
  fundingRounds: tool({
    description: "List the funding rounds of a company by its Crunchbase permalink.",
    parameters: z.object({ permalink: z.string() }),
    execute: async ({ permalink }, { abortSignal }) => {
      const res = await fetch(
        `https://api.crunchbase.com/api/v4/entities/organizations/${encodeURIComponent(permalink)}?card_ids=raise`,
        {
          headers: { "X-cb-user-key": process.env.CRUNCHBASE_KEY ?? "" },
          signal: abortSignal ? AbortSignal.any([abortSignal, AbortSignal.timeout(10_000)]) : AbortSignal.timeout(10_000),
        },
      );
      if (!res.ok) return { ok: false, status: res.status };
      const body = (await res.json()) as { cards?: { raise?: unknown[] } };
      return { ok: true, rounds: body.cards?.raise ?? [] };
    },
  }),
};
