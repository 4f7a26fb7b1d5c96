/**
 * Updates racing each other and racing searches, over real HTTP, on each backend (issue 29, "Tests"):
 * - 20 concurrent PATCHes with the same If-Match: exactly one wins, and the record is the winner's;
 * - 20 without If-Match: every one wins, each with a version of its own, and the record is the last's;
 * - workers that retry on 412: exactly one update succeeds per version;
 * - a record updated again and again while searches run: no hit is ever a text older than the version
 *   acknowledged before the search began, or matches only a word the record no longer holds. In the
 *   AWS-shaped mode the stream is held back for part of the run, so that the index is behind the table.
 */
import { aRecord, startTestService, TEST_BACKEND, type ApiResponse, type Client, type TestService } from '../support/local-service.js';

let svc: TestService;
let api: Client;

beforeAll(async () => {
  svc = await startTestService({}, { streamGate: true });
});
afterAll(() => svc.stop());
beforeEach(async () => {
  api = svc.client((await svc.newTenant()).api_key);
});

async function write(overrides: Record<string, unknown> = {}): Promise<string> {
  const r = await api.remember(aRecord(overrides));
  expect(r.status).toBe(201);
  return r.body.id;
}

const get = async (id: string) => (await api.request('GET', `/api/v1/record/${id}`)).body;
/** A record's fields an update sets, and its version. */
const state = (r: any) => ({ title: r.title, body: r.body, type: r.type, client: r.client, metadata: r.metadata, version: r.version, updated_at: r.updated_at });
const TYPES = ['fact', 'decision', 'exchange', 'deliverable', 'open_item', 'signal'] as const;
/** The i-th of 20 different patches, each naming several fields. */
const patchNo = (i: number) => ({ title: `Racer ${i} title`, body: `Racer ${i} body.`, type: TYPES[i % TYPES.length], client: i % 3 ? `client-${i}` : null, metadata: { racer: i } });

test('20 concurrent updates with the same If-Match: exactly one 200 and 19 412, and the record is the winner\'s', async () => {
  const id = await write({ client: 'start' });
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => api.update(id, patchNo(i), { 'if-match': '"1"' })));
  const won = answers.filter((r) => r.status === 200);
  expect(won).toHaveLength(1);
  expect(answers.filter((r) => r.status === 412).map((r) => r.body.error)).toEqual(Array(19).fill('version_conflict'));
  const winner = won[0]!.body;
  expect(winner.version).toBe(2);
  expect(state(await get(id))).toEqual(state(winner));
  const i = answers.indexOf(won[0]!);
  expect(winner).toMatchObject(patchNo(i));
});

test('20 concurrent updates without If-Match: all 200, versions start+1 to start+20, the record is the last winner\'s', async () => {
  const id = await write();
  for (let i = 0; i < 3; i++) expect((await api.update(id, { body: `Warm-up ${i}.` })).status).toBe(200);
  const start = (await get(id)).version;
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => api.update(id, patchNo(i))));
  expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
  const versions = answers.map((r) => r.body.version).sort((a, b) => a - b);
  expect(versions).toEqual(Array.from({ length: 20 }, (_, k) => start + 1 + k));
  // Each answer is its own patch applied, at its own version.
  for (const [i, r] of answers.entries()) expect(r.body).toMatchObject(patchNo(i));
  const last = answers.find((r) => r.body.version === start + 20)!;
  const final = await get(id);
  expect(state(final)).toEqual(state(last.body));
  expect((await api.request('GET', `/api/v1/record/${id}`)).headers.get('etag')).toBe(`"${start + 20}"`);
});

