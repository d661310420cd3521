import { Body, Controller, Delete, HttpCode, NotFoundException, Param, Post } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AgentService, RunResult } from './agent.service';

@Controller('runs')
export class AgentController {
  private readonly active = new Map<string, AbortController>();

  constructor(private readonly agent: AgentService) {}

  @Post()
  async start(@Body() body: { prompt: string; workspace: string }): Promise<RunResult> {
    const runId = randomUUID();
    return this.track(runId, (signal) => this.agent.start(runId, body.prompt, body.workspace, signal));
  }

  @Post(':id/resume')
  async resume(@Param('id') runId: string): Promise<RunResult> {
    return this.track(runId, (signal) => this.agent.resume(runId, signal));
  }

  @Delete(':id')
  @HttpCode(202)
  cancel(@Param('id') runId: string) {
    const controller = this.active.get(runId);
    if (!controller) throw new NotFoundException(`no active run ${runId}`);
    controller.abort();
    return { runId, cancelling: true };
  }

  private async track(runId: string, fn: (signal: AbortSignal) => Promise<RunResult>) {
    const controller = new AbortController();
    this.active.set(runId, controller);
    try {
      return await fn(controller.signal);
    } finally {
      this.active.delete(runId);
    }
  }
}
