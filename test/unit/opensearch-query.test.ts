import { RANKING } from '../../shared/domain/rank.js';
import { buildSearchRequest, TITLE_BOOST } from '../../shared/adapters/aws/opensearch/query.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import type { SearchQuery } from '../../shared/ports.js';

const TENANT = '0193a000-0000-7000-8000-00000000000a';
const SOURCE = ['record'];
const RANKED_SORT = [{ _score: 'desc' }, { created_at: 'desc' }, { id: 'desc' }];
const tenantFilter = { term: { tenant_id: TENANT } };
/** Current records only: superseded_by null is not indexed, so a current record has none. */
const current = { bool: { must_not: [{ exists: { field: 'superseded_by' } }] } };
/** The title weight, read from RANKING and never written down: it is re-tuned there. */
const W = RANKING.titleWeight;

function build(q: string | null, rest: Partial<SearchQuery> = {}) {
  return buildSearchRequest(TENANT, { text: parseQuery(q), limit: 20, ...rest });
}

/** Every leaf query of a request body, as [kind, argument] pairs. */
function leaves(node: unknown, out: [string, unknown][] = []): [string, unknown][] {
  if (Array.isArray(node)) for (const n of node) leaves(n, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (['term', 'range', 'match', 'match_phrase'].includes(k)) out.push([k, v]);
      else leaves(v, out);
    }
  }
  return out;
}

