/**
 * `@tritonserver-ts/client/http`: the HTTP/REST transport and body helpers for custom HTTP stacks.
 * @packageDocumentation
 */
export {
  HttpTransport,
  serverErrorFromResponse,
  type HttpResponse,
  type HttpTransportOptions,
} from './http-transport.js';
export { generateRequestBody, parseResponseBody } from './body.js';
export { parseServerUrl, type ServerAddress } from './url.js';
