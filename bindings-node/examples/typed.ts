// A typed example of the JS API, checked by `tsc --noEmit` (ci.sh) to keep index.d.ts honest.
import {
  Aborted,
  AccountError,
  CaptchaDlqError,
  Client,
  InvalidConfig,
  InvalidTask,
  SolveFailed,
  type AlertOptions,
  type CaptchaEvent,
  type DeadLetterRecord,
  type RecaptchaV2Task,
  type RetentionOptions,
  type SolveResult,
  type StoreObject,
} from 'captcha-dlq';

/** Operator options (Node only), typed: pass them as `alerts` and `dlqRetention`. */
export const operatorOptions: { alerts: AlertOptions; dlqRetention: RetentionOptions } = {
  alerts: {
    webhooks: [{ url: 'https://hooks.example/alerts', secret: 'signing-secret', events: ['new_reason', 'budget'], format: 'slack' }],
    deadLettersPerMinute: 50,
  },
  dlqRetention: { maxAgeMs: 30 * 24 * 3_600_000, maxCount: 100_000, archive: 'evicted.jsonl' },
};

/** The store of docs/custom-store.md. */
class MapStore implements StoreObject {
  /** One process's store (as when left out); `true` would make the clients sharing it one fleet. */
  readonly shared = false;
  #tables = new Map<string, Map<string, unknown>>();
  #table(name: string): Map<string, unknown> {
    let t = this.#tables.get(name);
    if (!t) this.#tables.set(name, (t = new Map()));
    return t;
  }
  get(table: string, key: string): unknown {
    return this.#table(table).get(key) ?? null;
  }
  scan(table: string): unknown[] {
    return [...this.#table(table).values()];
  }
  write(ops: Parameters<StoreObject['write']>[0]): void {
    for (const op of ops) {
      if (op.op === 'put') this.#table(op.table).set(op.key, op.row);
      else this.#table(op.table).delete(op.key);
    }
  }
}

export async function main(mockUrl?: string): Promise<void> {
  const seen: CaptchaEvent[] = [];
  const client = new Client({
    apiKey: process.env.CAPTCHA_DLQ_API_KEY ?? 'KEY',
    // Your own server or the mock: a 2captcha-compatible base URL.
    ...(mockUrl ? { baseUrl: mockUrl } : { provider: 'captchaai' }),
    dlq: mockUrl ? new MapStore() : 'captcha-dlq.sqlite',
    retry: { maxAttempts: 4, backoff: { kind: 'fixed', delayMs: 100 } },
    polling: { firstPollMs: { recaptcha_v2: 15_000 }, maxPolls: 20 },
    rate: { submitsPerSecond: 16, maxInFlight: 1000 },
    replayPolicy: { parkAfterAttempts: 6 },
    onEvent: (e) => {
      seen.push(e);
      if (e.event === 'dead_lettered') console.log(e.reason, e.attempts);
      if (e.event === 'submitted') console.log(e.providerTaskId);
    },
  });
  await client.ready();
  const task: RecaptchaV2Task = { type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: 'https://example.com/' };
  const controller = new AbortController();
  try {
    const solution = await client.solve(task, { signal: controller.signal, labels: { jobId: '1' } });
    const token: string = solution.text;
    if (solution.providerTaskId !== null) await client.report(solution.providerTaskId, true);
    console.log(token.length, Object.keys(solution.fields));
  } catch (e) {
    if (e instanceof SolveFailed) {
      const r: DeadLetterRecord = e.record;
      console.log(r.reason, r.attempts, r.deadLetteredAt, e.stored);
    } else if (e instanceof AccountError) {
      console.log(e.code, e.record?.reason);
    } else if (e instanceof InvalidTask || e instanceof InvalidConfig) {
      console.log(e.field);
    } else if (e instanceof Aborted) {
      console.log(e.runsOn, e.cause);
    } else if (e instanceof CaptchaDlqError) {
      console.log(e.code);
    }
  }

  for await (const r of client.solveStream([task, { task, labels: { page: '2' }, key: 'line-2' }], { concurrency: 50 })) {
    if (r.ok) console.log(r.index, r.solution.text);
    else console.log(r.index, r.error.code, r.error.field);
  }
  const results: SolveResult[] = await client.solveMany([task, task], {
    concurrency: 200,
    labels: { batch: 'b1' },
    onResult: (r) => console.log(r.index, r.ok),
  });
  console.log(results.filter((r) => r.ok).length);

  const replay = client.replayStream({ reasons: ['Timeout'], limit: 100, perSecond: 5 });
  for await (const item of replay) {
    if (item.outcome === 'recovered') console.log(item.id, item.solution.text);
    else if (item.outcome === 'failed_again') console.log(item.record.reason, item.parked);
  }
  console.log(replay.report()?.recovered);
  const { report, solved } = await client.replay({ filter: { labels: { jobId: '1' } } });
  console.log(report.recovered + report.failedAgain + report.parked, solved.map((s) => s.solution.text));
  const recovered = await client.recover({ resume: true });
  console.log(recovered.report.found, recovered.solved.map((s) => s.solution.text), recovered.failed.map((f) => f.error.code));

  console.log(await client.balance(), (await client.status()).inFlight, (await client.storeHealth()).available);
  const n: number = await client.dlq.count({ reasons: ['ERROR_CAPTCHA_UNSOLVABLE'], deadLetteredAfter: new Date(0) });
  const records = await client.dlq.peek({ pageHost: 'example.com' }, { limit: 10 });
  const stats = await client.dlq.stats();
  const analysis = await client.dlq.analysis();
  console.log(n, records.length, stats.inFlight, analysis.byReason[0]?.key);
  const text: string = await client.dlq.exportText({ format: 'jsonl' });
  await client.dlq.export('failed-tasks.jsonl', { filter: { states: ['ready'] } });
  console.log(await client.dlq.importText(text), await client.dlq.import('captcha-dlq.json'));
  if (records[0]) {
    await client.dlq.park(records[0].id, 'bad sitekey');
    await client.dlq.unpark(records[0].id);
  }
  console.log((await client.dlq.settled('batch-1/')).length, await client.dlq.clearSettled('batch-1/'));
  await client.dlq.purge({ states: ['parked'] });
  await client.resetCircuit();
  console.log(seen.length, JSON.stringify(client));
  await client.close();
}
