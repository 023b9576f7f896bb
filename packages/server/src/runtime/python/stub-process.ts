/**
 * One Python stub process: `python3 tritonserver_ts_stub.py <model.py>` with fd 3 (server → stub)
 * and fd 4 (stub → server) carrying frames (`frames.ts`); the model's own stdout and stderr go to
 * the server log line by line. The stub exits by itself when fd 3 closes, so it never outlives the
 * server.
 * @packageDocumentation
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';

import { FrameReader, encodeFrame, type Frame } from './frames.js';
import type { PythonLogSink } from './settings.js';

/** The stub script, shipped in the package's `python/` directory (also from `dist/`). */
export const STUB_SCRIPT = fileURLToPath(new URL('../../../python/tritonserver_ts_stub.py', import.meta.url));

/** How a stub process ended. */
export interface StubExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** `exit code 1` / `signal SIGKILL`. */
export function describeExit(exit: StubExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`;
}

/** Options of {@link StubProcess.start}. */
export interface StubProcessOptions {
  readonly interpreter: string;
  readonly modelPath: string;
  /** Names the stub in log lines (the instance name). */
  readonly label: string;
  readonly log?: PythonLogSink;
  /** Working directory (the model's version directory). */
  readonly cwd: string;
}

/** See the module documentation. */
export class StubProcess {
  readonly #child: ChildProcess;
  readonly #toStub: Writable;
  readonly #reader = new FrameReader();
  readonly #waiters: { types: readonly string[]; resolve: (f: Frame) => void }[] = [];
  #exit: StubExit | undefined;
  /** Frames nobody waits for (responses, BLS calls, logs). */
  onFrame: (frame: Frame) => void = () => undefined;
  /** Called once when the process has exited. */
  onExit: (exit: StubExit) => void = () => undefined;
  /** Settles when the process has exited. */
  readonly exited: Promise<StubExit>;

  private constructor(options: StubProcessOptions) {
    const child = spawn(options.interpreter, ['-u', STUB_SCRIPT, options.modelPath], {
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
    });
    this.#child = child;
    this.#toStub = child.stdio[3] as Writable;
    const fromStub = child.stdio[4] as Readable;
    // A write to a stub that died is reported through the exit, not as an unhandled error.
    this.#toStub.on('error', () => undefined);
    fromStub.on('error', () => undefined);
    fromStub.on('data', (chunk: Buffer) => {
      let frames: Frame[];
      try {
        frames = this.#reader.push(chunk);
      } catch (error) {
        options.log?.error(`python stub '${options.label}' sent a malformed frame: ${String(error)}`);
        this.kill();
        return;
      }
      for (const frame of frames) this.#dispatch(frame);
    });
    const forward = (stream: Readable | null, write: (line: string) => void): void => {
      if (stream === null) return;
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        const lines = (rest + text).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) write(line);
      });
      stream.on('end', () => {
        if (rest !== '') write(rest);
      });
    };
    const log = options.log;
    forward(child.stdout, (line) => log?.info(line));
    forward(child.stderr, (line) => log?.error(line));
    this.exited = new Promise((resolve) => {
      // A failed spawn (interpreter not found) emits 'error' and no 'exit'.
      child.once('error', () => {
        if (child.pid === undefined) finish({ code: null, signal: null });
      });
      const finish = (exit: StubExit): void => {
        if (this.#exit !== undefined) return;
        this.#exit = exit;
        this.#toStub.destroy();
        resolve(this.#exit);
        this.onExit(this.#exit);
      };
      // The last frames (`finalized` right before the stub exits) may still be in the pipe when
      // 'exit' comes: they are read first, so a waiter sees its frame, not the exit.
      child.once('exit', (code, signal) => {
        if (fromStub.readableEnded || fromStub.destroyed) {
          finish({ code, signal });
          return;
        }
        const timer = setTimeout(() => finish({ code, signal }), 1000);
        fromStub.once('close', () => {
          clearTimeout(timer);
          finish({ code, signal });
        });
      });
    });
  }

  /** Starts a stub (the model is loaded by the first `initialize` / `auto_complete` message). */
  static start(options: StubProcessOptions): StubProcess {
    return new StubProcess(options);
  }

  /** The process id (undefined when it could not be started). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Whether the process has exited. */
  get alive(): boolean {
    return this.#exit === undefined;
  }

  /** Sends one frame (ignored once the process has exited). */
  send(header: object, chunks: readonly Uint8Array[] = []): void {
    if (this.#exit !== undefined) return;
    for (const buffer of encodeFrame(header, chunks)) this.#toStub.write(buffer);
  }

  /**
   * Waits for the next frame of one of `types`; rejects with a message naming the exit when the
   * process ends first, or after `timeoutMs`.
   */
  waitFor(types: readonly string[], timeoutMs: number, what: string): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const waiter = {
        types,
        resolve: (frame: Frame): void => {
          clearTimeout(timer);
          resolve(frame);
        },
      };
      const timer = setTimeout(() => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        reject(new Error(`${what} did not finish within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.#waiters.push(waiter);
      void this.exited.then((exit) => {
        const at = this.#waiters.indexOf(waiter);
        if (at < 0) return;
        this.#waiters.splice(at, 1);
        clearTimeout(timer);
        reject(new Error(`the python stub exited (${describeExit(exit)}) during ${what}`));
      });
    });
  }

  /** Kills the process (SIGKILL). */
  kill(): void {
    if (this.#exit === undefined) this.#child.kill('SIGKILL');
  }

  /** Closes the stub's input (it then exits) and kills it if it has not exited after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    if (this.#exit !== undefined) return;
    this.#toStub.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  #dispatch(frame: Frame): void {
    const at = this.#waiters.findIndex((w) => w.types.includes(frame.header.type));
    if (at >= 0) {
      const [waiter] = this.#waiters.splice(at, 1);
      waiter?.resolve(frame);
      return;
    }
    this.onFrame(frame);
  }
}
