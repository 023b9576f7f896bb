/**
 * Triton's rate limiter (`--rate-limit=execution_count`): one per server, shared by every model
 * version's scheduler. An instance listing `rate_limiter.resources` in its instance group must
 * hold those resources while it executes a batch; resources are released when the execution ends.
 *
 * As Triton's `RateLimiter` (core `rate_limiter.cc`):
 * - A scheduler with queued work asks for "an instance of this model". The model's available
 *   instance with the lowest scaled priority (`executions × max(priority, 1)`) is *staged*.
 * - Staged instances of every model wait in one list. The one with the lowest scaled priority is
 *   allocated when every resource it lists is free; while it cannot be, no other staged instance is
 *   (strict order, so a `priority: 2` instance gets about half the executions of a `priority: 1`
 *   one under contention).
 * - Resource counts: a device resource is counted per device (every instance runs on device 0
 *   here, or on its `gpus` entry with `gpuFallback: 'cpu'`), a `global` one once for the server. By
 *   default a resource's count is the largest any registered instance asks for; with any
 *   `--rate-limit-resource` given, every resource counts what the flags give it (0 when not given:
 *   a global resource takes the largest given on any device, a device resource the larger of its
 *   device's and the every-device (`name:count`) value), and a model whose instance needs more
 *   fails to load with Triton's message.
 *
 * Differences: Triton allocates at most one staged instance per release; here allocation goes on
 * while the first staged instance fits (same order, no resource left idle). Ties of scaled priority
 * go to the instance staged first.
 * @packageDocumentation
 */
import { ServerError } from '../common/errors.js';
import type { ModelConfig, ModelRateLimiter } from '../repository/model-config.js';
import type { ModelInstance } from '../runtime/types.js';

/** The device key of global resources (Triton's `GLOBAL_RESOURCE_KEY`). */
export const GLOBAL_RESOURCE_DEVICE = -2;
/** The device key of a `--rate-limit-resource=name:count` value: every device (Triton's `PER_DEVICE_RESOURCE_KEY`). */
export const EVERY_DEVICE = -1;

/** One `--rate-limit-resource` value. */
export interface RateLimitResource {
  readonly name: string;
  readonly count: number;
  /** Device id; {@link EVERY_DEVICE} (-1) when the flag lists none. */
  readonly device: number;
}

/** Options of {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** `--rate-limit-resource` values (a name given twice for one device keeps the smaller count, as Triton). */
  readonly resources?: readonly RateLimitResource[];
}

/** How one instance takes part: its device and its group's `rate_limiter`. */
export interface RateLimitedInstanceSpec {
  readonly instance: ModelInstance;
  readonly device: number;
  readonly config: ModelRateLimiter | undefined;
}

type ResourceMap = Map<number, Map<string, number>>;

type InstanceState = 'AVAILABLE' | 'STAGED' | 'ALLOCATED';

interface InstanceContext {
  readonly model: RateLimitedModel;
  readonly instance: ModelInstance;
  /** `max(priority, 1)`. */
  readonly priority: number;
  /** Resources needed by device key. */
  readonly needs: ResourceMap;
  /** Registration order within the model (tie-break among its available instances). */
  readonly index: number;
  executions: number;
  state: InstanceState;
  /** When it was staged (tie-break among staged instances). */
  stagedAt: number;
}

function scaled(c: InstanceContext): number {
  return c.executions * c.priority;
}

