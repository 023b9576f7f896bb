/**
 * `InferenceServer`: the transport-neutral core every front end (HTTP now, gRPC later) calls. It
 * owns the models (through {@link ModelManager}), statistics, trace and log settings and shared
 * memory, and runs the inference pipeline.
 * @packageDocumentation
 */
import { datatypeFromModelConfig } from '@tritonserver-ts/protocol';

import { ModelRepositoryError } from '../repository/errors.js';
import { listRepositoryModels, resolveModel } from '../repository/index.js';
import type { ModelConfig } from '../repository/model-config.js';
import type { GpuFallback, ResolveModelOptions } from '../repository/types.js';
import { createInstances } from '../runtime/backends.js';
import { createBuiltinBackends, type PythonBackendSettings } from '../runtime/builtin-backends.js';
import { createScheduler } from '../scheduler/create-scheduler.js';
import { withResponseCache } from '../scheduler/cached-scheduler.js';
import type { ResponseCache } from '../scheduler/response-cache.js';
import { createResponseCache, type ResponseCacheConfig } from './response-cache-config.js';
import { RateLimiter, type RateLimitResource } from '../scheduler/rate-limiter.js';
import { runWarmup } from '../scheduler/warmup.js';
import type { SchedulerFactory } from '../scheduler/types.js';
import { CustomMetricsRegistry } from '../statistics/custom-metrics.js';
import type { MetricsConfig } from '../statistics/metrics-config.js';
import { StatisticsRegistry } from '../statistics/registry.js';
import { toStatisticsReport, type ModelStatisticsReport } from '../statistics/report.js';
import { echo } from '../common/echo.js';
import { holdConversion } from './conversion-budget.js';
import { invalidArg } from '../common/errors.js';
import { prepareRequest, runPrepared } from './infer.js';
import { Logger, type LogSettings, type LogSettingsUpdate } from './logging.js';
import {
  ModelManager,
  type ModelServices,
  type ServingVersion,
  type StartupResult,
} from './model-manager.js';
import { CudaSharedMemoryManager, SystemSharedMemoryManager } from './shared-memory.js';
import {
  hasSharedMemoryInputs,
  sharedMemoryRegionsOf,
  readSharedMemoryInputs,
  type SharedMemoryInputs,
} from './shared-memory-inputs.js';
import type { TraceSettings, TraceSettingsUpdate } from './trace.js';
import { TraceManager, type ActiveTrace } from './tracing.js';
import type { CoreInferRequest, CoreInferResponse } from '../common/types.js';
import type {
  ModelControlMode,
  ModelMetadata,
  RepositoryIndexEntry,
  ServerMetadata,
  TensorMetadata,
} from './types.js';

/** The name `GET v2` reports. Triton's own clients and examples check `name == "triton"`. */
export const SERVER_NAME = 'triton';
/**
 * The version `GET v2` and gRPC `ServerMetadata` report: the Triton server release whose behaviour
 * this server follows (2.73.0, NGC container {@link TRITON_NGC_RELEASE}).
 */
export const SERVER_VERSION = '2.73.0';
/**
 * The NGC release (`nvcr.io/nvidia/tritonserver:<release>-py3`) that ships {@link SERVER_VERSION}:
 * the release `docker/Dockerfile.triton` builds on by default and the conformance suite targets.
 */
export const TRITON_NGC_RELEASE = '26.09';
/** The protocol extensions this server implements (`GET v2` → `extensions`). */
export const SERVER_EXTENSIONS: readonly string[] = [
  'classification',
  'model_repository',
  'model_repository(unload_dependents)',
  'schedule_policy',
  'model_configuration',
  'system_shared_memory',
  'cuda_shared_memory',
  'binary_tensor_data',
  'parameters',
  'statistics',
  // Triton's trace settings API, and traces written to the trace file (core/tracing.ts).
  'trace',
  'logging',
];

