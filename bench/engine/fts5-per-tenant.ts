/**
 * `fts5-per-tenant`: one contentless FTS5 table per tenant (title, body; the service's tokenizer), with the
 * tenant's own statistics beside it, and BM25 computed in JS with the project's ranking function
 * (shared/search/scoring.ts: Lucene's IDF ln(1 + (N − n + 0.5)/(n + 0.5)), k1 1.2, b 0.75, the title's
 * term count weighed 4 before saturation, document length 4·title + body against the tenant's average).
 * A phrase weighs the sum of its words' IDFs (Lucene's PhraseQuery), as shared/search/searcher.ts does: on
 * the benchmark's queries the two rank identically, scores equal to the bit. Every matching document is
 * scored: the design cannot prune.
 *
 * FTS5 stores, matches and counts; JS ranks. better-sqlite3 cannot register an FTS5 auxiliary function, so
 * a row's term frequencies must come out of FTS5 another way. Two ways, both exact, and their mix:
 *
 * - `instance`: the table's fts5vocab 'instance' view, WHERE term = ?: one row per occurrence, plucked as
 *   one number (doc and column, plus the offset for a phrase), counted in JS; a phrase is checked on the
 *   offsets. Cheap per row (about 0.13 µs into JS), but a row per occurrence, so a phrase with a common
 *   word ("the") reads every occurrence of that word.
 * - `bm25`: one MATCH per clause (a term or a phrase, as an FTS5 literal) selecting rowid, bm25(t, 1, 0)
 *   and bm25(t, 0, 1). With one phrase in the MATCH, FTS5's bm25 is s = idf · f · (k1 + 1) / (f + c),
 *   c = k1 · (1 − b + b · D / avgdl), f the phrase's count in the column weighed 1, D the row's length; idf
 *   (from the number of rows returned), avgdl and D are known here, so f = c · x / (1 − x) with
 *   x = s / (idf · (k1 + 1)), an integer recovered by rounding (the error is far below 0.5). FTS5 matches
 *   phrases in C, but every match costs bm25() in C and a three-value row into JS.
 * - `hybrid` (the design `fts5-per-tenant`; the others are `fts5-per-tenant-instance` and
 *   `fts5-per-tenant-bm25`): terms by `instance`, phrases by `bm25`. The fastest on phrases, level with
 *   `instance` on the other kinds, 2 to 4 times faster than `bm25` on them (bench/engine/README.md).
 *
 * In all three: the query's words are tokenized by FTS5 itself (a scratch FTS5 table with the same
 * tokenizer and its 'instance' view), so the terms are exactly the index's; document lengths are FTS5's own
 * (%_docsize), read into typed arrays on a tenant's first search (a lookup per match would cost more than
 * the match); N, the title and body token totals (%_docsize) and df per term (fts5vocab 'row') are
 * computed once the load is done, into `tenants` and `stats_terms`. A live service would keep them on each
 * insert.
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../shared/adapters/local/database.js';
import { isEmptyQuery, searchableText, type ParsedQuery } from '../../shared/domain/query-parse.js';
import { clauseScore, clauseWeight, idf, type ClauseWeight, type CollectionStats } from '../../shared/search/scoring.js';
import { RANKING } from '../../shared/domain/rank.js';
import { LOAD_BATCH, type EngineDesign, type EngineDoc, type ScoredSeq } from './design.js';
import { tenantToken } from './fts5-shared.js';
import { closeDesignDatabase, FTS5_TOKENIZE, openDesignDatabase } from './sqlite.js';

interface TenantTable {
  name: string;
  /** The FTS5 table's name. */
  table: string;
  stats: CollectionStats;
  /** The tenant's occurrences of one term, as doc · 2 + (in the body), in doc, column order. */
  termInstances: Statement<[string]>;
  /** The same with offsets, as doc · 2^21 + (in the body) · 2^20 + offset: ascending. */
  positions: Statement<[string]>;
  /** The rows that match an FTS5 expression, as [rowid, bm25(t, 1, 0), bm25(t, 0, 1)]. */
  match: Statement<[string]>;
  df: Statement<[string, string]>;
  /** Whether its documents' lengths are in the design's length arrays yet (on first search). */
  lengthsRead: boolean;
}

