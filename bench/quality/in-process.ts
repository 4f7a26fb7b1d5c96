/**
 * The judged sets searched by the engine in process (tune.ts, cut-off.ts, identifiers.ts): each set's
 * documents numbered 1..n in file order, and a query's record filters as the engine's filter clause.
 */
import type { Filter } from '../../shared/search/filter.js';
import type { PostingStorage } from '../../shared/search/storage.js';
import { addDocuments } from '../../shared/search/writer.js';
import type { QualityDoc, QualityQuery } from './sets.js';

/** Indexes `docs` as `tenant`'s documents 1..n, in file order. */
export function indexDocs(storage: PostingStorage, tenant: string, docs: readonly QualityDoc[]): void {
  addDocuments(storage, tenant, docs.map((d, i) => ({ doc: i + 1, title: d.title, body: d.body })));
}

/** The record filters of a query, as the engine's filter clause over document numbers (1..n in file order). */
export function filterOf(docs: readonly QualityDoc[], filters: QualityQuery['filters']): Filter | undefined {
  const entries = Object.entries(filters).filter(([, v]) => v !== undefined && v !== null) as [keyof QualityDoc, string][];
  if (entries.length === 0) return undefined;
  return { matches: (doc) => entries.every(([field, value]) => docs[doc - 1]![field] === value) };
}
