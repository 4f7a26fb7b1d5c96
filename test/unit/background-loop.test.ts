import { expect, test } from '@jest/globals';
import { BackgroundLoop, UNTIL_WOKEN, type BackgroundLoopOptions } from '../../shared/adapters/local/background-loop.js';
import { backoffDelay } from '../../shared/adapters/local/backoff.js';

/**
 * The one background loop (background-loop.ts) and its retry policy (backoff.ts): the start/stop contract
 * every loop of the local runtime relies on, and the backoff after failed passes, with the jitter fixed.
 */

/** Resolves once `done` holds; fails the test after `ms`. */
async function until(done: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A few turns of the event loop: long enough for a due pass to have run. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A loop whose passes are counted, with the lines it logs. */
function counted(pass: (n: number) => number | Promise<number>, options: Partial<BackgroundLoopOptions> = {}) {
  const logged: { message: string; details: Record<string, unknown> }[] = [];
  let passes = 0;
  const loop = new BackgroundLoop({
    name: 'test',
    logger: { error: (message, details) => void logged.push({ message, details }) },
    pass: () => pass(++passes),
    ...options,
  });
  return { loop, logged, passes: () => passes };
}

test('start runs a first pass on a later turn, and a second start starts nothing', async () => {
  const { loop, passes } = counted(() => UNTIL_WOKEN);
  loop.start();
  expect(passes()).toBe(0);
  loop.start();
  await turns();
  expect(passes()).toBe(1);
  expect(loop.state).toBe('sleeping');
  await loop.stop();
});

test('passes never overlap, however often it is started and woken', async () => {
  let inFlight = 0;
  let most = 0;
  const { loop, passes } = counted(async () => {
    most = Math.max(most, ++inFlight);
    await new Promise((resolve) => setTimeout(resolve, 2));
    inFlight--;
    return 1;
  });
  for (let i = 0; i < 20; i++) {
    loop.start();
    loop.wake();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await until(() => passes() >= 5);
  await loop.stop();
  expect(most).toBe(1);
});

test('stop before start resolves at once, and the loop never runs', async () => {
  const { loop, passes } = counted(() => 0);
  await loop.stop();
  expect(loop.state).toBe('stopped');
  loop.start();
  loop.wake();
  await turns();
  expect(passes()).toBe(0);
  expect(loop.state).toBe('stopped');
});

test('stop while a pass runs waits for it, and no pass starts after it', async () => {
  let release: () => void = () => undefined;
  const { loop, passes } = counted(() => new Promise<number>((resolve) => (release = () => resolve(0))));
  loop.start();
  await until(() => passes() === 1);
  expect(loop.state).toBe('running');
  let stopped = false;
  const stopping = loop.stop().then(() => (stopped = true));
  await turns();
  expect(stopped).toBe(false);
  expect(loop.state).toBe('stopping');
  release();
  await stopping;
  expect(loop.state).toBe('stopped');
  // The pass asked for another at once; none came.
  await turns();
  expect(passes()).toBe(1);
  // A second stop resolves too.
  await loop.stop();
});

test('stop during a sleep ends it without another pass', async () => {
  const { loop, passes } = counted(() => 60_000);
  loop.start();
  await until(() => passes() === 1);
  const started = Date.now();
  await loop.stop();
  expect(Date.now() - started).toBeLessThan(1000);
  expect(passes()).toBe(1);
});

test('wake during a sleep runs a pass now, and several wakes in one turn run one pass', async () => {
  const { loop, passes } = counted(() => 60_000);
  loop.start();
  await until(() => passes() === 1);
  loop.wake();
  loop.wake();
  loop.wake();
  expect(passes()).toBe(1); // never inside the call
  await until(() => passes() === 2, 1000);
  await turns();
  expect(passes()).toBe(2);
  // A pass that asks to sleep until woken is woken the same way.
  await loop.stop();
  const idle = counted(() => UNTIL_WOKEN);
  idle.loop.start();
  await until(() => idle.passes() === 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(idle.passes()).toBe(1);
  idle.loop.wake();
  await until(() => idle.passes() === 2, 1000);
  await idle.loop.stop();
});

test('a wake during a pass runs another as soon as it ends', async () => {
  let release: () => void = () => undefined;
  const { loop, passes } = counted((n) => (n === 1 ? new Promise<number>((resolve) => (release = () => resolve(UNTIL_WOKEN))) : UNTIL_WOKEN));
  loop.start();
  await until(() => passes() === 1);
  loop.wake();
  release();
  await until(() => passes() === 2, 1000);
  await loop.stop();
});

test('a failed pass is logged with the loop name; the backoff doubles up to its cap and a success resets it', async () => {
  // Passes 1-5 fail, 6 succeeds, 7 fails; then the loop sleeps until woken.
  const { loop, logged, passes } = counted(
    (n) => {
      if (n <= 5 || n === 7) throw new Error(`failure ${n}`);
      return n === 6 ? 0 : UNTIL_WOKEN;
    },
    { name: 'classification', backoff: { baseMs: 2, capMs: 8 }, random: () => 1, context: () => ({ queue: 'classification' }) },
  );
  loop.start();
  await until(() => passes() === 8);
  await loop.stop();
  expect(logged.map((l) => l.message)).toEqual(Array(6).fill('classification pass failed'));
  expect(logged.map((l) => l.details.retry_ms)).toEqual([2, 4, 8, 8, 8, 2]);
  expect(logged.map((l) => l.details.failures)).toEqual([1, 2, 3, 4, 5, 1]);
  expect(logged[0]!.details).toMatchObject({ loop: 'classification', queue: 'classification', error: new Error('failure 1') });
});

test('a pass that throws synchronously is caught like one that rejects', async () => {
  const { loop, logged, passes } = counted((n) => {
    if (n === 1) throw new Error('sync');
    return UNTIL_WOKEN;
  }, { backoff: { baseMs: 1, capMs: 1 } });
  loop.start();
  await until(() => passes() === 2);
  await loop.stop();
  expect(logged).toHaveLength(1);
  expect(logged[0]!.message).toBe('test pass failed');
});

test('the backoff is full jitter: anywhere from 0 up to the capped doubling', () => {
  const policy = { baseMs: 100, capMs: 1000 };
  expect([1, 2, 3, 4, 5, 50].map((n) => backoffDelay(n, policy, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
  expect(backoffDelay(3, policy, () => 0)).toBe(0);
  expect(backoffDelay(3, policy, () => 0.5)).toBe(200);
  for (let i = 0; i < 100; i++) {
    const wait = backoffDelay(4, policy);
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(wait).toBeLessThanOrEqual(800);
  }
});
