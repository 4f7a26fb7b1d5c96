/**
 * `block-max`: the service's engine (shared/search) on its SQLite storage (shared/adapters/local/
 * posting-storage.ts), as the service uses it: per-tenant statistics, fixed-width posting blocks of 128
 * with block metas, written by `addDocuments`, searched by `searchIndex` (block-max MaxScore, exact top k).
 * The load writes each batch in one transaction, through the same writer a record's write uses.
 */
import type { Db } from '../../shared/adapters/local/database.js';
import { POSTING_TABLES_SQL, SqlitePostingStorage } from '../../shared/adapters/local/posting-storage.js';
import type { ParsedQuery } from '../../shared/domain/query-parse.js';
import { searchIndex } from '../../shared/search/searcher.js';
import type { SearchDocument } from '../../shared/search/document.js';
import { addDocuments } from '../../shared/search/writer.js';
import { LOAD_BATCH, type EngineDesign, type EngineDoc, type ScoredSeq } from './design.js';
import { closeDesignDatabase, openDesignDatabase } from './sqlite.js';

export class BlockMaxDesign implements EngineDesign {
  readonly name = 'block-max';
  readonly description = 'the service engine (shared/search): per-tenant BM25F, 128-posting blocks with block metas in SQLite, block-max MaxScore';
  private db: Db | null = null;
  private storage: SqlitePostingStorage | null = null;

  open(dir: string): void {
    const db = openDesignDatabase(dir, 'engine.db');
    const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_tenants'").get();
    if (!exists) db.exec(POSTING_TABLES_SQL);
    this.db = db;
    this.storage = new SqlitePostingStorage(db);
  }

  load(docs: Iterable<EngineDoc>, onProgress?: (loaded: number) => void): void {
    const db = this.db!;
    const storage = this.storage!;
    let batch: EngineDoc[] = [];
    let loaded = 0;
    const flush = db.transaction((rows: EngineDoc[]) => {
      // One writer call per tenant of the batch, as a group commit of records does.
      const byTenant = new Map<string, SearchDocument[]>();
      for (const d of rows) {
        let list = byTenant.get(d.tenant);
        if (!list) byTenant.set(d.tenant, (list = []));
        list.push({ doc: d.seq, title: d.title, body: d.body });
      }
      for (const [tenant, list] of byTenant) addDocuments(storage, tenant, list);
    });
    for (const doc of docs) {
      batch.push(doc);
      if (batch.length === LOAD_BATCH) {
        flush(batch);
        loaded += batch.length;
        batch = [];
        onProgress?.(loaded);
      }
    }
    if (batch.length > 0) {
      flush(batch);
      onProgress?.(loaded + batch.length);
    }
  }

  search(tenant: string, query: ParsedQuery, k: number): ScoredSeq[] {
    return searchIndex(this.storage!, tenant, query, { k }).map((h) => ({ seq: h.doc, score: h.score }));
  }

  close(): void {
    if (this.db) closeDesignDatabase(this.db);
    this.db = null;
    this.storage = null;
  }
}
