'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { EventEmitter } = require('node:events');

class JobQueue extends EventEmitter {
  constructor(file) {
    super();
    this.file = file;
    this.jobs = new Map();
    this.pending = [];
  }

  load() {
    if (!fs.existsSync(this.file)) return;
    const saved = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    for (const job of saved.jobs) {
      this.jobs.set(job.id, job);
      if (job.status === 'queued' || job.status === 'running') {
        job.status = 'queued';
        job.messages = undefined;
        this.pending.push(job.id);
      }
    }
  }

  persist() {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const data = { version: 3, jobs: [...this.jobs.values()] };
    fs.writeFileSync(this.file, JSON.stringify(data));
  }

  enqueue({ prompt, owner, priority = 0 }) {
    const job = {
      id: crypto.randomBytes(6).toString('hex'),
      prompt,
      owner,
      priority,
      status: 'queued',
      guidance: [],
      createdAt: new Date().toISOString(),
    };
    this.jobs.set(job.id, job);
    this.pending.push(job.id);
    this.pending.sort((a, b) => this.jobs.get(b).priority - this.jobs.get(a).priority);
    this.persist();
    this.emit('job', job);
    return job;
  }

  next() {
    const id = this.pending.shift();
    return id ? this.jobs.get(id) : undefined;
  }

  get(id) {
    return this.jobs.get(id);
  }

  update(id, patch) {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    Object.assign(job, patch, { updatedAt: new Date().toISOString() });
    this.persist();
    return job;
  }

  resume(id, text) {
    const job = this.jobs.get(id);
    if (!job || (job.status !== 'cancelled' && job.status !== 'failed') || !job.messages) return undefined;
    job.messages.push({ role: 'user', content: text || 'Continue where you left off.' });
    job.status = 'queued';
    this.pending.push(job.id);
    this.persist();
    this.emit('job', job);
    return job;
  }

  addGuidance(id, text) {
    const job = this.jobs.get(id);
    if (!job || job.status !== 'running') return false;
    job.guidance.push(text);
    return true;
  }
}

module.exports = { JobQueue };
