const GRAFANA = process.env.GRAFANA_URL ?? "https://grafana.internal.example.com";

export const tools = {
  grafana_alerts: {
    description: "List firing Grafana alerts, optionally filtered by a label matcher like service=checkout.",
    input_schema: { type: "object", properties: { matcher: { type: "string" } } },
    run: async ({ matcher }, ctx) => {
      const q = matcher ? `?filter=${encodeURIComponent(matcher)}` : "";
      const res = await fetch(`${GRAFANA}/api/alertmanager/grafana/api/v2/alerts${q}`, {
        headers: { authorization: `Bearer ${process.env.GRAFANA_TOKEN}` },
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(8_000)]),
      });
      const alerts = await res.json();
      return alerts.map((a) => `${a.labels.alertname} ${a.labels.service ?? ""} since ${a.startsAt}`).join("\n") || "no firing alerts";
    },
  },
};
