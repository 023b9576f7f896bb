/**
 * The committed generated messages (src/grpc/gen) must be what `npm run generate:proto`
 * makes from proto/ today: a .proto edit without regenerating fails here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ensureProtobufTools } from './oracle.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const committed = join(root, 'src/grpc/gen');

it('src/grpc/gen is up to date with proto/', () => {
  ensureProtobufTools();
  const dir = mkdtempSync(join(tmpdir(), 'grpc-gen-'));
  try {
    execFileSync(process.execPath, [join(root, 'scripts/generate-proto.mjs'), dir], { stdio: 'pipe' });
    const fresh = readdirSync(dir).sort();
    expect(fresh).toEqual(['grpc_service_pb.ts', 'health_pb.ts', 'model_config_pb.ts']);
    expect(readdirSync(committed).sort()).toEqual(fresh);
    for (const name of fresh) {
      expect(readFileSync(join(committed, name), 'utf8'), name).toBe(readFileSync(join(dir, name), 'utf8'));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
