import { MemoryApiError, MemoryClient } from '../../sdk/src/index.js';
import { h, replace } from './dom.js';
import { describe } from './errors.js';
import { when } from './format.js';
import { defaultBaseUrl, forgetKey, loadSession, saveSession, type Session } from './session.js';

export type Scope = 'read' | 'write' | 'delete';

/** What the console knows of the key: from `GET /api/v1/usage`, or, for a key without `read`, only that. */
export interface KeyFacts {
  tenantId: string | null;
  /** The key's scopes; null when unknown (usage needs `read`, so a key without it cannot be asked). */
  scopes: ReadonlySet<Scope> | null;
  agentId: string | null;
  expiresAt: string | null;
}

/** A view: fills the main region for its route. */
export type View = (app: ConsoleApp, route: Route) => Promise<void> | void;

export interface Route {
  /** `records`, `search`, `record`, `forget`, `usage`. */
  name: string;
  /** The rest of the path: a record's id. */
  arg: string;
  params: URLSearchParams;
}

/** Reads `#/search?q=…` as a route; anything else is the records view. */
export function parseRoute(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  const [name = '', ...rest] = path.split('/');
  return { name: name || 'records', arg: decodeURIComponent(rest.join('/')), params: new URLSearchParams(query) };
}

/** The entries whose value is set (not undefined, not empty). */
export function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
}

/** The link of a route, for `href` and `location.hash`; parameters that are not set are left out. */
export function routeHref(name: string, params: Record<string, string | undefined> = {}, arg?: string): string {
  const query = new URLSearchParams(definedOnly(params)).toString();
  return `#/${name}${arg === undefined ? '' : `/${encodeURIComponent(arg)}`}${query ? `?${query}` : ''}`;
}

/**
 * The list a record was opened from, as its route carries it (`back`): a records or search route of this
 * console, where the record's back link and a delete return; else the records.
 */
export function backOf(route: Route): string {
  const back = route.params.get('back') ?? '';
  return /^#\/(records|search)(\?|$)/.test(back) ? back : '#/records';
}

interface Shell {
  main: HTMLElement;
  nav: HTMLElement;
  who: HTMLElement;
  signOut: HTMLButtonElement;
  alert: HTMLElement;
  status: HTMLElement;
  dialog: HTMLDialogElement;
}

/** The console: the session, the client, the key's facts, the router and the shared pieces every view uses. */
export class ConsoleApp {
  client: MemoryClient | null = null;
  session: Session | null = null;
  key: KeyFacts = { tenantId: null, scopes: null, agentId: null, expiresAt: null };
  /** Bumped on every navigation: a view whose answer arrives after the user moved on drops it. */
  private generation = 0;
  /** A message said just before a navigation (a record deleted) stays for the next view, and only for it. */
  private keepSaid = false;
  /** Counts the changes this console made to which records there are (deletes, forgets): a count taken before one is stale. */
  changes = 0;

  constructor(
    private readonly shell: Shell,
    private readonly views: Record<string, View>,
  ) {}

  /** Binds the shell's controls and opens the session of this tab, or the key prompt. */
  start(): void {
    this.shell.signOut.addEventListener('click', () => {
      forgetKey();
      this.prompt('Signed out. The key is no longer kept in this tab.');
    });
    window.addEventListener('hashchange', () => void this.render());
    // A link to the view already shown changes no hash: it shows that view again, with fresh data.
    this.shell.nav.addEventListener('click', (event) => {
      const link = event.target instanceof Element ? event.target.closest('a') : null;
      if (link && link.getAttribute('href') === location.hash) {
        event.preventDefault();
        void this.render();
      }
    });
    const session = loadSession();
    if (session) void this.connect(session);
    else this.prompt();
  }

  /** Whether the key may do this: true, false, or null when the console cannot tell (it tries, and shows a 403). */
  may(scope: Scope): boolean | null {
    if (this.key.scopes) return this.key.scopes.has(scope);
    return scope === 'read' ? false : null;
  }

  /** The agent a bound key acts for, or undefined. */
  get boundAgent(): string | undefined {
    return this.key.agentId ?? undefined;
  }

  /**
   * Runs a call for the current view. On failure it shows a readable message (a 401 goes back to the key
   * prompt) and answers undefined; an answer for a view the user has left is dropped.
   */
  async call<T>(work: (client: MemoryClient) => Promise<T>): Promise<T | undefined> {
    const client = this.client;
    if (!client) return undefined;
    const generation = this.generation;
    this.busy(true);
    try {
      const result = await work(client);
      return generation === this.generation ? result : undefined;
    } catch (error) {
      if (generation !== this.generation) return undefined;
      const problem = describe(error, this.session?.baseUrl ?? '');
      if (problem.kind === 'unauthorized') {
        forgetKey();
        this.prompt(problem.message);
      } else {
        this.showAlert(problem.message);
      }
      return undefined;
    } finally {
      this.busy(false);
    }
  }

  /** Shows an error where screen readers announce it at once. */
  showAlert(message: string): void {
    replace(this.shell.alert, message ? h('p', {}, message) : null);
    this.shell.alert.hidden = message === '';
  }

  /** Says something politely (a record deleted, a job done). */
  say(message: string): void {
    replace(this.shell.status, message);
    this.keepSaid = true;
  }

