import type { ListQuery, MemoryClient } from '../../../sdk/src/index.js';
import { routeHref, type ConsoleApp, type Route } from '../app.js';
import { h } from '../dom.js';
import { count } from '../format.js';
import { filterFields, filterValues, queryFilters, routeFilters } from './filters.js';
import { recordItem } from './record-list.js';

// The two dates side by side, on a row of their own.
const FILTERS = ['agent_id', 'type', 'client', 'include_superseded', 'since', 'until'] as const;
const PAGE_SIZE = 25;

/**
 * The API has no count of records: the console counts by listing, COUNT_PAGE records a call, and stops at
 * COUNT_LIMIT (then it says "1,000 or more"), so a view costs at most COUNT_LIMIT / COUNT_PAGE calls more.
 */
export const COUNT_LIMIT = 1000;
const COUNT_PAGE = 100;

/** How many records a listing with these filters holds, up to COUNT_LIMIT; `more` when it holds more. */
interface Count {
  n: number;
  more: boolean;
}

/**
 * The cursors of the pages seen, by page number, for the filters they were seen with: what "Newer" goes
 * back to. A cursor is only valid with its filters, so other filters start a new trail. The trail also keeps
 * the count of its records, taken on its first page and again after a change this console made.
 */
const trail = { filters: '', cursors: new Map<number, string | undefined>(), count: null as Count | null, changes: -1 };

/**
 * Counts the records a listing with this query holds, a page of COUNT_PAGE at a time: at most
 * COUNT_LIMIT / COUNT_PAGE calls, `more` when the listing goes on after them.
 */
async function countOf(client: MemoryClient, query: ListQuery): Promise<Count> {
  let n = 0;
  let cursor: string | undefined;
  for (let call = 0; call < COUNT_LIMIT / COUNT_PAGE; call++) {
    const page = await client.listPage({ ...query, limit: COUNT_PAGE, ...(cursor === undefined ? {} : { cursor }) });
    n += page.records.length;
    if (page.next_cursor === null) return { n, more: false };
    cursor = page.next_cursor;
  }
  return { n, more: true };
}

/** countOf, or null when a call fails: the page is still shown (a failure of its own call says what went wrong). */
function tryCount(client: MemoryClient, query: ListQuery): Promise<Count | null> {
  return countOf(client, query).catch(() => null);
}

/** "27 records", "1 record", "1,000 or more records". */
function records(c: Count): string {
  return `${count(c.n)}${c.more ? ' or more' : ''} record${c.n === 1 && !c.more ? '' : 's'}`;
}

/**
 * What the page shows, with the count: "This tenant holds 27 records (superseded ones not counted). Page 2
 * shows 26–27, newest first." Filtered (or for a key bound to an agent): "27 records match." Without a count
 * (counting failed): "Page 2: 2 records, newest first."
 */
export function pageSummary(c: Count | null, page: number, shown: number, filtered: boolean, superseded: boolean): string {
  if (c === null) return shown === 0 ? 'No records match.' : `Page ${page}: ${count(shown)} record${shown === 1 ? '' : 's'}, newest first.`;
  const held = filtered
    ? c.n === 0 ? 'No records match.' : `${records(c)} match${c.n === 1 && !c.more ? 'es' : ''}.`
    : c.n === 0 ? 'This tenant holds no records yet.' : `This tenant holds ${records(c)}${superseded ? ', superseded ones included' : ' (superseded ones not counted)'}.`;
  if (shown === 0) return held;
  const first = (page - 1) * PAGE_SIZE + 1;
  return `${held} Page ${page} shows ${shown === 1 ? count(first) : `${count(first)}–${count(first + shown - 1)}`}, newest first.`;
}

/**
 * `#/records`: the tenant's records, newest first, page by page, filtered by agent, type, client and dates;
 * superseded records only when asked for; with how many there are.
 */
export async function recordsView(app: ConsoleApp, route: Route): Promise<void> {
  const main = document.getElementById('main')!;
  const filters = routeFilters(route.params, FILTERS);
  const filterKey = JSON.stringify(filters);
  if (trail.filters !== filterKey) {
    trail.cursors = new Map([[1, undefined]]);
    trail.count = null;
  }
  trail.filters = filterKey;
  const page = Math.max(1, Number(route.params.get('page')) || 1);
  const cursor = route.params.get('cursor') ?? undefined;
  trail.cursors.set(page, cursor);

  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter records' },
    ...filterFields(app, FILTERS, route.params),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply filters'), h('a', { href: '#/records', class: 'button secondary' }, 'Clear')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = routeHref('records', filterValues(form, FILTERS));
  });
  main.append(h('h2', { tabindex: '-1' }, 'Records'), form);

  if (app.may('read') === false) {
    main.append(h('p', { class: 'notice' }, 'This key lacks the read scope, so it cannot list records. Forgetting by filter may still work if it has the delete scope.'));
    return;
  }
  const query: ListQuery = { ...queryFilters(filters), limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) };
  // The count is taken again on the first page, and after a change: paging on uses the one taken.
  const recount = page === 1 || trail.count === null || trail.changes !== app.changes;
  const changes = app.changes;
  const answer = await app.call((client) =>
    Promise.all([client.listPage(query), recount ? tryCount(client, queryFilters(filters)) : Promise.resolve(trail.count)]),
  );
  if (!answer) return;
  const [result, held] = answer;
  trail.count = held;
  trail.changes = changes;

  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const newer = trail.cursors.has(page - 1) ? routeHref('records', { ...filters, page: page > 2 ? String(page - 1) : undefined, cursor: trail.cursors.get(page - 1) }) : null;
  if (newer) pager.append(h('a', { href: newer, class: 'button secondary', rel: 'prev' }, '← Newer'));
  if (result.next_cursor !== null) {
    pager.append(h('a', { href: routeHref('records', { ...filters, page: String(page + 1), cursor: result.next_cursor }), class: 'button secondary', rel: 'next' }, 'Older →'));
  }
  const { include_superseded, ...narrowing } = filters;
  const filtered = Object.keys(narrowing).length > 0 || app.boundAgent !== undefined;
  const shown = pageSummary(held, page, result.records.length, filtered, include_superseded === 'true');
  main.append(h('p', { class: 'summary', role: 'status' }, shown), h('ol', { class: 'records' }, ...result.records.map((r) => recordItem(r, location.hash))), pager);
}
