// The shared workload: 1,000 reCAPTCHA v2 tasks; 5% unsolvable, 2% never ready.
// Time is scaled down 100x for both clients: the mock answers after 100 ms (10 s real),
// the seed sleeps 50 ms between polls (5 s) and backs off 10/20/40 ms (1/2/4 s), and
// captcha-dlq polls first after 150 ms (15 s), then every 50 ms (5 s).
'use strict';

const N = 1000;
const SCALE = 100;

const MOCK = {
  default: { outcome: 'solve', solve_after_ms: 10000 / SCALE },
  rules: [
    { match: { page_url_contains: '/unsolvable/' }, behavior: { outcome: 'unsolvable', solve_after_ms: 10000 / SCALE } },
    { match: { page_url_contains: '/stuck/' }, behavior: { outcome: 'never_ready' } },
  ],
};

function pageUrl(i) {
  if (i % 20 === 2) return `https://example.com/unsolvable/${i}`;
  if (i % 50 === 4) return `https://example.com/stuck/${i}`;
  return `https://example.com/page/${i}`;
}

module.exports = { N, SCALE, MOCK, pageUrl, CONCURRENCY: 100 };
