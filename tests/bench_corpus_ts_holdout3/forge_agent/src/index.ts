import { ChatClient } from "./client.js";
import { Session } from "./session.js";

export { ChatClient } from "./client.js";
export { Session, Turn } from "./session.js";
export { ToolRunner } from "./toolRunner.js";
export { runContext } from "./context.js";

export async function runTask(task: string, workspace: string): Promise<void> {
  const client = new ChatClient({ apiKey: process.env.OPENAI_API_KEY ?? "", model: process.env.FORGE_MODEL ?? "gpt-4.1" });
  const session = new Session({ client, workspace, stateFile: `${workspace}/.forge/session.json` });
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  const result = await session.run(task, controller.signal);
  process.stdout.write(`${result.status}: ${result.text}\n`);
  if (result.status !== "completed") process.exitCode = 2;
}
