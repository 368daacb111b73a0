// Building the page without innerHTML: every server-provided string reaches the DOM as a text
// node, so a job name or a booking note can never become markup.

/** h('button', {class: 'x', onclick: f}, 'text', child...) -> an element. Strings and numbers
 *  become text nodes; null/undefined/false children are skipped; arrays are flattened. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value' || k === 'checked' || k === 'selected' || k === 'disabled') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Replaces el's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A labelled form field: <label>text <input ...></label>. */
export function field(label, input, hint) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), input,
    hint ? h('small', { class: 'hint' }, hint) : null);
}

/** A select with [value, text] options. */
export function select(attrs, options, current) {
  return h('select', attrs, options.map(([v, text]) =>
    h('option', { value: v, selected: String(v) === String(current) }, text)));
}

/** Opens a modal dialog holding `content`; resolves when it closes. Escape closes it. */
export function openDialog(title, content, { wide = false } = {}) {
  const dlg = h('dialog', { class: wide ? 'wide' : '', 'aria-label': title },
    h('div', { class: 'dialog-head' }, h('h2', {}, title),
      h('button', { type: 'button', class: 'icon', 'aria-label': '×', onclick: () => dlg.close() }, '×')),
    content);
  document.body.appendChild(dlg);
  dlg.addEventListener('close', () => dlg.remove());
  dlg.showModal();
  const first = dlg.querySelector('input, select, textarea, .dialog-body button');
  if (first) first.focus();
  return dlg;
}
