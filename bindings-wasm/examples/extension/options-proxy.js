// The options page's "Proxy for page tasks" section (proxy-settings.js): the browser's proxy (the default), none, or
// a given one, and the login and password of the proxy. The password is never shown back: the field stays empty
// and says whether one is saved; leaving it empty keeps it, "Forget the password" removes it.
import { browserProxyServer, pageProxySettings, savePageProxy, shown } from './proxy-settings.js';

const $ = (id) => document.getElementById(id);

function show(settings, browserServer) {
  for (const radio of document.querySelectorAll('input[name="proxy-mode"]')) radio.checked = radio.value === settings.mode;
  $('proxy-server').value = settings.server;
  $('proxy-username').value = settings.username;
  $('proxy-password').value = '';
  $('proxy-password').placeholder = settings.hasPassword ? 'a password is saved (leave empty to keep it)' : 'none saved';
  $('proxy-browser').textContent = browserServer ?? 'none (direct, system settings or a PAC script)';
  $('proxy-section').dataset.ready = 'true';
}

function proxyStatus(text, error = false) {
  $('proxy-status').textContent = text;
  $('proxy-status').className = error ? 'error' : '';
  $('proxy-status').dataset.done = 'true';
}

async function save(forgetPassword) {
  const mode = document.querySelector('input[name="proxy-mode"]:checked')?.value ?? 'browser';
  const typed = $('proxy-password').value;
  const password = forgetPassword ? '' : typed === '' ? undefined : typed;
  try {
    const saved = await savePageProxy({ mode, server: $('proxy-server').value, username: $('proxy-username').value, password });
    show(saved, await browserProxyServer());
    proxyStatus(`saved: ${saved.mode}${saved.hasPassword ? ' (with a password)' : ''}`);
  } catch (e) {
    proxyStatus(e.message, true);
  }
}

$('proxy-save').addEventListener('click', () => save(false));
$('proxy-forget').addEventListener('click', () => save(true));
show(shown(await pageProxySettings()), await browserProxyServer());
