// Runs in every page. Executes the DOM actions the background worker asks for.
(() => {
  if (window.__tabpilotInstalled) return;
  window.__tabpilotInstalled = true;

  function visibleText(maxChars) {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
      acceptNode(node) {
        const el = node.parentElement;
        if (!el || !node.textContent.trim()) return NodeFilter.FILTER_REJECT;
        const style = getComputedStyle(el);
        if (style.display === 'none' || style.visibility === 'hidden') return NodeFilter.FILTER_REJECT;
        if (['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(el.tagName)) return NodeFilter.FILTER_REJECT;
        return NodeFilter.FILTER_ACCEPT;
      },
    });
    const parts = [];
    let total = 0;
    while (walker.nextNode() && total < maxChars) {
      const t = walker.currentNode.textContent.replace(/\s+/g, ' ').trim();
      parts.push(t);
      total += t.length + 1;
    }
    return parts.join('\n').slice(0, maxChars);
  }

  function setValue(el, text) {
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, 'value')?.set;
    if (setter) setter.call(el, text);
    else el.value = text;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }

  const actions = {
    read_page({ maxChars }) {
      return { title: document.title, url: location.href, text: visibleText(maxChars) };
    },
    click({ selector }) {
      const el = document.querySelector(selector);
      if (!el) return { ok: false };
      el.scrollIntoView({ block: 'center' });
      el.click();
      return { ok: true };
    },
    type({ selector, text }) {
      const el = document.querySelector(selector);
      if (!el || !('value' in el)) return { ok: false };
      el.focus();
      setValue(el, text);
      return { ok: true };
    },
    submit({ selector }) {
      const form = document.querySelector(selector);
      if (!(form instanceof HTMLFormElement)) return { ok: false };
      form.requestSubmit();
      return { ok: true };
    },
  };

  chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
    const action = actions[message?.action];
    if (!action) return false;
    try {
      sendResponse(action(message));
    } catch (err) {
      sendResponse({ ok: false, error: String(err) });
    }
    return false;
  });
})();
