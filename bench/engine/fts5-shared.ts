/**
 * `fts5-shared`: today's design (shared/adapters/local), text search only. One contentless FTS5 table for
 * every tenant, `records_fts(title, body, tenant)`, whose `tenant` column holds one token per record; a
 * search matches `tenant : "<token>" AND {title body} : (<terms and phrases OR-ed>)` and ranks with
 * FTS5's bm25(), title 4, body 1, tenant 0. The query is the inner, ranking step of search-index.ts (it
 * ranks rowids only); its second step, reading the k rows from `records`, is left out as for every design.
 *
 * bm25() here is FTS5's: IDF log((N − n + 0.5)/(n + 0.5)) floored at 1e-6, N and n counted over ALL
 * tenants' records, and the document length counted over title, body and the tenant token, unweighted.
 *
 * The service is moving off FTS5 (shared/search), so the table, the MATCH expression and the query are
 * copied here from commit 2b5c589 (shared/adapters/local/database.ts, fts-query.ts, rows.ts,
 * search-index.ts), word for word where it matters.
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../shared/adapters/local/database.js';
import { isEmptyQuery, searchableText, type ParsedQuery } from '../../shared/domain/query-parse.js';
import { LOAD_BATCH, type EngineDesign, type EngineDoc, type ScoredSeq } from './design.js';
import { closeDesignDatabase, FTS5_TOKENIZE, openDesignDatabase } from './sqlite.js';

/** bm25() column weights for (title, body, tenant): a title match weighs four times a body match. */
const BM25_WEIGHTS = { title: 4, body: 1 } as const;

/** The single FTS token that stands for a tenant in the `tenant` column of `records_fts` (rows.ts). */
export function tenantToken(tenantId: string): string {
  return 't' + tenantId.replace(/[^0-9a-zA-Z]/g, '').toLowerCase();
}

/** An FTS5 string literal: the text in double quotes, inner quotes doubled. FTS5 reads it as plain text. */
function literal(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/** The MATCH expression of one tenant's search (fts-query.ts): its token AND any term or phrase in title or body. */
function ftsMatchExpression(token: string, query: ParsedQuery): string {
  const clauses = [...query.phrases.map((words) => literal(words.join(' '))), ...query.terms.map(literal)];
  return `tenant : ${literal(token)} AND {title body} : (${clauses.join(' OR ')})`;
}

export class Fts5SharedDesign implements EngineDesign {
  readonly name = 'fts5-shared';
  readonly description =
    "one contentless FTS5 table records_fts(title, body, tenant) for all tenants, tenant token AND'ed into the MATCH; " +
    '-bm25(records_fts, 4, 1, 0) over global statistics, ORDER BY score DESC, seq DESC LIMIT k (search-index.ts)';

  private db: Db | null = null;
  private ranked: Statement | null = null;

  open(dir: string): void {
    const db = (this.db = openDesignDatabase(dir, 'fts5-shared.sqlite'));
    // As in database.ts's first migration.
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
      title, body, tenant,
      content = '', contentless_delete = 1,
      tokenize = '${FTS5_TOKENIZE}'
    )`);
    this.ranked = db.prepare(
      `SELECT rowid AS seq, -bm25(records_fts, ${BM25_WEIGHTS.title}, ${BM25_WEIGHTS.body}, 0) AS score
       FROM records_fts WHERE records_fts MATCH @match
       ORDER BY score DESC, seq DESC LIMIT @limit`,
    );
  }

  load(docs: Iterable<EngineDoc>, onProgress?: (loaded: number) => void): void {
    const db = this.db!;
    // As record-store.ts writes it: the searchable (NFKC) title and body, and the tenant's token.
    const insert = db.prepare('INSERT INTO records_fts (rowid, title, body, tenant) VALUES (?, ?, ?, ?)');
    const tokens = new Map<string, string>();
    let batch: EngineDoc[] = [];
    let loaded = 0;
    const flush = db.transaction((rows: EngineDoc[]) => {
      for (const d of rows) {
        let token = tokens.get(d.tenant);
        if (token === undefined) tokens.set(d.tenant, (token = tenantToken(d.tenant)));
        insert.run(d.seq, searchableText(d.title), searchableText(d.body), token);
      }
    });
    const commit = () => {
      flush(batch);
      loaded += batch.length;
      batch = [];
      onProgress?.(loaded);
    };
    for (const doc of docs) {
      batch.push(doc);
      if (batch.length === LOAD_BATCH) commit();
    }
    if (batch.length > 0) commit();
  }

  search(tenant: string, query: ParsedQuery, k: number): ScoredSeq[] {
    if (isEmptyQuery(query)) return [];
    return this.ranked!.all({ match: ftsMatchExpression(tenantToken(tenant), query), limit: k }) as ScoredSeq[];
  }

  close(): void {
    if (this.db) closeDesignDatabase(this.db);
    this.db = null;
  }
}
