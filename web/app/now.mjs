// The cards now, like gpustat: utilisation, memory, temperature, power, health, and who is on
// each card (Rota jobs and the processes the daemon saw, outside ones flagged). Refreshed every 3 s.
import { h, replace } from './dom.mjs';
import { t } from './i18n.mjs';
import { fmtMiB, fmtDur, fmtTime } from './fmt.mjs';

const REFRESH_MS = 3000;
const IDLE_UTIL = 5;

function bar(value, max, cls, label) {
  const f = max > 0 && value >= 0 ? Math.min(1, value / max) : 0;
  return h('div', { class: 'bar ' + cls, role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': max,
    'aria-valuenow': value >= 0 ? value : 0, 'aria-label': label },
  h('div', { class: 'fill', style: { width: (100 * f).toFixed(1) + '%' } }),
  h('span', { class: 'bar-text' }, label));
}

/** What is wrong with a card, as [kind, text] pairs ('bad', 'warn', 'info'). */
export function warningsOf(g) {
  const w = [];
  if (g.health === 'suspect') w.push(['warn', t('gpu.suspect') + (g.health_error ? ': ' + g.health_error : '')]);
  if (g.health === 'drained' || g.drained) {
    w.push(['bad', t('gpu.drained') + (g.drain_reason ? ': ' + g.drain_reason : '') + (g.drained_by ? ' (' + g.drained_by + ')' : '')]);
  }
  const procs = [...(g.processes || []), ...(g.mig || []).flatMap((m) => m.processes || [])];
  for (const p of procs) {
    // A cluster node's process in a Slurm job outside Rota (plain sbatch) is Slurm's: no alarm.
    if (p.outside && !p.in_slurm) w.push(['bad', t('gpu.outside', { pid: p.pid, user: p.user || '?', mem: fmtMiB(p.memory) })]);
    else if (p.allocated === false) w.push(['bad', t('gpu.unallocated', { pid: p.pid, user: p.user || '?', job: p.job_id })]);
  }
  // A cluster's job outside Rota (plain sbatch) holds the card: Slurm's, so no alarm, but not free.
  const named = new Set(procs.filter((p) => p.in_slurm).map((p) => p.slurm_job));
  for (const hb of g.held_by || []) {
    if (!named.has(hb.slurm_job)) w.push(['info', t('gpu.held_slurm', { user: hb.user, job: hb.slurm_job })]);
  }
  if (g.held_outside && !(g.held_by || []).length && !procs.some((p) => p.outside)) w.push(['info', t('gpu.held_outside')]);
  if ((g.jobs || []).length && g.util >= 0 && g.util < IDLE_UTIL) {
    const held = g.memory_total > 0 && g.memory_used / g.memory_total > 0.5;
    // The daemon's watch decides what is idle for long ([watch]); the card only says what it sees now.
    w.push(held ? ['warn', t('gpu.stuck', { util: g.util })] : ['info', t('gpu.idle', { util: g.util })]);
  }
  if (g.ecc_uncorrected > 0) w.push(['bad', t('gpu.ecc', { n: g.ecc_uncorrected })]);
  if ((g.xids || []).length) w.push(['bad', 'Xid ' + g.xids.join(', ')]);
  return w;
}

/** Every process the driver reported on the card and its slices, like gpustat's user/pid(mem). */
function procs(g) {
  return [...(g.processes || []), ...(g.mig || []).flatMap((m) => m.processes || [])];
}

/** The card's heading: its index, and on a cluster the node it is in ("GPU 5 · gpu-07"). */
export function cardTitle(g) {
  return 'GPU ' + g.index + (g.node ? ' · ' + g.node : '');
}

