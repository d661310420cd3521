const API = "https://api.pagerduty.com";
let defaultEscalation = null;

export async function setup() {
  if (!process.env.PAGERDUTY_TOKEN) return;
  const res = await fetch(`${API}/escalation_policies?limit=1`, {
    headers: { authorization: `Token token=${process.env.PAGERDUTY_TOKEN}`, accept: "application/json" },
    signal: AbortSignal.timeout(5_000),
  });
  if (res.ok) defaultEscalation = (await res.json()).escalation_policies?.[0]?.id ?? null;
}

export const tools = {
  pd_oncall: {
    description: "Who is on call right now for an escalation policy (default: the primary one).",
    input_schema: { type: "object", properties: { policy_id: { type: "string" } } },
    run: async ({ policy_id }, ctx) => {
      const policy = policy_id ?? defaultEscalation;
      const res = await fetch(`${API}/oncalls?escalation_policy_ids[]=${policy}`, {
        headers: { authorization: `Token token=${process.env.PAGERDUTY_TOKEN}`, accept: "application/json" },
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(8_000)]),
      });
      const body = await res.json();
      return body.oncalls.map((o) => `L${o.escalation_level}: ${o.user.summary}`).join("\n");
    },
  },
};
