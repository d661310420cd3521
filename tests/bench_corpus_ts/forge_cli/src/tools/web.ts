import type { ToolContext } from "./registry.js";
import { clipToolOutput } from "../context.js";

const FETCH_TIMEOUT_MS = 20_000;

function stripHtml(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/gi, "")
    .replace(/<style[\s\S]*?<\/style>/gi, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

export async function fetchUrl(args: { url: string }, ctx: ToolContext): Promise<string> {
  const url = new URL(args.url);
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return `unsupported protocol ${url.protocol}`;
  }
  const res = await fetch(url, {
    redirect: "follow",
    headers: { "user-agent": "forge-cli/0.9" },
    signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]),
  });
  if (!res.ok) {
    throw new Error(`GET ${url.host} failed: ${res.status} ${res.statusText}`);
  }
  const type = res.headers.get("content-type") ?? "";
  const body = await res.text();
  return clipToolOutput(type.includes("html") ? stripHtml(body) : body);
}
