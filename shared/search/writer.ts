import { analyze } from './analyzer.js';
import {
  BLOCK_SIZE,
  MAX_FIELD_WORDS,
  appendPosting,
  blockCount,
  blockLastDoc,
  blockPostings,
  decodeBlock,
  decodeMetas,
  encodeBlock,
  encodeMetas,
  metaOf,
  type BlockMeta,
  type Posting,
} from './block.js';
import type { CollectionStats } from './scoring.js';
import type { PostingStorage, TermHead } from './storage.js';

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
  if (!Number.isInteger(document.doc) || document.doc < 1 || document.doc > MAX_DOC) throw new RangeError(`document number ${document.doc} is out of range`);
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

/** Adds documents to a tenant's index: its statistics, each term's document frequency and postings. */
export function addDocuments(storage: PostingStorage, tenant: string, documents: readonly SearchDocument[]): void {
  changeDocuments(storage, tenant, documents, +1);
}

/**
 * Removes documents from a tenant's index, given the text they were added with. Every statistic goes back
 * to what it was before they were added; a term no document holds any more leaves nothing behind.
 */
export function removeDocuments(storage: PostingStorage, tenant: string, documents: readonly SearchDocument[]): void {
  changeDocuments(storage, tenant, documents, -1);
}

function changeDocuments(storage: PostingStorage, tenant: string, documents: readonly SearchDocument[], sign: 1 | -1): void {
  if (documents.length === 0) return;
  const stats: CollectionStats = storage.stats(tenant) ?? { docs: 0, titleWords: 0, bodyWords: 0 };
  const byTerm = new Map<string, Posting[]>();
  for (const document of documents) {
    const { postings, lenT, lenB } = analyzeDocument(document);
    stats.docs += sign;
    stats.titleWords += sign * lenT;
    stats.bodyWords += sign * lenB;
    for (const [term, posting] of postings) {
      let list = byTerm.get(term);
      if (!list) byTerm.set(term, (list = []));
      list.push(posting);
    }
  }
  for (const [term, postings] of byTerm) {
    postings.sort((a, b) => a.doc - b.doc);
    new TermWriter(storage, tenant, term).change(postings, sign);
  }
  storage.setStats(tenant, stats.docs === 0 ? null : stats);
}

/**
 * The changes to one term's postings: its open block in memory, its sealed blocks read as needed. The
 * open block stays encoded while documents are only appended to it (the usual case: a new record has the
 * highest number), and is decoded only for an insert below its end or a removal.
 */
class TermWriter {
  private readonly head: TermHead;
  private openBytes: Uint8Array;
  private openList: Posting[] | null = null;
  private metas: BlockMeta[] | null = null;
  private metasChanged = false;

  constructor(
    private readonly storage: PostingStorage,
    private readonly tenant: string,
    private readonly term: string,
  ) {
    this.head = storage.head(tenant, term) ?? { df: 0, sealedLast: 0, open: new Uint8Array(0) };
    this.openBytes = this.head.open;
  }

  /** The open block's postings, decoded on first need. */
  private get open(): Posting[] {
    this.openList ??= this.openBytes.byteLength === 0 ? [] : blockPostings(decodeBlock(this.openBytes));
    return this.openList;
  }

  private get openCount(): number {
    return this.openList ? this.openList.length : blockCount(this.openBytes);
  }

  change(postings: readonly Posting[], sign: 1 | -1): void {
    const many = postings.length > 1;
    for (const posting of postings) {
      if (sign > 0) this.add(posting, many);
      else this.remove(posting.doc);
    }
    this.seal();
    this.save();
  }

  private add(posting: Posting, many: boolean): void {
    // One posting (a record's write) is appended to the encoded block by copying bytes; many (a batch) go
    // into the decoded list, since appending to the encoded block one at a time copies it every time.
    const appends = !many && !this.openList && posting.doc > this.head.sealedLast && (this.openBytes.byteLength === 0 || posting.doc > blockLastDoc(this.openBytes));
    if (appends) this.openBytes = appendPosting(this.openBytes, posting);
    else if (posting.doc > this.head.sealedLast) insertSorted(this.open, posting);
    else this.changeSealed(posting.doc, (list) => insertSorted(list, posting));
    this.head.df++;
  }

