import type { MemoryRecord, SearchHit } from '../../../sdk/src/index.js';
import { routeHref } from '../app.js';
import { h } from '../dom.js';
import { when } from '../format.js';
import { highlighted } from '../highlight.js';

/**
 * One record in a list: its title as a link to it, and a line of what it is (with its version once it was
 * edited); a superseded record is marked, with a link to the record that replaced it; a search hit also
 * shows its rank and, on demand, its body.
 */
export function recordItem(record: MemoryRecord | SearchHit, stems: readonly string[] = []): HTMLLIElement {
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
      : h('p', { class: 'superseded-note' }, h('span', { class: 'badge' }, 'Superseded'), ' by ', h('a', { href: routeHref('record', {}, record.superseded_by) }, 'a newer record'));
  return h(
    'li',
    { class: record.superseded_by === null ? 'record' : 'record superseded' },
    h('div', { class: 'record-head' }, h('a', { href: routeHref('record', {}, record.id) }, ...highlighted(record.title, stems)), rank),
    h('p', { class: 'facts' }, facts.filter(Boolean).join(' · ')),
    superseded,
    'rank' in record ? h('details', {}, h('summary', {}, 'Body'), h('p', { class: 'body' }, ...highlighted(record.body, stems))) : null,
  );
}
