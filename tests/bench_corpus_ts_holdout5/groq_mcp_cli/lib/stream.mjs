// Accumulates one streamed chat completion from groq-sdk into a single turn.

export async function collectTurn(stream, onText) {
  let content = '';
  const calls = {};
  let finishReason = null;

  for await (const chunk of stream) {
    const choice = chunk.choices?.[0];
    if (!choice) continue;

    const delta = choice.delta ?? {};
    if (delta.content) {
      content += delta.content;
      onText(delta.content);
    }
    for (const tc of delta.tool_calls ?? []) {
      const slot = (calls[tc.index] ??= { id: '', name: '', arguments: '' });
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.name += tc.function.name;
      if (tc.function?.arguments) slot.arguments += tc.function.arguments;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }

  const toolCalls = Object.keys(calls)
    .map(Number)
    .sort((a, b) => a - b)
    .map((i) => calls[i]);

  return { content, toolCalls, finishReason };
}
