import { randomBytes } from 'node:crypto';
import type { Db } from './database.js';

/** The secrets the service keeps in its database, by name. */
export type ServiceSecretName = 'cursor-key';

/** How many random bytes a new secret has: 256 bits, what HMAC-SHA256 can use. */
export const SERVICE_SECRET_BYTES = 32;

/**
 * The service's secrets in the `service_secrets` table (migration 8), kept with the data they protect. A
 * secret is made on first need from crypto.randomBytes and kept: a restart reads the same one, and a new
 * database (a new data directory, or the AWS-shaped mode's index file made again) makes a new one.
 */
export class SqliteServiceSecrets {
  private readonly known = new Map<ServiceSecretName, Buffer>();

  constructor(private readonly db: Db) {}

  /** The secret `name`, made and stored first if this database has none yet; the same bytes on every call. */
  get(name: ServiceSecretName): Buffer {
    let secret = this.known.get(name);
    if (!secret) {
      // INSERT OR IGNORE, then read back: when another process (the admin CLI beside the server) stored one
      // first, both use that one.
      this.db
        .prepare('INSERT OR IGNORE INTO service_secrets (name, value, created_at) VALUES (?, ?, ?)')
        .run(name, randomBytes(SERVICE_SECRET_BYTES), new Date().toISOString());
      const row = this.db.prepare('SELECT value FROM service_secrets WHERE name = ?').get(name) as { value: Buffer };
      secret = row.value;
      this.known.set(name, secret);
    }
    return secret;
  }
}
