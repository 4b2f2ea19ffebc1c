// The custom store of docs/custom-store.md, as written there: rows in Maps. The suite runs
// this same class in Node (captcha-dlq) and in the browser (captcha-dlq-web).
export class MapStore {
  #tables = new Map();
  #table(name) { if (!this.#tables.has(name)) this.#tables.set(name, new Map()); return this.#tables.get(name); }
  get(table, key) { return this.#table(table).get(key) ?? null; }
  scan(table) { return [...this.#table(table).values()]; }
  write(ops) {
    for (const op of ops) {
      if (op.op === 'put') this.#table(op.table).set(op.key, op.row);
      else this.#table(op.table).delete(op.key);
    }
  }
}
