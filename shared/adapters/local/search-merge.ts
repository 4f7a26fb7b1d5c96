import type { Statement, Transaction } from 'better-sqlite3';
import { RANKING } from '../../domain/rank.js';
import type { Posting } from '../../search/block.js';
import type { SearchDocument } from '../../search/document.js';
import { addStats, documentChanges, mergeTerms, type DocumentChanges } from '../../search/writer.js';
import type { Db } from './database.js';
import { NEWEST_UPSERT_SQL, newestBlockOf } from './newest.js';
import { SqlitePostingStorage } from './posting-storage.js';
import type { PostingStorage } from '../../search/storage.js';

/**
 * The merge: how stored records get into the search index.
 *
 * A record's write stores the record and nothing else of the index, so that a write costs one row, not a
 * rewrite of every one of its words' postings. The index (shared/search) holds every record up to its merge
 * mark, `search_state.merged_upto`; the records above it are the tail, which every search reads from the
 * records table itself and scores with the index (tail-cache.ts), so a record is found, and counts in every
 * statistic, as soon as its write has returned. A merge takes the records above the mark, a batch at a time
 * in seq order, into the index, and moves the mark. Large batches are what make it cheap: a word's postings
 * are rewritten once per batch instead of once per record.
 *
 * A batch goes in as several steps, each its own short IMMEDIATE transaction, so that the server's writes
 * never wait long for the lock: the terms a step writes carry their own merge mark (TermHead.merged), which
 * tells a search where the index ends and the tail begins for that term, and the last step adds the
 * statistics and moves the mark. A merge cut short anywhere is consistent and resumes from its batch's start.
 *
 * The invariants, which hold between any two transactions (M is `merged_upto`; a term's reach is the larger
 * of M and its own mark; "the records" are the rows of `records`, which are the truth the index is made of):
 * 1. Seq is never given twice. Every new record takes `search_state.last_seq + 1`, which only grows
 *    (triggers on `records`, rows.ts), so a record written after a batch was read, or after a term's mark
 *    moved, is above both: inserts never land inside a batch, a reach or a cached tail.
 * 2. For every tenant and term, the index holds exactly one posting for each of the tenant's records at or
 *    below the term's reach that holds the term, with that record's current text, and nothing else; the
 *    head's `df` counts them. Above the reach, the term's postings are the tail's (read from the records).
 * 3. A term's own mark is above M only for terms a batch under way (or cut short) has written, and only up
 *    to that batch's end, which is at most `last_seq`.
 * 4. `search_tenants` holds each tenant's statistics (documents, title and body words) over its records at
 *    or below M, exactly; with the tail's, over all its records. A tenant's key never changes.
 * 5. `tail_gen` moves whenever a record above M is deleted or gets a new text, in the same transaction, so
 *    that a tail cache or a batch read before it reads again; a change at or below a term's reach is made
 *    to the index itself, term by term (index-changes.ts). New records need no signal (invariant 1).
 * 6. `search_newest` bounds from above, per tenant and block of seq, the `created_at` of the merged records.
 * 7. A record keeps its seq while its text stays; an update that changes the text (SqliteRecordStore.update)
 *    takes the old text out as a delete does (5) and moves the record to a new seq from the counter (the
 *    triggers on `UPDATE OF seq`, rows.ts), so that its new text is tail like a new record's and the old seq
 *    is never given again (1). (The AWS-shaped mode's stream changes a text in place instead, by 2 and 5:
 *    document-index.ts.) The index holds text only: other fields, `superseded_by` among them, change in the
 *    row alone, and a search reads them from there.
 * 8. `block_gen` moves whenever a stored block (search_blocks, search_positions) is rewritten or deleted,
 *    in the same transaction (triggers: posting-storage.ts), so that a search connection's cache of blocks
 *    drops what it keeps. New blocks need no signal: a search reads only the blocks its snapshot lists.
 * test/support/index-invariants.ts checks 1, 2 and 4 against the records; the model-based test
 * (test/model/) checks them after every step of every interleaving it draws, and 8 by the searches of a
 * reader's connection, which keeps blocks between them.
 */
export class SearchMerge {
  private readonly s: Record<'upTo' | 'gen' | 'pending' | 'batch' | 'between' | 'newest', Statement>;

