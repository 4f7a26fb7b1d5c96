import { aRecord, startTestService, type Client, type TestService } from '../support/local-service.js';

/**
 * Search over real HTTP against the local service: English text matching (stemming, stop words, OR,
 * phrases, title weight), rank, the no-text "recent" search, filters, the result shape, hostile queries
 * and exact text round-trips. Each test works in its own tenant, so tests never see each other's records.
 */

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client for a new tenant with roomy limits. */
async function freshClient(): Promise<Client> {
  const key = await svc.newTenant();
  return svc.client(key.api_key);
}

/** Writes a record and returns its receipt, failing loudly on anything but 201. */
async function put(api: Client, overrides: Record<string, unknown> = {}): Promise<{ id: string; created_at: string; tenant_id: string }> {
  const res = await api.remember(aRecord(overrides));
  expect(res.status).toBe(201);
  return res.body;
}

/** Searches and returns the result array, failing loudly on anything but a 200 array. */
async function find(api: Client, params: Record<string, string | number> = {}): Promise<any[]> {
  const res = await api.recall(params);
  expect(res.status).toBe(200);
  expect(Array.isArray(res.body)).toBe(true);
  return res.body;
}

const ids = (results: any[]) => results.map((r) => r.id);

describe('English matching', () => {
  test('stemming: "running" finds "runs" and "runs" finds "running"', async () => {
    const api = await freshClient();
    const runs = await put(api, { title: 'The service runs nightly', body: 'Cron job.' });
    const running = await put(api, { title: 'Backups are running late', body: 'Storage job.' });
    const other = await put(api, { title: 'Unrelated note', body: 'Nothing here.' });

    const byRunning = ids(await find(api, { q: 'running' }));
    expect(byRunning).toEqual(expect.arrayContaining([runs.id, running.id]));
    expect(byRunning).not.toContain(other.id);

    const byRuns = ids(await find(api, { q: 'runs' }));
    expect(byRuns).toEqual(expect.arrayContaining([runs.id, running.id]));
    expect(byRuns).not.toContain(other.id);
  });

  test('stop words do not count: "the" alone finds nothing, "the dark" matches like "dark"', async () => {
    const api = await freshClient();
    const dark = await put(api, { title: 'The user prefers dark mode' });
    await put(api, { title: 'The light theme is the default', body: 'The end.' });

    expect(await find(api, { q: 'the' })).toEqual([]);
    expect(await find(api, { q: 'the and of' })).toEqual([]);

    const plain = await find(api, { q: 'dark' });
    const withStop = await find(api, { q: 'the dark' });
    expect(ids(plain)).toEqual([dark.id]);
    expect(ids(withStop)).toEqual(ids(plain));
    expect(withStop.map((r) => r.rank)).toEqual(plain.map((r) => r.rank));
  });

  test('a title match ranks above the same match in the body', async () => {
    const api = await freshClient();
    // The title record is written first, so the newest-first tie-break cannot put it on top by itself.
    const inTitle = await put(api, { title: 'The user likes the kestrel theme', body: 'Editor settings noted.' });
    const inBody = await put(api, { title: 'Editor settings noted', body: 'The user likes the kestrel theme.' });

    const results = await find(api, { q: 'kestrel' });
    expect(ids(results)).toEqual([inTitle.id, inBody.id]);
    expect(results[0].rank).toBeGreaterThan(results[1].rank);
  });

  test('OR semantics: each word alone matches, and a record with both words ranks above one with one', async () => {
    const api = await freshClient();
    // Written first, so the newest-first tie-break cannot put it on top by itself.
    const both = await put(api, { title: 'Alpha and beta releases planned', body: 'For both cohorts.' });
    const onlyAlpha = await put(api, { title: 'Alpha release planned', body: 'For the first cohort.' });
    const onlyBeta = await put(api, { title: 'Beta release planned', body: 'For the second cohort.' });
    const neither = await put(api, { title: 'Gamma release planned', body: 'For the third cohort.' });

    const results = await find(api, { q: 'alpha beta' });
    expect(ids(results)).toHaveLength(3);
    expect(ids(results)).toEqual(expect.arrayContaining([onlyAlpha.id, onlyBeta.id, both.id]));
    expect(ids(results)).not.toContain(neither.id);
    expect(results[0].id).toBe(both.id);
    expect(results[0].rank).toBeGreaterThan(results[1].rank);
    expect(results[0].rank).toBeGreaterThan(results[2].rank);
  });

  test('a quoted phrase matches the words in order only; phrases mix with plain words', async () => {
    const api = await freshClient();
    const phrase = await put(api, { title: 'The user prefers dark mode', body: 'Set in the editor.' });
    const reversed = await put(api, { title: 'The mode is dark', body: 'Set in the terminal.' });
    const other = await put(api, { title: 'Keyboard shortcuts enabled', body: 'Vim bindings.' });

    expect(ids(await find(api, { q: '"dark mode"' }))).toEqual([phrase.id]);
    // Both unquoted words match both records (OR).
    expect(ids(await find(api, { q: 'dark mode' }))).toEqual(expect.arrayContaining([phrase.id, reversed.id]));

    const mixed = ids(await find(api, { q: '"dark mode" vim' }));
    expect(mixed).toHaveLength(2);
    expect(mixed).toEqual(expect.arrayContaining([phrase.id, other.id]));
    expect(mixed).not.toContain(reversed.id);
  });
});

