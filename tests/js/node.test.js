// The shared suite (suite.js) under node:test, against the Node package. The package is
// injected: $CAPTCHA_DLQ_PACKAGE (a path or a specifier), else bindings-node/index.js.
import { after, test } from 'node:test';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startMock } from './node/mock.js';
import { startReceiver } from './node/receiver.js';
import { suite } from './suite.js';

const where = process.env.CAPTCHA_DLQ_PACKAGE;
const pkg = await import(where ? (where.startsWith('.') || path.isAbsolute(where) ? pathToFileURL(path.resolve(where)).href : where) : '../../bindings-node/index.js');
const mock = await startMock();
after(() => mock.stop());
const receiver = await startReceiver();
after(() => receiver.stop());

for (const t of suite(pkg, { mock: mock.url, receiver: receiver.url })) test(t.name, () => t.run());
