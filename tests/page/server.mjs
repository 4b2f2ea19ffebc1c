// The page tests' fixture site: serves tests/page/site (pages, the vendors' stand-ins, the site's own page code)
// and plays the site's backend, which checks every answer the pages send against the mock solver's /siteverify:
//   POST /callback {widget, token, asked?}   a widget's callback reported a token (and what the widget client's
//                                            getResponse() answered then, which must be the same token)
//   POST /submit {document, form, fields}    a form was posted
//   GET  /report?page=multi.html             per widget of that page: { callback, form } verdicts, plus wrong
//                                            injections (answers in forms that must have none, a widget's token
//                                            reported by another)
//   POST /reset                              forgets what was reported
//   GET  /aws-gate.html                      a page behind AWS WAF: the challenge page (gokuProps, 405) unless the
//                                            browser holds an `aws-waf-token` cookie the mock issued (then 200, "in")
//   GET  /cf-gate.html                       the same behind Cloudflare's challenge (`_cf_chl_opt`, 403, "Just a
//                                            moment...") and its `cf_clearance` cookie
// Usage: node server.mjs <mock solver URL>   prints `listening http://127.0.0.1:PORT`, serves until killed.
// Loopback only; port 0.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, extname } from 'node:path';

const SITE = fileURLToPath(new URL('./site/', import.meta.url));
const manifest = JSON.parse(readFileSync(join(SITE, 'fixtures.json'), 'utf8'));
const mockUrl = process.argv[2];
if (!mockUrl || !/^http:\/\/127\.0\.0\.1:\d+$/.test(mockUrl)) {
  console.error('usage: node server.mjs http://127.0.0.1:PORT (the mock solver)');
  process.exit(2);
}

// A 1x1 PNG: the image CAPTCHA the solver "reads".
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.json': 'application/json' };

let callbacks = new Map(); // widget -> [{ token, asked }]
let submits = []; // { document, form, fields }
/** token -> siteverify answer, asked once per token (the vendors' tokens verify once). */
const verdicts = new Map();

async function siteverify(token, sitekey) {
  if (!verdicts.has(token)) {
    const body = new URLSearchParams({ secret: 'fixture-secret', response: token });
    if (sitekey) body.set('sitekey', sitekey);
    const answer = await fetch(`${mockUrl}/siteverify`, { method: 'POST', body }).then((r) => r.json());
    verdicts.set(token, answer);
  }
  return verdicts.get(token);
}

/** The site's verdict on `token` for `widget`: the vendor's, the kind, and the task's values. */
async function judge(widget, token) {
  if (typeof token !== 'string' || token === '') return { ok: false, error: 'no token' };
  const v = await siteverify(token, widget.sitekey);
  if (!v.success) return { ok: false, error: `siteverify: ${(v['error-codes'] || []).join(', ')}` };
  if (v.kind !== widget.kind) return { ok: false, error: `a ${v.kind} token where a ${widget.kind} one belongs` };
  if (widget.sitekey && v.sitekey !== widget.sitekey) return { ok: false, error: `a token for sitekey ${v.sitekey}` };
  const missing = widget.params.filter((p) => !v.params.includes(p));
  if (missing.length) return { ok: false, error: `the task lacked ${missing.join(', ')} (sent: ${v.params.join(', ')})` };
  return { ok: true, token };
}

async function report(page) {
  const widgets = manifest.widgets.filter((w) => w.page === page);
  const out = { widgets: {}, wrong: [] };
  for (const w of widgets) {
    const entry = {};
    if (w.callback) {
      const calls = callbacks.get(w.name) || [];
      const last = calls[calls.length - 1];
      entry.callback = last ? await judge(w, last.token) : { ok: false, error: 'the callback was not called' };
      if (last && 'asked' in last && last.asked !== last.token) {
        entry.callback = { ok: false, error: `getResponse() answered ${JSON.stringify(last.asked)}, not the token the callback got` };
      }
    }
    if (w.form) {
      const doc = w.frame || w.page;
      const posted = submits.filter((s) => s.document === doc && s.form === w.form);
      entry.form = posted.length
        ? await judge(w, posted[posted.length - 1].fields[w.field])
        : { ok: false, error: `form ${w.form} was not posted` };
      if (entry.form.ok && entry.callback && entry.callback.ok && entry.form.token !== entry.callback.token) {
        entry.form = { ok: false, error: 'the form holds another token than the callback was given' };
      }
    }
    out.widgets[w.name] = entry;
  }
  for (const form of (manifest.clean_forms || {})[page] || []) {
    for (const s of submits.filter((x) => x.document === page && x.form === form)) {
      const answers = Object.entries(s.fields).filter(([k, v]) => /captcha|response|token/i.test(k) && v);
      if (answers.length) out.wrong.push(`form ${form} posted ${answers.map(([k]) => k).join(', ')}`);
    }
  }
  return out;
}

