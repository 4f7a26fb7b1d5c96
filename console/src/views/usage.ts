import type { ConsoleApp, Route } from '../app.js';
import { h } from '../dom.js';
import { count, month, percent, when } from '../format.js';

/** `#/usage`: the month's records and searches against their quotas, as bars, with the key's rate limit and scopes. */
export async function usageView(app: ConsoleApp, _route: Route): Promise<void> {
  const main = document.getElementById('main')!;
  if (app.may('read') === false) {
    main.append(h('h2', { tabindex: '-1' }, 'Usage'), h('p', { class: 'notice' }, 'This key lacks the read scope, so it cannot see the usage.'));
    return;
  }
  const usage = await app.call((client) => client.usage({ include: 'key' }));
  if (!usage) {
    main.append(h('h2', { tabindex: '-1' }, 'Usage'));
    return;
  }
  const { key } = usage;
  main.append(
    h('h2', { tabindex: '-1' }, `Usage in ${month(usage.month)}`),
    h('p', {}, 'Counted per UTC month, from the counters that enforce the quotas. Reading, listing and deleting count against neither.'),
    h('div', { class: 'bars' }, bar('Records written', usage.records, 'the next write answers 507'), bar('Searches', usage.queries, 'the next search answers 429')),
    h(
      'dl',
      { class: 'facts-table' },
      h('dt', {}, 'Rate limit'),
      h('dd', {}, `${count(usage.rate_limit.rate)} requests a second, bursts of ${count(usage.rate_limit.burst)} (this key)`),
      h('dt', {}, 'This key may'),
      h('dd', {}, key.scopes.join(', ') || 'nothing'),
      h('dt', {}, 'Agent'),
      h('dd', {}, key.agent_id === null ? 'every agent' : `only "${key.agent_id}"`),
      h('dt', {}, 'Expires'),
      h('dd', {}, key.expires_at === null ? 'never' : when(key.expires_at)),
    ),
  );
}

/** One quota as a bar: how much is used, with the numbers in words beside it (and for screen readers). */
function bar(label: string, { used, quota, remaining }: { used: number; quota: number; remaining: number }, atZero: string): HTMLElement {
  const share = quota > 0 ? Math.min(1, used / quota) : 1;
  const fill = h('div', { class: `fill${share >= 1 ? ' full' : share >= 0.8 ? ' high' : ''}` });
  // CSSOM, not a style attribute: the Content-Security-Policy allows no inline styles.
  fill.style.width = `${(share * 100).toFixed(2)}%`;
  const words = `${count(used)} of ${count(quota)} used (${percent(used, quota)}), ${count(remaining)} left`;
  return h(
    'figure',
    { class: 'bar' },
    h('figcaption', {}, h('strong', {}, label), ' ', words, remaining === 0 ? ` — ${atZero}` : ''),
    h('div', { class: 'track', role: 'meter', 'aria-label': label, 'aria-valuemin': '0', 'aria-valuemax': String(quota), 'aria-valuenow': String(Math.min(used, quota)), 'aria-valuetext': words }, fill),
  );
}
