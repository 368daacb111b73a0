// Browser tests of the page rotad serves: a real rotad (user mode, simulated GPUs, its HTTP front
// end on a free loopback port) driven through Debian's headless Chromium with playwright-core.
//
//   node tests/web/run.mjs
//
// Environment: ROTA_BIN_DIR (rotad and rota; default build/), ROTA_CHROMIUM (default
// /usr/bin/chromium), ROTA_SCREENSHOTS (default tests/web/screenshots/), ROTA_KEEP=1 keeps the
// test directory. Run as root, rotad and rota run as the unprivileged user rota-web-it (created
// when missing), as a lab member would run a personal rotad. Exits 0 when every step passed,
// 1 with the failing step, the page's errors and rotad's log otherwise.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const BIN = path.resolve(process.env.ROTA_BIN_DIR || path.join(REPO, 'build'));
const ROTAD = path.join(BIN, 'rotad');
const ROTA = path.join(BIN, 'rota');
const CHROMIUM = process.env.ROTA_CHROMIUM || '/usr/bin/chromium';
const SHOTS = path.resolve(process.env.ROTA_SCREENSHOTS || path.join(HERE, 'screenshots'));
const WEB = path.join(REPO, 'web');
const TEST_USER = 'rota-web-it';
const DAY = 86400;

let playwright;
try {
  playwright = await import('playwright-core');
} catch {
  fail('setup', new Error(`playwright-core is not installed: npm ci --prefix ${path.relative(process.cwd(), HERE) || '.'}`));
}

// ---- the daemon ----------------------------------------------------------------------------------

/** Who runs rotad and rota: this process, or (as root) an unprivileged lab member. */
function identity() {
  if (process.getuid() !== 0) return { user: os.userInfo().username, spawn: {} };
  if (spawnSync('id', ['-u', TEST_USER]).status !== 0) {
    const r = spawnSync('useradd', ['--no-create-home', '--shell', '/bin/sh', TEST_USER], { encoding: 'utf8' });
    if (r.status !== 0 && spawnSync('id', ['-u', TEST_USER]).status !== 0) throw new Error('useradd failed: ' + r.stderr);
  }
  const uid = Number(spawnSync('id', ['-u', TEST_USER], { encoding: 'utf8' }).stdout);
  const gid = Number(spawnSync('id', ['-g', TEST_USER], { encoding: 'utf8' }).stdout);
  return { user: TEST_USER, spawn: { uid, gid } };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, f, timeoutMs = 20000, everyMs = 100) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try { last = await f(); if (last) return last; } catch (e) { last = e; }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// The user-mode daemon: its user is its admin, so a booking waits for approval only when the
// rules say every booking does. The system-mode one keeps the lab's rules (same day: an admin).
const USER_MODE_RULES = `[bookings]
auto_confirm = false            # every non-admin booking waits for an admin: the page has something to approve
`;

function config(port, rules, timezone = 'UTC') {
  return `# Written by tests/web/run.mjs
[policy]
timezone = "${timezone}"
protect_after = "2s"            # the queue shows a job that waited past the bound as next in line
promise_slack = "1h"            # and each job's promise (first come first served's start)

[rules]
account = "Ask 王老师 for an account.\\nBring your student card."

${rules}
[web]
listen = "127.0.0.1:${port}"
static_dir = "${WEB}"

[gpus]
source = "simulated"
[[gpus.card]]
model = "NVIDIA A100-SXM4-80GB"
memory = "80G"
count = 2
[[gpus.card]]
model = "NVIDIA A100-SXM4-80GB"
memory = "80G"
count = 1
mig = ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
`;
}

class Daemon {
  /** who: the daemon's user ({user, spawn}); rules: the [bookings] section. */
  constructor(who, rules = USER_MODE_RULES, timezone = 'UTC') {
    this.who = who;
    this.rules = rules;
    this.timezone = timezone;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rota-web-'));
    fs.chmodSync(this.dir, 0o1777);
    this.socket = path.join(this.dir, 'run', 'rota.sock');
    this.logPath = path.join(this.dir, 'rotad.log');
    this.env = { PATH: process.env.PATH || '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'UTC',
      HOME: this.dir, ROTA_SOCKET: this.socket, XDG_RUNTIME_DIR: path.join(this.dir, 'xdg') };
  }