describe('rank', () => {
  test('rank is a number in [0, 1] that never increases from one result to the next', async () => {
    const api = await freshClient();
    const titles = [
      'Deploy pipeline notes',
      'Deploy deploy deploy: pipeline pipeline',
      'Pipeline cleanup',
      'Notes on the deploy of the pipeline and the pipeline tests',
      'A long title about a deploy that mentions many other words to dilute it considerably',
    ];
    for (const title of titles) await put(api, { title, body: 'pipeline body text' });

    const results = await find(api, { q: 'deploy pipeline' });
    expect(results).toHaveLength(titles.length);
    for (const r of results) {
      expect(typeof r.rank).toBe('number');
      expect(Number.isFinite(r.rank)).toBe(true);
      expect(r.rank).toBeGreaterThanOrEqual(0);
      expect(r.rank).toBeLessThanOrEqual(1);
    }
    for (let i = 1; i < results.length; i++) expect(results[i].rank).toBeLessThanOrEqual(results[i - 1].rank);
    expect(results[0].rank).toBeGreaterThan(0);
  });

  test('without q every rank is 0', async () => {
    const api = await freshClient();
    await put(api, { title: 'One' });
    await put(api, { title: 'Two' });
    const results = await find(api);
    expect(results).toHaveLength(2);
    for (const r of results) expect(r.rank).toBe(0);
  });
  test('rank is the share of what the query could score: a query word the tenant never used lowers it, the filters and limit do not', async () => {
    const api = await freshClient();
    const target = await put(api, { title: 'Deploy freeze over the holidays', body: 'No deploys from 20 December.' });
    await put(api, { title: 'Release notes for 4.2', body: 'Dark mode and faster exports.' });
    await put(api, { title: 'Holiday rota', body: 'Who covers support in December.', agent_id: 'other-agent' });
    const alone = (await find(api, { q: 'deploy' }))[0];
    expect(alone.id).toBe(target.id);
    const withUnknown = (await find(api, { q: 'deploy zyxwvut' }))[0];
    expect(withUnknown.id).toBe(target.id);
    expect(withUnknown.rank).toBeLessThan(alone.rank / 2 + 1e-9);
    const filtered = (await find(api, { q: 'deploy', agent_id: aRecord().agent_id as string, limit: 1 }))[0];
    expect(filtered.rank).toBe(alone.rank);
  });

  test('min_rank leaves out the hits ranked below it: 0 keeps all, 1 keeps none, and without q, where every hit ranks 0, any value above 0 keeps none', async () => {
    const api = await freshClient();
    const titles = ['Deploy pipeline notes', 'Pipeline cleanup', 'Notes on the deploy of the pipeline and its tests', 'A note that mentions a deploy in passing among many other words'];
    for (const title of titles) await put(api, { title, body: 'Body text.' });
    const all = await find(api, { q: 'deploy pipeline' });
    expect(all).toHaveLength(titles.length);
    // Ids and ranks: the classifier may fill in `classification` between two searches.
    const idsAndRanks = (results: any[]) => results.map((r) => [r.id, r.rank]);
    expect(idsAndRanks(await find(api, { q: 'deploy pipeline', min_rank: 0 }))).toEqual(idsAndRanks(all));
    expect(await find(api, { q: 'deploy pipeline', min_rank: 1 })).toEqual([]);
    const cut = all[1].rank;
    expect(cut).toBeGreaterThan(all.at(-1).rank);
    expect(ids(await find(api, { q: 'deploy pipeline', min_rank: cut }))).toEqual(ids(all.filter((r) => r.rank >= cut)));
    expect(ids(await find(api, { q: 'deploy pipeline', min_rank: String(cut), limit: 1 }))).toEqual([all[0].id]);
    expect(await find(api, { min_rank: 0 })).toHaveLength(titles.length);
    for (const min_rank of [1, 0.045, '1e-5']) expect(await find(api, { min_rank })).toEqual([]);
    // A blank q is no q.
    expect(await find(api, { q: ' ', min_rank: 0 })).toHaveLength(titles.length);
    expect(await find(api, { q: ' ', min_rank: 0.5 })).toEqual([]);
  });

  test('a min_rank that is not a number from 0 to 1 is 400 invalid_min_rank', async () => {
    const api = await freshClient();
    for (const min_rank of ['abc', '-0.1', '1.5', '2', 'NaN', '2e-0', '0x1', ' ', 'Infinity']) {
      const search = await api.recall({ q: 'deploy', min_rank });
      expect({ min_rank, status: search.status, body: search.body }).toEqual({
        min_rank,
        status: 400,
        body: expect.objectContaining({ error: 'invalid_min_rank', message: 'min_rank must be a number from 0 to 1' }),
      });
    }
    for (const min_rank of ['0', '1', '0.5', '.25', '0.', '1e-5']) expect((await api.recall({ q: 'deploy', min_rank })).status).toBe(200);
  });
});