/** Options of {@link InferenceServer.create}. */
export interface InferenceServerOptions {
  /** `--model-repository` (one or more directories). */
  readonly modelRepositories: readonly string[];
  /** `--model-control-mode`; default `none`. */
  readonly modelControlMode?: ModelControlMode;
  /** `--load-model` names for explicit mode (`*` = all). */
  readonly loadModels?: readonly string[];
  /** `--strict-readiness`; default true. */
  readonly strictReadiness?: boolean;
  /**
   * `--exit-on-error`: {@link InferenceServer.create} rejects when a model repository cannot be read
   * (and `startServer` when a startup model fails to load). Default false here (the CLI defaults to
   * true, like tritonserver): such a server starts without models, live but never ready (Triton 2.73).
   */
  readonly exitOnError?: boolean;
  /** `--repository-poll-secs` (poll mode); default 15. */
  readonly repositoryPollSecs?: number;
  /** `--model-config-name`. */
  readonly modelConfigName?: string;
  /** KIND_GPU instance groups on this GPU-less host: `'error'` (Triton) or `'cpu'`. Default `'error'`. */
  readonly gpuFallback?: GpuFallback;
  /** `--disable-auto-complete-config` sets this false. Default true. */
  readonly autoCompleteConfig?: boolean;
  /** The scheduler factory; default: the scheduler package's `createScheduler`. */
  readonly schedulerFactory?: SchedulerFactory;
  /**
   * `--rate-limit`: `execution_count` makes instances acquire their group's `rate_limiter`
   * resources before each execution, by priority (see `scheduler/rate-limiter.ts`); `off` (the
   * default, as Triton) ignores every `rate_limiter` section.
   */
  readonly rateLimit?: 'off' | 'execution_count';
  /** `--rate-limit-resource` values (used with `rateLimit: 'execution_count'`). */
  readonly rateLimitResources?: readonly RateLimitResource[];
  /** Replace repository/runtime functions (tests). */
  readonly services?: Partial<ModelServices>;
  /** `--trace-config`: initial trace settings (the trace file can be set here only). */
  readonly trace?: Partial<TraceSettings>;
  /** Initial log settings. */
  readonly log?: Partial<LogSettings>;
  /** Where log lines go (default stderr). */
  readonly logSink?: (line: string) => void;
  /** Directory of POSIX shared-memory objects (default `/dev/shm`). */
  readonly sharedMemoryDir?: string;
  /**
   * `--allow-client-shm`: let clients register system (and CUDA) shared-memory regions. Default
   * false, as in Triton: register and unregister then answer UNSUPPORTED.
   */
  readonly allowClientShm?: boolean;
  /**
   * `--client-shm-max-regions` (this project's): system shared-memory regions that may be registered
   * at once; past it a registration is refused (400 / INVALID_ARGUMENT). Default 1024.
   */
  readonly sharedMemoryMaxRegions?: number;
  /** Python backend settings (`--backend-config=python,…`); its log lines go to {@link logger}. */
  readonly python?: Omit<PythonBackendSettings, 'log' | 'customMetrics'>;
  /**
   * `--metrics-config`: which latency metrics each model version keeps (summaries, the
   * first-response histogram). Default: Triton's (counters only).
   */
  readonly metricsConfig?: MetricsConfig;
  /**
   * `--cache-config` (Triton's response cache; only the `local` implementation): models with
   * `response_cache { enable: true }` answer repeated requests from it. Absent = no cache.
   */
  readonly responseCache?: ResponseCacheConfig;
}

/** The transport-neutral Triton-compatible server core. */
export class InferenceServer {
  /** Server log (Triton's log settings extension). */
  readonly logger: Logger;
  /** Trace settings, sampling and the trace file (Triton's trace extension). */
  readonly trace: TraceManager;
  /** Statistics of every loaded model version. */
  readonly statistics: StatisticsRegistry;
  /** Custom metric families of models (`pb_utils.MetricFamily`), shown on `/metrics`. */
  readonly customMetrics = new CustomMetricsRegistry();
  /** System shared-memory regions. */
  readonly systemSharedMemory: SystemSharedMemoryManager;
  /** CUDA shared memory (unsupported here: no GPU). */
  readonly cudaSharedMemory: CudaSharedMemoryManager;
  /** The model lifecycle manager. */
  readonly models: ModelManager;
  /** The response cache (`--cache-config`), when the server has one. */
  readonly responseCache: ResponseCache | undefined;
  readonly #strictReadiness: boolean;
  #live = true;
  #startup: StartupResult = { failures: [], unsupported: [] };
  /** Why the server failed to initialize (a repository it cannot read), when it did. */
  #initFailure: string | undefined;

