// Stand-ins for the CAPTCHA vendors' client scripts, for the page tests' fixture site. Each implements the
// vendor's documented DOM and JS API (render/execute/getResponse/reset, auto-rendering of its class, the response
// fields it creates, data-callback), with no challenge anyone could pass: like a bot in a real page, the only way
// to a token the site's backend accepts (the mock solver's /siteverify) is a solver's answer, injected. As the real
// clients, getResponse() answers the client's own state (a solved challenge), not what a field holds.
// Served as /recaptcha/api.js, /recaptcha/enterprise.js, /hcaptcha/api.js, /turnstile/v0/api.js,
// /arkose/v2/<key>/api.js, /geetest/gt.js and /geetest/gt4.js (server.mjs); the path says which vendor it plays.
(function () {
  'use strict';
  const script = document.currentScript;
  const src = new URL(script.src);
  const path = src.pathname;
  const vendor = path === '/recaptcha/api.js' ? 'recaptcha'
    : path === '/recaptcha/enterprise.js' ? 'recaptcha-enterprise'
    : path.startsWith('/hcaptcha/') ? 'hcaptcha'
    : path.startsWith('/turnstile/') ? 'turnstile'
    : path.startsWith('/arkose/') ? 'arkose'
    : path === '/geetest/gt.js' ? 'geetest3'
    : path === '/geetest/gt4.js' ? 'geetest4' : path;
  const global = window;
  // Containers are elements, ids or (Turnstile, GeeTest) CSS selectors, as the vendors accept them.
  const byId = (c) => (typeof c === 'string' ? document.getElementById(c) || document.querySelector(c) : c);
  const fn = (v) => (typeof v === 'function' ? v : typeof v === 'string' ? global[v] : undefined);
  const ready = (f) => (document.readyState === 'loading' ? document.addEventListener('DOMContentLoaded', f) : f());
  const data = (el) => {
    const out = {};
    for (const [k, v] of Object.entries(el.dataset)) out[k] = v;
    return out;
  };

  function field(container, tag, name, id) {
    const el = document.createElement(tag);
    el.name = name;
    if (id) el.id = id;
    if (tag === 'input') el.type = 'hidden';
    else el.style.display = 'none';
    container.appendChild(el);
    return el;
  }

  /** An empty iframe where the vendor would show its challenge (the tests never solve it). */
  function challengeFrame(container, title) {
    const frame = document.createElement('iframe');
    frame.title = title;
    frame.width = '300';
    frame.height = '74';
    container.appendChild(frame);
  }

  // -------------------------------------------------------------- reCAPTCHA (api.js / enterprise.js)
  function recaptcha(enterprise) {
    const widgets = [];
    const cfg = (global.___grecaptcha_cfg = global.___grecaptcha_cfg || { clients: {} });
    function render(container, params) {
      const el = byId(container);
      const id = widgets.length;
      const p = Object.assign({}, params);
      if (!p.sitekey) throw new Error('Missing required parameters: sitekey');
      challengeFrame(el, 'reCAPTCHA');
      const response = field(el, 'textarea', 'g-recaptcha-response', id ? `g-recaptcha-response-${id}` : 'g-recaptcha-response');
      widgets.push({ el, params: p, response, solved: '' });
      // As in Google's client: the params sit a few levels down in an obfuscated object next to the element.
      cfg.clients[id] = { id, D: { Q: { l: p }, j: el } };
      return id;
    }
    const widget = (id) => widgets[id === undefined ? 0 : id];
    const api = {
      render,
      getResponse: (id) => (widget(id) ? widget(id).solved : ''),
      reset: (id) => {
        if (widget(id)) widget(id).response.value = '';
      },
      execute(idOrKey, options) {
        if (typeof idOrKey === 'string') {
          // v3: a score-based token; a bot's is worthless, as the backend finds out.
          return Promise.resolve(`standin-v3-${options && options.action}`);
        }
        // v2 invisible: a challenge would open; nobody here solves it.
        return undefined;
      },
      ready: (f) => ready(f),
    };
    const onload = src.searchParams.get('onload');
    const renderParam = src.searchParams.get('render');
    if (enterprise) global.grecaptcha = Object.assign(global.grecaptcha || {}, { enterprise: api });
    else global.grecaptcha = api;
    ready(() => {
      if (renderParam !== 'explicit') {
        document.querySelectorAll('.g-recaptcha').forEach((el) => {
          const d = data(el);
          // v3 button binding: the button runs execute on click and hands the token to data-callback.
          if (renderParam && renderParam === d.sitekey) {
            el.addEventListener('click', (ev) => {
              ev.preventDefault();
              api.execute(d.sitekey, { action: d.action }).then((t) => fn(d.callback) && fn(d.callback)(t));
            });
            return;
          }
          render(el, { sitekey: d.sitekey, size: d.size, callback: d.callback, s: d.s, action: d.action });
        });
      }
      if (onload && fn(onload)) fn(onload)();
    });
  }

  // -------------------------------------------------------------- hCaptcha
  function hcaptcha() {
    const widgets = [];
    function render(container, params) {
      const el = byId(container);
      const id = `hc${widgets.length}`;
      // As hCaptcha's own frame: the widget id on the element, the sitekey in the URL's hash (served locally).
      const frame = document.createElement('iframe');
      frame.title = 'hCaptcha';
      frame.src = `/hcaptcha/checkbox.html#frame=checkbox&id=${id}&sitekey=${encodeURIComponent(params.sitekey)}`;
      frame.setAttribute('data-hcaptcha-widget-id', id);
      frame.setAttribute('data-hcaptcha-response', '');
      el.appendChild(frame);
      const response = field(el, 'textarea', 'h-captcha-response');
      const mirror = field(el, 'textarea', 'g-recaptcha-response');
      // The render parameters stay inside the client, as in hCaptcha's: the page keeps only the widget id.
      widgets.push({ id, el, frame, params: Object.assign({}, params), response, mirror, data: {}, solved: '' });
      el.setAttribute('data-hcaptcha-widget-id', id);
      return id;
    }
    const widget = (id) => (id === undefined ? widgets[0] : widgets.find((w) => w.id === id));
    // hCaptcha's frames talk to api.js by postMessage: when a challenge is passed, the frame posts
    // {source: 'hcaptcha', label: 'challenge-closed', id, contents: {event: 'challenge-passed', response, expiration}}
    // (JSON text) and the client keeps the response, fills its fields and runs the widget's callback. The client
    // also takes the message from its own window: that is how puppeteer-extra-plugin-recaptcha enters hCaptcha
    // answers (src/content-hcaptcha.ts), and the only way a page that was not hooked reaches the callback.
    global.addEventListener('message', (event) => {
      const fromClient = event.source === global || widgets.some((x) => event.source === x.frame.contentWindow);
      const w = fromClient && passed(event.data);
      if (!w) return;
      w.solved = w.message.response;
      w.response.value = w.solved;
      w.mirror.value = w.solved;
      w.frame.setAttribute('data-hcaptcha-response', w.solved);
      const callback = fn(w.params.callback);
      if (callback) callback(w.solved);
    });
    function passed(data) {
      let message = data;
      if (typeof data === 'string') {
        try {
          message = JSON.parse(data);
        } catch (_) {
          return undefined;
        }
      }
      if (!message || message.source !== 'hcaptcha' || message.label !== 'challenge-closed') return undefined;
      const contents = message.contents || {};
      if (contents.event !== 'challenge-passed' || typeof contents.response !== 'string') return undefined;
      const w = widget(message.id);
      if (!w || message.id === undefined) return undefined;
      w.message = contents;
      return w;
    }
    global.hcaptcha = {
      render,
      getResponse: (id) => (widget(id) ? widget(id).solved : ''),
      getRespKey: () => '',
      reset: (id) => {
        if (widget(id)) widget(id).response.value = '';
      },
      execute: () => undefined,
      setData: (id, d) => {
        if (widget(id)) Object.assign(widget(id).data, d);
      },
      remove: () => undefined,
    };
    const renderParam = src.searchParams.get('render');
    const onload = src.searchParams.get('onload');
    ready(() => {
      if (renderParam !== 'explicit') {
        document.querySelectorAll('.h-captcha').forEach((el) => render(el, data(el)));
      }
      if (onload && fn(onload)) fn(onload)();
    });
  }

  // -------------------------------------------------------------- Turnstile
  function turnstile() {
    const widgets = [];
    const PREFIX = 'cf-chl-widget-';
    function render(container, params) {
      const el = byId(container);
      const id = `${Math.random().toString(36).slice(2, 7)}${widgets.length}`;
      const p = Object.assign({}, params);
      // As Cloudflare's api.js: a wrapper in the container, the challenge frame (its URL names the widget id and
      // the sitekey) in a closed shadow root, the response input beside it in the page's DOM (forms post it). The
      // render parameters, callback included, stay in the script's closure: nothing on the page reaches them.
      const wrapper = document.createElement('div');
      const shadow = wrapper.attachShadow({ mode: 'closed' });
      const frame = document.createElement('iframe');
      frame.id = PREFIX + id;
      frame.title = 'Widget containing a Cloudflare security challenge';
      frame.src = `/turnstile/if/ov2/av0/rcv/${id}/${encodeURIComponent(p.sitekey)}/auto/fbE/new/normal/auto/`;
      shadow.appendChild(frame);
      const response = field(wrapper, 'input', p['response-field-name'] || 'cf-turnstile-response', `${PREFIX}${id}_response`);
      el.appendChild(wrapper);
      widgets.push({ id, el, params: p, response, solved: undefined });
      return id;
    }
    // Turnstile's methods take a widget id or the container (an element or selector); none means the last widget.
    const widget = (ref) => {
      if (ref === undefined) return widgets[widgets.length - 1];
      const byRef = widgets.find((w) => w.id === ref);
      if (byRef) return byRef;
      const el = typeof ref === 'string' ? document.querySelector(ref) : ref;
      return widgets.find((w) => w.el === el);
    };
    global.turnstile = {
      render,
      getResponse: (id) => (widget(id) ? widget(id).solved : undefined),
      reset: (id) => {
        if (widget(id)) widget(id).response.value = '';
      },
      remove: () => undefined,
      execute: () => undefined,
      isExpired: () => false,
      ready: (f) => ready(f),
    };
    const renderParam = src.searchParams.get('render');
    const onload = src.searchParams.get('onload');
    ready(() => {
      if (renderParam !== 'explicit') {
        document.querySelectorAll('.cf-turnstile').forEach((el) => {
          const d = data(el);
          render(el, { sitekey: d.sitekey, action: d.action, cData: d.cdata, callback: d.callback, 'response-field-name': d.responseFieldName });
        });
      }
      if (onload && fn(onload)) fn(onload)();
    });
  }

  // -------------------------------------------------------------- Arkose Labs (FunCaptcha)
  function arkose() {
    const setupName = script.getAttribute('data-callback');
    const config = {};
    const enforcement = {
      setConfig: (c) => Object.assign(config, c),
      getConfig: () => Object.assign({}, config),
      run: () => undefined,
      reset: () => undefined,
    };
    ready(() => {
      const setup = fn(setupName);
      if (setup) setup(enforcement);
      if (config.onReady) config.onReady();
    });
  }

  // -------------------------------------------------------------- GeeTest v3 and v4
  function geetest(version) {
    const make = (config) => {
      const handlers = { success: [], ready: [], error: [] };
      const obj = {
        appendTo(where) {
          const el = typeof where === 'string' ? document.querySelector(where) : where;
          challengeFrame(el, 'GeeTest');
          setTimeout(() => handlers.ready.forEach((f) => f()), 0);
          return obj;
        },
        onReady: (f) => (handlers.ready.push(f), obj),
        onSuccess: (f) => (handlers.success.push(f), obj),
        onError: (f) => (handlers.error.push(f), obj),
        onClose: () => obj,
        getValidate: () => false,
        reset: () => undefined,
        verify: () => undefined,
        showCaptcha: () => undefined,
        config,
      };
      return obj;
    };
    if (version === 3) global.initGeetest = (config, cb) => cb(make(config));
    else global.initGeetest4 = (config, cb) => cb(make(config));
  }

  switch (vendor) {
    case 'recaptcha':
      return recaptcha(false);
    case 'recaptcha-enterprise':
      return recaptcha(true);
    case 'hcaptcha':
      return hcaptcha();
    case 'turnstile':
      return turnstile();
    case 'arkose':
      return arkose();
    case 'geetest3':
      return geetest(3);
    case 'geetest4':
      return geetest(4);
    default:
      throw new Error(`standins.js: unknown vendor ${vendor}`);
  }
})();
