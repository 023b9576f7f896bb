/**
 * Model repository scanning and model resolution: a model directory (or a load override) → a
 * complete, validated {@link ModelDefinition}, or the reason the model is UNAVAILABLE.
 *
 * Steps, in Triton's order: pick the config source (load override, `configs/<name>.pbtxt` for
 * `--model-config-name`, `config.pbtxt`, or nothing when auto-complete may fill it); parse; check
 * the name; fill platform/backend/default filename; the backend's auto-complete (asked through
 * `options.backends`, the runtime's registry); normalize; validate; check the backend can run here; select versions by `version_policy`; load labels.
 * @packageDocumentation
 */
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, normalize, resolve } from 'node:path';

import { displayPath, joinInside, resolveInside } from './contained-path.js';
import { ModelConfigError, ModelRepositoryError } from './errors.js';
import type { ModelConfig } from './model-config.js';
import { createModelConfig, parseModelConfigJson, parseModelConfigText } from './model-config-io.js';
import { normalizeInstanceGroups, normalizeModelConfig } from './normalize.js';
import { completeBackendFields } from './platform.js';
import type {
  ModelDefinition,
  ModelResolution,
  ModelVersion,
  RepositoryEntry,
  ResolveModelOptions,
} from './types.js';
import { validateModelConfig } from './validate.js';
import { isEnsembleConfig } from './validate-ensemble.js';
import { listVersionDirectories, selectVersions } from './versions.js';

/**
 * Lists the model directories of one or more repositories (hidden entries skipped), sorted by
 * name within each repository. A model present in two repositories appears twice; a repository
 * given twice (same real path) is read once.
 * @throws ModelRepositoryError `REPOSITORY_NOT_FOUND`
 */
export async function listRepositoryModels(repositories: readonly string[]): Promise<RepositoryEntry[]> {
  const out: RepositoryEntry[] = [];
  const seen = new Set<string>();
  for (const repo of repositories) {
    const root = resolve(repo);
    // As Triton: the same repository given twice (or through a link) is one repository.
    const real = await realpath(root).catch(() => root);
    if (seen.has(real)) continue;
    seen.add(real);
    let entries;
    try {
      entries = await readdir(root, { withFileTypes: true });
    } catch (err) {
      throw new ModelRepositoryError('REPOSITORY_NOT_FOUND', `failed to read model repository '${repo}'`, {
        cause: err,
      });
    }
    const names: string[] = [];
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) names.push(e.name);
      else if (e.isSymbolicLink() && (await isDirectory(join(root, e.name)))) names.push(e.name);
    }
    for (const name of names.sort()) out.push({ name, directory: join(root, name), repository: root });
  }
  return out;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves one model. Never throws for problems of the model itself: those come back as
 * `{ ok: false, reason, error }` for the core to report the model UNAVAILABLE.
 */
export async function resolveModel(
  entry: RepositoryEntry,
  options: ResolveModelOptions,
): Promise<ModelResolution> {
  let tempDirectory: string | undefined;
  try {
    let directory = entry.directory;
    // Paths in messages are relative to the repository (or, for an override, to the model), never
    // absolute host paths.
    let show = (path: string): string => displayPath(entry.repository, path);
    if (options.files !== undefined && fileEntries(options.files).length > 0) {
      if (options.configOverride === undefined) {
        throw new ModelRepositoryError(
          'INVALID_LOAD_OVERRIDE',
          "Load parameter 'config' must be specified for model file override",
        );
      }
      // As Triton: a fresh private directory is the model directory; nothing is written elsewhere.
      const temp = await mkdtemp(join(tmpdir(), 'tritonserver-ts-model-'));
      tempDirectory = temp;
      directory = temp;
      show = (path: string): string => `${entry.name}/${displayPath(temp, path)}`;
      await writeOverrideFiles(directory, options.files);
    }
    const model = await resolveDirectory(entry.name, directory, options, tempDirectory, show);
    return { ok: true, model };
  } catch (err) {
    if (tempDirectory !== undefined) await rm(tempDirectory, { recursive: true, force: true });
    const error = err instanceof Error ? err : new Error(String(err));
    return { ok: false, name: entry.name, reason: error.message, error };
  }
}