  async start() {
    this.port = await freePort();
    this.base = `http://127.0.0.1:${this.port}`;
    const cfg = path.join(this.dir, 'rota.toml');
    fs.writeFileSync(cfg, config(this.port, this.rules, this.timezone));
    fs.chmodSync(cfg, 0o644);
    const log = fs.openSync(this.logPath, 'a');
    this.proc = spawn(ROTAD, ['--config', cfg, '--state-dir', path.join(this.dir, 'state'), '--socket', this.socket],
      { ...this.who.spawn, env: this.env, cwd: this.dir, stdio: ['ignore', log, log] });
    this.exited = null;
    this.proc.on('exit', (code, sig) => { this.exited = sig || code; });
    this.proc.on('error', (e) => { this.exited = 'cannot start: ' + e.message; });
    await waitFor('rotad to serve the page on ' + this.base, async () => {
      if (this.exited !== null) throw new Error('rotad exited (' + this.exited + '):\n' + this.log());
      const res = await fetch(this.base + '/').catch(() => null);
      return res && res.ok;
    });
    return this;
  }

  /** Runs `rota ARGS` as the daemon's user; returns stdout, throws with stderr on failure. */
  rota(...args) { return this.rotaAs(this.who, ...args); }

  /** `rota ARGS` as another user (system mode: a student next to root). */
  rotaAs(who, ...args) {
    const r = spawnSync(ROTA, args, { ...who.spawn, env: this.env, cwd: this.dir, encoding: 'utf8', timeout: 30000 });
    if (r.status !== 0) throw new Error(`rota ${args.join(' ')} exited ${r.status}: ${r.stderr || r.stdout}`);
    return r.stdout;
  }

  log() { try { return fs.readFileSync(this.logPath, 'utf8'); } catch { return ''; } }

  async stop() {
    if (this.proc && this.exited === null) {
      try {
        const q = JSON.parse(this.rota('queue', '--all', '--json'));
        const ids = (Array.isArray(q) ? q : q.jobs || []).map((j) => String(j.id));
        if (ids.length) this.rota('cancel', ...ids);
      } catch { /* stopping anyway */ }
      this.proc.kill('SIGTERM');
      await waitFor('rotad to stop', () => this.exited !== null, 20000).catch(() => this.proc.kill('SIGKILL'));
    }
    if (!process.env.ROTA_KEEP) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---- the steps -------------------------------------------------------------------------------------

const problems = [];   // errors the page itself reported (uncaught exceptions, missing texts)
let current = 'setup';
let page = null;
let daemon = null;

function fail(step, err) {
  console.error(`\nFAIL: ${step}: ${err && err.stack ? err.stack : err}`);
  if (problems.length) console.error('The page reported:\n  ' + problems.join('\n  '));
  if (daemon) console.error('---- rotad log (last 4000 characters) ----\n' + daemon.log().slice(-4000));
  process.exitCode = 1;
  throw Object.assign(new Error('failed'), { reported: true });
}

async function step(name, f) {
  current = name;
  const t0 = Date.now();
  try {
    await f();
  } catch (e) {
    if (e.reported) throw e;
    if (page) await page.screenshot({ path: path.join(SHOTS, 'FAILED.png'), fullPage: true }).catch(() => {});
    fail(name, e);
  }
  console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
}

async function shot(name) {
  await page.screenshot({ path: path.join(SHOTS, name + '.png'), fullPage: true });
}

function expect(cond, message) { if (!cond) throw new Error(message); }

/** Monday 00:00 UTC of the week holding `sec` (the page's weeks start on Monday). */
function mondayOf(sec) {
  const d = new Date(sec * 1000);
  d.setUTCHours(0, 0, 0, 0);
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.getTime() / 1000;
}

function utcText(sec) { return new Date(sec * 1000).toISOString().slice(0, 16).replace('T', ' '); }

/** As root: rotad in system mode with the lab's booking rules. A student (rota-web-it) asks for
 *  a card later today, which needs an admin; root approves it on the page; the student sees it
 *  confirmed. The student sees no approval list and cannot approve. */
async function studentAndAdmin(student) {
  const root = { user: 'root', spawn: {} };
  const now = Math.floor(Date.now() / 1000);
  // Same-day bookings need an admin. The server's zone is chosen so that its day is young (about
  // 06:00 now), so an hour from now is always "today" there; the page sends Unix seconds, and the
  // browser stays in UTC.
  const start = (Math.floor(now / 1800) + 2) * 1800;
  let offset = Math.round(6 - (now % DAY) / 3600);
  if (offset < -12) offset += 24;
  if (offset > 14) offset -= 24;
  const tz = (offset < 0 ? '-' : '+') + String(Math.abs(offset)).padStart(2, '0') + ':00';
  daemon = new Daemon(root, '[bookings]\nsame_day_needs_admin = true\n', tz);
  await step(`start rotad as root (system mode, zone ${tz}) with the lab's booking rules`, () => daemon.start());
  const browser = await playwright.chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const open = async (who) => {
      const url = JSON.parse(daemon.rotaAs(who, 'web', '--json')).url;
      const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, locale: 'zh-CN', timezoneId: 'UTC' });
      const p = await ctx.newPage();
      p.on('pageerror', (e) => problems.push(`[${current}] uncaught: ${e.message}`));
      p.setDefaultTimeout(15000);
      await p.goto(daemon.base + url.slice(url.indexOf('/auth/')));
      await p.getByRole('button', { name: `Sign in as ${who.user}` }).click();  // the link asks first
      await p.locator('header .user', { hasText: who.user }).waitFor();
      return p;
    };
    let id;
    const studentPage = page = await open(student);
    await step('a student (Chinese browser) asks for a card later today: it waits for an admin', async () => {
      expect(await page.locator('header .badge.admin').count() === 0, 'the student is shown as an admin');
      await page.click('#new-booking');
      const dlg = page.locator('#booking-dialog');
      await dlg.locator('select[name=kind]').selectOption('card');
      await dlg.locator('select[name=card]').selectOption('1');
      await dlg.locator('input[name=start]').fill(utcText(start).replace(' ', 'T'));
      await dlg.locator('input[name=end]').fill(utcText(start + 3600).replace(' ', 'T'));
      await dlg.locator('input[name=note]').fill('赶论文');
      await dlg.locator('#book-submit').click();
      await dlg.waitFor({ state: 'detached' });
      await page.locator('.toast', { hasText: '管理员审批' }).waitFor();
      if (mondayOf(start) !== mondayOf(now)) await page.click('#next-week');  // Sunday night (UTC)
      const block = page.locator('.cal-track[data-row="g1"] .booking[data-state="requested"]');
      await block.waitFor();
      id = await block.getAttribute('data-id');
      expect(await page.locator('.pending-list').count() === 0, 'a student sees the approval list');
      await shot('10-student-requested');
    });
    const adminPage = page = await open(root);
    await step('root approves it on the page', async () => {
      await page.locator(`.pending-list li[data-id="${id}"]`, { hasText: '赶论文' }).waitFor();
      await shot('10-admin-pending');
      await page.locator(`.pending-list li[data-id="${id}"] button.approve`).click();
      await page.locator(`.pending-list li[data-id="${id}"]`).waitFor({ state: 'detached' });
      if (mondayOf(start) !== mondayOf(now)) await page.click('#next-week');
      await page.locator(`.booking[data-id="${id}"][data-state="confirmed"]`).waitFor();
    });
    page = studentPage;
    await step('the student sees the booking confirmed', async () => {
      await page.reload();
      if (mondayOf(start) !== mondayOf(now)) await page.click('#next-week');
      await page.locator(`.booking[data-id="${id}"][data-state="confirmed"]`).waitFor();
      await shot('10-student-confirmed');
    });
    await adminPage.context().close();
  } finally {
    await browser.close().catch(() => {});
  }
}

