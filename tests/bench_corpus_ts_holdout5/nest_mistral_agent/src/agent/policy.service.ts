import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';

const READ_ONLY_TOOLS = new Set(['read_file', 'fetch_docs']);

@Injectable()
export class PolicyService {
  private readonly writableWorkspaces: string[];

  constructor(config: ConfigService) {
    this.writableWorkspaces = (config.get<string>('WRITABLE_WORKSPACES') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  allows(tool: string, workspace: string): boolean {
    if (READ_ONLY_TOOLS.has(tool)) return true;
    return this.writableWorkspaces.includes(workspace);
  }
}
