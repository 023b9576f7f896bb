/**
 * HTTP/2 receive windows of the gRPC front end (issue 31). grpc-js's server leaves them at the
 * protocol's defaults: 65,535 bytes per stream and per connection. A 602 KB request (one FP32
 * [1,3,224,224] image) then crosses the wire in about ten window-fulls, each waiting for a
 * WINDOW_UPDATE round trip, and with eight calls in flight on one connection they all share the
 * one 64 KiB connection window. Node's HTTP/2 consumes (and re-opens the window for) received
 * data only as the stream is read, and grpc-js pauses a stream once it holds a whole message, so
 * the windows are also what bounds the request bytes a connection can push ahead of the server
 * reading them: the connection window is the bound per connection, whatever the number of streams.
 *
 * grpc-js 1.14 exposes no server option for them (`grpc-node.flow_control_window` is read by its
 * client transport only), so they are set on each session as it opens: the initial stream window
 * in the server's SETTINGS, the connection window with `setLocalWindowSize`. They are not the
 * front end's default yet (`GrpcServerSettings.flowControl`, absent: HTTP/2's 64 KiB): with them,
 * the issue 23 test of sixteen connections sending eight 4 MiB calls each and never reading the
 * answers (`test/grpc/memory-process.test.ts`) left one connection uncut after 20 s in 3 of 6 runs
 * on a busy host (the requests land faster, and more of them are refused by the
 * in-flight budget instead of waiting with unread answers); see bench/README.md.
 * @packageDocumentation
 */
import type { Http2SecureServer, Http2Server, ServerHttp2Session } from 'node:http2';

/** Receive windows of one gRPC connection. */
export interface GrpcFlowControl {
  /** Initial window of every stream (SETTINGS_INITIAL_WINDOW_SIZE), bytes. */
  readonly streamWindowBytes: number;
  /** The connection's window (the bound on unread request bytes per connection), bytes. */
  readonly connectionWindowBytes: number;
}

/**
 * Defaults: 1 MiB for a stream and for the connection. A whole image-sized request (602 KB) fits one
 * stream window, and the connection's window re-opens after each half of it is read (nghttp2's
 * WINDOW_UPDATE at half the window), so eight such calls on one connection (the benchmark's and
 * Triton's labs' `perf_analyzer --concurrency-range 8`) wait for about one round trip per request
 * instead of ten. The connection window stays small on purpose: it is the request bytes a
 * connection pushes ahead of the server reading them; 8 MiB was no faster in the benchmark.
 */
export const DEFAULT_GRPC_FLOW_CONTROL: GrpcFlowControl = {
  streamWindowBytes: 1024 * 1024,
  connectionWindowBytes: 1024 * 1024,
};

/** Applies `flow` (default {@link DEFAULT_GRPC_FLOW_CONTROL}) to every session `server` opens from now on. */
export function applyFlowControl(
  server: Http2Server | Http2SecureServer,
  flow: GrpcFlowControl = DEFAULT_GRPC_FLOW_CONTROL,
): void {
  server.on('session', (session: ServerHttp2Session) => {
    session.settings({ initialWindowSize: flow.streamWindowBytes });
    session.setLocalWindowSize(flow.connectionWindowBytes);
  });
}
