/**
 * The console in a real browser (Debian's chromium, driven by playwright-core), against the real local
 * server started as `npm start` starts it: the README's path (paste the printed key, find the record written
 * with curl, read it, delete it), the count of records, the filters lined up as drawn, search (the words
 * marked as the service matched them, the snippet), a delete that returns to its search, forget with its
 * dry run, usage, errors, limited keys, text that holds markup, phone width and the keyboard. It takes the screenshots of docs/console.md: into a temporary
 * directory normally, into docs/console/ with `npm run screenshots`.
 *
 * Without chromium (set CHROMIUM_PATH, or install Debian's `chromium`) the suite is one skipped test that
 * says so; `.ci/run` installs it.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SUGGESTED_MIN_RANK } from '../../shared/domain/rank.js';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { admin, killAll, removeDir, ROOT, startServer, tempDir, waitFor, type ServerProcess } from '../support/child-server.js';
import { forgetAcceptedSchema, forgetJobSchema, forgetResultSchema } from '../../shared/domain/schemas.js';
import { internalErrorResult } from '../../shared/http/responses.js';
import { Client, eventually } from '../support/local-service.js';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(
  (path): path is string => path !== undefined && path !== '' && existsSync(path),
);
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs/console') : tempDir('memory-console-shots-');

// The functions given to page.evaluate run in the page: these are the page's globals they use (the project's
// TypeScript has no DOM library).
declare const document: { activeElement: { tagName: string; textContent: string | null } | null; documentElement: { scrollWidth: number } };
declare const window: { __pwned?: number };
declare const history: { replaceState(state: null, unused: string, url: string): void };
declare const localStorage: object;
declare const sessionStorage: object;

/** A RegExp that finds the text anywhere, literally. */
const including = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

const HOSTILE_TITLE = 'Markup test <script>window.__pwned = 1</script>';
const HOSTILE_BODY = 'Shown as text: <img src=x onerror="window.__pwned = 2"> and <b>not bold</b>.';

if (!CHROMIUM) {
  test.skip('the console in a browser: no chromium here (install Debian chromium or set CHROMIUM_PATH)', () => {});
}

