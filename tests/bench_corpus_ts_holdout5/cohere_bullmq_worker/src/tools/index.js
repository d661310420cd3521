'use strict';

const fs = require('node:fs');
const path = require('node:path');

// Every other module in this directory exports an array of tools.
function loadTools(dir) {
  const registry = {};
  for (const file of fs.readdirSync(dir)) {
    if (file === 'index.js' || !file.endsWith('.js')) continue;
    for (const tool of require(path.join(dir, file))) registry[tool.name] = tool;
  }

  return {
    get: (name) => registry[name],
    definitions: () =>
      Object.keys(registry).map((name) => ({
        type: 'function',
        function: {
          name,
          description: registry[name].description,
          parameters: registry[name].parameters,
        },
      })),
  };
}

module.exports = { loadTools };
