/**
 * The seed of a test that draws at random (the model-based tests, the crash rounds), from its environment
 * variable: `fixed` when unset (what `npm test` runs), a new one for `random` (what the long npm scripts
 * run, each printing it), else the number given, to replay a run.
 */
export function seedOf(given: string | undefined, fixed: number): number {
  if (given === undefined) return fixed;
  return given === 'random' ? Date.now() % 2 ** 31 : Number(given);
}
