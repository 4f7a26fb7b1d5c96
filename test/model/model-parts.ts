import fc from 'fast-check';
import type { Db } from '../../shared/adapters/local/database.js';
import { SearchMerge, type MergeBatch } from '../../shared/adapters/local/search-merge.js';
import { newRecord, type RecordType, type StoredRecord } from '../../shared/domain/record.js';
import type { RecordStore, SearchIndex } from '../../shared/ports.js';

/**
 * What the commands of the search index's model (search-index-model.ts, update-commands.ts) and its checks
 * (model-checks.ts) share: the model itself, the system it drives, and how a command picks a record and
 * makes a text.
 */

export const TENANTS = ['0190f0a0-0000-7000-8000-000000000001', '0190f0a0-0000-7000-8000-000000000002'];
export const AGENTS = ['ada', 'bob'];
export const TYPES: RecordType[] = ['fact', 'decision'];
/** Few words, so that terms are shared, ties happen and stems meet ("moved", "moves"). */
const WORDS = ['user', 'moved', 'moves', 'berlin', 'lunch', 'prefers', 'dark', 'mode', 'release', 'notes', 'deploy', 'invoice', 'sam', 'meeting', 'the'];
/** The time of the model's first step; each step is a second later. */
export const BASE = Date.UTC(2026, 0, 1);
export const WRITE = { recordQuota: 1e9, month: '2026-01' };

/** A live record as the model knows it. */
export interface ModelRecord {
  id: string;
  tenant: number;
  agent: string;
  type: RecordType;
  title: string;
  body: string;
  created_at: string;
  /** The word only this record's current text holds. */
  token: string;
  version: number;
  /** The record that supersedes it, or null while it is current. */
  superseded_by: string | null;
}

/** The model: the live records, and what no read may return any more. */
export interface Model {
  live: ModelRecord[];
  /**
   * Ids that are gone from a tenant (or were never stored), and words that no record of a tenant holds any
   * more: no read may return them, but for a live record that holds the same id or word (ids are each
   * tenant's own, and a copy imported into another tenant keeps the id and the words).
   */
  goneIds: { tenant: number; id: string }[];
  goneTokens: { tenant: number; token: string }[];
  words: number;
  clock: number;
}

/** An id that is gone and that the tenant does not hold now, if there is one. */
export function goneIdOf(m: Readonly<Model>, tenant: number): string | undefined {
  return m.goneIds.find(({ id }) => !m.live.some((x) => x.tenant === tenant && x.id === id))?.id;
}

/**
 * What the model drives: a record store, the way a record gets a new text, the searches to check, and the
 * SQLite index's connection, on which the merge is stepped and the invariants are checked. The SQLite
 * system (search-index-model.ts) is the embedded default; aws-shaped-system.ts is DynamoDB Local with its
 * stream feeding the index.
 */
export interface ModelSystem {
  readonly records: RecordStore;
  /** Gives a stored record a new text, as the AWS-shaped mode's stream does (SqliteDocumentIndex). */
  changeText(record: StoredRecord): Promise<void>;
  /** The searches to check, each by a name for the report. */
  searchers(): [string, SearchIndex][];
  /** A connection to the SQLite index that the merge steps and the invariant checks use. */
  indexDb(): Db;
  /** Waits until every change so far has reached the index (at once on SQLite). */
  settle(): Promise<void>;
  /** Closes everything and opens it again on the same data, as a process restart does. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** The system under test and the merge batch the model has under way on its index. */
export class Real {
  merge: SearchMerge;
  batch: MergeBatch | null = null;

  constructor(readonly system: ModelSystem) {
    this.merge = new SearchMerge(system.indexDb());
  }

  async restart(): Promise<void> {
    await this.system.restart();
    this.merge = new SearchMerge(this.system.indexDb());
    this.batch = null;
  }
}

export type Command = fc.AsyncCommand<Model, Real>;

export type Text = { title: string[]; body: string[]; tokenInTitle: boolean };
export const textArb: fc.Arbitrary<Text> = fc.record({
  title: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
  body: fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 8 }),
  tokenInTitle: fc.boolean(),
});

export const tenantArb = fc.integer({ min: 0, max: TENANTS.length - 1 });

/** Which live record a command acts on: the newest, the oldest, or any; resolved when it runs. */
export type Pick = 'newest' | 'oldest' | number;
export const pickArb: fc.Arbitrary<Pick> = fc.oneof(fc.constant<Pick>('newest'), fc.constant<Pick>('oldest'), fc.nat());
export function picked(m: Model, pick: Pick): ModelRecord {
  const i = pick === 'newest' ? m.live.length - 1 : pick === 'oldest' ? 0 : pick % m.live.length;
  return m.live[i]!;
}

/** A text drawn as `t`, with a word of its own (`token`) that no other text ever has. */
export function textOf(m: Model, t: Text, extra: string[] = []): { title: string; body: string; token: string } {
  const token = `tok${m.words++}x`;
  const title = [...t.title, ...(t.tokenInTitle ? [token] : [])].join(' ');
  const body = [...t.body, ...extra, ...(t.tokenInTitle ? [] : [token])].join(' ') || 'empty';
  return { title, body, token };
}

/** A new record of the model's tenant `tenant`, created at `at`. */
export function stored(tenant: number, agent: string, type: RecordType, text: { title: string; body: string }, at: number): StoredRecord {
  return newRecord(TENANTS[tenant]!, { agent_id: agent, type, title: text.title, body: text.body }, new Date(at));
}

/** Takes the records `gone` selects out of the model: their ids and words may never be read again. */
export function forgetLocally(m: Model, gone: (r: ModelRecord) => boolean): void {
  for (const r of m.live.filter(gone)) {
    m.goneIds.push({ tenant: r.tenant, id: r.id });
    m.goneTokens.push({ tenant: r.tenant, token: r.token });
  }
  m.live = m.live.filter((r) => !gone(r));
}

/** The model's record for a stored one. */
export function modelOf(record: StoredRecord, tenant: number, token: string): ModelRecord {
  const { id, agent_id: agent, type, title, body, created_at, version, superseded_by } = record;
  return { id, tenant, agent, type, title, body, created_at, token, version, superseded_by };
}

/** The stored record the model's stands for (without what the model does not follow: client, metadata, classification). */
export function storedOf(x: ModelRecord): StoredRecord {
  return {
    id: x.id,
    tenant_id: TENANTS[x.tenant]!,
    agent_id: x.agent,
    type: x.type,
    title: x.title,
    body: x.body,
    client: null,
    metadata: null,
    created_at: x.created_at,
    classification: null,
    version: x.version,
    updated_at: null,
    superseded_by: x.superseded_by,
  };
}

/** The command, then `check`: each model's checks run after every command, as fast-check runs them. */
export function thenCheck<M extends object, R>(command: fc.AsyncCommand<M, R>, check: (m: M, r: R) => Promise<void>): fc.AsyncCommand<M, R> {
  return {
    check: (m) => command.check(m),
    run: async (m, r) => {
      await command.run(m, r);
      await check(m, r);
    },
    toString: () => command.toString(),
  };
}

/**
 * The word every record of a bulk import holds: more than a block of postings (128), so blocks seal and
 * split, and a delete rewrites one that the searches have read (and a search connection keeps).
 */
export const BULK_WORD = 'ledger';
