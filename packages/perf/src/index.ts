/**
 * `@tritonserver-ts/perf`: perf_analyzer and a model-analyzer-style tuner for Triton and the
 * embedded server, as a library; the bins are `perf-analyzer-ts` and `model-analyzer-ts`.
 * @packageDocumentation
 */
export * from './options/perf-options.js';
export type * from './types.js';
export type { LoadContext, LoadManager } from './load/load-manager.js';
export { createLoadManager } from './load/create-load-manager.js';
export { createPerfClient, PERF_CLIENT_TIMEOUT_MS } from './load/perf-client.js';
export { PerfError, isPerfError, type PerfErrorCode } from './errors.js';
export { parsePerfArgs, perfUsage, type PerfHelpRequest } from './options/parse-perf-args.js';
export { fetchModelProfile } from './model/model-profile.js';
export { buildInputDataset, MAX_DATASET_BYTES, MAX_REQUEST_BYTES } from './data/input-data.js';
export { formatConsoleReport, formatLevel, formatSettings, formatSummary } from './report/console-report.js';
export {
  composingCsvReports,
  csvColumns,
  formatCsvReport,
  type ComposingCsv,
  type CsvReport,
} from './report/csv-report.js';
export {
  buildProfileExport,
  epochOffsetNs,
  formatProfileExport,
  type ProfileExport,
} from './report/profile-export.js';
export { createProgressLine, type ProgressLine, type ProgressSink } from './report/progress.js';
export { perfCli, type CliIo } from './cli/perf-command.js';
export { runPerf } from './perf.js';
export { summarizeClient, percentileIndex, REPORTED_PERCENTILES } from './measure/client-stats.js';
export { toServerSideStats, serverStatsDelta, mergeRawServerStats } from './measure/server-stats.js';
export { isStable, STABILITY_WINDOW } from './measure/stability.js';
export { parseGpuMetrics, summarizeMetrics } from './measure/metrics.js';
export {
  tune,
  type ConfigOutcome,
  type TuneHooks,
  type TuneProgress,
  type TuneResult,
} from './tune/tuner.js';
export * from './tune/tune-options.js';
export * from './tune/search-space.js';
export * from './tune/select.js';
export { applyConfig, restoreConfig, waitUntilReady, type ConfigClient } from './tune/apply-config.js';
export { quoteText, writeModelConfigPbtxt, writeTextFormat } from './tune/pbtxt-writer.js';
export { csvField, TUNE_CSV_COLUMNS, tuneCsv, tuneCsvRow } from './tune/results-csv.js';
export { constraintsText, formatTuneTable, summarySentence } from './tune/results-table.js';
export {
  bestThroughputChart,
  escapeHtml,
  latencyThroughputChart,
  niceTicks,
  tuneHtmlReport,
} from './tune/html-report.js';
export { bestConfigPbtxt, writeTuneOutputs, type TuneOutputFiles } from './tune/write-outputs.js';
export {
  DEFAULT_OUTPUT_DIR,
  parseTuneArgs,
  tuneUsage,
  type TuneCliOptions,
  type TuneHelpRequest,
} from './tune/parse-tune-args.js';
export { tuneCli } from './tune/tune-command.js';
