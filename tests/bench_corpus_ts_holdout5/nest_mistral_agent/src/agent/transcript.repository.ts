import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PrismaClient } from '@prisma/client';
import type { ChatMessage } from './agent.service';

@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  async onModuleInit() {
    await this.$connect();
  }

  async onModuleDestroy() {
    await this.$disconnect();
  }
}

@Injectable()
export class TranscriptRepository {
  constructor(private readonly prisma: PrismaService) {}

  async startRun(runId: string, workspace: string, messages: ChatMessage[]): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.agentRun.create({ data: { id: runId, workspace, status: 'running' } }),
      this.prisma.agentMessage.createMany({
        data: messages.map((m, seq) => ({ runId, seq, role: m.role, body: JSON.stringify(m) })),
      }),
    ]);
  }

  async appendTurn(runId: string, assistant: ChatMessage, results: ChatMessage[]): Promise<void> {
    const base = await this.prisma.agentMessage.count({ where: { runId } });
    await this.prisma.agentMessage.create({
      data: { runId, seq: base, role: 'assistant', body: JSON.stringify(assistant) },
    });
    await this.prisma.agentMessage.createMany({
      data: results.map((m, i) => ({ runId, seq: base + 1 + i, role: 'tool', body: JSON.stringify(m) })),
    });
  }

  async finishRun(runId: string, answer: ChatMessage): Promise<void> {
    const seq = await this.prisma.agentMessage.count({ where: { runId } });
    await this.prisma.$transaction([
      this.prisma.agentMessage.create({
        data: { runId, seq, role: 'assistant', body: JSON.stringify(answer) },
      }),
      this.prisma.agentRun.update({ where: { id: runId }, data: { status: 'completed' } }),
    ]);
  }

  async markStatus(runId: string, status: string): Promise<void> {
    await this.prisma.agentRun.update({ where: { id: runId }, data: { status } });
  }

  async load(runId: string): Promise<{ workspace: string; messages: ChatMessage[] }> {
    const run = await this.prisma.agentRun.findUniqueOrThrow({
      where: { id: runId },
      include: { messages: { orderBy: { seq: 'asc' } } },
    });
    return {
      workspace: run.workspace,
      messages: run.messages.map((m) => JSON.parse(m.body) as ChatMessage),
    };
  }
}
