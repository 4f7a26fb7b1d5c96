import type { ForgetInput } from '../../../sdk/src/index.js';
import type { ConsoleApp, Route } from '../app.js';
import { field, h, replace } from '../dom.js';
import { count } from '../format.js';
import { filterFields, filterValues } from './filters.js';

const FILTERS = ['agent_id', 'client', 'type', 'before'] as const;
const JOB_POLL_MS = 2000;

/**
 * `#/forget`: forgets every record that matches all the filters given. It always counts first (a dry run),
 * and deletes only after an explicit confirmation of that count; a large forget that the service runs as a
 * job is followed until it ends.
 */
export function forgetView(app: ConsoleApp, _route: Route): void {
  const main = document.getElementById('main')!;
  const ids = h('textarea', { name: 'ids', rows: '3', spellcheck: 'false' });
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Records to forget' },
    ...filterFields(app, FILTERS, new URLSearchParams()),
    h('div', { class: 'wide' }, field('Record ids', ids, 'Optional: one per line, at most 1000.')),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Count matching records')),
  );
  const outcome = h('div', { class: 'outcome', 'aria-live': 'polite' });
  main.append(
    h('h2', { tabindex: '-1' }, 'Forget records'),
    h('p', {}, 'Deletes every record that matches all the filters you give (at least one). The console counts the matches first; nothing is deleted until you confirm.'),
    form,
    outcome,
  );
  if (app.may('delete') === false) {
    replace(outcome, h('p', { class: 'notice' }, 'This key lacks the delete scope, so it cannot forget records.'));
    for (const control of form.elements) (control as HTMLInputElement).disabled = true;
    return;
  }
  // A change to the filters makes the count stale: it must be taken again before anything is deleted.
  form.addEventListener('input', () => replace(outcome));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const selectors = selectorsOf(form, ids);
    if (Object.keys(selectors).length === 0) {
      app.showAlert('Give at least one filter: an agent, a client, a type, a date or record ids.');
      return;
    }
    const dry = await app.call((client) => client.forget({ ...selectors, dry_run: true }));
    if (!dry) return;
    app.showAlert('');
    if (dry.matched === 0) {
      replace(outcome, h('p', { class: 'summary' }, 'No records match these filters. Nothing would be deleted.'));
      return;
    }
    const n = `${count(dry.matched)} record${dry.matched === 1 ? '' : 's'}`;
    const confirm = h('button', { type: 'button', class: 'danger' }, `Forget ${n}…`);
    const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    replace(outcome, h('p', { class: 'summary' }, `${n} match (dry run: nothing deleted yet).`), h('div', { class: 'actions' }, confirm, cancel));
    cancel.addEventListener('click', () => replace(outcome));
    confirm.addEventListener('click', async () => {
      const sure = await app.confirm(`Forget ${n}?`, 'Every record that matches these filters is deleted for good, including any written since the count. This cannot be undone.', `Forget ${n}`);
      if (!sure) return;
      const done = await app.call((client) => client.forget(selectors));
      if (!done) return;
      app.changes++;
      if ('job_id' in done) await follow(app, outcome, done.job_id, done.matched);
      else replace(outcome, h('p', { class: 'summary' }, `Forgot ${count(done.deleted)} record${done.deleted === 1 ? '' : 's'}.`));
    });
    confirm.focus();
  });
}

/** The selectors of the form, as the API names them. */
function selectorsOf(form: HTMLFormElement, ids: HTMLTextAreaElement): Omit<ForgetInput, 'ids'> & { ids?: string[] } {
  const list = ids.value.split(/\s+/).filter((id) => id !== '');
  return { ...(filterValues(form, FILTERS) as Omit<ForgetInput, 'ids'>), ...(list.length > 0 ? { ids: list } : {}) };
}

/** Follows a forget job until it is done or failed. The matched records are hidden from every read from the start. */
async function follow(app: ConsoleApp, outcome: HTMLElement, jobId: string, matched: number): Promise<void> {
  for (;;) {
    const job = await app.call((client) => client.forgetStatus(jobId));
    if (!job) return;
    const progress = `${count(job.deleted)} of ${count(matched)} deleted`;
    if (job.status === 'done') return replace(outcome, h('p', { class: 'summary' }, `Forget job ${jobId} is done: ${progress}.`));
    if (job.status === 'failed') return replace(outcome, h('p', { class: 'notice' }, `Forget job ${jobId} failed: ${progress}. Run the forget again to finish it.`));
    replace(outcome, h('p', { class: 'summary' }, `Forget job ${jobId} is running: ${progress}. The matched records are already hidden from every read.`));
    await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
  }
}
