// A typed example, compiled with `tsc --noEmit` in CI to keep index.d.ts honest.
import {
  Client,
  SolveFailed,
  AccountError,
  InvalidTask,
  AbortError,
  CaptchaDlqError,
  evaluateVector,
  parseTask,
  filterMatches,
  type CaptchaEvent,
  type DeadLetterRecord,
  type DlqStoreObject,
  type RecaptchaV2Task,
  type SolveResult,
} from 'captcha-dlq';

export async function main(store?: DlqStoreObject): Promise<void> {
  const seen: CaptchaEvent[] = [];
  const client = new Client({
    apiKey: process.env.CAPTCHA_DLQ_API_KEY ?? 'KEY',
    provider: 'captchaai',
    dlq: store ?? 'captcha-dlq.sqlite',
    retry: { maxAttempts: 4, backoff: { kind: 'fixed', delay_ms: 100 } },
    polling: { firstPollMs: { recaptchaV2: 15_000 }, intervalMs: 5000 },
    rate: { submitsPerSecond: 10 },
    replayPolicy: { parkAfterAttempts: 6 },
    onEvent: (e) => {
      seen.push(e);
      if (e.event === 'dead_lettered') console.log(e.reason, e.attempts);
    },
  });
  const task: RecaptchaV2Task = { type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: 'https://example.com/' };
  const controller = new AbortController();
  try {
    const solution = await client.solve(task, { signal: controller.signal, labels: { batch: '1' } });
    const token: string = solution.text;
    if (solution.providerTaskId !== null) await client.report(solution.providerTaskId, true);
    console.log(token.length);
  } catch (e) {
    if (e instanceof SolveFailed) {
      const r: DeadLetterRecord = e.record;
      console.log(r.reason, r.attempts, e.stored);
    } else if (e instanceof AccountError) {
      console.log(e.code, e.reason);
    } else if (e instanceof InvalidTask) {
      console.log(e.field);
    } else if (e instanceof AbortError) {
      console.log(e.record?.id);
    } else if (e instanceof CaptchaDlqError) {
      console.log(e.code);
    }
  }
  const results: SolveResult[] = await client.solveMany([task, { task, labels: { page: '2' } }], {
    concurrency: 50,
    onProgress: (done, total) => console.log(done, total),
  });
  for (const r of results) {
    if (r.status === 'fulfilled') console.log(r.value.text);
    else console.log(r.reason.code);
  }
  const report = await client.replay({ reasons: ['Timeout'], limit: 100 });
  console.log(report.recovered + report.failed_again + report.parked);
  const recovered = await client.recover({ resume: true });
  console.log(recovered.solved.map((s) => s.solution.text));
  console.log(await client.balance());
  const n: number = await client.dlq.count({ reasons: ['ERROR_CAPTCHA_UNSOLVABLE'], deadLetteredAfter: new Date(0) });
  const records = await client.dlq.peek({ pageHost: 'example.com' }, { limit: 10 });
  const stats = await client.dlq.stats();
  const analysis = await client.dlq.analysis();
  console.log(n, records.length, stats.total, analysis.by_reason[0]?.key);
  await client.dlq.export('failed-tasks.jsonl', 'jsonl');
  await client.dlq.import('captcha-dlq.json');
  if (records[0]) {
    await client.dlq.park(records[0].id, 'bad sitekey');
    await client.dlq.unpark(records[0].id);
    console.log(filterMatches({ reasons: ['Timeout'] }, records[0]));
  }
  await client.dlq.purge({ states: ['parked'] });
  console.log(evaluateVector({ provider: 'captchaai', code: 'ERROR_NO_SLOT_AVAILABLE' }), parseTask(task).type, seen.length);
  await client.close();
}
