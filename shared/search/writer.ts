import { analyzeField } from './analyzer.js';
import { checkDocumentNumber, type SearchDocument } from './document.js';
import { BLOCK_SIZE, MAX_FIELD_WORDS, appendPostings, blockCount, blockLastDoc, blockPostings, decodeBlock, encodeBlock, sliceBlock, type Posting } from './block.js';
import { decodeMetas, encodeMetas, metaOf, metaOfBlock, type BlockMeta } from './metas.js';
import { decodeSealed, encodeSealed, encodeSealedSlice, type SealedBlock } from './sealed.js';
import { DEFAULT_RANKING, type Bm25Params } from './ranking.js';
import type { CollectionStats } from './scoring.js';
import type { PostingStorage, TermHead } from './storage.js';

/**
 * The write side of the engine: documents into a tenant's postings, statistics and block metas. Each
 * function that writes blocks takes the ranking the index is written for (`ranking`, ranking.ts): its
 * blocks' impacts are kept for that title weight (metas.ts). The read side never imports this module.
 */

/** Adds documents to a tenant's index: its statistics, each term's document frequency and postings. */
export function addDocuments(storage: PostingStorage, tenant: string, documents: readonly SearchDocument[], ranking: Bm25Params = DEFAULT_RANKING): void {
  changeDocuments(storage, tenant, documents, +1, ranking);
}

/**
 * Removes documents from a tenant's index, given the text they were added with. Every statistic goes back
 * to what it was before they were added; a term no document holds any more leaves nothing behind.
 */
export function removeDocuments(storage: PostingStorage, tenant: string, documents: readonly SearchDocument[], ranking: Bm25Params = DEFAULT_RANKING): void {
  changeDocuments(storage, tenant, documents, -1, ranking);
}

function changeDocuments(storage: PostingStorage, tenant: string, documents: readonly SearchDocument[], sign: 1 | -1, ranking: Bm25Params): void {
  if (documents.length === 0) return;
  const { byTerm, stats } = documentChanges(documents);
  for (const [term, postings] of byTerm) new TermWriter(storage, tenant, term, ranking).change(postings, sign);
  addStats(storage, tenant, stats, sign);
}

/**
 * Adds (+1) or removes (-1) documents, whichever side of the merge mark they are on, where the index covers
 * them: a term's posting where the term's part of the index reaches the document (max of the storage's merge
 * mark and the term's, TermHead.merged), the statistics where the storage's mark does. The rest of a
 * document is the tail's, which a search reads from the records themselves. A record's delete removes its
 * old text with -1; a new text is the old one removed and the new one added.
 */
export function changeCoveredDocuments(
  storage: PostingStorage,
  tenant: string,
  documents: readonly SearchDocument[],
  sign: 1 | -1,
  ranking: Bm25Params = DEFAULT_RANKING,
): void {
  if (documents.length === 0) return;
  const upTo = storage.mergedUpTo();
  const covered = documents.filter((d) => d.doc <= upTo);
  const { byTerm } = documentChanges(documents);
  for (const [term, postings] of byTerm) new TermWriter(storage, tenant, term, ranking).change(postings, sign, undefined, upTo);
  if (covered.length > 0) addStats(storage, tenant, documentChanges(covered).stats, sign);
}

/** What a batch of documents adds to an index: each term's postings, in document order, and the statistics. */
export interface DocumentChanges {
  byTerm: Map<string, Posting[]>;
  stats: CollectionStats;
}

/**
 * The positions of a field a posting's term is not in: one array for all of them (most words of a record
 * are in its body alone, and a merge makes a posting per word and record), frozen so that nothing adds to it.
 */
const NO_POSITIONS = Object.freeze([]) as readonly number[] as number[];

/**
 * Analyzes documents into what they add to an index. The postings go straight into their terms' lists
 * (a merge analyzes thousands of documents at once); documents given in ascending order need no sort.
 */
