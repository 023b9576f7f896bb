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
 * front end's default (`GrpcServerSettings.flowControl`, absent: HTTP/2's 64 KiB; the CLI's
 * `--grpc-http2-stream-window-bytes` / `--grpc-http2-connection-window-bytes`): the connection
 * window is the request bytes a client may push ahead of the server reading them, per connection,
 * and with larger windows the issue 23 test of sixteen connections sending eight 4 MiB calls each
 * and never reading the answers (`test/grpc/memory-process.test.ts`) left one connection uncut
 * after 20 s in 3 of 6 runs on a busy host (the requests land faster, and more of them are refused
 * by the in-flight budget instead of waiting with unread answers); see bench/README.md.
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
 * The windows for image-sized requests: 4 MiB per stream, 16 MiB per connection. A whole 602 KB
 * request fits one stream window many times over, and eight such calls on one connection (the
 * benchmark's and Triton's labs' `perf_analyzer --concurrency-range 8`) are not held back by
 * WINDOW_UPDATE round trips: on the food model they took gRPC from 0.78–0.80× HTTP's throughput to
 * 0.84–0.86× (built CLI, HTTP and gRPC in interleaved rounds; 1 MiB / 1 MiB did less;
 * bench/README.md).
 */
export const DEFAULT_GRPC_FLOW_CONTROL: GrpcFlowControl = {
  streamWindowBytes: 4 * 1024 * 1024,
  connectionWindowBytes: 16 * 1024 * 1024,
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
