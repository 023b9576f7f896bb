/**
 * Writes a tuning run's files into an output directory: `report.html` (the HTML report),
 * `results.csv` (one row per measurement) and `best/config.pbtxt` (the winning configuration,
 * only when a configuration satisfied the constraints).
 * @packageDocumentation
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { tuneHtmlReport } from './html-report.js';
import { writeModelConfigPbtxt } from './pbtxt-writer.js';
import { tuneCsv } from './results-csv.js';
import type { TuneResult } from './tuner.js';

/** The files written (`bestConfig` undefined: no winner, or its config could not be written). */
export interface TuneOutputFiles {
  readonly report: string;
  readonly csv: string;
  readonly bestConfig: string | undefined;
  /** Why `best/config.pbtxt` was not written. */
  readonly bestConfigError: string | undefined;
}

/** The winner's `config.pbtxt` text (undefined when there is no winner). @throws PerfError `TUNE` */
export function bestConfigPbtxt(result: TuneResult): string | undefined {
  return result.bestVariant === undefined ? undefined : writeModelConfigPbtxt(result.bestVariant.config);
}

/** Writes the files into `dir` (created when missing; a stale `best/config.pbtxt` is removed). */
export async function writeTuneOutputs(result: TuneResult, dir: string): Promise<TuneOutputFiles> {
  await mkdir(dir, { recursive: true });
  let pbtxt: string | undefined;
  let bestConfigError: string | undefined;
  try {
    pbtxt = bestConfigPbtxt(result);
  } catch (error) {
    bestConfigError = error instanceof Error ? error.message : String(error);
  }
  if (pbtxt === undefined && bestConfigError === undefined && result.best === undefined) {
    bestConfigError = 'no configuration satisfies the constraints';
  }
  const report = join(dir, 'report.html');
  const csv = join(dir, 'results.csv');
  const bestDir = join(dir, 'best');
  const bestConfig = join(bestDir, 'config.pbtxt');
  await writeFile(report, tuneHtmlReport(result, pbtxt));
  await writeFile(csv, tuneCsv(result.modelName, result.measurements));
  if (pbtxt === undefined) {
    await rm(bestConfig, { force: true });
    return { report, csv, bestConfig: undefined, bestConfigError };
  }
  await mkdir(bestDir, { recursive: true });
  await writeFile(bestConfig, pbtxt);
  return { report, csv, bestConfig, bestConfigError: undefined };
}
