// Starts the mock solver (mock-service, binary `captcha-dlq-mock`) on a free loopback
// port for the Node runs of the suite, and stops it (the child this started, by its pid).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The mock's binary: $CAPTCHA_DLQ_MOCK_BIN, or the workspace's debug build (`cargo build -p captcha-dlq-mock`). */
function binary() {
  const bin = process.env.CAPTCHA_DLQ_MOCK_BIN ?? path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target'), 'debug', 'captcha-dlq-mock');
  if (!existsSync(bin)) throw new Error(`no mock solver at ${bin}: run \`cargo build -p captcha-dlq-mock\` (or set CAPTCHA_DLQ_MOCK_BIN)`);
  return bin;
}

/** `{url, stop()}` of a running mock. */
export function startMock() {
  const child = spawn(binary(), ['--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the mock solver exited (${code}) before listening: ${out}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /^listening (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
      if (m) resolve({ url: m[1], stop: () => child.kill() });
    });
  });
}
