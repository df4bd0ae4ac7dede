// Code as the page shows it, highlighted. highlight.js's core build holds no language of its own: the ones
// agents write are registered here.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import { h } from './dom.js';

hljs.registerLanguage('python', python);
hljs.registerLanguage('bash', bash);
hljs.registerLanguage('json', json);

/** Code in a language highlight.js knows here (else its best guess), as a block. */
export function codeBlock(code: string, lang = 'python'): HTMLElement {
  const el = h('code', { class: `hljs language-${lang}` });
  el.innerHTML = hljs.getLanguage(lang)
    ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value
    : hljs.highlightAuto(code).value;
  return h('pre', { class: 'code' }, el);
}

/** A reply's text with its fenced code blocks highlighted. */
export function richText(text: string): HTMLElement {
  const out = h('div', { class: 'reply' });
  const fence = /```([\w+-]*)\n([\s\S]*?)(?:```|$)/g;
  let at = 0;
  for (const m of text.matchAll(fence)) {
    if (m.index! > at) out.append(h('div', { class: 'prose' }, text.slice(at, m.index)));
    out.append(codeBlock(m[2], m[1] || 'python'));
    at = m.index! + m[0].length;
  }
  if (at < text.length) out.append(h('div', { class: 'prose' }, text.slice(at)));
  return out;
}