export function documentChanges(documents: readonly SearchDocument[]): DocumentChanges {
  const stats: CollectionStats = { docs: 0, titleWords: 0, bodyWords: 0 };
  const byTerm = new Map<string, Posting[]>();
  let ascending = true;
  let previous = 0;
  for (const document of documents) {
    checkDocumentNumber(document.doc);
    if (document.doc === previous) throw new Error(`document ${document.doc} is given twice`);
    if (document.doc < previous) ascending = false;
    previous = document.doc;
    const { terms: title, wholes: titleWholes } = analyzeField(document.title, MAX_FIELD_WORDS);
    const { terms: body, wholes: bodyWholes } = analyzeField(document.body, MAX_FIELD_WORDS);
    stats.docs++;
    stats.titleWords += title.length;
    stats.bodyWords += body.length;
    const posting = (term: string): Posting => {
      let list = byTerm.get(term);
      if (!list) byTerm.set(term, (list = []));
      let p = list.at(-1);
      if (p?.doc !== document.doc) list.push((p = { doc: document.doc, posT: NO_POSITIONS, posB: NO_POSITIONS, lenT: title.length, lenB: body.length }));
      return p;
    };
    const inTitle = (term: string, position: number) => {
      const p = posting(term);
      if (p.posT === NO_POSITIONS) p.posT = [position];
      else p.posT.push(position);
    };
    const inBody = (term: string, position: number) => {
      const p = posting(term);
      if (p.posB === NO_POSITIONS) p.posB = [position];
      else p.posB.push(position);
    };
    for (let i = 0; i < title.length; i++) inTitle(title[i]!, i);
    for (let i = 0; i < body.length; i++) inBody(body[i]!, i);
    // Identifiers whole: at their first word's position, adding none (analyzer.ts); never a word's term.
    for (const { position, term } of titleWholes) inTitle(term, position);
    for (const { position, term } of bodyWholes) inBody(term, position);
  }
  if (!ascending) for (const postings of byTerm.values()) postings.sort((a, b) => a.doc - b.doc);
  return { byTerm, stats };
}

/**
 * Merges terms of a batch of documents, all above the storage's merge mark and up to `upTo`, into a tenant's
 * index: for each term, the postings of documents above the term's own merge mark (TermHead.merged) are
 * added, and the mark is set to `upTo`. A batch may be merged in several steps (transactions), a few terms
 * each: a search then finds every term whole, in the index or in the tail. Merging a term again is a no-op,
 * so a merge cut short resumes from the start of its batch. The statistics go in with `addStats` once, in
 * the step that moves the storage's merge mark to `upTo`.
 */
export function mergeTerms(storage: PostingStorage, tenant: string, terms: Iterable<[string, Posting[]]>, upTo: number, ranking: Bm25Params = DEFAULT_RANKING): void {
  for (const [term, postings] of terms) new TermWriter(storage, tenant, term, ranking).change(postings, +1, upTo);
}

