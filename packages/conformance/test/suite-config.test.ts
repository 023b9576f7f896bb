// Checks of the suite itself: the reviewed list of transport differences stays honest (every entry
// is used by a case and documented), and the external-target rules the README gives hold.
import { readdirSync, readFileSync } from 'node:fs';
import { SERVER_VERSION, TRITON_NGC_RELEASE } from '@tritonserver-ts/server';
import { describe, expect, it } from 'vitest';
import { externalTarget } from './external-target.js';
import { TRANSPORT_DIFFERENCES, TRITON_STATUS } from './transport-differences.js';

const testDir = new URL('./', import.meta.url);
const caseSources = readdirSync(testDir)
  .filter((f) => f.endsWith('.test.ts') && f !== 'suite-config.test.ts')
  .map((f) => readFileSync(new URL(f, testDir), 'utf8'))
  .join('\n');
const errorKindArgument = new RegExp(`transport,\\s*'(${Object.keys(TRITON_STATUS).join('|')})',?\\s*\\)`);
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('the list of transport differences', () => {
  it.each(Object.keys(TRANSPORT_DIFFERENCES))('%s is used by a case and listed in the README', (name) => {
    const used =
      caseSources.includes(`differsOver(transport, '${name}')`) ||
      // error-status is checked inside expectServerError, which the cases call with an error kind.
      (name === 'error-status' && errorKindArgument.test(caseSources));
    expect(used, `no case names '${name}'`).toBe(true);
    expect(readme).toContain(`\`${name}\``);
  });
});

describe('TRITON_URL / TRITON_GRPC_URL / TRITON_TRACE_FILE', () => {
  it('starts the embedded server when neither is set (or both are empty)', () => {
    expect(externalTarget({})).toBeUndefined();
    expect(externalTarget({ TRITON_URL: '', TRITON_GRPC_URL: '' })).toBeUndefined();
  });

  it("takes both as given, or derives the missing one from the other's host and Triton's default port", () => {
    expect(externalTarget({ TRITON_URL: 'a:8000', TRITON_GRPC_URL: 'b:9001' })).toEqual({
      httpUrl: 'a:8000',
      grpcUrl: 'b:9001',
      traceFile: '',
    });
    expect(externalTarget({ TRITON_URL: 'http://triton.local:18000/' })).toEqual({
      httpUrl: 'http://triton.local:18000/',
      grpcUrl: 'triton.local:8001',
      traceFile: '',
    });
    expect(externalTarget({ TRITON_GRPC_URL: 'grpc://[::1]:18001' })).toEqual({
      httpUrl: '[::1]:8000',
      grpcUrl: 'grpc://[::1]:18001',
      traceFile: '',
    });
    expect(externalTarget({ TRITON_URL: 'localhost' })).toEqual({
      httpUrl: 'localhost',
      grpcUrl: 'localhost:8001',
      traceFile: '',
    });
  });

  it('reads the trace file of a running server where TRITON_TRACE_FILE says', () => {
    expect(externalTarget({ TRITON_URL: 'a:8000', TRITON_TRACE_FILE: '/tmp/t/trace.json' })).toMatchObject({
      traceFile: '/tmp/t/trace.json',
    });
  });
});

describe('the Triton release the suite targets', () => {
  const dockerfile = readFileSync(new URL('../../../docker/Dockerfile.triton', import.meta.url), 'utf8');

  it("is the embedded server's, the Dockerfile's default, and the one the README runs", () => {
    expect([SERVER_VERSION, TRITON_NGC_RELEASE]).toEqual(['2.73.0', '26.09']);
    expect(dockerfile).toContain(`ARG TRITON_RELEASE=${TRITON_NGC_RELEASE}-py3`);
    const images = [...readme.matchAll(/nvcr\.io\/nvidia\/tritonserver:(\S+?)[`\s)]/g)].map((m) => m[1]);
    expect(images.length).toBeGreaterThan(0);
    expect(new Set(images)).toEqual(new Set([`${TRITON_NGC_RELEASE}-py3`]));
    expect(readme).toContain(`"version":"${SERVER_VERSION}"`);
    expect(caseSources).toContain(`expect(meta.version).toBe('${SERVER_VERSION}')`);
  });
});