/** A cookie the browser sent. */
function cookieOf(req, name) {
  for (const part of (req.headers.cookie || '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return null;
}

/** A page gated by a cookie answer: in with a cookie the mock issued, else the challenge page. */
async function gate(req, page) {
  const g = manifest.gates[page];
  const cookie = cookieOf(req, g.cookie);
  if (cookie) {
    const v = await siteverify(cookie);
    if (v.success) return { status: 200, body: `<!doctype html><title>in</title><p id="gate-passed">${page}: passed with ${g.cookie}</p>` };
  }
  const f = g.fields;
  if (g.kind === 'cloudflare_challenge') {
    const opt = { cvId: '3', cZone: req.headers.host, cType: 'managed', chlApiSitekey: f.sitekey };
    const body = `<!doctype html><html><head><title>Just a moment...</title>
<script>window._cf_chl_opt = ${JSON.stringify(opt)};</script>
<script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f0fixture"></script>
</head><body><div id="challenge-stage">Verifying you are human.</div></body></html>`;
    return { status: 403, body };
  }
  const body = `<!doctype html><html><head><title>Human Verification</title>
<script>window.gokuProps = ${JSON.stringify({ key: f.sitekey, iv: f.iv, context: f.context })};</script>
<script src="/edge/token.awswaf.com/fixture/challenge.js"></script>
</head><body><div id="captcha-container"></div></body></html>`;
  return { status: 405, body };
}

async function readJson(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text || '{}');
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const send = (status, type, body) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const json = (value) => send(200, 'application/json', JSON.stringify(value));
  try {
    if (req.method === 'POST' && url.pathname === '/callback') {
      const { widget, token, ...rest } = await readJson(req);
      if (!callbacks.has(widget)) callbacks.set(widget, []);
      callbacks.get(widget).push({ token, ...rest });
      return json({ ok: true });
    }
    if (req.method === 'POST' && url.pathname === '/submit') {
      submits.push(await readJson(req));
      return json({ ok: true });
    }
    if (url.pathname === '/report') return json(await report(url.searchParams.get('page')));
    if (req.method === 'POST' && url.pathname === '/reset') {
      callbacks = new Map();
      submits = [];
      return json({ ok: true });
    }
    if (url.pathname === '/captcha.png') return send(200, 'image/png', PNG);
    if (manifest.gates[url.pathname.slice(1)]) {
      const { status, body } = await gate(req, url.pathname.slice(1));
      return send(status, TYPES['.html'], body);
    }
    if (url.pathname === '/hcaptcha/checkbox.html') return send(200, TYPES['.html'], '<!doctype html><title>hCaptcha checkbox stand-in</title>');
    if (url.pathname.startsWith('/turnstile/if/')) return send(200, TYPES['.html'], '<!doctype html><title>Turnstile challenge stand-in</title>');
    if (/^\/(recaptcha|hcaptcha|turnstile|arkose|geetest)\//.test(url.pathname)) {
      return send(200, TYPES['.js'], await readFile(join(SITE, 'standins.js')));
    }
    if (url.pathname.startsWith('/cdn-cgi/challenge-platform/')) return send(200, TYPES['.js'], '/* the challenge script stand-in */');
    if (url.pathname.startsWith('/edge/')) return send(200, TYPES['.js'], '/* a challenge script stand-in */');
    const name = url.pathname.slice(1) || 'multi.html';
    if (!/^[a-z0-9-]+\.(html|js|json)$/.test(name)) return send(404, 'text/plain', 'not found');
    return send(200, TYPES[extname(name)], await readFile(join(SITE, name)));
  } catch (e) {
    send(e.code === 'ENOENT' ? 404 : 500, 'text/plain', String(e.message));
  }
});
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port}`));
