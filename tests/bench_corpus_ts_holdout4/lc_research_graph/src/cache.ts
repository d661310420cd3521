import { OpenAIEmbeddings } from "@langchain/openai";
import { open, readFile, rename } from "node:fs/promises";

interface Entry {
  text: string;
  source: string;
  vector: number[];
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / (Math.sqrt(na) * Math.sqrt(nb) || 1);
}

// A small on-disk vector cache of notes from earlier research runs.
export class VectorCache {
  private entries: Entry[] = [];
  private embeddings = new OpenAIEmbeddings({ model: "text-embedding-3-small" });

  constructor(private readonly file: string) {}

  async load(): Promise<void> {
    try {
      this.entries = JSON.parse(await readFile(this.file, "utf8"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }

  async similar(text: string, k: number): Promise<Entry[]> {
    if (this.entries.length === 0) return [];
    const q = await this.embeddings.embedQuery(text);
    return [...this.entries]
      .map((e) => ({ e, score: cosine(q, e.vector) }))
      .sort((x, y) => y.score - x.score)
      .slice(0, k)
      .map((x) => x.e);
  }

  async addDocuments(docs: { text: string; source: string }[]): Promise<number> {
    const settled = await Promise.allSettled(docs.map((d) => this.embeddings.embedQuery(d.text)));
    let added = 0;
    settled.forEach((r, i) => {
      if (r.status === "fulfilled") {
        this.entries.push({ ...docs[i], vector: r.value });
        added++;
      } else {
        console.warn(`embedding failed for ${docs[i].source}: ${String(r.reason)}`);
      }
    });
    await this.persist();
    return added;
  }

  private async persist(): Promise<void> {
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fh = await open(tmp, "w");
    try {
      await fh.writeFile(JSON.stringify(this.entries));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
  }
}

export const cache = new VectorCache(process.env.NOTES_CACHE ?? "./notes-cache.json");
