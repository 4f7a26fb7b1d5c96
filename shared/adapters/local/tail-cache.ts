import type { Statement } from 'better-sqlite3';
import { EMPTY_TAIL, TenantTail, type Tail } from '../../search/tail.js';
import type { SearchDocument } from '../../search/document.js';
import type { Db } from './database.js';

/**
 * The tails of the tenants a connection searches (search-merge.ts says what a tail is): each tenant's records
 * above the merge mark, analyzed once and kept between searches, so that a search only analyzes the records
 * stored since the last one. Every search checks its tenant's tail against the records table, inside its read
 * transaction, so what it scores is exactly the records above the mark as of that transaction:
 * - records merged since (at or below the mark) are dropped;
 * - new records (above every cached one, as seq only grows) are added;
 * - when a record above the mark was deleted or got a new text (search_state.tail_gen moved), or the count
 *   does not add up, the tenant's tail is built again.
 * At most `maxTenants` tenants are kept, the least recently searched going first.
 */
export class TailCache {
  private readonly tails = new Map<string, { gen: number; tail: TenantTail }>();
  private readonly shape: Statement;
  private readonly above: Statement;

  constructor(
    db: Db,
    private readonly maxTenants = 256,
  ) {
    this.shape = db.prepare('SELECT count(*) AS count FROM records WHERE tenant_id = ? AND seq > ?');
    this.above = db.prepare('SELECT seq AS doc, title, body FROM records WHERE tenant_id = ? AND seq > ? ORDER BY seq');
  }

  /** The tenant's tail above `upTo`, the merge mark, with `gen` the tail generation, both read in the caller's transaction. */
  tailOf(tenant: string, upTo: number, gen: number): Tail {
    const { count } = this.shape.get(tenant, upTo) as { count: number };
    let entry = this.tails.get(tenant);
    this.tails.delete(tenant);
    if (count === 0) return EMPTY_TAIL;
    if (entry && entry.gen === gen) {
      entry.tail.dropThrough(upTo);
      for (const doc of this.above.all(tenant, Math.max(upTo, entry.tail.lastDoc)) as SearchDocument[]) entry.tail.add(doc);
      if (entry.tail.size !== count) entry = undefined;
    } else entry = undefined;
    if (!entry) {
      const tail = new TenantTail();
      for (const doc of this.above.all(tenant, upTo) as SearchDocument[]) tail.add(doc);
      entry = { gen, tail };
    }
    this.tails.set(tenant, entry);
    if (this.tails.size > this.maxTenants) this.tails.delete(this.tails.keys().next().value!);
    return entry.tail;
  }
}
