// Who works on a journal entry, so that `recover()` takes over only tasks of clients that are gone (a
// reloaded page, a restarted service worker), never those of a live client in another tab or worker
// sharing the database.
//
// Each client holds a Web Lock named after its owner id for as long as it is open; the browser releases
// it when the page or worker dies. An owner is alive while its lock is held. Where Web Locks are missing,
// only clients of this JS realm are known to be alive.

const LOCK_PREFIX = 'captcha-dlq-owner:';
const live = new Set();

const locks = () => globalThis.navigator?.locks;

/** A unique-enough instance id (time plus 80 random bits); it names, it does not protect. */
function randomId() {
  const words = crypto.getRandomValues(new Uint16Array(5));
  return `${Date.now()}-${[...words].map((w) => w.toString(16).padStart(4, '0')).join('')}`;
}

export class Owner {
  #release = null;

  constructor() {
    this.id = `web/${randomId()}`;
    live.add(this.id);
    const held = new Promise((resolve) => (this.#release = resolve));
    // The request settles when the lock is released; nothing waits for it.
    locks()?.request(`${LOCK_PREFIX}${this.id}`, () => held).catch(() => {});
  }

  release() {
    live.delete(this.id);
    this.#release?.();
    this.#release = null;
  }
}

/** Owner ids alive right now: this realm's clients plus every held owner lock. */
export async function liveOwners() {
  const alive = new Set(live);
  const snapshot = await locks()?.query().catch(() => undefined);
  for (const lock of snapshot?.held ?? []) {
    if (lock.name?.startsWith(LOCK_PREFIX)) alive.add(lock.name.slice(LOCK_PREFIX.length));
  }
  return alive;
}
