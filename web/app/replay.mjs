// Replay: the lab's own history through each policy (op "replay", anyone), and for admins the
// grid of `rota tune` (op "tune"): the figures `rota simulate --from-store` and `rota tune` print,
// computed by rotad on a worker thread. The first answer says the replay runs; the view asks again
// every second until it is done (and stops asking when it is left).
import { h, replace, select } from './dom.mjs';
import { isUnknownOp } from './api.mjs';
import { t } from './i18n.mjs';
import { fmtDur, fmtTime } from './fmt.mjs';

const SINCE = ['7d', '14d', '30d', '60d'];

const pct = (v) => (v === null || v === undefined || !isFinite(v) ? '—' : (100 * v).toFixed(1) + '%');
const jain = (v) => (v === null || v === undefined || v < 0 ? '—' : Number(v).toFixed(3));

function table(id, head, rows) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'replay-table', id },
    h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows)));
}

/** What the replay says of itself, in the reader's language: rotad's `notes` are the command
 * line's English lines, said here from `late_days` and `skipped` (an older rotad sends only the
 * lines, shown as they are). */
export function noteLines(result) {
  const lines = [t(result.mig_slices > 0 ? 'replay.replayed_mig' : 'replay.replayed',
    { jobs: result.jobs, gpus: result.gpus, slices: result.mig_slices })];
  if (result.late_days === undefined) return lines.concat(result.notes || []);
  if (result.late_days > 0) lines.push(t('replay.late_start', { days: result.late_days }));
  if (result.skipped > 0) lines.push(t('replay.never_ran', { n: result.skipped }));
  return lines;
}

function notes(result) {
  return h('ul', { class: 'replay-notes muted' }, noteLines(result).map((l) => h('li', {}, l)));
}

/** Each user's average wait as recorded and under each policy. */
function perUser(columns) {
  const users = new Map();
  columns.forEach((c, i) => {
    for (const u of c.per_user || []) {
      if (!users.has(u.user)) users.set(u.user, { jobs: u.jobs, waits: [] });
      users.get(u.user).waits[i] = u.avg_wait;
    }
  });
  return table('replay-users', [t('usage.user'), t('usage.jobs'), ...columns.map((c) => c.label)],
    [...users.entries()].map(([user, u]) => h('tr', { 'data-user': user },
      h('th', { scope: 'row' }, user || '—'), h('td', {}, String(u.jobs)),
      columns.map((_, i) => h('td', {}, fmtDur(u.waits[i]))))));
}

function showReplay(r) {
  const res = r.result;
  const rec = res.recorded || {};
  const rows = [h('tr', { 'data-policy': 'recorded' }, h('th', { scope: 'row' }, t('replay.recorded')),
    h('td', {}, fmtDur(rec.avg_wait)), h('td', {}, fmtDur(rec.p99_wait)), h('td', {}, fmtDur(rec.max_wait)),
    h('td', {}, '—'), h('td', {}, '—'))];
  for (const p of res.results || []) {
    rows.push(h('tr', { 'data-policy': p.policy }, h('th', { scope: 'row' }, t('replay.policy_' + p.policy)),
      h('td', {}, fmtDur(p.avg_wait)), h('td', {}, fmtDur(p.p99_wait)), h('td', {}, fmtDur(p.max_wait)),
      h('td', {}, pct(p.utilisation)), h('td', {}, jain(p.jain_slowdown))));
  }
  const columns = [{ label: t('replay.recorded'), per_user: rec.per_user },
    ...(res.results || []).map((p) => ({ label: t('replay.policy_' + p.policy), per_user: p.per_user }))];
  return [notes(res),
    table('replay-policies', ['', t('replay.avg'), t('replay.p99'), t('replay.max'), t('replay.util'), t('replay.jain')], rows),
    h('p', { class: 'muted' }, t('replay.explain')),
    h('h2', {}, t('replay.per_user')), perUser(columns)];
}

function showTune(r) {
  const res = r.result;
  const a = res.current || {}, b = res.proposed || {};
  // Beside the proposal, the same with promises the other way ([policy] promise_slack): shown,
  // never proposed, since they trade the average for the longest waits.
  const o = res.proposed_other_promises || {};
  const otherHead = o.promise_slack >= 0 ? t('replay.with_promises') : t('replay.without_promises');
  const row = (key, f, x, y, z) => h('tr', { 'data-row': key }, h('th', { scope: 'row' }, t('replay.' + key)),
    h('td', {}, f(x)), h('td', {}, f(y)), h('td', { class: 'other-promises' }, f(z)));
  const out = [notes(res), h('p', {}, t('replay.tried', { n: res.tried })),
    table('tune-figures', ['', t('replay.now'), t('replay.proposed'), otherHead], [
      row('avg', fmtDur, a.avg_wait, b.avg_wait, o.avg_wait), row('p99', fmtDur, a.p99_wait, b.p99_wait, o.p99_wait),
      row('max', fmtDur, a.max_wait, b.max_wait, o.max_wait), row('util', pct, a.utilisation, b.utilisation, o.utilisation),
      row('jain', jain, a.jain_slowdown, b.jain_slowdown, o.jain_slowdown)]),
    h('p', { class: 'muted', id: 'tune-promises' }, t(o.promise_slack >= 0 ? 'replay.promises_why' : 'replay.no_promises_why'))];
  if (res.change) {
    out.push(h('p', {}, t('replay.change')), h('pre', { class: 'cmd', id: 'tune-changes' }, (res.changes || []).join('\n')));
  } else {
    out.push(h('p', { id: 'tune-keep' }, t('replay.keep')));
  }
  out.push(h('h2', {}, t('replay.per_user')),
    perUser([{ label: t('replay.now'), per_user: a.per_user }, { label: t('replay.proposed'), per_user: b.per_user }]));
  return out;
}

export function mount(root, ctx) {
  let alive = true;
  let timer = null;
  const since = select({ id: 'replay-since', 'aria-label': t('replay.since') },
    SINCE.map((s) => [s, t('replay.since_' + s)]), '14d');
  const status = h('p', { class: 'replay-status', role: 'status' });
  const body = h('div', { class: 'replay-body' }, h('p', { class: 'muted' }, t('replay.intro')));
  // A result rotad made in the last ten minutes comes back at once (the status line says when).
  const ask = async (op) => {
    clearTimeout(timer);
    let r;
    try {
      r = await ctx.call(op, { since: since.value });
    } catch (e) {
      if (!alive) return;
      status.textContent = '';
      replace(body, h('p', { class: isUnknownOp(e) ? 'muted' : 'error', role: 'alert' },
        isUnknownOp(e) ? t('replay.unavailable') : e.message));
      return;
    }
    if (!alive) return;
    if (r.state !== 'done') {
      status.textContent = t('replay.running', { at: fmtTime(r.started) });
      timer = setTimeout(() => ask(op), 1000);
      return;
    }
    status.textContent = t('replay.made', { at: fmtTime(r.made), took: (r.took || 0).toFixed(1) });
    replace(body, op === 'tune' ? showTune(r) : showReplay(r));
  };
  const buttons = [h('button', { type: 'button', class: 'primary', id: 'replay-run', onclick: () => ask('replay') },
    t('replay.run'))];
  if (ctx.me.admin) {
    buttons.push(h('button', { type: 'button', id: 'replay-tune', onclick: () => ask('tune') }, t('replay.tune')));
  }
  root.append(h('div', { class: 'toolbar' }, h('h1', {}, t('replay.title')),
    h('div', { class: 'replay-controls' }, since, ...buttons)), status, body);
  return () => { alive = false; clearTimeout(timer); };
}
