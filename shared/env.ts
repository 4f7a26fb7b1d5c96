import type { z } from 'zod';

/** Parses settings from the environment with their schema; throws one error that lists every problem. */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  return parsed.data;
}
