/**
 * The model config is defined once, in `@tritonserver-ts/protocol`: the server's typed
 * `ModelConfig` is that message, and the JSON the server answers `GET …/config` with has the shape
 * the client's `ReceivedModelConfig` promises (the int64 fields Triton prints as strings are
 * strings, the ones it prints as numbers are numbers).
 */
import type * as Protocol from '@tritonserver-ts/protocol';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createModelConfig, modelConfigToJson } from '../../src/repository/model-config-io.js';
import type { ModelConfig, ModelInstanceGroup } from '../../src/repository/model-config.js';

describe('the shared model config', () => {
  it('the server uses the protocol’s interfaces, with number int64 fields', () => {
    expectTypeOf<ModelConfig>().toEqualTypeOf<Protocol.ModelConfig>();
    expectTypeOf<ModelConfig>().toEqualTypeOf<Protocol.ModelConfig<number>>();
    expectTypeOf<ModelInstanceGroup['secondary_devices'][number]['device_id']>().toEqualTypeOf<number>();
  });

  it('the rendered JSON matches ReceivedModelConfig field for field', () => {
    const config = createModelConfig({
      name: 'm',
      max_batch_size: 4,
      input: [{ name: 'IN', data_type: 'TYPE_FP32', dims: [3, -1] }],
      output: [{ name: 'OUT', data_type: 'TYPE_FP32', dims: [2] }],
      dynamic_batching: { priority_levels: 2, default_priority_level: 1, max_queue_delay_microseconds: 100 },
      instance_group: [
        { kind: 'KIND_CPU', count: 1, secondary_devices: [{ kind: 'KIND_NVDLA', device_id: 7 }] },
      ],
    });
    const json = modelConfigToJson(config);
    // A JSON round trip: what the client receives over HTTP.
    const received = JSON.parse(JSON.stringify(json)) as Protocol.ReceivedModelConfig;
    expect(received.name).toBe('m');
    expect(received.max_batch_size).toBe(4);
    expect(received.input?.[0]?.dims).toEqual([3, -1]);
    expect(received.input?.[0]?.data_type).toBe('TYPE_FP32');
    expect(received.dynamic_batching?.max_queue_delay_microseconds).toBe(100);
    // The I64 fields: strings on the wire, numbers in the server's model.
    expect(received.dynamic_batching?.priority_levels).toBe('2');
    expect(received.dynamic_batching?.default_priority_level).toBe('1');
    expect(received.instance_group?.[0]?.secondary_devices?.[0]?.device_id).toBe('7');
    expect(config.dynamic_batching?.priority_levels).toBe(2);
    expectTypeOf(received.dynamic_batching?.priority_levels).toEqualTypeOf<string | undefined>();
    expectTypeOf(received.input).toEqualTypeOf<
      Protocol.ReceivedModelTensor<Protocol.ModelInput>[] | undefined
    >();
  });
});
