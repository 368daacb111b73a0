// Usage: GPU-hours this week against quota per user and project, waits, utilisation of the
// allocated GPUs, idle hours, no-shows and overruns, and the last four weeks as charts. uPlot
// (web/node_modules, MIT, ~50 KB) is loaded only when this tab opens, so the first load stays
// small; without it the tables still show every number.
import { h, replace } from './dom.mjs';
import { isUnknownOp } from './api.mjs';
import { t } from './i18n.mjs';
import { fmtDur, fmtHours, fmtDay, axisLabels } from './fmt.mjs';

const UPLOT_JS = '/node_modules/uplot/dist/uPlot.iife.min.js';
const UPLOT_CSS = '/node_modules/uplot/dist/uPlot.min.css';
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#475569', '#ea580c'];

const OTHERS = '\u0000others';
let uplotPromise = null;
function loadUPlot() {
  if (window.uPlot) return Promise.resolve(window.uPlot);
  if (!uplotPromise) {
    uplotPromise = new Promise((resolve, reject) => {
      document.head.appendChild(h('link', { rel: 'stylesheet', href: UPLOT_CSS }));
      const s = h('script', { src: UPLOT_JS });
      s.onload = () => resolve(window.uPlot);
      s.onerror = () => { uplotPromise = null; reject(new Error('uPlot')); };
      document.head.appendChild(s);
    });
  }
  return uplotPromise;
}

// A y axis as wide as its longest tick label (uPlot's default 50 px is too narrow for "0.0015",
// and the axis title then overlaps the numbers).
function axisSize(u, values) {
  const longest = Math.max(1, ...(values || []).map((v) => String(v).length));
  return Math.max(50, Math.ceil(longest * 7 + 28));
}

function pct(v) { return v === null || v === undefined ? '—' : Math.round(v) + '%'; }

function quotaCell(used, quota) {
  if (quota === null || quota === undefined) return h('td', {}, fmtHours(used), h('span', { class: 'muted' }, ' / ∞'));
  const f = quota > 0 ? used / quota : 1;
  return h('td', { class: 'quota' }, h('div', { class: 'bar mem' + (f > 1 ? ' over' : '') , role: 'meter',
    'aria-valuenow': used, 'aria-valuemax': quota, 'aria-label': fmtHours(used) + ' / ' + fmtHours(quota) },
  h('div', { class: 'fill', style: { width: Math.min(100, 100 * f).toFixed(1) + '%' } }),
  h('span', { class: 'bar-text' }, fmtHours(used) + ' / ' + fmtHours(quota))));
}

