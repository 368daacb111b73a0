// The page: sign-in, the header (tabs, language, user), and a hash router over six views.
// Each view is a module with mount(container, ctx) -> cleanup; switching tabs or language
// unmounts the view (stopping its timers) and mounts it again.
import { h, replace } from './dom.mjs';
import { call, get, auth, onSignedOut, setCsrf } from './api.mjs';
import { t, lang, setLang } from './i18n.mjs';

const VIEWS = {
  calendar: () => import('./calendar.mjs'),
  now: () => import('./now.mjs'),
  queue: () => import('./queue.mjs'),
  usage: () => import('./usage.mjs'),
  rules: () => import('./rules.mjs'),
  replay: () => import('./replay.mjs'),
};
// What a wall display ([web] public_read, no one signed in) may not open: replays are asked for
// by someone.
const SIGNED_IN_ONLY = new Set(['replay']);
const shown = () => Object.keys(VIEWS).filter((name) => !(me?.viewer && SIGNED_IN_ONLY.has(name)));

const app = document.getElementById('app');
let me = null;
let cleanup = null;
let mountSeq = 0;

/** A message in the status line (read out by screen readers). kind: 'ok' | 'error'. */
export function toast(text, kind = 'ok') {
  const box = document.getElementById('toast');
  const item = h('div', { class: 'toast ' + kind, role: kind === 'error' ? 'alert' : 'status' }, text);
  box.appendChild(item);
  while (box.children.length > 3) box.firstChild.remove();
  setTimeout(() => item.remove(), kind === 'error' ? 8000 : 4000);
}

function route() {
  const name = (location.hash.replace(/^#\/?/, '') || 'calendar').split('?')[0];
  return VIEWS[name] && shown().includes(name) ? name : 'calendar';
}

function header() {
  const current = route();
  const tab = (name) => h('a', {
    href: '#/' + name, class: 'tab' + (name === current ? ' active' : ''),
    'aria-current': name === current ? 'page' : false, 'data-view': name,
  }, t('tab.' + name));
  const langSel = h('select', { id: 'lang', 'aria-label': t('lang.label'),
    onchange: (e) => { setLang(e.target.value); render(); } },
  h('option', { value: 'zh', selected: lang() === 'zh' }, '中文'),
  h('option', { value: 'en', selected: lang() === 'en' }, 'English'));
  return h('header', { class: 'top' },
    h('div', { class: 'brand' }, h('span', { class: 'logo', 'aria-hidden': 'true' }, '◷'), 'Rota'),
    me ? h('nav', { 'aria-label': t('nav.label') }, shown().map(tab)) : h('div', { class: 'spacer' }),
    h('div', { class: 'who' },
      langSel,
      me && !me.viewer ? h('span', { class: 'user', title: me.mode === 'user' ? t('mode.user') : '' }, me.user,
        me.admin ? h('span', { class: 'badge admin' }, t('role.admin')) : null) : null,
      me && !me.viewer ? h('button', { type: 'button', class: 'link', id: 'logout', onclick: logout }, t('auth.logout')) : null,
      me?.viewer ? h('button', { type: 'button', class: 'link', id: 'signin', onclick: () => showSignIn() }, t('auth.sign_in')) : null));
}

async function logout() {
  try { await auth('logout'); } catch { /* signed out either way */ }
  me = null;
  showSignIn();
}

async function render() {
  document.documentElement.lang = lang() === 'zh' ? 'zh-CN' : 'en';
  document.title = t('title');
  if (!me) return showSignIn();
  if (cleanup) { cleanup(); cleanup = null; }
  const seq = ++mountSeq;
  const main = h('main', { id: 'view', tabindex: '-1' });
  replace(app, header(), main);
  const name = route();
  main.dataset.view = name;
  try {
    const mod = await VIEWS[name]();
    if (seq !== mountSeq) return;
    cleanup = mod.mount(main, { me, toast, call }) || null;
  } catch (e) {
    replace(main, h('p', { class: 'error', role: 'alert' }, t('error.load'), ' ', String(e.message || e)));
  }
}

function showSignIn(note) {
  if (cleanup) { cleanup(); cleanup = null; }
  ++mountSeq;
  const user = h('input', { name: 'user', autocomplete: 'username', required: true });
  const pass = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const msg = h('p', { class: 'error', role: 'alert' });
  const form = h('form', { class: 'card narrow', onsubmit: async (e) => {
    e.preventDefault();
    msg.textContent = '';
    let res;
    try {
      res = await auth('password', { user: user.value, password: pass.value });
    } catch (err) {
      msg.textContent = String(err.message || err);
      return;
    }
    if (res.ok) return start();
    if (res.status === 404 || res.status === 400 || res.status === 405) msg.textContent = t('auth.password_unavailable');
    else if (res.status === 401) msg.textContent = t('auth.password_wrong');
    else msg.textContent = (await res.json().catch(() => null))?.error?.message || res.statusText;
  } },
  h('h2', {}, t('auth.password_title')),
  h('label', { class: 'field' }, h('span', { class: 'field-label' }, t('auth.user')), user),
  h('label', { class: 'field' }, h('span', { class: 'field-label' }, t('auth.password')), pass),
  h('button', { type: 'submit', class: 'primary' }, t('auth.sign_in')), msg);
  replace(app, header(), h('main', { id: 'view', class: 'signin' },
    h('section', { class: 'card narrow' },
      h('h1', {}, t('auth.title')),
      note ? h('p', { class: 'error', role: 'alert' }, note) : null,
      h('p', {}, t('auth.link_intro')),
      h('pre', { class: 'cmd' }, 'rota web'),
      h('p', {}, t('auth.link_then'))),
    form));
}

async function start() {
  try {
    me = await get('hello');
    setCsrf(me.csrf);
    // A lab's wall display ([web] public_read) reads without a session: no user, no actions.
    me.viewer = !me.user;
  } catch (e) {
    me = null;
    if (e.status === 401) return showSignIn();
    return showSignIn(t('error.unreachable') + ' ' + e.message);
  }
  render();
}

onSignedOut(() => {
  if (!me) return;
  const wasViewer = me.viewer;
  me = null;
  showSignIn(wasViewer ? null : t('auth.expired'));
});
window.addEventListener('hashchange', () => { if (me) render(); });
start();
