// Which proxy the tasks made from a page carry, in the extension (issue 45: "take the browser's proxy ... and put it
// on every task whose kind takes them; `proxy: false` leaves it off and `proxy: {...}` replaces it"). Three modes,
// kept in chrome.storage.local as `pageProxy` and set on the options page:
//  - `browser` (the default): the proxy the browser goes through, as chrome.proxy.settings reports it (one server:
//    `fixed_servers` with a single proxy or a per-scheme rule), with the login and password given on the options
//    page (the browser does not tell its proxy's credentials); none when the browser goes direct, by the system's
//    settings or a PAC script (no one server a service could use);
//  - `none`: no proxy (`proxy: false`);
//  - `given`: the server (a URL: `http://host:port`, `socks5://host:port`) and credentials given there.
// Which kinds take a proxy is the client's decision (`dlq.pageTask`); this module only says what the browser has.
// The password is a secret: it is kept in chrome.storage.local, sent to the client, and never shown or logged here.

const KEY = 'pageProxy';
export const MODES = ['browser', 'none', 'given'];
/** The port of a proxy scheme chrome.proxy leaves out. */
const DEFAULT_PORT = { http: 80, https: 443, socks4: 1080, socks5: 1080 };

/** The stored settings: `{ mode, server?, username?, password? }`, mode `browser` unless set. */
export async function pageProxySettings() {
  const { [KEY]: stored = {} } = await chrome.storage.local.get(KEY);
  return { ...stored, mode: MODES.includes(stored.mode) ? stored.mode : 'browser' };
}

/**
 * Stores new settings. `password`: a new one, or undefined to keep the one stored (the options page never reads it
 * back), or '' to forget it. Answers the settings as the options page may show them (`hasPassword`, no password).
 */
export async function savePageProxy({ mode, server = '', username = '', password }) {
  if (!MODES.includes(mode)) throw new Error(`pageProxy.mode: expected one of ${MODES.join(', ')}`);
  if (mode === 'given' && !server.trim()) throw new Error('pageProxy.server: give the proxy (e.g. http://host:3128) or choose another mode');
  const before = await pageProxySettings();
  const next = { mode, server: server.trim(), username: username.trim(), password: password === undefined ? before.password ?? '' : password };
  await chrome.storage.local.set({ [KEY]: next });
  return shown(next);
}

/** The settings without the password: what the options page shows. */
export const shown = ({ mode, server = '', username = '', password = '' }) => ({ mode, server, username, hasPassword: password !== '' });

/** The browser's proxy as chrome.proxy.settings reports it (`scheme://host:port`), or null when it has no one server. */
export async function browserProxyServer() {
  if (!chrome.proxy?.settings) return null; // without the `proxy` permission
  const { value } = await chrome.proxy.settings.get({});
  if (value?.mode !== 'fixed_servers' || !value.rules) return null;
  const { singleProxy, proxyForHttps, proxyForHttp, fallbackProxy } = value.rules;
  const server = singleProxy ?? proxyForHttps ?? proxyForHttp ?? fallbackProxy;
  if (!server?.host) return null;
  const scheme = server.scheme ?? 'http';
  return `${scheme}://${server.host}:${server.port ?? DEFAULT_PORT[scheme] ?? 80}`;
}

/** `{ server, username?, password? }` with only the credentials that are set. */
function withCredentials(server, { username, password }) {
  return { server, ...(username ? { username } : {}), ...(password ? { password } : {}) };
}

/**
 * The proxy options of `dlq.pageTask` for the current settings: `{ browserProxy }` (the browser's), `{ proxy: false }`
 * (none), `{ proxy }` (a given one that replaces it), or `{}` when the browser has no one server.
 */
export async function pageTaskProxy() {
  const settings = await pageProxySettings();
  if (settings.mode === 'none') return { proxy: false };
  if (settings.mode === 'given') return { proxy: withCredentials(settings.server, settings) };
  const server = await browserProxyServer();
  return server ? { browserProxy: withCredentials(server, settings) } : {};
}
