import type { Db } from './database.js';
import { SqlitePostingStorage } from './posting-storage.js';
import { addDocuments, type SearchDocument } from '../../search/writer.js';

/** Records indexed per transaction while building: each batch commits, so a crash resumes after the last one. */
const BUILD_BATCH = 5000;

/**
 * Builds the search index of the records that a migration left unindexed (search_build holds the next
 * record to index): the upgrade of a database written before the engine of shared/search. Resumable: each
 * batch commits with its place, so a crash resumes where it stopped. `progress` gets a line now and then.
 */
export function buildPendingSearchIndex(db: Db, progress: (line: string) => void = () => undefined): void {
  const next = db.prepare('SELECT next_seq FROM search_build').pluck();
  let from = next.get() as number | undefined;
  if (from === undefined) return;
  const total = db.prepare('SELECT count(*) FROM records WHERE seq >= ?').pluck().get(from) as number;
  const storage = new SqlitePostingStorage(db);
  const batchOf = db.prepare<[number, number], SearchDocument & { tenant_id: string }>(
    'SELECT seq AS doc, tenant_id, title, body FROM records WHERE seq >= ? ORDER BY seq LIMIT ?',
  );
  const advance = db.prepare('UPDATE search_build SET next_seq = ?');
  const finish = db.prepare('DELETE FROM search_build');
  const step = db.transaction((rows: (SearchDocument & { tenant_id: string })[]) => {
    const byTenant = new Map<string, SearchDocument[]>();
    for (const { tenant_id, ...doc } of rows) {
      let list = byTenant.get(tenant_id);
      if (!list) byTenant.set(tenant_id, (list = []));
      list.push(doc);
    }
    for (const [tenant, docs] of byTenant) addDocuments(storage, tenant, docs);
    if (rows.length < BUILD_BATCH) finish.run();
    else advance.run(rows.at(-1)!.doc + 1);
  });
  const started = Date.now();
  let done = 0;
  progress(`building the search index of ${total} records`);
  for (;;) {
    const rows = batchOf.all(from, BUILD_BATCH);
    step.immediate(rows);
    done += rows.length;
    if (rows.length < BUILD_BATCH) break;
    from = rows.at(-1)!.doc + 1;
    progress(`search index: ${done} of ${total} records (${Math.round((done / total) * 100)} %)`);
  }
  progress(`search index built: ${done} records in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
