/**
 * The engine benchmark's queries: the text kinds of bench/corpus.ts's workload (the question kind among
 * them: whole English questions as an agent asks them, "when did we decide to renew the contract?"), for
 * chosen tenants.
 *
 * Deterministic for (records, seed, perKind, tenants).
 */
import { queryWorkload, tenantsFor, type CorpusOptions, type QueryKind } from '../corpus.js';
import { parseQuery, type ParsedQuery } from '../../shared/domain/query-parse.js';

/** The workload's kinds that search text. Filters and no-q are left out (text only). */
export const TEXT_KINDS = ['one-word', 'multi-word', 'phrase', 'common-words', 'rare-words', 'question'] as const;
export type TextKind = (typeof TEXT_KINDS)[number];

export interface EngineQuery {
  kind: TextKind;
  tenant: string;
  /** The `q` as a caller sends it. */
  q: string;
  parsed: ParsedQuery;
  /** How many results it asks for (`limit`). */
  k: number;
}

/**
 * `perKind` queries of every text kind for each of `tenants`. The corpus kinds come from queryWorkload
 * (bench/corpus.ts), which deals its queries to the tenants in turn: asked for perKind × (number of
 * tenants), it gives each tenant perKind of each kind. `k` is the query's limit, as the workload draws it.
 */
export function engineWorkload(options: CorpusOptions, tenants: readonly string[], perKind: number): EngineQuery[] {
  const all = queryWorkload(options, perKind * tenantsFor(options).length);
  const queries: EngineQuery[] = [];
  for (const kind of TEXT_KINDS) {
    for (const tenant of tenants) {
      const mine = all.filter((b) => b.kind === (kind satisfies QueryKind) && b.tenant === tenant).slice(0, perKind);
      for (const b of mine) {
        const parsed = parseQuery(b.query.q);
        if (parsed === null) continue;
        queries.push({ kind, tenant, q: b.query.q!, parsed, k: b.query.limit ?? 20 });
      }
    }
  }
  return queries;
}
