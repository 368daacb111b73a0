// The JSON API over HTTP (docs/api.md; docs/http.md): POST /api/<op> with the socket request's
// fields minus v/op, the socket's reply back. State-changing requests carry the rota_csrf cookie
// in X-Rota-CSRF. A 401 means "not signed in": listeners of onSignedOut show the sign-in page.

export class ApiError extends Error {
  constructor(code, message, status, details) {
    super(message || code);
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

let csrfFromHello = '';
const signedOut = new Set();

/** Whether `e` says the server does not have the operation at all (an older rotad). */
export function isUnknownOp(e) {
  return e.code === 'invalid_argument' || e.status === 404 || /unknown op/i.test(e.message);
}

export function onSignedOut(f) { signedOut.add(f); }
export function setCsrf(token) { csrfFromHello = token || ''; }

export function csrf() {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === 'rota_csrf') return decodeURIComponent(v.join('='));
  }
  return csrfFromHello;
}

// A connection refused at the door (503 with resource_exhausted: too many at once from this
// address, as a lab behind one NAT address or a browser with several tabs may have) never reached
// rotad: it is sent again after its Retry-After (spread, so that the page's parallel requests do
// not come back together), at most kDoorRetries times.
const kDoorRetries = 3;
let sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** For the unit tests: waits without waiting. */
export function _sleepForTests(f) { sleep = f; }

async function send(url, init) {
  for (let attempt = 0; ; attempt++) {
    let res;
    try {
      res = await fetch(url, { credentials: 'same-origin', ...init });
    } catch (e) {
      throw new ApiError('unreachable', String(e.message || e), 0);
    }
    let body = null;
    const text = await res.text();
    try { body = text ? JSON.parse(text) : null; } catch { body = null; }
    if (res.status === 503 && body?.error?.code === 'resource_exhausted' && attempt < kDoorRetries) {
      const after = Number(res.headers?.get?.('Retry-After')) || 1;
      await sleep(after * 1000 * (0.5 + Math.random()));
      continue;
    }
    if (res.status === 401) {
      for (const f of signedOut) f();
      throw new ApiError('unauthenticated', body?.error?.message || 'not signed in', 401);
    }
    if (!body || body.ok === false || !res.ok) {
      const err = body?.error || {};
      throw new ApiError(err.code || 'http_' + res.status, err.message || Array.from(text).slice(0, 200).join('') || res.statusText,
        res.status, err.details);
    }
    return body;
  }
}

/** Calls operation `op` with `fields`; resolves to the reply, rejects with ApiError. */
export function call(op, fields = {}) {
  return send('/api/' + encodeURIComponent(op), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Rota-CSRF': csrf() },
    body: JSON.stringify(fields),
  });
}

/** A read-only operation without fields, as GET (what a read-only wall display may use). */
export function get(op) {
  return send('/api/' + encodeURIComponent(op), { method: 'GET' });
}

/** POSTs to /auth/<what> (logout, password). */
export function auth(what, fields) {
  return fetch('/auth/' + what, {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Rota-CSRF': csrf() },
    body: fields ? JSON.stringify(fields) : undefined,
  });
}
