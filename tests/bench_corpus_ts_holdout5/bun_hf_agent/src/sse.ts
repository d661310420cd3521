export interface ToolCallAcc {
  id: string;
  name: string;
  arguments: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface TurnOutput {
  content: string;
  toolCalls: ToolCallAcc[];
  finishReason: string | null;
  usage?: Usage;
}

async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let sep: number;
    while ((sep = buf.indexOf('\n\n')) !== -1) {
      const event = buf.slice(0, sep);
      buf = buf.slice(sep + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data) yield data;
    }
  }
}

export async function readTurn(res: Response, onText: (t: string) => void): Promise<TurnOutput> {
  const out: TurnOutput = { content: '', toolCalls: [], finishReason: null };
  for await (const data of sseData(res.body!)) {
    if (data === '[DONE]') break;
    const chunk = JSON.parse(data);
    if (chunk.usage) out.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.delta?.content) {
      out.content += choice.delta.content;
      onText(choice.delta.content);
    }
    for (const d of choice.delta?.tool_calls ?? []) {
      const acc = out.toolCalls[d.index] ?? (out.toolCalls[d.index] = { id: '', name: '', arguments: '' });
      if (d.id) acc.id = d.id;
      if (d.function?.name) acc.name += d.function.name;
      if (d.function?.arguments) acc.arguments += d.function.arguments;
    }
    if (choice.finish_reason) out.finishReason = choice.finish_reason;
  }
  return out;
}
