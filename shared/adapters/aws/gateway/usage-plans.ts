import {
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlanKeyCommand,
  GetUsagePlansCommand,
  UpdateApiKeyCommand,
  type APIGatewayClient,
  type ApiKey,
  type UsagePlan,
} from '@aws-sdk/client-api-gateway';
import { gatewayKeyValue } from '../../../domain/api-key.js';

/** Where the deployed API lives: the stack outputs these three. */
export interface GatewaySettings {
  /** The REST API's id (`MEMORY_API_ID`). */
  apiId: string;
  /** The API's stage name (`MEMORY_API_STAGE`). */
  stage: string;
  /** The usage plan the stack made for keys at the stage's default rate and burst (`MEMORY_DEFAULT_USAGE_PLAN_ID`). */
  defaultUsagePlanId: string;
}

/** A key's effective token bucket: its own rate and burst where it has them, else its tenant's. */
export interface KeyThrottle {
  /** Sustained requests per second. */
  rate: number;
  /** Token bucket size. */
  burst: number;
}

/** Where `register` put a key. */
export interface Registration {
  /** The API Gateway API key's id (not its value, which is `gatewayKeyValue(keyId)`). */
  apiKeyId: string;
  usagePlanId: string;
}

/** The most items one GetApiKeys or GetUsagePlans page returns. */
const PAGE_LIMIT = 500;

/** The name of the shared plan for one (rate, burst) on one stage, e.g. `memory-prod-rate-20-burst-40`. */
export function usagePlanName(stage: string, { rate, burst }: KeyThrottle): string {
  return `memory-${stage}-rate-${rate}-burst-${burst}`;
}

const errorName = (error: unknown) => (error as { name?: unknown }).name;

/**
 * Keeps API Gateway's side of a service key in step with the key store. The authorizer returns the key id
 * as `usageIdentifierKey` and the API takes its API key from the authorizer, so API Gateway throttles a
 * request by the API key whose VALUE is that key id, at the throttle of the usage plan that key is in. A
 * key id that has no enabled API key in a plan of the stage is refused with 403.
 *
 * Plans: keys whose effective limits equal the default plan's throttle join the stack's default plan; any
 * other (rate, burst) gets one plan shared by every key with those limits, named by `usagePlanName` and
 * created here on first use. A plan's throttle applies to each of its API keys separately, so sharing is
 * exact. Account quotas (per region) shape this: 300 usage plans by default (can be raised on request),
 * so a plan per tenant or per key would run out where a plan per distinct limit does not; 10,000 API
 * keys, not adjustable, which bounds the keys ever issued, revoked ones included, since `disable` keeps
 * them; and CreateApiKey at 5 requests per second per account (the SDK retries TooManyRequestsException).
 *
 * Every step looks before it creates, so `register` is safe to repeat after a partial failure; two
 * concurrent first uses of one (rate, burst) may each create a plan, which is harmless but costs quota.
 */
export class ApiGatewayKeyRegistry {
  constructor(
    private readonly client: APIGatewayClient,
    private readonly settings: GatewaySettings,
  ) {}

  /**
   * Makes the key usable through API Gateway at `limits`: an enabled API key named `keyId`, whose value is
   * `gatewayKeyValue(keyId)` (what the authorizer returns as `usageIdentifierKey`), in the matching plan.
   */
  async register(keyId: string, limits: KeyThrottle): Promise<Registration> {
    const usagePlanId = await this.planFor(limits);
    const apiKeyId = await this.ensureApiKey(keyId);
    await this.attach(keyId, apiKeyId, usagePlanId);
    return { apiKeyId, usagePlanId };
  }