describe('OpenSearch query builder', () => {
  test('the title weighs what it weighs in the embedded engine', () => {
    expect(TITLE_BOOST).toBe(RANKING.titleWeight);
  });

  test('every title clause, word or phrase, carries the title weight; no body clause is boosted; adjacent words also weigh RANKING.proximity', () => {
    type Clause = Record<string, Record<string, { query: string; boost?: number }>>;
    const { should } = (build('deploy "dark mode" failing "blue green"')!.body.query as { bool: { should: Clause[] } }).bool;
    expect(should.map((clause) => Object.keys(clause)[0])).toEqual(['match', 'match', 'match_phrase', 'match_phrase', 'match_phrase', 'match_phrase', 'match_phrase', 'match_phrase']);
    for (const clause of should) {
      const [field, arg] = Object.entries(Object.values(clause)[0]!)[0]!;
      const pair = 'match_phrase' in clause && arg.query === 'deploy failing';
      if (field === 'title') expect(arg.boost).toBe(RANKING.titleWeight * (pair ? RANKING.proximity : 1));
      else expect([field, arg.boost]).toEqual(['body', pair ? RANKING.proximity : undefined]);
    }
  });

  test('each two words that follow one another in the query (stop words dropped) are a phrase weighing RANKING.proximity, as the embedded engine ranks them', () => {
    const { should } = (build('when did Sam move to Berlin')!.body.query as { bool: { should: unknown[] } }).bool;
    expect(should.slice(2)).toEqual([
      { match_phrase: { title: { query: 'sam move', boost: W * RANKING.proximity } } },
      { match_phrase: { body: { query: 'sam move', boost: RANKING.proximity } } },
      { match_phrase: { title: { query: 'move berlin', boost: W * RANKING.proximity } } },
      { match_phrase: { body: { query: 'move berlin', boost: RANKING.proximity } } },
    ]);
    // One word, or one word twice, is no pair.
    expect((build('deploy deploy')!.body.query as { bool: { should: unknown[] } }).bool.should).toHaveLength(2);
  });

  test('words only: one OR match per field, title boosted, at least one must match', () => {
    expect(build('running fast deploys')).toEqual({
      routing: TENANT,
      body: {
        size: 20,
        track_total_hits: false,
        _source: SOURCE,
        query: {
          bool: {
            filter: [tenantFilter, current],
            should: [
              { match: { title: { query: 'running fast deploys', boost: W } } },
              { match: { body: { query: 'running fast deploys' } } },
              { match_phrase: { title: { query: 'running fast', boost: W * RANKING.proximity } } },
              { match_phrase: { body: { query: 'running fast', boost: RANKING.proximity } } },
              { match_phrase: { title: { query: 'fast deploys', boost: W * RANKING.proximity } } },
              { match_phrase: { body: { query: 'fast deploys', boost: RANKING.proximity } } },
            ],
            minimum_should_match: 1,
          },
        },
        sort: RANKED_SORT,
      },
    });
  });

  test('phrases only: a match_phrase per field for each phrase', () => {
    expect(build('"dark mode" "the file server"')).toEqual({
      routing: TENANT,
      body: {
        size: 20,
        track_total_hits: false,
        _source: SOURCE,
        query: {
          bool: {
            filter: [tenantFilter, current],
            should: [
              { match_phrase: { title: { query: 'dark mode', boost: W } } },
              { match_phrase: { body: { query: 'dark mode' } } },
              { match_phrase: { title: { query: 'the file server', boost: W } } },
              { match_phrase: { body: { query: 'the file server' } } },
            ],
            minimum_should_match: 1,
          },
        },
        sort: RANKED_SORT,
      },
    });
  });

  test('words and phrases together, stop words dropped from the words only', () => {
    expect(build('the "dark mode" is running', { limit: 5 })).toEqual({
      routing: TENANT,
      body: {
        size: 5,
        track_total_hits: false,
        _source: SOURCE,
        query: {
          bool: {
            filter: [tenantFilter, current],
            should: [
              { match: { title: { query: 'running', boost: W } } },
              { match: { body: { query: 'running' } } },
              { match_phrase: { title: { query: 'dark mode', boost: W } } },
              { match_phrase: { body: { query: 'dark mode' } } },
            ],
            minimum_should_match: 1,
          },
        },
        sort: RANKED_SORT,
      },
    });
  });

  test('compatibility characters in the query are matched in their NFKC form', () => {
    expect(build('ﬁle')!.body.query).toEqual({
      bool: {
        filter: [tenantFilter, current],
        should: [{ match: { title: { query: 'file', boost: W } } }, { match: { body: { query: 'file' } } }],
        minimum_should_match: 1,
      },
    });
  });

  test.each([
    ['agent_id', { agent_id: 'support-bot' }, { term: { agent_id: 'support-bot' } }],
    ['type', { type: 'decision' as const }, { term: { type: 'decision' } }],
    ['client', { client: 'acme' }, { term: { client: 'acme' } }],
    ['since', { since: '2026-11-01T00:00:00.000Z' }, { range: { created_at: { gte: '2026-11-01T00:00:00.000Z' } } }],
    ['until', { until: '2026-11-08T00:00:00.000Z' }, { range: { created_at: { lt: '2026-11-08T00:00:00.000Z' } } }],
    [
      'since and until',
      { since: '2026-11-01T00:00:00.000Z', until: '2026-11-08T00:00:00.000Z' },
      { range: { created_at: { gte: '2026-11-01T00:00:00.000Z', lt: '2026-11-08T00:00:00.000Z' } } },
    ],
  ])('the %s filter goes in filter context, after the tenant', (_name, rest, clause) => {
    expect(build('alpha', rest)!.body.query).toEqual({
      bool: {
        filter: [tenantFilter, clause, current],
        should: [{ match: { title: { query: 'alpha', boost: W } } }, { match: { body: { query: 'alpha' } } }],
        minimum_should_match: 1,
      },
    });
  });

  test('every filter at once, in a fixed order; null filters are left out', () => {
    const all = { agent_id: 'a', type: 'fact' as const, client: 'c', since: '2026-11-01T00:00:00.000Z' };
    expect(build(null, all)!.body.query).toEqual({
      bool: {
        filter: [
          tenantFilter,
          { term: { agent_id: 'a' } },
          { term: { type: 'fact' } },
          { term: { client: 'c' } },
          { range: { created_at: { gte: '2026-11-01T00:00:00.000Z' } } },
          current,
        ],
      },
    });
    expect(build(null, { agent_id: null, client: null })!.body.query).toEqual({ bool: { filter: [tenantFilter, current] } });
  });

  test('superseded records are left out unless include_superseded, with text and without', () => {
    for (const q of ['alpha', null]) {
      expect(build(q)!.body.query!.bool!.filter).toEqual([tenantFilter, current]);
      expect(build(q, { include_superseded: false })!.body.query!.bool!.filter).toEqual([tenantFilter, current]);
      expect(build(q, { include_superseded: true })!.body.query!.bool!.filter).toEqual([tenantFilter]);
    }
  });

  test('no text: a filter-only query, newest first', () => {
    expect(build(null, { limit: 7 })).toEqual({
      routing: TENANT,
      body: {
        size: 7,
        track_total_hits: false,
        _source: SOURCE,
        query: { bool: { filter: [tenantFilter, current] } },
        sort: [{ created_at: 'desc' }, { id: 'desc' }],
      },
    });
    expect(build('   ')).toEqual(build(null));
  });

  test('text of only stop words or punctuation needs no request', () => {
    for (const q of ['the', 'the of and', '*', '*:()', '"" ""', '---']) expect(build(q)).toBeNull();
  });

  test('no text with a min_rank above 0 needs no request: every record it would list ranks 0', () => {
    expect(build(null, { min_rank: 0.001 })).toBeNull();
    expect(build(null, { min_rank: 1, agent_id: 'a' })).toBeNull();
    expect(build(null, { min_rank: 0 })).toEqual(build(null));
  });

  test('hostile input is only ever the text of match and match_phrase queries', () => {
    const hostile = [
      'title:(secret OR admin*) AND body:"drop"',
      "'; DROP TABLE records; --",
      'foo) OR (bar',
      'tenant_id:* OR _id:*',
      '\\" {"query_string":{"query":"*"}}',
      '东京 タワー Москва',
      '"unclosed phrase',
    ];
    for (const q of hostile) {
      const request = build(q)!;
      // The request without the user's text (a word such as "query_string" may be text): no such query anywhere.
      const json = JSON.stringify(request.body, (key, value) => (key === 'query' && typeof value === 'string' ? '' : value));
      expect(json).not.toMatch(/query_string|simple_query_string|wildcard|regexp|prefix|script/);
      expect(request.routing).toBe(TENANT);
      const found = leaves(request.body.query);
      // The tenant filter is there, unchanged, and the user's text became nothing but words.
      expect(found[0]).toEqual(['term', { tenant_id: TENANT }]);
      for (const [kind, arg] of found.slice(1)) {
        expect(['match', 'match_phrase']).toContain(kind);
        const [field] = Object.values(arg as Record<string, { query: string }>);
        // Words and identifiers (words joined by - _ . /: shared/text/tokens.ts), space-separated.
        expect(field!.query).toMatch(/^[\p{L}\p{N}\p{M}]+([-_./ ][\p{L}\p{N}\p{M}]+)*$/u);
      }
    }
    expect(build('title:(secret OR admin*) AND body:"drop"')!.body.query).toEqual({
      bool: {
        filter: [tenantFilter, current],
        should: [
          { match: { title: { query: 'title secret admin body', boost: W } } },
          { match: { body: { query: 'title secret admin body' } } },
          { match_phrase: { title: { query: 'drop', boost: W } } },
          { match_phrase: { body: { query: 'drop' } } },
          ...['title secret', 'secret admin', 'admin body'].flatMap((pair) => [
            { match_phrase: { title: { query: pair, boost: W * RANKING.proximity } } },
            { match_phrase: { body: { query: pair, boost: RANKING.proximity } } },
          ]),
        ],
        minimum_should_match: 1,
      },
    });
    const { should } = (build('东京 タワー Москва')!.body.query as { bool: { should: unknown[] } }).bool;
    expect(should.slice(0, 2)).toMatchObject([{ match: { title: { query: '东京 タワー москва' } } }, { match: { body: { query: '东京 タワー москва' } } }]);
  });

  test('a filter value is passed as an exact term, whatever it holds', () => {
    const request = build(null, { agent_id: '*) OR tenant_id:*', client: '" OR 1=1 --' })!;
    expect(request.body.query).toEqual({
      bool: {
        filter: [tenantFilter, { term: { agent_id: '*) OR tenant_id:*' } }, { term: { client: '" OR 1=1 --' } }, current],
      },
    });
  });
});
