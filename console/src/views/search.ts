import type { RecallQuery } from '../../../sdk/src/index.js';
import { definedOnly, routeHref, type ConsoleApp, type Route } from '../app.js';
import { field, formValue, h } from '../dom.js';
import { queryClauses } from '../highlight.js';
import { filterFields, filterValues, queryFilters, routeFilters } from './filters.js';
import { recordItem } from './record-list.js';
import { SUGGESTED_MIN_RANK } from '../../../shared/domain/rank.js';

// The two dates side by side, on the row of Results and Matches.
const FILTERS = ['agent_id', 'type', 'client', 'include_superseded', 'since', 'until'] as const;

/**
 * `#/search?q=…`: a search, best first, with rank and title and a snippet of the body where it matched, the
 * words it matched on marked as the service reads them. It runs only once asked (`run=1` in the route): each
 * search counts against the query quota.
 */
export async function searchView(app: ConsoleApp, route: Route): Promise<void> {
  const main = document.getElementById('main')!;
  const q = route.params.get('q') ?? '';
  const limit = route.params.get('limit') ?? '20';
  // Every match by default: a person looking through the memory wants to see what is there, weak matches too,
  // each with its rank; the suggested cut-off (what MCP applies for agents) is one choice away.
  const minRank = route.params.get('min_rank') ?? '';
  const input = h('input', { name: 'q', type: 'search', value: q, autocomplete: 'off', placeholder: 'When did the user move to Berlin?' });
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Search records' },
    h('div', { class: 'wide' }, field('Question or words', input, 'Empty: the newest records.')),
    ...filterFields(app, FILTERS, route.params),
    field('Results', h('select', { name: 'limit' }, ...['10', '20', '50', '100'].map((n) => h('option', { value: n, selected: n === limit }, n)))),
    field(
      'Matches',
      h(
        'select',
        { name: 'min_rank' },
        h('option', { value: '', selected: minRank === '' }, 'Every match'),
        h('option', { value: String(SUGGESTED_MIN_RANK), selected: minRank === String(SUGGESTED_MIN_RANK) }, `Relevant only (rank ≥ ${SUGGESTED_MIN_RANK})`),
      ),
      'Relevant only: the cut-off agents get by default.',
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = routeHref('search', {
      q: formValue(form, 'q'),
      ...filterValues(form, FILTERS),
      limit: formValue(form, 'limit'),
      ...definedOnly({ min_rank: formValue(form, 'min_rank') }),
      run: '1',
    });
  });
  main.append(h('h2', { tabindex: '-1' }, 'Search'), form);
  if (app.may('read') === false) {
    main.append(h('p', { class: 'notice' }, 'This key lacks the read scope, so it cannot search.'));
    return;
  }
  if (route.params.get('run') !== '1') {
    main.append(h('p', { class: 'hint' }, 'Ask a question in plain English, or give a few words. Each search counts against the month’s query quota.'));
    return;
  }
  // Without q every record ranks 0, so the cut-off would leave them all out: it goes with a question only.
  const cut = minRank === '' || q.trim() === '' ? {} : { min_rank: Number(minRank) };
  const query: RecallQuery = { ...definedOnly({ q }), ...queryFilters(routeFilters(route.params, FILTERS)), limit: Number(limit), ...cut };
  const hits = await app.call((client) => client.recall(query));
  if (!hits) return;
  const clauses = queryClauses(q);
  const nothing = q && minRank !== '' ? `Nothing ranks at or above ${minRank}: choose Every match to see weaker ones.` : 'Nothing matches.';
  const summary = hits.length === 0 ? nothing : `${hits.length} result${hits.length === 1 ? '' : 's'}, ${q ? 'best first' : 'newest first'}.`;
  main.append(h('p', { class: 'summary', role: 'status' }, summary), h('ol', { class: 'records' }, ...hits.map((hit) => recordItem(hit, location.hash, clauses))));
}
