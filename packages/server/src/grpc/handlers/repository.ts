/**
 * Repository RPCs: `RepositoryIndex`, `RepositoryModelLoad`, `RepositoryModelUnload`, with
 * tritonserver's gRPC parameter checks (`grpc_server.cc`): `repository_name` is unsupported, `config`
 * must be a `string_param`, `file:*` a `bytes_param`, any other key is refused,
 * `unload_dependents` must be a `bool_param`.
 * @packageDocumentation
 */
import {
  RepositoryIndexResponseSchema,
  RepositoryModelLoadResponseSchema,
  RepositoryModelUnloadResponseSchema,
  type RepositoryIndexRequest,
  type RepositoryIndexResponse,
  type RepositoryModelLoadRequest,
  type RepositoryModelLoadResponse,
  type RepositoryModelUnloadRequest,
  type RepositoryModelUnloadResponse,
} from '@tritonserver-ts/protocol/grpc';

import { echo } from '../../common/echo.js';
import { invalidArg, unsupported } from '../../common/errors.js';
import { message } from '../messages.js';
import type { UnaryHandler } from './types.js';

function refuseRepositoryName(name: string): void {
  if (name !== '') throw unsupported("'repository_name' specification is not supported");
}

export const repositoryIndex: UnaryHandler<RepositoryIndexRequest, RepositoryIndexResponse> = async (
  req,
  { core },
) => {
  refuseRepositoryName(req.repositoryName);
  const index = await core.repositoryIndex(req.ready);
  return message(RepositoryIndexResponseSchema, {
    models: index.map((e) => ({
      name: e.name,
      version: e.version ?? '',
      state: e.state ?? '',
      reason: e.reason ?? '',
    })),
  });
};

export const repositoryModelLoad: UnaryHandler<
  RepositoryModelLoadRequest,
  RepositoryModelLoadResponse
> = async (req, { core }) => {
  refuseRepositoryName(req.repositoryName);
  let config: string | undefined;
  const files = new Map<string, Uint8Array>();
  for (const [key, param] of Object.entries(req.parameters)) {
    const choice = param.parameterChoice;
    if (key === 'config') {
      if (choice.case !== 'stringParam') {
        throw invalidArg(`invalid value type for load parameter '${echo(key)}', expected string_param.`);
      }
      config = choice.value;
    } else if (key.startsWith('file:')) {
      if (choice.case !== 'bytesParam') {
        throw invalidArg(`invalid value type for load parameter '${echo(key)}', expected bytes_param.`);
      }
      files.set(key.slice('file:'.length), choice.value);
    } else {
      throw invalidArg(`unrecognized load parameter '${echo(key)}'.`);
    }
  }
  await core.loadModel(req.modelName, {
    ...(config !== undefined ? { config } : {}),
    ...(files.size > 0 ? { files } : {}),
  });
  return message(RepositoryModelLoadResponseSchema, {});
};

export const repositoryModelUnload: UnaryHandler<
  RepositoryModelUnloadRequest,
  RepositoryModelUnloadResponse
> = async (req, { core }) => {
  refuseRepositoryName(req.repositoryName);
  let unloadDependents = false;
  const param = req.parameters.unload_dependents;
  if (param !== undefined) {
    if (param.parameterChoice.case !== 'boolParam') {
      throw invalidArg("invalid value type for 'unload_dependents' parameter, expected bool_param.");
    }
    unloadDependents = param.parameterChoice.value;
  }
  await core.unloadModel(req.modelName, { unloadDependents });
  return message(RepositoryModelUnloadResponseSchema, {});
};
