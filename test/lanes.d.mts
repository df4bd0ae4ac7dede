export type Layer = 'unit' | 'fixture' | 'e2e';
export const LAYERS: Layer[];
export const E2E: string[];
export function layerOf(file: string): Layer;
export function pickLayers(args: string[]): { layers: Set<Layer> | undefined; rest: string[] };
