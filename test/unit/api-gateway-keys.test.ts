import {
  APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlanKeyCommand,
  GetUsagePlansCommand,
  NotFoundException,
  UpdateApiKeyCommand,
  type CreateUsagePlanCommandInput,
  type UsagePlan,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { gatewayKeyValue } from '../../shared/domain/api-key.js';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { ApiGatewayKeyRegistry, usagePlanName } from '../../shared/adapters/aws/gateway/usage-plans.js';

/**
 * The API Gateway side of key issuance, at the SDK boundary: which commands `register` and `disable` send,
 * in order, for each situation. API Gateway itself cannot run here.
 */

const SETTINGS = { apiId: 'a1b2c3d4e5', stage: 'prod', defaultUsagePlanId: 'plan-default' };
const KEY = 'key_0123456789abcdef';
const OTHER_KEY = 'key_fedcba9876543210';
const DEFAULT_PLAN: UsagePlan = {
  id: 'plan-default',
  name: 'memory-prod-default',
  apiStages: [{ apiId: SETTINGS.apiId, stage: 'prod' }],
  throttle: { rateLimit: 20, burstLimit: 40 },
};

const gateway = mockClient(APIGatewayClient);
const registry = () => new ApiGatewayKeyRegistry(new APIGatewayClient({ region: 'us-east-1' }), SETTINGS);

/** Every command sent since the last reset, as [command name, input]. */
const sent = () => gateway.calls().map((call) => [call.args[0].constructor.name, call.args[0].input]);

const apiKeysQuery = (name: string) => ['GetApiKeysCommand', { nameQuery: name, includeValues: false, limit: 500 }];
const conflict = () => new ConflictException({ message: 'already exists', $metadata: {} });

beforeEach(() => {
  gateway.reset();
  gateway.on(GetUsagePlanCommand, { usagePlanId: 'plan-default' }).resolves(DEFAULT_PLAN);
  gateway.on(GetApiKeysCommand).resolves({ items: [] });
  gateway.on(CreateApiKeyCommand).callsFake(({ name }) => ({ id: `ak-${name}`, name, enabled: true }));
  gateway.on(CreateUsagePlanKeyCommand).resolves({});
});

describe('ApiGatewayKeyRegistry.register', () => {
  test('a key at the default limits gets an API key valued with its id in the default plan', async () => {
    // nameQuery is a search: a longer name that contains the key id is not this key's API key.
    gateway.on(GetApiKeysCommand).resolves({ items: [{ id: 'ak-other', name: `${KEY}-old`, enabled: true }] });
    expect(await registry().register(KEY, { rate: 20, burst: 40 })).toEqual({ apiKeyId: `ak-${KEY}`, usagePlanId: 'plan-default' });
    expect(sent()).toEqual([
      ['GetUsagePlanCommand', { usagePlanId: 'plan-default' }],
      apiKeysQuery(KEY),
      ['CreateApiKeyCommand', { name: KEY, value: gatewayKeyValue(KEY), enabled: true }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: `ak-${KEY}`, keyType: 'API_KEY' }],
    ]);
  });

  test('a key with its own limits creates the plan for them; a second key with the same limits reuses it', async () => {
    // A plan of the same name for another API (another deployment with the same stage name) is not ours.
    const plans: UsagePlan[] = [
      DEFAULT_PLAN,
      { id: 'plan-foreign', name: 'memory-prod-rate-5-burst-10', apiStages: [{ apiId: 'zzz', stage: 'prod' }] },
    ];
    gateway
      .on(GetUsagePlansCommand)
      .callsFake(({ position }) => (position === undefined ? { items: plans.slice(0, 1), position: 'page-2' } : { items: plans.slice(1) }));
    gateway.on(CreateUsagePlanCommand).callsFake((input: CreateUsagePlanCommandInput) => {
      const plan = { ...input, id: 'plan-5-10' } as UsagePlan;
      plans.push(plan);
      return plan;
    });

    expect(await registry().register(KEY, { rate: 5, burst: 10 })).toEqual({ apiKeyId: `ak-${KEY}`, usagePlanId: 'plan-5-10' });
    expect(sent()).toEqual([
      ['GetUsagePlanCommand', { usagePlanId: 'plan-default' }],
      ['GetUsagePlansCommand', { limit: 500 }],
      ['GetUsagePlansCommand', { limit: 500, position: 'page-2' }],
      [
        'CreateUsagePlanCommand',
        {
          name: 'memory-prod-rate-5-burst-10',
          description: expect.stringContaining('5 requests/s, burst 10'),
          apiStages: [{ apiId: SETTINGS.apiId, stage: 'prod' }],
          throttle: { rateLimit: 5, burstLimit: 10 },
        },
      ],
      apiKeysQuery(KEY),
      ['CreateApiKeyCommand', { name: KEY, value: gatewayKeyValue(KEY), enabled: true }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-5-10', keyId: `ak-${KEY}`, keyType: 'API_KEY' }],
    ]);

    const before = sent().length;
    expect(await registry().register(OTHER_KEY, { rate: 5, burst: 10 })).toEqual({ apiKeyId: `ak-${OTHER_KEY}`, usagePlanId: 'plan-5-10' });
    expect(sent().slice(before)).toEqual([
      ['GetUsagePlanCommand', { usagePlanId: 'plan-default' }],
      ['GetUsagePlansCommand', { limit: 500 }],
      ['GetUsagePlansCommand', { limit: 500, position: 'page-2' }],
      apiKeysQuery(OTHER_KEY),
      ['CreateApiKeyCommand', { name: OTHER_KEY, value: gatewayKeyValue(OTHER_KEY), enabled: true }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-5-10', keyId: `ak-${OTHER_KEY}`, keyType: 'API_KEY' }],
    ]);
  });

  test('limits that differ from the default plan in burst alone get their own plan', async () => {
    gateway.on(GetUsagePlansCommand).resolves({ items: [DEFAULT_PLAN] });
    gateway.on(CreateUsagePlanCommand).resolves({ id: 'plan-20-41' });
    expect((await registry().register(KEY, { rate: 20, burst: 41 })).usagePlanId).toBe('plan-20-41');
    expect(gateway.commandCalls(CreateUsagePlanCommand)[0]!.args[0].input.name).toBe('memory-prod-rate-20-burst-41');
  });

  test('a retry after a partial failure reuses the API key and takes a conflict on the plan key as attached', async () => {
    // The first run created the API key; attaching it then failed on the way back, though API Gateway did it.
    gateway
      .on(GetApiKeysCommand)
      .resolvesOnce({ items: [] })
      .resolves({ items: [{ id: `ak-${KEY}`, name: KEY, enabled: true }] });
    gateway.on(CreateUsagePlanKeyCommand).rejectsOnce(new Error('socket hang up')).rejects(conflict());
    gateway.on(GetUsagePlanKeyCommand).resolves({ id: `ak-${KEY}`, type: 'API_KEY', name: KEY });
    await expect(registry().register(KEY, { rate: 20, burst: 40 })).rejects.toThrow('socket hang up');

    // Not resetHistory: it would also rewind the answers given Once above.
    const before = sent().length;
    expect(await registry().register(KEY, { rate: 20, burst: 40 })).toEqual({ apiKeyId: `ak-${KEY}`, usagePlanId: 'plan-default' });
    expect(sent().slice(before)).toEqual([
      ['GetUsagePlanCommand', { usagePlanId: 'plan-default' }],
      apiKeysQuery(KEY),
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: `ak-${KEY}`, keyType: 'API_KEY' }],
      ['GetUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: `ak-${KEY}` }],
    ]);
  });

  test('a conflict because the API key sits in another plan of the stage is an error, not success', async () => {
    gateway.on(GetApiKeysCommand).resolves({ items: [{ id: `ak-${KEY}`, name: KEY, enabled: true }] });
    gateway.on(CreateUsagePlanKeyCommand).rejects(conflict());
    gateway.on(GetUsagePlanKeyCommand).rejects(new NotFoundException({ message: 'Invalid Usage Plan Key', $metadata: {} }));
    await expect(registry().register(KEY, { rate: 20, burst: 40 })).rejects.toThrow(
      `the API key of ${KEY} is in another usage plan of stage prod, not in plan-default`,
    );
  });

  test('an existing API key that was disabled is enabled again', async () => {
    gateway.on(GetApiKeysCommand).resolves({ items: [{ id: `ak-${KEY}`, name: KEY, enabled: false }] });
    await registry().register(KEY, { rate: 20, burst: 40 });
    expect(sent().slice(1)).toEqual([
      apiKeysQuery(KEY),
      ['UpdateApiKeyCommand', { apiKey: `ak-${KEY}`, patchOperations: [{ op: 'replace', path: '/enabled', value: 'true' }] }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: `ak-${KEY}`, keyType: 'API_KEY' }],
    ]);
  });

  test('an API key created by a concurrent run between look-up and create is found and used', async () => {
    gateway
      .on(GetApiKeysCommand)
      .resolvesOnce({ items: [] })
      .resolves({ items: [{ id: 'ak-theirs', name: KEY, enabled: true }] });
    gateway.on(CreateApiKeyCommand).rejects(conflict());
    expect(await registry().register(KEY, { rate: 20, burst: 40 })).toEqual({ apiKeyId: 'ak-theirs', usagePlanId: 'plan-default' });
  });

  test('any other failure is passed on', async () => {
    gateway.on(CreateApiKeyCommand).rejects(new Error('AccessDeniedException: not authorized to perform apigateway:POST'));
    await expect(registry().register(KEY, { rate: 20, burst: 40 })).rejects.toThrow('apigateway:POST');
    expect(gateway.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(0);
  });

  test('plan names carry the stage, the rate and the burst', () => {
    expect(usagePlanName('dev', { rate: 1.5, burst: 3 })).toBe('memory-dev-rate-1.5-burst-3');
  });
});

describe('ApiGatewayKeyRegistry.move', () => {
  const PLAN_5_10: UsagePlan = { id: 'plan-5-10', name: 'memory-prod-rate-5-burst-10', apiStages: [{ apiId: SETTINGS.apiId, stage: 'prod' }] };
  /** The plans the key's API key is in, as GetUsagePlans with `keyId` answers; without it, every plan. */
  const keyIn = (plans: UsagePlan[]) =>
    gateway.on(GetUsagePlansCommand).callsFake(({ keyId }) => ({ items: keyId === undefined ? [DEFAULT_PLAN, PLAN_5_10] : plans }));

  beforeEach(() => {
    gateway.on(GetApiKeysCommand).resolves({ items: [{ id: `ak-${KEY}`, name: KEY, enabled: true }] });
    gateway.on(DeleteUsagePlanKeyCommand).resolves({});
  });

  test('takes the API key out of its plan of this stage, then puts it in the plan for the new limits', async () => {
    keyIn([DEFAULT_PLAN]);
    expect(await registry().move(KEY, { rate: 5, burst: 10 })).toEqual({ apiKeyId: `ak-${KEY}`, usagePlanId: 'plan-5-10', moved: true });
    expect(sent()).toEqual([
      ['GetUsagePlanCommand', { usagePlanId: 'plan-default' }],
      ['GetUsagePlansCommand', { limit: 500 }],
      apiKeysQuery(KEY),
      ['GetUsagePlansCommand', { limit: 500, keyId: `ak-${KEY}` }],
      ['DeleteUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: `ak-${KEY}` }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-5-10', keyId: `ak-${KEY}`, keyType: 'API_KEY' }],
    ]);
  });

  test('back to the default limits: back to the default plan', async () => {
    keyIn([PLAN_5_10]);
    expect(await registry().move(KEY, { rate: 20, burst: 40 })).toEqual({ apiKeyId: `ak-${KEY}`, usagePlanId: 'plan-default', moved: true });
    expect(sent().slice(-2)).toEqual([
      ['DeleteUsagePlanKeyCommand', { usagePlanId: 'plan-5-10', keyId: `ak-${KEY}` }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-default', keyId: `ak-${KEY}`, keyType: 'API_KEY' }],
    ]);
  });

  test('a key already in the right plan is left alone, so a run that failed half way can be repeated', async () => {
    keyIn([PLAN_5_10]);
    expect(await registry().move(KEY, { rate: 5, burst: 10 })).toEqual({ apiKeyId: `ak-${KEY}`, usagePlanId: 'plan-5-10', moved: false });
    expect(gateway.commandCalls(DeleteUsagePlanKeyCommand)).toHaveLength(0);
    expect(gateway.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(0);
  });

  test("a plan of another API or stage is not this stage's, and stays; a plan key gone already is taken as gone", async () => {
    const foreign: UsagePlan = { id: 'plan-foreign', name: 'memory-prod-default', apiStages: [{ apiId: 'zzz', stage: 'prod' }] };
    keyIn([foreign, DEFAULT_PLAN]);
    gateway.on(DeleteUsagePlanKeyCommand).rejects(new NotFoundException({ message: 'Invalid Usage Plan Key', $metadata: {} }));
    expect((await registry().move(KEY, { rate: 5, burst: 10 })).moved).toBe(true);
    expect(gateway.commandCalls(DeleteUsagePlanKeyCommand).map((c) => c.args[0].input.usagePlanId)).toEqual(['plan-default']);
    expect(gateway.commandCalls(CreateUsagePlanKeyCommand).map((c) => c.args[0].input.usagePlanId)).toEqual(['plan-5-10']);
  });

  test('a key with no API key yet is registered in the plan; a failure to take a key out is passed on', async () => {
    gateway.on(GetApiKeysCommand).resolves({ items: [] });
    keyIn([]);
    expect(await registry().move(KEY, { rate: 5, burst: 10 })).toEqual({ apiKeyId: `ak-${KEY}`, usagePlanId: 'plan-5-10', moved: true });
    expect(gateway.commandCalls(CreateApiKeyCommand)).toHaveLength(1);

    gateway.reset();
    gateway.on(GetUsagePlanCommand).resolves(DEFAULT_PLAN);
    gateway.on(GetApiKeysCommand).resolves({ items: [{ id: `ak-${KEY}`, name: KEY, enabled: true }] });
    keyIn([DEFAULT_PLAN]);
    gateway.on(DeleteUsagePlanKeyCommand).rejects(new Error('TooManyRequestsException'));
    await expect(registry().move(KEY, { rate: 5, burst: 10 })).rejects.toThrow('TooManyRequestsException');
    expect(gateway.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(0);
  });
});

describe('ApiGatewayKeyRegistry.disable', () => {
  test('finds the API key by its exact name, over every page, and disables it', async () => {
    gateway
      .on(GetApiKeysCommand)
      .resolvesOnce({ items: [{ id: 'ak-other', name: `${KEY}-old`, enabled: true }], position: 'page-2' })
      .resolves({ items: [{ id: `ak-${KEY}`, name: KEY, enabled: true }] });
    gateway.on(UpdateApiKeyCommand).resolves({});
    expect(await registry().disable(KEY)).toBe(true);
    expect(sent()).toEqual([
      apiKeysQuery(KEY),
      ['GetApiKeysCommand', { nameQuery: KEY, includeValues: false, limit: 500, position: 'page-2' }],
      ['UpdateApiKeyCommand', { apiKey: `ak-${KEY}`, patchOperations: [{ op: 'replace', path: '/enabled', value: 'false' }] }],
    ]);
  });

  test('a key with no API key has nothing to disable', async () => {
    expect(await registry().disable(KEY)).toBe(false);
    expect(sent()).toEqual([apiKeysQuery(KEY)]);
  });
});

describe('the gateway settings', () => {
  const ALL = { MEMORY_API_ID: 'a1b2c3d4e5', MEMORY_API_STAGE: 'prod', MEMORY_DEFAULT_USAGE_PLAN_ID: 'plan-default' };

  test('none of them: no gateway; all three: the gateway', () => {
    expect(loadAwsConfig({}).gateway).toBeNull();
    expect(loadAwsConfig(ALL).gateway).toEqual({ apiId: 'a1b2c3d4e5', stage: 'prod', defaultUsagePlanId: 'plan-default' });
  });

  test.each([
    [['MEMORY_API_ID'], 'MEMORY_API_STAGE, MEMORY_DEFAULT_USAGE_PLAN_ID'],
    [['MEMORY_API_STAGE'], 'MEMORY_API_ID, MEMORY_DEFAULT_USAGE_PLAN_ID'],
    [['MEMORY_DEFAULT_USAGE_PLAN_ID'], 'MEMORY_API_ID, MEMORY_API_STAGE'],
    [['MEMORY_API_ID', 'MEMORY_API_STAGE'], 'MEMORY_DEFAULT_USAGE_PLAN_ID'],
    [['MEMORY_API_ID', 'MEMORY_DEFAULT_USAGE_PLAN_ID'], 'MEMORY_API_STAGE'],
    [['MEMORY_API_STAGE', 'MEMORY_DEFAULT_USAGE_PLAN_ID'], 'MEMORY_API_ID'],
  ])('only %j set: a configuration error naming the missing ones', (given, missing) => {
    const env = Object.fromEntries(given.map((name) => [name, ALL[name as keyof typeof ALL]]));
    expect(() => loadAwsConfig(env)).toThrow(`invalid configuration: missing ${missing};`);
  });

  test('an empty value is a problem, not a missing setting', () => {
    expect(() => loadAwsConfig({ ...ALL, MEMORY_API_STAGE: '' })).toThrow(/invalid configuration: MEMORY_API_STAGE/);
  });
});
