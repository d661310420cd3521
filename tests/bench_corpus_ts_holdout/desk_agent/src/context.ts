import path from 'node:path';

export interface DeskContext {
  workspace: string;
  runbooks: string;
  ticketApi: string;
  ticketToken: string;
  requester: string;
  signal: AbortSignal;
}

export function makeContext(signal: AbortSignal, requester: string): DeskContext {
  const workspace = path.resolve(process.env.DESK_WORKSPACE ?? './workspace');
  return {
    workspace,
    runbooks: path.join(workspace, 'runbooks'),
    ticketApi: process.env.TICKET_API ?? 'https://tickets.internal.example/api/v2',
    ticketToken: process.env.TICKET_TOKEN ?? '',
    requester,
    signal,
  };
}

export class ToolTimeout extends Error {
  constructor(
    readonly tool: string,
    readonly ms: number,
  ) {
    super(`${tool} timed out after ${Math.round(ms / 1000)} s`);
    this.name = 'ToolTimeout';
  }
}

export async function withBudget<T>(
  tool: string,
  ms: number,
  parent: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const budget = AbortSignal.timeout(ms);
  const signal = AbortSignal.any([parent, budget]);
  try {
    return await fn(signal);
  } catch (err) {
    if (budget.aborted && !parent.aborted) {
      throw new ToolTimeout(tool, ms);
    }
    throw err;
  }
}