describe('no q: recent records', () => {
  test('absent, empty and blank q all return every record newest first; other filters still apply', async () => {
    const api = await freshClient();
    const written: { id: string; created_at: string }[] = [];
    for (let i = 0; i < 5; i++) {
      written.push(await put(api, { title: `Record number ${i}`, agent_id: i % 2 === 0 ? 'even' : 'odd' }));
      await sleep(3);
    }
    const newestFirst = [...written].reverse().map((r) => r.id);

    for (const params of [{}, { q: '' }, { q: '   ' }] as Record<string, string>[]) {
      const results = await find(api, params);
      expect(ids(results)).toEqual(newestFirst);
      const times = results.map((r) => r.created_at);
      expect(times).toEqual([...times].sort().reverse());
      for (const r of results) expect(r.rank).toBe(0);

      const even = await find(api, { ...params, agent_id: 'even' });
      expect(ids(even)).toEqual(newestFirst.filter((id) => written.findIndex((w) => w.id === id) % 2 === 0));
      expect(ids(await find(api, { ...params, limit: 2 }))).toEqual(newestFirst.slice(0, 2));
    }
  });
});

describe('filters', () => {
  test('agent_id, type and client are exact-match filters', async () => {
    const api = await freshClient();
    const a = await put(api, { agent_id: 'agent-a', type: 'fact', client: 'acme', title: 'Dark theme one' });
    const b = await put(api, { agent_id: 'agent-b', type: 'decision', client: 'Acme', title: 'Dark theme two' });
    const c = await put(api, { agent_id: 'agent-a-2', type: 'signal', client: 'acme-corp', title: 'Dark theme three' });
    const d = await put(api, { agent_id: 'Agent-A', type: 'fact', title: 'Dark theme four' });

    expect(ids(await find(api, { agent_id: 'agent-a' }))).toEqual([a.id]);
    expect(ids(await find(api, { agent_id: 'Agent-A' }))).toEqual([d.id]);
    expect(ids(await find(api, { agent_id: 'agent' }))).toEqual([]);
    expect(ids(await find(api, { type: 'fact' }))).toEqual([d.id, a.id]);
    expect(ids(await find(api, { type: 'decision' }))).toEqual([b.id]);
    expect(ids(await find(api, { type: 'exchange' }))).toEqual([]);
    expect(ids(await find(api, { client: 'acme' }))).toEqual([a.id]);
    expect(ids(await find(api, { client: 'Acme' }))).toEqual([b.id]);
    expect(ids(await find(api, { client: 'acme-corp' }))).toEqual([c.id]);
    expect(ids(await find(api, { client: 'acm' }))).toEqual([]);
  });

  test('since takes a date or a date-time and keeps records created on or after it', async () => {
    const api = await freshClient();
    const first = await put(api, { title: 'Earlier dark note' });
    await sleep(5);
    const second = await put(api, { title: 'Later dark note' });
    expect(second.created_at > first.created_at).toBe(true);

    // A date-time between the two, and the second's own time (inclusive).
    const between = new Date(Date.parse(first.created_at) + 1).toISOString();
    expect(between <= second.created_at).toBe(true);
    expect(ids(await find(api, { since: between }))).toEqual([second.id]);
    expect(ids(await find(api, { since: second.created_at }))).toEqual([second.id]);
    expect(ids(await find(api, { since: first.created_at }))).toEqual([second.id, first.id]);
    // The same instant with an explicit offset, and without milliseconds.
    const later = new Date(Date.parse(second.created_at) + 1000);
    const laterNoMs = later.toISOString().replace(/\.\d{3}Z$/, '+00:00');
    expect(ids(await find(api, { since: laterNoMs }))).toEqual([]);
    const offset = second.created_at.replace('Z', '+00:00');
    expect(ids(await find(api, { since: offset }))).toEqual([second.id]);
    // A `+` written bare into the URL, which the query string reads as a space, is the offset's sign all the same.
    const bare = (since: string) => api.request('GET', `/api/v1/query?since=${since}`);
    const oneHourAhead = new Date(Date.parse(second.created_at) + 3_600_000).toISOString().replace('Z', '+01:00');
    expect(ids((await bare(oneHourAhead)).body)).toEqual([second.id]);
    expect(ids((await bare(oneHourAhead.replace('+01:00', '+01'))).body)).toEqual([second.id]);

    // A date means 00:00 UTC that day.
    const day = first.created_at.slice(0, 10);
    const nextDay = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(ids(await find(api, { since: day }))).toEqual([second.id, first.id]);
    expect(ids(await find(api, { since: nextDay }))).toEqual([]);

    // since combines with q.
    expect(ids(await find(api, { q: 'dark', since: between }))).toEqual([second.id]);
  });

  test('until keeps records created before it (exclusive, to the millisecond), and with since makes a range', async () => {
    const api = await freshClient();
    const first = await put(api, { title: 'Earlier dark note' });
    await sleep(5);
    const second = await put(api, { title: 'Later dark note' });
    await sleep(5);
    const third = await put(api, { title: 'Last dark note' });
    expect(first.created_at < second.created_at && second.created_at < third.created_at).toBe(true);
    const plus = (at: string, ms: number) => new Date(Date.parse(at) + ms).toISOString();

    for (const q of [{}, { q: 'dark' }] as Record<string, string>[]) {
      // The second's own time leaves it out; one millisecond later keeps it.
      expect(ids(await find(api, { ...q, until: second.created_at }))).toEqual([first.id]);
      expect(ids(await find(api, { ...q, until: plus(second.created_at, 1) }))).toEqual([second.id, first.id]);
      expect(ids(await find(api, { ...q, until: first.created_at }))).toEqual([]);
      // With since: a range, since inclusive, until exclusive.
      expect(ids(await find(api, { ...q, since: second.created_at, until: third.created_at }))).toEqual([second.id]);
      expect(ids(await find(api, { ...q, since: first.created_at, until: plus(third.created_at, 1) }))).toEqual([third.id, second.id, first.id]);
      // An empty range and one that ends before it starts find nothing.
      expect(ids(await find(api, { ...q, since: second.created_at, until: second.created_at }))).toEqual([]);
      expect(ids(await find(api, { ...q, since: third.created_at, until: first.created_at }))).toEqual([]);
    }
    // The same instant with an offset; a date means 00:00 UTC that day.
    expect(ids(await find(api, { q: 'dark', until: second.created_at.replace('Z', '+00:00') }))).toEqual([first.id]);
    const day = first.created_at.slice(0, 10);
    const nextDay = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(ids(await find(api, { q: 'dark', until: day }))).toEqual([]);
    if (third.created_at < `${nextDay}T00:00:00.000Z`) expect(ids(await find(api, { until: nextDay }))).toEqual([third.id, second.id, first.id]);
    // until combines with the other filters.
    expect(ids(await find(api, { q: 'dark', type: 'fact', until: third.created_at }))).toEqual([second.id, first.id]);
    expect(ids(await find(api, { q: 'dark', type: 'decision', until: third.created_at }))).toEqual([]);
  });

  test('a bad until is 400 invalid_until, with the listing\'s message', async () => {
    const api = await freshClient();
    for (const until of ['last week', '2026-13-01', '10000-01-01']) {
      const search = await api.recall({ until });
      expect(search.status).toBe(400);
      expect(search.body.error).toBe('invalid_until');
      expect(search.body.message).toBe('until must be a date (YYYY-MM-DD) or an ISO 8601 date-time, from 0001-01-01 to 9999-12-31 UTC');
    }
  });

  test('limit: 20 by default when there are more, then 1 and 100', async () => {
    const api = await freshClient();
    const written: string[] = [];
    for (let i = 0; i < 25; i++) written.push((await put(api, { title: `Limit test dark record ${i}` })).id);

    expect(await find(api)).toHaveLength(20);
    expect(await find(api, { q: 'dark' })).toHaveLength(20);
    expect(await find(api, { limit: 1 })).toHaveLength(1);
    expect(await find(api, { q: 'dark', limit: 1 })).toHaveLength(1);
    const all = await find(api, { limit: 100 });
    expect(all).toHaveLength(25);
    expect(new Set(ids(all))).toEqual(new Set(written));
    expect(await find(api, { q: 'dark', limit: 100 })).toHaveLength(25);
  });

  test('filters combine with q and with each other; unknown parameters are ignored', async () => {
    const api = await freshClient();
    const match = await put(api, { agent_id: 'bot', type: 'decision', client: 'acme', title: 'Adopt dark mode' });
    await put(api, { agent_id: 'bot', type: 'fact', client: 'acme', title: 'Dark mode is nice' });
    await put(api, { agent_id: 'other', type: 'decision', client: 'acme', title: 'Dark mode chosen' });
    await put(api, { agent_id: 'bot', type: 'decision', client: 'globex', title: 'Dark mode for globex' });
    await put(api, { agent_id: 'bot', type: 'decision', client: 'acme', title: 'Light theme rejected' });

    const params = { q: 'dark', agent_id: 'bot', type: 'decision', client: 'acme' };
    expect(ids(await find(api, params))).toEqual([match.id]);
    expect(ids(await find(api, { ...params, foo: 'bar', page: 3, sort: 'asc', tenant_id: 'someone-else' }))).toEqual([match.id]);
    expect(await find(api, { foo: 'bar' })).toHaveLength(5);
  });
});