/** A term or a phrase of the query: its text and its FTS5 tokens. */
interface Clause {
  text: string;
  terms: string[];
}

/** One clause's matches: per matching document its title and body frequencies (parallel arrays). */
interface ClauseHits {
  docs: number[];
  tfT: number[];
  tfB: number[];
}

/** Reads one unsigned SQLite varint (as FTS5 writes %_docsize) at `at`; returns [value, next offset]. */
function varint(buf: Uint8Array, at: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = buf[at + i]!;
    if (i === 8) return [value * 256 + byte, at + 9];
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, at + i + 1];
  }
  return [value, at + 9];
}

/** How a row's term frequencies are read from FTS5 (see above). */
export type TermFrequencySource = 'hybrid' | 'bm25' | 'instance';

/**
 * An occurrence as one number: doc · POSITION_DOC + (in the body) · POSITION_BODY + offset. Exact while
 * seq < 2^32 (doc · 2^21 < 2^53) and a field has fewer than 2^20 tokens.
 */
const POSITION_DOC = 2 ** 21;
const POSITION_BODY = 2 ** 20;

/** FTS5's bm25() constants (fts5_aux.c). */
const FTS5_K1 = 1.2;
const FTS5_B = 0.75;

/** An FTS5 string literal: FTS5 reads it as plain text, a phrase of its tokens. */
const literal = (text: string) => `"${text.replace(/"/g, '""')}"`;

export class Fts5PerTenantDesign implements EngineDesign {
  readonly name: string;
  readonly description: string;

  constructor(private readonly tf: TermFrequencySource = 'hybrid') {
    this.name = tf === 'hybrid' ? 'fts5-per-tenant' : `fts5-per-tenant-${tf}`;
    this.description =
      'one contentless FTS5 table per tenant (title, body) + per-tenant N, token totals and df; ' +
      {
        hybrid: "a term's tf counted from its fts5vocab 'instance' rows, a phrase's recovered from a MATCH's bm25(t,1,0), bm25(t,0,1)",
        bm25: 'every clause one MATCH, tf recovered from bm25(t,1,0) and bm25(t,0,1)',
        instance: "tf counted from fts5vocab 'instance' rows, phrases checked on their offsets in JS",
      }[tf] +
      '; BM25F (shared/search/scoring.ts) of every match in JS, top k by a heap';
  }

  private db: Db | null = null;
  private readonly tenants = new Map<string, TenantTable>();
  private tokenize: { insert: Statement; read: Statement; clear: Statement } | null = null;
  /** Title and body lengths in tokens by seq (seqs are unique over the tenants), read from %_docsize. */
  private lengths = { title: new Uint32Array(0), body: new Uint32Array(0) };
  /** Scores by seq, reused by every search (cleared through `touched`). */
  private scores = new Float64Array(0);

  open(dir: string): void {
    const db = (this.db = openDesignDatabase(dir, 'fts5-per-tenant.sqlite'));
    db.exec(`
      CREATE TABLE IF NOT EXISTS tenants (
        name TEXT PRIMARY KEY, tbl TEXT NOT NULL UNIQUE,
        docs INTEGER NOT NULL DEFAULT 0, title_tokens INTEGER NOT NULL DEFAULT 0, body_tokens INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE TABLE IF NOT EXISTS stats_terms (
        tenant TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, PRIMARY KEY (tenant, term)
      ) STRICT, WITHOUT ROWID;
      CREATE VIRTUAL TABLE temp.query_tokens USING fts5(x, tokenize = '${FTS5_TOKENIZE}');
      CREATE VIRTUAL TABLE temp.query_tokens_i USING fts5vocab(temp, query_tokens, 'instance');
    `);
    this.tokenize = {
      insert: db.prepare('INSERT INTO temp.query_tokens (rowid, x) VALUES (?, ?)'),
      read: db.prepare('SELECT doc, term FROM temp.query_tokens_i ORDER BY doc, offset').raw(),
      clear: db.prepare('DELETE FROM temp.query_tokens'),
    };
    for (const row of db.prepare('SELECT name FROM tenants').all() as { name: string }[]) this.attach(row.name);
  }