  /**
   * Puts an active key's API key in the plan for new `limits` (its tenant's rate or burst changed), out of
   * the plan of this stage it is in now. API Gateway has no call that moves a key between plans, and a key
   * is in at most one plan of a stage, so this takes it out of the old plan and then puts it in the new
   * one: between those two calls API Gateway refuses the key (a fraction of a second). A key already in the
   * right plan is left alone, and a key with no API key yet is registered, so this is safe to repeat after
   * a partial failure. `moved` says whether it changed anything.
   */
  async move(keyId: string, limits: KeyThrottle): Promise<Registration & { moved: boolean }> {
    const usagePlanId = await this.planFor(limits);
    const apiKeyId = await this.ensureApiKey(keyId);
    const { apiId, stage } = this.settings;
    const current = (await this.plans(apiKeyId)).filter((plan) => (plan.apiStages ?? []).some((s) => s.apiId === apiId && s.stage === stage));
    if (current.some((plan) => plan.id === usagePlanId)) return { apiKeyId, usagePlanId, moved: false };
    for (const plan of current) {
      if (!plan.id) continue;
      try {
        await this.client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: plan.id, keyId: apiKeyId }));
      } catch (error) {
        // Gone already (a concurrent run): what matters is that it is out.
        if (errorName(error) !== 'NotFoundException') throw error;
      }
    }
    await this.attach(keyId, apiKeyId, usagePlanId);
    return { apiKeyId, usagePlanId, moved: true };
  }

  /** Disables the key's API key, so API Gateway refuses it; false when it has none (nothing to disable). */
  async disable(keyId: string): Promise<boolean> {
    const found = await this.apiKeysNamed(keyId);
    for (const key of found) {
      await this.client.send(
        new UpdateApiKeyCommand({ apiKey: key.id, patchOperations: [{ op: 'replace', path: '/enabled', value: 'false' }] }),
      );
    }
    return found.length > 0;
  }

  /**
   * The plan for `limits`. The default plan's throttle is read, not assumed, so that a tenant created with
   * its own limits is throttled at them even when its keys have no limits of their own.
   */
  private async planFor(limits: KeyThrottle): Promise<string> {
    const { apiId, stage, defaultUsagePlanId } = this.settings;
    const defaultPlan = await this.client.send(new GetUsagePlanCommand({ usagePlanId: defaultUsagePlanId }));
    if (defaultPlan.throttle?.rateLimit === limits.rate && defaultPlan.throttle.burstLimit === limits.burst) return defaultUsagePlanId;

    const name = usagePlanName(stage, limits);
    // The name alone could belong to another deployment with the same stage name in this account.
    const existing = (await this.plans()).find(
      (plan) => plan.name === name && (plan.apiStages ?? []).some((s) => s.apiId === apiId && s.stage === stage),
    );
    if (existing?.id) return existing.id;
    const created = await this.client.send(
      new CreateUsagePlanCommand({
        name,
        description: `Memory service keys at ${limits.rate} requests/s, burst ${limits.burst}; made by the admin CLI.`,
        apiStages: [{ apiId, stage }],
        throttle: { rateLimit: limits.rate, burstLimit: limits.burst },
      }),
    );
    if (!created.id) throw new Error(`CreateUsagePlan for ${name} returned no id`);
    return created.id;
  }

  /** The id of the API key for `keyId`, created (or enabled again) as needed. */
  private async ensureApiKey(keyId: string): Promise<string> {
    let [key] = await this.apiKeysNamed(keyId);
    if (!key) {
      try {
        key = await this.client.send(new CreateApiKeyCommand({ name: keyId, value: gatewayKeyValue(keyId), enabled: true }));
      } catch (error) {
        // API key values are unique: a conflict means another run created it after our look-up.
        if (errorName(error) !== 'ConflictException') throw error;
        [key] = await this.apiKeysNamed(keyId);
        if (!key) throw error;
      }
    }
    if (!key.id) throw new Error(`API Gateway returned no id for the API key ${keyId}`);
    if (key.enabled === false) {
      await this.client.send(
        new UpdateApiKeyCommand({ apiKey: key.id, patchOperations: [{ op: 'replace', path: '/enabled', value: 'true' }] }),
      );
    }
    return key.id;
  }

  /**
   * Puts the API key in the plan. API Gateway answers ConflictException when the key is already in a plan
   * for this stage; that is success only if the plan is this one, which GetUsagePlanKey tells.
   */
  private async attach(keyId: string, apiKeyId: string, usagePlanId: string): Promise<void> {
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId, keyType: 'API_KEY' }));
    } catch (error) {
      if (errorName(error) !== 'ConflictException') throw error;
      try {
        await this.client.send(new GetUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId }));
      } catch (lookup) {
        if (errorName(lookup) !== 'NotFoundException') throw lookup;
        throw new Error(`the API key of ${keyId} is in another usage plan of stage ${this.settings.stage}, not in ${usagePlanId}`);
      }
    }
  }

  /** API keys named exactly `name`; GetApiKeys' nameQuery is a search that may match other names too. */
  private async apiKeysNamed(name: string): Promise<ApiKey[]> {
    const found: ApiKey[] = [];
    let position: string | undefined;
    do {
      const page = await this.client.send(
        new GetApiKeysCommand({ nameQuery: name, includeValues: false, limit: PAGE_LIMIT, ...(position ? { position } : {}) }),
      );
      found.push(...(page.items ?? []).filter((key) => key.name === name));
      position = page.position;
    } while (position);
    return found;
  }

  /**
   * The usage plans of the account in this region (GetUsagePlans has no filter by name), or only those the
   * API key `apiKeyId` is in.
   */
  private async plans(apiKeyId?: string): Promise<UsagePlan[]> {
    const plans: UsagePlan[] = [];
    let position: string | undefined;
    do {
      const page = await this.client.send(
        new GetUsagePlansCommand({ limit: PAGE_LIMIT, ...(apiKeyId ? { keyId: apiKeyId } : {}), ...(position ? { position } : {}) }),
      );
      plans.push(...(page.items ?? []));
      position = page.position;
    } while (position);
    return plans;
  }
}
