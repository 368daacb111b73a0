// The lab's GPU calendar: one row per card and per MIG slice, the week across. Bookings are
// buttons placed by time; clicking or dragging on empty time (or "New booking") opens the
// booking form, whose refusals are the daemon's own messages. Admins get the pending list.
import { h, replace, field, select, openDialog } from './dom.mjs';
import { t, lang } from './i18n.mjs';
import { fmtTime, fmtDay, fmtDur, fmtHours, toLocalInput, fromLocalInput, now } from './fmt.mjs';

const DAY = 86400;
const SLOT = 1800;
const HIDDEN = new Set(['rejected', 'cancelled']);
const TIERS = ['regular', 'thesis', 'explore'];

function mondayOf(sec) {
  const d = new Date(sec * 1000);
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  return Math.floor(d.getTime() / 1000);
}

function addDays(sec, n) {
  const d = new Date(sec * 1000);
  d.setDate(d.getDate() + n);
  return Math.floor(d.getTime() / 1000);
}

/** Rows of the calendar from `status`: each card, then each of its MIG slices. */
function rowsOf(status) {
  const rows = [];
  for (const g of status.gpus || []) {
    rows.push({ key: 'g' + g.index, gpu: g.index, label: 'GPU ' + g.index,
      sub: shortModel(g.model) + ' · ' + Math.round(g.memory / 1024) + 'G', drained: g.drained });
    (g.mig || []).forEach((m, i) => rows.push({ key: 'm' + m.uuid, gpu: g.index, mig: m.profile, migUuid: m.uuid,
      label: 'GPU ' + g.index + '/' + i, sub: 'MIG ' + m.profile, slice: true }));
  }
  return rows;
}

function shortModel(m) { return String(m || '').replace(/^NVIDIA\s+/, ''); }

function rowKeysOf(b, rows) {
  if (b.mig_uuid) return rows.some((r) => r.migUuid === b.mig_uuid) ? ['m' + b.mig_uuid] : [];
  return (b.gpus || []).map((g) => 'g' + g);
}