  private remove(doc: number): void {
    const removed = doc > this.head.sealedLast ? removeSorted(this.open, doc) : this.changeSealed(doc, (list) => removeSorted(list, doc));
    if (removed) this.head.df--;
  }

  /** Applies `edit` to the sealed block that covers `doc`, splitting it when it grew to twice the block size. */
  private changeSealed<T>(doc: number, edit: (postings: Posting[]) => T): T {
    const metas = this.loadMetas();
    const i = firstAtOrAfter(metas, doc);
    const meta = metas[i]!;
    const bytes = this.storage.block(this.tenant, this.term, meta.last);
    if (!bytes) throw new Error(`the index is missing a block of "${this.term}"`);
    const postings = blockPostings(decodeBlock(bytes));
    const result = edit(postings);
    this.storage.setBlock(this.tenant, this.term, meta.last, null);
    const parts = postings.length > 2 * BLOCK_SIZE ? [postings.slice(0, BLOCK_SIZE), postings.slice(BLOCK_SIZE)] : postings.length > 0 ? [postings] : [];
    for (const part of parts) this.storage.setBlock(this.tenant, this.term, part.at(-1)!.doc, encodeBlock(part));
    metas.splice(i, 1, ...parts.map(metaOf));
    this.metasChanged = true;
    this.head.sealedLast = metas.at(-1)?.last ?? 0;
    return result;
  }

  /** Seals full blocks off the front of the open block. */
  private seal(): void {
    if (this.openCount < BLOCK_SIZE) return;
    const open = this.open;
    let start = 0;
    for (; open.length - start >= BLOCK_SIZE; start += BLOCK_SIZE) {
      const part = open.slice(start, start + BLOCK_SIZE);
      this.storage.setBlock(this.tenant, this.term, part.at(-1)!.doc, encodeBlock(part));
      this.loadMetas().push(metaOf(part));
      this.metasChanged = true;
      this.head.sealedLast = part.at(-1)!.doc;
    }
    this.openList = open.slice(start);
  }

  private loadMetas(): BlockMeta[] {
    if (!this.metas) {
      const bytes = this.storage.metas(this.tenant, this.term);
      this.metas = bytes ? decodeMetas(bytes) : [];
    }
    return this.metas;
  }

  private save(): void {
    if (this.head.df < 0) throw new Error(`the index's count of "${this.term}" went below zero`);
    if (this.metasChanged) this.storage.setMetas(this.tenant, this.term, this.metas!.length === 0 ? null : encodeMetas(this.metas!));
    if (this.head.df === 0) {
      this.storage.setHead(this.tenant, this.term, null);
      return;
    }
    const open = this.openList ? encodeBlock(this.openList) : this.openBytes;
    this.storage.setHead(this.tenant, this.term, { df: this.head.df, sealedLast: this.head.sealedLast, open });
  }
}

/** The index of the first meta whose block ends at or after `doc`. */
export function firstAtOrAfter(metas: readonly BlockMeta[], doc: number): number {
  let lo = 0;
  let hi = metas.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (metas[mid]!.last < doc) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted(postings: Posting[], posting: Posting): void {
  let i = postings.length;
  while (i > 0 && postings[i - 1]!.doc > posting.doc) i--;
  if (i > 0 && postings[i - 1]!.doc === posting.doc) throw new Error(`document ${posting.doc} is in the index already`);
  postings.splice(i, 0, posting);
}

function removeSorted(postings: Posting[], doc: number): boolean {
  const i = postings.findIndex((p) => p.doc === doc);
  if (i < 0) return false;
  postings.splice(i, 1);
  return true;
}
