import ky, { HTTPError, TimeoutError } from "ky";
import { ToolError, type LoomPlugin } from "@loom/runtime";

function toText(html: string): string {
  const stripped = html.replace(/<(script|style)[\s\S]*?<\/\1>/gi, "").replace(/<[^>]+>/g, " ");
  return stripped.replace(/\s+/g, " ").trim();
}

const plugin: LoomPlugin = {
  name: "web",
  tools: () => [
    {
      name: "fetch_url",
      description: "GET a public web page and return its text content.",
      parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
      async run(args, ctx) {
        const url = new URL(String(args.url));
        if (!/^https?:$/.test(url.protocol)) throw new ToolError("invalid_args", "fetch_url", "only http(s) URLs");
        const remaining = ctx.deadline - Date.now() - 500;
        if (remaining <= 0) throw new ToolError("timeout", "fetch_url", "no time left in the tool budget");
        try {
          const html = await ky.get(url, { timeout: remaining, retry: 0, signal: ctx.signal }).text();
          return toText(html).slice(0, 40_000);
        } catch (err) {
          if (err instanceof TimeoutError) {
            throw new ToolError("timeout", "fetch_url", `fetch_url timed out after ${Math.round(remaining / 1000)} s`);
          }
          if (err instanceof HTTPError) {
            throw new ToolError("upstream", "fetch_url", `HTTP ${err.response.status} from ${url.host}`);
          }
          throw err;
        }
      },
    },
  ],
};

export default plugin;
