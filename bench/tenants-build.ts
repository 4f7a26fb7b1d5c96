/**
 * The tenants benchmark's data directories: tenants and keys made as the admin CLI makes them, records
 * loaded through the service's own store, classified or not, and merged into the search index.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClassifierWorker } from '../functions/classifier/handler.js';
import { JobLoop } from '../local/job-loop.js';
import { createTenantWithKey } from '../local/tenants.js';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import type { InlineMerger } from '../shared/adapters/local/search-merger.js';
import { defaultClassifier } from '../shared/classifiers/default.js';
import { quotaMonth } from '../shared/domain/quota-month.js';
import { newRecord } from '../shared/domain/record.js';
import { generateCorpus } from './corpus.js';
import { progress } from './support/progress.js';

/** High enough never to shape the measurement (as bench/support/tenants.ts sets them). */
const LIMITS = { recordQuota: 1_000_000_000, queryQuota: 1_000_000_000, rate: 1_000_000, burst: 1_000_000 };

/** A tenant of a built directory, with its key. */
export interface Tenant {
  id: string;
  key: string;
  /** Some of its records' titles, to draw queries from. */
  titles: string[];
  /** True for the one big tenant of the filler database, which the searches leave out. */
  big?: boolean;
}

/** A data directory built, with its tenants and how long the load took. */
export interface Built {
  label: string;
  dir: string;
  tenants: Tenant[];
  records: number;
  loadSeconds: number;
  classifySeconds: number;
}

/**
 * A new data directory with `groups` of tenants: `count` tenants of `perTenant` records each. Records are
 * written round-robin over the tenants, as writes of many tenants arrive interleaved. Without `classify`
 * the classification jobs the writes queued are dropped instead of run.
 */
export async function build(
  label: string,
  groups: { count: number; perTenant: number; big?: boolean }[],
  seed: number,
  { classify }: { classify: boolean },
): Promise<Built> {
  const dir = mkdtempSync(join(tmpdir(), 'memory-tenants-'));
  const adapters = openSqliteAdapters(join(dir, 'memory.db'));
  adapters.db.pragma('synchronous = OFF');
  const tenants: Tenant[] = [];
  const plan: { tenant: Tenant; records: number }[] = [];
  const total = groups.reduce((sum, g) => sum + g.count, 0);
  const tenantBar = progress(`${label}: tenants and keys`, total);
  let n = 0;
  for (const group of groups) {
    for (let i = 0; i < group.count; i += 1000) {
      // 1000 tenants a transaction: the same statements as the admin CLI's, fewer commits.
      adapters.db.exec('BEGIN');
      for (let j = i; j < Math.min(group.count, i + 1000); j++) {
        const issued = await createTenantWithKey(adapters.keys, `tenant-${String(n++).padStart(6, '0')}${group.big ? '-big' : ''}`, LIMITS);
        const tenant: Tenant = { id: issued.tenant_id, key: issued.api_key, titles: [], ...(group.big ? { big: true } : {}) };
        tenants.push(tenant);
        plan.push({ tenant, records: group.perTenant });
      }
      adapters.db.exec('COMMIT');
      tenantBar.tick(Math.min(1000, group.count - i));
    }
  }
  tenantBar.finish();

  // Round-robin: record k goes to the k-th tenant that still needs records, cycling.
  const records = plan.reduce((sum, p) => sum + p.records, 0);
  const order: Tenant[] = [];
  const left = plan.map((p) => p.records);
  for (let round = 0; order.length < records; round++) {
    for (let t = 0; t < plan.length; t++) if (left[t]! > 0) (left[t]!--, order.push(plan[t]!.tenant));
  }
  const month = quotaMonth(new Date());
  const corpus = generateCorpus({ records, seed });
  const bar = progress(`${label}: loading ${records} records through SqliteRecordStore.create`, records);
  const started = performance.now();
  const at = Date.now() - records;
  const CHUNK = 512;
  for (let i = 0; i < records; i += CHUNK) {
    const writes: Promise<unknown>[] = [];
    for (let k = i; k < Math.min(records, i + CHUNK); k++) {
      const tenant = order[k]!;
      const { record } = corpus.next().value!;
      if (tenant.titles.length < 5) tenant.titles.push(record.title);
      writes.push(adapters.records.create(tenant.id, newRecord(tenant.id, record, new Date(at + k)), { recordQuota: LIMITS.recordQuota, month }));
    }
    await Promise.all(writes);
    bar.tick(writes.length);
  }
  const loadSeconds = (performance.now() - started) / 1000;
  bar.finish(`${Math.round(records / loadSeconds)} records/s`);

  // The classification the server's job loop would otherwise do while it is being measured.
  const classifyStarted = performance.now();
  if (!classify) adapters.db.exec('DELETE FROM classification_jobs');
  const backlog = adapters.jobs.backlog();
  const classifyBar = progress(`${label}: classifying through the classifier worker`, backlog);
  const logger = new Logger({ serviceName: 'memory', logLevel: 'ERROR' });
  const loop = new JobLoop({
    jobs: adapters.jobs,
    worker: createClassifierWorker({ records: adapters.records, classifier: defaultClassifier, logger }),
    logger,
    pollMs: 1,
    batchSize: 500,
  });
  for (let last = backlog; last > 0; ) {
    await loop.pass();
    const now = adapters.jobs.backlog();
    classifyBar.tick(last - now);
    if (now === last) throw new Error(`classification made no progress (${now} jobs left)`);
    last = now;
  }
  const classifySeconds = (performance.now() - classifyStarted) / 1000;
  classifyBar.finish();
  // Every record in the search index, as the server's merge thread leaves it a second after the last write.
  (adapters.merger as InlineMerger).mergeAll();
  adapters.db.pragma('wal_checkpoint(TRUNCATE)');
  adapters.close();
  return { label, dir, tenants, records, loadSeconds, classifySeconds };
}