export function mount(root, ctx) {
  const { call } = ctx;
  let alive = true;
  const plots = [];
  const body = h('div', { class: 'usage-body' }, h('p', {}, t('loading')));
  root.append(h('div', { class: 'toolbar' }, h('h1', {}, t('usage.title'))), body);

  (async () => {
    let r;
    try {
      r = await call('usage', { days: 28 });
    } catch (e) {
      if (!alive) return;
      const unknown = isUnknownOp(e);
      replace(body, h('p', { class: unknown ? 'muted' : 'error', role: 'status' }, unknown ? t('usage.unavailable') : e.message));
      return;
    }
    if (!alive) return;
    const tot = r.totals || {};
    // GPU-hours outside Rota (a cluster's plain sbatch): a column only where someone has some.
    const outside = (r.users || []).some((u) => (u.outside_gpu_hours || 0) > 0);
    const tile = (k, v) => h('div', { class: 'tile' }, h('span', { class: 'tile-v' }, v), h('span', { class: 'tile-k' }, t(k)));
    const chartsBox = h('div', { class: 'charts' });
    replace(body,
      h('div', { class: 'tiles' },
        tile('usage.avg_wait', fmtDur(tot.avg_wait_seconds)),
        tile('usage.util', pct(tot.allocated_util)),
        tile('usage.idle_hours', fmtHours(tot.idle_gpu_hours)),
        tile('usage.no_shows', String(tot.no_shows ?? '—')),
        tile('usage.overruns', String(tot.overruns ?? '—'))),
      h('p', { class: 'muted' }, t('usage.week_from', { at: fmtDay(r.week_start) })),
      h('h2', {}, t('usage.users')),
      h('div', { class: 'table-wrap' }, h('table', { class: 'usage-users' },
        h('thead', {}, h('tr', {}, ['usage.user', 'usage.week_hours', 'usage.pool', 'usage.jobs', ...(outside ? ['usage.outside'] : []), 'usage.avg_wait', 'usage.util_short', 'usage.idle_hours', 'usage.no_shows', 'usage.overruns']
          .map((k) => h('th', { scope: 'col' }, t(k))))),
        h('tbody', {}, (r.users || []).map((u) => h('tr', {},
          h('th', { scope: 'row' }, u.name), quotaCell(u.week_gpu_hours, u.quota_gpu_hours), h('td', {}, fmtHours(u.pool_gpu_hours)),
          h('td', {}, String(u.jobs ?? 0)), outside ? h('td', {}, fmtHours(u.outside_gpu_hours ?? 0)) : null, h('td', {}, fmtDur(u.avg_wait_seconds)), h('td', {}, pct(u.allocated_util)), h('td', {}, fmtHours(u.idle_gpu_hours)),
          h('td', { class: u.no_shows ? 'warn' : '' }, String(u.no_shows ?? 0)), h('td', { class: u.overruns ? 'warn' : '' }, String(u.overruns ?? 0))))))),
      (r.projects || []).length ? [h('h2', {}, t('usage.projects')),
        h('div', { class: 'table-wrap' }, h('table', {},
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('form.project')), h('th', { scope: 'col' }, t('usage.week_hours')))),
          h('tbody', {}, r.projects.map((p) => h('tr', {}, h('th', { scope: 'row' }, p.name), quotaCell(p.week_gpu_hours, p.quota_gpu_hours))))))] : null,
      h('h2', {}, t('usage.over_days')), chartsBox);
    drawCharts(chartsBox, r.days || []);
  })();

  async function drawCharts(box, days) {
    if (!days.length) { replace(box, h('p', { class: 'muted' }, t('usage.no_days'))); return; }
    let uPlot;
    try { uPlot = await loadUPlot(); } catch { replace(box, h('p', { class: 'muted' }, t('usage.no_charts'))); dayTable(box, days); return; }
    if (!alive) return;
    const xs = days.map((d) => d.start);
    // A non-admin sees their own hours by name and the rest of the lab as "others".
    days = days.map((d) => {
      const named = Object.values(d.gpu_hours || {}).reduce((a, b) => a + b, 0);
      const rest = (d.total_gpu_hours ?? named) - named;
      return rest > 0.01 ? { ...d, gpu_hours: { ...d.gpu_hours, [OTHERS]: rest } } : d;
    });
    const users = [...new Set(days.flatMap((d) => Object.keys(d.gpu_hours || {})))];
    const totals = users.map((u) => days.reduce((s, d) => s + (d.gpu_hours?.[u] || 0), 0));
    const order = users.map((u, i) => i).sort((a, b) => totals[b] - totals[a]);
    // Stacked bars: each series is the running sum up to its user, drawn tallest first.
    const stacks = order.map((_, k) => days.map((d) => order.slice(k).reduce((s, i) => s + (d.gpu_hours?.[users[i]] || 0), 0)));
    const width = Math.max(280, Math.min(900, box.clientWidth || 600));
    const bars = uPlot.paths.bars({ size: [0.7, 40] });
    const hoursBox = h('figure', { class: 'chart' }, h('figcaption', {}, t('usage.chart_hours')));
    const waitBox = h('figure', { class: 'chart' }, h('figcaption', {}, t('usage.chart_wait')));
    replace(box, hoursBox, waitBox);
    plots.push(new uPlot({
      width, height: 240, scales: { x: { time: true } },
      axes: [{}, { label: t('usage.gpu_hours'), values: (u, splits) => axisLabels(splits), size: axisSize }],
      series: [{ label: t('usage.day'), value: (u, v) => (v ? fmtDay(v) : '') }, ...order.map((i, k) => ({
        label: users[i] === OTHERS ? t('usage.others') : users[i], fill: COLORS[i % COLORS.length], stroke: COLORS[i % COLORS.length], paths: bars, points: { show: false },
        value: (u, v, si, di) => (di === null || di === undefined ? '' : fmtHours(days[di].gpu_hours?.[users[i]] || 0)),
      }))],
    }, [xs, ...stacks], hoursBox));
    plots.push(new uPlot({
      width, height: 220, scales: { x: { time: true }, pct: { range: [0, 100] } },
      axes: [{}, { label: t('usage.wait_h'), values: (u, splits) => axisLabels(splits), size: axisSize }, { scale: 'pct', side: 1, label: '%', grid: { show: false } }],
      series: [{ label: t('usage.day'), value: (u, v) => (v ? fmtDay(v) : '') },
        { label: t('usage.avg_wait'), stroke: '#d97706', width: 2, value: (u, v) => (v === null ? '—' : fmtDur(v * 3600)) },
        { label: t('usage.util'), stroke: '#2563eb', width: 2, scale: 'pct', value: (u, v) => (v === null ? '—' : Math.round(v) + '%') }],
    }, [xs, days.map((d) => (d.avg_wait_seconds ?? null) === null ? null : d.avg_wait_seconds / 3600), days.map((d) => d.allocated_util ?? null)], waitBox));
  }

  function dayTable(box, days) {
    box.appendChild(h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, ['usage.day', 'usage.gpu_hours', 'usage.avg_wait', 'usage.util'].map((k) => h('th', { scope: 'col' }, t(k))))),
      h('tbody', {}, days.map((d) => h('tr', {}, h('th', { scope: 'row' }, d.day),
        h('td', {}, fmtHours(d.total_gpu_hours ?? Object.values(d.gpu_hours || {}).reduce((a, b) => a + b, 0))),
        h('td', {}, fmtDur(d.avg_wait_seconds)), h('td', {}, pct(d.allocated_util))))))));
  }

  return () => { alive = false; plots.forEach((p) => p.destroy()); };
}
