import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import path from "node:path";

const TRANSCRIPT_DIR = process.env.TRANSCRIPT_DIR ?? "/var/lib/voice-agent/transcripts";

export interface Entry {
  role: "user" | "assistant" | "tool" | "system";
  text: string;
  itemId?: string;
  at: string;
}

export class Transcript {
  private entries: Entry[] = [];

  constructor(readonly callId: string, private readonly dir = TRANSCRIPT_DIR) {
    mkdirSync(dir, { recursive: true });
  }

  add(entry: Omit<Entry, "at">): void {
    this.entries.push({ ...entry, at: new Date().toISOString() });
    writeFileSync(path.join(this.dir, `${this.callId}.json`), JSON.stringify(this.entries, null, 2));
  }

  all(): readonly Entry[] {
    return this.entries;
  }
}

// Raw event log: one JSON object per line, append-only.
export function appendEvent(callId: string, event: Record<string, unknown>): void {
  appendFileSync(path.join(TRANSCRIPT_DIR, `${callId}.events.jsonl`), JSON.stringify({ t: Date.now(), ...event }) + "\n");
}

export function readEvents(callId: string): Record<string, unknown>[] {
  const raw = readFileSync(path.join(TRANSCRIPT_DIR, `${callId}.events.jsonl`), "utf8");
  const out: Record<string, unknown>[] = [];
  for (const line of raw.split("\n")) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // torn final line from a crash mid-append
      break;
    }
  }
  return out;
}

// Compress the raw PCM recording of a call for archiving.
export function archiveAudio(callId: string, pcmPath: string): Promise<number> {
  const out = path.join(TRANSCRIPT_DIR, `${callId}.opus`);
  return new Promise((resolve, reject) => {
    const ff = spawn(
      "ffmpeg",
      ["-nostdin", "-y", "-f", "s16le", "-ar", "24000", "-ac", "1", "-i", pcmPath, "-c:a", "libopus", out],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdio: "ignore" },
    );
    const timer = setTimeout(() => ff.kill("SIGKILL"), 120_000);
    ff.on("error", (err) => (clearTimeout(timer), reject(err)));
    ff.on("close", (code) => (clearTimeout(timer), resolve(code ?? -1)));
  });
}
