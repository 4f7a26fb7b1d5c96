/**
 * A check of the peer by hand: `tsx bench/peers/postgres.ts --self-check [--rows N] [--cranfield DIR]`.
 * It loads synthetic records into a fresh server, checks what its searches find, times them on 10 000 rows
 * or more, and scores Cranfield through the benchmark's own loader.
 */
import { loadIntoPeer, scoreSet } from '../quality/score.js';
import { CRANFIELD_DIR, cranfield as cranfieldSet } from '../quality/sets.js';
import type { PeerQuery, PeerRecord, PostgresPeer } from './postgres-peer.js';
import { startPostgres } from './postgres-server.js';

/** Starts a peer, checks it with `args` (`--rows N`, `--cranfield DIR`), logs on stderr and stops it. */
export async function selfCheck(args: string[]): Promise<void> {
  const option = (name: string, fallback: string) => {
    const i = args.indexOf(name);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
  };
  const rows = Number(option('--rows', '1000'));
  const cranfieldDir = option('--cranfield', CRANFIELD_DIR);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const timed = async <T>(label: string, f: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const value = await f();
    log(`${label}: ${(performance.now() - t).toFixed(1)} ms`);
    return value;
  };
  const assert = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`self-check failed: ${what}`);
    log(`ok: ${what}`);
  };

  const peer = await timed('start', () => startPostgres(log));
  try {
    log(`version: ${peer.version}`);

    // Synthetic records: two tenants, Zipf-distributed made-up words, a few recognisable ones.
    await timed(`load ${rows} synthetic rows`, () => peer.load(synthetic(rows), (n) => n % 50_000 === 0 && log(`  loaded ${n}`)));
    const queries: [string, PeerQuery][] = [
      ['word', { q: 'invoice', limit: 10 }],
      ['phrase', { q: '"dark mode"', limit: 10 }],
      ['phrase or word', { q: '"dark mode" deploy', limit: 10 }],
      ['filtered', { q: 'invoice', agent_id: 'agent-4', type: 'fact', limit: 10 }],
      ['since', { q: 'invoice', since: '2025-01-01T00:10:00Z', limit: 10 }],
      ['no q', { limit: 5 }],
      ['stop words only', { q: 'the and of', limit: 10 }],
      ['hostile', { q: `'); DROP TABLE records; -- " & | ! <-> :* \\`, limit: 10 }],
    ];
    const results: Record<string, string[]> = {};
    for (const [label, query] of queries) {
      results[label] = await timed(`search "${label}" ${JSON.stringify(query)}`, () => peer.search('tenant-a', query));
      log(`  -> ${results[label]!.join(' ')}`);
    }
    assert(results.word!.length === 10, 'a common word finds 10 records');
    assert(results['stop words only']!.length === 0, 'a stop-word-only query finds nothing');
    assert(results.filtered!.length > 0 && results.filtered!.every((id) => Number(id.split('-')[1]) % 20 === 4 && Number(id.split('-')[1]) % 3 === 0), 'filters apply');
    assert(results.phrase!.length > 0, 'a phrase finds records');
    assert(results.since!.length > 0 && results.since!.every((id) => Number(id.split('-')[1]) >= 600), 'since applies');
    const other = await peer.search('tenant-b', { q: 'invoice', limit: 1000 });
    const mine = await peer.search('tenant-a', { q: 'invoice', limit: 1000 });
    assert(other.every((id) => id.startsWith('b-')) && mine.every((id) => id.startsWith('a-')), 'tenants are isolated');
    assert((await peer.search('tenant-c', { limit: 10 })).length === 0, 'an unknown tenant has no records');

    if (rows >= 10_000) await latency(peer, log);

    await cranfield(peer, cranfieldDir, log);
  } finally {
    await timed('stop', () => peer.stop());
  }
}

const COMMON = ['deploy', 'database', 'latency', 'cache', 'user prefers', 'dark mode', 'invoice', 'report', 'meeting', 'budget', 'review', 'release', 'incident', 'backup'];

function makeRandom(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

/** A 20 000-word made-up vocabulary with a Zipf-like frequency, plus a few common real words. */
function vocabulary(random: () => number): () => string {
  const syllables = 'ka lo mi nu pe ra si to vu ze bar den fil gor hun jas kel mor nix pol'.split(' ');
  const words = Array.from({ length: 20_000 }, (_, i) => {
    let w = '';
    let n = i + 7;
    do {
      w += syllables[n % syllables.length];
      n = Math.floor(n / syllables.length);
    } while (n > 0);
    return w;
  });
  return () => {
    if (random() < 0.05) return COMMON[Math.floor(random() * COMMON.length)]!;
    // Inverse-CDF of a 1/x distribution over the ranks.
    return words[Math.min(words.length - 1, Math.floor(Math.exp(random() * Math.log(words.length))) - 1)]!;
  };
}

function* synthetic(n: number): Generator<PeerRecord> {
  const random = makeRandom(42);
  const word = vocabulary(random);
  const text = (k: number) => Array.from({ length: k }, word).join(' ');
  const start = Date.parse('2025-01-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const tenant = i % 2 === 0 ? 'a' : 'b';
    yield {
      tenant: `tenant-${tenant}`,
      id: `${tenant}-${i}`,
      agent_id: `agent-${i % 20}`,
      type: i % 3 === 0 ? 'fact' : 'note',
      client: i % 5 === 0 ? null : 'cli',
      created_at: new Date(start + i * 1000).toISOString(),
      title: text(8),
      body: text(60),
    };
  }
}

async function latency(peer: PostgresPeer, log: (line: string) => void): Promise<void> {
  const random = makeRandom(7);
  const word = vocabulary(random);
  for (const concurrency of [1, 32]) {
    const ms: number[] = [];
    let left = 2000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) {
          const t = performance.now();
          await peer.search(random() < 0.5 ? 'tenant-a' : 'tenant-b', { q: `${word()} ${word()}`, limit: 20 });
          ms.push(performance.now() - t);
        }
      }),
    );
    ms.sort((a, b) => a - b);
    const at = (p: number) => ms[Math.min(ms.length - 1, Math.ceil((p / 100) * ms.length) - 1)]!.toFixed(2);
    log(`two-word searches, limit 20, concurrency ${concurrency}: p50 ${at(50)} ms, p95 ${at(95)} ms, p99 ${at(99)} ms, max ${at(100)} ms`);
  }
}

/** Cranfield through the benchmark's own loader and measures (bench/quality/): nDCG@10, MAP and Recall@100. */
async function cranfield(peer: PostgresPeer, dir: string, log: (line: string) => void): Promise<void> {
  const set = cranfieldSet(dir);
  const t = performance.now();
  const result = await scoreSet(set, await loadIntoPeer(peer, set, new Date().toISOString()));
  log(`cranfield: ${set.queries.length} queries in ${(performance.now() - t).toFixed(0)} ms`);
  console.log(JSON.stringify({ engine: peer.version, cranfield: result }));
}
