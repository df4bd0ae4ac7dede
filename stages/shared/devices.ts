// The GPUs the scheduler handed a node on a host, as Docker's device requests: a shell node's container and a
// trainer worker's container on that host ask for the same ones.
import type Docker from 'dockerode';
import type { HostPlacement } from '../contract.js';

/** Device requests for the GPUs the scheduler handed this node: by id where the host lists them. */
export function deviceRequests(host: HostPlacement): { DeviceRequests?: Docker.DeviceRequest[] } {
  const g = host.gpus;
  if (!g) return {};
  if ('ids' in g)
    return g.ids.length
      ? { DeviceRequests: [{ Driver: '', Count: 0, DeviceIDs: [...g.ids], Capabilities: [['gpu']], Options: {} }] }
      : {};
  return g.count ? { DeviceRequests: [{ Driver: '', Count: g.count, Capabilities: [['gpu']], Options: {} }] } : {};
}
