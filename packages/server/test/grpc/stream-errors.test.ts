/**
 * Failed requests on `ModelStreamInfer`, over a real stream: the answer is filled as tritonserver
 * fills it (`stream_infer_handler.cc`). A request refused while read carries only its `id`; one that
 * failed after it was queued (here: its queue timeout expired behind a slow execution) also carries
 * the request's `model_name`, `model_version` (as sent) and `triton_final_response: true`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServer, type RunningServer } from '../../src/index.js';
import { SLOW_IDENTITY_DELAY_MS } from '../../src/testing/index.js';
import { makeRepository } from '../helpers/server.js';
import { GrpcTestClient, SIMPLE_A, SIMPLE_B, simpleRequest } from './helpers.js';

let running: RunningServer;
let client: GrpcTestClient;

beforeAll(async () => {
  const repository = await makeRepository(['simple', 'slow_identity']);
  // One slow instance whose queue lets a request shorten its timeout (Triton's queue policy).
  const configPath = join(repository, 'slow_identity', 'config.pbtxt');
  const config = await readFile(configPath, 'utf8');
  await writeFile(
    configPath,
    `${config}\ndynamic_batching { default_queue_policy { allow_timeout_override: true } }\n`,
  );
  running = await startServer({
    modelRepositories: [repository],
    httpPort: 0,
    grpcPort: 0,
    logSink: () => undefined,
  });
  client = new GrpcTestClient(running.grpcUrl);
});

afterAll(async () => {
  client.close();
  await running.close();
});

function slowRequest(id: string, extra: object = {}): object {
  return {
    modelName: 'slow_identity',
    modelVersion: '1',
    id,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 2n] }],
    rawInputContents: [new Uint8Array(new Float32Array([1, 2]).buffer)],
    ...extra,
  };
}

describe('ModelStreamInfer failure answers', () => {
  it('refused while read: error_message and only the id; failed once queued: id, model name and version, final flag', async () => {
    const { stream, answers, done } = client.collectingStream();
    // Refused while read: an input of the wrong shape for `simple` (the core's checks).
    stream.write(
      simpleRequest(SIMPLE_A, SIMPLE_B, {
        id: 'bad-shape',
        modelVersion: '1',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1n, 15n] },
          { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
        ],
      } as object),
    );
    // Occupies the one instance, then a request that waits behind it longer than its 1 ms timeout.
    stream.write(slowRequest('busy'));
    await new Promise((resolve) => setTimeout(resolve, SLOW_IDENTITY_DELAY_MS / 5));
    stream.write(
      slowRequest('late', {
        parameters: { timeout: { parameterChoice: { case: 'int64Param', value: 1000n } } },
      }),
    );
    stream.end();
    await done;

    expect(answers.map((a) => [a.inferResponse?.id, a.errorMessage === ''])).toEqual([
      ['bad-shape', false],
      ['busy', true],
      ['late', false],
    ]);
    const [refused, , late] = answers;
    expect(refused?.errorMessage).toBe(
      "[request id: bad-shape] unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,15]",
    );
    expect(refused?.inferResponse).toMatchObject({
      id: 'bad-shape',
      modelName: '',
      modelVersion: '',
      parameters: {},
      outputs: [],
      rawOutputContents: [],
    });
    expect(late?.errorMessage).toBe('Request timeout expired');
    expect(late?.inferResponse).toMatchObject({
      id: 'late',
      modelName: 'slow_identity',
      modelVersion: '1',
      outputs: [],
      rawOutputContents: [],
    });
    expect(Object.keys(late?.inferResponse?.parameters ?? {})).toEqual(['triton_final_response']);
    expect(late?.inferResponse?.parameters.triton_final_response?.parameterChoice).toEqual({
      case: 'boolParam',
      value: true,
    });
  });

  it('a queued failure without a version keeps the version empty, as sent', async () => {
    const { stream, answers, done } = client.collectingStream();
    stream.write(slowRequest('busy', { modelVersion: '' }));
    await new Promise((resolve) => setTimeout(resolve, SLOW_IDENTITY_DELAY_MS / 5));
    stream.write(
      slowRequest('late', {
        modelVersion: '',
        parameters: { timeout: { parameterChoice: { case: 'int64Param', value: 1000n } } },
      }),
    );
    stream.end();
    await done;
    expect(answers[1]?.errorMessage).toBe('Request timeout expired');
    expect(answers[1]?.inferResponse).toMatchObject({
      id: 'late',
      modelName: 'slow_identity',
      modelVersion: '',
    });
  });
});
