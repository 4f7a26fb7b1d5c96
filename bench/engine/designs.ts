/**
 * The designs the engine benchmark knows, by the name `--designs` uses. To add one, implement EngineDesign
 * (design.ts) and add a line here.
 */
import { BlockMaxDesign } from './block-max.js';
import type { DesignFactory } from './design.js';
import { Fts5PerTenantDesign } from './fts5-per-tenant.js';
import { Fts5SharedDesign } from './fts5-shared.js';

export const DESIGNS: Record<string, DesignFactory> = {
  'block-max': () => new BlockMaxDesign(),
  'fts5-shared': () => new Fts5SharedDesign(),
  'fts5-per-tenant': () => new Fts5PerTenantDesign('hybrid'),
  'fts5-per-tenant-bm25': () => new Fts5PerTenantDesign('bm25'),
  'fts5-per-tenant-instance': () => new Fts5PerTenantDesign('instance'),
};
