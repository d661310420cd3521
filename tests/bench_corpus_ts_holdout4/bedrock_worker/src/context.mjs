// Keeps the request under the model's context window.
const MAX_MESSAGES = 40;
const MAX_CHARS = 400_000;

function size(messages) {
  return JSON.stringify(messages).length;
}

export function fitToWindow(messages) {
  if (messages.length <= MAX_MESSAGES && size(messages) <= MAX_CHARS) return messages;
  let window = messages.slice(-MAX_MESSAGES);
  while (size(window) > MAX_CHARS && window.length > 2) {
    window = window.slice(2);
  }
  return window;
}
