import axios from "axios";
import { tool } from "ai";
import { z } from "zod";

const http = axios.create({
  headers: { "user-agent": "DeskCopilot/0.9 (+https://example.com/desk)" },
  maxRedirects: 5,
  responseType: "text",
});

function textOf(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/gi, " ")
    .replace(/<style[\s\S]*?<\/style>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

async function fetchPage(url: string): Promise<{ url: string; text: string }> {
  const res = await http.get<string>(url);
  return { url, text: textOf(res.data).slice(0, 8000) };
}

export const webTools = {
  open_url: tool({
    description: "Open a web page and return its readable text. The user must confirm each URL.",
    parameters: z.object({ url: z.string().url() }),
  }),

  compare_pages: tool({
    description: "Fetch several pages and return their text side by side",
    parameters: z.object({ urls: z.array(z.string().url()).max(6) }),
    execute: async ({ urls }) => {
      try {
        const pages = await Promise.all(urls.map((u) => fetchPage(u)));
        return pages.map((p) => `### ${p.url}\n${p.text}`).join("\n\n");
      } catch (e) {
        return `Error: ${(e as Error).message}`;
      }
    },
  }),
};

export async function openConfirmedUrl(url: string): Promise<string> {
  try {
    const page = await fetchPage(url);
    return page.text;
  } catch (e) {
    return `Error: ${(e as Error).message}`;
  }
}
