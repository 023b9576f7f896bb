/**
 * System and CUDA shared-memory RPCs over the core's managers (an empty `name` means every region
 * for status and unregister, as in tritonserver). The register messages are already typed: their
 * fields become the core's register commands one for one.
 * @packageDocumentation
 */
import {
  CudaSharedMemoryRegisterResponseSchema,
  CudaSharedMemoryStatusResponseSchema,
  CudaSharedMemoryUnregisterResponseSchema,
  SystemSharedMemoryRegisterResponseSchema,
  SystemSharedMemoryStatusResponseSchema,
  SystemSharedMemoryUnregisterResponseSchema,
  type CudaSharedMemoryRegisterRequest,
  type CudaSharedMemoryRegisterResponse,
  type CudaSharedMemoryStatusRequest,
  type CudaSharedMemoryStatusResponse,
  type CudaSharedMemoryUnregisterRequest,
  type CudaSharedMemoryUnregisterResponse,
  type SystemSharedMemoryRegisterRequest,
  type SystemSharedMemoryRegisterResponse,
  type SystemSharedMemoryStatusRequest,
  type SystemSharedMemoryStatusResponse,
  type SystemSharedMemoryUnregisterRequest,
  type SystemSharedMemoryUnregisterResponse,
} from '@tritonserver-ts/protocol/grpc';

import { message } from '../messages.js';
import type { UnaryHandler } from './types.js';

const named = (name: string): string | undefined => (name === '' ? undefined : name);

export const systemSharedMemoryStatus: UnaryHandler<
  SystemSharedMemoryStatusRequest,
  SystemSharedMemoryStatusResponse
> = (req, { core }) => {
  const regions = core.systemSharedMemory.status(named(req.name));
  return message(SystemSharedMemoryStatusResponseSchema, {
    regions: Object.fromEntries(
      regions.map((r) => [
        r.name,
        { name: r.name, key: r.key, offset: BigInt(r.offset), byteSize: BigInt(r.byte_size) },
      ]),
    ),
  });
};

export const systemSharedMemoryRegister: UnaryHandler<
  SystemSharedMemoryRegisterRequest,
  SystemSharedMemoryRegisterResponse
> = (req, { core }) => {
  core.systemSharedMemory.register({
    name: req.name,
    key: req.key,
    offset: req.offset,
    byteSize: req.byteSize,
  });
  return message(SystemSharedMemoryRegisterResponseSchema, {});
};

export const systemSharedMemoryUnregister: UnaryHandler<
  SystemSharedMemoryUnregisterRequest,
  SystemSharedMemoryUnregisterResponse
> = (req, { core }) => {
  core.systemSharedMemory.unregister(named(req.name));
  return message(SystemSharedMemoryUnregisterResponseSchema, {});
};

export const cudaSharedMemoryStatus: UnaryHandler<
  CudaSharedMemoryStatusRequest,
  CudaSharedMemoryStatusResponse
> = (req, { core }) => {
  core.cudaSharedMemory.status(named(req.name));
  return message(CudaSharedMemoryStatusResponseSchema, { regions: {} });
};

export const cudaSharedMemoryRegister: UnaryHandler<
  CudaSharedMemoryRegisterRequest,
  CudaSharedMemoryRegisterResponse
> = (req, { core }) => {
  core.cudaSharedMemory.register({
    name: req.name,
    rawHandle: req.rawHandle,
    deviceId: req.deviceId,
    byteSize: req.byteSize,
  });
  return message(CudaSharedMemoryRegisterResponseSchema, {});
};

export const cudaSharedMemoryUnregister: UnaryHandler<
  CudaSharedMemoryUnregisterRequest,
  CudaSharedMemoryUnregisterResponse
> = (req, { core }) => {
  core.cudaSharedMemory.unregister(named(req.name));
  return message(CudaSharedMemoryUnregisterResponseSchema, {});
};
