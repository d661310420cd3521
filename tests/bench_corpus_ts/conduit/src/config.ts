import { readFile } from "node:fs/promises";
import path from "node:path";

export interface ServerConfig {
  name: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

export interface ConduitConfig {
  model: string;
  maxTurns: number;
  contextTokens: number;
  servers: ServerConfig[];
  stateDir: string;
}

export async function loadConfig(cwd: string): Promise<ConduitConfig> {
  const file = path.join(cwd, "conduit.json");
  const raw = JSON.parse(await readFile(file, "utf8")) as Partial<ConduitConfig>;
  if (!Array.isArray(raw.servers)) throw new Error(`${file}: "servers" must be an array`);
  for (const s of raw.servers) {
    if (!s.name || !s.command) throw new Error(`${file}: every server needs a name and a command`);
  }
  return {
    model: raw.model ?? "gpt-4.1",
    maxTurns: raw.maxTurns ?? 40,
    contextTokens: raw.contextTokens ?? 120_000,
    servers: raw.servers,
    stateDir: raw.stateDir ?? path.join(cwd, ".conduit"),
  };
}
