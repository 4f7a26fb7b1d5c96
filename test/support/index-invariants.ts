import type { Db } from '../../shared/adapters/local/database.js';
import { SqlitePostingStorage } from '../../shared/adapters/local/posting-storage.js';
import { TailCache } from '../../shared/adapters/local/tail-cache.js';
import { RANKING } from '../../shared/domain/rank.js';
import { blockPostings, decodeBlock, type Posting } from '../../shared/search/block.js';
import { decodeMetas, metaOf } from '../../shared/search/metas.js';
import type { CollectionStats } from '../../shared/search/scoring.js';
import { decodeSealed } from '../../shared/search/sealed.js';
import type { SearchDocument } from '../../shared/search/document.js';
import { documentChanges } from '../../shared/search/writer.js';

/**
 * The search index's invariants (shared/adapters/local/search-merge.ts states them), checked against the
 * records table, which is the truth the index is made from. Returns what does not hold, one line each; an
 * empty list when the index is exactly what the records make.
 *
 * For each tenant that has records or index rows:
 * - the index's statistics are those of its records at or below the merge mark, and the index's and the
 *   tail's together those of all its records;
 * - for every term, the postings the index holds (its sealed blocks, each with the meta its postings
 *   make, then its open block) followed by the tail's equal, posting by posting with positions, the
 *   postings its records make; its document frequency counts them; the index part ends at the term's
 *   merge mark (the larger of the storage's and its own) and the tail's begins above it;
 * - the seq counter is at or above every record's seq and every term's merge mark.
 */
export function indexProblems(db: Db): string[] {
  const storage = new SqlitePostingStorage(db);
  const tails = new TailCache(db);
  const check = db.transaction(() => {
    const problems: string[] = [];
    const state = db.prepare('SELECT * FROM search_state').get() as { merged_upto: number; tail_gen: number; last_seq?: number };
    const upTo = state.merged_upto;
    if (state.last_seq !== undefined) {
      const top = db.prepare('SELECT max(coalesce((SELECT max(seq) FROM records), 0), coalesce((SELECT max(merged) FROM search_heads), 0), merged_upto) FROM search_state').pluck().get() as number;
      if (top > state.last_seq) problems.push(`the seq counter ${state.last_seq} is below a seq or merge mark in use (${top})`);
    }
    const tenants = db.prepare('SELECT tenant_id FROM records UNION SELECT tenant FROM search_tenants').pluck().all() as string[];
    const docsOf = db.prepare('SELECT seq AS doc, title, body FROM records WHERE tenant_id = ? ORDER BY seq');
    const termsOf = db.prepare('SELECT term FROM search_heads WHERE tkey = (SELECT key FROM search_tenants WHERE tenant = ?)').pluck();
    for (const tenant of tenants) {
      const say = (what: string) => problems.push(`tenant ${tenant.slice(0, 8)}: ${what}`);
      const docs = docsOf.all(tenant) as SearchDocument[];
      const all = changesOf(docs);
      const merged = changesOf(docs.filter((d) => d.doc <= upTo));
      const tail = tails.tailOf(tenant, upTo, state.tail_gen);
      const indexStats = storage.stats(tenant) ?? ZERO;
      if (!sameStats(indexStats, merged.stats)) say(`index statistics ${JSON.stringify(indexStats)}, its records up to the mark make ${JSON.stringify(merged.stats)}`);
      const together = { docs: indexStats.docs + tail.stats.docs, titleWords: indexStats.titleWords + tail.stats.titleWords, bodyWords: indexStats.bodyWords + tail.stats.bodyWords };
      if (!sameStats(together, all.stats)) say(`index and tail statistics ${JSON.stringify(together)}, its records make ${JSON.stringify(all.stats)}`);
      const terms = new Set([...(termsOf.all(tenant) as string[]), ...all.byTerm.keys()]);
      for (const term of terms) {
        const head = storage.head(tenant, term);
        const reach = Math.max(upTo, head?.merged ?? 0);
        const indexed: Posting[] = [];
        if (head) {
          const metas = decodeMetas(storage.metas(tenant, term) ?? new Uint8Array(0));
          for (const meta of metas) {
            const scores = storage.block(tenant, term, meta.last);
            const positions = storage.positions(tenant, term, meta.last);
            if (!scores || !positions) {
              say(`"${term}" has no block ending at ${meta.last}`);
              continue;
            }
            const postings = blockPostings(decodeSealed({ scores, positions }));
            if (JSON.stringify(metaOf(postings, RANKING.titleWeight)) !== JSON.stringify(meta)) say(`"${term}": the meta of the block ending at ${meta.last} is not its postings'`);
            indexed.push(...postings);
          }
          if ((metas.at(-1)?.last ?? 0) !== head.sealedLast) say(`"${term}": sealed_last ${head.sealedLast}, its last block ends at ${metas.at(-1)?.last ?? 0}`);
          if (head.open.byteLength > 0) indexed.push(...blockPostings(decodeBlock(head.open)));
          if (head.df !== indexed.length) say(`"${term}": df ${head.df}, the index holds ${indexed.length} postings`);
        }
        const beyond = indexed.find((p) => p.doc > reach);
        if (beyond) say(`"${term}": the index holds document ${beyond.doc}, above the term's mark ${reach}`);
        const fromTail = tail.postings(term, reach).flatMap((block) => blockPostings(block));
        const actual = [...indexed, ...fromTail].map(plain);
        const expected = (all.byTerm.get(term) ?? []).map(plain);
        if (JSON.stringify(actual) !== JSON.stringify(expected)) {
          say(`"${term}": index and tail hold documents [${actual.map((p) => p.doc).join(',')}] (${indexed.length} indexed), its records make [${expected.map((p) => p.doc).join(',')}]${sameDocs(actual, expected) ? ' (positions or lengths differ)' : ''}`);
        }
      }
    }
    return problems;
  });
  return check();
}

const ZERO: CollectionStats = { docs: 0, titleWords: 0, bodyWords: 0 };

function changesOf(docs: readonly SearchDocument[]) {
  return docs.length === 0 ? { byTerm: new Map<string, Posting[]>(), stats: ZERO } : documentChanges(docs);
}

function sameStats(a: CollectionStats, b: CollectionStats): boolean {
  return a.docs === b.docs && a.titleWords === b.titleWords && a.bodyWords === b.bodyWords;
}

function plain(p: Posting): Posting {
  return { doc: p.doc, posT: [...p.posT], posB: [...p.posB], lenT: p.lenT, lenB: p.lenB };
}

function sameDocs(a: readonly Posting[], b: readonly Posting[]): boolean {
  return a.length === b.length && a.every((p, i) => p.doc === b[i]!.doc);
}
