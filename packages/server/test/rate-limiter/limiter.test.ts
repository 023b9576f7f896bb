/**
 * The rate limiter inside the scheduling engine, with instances whose executions the test releases:
 * resources held per execution, strict priority order by `executions × priority`, Triton's load
 * messages, and what leaving the limiter gives back.
 */
import { describe, expect, it } from 'vitest';

import { ServerError } from '../../src/common/errors.js';
import type { ModelRateLimiter } from '../../src/repository/model-config.js';
import { createDefaultScheduler } from '../../src/scheduler/default-scheduler.js';
import { createDynamicBatcher } from '../../src/scheduler/dynamic-batcher.js';
import type { SchedulingEngine } from '../../src/scheduler/engine.js';
import {
  RateLimiter,
  rateLimitedInstances,
  type RateLimitResource,
} from '../../src/scheduler/rate-limiter.js';
import { ControlledModel, dynamicBatching, flush, int32Request, makeConfig } from '../scheduler/helpers.js';

function rl(resources: [name: string, count: number, global?: boolean][], priority = 0): ModelRateLimiter {
  return {
    resources: resources.map(([name, count, global]) => ({ name, count, global: global === true })),
    priority,
  };
}

function limited(limiter: RateLimiter, model: ControlledModel, config: ModelRateLimiter): SchedulingEngine {
  const registration = limiter.register(model.instances.map((instance) => ({ instance, device: 0, config })));
  return createDefaultScheduler({
    modelName: 'm',
    modelVersion: '1',
    instances: model.instances,
    maxBatchSize: 8,
    rateLimiter: registration,
  });
}

function registerError(limiter: RateLimiter, ...configs: ModelRateLimiter[]): string {
  try {
    for (const config of configs) limited(limiter, new ControlledModel(1), config);
  } catch (error) {
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).kind).toBe('INVALID_ARG');
    return (error as Error).message;
  }
  return '';
}

const flags = (...values: [string, number, number?][]): { resources: RateLimitResource[] } => ({
  resources: values.map(([name, count, device]) => ({ name, count, device: device ?? -1 })),
});

describe('rate limiter: resources', () => {
  it('runs one execution at a time across two models when the shared resource has one copy', async () => {
    const limiter = new RateLimiter();
    const a = new ControlledModel(1);
    const b = new ControlledModel(1);
    const sa = limited(limiter, a, rl([['R', 1]]));
    const sb = limited(limiter, b, rl([['R', 1]]));
    const done = [0, 1, 2].flatMap((i) => [sa.enqueue(int32Request(i)), sb.enqueue(int32Request(10 + i))]);
    for (let n = 1; n <= 6; n++) {
      await flush();
      expect(a.started.length + b.started.length).toBe(n);
      expect(a.running + b.running).toBe(1);
      (a.running === 1 ? a : b).started.at(-1)?.release();
    }
    await Promise.all(done);
    expect(a.started).toHaveLength(3);
    expect(b.started).toHaveLength(3);
  });

  it('runs them together when the flag gives two copies', async () => {
    const limiter = new RateLimiter(flags(['R', 2]));
    const a = new ControlledModel(1);
    const b = new ControlledModel(1);
    const sa = limited(limiter, a, rl([['R', 1]]));
    const sb = limited(limiter, b, rl([['R', 1]]));
    const done = [sa.enqueue(int32Request(1)), sb.enqueue(int32Request(2))];
    await flush();
    expect(a.running + b.running).toBe(2);
    a.started[0]?.release();
    b.started[0]?.release();
    await Promise.all(done);
  });

  it('limits the instances of one model sharing a resource, and a failed execution gives it back', async () => {
    const limiter = new RateLimiter();
    const m = new ControlledModel(2);
    const s = limited(limiter, m, rl([['R', 1]]));
    const first = s.enqueue(int32Request(1));
    const second = s.enqueue(int32Request(2));
    await flush();
    expect(m.running).toBe(1);
    m.started[0]?.fail('boom');
    await expect(first).rejects.toThrow('boom');
    await flush();
    expect(m.running).toBe(1);
    expect(m.started[1]?.instance).not.toBe(m.started[0]?.instance);
    m.started[1]?.release();
    await second;
  });

  it('counts a global resource once for every device', async () => {
    const limiter = new RateLimiter();
    const a = new ControlledModel(1);
    const b = new ControlledModel(1);
    const sa = limiter.register([{ instance: a.instances[0]!, device: 0, config: rl([['G', 1, true]]) }]);
    const sb = limiter.register([{ instance: b.instances[0]!, device: 1, config: rl([['G', 1, true]]) }]);
    const ea = createDefaultScheduler({
      modelName: 'a',
      modelVersion: '1',
      instances: a.instances,
      maxBatchSize: 8,
      rateLimiter: sa,
    });
    const eb = createDefaultScheduler({
      modelName: 'b',
      modelVersion: '1',
      instances: b.instances,
      maxBatchSize: 8,
      rateLimiter: sb,
    });
    const done = [ea.enqueue(int32Request(1)), eb.enqueue(int32Request(2))];
    await flush();
    expect(a.running + b.running).toBe(1);
    (a.running === 1 ? a : b).started[0]?.release();
    await flush();
    expect(a.running + b.running).toBe(1);
    (a.running === 1 ? a : b).started[0]?.release();
    await Promise.all(done);
  });

  it('forms the dynamic batch when the instance gets its resources (requests that came meanwhile join)', async () => {
    const limiter = new RateLimiter();
    const m = new ControlledModel(2);
    const registration = limiter.register(
      m.instances.map((instance) => ({ instance, device: 0, config: rl([['R', 1]]) })),
    );
    const s = createDynamicBatcher({
      modelName: 'm',
      modelVersion: '1',
      instances: m.instances,
      maxBatchSize: 4,
      dynamicBatching: dynamicBatching({ preferred_batch_size: [1, 2, 3, 4] }),
      rateLimiter: registration,
    });
    const done = [s.enqueue(int32Request(0))];
    await flush();
    expect(m.started.map((e) => e.rows)).toEqual([1]);
    for (let i = 1; i <= 5; i++) done.push(s.enqueue(int32Request(i)));
    await flush();
    // The second instance is free, but the resource is not: nothing else runs yet.
    expect(m.started).toHaveLength(1);
    m.started[0]?.release();
    await flush();
    expect(m.started.map((e) => e.rows)).toEqual([1, 4]);
    m.started[1]?.release();
    await flush();
    m.started[2]?.release();
    await Promise.all(done);
    expect(m.started.map((e) => e.rows)).toEqual([1, 4, 1]);
  });
});

