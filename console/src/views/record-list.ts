import type { MemoryRecord, SearchHit } from '../../../sdk/src/index.js';
import type { Clause } from '../../../shared/search/query.js';
import { routeHref } from '../app.js';
import { h } from '../dom.js';
import { when } from '../format.js';
import { highlighted, snippet } from '../highlight.js';

/**
 * One record in a list: its title as a link to it (which carries `back`, the list's own route, so that the
 * record's back link and a delete return to this list, its filters and search kept), and a line of what it
 * is (with its version once it was edited); a superseded record is marked, with a link to the record that
 * replaced it. A search hit also shows its rank and a snippet of its body where the search matched, and the
 * words it matched on are marked in both.
 */
export function recordItem(record: MemoryRecord | SearchHit, back: string, clauses: readonly Clause[] = []): HTMLLIElement {
  const facts = [
    record.type,
    `agent ${record.agent_id}`,
    record.client === null ? null : `client ${record.client}`,
    when(record.created_at),
    record.version > 1 ? `version ${record.version}` : null,
  ];
  const rank = 'rank' in record ? h('span', { class: 'rank', title: 'Rank: 0 to 1, higher is a better match' }, `rank ${record.rank.toFixed(3)}`) : null;
  const superseded =
    record.superseded_by === null
      ? null
      : h('p', { class: 'superseded-note' }, h('span', { class: 'badge' }, 'Superseded'), ' by ', h('a', { href: routeHref('record', { back }, record.superseded_by) }, 'a newer record'));
  return h(
    'li',
    { class: record.superseded_by === null ? 'record' : 'record superseded' },
    h('div', { class: 'record-head' }, h('a', { href: routeHref('record', { back }, record.id) }, ...highlighted(record.title, clauses)), rank),
    h('p', { class: 'facts' }, facts.filter(Boolean).join(' · ')),
    superseded,
    'rank' in record && record.body !== '' ? h('p', { class: 'snippet' }, ...snippet(record.body, clauses)) : null,
  );
}
