import { Session, type SessionOptions } from "./session.js";
import { current } from "./context.js";

export interface DelegateArgs {
  tasks: string[];
  workspace?: string;
}

export async function spawnSubAgent(parent: SessionOptions, args: DelegateArgs): Promise<string> {
  const ctx = current();
  const children = args.tasks.map(
    (task) =>
      new Session({
        ...parent,
        workspace: args.workspace ?? ctx.workspace,
        depth: ctx.depth + 1,
        stateFile: undefined,
      })
  );
  const results = await Promise.all(children.map((child, i) => child.run(args.tasks[i], ctx.signal)));
  return results
    .map((r, i) => `## sub-task ${i + 1} (${r.status})\n${r.text}`)
    .join("\n\n");
}
