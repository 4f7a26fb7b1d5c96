/**
 * `npm run bench:forget [-- --records 100000]`: how long a forget of a whole large set of one tenant's
 * records takes on SQLite, and how long it makes another tenant's writes and searches wait meanwhile.
 *
 * One tenant gets `--records` records of the benchmark corpus's text (written through the record store, as
 * the server writes them, with the server's merge thread), then forgets every one of them with one call,
 * while a second tenant writes and searches without pause, four at a time. Prints JSON: the forget's wall
 * time and rate, and the other tenant's latencies during it (p50, p99, max).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import { ThreadMerger } from '../shared/adapters/local/search-merger.js';
import { parseQuery } from '../shared/domain/query-parse.js';
import { newRecord } from '../shared/domain/record.js';
import { generateCorpus } from './corpus.js';
import { note, progress } from './support/progress.js';
import { percentile } from './support/stats.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '100000' } } });
const total = Number(values.records);
if (!Number.isInteger(total) || total < 1) throw new Error('--records must be a positive integer');

const dir = mkdtempSync(join(tmpdir(), 'memory-bench-forget-'));
const file = join(dir, 'memory.db');
const adapters = openSqliteAdapters(file, { merger: () => new ThreadMerger(file, () => undefined) });
const { records, keys, search } = adapters;
const limits = { recordQuota: 10_000_000, queryQuota: 10_000_000, rate: 1000, burst: 1000 };
const month = '2026-11';

try {
  const big = (await keys.createTenant({ name: 'big', limits })).tenant_id;
  const other = (await keys.createTenant({ name: 'other', limits })).tenant_id;

  const loading = progress(`writing ${total} records`, total);
  const corpus = generateCorpus({ records: total });
  const writers = Array.from({ length: 64 }, async () => {
    for (let next = corpus.next(); !next.done; next = corpus.next()) {
      await records.create(big, newRecord(big, next.value.record, new Date()), { recordQuota: limits.recordQuota, month });
      loading.tick();
    }
  });
  await Promise.all(writers);
  loading.finish();
  note('waiting for the merge thread to take the records into the index');
  const merged = () => adapters.db.prepare('SELECT merged_upto >= (SELECT max(seq) FROM records) FROM search_state').pluck().get() === 1;
  while (!merged()) await new Promise((resolve) => setTimeout(resolve, 200));

  // The other tenant's work, timed, until the forget is done.
  const writes: number[] = [];
  const searches: number[] = [];
  let forgetting = true;
  const otherTenant = Array.from({ length: 4 }, async (_, lane) => {
    for (let i = 0; forgetting; i++) {
      const started = performance.now();
      if ((i + lane) % 2 === 0) {
        await records.create(other, newRecord(other, { agent_id: 'a', type: 'fact', title: `note ${i}`, body: 'while the forget runs' }, new Date()), {
          recordQuota: limits.recordQuota,
          month,
        });
        writes.push(performance.now() - started);
      } else {
        await search.search(other, { text: parseQuery('note forget'), limit: 10 });
        searches.push(performance.now() - started);
      }
    }
  });

  note(`forgetting ${total} records of one tenant`);
  const started = performance.now();
  const outcome = await records.forget(big, { type: undefined, before: '2100-01-01T00:00:00.000Z' }, { dryRun: false, at: new Date() });
  const forgetMs = performance.now() - started;
  forgetting = false;
  await Promise.all(otherTenant);

  const summary = (ms: number[]) => {
    const sorted = [...ms].sort((a, b) => a - b);
    const round = (x: number) => Math.round(x * 10) / 10;
    return { count: sorted.length, p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted.at(-1) ?? 0) };
  };
  const left = await records.list(big, { filters: {}, order: 'asc', limit: 1 });
  console.log(
    JSON.stringify(
      {
        records: total,
        forget: { ...outcome, seconds: Math.round(forgetMs / 100) / 10, perSecond: Math.round((total / forgetMs) * 1000), left: left.length },
        otherTenantDuringForget: { writes: summary(writes), searches: summary(searches) },
      },
      null,
      2,
    ),
  );
} finally {
  await adapters.merger.close();
  adapters.close();
  rmSync(dir, { recursive: true, force: true });
}
