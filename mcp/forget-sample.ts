import type { z } from 'zod';
import { MemoryApiError, MemoryError, type MemoryClient } from '../sdk/src/index.js';
import type { ForgetSample } from './format.js';
import { FORGET_SAMPLE_SIZE, type forgetArgsSchema } from './tool-schemas.js';

/** The selectors of a forget, as memory_forget takes them. */
type ForgetSelectors = Omit<z.output<typeof forgetArgsSchema>, 'confirm'>;

/**
 * A few of the records a forget matches, newest first, for the dry run to show, when reading them is cheap:
 * one page of a listing with the same filters (`before` is the listing's `until`), or, for `ids`, the
 * first few of them read one by one and checked against the other selectors. Null when they could not be
 * read: the count still stands, so the dry run answers without them.
 */
export async function sampleOf(client: MemoryClient, selectors: ForgetSelectors, signal: AbortSignal): Promise<ForgetSample[] | null> {
  const short = ({ id, agent_id, type, title, client: c, created_at }: ForgetSample): ForgetSample => ({ id, agent_id, type, title, client: c, created_at });
  try {
    if (selectors.ids === undefined) {
      const { before, ...filters } = selectors;
      const page = await client.listPage({ ...filters, ...(before === undefined ? {} : { until: before }), limit: FORGET_SAMPLE_SIZE }, { signal });
      return page.records.map(short);
    }
    const read = await Promise.all(
      [...new Set(selectors.ids)].slice(0, FORGET_SAMPLE_SIZE).map((id) =>
        client.get(id, { signal }).catch((error: unknown) => {
          if (error instanceof MemoryApiError && error.code === 'not_found') return null;
          throw error;
        }),
      ),
    );
    const matches = (r: ForgetSample) =>
      (selectors.agent_id === undefined || r.agent_id === selectors.agent_id) &&
      (selectors.client === undefined || r.client === selectors.client) &&
      (selectors.type === undefined || r.type === selectors.type) &&
      (selectors.before === undefined || r.created_at < selectors.before);
    return read
      .filter((r): r is NonNullable<typeof r> => r !== null && matches(r))
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0))
      .map(short);
  } catch (error) {
    if (error instanceof MemoryError) return null;
    throw error;
  }
}
