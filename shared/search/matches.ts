import { termSpans } from './analyzer.js';
import type { Clause } from './query.js';

/** Where a clause of a query matches in a text: UTF-16 offsets into the text as given. */
export interface MatchSpan {
  start: number;
  end: number;
  /** The index of the clause (in the list given) that matches here. */
  clause: number;
}

/**
 * Where the clauses of a query (`clausesOf`) match in one field's text, in order of `start`: what made the
 * engine find the record there, for showing a person. A term clause matches each word whose term it is, and
 * an identifier whole when the clause is the identifier; a phrase (quoted, or a pair of adjacent words)
 * matches each run of words whose terms are the phrase's, in order, next to each other, as the engine
 * matches it on positions. Words are read as the engine indexes them (`termSpans`): "user's" and "users" are
 * the term `user`, "preferences" is `prefer`. A pair of adjacent words adds nothing its two term clauses
 * have not marked already, so pairs are left out.
 */
export function matchSpans(text: string, clauses: readonly Clause[]): MatchSpan[] {
  const wanted = clauses.filter((c) => !c.adjacent);
  if (wanted.length === 0 || text === '') return [];
  const spans = termSpans(text);
  const words = spans.filter((s) => !s.whole);
  const single = new Map<string, number>();
  clauses.forEach((clause, i) => {
    if (!clause.adjacent && clause.terms.length === 1 && !single.has(clause.terms[0]!)) single.set(clause.terms[0]!, i);
  });
  const out: MatchSpan[] = [];
  for (const span of spans) {
    const clause = single.get(span.term);
    if (clause !== undefined) out.push({ start: span.start, end: span.end, clause });
  }
  clauses.forEach((clause, i) => {
    if (clause.adjacent || clause.terms.length < 2) return;
    const n = clause.terms.length;
    for (let at = 0; at + n <= words.length; at++) {
      if (clause.terms.every((term, k) => words[at + k]!.term === term)) out.push({ start: words[at]!.start, end: words[at + n - 1]!.end, clause: i });
    }
  });
  return out.sort((a, b) => a.start - b.start || b.end - a.end);
}
