import type { MemoryRecord } from '../../../sdk/src/index.js';
import { backOf, routeHref, type ConsoleApp, type Route } from '../app.js';
import { h, type Child } from '../dom.js';
import { when } from '../format.js';
import { editForm, shorten } from './record-edit.js';

/**
 * `#/record/<id>`: one record in full, its metadata as formatted JSON, its type and the classifier's
 * suggestion, its version, and the record that superseded it if one did; and its edit and delete. Its back
 * link and a delete return to the list it was opened from (`back`: the records, or a search), as it was.
 */
export async function recordView(app: ConsoleApp, route: Route): Promise<void> {
  const main = document.getElementById('main')!;
  const list = backOf(route);
  const back = h('p', {}, h('a', { href: list }, list.startsWith('#/search') ? '← Search results' : '← Records'));
  const record = await app.call((client) => client.get(route.arg));
  if (!record) {
    main.append(h('h2', { tabindex: '-1' }, 'Record'), back);
    return;
  }
  const successorId = record.superseded_by;
  const successorName = successorId === null ? null : await titleOf(app, successorId);
  const successor = () => (successorId === null ? null : h('a', { href: routeHref('record', { back: list }, successorId) }, successorName ?? successorId));
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
    ['Version', record.updated_at === null ? `${record.version} (never edited)` : `${record.version}, last edited ${when(record.updated_at)}`],
    ...(successorId === null ? [] : ([['Superseded by', successor()]] as [string, Child][])),
  ];
  const article = h(
    'article',
    { class: 'record-full', 'aria-labelledby': 'record-title' },
    h('h2', { id: 'record-title', tabindex: '-1' }, record.title),
    h('dl', { class: 'facts-table' }, ...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)])),
    h('h3', {}, 'Body'),
    h('p', { class: 'body' }, record.body),
    h('h3', {}, 'Metadata'),
    record.metadata === null ? h('p', {}, 'None') : h('pre', { class: 'json', tabindex: '0' }, JSON.stringify(record.metadata, null, 2)),
    // Editing swaps the record for its form; the form's Cancel swaps it back.
    actions(app, record, list, () => {
      const form = editForm(app, record, () => form.replaceWith(article));
      article.replaceWith(form);
      form.querySelector<HTMLElement>('h2')?.focus();
    }),
  );
  const supersededNote =
    successorId === null
      ? null
      : h(
          'p',
          { class: 'notice superseded-note' },
          h('span', { class: 'badge' }, 'Superseded'),
          ' A newer record replaced this one: ',
          successor(),
          '. Search and the record list leave this one out unless “Include superseded” is ticked.',
        );
  main.append(back, ...(supersededNote ? [supersededNote] : []), article);
}

/**
 * The title of the record that superseded this one, or null when it cannot be read (deleted since, or
 * another agent's for a bound key): the link then shows its id. No alert: the record itself was read.
 */
async function titleOf(app: ConsoleApp, id: string): Promise<string | null> {
  const successor = await app.client?.get(id).catch(() => null);
  return successor?.title ?? null;
}

/** The record's actions: edit and delete, each only when the key may (else one notice says what it lacks). */
function actions(app: ConsoleApp, record: MemoryRecord, list: string, edit: () => void): HTMLElement {
  const mayWrite = app.may('write') !== false;
  const mayDelete = app.may('delete') !== false;
  const lacking = [mayWrite ? null : 'write', mayDelete ? null : 'delete'].filter((s): s is string => s !== null);
  const cannot = [mayWrite ? null : 'edit', mayDelete ? null : 'delete'].filter((s): s is string => s !== null);
  const notice =
    lacking.length === 0
      ? null
      : h('p', { class: 'notice' }, `This key lacks the ${lacking.join(' and ')} scope${lacking.length > 1 ? 's' : ''}, so it cannot ${cannot.join(' or ')} this record.`);
  const editButton = mayWrite ? h('button', { type: 'button', class: 'secondary' }, 'Edit record') : null;
  editButton?.addEventListener('click', edit);
  return h('div', {}, notice, h('div', { class: 'actions' }, editButton, mayDelete ? deleteButton(app, record, list) : null));
}

/** Deletes the record after a confirmation, then returns to the list it was opened from (`list`, a route). */
function deleteButton(app: ConsoleApp, record: MemoryRecord, list: string): HTMLElement {
  const button = h('button', { type: 'button', class: 'danger' }, 'Delete record…');
  button.addEventListener('click', async () => {
    const sure = await app.confirm(`Delete “${shorten(record.title)}”?`, 'The record is deleted for good: no read or search returns it again. This cannot be undone.', 'Delete record');
    if (!sure) return;
    const deleted = await app.call((client) => client.delete(record.id));
    if (!deleted) return;
    app.changes++;
    app.say(`Deleted the record “${shorten(record.title)}” (${deleted.id}).`);
    location.hash = list;
  });
  return button;
}
