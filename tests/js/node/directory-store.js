// A DLQ store that several processes share, written as a user would (docs/custom-store.md): its rows in
// one JSON file in a directory, replaced whole on each write (a rename, so a write is all or nothing), turns
// taken through a lock directory beside it (mkdir is atomic), and `shared = true` so that the clients on it
// keep one fleet ledger. The Node fleet test runs it in separate processes.
import { mkdir, readFile, rename, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export class DirectoryStore {
  shared = true;
  #rows;
  #lock;
  #ticket = 0;
  #held = false;

  constructor(dir) {
    this.#rows = path.join(dir, 'rows.json');
    this.#lock = path.join(dir, 'lock');
  }

  async #read() {
    try {
      return JSON.parse(await readFile(this.#rows, 'utf8'));
    } catch (e) {
      if (e.code === 'ENOENT') return {};
      throw e;
    }
  }

  async get(table, key) {
    return (await this.#read())[table]?.[key] ?? null;
  }

  async scan(table) {
    return Object.values((await this.#read())[table] ?? {});
  }

  async write(ops) {
    const tables = await this.#read();
    for (const op of ops) {
      const rows = (tables[op.table] ??= {});
      if (op.op === 'put') rows[op.key] = op.row;
      else delete rows[op.key];
    }
    const temp = `${this.#rows}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify(tables));
    await rename(temp, this.#rows);
  }

  // Polled, so that an `unlock` (the client gave up on the operation) withdraws a lock still waiting: it must
  // not be taken later and never released.
  async lock() {
    const ticket = ++this.#ticket;
    for (;;) {
      try {
        await mkdir(this.#lock);
      } catch (e) {
        if (e.code !== 'EEXIST') throw e;
        await sleep(2);
        if (ticket !== this.#ticket) throw new Error('the lock was withdrawn while waiting');
        continue;
      }
      if (ticket !== this.#ticket) {
        await rmdir(this.#lock);
        throw new Error('the lock was withdrawn while waiting');
      }
      this.#held = true;
      return;
    }
  }

  async unlock() {
    this.#ticket += 1;
    if (this.#held) {
      this.#held = false;
      await rmdir(this.#lock);
    }
  }
}