describe('result shape', () => {
  test('each element has exactly the documented keys; client and metadata are null when not given', async () => {
    const api = await freshClient();
    const bare = await put(api, { title: 'Bare shape record' });
    const results = await find(api, { q: 'shape' });
    expect(results).toHaveLength(1);
    const [r] = results;
    expect(Object.keys(r).sort()).toEqual(
      ['agent_id', 'body', 'classification', 'client', 'created_at', 'id', 'metadata', 'rank', 'title', 'type', 'version', 'updated_at', 'superseded_by'].sort(),
    );
    expect(r).toMatchObject({
      id: bare.id,
      agent_id: 'agent-1',
      type: 'fact',
      title: 'Bare shape record',
      body: 'Noted during setup.',
      client: null,
      created_at: bare.created_at,
      metadata: null,
      version: 1,
      updated_at: null,
      superseded_by: null,
    });
    expect(r.classification === null || typeof r.classification === 'object').toBe(true);
  });

  test('metadata is returned as given and is never searched', async () => {
    const api = await freshClient();
    const metadata = {
      source: 'zanzibar',
      nested: { list: [1, 'two', { three: 3 }], flag: true, nothing: null },
      number: 1.5,
      text: 'naïve café 日本語 🚀',
    };
    const rec = await put(api, { title: 'Metadata holder', body: 'Plain body.', client: 'acme', metadata });

    const [r] = await find(api, { q: 'holder' });
    expect(r.id).toBe(rec.id);
    expect(r.metadata).toEqual(metadata);
    expect(r.client).toBe('acme');

    expect(await find(api, { q: 'zanzibar' })).toEqual([]);
    expect(await find(api, { q: 'nested' })).toEqual([]);
    expect(await find(api, { q: 'source' })).toEqual([]);
  });

  test('text is stored exactly as sent', async () => {
    const api = await freshClient();
    const title = '  Leading and trailing spaces, naïve café, e\u0301 (combining), \uFB01 ligature  ';
    const body = '\n  Line one\r\nLine two\twith tab\n\nemoji 🚀👩‍💻, 日本語, العربية, Ω ≠ Ω  \n';
    const agent_id = ' spaced agent ';
    const client = ' Client\u00A0Tag ';
    const rec = await put(api, { agent_id, title, body, client });

    const [r] = await find(api, { agent_id });
    expect(r.id).toBe(rec.id);
    expect(r.title).toBe(title);
    expect(r.body).toBe(body);
    expect(r.agent_id).toBe(agent_id);
    expect(r.client).toBe(client);
    expect(ids(await find(api, { client }))).toEqual([rec.id]);
    expect(ids(await find(api, { agent_id: 'spaced agent' }))).toEqual([]);
    // The text is still searchable by its words.
    expect(ids(await find(api, { q: 'ligature' }))).toEqual([rec.id]);
  });
});

