/**
 * Writes the conformance model repository to a directory, for running the suite against a real
 * Triton: `npm run write-repository -w @tritonserver-ts/conformance -- /tmp/models`, then
 * `tritonserver --model-repository=/tmp/models --model-control-mode=explicit --load-model=* --allow-client-shm=true`
 * and `TRITON_URL=localhost:8000 npm test -w @tritonserver-ts/conformance`.
 */
import { writeConformanceRepository } from './repository.js';

const dir = process.argv[2];
if (dir === undefined) {
  console.error('usage: write-repository <dir>');
  process.exit(2);
}
const models = await writeConformanceRepository(dir);
console.log(`wrote ${models.length} models to ${dir}`);
