import { parseQuery } from '../../shared/domain/query-parse.js';
import { matchSpans, type MatchSpan } from '../../shared/search/matches.js';
import { clausesOf, type Clause } from '../../shared/search/query.js';
import { h, type Child } from './dom.js';

/** About this many characters of a search hit's body are shown around its matches. */
export const SNIPPET_CHARS = 240;
/** How much of the snippet comes before its first match, at most. */
const LEAD_CHARS = 60;

/**
 * The clauses a search with this `q` looks for, read exactly as the service reads them: the same parser
 * (stop words and function words dropped, phrases kept) and the same analysis (clitics, identifiers,
 * Porter's stemming), imported from the service's own code. None for an empty `q`.
 */
export function queryClauses(q: string): Clause[] {
  const parsed = parseQuery(q);
  return parsed === null ? [] : clausesOf(parsed);
}

/** Overlapping matches as one (an identifier whole and its words; phrases that share words). */
function merged(matches: readonly MatchSpan[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const { start, end } of matches) {
    const last = out.at(-1);
    if (last && start < last.end) last.end = Math.max(last.end, end);
    else out.push({ start, end });
  }
  return out;
}

/** `text[from, to)` with the matches in it wrapped in `<mark>`, as DOM nodes built from text (never HTML). */
function marked(text: string, matches: readonly MatchSpan[], from = 0, to = text.length, squash = false): Child[] {
  const plain = (s: string) => (squash ? s.replace(/\s+/g, ' ') : s);
  const out: Child[] = [];
  let last = from;
  for (const { start, end } of merged(matches)) {
    if (end <= from || start >= to) continue;
    out.push(plain(text.slice(last, start)), h('mark', {}, text.slice(start, end)));
    last = end;
  }
  out.push(plain(text.slice(last, to)));
  return out.filter((child) => child !== '');
}

/** The text with every word the search matched on marked: what made the service find the record there. */
export function highlighted(text: string, clauses: readonly Clause[]): Child[] {
  return marked(text, matchSpans(text, clauses));
}

/**
 * About SNIPPET_CHARS characters of a body, where its matches are thickest (the window holding the most
 * different clauses, then the most matches), from a word's start to a word's end, whitespace run together,
 * with "…" where the body goes on; the matches marked. A body that fits is shown whole; a body without a
 * match (the title matched) shows its start.
 */
export function snippet(text: string, clauses: readonly Clause[]): Child[] {
  const matches = matchSpans(text, clauses);
  if (text.length <= SNIPPET_CHARS) return marked(text, matches, 0, text.length, true);
  const best = densest(matches);
  let from = best === null ? 0 : Math.max(0, best - LEAD_CHARS);
  let to = Math.min(text.length, from + SNIPPET_CHARS);
  if (to === text.length) from = Math.max(0, to - SNIPPET_CHARS);
  // Whole words only: start after a space (never past the first match), end before one.
  if (from > 0) {
    const space = text.slice(from, best ?? from + LEAD_CHARS).search(/\s/);
    if (space >= 0) from += space + 1;
  }
  if (to < text.length) {
    const space = text.slice(0, to).search(/\s\S*$/);
    if (space > from && (best === null || space > best)) to = space;
  }
  const head = from > 0 ? '…' : '';
  const tail = to < text.length ? '…' : '';
  return [head, ...marked(text, matches, from, to, true), tail].filter((child) => child !== '');
}

/** Where the window of SNIPPET_CHARS that starts at a match holds the most different clauses (then matches); null without matches. */
function densest(matches: readonly MatchSpan[]): number | null {
  if (matches.length === 0) return null;
  let best = { start: matches[0]!.start, clauses: 0, count: 0 };
  const held = new Map<number, number>();
  let end = 0;
  for (let begin = 0; begin < matches.length; begin++) {
    const start = matches[begin]!.start;
    // The window always holds the match it starts at, however long (a long phrase).
    while (end < matches.length && (end <= begin || matches[end]!.end <= start + SNIPPET_CHARS - LEAD_CHARS)) {
      const clause = matches[end]!.clause;
      held.set(clause, (held.get(clause) ?? 0) + 1);
      end++;
    }
    const count = end - begin;
    if (held.size > best.clauses || (held.size === best.clauses && count > best.count)) best = { start, clauses: held.size, count };
    const left = matches[begin]!.clause;
    const n = (held.get(left) ?? 0) - 1;
    if (n <= 0) held.delete(left);
    else held.set(left, n);
  }
  return best.start;
}
