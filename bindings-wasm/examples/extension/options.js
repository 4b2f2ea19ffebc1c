// The options page: the dead letters of the extension's DLQ, their edit (preview with its diff, apply, replay) and
// the audit trail of every action on them. It opens a client of its own on the IndexedDB database the service
// worker uses (one origin: the same DLQ, its writes serialised by a Web Lock), with the same settings; its actions
// are recorded under the operator name `options-page`.
import { Client } from './captcha-dlq-web/index.js';

/** The service worker's database and default provider (background.js). */
const DLQ = 'indexeddb:captcha-dlq-extension';
const OPERATOR = 'options-page';

const $ = (id) => document.getElementById(id);
const status = (text, error = false) => {
  $('status').textContent = text;
  $('status').className = error ? 'error' : '';
  $('status').dataset.done = 'true';
};

/** A table row of `cells` (text only: records hold what pages sent). */
function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell === null || cell === undefined ? '' : typeof cell === 'string' ? cell : JSON.stringify(cell);
    tr.append(td);
  }
  return tr;
}

const { settings = {} } = await chrome.storage.local.get('settings');
const client = new Client({ provider: 'captchaai', ...settings, dlq: DLQ });
const dlq = client.dlq.asOperator(OPERATOR);

/** The ids of the records ticked in the list. */
const selected = () => [...document.querySelectorAll('input.pick:checked')].map((box) => box.value);

/** Lists the dead letters, keeping the selection of those still there. */
async function showRecords() {
  const keep = new Set(selected());
  const records = await dlq.peek({}, { limit: 200 });
  const body = $('records').tBodies[0];
  body.replaceChildren(
    ...records.map((r) => {
      const pick = Object.assign(document.createElement('input'), { type: 'checkbox', value: r.id, className: 'pick', checked: keep.has(r.id) });
      return row([pick, r.id, r.task.type, r.reason, r.state, r.task.pageUrl ?? '']);
    }),
  );
  body.dataset.count = String(records.length);
}

async function showAudit() {
  const entries = await dlq.audit({ limit: 200 });
  const body = $('audit').tBodies[0];
  body.replaceChildren(...entries.map((e) => row([e.id, e.at, e.operator, e.action, e.stage, e.count, e.error ?? e.detail])));
  body.dataset.count = String(entries.length);
}

/** The edit the form describes; the client checks it (unknown keys, invalid results are refused by name). */
function changes(preview) {
  return { task: JSON.parse($('task').value || '{}'), labels: JSON.parse($('labels').value || '{}'), preview };
}

async function edit(preview) {
  const ids = selected();
  if (ids.length === 0) return status('select the records to edit', true);
  const report = await dlq.edit({ ids }, changes(preview));
  $('diffs').tBodies[0].replaceChildren(
    ...report.diffs.flatMap((d) => d.changes.map((c) => row([d.id, c.path, c.before, c.after]))),
    ...report.refused.map((r) => row([r.id, 'refused', '', r.error])),
  );
  status(`${preview ? 'preview: would change' : 'changed'} ${report.changed} of ${report.matched}`);
  await Promise.all([showRecords(), showAudit()]);
}

/** Runs `work`, showing its error (the package's errors name the field at fault) instead of throwing. */
const guarded = (work) => () => work().catch((e) => status(`${e.code ?? 'error'}: ${e.message}`, true));

$('preview').addEventListener('click', guarded(() => edit(true)));
$('apply').addEventListener('click', guarded(() => edit(false)));
$('replay').addEventListener(
  'click',
  guarded(async () => {
    const ids = selected();
    if (ids.length === 0) return status('select the records to replay', true);
    const { report } = await client.replay({ ids, operator: OPERATOR });
    status(`replayed: recovered ${report.recovered}, failed again ${report.failedAgain}, parked ${report.parked}`);
    await Promise.all([showRecords(), showAudit()]);
  }),
);

await guarded(async () => {
  await Promise.all([showRecords(), showAudit()]);
  document.body.dataset.ready = 'true';
})();
