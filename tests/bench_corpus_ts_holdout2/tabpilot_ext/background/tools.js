// Browser tools. DOM actions run in the content script of the target tab and are
// reached with chrome.tabs.sendMessage; run_shell goes to the native host.

const NATIVE_HOST = 'dev.tabpilot.shell';
const SENSITIVE = new Set(['click', 'type_text', 'submit_form', 'run_shell']);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function withDeadline(promise, ms, what) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

async function sendToTab(tabId, message, { attempts = 3, timeoutMs = 8000 } = {}) {
  let lastError;
  for (let i = 0; i < attempts; i++) {
    try {
      return await withDeadline(chrome.tabs.sendMessage(tabId, message), timeoutMs, message.action);
    } catch (err) {
      lastError = err;
      if (/Receiving end does not exist/.test(String(err?.message ?? err))) {
        await chrome.scripting.executeScript({ target: { tabId }, files: ['content/content.js'] });
      }
      await sleep(250 * (i + 1));
    }
  }
  throw lastError;
}

function waitForLoad(tabId, signal, timeoutMs = 20000) {
  return new Promise((resolve, reject) => {
    const done = (fn, value) => {
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      signal.removeEventListener('abort', onAbort);
      fn(value);
    };
    const onUpdated = (id, info, tab) => {
      if (id === tabId && info.status === 'complete') done(resolve, tab);
    };
    const onAbort = () => done(reject, new DOMException('stopped', 'AbortError'));
    const timer = setTimeout(() => done(reject, new Error(`page did not finish loading in ${timeoutMs} ms`)), timeoutMs);
    chrome.tabs.onUpdated.addListener(onUpdated);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

let nativePort = null;
const shellWaiters = new Map();

function shellPort() {
  if (nativePort) return nativePort;
  nativePort = chrome.runtime.connectNative(NATIVE_HOST);
  nativePort.onMessage.addListener((msg) => {
    const waiter = shellWaiters.get(msg.id);
    if (waiter) {
      shellWaiters.delete(msg.id);
      waiter(msg);
    }
  });
  nativePort.onDisconnect.addListener(() => {
    const reason = chrome.runtime.lastError?.message ?? 'native host disconnected';
    for (const [id, waiter] of shellWaiters) waiter({ id, code: -1, error: reason, output: '' });
    shellWaiters.clear();
    nativePort = null;
  });
  return nativePort;
}

const handlers = {
  async read_page(input, ctx) {
    const page = await sendToTab(ctx.tabId, { action: 'read_page', maxChars: input.max_chars ?? 12000 });
    return { text: `# ${page.title}\n${page.url}\n\n${page.text}` };
  },

  async navigate(input, ctx) {
    const url = new URL(String(input.url));
    if (!/^https?:$/.test(url.protocol)) throw new Error(`refusing to open ${url.protocol} URLs`);
    await chrome.tabs.update(ctx.tabId, { url: url.href });
    const tab = await waitForLoad(ctx.tabId, ctx.signal);
    return { text: `Loaded ${tab.title}`, url: tab.url };
  },

  async click(input, ctx) {
    const r = await sendToTab(ctx.tabId, { action: 'click', selector: input.selector });
    return { text: r.ok ? `Clicked ${input.selector}` : `No element matches ${input.selector}` };
  },

  async type_text(input, ctx) {
    const r = await sendToTab(ctx.tabId, { action: 'type', selector: input.selector, text: String(input.text ?? '') });
    return { text: r.ok ? `Typed into ${input.selector}` : `No input matches ${input.selector}` };
  },

  async submit_form(input, ctx) {
    const r = await sendToTab(ctx.tabId, { action: 'submit', selector: input.selector ?? 'form' });
    return { text: r.ok ? `Submitted ${input.selector ?? 'form'}` : `No form matches ${input.selector ?? 'form'}` };
  },

  async snapshot_tabs() {
    const tabs = await chrome.tabs.query({ currentWindow: true });
    const pages = await Promise.all(
      tabs.map(async (t) => {
        const [{ result }] = await chrome.scripting.executeScript({
          target: { tabId: t.id },
          func: () => document.body?.innerText?.slice(0, 1500) ?? '',
        });
        return `## [${t.id}] ${t.title}\n${t.url}\n${result}`;
      }),
    );
    return { text: pages.join('\n\n') };
  },

  async run_shell(input, ctx) {
    const id = crypto.randomUUID();
    const port = shellPort();
    const timeoutMs = Math.min(Number(input.timeout_s ?? 60), 300) * 1000;
    const onAbort = () => port.postMessage({ type: 'cancel', id });
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const reply = await new Promise((resolve) => {
        shellWaiters.set(id, resolve);
        port.postMessage({ type: 'run', id, command: String(input.command), cwd: input.cwd, timeoutMs });
      });
      if (reply.timedOut) {
        return { text: `run_shell timed out after ${timeoutMs / 1000} s; partial output:\n${reply.output}` };
      }
      if (reply.error) throw new Error(reply.error);
      return { text: `exit ${reply.code}\n${reply.output}` };
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  },
};

const DEFINITIONS = [
  {
    name: 'read_page',
    description: 'Read the visible text of the current tab.',
    input_schema: { type: 'object', properties: { max_chars: { type: 'integer' } } },
  },
  {
    name: 'navigate',
    description: 'Open an http(s) URL in the current tab and wait for it to load.',
    input_schema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
  },
  {
    name: 'click',
    description: 'Click the first element matching a CSS selector.',
    input_schema: { type: 'object', properties: { selector: { type: 'string' } }, required: ['selector'] },
  },
  {
    name: 'type_text',
    description: 'Type text into the input matching a CSS selector.',
    input_schema: {
      type: 'object',
      properties: { selector: { type: 'string' }, text: { type: 'string' } },
      required: ['selector', 'text'],
    },
  },
  {
    name: 'submit_form',
    description: 'Submit the form matching a CSS selector (default: the first form).',
    input_schema: { type: 'object', properties: { selector: { type: 'string' } } },
  },
  {
    name: 'snapshot_tabs',
    description: 'Titles, URLs and the first lines of text of every tab in this window.',
    input_schema: { type: 'object', properties: {} },
  },
  {
    name: 'run_shell',
    description: "Run a shell command on the user's machine through the TabPilot helper.",
    input_schema: {
      type: 'object',
      properties: { command: { type: 'string' }, cwd: { type: 'string' }, timeout_s: { type: 'integer' } },
      required: ['command'],
    },
  },
];

export class BrowserTools {
  constructor({ shellEnabled }) {
    this.enabled = DEFINITIONS.filter((d) => shellEnabled || d.name !== 'run_shell');
  }

  definitions() {
    return [...this.enabled].sort((a, b) => a.name.localeCompare(b.name));
  }

  isSensitive(name) {
    return SENSITIVE.has(name);
  }

  async run(name, input, ctx) {
    const handler = this.enabled.some((d) => d.name === name) ? handlers[name] : undefined;
    if (!handler) return { text: `Unknown tool: ${name}`, isError: true };
    return handler(input ?? {}, ctx);
  }
}
