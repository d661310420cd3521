'use strict';

const nodemailer = require('nodemailer');

const BILLING_API = process.env.BILLING_API_URL || 'http://billing.internal:8080';
const mailer = nodemailer.createTransport(process.env.SMTP_URL);

async function billing(method, route, body, headers = {}) {
  const res = await fetch(`${BILLING_API}${route}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.BILLING_TOKEN}`, ...headers },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  if (!res.ok) throw new Error(`billing ${method} ${route} -> ${res.status}`);
  return res.json();
}

async function withRetry(fn, attempts = 3) {
  let lastErr;
  for (let i = 0; i < attempts; i++) {
    try {
      return await fn();
    } catch (err) {
      lastErr = err;
      await new Promise((r) => setTimeout(r, 1_000 * (i + 1)));
    }
  }
  throw lastErr;
}

module.exports = [
  {
    name: 'lookup_customers',
    description: 'Fetch billing profiles for one or more customer ids.',
    parameters: {
      type: 'object',
      properties: { customerIds: { type: 'array', items: { type: 'string' } } },
      required: ['customerIds'],
    },
    async run({ customerIds }) {
      const profiles = await Promise.all(
        customerIds.map((id) => withRetry(() => billing('GET', `/customers/${encodeURIComponent(id)}`))),
      );
      return { profiles };
    },
  },
  {
    name: 'issue_refund',
    description: 'Refund part or all of an invoice. Amount in cents.',
    parameters: {
      type: 'object',
      properties: { invoiceId: { type: 'string' }, amountCents: { type: 'integer' }, reason: { type: 'string' } },
      required: ['invoiceId', 'amountCents', 'reason'],
    },
    async run({ invoiceId, amountCents, reason }, { runId }) {
      const key = `refund:${runId}:${invoiceId}:${amountCents}`;
      const refund = await withRetry(() =>
        billing('POST', `/invoices/${encodeURIComponent(invoiceId)}/refunds`, { amountCents, reason }, {
          'Idempotency-Key': key,
        }),
      );
      return { refundId: refund.id, status: refund.status };
    },
  },
  {
    name: 'send_customer_email',
    description: 'Email the customer about their ticket.',
    parameters: {
      type: 'object',
      properties: { to: { type: 'string' }, subject: { type: 'string' }, body: { type: 'string' } },
      required: ['to', 'subject', 'body'],
    },
    async run({ to, subject, body }) {
      const info = await withRetry(() =>
        mailer.sendMail({ from: 'support@acme.example', to, subject, text: body }),
      );
      return { messageId: info.messageId };
    },
  },
];
