import got from "got";
import { ToolError, type LoomPlugin } from "@loom/runtime";

function adf(text: string) {
  return { type: "doc", version: 1, content: [{ type: "paragraph", content: [{ type: "text", text }] }] };
}

const plugin: LoomPlugin = {
  name: "jira",
  tools(options) {
    const baseUrl = String(options.baseUrl ?? process.env.JIRA_URL ?? "").replace(/\/$/, "");
    const jira = got.extend({
      prefixUrl: `${baseUrl}/rest/api/3`,
      headers: { authorization: `Bearer ${String(options.token ?? process.env.JIRA_TOKEN ?? "")}` },
      timeout: { request: 10_000 },
      retry: { limit: 3, methods: ["GET", "POST"], statusCodes: [408, 429, 500, 502, 503, 504] },
    });
    return [
      {
        name: "jira_create_issue",
        description: "Create a Jira issue in a project.",
        parameters: {
          type: "object",
          properties: { project: { type: "string" }, summary: { type: "string" }, description: { type: "string" } },
        },
        async run(args, ctx) {
          if (typeof args.summary !== "string" || !args.summary.trim()) {
            throw new ToolError("invalid_args", "jira_create_issue", "summary is required");
          }
          const fields = {
            project: { key: String(args.project) },
            summary: args.summary,
            description: adf(String(args.description ?? "")),
            issuetype: { name: "Task" },
          };
          const created = await jira.post("issue", { json: { fields }, signal: ctx.signal }).json<{ key: string }>();
          return { key: created.key, url: `${baseUrl}/browse/${created.key}` };
        },
      },
    ];
  },
};

export default plugin;
