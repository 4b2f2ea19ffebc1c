// captcha-dlq's page detector and injector: the one source of what a CAPTCHA widget looks like in a page, which
// task it becomes, and where its answer goes. Every front end runs this same file inside the page's frames: the
// Node package's `captcha-dlq/page` (Playwright, Puppeteer), the Python package's `captcha_dlq.page` (Playwright,
// Selenium; the extension embeds this file), and the browser package's content-script module `captcha-dlq-web/page`
// (both npm packages copy it when they build: this is the one checked-in copy, in the page-detector crate).
//
// It is a classic script with no imports or exports, so that it can be evaluated as a string in any frame and also
// imported as a module for its side effect. Evaluating it again is harmless. It installs `globalThis.__captchaDlqPage`:
//   hook()                 wraps the widget clients' APIs as they load (render params, v3 execute actions, hCaptcha
//                          setData, GeeTest and Arkose configurations): evaluate it before the page's scripts run
//                          (an init script); pages loaded without it are read from their DOM and the clients' state.
//   detect()               the widgets of this frame: [{ id, kind, task, supported, callback, visible, scoreBased,
//                          note? }]. `task` is task JSON for the Rust core, which validates it (a kind this build
//                          lacks is refused there).
//   expired()              ids of injected widgets whose expired-callback fired since last asked (a token to renew)
//   waiting(id)            whether widget `id` is still in this document (its token not taken away by a navigation or
//                          the widget's removal): a token whose life ends is renewed only then
//   inject(id, solution)   writes the answer where the widget expects it, calls the page's callback; answers
//                          { injected, fields, callbackCalled, callback, note?, error? } (a promise where the
//                          widget's client takes the answer itself); `note` says why no callback was called.
// It decides nothing about solving: which provider, retries, records all stay with the client.
(function installCaptchaDlqPage(global) {
  'use strict';
  if (global.__captchaDlqPage && global.__captchaDlqPage.version === 1) return;

  const doc = global.document;
  /** What the hooks saw, before and after detection. */
  const seen = {
    renders: [], // { client: 'recaptcha'|'hcaptcha'|'turnstile', container, params, widgetId, enterprise }
    v3Calls: [], // { sitekey, action, enterprise, resolve, settled }
    hcaptchaData: new Map(), // widgetId -> { rqdata }
    geetest: [], // { version: 3|4, config, captchaObj, successHandlers: [] }
    arkose: [], // { publicKey, surl, config, enforcement }
    closed: [], // closed shadow roots, kept by the hook (the page cannot reach them otherwise)
  };
  /** How long a prepared page's v3 execute() call waits for a solver's token (a token's lifetime). */
  const V3_HOLD_MS = 120000;
  /** Widgets handed out by detect(), by id, so that inject() finds the same element and callback again. */
  const widgets = new Map();
  let nextId = 0;

  // ------------------------------------------------------------------ small helpers

  const isFn = (v) => typeof v === 'function';
  const text = (v) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

  /** A global function named by a data-callback attribute (`onOk`, `app.handlers.onOk`). */
  function namedFunction(name) {
    if (!text(name)) return undefined;
    let value = global;
    for (const part of name.trim().split('.')) {
      if (value === null || value === undefined) return undefined;
      value = value[part];
    }
    return isFn(value) ? value : undefined;
  }

  /** A render parameter's callback: a function, or the name of a global one. */
  const callbackOf = (v) => (isFn(v) ? v : typeof v === 'string' ? namedFunction(v) : undefined);

  function urlParam(src, name) {
    try {
      const url = new URL(src, doc.baseURI);
      const fromQuery = url.searchParams.get(name);
      if (fromQuery) return fromQuery;
      const hash = new URLSearchParams(url.hash.replace(/^#/, ''));
      return hash.get(name) || undefined;
    } catch (_) {
      return undefined;
    }
  }

  /** The open shadow roots under `root` (web components), and those in them. */
  function shadowRoots(root, out) {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) out.push(el.shadowRoot, ...shadowRoots(el.shadowRoot, []));
    }
    return out;
  }
  /** The document and the shadow roots in reach (set by detect()). */
  let roots = [doc];
  /** `selector` in the document and in every shadow root in reach. */
  const all = (selector) => roots.flatMap((r) => Array.from(r.querySelectorAll(selector)));
  const scripts = () => Array.from(doc.querySelectorAll('script[src]')).map((s) => s.src);
  const iframes = () => all('iframe[src]');

  /** Sets an input's value as typing would, so frameworks listening for input/change see it. */
  function setValue(el, value) {
    const proto = el.tagName === 'TEXTAREA' ? global.HTMLTextAreaElement.prototype : global.HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, 'value');
    if (setter && setter.set) setter.set.call(el, value);
    else el.value = value;
    if (el.tagName === 'TEXTAREA') el.textContent = value;
    el.dispatchEvent(new global.Event('input', { bubbles: true }));
    el.dispatchEvent(new global.Event('change', { bubbles: true }));
  }

  /** A hidden input named `name` in `form` (or beside `anchor`), made if the page has none. */
  function hiddenField(anchor, name) {
    const scope = (anchor && anchor.closest && anchor.closest('form')) || anchor || doc.body;
    let field = scope.querySelector(`[name="${name}"]`);
    if (!field) {
      field = doc.createElement('input');
      field.type = 'hidden';
      field.name = name;
      scope.appendChild(field);
    }
    return field;
  }

  // ------------------------------------------------------------------ hooks (before the page's scripts)

  /** Wraps `fn` once, keeping `this`. */
  const wrapped = new WeakMap();
  function wrapOnce(fn, make) {
    if (!isFn(fn)) return fn;
    if (wrapped.has(fn)) return wrapped.get(fn);
    const w = make(fn);
    wrapped.set(fn, w);
    wrapped.set(w, w);
    return w;
  }

  const elementOf = (container) =>
    typeof container === 'string' ? doc.getElementById(container) || doc.querySelector(container) : container;

  /** A proxy over a widget client (`grecaptcha`, `hcaptcha`, `turnstile`) whose methods report to `seen`. */
  function clientProxy(client, name, enterprise) {
    if (client === null || typeof client !== 'object') return client;
    return new Proxy(client, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key === 'enterprise' && name === 'recaptcha') return clientProxy(value, name, true);
        if (key === 'render') {
          return wrapOnce(value, (render) =>
            function (container, params) {
              const widgetId = render.apply(this, arguments);
              seen.renders.push({ client: name, container: elementOf(container), params: params || {}, widgetId, enterprise });
              return widgetId;
            },
          );
        }
        if (key === 'execute' && name === 'recaptcha') {
          return wrapOnce(value, (execute) =>
            function (sitekey, options) {
              // v3: execute(sitekey, { action }) answers a promise of a token. The call is held until the solver's
              // token is injected (the page was prepared for solving), then the page's own code uses it.
              if (typeof sitekey === 'string' && options && typeof options === 'object') {
                const self = this;
                const args = arguments;
                return new Promise((resolve, reject) => {
                  const call = { sitekey, action: text(options.action), enterprise, resolve, settled: false };
                  seen.v3Calls.push(call);
                  // Nobody solved it within a token's lifetime: the page gets the client's own answer after all.
                  setTimeout(() => {
                    if (call.settled) return;
                    call.settled = true;
                    Promise.resolve(execute.apply(self, args)).then(resolve, reject);
                  }, V3_HOLD_MS);
                });
              }
              return execute.apply(this, arguments);
            },
          );
        }
        if (key === 'setData' && name === 'hcaptcha') {
          return wrapOnce(value, (setData) =>
            function (widgetId, data) {
              if (data && text(data.rqdata)) seen.hcaptchaData.set(widgetId, { rqdata: data.rqdata });
              return setData.apply(this, arguments);
            },
          );
        }
        return value;
      },
    });
  }

  /** Replaces global `name` with a trap that passes what the page assigns through `wrap`. */
  function trapGlobal(name, wrap) {
    const existing = Object.getOwnPropertyDescriptor(global, name);
    if (existing && !existing.configurable) {
      // A top-level `function name() {}` of the page's: not configurable, but writable; wrap what is there now.
      if (existing.writable && 'value' in existing) global[name] = wrap(existing.value);
      return;
    }
    let current = existing && 'value' in existing ? wrap(existing.value) : undefined;
    Object.defineProperty(global, name, {
      configurable: true,
      enumerable: true,
      get: () => current,
      set: (value) => {
        current = wrap(value);
      },
    });
  }

  /** `initGeetest(config, cb)` / `initGeetest4(config, cb)`: keeps the config and the captcha object. */
  function geetestInit(version) {
    return (init) =>
      wrapOnce(init, (original) =>
        function (config, handler) {
          const entry = { version, config: config || {}, captchaObj: null, container: null, successHandlers: [] };
          seen.geetest.push(entry);
          return original.call(this, config, function (captchaObj) {
            entry.captchaObj = captchaObj;
            if (captchaObj && isFn(captchaObj.appendTo)) {
              const appendTo = captchaObj.appendTo;
              captchaObj.appendTo = function (where) {
                entry.container = elementOf(where);
                return appendTo.apply(this, arguments);
              };
            }
            if (captchaObj && isFn(captchaObj.onSuccess)) {
              const onSuccess = captchaObj.onSuccess;
              captchaObj.onSuccess = function (fn) {
                if (isFn(fn)) entry.successHandlers.push(fn);
                return onSuccess.apply(this, arguments);
              };
            }
            if (isFn(handler)) return handler.apply(this, arguments);
          });
        },
      );
  }

  /** Arkose: the api.js script names its setup function in data-callback; it receives the enforcement object. */
  function arkoseSetup(publicKey, surl) {
    return (setup) =>
      wrapOnce(setup, (original) =>
        function (enforcement) {
          const entry = { publicKey, surl, config: {}, enforcement };
          seen.arkose.push(entry);
          if (enforcement && isFn(enforcement.setConfig)) {
            const setConfig = enforcement.setConfig;
            enforcement.setConfig = function (config) {
              Object.assign(entry.config, config || {});
              return setConfig.apply(this, arguments);
            };
          }
          return original.apply(this, arguments);
        },
      );
  }

  const ARKOSE_SCRIPT = /\/v2\/([0-9A-Fa-f-]{20,})\/api\.js/;

  function hookArkoseScript(script) {
    const match = ARKOSE_SCRIPT.exec(script.src || '');
    const callbackName = script.getAttribute('data-callback');
    if (!match || !text(callbackName) || callbackName.includes('.')) return;
    trapGlobal(callbackName, arkoseSetup(match[1], new URL(script.src).origin));
  }

  let hooked = false;
  function hook() {
    if (hooked) return;
    hooked = true;
    // Closed shadow roots are out of the page's reach: keep each as it is made.
    const attach = global.Element.prototype.attachShadow;
    global.Element.prototype.attachShadow = function (init) {
      const root = attach.call(this, init);
      if (init && init.mode === 'closed') seen.closed.push(root);
      return root;
    };
    trapGlobal('grecaptcha', (v) => clientProxy(v, 'recaptcha', false));
    trapGlobal('hcaptcha', (v) => clientProxy(v, 'hcaptcha', false));
    trapGlobal('turnstile', (v) => clientProxy(v, 'turnstile', false));
    trapGlobal('initGeetest', geetestInit(3));
    trapGlobal('initGeetest4', geetestInit(4));
    // Arkose's script tag names the setup callback; catch the tag before the script runs.
    const scan = (node) => {
      if (node.tagName === 'SCRIPT') hookArkoseScript(node);
      if (node.querySelectorAll) node.querySelectorAll('script[src]').forEach(hookArkoseScript);
    };
    const observer = new global.MutationObserver((mutations) => {
      for (const m of mutations) m.addedNodes.forEach(scan);
    });
    observer.observe(doc.documentElement || doc, { childList: true, subtree: true });
    if (doc.documentElement) scan(doc.documentElement);
  }

  // ------------------------------------------------------------------ detection

  const pageUrl = () => global.location.href;
  const userAgent = () => global.navigator.userAgent;

  /** reCAPTCHA's own state: `___grecaptcha_cfg.clients[n]` holds, a few levels down, an object with `sitekey`. */
  function recaptchaClientParams(container) {
    const cfg = global.___grecaptcha_cfg;
    if (!cfg || !cfg.clients) return [];
    const found = [];
    for (const client of Object.values(cfg.clients)) {
      let params;
      let element;
      const walk = (value, depth) => {
        if (!value || typeof value !== 'object' || depth > 4) return;
        if (value.nodeType === 1 && !element) element = value;
        if (typeof value.sitekey === 'string' && !params) params = value;
        for (const key of Object.keys(value)) if (key !== 'sitekey') walk(value[key], depth + 1);
      };
      walk(client, 0);
      if (params && (!container || element === container || (element && container.contains(element)))) {
        found.push({ params, element });
      }
    }
    return found;
  }

  /** The elements of `elements` no earlier widget took, taken now (one element is one widget). */
  const claim = (elements, taken) => Array.from(elements).filter((el) => !taken.has(el) && taken.add(el));

  function renderOf(client, el) {
    return seen.renders.find((r) => r.client === client && r.container && (r.container === el || r.container.contains(el) || el.contains(r.container)));
  }

  /** Laid out and not hidden (null: a widget with no element, found from scripts or calls). */
  function visibleOf(el) {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    const style = global.getComputedStyle(el);
    return r.width > 0 && r.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
  }

  function add(kind, fields, extra) {
    const id = `w${nextId++}`;
    const el = extra.element;
    if (el && seen.closed.includes(el.getRootNode())) fields.note = CLOSED_NOTE;
    widgets.set(id, { id, kind, ...extra });
    const visible = visibleOf(el);
    const t = fields.task || {};
    // Score-based: v3, and invisible Enterprise with no visible trigger (nothing a user would click).
    const scoreBased = kind === 'recaptcha_v3' || (Boolean(t.enterprise && t.invisible) && !visible);
    return { id, kind, visible, scoreBased, ...fields };
  }

  const enterpriseScript = () => scripts().some((s) => /\/recaptcha\/enterprise\.js/.test(s));
  const recaptchaDomain = () => (scripts().some((s) => /\/\/(www\.)?recaptcha\.net\//.test(s)) ? 'recaptcha.net' : undefined);
  /** The sitekey of `api.js?render=KEY` (v3), not `explicit`/`onload`. */
  function v3ScriptKey() {
    for (const src of scripts()) {
      if (!/\/recaptcha\/(api|enterprise)\.js/.test(src)) continue;
      const render = urlParam(src, 'render');
      if (render && render !== 'explicit' && render !== 'onload') return render;
    }
    return undefined;
  }

  function detectRecaptcha(out, taken) {
    const v3Key = v3ScriptKey();
    const containers = new Set();
    all('.g-recaptcha, [data-sitekey].g-recaptcha').forEach((el) => containers.add(el));
    for (const r of seen.renders) if (r.client === 'recaptcha' && r.container) containers.add(r.container);
    for (const { element } of recaptchaClientParams(null)) {
      if (element && !Array.from(containers).some((c) => c.contains(element))) containers.add(element);
    }
    // Google's anchor frame names the sitekey (`k=`) and size; its parent is the widget.
    const anchors = new Map();
    for (const frame of iframes()) {
      if (!/\/recaptcha\/(api2|enterprise)\/anchor/.test(frame.src) || !urlParam(frame.src, 'k')) continue;
      const holder = frame.parentElement;
      if (holder && !Array.from(containers).some((c) => c.contains(frame))) containers.add(holder);
      anchors.set(holder, frame);
    }
    for (const el of claim(containers, taken)) {
      const render = renderOf('recaptcha', el);
      const params = (render && render.params) || (recaptchaClientParams(el)[0] || {}).params || {};
      const anchor = anchors.get(el) || el.querySelector('iframe[src*="/recaptcha/api2/anchor"], iframe[src*="/recaptcha/enterprise/anchor"]');
      const sitekey = text(el.getAttribute('data-sitekey')) || text(params.sitekey) || (anchor && urlParam(anchor.src, 'k'));
      if (!sitekey) continue;
      const action = text(el.getAttribute('data-action')) || text(params.action) || (anchor && urlParam(anchor.src, 'sa'));
      const enterprise = Boolean((render && render.enterprise) || enterpriseScript() || (anchor && /\/enterprise\/anchor/.test(anchor.src)));
      const dataCallback = el.getAttribute('data-callback');
      const callback = namedFunction(dataCallback) || callbackOf(params.callback);
      const source = namedFunction(dataCallback) ? 'data-callback' : callback ? (render ? 'render' : 'client') : null;
      if (v3Key && v3Key === sitekey) {
        // The v3 button binding: `<button class="g-recaptcha" data-sitekey data-action data-callback>`.
        const task = { type: 'recaptcha_v3', sitekey, page_url: pageUrl(), action, enterprise: enterprise || undefined, domain: recaptchaDomain() };
        out.push(add('recaptcha_v3', { task: clean(task), supported: true, callback: source }, { element: el, callback, source }));
        continue;
      }
      const size = text(el.getAttribute('data-size')) || text(params.size) || (anchor && urlParam(anchor.src, 'size'));
      const task = {
        type: 'recaptcha_v2',
        sitekey,
        page_url: pageUrl(),
        invisible: size === 'invisible' || undefined,
        enterprise: enterprise || undefined,
        data_s: text(el.getAttribute('data-s')) || text(params.s),
        action,
        domain: recaptchaDomain(),
        user_agent: userAgent(),
        cookies: text(doc.cookie),
      };
      out.push(add('recaptcha_v2', { task: clean(task), supported: true, callback: source }, { element: el, callback, source, widgetId: render && render.widgetId }));
    }
    // v3 called from code: the hook held the page's execute() calls; each sitekey/action pair is one task.
    const pending = new Map();
    for (const call of seen.v3Calls) {
      if (call.settled) continue;
      const key = `${call.sitekey}\u0000${call.action || ''}`;
      if (!pending.has(key)) pending.set(key, []);
      pending.get(key).push(call);
    }
    for (const calls of pending.values()) {
      const { sitekey, action, enterprise } = calls[0];
      const task = { type: 'recaptcha_v3', sitekey, page_url: pageUrl(), action, enterprise: enterprise || enterpriseScript() || undefined, domain: recaptchaDomain() };
      out.push(add('recaptcha_v3', { task: clean(task), supported: true, callback: 'execute' }, { calls, source: 'execute' }));
    }
    // v3 loaded but not called yet, without a button binding: the token waits for the page's next execute().
    const hasV3 = out.some((w) => w.kind === 'recaptcha_v3');
    if (v3Key && !hasV3 && !seen.v3Calls.some((c) => c.sitekey === v3Key)) {
      const task = { type: 'recaptcha_v3', sitekey: v3Key, page_url: pageUrl(), enterprise: enterpriseScript() || undefined, domain: recaptchaDomain() };
      out.push(add('recaptcha_v3', {
        task: clean(task), supported: true, callback: 'execute',
        note: 'no execute() call was seen, so the action is unknown; hook the page before it loads to read it',
      }, { sitekey: v3Key, source: 'execute-next' }));
    }
  }

  function detectHcaptcha(out, taken) {
    const containers = new Set(all('.h-captcha'));
    for (const r of seen.renders) if (r.client === 'hcaptcha' && r.container) containers.add(r.container);
    // Rendered from code: hCaptcha's frame carries the widget id and the sitekey in its URL's hash.
    for (const frame of all('iframe[data-hcaptcha-widget-id], iframe[src*="hcaptcha.com"]')) {
      if (frame.parentElement && !Array.from(containers).some((c) => c.contains(frame))) containers.add(frame.parentElement);
    }
    for (const el of claim(containers, taken)) {
      const render = renderOf('hcaptcha', el);
      const params = (render && render.params) || {};
      const frame = el.querySelector('iframe[data-hcaptcha-widget-id], iframe[src*="hcaptcha.com"]');
      const sitekey = text(el.getAttribute('data-sitekey')) || text(params.sitekey) || (frame && urlParam(frame.src, 'sitekey'));
      if (!sitekey) continue;
      const size = text(el.getAttribute('data-size')) || text(params.size);
      const data = render && seen.hcaptchaData.get(render.widgetId);
      const dataCallback = el.getAttribute('data-callback');
      const callback = namedFunction(dataCallback) || callbackOf(params.callback);
      const widgetId = render ? render.widgetId : frame ? frame.getAttribute('data-hcaptcha-widget-id') || urlParam(frame.src, 'id') : undefined;
      // No callback in reach (rendered from code, page not hooked): hCaptcha's client runs it when it takes the
      // answer through its frames' message channel.
      const viaClient = !callback && text(widgetId) && global.hcaptcha && isFn(global.hcaptcha.getResponse);
      const source = namedFunction(dataCallback) ? 'data-callback' : callback ? 'render' : viaClient ? 'client-message' : null;
      const task = {
        type: 'hcaptcha',
        sitekey,
        page_url: pageUrl(),
        invisible: size === 'invisible' || undefined,
        data: (data && data.rqdata) || text(el.getAttribute('data-rqdata')) || text(params.rqdata),
        user_agent: userAgent(),
      };
      out.push(add('hcaptcha', { task: clean(task), supported: true, callback: source }, { element: el, callback, source, widgetId }));
    }
  }

  function detectTurnstile(out, taken) {
    const containers = new Set(all('.cf-turnstile'));
    for (const r of seen.renders) if (r.client === 'turnstile' && r.container) containers.add(r.container);
    // Rendered from code: Cloudflare's frame has the sitekey in its path (`/0x4AAAA…/`) next to the response input.
    for (const frame of iframes()) {
      if (/challenges\.cloudflare\.com\/.*\/(0x[0-9A-Za-z_-]{10,})\//.test(frame.src) && frame.parentElement && !Array.from(containers).some((c) => c.contains(frame))) {
        containers.add(frame.parentElement);
      }
    }
    // Today's api.js puts its frame in a closed shadow root; what the page's DOM keeps of a widget rendered from
    // code is the response input `cf-chl-widget-<id>_response` in the wrapper it appended to the container.
    for (const input of turnstileInputs()) {
      const container = input.parentElement && (input.parentElement.parentElement || input.parentElement);
      if (container && !Array.from(containers).some((c) => c.contains(input))) containers.add(container);
    }
    const chl = global._cf_chl_opt;
    for (const el of claim(containers, taken)) {
      const render = renderOf('turnstile', el);
      const params = (render && render.params) || {};
      const cfFrame = el.querySelector('iframe[src*="challenges.cloudflare.com"]');
      const cfKey = cfFrame && /\/(0x[0-9A-Za-z_-]{10,})\//.exec(cfFrame.src);
      const input = turnstileInputs().find((f) => el.contains(f));
      const inputId = input ? input.id.slice(TURNSTILE_PREFIX.length, -'_response'.length) : undefined;
      const sitekey = text(el.getAttribute('data-sitekey')) || text(params.sitekey) || (cfKey && cfKey[1]) || turnstileKeyOf(inputId);
      if (!sitekey) {
        // Its frame's URL was not in the page's resource timing: said, not dropped.
        if (input) out.push(add('turnstile', { task: null, supported: false, callback: null, error: 'a Turnstile widget whose sitekey the page does not show: prepare the page to read it' }, { element: el }));
        continue;
      }
      const dataCallback = el.getAttribute('data-callback');
      const callback = namedFunction(dataCallback) || callbackOf(params.callback);
      const source = namedFunction(dataCallback) ? 'data-callback' : callback ? 'render' : null;
      // Turnstile keeps render parameters in its script's closure and takes a token only from its own frame:
      // without the hook, a widget rendered from code keeps its callback (and action, cData) out of reach.
      const note = callback || render || el.classList.contains('cf-turnstile') ? undefined : TURNSTILE_NO_CALLBACK;
      const task = {
        type: 'turnstile',
        sitekey,
        page_url: pageUrl(),
        action: text(el.getAttribute('data-action')) || text(params.action),
        data: text(el.getAttribute('data-cdata')) || text(params.cData),
        pagedata: text(params.chlPageData) || (chl && text(chl.chlPageData)),
        user_agent: userAgent(),
      };
      const fieldName = text(el.getAttribute('data-response-field-name')) || text(params['response-field-name']) || (input && text(input.name)) || 'cf-turnstile-response';
      const widgetId = render ? render.widgetId : inputId;
      out.push(add('turnstile', { task: clean(task), supported: true, callback: source, note }, { element: el, callback, source, fieldName, widgetId, note }));
    }
  }

  const TURNSTILE_PREFIX = 'cf-chl-widget-';
  const TURNSTILE_NO_CALLBACK = 'Turnstile keeps render() callbacks in its script: not called (prepare the page to call them)';
  const turnstileInputs = () => all(`input[id^="${TURNSTILE_PREFIX}"][id$="_response"]`);

  /** The sitekey in the URL of the frame Turnstile loaded for widget `id`, from the page's resource timing. */
  function turnstileKeyOf(id) {
    if (!id) return undefined;
    const key = new RegExp(`/turnstile/.*/${id.replace(/\W/g, '')}/(0x[\\w-]{10,})/`);
    for (const { name } of global.performance.getEntriesByType('resource')) {
      const match = key.exec(name);
      if (match) return match[1];
    }
    return undefined;
  }

  function detectFuncaptcha(out, taken) {
    for (const entry of seen.arkose) {
      const blob = entry.config.data && text(entry.config.data.blob);
      const task = { type: 'funcaptcha', publickey: entry.publicKey, page_url: pageUrl(), surl: entry.surl, data: blob ? { blob } : undefined, user_agent: userAgent() };
      const callback = callbackOf(entry.config.onCompleted);
      const element = entry.config.selector ? doc.querySelector(entry.config.selector) : null;
      if (element) taken.add(element);
      out.push(add('funcaptcha', { task: clean(task), supported: true, callback: callback ? 'onCompleted' : null }, { element, callback, source: 'onCompleted', arkose: true }));
    }
    // Without the hook: the older markup, `<div id="FunCaptcha" data-pkey>` or an api.js script tag naming its key.
    for (const el of all('[data-pkey]')) {
      if (taken.has(el)) continue;
      taken.add(el);
      const publickey = text(el.getAttribute('data-pkey'));
      if (!publickey) continue;
      const surl = text(el.getAttribute('data-surl'));
      const blob = text(el.getAttribute('data-blob'));
      const dataCallback = el.getAttribute('data-callback');
      const callback = namedFunction(dataCallback);
      const task = { type: 'funcaptcha', publickey, page_url: pageUrl(), surl, data: blob ? { blob } : undefined, user_agent: userAgent() };
      out.push(add('funcaptcha', { task: clean(task), supported: true, callback: callback ? 'data-callback' : null }, { element: el, callback, source: 'data-callback' }));
    }
    if (!seen.arkose.length) {
      for (const script of doc.querySelectorAll('script[src]')) {
        const match = ARKOSE_SCRIPT.exec(script.src);
        if (!match || out.some((w) => w.kind === 'funcaptcha' && w.task.publickey === match[1])) continue;
        const task = { type: 'funcaptcha', publickey: match[1], page_url: pageUrl(), surl: new URL(script.src).origin, user_agent: userAgent() };
        out.push(add('funcaptcha', {
          task: clean(task), supported: true, callback: null,
          note: "the enforcement's onCompleted was not seen; hook the page before it loads to call it",
        }, { element: null, callback: undefined, source: null }));
      }
    }
  }

  function detectGeetest(out) {
    for (const entry of seen.geetest) {
      const c = entry.config;
      const common = { page_url: pageUrl(), user_agent: userAgent() };
      if (entry.version === 3) {
        const task = { type: 'geetest_v3', gt: text(c.gt), challenge: text(c.challenge), api_server: text(c.api_server), ...common };
        out.push(add('geetest_v3', { task: clean(task), supported: true, callback: 'onSuccess' }, { geetest: entry, source: 'onSuccess' }));
      } else {
        const task = { type: 'geetest_v4', captcha_id: text(c.captchaId) || text(c.captcha_id), ...common };
        out.push(add('geetest_v4', { task: clean(task), supported: true, callback: 'onSuccess' }, { geetest: entry, source: 'onSuccess' }));
      }
    }
    if (seen.geetest.length) return;
    // Without the hook: the widget's own script URLs carry its keys.
    for (const src of scripts()) {
      if (/geetest\.com\/get\.php/.test(src) && urlParam(src, 'gt') && urlParam(src, 'challenge')) {
        const task = { type: 'geetest_v3', gt: urlParam(src, 'gt'), challenge: urlParam(src, 'challenge'), page_url: pageUrl(), user_agent: userAgent() };
        out.push(add('geetest_v3', { task: clean(task), supported: true, callback: null }, { geetest: null, source: null }));
      } else if (/gcaptcha4\.geetest\.com\/load/.test(src) && urlParam(src, 'captcha_id')) {
        const task = { type: 'geetest_v4', captcha_id: urlParam(src, 'captcha_id'), page_url: pageUrl(), user_agent: userAgent() };
        out.push(add('geetest_v4', { task: clean(task), supported: true, callback: null }, { geetest: null, source: null }));
      }
    }
  }

  function detectAwsWaf(out) {
    const goku = global.gokuProps;
    const challenge = scripts().find((s) => /awswaf\.com\/.*challenge\.js/.test(s));
    const captcha = scripts().find((s) => /awswaf\.com\/.*captcha\.js/.test(s));
    if (!goku && !captcha) return;
    const task = {
      type: 'aws_waf',
      sitekey: goku && text(goku.key),
      iv: goku && text(goku.iv),
      context: goku && text(goku.context),
      challenge_script: challenge,
      captcha_script: captcha,
      page_url: pageUrl(),
      user_agent: userAgent(),
    };
    out.push(add('aws_waf', { task: clean(task), supported: true, callback: null }, { source: null, awsWaf: true }));
  }

  /**
   * Cloudflare's challenge page ("Just a moment..."): its answer is the `cf_clearance` cookie. Its options name the
   * challenge type (`cType`) and its script is the orchestrator's (a site's pages load other challenge-platform
   * scripts, and Turnstile reads `chlPageData` from the same options).
   */
  function detectCloudflareChallenge(out) {
    const opt = global._cf_chl_opt;
    if (!(opt && opt.cType) && !scripts().some((s) => /\/cdn-cgi\/challenge-platform\/.*\/orchestrate\//.test(s))) return;
    const task = { type: 'cloudflare_challenge', page_url: pageUrl(), user_agent: userAgent(), sitekey: opt && text(opt.chlApiSitekey), html: doc.documentElement.outerHTML };
    out.push(add('cloudflare_challenge', { task: clean(task), supported: true, callback: null }, { source: null }));
  }

  /** `<img>` whose name says captcha, with a text input in the same form or container. */
  function detectImage(out, taken) {
    const named = (el) => /captcha/i.test([el.id, el.className, el.getAttribute('name'), el.getAttribute('alt'), el.getAttribute('src')].join(' '));
    for (const img of all('img')) {
      if (!named(img) || taken.has(img)) continue;
      if (img.closest('.g-recaptcha, .h-captcha, .cf-turnstile')) continue;
      let scope = img.parentElement;
      let input = null;
      for (let i = 0; scope && i < 3 && !input; i++, scope = scope.parentElement) {
        const inputs = Array.from(scope.querySelectorAll('input[type="text"], input:not([type])'));
        input = inputs.find(named) || (inputs.length === 1 ? inputs[0] : null);
      }
      if (!input) continue;
      taken.add(img);
      const body = imageBase64(img);
      if (!body) {
        out.push(add('image', { task: null, supported: false, callback: null, error: `the image ${img.src} could not be read (not loaded, or from another origin without CORS)` }, { input }));
        continue;
      }
      out.push(add('image', { task: { type: 'image', body }, supported: true, callback: null }, { element: img, input, source: null }));
    }
  }

  function imageBase64(img) {
    if (!img.complete || !img.naturalWidth) return undefined;
    try {
      const canvas = doc.createElement('canvas');
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      canvas.getContext('2d').drawImage(img, 0, 0);
      return canvas.toDataURL('image/png').replace(/^data:image\/png;base64,/, '');
    } catch (_) {
      return undefined; // a tainted canvas: another origin's image
    }
  }

  /** Leaves out absent fields, so the core sees only what the page said. */
  function clean(task) {
    const out = {};
    for (const [k, v] of Object.entries(task)) if (v !== undefined && v !== null && v !== '') out[k] = v;
    return out;
  }

  const CLOSED_NOTE = "in a closed shadow root: reached because the page was prepared (the hook kept it); without that it is out of reach";

  function detect() {
    widgets.clear();
    roots = [doc, ...shadowRoots(doc, [])];
    for (const r of seen.closed) roots.push(r, ...shadowRoots(r, []));
    const out = [];
    const taken = new Set();
    detectHcaptcha(out, taken);
    detectTurnstile(out, taken);
    detectRecaptcha(out, taken);
    detectFuncaptcha(out, taken);
    detectGeetest(out);
    detectAwsWaf(out);
    detectCloudflareChallenge(out);
    detectImage(out, taken);
    return out;
  }

  // ------------------------------------------------------------------ injection

  /** The answer's text and fields, from a solution object or a bare token. */
  function answerOf(solution) {
    if (typeof solution === 'string') return { text: solution, fields: {} };
    const fields = (solution && solution.fields) || {};
    return { text: String((solution && solution.text) || ''), fields };
  }

  /** Response fields named `name` that belong to this widget: its own, and those of its form. */
  function responseFields(widget, name) {
    const el = widget.element;
    const own = el ? Array.from(el.querySelectorAll(`[name="${name}"]`)) : [];
    const form = el && el.closest('form');
    const inForm = form ? Array.from(form.querySelectorAll(`[name="${name}"]`)) : [];
    // Forms without a widget of their own get the token only when this is the page's one widget of its kind
    // (the "iframe not in a form" case); with several widgets a stray field could take another widget's token.
    let stray = [];
    const sameKind = Array.from(widgets.values()).filter((w) => w.kind === widget.kind && w.element);
    if (sameKind.length === 1) {
      stray = Array.from(doc.querySelectorAll(`[name="${name}"]`)).filter((f) => {
        const owner = f.closest('form');
        return !owner || !sameKind.some((w) => owner.contains(w.element) || w.element.contains(owner));
      });
    }
    const all = [];
    for (const f of [...own, ...inForm, ...stray]) if (!all.includes(f)) all.push(f);
    if (!all.length && el) {
      // The widget's script was not there to make its field: make it where the form will send it.
      all.push(hiddenField(el, name));
    }
    return all;
  }

  function write(widget, name, value, written, ownOnly) {
    const fields = ownOnly ? Array.from(widget.element.querySelectorAll(`[name="${name}"]`)) : responseFields(widget, name);
    for (const field of fields) {
      setValue(field, value);
      written.push(field.id ? `${name}#${field.id}` : name);
    }
  }

  function call(fn, args) {
    fn.apply(global, args);
    return true;
  }

  /** Ids of injected widgets whose expired-callback the widget's client called since `expired()` last asked. */
  const expiredIds = new Set();
  /** Wraps the widget's `data-expired-callback` function, so that its token running out is known. */
  function watchExpiry(id, el) {
    const name = el && el.getAttribute('data-expired-callback');
    const fn = name && global[name];
    if (!isFn(fn) || fn.cdlq) return;
    const wrapped = function (...args) {
      expiredIds.add(id);
      return fn.apply(this, args);
    };
    wrapped.cdlq = 1;
    global[name] = wrapped;
  }
  function expired() {
    const ids = [...expiredIds];
    expiredIds.clear();
    return ids;
  }

  function waiting(id) {
    const widget = widgets.get(id);
    return Boolean(widget) && (!widget.element || widget.element.isConnected);
  }

  function inject(id, solution) {
    const widget = widgets.get(id);
    if (!widget) return { injected: false, fields: [], callbackCalled: false, callback: null, error: `no widget ${id} in this document (it was reloaded or navigated away)` };
    if (widget.element && !widget.element.isConnected) {
      return { injected: false, fields: [], callbackCalled: false, callback: widget.source, error: `the ${widget.kind} widget was removed from the page` };
    }
    const { text: token, fields } = answerOf(solution);
    watchExpiry(id, widget.element);
    const written = [];
    let callbackCalled = false;
    let source = widget.source || null;
    switch (widget.kind) {
      case 'recaptcha_v2': {
        write(widget, 'g-recaptcha-response', token, written);
        const client = global.grecaptcha;
        const id = widgetIdOf(widget);
        patchGetResponse(client, id, token);
        if (client) patchGetResponse(client.enterprise, id, token);
        if (widget.callback) callbackCalled = call(widget.callback, [token]);
        break;
      }
      case 'recaptcha_v3':
        if (widget.calls) {
          for (const c of widget.calls) {
            c.settled = true;
            c.resolve(token);
          }
          callbackCalled = widget.calls.length > 0;
        } else if (widget.element) {
          // The button binding: Google hands the token to data-callback and writes no field.
          if (widget.callback) callbackCalled = call(widget.callback, [token]);
        } else {
          // No call seen: the page's next execute() for this sitekey answers the token.
          patchNextExecute(widget.sitekey, token);
          source = 'execute-next';
        }
        break;
      case 'hcaptcha':
        write(widget, 'h-captcha-response', token, written);
        // hCaptcha mirrors its token into a g-recaptcha-response of its own; never another widget's.
        write(widget, 'g-recaptcha-response', token, written, true);
        if (!widget.callback && widget.source === 'client-message') return handToHcaptcha(widget, token, written);
        patchGetResponse(global.hcaptcha, widgetIdOf(widget), token);
        if (widget.callback) callbackCalled = call(widget.callback, [token]);
        break;
      case 'turnstile':
        write(widget, widget.fieldName, token, written);
        patchGetResponse(global.turnstile, widgetIdOf(widget), token);
        if (widget.callback) callbackCalled = call(widget.callback, [token]);
        break;
      case 'funcaptcha': {
        if (widget.element) {
          for (const name of ['fc-token', 'verification-token']) {
            const f = widget.element.querySelector(`[name="${name}"]`) || (widget.element.closest('form') || doc).querySelector(`[name="${name}"]`);
            if (f) {
              setValue(f, token);
              written.push(name);
            }
          }
        }
        if (widget.callback) callbackCalled = call(widget.callback, widget.arkose ? [{ token }] : [token]);
        break;
      }
      case 'geetest_v3':
      case 'geetest_v4': {
        const answer = geetestAnswer(widget.kind, token, fields);
        if (!answer) return { injected: false, fields: [], callbackCalled: false, callback: source, error: `the ${widget.kind} answer has none of the fields GeeTest needs: ${Object.keys(fields).join(', ') || token.slice(0, 40)}` };
        const entry = widget.geetest;
        // GeeTest's own fields sit where the widget was appended, inside the form the site posts.
        const anchor = (entry && entry.container) || doc.querySelector('form') || doc.body;
        for (const [name, value] of Object.entries(answer)) {
          setValue(hiddenField(anchor, name), value);
          written.push(name);
        }
        if (entry && entry.captchaObj) {
          entry.captchaObj.getValidate = () => ({ ...answer });
          for (const fn of entry.successHandlers) callbackCalled = call(fn, []) || callbackCalled;
        }
        break;
      }
      case 'image':
        setValue(widget.input, token);
        written.push(widget.input.name || widget.input.id || 'input');
        break;
      default:
        return { injected: false, fields: [], callbackCalled: false, callback: null, error: `no injection known for ${widget.kind}` };
    }
    const result = { injected: written.length > 0 || callbackCalled, fields: written, callbackCalled, callback: source };
    if (!callbackCalled && widget.kind !== 'image') result.note = widget.note || noCallback(widget.kind);
    return result;
  }

  const noCallback = (kind) => `no ${kind} callback in reach${hooked ? '' : ' (page not prepared)'}: not called`;

  /** How long hCaptcha's client may take to answer an injected token from getResponse(). */
  const CLIENT_TAKE_MS = 2000;

  /**
   * Hands the answer to hCaptcha's client the way its own frame does when a challenge is passed: a
   * `challenge-closed` / `challenge-passed` message on the window (the channel puppeteer-extra-plugin-recaptcha
   * uses too). The client keeps the response and runs the widget's callbacks, which a page rendered from code
   * and not hooked keeps out of the page's reach. Resolves once the client's getResponse(id) answers the token;
   * if it never does, the result says the callback was not called.
   */
  function handToHcaptcha(widget, token, written) {
    const client = global.hcaptcha;
    const id = widget.widgetId;
    const message = { source: 'hcaptcha', label: 'challenge-closed', id, contents: { event: 'challenge-passed', expiration: 120, response: token } };
    global.postMessage(JSON.stringify(message), '*');
    const deadline = Date.now() + CLIENT_TAKE_MS;
    return new Promise((resolve) => {
      const check = () => {
        // getResponse() answers the client's own state (it throws for a widget it lost: not taken).
        let taken;
        try {
          taken = client.getResponse(id) === token;
        } catch (_) {}
        if (!taken && Date.now() < deadline) return setTimeout(check, 20);
        patchGetResponse(client, id, token);
        const result = { injected: true, fields: written, callbackCalled: !!taken, callback: taken ? 'client-message' : null };
        if (!taken) result.note = "hCaptcha's client did not take the answer: callback not called";
        resolve(result);
      };
      setTimeout(check, 0);
    });
  }

  /** GeeTest's form fields from an answer: v3 `geetest_challenge/validate/seccode`, v4 `lot_number`…. */
  function geetestAnswer(kind, token, fields) {
    let values = fields;
    if (!Object.keys(values).length) {
      try {
        values = JSON.parse(token);
      } catch (_) {
        return undefined;
      }
    }
    const pick = (...names) => names.map((n) => values[n]).find((v) => typeof v === 'string' && v !== '');
    if (kind === 'geetest_v3') {
      const out = { geetest_challenge: pick('geetest_challenge', 'challenge'), geetest_validate: pick('geetest_validate', 'validate'), geetest_seccode: pick('geetest_seccode', 'seccode') };
      return Object.values(out).every(Boolean) ? out : undefined;
    }
    const out = { lot_number: pick('lot_number'), captcha_output: pick('captcha_output'), pass_token: pick('pass_token'), gen_time: pick('gen_time') };
    if (!Object.values(out).every(Boolean)) return undefined;
    const id = pick('captcha_id');
    return id ? { captcha_id: id, ...out } : out;
  }

  /**
   * Makes the widget client's `getResponse(id)` answer the injected token: the vendors' clients keep the response
   * in their own state, so a page asking them (not the field) would see none ("token injected but the captcha
   * doesn't vanish"). Without an id, the call means the first widget; it answers the token when one was injected.
   */
  const injectedTokens = new Map(); // client object -> Map(widget id -> token)
  function patchGetResponse(client, widgetId, token) {
    if (!client || !isFn(client.getResponse)) return false;
    if (!injectedTokens.has(client)) {
      injectedTokens.set(client, new Map());
      const original = client.getResponse;
      const tokens = injectedTokens.get(client);
      client.getResponse = function (id) {
        if (id !== undefined && tokens.has(id)) return tokens.get(id);
        if (id === undefined && tokens.size === 1) return tokens.values().next().value;
        if (id === undefined && tokens.has(0)) return tokens.get(0);
        return original.apply(this, arguments);
      };
    }
    injectedTokens.get(client).set(widgetId === undefined || widgetId === null ? 0 : widgetId, token);
    return true;
  }

  /** The widget id a vendor gave the widget: from the hook, reCAPTCHA's state, or the ids it puts in the DOM. */
  function widgetIdOf(widget) {
    if (widget.widgetId !== undefined && widget.widgetId !== null) return widget.widgetId;
    const el = widget.element;
    if (!el) return undefined;
    if (widget.kind === 'recaptcha_v2') {
      const cfg = global.___grecaptcha_cfg;
      if (cfg && cfg.clients) {
        for (const [id, client] of Object.entries(cfg.clients)) {
          let found = false;
          const walk = (v, depth) => {
            if (found || !v || typeof v !== 'object' || depth > 4) return;
            if (v === el) found = true;
            else if (v.nodeType !== 1) for (const k of Object.keys(v)) walk(v[k], depth + 1);
          };
          walk(client, 0);
          if (found) return Number(id);
        }
      }
      const area = el.querySelector('textarea[id^="g-recaptcha-response"]');
      if (area) return area.id === 'g-recaptcha-response' ? 0 : Number(area.id.replace('g-recaptcha-response-', ''));
    }
    if (widget.kind === 'hcaptcha') {
      const frame = el.querySelector('[data-hcaptcha-widget-id]');
      if (frame) return frame.getAttribute('data-hcaptcha-widget-id');
    }
    return undefined;
  }

  function patchNextExecute(sitekey, token) {
    const client = global.grecaptcha;
    const target = client && client.enterprise && isFn(client.enterprise.execute) ? client.enterprise : client;
    if (!target || !isFn(target.execute)) return;
    const original = target.execute;
    target.execute = function (key) {
      if (key === sitekey) {
        target.execute = original;
        return Promise.resolve(token);
      }
      return original.apply(this, arguments);
    };
  }

  global.__captchaDlqPage = { version: 1, hook, detect, inject, expired, waiting };
})(globalThis);
