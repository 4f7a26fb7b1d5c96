import { RECORD_TYPES } from '../../../sdk/src/index.js';
import { definedOnly, type ConsoleApp } from '../app.js';
import { field, formValue, h } from '../dom.js';

/** The record filters a form can carry, by the API's names. */
export type FilterName = 'agent_id' | 'type' | 'client' | 'since' | 'until' | 'before' | 'include_superseded';

const LABELS: Record<FilterName, string> = {
  agent_id: 'Agent',
  type: 'Type',
  client: 'Client',
  since: 'Created on or after',
  until: 'Created before',
  before: 'Created before',
  include_superseded: 'Include superseded',
};

/**
 * The controls of the filters named, filled from `values`. A key bound to an agent shows that agent, fixed:
 * the API limits every read and forget to it anyway.
 */
export function filterFields(app: ConsoleApp, names: readonly FilterName[], values: URLSearchParams): HTMLElement[] {
  return names.map((name) => {
    const value = values.get(name) ?? '';
    if (name === 'type') {
      const select = h('select', { name }, h('option', { value: '' }, 'Any type'), ...RECORD_TYPES.map((t) => h('option', { value: t, selected: t === value }, t)));
      return field(LABELS.type, select);
    }
    if (name === 'include_superseded') {
      const box = h('input', { name, type: 'checkbox', value: 'true', checked: value === 'true' });
      return h('label', { class: 'field check' }, box, h('span', { class: 'field-label' }, LABELS[name]), h('span', { class: 'hint' }, 'Records a newer one replaced.'));
    }
    if (name === 'agent_id' && app.boundAgent !== undefined) {
      return field(LABELS.agent_id, h('input', { name, value: app.boundAgent, readonly: true }), 'This key is bound to this agent.');
    }
    const date = name === 'since' || name === 'until' || name === 'before';
    return field(LABELS[name], h('input', { name, type: date ? 'date' : 'text', value, autocomplete: 'off', spellcheck: 'false' }), date ? 'UTC' : undefined);
  });
}

/** The filters a form holds, without the empty ones. */
export function filterValues(form: HTMLFormElement, names: readonly string[]): Record<string, string> {
  return definedOnly(Object.fromEntries(names.map((name) => [name, formValue(form, name)])));
}

/** The filters a route's parameters hold, without the empty ones. */
export function routeFilters(params: URLSearchParams, names: readonly string[]): Record<string, string> {
  return definedOnly(Object.fromEntries(names.map((name) => [name, params.get(name) ?? undefined])));
}

/** A route's filters as the API's query: `include_superseded` as the boolean the SDK's types ask for. */
export function queryFilters(filters: Record<string, string>): Record<string, string | boolean> {
  const { include_superseded, ...rest } = filters;
  return include_superseded === 'true' ? { ...rest, include_superseded: true } : rest;
}
