import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordType } from '../../shared/domain/record.js';
import type { Judgments } from './metrics.js';

/** A document of a quality set, with the fields a record needs. */
export interface QualityDoc {
  id: string;
  agent_id: string;
  type: RecordType;
  title: string;
  body: string;
  client: string | null;
}

/** A query of a quality set: free text and exact-match filters. */
export interface QualityQuery {
  qid: string;
  q: string;
  filters: { agent_id?: string; type?: RecordType; client?: string };
}

/** A test collection: documents, queries and, per query, graded judgments (grade > 0 is relevant). */
export interface QualitySet {
  name: string;
  docs: QualityDoc[];
  queries: QualityQuery[];
  qrels: Map<string, Judgments>;
  /** Documents the API cannot store (an empty title or body), left out of the load. */
  skipped: string[];
}

const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');

/** Where the shared datasets live: ../shared beside the repository, as CI lays it out. */
export const CRANFIELD_DIR = join(import.meta.dirname, '../../../shared/datasets/cranfield');

/**
 * The Cranfield collection (../shared/datasets/cranfield/README.md): 1400 abstracts, 225 queries. Relevance
 * is binary (every grade 1 to 4 counts 1, the -1 lines are left out), as in the README's baselines. Every
 * document is stored as a `fact` of one agent, title and body as they are.
 */
export function cranfield(dir = CRANFIELD_DIR): QualitySet {
  const all = lines(join(dir, 'docs.jsonl')).map((line) => JSON.parse(line) as { id: string; title: string; body: string });
  const skipped = all.filter((d) => d.title.trim() === '' || d.body.trim() === '').map((d) => d.id);
  const docs = all
    .filter((d) => !skipped.includes(d.id))
    .map((d): QualityDoc => ({ id: d.id, agent_id: 'cranfield', type: 'fact', title: d.title, body: d.body, client: null }));
  const queries = lines(join(dir, 'queries.tsv')).map((line): QualityQuery => {
    const [qid, , q] = line.split('\t');
    return { qid: qid!, q: q!, filters: {} };
  });
  const qrels = new Map<string, Map<string, number>>();
  for (const line of lines(join(dir, 'qrels.trec'))) {
    const [qid, , docid, grade] = line.trim().split(/\s+/);
    if (Number(grade) < 1) continue;
    if (!qrels.has(qid!)) qrels.set(qid!, new Map());
    qrels.get(qid!)!.set(docid!, 1);
  }
  return { name: 'cranfield', docs, queries, qrels, skipped };
}

export const AGENT_MEMORY_DIR = join(import.meta.dirname, 'agent-memory');

/** The project's own agent-memory set (bench/quality/agent-memory/README.md), with its graded judgments. */
export function agentMemory(dir = AGENT_MEMORY_DIR): QualitySet {
  const docs = lines(join(dir, 'records.jsonl')).map((line) => JSON.parse(line) as QualityDoc);
  const queries = lines(join(dir, 'queries.jsonl')).map((line) => JSON.parse(line) as QualityQuery);
  const qrels = new Map<string, Map<string, number>>(queries.map((q) => [q.qid, new Map()]));
  for (const line of lines(join(dir, 'qrels.tsv'))) {
    const [qid, id, grade] = line.split('\t');
    qrels.get(qid!)!.set(id!, Number(grade));
  }
  return { name: 'agent-memory', docs, queries, qrels, skipped: [] };
}