function fileEntries(files: NonNullable<ResolveModelOptions['files']>): [string, Uint8Array][] {
  if (files instanceof Map) return [...(files as ReadonlyMap<string, Uint8Array>).entries()];
  return Object.entries(files as Readonly<Record<string, Uint8Array>>);
}

/**
 * Writes `file:<version>/<name>` contents under `directory` (the prefix is optional), which must be
 * a fresh private directory. Paths must be relative and stay inside it; files are created
 * exclusively (never through an existing file or link).
 * @throws ModelRepositoryError `INVALID_LOAD_OVERRIDE` with Triton's messages
 */
export async function writeOverrideFiles(
  directory: string,
  files: NonNullable<ResolveModelOptions['files']>,
): Promise<void> {
  await mkdir(directory, { recursive: true });
  for (const [key, content] of fileEntries(files)) {
    const rel = key.startsWith('file:') ? key.slice('file:'.length) : key;
    let target: string;
    try {
      target = joinInside(directory, rel, 'file parameter', 'the model directory');
    } catch {
      const shown = rel.includes('\0') ? rel : normalize(rel);
      throw new ModelRepositoryError(
        'INVALID_LOAD_OVERRIDE',
        `Invalid file parameter '${key}' with normalized path '${shown}' must stay within model directory.`,
      );
    }
    try {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content, { flag: 'wx' });
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code;
      const message =
        code === 'ENOTDIR' || code === 'EEXIST'
          ? `Invalid file parameter '${key}', directory has been created as a file`
          : code === 'EISDIR'
            ? `Invalid file parameter '${key}', a directory of that name has been created`
            : `Invalid file parameter '${key}', unable to write the file`;
      throw new ModelRepositoryError('INVALID_LOAD_OVERRIDE', message, { cause });
    }
  }
}

async function readConfig(
  name: string,
  directory: string,
  options: ResolveModelOptions,
  show: (path: string) => string,
): Promise<{ config: ModelConfig; configFile: string | undefined }> {
  if (options.configOverride !== undefined) {
    return { config: parseModelConfigJson(options.configOverride), configFile: undefined };
  }
  const candidates: string[] = [];
  if (options.modelConfigName !== undefined && options.modelConfigName !== '') {
    candidates.push(join(directory, 'configs', `${options.modelConfigName}.pbtxt`));
  }
  candidates.push(join(directory, 'config.pbtxt'));
  for (const file of candidates) {
    if (await isFile(file)) {
      const text = await readFile(file, 'utf8');
      try {
        return { config: parseModelConfigText(text, { file: show(file) }), configFile: file };
      } catch (err) {
        if (err instanceof ModelConfigError) {
          throw new ModelConfigError(err.code, `failed to parse model config: ${err.message}`, {
            ...(err.location === undefined ? {} : { location: err.location }),
            ...(err.fieldPath === undefined ? {} : { fieldPath: err.fieldPath }),
            cause: err,
          });
        }
        throw err;
      }
    }
  }
  if (options.autoCompleteConfig === false) {
    throw new ModelConfigError(
      'MODEL_CONFIG_INVALID',
      `failed to load model config for '${name}': ${show(join(directory, 'config.pbtxt'))} not found and auto-complete is disabled`,
    );
  }
  return { config: createModelConfig(), configFile: undefined };
}