  private constructor(options: InferenceServerOptions) {
    this.logger = new Logger(options.log ?? {}, options.logSink);
    this.trace = new TraceManager(options.trace ?? {}, this.logger);
    const traceProblem = this.trace.startupProblem;
    if (traceProblem !== undefined) {
      this.logger.warn(`trace level is not OFF but no request will be traced: ${traceProblem}`);
    }
    this.#strictReadiness = options.strictReadiness ?? true;
    this.statistics = new StatisticsRegistry(
      options.metricsConfig !== undefined ? { metrics: options.metricsConfig } : {},
    );
    this.systemSharedMemory = new SystemSharedMemoryManager({
      ...(options.sharedMemoryDir !== undefined ? { dir: options.sharedMemoryDir } : {}),
      allowClientShm: options.allowClientShm ?? false,
      ...(options.sharedMemoryMaxRegions !== undefined ? { maxRegions: options.sharedMemoryMaxRegions } : {}),
    });
    this.cudaSharedMemory = new CudaSharedMemoryManager(this.systemSharedMemory);
    // The backends, with their settings: onnxruntime sessions run synchronously on their calling
    // thread, so one worker thread per onnxruntime instance makes instances execute concurrently
    // and keeps HTTP answering; Python models log to the server log.
    const backends = createBuiltinBackends({
      onnxruntime: { workerThreads: {} },
      python: { ...options.python, log: this.logger, customMetrics: this.customMetrics },
    });
    const resolveOptions: ResolveModelOptions = {
      ...(options.modelConfigName !== undefined ? { modelConfigName: options.modelConfigName } : {}),
      ...(options.gpuFallback !== undefined ? { gpuFallback: options.gpuFallback } : {}),
      ...(options.autoCompleteConfig !== undefined ? { autoCompleteConfig: options.autoCompleteConfig } : {}),
      backends,
    };
    // The response cache sits in front of the schedulers of the models that enable it.
    this.responseCache =
      options.responseCache !== undefined ? createResponseCache(options.responseCache) : undefined;
    const baseFactory = options.schedulerFactory ?? createScheduler;
    const schedulerFactory =
      this.responseCache !== undefined
        ? withResponseCache(baseFactory, this.responseCache, (message) => this.logger.error(message))
        : baseFactory;
    // One rate limiter for the server: every model version's scheduler registers with it.
    const rateLimiter =
      options.rateLimit === 'execution_count'
        ? new RateLimiter({ resources: options.rateLimitResources ?? [] })
        : undefined;
    const services: ModelServices = {
      listModels: listRepositoryModels,
      resolve: resolveModel,
      createInstances,
      createScheduler:
        rateLimiter === undefined ? schedulerFactory : (o) => schedulerFactory({ ...o, rateLimiter }),
      warmup: (model, instances) => runWarmup(model.config, instances, { modelDirectory: model.directory }),
      ...options.services,
    };
    this.models = new ModelManager({
      repositories: options.modelRepositories,
      controlMode: options.modelControlMode ?? 'none',
      ...(options.loadModels !== undefined ? { startupModels: options.loadModels } : {}),
      pollIntervalMs: (options.repositoryPollSecs ?? 15) * 1000,
      resolveOptions,
      instanceOptions: {
        ...(options.gpuFallback !== undefined ? { gpuFallback: options.gpuFallback } : {}),
        backends,
      },
      services,
      logger: this.logger,
      rateLimiting: rateLimiter !== undefined,
      statistics: this.statistics,
      inferenceHost: { infer: (request) => this.infer(request) },
    });
  }