(CHROMIUM ? describe : describe.skip)('the console in a browser', () => {
  let dir: string;
  let server: ServerProcess;
  let key: string;
  let tenantId: string;
  let api: Client;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    dir = tempDir();
    // No authorizer cache: a revoked key is refused at its next request.
    // Small quotas, so the usage bars (and their screenshot) show something.
    server = await startServer(dir, { MEMORY_AUTH_CACHE_SECONDS: '0', MEMORY_DEFAULT_RECORD_QUOTA: '40', MEMORY_DEFAULT_QUERY_QUOTA: '25' });
    await waitFor(() => /Or open \S+ in a browser/.test(server.stdout()), 10_000, 'the first-start message');
    key = /mem_[A-Za-z0-9_-]+/.exec(server.stdout())![0];
    tenantId = /tenant "default" \(([^)]+)\)/.exec(server.stdout())![1]!;
    api = new Client(server.url, key);
    browser = await chromium.launch({ executablePath: CHROMIUM!, chromiumSandbox: false });
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.setDefaultTimeout(10_000);
    // Any script error in the page fails the test that caused it.
    page.on('pageerror', (error) => {
      throw error;
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    killAll();
    removeDir(dir);
    if (process.env.UPDATE_SCREENSHOTS !== '1') removeDir(SHOTS);
  });

  const shot = (name: string) => {
    mkdirSync(SHOTS, { recursive: true });
    return page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  };
  const main = () => page.locator('main');
  /** Waits until the element's text is (a string) or matches (a RegExp) what is expected; fails with the last text seen. */
  const seeText = async (locator: Locator, expected: string | RegExp) => {
    let last: string | null = null;
    try {
      await eventually(async () => {
        last = await locator.first().textContent({ timeout: 1000 }).catch(() => null);
        return last !== null && (typeof expected === 'string' ? last === expected : expected.test(last));
      }, 10_000);
    } catch {
      throw new Error(`expected the text ${String(expected)}, saw ${JSON.stringify(last)}`);
    }
  };
  /**
   * The filters of the view as drawn, row by row (fields whose boxes overlap vertically share a row): where
   * each one's label, control (a text box, date or select), checkbox and hint stand.
   */
  const filterRows = async () => {
    type Box = { x: number; y: number; width: number; height: number };
    const boxOf = async (locator: Locator): Promise<Box | null> => ((await locator.count()) === 0 ? null : locator.first().boundingBox());
    const fields: { name: string; item: Box; label: Box; control: Box | null; check: Box | null; hint: Box | null }[] = [];
    for (const item of await main().locator('form.filters > .field').all()) {
      fields.push({
        name: (await item.locator('.field-label').textContent()) ?? '',
        item: (await item.boundingBox())!,
        label: (await boxOf(item.locator('.field-label')))!,
        control: await boxOf(item.locator('input:not([type="checkbox"]), select')),
        check: await boxOf(item.locator('input[type="checkbox"]')),
        hint: await boxOf(item.locator('.hint')),
      });
    }
    const rows: (typeof fields)[] = [];
    for (const field of fields.sort((a, b) => a.item.y - b.item.y)) {
      const row = rows.at(-1);
      if (row && row.some((f) => field.item.y < f.item.y + f.item.height - 1)) row.push(field);
      else rows.push([field]);
    }
    return rows.map((row) => row.sort((a, b) => a.item.x - b.item.x));
  };
  /**
   * The filters line up: in each row, every label at one height, every control at one height and of one
   * height, every hint at one height, and a checkbox centred on the controls' line.
   */
  const expectFiltersAligned = async (expectedRows: string[][]) => {
    const rows = await filterRows();
    expect(rows.map((row) => row.map((f) => f.name))).toEqual(expectedRows);
    // What is out of line, as "Agent, Type: labels 3 px apart"; none, when the filters line up.
    const misaligned: string[] = [];
    const same = (row: typeof rows[number], what: string, values: number[]) => {
      const spread = values.length === 0 ? 0 : Math.max(...values) - Math.min(...values);
      if (spread > 1) misaligned.push(`${row.map((f) => f.name).join(', ')}: ${what} ${spread.toFixed(1)} px apart`);
    };
    for (const row of rows) {
      const boxed = row.filter((f) => f.control !== null);
      same(row, 'labels', boxed.map((f) => f.label.y));
      same(row, 'controls', boxed.map((f) => f.control!.y));
      same(row, 'control heights', boxed.map((f) => f.control!.height));
      same(row, 'hints', row.filter((f) => f.hint !== null && f.check === null).map((f) => f.hint!.y));
      const line = boxed.map((f) => f.control!.y + f.control!.height / 2);
      for (const f of row.filter((f) => f.check !== null && boxed.length > 0)) same(row, 'checkbox and controls', [f.check!.y + f.check!.height / 2, ...line]);
    }
    expect(misaligned).toEqual([]);
  };
  /** Enters a key at the prompt; the console then opens the view of the location's hash, here the records. */
  const connect = async (apiKey: string) => {
    await page.evaluate(() => history.replaceState(null, '', '#/records'));
    await page.getByLabel('API key').fill(apiKey);
    await page.getByRole('button', { name: 'Connect' }).click();
  };

  test('the README path: open the console, paste the printed key, find the record written with curl, read it, delete it', async () => {
    // The curl write the first start printed, run as printed.
    const printed = /curl -s -X POST [^\n]*\\\n[^\n]*\\\n[^\n]*\n/.exec(server.stdout())![0];
    const curl = spawnSync('bash', ['-c', printed], { encoding: 'utf8' });
    expect(JSON.parse(curl.stdout)).toMatchObject({ tenant_id: tenantId });
    const curlId: string = JSON.parse(curl.stdout).id;
    await api.remember({ agent_id: 'demo', type: 'decision', title: 'Lunch order: Sam prefers the vegetarian curry', body: 'Sam asked for it twice; no nuts.', metadata: { source: 'chat', diet: ['vegetarian', 'no nuts'] } });
    await api.remember({ agent_id: 'planner', type: 'fact', title: 'The user moved to Berlin in March 2024', body: 'Relocated from Munich for the new job.', client: 'acme' });

    const response = await page.goto(`${server.url}/console/`);
    expect(response!.headers()['content-security-policy']).toContain("connect-src 'self'");
    await expect(page.getByLabel('API base URL').inputValue()).resolves.toBe(server.url);
    // Before a key, nothing that needs one shows: no views, no "Sign out" (as rendered, not only as marked).
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(false);
    expect(await page.locator('#views').isVisible()).toBe(false);
    // Commands read as code, not as markdown's backticks.
    expect(await main().locator('p code').allTextContents()).toEqual(['npm start', 'npm run admin -- key create']);
    expect(await main().textContent()).not.toContain('`');
    await shot('connect');
    await connect(key);

    await main().getByRole('heading', { name: 'Records' }).waitFor();
    await page.getByRole('link', { name: 'The user prefers dark mode' }).waitFor();
    await seeText(page.locator('#who'), including(`Tenant ${tenantId}`));
    // Newest first, with how many records the tenant holds.
    const titles = await main().locator('.records li a').allTextContents();
    expect(titles).toEqual(['The user moved to Berlin in March 2024', 'Lunch order: Sam prefers the vegetarian curry', 'The user prefers dark mode']);
    await seeText(main().locator('.summary'), 'This tenant holds 3 records (superseded ones not counted). Page 1 shows 1–3, newest first.');
    // The filters line up, the dates and their "UTC" hint with the rest.
    await expectFiltersAligned([
      ['Agent', 'Type', 'Client', 'Include superseded'],
      ['Created on or after', 'Created before'],
    ]);
    await shot('records');

    // The key is kept in this tab's sessionStorage only: not in the URL, a cookie or localStorage.
    expect(page.url()).not.toContain(key);
    expect(await page.context().cookies()).toEqual([]);
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(key);
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).toContain(key);

    // The record in full: its stored type, and the classifier's suggestion once the worker has run.
    await page.getByRole('link', { name: 'The user prefers dark mode' }).click();
    await main().getByRole('heading', { name: 'The user prefers dark mode' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('The user prefers dark mode');
    await seeText(main().locator('.body'), 'Set in the settings page.');
    await seeText(main().locator('dl'), including('Type (as stored)fact'));
    await seeText(main().locator('dl'), including(`Id${curlId}`));
    await eventually(async () => {
      await page.reload();
      await main().locator('dl').waitFor();
      return /\d+% confident/.test((await main().locator('dl').textContent()) ?? '');
    }, 15_000);

    // Delete it: the console asks first; Cancel keeps it.
    await page.getByRole('button', { name: 'Delete record…' }).click();
    const dialog = page.getByRole('dialog');
    await seeText(dialog.getByRole('heading'), 'Delete “The user prefers dark mode”?');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await api.request('GET', `/api/v1/record/${curlId}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete record…' }).click();
    await dialog.getByRole('button', { name: 'Delete record' }).click();
    await main().getByRole('heading', { name: 'Records' }).waitFor();
    await seeText(page.locator('#status'), including('Deleted the record “The user prefers dark mode”'));
    await seeText(main().locator('.summary'), 'This tenant holds 2 records (superseded ones not counted). Page 1 shows 1–2, newest first.');
    expect(await main().locator('.records li a').allTextContents()).toEqual(['The user moved to Berlin in March 2024', 'Lunch order: Sam prefers the vegetarian curry']);
    expect((await api.request('GET', `/api/v1/record/${curlId}`)).status).toBe(404);
  });

  test('a record in full shows its metadata as formatted JSON and the classifier’s suggestion', async () => {
    await page.getByRole('link', { name: 'Lunch order: Sam prefers the vegetarian curry' }).click();
    await main().getByRole('heading', { name: 'Lunch order: Sam prefers the vegetarian curry' }).waitFor();
    await seeText(main().locator('pre.json'), JSON.stringify({ source: 'chat', diet: ['vegetarian', 'no nuts'] }, null, 2));
    await eventually(async () => {
      await page.reload();
      await main().locator('dl').waitFor();
      return /\d+% confident/.test((await main().locator('dl').textContent()) ?? '');
    }, 15_000);
    await shot('record');
  });

  test('editing a record saves the fields that changed, conditional on the version shown; a conflict is said plainly and keeps the typing', async () => {
    const patches: { ifMatch: string | undefined; body: unknown }[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PATCH') patches.push({ ifMatch: request.headers()['if-match'], body: request.postDataJSON() });
    });
    const { body: created } = await api.remember({ agent_id: 'editor', type: 'fact', title: 'The Fernhollow office opens at 8am', body: 'Front desk hours.', client: 'fernhollow' });
    await page.goto(`${server.url}/console/#/record/${created.id}`);
    await main().getByRole('heading', { name: 'The Fernhollow office opens at 8am' }).waitFor();
    await seeText(main().locator('dl'), including('Version1 (never edited)'));

    await page.getByRole('button', { name: 'Edit record' }).click();
    await main().getByRole('heading', { name: 'Edit “The Fernhollow office opens at 8am”' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Edit “The Fernhollow office opens at 8am”');
    await page.getByLabel('Title').fill('The Fernhollow office opens at 9am');
    await page.getByLabel('Type').selectOption('decision');
    await page.getByLabel('Client').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await main().getByRole('heading', { name: 'The Fernhollow office opens at 9am' }).waitFor();
    await seeText(page.locator('#status'), 'Saved “The Fernhollow office opens at 9am”: now version 2.');
    await seeText(main().locator('dl'), /Version2, last edited \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    expect(patches).toEqual([{ ifMatch: '"1"', body: { title: 'The Fernhollow office opens at 9am', type: 'decision', client: null } }]);
    expect((await api.request('GET', `/api/v1/record/${created.id}`)).body).toMatchObject({ body: 'Front desk hours.', type: 'decision', client: null, version: 2 });

    // Someone else changes the record while the form is open: saving changes nothing and says so.
    await page.getByRole('button', { name: 'Edit record' }).click();
    expect((await api.update(created.id, { body: 'Changed by an agent meanwhile.' })).status).toBe(200);
    await page.getByLabel('Body').fill('Front desk hours, Monday to Friday.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await seeText(main().getByRole('alert'), 'This record was changed since you opened it (now version 3). Reload it to see the changes.Reload record');
    expect(patches[1]).toEqual({ ifMatch: '"2"', body: { body: 'Front desk hours, Monday to Friday.' } });
    await expect(page.getByLabel('Body').inputValue()).resolves.toBe('Front desk hours, Monday to Friday.');
    expect((await api.request('GET', `/api/v1/record/${created.id}`)).body).toMatchObject({ body: 'Changed by an agent meanwhile.', version: 3 });
    await page.getByRole('button', { name: 'Reload record' }).click();
    await seeText(main().locator('.body'), 'Changed by an agent meanwhile.');
    await seeText(main().locator('dl'), including('Version3, last edited'));

    // Cancel puts the record back; a save that changes nothing sends nothing.
    await page.getByRole('button', { name: 'Edit record' }).click();
    await page.getByLabel('Title').fill('Typed, then cancelled');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await main().getByRole('heading', { name: 'The Fernhollow office opens at 9am' }).waitFor();
    await page.getByRole('button', { name: 'Edit record' }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await seeText(main().locator('.outcome'), 'Nothing to save: no field was changed.');
    expect(patches).toHaveLength(2);
    page.removeAllListeners('request');
  });

  test('a superseded record is left out of the list unless asked for, marked, and linked to the record that replaced it', async () => {
    const { body: dark } = await api.remember({ agent_id: 'editor', type: 'fact', title: 'The Fernhollow user prefers dark mode', body: 'Said so in March.' });
    const { body: light } = await api.remember({ agent_id: 'editor', type: 'fact', title: 'The Fernhollow user switched to light mode', body: 'Said so in June.', supersedes: [dark.id] });
    await page.goto(`${server.url}/console/#/records?agent_id=editor`);
    await page.getByRole('link', { name: 'The Fernhollow user switched to light mode' }).waitFor();
    expect(await main().locator('.records li a').allTextContents()).not.toContain('The Fernhollow user prefers dark mode');

    await page.getByLabel('Include superseded').check();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const old = main().locator('li.record.superseded');
    await seeText(old.locator('.record-head a'), 'The Fernhollow user prefers dark mode');
    await seeText(old.locator('.superseded-note'), 'Superseded by a newer record');
    expect(page.url()).toContain('include_superseded=true');
    await expect(page.getByLabel('Include superseded').isChecked()).resolves.toBe(true);
    await old.getByRole('link', { name: 'a newer record' }).click();
    await main().getByRole('heading', { name: 'The Fernhollow user switched to light mode' }).waitFor();

    await page.goto(`${server.url}/console/#/record/${dark.id}`);
    await main().getByRole('heading', { name: 'The Fernhollow user prefers dark mode' }).waitFor();
    await seeText(main().locator('p.notice'), including('Superseded A newer record replaced this one: The Fernhollow user switched to light mode.'));
    await seeText(main().locator('dl'), including('Superseded byThe Fernhollow user switched to light mode'));
    await main().locator('p.notice').getByRole('link', { name: 'The Fernhollow user switched to light mode' }).click();
    await main().getByRole('heading', { name: 'The Fernhollow user switched to light mode' }).waitFor();
    expect(page.url()).toContain(light.id);
  });

  test('browsing pages through a filtered listing, newest first, each record once', async () => {
    for (let i = 1; i <= 27; i++) {
      const note = String(i).padStart(2, '0');
      expect((await api.remember({ agent_id: 'pager', type: 'signal', title: `Page note ${note}`, body: 'Paging.' })).status).toBe(201);
    }
    await page.getByRole('link', { name: 'Records', exact: true }).click();
    await page.getByLabel('Agent').fill('pager');
    await page.getByLabel('Type').selectOption('signal');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await main().getByRole('link', { name: 'Page note 27' }).waitFor();
    // The count covers every page, not only the one shown.
    await seeText(main().locator('.summary'), '27 records match. Page 1 shows 1–25, newest first.');
    const first = await main().locator('.records li a').allTextContents();
    expect(first[0]).toBe('Page note 27');
    await page.getByRole('link', { name: 'Older →' }).click();
    await seeText(main().locator('.summary'), '27 records match. Page 2 shows 26–27, newest first.');
    const second = await main().locator('.records li a').allTextContents();
    expect([...first, ...second]).toEqual(Array.from({ length: 27 }, (_, i) => `Page note ${String(27 - i).padStart(2, '0')}`));
    expect(await page.getByRole('link', { name: 'Older →' }).count()).toBe(0);
    await page.getByRole('link', { name: '← Newer' }).click();
    await seeText(main().locator('.summary'), '27 records match. Page 1 shows 1–25, newest first.');
    await expect(page.getByLabel('Agent').inputValue()).resolves.toBe('pager');
  });

  test('the count stops at 1,000 records and says so, after at most ten calls; a count that fails leaves the page shown', async () => {
    const sample = (await api.request('GET', '/api/v1/record?limit=1')).body.records[0];
    const counted: string[] = [];
    await page.route('**/api/v1/record?*', (route) => {
      const url = new URL(route.request().url());
      const limit = Number(url.searchParams.get('limit'));
      if (limit === 100) counted.push(url.search);
      const records = Array.from({ length: limit }, (_, i) => ({ ...sample, id: `${sample.id.slice(0, -4)}${String(i).padStart(4, '0')}`, title: `Counted ${i}` }));
      return route.fulfill({ json: { records, next_cursor: 'more' } });
    });
    try {
      await page.goto(`${server.url}/console/#/records`);
      await seeText(main().locator('.summary'), 'This tenant holds 1,000 or more records (superseded ones not counted). Page 1 shows 1–25, newest first.');
      expect(counted).toHaveLength(10);
    } finally {
      await page.unrouteAll();
    }
    // A count that fails leaves the page shown, without a count and without an alert.
    await page.route('**/api/v1/record?*', (route) =>
      new URL(route.request().url()).searchParams.get('limit') === '100' ? route.fulfill({ status: 500, json: JSON.parse(internalErrorResult('req-0043').body) }) : route.continue(),
    );
    try {
      await page.goto(`${server.url}/console/#/records?agent_id=pager`);
      await seeText(main().locator('.summary'), 'Page 1: 25 records, newest first.');
      expect(await page.locator('#alert').isVisible()).toBe(false);
    } finally {
      await page.unrouteAll();
    }
  });

  test('search shows rank and title, a snippet of the body, and marks the words of the question', async () => {
    await page.getByRole('link', { name: 'Search', exact: true }).click();
    await page.getByLabel('Question or words').fill('What does Sam prefer for lunch?');
    await page.getByLabel('Question or words').press('Enter');
    const first = main().locator('.records li').first();
    await first.waitFor();
    await seeText(first.locator('a'), 'Lunch order: Sam prefers the vegetarian curry');
    await seeText(first.locator('.rank'), /^rank (0|1)\.\d{3}$/);
    expect(await first.locator('a mark').allTextContents()).toEqual(['Lunch', 'Sam', 'prefers']);
    // The body is shown, not folded away: a short one whole.
    expect(await first.locator('.snippet').isVisible()).toBe(true);
    await expect(first.locator('.snippet').textContent()).resolves.toBe('Sam asked for it twice; no nuts.');
    expect(await first.locator('.snippet mark').allTextContents()).toEqual(['Sam']);
    await expectFiltersAligned([
      ['Agent', 'Type', 'Client', 'Include superseded'],
      ['Created on or after', 'Created before', 'Results', 'Matches'],
    ]);
  });

  test('search keeps every match by default; "Relevant only" sends the suggested cut-off, and says so when nothing reaches it', async () => {
    await page.goto(`${server.url}/console/#/search`);
    await expect(page.getByLabel('Matches').inputValue()).resolves.toBe('');
    await page.getByLabel('Question or words').fill('What does Sam prefer for lunch?');
    await page.getByLabel('Matches').selectOption({ label: `Relevant only (rank ≥ ${SUGGESTED_MIN_RANK})` });
    await page.getByRole('button', { name: 'Search' }).click();
    await seeText(main().locator('.records li a').first(), 'Lunch order: Sam prefers the vegetarian curry');
    expect(page.url()).toContain(`min_rank=${SUGGESTED_MIN_RANK}`);
    for (const rank of await main().locator('.records li .rank').allTextContents()) expect(Number(rank.replace('rank ', ''))).toBeGreaterThanOrEqual(SUGGESTED_MIN_RANK);
    await page.goto(`${server.url}/console/#/search?q=lunch&min_rank=1&run=1`);
    await seeText(main().locator('.summary'), 'Nothing ranks at or above 1: choose Every match to see weaker ones.');
  });

  test('search marks the words the service matched on, read as it reads them, and shows the body around them; a record deleted from a search returns to that search', async () => {
    const body =
      'Notes from the quarterly review of the analytics dashboard. The meeting covered the roadmap, the hiring plan, the budget for next year and the ' +
      'migration of the reporting jobs to the new cluster, which is planned for the spring. Several users asked that their dark theme preferences be ' +
      "kept per device; the team's username field stays as it is. The dashboard now keeps them in the profile. Other topics: the on-call rotation, " +
      'the release calendar, the office move in June and the format of the retrospective, which stays as it is for now.';
    const { body: notes } = await api.remember({ agent_id: 'analyst', type: 'exchange', title: "Analytics dashboard: the user's display settings", body });
    await page.goto(`${server.url}/console/#/search`);
    await page.getByLabel('Question or words').fill('What does the user prefer?');
    await page.getByRole('button', { name: 'Search' }).click();
    const hit = main().locator('.records li', { has: page.getByRole('link', { name: "Analytics dashboard: the user's display settings" }) });
    await hit.waitFor();
    // "user" is a word the service searches for: marked in "user's" (the possessive off) and in "users" (its
    // stem), as "prefer" is in "preferences"; "username" is another word and "the" a stop word.
    expect(await hit.locator('a mark').allTextContents()).toEqual(['user']);
    expect(await hit.locator('.snippet mark').allTextContents()).toEqual(['users', 'preferences']);
    await expect(hit.locator('.snippet').textContent()).resolves.toBe(
      // From a word's start some way before the first match, to a word's end; "…" where the body goes on.
      '…the new cluster, which is planned for the spring. Several users asked that their dark theme preferences be ' +
        "kept per device; the team's username field stays as it is. The dashboard now keeps them in the profile. Other topics: the on-call…",
    );
    const lunch = main().locator('.records li', { has: page.getByRole('link', { name: 'Lunch order: Sam prefers the vegetarian curry' }) });
    expect(await lunch.locator('a mark').allTextContents()).toEqual(['prefers']);
    const berlin = main().locator('.records li', { has: page.getByRole('link', { name: 'The user moved to Berlin in March 2024' }) });
    expect(await berlin.locator('a mark').allTextContents()).toEqual(['user']);
    await shot('search');

    // Narrowed to the analyst, opened, deleted: the console returns to this search, its words and filters kept.
    await page.getByLabel('Agent', { exact: true }).fill('analyst');
    await page.getByRole('button', { name: 'Search' }).click();
    await seeText(main().locator('.summary'), '1 result, best first.');
    const search = new URL(page.url()).hash;
    expect(search).toContain('agent_id=analyst');
    await main().getByRole('link', { name: "Analytics dashboard: the user's display settings" }).click();
    await main().getByRole('heading', { name: "Analytics dashboard: the user's display settings" }).waitFor();
    await expect(main().getByRole('link', { name: '← Search results' }).getAttribute('href')).resolves.toBe(search);
    await expect(page.getByRole('link', { name: 'Search', exact: true }).getAttribute('aria-current')).resolves.toBe('page');
    await page.getByRole('button', { name: 'Delete record…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete record' }).click();
    await seeText(page.locator('#status'), including(`Deleted the record “Analytics dashboard: the user's display settings” (${notes.id})`));
    await seeText(main().locator('.summary'), 'Nothing matches.');
    expect(new URL(page.url()).hash).toBe(search);
    await expect(page.getByLabel('Question or words').inputValue()).resolves.toBe('What does the user prefer?');
    await expect(page.getByLabel('Agent', { exact: true }).inputValue()).resolves.toBe('analyst');
    expect((await api.request('GET', `/api/v1/record/${notes.id}`)).status).toBe(404);
  });

  test("a record's text is shown as text: markup that agents stored never runs or renders", async () => {
    const hostile = await api.remember({ agent_id: 'demo', type: 'exchange', title: HOSTILE_TITLE, body: HOSTILE_BODY, metadata: { note: '<img src=x onerror=alert(1)>' } });
    await page.goto(`${server.url}/console/#/records`);
    await page.getByRole('link', { name: HOSTILE_TITLE }).waitFor();
    await page.goto(`${server.url}/console/#/search?q=markup&run=1`);
    await main().locator('.records li').first().waitFor();
    await page.goto(`${server.url}/console/#/record/${hostile.body.id}`);
    await main().getByRole('heading', { name: HOSTILE_TITLE }).waitFor();
    await seeText(main().locator('.body'), HOSTILE_BODY);
    await seeText(main().locator('pre.json'), including('<img src=x onerror=alert(1)>'));
    expect(await main().locator('img, script, b').count()).toBe(0);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
  });

  test('forget by filter shows the dry-run count first, deletes nothing until confirmed, then forgets', async () => {
    for (let i = 0; i < 3; i++) await api.remember({ agent_id: 'scratch-bot', type: 'signal', title: `Scratch note ${i}`, body: 'Temporary.' });
    await page.getByRole('link', { name: 'Forget', exact: true }).click();
    // The view before it has an Agent field too: fill the Forget view's, once it is shown.
    await main().getByRole('heading', { name: 'Forget records' }).waitFor();
    await page.getByLabel('Agent').fill('scratch-bot');
    await page.getByRole('button', { name: 'Count matching records' }).click();
    await seeText(main().locator('.outcome .summary'), '3 records match (dry run: nothing deleted yet).');
    await shot('forget');
    expect((await api.request('GET', '/api/v1/record?agent_id=scratch-bot')).body.records).toHaveLength(3);

    await page.getByRole('button', { name: 'Forget 3 records…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Forget 3 records' }).click();
    await seeText(main().locator('.outcome .summary'), 'Forgot 3 records.');
    expect((await api.request('GET', '/api/v1/record?agent_id=scratch-bot')).body.records).toHaveLength(0);

    // A change to the filters drops the count: it must be taken again.
    await page.getByLabel('Agent').fill('nobody');
    await page.getByRole('button', { name: 'Count matching records' }).click();
    await seeText(main().locator('.outcome .summary'), 'No records match these filters. Nothing would be deleted.');
    // No filter at all is refused before any call.
    await page.getByLabel('Agent').fill('');
    await page.getByRole('button', { name: 'Count matching records' }).click();
    await seeText(page.getByRole('alert'), including('Give at least one filter'));
  });

  test('a forget the service runs as a job (on AWS, a large one) is followed until it is done', async () => {
    // The local server finishes every forget within its request, so the job answers come from the browser's
    // network layer here, checked against the API's own schemas; the job itself is tested on DynamoDB Local.
    const JOB = '01937c7a-0000-7000-8000-00000000f0f0';
    let polls = 0;
    await page.route('**/api/v1/forget', (route) =>
      route.request().postDataJSON().dry_run
        ? route.fulfill({ json: forgetResultSchema.parse({ matched: 2500, deleted: 0, dry_run: true }) })
        : route.fulfill({ status: 202, json: forgetAcceptedSchema.parse({ job_id: JOB, matched: 2500 }) }),
    );
    await page.route(`**/api/v1/forget/${JOB}`, (route) =>
      route.fulfill({ json: forgetJobSchema.parse(++polls === 1 ? { status: 'running', matched: 2500, deleted: 1000 } : { status: 'done', matched: 2500, deleted: 2500 }) }),
    );
    try {
      await page.goto(`${server.url}/console/#/forget`);
      await page.getByLabel('Client').fill('acme');
      await page.getByRole('button', { name: 'Count matching records' }).click();
      await seeText(main().locator('.outcome .summary'), '2,500 records match (dry run: nothing deleted yet).');
      await page.getByRole('button', { name: 'Forget 2,500 records…' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Forget 2,500 records' }).click();
      await seeText(main().locator('.outcome .summary'), `Forget job ${JOB} is running: 1,000 of 2,500 deleted. The matched records are already hidden from every read.`);
      await seeText(main().locator('.outcome .summary'), `Forget job ${JOB} is done: 2,500 of 2,500 deleted.`);
      expect(polls).toBe(2);
    } finally {
      await page.unrouteAll();
    }
  });

  test('a failure of the service or of the network is a readable message, with the request id to quote', async () => {
    await page.goto(`${server.url}/console/#/usage`);
    await main().getByRole('meter', { name: 'Records written' }).waitFor();
    await page.route('**/api/v1/record?*', (route) => route.fulfill({ status: 500, json: JSON.parse(internalErrorResult('req-0042').body) }));
    await page.getByRole('link', { name: 'Records', exact: true }).click();
    await seeText(page.getByRole('alert'), 'An internal error occurred. Quote the request_id when you report it. (500 internal_error) (request id req-0042)');
    await page.unrouteAll();
    await page.route('**/api/v1/usage?*', (route) => route.abort('connectionrefused'));
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await seeText(page.getByRole('alert'), including(`Cannot reach the API at ${server.url}.`));
    await page.unrouteAll();
  });

  test("usage draws the month's records and searches against their quotas, with the API's numbers", async () => {
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    const records = main().getByRole('meter', { name: 'Records written' });
    await records.waitFor();
    const usage = (await api.request('GET', '/api/v1/usage')).body;
    await expect(records.getAttribute('aria-valuenow')).resolves.toBe(String(usage.records.used));
    await expect(records.getAttribute('aria-valuemax')).resolves.toBe(String(usage.records.quota));
    await expect(main().getByRole('meter', { name: 'Searches' }).getAttribute('aria-valuenow')).resolves.toBe(String(usage.queries.used));
    await seeText(main().locator('dl'), including('This key mayread, write, delete'));
    await shot('usage');
  });

  test('a key the API refuses returns to the key prompt with a readable message', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).not.toContain(key);
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(false);
    await connect('mem_not-a-key');
    await seeText(page.getByRole('alert'), including('The API refused the key (401 unauthorized)'));
    await page.getByLabel('API key').waitFor();

    // A key that stops working mid-session (revoked here) sends the next action back to the prompt.
    const doomed = await admin(['key', 'create', '--tenant', tenantId], { MEMORY_DATA_DIR: dir });
    await connect(doomed.api_key);
    await main().getByRole('heading', { name: 'Records' }).waitFor();
    await admin(['key', 'revoke', doomed.key_id], { MEMORY_DATA_DIR: dir });
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await page.getByLabel('API key').waitFor();
    await seeText(page.getByRole('alert'), including('401 unauthorized'));
  });

  test('a read-only key bound to an agent: the console says what it may do and offers nothing else', async () => {
    const limited = await admin(['key', 'create', '--tenant', tenantId, '--scope', 'read', '--agent', 'demo', '--expires-in', '30d'], { MEMORY_DATA_DIR: dir });
    await page.goto(`${server.url}/console/`);
    if (await page.getByRole('button', { name: 'Sign out' }).isVisible()) await page.getByRole('button', { name: 'Sign out' }).click();
    await connect(limited.api_key);
    await main().getByRole('heading', { name: 'Records' }).waitFor();
    await seeText(page.locator('#who'), /this key may read · only for agent "demo" · until \d{4}-\d{2}-\d{2}/);
    await expect(page.getByLabel('Agent').inputValue()).resolves.toBe('demo');
    await expect(page.getByLabel('Agent').getAttribute('readonly')).resolves.toBe('');
    await page.getByRole('link', { name: 'Lunch order: Sam prefers the vegetarian curry' }).waitFor();
    // The planner's record is not this key's to see.
    expect(await page.getByRole('link', { name: 'The user moved to Berlin in March 2024' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Lunch order: Sam prefers the vegetarian curry' }).click();
    await seeText(main().locator('.notice'), 'This key lacks the write and delete scopes, so it cannot edit or delete this record.');
    expect(await page.getByRole('button', { name: 'Delete record…' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Edit record' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Forget', exact: true }).click();
    await seeText(main().locator('.notice'), including('lacks the delete scope'));
    await expect(page.getByRole('button', { name: 'Count matching records' }).isDisabled()).resolves.toBe(true);
  });

  test('a key without read: the console says so, and shows the 403 that names the missing scope', async () => {
    const writer = await admin(['key', 'create', '--tenant', tenantId, '--scope', 'write'], { MEMORY_DATA_DIR: dir });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await connect(writer.api_key);
    await seeText(page.locator('#who'), 'this key may not read (it lacks the read scope)');
    await seeText(main().locator('.notice'), including('lacks the read scope'));
    await page.getByRole('link', { name: 'Forget', exact: true }).click();
    // The view before it has an Agent field too: fill the Forget view's, once it is shown.
    await main().getByRole('heading', { name: 'Forget records' }).waitFor();
    await page.getByLabel('Agent').fill('demo');
    await page.getByRole('button', { name: 'Count matching records' }).click();
    await seeText(page.getByRole('alert'), 
      'Not allowed with this key (403 forbidden): This key lacks the delete scope, which POST /api/v1/forget needs',
    );
  });

  test('keyboard only: the prompt, the views and the focus on each new view', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.evaluate(() => history.replaceState(null, '', '#/records'));
    await page.getByLabel('API key').focus();
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
    await main().getByRole('heading', { name: 'Records' }).waitFor();
    // Focus moves to the new view's heading, so a screen reader starts there.
    await main().locator('.summary').waitFor();
    expect(await page.evaluate(() => `${document.activeElement?.tagName}:${document.activeElement?.textContent}`)).toBe('H2:Records');
    await page.getByRole('link', { name: 'Usage', exact: true }).focus();
    await page.keyboard.press('Enter');
    await main().getByRole('meter', { name: 'Records written' }).waitFor();
    await eventually(async () => (await page.evaluate(() => document.activeElement?.tagName)) === 'H2');
  });

  test('at phone width nothing scrolls sideways', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    for (const view of ['records', 'search?q=lunch&run=1', 'usage', 'forget']) {
      await page.goto(`${server.url}/console/#/${view}`);
      await main().locator('h2').waitFor();
      await main().locator('form, .bars').first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    }
    await page.goto(`${server.url}/console/#/records?agent_id=demo`);
    await page.getByRole('link', { name: 'Lunch order: Sam prefers the vegetarian curry' }).waitFor();
    await shot('phone');
  });
});