async function resolveDirectory(
  name: string,
  directory: string,
  options: ResolveModelOptions,
  tempDirectory: string | undefined,
  show: (path: string) => string,
): Promise<ModelDefinition> {
  if (!(await isDirectory(directory))) {
    throw new ModelRepositoryError('MODEL_NOT_FOUND', `model directory '${show(directory)}' does not exist`);
  }
  const { config, configFile } = await readConfig(name, directory, options, show);

  if (config.name === '') config.name = name;
  else if (config.name !== name) {
    throw new ModelConfigError(
      'MODEL_CONFIG_INVALID',
      `unexpected directory name '${name}' for model '${config.name}', directory name must equal model name`,
      { fieldPath: 'name' },
    );
  }

  const available = await listVersionDirectories(directory);
  const firstVersionDir = available.map(String).sort()[0];
  const versionFiles = new Set<string>(
    firstVersionDir === undefined ? [] : await readdir(join(directory, firstVersionDir)).catch(() => []),
  );
  completeBackendFields(config, versionFiles);

  // Version selection needs the policy; normalization gives the default one.
  normalizeModelConfig(config);
  const selected = selectVersions(config.version_policy, available);
  if (selected.length === 0) {
    throw new ModelRepositoryError(
      'MODEL_LOAD_FAILED',
      `at least one version must be available under the version policy of model '${name}'`,
    );
  }

  const backend = options.backends.find(config);
  if (backend?.autoCompleteConfig !== undefined && options.autoCompleteConfig !== false) {
    const latest = selected[selected.length - 1] as number;
    const modelPath = await modelFileOf(directory, latest, config.default_model_filename);
    const completed = await backend.autoCompleteConfig(config, {
      modelPath,
      displayPath: show(modelPath),
      defaultMaxBatchSize: options.defaultMaxBatchSize ?? 4,
    });
    if (completed !== undefined) {
      if (completed !== config) {
        completed.name = config.name;
        Object.assign(config, completed);
      }
      normalizeModelConfig(config);
    }
  }
  normalizeInstanceGroups(config);
  validateModelConfig(config, options.gpuFallback === undefined ? {} : { gpuFallback: options.gpuFallback });

  // An ensemble has no backend: the core schedules its steps on the composing models.
  if (!isEnsembleConfig(config)) {
    const support = options.backends.support(config);
    if (!support.supported) throw new ModelRepositoryError('MODEL_LOAD_FAILED', support.reason);
  }

  const versions: ModelVersion[] = [];
  for (const v of selected) {
    const versionDir = join(directory, String(v));
    const modelPath = await modelFileOf(directory, v, config.default_model_filename);
    if (backend?.requiresModelFile === true && !(await exists(modelPath))) {
      throw new ModelRepositoryError(
        'MODEL_LOAD_FAILED',
        `unable to find '${show(modelPath)}' for model '${name}'`,
      );
    }
    versions.push({ version: v, directory: versionDir, modelPath, displayPath: show(modelPath) });
  }

  const labels = new Map<string, readonly string[]>();
  for (const output of config.output) {
    if (output.label_filename === '') continue;
    const file = await resolveInside(
      directory,
      output.label_filename,
      'label_filename',
      'the model directory',
    );
    labels.set(output.name, await readLabels(file, name, output.name, output.label_filename));
  }

  return {
    name,
    directory,
    config,
    backend: config.backend,
    versions,
    labels,
    configFile,
    cleanup: async () => {
      if (tempDirectory !== undefined) await rm(tempDirectory, { recursive: true, force: true });
    },
  };
}

/**
 * The model file of version `version`: `<model>/<version>/<default_model_filename>`, which must stay
 * inside the version directory (a config may come from the network). With no file name (backends
 * that need no file) it is the version directory itself.
 */
async function modelFileOf(directory: string, version: number, filename: string): Promise<string> {
  const versionDir = join(directory, String(version));
  if (filename === '') return versionDir;
  return resolveInside(versionDir, filename, 'default_model_filename', `version directory '${version}'`);
}

/**
 * Reads a label file: line N is the label of class N (a trailing newline adds no label).
 * @param shownPath - how messages name the file (default: its base name; never an absolute path).
 */
export async function readLabels(
  path: string,
  modelName = '',
  outputName = '',
  shownPath = basename(path),
): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ModelRepositoryError(
      'MODEL_LOAD_FAILED',
      `unable to read label file '${shownPath}' of output '${outputName}' for model '${modelName}'`,
      { cause: err },
    );
  }
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}