export function mount(root, ctx) {
  const { me, toast, call } = ctx;
  const st = { week: mondayOf(now()), rows: [], bookings: [], pending: [], ahead: [], status: null, loaded: false };
  let timer = null;
  let alive = true;

  const body = h('div', { class: 'cal-body' });
  const pendingBox = h('section', { class: 'pending', 'aria-live': 'polite', hidden: true });
  const errorBox = h('div', { class: 'form-msg', role: 'alert' });
  const title = h('h1', { class: 'week-title' });
  const mineBox = h('section', { class: 'mine-list' });
  root.append(
    h('div', { class: 'toolbar' },
      title,
      h('div', { class: 'buttons' },
        h('button', { type: 'button', id: 'prev-week', onclick: () => go(-7) }, '‹ ', t('cal.prev')),
        h('button', { type: 'button', id: 'this-week', onclick: () => { st.week = mondayOf(now()); load(); } }, t('cal.today')),
        h('button', { type: 'button', id: 'next-week', onclick: () => go(7) }, t('cal.next'), ' ›'),
        h('span', { class: 'zoom', role: 'group', 'aria-label': t('cal.zoom') },
          h('button', { type: 'button', id: 'zoom-out', 'aria-label': t('cal.zoom_out'), title: t('cal.zoom_out'), onclick: () => zoom(-1) }, '−'),
          h('button', { type: 'button', id: 'zoom-in', 'aria-label': t('cal.zoom_in'), title: t('cal.zoom_in'), onclick: () => zoom(1) }, '+')),
        h('button', { type: 'button', class: 'primary', id: 'new-booking', onclick: () => openForm({}) }, '+ ', t('cal.new')))),
    pendingBox, errorBox, body, legend(), mineBox,
    h('div', { class: 'buttons table-io' },
      h('button', { type: 'button', id: 'export-csv', onclick: () => exportAs('csv') }, t('cal.export_csv')),
      h('button', { type: 'button', id: 'export-ics', onclick: () => exportAs('ics') }, t('cal.export_ics')),
      h('label', { class: 'button-like' }, t('cal.import_csv'),
        h('input', { type: 'file', accept: '.csv,text/csv', class: 'visually-hidden', onchange: (e) => importCsv(e.target) }))));

  /** The week as the lab's spreadsheet (CSV) or a calendar feed (iCalendar), downloaded. */
  async function exportAs(format) {
    try {
      const r = await call('bookings_export', { format, all: true, from: st.week, to: addDays(st.week, 7) });
      const blob = new Blob([r.text || ''], { type: format === 'csv' ? 'text/csv;charset=utf-8' : 'text/calendar;charset=utf-8' });
      const a = h('a', { href: URL.createObjectURL(blob), download: 'gpu_schedule.' + format });
      document.body.appendChild(a);
      a.click();
      setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    } catch (e) { toast(e.message, 'error'); }
  }

  /** Rows of a spreadsheet (task_name,user,gpu_id,start_time,end_time,est_hours,status) become bookings. */
  async function importCsv(input) {
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    try {
      const r = await call('bookings_import', { csv: await file.text() });
      const errors = r.errors || [];
      if (errors.length) {
        replace(errorBox, h('p', { class: 'error' }, t('cal.import_errors')),
          h('ul', {}, errors.map((e) => h('li', {}, t('cal.line', { n: e.line }), ' ', e.message))));
      }
      if ((r.imported || []).length) toast(t('cal.imported', { n: r.imported.length }));
      load();
    } catch (e) { toast(e.message, 'error'); }
  }

  // Hour widths (px): the whole week on a laptop at the first, a day at a time at the last.
  const ZOOMS = [7, 14, 28, 56];
  let zoomAt = 1;
  try { zoomAt = Number(localStorage.getItem('rota.zoom') ?? 1); } catch { /* private mode */ }
  if (!(zoomAt >= 0 && zoomAt < ZOOMS.length)) zoomAt = 1;
  function applyZoom() { root.style.setProperty('--hour-w', ZOOMS[zoomAt] + 'px'); }
  function zoom(step) {
    const scroller = body.querySelector('.cal-scroll');
    const f = scroller ? (scroller.scrollLeft + scroller.clientWidth / 2) / scroller.scrollWidth : 0;
    zoomAt = Math.min(ZOOMS.length - 1, Math.max(0, zoomAt + step));
    try { localStorage.setItem('rota.zoom', String(zoomAt)); } catch { /* private mode */ }
    applyZoom();
    if (scroller) scroller.scrollLeft = f * scroller.scrollWidth - scroller.clientWidth / 2;
  }
  applyZoom();

  function go(days) { st.week = addDays(st.week, days); load(); }

  /** The server's cards (the `status` reply), asked once; until they have come a failed ask may
   *  be retried. The form waits for them: opened before they came it would offer no card. */
  let cardsAsked = null;
  function cards() {
    cardsAsked ??= call('status').then((status) => {
      st.status = status;
      st.rows = rowsOf(status);
    }, (e) => {
      cardsAsked = null;
      throw e;
    });
    return cardsAsked;
  }

  async function load() {
    const from = st.week, to = addDays(st.week, 7);
    replace(errorBox);
    try {
      await cards();
      const [list, pending] = await Promise.all([
        // With the time ahead: the jobs on the cards, and those expected to start (rotad's plan).
        call('bookings', { all: true, from, to, ahead: true }),
        me.admin ? call('bookings', { pending: true }) : Promise.resolve({ bookings: [] }),
      ]);
      if (!alive || from !== st.week) return;
      st.bookings = (list.bookings || []).filter((b) => !HIDDEN.has(b.state) && b.start < to && endOf(b) > from);
      st.pending = pending.bookings || [];
      st.ahead = list.ahead || [];
    } catch (e) {
      if (!alive) return;
      st.ahead = [];
      st.bookings = [];
      st.pending = [];
      replace(errorBox, h('p', { class: 'error' }, e.message));
    }
    draw();
  }

  function endOf(b) { return b.actual_end > 0 && b.actual_end < b.end ? b.actual_end : b.end; }

  function draw() {
    const from = st.week, span = addDays(st.week, 7) - st.week;
    title.textContent = t('cal.week_of', { from: fmtDay(from), to: fmtDay(addDays(from, 6)) });
    drawPending();
    drawMine();
    const days = [];
    for (let i = 0; i < 7; i++) {
      const d = addDays(from, i);
      const today = d <= now() && now() < addDays(d, 1);
      days.push(h('div', { class: 'cal-day' + (today ? ' today' : '') },
        h('span', { class: 'cal-day-name' }, fmtDay(d)),
        h('span', { class: 'cal-hours', 'aria-hidden': 'true' },
          [0, 6, 12, 18].map((hr) => h('span', {}, String(hr).padStart(2, '0'))))));
    }
    const n = now();
    const rows = st.rows.map((r) => {
      const track = h('div', { class: 'cal-track', dataset: { row: r.key, gpu: r.gpu }, 'aria-label': r.label });
      if (n >= from && n < from + span) {
        track.appendChild(h('div', { class: 'now-line', style: { left: pct(n - from, span) } }));
      }
      for (const j of st.ahead) {
        if (j.state === 'running' && rowKeysOf(j, st.rows).includes(r.key)) track.appendChild(jobBlock(j, from, span));
      }
      for (const b of st.bookings) {
        if (!rowKeysOf(b, st.rows).includes(r.key)) continue;
        const s = Math.max(b.start, from), e = Math.min(endOf(b), from + span);
        const label = b.user + (b.project ? ' · ' + b.project : '');
        const desc = `#${b.id} ${label}, ${fmtTime(b.start)}–${fmtTime(b.end, { date: false })}, ` +
          `${t('tier.' + b.tier)}, ${t('bstate.' + b.state)}` + (b.note ? ', ' + b.note : '');
        track.appendChild(h('button', {
          type: 'button', class: `booking tier-${b.tier} state-${b.state}` + (b.mine ? ' mine' : ''),
          style: { left: pct(s - from, span), width: pct(e - s, span) },
          title: desc, 'aria-label': desc, dataset: { id: b.id, state: b.state },
          onpointerdown: (ev) => ev.stopPropagation(),
          onclick: () => openDetails(b),
        }, h('span', { class: 'b-user' }, label), b.request?.kind === 'gpu_mem' ? h('span', { class: 'b-share' }, t('cal.share')) : null));
      }
      attachDrag(track, r);
      return h('div', { class: 'cal-row' + (r.slice ? ' slice' : '') + (r.drained ? ' drained' : '') },
        h('div', { class: 'cal-label' }, h('strong', {}, r.label), h('small', {}, r.sub),
          r.drained ? h('small', { class: 'warn' }, t('gpu.drained')) : null),
        track);
    });
    // Jobs waiting, at the plan's expected starts: on no card (the plan holds capacity, not cards).
    const expected = st.ahead.filter((j) => j.state === 'pending');
    if (expected.length) {
      const track = h('div', { class: 'cal-track expected', 'aria-label': t('cal.expected_row') }, expected.map((j) => jobBlock(j, from, span)));
      rows.push(h('div', { class: 'cal-row expected-row' },
        h('div', { class: 'cal-label' }, h('strong', {}, t('cal.expected_row')), h('small', {}, t('cal.expected_sub'))), track));
    }
    const before = body.querySelector('.cal-scroll');
    const keep = before && st.drawnWeek === from ? before.scrollLeft : null;
    st.drawnWeek = from;
    replace(body, h('div', { class: 'cal-scroll', tabindex: '0', 'aria-label': t('cal.grid_label') },
      h('div', { class: 'cal-inner' },
        h('div', { class: 'cal-row cal-head' }, h('div', { class: 'cal-label' }), h('div', { class: 'cal-days' }, days)),
        rows)));
    // Bring today into view on a narrow screen.
    const scroller = body.querySelector('.cal-scroll');
    const todayEl = body.querySelector('.cal-day.today');
    if (keep !== null) scroller.scrollLeft = keep;
    else if (todayEl && scroller.scrollWidth > scroller.clientWidth) scroller.scrollLeft = todayEl.offsetLeft - 160;
    if (st.rows.length === 0) body.appendChild(h('p', {}, t('cal.no_gpus')));
  }

  /** A job on the calendar: running to its time limit (said: when it is likely to end), or waiting
   * at its likely start from the lab's history, else at the plan's expected start. */
  function jobBlock(j, from, span) {
    const s = Math.max(j.start, from), e = Math.min(j.end, from + span);
    const args = { id: j.job_id, user: j.user, name: j.name, start: fmtTime(j.start), end: fmtTime(j.end, { date: false }),
      likely: fmtTime(j.likely_end || j.end, { date: false }) };
    const desc = t(j.state === 'running' ? (j.likely_end ? 'cal.job_running_likely' : 'cal.job_running')
      : j.likely ? 'cal.job_likely' : 'cal.job_expected', args);
    return h('div', { class: 'job-ahead ' + (j.state === 'running' ? 'running' : 'expected'), title: desc, 'aria-label': desc,
      dataset: { job: j.job_id }, style: { left: pct(s - from, span), width: pct(e - s, span) } }, h('span', {}, j.user));
  }

  /** One's own open bookings of the week as a list: on a phone the blocks are small. */
  function drawMine() {
    const mine = st.bookings.filter((b) => b.mine && ['requested', 'confirmed', 'active'].includes(b.state));
    if (!mine.length) { replace(mineBox); return; }
    replace(mineBox, h('h2', {}, t('cal.mine')), h('ul', {}, mine.map((b) => h('li', {},
      h('button', { type: 'button', class: 'link', dataset: { id: b.id }, onclick: () => openDetails(b) },
        `#${b.id} `, fmtTime(b.start), '–', fmtTime(b.end, { date: false }), ' · ', cardsText(b)),
      ' ', h('span', { class: 'badge' }, t('bstate.' + b.state)), b.project ? ' ' + b.project : ''))));
  }

  function pct(sec, span) { return (100 * sec / span).toFixed(4) + '%'; }

  /** Click on empty time: a two-hour request starting at that hour; drag: the dragged slots. */
  function attachDrag(track, row) {
    let startX = null, sel = null;
    const timeAt = (x) => {
      const r = track.getBoundingClientRect();
      const f = Math.min(1, Math.max(0, (x - r.left) / r.width));
      return st.week + f * (addDays(st.week, 7) - st.week);
    };
    track.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      startX = e.clientX;
      track.setPointerCapture(e.pointerId);
      sel = h('div', { class: 'selection' });
      track.appendChild(sel);
      e.preventDefault();
    });
    track.addEventListener('pointermove', (e) => {
      if (startX === null) return;
      const a = Math.min(startX, e.clientX), b = Math.max(startX, e.clientX);
      const r = track.getBoundingClientRect();
      sel.style.left = (a - r.left) + 'px';
      sel.style.width = (b - a) + 'px';
    });
    const finish = (e) => {
      if (startX === null) return;
      const x0 = startX;
      startX = null;
      sel?.remove();
      const a = timeAt(Math.min(x0, e.clientX)), b = timeAt(Math.max(x0, e.clientX));
      let start, end;
      if (b - a < SLOT) {
        start = Math.floor(a / 3600) * 3600;
        end = start + 2 * 3600;
      } else {
        start = Math.floor(a / SLOT) * SLOT;
        end = Math.ceil(b / SLOT) * SLOT;
      }
      openForm({ row, start, end });
    };
    track.addEventListener('pointerup', finish);
    track.addEventListener('pointercancel', () => { startX = null; sel?.remove(); });
  }

  // The waiting list is redrawn only when it changed, and then keeps the rows of the bookings that
  // did not: a redraw (after every booking made, the 30-second refresh) must neither drop a reason
  // an admin is typing nor replace a button between the press and the release of a click (the
  // click is then lost: seen in the browser test while a slow rotad's answers came in).
  let pendingRows = new Map();  // booking id -> { key, li }, in the order drawn
  function drawPending() {
    if (!me.admin || st.pending.length === 0) {
      pendingRows = new Map();
      replace(pendingBox);
      pendingBox.hidden = true;
      return;
    }
    const keys = st.pending.map((b) => lang() + JSON.stringify(b));
    const drawn = [...pendingRows.values()];
    if (drawn.length === keys.length && drawn.every((r, i) => r.key === keys[i])) return;
    const rows = new Map();
    const items = st.pending.map((b, i) => {
      const kept = pendingRows.get(b.id);
      const li = kept && kept.key === keys[i] ? kept.li : pendingRow(b);
      rows.set(b.id, { key: keys[i], li });
      return li;
    });
    pendingRows = rows;
    pendingBox.hidden = false;
    replace(pendingBox, h('h2', {}, t('cal.pending_title', { n: st.pending.length })),
      h('ul', { class: 'pending-list' }, items));
  }

  function pendingRow(b) {
    const reason = h('input', { class: 'reason', placeholder: t('cal.reason'), 'aria-label': t('cal.reason') });
    return h('li', { dataset: { id: b.id } },
      h('div', { class: 'p-what' },
        h('strong', {}, `#${b.id} ${b.user}`), b.project ? ' · ' + b.project : '', ' · ',
        h('span', { class: 'tier-tag tier-' + b.tier }, t('tier.' + b.tier)), ' · ',
        cardsText(b), ' · ', fmtTime(b.start), '–', fmtTime(b.end, { date: false }),
        b.note ? h('div', { class: 'note' }, b.note) : null,
        b.reason ? h('div', { class: 'muted' }, b.reason) : null),
      h('div', { class: 'p-act' }, reason,
        h('button', { type: 'button', class: 'primary approve', onclick: () => decide('approve', b, reason) }, t('cal.approve')),
        h('button', { type: 'button', class: 'danger reject', onclick: () => decide('reject', b, reason) }, t('cal.reject'))));
  }

  async function decide(op, b, reasonInput) {
    const reason = reasonInput.value.trim();
    if (op === 'reject' && !reason) {
      toast(t('cal.reject_needs_reason'), 'error');
      reasonInput.focus();
      return;
    }
    try {
      await call(op, { booking_id: b.id, reason });
      toast(t(op === 'approve' ? 'cal.approved' : 'cal.rejected', { id: b.id }));
      load();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  function cardsText(b) {
    const cards = (b.gpus || []).length ? 'GPU ' + b.gpus.join(',') : t('cal.not_placed');
    if (b.request?.kind === 'mig') return cards + ' ' + (b.request.profile || '');
    if (b.request?.kind === 'gpu_mem') return cards + ' ' + Math.round(b.request.memory / 1024) + 'G ' + t('cal.share');
    return cards;
  }

  // ---- the booking form -------------------------------------------------------------------

  async function openForm({ row, start, end }) {
    try {
      await cards();
    } catch (e) {
      toast(e.message, 'error');
      return;
    }
    if (!alive) return;
    const tomorrow = addDays(mondayOf(now()), Math.floor((now() - mondayOf(now())) / DAY) + 1);
    start = start || tomorrow + 10 * 3600;
    end = end || start + 2 * 3600;
    const gpus = (st.status?.gpus || []);
    const profiles = [...new Set(gpus.flatMap((g) => (g.mig || []).map((m) => m.profile)))];
    const kind = select({ name: 'kind' }, [
      ['card', t('form.kind_card')], ['any', t('form.kind_any')], ['mem', t('form.kind_mem')],
      ...(profiles.length ? [['mig', t('form.kind_mig')]] : [])], row ? (row.mig ? 'mig' : 'card') : 'any');
    const card = select({ name: 'card' }, gpus.map((g) => [g.index, 'GPU ' + g.index + ' · ' + shortModel(g.model)]), row ? row.gpu : 0);
    const count = h('input', { name: 'count', type: 'number', min: 1, max: Math.max(1, gpus.length), value: 1 });
    const mem = h('input', { name: 'mem', type: 'number', min: 1, step: 1, value: 20 });
    const prof = select({ name: 'profile' }, profiles.map((p) => [p, p]), row?.mig || profiles[0]);
    const from = h('input', { name: 'start', type: 'datetime-local', step: SLOT, required: true, value: toLocalInput(start) });
    const until = h('input', { name: 'end', type: 'datetime-local', step: SLOT, required: true, value: toLocalInput(end) });
    const tier = select({ name: 'tier' }, TIERS.map((x) => [x, t('tier.' + x)]), 'regular');
    const project = h('input', { name: 'project', autocomplete: 'off' });
    const note = h('input', { name: 'note', autocomplete: 'off', placeholder: t('form.note_hint') });
    const msg = h('div', { class: 'form-msg', role: 'alert' });
    const fCard = field(t('form.card'), card), fCount = field(t('form.count'), count),
      fMem = field(t('form.mem_gib'), mem), fProf = field(t('form.profile'), prof);
    const sync = () => {
      const k = kind.value;
      fCard.hidden = k === 'any';
      fCount.hidden = k !== 'any';
      fMem.hidden = k !== 'mem';
      fProf.hidden = k !== 'mig';
    };
    kind.addEventListener('change', sync);
    sync();
    const request = () => {
      const b = { start: fromLocalInput(from.value), end: fromLocalInput(until.value), tier: tier.value };
      const k = kind.value;
      if (k === 'any') b.gpus = Number(count.value);
      else b.gpu_ids = [String(card.value)];
      if (k === 'mem') b.gpu_mem = Math.round(Number(mem.value) * 1024);
      if (k === 'mig') b.mig = prof.value;
      if (project.value.trim()) b.project = project.value.trim();
      if (note.value.trim()) b.note = note.value.trim();
      return b;
    };
    const showError = (e) => {
      replace(msg, h('p', { class: 'error' }, e.message));
      const alts = e.details?.alternatives || [];
      if (alts.length) {
        const len = fromLocalInput(until.value) - fromLocalInput(from.value);
        msg.appendChild(h('p', {}, t('form.free_starts'), ' ', alts.slice(0, 6).map((a) =>
          h('button', { type: 'button', class: 'chip', onclick: () => {
            from.value = toLocalInput(a);
            until.value = toLocalInput(a + len);
            replace(msg);
          } }, fmtTime(a)))));
      }
    };
    const dryRun = async () => {
      replace(msg);
      try {
        const r = await call('book', { booking: request(), dry_run: true });
        if (r.refused) return showError({ message: r.refused, details: r.check });
        const needs = r.check?.needs_admin || [];
        replace(msg, h('p', { class: 'ok' }, needs.length ? t('form.would_need_admin', { why: needs.join('; ') })
          : t('form.would_confirm', { h: fmtHours(r.check?.gpu_hours) })));
      } catch (e) { showError(e); }
    };
    const form = h('form', { class: 'dialog-body booking-form', onsubmit: async (e) => {
      e.preventDefault();
      replace(msg);
      try {
        const r = await call('book', { booking: request() });
        const b = r.booking;
        dlg.close();
        toast(b.state === 'requested'
          ? t('form.booked_requested', { id: b.id, why: (r.check?.needs_admin || []).join('; ') })
          : t('form.booked', { id: b.id, cards: cardsText(b) }));
        load();
      } catch (err) { showError(err); }
    } },
    field(t('form.kind'), kind), fCard, fCount, fMem, fProf,
    h('div', { class: 'row2' }, field(t('form.start'), from), field(t('form.end'), until)),
    field(t('form.tier'), tier, t('form.tier_hint')),
    h('div', { class: 'row2' }, field(t('form.project'), project), field(t('form.note'), note)),
    msg,
    h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: dryRun }, t('form.check')),
      h('button', { type: 'submit', class: 'primary', id: 'book-submit' }, t('form.submit'))));
    const dlg = openDialog(t('form.title'), form);
    dlg.id = 'booking-dialog';
  }

  // ---- one booking ---------------------------------------------------------------------------

  async function openDetails(b) {
    const events = h('ol', { class: 'events' });
    const msg = h('div', { class: 'form-msg', role: 'alert' });
    const act = async (op, fields, done) => {
      replace(msg);
      try {
        await call(op, { booking_id: b.id, ...fields });
        dlg.close();
        toast(done);
        load();
      } catch (e) { replace(msg, h('p', { class: 'error' }, e.message)); }
    };
    const canAct = b.mine || me.admin;
    const actions = [];
    if (canAct && (b.state === 'requested' || b.state === 'confirmed')) {
      actions.push(h('button', { type: 'button', class: 'danger', id: 'unbook',
        onclick: () => act('unbook', {}, t('det.cancelled', { id: b.id })) }, t('det.cancel')));
    }
    if (canAct && b.state === 'active') {
      actions.push(h('button', { type: 'button', id: 'release',
        onclick: () => act('release', {}, t('det.released', { id: b.id })) }, t('det.release')));
    }
    if (canAct && (b.state === 'confirmed' || b.state === 'active')) {
      const more = select({ 'aria-label': t('det.extend_by') }, [[1800, '+30m'], [3600, '+1h'], [7200, '+2h'], [14400, '+4h']], 3600);
      actions.push(h('span', { class: 'extend' }, more, h('button', { type: 'button', id: 'extend',
        onclick: () => act('extend', { for: Number(more.value) }, t('det.extended', { id: b.id })) }, t('det.extend'))));
    }
    if (me.admin && b.state === 'requested') {
      const reason = h('input', { placeholder: t('cal.reason'), 'aria-label': t('cal.reason') });
      actions.push(h('span', { class: 'extend' }, reason,
        h('button', { type: 'button', class: 'primary', onclick: () => act('approve', { reason: reason.value.trim() }, t('cal.approved', { id: b.id })) }, t('cal.approve')),
        h('button', { type: 'button', class: 'danger', onclick: () => {
          if (!reason.value.trim()) { replace(msg, h('p', { class: 'error' }, t('cal.reject_needs_reason'))); reason.focus(); return; }
          act('reject', { reason: reason.value.trim() }, t('cal.rejected', { id: b.id }));
        } }, t('cal.reject'))));
    }
    const row = (k, v) => v === '' || v === null || v === undefined ? null : [h('dt', {}, k), h('dd', {}, v)];
    const dlg = openDialog(t('det.title', { id: b.id }), h('div', { class: 'dialog-body' },
      h('dl', { class: 'facts' },
        row(t('det.owner'), b.user), row(t('form.project'), b.project), row(t('form.tier'), t('tier.' + b.tier)),
        row(t('det.state'), t('bstate.' + b.state)), row(t('det.cards'), cardsText(b)),
        row(t('det.time'), fmtTime(b.start) + ' – ' + fmtTime(b.end) + ' (' + fmtDur(b.end - b.start) + ')'),
        b.actual_end ? row(t('det.actual_end'), fmtTime(b.actual_end)) : null,
        row(t('det.gpu_hours'), fmtHours(b.gpu_hours)), row(t('form.note'), b.note),
        row(t('det.decided'), [b.decided_by, b.reason].filter(Boolean).join(': '))),
      h('h3', {}, t('det.history')), events, msg,
      actions.length ? h('div', { class: 'actions' }, actions) : null), { wide: true });
    try {
      const r = await call('bookings', { id: b.id });
      const evs = r.bookings?.[0]?.events || [];
      replace(events, evs.map((e) => h('li', {}, h('time', {}, fmtTime(e.time)), ' ',
        e.from ? t('bstate.' + e.from) + ' → ' : '', t('bstate.' + e.to), ' · ', e.actor, e.reason ? ': ' + e.reason : '')));
    } catch { /* the facts are enough */ }
  }

  function legend() {
    return h('div', { class: 'legend', 'aria-hidden': 'true' },
      TIERS.map((x) => h('span', { class: 'booking-swatch tier-' + x }, t('tier.' + x))),
      h('span', { class: 'booking-swatch state-requested' }, t('bstate.requested')),
      h('span', { class: 'job-swatch running' }, t('cal.legend_running')),
      h('span', { class: 'job-swatch expected' }, t('cal.legend_expected')),
      h('span', { class: 'hint' }, t('cal.hint')));
  }

  load();
  timer = setInterval(() => { if (!document.querySelector('dialog[open]')) load(); }, 30000);
  return () => { alive = false; clearInterval(timer); };
}
