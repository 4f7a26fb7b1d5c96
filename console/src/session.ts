/**
 * Where the console keeps the API's base URL and the key: this tab's sessionStorage only, never a cookie,
 * the URL or localStorage. Closing the tab forgets the key.
 */
const STORAGE_KEY = 'agent-memory-console';

export interface Session {
  baseUrl: string;
  apiKey: string;
}

/** The session of this tab, or null when there is none (or it cannot be read). */
export function loadSession(): Session | null {
  try {
    const parsed: unknown = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null');
    if (parsed && typeof parsed === 'object' && 'baseUrl' in parsed && 'apiKey' in parsed) {
      const { baseUrl, apiKey } = parsed as Record<string, unknown>;
      if (typeof baseUrl === 'string' && typeof apiKey === 'string' && apiKey !== '') return { baseUrl, apiKey };
    }
  } catch {
    // Storage disabled, or a value this console did not write: there is no session.
  }
  return null;
}

/** Keeps the session for this tab. */
export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

/** Forgets the key; the base URL stays as the next prompt's default. */
export function forgetKey(): void {
  const session = loadSession();
  sessionStorage.removeItem(STORAGE_KEY);
  if (session) sessionStorage.setItem(`${STORAGE_KEY}.base-url`, session.baseUrl);
}

/**
 * The base URL the prompt offers: the one used last in this tab, else the one the deployment wrote into the
 * page (on AWS, the API Gateway stage URL), else the console's own origin (the local server serves both).
 */
export function defaultBaseUrl(): string {
  const last = sessionStorage.getItem(`${STORAGE_KEY}.base-url`);
  if (last) return last;
  const deployed = document.querySelector<HTMLMetaElement>('meta[name="memory-api-base-url"]')?.content.trim();
  return deployed || location.origin;
}
