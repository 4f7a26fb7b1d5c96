import { analyzeField } from './analyzer.js';
import { MAX_FIELD_WORDS, type Posting } from './block.js';

/**
 * A document as the index sees it, and its analysis into postings: what the writer adds to the index and
 * what the tail (tail.ts) scores beside it, analyzed alike, so that a document scores the same before and
 * after a merge takes it in.
 */

/** A document as the index sees it: a number unique in its tenant, and the text of its two fields. */
export interface SearchDocument {
  doc: number;
  title: string;
  body: string;
}

/** The largest document number a block can hold (block.ts stores them as u32). */
export const MAX_DOC = 0xffffffff;

/** A document's postings by term, and its field lengths as indexed. */
export function analyzeDocument(document: SearchDocument): { postings: Map<string, Posting>; lenT: number; lenB: number } {
  checkDocumentNumber(document.doc);
  const title = analyzeField(document.title, MAX_FIELD_WORDS);
  const body = analyzeField(document.body, MAX_FIELD_WORDS);
  const [lenT, lenB] = [title.terms.length, body.terms.length];
  const postings = new Map<string, Posting>();
  const posting = (term: string) => {
    let p = postings.get(term);
    if (!p) postings.set(term, (p = { doc: document.doc, posT: [], posB: [], lenT, lenB }));
    return p;
  };
  // An identifier's whole term is never a word's term (it holds a joiner), so each term's positions ascend.
  title.terms.forEach((term, i) => posting(term).posT.push(i));
  for (const { position, term } of title.wholes) posting(term).posT.push(position);
  body.terms.forEach((term, i) => posting(term).posB.push(i));
  for (const { position, term } of body.wholes) posting(term).posB.push(position);
  return { postings, lenT, lenB };
}

/** Throws unless `doc` is a document number a block can hold: an integer from 1 to MAX_DOC. */
export function checkDocumentNumber(doc: number): void {
  if (!Number.isInteger(doc) || doc < 1 || doc > MAX_DOC) throw new RangeError(`document number ${doc} is out of range`);
}
