import type { MemoryClient } from '../../sdk/src/index.js';
import type { PostgresPeer } from '../peers/postgres-peer.js';
import { summarize, type QualitySummary } from './metrics.js';
import type { QualityDoc, QualityQuery, QualitySet } from './sets.js';

export interface QualityResult extends QualitySummary {
  set: string;
  /** The queries no document is relevant to: how many there are, and how many returned something anyway. */
  noAnswer: { queries: number; returnedSomething: number };
}

/** Runs every query of a set through `search` (ids of the set's documents, best first, at most 100) and scores it. */
export async function scoreSet(set: QualitySet, search: (query: QualityQuery) => Promise<string[]>): Promise<QualityResult> {
  const runs = [];
  let noAnswer = 0;
  let returnedSomething = 0;
  for (const query of set.queries) {
    const ranking = await search(query);
    const judgments = set.qrels.get(query.qid) ?? new Map<string, number>();
    if (![...judgments.values()].some((g) => g > 0)) {
      noAnswer++;
      if (ranking.length > 0) returnedSomething++;
    }
    runs.push({ ranking, judgments });
  }
  return { set: set.name, ...summarize(runs), noAnswer: { queries: noAnswer, returnedSomething } };
}

/**
 * Loads a set's documents through the real write path (`POST /api/v1/record`, eight at a time), and returns
 * the search that runs its queries through the real query path (`GET /api/v1/query`, limit 100).
 */
export async function loadThroughApi(client: MemoryClient, set: QualitySet): Promise<(query: QualityQuery) => Promise<string[]>> {
  const docOf = new Map<string, string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < set.docs.length) {
        const doc: QualityDoc = set.docs[next++]!;
        const { id, ...record } = doc;
        const receipt = await client.remember(record);
        docOf.set(receipt.id, id);
      }
    }),
  );
  return async (query) => {
    const hits = await client.recall({ q: query.q, ...query.filters, limit: 100 });
    return hits.map((h) => docOf.get(h.id)!);
  };
}

/**
 * Loads a set's documents into the PostgreSQL peer, in a tenant of their own, and returns the search that
 * runs its queries there (limit 100), as `loadThroughApi` does for the service.
 */
export async function loadIntoPeer(peer: PostgresPeer, set: QualitySet, createdAt: string): Promise<(query: QualityQuery) => Promise<string[]>> {
  const tenant = `quality-${set.name}`;
  await peer.load(set.docs.map((d) => ({ tenant, id: d.id, agent_id: d.agent_id, type: d.type, title: d.title, body: d.body, client: d.client, created_at: createdAt })));
  return (query) => peer.search(tenant, { q: query.q, ...query.filters, limit: 100 });
}
