import { AnthropicClient } from './anthropic.js';
import { BrowserAgent } from './agent.js';
import { BrowserTools } from './tools.js';
import { unfinishedRuns, eventsFor } from './store.js';

const panels = new Set();
const approvals = new Map();
let current = null;

function broadcast(message) {
  for (const port of panels) {
    try {
      port.postMessage(message);
    } catch {
      panels.delete(port);
    }
  }
}

async function settings() {
  const { apiKey, model, shellEnabled } = await chrome.storage.local.get(['apiKey', 'model', 'shellEnabled']);
  if (!apiKey) throw new Error('Add your Anthropic API key in the TabPilot options first.');
  return { apiKey, model: model || 'claude-sonnet-4-5', shellEnabled: Boolean(shellEnabled) };
}

function askPanel({ runId, name, input }) {
  const requestId = crypto.randomUUID();
  broadcast({ type: 'confirm', requestId, runId, name, input });
  return new Promise((resolve) => approvals.set(requestId, resolve));
}

async function makeAgent() {
  const cfg = await settings();
  return new BrowserAgent({
    client: new AnthropicClient(async () => cfg.apiKey, cfg.model),
    tools: new BrowserTools({ shellEnabled: cfg.shellEnabled }),
    confirm: askPanel,
    emit: broadcast,
  });
}

async function drive(agent, work) {
  current = agent;
  try {
    const outcome = await work();
    broadcast({ type: 'finished', runId: agent.run?.id, ...outcome });
  } catch (err) {
    console.error('[tabpilot] run failed', err);
    broadcast({ type: 'failed', runId: agent.run?.id, message: String(err?.message ?? err) });
  } finally {
    if (current === agent) current = null;
  }
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== 'panel') return;
  panels.add(port);
  port.onDisconnect.addListener(() => panels.delete(port));

  port.onMessage.addListener(async (msg) => {
    switch (msg.type) {
      case 'start': {
        if (current) {
          port.postMessage({ type: 'busy' });
          return;
        }
        const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
        const agent = await makeAgent();
        drive(agent, () => agent.start(msg.task, tab.id));
        break;
      }
      case 'stop':
        current?.stop();
        break;
      case 'confirm-reply': {
        const resolve = approvals.get(msg.requestId);
        approvals.delete(msg.requestId);
        resolve?.(Boolean(msg.approved));
        break;
      }
      case 'history': {
        port.postMessage({ type: 'history', runId: msg.runId, events: await eventsFor(msg.runId) });
        break;
      }
    }
  });
});

// The worker may have been shut down mid-run; pick the newest unfinished run back up.
async function resumeInterrupted() {
  if (current) return;
  const [run] = await unfinishedRuns();
  if (!run) return;
  const agent = await makeAgent();
  drive(agent, () => agent.resume(run));
}

chrome.runtime.onStartup.addListener(() => {
  resumeInterrupted().catch((err) => console.error('[tabpilot] resume failed', err));
});

chrome.runtime.onInstalled.addListener(() => {
  chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
});

resumeInterrupted().catch((err) => console.error('[tabpilot] resume failed', err));
