// Rules: the lab's rules in plain words, as `rota rules` prints them (op "rules": quotas and where
// the reader stands, tiers, peak hours, bookings, idle GPUs, limits, how to get an account, the
// first commands), in the page's language. Every text reaches the DOM as text (dom.mjs); the
// admin's account text keeps its lines.
import { h, replace } from './dom.mjs';
import { isUnknownOp } from './api.mjs';
import { t, lang } from './i18n.mjs';

export function mount(root, ctx) {
  let alive = true;
  const body = h('div', { class: 'rules-body' }, h('p', {}, t('loading')));
  root.append(h('div', { class: 'toolbar' }, h('h1', {}, t('rules.title'))), body);
  (async () => {
    let r;
    try {
      r = await ctx.call('rules', { lang: lang() });
    } catch (e) {
      if (!alive) return;
      const unknown = isUnknownOp(e);
      replace(body, h('p', { class: unknown ? 'muted' : 'error', role: 'status' }, unknown ? t('rules.unavailable') : e.message));
      return;
    }
    if (!alive) return;
    const colon = r.lang === 'zh' ? '：' : ': ';
    const item = (i) => h('li', {},
      (i.text || '').split('\n').flatMap((line, k) => (k ? [h('br'), line] : [line])),
      i.code ? [colon, h('code', {}, i.code)] : null);
    replace(body, (r.sections || []).map((s) => h('section', { class: 'rules-section', 'data-id': s.id },
      h('h2', {}, s.heading), h('ul', {}, (s.items || []).map(item)))));
  })();
  return () => { alive = false; };
}
