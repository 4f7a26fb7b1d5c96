import { analyze } from './analyzer.js';
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
  const title = analyze(document.title).slice(0, MAX_FIELD_WORDS);
  const body = analyze(document.body).slice(0, MAX_FIELD_WORDS);
  const postings = new Map<string, Posting>();
  const posting = (term: string) => {
    let p = postings.get(term);
    if (!p) postings.set(term, (p = { doc: document.doc, posT: [], posB: [], lenT: title.length, lenB: body.length }));
    return p;
  };
  title.forEach((term, i) => posting(term).posT.push(i));
  body.forEach((term, i) => posting(term).posB.push(i));
  return { postings, lenT: title.length, lenB: body.length };
}

/** Throws unless `doc` is a document number a block can hold: an integer from 1 to MAX_DOC. */
export function checkDocumentNumber(doc: number): void {
  if (!Number.isInteger(doc) || doc < 1 || doc > MAX_DOC) throw new RangeError(`document number ${doc} is out of range`);
}
