/**
 * The repository watcher of poll mode (`--model-control-mode=poll`): a file-tree signature per model
 * directory, one poll pass (load new models, reload changed ones, unload removed ones) and the timer
 * that repeats it every `--repository-poll-secs`.
 * @packageDocumentation
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { RepositoryEntry } from '../repository/types.js';
import type { Logger } from './logging.js';
import { groupEntries, type ModelRegistry } from './model-registry.js';

/**
 * A signature of a model directory's files (names, sizes, modification times; three levels deep):
 * a model whose signature changed is reloaded by the next poll. `missing` when it cannot be read.
 */
export async function treeSignature(dir: string, depth = 0): Promise<string> {
  const parts: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 'missing';
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory() && depth < 3) {
      parts.push(`${e.name}/{${await treeSignature(p, depth + 1)}}`);
    } else {
      try {
        const s = await stat(p);
        parts.push(`${e.name}:${s.size}:${s.mtimeMs}`);
      } catch {
        parts.push(`${e.name}:?`);
      }
    }
  }
  return parts.join(',');
}

/** What one poll pass reads and drives. */
export interface PollTarget {
  /** Lists the model directories of the repositories. */
  listModels(): Promise<RepositoryEntry[]>;
  readonly registry: ModelRegistry;
  /** (Re)loads a model from its repository entries. */
  load(name: string, group: readonly RepositoryEntry[]): Promise<void>;
  /** Unloads a model whose directory is gone. */
  unload(name: string): Promise<void>;
  readonly logger: Logger;
}

/**
 * One poll pass: loads every new model and every model whose files changed (or that was unloaded),
 * logging each outcome, then unloads the models whose directory is gone.
 */
export async function pollRepository(target: PollTarget): Promise<void> {
  const byName = groupEntries(await target.listModels());
  for (const [name, group] of byName) {
    const record = target.registry.get(name);
    const sig = group.length === 1 ? await treeSignature((group[0] as RepositoryEntry).directory) : 'dup';
    if (record !== undefined && record.signature === sig && record.wanted) continue;
    try {
      await target.load(name, group);
      target.logger.info(`successfully loaded '${name}'`);
    } catch (error) {
      target.logger.error(error instanceof Error ? error.message : String(error));
    }
  }
  for (const [name, record] of target.registry.entries()) {
    if (!byName.has(name) && record.wanted) await target.unload(name);
  }
}

/** Runs a poll pass every `intervalMs` (each one after the previous has settled) until stopped. */
export class RepositoryWatcher {
  readonly #intervalMs: number;
  readonly #poll: () => Promise<void>;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  /**
   * @param poll - one pass (the manager serializes it with loads and unloads).
   */
  constructor(intervalMs: number, poll: () => Promise<void>, logger: Logger) {
    this.#intervalMs = intervalMs;
    this.#poll = poll;
    this.#logger = logger;
  }

  /** Schedules the next pass (the timer does not keep the process alive). */
  start(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#poll()
        .catch((error: unknown) => this.#logger.error(`failed to poll model repository: ${String(error)}`))
        .finally(() => this.start());
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops polling; a pass in progress finishes but schedules no other. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }
}
