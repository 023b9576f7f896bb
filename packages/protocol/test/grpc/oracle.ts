/**
 * Runs Google's protobuf (Debian `python3-protobuf`, through /usr/bin/python3) on our .proto files
 * as an independent implementation: protoc generates the Python modules into a temporary directory
 * and `protobuf_oracle.py` encodes / compares messages. Needs `protoc` and Python's protobuf (Debian
 * `protobuf-compiler`, `python3-protobuf`), installed with apt when missing, as the server's Python
 * gRPC test installs its packages.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROTO_DIR, PROTO_FILES } from '../../src/grpc/index.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./protobuf_oracle.py', import.meta.url));

function hasTools(): boolean {
  return (
    spawnSync('protoc', ['--version'], { stdio: 'ignore' }).status === 0 &&
    spawnSync(PYTHON, ['-c', 'import google.protobuf'], { stdio: 'ignore' }).status === 0
  );
}

/** `protoc` and /usr/bin/python3's protobuf, from Debian (installed once when missing). */
export function ensureProtobufTools(): void {
  if (hasTools()) return;
  const apt = (args: string[]): boolean =>
    spawnSync('apt-get', args, { stdio: 'inherit', timeout: 600_000 }).status === 0;
  const args = ['install', '-y', '--no-install-recommends', 'protobuf-compiler', 'python3-protobuf'];
  if (process.getuid?.() === 0 && (apt(args) || (apt(['update']) && apt(args))) && hasTools()) return;
  throw new Error(
    'The gRPC protocol tests need protoc and protobuf for /usr/bin/python3: sudo apt-get install -y protobuf-compiler python3-protobuf',
  );
}

/** One message for the oracle: its full type name, its proto3 JSON, and our encoding. */
export interface OracleCase {
  readonly type: string;
  readonly json: unknown;
  readonly tsBytes: Uint8Array;
}

/** The oracle's answer for one case. */
export interface OracleAnswer {
  /** Google's encoding of the JSON message (map entries in key order). */
  readonly expected: Buffer;
  /** Our bytes parse to a message equal to the JSON one. */
  readonly equal: boolean;
  /** Our bytes as Google re-encodes them (map entries in key order). */
  readonly tsReencoded: Buffer;
  /** Our bytes as Google reads them, in proto3 JSON with proto field names. */
  readonly tsAsJson: unknown;
}

/** A method of a service as Google's descriptor describes it. */
export interface OracleMethod {
  readonly path: string;
  readonly input: string;
  readonly output: string;
  readonly client_streaming: boolean;
  readonly server_streaming: boolean;
}

/** Compiles the .proto files for Python; call `close()` when done. */
export function startOracle(): {
  run(cases: readonly OracleCase[]): OracleAnswer[];
  services(): OracleMethod[];
  close(): void;
} {
  ensureProtobufTools();
  const dir = mkdtempSync(join(tmpdir(), 'grpc-oracle-'));
  execFileSync('protoc', [
    `-I${PROTO_DIR}`,
    `--python_out=${dir}`,
    ...PROTO_FILES.map((f) => join(PROTO_DIR, f)),
  ]);
  const python = (args: string[], input: string): string =>
    execFileSync(PYTHON, [SCRIPT, dir, ...args], { input, maxBuffer: 64 * 1024 * 1024 }).toString('utf8');
  return {
    run(cases) {
      const input = JSON.stringify(
        cases.map((c) => ({ type: c.type, json: c.json, ts_hex: Buffer.from(c.tsBytes).toString('hex') })),
      );
      const out = JSON.parse(python([], input)) as {
        expected_hex: string;
        equal: boolean;
        ts_reencoded_hex: string;
        ts_as_json: unknown;
      }[];
      return out.map((o) => ({
        expected: Buffer.from(o.expected_hex, 'hex'),
        equal: o.equal,
        tsReencoded: Buffer.from(o.ts_reencoded_hex, 'hex'),
        tsAsJson: o.ts_as_json,
      }));
    },
    services() {
      return JSON.parse(python(['services'], '')) as OracleMethod[];
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
