/**
 * Starts a worker thread running one of this package's modules, from `dist/` (compiled `.js`) or,
 * when the package runs from its TypeScript sources (tests under tsx), with tsx registered in the
 * worker first (tsx is a dev dependency, only needed then).
 * @packageDocumentation
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * @param moduleUrl - the module, as `new URL('./name.js', import.meta.url)` of its sibling caller
 *   (the `.js` name; the `.ts` source is used when the caller itself runs from `.ts`).
 * @param callerUrl - the caller's `import.meta.url`.
 */
export function startWorkerModule(moduleUrl: URL, callerUrl: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(moduleUrl, options);
  const target = moduleUrl.href.replace(/\.js$/, '.ts');
  const tsxApi = pathToFileURL(
    createRequire(callerUrl)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const bootstrap = `import { register } from ${JSON.stringify(tsxApi)}; register(); await import(${JSON.stringify(target)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), options);
}