async function main() {
  for (const [what, file] of [['rotad', ROTAD], ['rota', ROTA], ['Chromium', CHROMIUM]]) {
    if (!fs.existsSync(file)) fail('setup', new Error(`${what} not found at ${file} (set ROTA_BIN_DIR / ROTA_CHROMIUM; Debian: apt-get install chromium)`));
  }
  if (!fs.existsSync(path.join(WEB, 'node_modules', 'uplot'))) {
    console.log(`note: ${WEB}/node_modules is missing (npm ci --prefix web): the Usage tab shows tables without charts`);
  }
  fs.mkdirSync(SHOTS, { recursive: true });
  const who = identity();
  daemon = new Daemon(who);
  const first = daemon;
  let browser = null;
  try {
    await step(`start rotad as ${who.user} with the page on a free port`, () => daemon.start());
    const now = Math.floor(Date.now() / 1000);
    const tomorrow = Math.floor(now / DAY) * DAY + DAY;
    let seeded;
    await step('seed a booking that waits for the admin (bookings import)', () => {
      const csv = path.join(daemon.dir, 'seed.csv');
      fs.writeFileSync(csv, 'task_name,user,gpu_id,start_time,end_time,est_hours,status,note\n' +
        `paper,${who.user},1,${utcText(tomorrow + 9 * 3600)},${utcText(tomorrow + 11 * 3600)},,requested,<img src=x onerror=alert(1)> 需要两张卡\n`);
      fs.chmodSync(csv, 0o644);
      daemon.rota('bookings', 'import', csv);
      const all = JSON.parse(daemon.rota('bookings', '--all', '--json')).bookings;
      seeded = all.find((b) => b.state === 'requested');
      expect(seeded, 'no requested booking after the import: ' + JSON.stringify(all));
    });
    let link;
    await step('rota web prints a one-time sign-in link', () => {
      link = JSON.parse(daemon.rota('web', '--json')).url;
      expect(/^http:\/\/[^/]+\/auth\/login\?token=/.test(link), 'unexpected link ' + link);
      link = daemon.base + link.slice(link.indexOf('/auth/'));  // the host as the test reaches it
    });

    browser = await playwright.chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
    page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`[${current}] uncaught: ${e.message}`));
    page.on('console', (m) => {
      if (/i18n: missing|Content Security Policy/.test(m.text())) problems.push(`[${current}] ${m.text()}`);
    });
    page.on('dialog', (d) => d.accept());
    page.setDefaultTimeout(15000);

    await step('without a session the page explains how to sign in', async () => {
      await page.goto(daemon.base + '/');
      await page.getByRole('heading', { name: 'Sign in to Rota' }).waitFor();
      expect(await page.locator('pre.cmd').innerText() === 'rota web', 'the sign-in page does not show `rota web`');
      await shot('0-signin');
    });

    await step('the one-time link signs in and opens the calendar; its JS and CSS are small', async () => {
      const assets = [];
      const onRequest = (r) => { if (/\.(m?js|css)$/.test(new URL(r.url()).pathname)) assets.push(r); };
      page.on('requestfinished', onRequest);
      await page.goto(link);
      await page.getByRole('button', { name: `Sign in as ${who.user}` }).click();
      await page.locator('header .user', { hasText: who.user }).waitFor();
      await page.locator('.cal-track[data-row="g0"]').waitFor();
      page.off('requestfinished', onRequest);
      let bytes = 0;
      for (const r of assets) bytes += (await r.sizes()).responseBodySize;
      console.log(`     first load: ${assets.length} JS/CSS files, ${(bytes / 1024).toFixed(1)} KiB as sent (compressed)`);
      expect(assets.length > 0 && bytes < 300 * 1024, `the first load's JS and CSS are ${bytes} bytes`);
      const rows = await page.locator('.cal-track').count();
      expect(rows === 7, `expected 7 calendar rows (3 cards + 4 MIG slices), found ${rows}`);
    });

    await step('the admin sees the pending booking, its note as text', async () => {
      const item = page.locator(`.pending-list li[data-id="${seeded.id}"]`);
      await item.waitFor();
      const text = await item.innerText();
      expect(text.includes('<img src=x onerror=alert(1)> 需要两张卡'), 'the note is not shown literally: ' + text);
      expect(await page.locator('.pending img').count() === 0, 'a booking note became markup');
      await shot('1-calendar-pending');
    });

    let mine;
    await step('clicking on free time next week opens the form; the booking appears', async () => {
      const before = await page.locator('.week-title').innerText();
      await page.click('#next-week');
      const monday = mondayOf(now) + 7 * DAY;
      await waitFor('the next week', async () => (await page.locator('.week-title').innerText()) !== before);
      const at = monday + 2 * DAY + 10 * 3600 + 15 * 60;  // Wednesday 10:15 -> a booking from 10:00
      const track = page.locator('.cal-track[data-row="g0"]');
      // Scroll the calendar so that the point is on screen, then click it.
      await track.evaluate((el, f) => {
        const sc = el.closest('.cal-scroll');
        sc.scrollLeft = Math.max(0, el.offsetLeft + f * el.offsetWidth - sc.clientWidth / 2);
      }, (at - monday) / (7 * DAY));
      const box = await track.boundingBox();
      await page.mouse.click(box.x + box.width * (at - monday) / (7 * DAY), box.y + box.height / 2);
      const dlg = page.locator('#booking-dialog');
      await dlg.waitFor();
      expect(await dlg.locator('select[name=kind]').inputValue() === 'card', 'the form does not book the clicked card');
      const start = await dlg.locator('input[name=start]').inputValue();
      expect(start === utcText(monday + 2 * DAY + 10 * 3600).replace(' ', 'T'), 'the form starts at ' + start);
      await dlg.locator('input[name=project]').fill('nlp');
      await dlg.locator('input[name=note]').fill('推理 only');
      await shot('2-booking-form');
      await dlg.locator('#book-submit').click();
      await dlg.waitFor({ state: 'detached' });
      const block = page.locator('.cal-track[data-row="g0"] .booking', { hasText: 'nlp' });
      await block.waitFor();
      const all = JSON.parse(daemon.rota('bookings', '--all', '--json')).bookings;
      mine = all.find((b) => b.project === 'nlp');
      expect(mine && mine.start === monday + 2 * DAY + 10 * 3600 && mine.end === mine.start + 7200 && mine.gpus[0] === 0,
        'the daemon holds ' + JSON.stringify(mine));
      expect(await block.getAttribute('data-id') === String(mine.id), 'the block is not booking ' + mine.id);
    });

    await step('one\'s own booking can be extended from its details', async () => {
      await page.locator(`.booking[data-id="${mine.id}"]`).click();
      await page.locator('dialog #extend').click();
      await page.locator('.toast', { hasText: `Booking ${mine.id} extended` }).waitFor();
      const b = JSON.parse(daemon.rota('bookings', '--all', '--json')).bookings.find((x) => x.id === mine.id);
      expect(b.end === mine.end + 3600, 'not extended by an hour: ' + JSON.stringify(b));
      await shot('3-calendar-booked');
    });

    await step('a request in the way of a booking shows the daemon\'s message and free starts', async () => {
      await page.click('#new-booking');
      const dlg = page.locator('#booking-dialog');
      await dlg.locator('select[name=kind]').selectOption('card');
      await dlg.locator('select[name=card]').selectOption('0');
      const wed = mondayOf(now) + 9 * DAY;  // next Wednesday, where booking ${mine.id} is 10:00-13:00
      await dlg.locator('input[name=start]').fill(utcText(wed + 11 * 3600).replace(' ', 'T'));
      await dlg.locator('input[name=end]').fill(utcText(wed + 12 * 3600).replace(' ', 'T'));
      await dlg.locator('#book-submit').click();
      const msg = dlg.locator('.form-msg .error');
      await msg.waitFor();
      const text = await msg.innerText();
      expect(text.includes('booking ' + mine.id), 'the refusal does not name the booking in the way: ' + text);
      expect(await dlg.locator('.form-msg button.chip').count() > 0, 'no free starts offered');
      await shot('3-booking-conflict');
      await dlg.locator('.form-msg button.chip').first().click();
      await dlg.locator('#book-submit').click();
      await dlg.waitFor({ state: 'detached' });
      // The calendar redraws with the new booking.
      const made = JSON.parse(daemon.rota('bookings', '--all', '--json')).bookings.reduce((a, x) => Math.max(a, x.id), 0);
      await page.locator(`.booking[data-id="${made}"]`).waitFor();
    });

    await step('the admin approves the pending booking on the page', async () => {
      // A reason typed into the waiting list outlives the calendar's redraws (a week forward and back).
      const row = page.locator(`.pending-list li[data-id="${seeded.id}"]`);
      await row.locator('input.reason').fill('fits the thesis plan');
      const week = await page.locator('h1.week-title').innerText();
      await page.click('#next-week');
      await waitFor('the next week drawn', async () => (await page.locator('h1.week-title').innerText()) !== week);
      await page.click('#prev-week');
      await waitFor('the week drawn again', async () => (await page.locator('h1.week-title').innerText()) === week);
      const typed = await row.locator('input.reason').inputValue();
      expect(typed === 'fits the thesis plan', 'the redraw dropped the reason being typed: ' + JSON.stringify(typed));
      await row.locator('button.approve').click();
      await page.locator('.toast', { hasText: `Booking ${seeded.id} approved` }).waitFor();
      await waitFor('the pending list to empty', async () => (await page.locator('.pending-list li').count()) === 0);
      const b = JSON.parse(daemon.rota('bookings', '--all', '--json')).bookings.find((x) => x.id === seeded.id);
      expect(b.state === 'confirmed', 'the approved booking is ' + b.state);
      expect(JSON.stringify(b).includes('fits the thesis plan'), 'the reason typed is not the decision\'s: ' + JSON.stringify(b));
      await page.click('#this-week');
      if (mondayOf(tomorrow) !== mondayOf(now)) await page.click('#next-week');
      await page.locator(`.booking[data-id="${seeded.id}"][data-state="confirmed"]`).waitFor();
    });

    await step('zooming the calendar widens the hours', async () => {
      const width = async () => (await page.locator('.cal-track[data-row="g0"]').boundingBox()).width;
      const w0 = await width();
      await page.click('#zoom-in');
      const w1 = await width();
      expect(Math.abs(w1 - 2 * w0) < 2, `zooming in took the week from ${w0}px to ${w1}px, not twice as wide`);
      await page.click('#zoom-out');
    });

    await step('the New booking button and the keyboard reach the same form', async () => {
      await page.focus('#new-booking');
      await page.keyboard.press('Enter');
      await page.locator('#booking-dialog').waitFor();
      const focused = await page.evaluate(() => document.activeElement?.closest('dialog')?.id);
      expect(focused === 'booking-dialog', 'the focus is not in the form');
      await page.keyboard.press('Escape');
      await page.locator('#booking-dialog').waitFor({ state: 'detached' });
    });

    await step('New booking pressed before the cards have come: the form waits and offers every card', async () => {
      // The server's answer to `status` is held back, as on a slow link or a busy daemon.
      let held = 0;
      const hold = async (route) => { held++; await sleep(1500); await route.continue(); };
      await page.route('**/api/status', hold);
      try {
        await page.reload();
        await page.click('#new-booking');
        const cards = page.locator('#booking-dialog select[name=card] option');
        await cards.first().waitFor({ state: 'attached' });
        const labels = await cards.allTextContents();
        expect(held > 0, 'the page never asked for status, so nothing was held back');
        expect(labels.length === 3 && labels.every((l, i) => l.startsWith('GPU ' + i)),
          'the form offers ' + JSON.stringify(labels) + ', not the 3 cards');
        await page.keyboard.press('Escape');
        await page.locator('#booking-dialog').waitFor({ state: 'detached' });
      } finally {
        await page.unroute('**/api/status', hold);
      }
    });

    let jobId;
    await step('a job submitted from the form shows in the queue, runs, and its logs show', async () => {
      await page.click('a[data-view=queue]');
      await page.click('#open-submit');
      const dlg = page.locator('#submit-dialog');
      await dlg.locator('input[name=command]').fill("sh -c 'echo hello-from-the-web; sleep 60'");
      await dlg.locator('input[name=cwd]').fill(daemon.dir);
      await dlg.locator('input[name=name]').fill('网页任务');
      await dlg.locator('input[name=hours]').fill('0.5');
      // An image goes to the daemon, which says why it cannot run here (no [containers]).
      await dlg.locator('input[name=image]').fill('localhost/lab:1');
      await dlg.locator('#submit-job').click();
      await dlg.locator('.form-msg .error', { hasText: 'this server runs no containers' }).waitFor();
      await dlg.locator('input[name=image]').fill('');
      // A deadline is read by the daemon in the lab's zone; one in the past is refused.
      await dlg.locator('input[name=deadline]').fill('2020-01-01');
      await dlg.locator('#submit-job').click();
      await dlg.locator('.form-msg .error', { hasText: 'has passed' }).waitFor();
      await dlg.locator('input[name=deadline]').fill('2099-01-01');
      await shot('4-submit-form');
      await dlg.locator('#submit-job').click();
      await dlg.waitFor({ state: 'detached' });
      const row = page.locator('table.jobs tr', { hasText: '网页任务' });
      await row.waitFor();
      jobId = await row.getAttribute('data-id');
      const deadline = JSON.parse(daemon.rota('show', jobId, '--json')).job.deadline;
      expect(deadline === 4070995200, 'the form\'s deadline 2099-01-01 was kept as ' + deadline);
      await page.locator(`table.jobs tr[data-id="${jobId}"][data-state="running"]`).waitFor({ timeout: 20000 });
      // Three jobs named "waits" that ended at once: the lab's history says such jobs run a minute.
      const quick = [1, 2, 3].map(() => daemon.rota('submit', '--parsable', '--gpus', '1', '--time', '1h', '--name', 'waits', '--', 'true').trim());
      for (const q of quick) {
        await waitFor(`job ${q} completed`, async () => JSON.parse(daemon.rota('show', q, '--json')).job.state === 'completed');
      }
      // The running job is likely to end a minute after its start (the lab's history).
      await row.locator('.forecast', { hasText: 'likely to end' }).waitFor();
      // A job that cannot start yet (two cards while one is taken) says why and when it should:
      // likely when the running job's minute is up, by the plan when its half hour is. Its
      // deadline, 20 minutes away, is at risk: its p90 (not calibrated yet: the plan's half hour)
      // comes after it (rota advise, shown on its row).
      const soon = String(Math.floor(Date.now() / 1000) + 1200);
      const waiting = daemon.rota('submit', '--parsable', '--gpus', '2', '--time', '1h', '--name', 'waits', '--deadline', soon, '--', 'sleep', '60').trim();
      const wrow = page.locator(`table.jobs tr[data-id="${waiting}"][data-state="pending"]`);
      await wrow.locator('.reason', { hasText: 'waiting for free GPUs' }).waitFor();
      await wrow.locator('.advice', { hasText: 'may miss its deadline' }).waitFor();
      expect(/expected start/.test(await wrow.innerText()), 'no expected start: ' + await wrow.innerText());
      await wrow.locator('.forecast', { hasText: 'likely to start' }).waitFor();
      // Under the rota policy the forecast foresees the week's jobs coming again, and says so.
      const why = await wrow.locator('.forecast').getAttribute('title');
      expect(/foresees the last week's \d+ jobs coming again/.test(why), 'forecast title: ' + why);
      // Its promise: when first come first served would have started it (the running job's end
      // by its limit, half an hour away; promise_slack = "1h" here).
      await wrow.locator('.promise', { hasText: 'promised by' }).waitFor();
      // Past the bound ([policy] protect_after = "2s" here) it is marked next in line.
      await wrow.locator('.protected', { hasText: 'next in line' }).waitFor({ timeout: 15000 });
      await row.locator('button.logs').click();
      await page.locator('pre.logs-text', { hasText: 'hello-from-the-web' }).waitFor({ timeout: 20000 });
      await shot('5-logs');
      await page.keyboard.press('Escape');
      await shot('5-queue');
    });

    await step('the calendar shows the running job on its card and the waiting one where expected', async () => {
      await page.click('a[data-view=calendar]');
      const running = page.locator(`.cal-track[data-row=g0] .job-ahead.running[data-job="${jobId}"]`);
      await running.waitFor();
      expect(/likely to end .*running until/.test(await running.getAttribute('title')), 'title: ' + await running.getAttribute('title'));
      // The waiting job, where its expected start is this week (late on a Sunday it is next week's).
      const waits = JSON.parse(daemon.rota('queue', '--all', '--json')).find((j) => j.name === 'waits');
      const weekEnd = JSON.parse(daemon.rota('bookings', '--week', '--json')).to;
      if (waits.pending.expected_start < weekEnd) {
        await page.locator('.expected-row .job-ahead.expected', { hasText: who.user }).waitFor();
      }
      await shot('5-calendar-jobs');
    });

    await step('GPUs now shows each card and who is on it', async () => {
      await page.click('a[data-view=now]');
      await waitFor('3 cards', async () => (await page.locator('.gpu-card').count()) === 3);
      await page.locator('.gpu-card .who-list li', { hasText: who.user }).first().waitFor();
      await shot('6-now');
    });

    await step('the Usage page shows the numbers (or says the server has none yet)', async () => {
      await page.click('a[data-view=usage]');
      await page.locator('.tiles, .usage-body p.muted').first().waitFor();
      if (await page.locator('.tiles').count()) {
        // The daemon has the usage operation: the table of people and the charts (or, without
        // web/node_modules, the table of days) follow.
        await page.locator('table.usage-users').waitFor();
        await page.locator('.charts .uplot, .charts table, .charts p.muted').first().waitFor();
      }
      await sleep(300);
      await shot('7-usage');
    });

    await step('the Rules tab says the lab\'s rules and where you stand', async () => {
      await page.click('a[data-view=rules]');
      await page.locator('.rules-section[data-id=quota] li', { hasText: `You: ${who.user}` }).waitFor();
      const account = page.locator('.rules-section[data-id=account] li');
      await account.waitFor();
      // The admin's two lines stay two lines, as text (never markup).
      expect(await account.locator('br').count() === 1, 'the account text lost its line break');
      expect((await account.innerText()).includes('Bring your student card.'), 'the account text is missing');
      await page.locator('.rules-section[data-id=commands] code', { hasText: 'rota submit --gpus 1 --time 4h' }).waitFor();
      await shot('7-rules');
    });

    await step('the What if tab replays the lab\'s history through each policy, and the admin tunes', async () => {
      await page.click('a[data-view=replay]');
      await page.selectOption('#replay-since', '7d');
      await page.click('#replay-run');
      // rotad replays on a worker thread; the page asks until it is done.
      await page.locator('#replay-policies tr[data-policy=rota]').waitFor({ timeout: 60000 });
      for (const p of ['recorded', 'fifo', 'backfill']) await page.locator(`#replay-policies tr[data-policy=${p}]`).waitFor();
      await page.locator(`#replay-users tr[data-user="${who.user}"]`).waitFor();
      // The jobs the command line replays from the same store.
      const cli = JSON.parse(daemon.rota('simulate', '--from-store', '--since', '7d', '--json'));
      const notes = await page.locator('.replay-notes').innerText();
      expect(notes.includes(`${cli.jobs} jobs replayed on ${cli.gpus} GPUs as they are (${cli.mig_slices} MIG slices)`),
        'notes: ' + notes);
      expect(/Replayed at .* in [0-9.]+ s\./.test(await page.locator('.replay-status').innerText()), 'no status line');
      await page.click('#replay-tune');
      await page.locator('#tune-figures tr[data-row=avg]').waitFor({ timeout: 120000 });
      await page.locator('#tune-changes, #tune-keep').first().waitFor();
      const tried = await page.locator('.replay-body p', { hasText: 'configurations of the rota policy replayed' }).innerText();
      expect(/^(101|201) configurations/.test(tried), 'tried: ' + tried);
      // Beside the proposal, the same without promises (this lab keeps them).
      await page.locator('#tune-figures th', { hasText: 'Proposed, no promises' }).waitFor();
      await page.locator('#tune-figures tr[data-row=max] td.other-promises').waitFor();
      await shot('7-replay');
    });

    await step('switching to Chinese relabels the page', async () => {
      await page.selectOption('#lang', 'zh');
      await page.locator('a[data-view=calendar]', { hasText: '预约日历' }).waitFor();
      expect(await page.evaluate(() => document.documentElement.lang) === 'zh-CN', 'html lang is not zh-CN');
      await page.click('a[data-view=calendar]');
      await page.locator('#new-booking', { hasText: '新建预约' }).waitFor();
      await page.locator('.cal-track[data-row="g0"]').waitFor();
      await shot('8-calendar-zh');
      await page.click('a[data-view=queue]');
      await page.locator('th', { hasText: '名称' }).waitFor();
      await shot('8-queue-zh');
      await page.click('a[data-view=now]');
      await page.locator('.gpu-card').first().waitFor();
      await shot('8-now-zh');
      await page.click('a[data-view=usage]');
      await page.locator('h1', { hasText: '用量统计' }).waitFor();
      await shot('8-usage-zh');
      await page.click('a[data-view=rules]');
      await page.locator('.rules-section[data-id=quota] h2', { hasText: '配额' }).waitFor();
      await page.locator('.rules-section[data-id=quota] li', { hasText: `你：${who.user}` }).waitFor();
      await shot('8-rules-zh');
      await page.click('a[data-view=replay]');
      await page.locator('h1', { hasText: '用实验室的历史重演' }).waitFor();
      await page.locator('#replay-run', { hasText: '重演' }).waitFor();
      // The replay made minutes ago comes back at once, and says what it says of itself in Chinese
      // (rotad's notes are the command line's English lines).
      await page.selectOption('#replay-since', '7d');
      await page.click('#replay-run');
      await page.locator('.replay-notes', { hasText: '重演了' }).waitFor({ timeout: 60000 });
      const zhNotes = await page.locator('.replay-notes').innerText();
      const cliNotes = JSON.parse(daemon.rota('simulate', '--from-store', '--since', '7d', '--json')).notes || [];
      expect(cliNotes.some((n) => n.startsWith('nothing ended in the first')) === zhNotes.includes('天里没有作业结束'),
        'the late start is not said in Chinese: ' + zhNotes + ' / ' + cliNotes.join('; '));
      expect(!/[A-Za-z]{4,}/.test(zhNotes.replace(/MIG|GPU/g, '')), 'English in the Chinese notes: ' + zhNotes);
    });

    await step('cancelling the job from the queue', async () => {
      await page.click('a[data-view=queue]');
      await page.locator(`table.jobs tr[data-id="${jobId}"] button.cancel`).click();
      await page.locator(`table.jobs tr[data-id="${jobId}"]`).waitFor({ state: 'detached', timeout: 20000 });
    });

    await step('on a phone the page fits the screen (the calendar scrolls inside itself)', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.click('a[data-view=calendar]');
      await page.locator('.cal-track').first().waitFor();
      const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(over <= 1, `the page is ${over}px wider than the phone`);
      await shot('9-phone-calendar');
      await page.click('a[data-view=now]');
      await page.locator('.gpu-card').first().waitFor();
      await shot('9-phone-now');
    });

    await step('signing out returns to the sign-in page', async () => {
      await page.click('#logout');
      await page.locator('pre.cmd').waitFor();
      const res = await page.evaluate(async () => (await fetch('/api/queue', { method: 'POST', body: '{}' })).status);
      expect(res === 401, 'the API still answers after signing out: ' + res);
    });

    if (process.getuid() === 0) {
      await browser.close();
      browser = null;
      await studentAndAdmin(who);
    } else {
      console.log('skip a student and an admin on a system-mode rotad (needs root for two real users)');
    }

    expect(problems.length === 0, 'the page reported errors');
  } catch (e) {
    if (!e.reported) {
      try { fail(current, e); } catch { /* reported */ }
    }
  } finally {
    if (browser) await browser.close().catch(() => {});
    await first.stop().catch(() => {});
    if (daemon !== first) await daemon.stop().catch(() => {});
  }
  if (!process.exitCode) console.log(`\nPASS: the page works in Chromium; screenshots in ${SHOTS}`);
}

const guard = setTimeout(() => { console.error(`FAIL: ${current}: the whole run took over 240 s`); process.exit(1); }, 240000);
guard.unref();
await main().catch(() => { process.exitCode = 1; });
