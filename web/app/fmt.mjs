// Times, durations and sizes for people, in the page's language. Times are Unix seconds (UTC)
// shown in the browser's zone, which in a lab is the server's.
import { lang, t } from './i18n.mjs';

const locale = () => (lang() === 'zh' ? 'zh-CN' : 'en-GB');

export function fmtTime(sec, { date = true } = {}) {
  if (!sec) return '—';
  const opts = { hour: '2-digit', minute: '2-digit', hour12: false };
  if (date) Object.assign(opts, { weekday: 'short', month: 'numeric', day: 'numeric' });
  return new Intl.DateTimeFormat(locale(), opts).format(new Date(sec * 1000));
}

export function fmtDay(sec) {
  return new Intl.DateTimeFormat(locale(), { weekday: 'short', month: 'numeric', day: 'numeric' })
    .format(new Date(sec * 1000));
}

/** 3725 -> "1h 2m" / "1小时2分". */
export function fmtDur(sec) {
  if (sec === null || sec === undefined || !isFinite(sec)) return '—';
  sec = Math.max(0, Math.round(sec));
  const d = Math.floor(sec / 86400), hr = Math.floor((sec % 86400) / 3600), m = Math.floor((sec % 3600) / 60);
  const parts = [];
  if (d) parts.push(t('dur.d', { n: d }));
  if (hr) parts.push(t('dur.h', { n: hr }));
  if (m || !parts.length) parts.push(t('dur.m', { n: m }));
  return parts.slice(0, 2).join(lang() === 'zh' ? '' : ' ');
}

export function fmtMiB(mib) {
  if (mib === null || mib === undefined || mib < 0) return '—';
  return mib >= 1024 ? (mib / 1024).toFixed(mib >= 10240 ? 0 : 1) + ' GiB' : mib + ' MiB';
}

export function fmtHours(h) {
  if (h === null || h === undefined || !isFinite(h)) return '—';
  return (Math.round(h * 10) / 10).toString();
}

/** Tick labels for a chart's axis: the fewest decimals (the same for every tick) that show each
 *  tick as its own value. uPlot's default keeps at most three, so on a day with little use
 *  0.0005 and 0.001 both read "0.001". */
export function axisLabels(splits) {
  const finite = splits.filter((v) => Number.isFinite(v));
  for (let d = 0; d <= 10; d++) {
    const labels = finite.map((v) => v.toFixed(d));
    const exact = finite.every((v, i) => Math.abs(Number(labels[i]) - v) <= 1e-9 * Math.max(1, Math.abs(v)));
    if (exact && new Set(labels).size === labels.length) return splits.map((v) => (Number.isFinite(v) ? v.toFixed(d) : ''));
  }
  return splits.map((v) => (Number.isFinite(v) ? String(v) : ''));
}

/** A Date as the value of <input type="datetime-local"> (local time, minutes). */
export function toLocalInput(sec) {
  const d = new Date(sec * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function fromLocalInput(v) {
  const ms = new Date(v).getTime();
  return isFinite(ms) ? Math.floor(ms / 1000) : NaN;
}

export const now = () => Math.floor(Date.now() / 1000);