/** Adds (or with -1 removes) documents' statistics to a tenant's. */
export function addStats(storage: PostingStorage, tenant: string, change: CollectionStats, sign: 1 | -1 = 1): void {
  const stats: CollectionStats = storage.stats(tenant) ?? { docs: 0, titleWords: 0, bodyWords: 0 };
  stats.docs += sign * change.docs;
  stats.titleWords += sign * change.titleWords;
  stats.bodyWords += sign * change.bodyWords;
  if (stats.docs < 0) throw new Error("the index's document count went below zero");
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
  /** The title weight the metas' impacts are kept for. */
  private readonly impactWeight: number;

  constructor(
    private readonly storage: PostingStorage,
    private readonly tenant: string,
    private readonly term: string,
    ranking: Bm25Params,
  ) {
    this.impactWeight = ranking.titleWeight;
    this.head = storage.head(tenant, term) ?? { df: 0, sealedLast: 0, merged: 0, open: new Uint8Array(0) };
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

  /**
   * Adds or removes the postings. With `mergedTo`, only those above the term's merge mark, which then moves
   * there; with `coveredBy` (the storage's merge mark), only those the term's part of the index reaches.
   */
  change(postings: readonly Posting[], sign: 1 | -1, mergedTo?: number, coveredBy?: number): void {
    const reach = coveredBy === undefined ? Infinity : Math.max(coveredBy, this.head.merged);
    const fresh = postings.filter((p) => (mergedTo === undefined || p.doc > this.head.merged) && p.doc <= reach);
    if (fresh.length === 0 && (mergedTo === undefined || mergedTo <= this.head.merged)) return;
    if (sign > 0 && this.appendsAll(fresh)) {
      // The usual case: every posting comes after the term's last one (a merge, a new record). They go onto
      // the encoded open block by copying bytes, without decoding it.
      this.openBytes = appendPostings(this.openBytes, fresh);
      this.head.df += fresh.length;
    } else if (sign > 0) {
      for (const posting of fresh) this.add(posting);
    } else {
      this.removeAll(fresh.map((p) => p.doc));
    }
    if (mergedTo !== undefined) this.head.merged = Math.max(this.head.merged, mergedTo);
    this.seal();
    this.save();
  }

  /** Whether `postings` (in order) all come after the term's last posting, its open block still encoded. */
  private appendsAll(postings: readonly Posting[]): boolean {
    if (this.openList || postings.length === 0) return false;
    const last = blockCount(this.openBytes) === 0 ? this.head.sealedLast : blockLastDoc(this.openBytes);
    return postings[0]!.doc > last;
  }

  private add(posting: Posting): void {
    if (posting.doc > this.head.sealedLast) insertSorted(this.open, posting);
    else this.changeSealed(posting.doc, (list) => insertSorted(list, posting));
    this.head.df++;
  }

  /**
   * Removes the documents' postings: those of one sealed block in one rewrite of it, however many they are
   * (a forget removes many documents at once), the blocks from the last to the first so that a block that
   * empties and leaves the list moves none still to be rewritten.
   */
  private removeAll(docs: readonly number[]): void {
    const bySealed = new Map<number, number[]>();
    for (const doc of docs) {
      if (doc > this.head.sealedLast) {
        if (removeSorted(this.open, doc)) this.head.df--;
        continue;
      }
      const i = firstAtOrAfter(this.loadMetas(), doc);
      let group = bySealed.get(i);
      if (!group) bySealed.set(i, (group = []));
      group.push(doc);
    }
    for (const i of [...bySealed.keys()].sort((a, b) => b - a)) {
      const removed = this.changeSealedAt(i, (list) => bySealed.get(i)!.filter((doc) => removeSorted(list, doc)).length);
      this.head.df -= removed;
    }
  }

  /** Applies `edit` to the sealed block that covers `doc`, splitting it when it grew to twice the block size. */
  private changeSealed<T>(doc: number, edit: (postings: Posting[]) => T): T {
    return this.changeSealedAt(firstAtOrAfter(this.loadMetas(), doc), edit);
  }

  /** Applies `edit` to the i-th sealed block. */
  private changeSealedAt<T>(i: number, edit: (postings: Posting[]) => T): T {
    const metas = this.loadMetas();
    const meta = metas[i]!;
    const scores = this.storage.block(this.tenant, this.term, meta.last);
    const positions = this.storage.positions(this.tenant, this.term, meta.last);
    if (!scores || !positions) throw new Error(`the index is missing a block of "${this.term}"`);
    const postings = blockPostings(decodeSealed({ scores, positions }));
    const result = edit(postings);
    this.storage.setBlock(this.tenant, this.term, meta.last, null);
    const parts = postings.length > 2 * BLOCK_SIZE ? [postings.slice(0, BLOCK_SIZE), postings.slice(BLOCK_SIZE)] : postings.length > 0 ? [postings] : [];
    for (const part of parts) this.storage.setBlock(this.tenant, this.term, part.at(-1)!.doc, encodeSealed(part));
    metas.splice(i, 1, ...parts.map((part) => metaOf(part, this.impactWeight)));
    this.metasChanged = true;
    this.head.sealedLast = metas.at(-1)?.last ?? 0;
    return result;
  }

  /** Seals full blocks off the front of the open block. */
  private seal(): void {
    if (this.openCount < BLOCK_SIZE) return;
    if (!this.openList) {
      // Still encoded: the blocks are cut from its bytes.
      const count = blockCount(this.openBytes);
      let start = 0;
      if (count - start >= BLOCK_SIZE) {
        const open = decodeBlock(this.openBytes);
        for (; count - start >= BLOCK_SIZE; start += BLOCK_SIZE) this.sealSealed(metaOfBlock(open, this.impactWeight, start, start + BLOCK_SIZE), encodeSealedSlice(open, start, start + BLOCK_SIZE));
      }
      this.openBytes = sliceBlock(this.openBytes, start, count);
      return;
    }
    const open = this.open;
    let start = 0;
    for (; open.length - start >= BLOCK_SIZE; start += BLOCK_SIZE) this.sealPart(open.slice(start, start + BLOCK_SIZE));
    this.openList = open.slice(start);
  }

  /** Stores postings (above every sealed one) as a new sealed block, with its meta. */
  private sealPart(part: Posting[]): void {
    this.sealSealed(metaOf(part, this.impactWeight), encodeSealed(part));
  }

  private sealSealed(meta: BlockMeta, block: SealedBlock): void {
    this.storage.setBlock(this.tenant, this.term, meta.last, block);
    this.loadMetas().push(meta);
    this.metasChanged = true;
    this.head.sealedLast = meta.last;
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
    this.storage.setHead(this.tenant, this.term, { df: this.head.df, sealedLast: this.head.sealedLast, merged: this.head.merged, open });
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
