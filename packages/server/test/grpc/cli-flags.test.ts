/**
 * tritonserver's gRPC flags: defaults, what is applied, what is refused (with tritonserver's
 * messages where it has them) and what is accepted with a warning.
 */
import { describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { channelOptions } from '../../src/grpc/server.js';

const base = ['--model-repository=/m'];

describe('gRPC flags', () => {
  it('defaults: gRPC on 0.0.0.0:8001, tritonserver’s keepalive and message limit', () => {
    const o = parseArgs(base);
    expect(o.server.grpcPort).toBe(8001);
    expect(o.server.grpcAddress).toBe('0.0.0.0');
    expect(o.server.grpc?.tls).toBeUndefined();
    expect(channelOptions({ port: 8001, host: '0.0.0.0', ...o.server.grpc })).toEqual({
      'grpc.max_concurrent_streams': 1024,
      'grpc.max_receive_message_length': 2147483647,
      'grpc.max_send_message_length': 2147483647,
      'grpc.keepalive_time_ms': 7200000,
      'grpc.keepalive_timeout_ms': 20000,
    });
    // This project's memory limits (issue 23), as HTTP's.
    expect(o.server.grpc?.sendTimeoutMs).toBe(60_000);
    expect(o.server.grpc?.maxConnectionOutputBytes).toBe(64 * 1024 * 1024);
    expect(o.server.grpc?.streamMaxInflightRequests).toBe(128);
    expect(o.warnings).toEqual([]);
  });

  it('applies the gRPC memory limits (issue 23)', () => {
    const o = parseArgs([
      ...base,
      '--grpc-send-timeout-secs=5',
      '--grpc-max-connection-output-bytes=1048576',
      '--grpc-stream-max-inflight-requests=8',
      '--grpc-max-concurrent-streams=16',
    ]);
    expect(o.server.grpc).toMatchObject({
      sendTimeoutMs: 5000,
      maxConnectionOutputBytes: 1048576,
      streamMaxInflightRequests: 8,
      maxConcurrentStreams: 16,
    });
    expect(channelOptions({ port: 1, host: 'h', ...o.server.grpc })['grpc.max_concurrent_streams']).toBe(16);
    expect(() => parseArgs([...base, '--grpc-send-timeout-secs=0'])).toThrow();
    expect(() => parseArgs([...base, '--grpc-max-concurrent-streams=0'])).toThrow();
  });

  it('sets the HTTP/2 receive windows only when asked (issue 31)', () => {
    expect(parseArgs(base).server.grpc?.flowControl).toBeUndefined();
    const o = parseArgs([
      ...base,
      '--grpc-http2-stream-window-bytes=4194304',
      '--grpc-http2-connection-window-bytes=16777216',
    ]);
    expect(o.server.grpc?.flowControl).toEqual({
      streamWindowBytes: 4194304,
      connectionWindowBytes: 16777216,
    });
    // One of them: the other stays HTTP/2's 65,535.
    expect(parseArgs([...base, '--grpc-http2-stream-window-bytes=1048576']).server.grpc?.flowControl).toEqual(
      {
        streamWindowBytes: 1048576,
        connectionWindowBytes: 65535,
      },
    );
    expect(() => parseArgs([...base, '--grpc-http2-stream-window-bytes=65534'])).toThrow(CliUsageError);
    expect(() => parseArgs([...base, '--grpc-http2-connection-window-bytes=2147483648'])).toThrow(
      CliUsageError,
    );
  });

  it('--allow-grpc=false starts no gRPC server', () => {
    const o = parseArgs([...base, '--allow-grpc=false', '--grpc-port=9']);
    expect(o.server.grpcPort).toBeUndefined();
  });

  it('applies port, address, keepalive, connection age and the message limit', () => {
    const o = parseArgs([
      ...base,
      '--grpc-port=9001',
      '--grpc-address=127.0.0.1',
      '--grpc-keepalive-time=1000',
      '--grpc-keepalive-timeout=500',
      '--grpc-max-connection-age=60000',
      '--grpc-max-connection-age-grace=5000',
      '--grpc-max-message-bytes=1048576',
    ]);
    expect(o.server.grpcPort).toBe(9001);
    expect(o.server.grpcAddress).toBe('127.0.0.1');
    expect(channelOptions({ port: 9001, host: '127.0.0.1', ...o.server.grpc })).toEqual({
      'grpc.max_concurrent_streams': 1024,
      'grpc.max_receive_message_length': 1048576,
      'grpc.max_send_message_length': 1048576,
      'grpc.keepalive_time_ms': 1000,
      'grpc.keepalive_timeout_ms': 500,
      'grpc.max_connection_age_ms': 60000,
      'grpc.max_connection_age_grace_ms': 5000,
    });
  });

  it('TLS: --grpc-use-ssl-mutual implies --grpc-use-ssl and needs the root certificate', () => {
    const o = parseArgs([
      ...base,
      '--grpc-use-ssl-mutual=true',
      '--grpc-server-cert=/c.pem',
      '--grpc-server-key=/k.pem',
      '--grpc-root-cert=/ca.pem',
    ]);
    expect(o.server.grpc?.tls).toEqual({
      serverCertFile: '/c.pem',
      serverKeyFile: '/k.pem',
      rootCertFile: '/ca.pem',
      mutual: true,
    });
    expect(() => parseArgs([...base, '--grpc-use-ssl=true'])).toThrow(
      '--grpc-use-ssl requires --grpc-server-cert and --grpc-server-key',
    );
    expect(() =>
      parseArgs([...base, '--grpc-use-ssl-mutual=true', '--grpc-server-cert=/c', '--grpc-server-key=/k']),
    ).toThrow('--grpc-use-ssl-mutual requires --grpc-root-cert');
  });

  it.each([
    [
      ['--grpc-infer-thread-count=1'],
      'invalid argument for --grpc_infer_thread_count. Must be in the range 2 to 128.',
    ],
    [
      ['--grpc-infer-thread-count=129'],
      'invalid argument for --grpc_infer_thread_count. Must be in the range 2 to 128.',
    ],
    [['--grpc-max-response-pool-size=0'], 'Error: --grpc-max-response-pool-size must be greater than 0.'],
    [
      ['--grpc-infer-response-compression-level=fast'],
      'invalid argument for --grpc_infer_response_compression_level',
    ],
    [['--grpc-infer-response-compression-level=high'], 'grpc-js does not compress responses'],
    [
      ['--http-port=8001'],
      'The server cannot listen to HTTP requests and GRPC requests at the same address and port 0.0.0.0:8001',
    ],
    [['--grpc-header-forward-pattern=('], 'invalid regex for --grpc-header-forward-pattern'],
    [['--reuse-grpc-port=1'], '--reuse-grpc-port=true is not supported'],
  ])('refuses %j', (args, message) => {
    expect(() => parseArgs([...base, ...args])).toThrow(CliUsageError);
    expect(() => parseArgs([...base, ...args])).toThrow(message);
  });

  it('the same port on different addresses is no collision; port 0 never is', () => {
    expect(() => parseArgs([...base, '--http-port=8001', '--grpc-address=127.0.0.1'])).not.toThrow();
    expect(() => parseArgs([...base, '--http-port=0', '--grpc-port=0'])).not.toThrow();
  });

  it('accepts the flags grpc-js cannot apply, with a warning when they would change something', () => {
    const o = parseArgs([
      ...base,
      '--grpc-infer-thread-count=4',
      '--grpc-infer-allocation-pool-size=16',
      '--grpc-max-response-pool-size=10',
      '--grpc-keepalive-permit-without-calls=true',
      '--grpc-http2-max-pings-without-data=2',
      '--grpc-http2-max-ping-strikes=5',
      '--grpc-infer-response-compression-level=NONE',
      '--reuse-grpc-port=false',
    ]);
    expect(o.warnings).toEqual([
      '--grpc-infer-thread-count has no effect: gRPC calls are served on the event loop',
      '--grpc-infer-allocation-pool-size has no effect: tritonserver-ts keeps no per-call state pool',
      '--grpc-max-response-pool-size has no effect: no model here answers more than one response per request',
      '--grpc-keepalive-permit-without-calls=true is not enforced: grpc-js servers do not police client pings',
      '--grpc-http2-max-ping-strikes=5 is not enforced: grpc-js servers do not police client pings',
    ]);
  });

  it('--grpc-header-forward-pattern is case-insensitive, as tritonserver makes it', () => {
    const o = parseArgs([...base, '--grpc-header-forward-pattern=^x-forward-']);
    expect(o.server.grpc?.headerForwardPattern?.test('X-Forward-User')).toBe(true);
  });
});

describe('header forwarding', () => {
  it('takes the metadata entries whose key matches, as string parameters', async () => {
    const { Metadata } = await import('@grpc/grpc-js');
    const { forwardedHeaders } = await import('../../src/grpc/handlers/infer.js');
    const m = new Metadata();
    m.set('x-forward-user', 'ann');
    m.set('x-other', 'no');
    m.set('x-forward-bin', Buffer.from([1]));
    expect(forwardedHeaders(m, /^x-forward-/i)).toEqual({ 'x-forward-user': 'ann' });
    expect(forwardedHeaders(m, undefined)).toBeUndefined();
  });
});
