import { readdirSync } from "node:fs";
import path from "node:path";
import type { Tool } from "ai";
import { lookupCompany, readDoc, readPage, searchWeb, sendDigestTool, summarizeSources } from "./tools";

const INTEGRATIONS_DIR = path.join(process.cwd(), "integrations");

type ToolSet = Record<string, Tool>;

let cached: ToolSet | undefined;

async function loadIntegrations(): Promise<ToolSet> {
  const found: ToolSet = {};
  for (const file of readdirSync(INTEGRATIONS_DIR)) {
    if (!/\.(ts|js)$/.test(file) || file.startsWith("_")) continue;
    const mod = await import(/* webpackIgnore: true */ path.join(INTEGRATIONS_DIR, file));
    for (const [name, t] of Object.entries(mod.tools ?? {})) {
      found[name] = t as Tool;
    }
  }
  return found;
}

export async function getTools(): Promise<ToolSet> {
  if (cached) return cached;
  const integrations = await loadIntegrations();
  cached = {
    ...integrations,
    searchWeb,
    readPage,
    summarizeSources,
    lookupCompany,
    readDoc,
    sendDigest: sendDigestTool,
  };
  return cached;
}

export const APPROVAL_REQUIRED = new Set(["sendDigest"]);
