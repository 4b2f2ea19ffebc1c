// What the seeds' batch (common.js seedsBatch) must produce in every context. Plain data, so that both the
// in-browser suite and run.mjs (Node) import it.

/** The prefix of every token the mock hands out. */
export const TOKEN = '03AGdBq2';

export const SEEDS_BATCH = {
  ok: [true, false, true, false, true],
  reasons: [null, 'ERROR_CAPTCHA_UNSOLVABLE', null, 'Timeout', null],
  attempts: [null, 4, null, 4, null],
  states: [null, 'ready', null, 'ready', null],
  subclass: true, // failures are SolveFailed with code SOLVE_FAILED
  keyLeaked: false,
  tokens: [TOKEN, TOKEN, TOKEN],
  progress: 5,
  deadLetteredEvents: 2,
  count: 2,
  inFlight: 0,
  received: 2,
  recovered: 2,
  replayedTokens: [TOKEN, TOKEN],
  countAfter: 0,
};
