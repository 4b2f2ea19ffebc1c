// Test helpers: the mock solver binary over real HTTP, a throwaway redis-server,
// temp dirs, and the fast engine settings the end-to-end tests share.
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const readline = require('node:readline');

const repo = path.resolve(__dirname, '..', '..');

function mockBinary() {
  if (process.env.CAPTCHA_DLQ_MOCK) return process.env.CAPTCHA_DLQ_MOCK;
  const target = process.env.CARGO_TARGET_DIR || path.join(repo, 'target');
  return path.join(target, 'debug', 'captcha-dlq-mock');
}

/** Starts the mock; resolves to {url, counters(), script(cfg), stop()}. */
async function startMock(config = {}) {
  const bin = mockBinary();
  if (!fs.existsSync(bin)) throw new Error(`mock solver not built at ${bin}: run cargo build -p captcha-dlq-mock`);
  const child = spawn(bin, ['--port', '0', '--config', JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error('the mock did not start within 20 s')), 20000);
    rl.once('line', (line) => {
      clearTimeout(timer);
      const m = /^listening (http:\/\/\S+)$/.exec(line.trim());
      if (m) resolve(m[1]);
      else reject(new Error(`unexpected mock output: ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`the mock exited with ${code}`)));
  });
  return {
    url,
    async counters() {
      const r = await fetch(`${url}/mock/counters`);
      return r.json();
    },
    async script(cfg) {
      const r = await fetch(`${url}/mock/script`, { method: 'POST', body: JSON.stringify(cfg), headers: { 'content-type': 'application/json' } });
      if (!r.ok) throw new Error(`mock script rejected: ${await r.text()}`);
    },
    stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
    },
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Starts redis-server on a free port (no persistence); {url, stop()} or null if not installed. */
async function startRedis() {
  const bin = which('redis-server');
  if (!bin) return null;
  const port = await freePort();
  const dir = tmpDir('redis');
  const pidfile = path.join(dir, 'redis.pid');
  const r = spawnSync(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'yes', '--pidfile', pidfile, '--dir', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`redis-server failed: ${r.stderr || r.stdout}`);
  for (let i = 0; i < 100; i++) {
    if (fs.existsSync(pidfile) && (await canConnect(port))) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}/`,
    stop() {
      try {
        const pid = Number(fs.readFileSync(pidfile, 'utf8').trim());
        if (pid > 0) process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}

function canConnect(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function tmpDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `captcha-dlq-node-${prefix}-`));
}

/** Engine settings that make the mock's answers come back in milliseconds, not seconds. */
const FAST = {
  retry: { maxAttempts: 4, backoff: { kind: 'fixed', delay_ms: 5 }, transientMinDelayMs: 5, requestTimeoutMs: 10000 },
  polling: { firstPollMs: { image: 5, recaptchaV2: 5, recaptchaV3: 5, turnstile: 5, geetestV3: 5, geetestV4: 5, funcaptcha: 5, hcaptcha: 5, raw: 5 }, intervalMs: 10, maxPolls: 3, coalesceMs: 5 },
  rate: { submitsPerSecond: 100000, maxInFlight: 2000 },
};

/** The seeds' batch: five pages of one site; page 2 is unsolvable, page 4 never ready. */
const SEED_SCRIPT = {
  rules: [
    { match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } },
    { match: { page_url_contains: '/page/4' }, behavior: { outcome: 'never_ready' } },
  ],
};

function seedTasks() {
  return [0, 1, 2, 3, 4].map((i) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/page/${i}` }));
}

module.exports = { repo, startMock, startRedis, tmpDir, FAST, SEED_SCRIPT, seedTasks, which };
