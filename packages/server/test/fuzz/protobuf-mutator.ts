/**
 * Mutations of protobuf messages for the gRPC fuzzer: on the wire bytes (bit flips, truncation,
 * junk, fields of random numbers and wire types, huge length prefixes, deep group and message
 * nesting, repeated, dropped and reordered fields, mutations inside a nested message with its
 * length fixed up) and on the decoded values (strings, numbers, bytes, lists and maps set to edge
 * values before the message is encoded again). Knows no schema: it works on any message.
 */
import type { Random } from './helpers.js';

/** One top-level field of an encoded message. */
interface WireField {
  /** Offset of the tag. */
  readonly start: number;
  /** Offset after the value. */
  readonly end: number;
  readonly fieldNo: number;
  readonly wireType: number;
  /** Offset of a length-delimited field's payload (after its length), else of the value. */
  readonly valueStart: number;
}

/** A varint at `offset` (at most 10 bytes), or undefined when it does not end in the buffer. */
function readVarint(bytes: Uint8Array, offset: number): { value: bigint; next: number } | undefined {
  let value = 0n;
  for (let i = 0; i < 10 && offset + i < bytes.length; i++) {
    const b = bytes[offset + i] ?? 0;
    value |= BigInt(b & 0x7f) << BigInt(7 * i);
    if ((b & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  return undefined;
}

/** The varint bytes of `value` (0 ≤ value < 2^64). */
export function varint(value: bigint | number): Buffer {
  let v = BigInt(value);
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

/** The tag bytes of field `fieldNo` with `wireType`. */
export function tag(fieldNo: number, wireType: number): Buffer {
  return varint((BigInt(fieldNo) << 3n) | BigInt(wireType & 7));
}

/** A length-delimited field. */
export function lengthDelimited(fieldNo: number, payload: Uint8Array): Buffer {
  return Buffer.concat([tag(fieldNo, 2), varint(payload.length), payload]);
}

/** The top-level fields of `bytes`, or undefined when they do not split cleanly (groups are not followed). */
function splitFields(bytes: Uint8Array): WireField[] | undefined {
  const fields: WireField[] = [];
  let at = 0;
  while (at < bytes.length) {
    const t = readVarint(bytes, at);
    if (t === undefined) return undefined;
    const fieldNo = Number(t.value >> 3n);
    const wireType = Number(t.value & 7n);
    let end: number;
    let valueStart = t.next;
    if (wireType === 0) {
      const v = readVarint(bytes, t.next);
      if (v === undefined) return undefined;
      end = v.next;
    } else if (wireType === 1) end = t.next + 8;
    else if (wireType === 5) end = t.next + 4;
    else if (wireType === 2) {
      const len = readVarint(bytes, t.next);
      if (len === undefined || len.value > BigInt(bytes.length)) return undefined;
      valueStart = len.next;
      end = len.next + Number(len.value);
    } else return undefined;
    if (end > bytes.length) return undefined;
    fields.push({ start: at, end, fieldNo, wireType, valueStart });
    at = end;
  }
  return fields;
}

/** Values the varint mutations pick from (with 10-byte and truncated encodings among them). */
const EDGE_VARINTS: readonly bigint[] = [
  0n,
  1n,
  127n,
  128n,
  2n ** 31n - 1n,
  2n ** 31n,
  2n ** 32n - 1n,
  2n ** 32n,
  2n ** 53n + 1n,
  2n ** 63n - 1n,
  2n ** 63n,
  2n ** 64n - 1n,
];

/** Field numbers the mutations add: each message's own (1-16), the largest, 0 (invalid), reserved ones. */
const FIELD_NUMBERS: readonly number[] = [
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 19_000, 536_870_911,
];

type Mutation = (bytes: Buffer, random: Random, depth: number) => Buffer;

const flipBits: Mutation = (bytes, random) => {
  if (bytes.length === 0) return random.bytes(1);
  const out = Buffer.from(bytes);
  for (let n = 1 + random.int(4); n > 0; n--) {
    const at = random.int(out.length);
    out[at] = (out[at] ?? 0) ^ (1 << random.int(8));
  }
  return out;
};

const setByte: Mutation = (bytes, random) => {
  if (bytes.length === 0) return Buffer.from([random.pick([0x00, 0x7f, 0x80, 0xff])]);
  const out = Buffer.from(bytes);
  out[random.int(out.length)] = random.pick([0x00, 0x01, 0x7f, 0x80, 0xff, random.int(256)]);
  return out;
};

const truncate: Mutation = (bytes, random) => bytes.subarray(0, random.int(bytes.length + 1));

const extend: Mutation = (bytes, random) => Buffer.concat([bytes, random.bytes(1 + random.int(64))]);

const randomVarintField: Mutation = (bytes, random) => {
  let value = varint(random.pick(EDGE_VARINTS));
  const r = random.int(6);
  // An overlong varint (11 bytes) or one cut short at the end of the message.
  if (r === 0) value = Buffer.from([...Array.from({ length: 10 }, () => 0xff), 0x01]);
  else if (r === 1) value = Buffer.from([0x80, 0x80]);
  return Buffer.concat([bytes, tag(random.pick(FIELD_NUMBERS), 0), value]);
};

const wrongWireType: Mutation = (bytes, random) => {
  const fields = splitFields(bytes);
  if (fields === undefined || fields.length === 0) {
    // A known field number with each wire type in turn.
    const fieldNo = 1 + random.int(8);
    return Buffer.concat([bytes, tag(fieldNo, random.int(8)), random.bytes(random.int(9))]);
  }
  const f = random.pick(fields);
  let wireType = random.int(8);
  if (wireType === f.wireType) wireType = (wireType + 1) % 8;
  return Buffer.concat([
    bytes.subarray(0, f.start),
    tag(f.fieldNo, wireType),
    bytes.subarray(f.start + tag(f.fieldNo, f.wireType).length),
  ]);
};

const hugeLength: Mutation = (bytes, random) => {
  const length = random.pick([2n ** 31n - 1n, 2n ** 31n, 2n ** 32n + 5n, 2n ** 53n, 2n ** 64n - 1n]);
  const fields = splitFields(bytes)?.filter((f) => f.wireType === 2);
  if (fields !== undefined && fields.length > 0 && random.int(2) === 0) {
    // An existing field's length replaced.
    const f = random.pick(fields);
    const head = tag(f.fieldNo, 2);
    return Buffer.concat([bytes.subarray(0, f.start), head, varint(length), bytes.subarray(f.valueStart)]);
  }
  return Buffer.concat([
    bytes,
    tag(random.pick(FIELD_NUMBERS), 2),
    varint(length),
    random.bytes(random.int(16)),
  ]);
};

const deepNesting: Mutation = (bytes, random) => {
  const depth = random.pick([10, 100, 101, 1_000, 10_000, 100_000]);
  const fieldNo = random.pick(FIELD_NUMBERS.slice(0, 16));
  const r = random.int(3);
  if (r === 0) {
    // Start-group tags, closed (or not) by as many end-group tags.
    const open = tag(fieldNo, 3);
    const close = tag(fieldNo, 4);
    const closed = random.int(2) === 0 ? depth : random.int(depth);
    return Buffer.concat([
      bytes,
      Buffer.concat(Array(depth).fill(open)),
      Buffer.concat(Array(closed).fill(close)),
    ]);
  }
  // A length-delimited field holding itself `depth` times, lengths right (built inside out).
  let inner: Buffer = r === 1 ? Buffer.from(bytes) : Buffer.alloc(0);
  for (let i = 0; i < Math.min(depth, 2_000); i++) inner = lengthDelimited(fieldNo, inner);
  return Buffer.concat([bytes, inner]);
};

const repeatField: Mutation = (bytes, random) => {
  const fields = splitFields(bytes);
  if (fields === undefined || fields.length === 0) return Buffer.concat([bytes, bytes]);
  const f = random.pick(fields);
  const one = bytes.subarray(f.start, f.end);
  // Up to about 4 MiB of copies.
  const max = Math.max(1, Math.floor((4 << 20) / Math.max(1, one.length)));
  const copies = Math.min(max, random.pick([2, 3, 10, 1_000, 100_000]));
  return Buffer.concat([bytes, Buffer.concat(Array(copies).fill(one))]);
};

const dropField: Mutation = (bytes, random) => {
  const fields = splitFields(bytes);
  if (fields === undefined || fields.length === 0) return truncate(bytes, random, 0);
  const f = random.pick(fields);
  return Buffer.concat([bytes.subarray(0, f.start), bytes.subarray(f.end)]);
};

const shuffleFields: Mutation = (bytes, random) => {
  const fields = splitFields(bytes);
  if (fields === undefined || fields.length < 2) return extend(bytes, random, 0);
  const parts = fields.map((f) => bytes.subarray(f.start, f.end));
  for (let i = parts.length - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [parts[i], parts[j]] = [parts[j] as Buffer, parts[i] as Buffer];
  }
  return Buffer.concat(parts);
};

/** A mutation inside a length-delimited field (a nested message, string or bytes), its length fixed. */
const nested: Mutation = (bytes, random, depth) => {
  const fields = splitFields(bytes)?.filter((f) => f.wireType === 2);
  if (fields === undefined || fields.length === 0 || depth > 4) return flipBits(bytes, random, depth);
  const f = random.pick(fields);
  const payload = mutateOnce(bytes.subarray(f.valueStart, f.end), random, depth + 1);
  return Buffer.concat([
    bytes.subarray(0, f.start),
    lengthDelimited(f.fieldNo, payload),
    bytes.subarray(f.end),
  ]);
};

const MUTATIONS: readonly Mutation[] = [
  flipBits,
  setByte,
  truncate,
  extend,
  randomVarintField,
  wrongWireType,
  hugeLength,
  deepNesting,
  repeatField,
  dropField,
  shuffleFields,
  nested,
  nested,
  nested,
];

function mutateOnce(bytes: Buffer, random: Random, depth: number): Buffer {
  return random.pick(MUTATIONS)(bytes, random, depth);
}

/** `bytes` after 1-3 random wire mutations. */
export function mutateWire(bytes: Uint8Array, random: Random): Buffer {
  let out: Buffer = Buffer.from(bytes);
  for (let n = 1 + random.int(3); n > 0; n--) out = mutateOnce(out, random, 0);
  return out;
}

const EDGE_STRINGS: readonly string[] = [
  '',
  'x',
  'simple',
  'INT32',
  'BYTES',
  'FP16',
  'TYPE_STRING',
  '1',
  '-1',
  '18446744073709551616',
  '\u0000',
  '\uFFFD\uD800',
  '../../etc/passwd',
  '%s%n',
  'a'.repeat(5_000),
];

const EDGE_NUMBERS: readonly number[] = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 - 1, 0.5, NaN, Infinity];

const EDGE_BIGINTS: readonly bigint[] = [
  0n,
  1n,
  -1n,
  16n,
  2n ** 31n,
  2n ** 53n + 1n,
  2n ** 62n,
  2n ** 63n - 1n,
  -(2n ** 63n),
  2n ** 64n - 1n,
];

/** Keys of parameter maps worth trying (Triton's request, load, log, trace and shm parameters). */
const PARAMETER_KEYS: readonly string[] = [
  'binary_data',
  'binary_data_size',
  'classification',
  'shared_memory_region',
  'shared_memory_offset',
  'shared_memory_byte_size',
  'priority',
  'timeout',
  'sequence_id',
  'sequence_start',
  'sequence_end',
  'triton_enable_empty_final_response',
  'triton_grpc_error',
  'config',
  'file:1/model.onnx',
  'unload_dependents',
  'log_verbose_level',
  'log_format',
  'log_file',
  'trace_level',
  'trace_rate',
  'trace_count',
  'trace_file',
  'headers',
  '',
];

/** Where a value sits: its container and key. */
interface Slot {
  readonly parent: Record<string | number, unknown>;
  readonly key: string | number;
}

/** Every mutable value of a decoded message (fields, list items, map entries, oneof values). */
function slots(node: unknown, out: Slot[], depth = 0): Slot[] {
  if (node === null || typeof node !== 'object' || node instanceof Uint8Array || depth > 8) return out;
  const record = node as Record<string | number, unknown>;
  const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
  for (const key of keys) {
    if (key === '$typeName' || key === '$unknown' || key === 'case') continue;
    out.push({ parent: record, key });
    slots(record[key], out, depth + 1);
  }
  return out;
}

/** About how many bytes `value` takes on the wire (bounds the copies a mutation makes). */
function approxSize(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length + 2;
  if (value instanceof Uint8Array) return value.byteLength + 2;
  if (value === null || typeof value !== 'object' || depth > 8) return 8;
  let size = 2;
  for (const v of Object.values(value)) size += approxSize(v, depth + 1);
  return size;
}

/** A new value in the shape of `value` (same JS type, so the message still encodes). */
function edgeValue(value: unknown, random: Random): unknown {
  if (typeof value === 'string') return random.pick(EDGE_STRINGS);
  if (typeof value === 'number') return random.pick(EDGE_NUMBERS);
  if (typeof value === 'bigint') return random.pick(EDGE_BIGINTS);
  if (typeof value === 'boolean') return !value;
  if (value instanceof Uint8Array) return random.bytes(random.pick([0, 1, 3, 63, 65, 4096, 1 << 20]));
  if (Array.isArray(value)) {
    const copy: unknown[] = [...(value as unknown[])];
    const r = random.int(4);
    if (r === 0) return [];
    if (r === 1) copy.pop();
    else if (copy.length > 0) {
      const item = copy[random.int(copy.length)];
      // Up to about 4 MiB of copies.
      const n = Math.min(random.pick([1, 2, 100, 10_000]), Math.floor((4 << 20) / approxSize(item)));
      for (let i = 0; i < n; i++) copy.push(structuredClone(item));
    }
    return copy;
  }
  if (value !== null && typeof value === 'object' && !('$typeName' in value)) {
    // A map: an entry removed, or another key added with a copy of an entry's value.
    const map = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(map);
    if (keys.length > 0 && random.int(3) === 0) delete map[random.pick(keys)];
    else if (keys.length > 0) map[random.pick(PARAMETER_KEYS)] = structuredClone(map[random.pick(keys)]);
    return map;
  }
  return value;
}

/**
 * Sets 1-3 values somewhere in `message` (a decoded protobuf-es message, changed in place) to edge
 * values of the same JS type. The result may not encode (a uint64 set to -1): the caller catches.
 */
export function mutateValues(message: object, random: Random): void {
  for (let n = 1 + random.int(3); n > 0; n--) {
    const all = slots(message, []);
    if (all.length === 0) return;
    const { parent, key } = random.pick(all);
    parent[key] = edgeValue(parent[key], random);
  }
}
