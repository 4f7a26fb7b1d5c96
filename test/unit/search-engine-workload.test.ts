import { generateCorpus, tenantsFor } from '../../bench/corpus.js';
import { engineWorkload, TEXT_KINDS } from '../../bench/engine/workload.js';
import { searchIndex } from '../../shared/search/searcher.js';
import { MemoryPostingStorage } from '../../shared/search/storage.js';
import type { SearchDocument } from '../../shared/search/document.js';
import { addDocuments } from '../../shared/search/writer.js';
import { oracleSearch } from '../support/search-oracle.js';

/**
 * The engine against its oracle on the benchmark's own corpus and queries (bench/corpus.ts, and the engine
 * benchmark's question kind): every text kind, in the biggest tenant and the smallest, each at the `limit`
 * the workload draws. npm test runs 20 000 records; the engine benchmark checks the same at 1 000 000
 * records against an exhaustive design (bench/engine/README.md, `--reference fts5-per-tenant`).
 */

const OPTIONS = { records: 20_000, seed: 7 };
const PER_KIND = 12;

const byTenant = new Map<string, SearchDocument[]>();
let seq = 0;
for (const { tenant, record } of generateCorpus(OPTIONS)) {
  seq++;
  if (!byTenant.has(tenant)) byTenant.set(tenant, []);
  byTenant.get(tenant)!.push({ doc: seq, title: record.title, body: record.body });
}
const tenants = tenantsFor(OPTIONS).map((t) => t.name);
const measured = [tenants[0]!, tenants.at(-1)!];
const storage = new MemoryPostingStorage();
for (const [tenant, docs] of byTenant) for (let i = 0; i < docs.length; i += 2000) addDocuments(storage, tenant, docs.slice(i, i + 2000));
const workload = engineWorkload(OPTIONS, measured, PER_KIND);

test('the workload has every text kind in both tenants', () => {
  for (const kind of TEXT_KINDS) for (const tenant of measured) expect(workload.filter((q) => q.kind === kind && q.tenant === tenant).length).toBeGreaterThan(0);
});

describe.each(TEXT_KINDS)('%s queries: the pruned top k equals the oracle', (kind) => {
  test.each(measured)('in %s', (tenant) => {
    const docs = byTenant.get(tenant)!;
    for (const query of workload.filter((q) => q.kind === kind && q.tenant === tenant)) {
      const got = searchIndex(storage, tenant, query.parsed, { k: query.k });
      expect({ q: query.q, got }).toEqual({ q: query.q, got: oracleSearch(docs, query.parsed, query.k) });
      // Every query is made of words the tenant has: an empty answer would prove nothing.
      expect({ q: query.q, found: got.length > 0 }).toEqual({ q: query.q, found: true });
    }
  });
});
