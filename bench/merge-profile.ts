/**
 * What the merge costs a record, alone, in this process: `npx tsx bench/merge-profile.ts [--base FILE]
 * [--records N] [--batch N]`. It copies the database `--base` (e.g. the million-record one bench/engine-
 * profile.ts keeps; without it, a fresh database), writes N records of the benchmark corpus's text into its
 * biggest tenant through the record store with no merge running, then merges them as the server's merge
 * thread does (SearchMerge.next, batches of `--batch`, the policy's largest by default), timing the reading
 * and analysis of each batch apart from the writing of its terms (`--pragma` sets a pragma on the merge's
 * connection first, to try one). Run it under `node --cpu-prof` (through
 * `npx tsx`, the profile is of the whole process) to see where a merge's time goes. The copy is removed.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import { SearchMerge } from '../shared/adapters/local/search-merge.js';
import { DEFAULT_MERGE_POLICY } from '../shared/adapters/local/search-merge-policy.js';
import type { SearchMerger } from '../shared/adapters/local/search-merger.js';
import { newRecord } from '../shared/domain/record.js';
import { generateCorpus } from './corpus.js';
import { note } from './support/progress.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    records: { type: 'string', default: '20000' },
    batch: { type: 'string', default: String(DEFAULT_MERGE_POLICY.maxDocs) },
    // e.g. --pragma cache_size=-262144: set on the merge's connection before it merges, to try a setting.
    pragma: { type: 'string', multiple: true, default: [] },
    // --keep FILE: after writing, keep the database (records waiting, none merged) at FILE and stop; a later
    // run with --base FILE --records 0 merges just those, without writing them again.
    keep: { type: 'string' },
  },
});
const total = Number(values.records);
const batch = Number(values.batch);
if (!Number.isInteger(total) || total < 0 || !Number.isInteger(batch) || batch < 1) throw new Error('--records must be an integer of at least 0, --batch a positive integer');

const dir = mkdtempSync(join(tmpdir(), 'memory-merge-profile-'));
const file = join(dir, 'memory.db');
try {
  if (values.base) {
    note(`copying ${values.base}`);
    copyFileSync(values.base, file);
  }
  // No merge while the records are written: they wait above the mark, as a burst of writes leaves them.
  const idle: SearchMerger = { wake: () => undefined, close: async () => undefined };
  const adapters = openSqliteAdapters(file, { merger: () => idle });
  const { db, keys, records } = adapters;
  const biggest = db.prepare('SELECT tenant FROM search_tenants ORDER BY docs DESC LIMIT 1').pluck().get() as string | undefined;
  const limits = { recordQuota: 1e9, queryQuota: 1e9, rate: 1e6, burst: 1e6 };
  const tenant = biggest ?? (await keys.createTenant({ name: 'merge-profile', limits })).tenant_id;
  const indexed = (db.prepare('SELECT docs FROM search_tenants WHERE tenant = ?').pluck().get(tenant) as number | undefined) ?? 0;
  if (total > 0) note(`writing ${total} records into a tenant of ${indexed} indexed records`);
  // Another seed than the corpus's default: new text, the same vocabulary and lengths.
  const corpus = generateCorpus({ records: total, seed: 7 });
  const month = new Date().toISOString().slice(0, 7);
  for (let next = corpus.next(); !next.done; next = corpus.next()) {
    await records.create(tenant, newRecord(tenant, next.value.record, new Date()), { recordQuota: limits.recordQuota, month });
  }

  for (const pragma of values.pragma) db.pragma(pragma);
  if (values.keep) {
    adapters.close();
    copyFileSync(file, values.keep);
    note(`kept at ${values.keep}: merge it with --base ${values.keep} --records 0`);
  } else {
    merge(adapters);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Merges every record waiting, as the merge thread does, and prints what a record cost. */
function merge(adapters: ReturnType<typeof openSqliteAdapters>): void {
  const { db } = adapters;
  const indexed = (db.prepare('SELECT max(docs) FROM search_tenants').pluck().get() as number | null) ?? 0;
  const merging = new SearchMerge(db);
  let docs = 0;
  let analysisMs = 0;
  let termsMs = 0;
  const started = performance.now();
  for (;;) {
    const read = performance.now();
    const open = merging.begin(batch);
    if (!open) break;
    const written = performance.now();
    for (let outcome = open.step(); outcome === 'again'; outcome = open.step());
    analysisMs += written - read;
    termsMs += performance.now() - written;
    docs += open.docs;
  }
  const ms = performance.now() - started;
  const us = (x: number) => ((x * 1000) / docs).toFixed(0);
  process.stdout.write(
    `merged ${docs} records into a tenant of ${indexed} indexed in ${(ms / 1000).toFixed(2)} s, batches of ${batch}: ` +
      `${us(ms)} µs a record (${us(analysisMs)} reading and analyzing, ${us(termsMs)} writing the terms)\n`,
  );
  adapters.close();
}
