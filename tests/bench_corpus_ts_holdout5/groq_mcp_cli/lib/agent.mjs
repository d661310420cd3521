import { collectTurn } from './stream.mjs';

const SYSTEM_PROMPT = `You are gq, a terminal assistant working in the user's current directory.
Use local tools for files and shell commands, and MCP tools for external systems.
Keep answers short. Never run destructive commands without being asked.`;

const MAX_HISTORY_MESSAGES = 60;

function compact(messages) {
  if (messages.length <= MAX_HISTORY_MESSAGES) return;
  messages.splice(1, messages.length - MAX_HISTORY_MESSAGES);
}

export async function* runAgent({ groq, hub, local, session, store, model, maxTurns, prompt, signal }) {
  const messages = session.messages;
  if (messages.length === 0) {
    messages.push({ role: 'system', content: SYSTEM_PROMPT });
    await store.append(session.id, messages[0]);
  }
  const userMessage = { role: 'user', content: prompt };
  messages.push(userMessage);
  await store.append(session.id, userMessage);

  const tools = [...local.definitions(), ...hub.definitions()];

  async function dispatch(call) {
    const args = JSON.parse(call.arguments || '{}');
    const output = call.name.startsWith('mcp__')
      ? await hub.call(call.name, args, signal)
      : await local.run(call.name, args, { signal });
    return { role: 'tool', tool_call_id: call.id, content: output };
  }

  for (let turn = 0; turn < maxTurns; turn++) {
    if (signal.aborted) break;
    compact(messages);

    const stream = await groq.chat.completions.create({
      model,
      messages,
      tools,
      tool_choice: 'auto',
      temperature: 0.2,
      stream: true,
    });

    const assistant = { role: 'assistant', content: '' };
    messages.push(assistant);
    const pending = [];
    const result = await collectTurn(stream, (text) => {
      assistant.content += text;
      pending.push(text);
    });
    for (const text of pending) yield { type: 'text', text };

    if (result.toolCalls.length === 0) {
      await store.append(session.id, assistant);
      yield { type: 'final', text: assistant.content };
      return;
    }

    assistant.tool_calls = result.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
    await store.append(session.id, assistant);

    for (const call of result.toolCalls) yield { type: 'tool', name: call.name };
    const toolMessages = await Promise.all(result.toolCalls.map((call) => dispatch(call)));
    for (const msg of toolMessages) {
      messages.push(msg);
      await store.append(session.id, msg);
    }
  }

  const last = messages[messages.length - 1];
  yield { type: 'final', text: typeof last.content === 'string' ? last.content : '' };
}
