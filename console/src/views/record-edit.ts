import { MemoryVersionConflictError, RECORD_TYPES, type MemoryRecord, type RecordPatch, type RecordType } from '../../../sdk/src/index.js';
import type { ConsoleApp } from '../app.js';
import { field, h, replace } from '../dom.js';

/** A title short enough for a question or a message. */
export function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** What the user typed into the edit form. */
interface Edited {
  title: string;
  body: string;
  type: RecordType;
  /** Empty: no client. */
  client: string;
}

/** The fields that differ from the record, as a PATCH sends them: an emptied client is removed (null). */
export function patchOf(record: MemoryRecord, edited: Edited): RecordPatch {
  const client = edited.client.trim() === '' ? null : edited.client.trim();
  return {
    ...(edited.title === record.title ? {} : { title: edited.title }),
    ...(edited.body === record.body ? {} : { body: edited.body }),
    ...(edited.type === record.type ? {} : { type: edited.type }),
    ...(client === record.client ? {} : { client }),
  };
}

/** The message of a version conflict, with the version the record has now. */
export function conflictMessage(version: number): string {
  return `This record was changed since you opened it (now version ${version}). Reload it to see the changes.`;
}

/**
 * The edit form of a record: title, body, type and client, saved as one PATCH of the fields that changed,
 * made conditional on the version shown (If-Match), so that an edit never overwrites a change it did not
 * see. A conflict is said plainly, with a way to reload; the typed text stays in the form meanwhile.
 */
export function editForm(app: ConsoleApp, record: MemoryRecord, cancel: () => void): HTMLFormElement {
  const title = h('input', { name: 'title', value: record.title, required: true, maxlength: '2048', autocomplete: 'off' });
  const body = h('textarea', { name: 'body', rows: '8' }, record.body);
  const type = h('select', { name: 'type' }, ...RECORD_TYPES.map((t) => h('option', { value: t, selected: t === record.type }, t)));
  const client = h('input', { name: 'client', value: record.client ?? '', autocomplete: 'off', spellcheck: 'false' });
  const outcome = h('div', { class: 'outcome' });
  const save = h('button', { type: 'submit' }, 'Save changes');
  const back = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
  const form = h(
    'form',
    { class: 'edit', 'aria-labelledby': 'edit-title' },
    h('h2', { id: 'edit-title', tabindex: '-1' }, `Edit “${shorten(record.title)}”`),
    h(
      'p',
      { class: 'hint' },
      `Editing version ${record.version}. Saving corrects this record in place: search finds the new text at once and no longer the old. ` +
        'When a fact changed rather than was wrong, keep this record and store a new one that supersedes it instead (through the API, an SDK or MCP), so that its history stays.',
    ),
    field('Title', title),
    field('Body', body),
    field('Type', type),
    field('Client', client, 'Empty: no client.'),
    outcome,
    h('div', { class: 'actions' }, save, back),
  );
  back.addEventListener('click', cancel);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const patch = patchOf(record, { title: title.value, body: body.value, type: type.value as RecordType, client: client.value });
    if (Object.keys(patch).length === 0) {
      replace(outcome, h('p', { class: 'summary', role: 'status' }, 'Nothing to save: no field was changed.'));
      return;
    }
    replace(outcome);
    const saved = await app.call(async (api): Promise<{ record: MemoryRecord } | { conflict: number }> => {
      try {
        return { record: await api.update(record.id, patch, { ifVersion: record.version }) };
      } catch (error) {
        if (!(error instanceof MemoryVersionConflictError)) throw error;
        return { conflict: (await api.get(record.id)).version };
      }
    });
    if (!saved) return;
    if ('conflict' in saved) {
      const reload = h('button', { type: 'button', class: 'secondary' }, 'Reload record');
      reload.addEventListener('click', () => void app.refresh());
      replace(outcome, h('div', { class: 'notice', role: 'alert' }, h('p', {}, conflictMessage(saved.conflict)), reload));
      return;
    }
    app.say(`Saved “${shorten(saved.record.title)}”: now version ${saved.record.version}.`);
    await app.refresh();
  });
  return form;
}
