import { h, type Child } from './dom.js';

/** Words a question carries that say nothing about what to find; never highlighted. */
const STOP_WORDS = new Set(
  'a an and are as at be by did do does for from had has have how i in is it its of on or that the this to was were what when where which who why will with you your user'.split(' '),
);

/** The stems of a query's words worth marking: lower case, a common English ending taken off, three letters or more. */
export function queryStems(q: string): string[] {
  const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const stems = words.filter((w) => !STOP_WORDS.has(w)).map((w) => w.replace(/(?:ing|ed|es|s)$/u, '')).filter((w) => w.length >= 3);
  return [...new Set(stems)];
}

/**
 * The text with each word that starts with one of the stems wrapped in `<mark>`, as DOM nodes built from
 * text (never HTML). An approximation of the search's own stemming, for the eye only.
 */
export function highlighted(text: string, stems: readonly string[]): Child[] {
  if (stems.length === 0) return [text];
  const out: Child[] = [];
  let last = 0;
  for (const match of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = match[0].toLowerCase();
    if (!stems.some((stem) => word.startsWith(stem))) continue;
    out.push(text.slice(last, match.index), h('mark', {}, match[0]));
    last = match.index + match[0].length;
  }
  out.push(text.slice(last));
  return out;
}
