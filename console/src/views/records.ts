import type { ListQuery } from '../../../sdk/src/index.js';
import { routeHref, type ConsoleApp, type Route } from '../app.js';
import { h } from '../dom.js';
import { filterFields, filterValues, queryFilters, routeFilters } from './filters.js';
import { recordItem } from './record-list.js';

const FILTERS = ['agent_id', 'type', 'client', 'since', 'until', 'include_superseded'] as const;
const PAGE_SIZE = 25;

/**
 * The cursors of the pages seen, by page number, for the filters they were seen with: what "Newer" goes
 * back to. A cursor is only valid with its filters, so other filters start a new trail.
 */
const trail = { filters: '', cursors: new Map<number, string | undefined>() };

/**
 * `#/records`: the tenant's records, newest first, page by page, filtered by agent, type, client and dates;
 * superseded records only when asked for.
 */
export async function recordsView(app: ConsoleApp, route: Route): Promise<void> {
  const main = document.getElementById('main')!;
  const filters = routeFilters(route.params, FILTERS);
  const filterKey = JSON.stringify(filters);
  if (trail.filters !== filterKey) trail.cursors = new Map([[1, undefined]]);
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
  const result = await app.call((client) => client.listPage(query));
  if (!result) return;

  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const newer = trail.cursors.has(page - 1) ? routeHref('records', { ...filters, page: page > 2 ? String(page - 1) : undefined, cursor: trail.cursors.get(page - 1) }) : null;
  if (newer) pager.append(h('a', { href: newer, class: 'button secondary', rel: 'prev' }, '← Newer'));
  if (result.next_cursor !== null) {
    pager.append(h('a', { href: routeHref('records', { ...filters, page: String(page + 1), cursor: result.next_cursor }), class: 'button secondary', rel: 'next' }, 'Older →'));
  }
  const shown = result.records.length === 0 ? 'No records match.' : `Page ${page}: ${result.records.length} record${result.records.length === 1 ? '' : 's'}, newest first.`;
  main.append(h('p', { class: 'summary', role: 'status' }, shown), h('ol', { class: 'records' }, ...result.records.map((r) => recordItem(r))), pager);
}
