// The fixture site's own page code, shared by its pages: what a real site does with a CAPTCHA answer. A widget's
// callback reports the token it was handed (`report`), and `fixtureSubmit()` posts every form of the document as a
// user's submit would; server.mjs verifies both against the mock solver's /siteverify.
(function () {
  'use strict';
  // Every report in flight, so that fixtureSubmit() ends after the callbacks' reports reached the site.
  const pending = [];
  const post = (path, body) => {
    const sent = fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
    pending.push(sent.catch(() => null));
    return sent;
  };
  // `asked`: what the widget client's getResponse() answered at that moment, where the page asks it.
  window.report = function (widget, token, asked) {
    const body = { widget, token: typeof token === 'string' ? token : token && token.token };
    if (arguments.length > 2) body.asked = asked === undefined ? null : asked;
    return post('/callback', body);
  };
  window.fixtureSubmit = () =>
    Promise.all(pending.splice(0)).then(() => Promise.all(
      Array.from(document.forms).map((form) => {
        const fields = {};
        for (const [k, v] of new FormData(form).entries()) if (typeof v === 'string' && !(k in fields)) fields[k] = v;
        return post('/submit', { document: location.pathname.slice(1), form: form.id, fields });
      }),
    ));
})();