describe('rate limiter: priority', () => {
  it('gives a priority-1 model about twice the executions of a priority-2 model under contention', async () => {
    const limiter = new RateLimiter();
    const a = new ControlledModel(1);
    const b = new ControlledModel(1);
    const sa = limited(limiter, a, rl([['R', 1]], 1));
    const sb = limited(limiter, b, rl([['R', 1]], 2));
    const done: Promise<unknown>[] = [];
    for (let i = 0; i < 40; i++) done.push(sa.enqueue(int32Request(i)), sb.enqueue(int32Request(i)));
    const order: string[] = [];
    for (let n = 0; n < 30; n++) {
      await flush();
      const model = a.running === 1 ? a : b;
      expect(a.running + b.running).toBe(1);
      order.push(model === a ? 'a' : 'b');
      model.started.at(-1)?.release();
    }
    const countA = order.filter((m) => m === 'a').length;
    const countB = order.length - countA;
    expect(countA / countB).toBeGreaterThanOrEqual(1.8);
    expect(countA / countB).toBeLessThanOrEqual(2.2);
    // Drain what is left.
    for (;;) {
      await flush();
      const model = a.running === 1 ? a : b.running === 1 ? b : undefined;
      if (model === undefined) break;
      model.started.at(-1)?.release();
    }
    await Promise.all(done);
  });

  it('treats priority 0 as 1 (equal shares)', async () => {
    const limiter = new RateLimiter();
    const a = new ControlledModel(1);
    const b = new ControlledModel(1);
    const sa = limited(limiter, a, rl([['R', 1]], 0));
    const sb = limited(limiter, b, rl([['R', 1]], 1));
    const done: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) done.push(sa.enqueue(int32Request(i)), sb.enqueue(int32Request(i)));
    const order: string[] = [];
    for (let n = 0; n < 20; n++) {
      await flush();
      const model = a.running === 1 ? a : b;
      order.push(model === a ? 'a' : 'b');
      model.started.at(-1)?.release();
    }
    await Promise.all(done);
    expect(order.filter((m) => m === 'a')).toHaveLength(10);
    expect(order.slice(0, 10).filter((m) => m === 'a').length).toBe(5);
  });
});