test('workers that read the ETag and retry on 412: exactly one update succeeds per version', async () => {
  const id = await write();
  const wins: number[] = [];
  let conflicts = 0;
  const worker = async (w: number) => {
    for (let done = 0; done < 3; ) {
      const read = await api.request('GET', `/api/v1/record/${id}`);
      const r = await api.update(id, { body: `Worker ${w}, update ${done}.` }, { 'if-match': read.headers.get('etag')! });
      if (r.status === 200) {
        wins.push(r.body.version);
        done++;
      } else {
        expect({ status: r.status, error: r.body.error }).toEqual({ status: 412, error: 'version_conflict' });
        conflicts++;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
  expect([...wins].sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, k) => 2 + k));
  expect((await get(id)).version).toBe(25);
  // Not vacuous: the workers did race.
  expect(conflicts).toBeGreaterThan(0);
});

/** The n-th unique word: letters only, so that no analyzer splits it, and never a prefix of another. */
const wordNo = (n: number) => `zq${n.toString(26).replace(/./g, (d) => String.fromCharCode(97 + parseInt(d, 26)))}x`;
const textNo = (n: number) => ({ title: `Falcon note ${wordNo(n)}`, body: `Kept with the falcon records, revision ${wordNo(n)}.` });

test('searches racing updates never return a text older than the version acknowledged before they began', async () => {
  const id = await write(textNo(1));
  // Merged first, so that the first updates change the index itself (later ones find it in the tail or merged).
  await svc.indexMerged();
  const texts = new Map<number, { title: string; body: string }>([[1, textNo(1)]]);
  let acked = 1;
  let sent = 1;
  let updating = true;
  const violations: string[] = [];
  let hitsChecked = 0;

  const search = async (q: string): Promise<ApiResponse> => api.request('GET', `/api/v1/query?q=${encodeURIComponent(q)}&limit=100`);
  const searcher = async (k: number) => {
    for (let round = 0; updating; round++) {
      const floor = acked;
      // The stable word, the acknowledged word, words a few versions old and the next one.
      const n = [0, floor, floor - 1, floor - 3, floor + 1][(round + k) % 5]!;
      const q = n === 0 ? 'falcon' : wordNo(Math.max(1, n));
      const r = await search(q);
      const sentBy = sent;
      if (r.status !== 200) {
        violations.push(`search ${q} answered ${r.status}`);
        continue;
      }
      const hit = (r.body as any[]).find((h) => h.id === id);
      if (hit) {
        hitsChecked++;
        const text = texts.get(hit.version);
        if (hit.version < floor) violations.push(`search ${q} returned version ${hit.version}, after version ${floor} was acknowledged`);
        if (!text || text.title !== hit.title || text.body !== hit.body) violations.push(`search ${q} returned a text that is not version ${hit.version}'s: ${hit.title}`);
        if (!`${hit.title} ${hit.body}`.toLowerCase().includes(q)) violations.push(`search ${q} returned version ${hit.version}, which does not hold the word`);
      } else if (TEST_BACKEND === 'sqlite' && (n === 0 || (n === floor && sentBy === floor))) {
        // SQLite changes the index with the record: the acknowledged word must match while no later update was sent.
        violations.push(`search ${q} missed the record at version ${floor}`);
      }
    }
  };

  const updater = async () => {
    for (let n = 2; n <= 60; n++) {
      // In the AWS-shaped mode, the index is held back for the middle third of the run.
      if (n === 20) svc.stream?.hold();
      if (n === 40) svc.stream?.release();
      texts.set(n, textNo(n));
      sent = n;
      const r = await api.update(id, textNo(n));
      if (r.status !== 200 || r.body.version !== n) violations.push(`update ${n} answered ${r.status}, version ${r.body.version}`);
      acked = n;
    }
    updating = false;
  };
  try {
    await Promise.all([updater(), ...Array.from({ length: 4 }, (_, k) => searcher(k))]);
  } finally {
    svc.stream?.release();
  }
  expect(violations).toEqual([]);
  expect(hitsChecked).toBeGreaterThan(20);
  if (svc.stream) expect(svc.stream.heldReads).toBeGreaterThan(0);
  // Once the index has caught up, the last word finds the record and the older ones do not.
  expect((await api.recall({ q: wordNo(60) })).body.map((h: any) => [h.id, h.version])).toEqual([[id, 60]]);
  for (const n of [1, 19, 39, 59]) expect((await api.recall({ q: wordNo(n) })).body).toEqual([]);
  // A fixed amount of work (60 updates, four searchers racing them), not a timing: about 10 s alone on this
  // 2-core machine in the AWS-shaped mode, and past jest's 30 s once in CI, beside the other test worker in a
  // slow hour. The limit is only there to end a hang.
}, 120_000);
