// The seeds' JavaScript client, unchanged except: the host is the mock, sleeps are
// divided by SCALE, the DLQ file lives in a temp dir, and tasks run CONCURRENCY at a
// time (the seed loops one by one, which would take hours for 1,000 tasks).
// `seedClient(base, scale)` is the seed's code for one mock; bench/node/e2e.js uses it too.
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const axios = require('axios');

function seedClient(BASE, SCALE) {
  const API_KEY = 'bench-key';
  const DLQ_FILE = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'seed-dlq-')), 'captcha-dlq.json');

  class DeadLetterQueue {
    constructor(maxRetries = 3) {
      this.maxRetries = maxRetries;
      this.queue = this._load();
    }
    push(task) {
      this.queue.push({ ...task, timestamp: Date.now() });
      this._save();
    }
    size() {
      return this.queue.length;
    }
    _load() {
      try {
        return JSON.parse(fs.readFileSync(DLQ_FILE, 'utf8'));
      } catch {
        return [];
      }
    }
    _save() {
      fs.writeFileSync(DLQ_FILE, JSON.stringify(this.queue, null, 2));
    }
  }
  const dlq = new DeadLetterQueue(3);

  async function solveCaptcha(sitekey, pageurl, maxRetries = 3) {
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      try {
        const submit = await axios.post(`${BASE}/in.php`, null, {
          params: { key: API_KEY, method: 'userrecaptcha', googlekey: sitekey, pageurl, json: 1 },
        });
        if (submit.data.status !== 1) throw new Error(submit.data.request);
        const taskId = submit.data.request;
        for (let i = 0; i < 24; i++) {
          await new Promise((r) => setTimeout(r, 5000 / SCALE));
          const poll = await axios.get(`${BASE}/res.php`, { params: { key: API_KEY, action: 'get', id: taskId, json: 1 } });
          if (poll.data.status === 1) return poll.data.request;
          if (poll.data.request !== 'CAPCHA_NOT_READY') throw new Error(poll.data.request);
        }
        throw new Error(`Task ${taskId} timed out`);
      } catch (err) {
        if (attempt === maxRetries) {
          dlq.push({ sitekey, pageurl, error: err.message, attempts: attempt + 1 });
          return null;
        }
        await new Promise((r) => setTimeout(r, (2 ** attempt * 1000) / SCALE));
      }
    }
  }

  return { solveCaptcha, dlq };
}

module.exports = { seedClient };

if (require.main === module) {
  const { N, SCALE, CONCURRENCY, pageUrl } = require('./workload');
  const { solveCaptcha, dlq } = seedClient(process.argv[2], SCALE);
  (async () => {
    const start = process.hrtime.bigint();
    let next = 0;
    let solved = 0;
    async function worker() {
      while (next < N) {
        const i = next++;
        if (await solveCaptcha('6Le-SITEKEY', pageUrl(i))) solved++;
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const wall = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage();
    console.log(JSON.stringify({ wall, solved, failed: dlq.size(), cpu: (cpu.user + cpu.system) / 1e6, maxRssKb: process.resourceUsage().maxRSS }));
  })();
}
