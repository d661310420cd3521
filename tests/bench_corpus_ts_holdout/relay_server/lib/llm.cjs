'use strict';

const axios = require('axios');
const https = require('node:https');

const BASE_URL = process.env.LLM_BASE_URL || 'http://127.0.0.1:8000/v1';
const API_KEY = process.env.LLM_API_KEY || 'none';
const MODEL = process.env.LLM_MODEL || 'qwen2.5-72b-instruct';

const http = axios.create({
  baseURL: BASE_URL,
  headers: { authorization: `Bearer ${API_KEY}` },
  httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 32 }),
});

class ModelHttpError extends Error {
  constructor(status, detail) {
    super(`model endpoint answered ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'ModelHttpError';
    this.status = status;
    this.retryable = status === 408 || status === 429 || status >= 500;
  }
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function openStream(body, signal) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await http.post('/chat/completions', body, {
        responseType: 'stream',
        signal,
        timeout: 60_000,
      });
    } catch (err) {
      if (axios.isCancel(err)) throw err;
      const status = err.response ? err.response.status : undefined;
      const retryable = status === undefined ? true : status === 408 || status === 429 || status >= 500;
      if (!retryable || attempt >= 3) {
        throw status === undefined ? err : new ModelHttpError(status, err.message);
      }
      await sleep(500 * 2 ** attempt, signal);
    }
  }
}

async function streamChat({ messages, tools, signal, onText }) {
  const res = await openStream(
    {
      model: MODEL,
      messages,
      tools,
      tool_choice: 'auto',
      temperature: 0.2,
      stream: true,
      stream_options: { include_usage: true },
    },
    signal,
  );

  const toolCalls = [];
  let content = '';
  let finishReason = null;
  let usage = null;
  let buffer = '';

  for await (const chunk of res.data) {
    buffer += chunk.toString('utf8');
    let boundary;
    while ((boundary = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      for (const line of frame.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (!data || data === '[DONE]') continue;
        const event = JSON.parse(data);
        if (event.usage) usage = event.usage;
        const choice = event.choices && event.choices[0];
        if (!choice) continue;
        if (choice.finish_reason) finishReason = choice.finish_reason;
        const delta = choice.delta || {};
        if (delta.content) {
          content += delta.content;
          if (onText) onText(delta.content);
        }
        for (const tc of delta.tool_calls || []) {
          if (!toolCalls[tc.index]) {
            toolCalls[tc.index] = { id: tc.id, type: 'function', function: { name: '', arguments: '' } };
          }
          const slot = toolCalls[tc.index];
          if (tc.function && tc.function.name) slot.function.name += tc.function.name;
          if (tc.function && tc.function.arguments) slot.function.arguments += tc.function.arguments;
        }
      }
    }
  }

  const message = { role: 'assistant', content: content || null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  return { message, finishReason, usage };
}

module.exports = { streamChat, ModelHttpError, sleep, MODEL };
