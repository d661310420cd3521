import { saveRun, logEvent } from './store.js';

const MAX_STEPS = 25;
const MAX_CONTEXT_MESSAGES = 30;

const SYSTEM_PROMPT = `You are TabPilot, an assistant that operates the user's browser tab.
Use read_page before acting on a page you have not seen. Prefer precise CSS selectors.
Ask before doing anything irreversible such as purchases, posting or deleting.
When the task is complete, answer with a short summary of what you did.`;

function buildSystem(tab) {
  return [
    { type: 'text', text: `The user is currently on "${tab.title}" (${tab.url}).` },
    { type: 'text', text: SYSTEM_PROMPT, cache_control: { type: 'ephemeral' } },
  ];
}

function textOf(content) {
  return content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

export class BrowserAgent {
  constructor({ client, tools, confirm, emit }) {
    this.client = client;
    this.tools = tools;
    this.confirm = confirm;
    this.emit = emit;
    this.controller = new AbortController();
    this.run = null;
  }

  get stopped() {
    return this.controller.signal.aborted;
  }

  stop() {
    this.controller.abort();
  }

  async start(task, tabId) {
    this.run = {
      id: crypto.randomUUID(),
      tabId,
      task,
      status: 'running',
      step: 0,
      pending: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: task }] }],
      createdAt: Date.now(),
    };
    await saveRun(this.run);
    await logEvent(this.run.id, { kind: 'turn', task });
    return this.loop();
  }

  async resume(run) {
    this.run = run;
    if (run.pending.length > 0) {
      const results = await this.execute(run.pending);
      run.messages.push({ role: 'user', content: results });
      run.pending = [];
      await saveRun(run);
    }
    return this.loop();
  }

  async loop() {
    const run = this.run;
    for (; run.step < MAX_STEPS; run.step++) {
      if (this.stopped) {
        run.status = 'stopped';
        await saveRun(run);
        return { status: 'stopped' };
      }

      const tab = await chrome.tabs.get(run.tabId);
      const request = {
        max_tokens: 4096,
        system: buildSystem(tab),
        tools: this.tools.definitions(),
        messages: run.messages.slice(-MAX_CONTEXT_MESSAGES),
      };
      await logEvent(run.id, { kind: 'request', step: run.step, messages: request.messages.length });
      const reply = await this.client.stream(request, {
        onText: (text) => this.emit({ type: 'text', runId: run.id, text }),
      });
      await logEvent(run.id, { kind: 'response', step: run.step, stopReason: reply.stopReason, usage: reply.usage });

      run.messages.push({ role: 'assistant', content: reply.content });
      const uses = reply.content.filter((b) => b.type === 'tool_use');
      if (uses.length === 0) {
        run.status = 'done';
        await saveRun(run);
        return { status: 'done', text: textOf(reply.content) };
      }

      run.pending = uses;
      await saveRun(run);
      const results = await this.execute(uses);
      const page = await chrome.tabs.get(run.tabId).catch(() => null);
      const observation = page ? [{ type: 'text', text: `(tab is now at ${page.url})` }] : [];
      run.messages.push({ role: 'user', content: [...results, ...observation] });
      run.pending = [];
      await saveRun(run);
    }

    run.status = 'done';
    await saveRun(run);
    return { status: 'done', text: textOf(run.messages.at(-1)?.content ?? []) };
  }

  async execute(uses) {
    const results = [];
    for (const use of uses) {
      if (this.stopped) {
        results.push({ type: 'tool_result', tool_use_id: use.id, content: 'Not run: the user pressed Stop.', is_error: true });
        continue;
      }
      if (this.tools.isSensitive(use.name)) {
        const approved = await this.confirm({ runId: this.run.id, name: use.name, input: use.input });
        if (!approved) {
          results.push({ type: 'tool_result', tool_use_id: use.id, content: 'The user declined this action.', is_error: true });
          continue;
        }
      }

      await logEvent(this.run.id, { kind: 'tool_call', name: use.name, input: use.input });
      try {
        const output = await this.tools.run(use.name, use.input, {
          tabId: this.run.tabId,
          signal: this.controller.signal,
        });
        results.push({ type: 'tool_result', tool_use_id: use.id, content: output.text, is_error: Boolean(output.isError) });
        await logEvent(this.run.id, { kind: 'tool_result', name: use.name, text: output.text.slice(0, 4000) });
        if (use.name === 'navigate' && output.url) {
          const assistant = this.run.messages[this.run.messages.length - 1];
          assistant.content.push({ type: 'text', text: `Navigated to ${output.url}` });
        }
      } catch (err) {
        console.warn(`[tabpilot] ${use.name} failed`, err);
        await logEvent(this.run.id, { kind: 'tool_error', name: use.name, message: String(err?.message ?? err) });
      }
    }
    return results;
  }
}
