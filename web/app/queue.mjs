// The queue and one's jobs: running jobs with time left, pending ones with the scheduler's
// reason and expected start, the submit form, cancel and logs. Refreshed every 5 s.
import { h, replace, field, select, openDialog } from './dom.mjs';
import { t } from './i18n.mjs';
import { fmtTime, fmtDur, fmtMiB, now } from './fmt.mjs';

const REFRESH_MS = 5000;
const SHELL_CHARS = /[|&;<>$`*?(){}~\\\n]/;

/** "python train.py --lr '1e-3'" -> argv; a line with shell syntax runs under /bin/sh -c. */
export function commandArgv(line) {
  line = line.trim();
  if (!line) return [];
  if (SHELL_CHARS.test(line.replace(/'[^']*'|"[^"]*"/g, ''))) return ['/bin/sh', '-c', line];
  const argv = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  let m;
  while ((m = re.exec(line))) argv.push(m[1] ?? m[2] ?? m[3]);
  return argv;
}

function remembered(key) {
  try { return localStorage.getItem(key) || ''; } catch { return ''; }
}

function requestText(r) {
  if (!r) return '';
  if (r.kind === 'gpu_mem') return fmtMiB(r.memory) + ' ' + t('cal.share');
  if (r.kind === 'mig') return 'MIG ' + r.profile;
  return t('job.n_gpus', { n: r.gpus });
}

// Where a running job's cards are: "GPU 0,1" (Rota's indices, as the Now tab lists the cards),
// on a cluster with its node ("GPU 2,3 on gpu-07"); "" for none.
export function cardsOf(job) {
  if (!(job.gpus || []).length) return '';
  return 'GPU ' + job.gpus.join(',') + (job.node ? ' ' + t('job.on_node', { node: job.node }) : '');
}

export function mount(root, ctx) {
  const { me, toast, call } = ctx;
  let alive = true, timer = null;
  // The advice is asked for at most every 30 s (the queue every 5): it reads the price table.
  let advice = {}, adviceAt = 0;
  const mineOnly = h('input', { type: 'checkbox', id: 'mine-only', onchange: () => refresh() });
  const table = h('div', { class: 'table-wrap' }, h('p', {}, t('loading')));
  root.append(
    h('div', { class: 'toolbar' }, h('h1', {}, t('queue.title')),
      h('div', { class: 'buttons' },
        h('label', { class: 'check' }, mineOnly, ' ', t('queue.mine_only')),
        h('button', { type: 'button', class: 'primary', id: 'open-submit', onclick: openSubmit }, '+ ', t('submit.title')))),
    table);

  async function refresh() {
    clearTimeout(timer);
    if (document.hidden) { timer = setTimeout(refresh, REFRESH_MS); return; }
    try {
      const r = await call('queue', { all: !mineOnly.checked });
      // Rent or wait, for one's own waiting jobs (op advise; a server without it gives none).
      const waiting = (r.jobs || []).some((j) => j.state === 'pending' && j.user === me.user);
      if (!waiting) advice = {};
      if (waiting && Date.now() - adviceAt > 30000) {
        adviceAt = Date.now();
        const fresh = {};
        try {
          for (const a of (await call('advise', {})).jobs || []) if (a.advise) fresh[a.job_id] = a;
        } catch { /* no advice */ }
        advice = fresh;
      }
      if (!alive) return;
      draw(r.jobs || [], advice);
    } catch (e) {
      if (alive) replace(table, h('p', { class: 'error', role: 'alert' }, e.message));
    }
    if (alive) timer = setTimeout(refresh, REFRESH_MS);
  }

  /** The advice on a waiting job, in a line: its deadline at risk, or what renting would cost. */
  function adviceLine(a) {
    const o = (a.options || [])[0];
    const rent = o ? t('job.rent', { cost: o.cost.toFixed(o.cost >= 100 ? 0 : 2), currency: o.currency, provider: o.provider, date: o.date }) : '';
    const text = a.deadline_at_risk ? t('job.deadline_risk', { at: fmtTime(a.deadline) }) + (rent ? ' ' + rent : '') : rent;
    return text ? h('div', { class: 'advice', title: t('job.advice_why', { id: a.job_id }) }, text) : null;
  }

  function draw(jobs, advice = {}) {
    if (!jobs.length) { replace(table, h('p', { class: 'muted empty' }, t('queue.empty'))); return; }
    const n = now();
    replace(table, h('table', { class: 'jobs' },
      h('thead', {}, h('tr', {}, ['job.id', 'job.name', 'job.user', 'job.state', 'job.request', 'form.tier', 'job.when', ''].map((k) =>
        h('th', { scope: 'col' }, k ? t(k) : '')))),
      h('tbody', {}, jobs.map((j) => {
        const own = j.user === me.user || me.admin;
        let when;
        if (j.state === 'running') {
          when = [t('job.left', { d: fmtDur(j.start_time + j.time_limit - n) }),
            j.predicted_end ? h('div', { class: 'muted forecast' }, t('job.likely_end', { at: fmtTime(j.predicted_end.time) })) : null,
            cardsOf(j) ? h('div', { class: 'muted' }, cardsOf(j)) : null,
            j.kill_at ? h('div', { class: 'warn' }, t('job.stopping')) : null];
        } else {
          const p = j.pending;
          when = p ? [h('span', { class: 'reason' }, t('reason.' + p.reason)),
            p.protected ? h('div', { class: 'protected', title: t('job.protected_why') }, t('job.protected')) : null,
            p.promise ? h('div', { class: 'muted promise', title: t('job.promise_why') }, t('job.promise', { at: fmtTime(p.promise) })) : null,
            p.forecast && p.forecast.p50 ? h('div', { class: 'forecast', title: t('job.forecast_why') +
                (p.forecast.arrivals > 0 ? ' ' + t('job.forecast_arrivals', { n: p.forecast.arrivals }) : '') },
              t(p.forecast.calibrated_on > 0 ? 'job.likely' : 'job.likely_plan',
                { at: fmtTime(p.forecast.p50), p90: p.forecast.p90 ? fmtTime(p.forecast.p90) : '?' })) : null,
            h('div', { class: 'muted' }, p.expected_start ? t('job.expected', { at: fmtTime(p.expected_start) }) + (p.estimated ? ' ' + t('job.estimated') : '') : t('job.unknown_start')),
            advice[j.id] ? adviceLine(advice[j.id]) : null]
            : t('job.waiting');
        }
        return h('tr', { dataset: { id: j.id, state: j.state } },
          h('td', {}, String(j.id)), h('td', { class: 'name' }, j.name, j.project ? h('div', { class: 'muted' }, j.project) : null),
          h('td', {}, j.user), h('td', {}, h('span', { class: 'badge jstate-' + j.state }, t('jstate.' + j.state)),
            j.interactive ? h('span', { class: 'badge' }, t('job.interactive')) : null),
          h('td', {}, requestText(j.request), h('div', { class: 'muted' }, fmtDur(j.time_limit))),
          h('td', {}, h('span', { class: 'tier-tag tier-' + j.tier }, t('tier.' + j.tier))),
          h('td', {}, when),
          h('td', { class: 'acts' }, own ? [
            h('button', { type: 'button', class: 'logs', onclick: () => openLogs(j) }, t('job.logs')),
            h('button', { type: 'button', class: 'danger cancel', onclick: () => cancel(j) }, t('job.cancel'))] : null));
      }))));
  }

  async function cancel(j) {
    if (!confirm(t('job.cancel_confirm', { id: j.id, name: j.name }))) return;
    try {
      const r = await call('cancel', { job_ids: [j.id] });
      const res = (r.results || [])[0];
      if (res && !res.ok) throw new Error(res.error?.message || res.error?.code);
      toast(t('job.cancelled', { id: j.id }));
      refresh();
    } catch (e) { toast(e.message, 'error'); }
  }

  function openLogs(j) {
    const pre = h('pre', { class: 'logs-text', tabindex: '0' });
    const status = h('p', { class: 'muted' });
    let offset = 0, open = true, lt = null;
    const dlg = openDialog(t('logs.title', { id: j.id, name: j.name }), h('div', { class: 'dialog-body' }, status, pre), { wide: true });
    dlg.addEventListener('close', () => { open = false; clearTimeout(lt); });
    async function more() {
      try {
        const r = await call('logs', { job_id: j.id, offset, max_bytes: 65536 });
        if (!open) return;
        if (r.data) {
          const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
          pre.appendChild(document.createTextNode(r.data));
          if (atBottom) pre.scrollTop = pre.scrollHeight;
        }
        offset = r.offset;
        status.textContent = r.path + (r.final && r.eof ? ' · ' + t('logs.done') : ' · ' + t('logs.following'));
        if (!(r.final && r.eof)) lt = setTimeout(more, r.eof ? 2000 : 0);
      } catch (e) { status.textContent = e.message; }
    }
    more();
  }

  function openSubmit() {
    const cmd = h('input', { name: 'command', required: true, autocomplete: 'off', placeholder: 'python train.py --epochs 10', class: 'mono' });
    const kind = select({ name: 'kind' }, [['gpus', t('submit.kind_gpus')], ['mem', t('submit.kind_mem')], ['mig', t('submit.kind_mig')]], 'gpus');
    const gpus = h('input', { name: 'gpus', type: 'number', min: 1, value: 1 });
    const mem = h('input', { name: 'mem', type: 'number', min: 1, value: 20 });
    const mig = h('input', { name: 'mig', placeholder: '3g.40gb' });
    const hours = h('input', { name: 'hours', type: 'number', min: 0.1, step: 0.1, value: 1, required: true });
    const tier = select({ name: 'tier' }, [['regular', t('tier.regular')], ['thesis', t('tier.thesis')], ['explore', t('tier.explore')]], 'regular');
    const name = h('input', { name: 'name', autocomplete: 'off' });
    const project = h('input', { name: 'project', autocomplete: 'off' });
    const image = h('input', { name: 'image', autocomplete: 'off', class: 'mono', placeholder: 'docker.io/pytorch/pytorch:2.1' });
    const deadline = h('input', { name: 'deadline', autocomplete: 'off', placeholder: '2026-12-10, fri 18:00' });
    const cwd = h('input', { name: 'cwd', required: true, class: 'mono', value: remembered('rota.cwd'), placeholder: '/home/' + me.user });
    const msg = h('div', { class: 'form-msg', role: 'alert' });
    const fG = field(t('submit.gpus'), gpus), fM = field(t('submit.mem_gib'), mem), fP = field(t('form.profile'), mig);
    const sync = () => { fG.hidden = kind.value !== 'gpus'; fM.hidden = kind.value !== 'mem'; fP.hidden = kind.value !== 'mig'; };
    kind.addEventListener('change', sync);
    sync();
    const form = h('form', { class: 'dialog-body submit-form', onsubmit: async (e) => {
      e.preventDefault();
      replace(msg);
      const dir = cwd.value.trim();
      if (!dir.startsWith('/')) { replace(msg, h('p', { class: 'error' }, t('submit.cwd_absolute'))); cwd.focus(); return; }
      const job = {
        command: commandArgv(cmd.value), cwd: dir,
        env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' },
        time_limit: Math.round(Number(hours.value) * 3600), tier: tier.value,
        request: kind.value === 'gpus' ? { kind: 'gpus', gpus: Number(gpus.value) }
          : kind.value === 'mem' ? { kind: 'gpu_mem', memory: Math.round(Number(mem.value) * 1024) }
            : { kind: 'mig', profile: mig.value.trim() },
      };
      if (name.value.trim()) job.name = name.value.trim();
      if (project.value.trim()) job.project = project.value.trim();
      if (image.value.trim()) job.image = image.value.trim();
      // As typed: the server reads it in the lab's time zone, as rota submit --deadline does.
      if (deadline.value.trim()) job.deadline = deadline.value.trim();
      try {
        const r = await call('submit', { job });
        try { localStorage.setItem('rota.cwd', dir); } catch { /* private mode */ }
        dlg.close();
        toast(t('submit.done', { id: r.job_id }));
        refresh();
      } catch (err) { replace(msg, h('p', { class: 'error' }, err.message)); }
    } },
    field(t('submit.command'), cmd, t('submit.command_hint')),
    field(t('submit.cwd'), cwd),
    h('div', { class: 'row2' }, field(t('submit.kind'), kind), fG, fM, fP),
    h('div', { class: 'row2' }, field(t('submit.hours'), hours), field(t('form.tier'), tier)),
    h('div', { class: 'row2' }, field(t('job.name'), name), field(t('form.project'), project)),
    h('div', { class: 'row2' }, field(t('submit.image'), image, t('submit.image_hint')),
      field(t('submit.deadline'), deadline, t('submit.deadline_hint'))),
    msg,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', id: 'submit-job' }, t('submit.submit'))));
    const dlg = openDialog(t('submit.title'), form, { wide: true });
    dlg.id = 'submit-dialog';
  }

  refresh();
  return () => { alive = false; clearTimeout(timer); };
}