describe('hostile queries', () => {
  let api: Client;
  let dark: string;
  let unbalanced: string;
  let chinese: string;
  let arabic: string;
  beforeAll(async () => {
    api = await freshClient();
    dark = (await put(api, { title: 'The user prefers dark mode', body: 'Set in the editor.' })).id;
    unbalanced = (await put(api, { title: 'An unbalanced workload', body: 'Queue depth grows.' })).id;
    chinese = (await put(api, { title: '用户 喜欢 深色模式', body: '在编辑器中设置' })).id;
    arabic = (await put(api, { title: 'المستخدم يفضل الوضع الداكن', body: 'في المحرر' })).id;
    await put(api, { title: 'Launch party 🚀 tonight', body: 'Cake.' });
  });

  const longQuery = ('dark ' + 'x'.repeat(40) + ' ').repeat(50).slice(0, 2000);
  const manyWords = ['dark', ...Array.from({ length: 499 }, (_, i) => `word${i}`)].join(' ');

  const cases: [string, string, 'dark' | 'none' | 'any'][] = [
    ['lone quote', '"', 'none'],
    ['unbalanced quote', '"unbalanced', 'any'],
    ['NEAR group', 'NEAR(dark mode)', 'dark'],
    ['NEAR infix', 'a NEAR b', 'any'],
    ['star', '*', 'none'],
    ['prefix star', 'dark*', 'dark'],
    ['column filter', 'title:dark', 'dark'],
    ['column set filter', '{title}: dark', 'dark'],
    ['open paren', '(dark', 'dark'],
    ['close paren', 'dark)', 'dark'],
    ['SQL injection', "'; DROP TABLE records; --", 'any'],
    ['AND alone', 'AND', 'none'],
    ['OR OR', 'OR OR', 'none'],
    ['NOT', 'NOT dark', 'dark'],
    ['caret', '^dark', 'dark'],
    ['minus', '-dark', 'dark'],
    ['plus', '+dark', 'dark'],
    ['trailing AND', 'dark AND', 'dark'],
    ['backslash', '\\', 'none'],
    ['emoji', '🚀🔥', 'any'],
    ['Chinese', '深色模式', 'any'],
    ['Arabic', 'الداكن', 'any'],
    ['2000 characters', longQuery, 'dark'],
    ['500 distinct words', manyWords, 'dark'],
    ['control characters', 'dark\u0000\u0007\u001b[31m', 'dark'],
    ['percent and ampersand', '100% & dark=1', 'dark'],
  ];

  test.each(cases)('%s never fails and returns an array', async (_name, q, expectation) => {
    const res = await api.recall({ q });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Array.isArray(res.body)).toBe(true);
    if (expectation === 'dark') expect(ids(res.body)).toContain(dark);
    if (expectation === 'none') expect(res.body).toEqual([]);
    for (const r of res.body) {
      expect(r.rank).toBeGreaterThanOrEqual(0);
      expect(r.rank).toBeLessThanOrEqual(1);
    }
  });

  test('the 2000-character query is really that long', () => {
    expect(longQuery).toHaveLength(2000);
    expect(new Set(manyWords.split(' ')).size).toBe(500);
  });

  test('operators are words, not syntax', async () => {
    // NOT does not exclude, AND does not require, OR does not need both sides.
    expect(ids(await find(api, { q: 'NOT dark' }))).toEqual([dark]);
    expect(ids(await find(api, { q: 'dark AND unbalanced' }))).toEqual(expect.arrayContaining([dark, unbalanced]));
    expect(ids(await find(api, { q: 'dark -mode' }))).toEqual([dark]);
    expect(ids(await find(api, { q: 'body:dark' }))).toEqual([dark]);
    // A quote left open reads as plain words.
    expect(ids(await find(api, { q: '"unbalanced' }))).toEqual([unbalanced]);
    expect(ids(await find(api, { q: 'dark "unbalanced' }))).toEqual(expect.arrayContaining([dark, unbalanced]));
  });

  test('the SQL in a query is not run: the records are all still there', async () => {
    await find(api, { q: "'; DROP TABLE records; --" });
    await find(api, { q: "dark'); DELETE FROM records; --" });
    expect(await find(api, { limit: 100 })).toHaveLength(5);
    expect(ids(await find(api, { q: 'dark' }))).toEqual([dark]);
  });

  test('non-Latin text is matched by its words', async () => {
    expect(ids(await find(api, { q: '深色模式' }))).toEqual([chinese]);
    expect(ids(await find(api, { q: 'الداكن' }))).toEqual([arabic]);
  });
});