  /** `storage` is the connection's own unless given (the model test gives one that fails part-way, as a crash would). */
  constructor(
    private readonly db: Db,
    private readonly storage: PostingStorage = new SqlitePostingStorage(db),
  ) {
    this.s = {
      upTo: db.prepare('SELECT merged_upto FROM search_state').pluck(),
      gen: db.prepare('SELECT tail_gen FROM search_state').pluck(),
      pending: db.prepare('SELECT count(*) FROM records WHERE seq > (SELECT merged_upto FROM search_state)').pluck(),
      batch: db.prepare('SELECT seq AS doc, tenant_id, title, body, created_at FROM records WHERE seq > ? ORDER BY seq LIMIT ?'),
      between: db.prepare('SELECT seq AS doc, tenant_id, title, body, created_at FROM records WHERE seq > ? AND seq <= ? ORDER BY seq'),
      newest: db.prepare(NEWEST_UPSERT_SQL),
    };
  }

  /** How many records are above the merge mark: a count of them, as long as they are many. */
  pending(): number {
    return this.s.pending.get() as number;
  }

  /**
   * At least as many as pending(), read from one row: the seqs given above the mark (a seq is never given
   * twice, so each record above it has one of them; those deleted or moved by an update count too).
   */
  waitingAtMost(): number {
    // Prepared at first use: a merge may run inside a migration before the one that adds last_seq.
    this.waitingStmt ??= this.db.prepare('SELECT last_seq - merged_upto FROM search_state').pluck();
    return this.waitingStmt.get() as number;
  }

  private waitingStmt: Statement | undefined;

  /**
   * Reads the next batch of at most `maxDocs` records above the mark, in one read transaction; null when
   * none are pending. Nothing is written until its steps run.
   */
  begin(maxDocs: number): MergeBatch | null {
    const read = this.db.transaction(() => {
      const from = this.s.upTo.get() as number;
      return { from, gen: this.s.gen.get() as number, rows: this.s.batch.all(from, maxDocs) as Row[] };
    });
    const { from, gen, rows } = read();
    if (rows.length === 0) return null;
    return new MergeBatch(this.db, this.storage, this.s, from, rows.at(-1)!.doc, rows, gen);
  }

  /**
   * Merges the next batch of at most `maxDocs` records above the mark; returns how many it took in (0 when
   * none are pending, or when it stopped). Each step holds the write lock for about `stepMs` of work at most
   * (unbounded: one step); `stop` is asked between steps, and a batch stopped part-way resumes next time.
   */
  next(maxDocs: number, stepMs = Infinity, stop: () => boolean = () => false): number {
    const batch = this.begin(maxDocs);
    if (!batch) return 0;
    for (;;) {
      const outcome = batch.step({ ms: stepMs });
      // Another process merged this batch first: its statistics are in, and nothing here went in twice.
      if (outcome === 'gone') return 0;
      if (outcome === 'done') return batch.docs;
      if (stop()) return 0;
    }
  }
}

/** How much one step of a batch may do: terms, and milliseconds of work; at least one term, whatever they say. */
export interface StepBudget {
  terms?: number;
  ms?: number;
}

/**
 * One batch of a merge, the records (from, upTo] as they were when it was read, taken into the index in
 * steps (`step`), each its own IMMEDIATE transaction. A step first checks the batch against what changed
 * since it was read: another merge that moved the mark ends it ('gone'); a delete or a new text of one of
 * its records (tail_gen) makes it read its records again and start its terms over (a term written already
 * is skipped by its own mark, and the change itself was applied to it by index-changes.ts). No record can
 * be added inside (from, upTo]: a new seq is above every seq ever given (invariant 1 above).
 */
export class MergeBatch {
  private batch: Batch;
  private next = 0;
  private readonly stepTx: Transaction<(budget: StepBudget) => 'again' | 'gone' | 'done'>;

