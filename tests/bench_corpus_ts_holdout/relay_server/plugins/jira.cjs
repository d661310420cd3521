'use strict';

const axios = require('axios');

module.exports = {
  async init(env) {
    const base = env.JIRA_URL;
    const token = env.JIRA_TOKEN;
    await axios.get(`${base}/rest/api/2/myself`, { headers: { authorization: `Bearer ${token}` }, timeout: 5_000 });
    return {
      name: 'jira_search',
      description: 'Search Jira issues with JQL.',
      parameters: { type: 'object', properties: { jql: { type: 'string' } }, required: ['jql'] },
      budgetMs: 30_000,
      async run({ jql }, ctx) {
        const res = await axios.get(`${base}/rest/api/2/search`, {
          params: { jql, maxResults: 20, fields: 'summary,status,assignee' },
          headers: { authorization: `Bearer ${token}` },
          timeout: 40_000,
          signal: ctx.signal,
        });
        return res.data.issues.map((i) => `${i.key} [${i.fields.status.name}] ${i.fields.summary}`).join('\n');
      },
    };
  },
};
