import { tool } from "ai";
import { z } from "zod";

export const tools = {
  repoStats: tool({
    description: "Stars, forks, open issues and last push time of a public GitHub repository.",
    parameters: z.object({ repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/) }),
    execute: async ({ repo }, { abortSignal }) => {
      const res = await fetch(`https://api.github.com/repos/${repo}`, {
        headers: { accept: "application/vnd.github+json" },
        signal: abortSignal ? AbortSignal.any([abortSignal, AbortSignal.timeout(10_000)]) : AbortSignal.timeout(10_000),
      });
      if (!res.ok) return { ok: false, status: res.status };
      const r = (await res.json()) as Record<string, unknown>;
      return { ok: true, stars: r.stargazers_count, forks: r.forks_count, issues: r.open_issues_count, pushedAt: r.pushed_at };
    },
  }),
};