function card(g) {
  const warnings = warningsOf(g);
  const state = g.drained || g.health === 'drained' ? 'drained' : g.health === 'suspect' ? 'suspect' : (g.jobs || []).length || g.held_outside ? 'busy' : 'free';
  const temp = g.temperature >= 0 ? g.temperature + '°C' : '—';
  const power = g.power_mw >= 0 ? Math.round(g.power_mw / 1000) + ' W' : '—';
  return h('article', { class: 'gpu-card state-' + state, dataset: { index: g.index } },
    h('header', {},
      h('h2', {}, cardTitle(g)), h('span', { class: 'model' }, String(g.name || '').replace(/^NVIDIA\s+/, '')),
      h('span', { class: 'badge ' + state }, t('gpu.state_' + state))),
    bar(g.util, 100, 'util', t('gpu.util') + ' ' + (g.util >= 0 ? g.util + '%' : '—')),
    bar(g.memory_used, g.memory_total, 'mem', t('gpu.mem') + ' ' + fmtMiB(g.memory_used) + ' / ' + fmtMiB(g.memory_total)),
    h('div', { class: 'facts-line' },
      h('span', { class: 'temp' + (g.temperature >= 80 ? ' hot' : '') }, t('gpu.temp'), ' ', temp), h('span', {}, t('gpu.power'), ' ', power),
      h('span', { class: 'uuid', title: g.uuid }, g.uuid)),
    warnings.length ? h('ul', { class: 'warnings' }, warnings.map(([k, text]) => h('li', { class: k }, k === 'info' ? '' : '⚠ ', text))) : null,
    (g.jobs || []).length
      ? h('ul', { class: 'who-list' }, g.jobs.map((j) => h('li', { class: j.mine ? 'mine' : '' },
        h('strong', {}, j.user), ' ', h('span', { class: 'muted' }, '#' + j.job_id + ' ' + (j.name || '')),
        ' ', h('span', { class: 'tier-tag tier-' + j.tier }, t('tier.' + j.tier)),
        j.interactive ? h('span', { class: 'badge' }, t('job.interactive')) : null,
        j.mig_uuid ? h('span', { class: 'badge' }, 'MIG') : null,
        j.gpu_mem ? h('span', { class: 'badge' }, fmtMiB(j.gpu_mem)) : null,
        h('span', { class: 'right' }, j.memory_used >= 0 ? fmtMiB(j.memory_used) + ' · ' : '', t('job.left', { d: fmtDur(j.time_left) })))))
      : g.held_outside ? null : h('p', { class: 'muted free-note' }, t('gpu.nobody')),
    procs(g).length ? h('p', { class: 'procs', 'aria-label': t('gpu.processes') },
      procs(g).map((p) => h('span', { class: 'proc' + (p.outside ? ' outside' : ''), title: p.job_id ? t('gpu.of_job', { job: p.job_id }) : '' },
        (p.user || '?') + '/' + p.pid + ' (' + fmtMiB(p.memory) + ')'))) : null,
    (g.mig || []).length ? h('ul', { class: 'mig-list' }, g.mig.map((m) => h('li', {},
      'MIG ' + m.profile + ' ', bar(m.memory_used, m.memory_total, 'mem small', fmtMiB(m.memory_used) + ' / ' + fmtMiB(m.memory_total))))) : null);
}

export function mount(root, ctx) {
  const { call } = ctx;
  const meta = h('p', { class: 'muted meta', 'aria-live': 'off' });
  const grid = h('div', { class: 'gpu-grid', 'aria-live': 'polite', 'aria-busy': 'true' }, h('p', {}, t('loading')));
  root.append(h('div', { class: 'toolbar' }, h('h1', {}, t('now.title')), meta), grid);
  let alive = true;
  let timer = null;
  async function tick() {
    if (document.hidden) { timer = setTimeout(tick, REFRESH_MS); return; }  // nobody is looking
    try {
      const r = await call('gpus');
      if (!alive) return;
      grid.setAttribute('aria-busy', 'false');
      replace(grid, (r.gpus || []).map(card));
      replace(meta, t('now.sampled', { at: fmtTime(r.sampled_at || r.time, { date: false }) }),
        r.source ? ' · ' + r.source : '', r.sample_error ? h('span', { class: 'error' }, ' · ' + r.sample_error) : null);
    } catch (e) {
      if (alive) replace(meta, h('span', { class: 'error' }, e.message));
    }
    if (alive) timer = setTimeout(tick, REFRESH_MS);
  }
  tick();
  return () => { alive = false; clearTimeout(timer); };
}