function sortedEntries<K extends string | number, V>(map: ReadonlyMap<K, V>): [K, V][] {
  return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The server-wide rate limiter (see the module documentation). */
export class RateLimiter {
  readonly #explicit: ResourceMap = new Map();
  readonly #instances = new Set<InstanceContext>();
  #limits: ResourceMap = new Map();
  readonly #allocated: ResourceMap = new Map();
  #staged: InstanceContext[] = [];
  #stageClock = 0;
  #allocating = false;
  #again = false;

  constructor(options: RateLimiterOptions = {}) {
    for (const r of options.resources ?? []) {
      const device = this.#explicit.get(r.device) ?? new Map<string, number>();
      this.#explicit.set(r.device, device);
      const before = device.get(r.name);
      device.set(r.name, before === undefined ? r.count : Math.min(before, r.count));
    }
  }

  /**
   * Registers the instances of one model version. Fails, registering nothing, with Triton's
   * INVALID_ARG messages when a resource cannot cover an instance or is both global and per-device.
   * @throws ServerError
   */
  register(specs: readonly RateLimitedInstanceSpec[]): RateLimitedModel {
    const model = new RateLimitedModel(this);
    const contexts = specs.map((spec, index): InstanceContext => {
      const needs: ResourceMap = new Map();
      for (const r of spec.config?.resources ?? []) {
        const key = r.global ? GLOBAL_RESOURCE_DEVICE : spec.device;
        const device = needs.get(key) ?? new Map<string, number>();
        needs.set(key, device);
        device.set(r.name, r.count);
      }
      return {
        model,
        instance: spec.instance,
        priority: Math.max(spec.config?.priority ?? 0, 1),
        needs,
        index,
        executions: 0,
        state: 'AVAILABLE',
        stagedAt: 0,
      };
    });
    for (const c of contexts) this.#instances.add(c);
    try {
      this.#limits = this.#computeLimits();
    } catch (error) {
      for (const c of contexts) this.#instances.delete(c);
      throw error;
    }
    model.attach(contexts);
    return model;
  }

  /** Resource counts now in force, by device key (-2 = global), for tests and logs. */
  limits(): ReadonlyMap<number, ReadonlyMap<string, number>> {
    return this.#limits;
  }

  /** Removes a model version's instances (after its scheduler drained). */
  unregister(contexts: readonly InstanceContext[]): void {
    for (const c of contexts) this.#instances.delete(c);
    this.#staged = this.#staged.filter((c) => !contexts.includes(c));
    for (const c of contexts) {
      if (c.state === 'ALLOCATED') this.free(c);
      c.state = 'AVAILABLE';
    }
    // Limits only shrink here, so they cannot fail; a later registration recomputes them anyway.
    try {
      this.#limits = this.#computeLimits();
    } catch {
      /* keep the previous limits */
    }
    this.attempt();
  }

  /** Triton's `UpdateResourceLimits`: the largest need per resource, then the explicit counts. */
  #computeLimits(): ResourceMap {
    const max: ResourceMap = new Map();
    for (const c of this.#instances) {
      for (const [key, resources] of c.needs) {
        const device = max.get(key) ?? new Map<string, number>();
        max.set(key, device);
        for (const [name, count] of resources) device.set(name, Math.max(device.get(name) ?? 0, count));
      }
    }
    if (this.#explicit.size > 0) {
      for (const [key, resources] of sortedEntries(max)) {
        for (const [name, required] of sortedEntries(resources)) {
          const available = this.#explicitCount(key, name);
          if (available < required) {
            throw new ServerError(
              'INVALID_ARG',
              `Resource count for "${name}" is limited to ${available} which will prevent scheduling of one or more model instances, the minimum required count is ${required}`,
            );
          }
          resources.set(name, available);
        }
      }
    }
    for (const name of [...(max.get(GLOBAL_RESOURCE_DEVICE)?.keys() ?? [])].sort()) {
      for (const [key, resources] of sortedEntries(max)) {
        if (key !== GLOBAL_RESOURCE_DEVICE && resources.has(name)) {
          throw new ServerError(
            'INVALID_ARG',
            `Resource "${name}" is present as both global and device-specific resource in the model configuration.`,
          );
        }
      }
    }
    return max;
  }

  /** The explicit count of resource `name` at device key `key` (0 when no flag gives it). */
  #explicitCount(key: number, name: string): number {
    let count = 0;
    const consider = (device: ReadonlyMap<string, number> | undefined): void => {
      const n = device?.get(name);
      if (n !== undefined && n > count) count = n;
    };
    if (key === GLOBAL_RESOURCE_DEVICE) {
      for (const device of this.#explicit.values()) consider(device);
    } else {
      consider(this.#explicit.get(key));
      consider(this.#explicit.get(EVERY_DEVICE));
    }
    return count;
  }

  /** @internal Puts an instance in the staged list (the caller then runs {@link attempt}). */
  stage(c: InstanceContext): void {
    c.state = 'STAGED';
    c.stagedAt = this.#stageClock++;
    this.#staged.push(c);
  }

  /** @internal Gives an allocated instance's resources back (the caller then runs {@link attempt}). */
  free(c: InstanceContext): void {
    for (const [key, resources] of c.needs) {
      const held = this.#allocated.get(key);
      if (held === undefined) continue;
      for (const [name, count] of resources) held.set(name, (held.get(name) ?? 0) - count);
    }
  }

  /**
   * Allocates staged instances, best scaled priority first, while the first one's resources are
   * free. Re-entrant calls (a grant that releases or asks again at once) run in the same loop.
   */
  attempt(): void {
    if (this.#allocating) {
      this.#again = true;
      return;
    }
    this.#allocating = true;
    try {
      do {
        this.#again = false;
        for (;;) {
          const next = this.#first();
          if (next === undefined || !this.#fits(next)) break;
          this.#staged.splice(this.#staged.indexOf(next), 1);
          for (const [key, resources] of next.needs) {
            const held = this.#allocated.get(key) ?? new Map<string, number>();
            this.#allocated.set(key, held);
            for (const [name, count] of resources) held.set(name, (held.get(name) ?? 0) + count);
          }
          next.state = 'ALLOCATED';
          next.model.granted(next);
        }
      } while (this.#again);
    } finally {
      this.#allocating = false;
    }
  }

  #first(): InstanceContext | undefined {
    let best: InstanceContext | undefined;
    for (const c of this.#staged) {
      if (
        best === undefined ||
        scaled(c) < scaled(best) ||
        (scaled(c) === scaled(best) && c.stagedAt < best.stagedAt)
      )
        best = c;
    }
    return best;
  }

  #fits(c: InstanceContext): boolean {
    for (const [key, resources] of c.needs) {
      const limit = this.#limits.get(key);
      const held = this.#allocated.get(key);
      for (const [name, count] of resources) {
        if ((held?.get(name) ?? 0) + count > (limit?.get(name) ?? 0)) return false;
      }
    }
    return true;
  }
}

/**
 * One model version's part in the {@link RateLimiter}: its scheduler asks for instances with
 * {@link request} and gets them through {@link onGrant}, resources held, then hands each back with
 * {@link release}.
 */
export class RateLimitedModel {
  readonly #limiter: RateLimiter;
  #contexts: InstanceContext[] = [];
  readonly #byInstance = new Map<ModelInstance, InstanceContext>();
  #pending = 0;
  #closed = false;
  /** Receives each granted instance (its resources are held until {@link release}). */
  onGrant: (instance: ModelInstance) => void = () => undefined;

  /** @internal Created by {@link RateLimiter.register}. */
  constructor(limiter: RateLimiter) {
    this.#limiter = limiter;
  }

  /** @internal */
  attach(contexts: InstanceContext[]): void {
    this.#contexts = contexts;
    for (const c of contexts) this.#byInstance.set(c.instance, c);
  }

  /** Requests not yet given an instance. */
  get pendingRequests(): number {
    return this.#pending;
  }

  /** Asks for one instance of the model (any); {@link onGrant} receives it when its resources are held. */
  request(): void {
    if (this.#closed) return;
    this.#pending += 1;
    this.#stageAvailable();
    this.#limiter.attempt();
  }

  /**
   * Hands an instance back: `executed` = it ran a batch (it counts towards its scaled priority),
   * false when it was granted but had nothing to run. Its resources are released.
   */
  release(instance: ModelInstance, executed: boolean): void {
    const c = this.#byInstance.get(instance);
    if (c === undefined || c.state !== 'ALLOCATED') return;
    if (executed) c.executions += 1;
    c.state = 'AVAILABLE';
    // As Triton's OnRelease: resources back, the instance staged again if requests wait, then the
    // best staged instance of any model is allocated.
    this.#limiter.free(c);
    if (!this.#closed) this.#stageAvailable();
    this.#limiter.attempt();
  }

  /** Leaves the rate limiter (the scheduler has drained; nothing of it runs any more). */
  unregister(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending = 0;
    this.#limiter.unregister(this.#contexts);
  }

  /** @internal Called by the limiter with an allocated instance. */
  granted(c: InstanceContext): void {
    this.onGrant(c.instance);
  }

  /** Stages available instances (lowest scaled priority first) while requests wait. */
  #stageAvailable(): void {
    while (this.#pending > 0) {
      let best: InstanceContext | undefined;
      for (const c of this.#contexts) {
        if (c.state !== 'AVAILABLE') continue;
        if (
          best === undefined ||
          scaled(c) < scaled(best) ||
          (scaled(c) === scaled(best) && c.index < best.index)
        )
          best = c;
      }
      if (best === undefined) return;
      this.#pending -= 1;
      this.#limiter.stage(best);
    }
  }
}

/**
 * How the instances of `config` (as `createInstances` makes them: each group's `count`, times its
 * `gpus` for KIND_GPU) take part in rate limiting: their group's `rate_limiter` and device (0 for
 * the CPU, as Triton; a KIND_GPU group's instances on its `gpus` in order). When `instances` does
 * not match the groups (instances built elsewhere), each instance takes part with no resources.
 */
export function rateLimitedInstances(
  config: ModelConfig,
  instances: readonly ModelInstance[],
): RateLimitedInstanceSpec[] {
  const specs: RateLimitedInstanceSpec[] = [];
  for (const group of config.instance_group) {
    const gpus = group.kind === 'KIND_GPU' && group.gpus.length > 0 ? group.gpus : [0];
    for (const device of gpus) {
      for (let i = 0; i < group.count; i++) {
        const instance = instances[specs.length];
        if (instance === undefined) break;
        specs.push({ instance, device, config: group.rate_limiter });
      }
    }
  }
  if (specs.length !== instances.length) {
    return instances.map((instance) => ({ instance, device: 0, config: undefined }));
  }
  return specs;
}
