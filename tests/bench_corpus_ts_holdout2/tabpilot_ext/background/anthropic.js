// Anthropic Messages API over fetch, with a small SSE reader.
// MV3 service workers have no EventSource for POST, so the stream is parsed by hand.

const API_URL = 'https://api.anthropic.com/v1/messages';
const API_VERSION = '2023-06-01';

async function* readSse(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const frames = buffer.split(/\r?\n\r?\n/);
    buffer = frames.pop() ?? '';
    for (const frame of frames) {
      let event = 'message';
      const data = [];
      for (const line of frame.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) yield { event, data: JSON.parse(data.join('\n')) };
    }
  }
}

export class AnthropicClient {
  constructor(getApiKey, model = 'claude-sonnet-4-5') {
    this.getApiKey = getApiKey;
    this.model = model;
  }

  async stream(request, { onText } = {}) {
    const apiKey = await this.getApiKey();
    const res = await fetch(API_URL, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': apiKey,
        'anthropic-version': API_VERSION,
        'anthropic-dangerous-direct-browser-access': 'true',
      },
      body: JSON.stringify({ model: this.model, ...request, stream: true }),
    });
    if (!res.ok) {
      throw new Error(`Anthropic API error ${res.status}: ${await res.text()}`);
    }

    const blocks = [];
    let stopReason = null;
    let usage = {};
    let sawStop = false;

    for await (const { event, data } of readSse(res.body)) {
      switch (event) {
        case 'message_start':
          usage = { ...data.message.usage };
          break;
        case 'content_block_start': {
          const block = { ...data.content_block };
          if (block.type === 'tool_use') block.partialJson = '';
          if (block.type === 'text') block.text = block.text ?? '';
          blocks[data.index] = block;
          break;
        }
        case 'content_block_delta': {
          const block = blocks[data.index];
          const delta = data.delta;
          if (delta.type === 'text_delta') {
            block.text += delta.text;
            onText?.(delta.text);
          } else if (delta.type === 'input_json_delta') {
            block.partialJson += delta.partial_json;
          } else if (delta.type === 'thinking_delta') {
            block.thinking = (block.thinking ?? '') + delta.thinking;
          } else if (delta.type === 'signature_delta') {
            block.signature = delta.signature;
          }
          break;
        }
        case 'content_block_stop': {
          const block = blocks[data.index];
          if (block?.type === 'tool_use') {
            block.input = block.partialJson ? JSON.parse(block.partialJson) : {};
            delete block.partialJson;
          }
          break;
        }
        case 'message_delta':
          stopReason = data.delta.stop_reason ?? stopReason;
          if (data.usage) usage = { ...usage, ...data.usage };
          break;
        case 'message_stop':
          sawStop = true;
          break;
        case 'error':
          throw new Error(`stream error ${data.error?.type}: ${data.error?.message}`);
        default:
          break; // ping
      }
    }

    if (!sawStop) {
      throw new Error('response stream ended before message_stop; partial response discarded');
    }
    return { content: blocks.filter(Boolean), stopReason, usage };
  }
}
