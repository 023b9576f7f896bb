import { status as GrpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';

import { ServerError, type ServerErrorKind } from '../../src/common/errors.js';
import { grpcStatusForKind } from '../../src/grpc/status.js';
import { errorReply } from '../../src/http/reply.js';
import { HTTP_STATUS_FOR_KIND, httpStatusForKind } from '../../src/http/status.js';

const KINDS: readonly ServerErrorKind[] = [
  'INVALID_ARG',
  'NOT_FOUND',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'INTERNAL',
  'ALREADY_EXISTS',
  'CANCELLED',
  'UNKNOWN',
];

describe('each front end owns its status table', () => {
  it('HTTP: Triton’s HttpCodeFromError for every kind, used by the error reply', () => {
    expect(KINDS.map(httpStatusForKind)).toEqual([400, 404, 503, 501, 500, 400, 400, 400]);
    expect(Object.keys(HTTP_STATUS_FOR_KIND).sort()).toEqual([...KINDS].sort());
    for (const kind of KINDS) {
      const reply = errorReply(new ServerError(kind, `a ${kind} error`));
      expect(reply.status).toBe(httpStatusForKind(kind));
      expect(reply.body).toBe(JSON.stringify({ error: `a ${kind} error` }));
    }
  });

  it('gRPC: tritonserver’s CodeToStatus for every kind', () => {
    expect(KINDS.map(grpcStatusForKind)).toEqual([
      GrpcStatus.INVALID_ARGUMENT,
      GrpcStatus.NOT_FOUND,
      GrpcStatus.UNAVAILABLE,
      GrpcStatus.UNIMPLEMENTED,
      GrpcStatus.INTERNAL,
      GrpcStatus.ALREADY_EXISTS,
      GrpcStatus.CANCELLED,
      GrpcStatus.UNKNOWN,
    ]);
  });

  it('the core error carries only its Triton kind', () => {
    const e = new ServerError('UNAVAILABLE', 'x');
    expect(e.kind).toBe('UNAVAILABLE');
    expect(e.code).toBe('UNAVAILABLE');
    expect('httpStatus' in e).toBe(false);
  });
});