describe('rate limiter: resource counts and load errors (Triton messages)', () => {
  it('defaults each resource to the largest count an instance asks for, per device', () => {
    const limiter = new RateLimiter();
    limited(
      limiter,
      new ControlledModel(1),
      rl([
        ['R1', 4],
        ['R2', 4],
      ]),
    );
    limited(
      limiter,
      new ControlledModel(1),
      rl([
        ['R2', 5],
        ['R3', 10],
        ['R4', 5],
      ]),
    );
    limited(
      limiter,
      new ControlledModel(1),
      rl([
        ['R1', 1],
        ['R3', 7],
        ['R4', 2],
      ]),
    );
    expect(Object.fromEntries(limiter.limits().get(0) ?? [])).toEqual({ R1: 4, R2: 5, R3: 10, R4: 5 });
  });

  it('fails a load whose instance needs more than --rate-limit-resource gives', () => {
    expect(registerError(new RateLimiter(flags(['resource1', 1])), rl([['resource1', 4]]))).toBe(
      'Resource count for "resource1" is limited to 1 which will prevent scheduling of one or more model instances, the minimum required count is 4',
    );
    // A value for another device does not count for device 0.
    expect(
      registerError(new RateLimiter(flags(['resource1', 10, 10], ['resource2', 2])), rl([['resource1', 4]])),
    ).toBe(
      'Resource count for "resource1" is limited to 0 which will prevent scheduling of one or more model instances, the minimum required count is 4',
    );
    // With any flag given, a resource no flag names has no copies.
    expect(registerError(new RateLimiter(flags(['other', 3])), rl([['R', 1]]))).toBe(
      'Resource count for "R" is limited to 0 which will prevent scheduling of one or more model instances, the minimum required count is 1',
    );
  });

  it('takes the device value, the every-device value and (for a global resource) any device', () => {
    const limiter = new RateLimiter(flags(['R1', 2], ['R1', 5, 0], ['G', 3, 7]));
    limited(
      limiter,
      new ControlledModel(1),
      rl([
        ['R1', 5],
        ['G', 3, true],
      ]),
    );
    expect(limiter.limits().get(0)?.get('R1')).toBe(5);
    expect(limiter.limits().get(-2)?.get('G')).toBe(3);
  });

  it('keeps the smaller count of a resource given twice for one device (as Triton)', () => {
    const limiter = new RateLimiter(flags(['R', 6], ['R', 2]));
    expect(registerError(limiter, rl([['R', 3]]))).toBe(
      'Resource count for "R" is limited to 2 which will prevent scheduling of one or more model instances, the minimum required count is 3',
    );
  });

  it('refuses a resource that is global in one config and per-device in another', () => {
    const limiter = new RateLimiter();
    expect(registerError(limiter, rl([['resource2', 2, true]]), rl([['resource2', 2]]))).toBe(
      'Resource "resource2" is present as both global and device-specific resource in the model configuration.',
    );
    // The failed registration left nothing behind: the global use still stands alone.
    expect(limiter.limits().get(0)?.has('resource2') ?? false).toBe(false);
  });

  it('recomputes the counts when a drained version leaves', async () => {
    const limiter = new RateLimiter();
    const big = limited(limiter, new ControlledModel(1), rl([['R', 4]]));
    limited(limiter, new ControlledModel(1), rl([['R', 1]]));
    expect(limiter.limits().get(0)?.get('R')).toBe(4);
    await big.drain();
    expect(limiter.limits().get(0)?.get('R')).toBe(1);
  });

  it('maps instances to their group (count, and gpus for KIND_GPU) and device', () => {
    const m = new ControlledModel(5);
    const config = makeConfig({
      instance_group: [
        {
          name: 'a',
          kind: 'KIND_CPU',
          count: 1,
          gpus: [],
          rate_limiter: rl([['R', 1]], 3),
          secondary_devices: [],
          profile: [],
          passive: false,
          host_policy: '',
        },
        {
          name: 'b',
          kind: 'KIND_GPU',
          count: 2,
          gpus: [1, 2],
          secondary_devices: [],
          profile: [],
          passive: false,
          host_policy: '',
        },
      ],
    });
    const specs = rateLimitedInstances(config, m.instances);
    expect(specs.map((s) => [s.device, s.config?.priority])).toEqual([
      [0, 3],
      [1, undefined],
      [1, undefined],
      [2, undefined],
      [2, undefined],
    ]);
  });
});
