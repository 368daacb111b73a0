// Checks of the page's modules that need no browser: the dictionary and the command line the
// submit form sends. Run: node --test tests/web/
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

globalThis.localStorage = { getItem: () => null, setItem: () => {} };
if (!globalThis.navigator) globalThis.navigator = { language: 'en-US' };

const APP = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'app');
const { _dictForTests: DICT, setLang } = await import(path.join(APP, 'i18n.mjs'));
const { commandArgv, cardsOf } = await import(path.join(APP, 'queue.mjs'));
const { cardTitle, warningsOf } = await import(path.join(APP, 'now.mjs'));
const { axisLabels } = await import(path.join(APP, 'fmt.mjs'));
const { noteLines } = await import(path.join(APP, 'replay.mjs'));

const placeholders = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test('Chinese and English have the same texts with the same placeholders', () => {
  assert.deepEqual(Object.keys(DICT.zh).sort(), Object.keys(DICT.en).sort());
  for (const [key, en] of Object.entries(DICT.en)) {
    assert.ok(en.trim() && DICT.zh[key].trim(), `empty text for ${key}`);
    assert.deepEqual(placeholders(DICT.zh[key]), placeholders(en), `placeholders of ${key}`);
  }
});

test('every text the code asks for by name is in the dictionary', () => {
  for (const file of fs.readdirSync(APP).filter((f) => f.endsWith('.mjs') && f !== 'i18n.mjs')) {
    const code = fs.readFileSync(path.join(APP, file), 'utf8');
    for (const [, key] of code.matchAll(/\bt\('([a-z_]+\.[a-z_.]+|[a-z_]+)'/g)) {
      // 'tier.' + x and the like name a family of texts: some must exist.
      const family = /[._]$/.test(key);
      assert.ok(family ? Object.keys(DICT.en).some((k) => k.startsWith(key)) : key in DICT.en, `${file} asks for "${key}"`);
    }
  }
});

test('the submit form splits a plain command into words and hands shell syntax to /bin/sh', () => {
  assert.deepEqual(commandArgv('python train.py --lr 1e-3'), ['python', 'train.py', '--lr', '1e-3']);
  assert.deepEqual(commandArgv(`sh -c 'echo hi; sleep 1'`), ['sh', '-c', 'echo hi; sleep 1']);
  assert.deepEqual(commandArgv(`python "my run.py"`), ['python', 'my run.py']);
  assert.deepEqual(commandArgv('python a.py > out.txt'), ['/bin/sh', '-c', 'python a.py > out.txt']);
  assert.deepEqual(commandArgv('cd 数据 && python 训练.py'), ['/bin/sh', '-c', 'cd 数据 && python 训练.py']);
  assert.deepEqual(commandArgv('   '), []);
});

test('a running job says its cards, and on a cluster their node', () => {
  setLang('en');
  assert.equal(cardsOf({ gpus: [0, 1] }), 'GPU 0,1');
  assert.equal(cardsOf({ gpus: [2, 3], node: 'gpu-07' }), 'GPU 2,3 on gpu-07');
  assert.equal(cardsOf({ gpus: [] , node: 'gpu-07' }), '');
  setLang('zh');
  assert.equal(cardsOf({ gpus: [2], node: 'gpu-07' }), 'GPU 2 在 gpu-07 上');
  setLang('en');
});

test('a request refused at the door (too many connections) is sent again, other errors are not', async () => {
  globalThis.document = { cookie: '' };
  const { call, _sleepForTests, ApiError } = await import(path.join(APP, 'api.mjs'));
  const waits = [];
  _sleepForTests(async (ms) => { waits.push(ms); });
  const reply = (status, body, headers = {}) => ({
    status, ok: status === 200, statusText: '', headers: { get: (k) => headers[k] ?? null },
    text: async () => JSON.stringify(body),
  });
  const door = () => reply(503, { ok: false, error: { code: 'resource_exhausted', message: 'too many connections' } },
    { 'Retry-After': '1' });
  let answers = [door(), door(), reply(200, { ok: true, v: 1, version: 'x' })];
  let calls = 0;
  globalThis.fetch = async () => answers[calls++];
  assert.equal((await call('status')).version, 'x');
  assert.equal(calls, 3);
  assert.equal(waits.length, 2);
  for (const w of waits) assert.ok(w >= 500 && w <= 1500, `waited ${w} ms`);
  // Refused at the door four times: given up, as the error it is.
  answers = [door(), door(), door(), door(), reply(200, { ok: true })];
  calls = 0;
  await assert.rejects(call('status'), (e) => e instanceof ApiError && e.status === 503 && e.code === 'resource_exhausted');
  assert.equal(calls, 4);
  // rotad's own refusals (429: the submission rate; 503 unavailable: the loop did not answer) are
  // not sent again: the request may have been done.
  for (const [status, code] of [[429, 'resource_exhausted'], [503, 'unavailable']]) {
    answers = [reply(status, { ok: false, error: { code, message: code } }), reply(200, { ok: true })];
    calls = 0;
    await assert.rejects(call('submit', {}), (e) => e.code === code);
    assert.equal(calls, 1);
  }
});

test('a card is headed by its index, and by its node on a cluster', () => {
  assert.equal(cardTitle({ index: 0, node: '' }), 'GPU 0');
  assert.equal(cardTitle({ index: 5, node: 'gpu-07' }), 'GPU 5 · gpu-07');
  assert.equal(cardTitle({ index: 2 }), 'GPU 2');
});

test('an outside process is an alarm, a Slurm job outside Rota on a node is not', () => {
  const card = (p) => ({ index: 0, health: 'healthy', jobs: [], util: -1, processes: [p] });
  const bad = (g) => warningsOf(g).filter(([kind]) => kind === 'bad');
  assert.equal(bad(card({ pid: 9, user: 'eve', memory: 512, outside: true })).length, 1);
  assert.equal(bad(card({ pid: 9, user: 'eve', memory: 512, outside: true, in_slurm: false, slurm_job: '' })).length, 1);
  assert.equal(bad(card({ pid: 9, user: 'bob', memory: 512, outside: true, in_slurm: true, slurm_job: '4711' })).length, 0);
  assert.equal(bad(card({ pid: 9, user: 'bob', memory: 512, outside: false, allocated: true, job_id: 3 })).length, 0);
});

test('a card a Slurm job outside Rota holds says whose, once, and is not free', () => {
  const base = { index: 0, health: 'healthy', jobs: [], util: -1, processes: [] };
  const infos = (g) => warningsOf(g).filter(([kind]) => kind === 'info').map(([, text]) => text);
  const held = { ...base, held_outside: true, held_by: [{ user: 'bob', uid: 1002, slurm_job: '4711', mine: false }] };
  assert.equal(infos(held).length, 1);
  assert.match(infos(held)[0], /4711/);
  assert.match(infos(held)[0], /bob/);
  assert.equal(warningsOf(held).filter(([kind]) => kind === 'bad').length, 0);
  // Counted held, which card not known: said without a name.
  assert.equal(infos({ ...base, held_outside: true }).length, 1);
  // The node's agent named the job's processes already: not said twice.
  const seen = { ...held, processes: [{ pid: 9, user: 'bob', memory: 512, outside: true, in_slurm: true, slurm_job: '4711' }] };
  assert.equal(infos(seen).length, 0);
  assert.equal(infos(base).length, 0);
});

test("a chart's tick labels never repeat, even on a day with little use", () => {
  // uPlot's own labels read "0.001" twice here (at most three decimals).
  assert.deepEqual(axisLabels([0, 0.0005, 0.001, 0.0015]), ['0.0000', '0.0005', '0.0010', '0.0015']);
  assert.deepEqual(axisLabels([0, 0.2, 0.4, 0.6000000000000001]), ['0.0', '0.2', '0.4', '0.6']);
  assert.deepEqual(axisLabels([0, 5, 10, 15]), ['0', '5', '10', '15']);
  assert.deepEqual(axisLabels([0, 0.25, 0.5]), ['0.00', '0.25', '0.50']);
  assert.deepEqual(axisLabels([0.00002, 0.00004]), ['0.00002', '0.00004']);
  assert.deepEqual(axisLabels([null, 1]), ['', '1']);
  for (const splits of [[0, 0.0002, 0.0004, 0.0006, 0.0008, 0.001, 0.0012], [0, 1e-7, 2e-7]]) {
    const labels = axisLabels(splits);
    assert.equal(new Set(labels).size, labels.length, labels.join(' '));
  }
});

test("a replay's notes are said in the reader's language, not as rotad's English lines", () => {
  const result = { jobs: 12, gpus: 3, mig_slices: 0, skipped: 2, late_days: 6,
    notes: ['nothing ended in the first 6 days asked for (...)', '2 jobs that never ran left out'] };
  try {
    setLang('zh');
    const zh = noteLines(result);
    assert.deepEqual(zh, ['在 3 块 GPU 上重演了 12 个作业。',
      '所选范围的前 6 天里没有作业结束（历史记录可能从更晚开始）：重演从所选起点之后 6 天开始。',
      '有 2 个从未运行的作业（等待时被取消）未计入。']);
    setLang('en');
    assert.equal(noteLines(result)[1].startsWith('Nothing ended in the first 6 days'), true);
    // Nothing to say: only the line of what was replayed.
    assert.equal(noteLines({ ...result, skipped: 0, late_days: 0, notes: [] }).length, 1);
    // An older rotad sends only its lines: shown as they are.
    const { late_days: _, ...old } = result;
    assert.deepEqual(noteLines(old).slice(1), result.notes);
  } finally {
    setLang('en');
  }
});