  constructor(
    db: Db,
    storage: PostingStorage,
    s: Record<'upTo' | 'gen' | 'between' | 'newest', Statement>,
    readonly from: number,
    readonly upTo: number,
    rows: readonly Row[],
    gen: number,
  ) {
    this.batch = batchOf(rows, gen);
    this.stepTx = db.transaction(({ terms = Infinity, ms = Infinity }: StepBudget) => {
      if ((s.upTo.get() as number) !== from) return 'gone';
      const now = s.gen.get() as number;
      if (now !== this.batch.gen) {
        this.batch = batchOf(s.between.all(from, upTo) as Row[], now);
        this.next = 0;
      }
      const all = this.batch.terms;
      const started = performance.now();
      let done = 0;
      do {
        if (this.next === all.length) break;
        const [tenant, term, postings] = all[this.next++]!;
        mergeTerms(storage, tenant, [[term, postings]], upTo, RANKING);
      } while (++done < terms && performance.now() - started < ms);
      if (this.next < all.length) return 'again';
      for (const [tenant, changes] of this.batch.tenants) addStats(storage, tenant, changes.stats);
      for (const [tenant, block, newest] of this.batch.newest) s.newest.run(tenant, block, newest);
      storage.setMergedUpTo(upTo);
      return 'done';
    });
  }

  /** How many records the batch holds (fewer than it was read with once some were deleted). */
  get docs(): number {
    return this.batch.docs;
  }

  /**
   * One step: terms of the batch within `budget`; the last step adds the statistics and moves the mark to
   * `upTo`. 'again' while terms are left, 'done' once the mark has moved, 'gone' when another merge moved it
   * first (nothing more is to be done with this batch).
   */
  step(budget: StepBudget = {}): 'again' | 'gone' | 'done' {
    return this.stepTx.immediate(budget);
  }
}

interface Row extends SearchDocument {
  tenant_id: string;
  created_at: string;
}

/** A batch, analyzed: each tenant's changes, and every (tenant, term, postings) in the order the steps take them. */
interface Batch {
  gen: number;
  docs: number;
  tenants: Map<string, DocumentChanges>;
  terms: [string, string, Posting[]][];
  /** Per tenant and block of seq, the newest `created_at` of the batch's records (search_newest). */
  newest: [string, number, string][];
}

function batchOf(rows: readonly Row[], gen: number): Batch {
  const byTenant = new Map<string, SearchDocument[]>();
  const newest = new Map<string, [string, number, string]>();
  for (const { tenant_id, created_at, ...doc } of rows) {
    let list = byTenant.get(tenant_id);
    if (!list) byTenant.set(tenant_id, (list = []));
    list.push(doc);
    const block = newestBlockOf(doc.doc);
    const key = `${tenant_id}\u0000${block}`;
    const known = newest.get(key);
    if (!known) newest.set(key, [tenant_id, block, created_at]);
    else if (created_at > known[2]) known[2] = created_at;
  }
  const tenants = new Map<string, DocumentChanges>();
  const terms: Batch['terms'] = [];
  for (const [tenant, docs] of byTenant) {
    const changes = documentChanges(docs);
    tenants.set(tenant, changes);
    for (const [term, postings] of changes.byTerm) terms.push([tenant, term, postings]);
  }
  return { gen, docs: rows.length, tenants, terms, newest: [...newest.values()] };
}

/** Records merged per transaction when a large backlog is merged at open. */
export const OPEN_MERGE_BATCH = 5000;

/**
 * At open, merges a backlog of at least `minDocs` records (OPEN_MERGE_BATCH: the upgrade of a database
 * written before the engine, or a server stopped with a large tail) before anything else runs, `batch`
 * records per transaction, with a progress line per batch; a crash resumes after the last batch. A smaller
 * backlog is left to the searches' tail and the next merge.
 */
export function mergeBacklogAtOpen(
  db: Db,
  progress: (line: string) => void,
  { minDocs = OPEN_MERGE_BATCH, batch = OPEN_MERGE_BATCH }: { minDocs?: number; batch?: number } = {},
): void {
  const merge = new SearchMerge(db);
  const total = merge.pending();
  if (total < minDocs) return;
  const started = Date.now();
  let done = 0;
  progress(`building the search index of ${total} records`);
  for (let merged = merge.next(batch); merged > 0; merged = merge.next(batch)) {
    done += merged;
    if (done < total) progress(`search index: ${done} of ${total} records (${Math.round((done / total) * 100)} %)`);
  }
  progress(`search index built: ${done} records in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
