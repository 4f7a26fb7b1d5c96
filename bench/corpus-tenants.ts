/** The corpus' shape: its options, and its tenants with their shares, domains, agents and clients. */
import { clamp } from './corpus-random.js';

/** How many records a corpus has, and the seed that draws them. */
export interface CorpusOptions {
  records: number;
  seed?: number;
}

/** The field a tenant works in, which picks its nouns, phrases and agent names. */
export type Domain = 'support' | 'sales' | 'engineering' | 'health' | 'personal';

/** One tenant of a corpus: its share of the records, its domain and how many agents and clients it has. */
export interface TenantSpec {
  name: string;
  /** The fraction of the corpus' records that belong to the tenant. */
  share: number;
  /** How many distinct agents write its records. */
  agents: number;
  /** How many distinct clients its records name. */
  clients: number;
  domain: Domain;
}

/** The seed a corpus is drawn with unless another is given. */
export const DEFAULT_SEED = 20_260_520;

const TENANT_PLAN: { name: string; share: number; domain: Domain; clientsPerRoot: number }[] = [
  { name: 'northwind-support', share: 0.5, domain: 'support', clientsPerRoot: 2 },
  { name: 'bluepeak-sales', share: 0.25, domain: 'sales', clientsPerRoot: 3 },
  { name: 'initech-engineering', share: 0.12, domain: 'engineering', clientsPerRoot: 0.4 },
  { name: 'riverside-clinic', share: 0.08, domain: 'health', clientsPerRoot: 1 },
  { name: 'hearth-assistant', share: 0.045, domain: 'personal', clientsPerRoot: 0.2 },
  { name: 'solo-dev', share: 0.005, domain: 'engineering', clientsPerRoot: 0.3 },
];

/** The tenants of a corpus: six, from half the records down to half a percent; agents and clients grow with size. */
export function tenantsFor(options: CorpusOptions): TenantSpec[] {
  return TENANT_PLAN.map(({ name, share, domain, clientsPerRoot }) => {
    const root = Math.sqrt(share * options.records);
    return {
      name,
      share,
      domain,
      agents: clamp(Math.round(root / 2), 2, 300),
      clients: clamp(Math.round(root * clientsPerRoot), 1, 2000),
    };
  });
}
