import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { findPostgresBinDir, startPostgres, websearchText, type PeerRecord, type PostgresPeer } from '../../bench/peers/postgres.js';
import { parseQuery } from '../../shared/domain/query-parse.js';

describe('websearchText', () => {
  test('joins phrases and terms with or, phrases quoted', () => {
    expect(websearchText(parseQuery('wing "dark or light mode" the slipstream')!)).toBe('"dark or light mode" or wing or slipstream');
  });

  test('no user syntax survives', () => {
    expect(websearchText(parseQuery(`-wing OR a<->b "x' & !y:*"`)!)).toBe('"x y" or wing or b');
    expect(websearchText(parseQuery(`-wing OR a<->b "x' & !y:*`)!)).toBe('wing or b or x or y');
  });
});

// The peer needs a local PostgreSQL 15; the test never installs it. Root needs the `postgres` user too.
const binDir = findPostgresBinDir();
const hasPostgresUser = process.getuid?.() !== 0 || spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status === 0;
const skipReason = !binDir
  ? 'PostgreSQL 15 is not installed (no initdb/pg_ctl/postgres in $PG15_BIN_DIR or /usr/lib/postgresql/15/bin; set PG15_BIN_DIR to point elsewhere)'
  : !hasPostgresUser
    ? 'running as root without a `postgres` user to run PostgreSQL as'
    : null;

if (skipReason) {
  describe('PostgreSQL peer', () => test.skip(`skipped: ${skipReason}`, () => undefined));
} else {
  describe('PostgreSQL peer', () => {
    let peer: PostgresPeer;
    const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();
    const record = (tenant: string, id: string, minute: number, title: string, body: string, extra: Partial<PeerRecord> = {}): PeerRecord => ({
      tenant, id, agent_id: 'agent-1', type: 'fact', client: null, created_at: at(minute), title, body, ...extra,
    });

    beforeAll(async () => {
      peer = await startPostgres(() => undefined, { pool: 4 });
      const records: PeerRecord[] = [
        record('t1', 'title-hit', 1, 'slipstream effects', 'notes about propellers'),
        record('t1', 'body-hit', 2, 'propeller notes', 'the slipstream behind a propeller'),
        record('t1', 'other-word', 3, 'boundary layer', 'laminar boundary layer on a flat plate', { agent_id: 'agent-2', client: 'cli' }),
        record('t1', 'phrase', 4, 'display', 'the user prefers dark mode in the editor', { type: 'preference' }),
        record('t1', 'split-phrase', 5, 'display', 'mode: dark, as the user prefers', { type: 'preference' }),
        record('t2', 'other-tenant', 6, 'slipstream everywhere', 'slipstream slipstream slipstream'),
      ];
      // Filler so the planner has something to plan for.
      for (let i = 0; i < 200; i++) records.push(record(i % 2 ? 't1' : 't2', `filler-${i}`, 0, `filler ${i}`, 'nothing to see here'));
      let progress = 0;
      await peer.load(records, (n) => (progress = n));
      expect(progress).toBe(records.length);
    }, 120_000);

    afterAll(async () => {
      await peer?.stop();
    }, 60_000);

    test('reports its version', () => {
      expect(peer.version).toMatch(/^PostgreSQL 15\.\d+$/);
    });

    test('a title match ranks above a body match; stemming applies', async () => {
      expect(await peer.search('t1', { q: 'slipstreams', limit: 10 })).toEqual(['title-hit', 'body-hit']);
    });

    test('words are ORed', async () => {
      expect(new Set(await peer.search('t1', { q: 'slipstream laminar', limit: 10 }))).toEqual(new Set(['title-hit', 'body-hit', 'other-word']));
    });

    test('a quoted phrase matches only in order, and ORs with other words', async () => {
      expect(await peer.search('t1', { q: '"dark mode"', limit: 10 })).toEqual(['phrase']);
      expect(new Set(await peer.search('t1', { q: '"dark mode" laminar', limit: 10 }))).toEqual(new Set(['phrase', 'other-word']));
    });

    test('filters apply', async () => {
      expect(await peer.search('t1', { q: 'slipstream laminar', agent_id: 'agent-2', limit: 10 })).toEqual(['other-word']);
      expect(await peer.search('t1', { q: 'slipstream laminar', client: 'cli', limit: 10 })).toEqual(['other-word']);
      expect(await peer.search('t1', { q: 'dark', type: 'preference', since: at(5), limit: 10 })).toEqual(['split-phrase']);
    });

    test('without text: newest first, with the limit', async () => {
      expect(await peer.search('t1', { limit: 3 })).toEqual(['split-phrase', 'phrase', 'other-word']);
      expect(await peer.search('t1', { q: '   ', type: 'preference', limit: 10 })).toEqual(['split-phrase', 'phrase']);
    });

    test('tenants are isolated', async () => {
      expect(await peer.search('t2', { q: 'slipstream', limit: 10 })).toEqual(['other-tenant']);
      expect(await peer.search('t3', { limit: 10 })).toEqual([]);
    });

    test('stop words only, or hostile input, find nothing and do not fail', async () => {
      expect(await peer.search('t1', { q: 'the and of', limit: 10 })).toEqual([]);
      expect(await peer.search('t1', { q: '"the"', limit: 10 })).toEqual([]);
      expect(await peer.search('t1', { q: `'); DROP TABLE records; -- " & | ! <-> :* \\`, limit: 10 })).toEqual([]);
      expect(await peer.search('t1', { q: 'slipstream', limit: 1 })).toEqual(['title-hit']);
    });
  });
}