  /** The tenant's FTS5 table (created if new) and its statements. */
  private attach(name: string): TenantTable {
    let t = this.tenants.get(name);
    if (t) return t;
    const db = this.db!;
    const table = `fts_${tenantToken(name)}`;
    db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(
        title, body, content = '', contentless_delete = 1, tokenize = '${FTS5_TOKENIZE}'
      );
      CREATE VIRTUAL TABLE IF NOT EXISTS ${table}_instance USING fts5vocab(${table}, 'instance');
    `);
    db.prepare('INSERT OR IGNORE INTO tenants (name, tbl) VALUES (?, ?)').run(name, table);
    const row = db.prepare('SELECT docs, title_tokens, body_tokens FROM tenants WHERE name = ?').get(name) as {
      docs: number;
      title_tokens: number;
      body_tokens: number;
    };
    t = {
      name,
      table,
      stats: { docs: row.docs, titleWords: row.title_tokens, bodyWords: row.body_tokens },
      termInstances: db.prepare<[string]>(`SELECT doc * 2 + (col = 'body') FROM ${table}_instance WHERE term = ?`).pluck(),
      positions: db
        .prepare<[string]>(`SELECT doc * ${POSITION_DOC} + (col = 'body') * ${POSITION_BODY} + offset FROM ${table}_instance WHERE term = ?`)
        .pluck(),
      match: db.prepare<[string]>(`SELECT rowid, bm25(${table}, 1, 0), bm25(${table}, 0, 1) FROM ${table} WHERE ${table} MATCH ?`).raw(),
      df: db.prepare<[string, string]>('SELECT df FROM stats_terms WHERE tenant = ? AND term = ?').pluck(),
      lengthsRead: false,
    };
    this.tenants.set(name, t);
    return t;
  }

  load(docs: Iterable<EngineDoc>, onProgress?: (loaded: number) => void): void {
    const db = this.db!;
    const inserts = new Map<string, Statement>();
    let batch: EngineDoc[] = [];
    let loaded = 0;
    const flush = db.transaction((rows: EngineDoc[]) => {
      for (const d of rows) {
        let insert = inserts.get(d.tenant);
        if (!insert) {
          const { table } = this.attach(d.tenant);
          inserts.set(d.tenant, (insert = db.prepare(`INSERT INTO ${table} (rowid, title, body) VALUES (?, ?, ?)`)));
        }
        insert.run(d.seq, searchableText(d.title), searchableText(d.body));
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
    this.buildStatistics();
  }

  /** N, token totals (from %_docsize) and df per term (from fts5vocab 'row') of every tenant. */
  private buildStatistics(): void {
    const db = this.db!;
    db.transaction(() => {
      db.exec('DELETE FROM stats_terms');
      for (const t of this.tenants.values()) {
        db.exec(`CREATE VIRTUAL TABLE temp.vocab_row USING fts5vocab(main, ${t.table}, 'row')`);
        db.prepare("INSERT INTO stats_terms (tenant, term, df) SELECT ?, term, doc FROM temp.vocab_row").run(t.name);
        db.exec('DROP TABLE temp.vocab_row');
        let docs = 0;
        let titleWords = 0;
        let bodyWords = 0;
        for (const sz of db.prepare(`SELECT sz FROM ${t.table}_docsize`).pluck().iterate() as IterableIterator<Uint8Array>) {
          const [title, next] = varint(sz, 0);
          const [body] = varint(sz, next);
          docs++;
          titleWords += title;
          bodyWords += body;
        }
        t.stats = { docs, titleWords, bodyWords };
        db.prepare('UPDATE tenants SET docs = ?, title_tokens = ?, body_tokens = ? WHERE name = ?').run(docs, titleWords, bodyWords, t.name);
      }
    })();
  }

  /** Reads the tenant's document lengths from %_docsize into the length arrays, once. */
  private readLengths(t: TenantTable): void {
    if (t.lengthsRead) return;
    const db = this.db!;
    const max = (db.prepare(`SELECT max(id) FROM ${t.table}_docsize`).pluck().get() as number | null) ?? 0;
    if (max >= this.lengths.title.length) {
      const grow = (old: Uint32Array) => {
        const a = new Uint32Array(max + 1);
        a.set(old);
        return a;
      };
      this.lengths = { title: grow(this.lengths.title), body: grow(this.lengths.body) };
      this.scores = new Float64Array(max + 1);
    }
    const { title, body } = this.lengths;
    for (const [id, sz] of db.prepare(`SELECT id, sz FROM ${t.table}_docsize`).raw().iterate() as IterableIterator<[number, Uint8Array]>) {
      const [lenT, next] = varint(sz, 0);
      title[id] = lenT;
      body[id] = varint(sz, next)[0];
    }
    t.lengthsRead = true;
  }

  /**
   * The query's clauses, phrases first, then terms, each once (as searcher.ts's clausesOf): the text (what
   * the MATCH gets) and its FTS5 tokens (what the statistics are kept by; the Porter stemmer is not
   * idempotent, so a MATCH must get the words, not their stems).
   */
  private clausesOf(query: ParsedQuery): Clause[] {
    const texts = [...query.phrases.map((words) => words.join(' ')), ...query.terms].map(searchableText);
    const { insert, read, clear } = this.tokenize!;
    texts.forEach((text, i) => insert.run(i + 1, text));
    const tokens: string[][] = texts.map(() => []);
    for (const [doc, term] of read.all() as [number, string][]) tokens[doc - 1]!.push(term);
    clear.run();
    const clauses: Clause[] = [];
    const seen = new Set<string>();
    tokens.forEach((terms, i) => {
      const key = terms.join(' ');
      if (terms.length === 0 || seen.has(key)) return;
      seen.add(key);
      clauses.push({ text: texts[i]!, terms });
    });
    return clauses;
  }

  /**
   * One clause's matching documents with their title and body frequencies (a phrase: the places it starts),
   * from the MATCH's bm25() values (see the file's comment).
   */
  private hitsFromBm25(t: TenantTable, clause: Clause): ClauseHits {
    const rows = t.match.all(literal(clause.text)) as [number, number, number][];
    const n = rows.length;
    const { docs, titleWords, bodyWords } = t.stats;
    // fts5Bm25Function's IDF and average length, for this table: N rows, n of them matching the phrase.
    let fts5Idf = Math.log((docs - n + 0.5) / (n + 0.5));
    if (fts5Idf <= 0) fts5Idf = 1e-6;
    const scale = fts5Idf * (FTS5_K1 + 1);
    const avgdl = (titleWords + bodyWords) / docs;
    const { title, body } = this.lengths;
    const hits: ClauseHits = { docs: new Array<number>(n), tfT: new Array<number>(n), tfB: new Array<number>(n) };
    for (let i = 0; i < n; i++) {
      const [doc, sT, sB] = rows[i]!;
      const c = FTS5_K1 * (1 - FTS5_B + (FTS5_B * (title[doc]! + body[doc]!)) / avgdl);
      const xT = -sT / scale;
      const xB = -sB / scale;
      hits.docs[i] = doc;
      hits.tfT[i] = xT === 0 ? 0 : Math.round((c * xT) / (1 - xT));
      hits.tfB[i] = xB === 0 ? 0 : Math.round((c * xB) / (1 - xB));
    }
    return hits;
  }

  /**
   * A term's matching documents with their title and body frequencies, from fts5vocab 'instance': one row
   * per occurrence, plucked as the single number doc · 2 + (in the body), so that no row becomes an array
   * (four times faster into JS than [doc, column] rows). The rows come in doc, column (title first) order.
   */
  private termFromInstances(t: TenantTable, term: string): ClauseHits {
    const hits: ClauseHits = { docs: [], tfT: [], tfB: [] };
    const rows = t.termInstances.all(term) as number[];
    let doc = -1;
    let last = -1;
    for (const v of rows) {
      const d = Math.floor(v / 2);
      if (d !== doc) {
        hits.docs.push(d);
        hits.tfT.push(0);
        hits.tfB.push(0);
        doc = d;
        last++;
      }
      if (v % 2 === 0) hits.tfT[last]!++;
      else hits.tfB[last]!++;
    }
    return hits;
  }

  /**
   * A phrase's matching documents and frequencies (the places it starts) from fts5vocab 'instance': each
   * word's occurrences as doc · 2^21 + (in the body) · 2^20 + offset, ascending; the phrase starts at an
   * occurrence v of its first word when word j has an occurrence v + j. One merge walk per word.
   */
  private phraseFromInstances(t: TenantTable, terms: string[]): ClauseHits {
    const hits: ClauseHits = { docs: [], tfT: [], tfB: [] };
    const lists = terms.map((term) => t.positions.all(term) as number[]);
    const cursors = lists.map(() => 0);
    const first = lists[0]!;
    let doc = -1;
    let last = -1;
    for (const v of first) {
      let all = true;
      for (let j = 1; j < lists.length && all; j++) {
        const list = lists[j]!;
        let c = cursors[j]!;
        while (c < list.length && list[c]! < v + j) c++;
        cursors[j] = c;
        all = c < list.length && list[c] === v + j;
      }
      if (!all) continue;
      const d = Math.floor(v / POSITION_DOC);
      if (d !== doc) {
        hits.docs.push(d);
        hits.tfT.push(0);
        hits.tfB.push(0);
        doc = d;
        last++;
      }
      if (v % POSITION_DOC < POSITION_BODY) hits.tfT[last]!++;
      else hits.tfB[last]!++;
    }
    return hits;
  }

  private hitsOf(t: TenantTable, clause: Clause): ClauseHits {
    const phrase = clause.terms.length > 1;
    switch (this.tf) {
      case 'bm25':
        return this.hitsFromBm25(t, clause);
      case 'instance':
        return phrase ? this.phraseFromInstances(t, clause.terms) : this.termFromInstances(t, clause.terms[0]!);
      case 'hybrid':
        return phrase ? this.hitsFromBm25(t, clause) : this.termFromInstances(t, clause.terms[0]!);
    }
  }

  search(tenant: string, query: ParsedQuery, k: number): ScoredSeq[] {
    const t = this.tenants.get(tenant);
    if (!t || isEmptyQuery(query) || t.stats.docs === 0 || k <= 0) return [];
    this.readLengths(t);
    const { scores, lengths } = this;
    const touched: number[] = [];
    for (const clause of this.clausesOf(query)) {
      let clauseIdf = 0;
      let missing = false;
      for (const term of clause.terms) {
        const df = t.df.get(t.name, term) as number | undefined;
        if (df === undefined) missing = true;
        else clauseIdf += idf(t.stats.docs, df);
      }
      if (missing) continue;
      const weight: ClauseWeight = clauseWeight(RANKING, t.stats, clauseIdf);
      const hits = this.hitsOf(t, clause);
      for (let h = 0; h < hits.docs.length; h++) {
        const doc = hits.docs[h]!;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += clauseScore(weight, hits.tfT[h]!, hits.tfB[h]!, lengths.title[doc]!, lengths.body[doc]!);
      }
    }
    const top = topK(touched, scores, k);
    for (const doc of touched) scores[doc] = 0;
    return top;
  }

  close(): void {
    if (this.db) closeDesignDatabase(this.db);
    this.db = null;
    this.tenants.clear();
  }
}

/** The k best of `docs` by score descending, then seq descending: a min-heap of size k over all of them. */
function topK(docs: readonly number[], scores: Float64Array, k: number): ScoredSeq[] {
  const heap: number[] = [];
  // a is worse than b: lower score, or equal score and older.
  const worse = (a: number, b: number) => scores[a]! < scores[b]! || (scores[a] === scores[b] && a < b);
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (const doc of docs) {
    if (heap.length < k) {
      heap.push(doc);
      for (let i = heap.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[p]!)) break;
        [heap[i], heap[p]] = [heap[p]!, heap[i]!];
        i = p;
      }
    } else if (worse(heap[0]!, doc)) {
      heap[0] = doc;
      down(0);
    }
  }
  return heap.map((seq) => ({ seq, score: scores[seq]! })).sort((a, b) => b.score - a.score || b.seq - a.seq);
}
