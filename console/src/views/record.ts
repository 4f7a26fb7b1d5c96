import type { MemoryRecord } from '../../../sdk/src/index.js';
import type { ConsoleApp, Route } from '../app.js';
import { h, type Child } from '../dom.js';
import { when } from '../format.js';

/** `#/record/<id>`: one record in full, its metadata as formatted JSON, its type and the classifier's suggestion; and its delete. */
export async function recordView(app: ConsoleApp, route: Route): Promise<void> {
  const main = document.getElementById('main')!;
  const back = h('p', {}, h('a', { href: '#/records' }, '← Records'));
  const record = await app.call((client) => client.get(route.arg));
  if (!record) {
    main.append(h('h2', { tabindex: '-1' }, 'Record'), back);
    return;
  }
  const suggestion = record.classification
    ? `${record.classification.type}, ${Math.round(record.classification.confidence * 100)}% confident (${record.classification.model}, ${when(record.classification.classified_at)})`
    : 'Not classified yet';
  const rows: [string, Child][] = [
    ['Id', h('code', {}, record.id)],
    ['Agent', record.agent_id],
    ['Type (as stored)', record.type],
    ['Classifier’s suggestion', suggestion],
    ['Client', record.client ?? '—'],
    ['Created', when(record.created_at)],
  ];
  const remove = deleteButton(app, record);
  main.append(
    back,
    h('article', { class: 'record-full', 'aria-labelledby': 'record-title' },
      h('h2', { id: 'record-title', tabindex: '-1' }, record.title),
      h('dl', { class: 'facts-table' }, ...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)])),
      h('h3', {}, 'Body'),
      h('p', { class: 'body' }, record.body),
      h('h3', {}, 'Metadata'),
      record.metadata === null ? h('p', {}, 'None') : h('pre', { class: 'json', tabindex: '0' }, JSON.stringify(record.metadata, null, 2)),
      h('div', { class: 'actions' }, remove),
    ),
  );
}

/** Deletes the record after a confirmation, then returns to the list. Disabled, saying why, for a key without `delete`. */
function deleteButton(app: ConsoleApp, record: MemoryRecord): HTMLElement {
  if (app.may('delete') === false) return h('p', { class: 'notice' }, 'This key lacks the delete scope, so it cannot delete this record.');
  const button = h('button', { type: 'button', class: 'danger' }, 'Delete record…');
  button.addEventListener('click', async () => {
    const sure = await app.confirm(`Delete “${shorten(record.title)}”?`, 'The record is deleted for good: no read or search returns it again. This cannot be undone.', 'Delete record');
    if (!sure) return;
    const deleted = await app.call((client) => client.delete(record.id));
    if (!deleted) return;
    app.say(`Deleted the record “${shorten(record.title)}” (${deleted.id}).`);
    location.hash = '#/records';
  });
  return button;
}

/** A title short enough for a question. */
function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