  /** Asks a yes-or-no question in a modal dialog; resolves true only when the action button was pressed. */
  confirm(question: string, detail: string, action: string): Promise<boolean> {
    const dialog = this.shell.dialog;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    return new Promise((resolve) => {
      const cancel = h('button', { type: 'button', value: 'cancel', class: 'secondary' }, 'Cancel');
      const ok = h('button', { type: 'button', value: 'ok', class: 'danger' }, action);
      replace(
        dialog,
        h('h2', { id: 'dialog-title' }, question),
        h('p', {}, detail),
        h('div', { class: 'actions' }, cancel, ok),
      );
      dialog.setAttribute('aria-labelledby', 'dialog-title');
      cancel.addEventListener('click', () => dialog.close('cancel'));
      ok.addEventListener('click', () => dialog.close('ok'));
      dialog.addEventListener(
        'close',
        () => {
          opener?.focus();
          resolve(dialog.returnValue === 'ok');
        },
        { once: true },
      );
      dialog.returnValue = '';
      dialog.showModal();
      cancel.focus();
    });
  }

  /** Shows the current view again, with fresh data (after an edit, or to reload a record that changed). */
  refresh(): Promise<void> {
    return this.render();
  }

  /** Shows the key prompt (with why, after a 401 or a sign-out) and hides everything that needs a key. */
  prompt(message = ''): void {
    this.generation++;
    this.client = null;
    this.session = null;
    this.shell.nav.hidden = true;
    this.shell.signOut.hidden = true;
    replace(this.shell.who, '');
    this.showAlert(message);
    const baseUrl = h('input', { name: 'baseUrl', type: 'url', required: true, value: defaultBaseUrl(), autocomplete: 'url', spellcheck: 'false' });
    const apiKey = h('input', { name: 'apiKey', type: 'password', required: true, autocomplete: 'off', spellcheck: 'false' });
    const form = h(
      'form',
      { class: 'connect', 'aria-labelledby': 'connect-title' },
      h('h2', { id: 'connect-title', tabindex: '-1' }, 'Connect to the memory service'),
      h(
        'p',
        {},
        'Paste an API key: the one ',
        h('code', {}, 'npm start'),
        ' printed on its first start, or one from ',
        h('code', {}, 'npm run admin -- key create'),
        '. The key stays in this browser tab only (sessionStorage), and is forgotten when the tab closes.',
      ),
      h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'API base URL'), baseUrl),
      h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'API key'), apiKey),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Connect')),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.connect({ baseUrl: baseUrl.value.trim(), apiKey: apiKey.value.trim() });
    });
    replace(this.shell.main, form);
    (message ? apiKey : baseUrl.value ? apiKey : baseUrl).focus();
  }

  /** Checks the key by asking for its usage (which also says what the key may do), then opens the console. */
  private async connect(session: Session): Promise<void> {
    let client: MemoryClient;
    try {
      client = new MemoryClient({ baseUrl: session.baseUrl, apiKey: session.apiKey, maxRetries: 1, timeoutMs: 15_000 });
    } catch {
      this.prompt(`"${session.baseUrl}" is not a URL. Enter the API's base URL, such as ${location.origin}.`);
      return;
    }
    this.busy(true);
    try {
      const usage = await client.usage({ include: 'key' });
      this.key = { tenantId: usage.tenant_id, scopes: new Set(usage.key.scopes), agentId: usage.key.agent_id, expiresAt: usage.key.expires_at };
    } catch (error) {
      if (error instanceof MemoryApiError && error.status === 403) {
        // The key works but lacks `read`, so usage cannot tell its other scopes: the console offers what
        // needs no read (deleting and forgetting) and shows the API's 403 if that is refused too.
        this.key = { tenantId: null, scopes: null, agentId: null, expiresAt: null };
      } else {
        const problem = describe(error, session.baseUrl);
        forgetKey();
        this.prompt(problem.message);
        return;
      }
    } finally {
      this.busy(false);
    }
    saveSession(session);
    this.session = session;
    this.client = client;
    this.shell.nav.hidden = false;
    this.shell.signOut.hidden = false;
    this.describeKey();
    await this.render();
  }

  /** The header line: the tenant and what the key may do. */
  private describeKey(): void {
    const { tenantId, scopes, agentId, expiresAt } = this.key;
    const parts = [
      tenantId ? `Tenant ${tenantId}` : null,
      scopes ? `this key may ${[...scopes].join(', ') || 'do nothing'}` : 'this key may not read (it lacks the read scope)',
      agentId ? `only for agent "${agentId}"` : null,
      expiresAt ? `until ${when(expiresAt)}` : null,
    ];
    replace(this.shell.who, parts.filter(Boolean).join(' · '));
  }

  /** Renders the view the location's hash names, and moves focus to its heading. */
  private async render(): Promise<void> {
    if (!this.client) return;
    this.generation++;
    this.showAlert('');
    if (!this.keepSaid) replace(this.shell.status);
    this.keepSaid = false;
    const route = parseRoute(location.hash);
    const view = this.views[route.name] ?? this.views.records!;
    // A record belongs to the list it was opened from: the records, or a search.
    const section = route.name === 'record' ? parseRoute(backOf(route)).name : route.name;
    for (const link of this.shell.nav.querySelectorAll('a')) {
      const current = link.getAttribute('href') === `#/${section}`;
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    replace(this.shell.main);
    await view(this, route);
    this.shell.main.querySelector<HTMLElement>('h2')?.focus();
  }

  private busy(on: boolean): void {
    this.shell.main.setAttribute('aria-busy', String(on));
  }
}

/** Finds the shell's elements in the page; a missing one is a broken build. */
export function findShell(doc: Document): Shell {
  const get = <T extends HTMLElement>(id: string) => {
    const element = doc.getElementById(id);
    if (!element) throw new Error(`console: #${id} is missing from index.html`);
    return element as T;
  };
  return {
    main: get('main'),
    nav: get('views'),
    who: get('who'),
    signOut: get<HTMLButtonElement>('sign-out'),
    alert: get('alert'),
    status: get('status'),
    dialog: get<HTMLDialogElement>('confirm'),
  };
}
