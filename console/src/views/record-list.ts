import type { MemoryRecord, SearchHit } from '../../../sdk/src/index.js';
import { routeHref } from '../app.js';
import { h } from '../dom.js';
import { when } from '../format.js';
import { highlighted } from '../highlight.js';

/** One record in a list: its title as a link to it, and a line of what it is; a search hit also shows its rank and, on demand, its body. */
export function recordItem(record: MemoryRecord | SearchHit, stems: readonly string[] = []): HTMLLIElement {
  const facts = [record.type, `agent ${record.agent_id}`, record.client === null ? null : `client ${record.client}`, when(record.created_at)];
  const rank = 'rank' in record ? h('span', { class: 'rank', title: 'Rank: 0 to 1, higher is a better match' }, `rank ${record.rank.toFixed(3)}`) : null;
  return h(
    'li',
    { class: 'record' },
    h('div', { class: 'record-head' }, h('a', { href: routeHref('record', {}, record.id) }, ...highlighted(record.title, stems)), rank),
    h('p', { class: 'facts' }, facts.filter(Boolean).join(' · ')),
    'rank' in record ? h('details', {}, h('summary', {}, 'Body'), h('p', { class: 'body' }, ...highlighted(record.body, stems))) : null,
  );
}