  /**
   * Creates a server and loads its startup models. Models that fail to load are reported in
   * {@link InferenceServer.startupFailures} (the CLI exits on them when `--exit-on-error` is set).
   */
  static async create(options: InferenceServerOptions): Promise<InferenceServer> {
    const server = new InferenceServer(options);
    try {
      server.#startup = await server.models.start();
    } catch (error) {
      // As Triton with --exit-on-error=false: a repository it cannot read fails the startup, which
      // is logged; the server then runs without models, live but not ready.
      const unreadable = error instanceof ModelRepositoryError && error.code === 'REPOSITORY_NOT_FOUND';
      if (options.exitOnError === true || !unreadable) throw error;
      server.#initFailure = error.message;
      server.logger.error(error.message);
    }
    for (const f of server.#startup.failures) server.logger.error(f.reason);
    for (const u of server.#startup.unsupported) server.logger.warn(`${u.reason} (listed UNAVAILABLE)`);
    return server;
  }

  /** Models listed UNAVAILABLE at startup because their backend cannot run here (not failures). */
  get startupUnsupported(): StartupResult['unsupported'] {
    return this.#startup.unsupported;
  }

  /** Models that failed to load at startup (not counting {@link InferenceServer.startupUnsupported}). */
  get startupFailures(): StartupResult['failures'] {
    return this.#startup.failures;
  }

  /** `GET v2/health/live`. */
  isLive(): boolean {
    return this.#live;
  }

  /**
   * `GET v2/health/ready`: live, initialized (every repository could be read), and (strict
   * readiness) every model that should be loaded is READY.
   */
  isReady(): boolean {
    if (!this.#live || this.#initFailure !== undefined) return false;
    return !this.#strictReadiness || this.models.allModelsReady();
  }

  /** `GET v2`. */
  serverMetadata(): ServerMetadata {
    return { name: SERVER_NAME, version: SERVER_VERSION, extensions: SERVER_EXTENSIONS };
  }

  /** `GET v2/models/{m}[/versions/{v}]/ready`. */
  isModelReady(name: string, version?: string): boolean {
    return this.models.isReady(name, version);
  }

  /** `GET v2/models/{m}[/versions/{v}]`. */
  modelMetadata(name: string, version?: string): ModelMetadata {
    const serving = this.models.resolve(name, version);
    const config = serving.definition.config;
    const batched = config.max_batch_size > 0;
    const tensor = (t: { name: string; data_type: string; dims: number[] }): TensorMetadata => ({
      name: t.name,
      datatype: datatypeFromModelConfig(t.data_type) ?? t.data_type,
      shape: batched ? [-1, ...t.dims] : [...t.dims],
    });
    return {
      name,
      versions: this.models.readyVersions(name).map(String),
      platform: config.platform !== '' ? config.platform : config.backend,
      inputs: config.input.map(tensor),
      outputs: config.output.map(tensor),
    };
  }

  /**
   * The model configuration extension (HTTP `GET v2/models/{m}[/versions/{v}]/config`, gRPC
   * `ModelConfig`): the typed config in effect; each front end renders it in its wire's form.
   */
  modelConfig(name: string, version?: string): ModelConfig {
    return this.models.resolve(name, version).definition.config;
  }

  /** `POST v2/repository/index`. */
  repositoryIndex(readyOnly = false): Promise<RepositoryIndexEntry[]> {
    return this.models.index(readyOnly);
  }

  /** `POST v2/repository/models/{m}/load`. */
  loadModel(
    name: string,
    options: { config?: string | object; files?: ReadonlyMap<string, Uint8Array> } = {},
  ): Promise<void> {
    return this.models.load(name, options);
  }

  /** `POST v2/repository/models/{m}/unload` (`unloadDependents`: an ensemble's composing models too). */
  unloadModel(name: string, options: { unloadDependents?: boolean } = {}): Promise<void> {
    return this.models.unload(name, options);
  }

  /**
   * The statistics extension (`GET v2/models[/{m}[/versions/{v}]]/stats`, gRPC `ModelStatistics`):
   * every version (no `name`), every READY version of `name` (no `version`), or one version. An
   * unknown model or version gets the same errors as inference. `''` counts as absent (gRPC).
   */
  modelStatistics(name?: string, version?: string): ModelStatisticsReport[] {
    if (name === undefined || name === '') return this.statistics.snapshot().map(toStatisticsReport);
    const versionGiven = version !== undefined && version !== '';
    const serving = this.models.resolve(name, versionGiven ? version : undefined);
    const snaps = versionGiven
      ? this.statistics.snapshot(name, String(serving.version))
      : this.models.readyVersions(name).flatMap((v) => this.statistics.snapshot(name, String(v)));
    return snaps.map(toStatisticsReport);
  }

  /**
   * Trace settings (HTTP `GET/POST v2[/models/{m}]/trace/setting`, gRPC `TraceSetting`): the ones in
   * effect, after applying `update` when given. A model must have a READY version (Triton's check).
   */
  traceSettings(model?: string, update?: TraceSettingsUpdate): TraceSettings {
    if (model !== undefined && !this.models.isReady(model)) {
      throw invalidArg(`Request for unknown model : ${echo(model)}`);
    }
    return update === undefined ? this.trace.settings(model) : this.trace.update(update, model);
  }

  /** Log settings (HTTP `GET/POST v2/logging`, gRPC `LogSettings`), after applying `update` when given. */
  logSettings(update?: LogSettingsUpdate): LogSettings {
    return update === undefined ? this.logger.settings : this.logger.update(update);
  }

  /**
   * Runs one inference request: resolves the model version (unless the front end resolved it),
   * validates the request against the config, schedules it and returns the requested outputs.
   * @param options.model - the model version the front end resolved for this request (with
   *   `models.resolve`, before it read the body, as Triton does): the request runs on it and is not
   *   resolved again. Absent: resolved from `request.modelName` / `modelVersion` (in-process callers).
   * @param options.refuseDecoupled - true on HTTP `/infer`, which cannot stream.
   * @param options.plainParameters - true on HTTP `generate`: the parameters are the model's only.
   * @param options.trace - the request's trace, when the front end sampled it
   *   ({@link TraceManager.sample}): gets REQUEST_START / REQUEST_END here and the queue and compute
   *   timestamps from the scheduler.
   * @param options.onAccepted - called once the request passed validation and its scheduler queued
   *   it (`QUEUE_START`): from then on a failure is the response's error, not a refusal (the gRPC
   *   stream answers the two differently, as tritonserver).
   * Inputs in shared memory are read first, within the request's `inputBudget`, off the event loop
   * (`shared-memory-inputs.ts`); their bytes leave the in-flight budget when the request is answered.
   */
  async infer(
    request: CoreInferRequest,
    options: {
      model?: ServingVersion;
      refuseDecoupled?: boolean;
      plainParameters?: boolean;
      trace?: ActiveTrace;
      onAccepted?: () => void;
    } = {},
  ): Promise<CoreInferResponse> {
    const start = process.hrtime.bigint();
    const serving = options.model ?? this.models.resolve(request.modelName, request.modelVersion);
    // A request sent by a traced request (an ensemble's step) is traced as its child.
    const child = options.trace === undefined ? request.parentTrace?.spawnChild() : undefined;
    const trace = options.trace ?? child;
    trace?.requestStart(serving.name, serving.version, request.id, start);
    let shm: SharedMemoryInputs | undefined;
    // The regions the request uses stay registered until it is answered (Triton's deferred unregister).
    const releaseRegions = this.systemSharedMemory.hold(sharedMemoryRegionsOf(request));
    let releaseConversion: (() => void) | undefined;
    try {
      if (hasSharedMemoryInputs(request))
        shm = await readSharedMemoryInputs(request, this.systemSharedMemory);
      const inferOptions = {
        sharedMemory: this.systemSharedMemory,
        ...(shm !== undefined ? { sharedMemoryInputs: shm.bytes } : {}),
        ...(options.refuseDecoupled !== undefined ? { refuseDecoupled: options.refuseDecoupled } : {}),
        ...(options.plainParameters === true ? { plainParameters: true } : {}),
      };
      let prepared = prepareRequest(serving, request, inferOptions, start);
      // BYTES inputs a backend converts element by element count like input bytes (issue 23).
      releaseConversion = holdConversion(
        serving.definition.backend,
        prepared.schedulerRequest.inputs,
        request.inputBudget,
        shm === undefined ? 0 : [...shm.bytes.values()].reduce((n, b) => n + b.byteLength, 0),
      );
      const onAccepted = options.onAccepted;
      const requestHook = prepared.schedulerRequest.onActivity;
      const inputs = prepared.schedulerRequest.inputs;
      if (trace !== undefined || onAccepted !== undefined) {
        prepared = {
          ...prepared,
          schedulerRequest: {
            ...prepared.schedulerRequest,
            ...(trace !== undefined ? { trace } : {}),
            onActivity: (activity, ns) => {
              // The caller's own hook (an ensemble adds up its steps' compute times) still runs.
              requestHook?.(activity, ns);
              if (activity === 'QUEUE_START') onAccepted?.();
              trace?.capture(activity, ns);
              if (activity === 'QUEUE_START' && trace?.tensors === true) {
                trace.captureTensors('TENSOR_QUEUE_INPUT', inputs.values());
              }
            },
          },
        };
      }
      const response = await runPrepared(serving, request, prepared, inferOptions);
      if (trace?.tensors === true) {
        trace.captureTensors(
          'TENSOR_BACKEND_OUTPUT',
          response.outputs.map((o) => o.tensor),
        );
      }
      return response;
    } finally {
      releaseConversion?.();
      shm?.release();
      releaseRegions();
      trace?.capture('REQUEST_END', process.hrtime.bigint());
      child?.finish();
    }
  }

  /** Stops serving: not live/ready any more, drains every model, forgets the shared-memory regions. */
  async shutdown(): Promise<void> {
    this.#live = false;
    await this.models.stop();
    this.systemSharedMemory.close();
    // Collected traces are written, and the trace file's JSON array closed.
    this.trace.close();
  }
}
