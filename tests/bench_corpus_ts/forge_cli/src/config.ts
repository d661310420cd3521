import { promises as fsp } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export interface ForgeConfig {
  model: string;
  baseURL?: string;
  workspace: string;
  autoApprove: string[];
  contextMessages: number;
  shellTimeoutMs: number;
}

const CONFIG_DIR = path.join(os.homedir(), ".config", "forge");
const CONFIG_FILE = path.join(CONFIG_DIR, "config.json");

const DEFAULTS: ForgeConfig = {
  model: "gpt-4o-2024-08-06",
  workspace: process.cwd(),
  autoApprove: ["read_file", "list_dir", "search"],
  contextMessages: 60,
  shellTimeoutMs: 120_000,
};

export async function loadConfig(overrides: Partial<ForgeConfig> = {}): Promise<ForgeConfig> {
  let fromDisk: Partial<ForgeConfig> = {};
  try {
    fromDisk = JSON.parse(await fsp.readFile(CONFIG_FILE, "utf8"));
  } catch (err: any) {
    if (err?.code !== "ENOENT") {
      console.warn(`forge: ignoring unreadable ${CONFIG_FILE}: ${err.message}`);
    }
  }
  return { ...DEFAULTS, ...fromDisk, ...overrides };
}

export async function saveConfig(cfg: ForgeConfig): Promise<void> {
  await fsp.mkdir(CONFIG_DIR, { recursive: true });
  const tmp = path.join(CONFIG_DIR, `.config.json.${process.pid}.tmp`);
  const fh = await fsp.open(tmp, "w", 0o600);
  try {
    await fh.writeFile(JSON.stringify(cfg, null, 2));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fsp.rename(tmp, CONFIG_FILE);
}
