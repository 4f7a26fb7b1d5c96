import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordType } from '../../shared/domain/record.js';
import { isBlank } from '../../shared/domain/text.js';
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

// Every set is a folder beside this file, with a README that says where it came from: the tests and the
// benchmark read nothing from outside the repository.

export const CRANFIELD_DIR = join(import.meta.dirname, 'cranfield');

/**
 * The Cranfield collection (bench/quality/cranfield/README.md): 1400 abstracts, 225 queries. Relevance
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

export const CACM_DIR = join(import.meta.dirname, 'cacm');

/**
 * What a CACM document without an abstract is stored with as its body (and document 3193, the one without a
 * title, as its title): the API refuses a blank title or body (shared/domain/validation.ts), and this text
 * holds no word at all for the analyzer or the query parser, so it adds nothing to the index: no term, no
 * length. Every one of the 3204 documents is stored; none is skipped.
 */
export const CACM_PLACEHOLDER = '-';

/**
 * The CACM collection (bench/quality/cacm/README.md): 3204 titles of articles, 1617 of them without an
 * abstract, 64 queries. Relevance is binary (every qrels line counts 1; a document number written with
 * leading zeros is read as a number). Only 52 queries have judgments; the other 12 are loaded all the same,
 * with no entry in `qrels`, and `summarize` (metrics.ts) leaves a query with no relevant document out of the
 * averages. Every document is stored as a `fact` of one agent, its title and abstract as they are, an empty
 * field as CACM_PLACEHOLDER.
 */
export function cacm(dir = CACM_DIR): QualitySet {
  const orPlaceholder = (text: string) => (isBlank(text) ? CACM_PLACEHOLDER : text);
  const docs = lines(join(dir, 'docs.jsonl')).map((line): QualityDoc => {
    const d = JSON.parse(line) as { id: string; title: string; body: string };
    return { id: d.id, agent_id: 'cacm', type: 'fact', title: orPlaceholder(d.title), body: orPlaceholder(d.body), client: null };
  });
  const queries = lines(join(dir, 'queries.tsv')).map((line): QualityQuery => {
    const [qid, , q] = line.split('\t');
    return { qid: qid!, q: q!, filters: {} };
  });
  const qrels = new Map<string, Map<string, number>>();
  for (const line of lines(join(dir, 'qrels.trec'))) {
    const [qid, , docid] = line.trim().split(/\s+/);
    if (!qrels.has(qid!)) qrels.set(qid!, new Map());
    // 55 lines write the document number with leading zeros ("0756"); docs.jsonl does not ("756").
    qrels.get(qid!)!.set(String(Number(docid)), 1);
  }
  return { name: 'cacm', docs, queries, qrels, skipped: [] };
}

export const AGENT_QUESTIONS_DIR = join(import.meta.dirname, 'agent-questions');

/**
 * The agent-memory set asked in whole questions (bench/quality/agent-questions/README.md): the records and
 * graded judgments of agent-memory, and for each of its queries the same qid and filters with `q` rewritten
 * from the query's intent as the question an agent would ask.
 */
export function agentQuestions(dir = AGENT_QUESTIONS_DIR, memoryDir = AGENT_MEMORY_DIR): QualitySet {
  const memory = agentMemory(memoryDir);
  const queries = lines(join(dir, 'queries.jsonl')).map((line) => {
    const { qid, q, filters } = JSON.parse(line) as QualityQuery;
    return { qid, q, filters };
  });
  return { ...memory, name: 'agent-questions', queries };
}
