/**
 * Metadata RPCs: `ServerMetadata`, `ModelMetadata` and `ModelConfig` (the core's typed config in
 * its JSON form read into `inference.ModelConfig`, as tritonserver does with `JsonStringToMessage`).
 * @packageDocumentation
 */

import { fromJson } from '@tritonserver-ts/protocol/grpc';
import {
  ModelConfigResponseSchema,
  ModelConfigSchema,
  ModelMetadataResponseSchema,
  ServerMetadataResponseSchema,
  type ModelConfigRequest,
  type ModelConfigResponse,
  type ModelMetadataRequest,
  type ModelMetadataResponse,
  type ServerMetadataRequest,
  type ServerMetadataResponse,
} from '@tritonserver-ts/protocol/grpc';

import { internal } from '../../common/errors.js';
import { modelConfigToJson } from '../../repository/index.js';
import { message } from '../messages.js';
import type { UnaryHandler } from './types.js';

const version = (v: string): string | undefined => (v === '' ? undefined : v);

export const serverMetadata: UnaryHandler<ServerMetadataRequest, ServerMetadataResponse> = (
  _req,
  { core },
) => {
  const m = core.serverMetadata();
  return message(ServerMetadataResponseSchema, {
    name: m.name,
    version: m.version,
    extensions: [...m.extensions],
  });
};

export const modelMetadata: UnaryHandler<ModelMetadataRequest, ModelMetadataResponse> = (req, { core }) => {
  const m = core.modelMetadata(req.name, version(req.version));
  const tensor = (t: { name: string; datatype: string; shape: readonly number[] }) => ({
    name: t.name,
    datatype: t.datatype,
    shape: t.shape.map((d) => BigInt(d)),
  });
  return message(ModelMetadataResponseSchema, {
    name: m.name,
    versions: [...m.versions],
    platform: m.platform,
    inputs: m.inputs.map(tensor),
    outputs: m.outputs.map(tensor),
  });
};

export const modelConfig: UnaryHandler<ModelConfigRequest, ModelConfigResponse> = (req, { core }) => {
  const json = modelConfigToJson(core.modelConfig(req.name, version(req.version)));
  let config;
  try {
    config = fromJson(ModelConfigSchema, json as Parameters<typeof fromJson>[1], {
      ignoreUnknownFields: true,
    });
  } catch (error) {
    throw internal(`failed to convert the configuration of model '${req.name}': ${(error as Error).message}`);
  }
  return message(ModelConfigResponseSchema, { config });
};
